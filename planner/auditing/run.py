"""Running the mechanism on the audit's inputs and counting the events (vectorised, in chunks)."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .events import one_report
from .pairs import InputPair

__all__ = ["count_events", "CHUNK_WORK"]

#: Work (report cost x rows) per ``perturb`` call: bounds the memory of one chunk.
CHUNK_WORK = 1 << 23


def _chunks(trials: int, cost: float) -> list[int]:
    rows = int(max(8, min(trials, CHUNK_WORK // max(1.0, cost))))
    rows -= rows % 8 if rows > 8 else 0
    sizes = [rows] * (trials // rows)
    if trials % rows:
        sizes.append(trials % rows)
    return sizes


def count_events(mechanism: Any, pairs: Sequence[InputPair], trials: int, rng: np.random.Generator,
                 progress: Callable[[int, int], None] | None = None) -> list[np.ndarray]:
    """Event counts of every test: one int64 array of shape (tests, 2) per pair.

    Row ``t`` of pair ``i`` holds the number of the ``trials`` runs on the first and on the second
    input whose report is in test ``t``'s event. Each input is perturbed ``trials`` times as
    arrays of identical inputs (``perturb(data, rng=rng)``, in chunks). A pair with pooled tests
    (:attr:`.events.InputPair.pool`) runs its first side on inputs drawn uniformly from its pool
    (from ``rng``) and counts, per run, whether the report is in the event of its own input.

    Raises
    ------
    ValueError
        A report of the wrong length (the mechanism breaks the runtime protocol).
    """
    view = one_report(mechanism)  # memoized runtimes: one report per fresh user
    total = 2 * trials * len(pairs)
    out = []
    for pair in pairs:
        counts = np.zeros((len(pair.tests), 2), dtype=np.int64)
        for which in (0, 1):
            for size in _chunks(trials, pair.cost):
                drawn = None
                if pair.run is not None:  # the pair runs its own trials (memoized runtimes over rounds)
                    reports = pair.run(mechanism, which, size, rng)
                else:
                    if pair.pool is not None and which == 0:
                        drawn = rng.integers(0, pair.tests[0].pool, size=size, dtype=np.int64)
                        data = pair.pool(drawn)
                    else:
                        data = pair.make(which, size)
                    reports = view.perturb(data, rng=rng)
                if len(reports) != size:
                    raise ValueError(f"mechanism.perturb: returned {len(reports)} reports for {size} inputs")
                for t, test in enumerate(pair.tests):
                    if test.never and which == 1 and not test.both:
                        continue
                    if test.pool:
                        index = np.asarray(test.occurs(reports), dtype=np.int64)
                        hit = index == drawn if drawn is not None else index >= 0
                    else:
                        hit = np.asarray(test.occurs(reports), dtype=bool)
                    counts[t, which] += int(np.count_nonzero(hit))
                if progress is not None:
                    progress(size, total)
        out.append(counts)
    return out

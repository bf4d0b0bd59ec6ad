"""Exploration stage of the audit: screen every input for the events with the largest ratio.

The pre-chosen pairs of each family (:mod:`.pairs`) are tight for an honest runtime; a leak
confined to one input, or to a report column the privacy map does not count, is invisible to
them. The exploration runs the mechanism ``explore_trials`` times on *every* input of the
family's :class:`Domain` and counts, per input, the events of a generic feature set read from
the report columns themselves (no family knowledge):

* a 1-D integer column ``c``: the events ``c mod 4096 = j`` (exactly ``c = j`` for values in
  ``[0, 4096)``, e.g. an item index or a hash value), and ``bit k of c = 1`` / ``= 0`` for each of
  the 64 bits of its two's complement (a value carrying any function of the input differs in
  some bit between two inputs);
* a 2-D ``uint8`` column (packed bits, little-endian): ``bit k = 1`` and ``bit k = 0``;
* any other 2-D column: each cell ``c[:, w] mod 16 = j``.

For each feature it keeps the input with the most and the fewest hits (a running max/min, so
the memory is independent of ``|X|``) and scores the pair by ``ln((max + 1/2) / (min + 1/2))``
minus its claim: the claim of the input pair (``Domain.claim``), or 0 for a column the plan
says does not depend on the input (``Domain.fixed_columns``: the GLH seed). A column that is a
deterministic function of the input has events of frequency 1 on one input and 0 on another
and scores highest. The ``top`` best features become candidate tests that the confirmation
stage (the audit's counting run, on fresh samples) bounds with Clopper-Pearson intervals;
Bonferroni over every confirmed test is valid whatever was selected, because the confirmation
samples are independent of the exploration's.

Cost: ``|X| * explore_trials`` runs of the mechanism (when even ``EXPLORE_MIN`` runs per input
exceed :data:`EXPLORE_CAP` units of work, e.g. a unary encoding over ``|X| = 10^4`` items, or
``|X| > MAX_SCREENED``, a uniform random subset of the inputs is screened and
``AuditResult.explored`` says how many) (``explore_trials`` from
:data:`EXPLORE_WORK`, clipped to ``[EXPLORE_MIN, EXPLORE_MAX]``), plus ``2 * top * trials`` runs
to confirm; for RR with ``|X| = 10^4`` about 5 * 10^7 runs (a few seconds).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Sequence

import numpy as np

from .events import Domain, InputPair, Test, one_report

__all__ = ["Domain", "Candidate", "explore", "explore_trials", "candidate_pairs", "EXPLORE_WORK", "EXPLORE_MIN",
           "EXPLORE_MAX", "TOP", "BUCKETS"]

#: Work (runs x report cost) of the exploration stage.
EXPLORE_WORK = 4e7
#: Largest work of the exploration: beyond it a random subset of the inputs is screened.
EXPLORE_CAP = 2e8
#: Most inputs screened (a domain up to 10^4 inputs is screened whole; beyond, a random subset).
MAX_SCREENED = 20_000
#: Bounds of the exploration's runs per input.
EXPLORE_MIN, EXPLORE_MAX = 100, 2000
#: Candidate input pairs passed to the confirmation stage.
TOP = 4
#: Tests per candidate the default trials count on (the screened event and up to two tight ones).
TESTS_PER_CANDIDATE = 3
#: Values of a 1-D column are screened modulo this (exact for values in [0, BUCKETS)).
BUCKETS = 4096
_CELL_BUCKETS = 16
_BATCH_WORK = 1 << 22
_BATCH_ROWS = 1024  # inputs per batch: the per-input feature counts stay at about 4e6 entries


@dataclasses.dataclass(frozen=True)
class Candidate:
    """A feature event and the input pair with its largest empirical ratio."""

    column: str
    kind: str  # "value", "vbit" (a bit of a 1-D value), "bit" (packed bits), "cell"
    index: int  # value bucket, bit index, or cell * 16 + bucket
    one: bool  # bit features: the bit is 1 (else 0)
    first: int
    second: int
    hits: tuple[int, int]
    runs: int
    claim: float
    modular: bool = False

    @property
    def score(self) -> float:
        return math.log((self.hits[0] + 0.5) / (self.hits[1] + 0.5)) - self.claim

    def event(self) -> str:
        if self.kind == "bit":
            return f"{self.column}[{self.index}] = {int(self.one)}"
        if self.kind == "vbit":
            return f"bit {self.index} of {self.column} = {int(self.one)}"
        if self.kind == "cell":
            cell, j = divmod(self.index, _CELL_BUCKETS)
            return f"{self.column}[{cell}] mod {_CELL_BUCKETS} = {j}"
        return f"{self.column} mod {BUCKETS} = {self.index}" if self.modular else f"{self.column} = {self.index}"

    def occurs(self, reports: Any) -> np.ndarray:
        col = np.asarray(reports[self.column])
        if self.kind == "bit":
            k = self.index
            bit = ((col[:, k // 8] >> np.uint8(k % 8)) & np.uint8(1)).astype(bool)
            return bit if self.one else ~bit
        if self.kind == "vbit":
            bit = ((col.astype(np.int64) >> np.int64(self.index)) & 1).astype(bool)
            return bit if self.one else ~bit
        if self.kind == "cell":
            cell, j = divmod(self.index, _CELL_BUCKETS)
            return np.mod(col[:, cell].astype(np.int64), _CELL_BUCKETS) == j
        return np.mod(col.astype(np.int64), BUCKETS) == self.index


def explore_trials(domain: Domain) -> int:
    """Runs per input of the exploration: ``EXPLORE_WORK / (|X| cost)`` clipped to the bounds."""
    per = EXPLORE_WORK / max(1.0, len(domain.labels) * domain.cost)
    return int(min(EXPLORE_MAX, max(EXPLORE_MIN, per)))


def screened_count(domain: Domain, runs: int) -> int:
    """How many inputs the exploration screens: all, up to ``MAX_SCREENED`` and ``EXPLORE_CAP`` work."""
    most = int(min(MAX_SCREENED, EXPLORE_CAP // max(1.0, runs * domain.cost)))
    return min(len(domain.labels), max(2, most))


def screened_inputs(domain: Domain, runs: int, rng: np.random.Generator) -> np.ndarray:
    """Every input, or (beyond :func:`screened_count`) a uniform random subset of that many."""
    size = len(domain.labels)
    most = screened_count(domain, runs)
    if size <= most:
        return np.arange(size)
    return np.sort(rng.choice(size, size=most, replace=False))


class _Extremes:
    """Running max/min of per-input feature counts (and which input attains them)."""

    def __init__(self) -> None:
        self.hi: np.ndarray | None = None

    def update(self, counts: np.ndarray, inputs: np.ndarray) -> None:
        # argmax over axis 0 is a strided scan (slow); max of ``count * nb + row`` is contiguous
        nb = counts.shape[0]
        rows = np.arange(nb, dtype=np.int64)[:, None]
        key = counts.astype(np.int64) * nb
        key += nb - 1 - rows  # ties: the first row
        top = key.max(axis=0)
        hi, arg_hi = top // nb, nb - 1 - top % nb
        key += 2 * rows - (nb - 1)  # now count * nb + row
        bottom = key.min(axis=0)
        lo, arg_lo = bottom // nb, bottom % nb
        if self.hi is None:
            self.hi, self.lo, self.arg_hi, self.arg_lo = hi, lo, inputs[arg_hi], inputs[arg_lo]
            return
        up, down = hi > self.hi, lo < self.lo
        self.hi, self.arg_hi = np.where(up, hi, self.hi), np.where(up, inputs[arg_hi], self.arg_hi)
        self.lo, self.arg_lo = np.where(down, lo, self.lo), np.where(down, inputs[arg_lo], self.arg_lo)


def _bit_counts(packed: np.ndarray, w: np.ndarray, nb: int, per: int) -> np.ndarray:
    """Per-input counts of every bit = 1, then every bit = 0 (packed little-endian rows)."""
    bits = np.unpackbits(packed, axis=1, bitorder="little").reshape(nb, per, -1)
    ones = np.einsum("ntk,nt->nk", bits, w.astype(np.uint8), dtype=np.int64)
    total = w.sum(axis=1)[:, None]
    return np.concatenate([ones, total - ones], axis=1)


def _features(reports: Any, name: str, rows: np.ndarray, per: int, nb: int, keep: np.ndarray
              ) -> list[tuple[str, np.ndarray, bool]]:
    """Per-input counts ``(nb, F)`` of one column's features, by feature kind."""
    col = np.asarray(reports[name])
    w = keep.reshape(nb, per)
    if col.ndim == 1:
        codes = np.mod(col.astype(np.int64), BUCKETS) + rows * BUCKETS
        counts = np.bincount(codes[keep], minlength=nb * BUCKETS).reshape(nb, BUCKETS)
        raw = np.ascontiguousarray(col.astype("<i8")).view(np.uint8).reshape(-1, 8)
        return [("value", counts, bool(np.any((col < 0) | (col >= BUCKETS)))),
                ("vbit", _bit_counts(raw, w, nb, per), False)]
    if col.dtype == np.uint8:
        return [("bit", _bit_counts(col, w, nb, per), False)]
    cells = np.mod(col.astype(np.int64), _CELL_BUCKETS) + _CELL_BUCKETS * np.arange(col.shape[1])[None, :]
    codes = (cells + (rows * col.shape[1] * _CELL_BUCKETS)[:, None])[keep].ravel()
    counts = np.bincount(codes, minlength=nb * col.shape[1] * _CELL_BUCKETS)
    return [("cell", counts.reshape(nb, -1), False)]


def explore(mechanism: Any, domain: Domain, runs: int, rng: np.random.Generator, top: int = TOP,
            progress: Callable[[int, int], None] | None = None) -> list[Candidate]:
    """Screen every input of ``domain`` with ``runs`` runs each; the ``top`` best-scoring candidates.

    Raises
    ------
    ValueError
        A report of the wrong length (the mechanism breaks the runtime protocol).
    """
    screened = screened_inputs(domain, runs, rng)
    size = screened.size
    if size < 2:
        return []
    batch = int(max(1, min(size, _BATCH_ROWS, _BATCH_WORK // max(1.0, runs * domain.cost))))
    extremes: dict[tuple[str, str], _Extremes] = {}
    kinds: dict[tuple[str, str], bool] = {}
    for start in range(0, size, batch):
        inputs = screened[start:start + batch]
        nb = inputs.size
        reports = one_report(mechanism).perturb(domain.make(np.repeat(inputs, runs)), rng=rng)
        if len(reports) != nb * runs:
            raise ValueError(f"mechanism.perturb: returned {len(reports)} reports for {nb * runs} inputs")
        keep = (np.asarray(domain.restrict(reports), dtype=bool) if domain.restrict is not None
                else np.ones(nb * runs, dtype=bool))
        rows = np.repeat(np.arange(nb), runs)
        columns = reports.columns if hasattr(reports, "columns") else dict(reports)
        for name in sorted(columns):
            for kind, counts, modular in _features(reports, name, rows, runs, nb, keep):
                key = (name, kind)
                kinds[key] = kinds.get(key, False) or modular
                extremes.setdefault(key, _Extremes()).update(counts, inputs)
        if progress is not None:
            progress(nb * runs, size * runs)
    out: list[Candidate] = []
    for (name, kind), ex in extremes.items():
        modular = kinds[(name, kind)]
        fixed = name in domain.fixed_columns
        if ex.hi is None:  # (never: an entry is made by its first update)
            continue
        nfeat = ex.hi.size
        half = nfeat // 2 if kind in ("bit", "vbit") else nfeat
        for f in np.flatnonzero((ex.hi > ex.lo) & (ex.arg_hi != ex.arg_lo)):
            i, j = int(ex.arg_hi[f]), int(ex.arg_lo[f])
            claim = 0.0 if fixed else float(domain.claim(i, j))
            index, one = (int(f) % half, f < half) if kind in ("bit", "vbit") else (int(f), True)
            out.append(Candidate(name, kind, index, bool(one), i, j, (int(ex.hi[f]), int(ex.lo[f])), runs, claim,
                                 modular))
    out.sort(key=lambda c: c.score, reverse=True)
    return out[:top]


def candidate_pairs(candidates: Sequence[Candidate], domain: Domain, existing: Sequence[InputPair] = ()
                    ) -> list[InputPair]:
    """The confirmation stage's input pairs, on fresh runs of each candidate's inputs.

    Each holds the screened event and the family's tight events of the pair (``Domain.tight``),
    except those an ``existing`` pair already tests (same inputs, same event).
    """
    seen = {(p.first, p.second, t.event) for p in existing for t in p.tests}
    out = []
    for c in candidates:
        restrict = domain.restrict

        def occurs(r, c=c, restrict=restrict) -> np.ndarray:
            hit = c.occurs(r)
            return hit & np.asarray(restrict(r), dtype=bool) if restrict is not None else hit

        p_first = (c.hits[0] + 0.5) / (c.runs + 1.0)
        p_second = (c.hits[1] + 0.5) / (c.runs + 1.0)
        what = ("column independent of the input" if c.column in domain.fixed_columns
                else "LDP on every input pair")
        test = Test(c.event(), occurs, c.claim, p_first, p_second,
                    source=f"exploration ({what}; {c.runs:,} runs per input screened)", estimated=True)
        pair = (c.first, c.second)
        tests: tuple[Test, ...] = (test,)
        if domain.tight is not None and c.column not in domain.fixed_columns:
            tight = domain.tight(c.first, c.second)
            tests += tuple(t for t in tight.tests if (tight.first, tight.second, t.event) not in seen)
        seen.update((str(domain.labels[c.first]), str(domain.labels[c.second]), t.event) for t in tests)

        def make(which: int, n: int, pair: tuple[int, int] = pair) -> Any:
            return domain.make(np.full(n, pair[which], dtype=np.int64))

        out.append(InputPair(str(domain.labels[c.first]), str(domain.labels[c.second]), make, tests, cost=domain.cost))
    return out

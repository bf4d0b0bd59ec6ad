"""Memory budgets of ``ldpplan aggregate`` and ``estimate`` (``--max-memory``), checked before allocating.

Planning, verifying, loading and perturbing take memory independent of ``|X|`` for the k-RR
and the GLH (domains up to ``2**62`` and ``2**61 - 1``); what grows with the domain is the
server side: an aggregate holds a count per output entry (``|X|`` for RR, GLH and the unary
families, ``blocks x block_size`` for the Hadamard response, about ``2 |X|`` for key-value and
longitudinal plans), written as JSON, and an estimate holds a few float vectors per item plus
its output rows. :func:`needed_bytes` predicts the peak from the plan alone (per-entry and per-item
costs measured with ``/usr/bin/time`` on ``|X| = 2**20``, rounded up; ``benchmarks/RESULTS.md``),
and :func:`check_budget` refuses, in one line naming the memory the full domain would need,
before anything of that size is allocated. ``estimate --items`` reads the items of interest
from the reports in memory independent of ``|X|`` (k-RR, GLH) instead.

Nothing here prints.
"""
from __future__ import annotations

import re
from typing import Any, Mapping

from .errors import SpecError
from ..mechanisms import runtime_class

__all__ = ["DEFAULT_MAX_MEMORY", "parse_memory", "count_entries", "needed_bytes", "check_budget", "human_bytes",
           "aggregate_file_bytes"]

#: Default ``--max-memory`` of ``aggregate`` and ``estimate``: 1 GiB.
DEFAULT_MAX_MEMORY = 1 << 30
#: Peak bytes per count entry, by operation: ``aggregate`` holds int64 counts per batch and merged,
#: checks that the runtime estimates them and writes them as JSON (measured: 110-120 B per entry for
#: RR on 2**20 items and Hadamard on 2**21 outputs); ``estimate`` holds the counts and their floats.
BYTES_PER_ENTRY = {"aggregate": 192, "estimate": 64}
#: Peak bytes per domain item of ``estimate``: the estimator's float vectors and its output rows
#: (labels, CSV/JSON; measured: 730-770 B per item, RR and Hadamard on 2**20 items, ``-o`` CSV).
ESTIMATE_BYTES_PER_ITEM = 832
#: Fixed overhead of the process (interpreter, numpy, pyarrow), bytes.
BASE_BYTES = 160 << 20
_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9, "t": 10**12,
          "tb": 10**12, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}


def parse_memory(value: Any, option: str = "--max-memory") -> int:
    """Bytes of a memory size: an integer, or a number with a unit (``KB MB GB TB``: powers of 1000;
    ``KiB MiB GiB TiB``: powers of 1024), e.g. ``"1GiB"``, ``"512MiB"``, ``"4GB"``.

    Raises
    ------
    SpecError
        Naming ``option``: not a size, or not positive.
    """
    if isinstance(value, int) and not isinstance(value, bool):
        text = str(value)
    else:
        text = str(value).strip()
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([A-Za-z]*)", text)
    if m is None or m.group(2).lower() not in _UNITS:
        raise SpecError(option, "must be a memory size such as 1GiB, 512MiB or 4GB (units B, KB, MB, GB, TB, "
                        "KiB, MiB, GiB, TiB)", value)
    size = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    if size < 1:
        raise SpecError(option, "must be a positive memory size", value)
    return size


def human_bytes(size: float) -> str:
    """``size`` bytes as a short string in binary units (``1.5 GiB``)."""
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{int(size)} B"


def count_entries(plan: Mapping[str, Any]) -> int:
    """Count entries of the plan's dense aggregate, from the plan alone (nothing is allocated).

    One entry per output symbol (``params.output_size`` where the plan has one, else ``|X|``) for
    each count array the runtime class names in its ``count_rule`` (e.g. one for k-RR, GLH and the
    unary families, two for key-value and longitudinal plans).
    """
    size = int(plan["domain"]["size"])
    out = (plan.get("params") or {}).get("output_size")
    if isinstance(out, int) and not isinstance(out, bool) and out > size:
        size = out
    rule = runtime_class(plan["mechanism"]).count_rule
    names = {c for g in (*rule.sums_to_n, *rule.at_most_n, *rule.total_at_most_n) for c in g}
    names |= {c for g, col in rule.at_most_column for c in (*g, col)}
    return size * max(1, len(names))


def needed_bytes(plan: Mapping[str, Any], operation: str) -> int:
    """Predicted peak bytes of ``operation`` ("aggregate" or "estimate") over the plan's full domain."""
    per_item = ESTIMATE_BYTES_PER_ITEM * int(plan["domain"]["size"]) if operation == "estimate" else 0
    return BASE_BYTES + BYTES_PER_ENTRY[operation] * count_entries(plan) + per_item


def aggregate_file_bytes(plan: Mapping[str, Any], n: int) -> int:
    """Upper bound of an aggregate file's size: every count at most ``n`` (its digits and ``", "``)."""
    return count_entries(plan) * (len(str(max(int(n), 0))) + 2) + (64 << 10)


def check_budget(plan: Mapping[str, Any], operation: str, max_memory: int, *, hint: str = "") -> None:
    """Refuse ``operation`` over the full domain when its predicted peak exceeds ``max_memory``.

    ``"aggregate"`` also needs the budget of the ``"estimate"`` that reads its file: an aggregate
    written under a budget is always estimated under the same budget (never a file that the next
    command refuses).

    Raises
    ------
    SpecError
        ``--max-memory: <operation> of the full domain of N items needs about X (budget Y)...``:
        one line, raised before anything of the domain's size is allocated.
    """
    need = needed_bytes(plan, operation)
    what = operation
    if operation == "aggregate":  # the file written must be one `estimate` reads under the same budget
        need, what = max(need, needed_bytes(plan, "estimate")), "aggregate (and the estimate that reads it)"
    if need > max_memory:
        raise SpecError("--max-memory", f"{what} of the full domain of {int(plan['domain']['size']):,} items "
                        f"({count_entries(plan):,} count entries) needs about {human_bytes(need)}, above the budget "
                        f"of {human_bytes(max_memory)}; raise --max-memory{hint}", human_bytes(max_memory))

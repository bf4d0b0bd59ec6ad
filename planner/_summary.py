"""Summaries of long tables: what a screen shows of a table with thousands of rows.

A table of at most :data:`ROW_LIMIT` rows is shown whole. A longer one is cut to the rows that
matter: its first and last rows, the rows its family marks as binding (``Table.keep``, at most
``ROW_LIMIT // 2`` of them), and for every numeric column the rows holding its smallest and its
largest value; each run of left-out rows becomes one ``... N rows`` line and the note says how many
rows the table has. The number of rows shown is bounded by ``2 + ROW_LIMIT // 2 + 2 x columns``,
whatever the table's length; ``ldpplan ... --full`` prints every row and ``--json`` every number.

Pure functions of :class:`ldpplan.planner._report.Table` objects; the CLI draws the result.
"""
from __future__ import annotations

import dataclasses
import math
from numbers import Real
from typing import Any, Iterable, Sequence

from ._report import Table

__all__ = ["ROW_LIMIT", "summary_table", "column_extremes"]

#: Tables with at most this many rows are shown whole.
ROW_LIMIT = 24


def _number(cell: Any) -> float | None:
    if isinstance(cell, bool) or not isinstance(cell, Real):
        return None
    value = float(cell)
    return value if math.isfinite(value) else None


def column_extremes(rows: Sequence[Sequence[Any]], width: int) -> set[int]:
    """Indices of the rows holding each numeric column's smallest and largest value (first of ties).

    A sequence of rows computed on demand may answer this itself with an ``extremes()`` method
    (the IDUE active constraints do, from their arrays); otherwise every row is read once.
    """
    extremes = getattr(rows, "extremes", None)
    if callable(extremes):
        return set(extremes())
    low: list[tuple[float, int] | None] = [None] * width
    high: list[tuple[float, int] | None] = [None] * width
    for k, row in enumerate(rows):
        for c, cell in enumerate(row):
            x = _number(cell)
            if x is None:
                continue
            lowest, highest = low[c], high[c]
            if lowest is None or x < lowest[0]:
                low[c] = (x, k)
            if highest is None or x > highest[0]:
                high[c] = (x, k)
    return {pair[1] for pair in (*low, *high) if pair is not None}


def _gap(count: int, width: int) -> list[str]:
    return [f"... {count:,} row{'s' if count != 1 else ''}"] + [""] * (width - 1)


def summary_table(table: Table, limit: int = ROW_LIMIT) -> Table:
    """``table`` itself when it has at most ``limit`` rows, else its summary (see the module docstring).

    Parameters
    ----------
    table : Table
    limit : int
        Longest table shown whole; at most ``limit // 2`` binding rows are kept.

    Returns
    -------
    Table
        The rows shown, in the table's order, with ``... N rows`` lines where rows are left out;
        the note starts with how many rows are shown of how many.
    """
    n = len(table.rows)
    if n <= limit:
        return table
    width = len(table.columns)
    binding = _first_unique(table.keep, n, limit // 2)
    chosen = sorted({0, n - 1, *binding, *column_extremes(table.rows, width)})
    rows: list[Sequence[Any]] = []
    previous = -1
    for k in chosen:
        if k - previous > 1:
            rows.append(_gap(k - previous - 1, width))
        rows.append(table.rows[k])
        previous = k
    why = "the first and last" + (", the binding ones" if binding else "") + ", each column's smallest and largest"
    head = f"{len(chosen)} of {n:,} rows shown ({why}); --full prints every row."
    return dataclasses.replace(table, rows=rows, keep=(), note=head + (" " + table.note if table.note else ""))


def _first_unique(indices: Iterable[int], n: int, cap: int) -> list[int]:
    """The first ``cap`` distinct indices in ``0 .. n-1`` (the rest of a long ``keep`` is not read)."""
    seen: dict[int, None] = {}
    for k in indices:
        if len(seen) >= cap:
            break
        if 0 <= int(k) < n:
            seen.setdefault(int(k), None)
    return list(seen)

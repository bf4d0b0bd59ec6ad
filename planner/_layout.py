"""Table layout for a terminal of a given width: every figure shown in full, never cut or wrapped.

A table whose cells fit the width is drawn as it is. A wider one is split into several stacked
tables, each repeating the first (key) column and holding as many further columns as fit; when
even the key column and one more do not fit, every row becomes a transposed two-column
``column | value`` table. Cells without a space (numbers, labels) never wrap; text cells
(with spaces) wrap only between words. Only a single word longer than the whole terminal is folded.

Pure functions of strings and widths; :func:`ldpplan.planner._console.print_tables` draws the result.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Sequence

__all__ = ["Column", "Block", "layout", "table_width", "footnote_tall_cells", "MAX_CELL_LINES"]

#: A text cell that would wrap into more lines than this is moved to a footnote (``[1]``).
MAX_CELL_LINES = 2
#: A number: digits with optional sign, separators, decimals and exponent.
_NUMBER = re.compile(r"[-+]?(?:\d+(?:[,.]\d+)*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


@dataclasses.dataclass(frozen=True)
class Column:
    """One column of a laid-out table.

    Attributes
    ----------
    index : int
        Position in the original table's columns.
    width : int
        Width of the cell text (cells), without padding and borders.
    wraps : bool
        True for a text column (some cell has a space): it wraps between words.
    """

    index: int
    width: int
    wraps: bool


@dataclasses.dataclass(frozen=True)
class Block:
    """One table to draw: ``columns`` of the original, or a transposed row (``row`` is its index).

    ``natural`` is True when the columns have their natural widths (the table is drawn as rich
    would draw it on an unbounded console); otherwise the widths are fixed by the layout.
    """

    columns: tuple[Column, ...]
    part: int
    parts: int
    row: int | None = None
    natural: bool = False


def _cell_len(text: str) -> int:
    from rich.cells import cell_len

    return cell_len(text)


def _longest_word(text: str) -> int:
    return max((_cell_len(w) for w in text.split()), default=0)


def table_width(widths: Sequence[int]) -> int:
    """Width of a rich table with the default box and padding: ``sum(w) + 3 n + 1``."""
    return sum(widths) + 3 * len(widths) + 1


def breakable(cell: str) -> bool:
    """True for text that may wrap between words: it has a space and a letter outside its numbers.

    Figures with spaces (``8408 / 2040``, ``[0.12, 0.34]``, ``1.5e+04 +- 3``) are never broken.
    """
    return " " in cell.strip() and re.search(r"[^\W\d_]", _NUMBER.sub("", cell)) is not None


def _measure(header: str, cells: Sequence[str]) -> tuple[int, int, bool]:
    """(natural width, smallest width without cutting a figure, wraps) of one column."""
    wraps = any(breakable(c) for c in cells)
    natural = max([_cell_len(header)] + [_cell_len(c) for c in cells])
    header_min = _longest_word(header)
    smallest = max([header_min] + [_longest_word(c) if breakable(c) else _cell_len(c) for c in cells])
    return natural, smallest, wraps


def _fits_naturally(indices: Sequence[int], measures, width: int) -> bool:
    return table_width([measures[i][0] for i in indices]) <= width


def _fit(indices: Sequence[int], measures, width: int) -> tuple[Column, ...] | None:
    """Widths for ``indices`` within ``width`` (natural if they fit, else text columns narrowed), or None."""
    natural = [measures[i][0] for i in indices]
    if table_width(natural) <= width:
        return tuple(Column(i, w, measures[i][2]) for i, w in zip(indices, natural))
    smallest = [measures[i][1] for i in indices]
    if table_width(smallest) > width:
        return None
    spare = width - table_width(smallest)
    want = [n - s for n, s in zip(natural, smallest)]
    total = sum(want) or 1
    extra = [min(w, spare * w // total) for w in want]
    return tuple(Column(i, s + e, measures[i][2]) for i, s, e in zip(indices, smallest, extra))


def layout(headers: Sequence[str], rows: Sequence[Sequence[str]], width: int) -> list[Block]:
    """Lay a table of formatted cells out for ``width`` terminal columns.

    Parameters
    ----------
    headers : sequence of str
    rows : sequence of sequence of str
        The formatted cells (as printed).
    width : int
        Terminal width in cells.

    Returns
    -------
    list of Block
        One block (the table as it is, possibly with narrowed text columns), several stacked
        blocks each repeating column 0, or one transposed block per row.
    """
    n = len(headers)
    measures = [_measure(headers[i], [r[i] for r in rows]) for i in range(n)]
    whole = _fit(range(n), measures, width)
    if whole is not None or n <= 1:
        return [Block(whole or tuple(Column(i, max(1, width - 4), True) for i in range(n)), 1, 1,
                      natural=_fits_naturally(range(n), measures, width))]
    groups: list[list[int]] = []
    for i in range(1, n):
        if groups and _fit([0, *groups[-1], i], measures, width) is not None:
            groups[-1].append(i)
        elif _fit([0, i], measures, width) is not None:
            groups.append([i])
        else:
            groups = []
            break
    fits = [_fit([0, *g], measures, width) for g in groups]
    if groups and all(f is not None for f in fits):  # (each group was grown only while it fits)
        return [Block(f, k + 1, len(groups)) for k, f in enumerate(fits) if f is not None]  # fixed
    # transposed: one ``column | value`` table per row
    name_width = min(max(_cell_len(h) for h in headers), max(1, width // 3))
    value_width = max(1, width - table_width([name_width, 0]))
    cols = (Column(-1, name_width, True), Column(-2, value_width, True))
    return [Block(cols, k + 1, len(rows), row=k) for k in range(len(rows))]


def _wrapped_lines(text: str, width: int) -> int:
    """Lines of ``text`` wrapped greedily between words at ``width`` cells (rich's rule for a cell)."""
    lines, used = 1, 0
    for word in text.split():
        size = _cell_len(word)
        if used and used + 1 + size > width:
            lines, used = lines + 1, size
        else:
            used += size + (1 if used else 0)
    return lines


def footnote_tall_cells(headers: Sequence[str], rows: Sequence[Sequence[str]], width: int,
                        max_lines: int = MAX_CELL_LINES) -> tuple[list[list[str]], list[str]]:
    """Move text cells that :func:`layout` would wrap into more than ``max_lines`` lines to footnotes.

    Such a cell (never in the key column 0, never a figure) becomes ``[k]``, one footnote per cell
    (a text repeated in two rows is printed twice, as the wide table shows it twice). Transposed
    layouts are left as they are (their value column is wide).

    Returns
    -------
    rows : list of list of str
        The cells, tall ones replaced by their marks.
    footnotes : list of str
        Footnote ``k`` (1-based) is ``footnotes[k - 1]``.
    """
    notes: list[str] = []
    out = [list(r) for r in rows]
    # moving cells out changes the widths layout gives the other columns: repeat until no cell is too tall
    for _ in range(len(headers) + 1):
        widths: dict[int, int] = {}
        for block in layout(headers, out, width):
            if block.row is not None:
                return out, notes
            for col in block.columns:
                if col.index > 0 and col.wraps:
                    widths[col.index] = min(widths.get(col.index, col.width), col.width)
        moved = False
        for row in out:
            for i, cell in enumerate(row):
                if (i in widths and not _is_mark(cell, len(notes)) and breakable(cell)
                        and _wrapped_lines(cell, widths[i]) > max_lines):
                    notes.append(cell)
                    row[i] = f"[{len(notes)}]"
                    moved = True
        if not moved:
            break
    return out, notes


def _is_mark(cell: str, count: int) -> bool:
    """``cell`` is a footnote mark ``[k]`` already placed (k <= count)."""
    return cell.startswith("[") and cell.endswith("]") and cell[1:-1].isdigit() and 1 <= int(cell[1:-1]) <= count

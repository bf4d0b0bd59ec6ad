"""Rich rendering for the CLI: consoles, tables, one-line messages.

On a terminal (its width from ``COLUMNS`` or the terminal), a table too wide for the width is
laid out by :mod:`._layout`: stacked tables repeating the key column, or transposed
``column | value`` tables; numbers never wrap and are never cut. When the stream is not a
terminal (a pipe, a file, a test), output is plain: no colours, no control codes; its width is
``COLUMNS`` when that is set (tables are laid out and notes wrapped to it, as on a terminal), else
wide enough that every table is drawn whole on one line per row.

Tables longer than :data:`ldpplan.planner._summary.ROW_LIMIT` rows are summarized (the binding rows,
the extremes, a count of the rest) unless ``full`` is asked for (``--full``).
"""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Iterable, NoReturn, TextIO

import click
from ._layout import footnote_tall_cells, layout
from ._summary import summary_table

if TYPE_CHECKING:  # (rich is imported where a console is built)
    from rich.console import Console

__all__ = ["interactive", "console", "print_tables", "fmt_cell", "print_message", "progress_bar", "fail"]

#: Width of the console when the stream is not a terminal (tables never need more).
PLAIN_WIDTH = 10_000
_LEFT_COLUMNS = {"level", "name", "mechanism", "item", "metric", "key", "allocation", "target", "estimator",
                 "label", "description", "default", "option"}


def _is_tty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def interactive(stderr: bool = False) -> bool:
    """True when stdout (or stderr) is a terminal: progress bars are drawn only then."""
    return _is_tty(sys.stderr if stderr else sys.stdout)


def console(stderr: bool = False) -> Console:
    """A rich Console on stdout (or stderr): full rich on a terminal, plain text otherwise."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    if _is_tty(stream):
        return Console(file=stream, highlight=False, soft_wrap=False)
    width = _columns()
    return Console(file=stream, highlight=False, soft_wrap=width is None, width=width or PLAIN_WIDTH,
                   color_system=None, force_terminal=False, emoji=False)


def _columns() -> int | None:
    """``COLUMNS`` as a width (at least 20) when it is set to a number, else None."""
    import os

    text = os.environ.get("COLUMNS", "").strip()
    return max(20, int(text)) if text.isdigit() and int(text) > 0 else None


def fmt_cell(cell: Any) -> str:
    """Floats with 4 significant digits (``1.5``, ``2.168e+04``), everything else with ``str``."""
    import numpy as np

    if isinstance(cell, (bool, np.bool_)):
        return str(bool(cell))
    if isinstance(cell, (float, np.floating)):
        return f"{float(cell):.4g}"
    if isinstance(cell, np.integer):
        return str(int(cell))
    return str(cell)


def _rich_table(title: str, headers, rows, columns, fixed: bool):
    from rich.table import Table as RichTable
    from rich.text import Text

    rt = RichTable(title=title, title_justify="left", show_lines=False)
    for col in columns:
        header = str(headers[col.index]) if col.index >= 0 else ("column" if col.index == -1 else "value")
        left = header in _LEFT_COLUMNS or col.index < 0
        rt.add_column(Text(header, no_wrap=False, overflow="fold"), justify="left" if left else "right",
                      overflow="fold", no_wrap=not col.wraps, min_width=None if fixed else len(header),
                      width=col.width if fixed else None)
    for row in rows:  # cells are text, never rich markup ("[min-max]" is shown, not taken for a style)
        rt.add_row(*[Text(cell) for cell in row])
    return rt


def print_tables(tables: Iterable[Any], con: Console | None = None, *, full: bool = False) -> None:
    """Render planner ``Table`` objects so that every figure is shown in full at the console's width.

    A table that fits is drawn as it is; a wider one is split into stacked tables repeating the
    first column (titles ``(columns 1/3)`` ...), or, when even that does not fit, drawn as one
    ``column | value`` table per row (``(row 1/4)`` ...). Numbers never wrap or get cut; text
    wraps between words, and a text cell that would take more than two lines is printed below the
    table as a footnote ``[k]`` (:func:`ldpplan.planner._layout.footnote_tall_cells`). See
    :func:`ldpplan.planner._layout.layout`. Unless ``full``, a long table is drawn as its summary
    (:func:`ldpplan.planner._summary.summary_table`).
    """
    con = con or console()
    for t in tables:
        t = t if full else summary_table(t)
        headers = [str(c) for c in t.columns]
        cells, footnotes = footnote_tall_cells(headers, [[fmt_cell(c) for c in row] for row in t.rows], con.width)
        blocks = layout(headers, cells, con.width)
        for block in blocks:
            if block.row is not None:
                rows = [[h, c] for h, c in zip(headers, cells[block.row])]
                title = f"{t.title} (row {block.part}/{block.parts})"
                con.print(_rich_table(title, headers, rows, block.columns, fixed=True))
                continue
            title = t.title if block.parts == 1 else f"{t.title} (columns {block.part}/{block.parts})"
            rows = [[r[c.index] for c in block.columns] for r in cells]
            con.print(_rich_table(title, headers, rows, block.columns, fixed=not block.natural))
        for k, text in enumerate(footnotes, 1):  # tall text cells, moved out of the table
            con.print(f"[{k}] {text}", markup=False, highlight=False)
        if t.note:
            con.print(t.note, style="dim", markup=False)


def fail(message: str, code: int) -> NoReturn:
    """Print ``error: message`` on stderr (one line) and exit with ``code``."""
    print_message(message, prefix="error:", style="bold red", stderr=True)
    raise click.exceptions.Exit(code)


def print_message(text: str, *, prefix: str = "", style: str = "", stderr: bool = False) -> None:
    """Print one line (``prefix`` in ``style``, the text verbatim, never interpreted as markup).

    On stderr the line is never wrapped (an error is one line); on stdout it wraps between words
    at the console's width when it has one.
    """
    from rich.text import Text

    con = console(stderr=stderr)
    line = Text()
    if prefix:
        line.append(prefix, style=style or None)
        line.append(" ")
    line.append(text)
    # stderr (errors, warnings, notes): always one line, the exit-code contract; stdout (holds:, verified:,
    # fingerprint:): wrapped between words where the console has a width (a terminal, or COLUMNS on a pipe)
    con.print(line, soft_wrap=True if stderr else None, highlight=False)


class progress_bar:
    """A progress bar of counted steps on stderr: ``with progress_bar("auditing") as progress: ...``.

    ``progress(advance, total)`` moves it; the count ``done/total`` is shown once a total is known
    (never ``0/None``: until then the bar pulses with no count). The callers report their total
    first (``progress(0, total)``) where they know it before working.
    """

    def __init__(self, what: str):
        self.what = what

    def __enter__(self):
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self.bar = Progress(TextColumn("[progress.description]{task.description}"), BarColumn(),
                            TextColumn("{task.fields[count]}"), TimeElapsedColumn(), console=console(stderr=True),
                            transient=True)
        self.bar.__enter__()
        task = self.bar.add_task(self.what, total=None, count="")

        def progress(advance: int, total: int) -> None:
            self.bar.update(task, advance=advance, total=total)
            done = self.bar.tasks[0].completed
            self.bar.update(task, count=f"{int(done):,}/{int(total):,}" if total else "")

        return progress

    def __exit__(self, *exc) -> None:
        self.bar.__exit__(*exc)

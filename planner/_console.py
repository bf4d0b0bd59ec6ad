"""Rich rendering for the CLI: consoles, tables, one-line messages.

On a terminal, tables use rich's boxes and fold (never cut) cells that do not fit. When
the stream is not a terminal (a pipe, a file, a test), output is plain: no colours, no
control codes, and the console is wide enough that no number is wrapped or cut.
"""
from __future__ import annotations

import sys
from typing import Iterable, TextIO

__all__ = ["interactive", "console", "print_tables", "fmt_cell", "print_message"]

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


def console(stderr: bool = False):
    """A rich Console on stdout (or stderr): full rich on a terminal, plain text otherwise."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    if _is_tty(stream):
        return Console(file=stream, highlight=False, soft_wrap=False)
    return Console(file=stream, highlight=False, soft_wrap=True, width=PLAIN_WIDTH, color_system=None,
                   force_terminal=False, emoji=False)


def fmt_cell(cell) -> str:
    """Floats with 4 significant digits (``1.5``, ``2.168e+04``), everything else with ``str``."""
    import numpy as np

    if isinstance(cell, (bool, np.bool_)):
        return str(bool(cell))
    if isinstance(cell, (float, np.floating)):
        return f"{float(cell):.4g}"
    if isinstance(cell, np.integer):
        return str(int(cell))
    return str(cell)


def print_tables(tables: Iterable, con=None) -> None:
    """Render planner ``Table`` objects (numbers are folded, never cut with an ellipsis)."""
    from rich.table import Table as RichTable

    con = con or console()
    for t in tables:
        rt = RichTable(title=t.title, title_justify="left", show_lines=False)
        for col in t.columns:
            rt.add_column(str(col), justify="left" if str(col) in _LEFT_COLUMNS else "right",
                          overflow="fold", no_wrap=False, min_width=len(str(col)))
        for row in t.rows:
            rt.add_row(*[fmt_cell(c) for c in row])
        con.print(rt)
        if t.note:
            con.print(t.note, style="dim", markup=False, soft_wrap=True)


def print_message(text: str, *, prefix: str = "", style: str = "", stderr: bool = False) -> None:
    """Print one line (``prefix`` in ``style``, the text verbatim, never interpreted as markup)."""
    from rich.text import Text

    con = console(stderr=stderr)
    line = Text()
    if prefix:
        line.append(prefix, style=style or None)
        line.append(" ")
    line.append(text)
    con.print(line, soft_wrap=True, highlight=False)

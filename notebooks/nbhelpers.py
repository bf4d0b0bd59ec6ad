"""Display helpers shared by the notebooks (the only module they import besides ``ldpplan``).

Markdown tables for rows of numbers, for the planner's ``Table`` objects, and the closing
"paper vs ours" table every notebook builds from the numbers it computed. Nothing here
reads a plan or a runtime result: those accessors sit at the top of each notebook.
"""
from __future__ import annotations

import io

from IPython.display import Image, Markdown, display

__all__ = ["fmt", "show_table", "show_planner_table", "show_figure", "PaperVsOurs"]


def fmt(x, digits=4):
    """Format a markdown table cell: floats with ``digits`` significant digits, anything else with ``str``."""
    if isinstance(x, float):
        return f"{x:.{digits}g}"
    return str(x).replace("|", "\\|")   # a literal | (as in |X|) must not split the markdown cell


def show_table(columns, rows, title=None, note=None, digits=4):
    """Display a markdown table.

    Parameters
    ----------
    columns : list of str
        Column headers.
    rows : list of list
        One list of cells per row (floats formatted with ``digits`` significant digits).
    title, note : str, optional
        Bold title above, italic note below.
    digits : int
        Significant digits of float cells.
    """
    lines = [f"**{title}**", ""] if title else []
    lines.append("| " + " | ".join(fmt(c) for c in columns) + " |")
    lines.append("|" + "---|" * len(columns))
    lines += ["| " + " | ".join(fmt(c, digits) for c in row) + " |" for row in rows]
    if note:
        lines += ["", f"*{note}*"]
    display(Markdown("\n".join(lines)))


def show_planner_table(table, digits=4):
    """Display a ``ldpplan.planner`` Table (what ``ldpplan plan`` / ``ldpplan simulate`` print)."""
    show_table(table.columns, table.rows, table.title, table.note, digits)


def show_figure(fig, dpi=100):
    """Display a matplotlib figure as a PNG and close it (``ldpplan.planner.plotting.figure`` draws on the
    Agg backend, which the notebook's inline display does not pick up by itself)."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    plt.close(fig)
    display(Image(buffer.getvalue()))


class PaperVsOurs:
    """Collects the rows of a notebook's closing "paper vs ours" table.

    ``paper`` is the paper's number as the paper prints it (typed, a string); ``ours`` is
    the notebook's computed value (a number or a string formatted from computed numbers).
    """

    COLUMNS = ["section", "quantity", "paper's number", "ours (computed here)", "why they differ"]

    def __init__(self):
        self.rows = []

    def add(self, section, quantity, paper, ours, why=""):
        """Record one row; returns ``ours`` so the call can sit inside an expression."""
        self.rows.append([section, quantity, paper, ours, why])
        return ours

    def show(self, title="Paper vs ours", digits=5):
        """Display the table collected so far."""
        show_table(self.COLUMNS, self.rows, title=title, digits=digits)

"""Shared pieces for the notebook generators: cell constructors and the display helper cell.

Notebook sources live in ``notebooks/_build.py`` (01, 02, 06) and in one module per
notebook ``notebooks/_nbNN_<name>.py`` (03, 04, 05) exposing ``NAME`` and ``CELLS``.
"""
from __future__ import annotations

from textwrap import dedent, indent

import nbformat

__all__ = ["md", "code", "DISPLAY_HELPERS"]


def md(text: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_markdown_cell(dedent(text).strip("\n"))


def code(text: str, *tags: str) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(dedent(text).strip("\n"))
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


# Shared helper cell: render planner Tables / row lists as markdown tables.
DISPLAY_HELPERS = '''
from IPython.display import Markdown, display


def fmt(x, digits=4):
    """Format a table cell: floats with `digits` significant digits."""
    if isinstance(x, float):
        return f"{x:.{digits}g}"
    return str(x)


def show_table(columns, rows, title=None, note=None, digits=4):
    """Display a markdown table (columns: list of str, rows: list of lists)."""
    lines = [f"**{title}**", ""] if title else []
    lines.append("| " + " | ".join(columns) + " |")
    lines.append("|" + "---|" * len(columns))
    lines += ["| " + " | ".join(fmt(c, digits) for c in row) + " |" for row in rows]
    if note:
        lines += ["", f"*{note}*"]
    display(Markdown("\\n".join(lines)))


def show_planner_table(table, digits=4):
    """Display a planner.Table (what `ldpplan plan` / `ldpplan simulate` print)."""
    show_table(table.columns, table.rows, table.title, table.note, digits)
'''
DISPLAY_HELPERS = indent(DISPLAY_HELPERS, "    ")  # same indentation as the cell sources it is appended to



def build(name: str, cells: list, execute: bool = True, timeout: int = 900) -> float:
    """Write ``notebooks/<name>.ipynb`` from ``cells`` and (optionally) execute it in place.

    Returns the seconds spent executing. On a failing cell the partial notebook is
    written (for inspection) and the error is raised.
    """
    import time
    from pathlib import Path

    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    here = Path(__file__).resolve().parent
    nb = nbformat.v4.new_notebook()
    nb.cells = cells
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    path = here / f"{name}.ipynb"
    seconds = 0.0
    if execute:
        t0 = time.perf_counter()
        try:
            NotebookClient(nb, timeout=timeout, kernel_name="python3",
                           resources={"metadata": {"path": str(here)}}).execute()
        except CellExecutionError:
            nbformat.write(nb, path)
            raise
        seconds = time.perf_counter() - t0
        nb.metadata.pop("widgets", None)
    nbformat.validate(nb)
    nbformat.write(nb, path)
    return seconds


def source_modules() -> dict[str, list]:
    """``{notebook name: cells}`` from every ``notebooks/_nbNN_*.py`` module."""
    import importlib
    import sys
    from pathlib import Path

    here = Path(__file__).resolve().parent
    if str(here) not in sys.path:
        sys.path.insert(0, str(here))
    out = {}
    for src in sorted(here.glob("_nb[0-9][0-9]_*.py")):
        mod = importlib.import_module(src.stem)
        out[mod.NAME] = mod.CELLS
    return out


if __name__ == "__main__":  # python notebooks/_nbtools.py 03 [04 ...]
    import sys

    sources = source_modules()
    for token in sys.argv[1:] or list(sources):
        for name in [n for n in sources if n == token or n.split("-")[0] == token]:
            print(f"{name}.ipynb written, executed in {build(name, sources[name]):.1f} s")

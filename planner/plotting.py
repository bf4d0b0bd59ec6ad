"""The one plotting module: every ``ldpplan simulate --plot`` figure is drawn here.

matplotlib is imported lazily with the Agg backend; figures are written atomically.
"""
from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:  # (matplotlib is imported where a figure is drawn)
    from matplotlib.figure import Figure

from ._io import write_bytes_atomic

__all__ = ["Curve", "plot_curves", "figure"]


@dataclass(frozen=True)
class Curve:
    """One line of a figure.

    Attributes
    ----------
    label : str
    x, y : sequence of float
        Same length; a single point is drawn as a marker (so it stays visible).
    style : str
        ``"theory"`` (solid line), ``"empirical"`` (dashed with open markers) or ``"points"``.
    color : int
        Index into matplotlib's colour cycle (``C0``, ``C1`` ...); a theory curve and its
        empirical curve share one.
    """

    label: str
    x: Sequence[float]
    y: Sequence[float]
    style: str = "empirical"
    color: int = 0
    extra: dict = field(default_factory=dict)


def plot_curves(curves: Sequence[Curve], path: str, *, title: str, xlabel: str, ylabel: str,
                logy: bool = True, logx: bool = False) -> None:
    """Draw ``curves`` into a PNG at ``path`` (written atomically).

    Parameters
    ----------
    curves : sequence of Curve
    path : str
        Output PNG file.
    title, xlabel, ylabel : str
        Axis labels state units (e.g. "counts^2 per user", "nats").
    logy, logx : bool
        Log scales.
    """
    import matplotlib.pyplot as plt

    fig = figure(curves, title=title, xlabel=xlabel, ylabel=ylabel, logy=logy, logx=logx)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120)
    plt.close(fig)
    write_bytes_atomic(path, buf.getvalue())


def figure(curves: Sequence[Curve], *, title: str, xlabel: str, ylabel: str, logy: bool = True,
           logx: bool = False) -> Figure:
    """The matplotlib figure of :func:`plot_curves` (Agg backend), not yet saved or closed.

    A curve of a single point always gets a marker, so it stays visible.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for c in curves:
        color = f"C{c.color}"
        single = len(c.x) == 1
        if c.style == "theory":
            ax.plot(c.x, c.y, "-" + ("s" if single else ""), color=color, label=c.label)
        elif c.style == "points":
            ax.plot(c.x, c.y, "o", color=color, label=c.label)
        else:
            ax.plot(c.x, c.y, "--o", color=color, mfc="none", label=c.label)
    if logy:
        ax.set_yscale("log")
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


def svg(curves: Sequence[Curve], *, title: str, xlabel: str, ylabel: str, description: str, ident: str,
        logy: bool = True, logx: bool = False) -> str:
    """The figure of :func:`figure` as an inline SVG element with a text alternative (for HTML reports).

    Text is drawn as paths (no font is fetched), the file carries no metadata, date or external
    reference, and ids are salted with ``ident`` so several figures share a page. The root ``<svg>``
    gets ``role="img"``, ``aria-labelledby`` and its ``<title>`` / ``<desc>`` (``title``,
    ``description``), and scales to its container's width (its ``viewBox`` kept).
    """
    import html
    import re

    import matplotlib
    import matplotlib.pyplot as plt

    fig = figure(curves, title=title, xlabel=xlabel, ylabel=ylabel, logy=logy, logx=logx)
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": ident, "svg.fonttype": "path"}):
        fig.savefig(buf, format="svg", metadata={"Creator": None, "Date": None, "Format": None, "Type": None})
    plt.close(fig)
    text = buf.getvalue()
    text = text[text.index("<svg"):]  # no XML declaration or DOCTYPE inside HTML
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)
    # ids unique in the page: every id and every reference to one prefixed with ident
    text = re.sub(r'\bid="([^"]+)"', rf'id="{ident}-\1"', text)
    text = re.sub(r'(href="#|url\(#)([^")]+)', rf"\1{ident}-\2", text)
    head_end = text.index(">") + 1
    head = re.sub(r'\s(width|height)="[^"]*"', "", text[:head_end - 1])
    alt = (f'<title id="{ident}-title">{html.escape(title)}</title>'
           f'<desc id="{ident}-desc">{html.escape(description)}</desc>')
    return (f'{head} role="img" aria-labelledby="{ident}-title {ident}-desc" class="figure">' + alt
            + text[head_end:])

"""The one plotting module: every ``ldpplan simulate --plot`` figure is drawn here.

matplotlib is imported lazily with the Agg backend; figures are written atomically.
"""
from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Sequence

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
           logx: bool = False):
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

"""The one plotting module: single points stay visible, files are written atomically as PNG."""
from __future__ import annotations

import matplotlib.pyplot as plt

from ldpplan.planner.plotting import Curve, figure, plot_curves


def test_a_single_point_is_drawn_with_a_marker():
    curves = [Curve("theory", [1.0], [2.0], style="theory"), Curve("empirical", [1.0], [2.1]),
              Curve("sweep", [1.0, 2.0], [2.0, 1.0], style="theory", color=1)]
    fig = figure(curves, title="t", xlabel="epsilon (nats)", ylabel="MSE")
    try:
        lines = {ln.get_label(): ln for ln in fig.axes[0].get_lines()}
        assert lines["theory"].get_marker() not in (None, "None", "")   # visible without a line segment
        assert lines["empirical"].get_marker() == "o"
        assert lines["sweep"].get_marker() in (None, "None", "")        # a line of two points needs none
    finally:
        plt.close(fig)


def test_plot_curves_writes_a_png(tmp_path):
    path = tmp_path / "fig.png"
    plot_curves([Curve("a", [1.0], [1.0], style="theory")], str(path), title="t", xlabel="x", ylabel="y")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in tmp_path.iterdir()] == ["fig.png"]   # no temporary file left behind

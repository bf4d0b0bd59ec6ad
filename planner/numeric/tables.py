"""Tables that ``ldpplan plan`` prints for a numeric plan."""
from __future__ import annotations

from typing import Any, Mapping

from .._report import Table

__all__ = ["summarize"]


def summarize(plan: Mapping[str, Any]) -> list[Table]:
    """The plan's grids and guarantee, and its predicted error of the mean beside every candidate's.

    Returns
    -------
    list of Table
        ``Numeric plan`` (mechanism, range and clipping, epsilon, grid sizes, bias bound) and
        ``Predicted variance of the mean`` (times n; the exact grid channel, its closed form and the
        candidates' closed forms at the plan's epsilon).
    """
    p, gu, pr = plan["params"], plan["guarantee"], plan["predicted"]
    rows: list[list[Any]] = [
        ["mechanism", plan["mechanism"]], ["task", p["task"]],
        ["range (values outside are clipped)", f"[{p['low']:g}, {p['high']:g}]"],
        ["epsilon (nats)", float(p["epsilon"])], ["epsilon of the grid channel (guarantee)", float(gu["epsilon"])],
        ["input grid points", len(p["input_grid"])], ["outputs", len(p["output_values"])],
        ["components (weights / 2^48)", ", ".join(str(w) for w in p["component_weights"])],
        ["bias bound of the mean (user units)", float(pr["mean_bias_bound"]["value"])]]
    if "mean_halfwidth" in pr:
        rows.append(["CI half-width of the mean at n (worst case)", float(pr["mean_halfwidth"]["value"])])
    t1 = Table("Numeric plan", ["parameter", "value"], rows,
               note="probabilities are integers over 2^48; epsilon = max over outputs of ln(max/min) of the column, "
                    "decided exactly; inputs are rounded at random to the two neighbouring grid points.")
    t2 = Table("Predicted variance of the mean x n (worst case over data, squared user units)",
               ["mechanism", "variance x n"],
               [[f"{plan['mechanism']} (exact grid channel)", float(pr["mean_variance_times_n"]["value"])],
                [f"{plan['mechanism']} (closed form)", float(pr["closed_form_variance_times_n"]["value"])]]
               + [[b["name"], float(b["predicted"]["mean_variance_times_n"]["value"])] for b in plan["baselines"]],
               note="closed forms: Duchi C^2, PM 4s/(3(s-1)^2) (s = e^(eps/2)), HM its mixture, SW debiased "
                    "(Wang et al. ICDE 2019 Sec. III; Li et al. SIGMOD 2020 Sec. 4).")
    return [t1, t2]

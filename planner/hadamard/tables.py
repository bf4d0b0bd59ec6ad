"""Tables that ``ldpplan plan`` prints for a Hadamard-response plan."""
from __future__ import annotations

from typing import Any, Mapping

from .._report import Table

__all__ = ["summarize"]


def summarize(plan: Mapping[str, Any]) -> list[Table]:
    """The plan's numbers and guarantee, and its predicted error beside the k-ary RR's.

    Returns
    -------
    list of Table
        ``Hadamard response plan`` (k, K, p, epsilon in nats, report bits) and ``Predicted l2 error``
        (squared frequency; times n, and at n when the spec gives ``users``).
    """
    p, gu, pr = plan["params"], plan["guarantee"], plan["predicted"]
    rows = [["mechanism", "hr (Hadamard response, one block)"],
            ["epsilon (spec, nats)", float(p["epsilon"])],
            ["epsilon of the grid channel (guarantee)", float(gu["epsilon"])],
            ["k (items)", int(p["domain_size"])], ["K (outputs, 2^ceil(log2(k+1)))", int(p["output_size"])],
            ["p  Pr(y in C_x)", float(p["keep_probability"])], ["report bits", int(pr["report_bits"]["value"])]]
    t1 = Table("Hadamard response plan", ["parameter", "value"], rows,
               note="p is a multiple of 2^-48 rounded down; Q(y|x) = 2p/K on C_x (row x+1 of the Sylvester "
                    "Hadamard matrix), 2(1-p)/K elsewhere; epsilon = ln(p/(1-p)), decided exactly.")
    with_n = "l2_total" in pr
    cols = ["mechanism", "report bits", "E l2^2 x n"] + (["E l2^2 at n"] if with_n else [])

    def row(name: str, pred: Mapping[str, Any]) -> list[Any]:
        out = [name, int(pred["report_bits"]["value"]), float(pred["l2_total_times_n"]["value"])]
        return out + ([float(pred["l2_total"]["value"])] if with_n else [])

    t2 = Table("Predicted l2 error of the empirical estimate (any distribution)", cols,
               [row("hr", pr)] + [row(b["name"], b["predicted"]) for b in plan["baselines"]],
               note="sum over the k items of E[(f_hat - f)^2], squared frequency; per item n Var = c0 + c1 f with "
                    f"c0 = {float(pr['variance_at_zero_times_n']['value']):.6g}, "
                    f"c1 = {float(pr['variance_slope_times_n']['value']):.6g}.")
    return [t1, t2]

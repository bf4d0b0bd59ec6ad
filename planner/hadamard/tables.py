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
        ``Hadamard response plan`` (k, B, b, K, P, epsilon in nats, report bits) and ``Predicted l2
        error`` (squared frequency; times n, and at n when the spec gives ``users``) beside the
        k-ary RR and the other choices of B.
    """
    p, gu, pr = plan["params"], plan["guarantee"], plan["predicted"]
    rows: list[list[Any]] = [["mechanism", "hr (Hadamard response)"],
            ["epsilon (spec, nats)", float(p["epsilon"])],
            ["epsilon of the grid channel (guarantee)", float(gu["epsilon"])],
            ["k (items)", int(p["domain_size"])], ["B (blocks)", int(p["blocks"])],
            ["b (block size)", int(p["block_size"])], ["K = B b (outputs)", int(p["output_size"])],
            ["P  Pr(y in C_x)", float(p["keep_probability"])], ["report bits", int(pr["report_bits"]["value"])]]
    t1 = Table("Hadamard response plan", ["parameter", "value"], rows,
               note="P is a multiple of 2^-48 rounded down; Q(y|x) = P/s on C_x (row t of the Sylvester Hadamard "
                    "matrix H_b in x's block, s = b/2), (1-P)/(K-s) elsewhere; epsilon = ln(P (2B-1)/(1-P)), "
                    "decided exactly.")
    with_n = "l2_total" in pr
    cols = ["mechanism", "report bits", "E l2^2 x n"] + (["E l2^2 at n"] if with_n else [])

    def row(name: str, pred: Mapping[str, Any]) -> list[Any]:
        out = [name, int(pred["report_bits"]["value"]), float(pred["l2_total_times_n"]["value"])]
        return out + ([float(pred["l2_total"]["value"])] if with_n else [])

    t2 = Table("Predicted l2 error of the empirical estimate (worst case over distributions)", cols,
               [row(f"hr, B = {int(p['blocks'])}", pr)] + [row(b["name"], b["predicted"]) for b in plan["baselines"]],
               note="sum over the k items of E[(f_hat - f)^2], squared frequency (B = 1: the same for every "
                    "distribution; B > 1: all users in one full block); per item n Var = c0 + c_block F_j + c1 f with "
                    f"c0 = {float(pr['variance_intercept_times_n']['value']):.6g}, "
                    f"c_block = {float(pr['variance_block_slope_times_n']['value']):.6g}, "
                    f"c1 = {float(pr['variance_slope_times_n']['value']):.6g} (F_j: the mass of x's block).")
    return [t1, t2]

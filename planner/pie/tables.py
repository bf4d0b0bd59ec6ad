"""Tables that ``ldpplan plan`` prints for a PIE plan."""
from __future__ import annotations

from typing import Any, Mapping

from .._report import Table

__all__ = ["summarize"]


def summarize(plan: Mapping[str, Any]) -> list[Table]:
    """Parameters, guarantee, predicted l2 loss, and the RR/GLH candidates.

    Returns
    -------
    list of Table
        Four tables (epsilon in nats, alpha in bits, losses in squared frequencies).
    """
    p, gu, pr, mech = plan["params"], plan["guarantee"], plan["predicted"], plan["mechanism"]
    sel = plan["solver"].get("selection", {})
    rows: list[list[Any]] = [["mechanism", f"{mech} ({'k-ary RR, eq. 2' if mech == 'rr' else 'GLH, eq. 3'})"],
            ["epsilon (nats)", float(p["epsilon"])], ["epsilon realised on the grid (guarantee)", float(gu["epsilon"])],
            ["domain size |X|", int(plan["domain"]["size"])]]
    if mech == "glh":
        rows.append(["g", int(p["g"])])
    rows += [["mu (keep probability)", float(p["mu"])], ["report bits", int(pr["report_bits"]["value"])]]
    t1 = Table("PIE plan: parameters", ["key", "value"], rows)
    t2 = Table("Guarantee (Def. 3.1, Thm. 4.2-4.5, Cor. 3.9)", ["key", "value"], [
        ["notion", str(gu["notion"])],
        ["alpha (bits)", float(gu["alpha_bits"])], ["alpha (nats)", float(gu["alpha_nats"])],
        ["Bayes error lower bound", float(gu["bayes_error_lower_bound"])],
        ["MI loss theta", float(gu["theta"])], ["binding bound", str(gu["alpha_binding"])],
        ["n users", int(gu["n"])], ["releases t", int(gu["releases"])],
        ["prior", f"{gu['prior']} (max {float(gu['max_prior']):.4g})"]])
    rows3 = [["total l2 loss (sum over x)", float(pr["l2_loss_total"]["value"])],
             ["per item at p(x) = 0", float(pr["l2_loss_per_item_at_zero"]["value"])],
             ["per unit of p(x)", float(pr["l2_loss_per_unit_frequency"]["value"])]]
    if "l2_loss_total_limit_g_infinite" in pr:
        rows3.append(["total, limit g -> inf (Thm. 4.8)", float(pr["l2_loss_total_limit_g_infinite"]["value"])])
    t3 = Table(f"Predicted l2 loss of the empirical estimate ({pr['l2_loss_total']['source']})", ["key", "value"], rows3)
    central = ((plan.get("spec") or {}).get("target") or {}).get("central_epsilon")
    binding = (f"the central target {central:g} through the shuffler" if central is not None  # issue 27
               else str(sel.get("epsilon_binding")))
    t4 = Table(f"Candidates: requested {sel.get('requested')!r}, chose {sel.get('chosen')!r} "
               f"({binding} binds epsilon)",
               ["mechanism", "epsilon", "g", "alpha_bits", "total l2", "report bits"],
               [[b["name"], float(b["epsilon"]), "-" if b.get("g") is None else int(b["g"]), float(b["alpha_bits"]),
                 float(b["predicted"]["l2_loss_total"]["value"]), int(b["predicted"]["report_bits"]["value"])]
                for b in plan["baselines"]],
               note=str(sel.get("reason", "")))
    return [t1, t2, t3, t4]

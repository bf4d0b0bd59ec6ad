"""Tables that ``ldpplan plan`` prints for a longitudinal plan."""
from __future__ import annotations

from typing import Any, Mapping

from .._report import Table

__all__ = ["summarize"]


def summarize(plan: Mapping[str, Any]) -> list[Table]:
    """Rounds, guarantee, predicted variance, and the baselines (candidates, without memoization).

    Returns
    -------
    list of Table
        Epsilons in nats, variances in frequency^2 per value and round.
    """
    p, gu, pr, mech = plan["params"], plan["guarantee"], plan["predicted"], plan["mechanism"]
    k = int(p["domain_size"])
    q1 = (1 - p["p1"]) / (k - 1) if mech == "l-grr" else p["q1"]
    q2 = (1 - p["p2"]) / (k - 1) if mech == "l-grr" else p["q2"]
    rows = [["mechanism", mech], ["domain size k", k], ["p1 / q1 (permanent)", f"{p['p1']:.6g} / {q1:.6g}"],
            ["p2 / q2 (each report)", f"{p['p2']:.6g} / {q2:.6g}"]]
    if mech == "l-grr":
        rows.append(["second round", "exact composed k-ary channel"])
    t1 = Table("Longitudinal plan: both rounds", ["key", "value"], rows,
               note=str(plan["solver"].get("selection", {}).get("reason", "")))
    t2 = Table("Guarantee (longitudinal-LDP)", ["key", "value"], [
        ["epsilon_perm (any reports of one value)", float(gu["epsilon_perm"])],
        ["epsilon_1 (one report)", float(gu["epsilon_1"])], ["rounds", int(gu["rounds"])],
        ["max_values (distinct values a user may hold)", int(gu["max_values"])],
        ["epsilon_lifetime_one_value (value never changes)", float(gu["epsilon_lifetime_one_value"])],
        ["epsilon_2 (second round on the permanent response)", float(gu["epsilon_2"])],
        ["epsilon_lifetime (sound bound, values may change)", float(gu["epsilon_lifetime"])],
        ["epsilon_lifetime_lower (exact loss of a concrete pair)", float(gu["epsilon_lifetime_lower"])]],
        note="; ".join(["epsilon_lifetime = min(rounds x epsilon_2, max_values x epsilon_perm + "
                        "floor(rounds (max_values-1)/max_values) x epsilon_2) for max_values >= 2"] + list(plan["solver"].get("notes", []))))
    t3 = Table("Predicted error per round", ["key", "value"], [
        ["variance per value (f = 0)", float(pr["variance_per_round"]["value"])],
        ["total squared error (sum over values)", float(pr["mse_total_per_round"]["value"])]],
        note=pr["variance_per_round"]["source"])
    t4 = Table("Baselines: variance per value and round (f = 0)", ["name", "mechanism", "variance", "lifetime"],
               [[b["name"], b["mechanism"], float(b["predicted"]["variance_per_round"]["value"]) if b.get("reachable") else "unreachable",
                 float(b.get("epsilon_lifetime", gu["epsilon_lifetime"]))] for b in plan["baselines"]])
    return [t1, t2, t3, t4]

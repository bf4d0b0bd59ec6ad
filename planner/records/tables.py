"""Tables that ``ldpplan plan`` prints for a record plan."""
from __future__ import annotations

from typing import Any, Mapping

from .._report import Table

__all__ = ["summarize"]


def summarize(plan: Mapping[str, Any]) -> list[Table]:
    """The chosen scheme per attribute, and the weighted variance beside the other schemes.

    Returns
    -------
    list of Table
        ``Record plan`` (per attribute: k, weight, oracle, epsilon_j, grid number, pi_j, its epsilon
        alone, n Var) and ``Predicted weighted variance`` (the plan and its baselines, with the
        certificate's gap; with targets and no epsilon, each scheme's least epsilon); with
        ``std_error`` targets, ``Standard error targets`` (per attribute: target, std error, met).
    """
    p, gu, pr = plan["params"], plan["guarantee"], plan["predicted"]
    weights = [float(a.get("weight", 1.0)) for a in plan["spec"]["attributes"]]
    variances = pr["weighted_variance_times_n"]["attributes"]
    sampling = p.get("sampling") or [None] * len(p["names"])
    rows = [[name, int(k), w, o, float(e), float(x), pi, float(ea), float(v)]
            for name, k, w, o, e, x, pi, ea, v in zip(p["names"], p["domain_sizes"], weights, p["oracles"],
                                                       p["epsilons"], p["numbers"], sampling,
                                                       gu["attribute_epsilons"], variances)]
    t1 = Table(f"Record plan: {plan['mechanism']} (epsilon {float(p['epsilon']):g} for the record; guarantee "
               f"{float(gu['epsilon']):.12g} nats)",
               ["attribute", "k", "weight", "oracle", "epsilon_j", "grid number", "pi_j", "epsilon alone", "n Var"],
               rows, note="grid number: GRR P (rounded down) or OUE q (rounded up), multiples of 2^-48; epsilon "
                          "alone: records differing in this attribute only; n Var per item at f = 0.")
    cert = plan["solver"]["certificate"]
    main = [f"{plan['mechanism']} (plan)", float(pr["weighted_variance_times_n"]["value"]), float(cert["gap"])]
    rows2 = [main + [float(p["epsilon"])]] + [[b["name"], float(b["predicted"]["weighted_variance_times_n"]["value"]),
                                               None, b.get("epsilon")] for b in plan["baselines"]]
    t2 = Table("Predicted weighted variance (sum_j w_j n Var, per item at f = 0)",
               ["scheme", "weighted n Var", "certificate gap", "epsilon"], rows2,
               note=f"certificate: {cert['kind']} (lower bound {float(cert['lower_bound']):.12g}); epsilon: the "
                    "plan's budget, or a scheme's least budget meeting the std_error targets.")
    targets = pr.get("std_error_targets")
    if targets is None:
        return [t1, t2]
    rows3 = [[r["name"], r.get("target"), float(r["std_error"]), None if "met" not in r else ("yes" if r["met"] else "NO")]
             for r in targets["attributes"]]
    t3 = Table(f"Standard error targets at n = {plan['spec']['users']} (per item, f = 0, from the grid numbers)",
               ["attribute", "target", "std error", "met"], rows3,
               note="met: std error <= target (variance within a 2^-40 relative allowance); with a given epsilon a "
                    "missed target is stated, not refused.")
    return [t1, t2, t3]

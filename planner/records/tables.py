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
        certificate's gap).
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
    rows2 = [main] + [[b["name"], float(b["predicted"]["weighted_variance_times_n"]["value"]), None]
                      for b in plan["baselines"]]
    t2 = Table("Predicted weighted variance (sum_j w_j n Var, per item at f = 0)",
               ["scheme", "weighted n Var", "certificate gap"], rows2,
               note=f"certificate: {cert['kind']} (lower bound {float(cert['lower_bound']):.12g}).")
    return [t1, t2]

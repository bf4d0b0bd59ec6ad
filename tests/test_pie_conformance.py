"""PIE: RR and GLH (Murakami and Takahashi, PETS 2021): conformance declarations and predicted-vs-simulated tests.

The family's conformance module. The cross-family tests read it by its name (``_family_helpers.conformance``; the
contract is in that module's docstring): ``AGGREGATE_SPECS`` (``test_aggregate_integrity.py``),
``interval_specs`` (``test_confidence_intervals.py``), ``exact_claims``
(``test_plan_gate.py``), ``epsilon_spec`` and ``EPSILON_FIELD`` (``test_cli_polish.py``) and
``PREDICTED_VS_SIMULATED`` (``test_predicted_vs_simulated.py``).

Predicted vs simulated: eq. 22/23, the expected l2 loss (affine in the data).
"""
from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest

from _family_helpers import LOWER, check_prediction
from ldpplan import mechanisms, planner

#: One small spec per plan mechanism (``test_aggregate_integrity.py``).
AGGREGATE_SPECS = {
    "rr": {"mechanism": "rr", "domain_size": 6, "n": 1000, "target": {"bayes_error": 0.5}},
    "glh": {"mechanism": "glh", "domain_size": 50, "n": 1000, "target": {"bayes_error": 0.5}, "g_max": 100},
}


def interval_specs(n: int) -> dict[str, dict]:
    """A plan per plan mechanism for ``n`` users at epsilon = 1."""
    return {"rr": {"mechanism": "rr", "domain": 6, "users": n, "target": {"epsilon": 1.0}},
            "glh": {"mechanism": "glh", "domain": 6, "users": n, "target": {"epsilon": 1.0}}}


def exact_claims(plan) -> dict[tuple, Decimal]:
    """epsilon, alpha (bits, nats) and the Bayes error lower bound, exactly (``planner/pie/_exact.py``)."""
    from ldpplan.planner.pie._exact import exact_guarantee

    p, g = plan["params"], plan["guarantee"]
    symbols = p.get("g", p["domain_size"])
    ex = exact_guarantee(p["mu"], symbols, p["domain_size"], g["n"], g["releases"], g["max_prior"])
    return {("epsilon",): ex["epsilon"], ("alpha_bits",): ex["alpha_bits"], ("alpha_nats",): ex["alpha_nats"],
            (LOWER, "bayes_error_lower_bound"): -ex["bayes"]}


#: The spec field of :func:`epsilon_spec`'s epsilon (``test_cli_polish.py``: one epsilon range in every family).
EPSILON_FIELD = "target.epsilon"


def epsilon_spec(epsilon) -> dict:
    """A spec whose target epsilon is ``epsilon``."""
    return {"mechanism": "rr", "domain": 10, "users": 100, "target": {"epsilon": epsilon}}


# ------------------------------------------------------------------ predicted vs simulated
@pytest.mark.parametrize("mechanism", ["rr", "glh"])
def test_pie_l2_loss_total(mechanism):
    base = planner.example_spec("pie-gss")
    spec = base | ({"mechanism": mechanism} if mechanism == "rr" else {"g_max": 256})
    plan = planner.make_plan(spec)
    assert plan["mechanism"] == mechanism
    mech = mechanisms.load(plan)
    size, n = plan["domain"]["size"], 5000
    rng0 = np.random.default_rng(30)
    data = rng0.choice(size, size=n, p=rng0.dirichlet(np.ones(size)))
    p = np.bincount(data, minlength=size) / n
    losses = []
    for child in np.random.SeedSequence(31).spawn(60):
        est = mech.estimate(mech.perturb(data, np.random.default_rng(child)), "empirical").frequency
        losses.append(float(np.sum((est - p) ** 2)))
    # eq. 22/23 are affine in p: the prediction at the plan's n holds for any p; rescale to n users
    total = plan["predicted"]["l2_loss_total"]["value"] * plan["spec"]["users"] / n
    check_prediction(f"PIE {mechanism} l2_loss_total", total, losses)


PREDICTED_VS_SIMULATED = test_pie_l2_loss_total


#: Examples whose audit at default trials takes seconds: 3 seeded runs in tests/test_audit_search.py
#: (plus the exact false-flag probability over 20 runs); 20 of 20 measured in docs/AUDIT.md.
EXPENSIVE_AUDITS = ("pie-glh", "pie-gss")

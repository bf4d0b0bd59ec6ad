"""The longitudinal (memoized) family, L-GRR to L-SOUE: conformance declarations and predicted-vs-simulated tests.

The family's conformance module. The cross-family tests read it by its name (``_family_helpers.conformance``; the
contract is in that module's docstring): ``AGGREGATE_SPECS`` (``test_aggregate_integrity.py``),
``interval_specs`` (``test_confidence_intervals.py``), ``exact_claims``
(``test_plan_gate.py``), ``epsilon_spec`` and ``EPSILON_FIELD`` (``test_cli_polish.py``) and
``PREDICTED_VS_SIMULATED`` (``test_predicted_vs_simulated.py``).

Predicted vs simulated: the exact per-round total MSE (fresh populations, fresh memos).
"""
from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest

from _family_helpers import check_prediction
from ldpplan import mechanisms, planner
from ldpplan.planner._exact import log_exact

_PLAN_MECHANISMS = ("l-grr", "l-sue", "l-oue", "l-osue", "l-soue")
#: One small spec per plan mechanism (``test_aggregate_integrity.py``).
AGGREGATE_SPECS = {m: {"mechanism": m, "domain": 6, "users": 1000, "epsilon_perm": 3.0, "epsilon_1": 1.0, "rounds": 4}
                   for m in _PLAN_MECHANISMS}


def interval_specs(n: int) -> dict[str, dict]:
    """A plan per plan mechanism for ``n`` users."""
    return {m: {"mechanism": m, "domain": 6, "users": n, "epsilon_perm": 3.0, "epsilon_1": 1.0, "rounds": 4}
            for m in _PLAN_MECHANISMS}


def exact_claims(plan) -> dict[tuple, Decimal]:
    """epsilon = epsilon_1 (one report) and epsilon_perm (the memoized response), from the exact ratios."""
    from ldpplan.planner.longitudinal.claims import exact_ratios

    r = exact_ratios(plan["mechanism"], plan["params"])
    one = log_exact(r["one"])
    return {("epsilon",): one, ("epsilon_1",): one, ("epsilon_perm",): log_exact(r["perm"])}


#: The spec field of :func:`epsilon_spec`'s epsilon (``test_cli_polish.py``: one epsilon range in every family).
EPSILON_FIELD = "epsilon_perm"


def epsilon_spec(epsilon) -> dict:
    """A spec whose permanent-response epsilon is ``epsilon`` (one report: half of it), L-OUE."""
    number = isinstance(epsilon, (int, float)) and not isinstance(epsilon, bool)
    return {"mechanism": "l-oue", "domain": 6, "users": 1000, "epsilon_perm": epsilon,
            "epsilon_1": epsilon / 2 if number else 0.5, "rounds": 4}


# ------------------------------------------------------------------ predicted vs simulated
@pytest.mark.parametrize("example", ["longitudinal-daily", "longitudinal-rappor"])
def test_longitudinal_mse_total_per_round(example):
    # each trial: a fresh population (fresh memo) reports one round; the prediction is the exact
    # per-round variance summed over the values, rescaled from the plan's users to n
    plan = planner.make_plan(planner.example_spec(example))
    mech = mechanisms.load(plan)
    size, n = plan["domain"]["size"], 2000
    rng0 = np.random.default_rng(40)
    data = rng0.choice(size, size=n, p=rng0.dirichlet(np.ones(size)))
    p = np.bincount(data, minlength=size) / n
    losses = []
    for t, child in enumerate(np.random.SeedSequence(41).spawn(300)):
        reports = mech.perturb(data, rng=np.random.default_rng(child), memo=mech.new_memo(), users=np.arange(n),
                               round=t % plan["guarantee"]["rounds"])
        losses.append(float(np.sum((mech.estimate(reports).frequency - p) ** 2)))
    total = plan["predicted"]["mse_total_per_round"]["value"] * plan["spec"]["users"] / n
    check_prediction(f"{example} mse_total_per_round", total, losses)


PREDICTED_VS_SIMULATED = test_longitudinal_mse_total_per_round


#: Examples whose audit at default trials takes seconds: 3 seeded runs in tests/test_audit_search.py
#: (plus the exact false-flag probability over 20 runs); 20 of 20 measured in docs/AUDIT.md.
EXPENSIVE_AUDITS = ("longitudinal-daily", "longitudinal-rappor")

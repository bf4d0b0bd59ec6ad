"""Hadamard response (Acharya, Sun and Zhang, AISTATS 2019): conformance declarations and predicted-vs-simulated tests.

The family's conformance module. The cross-family tests read it by its name (``_family_helpers.conformance``; the
contract is in that module's docstring): ``AGGREGATE_SPECS`` (``test_aggregate_integrity.py``),
``interval_specs`` (``test_confidence_intervals.py``), ``exact_claims``
(``test_plan_gate.py``), ``epsilon_spec`` and ``EPSILON_FIELD`` (``test_cli_polish.py``) and
``PREDICTED_VS_SIMULATED`` (``test_predicted_vs_simulated.py``).

Predicted vs simulated: the exact total l2 error (any distribution).
"""
from __future__ import annotations

from decimal import Decimal

import numpy as np

from _family_helpers import check_prediction
from ldpplan import mechanisms, planner

#: One small spec per plan mechanism (``test_aggregate_integrity.py``).
AGGREGATE_SPECS = {"hr": {"mechanism": "hr", "epsilon": 1.0, "domain": 10}}


def interval_specs(n: int) -> dict[str, dict]:
    """A plan per plan mechanism (``n`` unused)."""
    return {"hr": {"mechanism": "hr", "epsilon": 1.0, "domain": 6}}


def exact_claims(plan) -> dict[tuple, Decimal]:
    """epsilon from the exact keep probability and block count (``solvers.hadamard.exact_epsilon``)."""
    from ldpplan.solvers.hadamard import exact_epsilon

    return {("epsilon",): exact_epsilon(plan["params"]["keep_probability"], plan["params"]["blocks"])}


#: The spec field of :func:`epsilon_spec`'s epsilon (``test_cli_polish.py``: one epsilon range in every family).
EPSILON_FIELD = "epsilon"


def epsilon_spec(epsilon) -> dict:
    """A spec whose epsilon is ``epsilon``."""
    return {"mechanism": "hr", "epsilon": epsilon, "domain": 10}


# ------------------------------------------------------------------ predicted vs simulated
def test_hadamard_l2_total():
    # the exact total l2 error holds for every distribution (sum_x f(x) = 1): a Dirichlet draw
    plan = planner.make_plan(planner.example_spec("hadamard-gss"))
    mech = mechanisms.load(plan)
    size, n = plan["domain"]["size"], 5000
    rng0 = np.random.default_rng(32)
    data = rng0.choice(size, size=n, p=rng0.dirichlet(np.ones(size)))
    p = np.bincount(data, minlength=size) / n
    losses = [float(np.sum((mech.estimate(mech.perturb(data, np.random.default_rng(child)), "empirical").frequency
                            - p) ** 2)) for child in np.random.SeedSequence(33).spawn(60)]
    check_prediction("Hadamard response l2_total", plan["predicted"]["l2_total_times_n"]["value"] / n, losses)


PREDICTED_VS_SIMULATED = test_hadamard_l2_total


#: Examples whose audit at default trials takes seconds: 3 seeded runs in tests/test_audit_search.py
#: (plus the exact false-flag probability over 20 runs); 20 of 20 measured in docs/AUDIT.md.
EXPENSIVE_AUDITS = ("hadamard-synthetic",)

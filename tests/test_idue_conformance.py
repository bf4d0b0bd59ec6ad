"""IDUE and IDUE-PS (Murakami and Kawamoto; Zhao et al.): conformance declarations and predicted-vs-simulated tests.

The family's conformance module. The cross-family tests read it by its name (``_family_helpers.conformance``; the
contract is in that module's docstring): ``AGGREGATE_SPECS`` (``test_aggregate_integrity.py``),
``interval_specs`` and ``interval_inputs`` (``test_confidence_intervals.py``), ``exact_claims``
(``test_plan_gate.py``), ``epsilon_spec`` and ``EPSILON_FIELD`` (``test_cli_polish.py``) and
``PREDICTED_VS_SIMULATED`` (``test_predicted_vs_simulated.py``).

Predicted vs simulated: eq. (9) (and its IDUE-PS form with the sampling variance) at the worst-case items.
"""
from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from _family_helpers import check_prediction
from ldpplan import mechanisms, planner
from ldpplan.planner._exact import log_exact

_LEVELS = [{"name": "low", "epsilon": 1.0, "share": 0.25}, {"name": "high", "epsilon": 2.0, "share": 0.75}]
#: One small spec per plan mechanism (``test_aggregate_integrity.py``).
AGGREGATE_SPECS = {
    "idue": {"mechanism": "idue", "model": "opt0", "notion": "minid", "domain": 12, "assignment_seed": 0,
             "levels": _LEVELS},
    "idue-ps": {"mechanism": "idue-ps", "model": "opt0", "notion": "minid", "domain": 12, "assignment_seed": 0,
                "padding_length": 2, "levels": _LEVELS},
}


def interval_specs(n: int) -> dict[str, dict]:
    """A plan per plan mechanism for the interval tests (the embedded examples; ``n`` unused)."""
    return {"idue": planner.example_spec("health"), "idue-ps": planner.example_spec("health-itemsets")}


def interval_inputs(mechanism: str, items, counts, n: int):
    """IDUE-PS users hold item sets: one item per user, so sets never exceed L and the estimator is unbiased."""
    if mechanism == "idue-ps":
        return (np.arange(n + 1), items), None
    return None


def exact_claims(plan) -> dict[tuple, Decimal]:
    """The MinID-LDP level claims, ``epsilon`` and Lemma 1's ``ldp_epsilon``, exactly (50-digit logs)."""
    from ldpplan.planner.idue.verify import exact_ldp_epsilon

    lv = plan["params"]["levels"]
    a, b, s = [x["a"] for x in lv], [x["b"] for x in lv], [x["size"] for x in lv]
    if plan["params"].get("dummy"):
        d = plan["params"]["dummy"]
        a, b, s = a + [d["a"]], b + [d["b"]], s + [plan["params"]["padding_length"]]
    u = [log_exact(Fraction(x) / Fraction(y)) for x, y in zip(a, b)]
    w = [log_exact((1 - Fraction(y)) / (1 - Fraction(x))) for x, y in zip(a, b)]
    assert plan["guarantee"]["notion"] == "MinID-LDP"  # the fast examples; AvgID couples the levels
    need = [max(u[i] + max(w), max(u) + w[i]) for i in range(len(u))]
    out = {("levels", x["name"]): need[i] for i, x in enumerate(lv)}
    out[("epsilon",)] = min(need[:len(lv)])
    out[("ldp_epsilon",)] = exact_ldp_epsilon(a, b, s)
    return out


#: The spec field of :func:`epsilon_spec`'s epsilon (``test_cli_polish.py``: one epsilon range in every family).
EPSILON_FIELD = "levels[0].epsilon"


def epsilon_spec(epsilon) -> dict:
    """A spec whose (first level's) epsilon is ``epsilon``."""
    return {"mechanism": "idue", "levels": [{"name": "a", "epsilon": epsilon, "items": 2},
                                            {"name": "b", "epsilon": 2.0, "items": 3}]}


# ------------------------------------------------------------------ predicted vs simulated
def _idue_worst_items(plan) -> list[int]:
    """Items (indices) where eq. (9) / its IDUE-PS form is attained: the L (or 1) items of largest coef_c."""
    mech = mechanisms.load(plan)
    L = plan["params"]["padding_length"] or 1
    coef = (1 - mech.a[: mech.m] - mech.b[: mech.m]) / (mech.a[: mech.m] - mech.b[: mech.m])
    return [int(k) for k in np.argsort(-coef, kind="stable")[:L]]


def _idue_trials(plan, n: int, trials: int, seed: int) -> list[float]:
    mech = mechanisms.load(plan)
    items = _idue_worst_items(plan)
    m = mech.m
    f = np.zeros(m)
    f[items] = 1.0  # every user holds the same worst-case item (set)
    out = []
    for child in np.random.SeedSequence(seed).spawn(trials):
        rng = np.random.default_rng(child)
        if plan["mechanism"] == "idue":
            agg = mech.simulate_counts(np.bincount(np.full(n, items[0]), minlength=m), n, rng)
        else:
            indptr = np.arange(0, n * len(items) + 1, len(items))
            sampled = mech.sample_items((indptr, np.tile(np.sort(items), n)), rng)
            agg = mech.simulate_counts(np.bincount(sampled, minlength=mech.width), n, rng)
        est = mech.estimate(agg, "empirical").frequency
        out.append(n * float(np.sum((est - f) ** 2)))  # counts^2 per user
    return out


@pytest.mark.parametrize("example", ["health", "health-itemsets", "three-levels-itemsets"])
def test_idue_worst_case_mse_per_user(example):
    plan = planner.make_plan(planner.example_spec(example))
    value = plan["predicted"]["worst_case_mse_per_user"]["value"]
    check_prediction(example, value, _idue_trials(plan, n=5000, trials=400, seed=10))


@pytest.mark.slow
def test_idue_ps_sampling_variance_is_part_of_the_prediction():
    """The old prediction L^2 eq. (9) (77.1 here, vs 82.0 with the sampling variance) is refuted by the simulation."""
    from ldpplan.solvers.idue import worst_case_mse as eq9

    plan = planner.make_plan(planner.example_spec("health-itemsets"))
    lv = plan["params"]["levels"]
    L = plan["params"]["padding_length"]
    old = L * L * eq9([x["a"] for x in lv], [x["b"] for x in lv], [x["size"] for x in lv])
    value = plan["predicted"]["worst_case_mse_per_user"]["value"]
    assert value - old == pytest.approx(4.92, abs=0.01)
    samples = np.array(_idue_trials(plan, n=2000, trials=6000, seed=11))
    se = samples.std(ddof=1) / math.sqrt(samples.size)
    assert samples.mean() - old > 4 * se
    check_prediction("health-itemsets (6000 trials)", value, samples)


PREDICTED_VS_SIMULATED = test_idue_worst_case_mse_per_user


#: Examples whose audit at default trials takes seconds: 3 seeded runs in tests/test_audit_search.py
#: (plus the exact false-flag probability over 20 runs); 20 of 20 measured in docs/AUDIT.md.
EXPENSIVE_AUDITS = ("health-itemsets", "three-levels-itemsets")

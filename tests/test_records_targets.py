"""Records with per-attribute std_error targets: the least record epsilon, met there, missed a step below.

Independent checks: scipy's brentq on Wang et al.'s variances written out here (not the solver's
coefficients), the std errors recomputed from the plan's grid numbers with the oracles' own
formulas, tampering refused by verify.
"""
from __future__ import annotations

import copy
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq

from ldpplan import mechanisms
from ldpplan.planner import api
from ldpplan.planner.errors import SpecError
from ldpplan.planner.records._targets import EPSILON_STEP
from ldpplan.planner.records.plan import build_plan
from ldpplan.planner.records.verify import verify
from ldpplan.solvers import _records_targets as least

USERS = 100000
ATTRIBUTES = [{"name": "a", "domain": 3, "std_error": 0.005}, {"name": "b", "domain": 16, "std_error": 0.01},
              {"name": "c", "domain": 105, "std_error": 0.02, "weight": 0.5}]


def _spec(mechanism="records", attributes=ATTRIBUTES, **extra):
    return {"mechanism": mechanism, "users": USERS, "attributes": copy.deepcopy(attributes), **extra}


def _oracle_variance(oracle, epsilon, k):
    """``n Var`` at f = 0, Wang et al. 2017 Eq. (2) (GRR, OUE)."""
    x = math.exp(epsilon)
    return (x + k - 2) / (x - 1) ** 2 if oracle == "grr" else 4 * x / (x - 1) ** 2


def _best(epsilon, k, fixed=None):
    return min(_oracle_variance(o, epsilon, k) for o in ((fixed,) if fixed else ("grr", "oue")))


def _rsfd_variance(epsilon, k, d):
    x = math.exp(epsilon)
    p, q = x / (x + k - 1), 1 / (x + k - 1)
    s = (q + (d - 1) / k) / d
    return d * d * s * (1 - s) / (p - q) ** 2


def _targets(attributes=ATTRIBUTES):
    return [USERS * a["std_error"] ** 2 for a in attributes]


def _exact_root(scheme, attributes=ATTRIBUTES):
    """The least budget by brentq on the written-out variances (SPL: per attribute, summed)."""
    ks, ts, d = [a["domain"] for a in attributes], _targets(attributes), len(attributes)
    if scheme == "spl":
        return sum(min(brentq(lambda e: _oracle_variance(o, e, k) - t, 1e-6, 100, xtol=1e-15, rtol=1e-15)
                       for o in ("grr", "oue")) for k, t in zip(ks, ts))
    if scheme == "smp":
        return brentq(lambda e: sum(_best(e, k) / t for k, t in zip(ks, ts)) - 1, 1e-6, 100, xtol=1e-15, rtol=1e-15)
    return max(brentq(lambda e: _rsfd_variance(e, k, d) - t, 1e-6, 100, xtol=1e-15, rtol=1e-15) for k, t in zip(ks, ts))


def _grid_std_errors(plan):
    """Each attribute's std error at f = 0 from the plan's grid numbers (and SMP's pi), written out."""
    p, out, d = plan["params"], [], len(plan["params"]["names"])
    for j, (o, x, k) in enumerate(zip(p["oracles"], p["numbers"], p["domain_sizes"])):
        mu, nu = (x, (1 - x) / (k - 1)) if o == "grr" else (0.5, x)
        if plan["mechanism"] == "rsfd":
            s = (nu + (d - 1) / k) / d
            var = d * d * s * (1 - s) / (mu - nu) ** 2
        else:
            var = nu * (1 - nu) / (mu - nu) ** 2 / (p["sampling"][j] if plan["mechanism"] == "smp" else 1.0)
        out.append(math.sqrt(var / USERS))
    return out


@pytest.mark.parametrize("scheme", ["spl", "smp", "rsfd"])
def test_least_epsilon_within_a_grid_step_of_the_exact_root(scheme):
    plan = build_plan(_spec(scheme))
    budget, root = plan["params"]["epsilon"], _exact_root(scheme)
    assert root - 1e-9 <= budget < root + EPSILON_STEP
    assert budget / EPSILON_STEP == int(budget / EPSILON_STEP)  # on the grid
    assert verify(plan).holds


@pytest.mark.parametrize("scheme", ["spl", "smp", "rsfd"])
def test_targets_met_at_the_budget_and_missed_one_step_below(scheme):
    plan = build_plan(_spec(scheme))
    budget = plan["params"]["epsilon"]
    std = _grid_std_errors(plan)
    rows = plan["predicted"]["std_error_targets"]["attributes"]
    for a, s, row in zip(ATTRIBUTES, std, rows):
        assert s <= a["std_error"] and row["met"] is True
        assert row["std_error"] == pytest.approx(s, rel=1e-9)
    below, ks, ts, d = budget - EPSILON_STEP, [a["domain"] for a in ATTRIBUTES], _targets(), len(ATTRIBUTES)
    if scheme == "spl":  # every epsilon_j at least its own root: the roots sum above the step below
        assert _exact_root("spl") > below
    elif scheme == "smp":  # the best pi at the step below misses: sum_j V_j / t_j > 1
        assert sum(_best(below, k) / t for k, t in zip(ks, ts)) > 1
    else:
        assert any(_rsfd_variance(below, k, d) > t for k, t in zip(ks, ts))
    assert float(plan["guarantee"]["epsilon"]) <= budget


def test_the_planner_picks_the_scheme_of_the_least_epsilon_and_records_the_others():
    plan = build_plan(_spec())
    roots = {s: _exact_root(s) for s in ("spl", "smp", "rsfd")}
    assert plan["mechanism"] == min(roots, key=roots.get)
    others = {b["name"].split()[0]: b["epsilon"] for b in plan["baselines"] if "epsilon" in b}
    assert set(others) == set(roots) - {plan["mechanism"]}
    for scheme, epsilon in others.items():
        assert roots[scheme] - 1e-9 <= epsilon < roots[scheme] + EPSILON_STEP


def test_spl_attribute_epsilon_inverts_the_variance():
    for k in (2, 3, 16, 105):
        for t in (0.5, 2.5, 40.0, 1e4):
            for oracle in ("grr", "oue"):
                e = least.spl_attribute_epsilon(t, k, oracle)
                assert _oracle_variance(oracle, e, k) == pytest.approx(t, rel=1e-10)


@pytest.mark.parametrize("change", ["epsilon up", "epsilon down", "met flag", "std error", "target in spec"])
def test_tampered_target_plans_are_refused(change):
    plan = api.make_plan(_spec())
    assert plan["verification"]["holds"]
    bad = copy.deepcopy(plan)
    if change == "epsilon up":
        bad["params"]["epsilon"] += EPSILON_STEP
    elif change == "epsilon down":
        bad["params"]["epsilon"] -= EPSILON_STEP
    elif change == "met flag":
        bad["spec"]["attributes"][0]["std_error"] = 0.001  # the plan's numbers no longer meet it
        assert not verify(bad).holds
        bad = copy.deepcopy(plan)
        bad["predicted"]["std_error_targets"]["attributes"][0]["met"] = False
    elif change == "std error":
        bad["predicted"]["std_error_targets"]["attributes"][1]["std_error"] *= 0.9
    else:
        bad["spec"]["attributes"][2]["std_error"] = 0.019
    assert not verify(bad).holds


def test_given_epsilon_states_each_target_met_or_missed():
    attributes = copy.deepcopy(ATTRIBUTES)
    del attributes[2]["std_error"]
    plan = api.make_plan(_spec(attributes=attributes, epsilon=1.0))
    assert plan["verification"]["holds"] and plan["params"]["epsilon"] == 1.0
    rows = plan["predicted"]["std_error_targets"]["attributes"]
    std = _grid_std_errors(plan)
    for a, s, row in zip(attributes, std, rows):
        assert row["std_error"] == pytest.approx(s, rel=1e-9)
        if "std_error" in a:
            assert row["met"] is (s <= a["std_error"])
        else:
            assert "met" not in row
    assert [r.get("met") for r in rows] == [False, True, None]  # a's 0.005 is out of reach at epsilon 1
    lied = copy.deepcopy(plan)
    lied["predicted"]["std_error_targets"]["attributes"][0]["met"] = True
    assert not verify(lied).holds


def test_target_plans_load_and_bad_target_specs_are_refused():
    plan = api.make_plan(_spec())
    mech = mechanisms.load(plan)
    assert mech.privacy_map()["epsilon"] <= plan["params"]["epsilon"]
    partial = copy.deepcopy(ATTRIBUTES)
    del partial[1]["std_error"]
    with pytest.raises(SpecError, match="epsilon"):
        build_plan(_spec(attributes=partial))
    with pytest.raises(SpecError, match="users"):
        build_plan({"mechanism": "records", "epsilon": 1.0, "attributes": ATTRIBUTES})
    tiny = [{"name": n, "domain": 50, "std_error": 1e-3} for n in "abcde"]  # RS+FD's floor is above it
    with pytest.raises(SpecError, match="std_error"):
        build_plan(_spec("rsfd", attributes=tiny))
    assert "rsfd" not in build_plan(_spec(attributes=tiny))["solver"]["comparison"]


def test_load_refuses_a_target_plans_budget_off_its_grid():
    plan = api.make_plan(_spec())
    for delta in (2.0 ** -30, -(2.0 ** -30)):
        bad = copy.deepcopy(plan)
        bad["params"]["epsilon"] += delta
        with pytest.raises(mechanisms.PlanError, match="params.epsilon"):
            mechanisms.load(bad)
        assert not verify(bad).holds


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(2, 120), st.floats(0.002, 0.2)), min_size=1, max_size=4),
       st.sampled_from(["spl", "smp"]))
def test_any_targets_are_met_within_a_step_of_the_least_epsilon(attributes, scheme):
    attrs = [{"name": f"x{j}", "domain": k, "std_error": s} for j, (k, s) in enumerate(attributes)]
    plan = build_plan(_spec(scheme, attributes=attrs))
    budget, root = plan["params"]["epsilon"], _exact_root(scheme, attrs)
    assert root - 1e-9 <= budget < root + EPSILON_STEP
    assert all(s <= a["std_error"] for s, a in zip(_grid_std_errors(plan), attrs))
    assert verify(plan).holds


def test_fixed_oracles_and_a_budget_at_the_first_grid_step():
    attrs = [{"name": "a", "domain": 40, "std_error": 0.01, "oracle": "grr"}, {"name": "b", "domain": 4, "std_error": 0.01}]
    plan = build_plan(_spec(attributes=attrs))
    assert plan["params"]["oracles"][0] == "grr" and "rsfd" in plan["solver"]["comparison"]
    with_oue = copy.deepcopy(attrs)
    with_oue[1]["oracle"] = "oue"
    assert "rsfd" not in build_plan(_spec(attributes=with_oue))["solver"]["comparison"]  # RS+FD runs GRR only
    loose = {"mechanism": "records", "users": 10**15,
             "attributes": [{"name": "a", "domain": 3, "std_error": 1.0}, {"name": "b", "domain": 5, "std_error": 1.0}]}
    plan = api.make_plan(loose)  # the least epsilon is below one grid step: the plan is at the first step
    assert plan["params"]["epsilon"] == EPSILON_STEP and plan["verification"]["holds"]


def test_targets_beside_an_epsilon_change_no_number_of_the_plan():
    with_targets = api.make_plan(_spec(epsilon=2.0))
    plain = [{k: v for k, v in a.items() if k != "std_error"} for a in ATTRIBUTES]
    without = api.make_plan(_spec(attributes=plain, epsilon=2.0))
    assert with_targets["params"] == without["params"] and with_targets["guarantee"] == without["guarantee"]
    assert "std_error_targets" not in without["predicted"]
    assert [r["met"] for r in with_targets["predicted"]["std_error_targets"]["attributes"]] == [True, True, True]

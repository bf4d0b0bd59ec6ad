"""PCKV planner: spec -> plan 2.0 -> verify (exact and against the spec), tampering, the epsilon sweep."""
import copy
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from ldpplan import mechanisms
from ldpplan.mechanisms import PlanError
from ldpplan.mechanisms.pckv import to_grid
from ldpplan.planner import api
from ldpplan.planner._exact import ratio_within
from ldpplan.planner._plan_format import validate_plan
from ldpplan.planner.errors import PlanFormatError, PrivacyViolation, SpecError
from ldpplan.planner.pckv import FAMILY
from ldpplan.planner.pckv._allocation import composed_ratio_exact


ISSUE_SPEC = {"mechanism": "pckv-ue", "epsilon": 1.0, "keys": 100, "padding_length": 1, "allocation": "optimized"}
GRID = 2.0 ** -48


@pytest.mark.parametrize("mechanism", ["pckv-ue", "pckv-grr", "pckv"])
@pytest.mark.parametrize("allocation", ["optimized", "numeric", "naive", "tight"])
def test_issue_spec_plans_and_verifies(mechanism, allocation):
    plan = api.make_plan({**ISSUE_SPEC, "mechanism": mechanism, "allocation": allocation})
    validate_plan(plan)
    assert plan["format_version"] == "2.0" and plan["mechanism"] in ("pckv-ue", "pckv-grr")
    assert plan["domain"] == {"size": 100, "labels": None}
    pr = plan["params"]
    assert {"a", "b", "p", "epsilon1", "epsilon2", "padding_length", "domain_size"} <= set(pr)
    assert pr["domain_size"] == 100 and pr["padding_length"] == 1
    g = plan["guarantee"]
    assert g["notion"] == "LDP" and set(g) >= {"epsilon", "epsilon1", "epsilon2"}
    if allocation == "naive":
        assert g["epsilon"] < 1.0
    else:
        assert 1.0 - 1e-6 <= g["epsilon"] <= 1.0
    for k in ("mse_frequency", "mse_mean", "mse_mean_theorem4"):
        assert plan["predicted"][k]["value"] > 0 and "^2" in plan["predicted"][k]["unit"]
    for k in ("mse_frequency", "mse_mean_theorem4"):
        assert "Theorem 4" in plan["predicted"][k]["source"]
    # issue 27 point 8: the headline names the estimator it predicts (the runtime's default)
    assert "Algorithm 4" in plan["predicted"]["mse_mean"]["source"] and "Algorithm 4" in plan["predicted"]["mse_mean"]["estimator"]
    assert plan["planning_inputs"] == []
    assert api.verify_plan(plan).holds and plan["verification"]["holds"] is True
    roles = [b["role"] for b in plan["baselines"]]
    assert roles.count("plan") == 1
    if mechanism == "pckv":
        assert plan["mechanism"] == "pckv-ue"   # d=100, L=1: UE wins (Sec. 5.4)
        assert roles.count("candidate") == 1
        assert "Theorem 4" in plan["solver"]["mechanism_choice"]["reason"]
    if allocation == "numeric":
        assert plan["solver"]["numeric"]["gain_over_closed_form"] >= 0
    mech = mechanisms.load(plan)
    est = mech.estimate(mech.perturb([([1], [0.5])] * 50, rng=np.random.default_rng(0)))
    assert est.frequency.shape == (100,) and est.mean.shape == (100,) and est.method == "corrected"


def test_optimized_plan_numbers_match_lemma2():
    plan = api.make_plan(ISSUE_SPEC)
    pr = plan["params"]
    assert pr["a"] == 0.5
    assert pr["b"] == pytest.approx(2 / (math.e + 3), rel=1e-9)          # eq. (19)-(20)
    assert pr["p"] == pytest.approx(math.e / (math.e + 1), rel=1e-9)
    assert pr["epsilon2"] == pytest.approx(1.0, rel=1e-9)
    assert pr["epsilon1"] == pytest.approx(math.log((math.e + 1) / 2), rel=1e-9)
    # eq. (16) with OUE key perturbation: g = 4b/(2p-1)^2, h = 4b(1-b)/(1-2b)^2
    b, p = pr["b"], pr["p"]
    assert plan["predicted"]["g"]["value"] == pytest.approx(4 * b / (2 * p - 1) ** 2, rel=1e-12)
    assert plan["predicted"]["h"]["value"] == pytest.approx(4 * b * (1 - b) / (1 - 2 * b) ** 2, rel=1e-12)


def test_optimized_grr_plan_matches_lemma3_eq23():
    eps, d, L = 2.0, 20, 3
    plan = api.make_plan({"mechanism": "pckv-grr", "epsilon": eps, "domain": d, "padding_length": L})
    E, dp = math.exp(eps), d + L
    pr = plan["params"]
    assert pr["a"] == pytest.approx((L * (E - 1) + 2) / (L * (E - 1) + 2 * dp), rel=1e-9)
    assert pr["p"] == pytest.approx((L * (E - 1) + 1) / (L * (E - 1) + 2), rel=1e-9)
    assert pr["b"] == (1 - pr["a"]) / (dp - 1)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["pckv-ue", "pckv-grr"]), st.floats(0.05, 12), st.integers(2, 5000), st.integers(1, 40),
       st.sampled_from(["optimized", "naive", "tight"]))
@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
def test_composed_epsilon_never_exceeds_target(mech, eps, d, L, allocation):
    plan = api.make_plan({"mechanism": mech, "epsilon": eps, "domain": d, "padding_length": L, "allocation": allocation})
    ratio = composed_ratio_exact(mech, *(plan["params"][k] for k in ("a", "b", "p")), d, L)
    assert ratio_within(ratio, eps) and ratio_within(ratio, plan["guarantee"]["epsilon"])
    assert plan["guarantee"]["epsilon"] <= eps
    assert plan["verification"]["holds"]


SWEEP = [1e-3, 0.7, 3.0, 12.0, 20.0]


@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
@pytest.mark.parametrize("mechanism", ["pckv-ue", "pckv-grr"])
@pytest.mark.parametrize("allocation", ["optimized", "numeric", "naive", "tight"])
def test_epsilon_sweep_plans_verify_or_spec_error(mechanism, allocation):
    """Issue #9: the whole practical range (GRR eps = 12, d = 3, L = 3, numeric was refused by its own planner)."""
    for eps in SWEEP:
        for d, L in (((3, 3),) if allocation == "numeric" else ((3, 3), (50, 1))):
            spec = {"mechanism": mechanism, "epsilon": eps, "domain": d, "padding_length": L, "allocation": allocation}
            try:
                plan = api.make_plan(spec)
            except SpecError as exc:      # allowed, with a reason
                assert exc.field and exc.rule
                continue
            assert FAMILY.verify(plan).holds
            assert plan["guarantee"]["epsilon"] <= eps
            assert mechanisms.load(plan).privacy_map()["epsilon"] <= eps * (1 + 1e-9)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["pckv-ue", "pckv-grr"]), st.sampled_from(["optimized", "numeric", "naive", "tight"]),
       st.floats(1e-3, 20.0), st.integers(2, 2000), st.integers(1, 300))
def test_epsilon_sweep_property(mechanism, allocation, eps, d, L):
    spec = {"mechanism": mechanism, "epsilon": eps, "domain": d, "padding_length": L, "allocation": allocation}
    try:
        plan = api.make_plan(spec)
    except SpecError:
        return
    assert api.verify_plan(plan).holds
    mechanisms.load(plan)


def test_grid_repair_when_rounding_overshoots(monkeypatch):
    """Without the safety margin, rounding a, p of PCKV-GRR at eps = 12 overshoots: the budget is lowered and re-solved."""
    from ldpplan.planner.pckv import _allocation as allocation

    monkeypatch.setattr(allocation, "shrink", lambda e: e)
    alloc = allocation.solve_on_grid("pckv-grr", 12.0, "optimized", 3, 3)
    assert alloc.repairs >= 1 and alloc.aimed_epsilon < 12.0
    assert alloc.budgets["epsilon"] <= 12.0 and alloc.budgets["epsilon"] > 12.0 - 1e-9
    q = alloc.params
    assert ratio_within(composed_ratio_exact("pckv-grr", q["a"], q["b"], q["p"], 3, 3), 12.0)


def _grr_plan():
    return api.make_plan({**ISSUE_SPEC, "mechanism": "pckv-grr", "padding_length": 3})


def _refused(plan, match=None):
    """A tampered plan fails verify AND the runtime refuses it."""
    res = api.verify_plan(plan)
    assert not res.holds, res.message
    if match:
        assert match in res.message
    with pytest.raises(PlanError):
        mechanisms.load(plan)
    return res


@pytest.mark.parametrize("field,step", [("a", +1), ("p", +1)])
def test_one_grid_step_toward_less_privacy_fails_verify_and_load(field, step):
    plan = _grr_plan()
    bad = copy.deepcopy(plan)
    bad["params"][field] = plan["params"][field] + step * GRID
    if field == "a":
        bad["params"]["b"] = (1 - bad["params"]["a"]) / (100 + 3 - 1)
    _refused(bad)


def test_one_grid_step_of_b_toward_less_privacy_fails_verify_and_load():
    plan = api.make_plan(ISSUE_SPEC)
    bad = copy.deepcopy(plan)
    bad["params"]["b"] = plan["params"]["b"] - GRID
    _refused(bad)


def test_padding_length_lowered_fails_verify_and_load():
    plan = _grr_plan()
    bad = copy.deepcopy(plan)
    bad["params"]["padding_length"] = 1                 # less amplification than claimed
    bad["params"]["b"] = (1 - bad["params"]["a"]) / (100 + 1 - 1)
    _refused(bad)
    ue = api.make_plan({**ISSUE_SPEC, "padding_length": 4})
    bad = copy.deepcopy(ue)
    bad["params"]["padding_length"] = 2
    _refused(bad, "padding_length")


def test_claims_are_recomputed():
    plan = _grr_plan()
    for where, key in (("guarantee", "epsilon"), ("guarantee", "epsilon2"), ("params", "epsilon1")):
        bad = copy.deepcopy(plan)
        bad[where][key] = plan[where][key] * 0.9
        _refused(bad, f"{where}.{key}")
    bad = copy.deepcopy(plan)
    bad["guarantee"]["epsilon"] = plan["guarantee"]["epsilon"] * 1.01   # over-claim: not what the numbers give
    assert not api.verify_plan(bad).holds


def test_off_grid_and_nan_and_unverified_are_refused():
    plan = _grr_plan()
    bad = copy.deepcopy(plan)
    bad["params"]["a"] = plan["params"]["a"] * (1 + 1e-10)
    bad["params"]["b"] = (1 - bad["params"]["a"]) / 102
    _refused(bad, "2^-48")
    bad = copy.deepcopy(plan)
    bad["params"]["p"] = float("nan")
    with pytest.raises(PlanFormatError):
        api.verify_plan(bad)
    with pytest.raises(PlanError):
        mechanisms.load(bad)
    bad = copy.deepcopy(plan)
    bad["predicted"]["mse_mean"]["value"] = float("inf")
    with pytest.raises(PlanFormatError):
        api.verify_plan(bad)
    bad = copy.deepcopy(plan)
    bad["verification"]["holds"] = False
    with pytest.raises(PlanError, match="verification.holds"):
        mechanisms.load(bad)
    bad = copy.deepcopy(plan)
    del bad["params"]["b"]
    with pytest.raises(PlanFormatError):
        api.verify_plan(bad)


@pytest.mark.parametrize("change,field", [
    ({"epsilon": 0.9}, "spec.epsilon"),
    ({"epsilon": 1.5}, "params.a"),
    ({"allocation": "naive"}, "allocation"),
    ({"padding_length": 2}, "padding_length"),
    ({"keys": 99}, "domain_size"),
    ({"mechanism": "pckv-ue"}, "mechanism"),
    ({"values": "clip"}, "params.values"),
    ({"users": 5}, "users"),
    ({"prior_means": [0.0] * 100}, "predicted"),
])
def test_plan_must_match_its_spec(change, field):
    plan = _grr_plan()
    bad = copy.deepcopy(plan)
    bad["spec"].update(change)
    res = api.verify_plan(bad)
    assert not res.holds and field in res.message, res.message


def test_mechanism_choice_is_rechecked():
    plan = api.make_plan({**ISSUE_SPEC, "mechanism": "pckv"})
    bad = copy.deepcopy(plan)
    for b in bad["baselines"]:
        if b["role"] == "candidate":
            b["objective"] = 1e-9                          # pretend GRR predicted better
    res = api.verify_plan(bad)
    assert not res.holds and "objective" in res.message


@pytest.mark.parametrize("raw,field", [
    ({**ISSUE_SPEC, "epsilon": 0}, "epsilon"),
    ({**ISSUE_SPEC, "epsilon": 20.5}, "epsilon"),
    ({**ISSUE_SPEC, "epsilon": float("nan")}, "epsilon"),
    ({**ISSUE_SPEC, "padding_length": "auto"}, "padding_length"),
    ({**ISSUE_SPEC, "keys": ["x", "x"]}, "keys"),
    ({**ISSUE_SPEC, "allocation": "best"}, "allocation"),
    ({**ISSUE_SPEC, "keys": "data"}, "keys"),
    ({**ISSUE_SPEC, "prior_means": [0.5]}, "prior_means"),
    ({**ISSUE_SPEC, "unknown": 1}, "unknown"),
    ({**ISSUE_SPEC, "domain": 10}, "<spec>"),
    ({k: v for k, v in ISSUE_SPEC.items() if k != "keys"}, "<spec>"),
])
def test_spec_errors_name_the_field(raw, field):
    with pytest.raises(SpecError) as exc:
        api.make_plan(raw)
    assert exc.value.field == field


def test_description_and_domain_and_users_are_common_keys():
    spec = {"mechanism": "pckv-grr", "epsilon": 2.0, "domain": ["a", "b", "c"], "users": 5000,
            "description": "three keys", "padding_length": 2}
    plan = api.make_plan(spec)
    assert plan["domain"]["labels"] == ["a", "b", "c"] and plan["params"]["domain_size"] == 3
    assert plan["predicted"]["mse_frequency"]["users"] == 5000
    old = api.make_plan({**{k: v for k, v in spec.items() if k != "domain"}, "keys": ["a", "b", "c"]})
    assert old["params"]["a"] == plan["params"]["a"]


def test_auto_padding_from_set_size_distribution_and_labels():
    spec = {"mechanism": "pckv", "epsilon": 2.0, "keys": [f"item{i}" for i in range(20)], "padding_length": "auto",
            "set_size_distribution": {"1": 0.2, "2": 0.3, "3": 0.3, "6": 0.2}, "users": 100_000, "max_padding_length": 10}
    plan = api.make_plan(spec)
    sel = plan["solver"]["padding_length_selection"]
    best = min(sel["candidates"], key=lambda r: r["objective"])
    assert sel["chosen"] == best["padding_length"] == plan["params"]["padding_length"]
    assert plan["domain"]["labels"][3] == "item3"
    assert plan["planning_inputs"] == []                # the distribution came from the spec, no file read
    assert plan["predicted"]["users_truncated_fraction"]["value"] == pytest.approx(
        sum(w for s, w in {1: 0.2, 2: 0.3, 3: 0.3, 6: 0.2}.items() if s > sel["chosen"]))
    assert any("L = \"auto\"" in t.title for t in api.summarize(plan))
    bad = copy.deepcopy(plan)
    bad["solver"]["padding_length_selection"]["chosen"] = sel["chosen"] + 1
    assert not api.verify_plan(bad).holds


def test_auto_padding_flags_a_choice_at_the_search_bound():
    spec = {"mechanism": "pckv", "epsilon": 2.0, "keys": 20, "padding_length": "auto",
            "set_size_distribution": {"1": 0.2, "2": 0.3, "3": 0.3, "6": 0.2}, "users": 100_000}
    capped = api.make_plan({**spec, "max_padding_length": 2})
    assert capped["solver"]["padding_length_selection"]["at_search_bound"] is True
    assert any("WARNING" in t.note for t in api.summarize(capped))
    free = api.make_plan({**spec, "max_padding_length": 10})
    assert free["solver"]["padding_length_selection"]["at_search_bound"] is (free["params"]["padding_length"] == 10)


def test_write_plan_refuses_a_failing_plan(tmp_path):
    plan = _grr_plan()
    plan["params"]["p"] = to_grid(plan["params"]["p"] + 1e-6, "down")
    with pytest.raises(PrivacyViolation):
        api.write_plan(plan, tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()

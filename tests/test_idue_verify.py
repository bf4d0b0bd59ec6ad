"""IDUE verification: exact re-check, NaN-proofing, tampering (verify AND load), plan vs spec, epsilon sweep."""
from __future__ import annotations

import copy
import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest

from ldpplan import mechanisms, planner
from ldpplan.mechanisms import PlanError
from ldpplan.planner._exact import log_exact
from ldpplan.planner.errors import PlanFormatError, SpecError
from ldpplan.planner.idue import FAMILY
from ldpplan.planner.idue.plan import baselines_of

STEP = 2.0**-48  # one step of the probability grid



@pytest.fixture()
def health():
    return planner.make_plan(copy.deepcopy(FAMILY.examples["health"]))


def three_level_plan():
    spec = {"mechanism": "idue", "levels": [{"name": "a", "epsilon": 1.0, "items": 2},
                                            {"name": "b", "epsilon": 2.0, "items": 2},
                                            {"name": "c", "epsilon": 3.0, "items": 2}]}
    return planner.make_plan(spec)


def set_epsilon(plan, j, value, spec=True):
    """Change level j's budget in params and guarantee (and in the embedded spec when ``spec``)."""
    out = copy.deepcopy(plan)
    name = out["params"]["levels"][j]["name"]
    out["params"]["levels"][j]["epsilon"] = value
    if spec:
        out["spec"]["levels"][j]["epsilon"] = value
    out["guarantee"]["levels"][name] = value
    e = [lv["epsilon"] for lv in out["params"]["levels"]]
    out["guarantee"]["epsilon"] = min(e)
    out["guarantee"]["ldp_epsilon_lemma1"] = float(min(max(e), 2 * min(e)))
    out["baselines"] = baselines_of(min(e), out["domain"]["size"], out["params"]["padding_length"])
    return out


def exact_need(plan, j) -> Decimal:
    """MinID: the smallest budget level j can claim, exactly: max(u_j + max w, max u + w_j)."""
    lv = plan["params"]["levels"]
    with localcontext() as ctx:
        ctx.prec = 60
        u = [log_exact(Fraction(x["a"]) / Fraction(x["b"])) for x in lv]
        w = [log_exact((1 - Fraction(x["b"])) / (1 - Fraction(x["a"]))) for x in lv]
        return max(u[j] + max(w), max(u) + w[j])


# ----------------------------------------------------------------------------- numbers
def test_verify_detects_violation_and_names_pair(health):
    bad = copy.deepcopy(health)
    bad["params"]["levels"][1]["a"] = round(0.9 * 2**48) / 2**48  # ln(a/b) grows: (other, *) breaks min(ln4, ln6)
    res = FAMILY.verify(bad)
    assert not res.holds
    assert "violated" in res.message and "other" in res.message and "params.levels" in res.message
    assert res.details["max_log_ratio_slack"] > 0


@pytest.mark.parametrize("field, delta", [("a", +STEP), ("b", -STEP)])
def test_one_grid_step_toward_less_privacy_fails_verify(health, field, delta):
    # a plan whose binding level (hiv) claims a budget between the exact need before and after the step
    before = exact_need(health, 0)
    stepped = copy.deepcopy(health)
    stepped["params"]["levels"][0][field] += delta
    after = exact_need(stepped, 0)
    assert after > before
    tight = set_epsilon(health, 0, float((before + after) / 2))
    res = FAMILY.verify(tight)
    assert res.holds, res.message
    assert res.details["min_slack_nats"] < 1e-14
    tampered = copy.deepcopy(tight)
    tampered["params"]["levels"][0][field] += delta
    res = FAMILY.verify(tampered)
    assert not res.holds and "(6) violated" in res.message


@pytest.mark.parametrize("field, delta", [("a", +STEP), ("b", -STEP)])
def test_one_grid_step_toward_less_privacy_fails_load(health, field, delta):
    # no tolerance: the smallest claim the runtime accepts is its float map rounded up (round_up),
    # and one grid step of a or b toward less privacy then needs more than that claim
    from ldpplan.mechanisms._plan import round_up

    need = mechanisms.load(health).privacy_map()["levels"]["hiv"]
    stepped = copy.deepcopy(health)
    stepped["params"]["levels"][0][field] += delta
    need_after = mechanisms.load(set_epsilon(stepped, 0, 2.0)).privacy_map()["levels"]["hiv"]
    assert need_after > round_up(need)
    claim = round_up(need)
    edge = set_epsilon(health, 0, claim)
    mechanisms.load(edge)
    tampered = copy.deepcopy(edge)
    tampered["params"]["levels"][0][field] += delta
    with pytest.raises(PlanError, match=r"params\.levels\[0\]\.epsilon: claims"):
        mechanisms.load(tampered)


def test_violation_by_13_nats_refused_by_load(health):
    bad = copy.deepcopy(health)
    bad["params"]["levels"][1]["a"] = 1 - 2.0**-40  # w = ln((1-b)/(1-a)) ~ 27 nats
    with pytest.raises(PlanError, match=r"params\.levels\[\d\]\.epsilon: claims"):
        mechanisms.load(bad)
    assert not FAMILY.verify(bad).holds


def test_claims_smaller_than_numbers_refused(health):
    for field, value in (("epsilon", 1.0), ("ldp_epsilon", 1.5)):
        bad = copy.deepcopy(health)
        bad["guarantee"][field] = value
        with pytest.raises(PlanError, match=f"guarantee.{field}"):
            mechanisms.load(bad)
        res = FAMILY.verify(bad)
        assert not res.holds and f"guarantee.{field}" in res.message


def test_nan_anywhere_is_refused():
    plan = three_level_plan()
    # a NaN level used to win np.argmin, and the exact re-check then skipped a violating pair
    bad = copy.deepcopy(plan)
    bad["params"]["levels"][2]["epsilon"] = float("nan")
    bad["params"]["levels"][0]["a"] = 0.875  # on the grid; levels (a, b) now violate (6)
    with pytest.raises(PlanFormatError, match=r"params\.levels\[2\]\.epsilon: must be a finite number"):
        FAMILY.verify(bad)
    with pytest.raises(PlanError, match=r"params\.levels\[2\]\.epsilon"):
        mechanisms.load(bad)
    for path in (("params", "levels", 1, "b"), ("guarantee", "ldp_epsilon"),
                 ("predicted", "worst_case_mse_per_user", "value")):
        bad = copy.deepcopy(plan)
        node = bad
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = float("nan")
        with pytest.raises(PlanFormatError, match="finite"):
            FAMILY.verify(bad)
        with pytest.raises(PlanError, match="finite"):
            mechanisms.load(bad)


def test_violation_found_among_many_levels():
    plan = three_level_plan()
    bad = copy.deepcopy(plan)
    b = bad["params"]["levels"][2]["b"]
    bad["params"]["levels"][2]["b"] = math.floor(b / 4 * 2**48) / 2**48  # on the grid; u of level c grows by ~ln 4
    res = FAMILY.verify(bad)
    assert not res.holds and "(c, " in res.message or "c" in res.details["worst_pair"]


# ----------------------------------------------------------------------------- plan vs spec
def test_moving_an_item_into_a_weaker_level_fails():
    bad = three_level_plan()
    lv = bad["params"]["levels"]
    lv[0]["items"], lv[0]["size"] = ["a-2"], 1
    lv[1]["items"], lv[1]["size"] = ["a-1", "b-1", "b-2"], 3
    res = FAMILY.verify(bad)  # the numbers still satisfy (6): only the spec catches it
    assert not res.holds and "item 'a-1' is in level 'b'" in res.message and "spec puts it in level 'a'" in res.message


@pytest.mark.parametrize("mutate, field", [
    (lambda p: set_epsilon(p, 1, 2.0, spec=False), "params.levels[1].epsilon"),  # raising a level's budget
    (lambda p: p["params"].update(model="opt1") or p, "params.model"),
    (lambda p: p["guarantee"].update(notion="AvgID-LDP") or p, "guarantee.notion"),
    (lambda p: p["predicted"]["worst_case_mse_per_user"].update(value=5.0) or p, "predicted.worst_case_mse_per_user"),
    (lambda p: p["baselines"][1]["params"].update(b=0.1) or p, "baselines[1].params"),
    (lambda p: p["guarantee"].update(ldp_epsilon=3.0) or p, "guarantee.ldp_epsilon"),
    (lambda p: p["guarantee"]["levels"].update(hiv=1.0) or p, "guarantee.levels"),
])
def test_plan_must_match_its_spec_and_derived_claims(health, mutate, field):
    res = FAMILY.verify(mutate(copy.deepcopy(health)))
    assert not res.holds and res.message.startswith(field), res.message


def test_size_and_padding_length_changes_fail():
    ps = planner.make_plan(copy.deepcopy(FAMILY.examples["three-levels-itemsets"]))
    assert FAMILY.verify(ps).holds
    bad = copy.deepcopy(ps)
    bad["params"]["padding_length"] = 3
    res = FAMILY.verify(bad)
    assert not res.holds and res.message.startswith("params.padding_length")
    bad = copy.deepcopy(ps)
    bad["params"]["levels"][0]["size"] += 1
    with pytest.raises(PlanFormatError, match="size"):
        FAMILY.verify(bad)
    bad = copy.deepcopy(ps)
    bad["params"]["dummy"]["epsilon"] = 4.0  # dummy items must use min(E)
    assert not FAMILY.verify(bad).holds


def test_spec_with_a_file_is_refused(health):
    bad = copy.deepcopy(health)
    bad["spec"]["item_levels_csv"] = "map.csv"
    with pytest.raises(PlanFormatError, match="spec.item_levels_csv"):
        FAMILY.verify(bad)


# ----------------------------------------------------------------------------- epsilon sweep
SWEEP = sorted({1e-6, 100.0, *[float(x) for x in np.logspace(-6, 2, 5)]})


@pytest.mark.parametrize("model", ["opt0", "opt1", "opt2"])
@pytest.mark.parametrize("mechanism", ["idue", "idue-ps"])
def test_every_budget_from_1e_minus_6_to_100_plans_or_says_why(model, mechanism):
    for eps in SWEEP:
        spec = {"mechanism": mechanism, "model": model,
                "levels": [{"name": "strong", "epsilon": eps, "items": 2},
                           {"name": "weak", "epsilon": min(2.5 * eps, 100.0), "items": 3}]}  # every level <= 100
        if mechanism == "idue-ps":
            spec["padding_length"] = 2
        try:
            plan = planner.make_plan(spec)
        except SpecError as exc:  # the only other allowed outcome: a reason, exit 2
            assert exc.rule, eps
            continue
        assert FAMILY.verify(plan).holds, eps
        mech = mechanisms.load(plan)
        assert np.all(mech.b < mech.a)
    # avgid too, at the ends
    for eps in (1e-6, 100.0):
        plan = planner.make_plan({"mechanism": "idue", "model": model, "notion": "avgid",
                                  "levels": [{"name": "x", "epsilon": eps, "items": 2},
                                             {"name": "y", "epsilon": min(3 * eps, 100.0), "items": 1}]})
        mechanisms.load(plan)


def test_tiny_budget_plans_on_the_grid():
    plan = planner.make_plan({"mechanism": "idue", "levels": [{"name": "x", "epsilon": 1e-6, "items": 3}]})
    lv = plan["params"]["levels"][0]
    # a - b ~ epsilon / 4 spans about 7e7 grid steps: the grid resolves 1e-6 nats easily
    assert (lv["a"] - lv["b"]) / STEP > 1e7
    assert plan["predicted"]["worst_case_mse_per_user"]["value"] == pytest.approx(3 * 4 / 1e-12, rel=1e-4)
    assert math.isfinite(plan["guarantee"]["ldp_epsilon"]) and plan["guarantee"]["ldp_epsilon"] <= 1e-6

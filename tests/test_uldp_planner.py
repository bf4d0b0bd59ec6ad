"""ULDP family: spec -> plan (format 2.0) -> verify (exact, against the spec) -> load; tampering; the sweep."""
from __future__ import annotations

import copy
import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpplan import mechanisms, planner
from ldpplan.mechanisms import PlanError
from ldpplan.planner.cli import main
from ldpplan.planner.errors import InputDataError, PlanFormatError, PrivacyViolation, SpecError
from ldpplan.planner.families import family_for
from ldpplan.planner.uldp import FAMILY, _numbers as numbers, plan as plan_module
from ldpplan.planner.uldp.tables import sizes
from ldpplan.solvers.uldp import prop5_l1, prop8_l1, prop16_l2, prop19_l2


STEP = 2.0**-48


def make(name_or_spec):
    spec = planner.example_spec(name_or_spec) if isinstance(name_or_spec, str) else name_or_spec
    return planner.make_plan(spec)


def fails(plan) -> bool:
    """verify fails: a failed Verification or a PlanFormatError (never another exception)."""
    try:
        return not planner.verify_plan(plan).holds
    except PlanFormatError:
        return True


def refused(plan) -> bool:
    """load refuses (PlanError)."""
    try:
        mechanisms.load(plan)
    except PlanError:
        return True
    return False


def test_family_registered():
    assert family_for("urr") is FAMILY and family_for("uldp") is FAMILY
    assert FAMILY.plan_mechanisms == ("urr", "urap", "pum") and set(FAMILY.examples) == {"uldp-urr", "uldp-urap",
                                                                                        "uldp-pum"}
    assert "item" in FAMILY.input_doc and "tag" in FAMILY.input_doc


def test_examples_plan_with_paper_values():
    plan = make("uldp-urr")
    p = plan["params"]
    assert plan["format_version"] == "2.0" and plan["domain"] == {"size": 400, "labels": None}
    assert p["domain_size"] == 400 and p["sensitive"] == list(range(76))
    e = math.e
    assert p["c2"] == pytest.approx(1 / (75 + e), rel=1e-9) and p["c1"] == pytest.approx(e / (75 + e), rel=1e-9)
    assert p["c1"] == pytest.approx(0.0349761, abs=1e-7)  # 2.718282 / 77.718282
    g = plan["guarantee"]
    assert g["notion"] == "ULDP" and g["epsilon"] == 1.0 and g["sensitive"] == list(range(76))
    assert g["protected_outputs"] == list(range(76))  # Y_P = X_S (Prop. 2)
    # predicted worst-case losses = Props. 5 and 16 (eps = 1 < ln 325)
    pr = plan["predicted"]
    assert pr["l1_worst_times_sqrt_n"]["value"] == pytest.approx(prop5_l1(1.0, 76, 324, 1), rel=1e-8)
    assert pr["l2_worst_times_n"]["value"] == pytest.approx(prop16_l2(1.0, 76, 324, 1), rel=1e-8)
    assert "p_UN" in pr["l1_worst_times_sqrt_n"]["at"] and "Props. 4-8" in pr["l1_worst_times_sqrt_n"]["source"]
    assert [b["name"] for b in plan["baselines"]] == ["RR", "RAPPOR", "uRAP"]
    rr = plan["baselines"][0]["predicted"]["l1_worst_times_sqrt_n"]["value"]
    # RR worst l1 (uniform): sqrt(2(|X|-1)/pi) (|X|+e-1)/(e-1)
    assert rr == pytest.approx(math.sqrt(2 * 399 / math.pi) * (399 + e) / (e - 1), rel=1e-8)
    v = plan["verification"]
    assert v["holds"] and 0 <= v["slack_nats"] < 2e-10 and v["epsilon_effective"] <= 1.0

    plan = make("uldp-urap")
    p = plan["params"]
    h = math.exp(0.5)
    assert p["theta"] == pytest.approx(h / (h + 1), rel=1e-9)
    assert p["d1"] == pytest.approx(1 / (h + 1), rel=1e-9) and p["d2"] == pytest.approx(1 / h, rel=1e-9)
    assert plan["predicted"]["l1_worst_times_sqrt_n"]["value"] == pytest.approx(prop8_l1(1.0, 76, 324, 1), rel=1e-8)
    assert plan["predicted"]["l2_worst_times_n"]["value"] == pytest.approx(prop19_l2(1.0, 76, 324, 1), rel=1e-8)
    assert "eq. 7" in plan["guarantee"]["protected_outputs"]

    plan = make("uldp-pum")
    assert plan["params"]["tags"] == ["home", "workplace"] and plan["domain"]["size"] == 625
    assert plan["params"]["intermediate_sensitive"] == list(range(15)) + [625, 626]
    assert plan["guarantee"]["user_indistinguishability_epsilon"] == 1.0


def _l1_worst(plan):
    out = {b["name"]: b["predicted"]["l1_worst_times_sqrt_n"]["value"] for b in plan["baselines"]}
    out[{"urr": "uRR", "urap": "uRAP"}[plan["mechanism"]]] = plan["predicted"]["l1_worst_times_sqrt_n"]["value"]
    return out


def test_table3_worst_case_l1_of_plans():
    """Table 3 (n = 1): the eps ~ 0 column at eps = 1e-7 (plans this small now verify) and eps = ln|X|."""
    k, ks, c = 400, 4, math.sqrt(2 / math.pi)
    eps = 1e-7
    got = _l1_worst(make({"mechanism": "urr", "epsilon": eps, "domain": k, "sensitive": ks}))
    want = {"RR": c * k * math.sqrt(k - 1) / eps, "RAPPOR": c * 2 * k / eps, "uRR": c * ks * math.sqrt(ks - 1) / eps,
            "uRAP": c * 2 * ks / eps}
    for name, value in want.items():  # limits as eps -> 0 (relative corrections O(sqrt(eps |X|)))
        assert got[name] == pytest.approx(value, rel=3e-3), name
    eps = math.log(k)
    got = _l1_worst(make({"mechanism": "urap", "epsilon": eps, "domain": k, "sensitive": ks}))
    assert got["RR"] == pytest.approx(math.sqrt(8 * (k - 1) / math.pi), rel=1 / (k - 1))
    # (*1): approximations for |X_S| << |X|, here |X_S| / |X| = 1%
    assert got["uRR"] == pytest.approx(math.sqrt(2 * (k - 1) / math.pi), rel=0.03)
    assert got["uRAP"] == pytest.approx(math.sqrt(2 * (k - 1) / math.pi) * (1 + ks / k**0.75), rel=0.03)


def test_pum_sizes_agree_between_table_and_verify():
    plan = make("uldp-pum")
    table = {row[0]: row[1] for row in FAMILY.summarize(plan)[0].rows}
    v = planner.verify_plan(plan)
    assert table["|X|"] == 625 == v.details["domain_size"] == sizes(plan)["|X|"]
    assert table["|Z|"] == 627 == v.details["intermediate_size"]
    assert table["|X_S|"] == 15 and table["|Z_S|"] == 17
    assert "|X| = 625" in v.message and "|Z| = 627" in v.message
    assert mechanisms.load(plan).domain_size == 625


def test_labels_domain_and_theta():
    plan = make({"mechanism": "urap", "epsilon": 0.8, "domain": ["a", "b", "c", "d", "e"],
                 "sensitive": ["b", "d"], "theta": 0.7, "users": 1000})
    assert plan["domain"]["labels"] == ["a", "b", "c", "d", "e"] and plan["params"]["sensitive"] == [1, 3]
    assert plan["params"]["theta"] == pytest.approx(0.7, abs=STEP)
    assert plan["predicted"]["l1_worst"]["value"] == pytest.approx(
        plan["predicted"]["l1_worst_times_sqrt_n"]["value"] / math.sqrt(1000))
    assert mechanisms.load(plan).labels == ["a", "b", "c", "d", "e"]
    assert make({"mechanism": "urr", "epsilon": 1, "domain": 10, "sensitive": [3, 7], "n": 5})["params"][
        "sensitive"] == [3, 7]


# ------------------------------------------------------------------------------------------ tampering
def _bump(plan, **moves):
    bad = copy.deepcopy(plan)
    for key, steps in moves.items():
        bad["params"][key] += steps * STEP
    return bad


def test_tampered_numbers_fail_verify_and_load():
    plan = make("uldp-urr")
    # a larger c1/c2 ratio, rows still summing to one: verify (Def. 2 (5)) and load (privacy map) both refuse
    bad = _bump(plan, c2=-1000, c1=75000, c3=76000)
    assert fails(bad) and "Def. 2 (5)" in planner.verify_plan(bad).message and refused(bad)
    bad = _bump(plan, c3=1)  # rows no longer sum to one
    assert fails(bad) and refused(bad)
    bad = copy.deepcopy(plan)
    del bad["params"]["c1"]
    assert fails(bad) and refused(bad)
    plan = make("uldp-urap")
    bad = copy.deepcopy(plan)
    bad["params"]["d1"] = 0.1  # theta/d1 explodes
    assert fails(bad) and refused(bad)
    bad = copy.deepcopy(plan)
    bad["params"]["theta"] = 1.0  # epsilon = inf
    assert fails(bad) and refused(bad)
    bad = copy.deepcopy(plan)
    bad["params"]["d1"] = 1.0  # a clean refusal, not ZeroDivisionError
    assert fails(bad) and refused(bad)


@pytest.mark.parametrize("key,steps", [("c1", 1), ("c2", -1), ("c3", 1)])
def test_urr_any_number_moved_one_grid_step_is_refused(key, steps):
    plan = make("uldp-urr")  # c1..c3 are tied by exact row sums: one step breaks them
    bad = _bump(plan, **{key: steps})
    assert fails(bad) and refused(bad)


@pytest.mark.parametrize("mech,moves", [("urr", {"c2": -1, "c1": 0, "c3": 1}), ("urap", {"d2": -1}),
                                        ("urap", {"d1": -1}), ("urap", {"theta": 1})])
def test_one_grid_step_past_the_budget_is_refused(mech, moves):
    """Walk a number toward less privacy, one grid step at a time: the first step that breaks the
    exact check (at most a few: the plan's slack is the safety margin plus grid rounding) is also
    refused by the runtime, because at epsilon = 1e-8 one step (~4e-15 nats) is far above the
    runtime's float tolerance (1e-9 relative)."""
    plan = make({"mechanism": mech, "epsilon": 1e-8, "domain": 30, "sensitive": 1})
    assert planner.verify_plan(plan).holds and not refused(plan)
    bad = plan
    for walked in range(1, 4):
        bad = _bump(bad, **moves)
        if fails(bad):
            break
    assert fails(bad) and walked <= 3
    assert refused(bad)


def test_one_grid_step_within_the_margin_still_holds():
    # at epsilon = 1 a grid step changes ln(theta/d1) by ~1e-14 nats, far inside the 1e-10 safety margin:
    # the guarantee still holds, and both checks say so
    plan = make("uldp-urap")
    moved = _bump(plan, d2=-1)
    assert planner.verify_plan(moved).holds and not refused(moved)


def test_nan_and_claims_fail():
    plan = make("uldp-urap")
    bad = copy.deepcopy(plan)
    bad["params"]["d2"] = float("nan")
    with pytest.raises(PlanFormatError, match="params.d2"):
        planner.verify_plan(bad)
    assert refused(bad)
    bad = copy.deepcopy(plan)
    bad["guarantee"]["epsilon"] = 0.5  # claims more privacy than the numbers give
    assert fails(bad) and refused(bad)
    bad = copy.deepcopy(plan)
    bad["params"]["sensitive"] = bad["params"]["sensitive"][1:]  # a dropped sensitive item
    assert fails(bad) and refused(bad)
    bad = copy.deepcopy(plan)
    bad["verification"]["holds"] = False
    assert refused(bad)
    bad = copy.deepcopy(plan)
    bad["params"]["extra"] = 1
    assert fails(bad)


@pytest.mark.parametrize("name", ["uldp-urr", "uldp-urap", "uldp-pum"])
def test_plan_must_match_its_spec(name):
    plan = make(name)
    edits = [
        lambda p: p["params"].__setitem__("epsilon", 100.0),
        lambda p: p["guarantee"].__setitem__("epsilon", 100.0),
        lambda p: (p["domain"].__setitem__("size", 401), p["params"].__setitem__("domain_size", 401)),
        lambda p: (p["params"].__setitem__("sensitive", p["params"]["sensitive"][1:]),
                   p["guarantee"].__setitem__("sensitive", p["guarantee"]["sensitive"][1:])),
        lambda p: p["spec"].__setitem__("epsilon", 2.0),
        lambda p: p["guarantee"].__setitem__("notion", "LDP"),
        lambda p: p["guarantee"].__setitem__("bonus", "X_N is private too"),
        lambda p: p["guarantee"].__setitem__("invertible_outputs", "none"),
        lambda p: p["baselines"][0]["predicted"]["l1_worst_times_sqrt_n"].__setitem__("value", 1.0),
        lambda p: p["baselines"].pop(),
        lambda p: p["predicted"]["l2_worst_times_n"].__setitem__("value", 1.0),
    ]
    for i, edit in enumerate(edits):
        bad = copy.deepcopy(plan)
        edit(bad)
        assert fails(bad), f"edit {i} of {name} still verifies"
    v = planner.verify_plan(_spec_edit(plan))
    assert not v.holds and "must match the embedded spec" in v.message


def _spec_edit(plan):
    bad = copy.deepcopy(plan)
    bad["spec"]["sensitive"] = 3
    return bad


def test_pum_bots_must_stay_sensitive():
    plan = make("uldp-pum")
    bad = copy.deepcopy(plan)
    bad["params"]["intermediate_sensitive"] = bad["params"]["intermediate_sensitive"][:-1]
    assert fails(bad) and refused(bad)


def test_solver_that_overspends_is_refused(monkeypatch):
    real = plan_module.solve_numbers

    def overspend(res):
        out = dict(real(res))
        k2 = round(out["c2"] / STEP) - 10**6
        ks = res.n_sensitive_common
        out.update(c2=k2 * STEP, c1=(2**48 - (ks - 1) * k2) * STEP, c3=(2**48 - ks * k2) * STEP)
        return out

    monkeypatch.setattr(plan_module, "solve_numbers", overspend)
    with pytest.raises(PrivacyViolation):
        planner.make_plan({"mechanism": "urr", "epsilon": 1.0, "domain": 10, "sensitive": 3})


# ------------------------------------------------------------------------------------------ the sweep
def _outcome(spec):
    try:
        plan = planner.make_plan(spec)
    except SpecError as exc:
        assert exc.field and exc.rule
        return "spec-error"
    assert planner.verify_plan(plan).holds
    mech = mechanisms.load(plan)
    assert mech.privacy_map()["epsilon"] <= spec["epsilon"] * (1 + 1e-12)
    return "plan"


@pytest.mark.parametrize("mech", ["urr", "urap", "pum"])
@pytest.mark.parametrize("eps", [1e-6, 1e-5, 1e-4, 1e-3, 0.1, 1.0, 10.0, 30.0, 50.0, 100.0])
def test_sweep_one_sensitive_item(mech, eps):
    spec = {"mechanism": mech, "epsilon": eps, "domain": 50, "sensitive": 1}
    if mech == "pum":
        spec["tags"] = ["home"]
    assert _outcome(spec) == "plan"


@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["urr", "urap", "pum"]), st.floats(-6.5, 2.0), st.integers(2, 300), st.data())
def test_sweep_property(mech, log_eps, k, data):
    eps = 10.0**log_eps
    ks = data.draw(st.integers(1, k))
    spec = {"mechanism": mech, "epsilon": eps, "domain": k, "sensitive": ks}
    if mech == "pum":
        spec.update(tags=["a", "b"], common=data.draw(st.sampled_from(["urr", "urap"])))
    assert _outcome(spec) in ("plan", "spec-error")
    if eps <= 12 and _outcome(spec) == "plan":  # essentially no budget is wasted below the grid limit
        v = planner.verify_plan(planner.make_plan(spec))
        assert v.details["epsilon_effective"] >= eps * (1 - 1e-9) - k * k * 2.0**-46  # c1 moves |X_S| grid steps


def test_grid_limits_are_spec_errors():
    with pytest.raises(SpecError, match="epsilon"):
        numbers.grid_urr(1e-13, 1000)
    with pytest.raises(SpecError) as info:
        planner.make_plan({"mechanism": "urr", "epsilon": 1e-15, "domain": 10, "sensitive": 1})
    assert info.value.field == "epsilon" and "grid" in info.value.rule


# ------------------------------------------------------------------------------------------ spec errors
@pytest.mark.parametrize("raw,field", [
    ({"mechanism": "urr", "epsilon": 0, "domain": 10, "sensitive": 2}, "epsilon"),
    ({"mechanism": "urr", "epsilon": 101, "domain": 10, "sensitive": 2}, "epsilon"),
    ({"mechanism": "urr", "epsilon": float("nan"), "domain": 10, "sensitive": 2}, "epsilon"),
    ({"mechanism": "urr", "epsilon": 1, "domain": 10, "sensitive": 11}, "sensitive"),
    ({"mechanism": "urr", "epsilon": 1, "domain": 10, "sensitive": [10]}, "sensitive[0]"),
    ({"mechanism": "urr", "epsilon": 1, "domain": ["a", "b"], "sensitive": ["c"]}, "sensitive[0]"),
    ({"mechanism": "urr", "epsilon": 1, "domain": 10, "sensitive": 2, "theta": 0.6}, "theta"),
    ({"mechanism": "urap", "epsilon": 1, "domain": 10, "sensitive": 2, "theta": 1.0}, "theta"),
    ({"mechanism": "urr", "epsilon": 1, "domain": 10, "sensitive": 2, "tags": ["h"]}, "tags"),
    ({"mechanism": "pum", "epsilon": 1, "domain": 10, "sensitive": 2}, "tags"),
    ({"mechanism": "pum", "epsilon": 1, "domain": 3, "sensitive": 1, "tags": ["h"],
      "background": {"h": [0.5, 0.5]}}, "background.h"),
    ({"mechanism": "urap", "epsilon": 1, "domain": 10, "sensitive": 2, "bogus": 1}, "bogus"),
    ({"mechanism": "urap", "epsilon": 1, "domain": 10, "sensitive": 2, "users": 5, "n": 6}, "n"),
])
def test_spec_errors(raw, field):
    with pytest.raises(SpecError) as info:
        planner.make_plan(raw)
    assert info.value.field == field


# ------------------------------------------------------------------------------------------ inputs, CLI
def test_read_inputs(tmp_path):
    plan = make({"mechanism": "urr", "epsilon": 1, "domain": ["a", "b", "c"], "sensitive": ["a"]})
    f = tmp_path / "in.csv"
    f.write_text("user,item\n1,b\n2,a\n3,c\n")
    np.testing.assert_array_equal(FAMILY.read_inputs(plan, f), [1, 0, 2])
    f.write_text("item\nz\n")
    with pytest.raises(InputDataError, match="line 2"):
        FAMILY.read_inputs(plan, f)
    plan = make("uldp-urr")  # labels null: 0-based indices
    f.write_text("item\n0\n399\n")
    np.testing.assert_array_equal(FAMILY.read_inputs(plan, f), [0, 399])
    f.write_text("item\n400\n")
    with pytest.raises(InputDataError, match=r"\[0, 400\)"):
        FAMILY.read_inputs(plan, f)
    plan = make("uldp-pum")
    f.write_text("item,tag\n3,home\n700,\n")
    with pytest.raises(InputDataError):
        FAMILY.read_inputs(plan, f)
    f.write_text("item,tag\n3,home\n20,\n30,workplace\n")
    data = FAMILY.read_inputs(plan, f)
    np.testing.assert_array_equal(data["item"], [3, 20, 30])
    np.testing.assert_array_equal(data["tag"], [0, -1, 1])
    rep = mechanisms.load(plan).perturb(data, np.random.default_rng(0))
    assert len(rep) == 3


def test_schema_part():
    from ldpplan.planner._plan_format import load_schema

    part = load_schema("uldp")
    assert part["properties"]["guarantee"]["properties"]["notion"] == {"const": "ULDP"}
    composed = load_schema()
    assert {"urr", "urap", "pum"} <= set(composed["properties"]["mechanism"]["enum"])


def test_cli_plan_verify_and_tamper(tmp_path):
    runner = CliRunner()
    out = tmp_path / "urr.json"
    r = runner.invoke(main, ["plan", "--example", "uldp-urr", "-o", str(out)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(main, ["verify", str(out)])
    assert r.exit_code == 0, r.output
    plan = json.loads(out.read_text())
    k2 = round(plan["params"]["c2"] / STEP) // 2
    plan["params"].update(c2=k2 * STEP, c1=(2**48 - 75 * k2) * STEP, c3=(2**48 - 76 * k2) * STEP)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(plan))
    r = runner.invoke(main, ["verify", str(bad)])
    assert r.exit_code == 1, r.output

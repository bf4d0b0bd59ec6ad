"""ULDP family: spec -> plan -> verify -> CLI (planner/uldp.py)."""
from __future__ import annotations

import copy
import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpplan import planner
from ldpplan.mechanisms._sampling import on_grid
from ldpplan.planner import uldp
from ldpplan.planner.cli import main
from ldpplan.planner.errors import PlanFormatError, PrivacyViolation, SpecError
from ldpplan.solvers.uldp import prop5_l1, prop8_l1, prop16_l2, prop19_l2


def test_examples_plan_with_required_fields():
    plan = planner.make_plan(planner.example_spec("uldp-urr"))
    p = plan["params"]
    assert p["domain_size"] == 400 and p["n_sensitive"] == 76 and p["sensitive"] == list(range(76))
    assert on_grid([p["c1"], p["c2"], p["c3"]])
    e = math.e
    assert p["c2"] == pytest.approx(1 / (75 + e), rel=1e-11)
    # predicted worst-case losses = Props. 5 and 16 (eps = 1 < ln 325)
    assert plan["predicted"]["l1_worst_times_sqrt_n"] == pytest.approx(prop5_l1(1.0, 76, 324, 1), rel=1e-9)
    assert plan["predicted"]["l2_worst_times_n"] == pytest.approx(prop16_l2(1.0, 76, 324, 1), rel=1e-9)
    assert "p_UN" in plan["predicted"]["worst_case_distribution_l1"]
    names = [c["mechanism"] for c in plan["comparison"]]
    assert names == ["RR", "RAPPOR", "uRAP"]
    rr = plan["comparison"][0]
    # RR worst l1 (uniform): sqrt(2(|X|-1)/pi) (|X|+e-1)/(e-1)
    assert rr["l1_worst_times_sqrt_n"] == pytest.approx(math.sqrt(2 * 399 / math.pi) * (399 + e) / (e - 1), rel=1e-9)
    assert plan["verification"]["holds"] and plan["verification"]["slack_nats"] >= 0

    plan = planner.make_plan(planner.example_spec("uldp-urap"))
    p = plan["params"]
    h = math.exp(0.5)
    assert p["theta"] == pytest.approx(h / (h + 1), rel=1e-11)
    assert p["d1"] == pytest.approx(1 / (h + 1), rel=1e-11) and p["d2"] == pytest.approx(1 / h, rel=1e-11)
    assert plan["predicted"]["l1_worst_times_sqrt_n"] == pytest.approx(prop8_l1(1.0, 76, 324, 1), rel=1e-9)
    assert plan["predicted"]["l2_worst_times_n"] == pytest.approx(prop19_l2(1.0, 76, 324, 1), rel=1e-9)

    plan = planner.make_plan(planner.example_spec("uldp-pum"))
    assert plan["params"]["tags"] == ["home", "workplace"]
    assert plan["params"]["intermediate_sensitive"] == list(range(15)) + [625, 626]


def test_tampered_plans_fail():
    plan = planner.make_plan(planner.example_spec("uldp-urr"))
    bad = copy.deepcopy(plan)
    # a larger c1/c2 ratio: move mass from the other sensitive outputs to the true one
    from ldpplan.mechanisms._sampling import GRID

    bad["params"]["c2"] -= 1000 / GRID  # ratio up by ~8e-9 relative, the slack is ~8e-12
    bad["params"]["c1"] += 75000 / GRID
    bad["params"]["c3"] += 76000 / GRID
    res = planner.verify_plan(bad)
    assert not res.holds and "Def. 2 (5)" in res.message
    bad = copy.deepcopy(plan)
    bad["params"]["c3"] += 1 / GRID
    assert not planner.verify_plan(bad).holds  # rows no longer sum to one
    bad = copy.deepcopy(plan)
    del bad["params"]["c1"]
    with pytest.raises(PlanFormatError):
        planner.verify_plan(bad)
    plan = planner.make_plan(planner.example_spec("uldp-urap"))
    bad = copy.deepcopy(plan)
    bad["params"]["d2"] = bad["params"]["d2"] - 2**-20
    assert not planner.verify_plan(bad).holds
    bad = copy.deepcopy(plan)
    bad["params"]["d1"] = 0.1  # far from the closed form: ratio theta/d1 explodes
    assert not planner.verify_plan(bad).holds


def test_urap_small_domain_enumeration_agrees():
    plan = planner.make_plan({"mechanism": "urap", "epsilon": 0.8, "domain": ["a", "b", "c", "d", "e"],
                              "sensitive": ["b", "d"], "theta": 0.7})
    v = planner.verify_plan(plan)
    assert v.holds and "enumerated" in v.details
    assert plan["params"]["sensitive"] == [1, 3]
    assert v.details["epsilon_effective"] <= 0.8


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["urr", "urap"]), st.floats(0.01, 12), st.integers(2, 300), st.data())
def test_plan_round_trip_meets_epsilon(mech, eps, k, data):
    ks = data.draw(st.integers(1, k))
    plan = uldp.plan_from_spec({"mechanism": mech, "epsilon": eps, "domain": k, "sensitive": ks})
    v = uldp.verify_plan(plan)
    assert v.holds
    assert v.details["epsilon_effective"] <= eps
    # and essentially no budget is wasted: the relative shrink and the 2^-48 grid cost < 1e-9 eps + 1e-10 nats
    assert v.details["epsilon_effective"] >= eps * (1 - 1e-9) - 1e-10


@pytest.mark.parametrize("raw,field", [
    ({"mechanism": "urr", "epsilon": 0, "domain": 10, "sensitive": 2}, "epsilon"),
    ({"mechanism": "urr", "epsilon": 1, "domain": 10, "sensitive": 11}, "sensitive"),
    ({"mechanism": "urr", "epsilon": 1, "domain": ["a", "b"], "sensitive": ["c"]}, "sensitive[0]"),
    ({"mechanism": "urr", "epsilon": 1, "domain": 10, "sensitive": 2, "theta": 0.6}, "theta"),
    ({"mechanism": "urr", "epsilon": 1, "domain": 10, "sensitive": 2, "tags": ["h"]}, "tags"),
    ({"mechanism": "pum", "epsilon": 1, "domain": 10, "sensitive": 2}, "tags"),
    ({"mechanism": "pum", "epsilon": 1, "domain": 3, "sensitive": 1, "tags": ["h"],
      "background": {"h": [0.5, 0.5]}}, "background.h"),
    ({"mechanism": "urap", "epsilon": 1, "domain": 10, "sensitive": 2, "bogus": 1}, "bogus"),
])
def test_spec_errors(raw, field):
    with pytest.raises(SpecError) as info:
        planner.make_plan(raw)
    assert info.value.field == field


def test_cli_plan_verify_perturb_estimate(tmp_path):
    runner = CliRunner()
    out = tmp_path / "urr.json"
    r = runner.invoke(main, ["plan", "--example", "uldp-urr", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "verified" in r.output
    r = runner.invoke(main, ["verify", str(out)])
    assert r.exit_code == 0 and "holds" in r.output
    plan = json.loads(out.read_text())
    plan["params"]["c2"] = plan["params"]["c2"] / 2
    plan["params"]["c1"] = 1 - 75 * plan["params"]["c2"]
    plan["params"]["c3"] = 1 - 76 * plan["params"]["c2"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(plan))
    r = runner.invoke(main, ["verify", str(bad)])
    assert r.exit_code == 1
    items = tmp_path / "items.csv"
    rng = np.random.default_rng(0)
    x = rng.integers(0, 400, 5000)
    items.write_text("item\n" + "\n".join(f"x{i + 1}" for i in x) + "\n")
    rep = tmp_path / "rep.npz"
    r = runner.invoke(main, ["perturb", str(out), "--input", str(items), "-o", str(rep), "--seed", "1"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(main, ["estimate", str(out), str(rep), "--json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)["rows"]
    assert len(rows) == 400
    assert sum(row["frequency"] for row in rows) == pytest.approx(1.0, abs=0.2)


def test_cli_simulate_on_gss(shared_data_dir, tmp_path):
    runner = CliRunner()
    out = tmp_path / "urap.json"
    assert runner.invoke(main, ["plan", "--example", "uldp-urap", "-o", str(out)]).exit_code == 0
    fig = tmp_path / "fig.png"
    r = runner.invoke(main, ["simulate", str(out), "--data", str(shared_data_dir / "gss_vocab.csv"),
                             "--trials", "1", "--seed", "3", "-O", "epsilons=1,ln", "-O", "em_max_iter=100",
                             "--json", "--plot", str(fig)])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["domain_size"] == 100 and data["n_sensitive"] == 20 and data["n"] == 28629
    res = {(d["epsilon"], d["mechanism"], d["method"]): d for d in data["results"]}
    th = {(d["epsilon"], d["mechanism"]): d for d in data["theory_empirical"]}
    for eps in (1.0, math.log(100)):
        # utility-optimized mechanisms beat their LDP counterparts (Fig. 5) with the empirical estimate
        assert res[(eps, "uRR", "emp")]["tv"] < res[(eps, "RR", "emp")]["tv"]
        assert res[(eps, "uRAP", "emp")]["tv"] < res[(eps, "RAPPOR", "emp")]["tv"]
        for m in ("RR", "RAPPOR", "uRR", "uRAP"):
            # one trial: TV within a factor 2 of its expectation (sd of TV is << its mean here)
            assert 0.5 * th[(eps, m)]["tv"] < res[(eps, m, "emp")]["tv"] < 2 * th[(eps, m)]["tv"]
    assert fig.stat().st_size > 1000


def test_privacy_violation_is_raised(monkeypatch):
    monkeypatch.setattr(uldp, "SHRINK", -1e-6)  # a solver that overspends the budget
    with pytest.raises(PrivacyViolation):
        uldp.plan_from_spec({"mechanism": "urr", "epsilon": 1.0, "domain": 10, "sensitive": 3})

"""PIE family: spec -> plan -> verify -> summarize / simulate, and the CLI end to end."""
from __future__ import annotations

import copy
import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpplan import mechanisms
from ldpplan import planner
from ldpplan.planner import pie
from ldpplan.planner._report import SimulateOptions
from ldpplan.planner.cli import main
from ldpplan.planner.errors import PlanFormatError, PrivacyViolation, SpecError

N_LOC, X_LOC = 1370637, 10500393


@pytest.mark.parametrize("name", ["pie-rr", "pie-glh", "pie-gss"])
def test_examples_plan_and_verify(name):
    plan = planner.make_plan(planner.example_spec(name))
    assert planner.verify_plan(plan).holds
    p, gu = plan["params"], plan["guarantee"]
    assert gu["bayes_error_lower_bound"] >= plan["spec"]["target"]["bayes_error"]
    assert gu["alpha_nats"] == pytest.approx(gu["alpha_bits"] * math.log(2))
    assert p["epsilon_realized"] <= p["epsilon"]
    assert plan["predicted"]["l2_loss_total"] > 0
    json.dumps(plan)  # plain JSON
    assert len(planner.summarize(plan)) == 4


def test_issue_spec_numbers():
    rr = planner.make_plan(planner.example_spec("pie-rr"))
    # Bayes error 0.5 with n = 1370637: alpha = 0.5 log2 n - 1 = 9.1932 bits; theta = alpha / log2 n
    assert rr["guarantee"]["alpha_bits"] == pytest.approx(0.5 * math.log2(N_LOC) - 1, rel=1e-10)
    theta = (0.5 * math.log2(N_LOC) - 1) / math.log2(N_LOC)
    assert rr["params"]["epsilon"] == pytest.approx(math.log1p(theta * X_LOC / (1 - theta)), rel=1e-10)
    assert rr["guarantee"]["alpha_bits"] <= 0.5 * math.log2(N_LOC) - 1
    glh = planner.make_plan(planner.example_spec("pie-glh"))
    assert glh["params"]["g"] == 10**8 and glh["mechanism"] == "glh"
    assert glh["guarantee"]["theta"] == pytest.approx(theta, rel=1e-9)
    # Thm. 4.8 / Sec. 4.4: GLH with large g has a smaller total l2 loss than the RR
    assert glh["predicted"]["l2_loss_total"] < rr["predicted"]["l2_loss_total"]


def test_pie_mechanism_records_choice():
    plan = planner.make_plan(planner.example_spec("pie-gss"))
    sel = plan["selection"]
    assert sel["requested"] == "pie" and sel["chosen"] == plan["mechanism"]
    losses = {c["mechanism"]: c["l2_loss_total"] for c in sel["candidates"]}
    assert losses[plan["mechanism"]] == min(losses.values())
    assert plan["spec"]["mechanism"] == "pie"


def test_alpha_and_epsilon_targets_and_prior():
    plan = planner.make_plan({"mechanism": "rr", "domain_size": 1000, "n": 10**6, "target": {"alpha_bits": 2.0}})
    assert plan["guarantee"]["alpha_bits"] <= 2.0
    plan = planner.make_plan({"mechanism": "rr", "domain_size": X_LOC, "n": N_LOC, "target": {"epsilon": 1.0}})
    assert plan["params"]["epsilon"] <= 1.0
    # Fig. 4: epsilon = 1 -> alpha = 3.3e-6 bits (Thm. 4.2)
    assert float(f"{plan['guarantee']['alpha_bits']:.2g}") == 3.3e-6
    uni = planner.make_plan({"mechanism": "rr", "domain_size": 1000, "n": 10**6, "target": {"bayes_error": 0.5}})
    non = planner.make_plan({"mechanism": "rr", "domain_size": 1000, "n": 10**6,
                             "target": {"bayes_error": 0.5, "max_prior": 1e-4}})
    assert non["params"]["epsilon"] < uni["params"]["epsilon"]  # a sharper prior needs more noise
    assert non["guarantee"]["bayes_error_lower_bound"] >= 0.5
    two = planner.make_plan({"mechanism": "rr", "domain_size": 1000, "n": 10**6, "releases": 2,
                             "target": {"bayes_error": 0.5}})
    assert two["params"]["epsilon"] < uni["params"]["epsilon"]


@pytest.mark.parametrize("raw, field", [
    ({"mechanism": "rr", "domain_size": 10, "n": 100, "target": {}}, "target"),
    ({"mechanism": "rr", "domain_size": 10, "n": 100, "target": {"bayes_error": 0.5, "epsilon": 1}}, "target"),
    ({"mechanism": "rr", "n": 100, "target": {"epsilon": 1}}, "domain_size"),
    ({"mechanism": "rr", "domain_size": 1, "n": 100, "target": {"epsilon": 1}}, "domain_size"),
    ({"mechanism": "rr", "domain_size": 10, "n": 100, "target": {"bayes_error": 1.5}}, "target.bayes_error"),
    ({"mechanism": "rr", "domain_size": 10, "n": 100, "target": {"bayes_error": 0.9}}, "target.bayes_error"),
    ({"mechanism": "rr", "domain_size": 10, "n": 100, "target": {"bayes_error": 0.5, "max_prior": 1e-5}},
     "target.max_prior"),
    ({"mechanism": "glh", "domain_size": 10, "n": 100, "g_max": 1, "target": {"epsilon": 1}}, "g_max"),
    ({"mechanism": "rr", "domain_size": 3, "domain": ["a", "b"], "n": 100, "target": {"epsilon": 1}}, "domain_size"),
    ({"mechanism": "rr", "domain_size": 10, "n": 100, "target": {"epsilon": 1}, "bogus": 1}, "bogus"),
])
def test_spec_errors_name_the_field(raw, field):
    with pytest.raises(SpecError) as err:
        planner.make_plan(raw)
    assert err.value.field == field


def test_tampered_plans_fail_verification():
    plan = planner.make_plan({"mechanism": "rr", "domain_size": 100, "n": 28629, "target": {"bayes_error": 0.8}})
    bad = copy.deepcopy(plan)
    bad["params"]["mu"] = plan["params"]["mu"] + 2.0**-40  # larger keep probability: epsilon exceeds the claim
    res = pie.verify_plan(bad)
    assert not res.holds and "epsilon" in res.message
    bad["params"]["mu"] = plan["params"]["mu"] + 2.0**-30  # more leakage: alpha exceeds the stated guarantee
    res = pie.verify_plan(bad)
    assert not res.holds and "alpha" in res.message
    bad = copy.deepcopy(plan)
    bad["guarantee"]["bayes_error_lower_bound"] = 0.9
    assert not pie.verify_plan(bad).holds
    bad = copy.deepcopy(plan)
    bad["params"]["mu"] = 0.3  # off the 2^-48 grid? 0.3 is not a dyadic rational
    with pytest.raises(PlanFormatError):
        pie.verify_plan(bad)
    bad = copy.deepcopy(plan)
    del bad["guarantee"]["alpha_bits"]
    with pytest.raises(PlanFormatError):
        pie.verify_plan(bad)
    with pytest.raises(PrivacyViolation):
        planner.write_plan(dict(plan, params=dict(plan["params"], mu=plan["params"]["mu"] + 2.0**-40)), "/tmp/never.json")


@settings(max_examples=40, deadline=None)
@given(beta=st.floats(0.05, 0.95), n=st.integers(100, 10**8), k=st.integers(2, 10**7),
       mech=st.sampled_from(["rr", "glh", "pie"]), t=st.integers(1, 3))
def test_target_round_trip(beta, n, k, mech, t):
    raw = {"mechanism": mech, "domain_size": k, "n": n, "releases": t, "g_max": 2**20, "target": {"bayes_error": beta}}
    try:
        plan = planner.make_plan(raw)
    except SpecError as exc:  # unreachable by Fano's bound
        assert exc.field == "target.bayes_error"
        assert (1 - beta) * math.log2(n) <= 1 + 1e-9
        return
    ver = pie.verify_plan(plan)
    assert ver.holds
    gu = plan["guarantee"]
    # independent recomputation: theta from mu, alpha, Cor. 3.9 bound >= target
    size = plan["params"].get("g", k)
    mu = plan["params"]["mu"]
    theta = (size * mu - 1) / (size - 1)
    e = t * plan["params"]["epsilon_realized"]
    alpha = min(t * theta * min(math.log2(n), math.log2(k)),
                min(e, e * e) / math.log(2), math.log2(n), t * math.log2(k))
    assert alpha <= gu["alpha_bits"] * (1 + 1e-12)
    assert 1 - (gu["alpha_bits"] + 1) / math.log2(n) >= beta


def test_cli_plan_verify_simulate_perturb_estimate(tmp_path, shared_data_dir):
    runner = CliRunner()
    out = tmp_path / "gss.json"
    r = runner.invoke(main, ["plan", "--example", "pie-gss", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "Bayes error" in r.output
    r = runner.invoke(main, ["verify", str(out)])
    assert r.exit_code == 0 and "holds" in r.output
    plan = json.loads(out.read_text())
    plan["params"]["mu"] += 2.0**-20
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(plan))
    assert runner.invoke(main, ["verify", str(bad)]).exit_code == 1
    spec = tmp_path / "spec.toml"
    spec.write_text('mechanism = "rr"\ndomain_size = 100\nn = 28629\n[target]\nbayes_error = 2.0\n')
    r = runner.invoke(main, ["plan", str(spec)])
    assert r.exit_code == 2 and "target.bayes_error" in r.output
    r = runner.invoke(main, ["simulate", str(out), "--data", str(shared_data_dir / "gss_vocab.csv"),
                             "--trials", "2", "--seed", "3", "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["n"] == 28629 and data["domain_size"] == 100
    by = {x["mechanism"]: x for x in data["results"]}
    for rec in by.values():
        assert rec["bayes_error_lower_bound"] >= 0.8
    # measured l2 of the empirical estimate is near the prediction (2 trials: loose, 50 %)
    assert by["rr"]["measured"]["empirical"]["l2_total_mean"] == pytest.approx(by["rr"]["predicted_l2_total"], rel=0.5)
    assert by["glh"]["measured"]["empirical"]["l2_total_mean"] < by["rr"]["measured"]["empirical"]["l2_total_mean"]
    # runtime from files
    items = tmp_path / "items.csv"
    items.write_text("item\n" + "\n".join(["60+|16 yrs|male|yes"] * 30 + ["0"] * 20) + "\n")
    rep = tmp_path / "reports.npz"
    r = runner.invoke(main, ["perturb", str(out), "--input", str(items), "-o", str(rep), "--seed", "1"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(main, ["estimate", str(out), str(rep), "--json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)["rows"]
    assert len(rows) == 100 and abs(sum(row["threshold"] for row in rows) - 1) < 1e-9


def test_simulation_matches_prediction_on_real_data(shared_data_dir):
    plan = planner.make_plan({"mechanism": "rr", "domain": pie.gss_labels(), "n": 28629,
                              "target": {"bayes_error": 0.8}})
    rep = planner.simulate(plan, SimulateOptions(data=str(shared_data_dir / "gss_vocab.csv"), trials=40, seed=0))
    rr = next(r for r in rep.data["results"] if r["mechanism"] == "rr")
    m = rr["measured"]["empirical"]
    # the mean of 40 totals is within 5 standard errors of Prop. 4.6 (exact for fixed data)
    assert abs(m["l2_total_mean"] - rr["predicted_l2_total"]) <= 5 * m["l2_total_se"]
    assert rr["exact_l2_total_for_runtime"] == pytest.approx(rr["predicted_l2_total"], rel=1e-6)
    assert rep.tables[0].rows


def test_runtime_loads_plan():
    plan = planner.make_plan(planner.example_spec("pie-gss"))
    mech = mechanisms.load(plan)
    assert mech.domain_size == 100 and list(mech.domain)[0] == "18-29|12 yrs|female|no"
    y = mech.perturb(np.arange(100), rng=np.random.default_rng(0))
    assert y.shape == (100,)

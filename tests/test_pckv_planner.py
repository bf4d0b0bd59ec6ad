"""PCKV planner: spec -> plan -> verify -> simulate, CLI end to end, MovieLens."""
import copy
import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from ldpplan import mechanisms
from ldpplan.planner import api
from ldpplan.planner import pckv as P
from ldpplan.planner.cli import main
from ldpplan.planner.errors import SpecError
from ldpplan.planner._report import SimulateOptions

ISSUE_SPEC = {"mechanism": "pckv-ue", "epsilon": 1.0, "keys": 100, "padding_length": 1, "allocation": "optimized"}


@pytest.mark.parametrize("mechanism", ["pckv-ue", "pckv-grr", "pckv"])
@pytest.mark.parametrize("allocation", ["optimized", "numeric", "naive", "tight"])
def test_issue_spec_plans_and_verifies(mechanism, allocation):
    plan = api.make_plan({**ISSUE_SPEC, "mechanism": mechanism, "allocation": allocation})
    assert plan["mechanism"] in ("pckv-ue", "pckv-grr")
    pr = plan["params"]
    for field in ("a", "b", "p", "epsilon1", "epsilon2", "padding_length", "domain_size"):
        assert field in pr
    assert pr["domain_size"] == 100 and pr["padding_length"] == 1
    g = plan["guarantee"]["epsilon"]
    assert g <= 1.0 and g >= 1.0 - 1e-9 if allocation != "naive" else g < 1.0
    assert plan["prediction"]["mse_frequency"] > 0 and plan["prediction"]["mse_mean"] > 0
    assert api.verify_plan(plan).holds
    if mechanism == "pckv":
        assert plan["mechanism_choice"]["chosen"] == "pckv-ue"   # d=100, L=1: UE wins (Sec. 5.4)
        assert "Theorem 4" in plan["mechanism_choice"]["reason"]
    if allocation == "numeric":
        assert plan["allocation"]["gain_over_closed_form"] >= 0
    mech = mechanisms.load(plan)
    f, m = mech.estimate(mech.perturb([([1], [0.5])] * 50, rng=np.random.default_rng(0)))
    assert f.shape == (100,) and m.shape == (100,)


def test_optimized_plan_numbers_match_lemma2():
    plan = api.make_plan(ISSUE_SPEC)
    pr = plan["params"]
    assert pr["a"] == 0.5
    assert pr["b"] == pytest.approx(2 / (math.e + 3), rel=1e-11)
    assert pr["p"] == pytest.approx(math.e / (math.e + 1), rel=1e-11)
    assert pr["epsilon2"] == pytest.approx(1.0, rel=1e-11)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["pckv-ue", "pckv-grr"]), st.floats(0.05, 12), st.integers(2, 5000), st.integers(1, 40),
       st.sampled_from(["optimized", "naive", "tight"]))
def test_composed_epsilon_never_exceeds_target(mech, eps, d, L, allocation):
    plan = api.make_plan({"mechanism": mech, "epsilon": eps, "keys": d, "padding_length": L, "allocation": allocation})
    ratio = P.composed_epsilon_exact(mech, *(plan["params"][k] for k in ("a", "b", "p")), d, L)
    assert P._ratio_within(ratio, eps)
    assert plan["guarantee"]["epsilon"] <= eps
    assert plan["verification"]["holds"]


def test_verifier_catches_tampering():
    plan = api.make_plan({**ISSUE_SPEC, "mechanism": "pckv-grr", "padding_length": 3})
    bad = copy.deepcopy(plan)
    bad["params"]["p"] = plan["params"]["p"] + 2 ** -40           # still on the grid, but over budget
    assert not api.verify_plan(bad).holds
    bad = copy.deepcopy(plan)
    bad["params"]["a"] = plan["params"]["a"] * (1 + 1e-10)          # off the grid
    assert not api.verify_plan(bad).holds
    bad = copy.deepcopy(plan)
    bad["guarantee"]["epsilon"] = 0.9
    res = api.verify_plan(bad)
    assert not res.holds and "exceeds" in res.message
    bad = copy.deepcopy(plan)
    bad["params"]["padding_length"] = 1                             # less amplification than claimed
    assert not api.verify_plan(bad).holds
    from ldpplan.planner.errors import PlanFormatError

    bad = copy.deepcopy(plan)
    del bad["params"]["b"]
    with pytest.raises(PlanFormatError):
        api.verify_plan(bad)


@pytest.mark.parametrize("raw,field", [
    ({**ISSUE_SPEC, "epsilon": 0}, "epsilon"),
    ({**ISSUE_SPEC, "padding_length": "auto"}, "padding_length"),
    ({**ISSUE_SPEC, "keys": ["x", "x"]}, "keys"),
    ({**ISSUE_SPEC, "allocation": "best"}, "allocation"),
    ({**ISSUE_SPEC, "keys": "data"}, "keys"),
    ({**ISSUE_SPEC, "prior_means": [0.5]}, "prior_means"),
    ({**ISSUE_SPEC, "unknown": 1}, "unknown"),
])
def test_spec_errors_name_the_field(raw, field):
    with pytest.raises(SpecError) as exc:
        api.make_plan(raw)
    assert exc.value.field == field


def test_auto_padding_from_set_size_distribution_and_labels():
    spec = {"mechanism": "pckv", "epsilon": 2.0, "keys": [f"item{i}" for i in range(20)], "padding_length": "auto",
            "set_size_distribution": {"1": 0.2, "2": 0.3, "3": 0.3, "6": 0.2}, "users": 100_000, "max_padding_length": 10}
    plan = api.make_plan(spec)
    sel = plan["padding_length_selection"]
    best = min(sel["candidates"], key=lambda r: r["objective"])
    assert sel["chosen"] == best["padding_length"] == plan["params"]["padding_length"]
    assert plan["keys"]["labels"][3] == "item3"
    assert plan["prediction"]["users_truncated_fraction"] == pytest.approx(
        sum(w for s, w in {1: 0.2, 2: 0.3, 3: 0.3, 6: 0.2}.items() if s > sel["chosen"]))
    assert any("L = \"auto\"" in t.title for t in api.summarize(plan))


def test_simulate_synthetic_aggregate_and_runtime_agree_with_theory():
    plan = api.make_plan({**ISSUE_SPEC, "epsilon": 3.0, "users": 200_000})
    for mode in ("aggregate", "runtime"):
        rep = api.simulate(plan, SimulateOptions(trials=4, seed=2, mode=mode))
        row = rep.data["results"][0]["all keys"]
        # frequency MSE of (7): Theorem 4 is exact; 4 trials x 100 keys -> within 25%
        assert row["mse_frequency_raw"] == pytest.approx(row["mse_frequency_theory"], rel=0.25)
        assert row["mse_mean"] <= row["mse_mean_theory"] * 1.3
        names = [r["mechanism"] for r in rep.data["results"]]
        assert names[0] == "pckv-ue (plan)" and "pckv-grr" in names
        naive = [r for r in rep.data["results"] if r["allocation"] == "naive" and r["mechanism"] == "pckv-ue"][0]
        assert naive["all keys"]["mse_mean"] > row["mse_mean"]      # optimized beats naive (Fig. 9)


@pytest.fixture(scope="module")
def movielens_plan(shared_data_dir):
    spec = {"mechanism": "pckv", "epsilon": 4.0, "keys": "data", "padding_length": "auto", "objective_keys": 50,
            "max_padding_length": 60, "data": str(shared_data_dir / "movielens_ratings.csv")}
    return api.make_plan(spec)


def test_movielens_plan_and_simulation(movielens_plan, shared_data_dir):
    plan = movielens_plan
    assert plan["params"]["domain_size"] == len(plan["keys"]["labels"]) > 9000
    assert plan["prediction"]["users"] == 671
    assert api.verify_plan(plan).holds
    rep = api.simulate(plan, SimulateOptions(data=str(shared_data_dir / "movielens_ratings.csv"), trials=2, seed=0))
    titles = [t.title for t in rep.tables]
    assert any("top-50" in t for t in titles) and any("all keys" in t for t in titles)
    for r in rep.data["results"]:
        top = r["top-50 keys"]
        assert 0 <= top["mse_frequency"] < 1 and 0 <= top["mse_mean"] <= 4
        assert np.isfinite(top["mse_frequency_theory"])
    assert rep.data["setting"]["users"] == 671


def test_movielens_example_needs_data_dir(monkeypatch, shared_data_dir):
    monkeypatch.delenv("LDPPLAN_DATA_DIR", raising=False)
    with pytest.raises(SpecError, match="LDPPLAN_DATA_DIR"):
        api.make_plan(api.example_spec("pckv-movielens"))
    assert "pckv-synthetic" in api.list_examples()


def test_cli_end_to_end(tmp_path):
    runner = CliRunner()
    spec = tmp_path / "kv.toml"
    spec.write_text('mechanism = "pckv-grr"\nepsilon = 2.0\nkeys = ["a", "b", "c", "d"]\npadding_length = 2\n'
                    'allocation = "optimized"\nvalues = "clip"\n')
    plan_path = tmp_path / "plan.json"
    r = runner.invoke(main, ["plan", str(spec), "-o", str(plan_path)])
    assert r.exit_code == 0, r.output
    assert runner.invoke(main, ["verify", str(plan_path)]).exit_code == 0
    data = tmp_path / "users.csv"
    rows = ["user_id,key,value"] + [f"u{i},{'abcd'[i % 4]},{(i % 7) / 3 - 1}" for i in range(400)] + ["u1,c,1.7"]
    data.write_text("\n".join(rows) + "\n")
    rep = tmp_path / "rep.npz"
    r = runner.invoke(main, ["perturb", str(plan_path), "--input", str(data), "-o", str(rep), "--seed", "1"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(main, ["estimate", str(plan_path), str(rep), "--json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)["rows"]
    assert [row["key"] for row in rows] == ["a", "b", "c", "d"]
    r = runner.invoke(main, ["simulate", str(plan_path), "--data", str(data), "--trials", "2", "--seed", "3"])
    assert r.exit_code == 0, r.output
    assert "top-50" in r.output
    # a data key outside the plan's labels is a one-line error, exit 2
    bad = tmp_path / "bad.csv"
    bad.write_text("user_id,key,value\nu1,zzz,0.5\n")
    r = runner.invoke(main, ["perturb", str(plan_path), "--input", str(bad), "-o", str(tmp_path / "x.npz")])
    assert r.exit_code == 2 and "zzz" in r.output
    # tampered plan: exit 1
    plan = json.loads(plan_path.read_text())
    plan["params"]["p"] = 0.9999
    plan_path.write_text(json.dumps(plan))
    assert runner.invoke(main, ["verify", str(plan_path)]).exit_code == 1


def test_load_key_value_data_generic(tmp_path):
    f = tmp_path / "kv.csv"
    f.write_text("user_id,key,value\n2,10,0.5\n1,9,-1\n2,9,1\n")
    kv = P.load_key_value_data(f)
    assert kv.labels == ["9", "10"] and kv.n_users == 2
    assert kv.set_sizes().tolist() == [1, 2]
    f.write_text("user_id,key,value\n1,9,0.5\n1,9,0.1\n")
    from ldpplan.planner.errors import InputDataError

    with pytest.raises(InputDataError, match="twice"):
        P.load_key_value_data(f)


def test_auto_padding_flags_a_choice_at_the_search_bound():
    spec = {"mechanism": "pckv", "epsilon": 2.0, "keys": 20, "padding_length": "auto",
            "set_size_distribution": {"1": 0.2, "2": 0.3, "3": 0.3, "6": 0.2}, "users": 100_000}
    capped = api.make_plan({**spec, "max_padding_length": 2})
    assert capped["padding_length_selection"]["at_search_bound"] is True
    assert any("WARNING" in t.note for t in api.summarize(capped))
    free = api.make_plan({**spec, "max_padding_length": 10})
    assert free["padding_length_selection"]["at_search_bound"] is (free["params"]["padding_length"] == 10)

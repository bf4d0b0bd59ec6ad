"""PCKV simulation, inputs (read_inputs, data readers), MovieLens and the CLI end to end."""
import json

import numpy as np
import pytest
from click.testing import CliRunner

from ldpplan import mechanisms
from ldpplan.planner import api
from ldpplan.planner._report import SimulateOptions
from ldpplan.planner.cli import main
from ldpplan.planner.data import load_key_value_data
from ldpplan.planner.errors import InputDataError, SpecError
from ldpplan.planner.pckv import FAMILY


ISSUE_SPEC = {"mechanism": "pckv-ue", "epsilon": 1.0, "keys": 100, "padding_length": 1, "allocation": "optimized"}


def test_simulate_synthetic_aggregate_and_runtime_agree_with_theory():
    plan = api.make_plan({**ISSUE_SPEC, "epsilon": 3.0, "users": 30_000})
    for mode in ("aggregate", "runtime"):
        rep = api.simulate(plan, SimulateOptions(trials=4, seed=2, mode=mode))
        row = rep.data["results"][0]["all keys"]
        # frequency MSE of (7): Theorem 4 is exact; 4 trials x 100 keys: relative sd of the mean ~ 0.07
        assert row["mse_frequency_empirical"] == pytest.approx(row["mse_frequency_theory"], rel=0.3)
        assert row["mse_mean"] <= row["mse_mean_theory"] * 1.3
        names = [r["mechanism"] for r in rep.data["results"]]
        assert names[0] == "pckv-ue (plan)" and "pckv-grr" in names
        naive = [r for r in rep.data["results"] if r["allocation"] == "naive" and r["mechanism"] == "pckv-ue"][0]
        assert naive["all keys"]["mse_mean"] > row["mse_mean"]      # optimized beats naive (Fig. 9)


def test_simulate_options_are_typed(tmp_path):
    plan = api.make_plan({**ISSUE_SPEC, "users": 2000})
    with pytest.raises(SpecError, match="valid: baselines, distribution, epsilons, top, users"):
        api.simulate(plan, SimulateOptions(trials=1, extra={"bogus": "1"}))
    with pytest.raises(SpecError, match="-O distribution"):
        api.simulate(plan, SimulateOptions(trials=1, extra={"distribution": "cauchy"}))
    rep = api.simulate(plan, SimulateOptions(trials=1, seed=1, extra={"top": "5", "users": "3000",
                                                                      "distribution": "gaussian"}))
    assert rep.data["setting"]["users"] == 3000 and rep.data["setting"]["top"] == 5
    png = tmp_path / "fig.png"
    rep.plot(str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert any("top-5" in t.title for t in rep.tables)
    calls = []
    api.simulate(plan, SimulateOptions(trials=2, seed=1), progress=lambda adv, total: calls.append((adv, total)))
    # the first call states the total (issue 27: no bar without one), then one step per run
    assert calls[0] == (0, len(calls) - 1) and calls[1:] == [(1, len(calls) - 1)] * (len(calls) - 1)


def test_cli_unknown_option_is_exit_2(tmp_path):
    plan_path = tmp_path / "plan.json"
    api.write_plan(api.make_plan({**ISSUE_SPEC, "users": 1000}), plan_path)
    r = CliRunner().invoke(main, ["simulate", str(plan_path), "-O", "bogus=1", "--trials", "1"])
    assert r.exit_code == 2 and "bogus" in r.output and "top" in r.output


def _kv_plan(**extra):
    return api.make_plan({"mechanism": "pckv-grr", "epsilon": 2.0, "domain": ["a", "b", "c", "d"],
                          "padding_length": 2, **extra})


def test_read_inputs_labels_indices_and_errors(tmp_path):
    plan = _kv_plan()
    f = tmp_path / "in.csv"
    f.write_text("user,key,value\nu1,a,0.5\nu1,c,-1\nu2,d,1\n")
    users = FAMILY.read_inputs(plan, f)
    assert users.n_users == 2 and users.user_ids.tolist() == ["u1", "u2"]
    assert users.keys.tolist() == [0, 2, 3] and users.values.tolist() == [0.5, -1.0, 1.0]
    assert len(mechanisms.load(plan).perturb(users, rng=np.random.default_rng(0))) == 2
    f.write_text("user,key,value\nu1,zzz,0.5\n")
    with pytest.raises(InputDataError, match="zzz"):
        FAMILY.read_inputs(plan, f)
    f.write_text("user,key,value\nu1,a,1.5\n")
    with pytest.raises(InputDataError, match=r"\[-1, 1\]"):
        FAMILY.read_inputs(plan, f)
    f.write_text("user,key,value\nu1,a,nan\n")
    with pytest.raises(InputDataError, match="finite"):
        FAMILY.read_inputs(plan, f)
    dropping = _kv_plan(out_of_domain_keys="drop", values="clip")
    f.write_text("user,key,value\nu1,zzz,0.5\nu1,a,1.5\n")
    users = FAMILY.read_inputs(dropping, f)
    assert users.dropped_pairs == 1 and users.keys.tolist() == [0]
    rep = mechanisms.load(dropping).perturb(users, rng=np.random.default_rng(0))
    assert len(rep) == 1
    # a count domain reads 0-based indices
    counted = api.make_plan({"mechanism": "pckv-ue", "epsilon": 1.0, "domain": 5})
    f.write_text("user,key,value\n7,4,0.25\n7,0,0\n")
    assert FAMILY.read_inputs(counted, f).keys.tolist() == [0, 4]
    f.write_text("user,key,value\n7,5,0.25\n")
    with pytest.raises(InputDataError, match="0..4"):
        FAMILY.read_inputs(counted, f)
    assert "user,key,value" in FAMILY.input_doc


def test_load_key_value_data_generic(tmp_path):
    f = tmp_path / "kv.csv"
    f.write_text("user_id,key,value\n2,10,0.5\n1,9,-1\n2,9,1\n")
    kv = load_key_value_data(f)
    assert kv.labels == ["9", "10"] and kv.n_users == 2
    assert kv.set_sizes().tolist() == [1, 2]
    f.write_text("user,key,value\n1,9,0.5\n1,9,0.1\n")
    with pytest.raises(InputDataError, match="twice"):
        load_key_value_data(f)
    f.write_text("who,key,value\n1,9,0.5\n")
    with pytest.raises(InputDataError, match="user"):
        load_key_value_data(f)


def test_plan_from_a_data_file_is_rederived(tmp_path):
    f = tmp_path / "kv.csv"
    rng = np.random.default_rng(4)
    rows = ["user,key,value"]
    for u in range(300):
        for k in rng.choice(8, size=1 + u % 4, replace=False):
            rows.append(f"u{u},k{k},{rng.uniform(-1, 1):.3f}")
    f.write_text("\n".join(rows) + "\n")
    spec = {"mechanism": "pckv", "epsilon": 2.0, "domain": "data", "padding_length": "auto", "data": "kv.csv",
            "max_padding_length": 6}
    plan = api.make_plan(spec, base_dir=tmp_path)
    assert plan["domain"]["labels"] == [f"k{i}" for i in range(8)]
    assert {x["source"] for x in plan["planning_inputs"]} == {str(f)}
    res = api.verify_plan(plan)
    assert res.holds and any("recomputed from the planning inputs" in c for c in res.details["checks"])
    bad = json.loads(json.dumps(plan))
    bad["predicted"]["mse_mean"]["value"] *= 0.5                       # a claim about utility, recomputed
    assert "predicted.mse_mean" in api.verify_plan(bad).message
    bad = json.loads(json.dumps(plan))
    other = [c for c in bad["solver"]["padding_length_selection"]["candidates"]
             if c["padding_length"] != plan["params"]["padding_length"]][0]
    other["objective"] = -1.0                                          # make another L look best
    assert not api.verify_plan(bad).holds
    f.write_text("user,key,value\nu1,k0,0.5\nu2,k1,0.5\n")           # the data changed since planning
    assert not api.verify_plan(plan).holds
    f.unlink()                                                         # the data is gone: privacy still checks
    res = api.verify_plan(plan)
    assert res.holds and any("not readable" in c for c in res.details["checks"])


@pytest.fixture(scope="module")
def movielens_plan(shared_data_dir):
    spec = {"mechanism": "pckv", "epsilon": 4.0, "domain": "data", "padding_length": "auto", "objective_keys": 50,
            "max_padding_length": 60, "data": str(shared_data_dir / "movielens_ratings.csv")}
    return api.make_plan(spec)


@pytest.mark.slow
def test_movielens_plan_and_simulation(movielens_plan, shared_data_dir):
    plan = movielens_plan
    assert plan["params"]["domain_size"] == len(plan["domain"]["labels"]) == 9066
    assert plan["predicted"]["mse_frequency"]["users"] == 671
    whats = [x["what"] for x in plan["planning_inputs"]]
    assert any(w.startswith("key domain") for w in whats) and any("set sizes" in w for w in whats)
    assert all(x["source"].endswith("movielens_ratings.csv") and x["private"] is False for x in plan["planning_inputs"])
    assert api.verify_plan(plan).holds
    rep = api.simulate(plan, SimulateOptions(data=str(shared_data_dir / "movielens_ratings.csv"), trials=2, seed=0))
    titles = [t.title for t in rep.tables]
    assert any("top-50" in t for t in titles) and any("all keys" in t for t in titles)
    for r in rep.data["results"]:
        top = r["top-50 keys"]
        assert 0 <= top["mse_frequency"] < 1 and 0 <= top["mse_mean"] <= 4
        assert np.isfinite(top["mse_frequency_theory"])
    assert rep.data["setting"]["users"] == 671


@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
def test_movielens_example_works_without_data_dir(monkeypatch, shared_data_dir):
    monkeypatch.delenv("LDPPLAN_DATA_DIR", raising=False)
    monkeypatch.chdir(shared_data_dir.parent.parent)          # ./shared/data is found from here
    spec = {**api.example_spec("pckv-movielens"), "max_padding_length": 8}
    plan = api.make_plan(spec)
    assert plan["domain"]["size"] == 9066 and plan["planning_inputs"]
    assert "pckv-synthetic" in api.list_examples()


def test_example_files_plan(monkeypatch, shared_data_dir):
    from pathlib import Path

    monkeypatch.setenv("LDPPLAN_DATA_DIR", str(shared_data_dir))
    examples = Path(__file__).resolve().parents[1] / "examples"
    plan = api.make_plan(examples / "pckv.toml")
    assert plan["mechanism"] == "pckv-ue" and plan["params"]["domain_size"] == 100


def test_cli_end_to_end(tmp_path):
    runner = CliRunner()
    spec = tmp_path / "kv.toml"
    spec.write_text('mechanism = "pckv-grr"\nepsilon = 2.0\ndomain = ["a", "b", "c", "d"]\npadding_length = 2\n'
                    'allocation = "optimized"\nvalues = "clip"\n')
    plan_path = tmp_path / "plan.json"
    r = runner.invoke(main, ["plan", str(spec), "-o", str(plan_path)])
    assert r.exit_code == 0, r.output
    assert runner.invoke(main, ["verify", str(plan_path)]).exit_code == 0
    data = tmp_path / "users.csv"
    rows = ["user,key,value"] + [f"u{i},{'abcd'[i % 4]},{(i % 7) / 3 - 1}" for i in range(400)] + ["u1,c,1.7"]
    data.write_text("\n".join(rows) + "\n")
    rep = tmp_path / "rep.npz"
    r = runner.invoke(main, ["perturb", str(plan_path), "--input", str(data), "-o", str(rep), "--seed", "1"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(main, ["estimate", str(plan_path), str(rep), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["labels"] == ["a", "b", "c", "d"] and len(out["frequency"]) == len(out["mean"]) == 4
    r = runner.invoke(main, ["estimate", str(plan_path), str(rep), "--json", "--method", "empirical"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(main, ["simulate", str(plan_path), "--data", str(data), "--trials", "2", "--seed", "3"])
    assert r.exit_code == 0, r.output
    assert "top-50" in r.output
    bad = tmp_path / "bad.csv"
    bad.write_text("user,key,value\nu1,zzz,0.5\n")
    r = runner.invoke(main, ["perturb", str(plan_path), "--input", str(bad), "-o", str(tmp_path / "x.npz")])
    assert r.exit_code == 2 and "zzz" in r.output
    plan = json.loads(plan_path.read_text())
    plan["params"]["p"] = 0.9999
    plan_path.write_text(json.dumps(plan))
    assert runner.invoke(main, ["verify", str(plan_path)]).exit_code == 1

"""IDUE simulation on real data (MovieLens) and the simulate / perturb / estimate CLI."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from ldpplan import planner
from ldpplan.planner import SimulateOptions
from ldpplan.planner.cli import main


def movielens_spec(data_dir, mechanism="idue", **extra):
    spec = {
        "mechanism": mechanism, "model": "opt0",
        "domain_csv": {"path": str(data_dir / "movielens_ratings.csv"), "column": "movieId"},
        "assignment_seed": 0,
        "levels": [{"name": "eps", "epsilon": 1.0, "share": 0.05},
                   {"name": "1.2eps", "epsilon": 1.2, "share": 0.05},
                   {"name": "2eps", "epsilon": 2.0, "share": 0.90}],
    }
    spec.update(extra)
    return spec


def test_movielens_single_item_empirical_matches_theory_and_beats_baselines(shared_data_dir):
    plan = planner.make_plan(movielens_spec(shared_data_dir))
    assert len(plan["items"]) == 9066
    rep = planner.simulate(plan, SimulateOptions(data=str(shared_data_dir / "movielens_ratings.csv"), trials=10, seed=7))
    res = rep.data["points"][0]["mechanisms"]
    assert rep.data["n"] == 100_004
    for name, r in res.items():
        # the MSE is a sum over 9,066 items: its trial-to-trial spread gives the tolerance
        assert abs(r["empirical_mse"] - r["theoretical_mse"]) < 5 * r["empirical_mse_se"] + 1e-3 * r["theoretical_mse"], name
    idue = res["IDUE opt0"]["empirical_mse"]
    assert idue < res["RAPPOR"]["empirical_mse"] and idue < res["OUE"]["empirical_mse"]
    assert res["IDUE opt0"]["theoretical_mse"] < min(res["RAPPOR"]["theoretical_mse"], res["OUE"]["theoretical_mse"])


def test_movielens_item_sets(shared_data_dir):
    plan = planner.make_plan(movielens_spec(shared_data_dir, "idue-ps", padding_length=20))
    rep = planner.simulate(plan, SimulateOptions(data=str(shared_data_dir / "movielens_ratings.csv"), trials=8, seed=3))
    assert rep.data["n"] == 671
    res = rep.data["points"][0]["mechanisms"]
    for name, r in res.items():
        assert abs(r["empirical_mse"] - r["theoretical_mse"]) < 5 * r["empirical_mse_se"] + 1e-3 * r["theoretical_mse"], name
    assert res["IDUE opt0"]["theoretical_mse"] < res["OUE"]["theoretical_mse"]


def test_runtime_mode_agrees_with_aggregate_mode():
    plan = planner.make_plan(planner.example_spec("three-levels"))
    opts = dict(trials=6, seed=11, extra={"n": "20000"})
    agg = planner.simulate(plan, SimulateOptions(mode="aggregate", **opts)).data["points"][0]["mechanisms"]
    run = planner.simulate(plan, SimulateOptions(mode="runtime", **opts)).data["points"][0]["mechanisms"]
    for name in agg:
        assert agg[name]["theoretical_mse"] == pytest.approx(run[name]["theoretical_mse"])
        se = np.hypot(agg[name]["empirical_mse_se"], run[name]["empirical_mse_se"])
        assert abs(agg[name]["empirical_mse"] - run[name]["empirical_mse"]) < 5 * se


def test_cli_simulate_json_plot_and_seed(tmp_path):
    plan_path = tmp_path / "p.json"
    runner = CliRunner()
    assert runner.invoke(main, ["plan", "--example", "health", "-o", str(plan_path)]).exit_code == 0
    r = runner.invoke(main, ["simulate", str(plan_path), "--trials", "2", "--seed", "5", "--json", "-O", "n=5000"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["seed"] == 5 and out["trials"] == 2 and out["n"] == 5000
    png = tmp_path / "fig.png"
    r = runner.invoke(main, ["simulate", str(plan_path), "--trials", "2", "--seed", "5", "-O", "n=5000",
                             "-O", "sweep=1,2", "--plot", str(png)])
    assert r.exit_code == 0, r.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    r = runner.invoke(main, ["simulate", str(plan_path), "-O", "sweep=a,b"])
    assert r.exit_code == 2


def test_cli_perturb_estimate_roundtrip(tmp_path):
    runner = CliRunner()
    plan_path = tmp_path / "p.json"
    runner.invoke(main, ["plan", "--example", "health", "-o", str(plan_path)])
    rng = np.random.default_rng(0)
    labels = np.array(["hiv", "anemia", "headache", "stomachache", "toothache"])
    truth = np.array([0.1, 0.4, 0.3, 0.15, 0.05])
    data = rng.choice(labels, size=20000, p=truth)
    (tmp_path / "in.csv").write_text("item\n" + "\n".join(data) + "\n")
    r = runner.invoke(main, ["perturb", str(plan_path), "--input", str(tmp_path / "in.csv"),
                             "-o", str(tmp_path / "r.npz"), "--seed", "1"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(main, ["estimate", str(plan_path), str(tmp_path / "r.npz"), "--json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)["rows"]
    emp = {lab: np.mean(data == lab) for lab in labels}
    for row in rows:
        assert abs(row["frequency"] - emp[row["item"]]) < 5 * row["std. error"]
    (tmp_path / "bad.csv").write_text("item\nmalaria\n")
    r = runner.invoke(main, ["perturb", str(plan_path), "--input", str(tmp_path / "bad.csv"), "-o", str(tmp_path / "x.npz")])
    assert r.exit_code == 2 and not (tmp_path / "x.npz").exists()

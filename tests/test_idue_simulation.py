"""IDUE simulation on real data (MovieLens), simulate options, input files, and the simulate / perturb / estimate CLI."""
from __future__ import annotations

import copy
import json

import numpy as np
import pytest
from click.testing import CliRunner

from ldpplan import planner
from ldpplan.planner import SimulateOptions
from ldpplan.planner.cli import main
from ldpplan.planner.errors import InputDataError, SpecError
from ldpplan.planner.idue import FAMILY
from ldpplan.planner.idue.simulate import RE_NOTE



def example(name):
    return copy.deepcopy(FAMILY.examples[name])


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


@pytest.mark.slow
def test_movielens_single_item_empirical_matches_theory_and_beats_baselines(shared_data_dir):
    plan = planner.make_plan(movielens_spec(shared_data_dir))
    assert plan["domain"]["size"] == 9066 and plan["planning_inputs"][0]["source"].endswith("movielens_ratings.csv")
    assert "domain_csv" not in plan["spec"]
    rep = FAMILY.simulate(plan, SimulateOptions(data=str(shared_data_dir / "movielens_ratings.csv"), trials=10, seed=7))
    res = rep.data["points"][0]["mechanisms"]
    assert rep.data["n"] == 100_004
    for name, r in res.items():
        # the MSE is a sum over 9,066 items: its trial-to-trial spread gives the tolerance
        assert abs(r["empirical_mse"] - r["theoretical_mse"]) < 5 * r["empirical_mse_se"] + 1e-3 * r["theoretical_mse"], name
    idue = res["IDUE opt0"]["empirical_mse"]
    assert idue < res["RAPPOR"]["empirical_mse"] and idue < res["OUE"]["empirical_mse"]
    assert res["IDUE opt0"]["theoretical_mse"] < min(res["RAPPOR"]["theoretical_mse"], res["OUE"]["theoretical_mse"])


@pytest.mark.slow
def test_movielens_item_sets_predicted_in_estimator_units(shared_data_dir):
    plan = planner.make_plan(movielens_spec(shared_data_dir, "idue-ps", padding_length=20))
    # the worst-case MSE includes the L^2 = 400 scaling of the IDUE-PS estimator (8.6e6, not 2.15e4)
    assert plan["predicted"]["worst_case_mse_per_user"]["value"] == pytest.approx(8.6e6, rel=0.02)
    rep = FAMILY.simulate(plan, SimulateOptions(data=str(shared_data_dir / "movielens_ratings.csv"), trials=8, seed=3))
    assert rep.data["n"] == 671
    res = rep.data["points"][0]["mechanisms"]
    for name, r in res.items():
        assert abs(r["empirical_mse"] - r["theoretical_mse"]) < 5 * r["empirical_mse_se"] + 1e-3 * r["theoretical_mse"], name
    assert res["IDUE opt0"]["theoretical_mse"] < res["OUE"]["theoretical_mse"]
    # on MovieLens every user's set is long: the variance term is bounded by the worst case
    assert res["IDUE opt0"]["theoretical_mse"] <= plan["predicted"]["worst_case_mse_per_user"]["value"] * 1.5


def test_runtime_mode_agrees_with_aggregate_mode():
    plan = planner.make_plan(example("three-levels"))
    opts = dict(trials=6, seed=11, extra={"n": "20000"})
    agg = FAMILY.simulate(plan, SimulateOptions(mode="aggregate", **opts)).data["points"][0]["mechanisms"]
    run = FAMILY.simulate(plan, SimulateOptions(mode="runtime", **opts)).data["points"][0]["mechanisms"]
    for name in agg:
        assert agg[name]["theoretical_mse"] == pytest.approx(run[name]["theoretical_mse"])
        se = np.hypot(agg[name]["empirical_mse_se"], run[name]["empirical_mse_se"])
        assert abs(agg[name]["empirical_mse"] - run[name]["empirical_mse"]) < 5 * se


def test_options_model_and_re_topk_definition():
    plan = planner.make_plan(example("health"))
    with pytest.raises(SpecError) as info:
        FAMILY.simulate(plan, SimulateOptions(trials=2, extra={"bogus": "1"}))
    assert info.value.field == "-O bogus" and "top_k" in info.value.rule and "sweep" in info.value.rule
    with pytest.raises(SpecError, match="sweep"):
        FAMILY.simulate(plan, SimulateOptions(trials=2, extra={"sweep": "a,b"}))
    with pytest.raises(SpecError, match="sweep"):
        FAMILY.simulate(plan, SimulateOptions(trials=2, extra={"sweep": "1,-2"}))
    progress = []
    rep = FAMILY.simulate(plan, SimulateOptions(trials=3, seed=2, extra={"n": "4000", "top_k": "2", "sweep": "1,2"}),
                          progress=lambda adv, total: progress.append((adv, total)))
    assert progress[0] == (0, 30)  # the total first (issue 27), then 2 points x 3 trials x 5 mechanisms
    assert len(progress) == 1 + 2 * 3 * 5 and {t for _, t in progress} == {30} and sum(a for a, _ in progress) == 30
    table = rep.tables[0]
    assert "RE(top-2)" in table.columns and "|f_hat_i - f_i| / f_i" in table.note and RE_NOTE in table.note
    names = {row[0] for row in table.rows}
    assert names == {"IDUE opt0", "IDUE opt1", "IDUE opt2", "RAPPOR", "OUE"}
    assert [p["epsilon_min"] for p in rep.data["points"]] == [1.0, 2.0]
    assert set(dict(FAMILY.options_model.model_fields)) == {"top_k", "sweep", "synthetic", "n"}


def test_read_inputs_single_items_and_sets(tmp_path):
    plan = planner.make_plan(example("health"))
    (tmp_path / "in.csv").write_text("item\nhiv\ntoothache\nanemia\n")
    np.testing.assert_array_equal(FAMILY.read_inputs(plan, tmp_path / "in.csv"), [0, 4, 1])
    (tmp_path / "bad.csv").write_text("item\nhiv\nmalaria\n")
    with pytest.raises(InputDataError, match=r"line 3: item: must be one of domain.labels.*'malaria'"):
        FAMILY.read_inputs(plan, tmp_path / "bad.csv")
    (tmp_path / "nocol.csv").write_text("thing\nhiv\n")
    with pytest.raises(InputDataError, match="'item'"):
        FAMILY.read_inputs(plan, tmp_path / "nocol.csv")
    counted = planner.make_plan(example("three-levels"))  # labels null: 0-based indices
    (tmp_path / "idx.csv").write_text("item\n0\n99\n5\n")
    np.testing.assert_array_equal(FAMILY.read_inputs(counted, tmp_path / "idx.csv"), [0, 99, 5])
    (tmp_path / "idx_bad.csv").write_text("item\n100\n")
    with pytest.raises(InputDataError, match=r"0-based index in \[0, 100\)"):
        FAMILY.read_inputs(counted, tmp_path / "idx_bad.csv")
    ps = planner.make_plan(example("three-levels-itemsets"))
    (tmp_path / "sets.csv").write_text("user,item\nbob,7\nann,3\nbob,2\nbob,7\n")
    indptr, indices = FAMILY.read_inputs(ps, tmp_path / "sets.csv")
    np.testing.assert_array_equal(indptr, [0, 2, 3])  # bob first (first appearance), repeated row once
    np.testing.assert_array_equal(indices, [2, 7, 3])
    with pytest.raises(InputDataError, match="'user'"):
        FAMILY.read_inputs(ps, tmp_path / "idx.csv")
    assert "'item'" in FAMILY.input_doc and "'user,item'" in FAMILY.input_doc


@pytest.mark.slow
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
                             "-O", "sweep=1", "--plot", str(png)])  # a single point must still plot
    assert r.exit_code == 0, r.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert runner.invoke(main, ["simulate", str(plan_path), "-O", "sweep=a,b"]).exit_code == 2
    assert runner.invoke(main, ["simulate", str(plan_path), "-O", "bogus=1"]).exit_code == 2


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
    doc = json.loads(r.output)
    emp = {lab: np.mean(data == lab) for lab in labels}
    assert doc["labels"] == list(labels) and doc["n"] == 20000 and doc["method"] == "empirical"
    for lab, freq, se in zip(doc["labels"], doc["frequency"], doc["std_error"]):
        assert abs(freq - emp[lab]) < 5 * se
    (tmp_path / "bad.csv").write_text("item\nmalaria\n")
    r = runner.invoke(main, ["perturb", str(plan_path), "--input", str(tmp_path / "bad.csv"), "-o", str(tmp_path / "x.npz")])
    assert r.exit_code == 2 and not (tmp_path / "x.npz").exists()


def test_item_set_simulation_synthetic_runtime_mode():
    plan = planner.make_plan(example("three-levels-itemsets"))
    rep = FAMILY.simulate(plan, SimulateOptions(trials=4, seed=1, mode="runtime", extra={"n": "3000"}))
    res = rep.data["points"][0]["mechanisms"]
    assert set(res) == {"IDUE opt0", "RAPPOR", "OUE"} and rep.data["n"] == 3000
    for name, r in res.items():
        # 4 trials: a loose but variance-derived check (the MSE is a sum over 1,000 items)
        assert abs(r["empirical_mse"] - r["theoretical_mse"]) < 6 * r["empirical_mse_se"] + 0.05 * r["theoretical_mse"], name


def test_single_item_reader_refuses_item_sets(tmp_path):
    plan = planner.make_plan(example("health"))
    path = tmp_path / "sets.csv"
    path.write_text("user,item\n1,hiv\n1,anemia\n2,anemia\n")
    with pytest.raises(InputDataError, match="user '1' appears twice"):
        FAMILY.read_inputs(plan, path)
    path.write_text("user,item\n1,hiv\n2,anemia\n")
    assert FAMILY.read_inputs(plan, path).tolist() == [0, 1]

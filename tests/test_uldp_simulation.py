"""ULDP simulations: Fig. 5 on GSS, typed options, progress totals, the PUM simulation."""
from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from ldpplan import planner
from ldpplan.planner._report import SimulateOptions
from ldpplan.planner.cli import main
from ldpplan.planner.errors import SpecError
from ldpplan.planner.uldp import FAMILY



@pytest.fixture(scope="module")
def plans():
    return {name: planner.make_plan(planner.example_spec(name)) for name in FAMILY.examples}


def test_gss_fig5_aggregate_mode(shared_data_dir, plans):
    calls = []
    report = FAMILY.simulate(plans["uldp-urr"], SimulateOptions(data=str(shared_data_dir / "gss_vocab.csv"), trials=1,
                                                               seed=3, extra={"epsilons": "1,ln"}),
                             progress=lambda advance, total: calls.append((advance, total)))
    assert calls[0] == (0, 2) and calls[-1] == (1, 2) and len(calls) == 3  # a real total from the start
    data = report.data
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
            assert res[(eps, m, "em")]["tv"] < 2 * th[(eps, m)]["tv"]


def test_runtime_mode_matches_theory_on_synthetic_users(plans):
    report = FAMILY.simulate(plans["uldp-urap"], SimulateOptions(trials=2, seed=1, mode="runtime",
                                                                extra={"epsilons": "2", "n": "8000",
                                                                       "max_iter": "5", "methods": "emp,em"}))
    res = {(d["mechanism"], d["method"]): d for d in report.data["results"]}
    th = {d["mechanism"]: d for d in report.data["theory_empirical"]}
    for m in ("RR", "RAPPOR", "uRR", "uRAP"):
        assert 0.5 * th[m]["tv"] < res[(m, "emp")]["tv"] < 2 * th[m]["tv"]


def test_options_are_typed(plans):
    plan = plans["uldp-urr"]
    for extra, key in (({"bogus": "1"}, "-O bogus"), ({"epsilon": "1"}, "-O epsilon"), ({"n": "zero"}, "-O n"),
                       ({"sample": "boot"}, "-O sample"), ({"epsilons": "1,x"}, "-O epsilons"),
                       ({"methods": "emp,mle"}, "-O methods")):
        with pytest.raises(SpecError) as info:
            FAMILY.simulate(plan, SimulateOptions(trials=1, extra=extra))
        assert info.value.field == key
    with pytest.raises(SpecError, match="valid: .*epsilons"):
        FAMILY.simulate(plan, SimulateOptions(trials=1, extra={"epsilon": "1"}))


def test_pum_simulation_runs_the_pum(plans):
    calls = []
    report = FAMILY.simulate(plans["uldp-pum"], SimulateOptions(trials=2, seed=5, extra={"epsilons": "1,4",
                                                                                         "n": "50000"}),
                             progress=lambda a, t: calls.append((a, t)))
    assert calls[0] == (0, 4)
    data = report.data
    assert data["domain_size"] == 625 and data["intermediate_size"] == 627 and data["backgrounds"] == ["none", "true"]
    tv = {(d["epsilon"], d["background"], d["method"]): d["tv"] for d in data["results"]}
    # with the true pi_k (case III of Fig. 8) eq. (21) is at least as accurate as the fallback (case I)
    assert tv[(4.0, "true", "emp")] < tv[(4.0, "none", "emp")]
    assert tv[(4.0, "true", "emp")] < tv[(1.0, "true", "emp")]
    assert "PUM" in report.tables[0].title
    with pytest.raises(SpecError, match="--data"):
        FAMILY.simulate(plans["uldp-pum"], SimulateOptions(data="x.csv", trials=1))


def test_cli_simulate_option_errors_exit_2(tmp_path):
    runner = CliRunner()
    out = tmp_path / "urr.json"
    assert runner.invoke(main, ["plan", "--example", "uldp-urr", "-o", str(out)]).exit_code == 0
    r = runner.invoke(main, ["simulate", str(out), "--trials", "1", "-O", "bogus=1"])
    assert r.exit_code == 2 and "epsilons" in r.output
    r = runner.invoke(main, ["simulate", str(out), "--trials", "1", "--seed", "1", "-O", "epsilons=2",
                             "-O", "n=2000", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["epsilons"] == [2.0]

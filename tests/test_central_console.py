"""Every guarantee on the screen (issue 27, point 3): the central guarantee in ``plan``, ``verify`` and
``simulate``; ``explain --shuffle-n`` takes the plan's delta; the shuffler's gain is against the best
local plan of the family; the candidates' line names the central target when it binds."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ldpplan.planner import make_plan
from ldpplan.planner.cli import main

CENTRAL = {"mechanism": "rr", "domain": 1000, "users": 10**5, "target": {"central_epsilon": 1.0},
           "shuffle": {"n": 10**5, "delta": 1e-8}}


@pytest.fixture(scope="module")
def central_plan(tmp_path_factory):
    path = tmp_path_factory.mktemp("central") / "plan.json"
    result = CliRunner().invoke(main, ["plan", "--json", "-o", str(path), _spec_file(path.parent)])
    assert result.exit_code == 0, result.output
    return path


def _spec_file(folder) -> str:
    spec = folder / "spec.json"
    spec.write_text(json.dumps(CENTRAL))
    return str(spec)


def _shows_central(output: str, plan: dict) -> None:
    shuffled = plan["guarantee"]["shuffled"]
    assert "Central guarantee through a shuffler (guarantee.shuffled)" in output
    for label in ("central epsilon (nats, sound upper bound)", "delta", "n users shuffled",
                  "lower bound (a concrete pair needs)"):
        assert label in output
    assert f"{shuffled['epsilon']:.4g}" in output and f"{shuffled['epsilon_lower']:.4g}" in output
    assert str(shuffled["n"]) in output and f"{shuffled['delta']:.4g}" in output
    assert shuffled["source"].partition("; lower: ")[0][:40] in " ".join(output.split())


@pytest.mark.slow  # the central target's search: seconds
def test_plan_and_verify_print_the_central_guarantee(central_plan):
    plan = json.loads(central_plan.read_text())
    runner = CliRunner(env={"COLUMNS": "200"})
    planned = runner.invoke(main, ["plan", _spec_file(central_plan.parent)])
    assert planned.exit_code == 0
    _shows_central(planned.output, plan)
    # the candidates' line names the central target, not "epsilon target binds epsilon"
    assert "epsilon target binds epsilon" not in planned.output
    # (a table's title wraps at the table's width)
    assert "the central target 1 through the shuffler binds epsilon" in " ".join(planned.output.split())
    verified = runner.invoke(main, ["verify", str(central_plan)])
    assert verified.exit_code == 0
    _shows_central(verified.output, plan)


@pytest.mark.slow
def test_simulate_prints_the_central_guarantee(central_plan):
    plan = json.loads(central_plan.read_text())
    result = CliRunner(env={"COLUMNS": "200"}).invoke(main, ["simulate", str(central_plan), "--trials", "1",
                                                             "--seed", "1"])
    assert result.exit_code == 0, result.output
    _shows_central(result.output, plan)


def test_a_shuffled_plan_shows_its_central_guarantee_fast(tmp_path):
    """The fast tier's check: an epsilon-target k-RR plan with [shuffle], through plan and verify."""
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"mechanism": "rr", "domain": 20, "users": 10**4, "target": {"epsilon": 3.0},
                                "shuffle": {"n": 10**4, "delta": 1e-6}}))
    runner = CliRunner(env={"COLUMNS": "200"})
    out = tmp_path / "plan.json"
    planned = runner.invoke(main, ["plan", str(spec), "-o", str(out)])
    assert planned.exit_code == 0, planned.output
    plan = json.loads(out.read_text())
    _shows_central(planned.output, plan)
    verified = runner.invoke(main, ["verify", str(out)])
    assert verified.exit_code == 0 and "guarantee.shuffled" in verified.output and "1e-06" in verified.output


def test_plans_without_a_shuffler_print_no_central_guarantee(tmp_path):
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"mechanism": "rr", "domain": 20, "users": 1000, "target": {"epsilon": 2.0}}))
    result = CliRunner().invoke(main, ["plan", str(spec)])
    assert result.exit_code == 0 and "Central guarantee" not in result.output


@pytest.mark.slow
def test_explain_shuffle_n_takes_the_plans_delta(central_plan, tmp_path):
    runner = CliRunner()
    result = runner.invoke(main, ["explain", str(central_plan), "--shuffle-n", "50000", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["delta"] == CENTRAL["shuffle"]["delta"] and out["n"] == 50000
    given = json.loads(runner.invoke(main, ["explain", str(central_plan), "--shuffle-n", "50000", "--delta", "1e-8",
                                            "--json"]).output)
    assert given == out
    # a plan without a [shuffle] block still needs --delta (one line naming it, exit 2)
    plain = tmp_path / "plain.json"
    spec = tmp_path / "plain-spec.json"
    spec.write_text(json.dumps({"mechanism": "rr", "domain": 20, "users": 1000, "target": {"epsilon": 2.0}}))
    assert runner.invoke(main, ["plan", str(spec), "-o", str(plain)]).exit_code == 0
    refused = runner.invoke(main, ["explain", str(plain), "--shuffle-n", "100"])
    assert refused.exit_code == 2 and "--delta" in refused.output


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", ["rr", "glh"])
def test_shuffler_gain_is_against_the_best_local_plan(mechanism):
    """At central epsilon 1 on 1,000 items GLH is the best local plan; the gain of either shuffled
    plan is against it (recomputed here from the solvers), not against k-RR."""
    from ldpplan.solvers.pie import solve_glh, total_l2_loss_rr

    spec = dict(CENTRAL, mechanism=mechanism)
    plan = make_plan(spec)
    rr_local = total_l2_loss_rr(1.0, 1000, 10**5)
    glh_local = solve_glh(n=10**5, domain_size=1000, epsilon=1.0, g_max=2**31 - 1).objective  # the spec's default g_max
    assert glh_local < rr_local  # the case of the issue: k-RR is not the best local plan
    predicted = plan["predicted"]
    assert predicted["l2_loss_total_without_shuffler"]["value"] == pytest.approx(glh_local, rel=1e-9)
    assert "best local plan: glh" in predicted["l2_loss_total_without_shuffler"]["source"]
    assert predicted["shuffler_gain"]["value"] == pytest.approx(glh_local / predicted["l2_loss_total"]["value"],
                                                                rel=1e-9)

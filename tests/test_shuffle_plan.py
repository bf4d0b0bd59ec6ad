"""The [shuffle] spec block and guarantee.shuffled through the family protocol (issue 21)."""
from __future__ import annotations

import copy

import pytest

from ldpplan.mechanisms._amplification import SOURCE_TWO_LEVEL, blanket_delta_upper, unary_pairs

from ldpplan.planner import SpecError, example_spec, make_plan, verify_plan
from ldpplan.planner.families import all_examples
from ldpplan.planner.shuffle import local_epsilon_of_plan, shuffle_bound

SHUFFLE = {"n": 100_000, "delta": 1e-8}
EXAMPLES = sorted(all_examples())


def _with_shuffle(name, block=SHUFFLE):
    spec = dict(example_spec(name))
    spec["shuffle"] = dict(block)
    return spec


@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
@pytest.mark.parametrize("name", EXAMPLES)
def test_every_family_states_the_central_guarantee_or_refuses(name):
    family, _ = all_examples()[name]
    if family.name == "uldp":
        with pytest.raises(SpecError, match="shuffle"):
            make_plan(_with_shuffle(name))
        return
    plan = make_plan(_with_shuffle(name))
    shuffled = plan["guarantee"]["shuffled"]
    assert set(shuffled) == {"n", "delta", "epsilon", "epsilon_lower", "source"}
    epsilon0 = local_epsilon_of_plan(plan)
    assert 0 <= shuffled["epsilon_lower"] <= shuffled["epsilon"] <= epsilon0
    assert plan["verification"]["holds"] is True
    assert verify_plan(plan).holds
    tampered = copy.deepcopy(plan)
    tampered["guarantee"]["shuffled"]["epsilon"] = shuffled["epsilon"] * 0.9
    check = verify_plan(tampered)
    assert not check.holds and "guarantee.shuffled.epsilon" in check.message
    dropped = copy.deepcopy(plan)
    del dropped["guarantee"]["shuffled"]
    assert not verify_plan(dropped).holds


def test_krr_plan_uses_the_randomizer_specific_bound():
    plan = make_plan(_with_shuffle("pie-rr"))
    epsilon0 = plan["guarantee"]["epsilon"]
    bound = shuffle_bound(epsilon0, SHUFFLE["n"], SHUFFLE["delta"], mechanism="rr",
                          domain_size=plan["domain"]["size"])
    assert plan["guarantee"]["shuffled"]["epsilon"] == bound.epsilon
    assert "blanket" in plan["guarantee"]["shuffled"]["source"]


def test_idue_uses_the_plain_ldp_epsilon_of_lemma_1():
    plan = make_plan(_with_shuffle("three-levels"))
    assert local_epsilon_of_plan(plan) == plan["guarantee"]["ldp_epsilon"]
    bound = shuffle_bound(plan["guarantee"]["ldp_epsilon"], SHUFFLE["n"], SHUFFLE["delta"])
    shuffled = plan["guarantee"]["shuffled"]
    if shuffled["source"].startswith(SOURCE_TWO_LEVEL):  # the unary encoding's own blanket (issue 26): tighter
        levels = plan["params"]["levels"]
        pairs = unary_pairs([lv["a"] for lv in levels], [lv["b"] for lv in levels])
        assert shuffled["epsilon"] < bound.epsilon
        assert blanket_delta_upper(shuffled["epsilon"], SHUFFLE["n"], pairs, SHUFFLE["delta"]) <= SHUFFLE["delta"]
    else:
        assert shuffled["epsilon"] == bound.epsilon


@pytest.mark.parametrize("block,field", [({"n": 1, "delta": 1e-6}, "shuffle.n"), ({"n": 10, "delta": 2.0}, "shuffle.delta"),
                                         ({"n": 10, "delta": 1e-6, "m": 1}, "shuffle.m")])
def test_bad_shuffle_block_names_the_field(block, field):
    with pytest.raises(SpecError) as info:
        make_plan(_with_shuffle("pie-rr", block))
    assert field in str(info.value)


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", ["rr", "glh"])
def test_central_epsilon_target_plans_the_largest_local_epsilon(mechanism):
    spec = {"mechanism": mechanism, "domain": 20, "users": 10**5, "target": {"central_epsilon": 1.0},
            "shuffle": {"n": 10**5, "delta": 1e-8}}
    plan = make_plan(spec)
    shuffled = plan["guarantee"]["shuffled"]
    assert shuffled["epsilon"] <= 1.0
    kind = {"mechanism": "rr", "domain_size": 20} if mechanism == "rr" else {}
    epsilon0 = plan["guarantee"]["epsilon"]
    assert epsilon0 > 1.0
    assert shuffle_bound(epsilon0 + 0.01, 10**5, 1e-8, **kind).epsilon > 1.0
    gain = plan["predicted"]["shuffler_gain"]["value"]
    assert gain == pytest.approx(plan["predicted"]["l2_loss_total_without_shuffler"]["value"]
                                 / plan["predicted"]["l2_loss_total"]["value"])
    assert gain > 1.0
    assert verify_plan(plan).holds


def test_central_epsilon_needs_a_shuffle_block():
    with pytest.raises(SpecError, match="target.central_epsilon"):
        make_plan({"mechanism": "rr", "domain": 20, "users": 10**5, "target": {"central_epsilon": 1.0}})


def test_cli_explain_shuffle_n(tmp_path):
    import json

    from click.testing import CliRunner

    from ldpplan.planner.cli import main

    runner = CliRunner()
    path = tmp_path / "pie.json"
    assert runner.invoke(main, ["plan", "--example", "pie-rr", "-o", str(path)]).exit_code == 0
    r = runner.invoke(main, ["explain", str(path), "--shuffle-n", "10000", "--delta", "1e-6", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    plan = json.loads(path.read_text())
    bound = shuffle_bound(plan["guarantee"]["epsilon"], 10_000, 1e-6, mechanism="rr",
                          domain_size=plan["domain"]["size"])
    assert out["epsilon"] == bound.epsilon and out["epsilon_lower"] == bound.epsilon_lower
    assert out["local_epsilon"] == plan["guarantee"]["epsilon"]
    # 10x more users: a smaller central epsilon
    more = json.loads(runner.invoke(main, ["explain", str(path), "--shuffle-n", "100000", "--delta", "1e-6",
                                           "--json"]).output)
    assert more["epsilon"] < out["epsilon"]
    r = runner.invoke(main, ["explain", str(path), "--shuffle-n", "1", "--delta", "1e-6"])
    assert r.exit_code == 2 and "--shuffle-n" in r.output
    r = runner.invoke(main, ["explain", str(path), "--shuffle-n", "100"])
    assert r.exit_code == 2 and "--delta" in r.output
    uldp = tmp_path / "uldp.json"
    assert runner.invoke(main, ["plan", "--example", "uldp-urr", "-o", str(uldp)]).exit_code == 0
    r = runner.invoke(main, ["explain", str(uldp), "--shuffle-n", "1000", "--delta", "1e-6"])
    assert r.exit_code == 2 and "ULDP" in r.output


def test_runtime_privacy_map_carries_the_local_epsilon_only():
    from ldpplan import mechanisms

    plan = make_plan(_with_shuffle("pie-gss"))
    runtime = mechanisms.load(plan)
    privacy = runtime.privacy_map()
    assert "shuffled" not in privacy
    assert privacy["epsilon"] == plan["guarantee"]["epsilon"]

"""Issue 17: the audit searches every input and report column, states its power, and catches the leaks
an attacker would plant (leaky runtimes passed as ``mechanism=``; 20 seeded runs at default trials)."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from ldpplan import mechanisms
from ldpplan.planner import audit, make_plan
from ldpplan.planner.auditing import audit_domain, explore
from ldpplan.planner.families import all_examples

from _leaky import ExtraColumn, OneItemRR, RevealingRR, SeedLeakGLH, ValueLeakPCKV, raised_level

SEEDS = range(20)
SMALL = [name for name, (_, spec) in all_examples().items() if "data" not in json.dumps(spec)]


def _plan(mechanism="rr", domain=4, epsilon=1.0):
    return make_plan({"mechanism": mechanism, "domain": domain, "users": 1000, "target": {"epsilon": epsilon}})


def _example(name):
    fam, spec = all_examples()[name]
    return fam.plan(spec)


def _leaks():
    """name -> (plan, leaky runtime, what the leak is)."""
    rr100, glh, rr4 = _plan(domain=100), _plan("glh", domain=100), _plan(domain=4)
    health, pckv = _example("health"), _example("pckv-synthetic")
    # raise the hiv level's a so that its pair with anemia has the ratio e^(1.1 claim)
    claim = min(health["guarantee"]["levels"].values())
    return {
        "rr-100-one-item": (rr100, OneItemRR(mechanisms.load(rr100), item=5, leak=0.3)),
        "glh-seed-carries-input": (glh, SeedLeakGLH(mechanisms.load(glh))),
        "rr-4-q-5%": (rr4, RevealingRR(mechanisms.load(rr4), leak=0.05)),
        "idue-level-1.1x": (health, raised_level(mechanisms.load(health), 0, 1, 1.1 * claim)),
        "pckv-ue-value-of-one-key": (pckv, ValueLeakPCKV(mechanisms.load(pckv), key=7, leak=0.3)),
    }


def test_true_epsilon_of_the_planted_leaks():
    """The leaks are what the issue names: RR q = 5 % at |X| = 4 is epsilon 1.105; IDUE 1.1 x claim."""
    rr4 = mechanisms.load(_plan(domain=4))
    q = 0.05
    assert math.log((q + (1 - q) * rr4.mu) / ((1 - q) * (1 - rr4.mu) / 3)) == pytest.approx(1.105, abs=1e-3)
    health = _example("health")
    leaky = raised_level(mechanisms.load(health), 0, 1, 1.1 * math.log(4))
    ratio = leaky.a[0] * (1 - leaky.b[1]) / (leaky.b[0] * (1 - leaky.a[1]))
    assert math.log(ratio) == pytest.approx(1.1 * math.log(4), rel=1e-9)


def test_exploration_finds_the_one_leaking_item_among_100():
    plan = _plan(domain=100)
    leaky = OneItemRR(mechanisms.load(plan), item=5, leak=0.3)
    domain = audit_domain(plan)
    found = explore.explore(leaky, domain, 500, np.random.default_rng(0))
    best = found[0]
    assert (best.column, best.kind, best.index, best.first) == ("y", "value", 5, 5)
    assert best.score > 1.5  # ln(0.35 / 0.0098) - 1 in expectation: about 2.6


def test_pre_chosen_pairs_alone_miss_a_one_item_leak_that_the_search_catches():
    plan = _plan(domain=100)
    leaky = OneItemRR(mechanisms.load(plan), item=5, leak=0.3)
    blind = audit(plan, mechanism=leaky, trials=50_000, rng=np.random.default_rng(1), explore=False)
    assert blind.consistent  # items 0 and 1 only: the finding
    caught = audit(plan, mechanism=leaky, trials=50_000, rng=np.random.default_rng(1))
    assert not caught.consistent
    assert any(not p.holds and "5" in p.inputs and p.event == "y = 5" for p in caught.pairs)


def test_a_seed_column_that_depends_on_the_input_is_flagged_against_claim_zero():
    plan = _plan("glh", domain=100)
    result = audit(plan, mechanism=SeedLeakGLH(mechanisms.load(plan)), trials=20_000, rng=np.random.default_rng(2))
    assert not result.consistent
    bad = [p for p in result.pairs if not p.holds]
    assert any(p.claim == 0.0 and ("of b" in p.event or p.event.startswith("b ")) for p in bad)


@pytest.mark.parametrize("name", ["rr", "idue", "urr"])
def test_a_report_column_that_is_a_function_of_the_input_is_flagged(name):
    plan = {"rr": lambda: _plan(domain=10), "idue": lambda: _example("health"),
            "urr": lambda: _example("uldp-urr")}[name]()
    leaky = ExtraColumn(mechanisms.load(plan), modulus=3)
    result = audit(plan, mechanism=leaky, trials=10_000, rng=np.random.default_rng(3))
    assert not result.consistent
    assert any(not p.holds and "debug" in p.event for p in result.pairs)


def test_honest_glh_seed_columns_pass_the_claim_zero_screen():
    plan = _plan("glh", domain=100)
    result = audit(plan, trials=20_000, rng=np.random.default_rng(4))
    assert result.consistent and result.explored == 100


@pytest.mark.slow
@pytest.mark.parametrize("name", list(_leaks()))
def test_each_planted_leak_is_flagged_in_19_of_20_runs_at_default_trials(name):
    plan, leaky = _leaks()[name]
    flagged = sum(not audit(plan, mechanism=leaky, rng=np.random.default_rng(seed)).consistent for seed in SEEDS)
    assert flagged >= 19, (name, flagged)


@pytest.mark.slow
@pytest.mark.parametrize("name", SMALL)
def test_every_honest_example_is_consistent_in_20_of_20_runs_and_the_power_is_stated(name):
    plan = _example(name)
    for seed in SEEDS:
        result = audit(plan, rng=np.random.default_rng(seed))
        assert result.consistent, (name, seed, result.table())
        assert result.min_detectable_epsilon <= 1.1 * result.epsilon_claimed, (name, seed)


@pytest.mark.slow
@pytest.mark.parametrize("name", SMALL)
def test_bound_reaches_80_percent_of_the_claim_at_default_trials(name):
    result = audit(_example(name), rng=np.random.default_rng(100))
    assert result.epsilon_lower_bound >= 0.8 * result.epsilon_claimed, result.table()


def test_large_domains_screen_a_random_subset_of_stated_size():
    big = explore.Domain([str(i) for i in range(10**6)], lambda idx: idx, lambda i, j: 1.0)
    runs = explore.explore_trials(big)
    assert runs == explore.EXPLORE_MIN
    chosen = explore.screened_inputs(big, runs, np.random.default_rng(0))
    assert chosen.size == explore.screened_count(big, runs) == explore.MAX_SCREENED
    assert np.all(np.diff(chosen) > 0) and chosen.max() > 9 * 10**5  # sorted, distinct, spread
    whole = explore.Domain([str(i) for i in range(10**4)], lambda idx: idx, lambda i, j: 1.0)
    assert explore.screened_inputs(whole, explore.explore_trials(whole), np.random.default_rng(0)).size == 10**4


def test_itemset_pairs_attain_the_eq16_claim_exactly():
    """Lemma 2 with sets of L items of one composition: the honest ratio equals the set claim."""
    from ldpplan.planner.idue._audit_itemsets import set_pairs

    for name in ("health-itemsets", "three-levels-itemsets"):
        plan = _example(name)
        best = set_pairs(plan)[0].tests[0]
        assert math.log(best.p_first / best.p_second) == pytest.approx(best.claim, rel=1e-9)
        assert best.claim <= plan["guarantee"]["ldp_epsilon"] + 1e-12

"""``ldpplan audit``: honest runtimes are consistent, leaking ones are caught, the bound is valid."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from ldpplan import mechanisms
from ldpplan.planner import AuditResult, SpecError, audit, make_plan
from ldpplan.planner.auditing import audit_pairs, bounds, planned_trials
from ldpplan.planner.cli import main
from ldpplan.planner.families import all_examples

from _leaky import InvertibleLeakURR, OldSamplerRR, RevealingRR, SharedUniformUnary, ignoring_level

#: examples that need no data file
SMALL = [name for name, (_, spec) in all_examples().items() if "data" not in json.dumps(spec)]


@pytest.fixture(scope="module")
def plans():
    return {name: fam.plan(spec) for name, (fam, spec) in all_examples().items() if name in SMALL}


def _rr(domain=2, epsilon=1.0):
    return make_plan({"mechanism": "rr", "domain": domain, "users": 100, "target": {"epsilon": epsilon}})


@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
@pytest.mark.parametrize("name", SMALL)
def test_embedded_examples_audit_consistent(plans, name):
    result = audit(plans[name], trials=4000, rng=np.random.default_rng(11))
    assert isinstance(result, AuditResult)
    assert result.consistent, result.table()
    assert result.trials == 4000 and result.confidence == 0.95
    assert all(p.bound <= p.claim for p in result.pairs)
    assert result.epsilon_lower_bound > 0  # 4000 trials already learn something


def test_health_bound_reaches_most_of_the_claim_at_default_trials(plans):
    result = audit(plans["health"], rng=np.random.default_rng(3))
    assert result.consistent
    assert result.epsilon_lower_bound >= 0.8 * result.epsilon_claimed
    assert result.trials == planned_trials(plans["health"])
    assert result.epsilon_claimed < result.min_detectable_epsilon <= 1.1 * result.epsilon_claimed
    assert result.explored == 5 and result.explore_trials == 2000
    assert "would have been caught" in result.table().note
    assert result.to_dict()["min_detectable_epsilon"] == result.min_detectable_epsilon


def test_pairs_cover_every_level_pair_with_its_minid_claim(plans):
    pairs = audit_pairs(plans["three-levels"])
    claims = sorted({t.claim for p in pairs for t in p.tests})
    # r = min over {1, 1.2, 2} capped by ldp_epsilon = 1.394...
    assert claims == pytest.approx([1.0, 1.2, plans["three-levels"]["guarantee"]["ldp_epsilon"]])
    assert len(pairs) == 6  # 3 levels: 3 cross pairs + 3 same-level pairs


def test_revealing_wrapper_is_caught():
    plan = _rr(domain=4)
    leaky = RevealingRR(mechanisms.load(plan), leak=0.3)
    result = audit(plan, mechanism=leaky, trials=20_000, rng=np.random.default_rng(1))
    assert not result.consistent
    assert result.epsilon_lower_bound > result.epsilon_claimed


def test_runtime_ignoring_a_level_is_caught(plans):
    plan = plans["health"]
    mech = mechanisms.load(plan)
    leaky = ignoring_level(mech, level_of=1)  # hiv (item 0) gets the "other" level's (a, b)
    result = audit(plan, mechanism=leaky, trials=60_000, rng=np.random.default_rng(2))
    assert not result.consistent
    bad = [p for p in result.pairs if not p.holds]
    assert bad and all("hiv" in p.inputs for p in bad)


def test_shared_uniform_for_two_bits_is_caught(plans):
    plan = plans["health"]
    leaky = SharedUniformUnary(mechanisms.load(plan))
    result = audit(plan, mechanism=leaky, trials=5_000, rng=np.random.default_rng(4))
    assert not result.consistent
    assert math.isinf(result.epsilon_lower_bound) or result.epsilon_lower_bound > 2 * result.epsilon_claimed


def test_old_byte_sampler_is_caught_under_mt19937_only():
    plan = _rr(domain=10)
    old = OldSamplerRR(mechanisms.load(plan))
    caught = audit(plan, mechanism=old, trials=20_000, rng=np.random.Generator(np.random.MT19937(5)))
    assert not caught.consistent
    fine = audit(plan, mechanism=old, trials=20_000, rng=np.random.Generator(np.random.PCG64(5)))
    assert fine.consistent  # 64-bit words: the old reading was exact there


def test_sensitive_input_with_an_invertible_output_is_caught(plans):
    plan = plans["uldp-urr"]
    result = audit(plan, mechanism=InvertibleLeakURR(mechanisms.load(plan)), trials=5_000,
                   rng=np.random.default_rng(6))
    assert not result.consistent and math.isinf(result.epsilon_lower_bound)
    never = [p for p in result.pairs if p.never]
    assert never and all(p.counts[0] > 0 for p in never)
    assert json.dumps(result.to_dict())  # inf is written as a string


def test_honest_uldp_never_produces_invertible_outputs_from_sensitive_inputs(plans):
    for name in ("uldp-urr", "uldp-urap", "uldp-pum"):
        result = audit(plans[name], trials=3_000, rng=np.random.default_rng(7))
        never = [p for p in result.pairs if p.never]
        assert never and all(p.counts[0] == 0 and p.holds for p in never)


def test_bound_is_monotone_in_trials_on_average():
    plan = _rr(domain=3)
    means = []
    for trials in (300, 3_000, 30_000):
        means.append(np.mean([audit(plan, trials=trials, rng=np.random.default_rng(s)).epsilon_lower_bound
                              for s in range(20)]))
    assert means[0] < means[1] < means[2] <= 1.0


@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
def test_coverage_of_the_lower_bound_on_a_tiny_rr():
    plan = _rr(domain=2)
    mech = mechanisms.load(plan)
    true_epsilon = math.log(mech.mu / (1 - mech.mu))
    runs, confidence = 300, 0.9
    above = sum(audit(plan, mechanism=mech, trials=2_000, confidence=confidence,
                      rng=np.random.default_rng(1000 + s)).epsilon_lower_bound > true_epsilon for s in range(runs))
    alpha = 1 - confidence
    assert above <= runs * alpha + 3 * math.sqrt(runs * alpha * (1 - alpha))


def test_clopper_pearson_bounds_closed_forms():
    # k = 0: upper bound 1 - alpha^(1/n); k = n: lower bound alpha^(1/n)
    assert bounds.cp_upper(0, 100, 0.05) == pytest.approx(1 - 0.05 ** (1 / 100))
    assert bounds.cp_lower(100, 100, 0.05) == pytest.approx(0.05 ** (1 / 100))
    assert bounds.cp_lower(0, 100, 0.05) == 0.0 and bounds.cp_upper(100, 100, 0.05) == 1.0
    assert bounds.per_bound_alpha(0.95, 5) == pytest.approx(0.005)
    assert bounds.log_ratio_bound(0, 10, 100, 0.01) == -math.inf


def test_default_trials_follow_the_stated_formula():
    # one test, p_den = 0.2, claim 1: the smallest grid T whose min_detectable_epsilon is <= 1.08 x claim
    alpha = bounds.per_bound_alpha(0.95, 1)
    t = bounds.default_trials([(0.2, 1.0)], alpha, work_per_trial=2.0)
    assert bounds.min_detectable_epsilon(0.2, t, alpha, 1.0) <= bounds.DETECT_FACTOR
    assert bounds.min_detectable_epsilon(0.2, int(t / 1.25), alpha, 1.0) > bounds.DETECT_FACTOR
    assert bounds.MIN_TRIALS < t < bounds.MAX_TRIALS


@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
def test_power_matches_monte_carlo_and_is_valid_at_the_claim():
    """power() is exact: it agrees with simulated binomial counts within 4 standard deviations,
    is at most 2 alpha at the claim (the bound's validity) and increases with the true epsilon."""
    trials, p_den, claim = 5_000, 0.1, 1.0
    alpha = bounds.per_bound_alpha(0.95, 2)
    rng = np.random.default_rng(0)
    runs = 3_000
    for epsilon in (1.1, 1.2):
        k_num = rng.binomial(trials, p_den * math.exp(epsilon), runs)
        k_den = rng.binomial(trials, p_den, runs)
        flagged = np.mean([bounds.log_ratio_bound(a, b, trials, alpha) > claim for a, b in zip(k_num, k_den)])
        exact = bounds.power(epsilon, p_den, trials, alpha, claim)
        assert abs(flagged - exact) <= 4 * math.sqrt(exact * (1 - exact) / runs) + 1e-3, (epsilon, flagged, exact)
    assert bounds.power(claim, p_den, trials, alpha, claim) <= 2 * alpha
    powers = [bounds.power(e, p_den, trials, alpha, claim) for e in (1.0, 1.1, 1.2, 1.4)]
    assert powers == sorted(powers) and powers[-1] > 0.99
    assert bounds.power(5.0, p_den, trials, alpha, claim) == 0.0  # p_den e^5 > 1: no such mechanism


def test_min_detectable_epsilon_is_the_95_percent_power_point():
    trials, p_den, claim = 20_000, 0.05, 1.0
    alpha = bounds.per_bound_alpha(0.95, 4)
    eps = bounds.min_detectable_epsilon(p_den, trials, alpha, claim)
    assert bounds.power(eps, p_den, trials, alpha, claim) >= 0.95
    assert bounds.power(eps - 2e-3, p_den, trials, alpha, claim) < 0.95
    # more trials, smaller detectable leak; a certain event cannot get a larger ratio
    assert bounds.min_detectable_epsilon(p_den, 4 * trials, alpha, claim) < eps
    assert bounds.min_detectable_epsilon(0.5, 10, alpha, claim) == math.inf


@pytest.mark.parametrize("kwargs", [{"confidence": 1.0}, {"confidence": 0}, {"trials": 0}, {"trials": 2.5}])
def test_bad_arguments_are_spec_errors(kwargs):
    with pytest.raises(SpecError):
        audit(_rr(), rng=np.random.default_rng(0), **kwargs)


def test_cli_exit_codes_and_json(tmp_path, monkeypatch, plans):
    path = tmp_path / "health.json"
    path.write_text(json.dumps(plans["health"]))
    runner = CliRunner()
    ok = runner.invoke(main, ["audit", str(path), "--trials", "3000", "--seed", "1"])
    assert ok.exit_code == 0, ok.output
    assert "lower bound" in ok.output and "consistent" in ok.output
    js = runner.invoke(main, ["audit", str(path), "--trials", "3000", "--seed", "1", "--json"])
    data = json.loads(js.output)
    assert js.exit_code == 0 and data["consistent"] is True and data["trials"] == 3000 and data["seed"] == 1
    assert runner.invoke(main, ["audit", str(tmp_path / "missing.json")]).exit_code == 2
    assert runner.invoke(main, ["audit", str(path), "--confidence", "1.5"]).exit_code == 2
    assert runner.invoke(main, ["audit", str(path), "--trials", "0"]).exit_code == 2
    rr = tmp_path / "rr.json"
    rr.write_text(json.dumps(_rr(domain=4)))
    real_load = mechanisms.load
    monkeypatch.setattr(mechanisms, "load", lambda plan: RevealingRR(real_load(plan)))
    leak = runner.invoke(main, ["audit", str(rr), "--trials", "20000", "--seed", "1"])
    assert leak.exit_code == 1, leak.output
    assert "NO" in leak.output


@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
@pytest.mark.parametrize("name", ["health", "three-levels", "pckv-synthetic", "uldp-urr", "uldp-urap", "uldp-pum"])
def test_default_trials_reach_70_percent_of_the_claim_at_epsilon_1(plans, name):
    result = audit(plans[name], rng=np.random.default_rng(21))
    assert result.consistent
    assert result.epsilon_lower_bound >= 0.7 * result.epsilon_claimed, result.table()


@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
def test_default_trials_reach_70_percent_for_rr_and_glh_at_epsilon_1():
    for mech in ("rr", "glh"):
        plan = make_plan({"mechanism": mech, "domain": 50, "users": 1000, "target": {"epsilon": 1.0}})
        result = audit(plan, rng=np.random.default_rng(22))
        assert result.consistent
        assert result.epsilon_lower_bound >= 0.7 * result.epsilon_claimed, result.table()


@pytest.mark.parametrize("name", SMALL)
def test_event_probabilities_of_the_pairs_match_the_runtime(plans, name):
    """The honest probabilities each family module derives from the plan (used for the default trials)
    agree with the runtime's event frequencies within 5 standard deviations."""
    from ldpplan.planner.auditing.run import count_events

    pairs = audit_pairs(plans[name])
    trials = 20_000
    counts = count_events(mechanisms.load(plans[name]), pairs, trials, np.random.default_rng(8))
    for pair, c in zip(pairs, counts):
        for test, (k1, k2) in zip(pair.tests, c.tolist()):
            for k, p in ((k1, test.p_first), (k2, test.p_second)):
                if test.never:
                    assert k == 0
                    continue
                sd = math.sqrt(trials * p * (1 - p)) + 1.0
                assert abs(k - trials * p) <= 5 * sd, (pair.first, pair.second, test.event, k, trials * p)


def test_itemset_claims_are_eq16_set_budgets(plans):
    plan = plans["three-levels-itemsets"]
    L, dummy = plan["params"]["padding_length"], plan["params"]["dummy"]["epsilon"]
    budgets = {lv: math.log(math.exp(e) / L + (1 - 1 / L) * math.exp(dummy)) for lv, e in
               plan["guarantee"]["levels"].items()}
    claims = sorted({round(t.claim, 12) for p in audit_pairs(plan) for t in p.tests})
    expected = sorted({round(min(budgets[a], budgets[b], plan["guarantee"]["ldp_epsilon"]), 12)
                       for a in budgets for b in budgets})
    assert claims == pytest.approx(expected)
    assert expected[0] == pytest.approx(2.0) and expected[1] == pytest.approx(math.log((math.e**2.4 + math.e**2) / 2))


def test_progress_reports_every_run_with_a_real_total(plans):
    seen = []
    audit(plans["uldp-urap"], trials=1_000, rng=np.random.default_rng(9), progress=lambda a, t: seen.append((a, t)))
    totals = {t for _, t in seen}
    result = audit(plans["uldp-urap"], trials=1_000, rng=np.random.default_rng(9))
    runs = result.explored * result.explore_trials + 2 * 1_000 * (len(audit_pairs(plans["uldp-urap"])) + 4)
    assert result.explored == plans["uldp-urap"]["domain"]["size"]
    assert len(totals) == 1 and sum(a for a, _ in seen) == totals.pop() == runs


def test_planner_audit_is_only_the_function_and_its_subpackage_is_auditing():
    """Issue 18: ``ldpplan.planner.audit`` was both a subpackage and a function; now only the function."""
    import importlib

    import ldpplan.planner as planner
    from ldpplan.planner import auditing

    assert callable(planner.audit) and planner.audit is auditing.audit
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("ldpplan.planner.audit")

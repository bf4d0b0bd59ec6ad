"""The lifetime guarantee of memoized plans (issue 26 point 1; issue 27 point 6, longitudinal).

The plan's ``epsilon_lifetime`` is checked against an independent exact enumeration
(``tests/_longitudinal_exact.py``: the definitions only, no ldpplan code) of the worst case over every pair
of histories of at most ``rounds`` rounds and ``max_values`` values, for L-GRR and the unary encodings,
k in {2, 10}, rounds up to 30, one and two values; ``epsilon_lifetime_lower`` is at most that worst case.
"""
from __future__ import annotations

import copy
import itertools
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

import ldpplan
from ldpplan.mechanisms import PlanError
from ldpplan.planner.errors import PlanFormatError, SpecError
from ldpplan.planner.longitudinal import EXAMPLES

from _grr_exact_worstcase import grr_exact_worst
from _longitudinal_exact import binary_worst, grr_worst_bruteforce, literal_loss

UNARY = ("l-sue", "l-oue", "l-osue", "l-soue")


def _plan(mechanism, k, rounds, values, epsilon_perm=2.0, epsilon_1=0.5, **extra):
    return ldpplan.planner.make_plan({"mechanism": mechanism, "domain": k, "users": 1000, "epsilon_perm": epsilon_perm,
                                      "epsilon_1": epsilon_1, "rounds": rounds, "max_values": values, **extra})


def _numbers(plan):
    p, k = plan["params"], plan["params"]["domain_size"]
    if plan["mechanism"] == "l-grr":
        return p["p1"], (1 - p["p1"]) / (k - 1), p["p2"], (1 - p["p2"]) / (k - 1)
    return p["p1"], p["q1"], p["p2"], p["q2"]


def _exact_worst(plan):
    """The independent exact worst case (binary channels by counts; L-GRR k > 2 by the per-cell reduction)."""
    gu, k = plan["guarantee"], plan["params"]["domain_size"]
    p1, q1, p2, q2 = _numbers(plan)
    if plan["mechanism"] == "l-grr" and k > 2:
        return grr_exact_worst(gu["rounds"], k, p1, p2, max_values=gu["max_values"]).loss
    return binary_worst(gu["rounds"], k, p1, q1, p2, q2, unary=plan["mechanism"] != "l-grr",
                        max_values=gu["max_values"]).loss


# ----------------------------------------------------------------------------- the helper against literal sums
def test_counts_enumeration_equals_literal_enumeration_on_tiny_cases():
    """The sufficient-statistics enumeration equals the literal one (every pair, every output, rationals)."""
    p1, p2 = Fraction(3, 4), Fraction(7, 8)
    grr2 = lambda s, u: p1 if s == u else 1 - p1  # noqa: E731
    out2 = lambda y, s: p2 if y == s else 1 - p2  # noqa: E731
    for t in (2, 3):
        hists = [h for h in itertools.product(range(2), repeat=t)]
        literal = max(literal_loss(a, b, grr2, out2, (0, 1), (0, 1))[0] for a in hists for b in hists)
        counts = binary_worst(t, 2, float(p1), float(1 - p1), float(p2), float(1 - p2), unary=False).loss
        assert counts == pytest.approx(literal, rel=1e-12)
    # unary, k = 2 bits, T = 2: permanent bit vectors, outputs are pairs of bit vectors
    a1, b1, a2, b2 = Fraction(3, 4), Fraction(1, 5), Fraction(5, 8), Fraction(1, 4)
    vecs = list(itertools.product((0, 1), repeat=2))

    def first(s, u):
        return math.prod((a1 if j == u else b1) if s[j] else 1 - (a1 if j == u else b1) for j in range(2))

    def second(y, s):
        return math.prod((a2 if s[j] else b2) if y[j] else 1 - (a2 if s[j] else b2) for j in range(2))

    hists = list(itertools.product(range(2), repeat=2))
    literal = max(literal_loss(a, b, first, second, vecs, vecs)[0] for a in hists for b in hists)
    counts = binary_worst(2, 2, float(a1), float(b1), float(a2), float(b2), unary=True).loss
    assert counts == pytest.approx(literal, rel=1e-12)


@pytest.mark.parametrize("rounds", [2, pytest.param(3, marks=pytest.mark.slow)])
def test_grr_bruteforce_equals_literal_enumeration(rounds):
    k, p1, p2 = 3, Fraction(1, 2), Fraction(5, 8)
    first = lambda s, u: p1 if s == u else (1 - p1) / (k - 1)  # noqa: E731
    second = lambda y, s: p2 if y == s else (1 - p2) / (k - 1)  # noqa: E731
    hists = [h for h in itertools.product(range(3), repeat=rounds) if len(set(h)) <= 2]
    literal = max(literal_loss(a, b, first, second, range(k), range(k))[0] for a in hists for b in hists)
    assert grr_worst_bruteforce(rounds, k, float(p1), float(p2)) == pytest.approx(literal, rel=1e-9)


# ----------------------------------------------------------------------------- the plan's bound against the exact worst
def _check(plan):
    gu = plan["guarantee"]
    worst = _exact_worst(plan)
    assert gu["epsilon_lifetime"] >= worst, (plan["mechanism"], gu["rounds"], gu["max_values"], worst)
    assert gu["epsilon_lifetime_lower"] <= worst * (1 + 1e-9) + 1e-12
    if gu["max_values"] == 1:
        assert gu["epsilon_lifetime"] == gu["epsilon_perm"] == gu["epsilon_lifetime_one_value"] >= worst
    return worst


@pytest.mark.parametrize("mechanism", ("l-grr",) + UNARY)
@pytest.mark.parametrize("k", [2, 10])
@pytest.mark.parametrize("rounds", [1, 2, 5, pytest.param(12, marks=pytest.mark.slow)])
@pytest.mark.parametrize("values", [1, 2])
def test_lifetime_bound_covers_the_exact_worst_case(mechanism, k, rounds, values):
    if values > rounds:
        pytest.skip("more values than rounds")
    _check(_plan(mechanism, k, rounds, values))


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", ["l-grr", "l-sue", "l-osue"])
@pytest.mark.parametrize("k", [2, 10])
@pytest.mark.parametrize("rounds", [20, 30])
def test_lifetime_bound_covers_the_exact_worst_case_long(mechanism, k, rounds):
    for values in (1, 2):
        _check(_plan(mechanism, k, rounds, values, epsilon_perm=1.0, epsilon_1=0.9))


def test_issue_figures_l_grr_binary_30_nats_and_bound_tightness():
    """L-GRR k = 2, 1 / 0.9 nats, 20 rounds: the exact worst case is 30.28 nats (the issue's figure; the old claim
    was 2). The sound bound is within 9% of it."""
    plan = _plan("l-grr", 2, 20, 2, epsilon_perm=1.0, epsilon_1=0.9)
    worst = _check(plan)
    assert worst == pytest.approx(30.28, abs=0.01)
    assert plan["guarantee"]["epsilon_lifetime_lower"] == pytest.approx(worst, rel=1e-8)
    assert plan["guarantee"]["epsilon_lifetime"] / worst < 1.09


def _grr_pair_loss(x, x2, y, k, p1, p2):
    """ln P(y|x) / P(y|x2) for L-GRR in 50-digit mpmath, from the slot sum (independent of the planner)."""
    mpmath.mp.dps = 50
    p1, p2 = mpmath.mpf(p1), mpmath.mpf(p2)
    q1, q2 = (1 - p1) / (k - 1), (1 - p2) / (k - 1)

    def prob(h):
        total = mpmath.mpf(1)
        for u in set(h):
            rounds = [t for t in range(len(h)) if h[t] == u]
            total *= sum((p1 if s == u else q1) * mpmath.fprod(p2 if y[t] == s else q2 for t in rounds)
                         for s in range(k))
        return total

    return float(mpmath.log(prob(x) / prob(x2)))


def test_daily_example_bound_is_above_the_issue_pair_and_the_small_case_exact_worst():
    plan = ldpplan.planner.make_plan(EXAMPLES["longitudinal-daily"])
    gu, (p1, _, p2, _) = plan["guarantee"], _numbers(plan)
    a, b = 0, 1
    x, x2 = (a,) * 19 + (b,), (a,) * 8 + (b,) * 12
    issue_pair = _grr_pair_loss(x2, x, x2, 10, p1, p2)  # y = the second history itself
    assert issue_pair == pytest.approx(11.98, abs=0.01)
    assert gu["epsilon_lifetime"] >= gu["epsilon_lifetime_lower"] > issue_pair
    # the lower bound's own pair, recomputed independently: a^20 vs c^10 b^10 at outputs constant per stretch
    best = max(abs(_grr_pair_loss((0,) * 20, h, (o1,) * 10 + (o2,) * 10, 10, p1, p2))
               for h in [(2,) * 10 + (1,) * 10, (0,) * 10 + (1,) * 10] for o1 in range(4) for o2 in range(4))
    assert best <= gu["epsilon_lifetime_lower"] * (1 + 1e-8) and best >= 11.16
    small = dict(plan, guarantee=dict(gu, rounds=3))
    assert gu["epsilon_lifetime"] >= _exact_worst(small)


def test_rappor_example_one_value_is_epsilon_perm_for_30_rounds():
    plan = ldpplan.planner.make_plan(EXAMPLES["longitudinal-rappor"])
    gu = plan["guarantee"]
    worst = _check(plan)
    assert gu["epsilon_perm"] - 1e-3 < worst <= gu["epsilon_perm"] == gu["epsilon_lifetime"]


# ----------------------------------------------------------------------------- claims, load, old plans, target
@pytest.mark.parametrize("field", ["epsilon_lifetime", "epsilon_2", "epsilon_lifetime_one_value"])
def test_verify_and_load_refuse_a_lifetime_claim_one_step_low(field):
    plan = _plan("l-sue", 10, 6, 2)
    bad = copy.deepcopy(plan)
    bad["guarantee"][field] = math.nextafter(bad["guarantee"][field], 0.0)
    assert not ldpplan.planner.verify_plan(bad).holds  # claims are recomputed exactly, never read
    # the runtime's conservative check refuses any claim below the exact value (the plan's claims are rounded up
    # by a few ulps, so one ulp less may still be true: the runtime accepts true claims)
    bad["guarantee"][field] = plan["guarantee"][field] * (1 - 1e-9)
    bad["verification"] = plan["verification"]
    with pytest.raises(PlanError, match=f"guarantee.{field}"):
        ldpplan.load(bad)


def test_plans_of_the_earlier_format_are_refused_in_one_line():
    plan = _plan("l-grr", 10, 6, 2)
    old = copy.deepcopy(plan)
    old["guarantee"]["max_changes"] = old["guarantee"].pop("max_values")
    old["guarantee"]["epsilon_lifetime"] = 2 * old["guarantee"]["epsilon_perm"]
    check = ldpplan.planner.verify_plan(old)  # max_changes = 2: the claim does not hold (exit 1)
    assert not check.holds and "false once values change" in check.message
    one = copy.deepcopy(old)
    one["guarantee"]["max_changes"] = 1  # one value: the claim held; the format is outdated (exit 2)
    with pytest.raises(PlanFormatError, match="max_changes.*re-plan"):
        ldpplan.planner.verify_plan(one)
    with pytest.raises(PlanError, match="max_changes.*re-plan") as info:
        ldpplan.load(old)
    assert "\n" not in str(info.value)


def test_max_changes_alias_plans_with_a_deprecation_note():
    plan = ldpplan.planner.make_plan({"mechanism": "l-grr", "domain": 4, "users": 100, "epsilon_perm": 2.0,
                                      "epsilon_1": 1.0, "rounds": 4, "max_changes": 2})
    assert plan["guarantee"]["max_values"] == 2 and ldpplan.load(plan).max_values == 2
    assert any("max_changes is deprecated" in n for n in plan["solver"]["notes"])


def test_lifetime_target_on_a_small_spec():
    spec = {"mechanism": "l-sue", "domain": 4, "users": 100, "epsilon_perm": 3.0, "epsilon_1": 1.0, "rounds": 4,
            "max_values": 2, "target": {"epsilon_lifetime": 5.0}}
    plan = ldpplan.planner.make_plan(spec)
    gu = plan["guarantee"]
    assert 4.5 < gu["epsilon_lifetime"] <= 5.0 and gu["epsilon_perm"] <= 3.0 and gu["epsilon_1"] <= 1.0
    bound = min(4 * gu["epsilon_2"], 2 * gu["epsilon_perm"] + 2 * gu["epsilon_2"])  # T = 4, V = 2
    assert gu["epsilon_lifetime"] == pytest.approx(bound, rel=1e-12) and gu["epsilon_lifetime"] >= bound
    ldpplan.load(plan)


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", ["l-grr", "auto"])
def test_lifetime_target_meets_the_target_soundly(mechanism):
    spec = dict(EXAMPLES["longitudinal-daily"], target={"epsilon_lifetime": 8.0},
                mechanism=mechanism)
    plan = ldpplan.planner.make_plan(spec)
    gu = plan["guarantee"]
    assert gu["epsilon_lifetime"] <= 8.0 and gu["epsilon_lifetime"] > 7.5  # the target binds
    assert gu["epsilon_lifetime"] == pytest.approx(20 * gu["epsilon_2"], rel=1e-9)  # here T x epsilon_2 is smaller
    assert gu["epsilon_perm"] <= 4.0 and gu["epsilon_1"] <= 1.0
    assert ldpplan.planner.verify_plan(plan).holds and ldpplan.load(plan).max_values == 2
    bad = copy.deepcopy(plan)
    bad["spec"]["target"]["epsilon_lifetime"] = 7.0  # a plan that does not meet its spec's target
    assert not ldpplan.planner.verify_plan(bad).holds
    with pytest.raises(SpecError, match="target.epsilon_lifetime"):
        ldpplan.planner.make_plan(dict(spec, target={"epsilon_lifetime": 1e-20}))


# ----------------------------------------------------------------------------- issue 27 point 6: never overshoot
@pytest.mark.parametrize("mechanism, epsilon_perm, epsilon_1", [
    ("l-sue", 40.0, 20.0), ("l-sue", 35.0, 33.25), ("l-soue", 100.0, 50.0), ("auto", 100.0, 50.0),
    ("l-osue", 100.0, 99.0), ("l-oue", 60.0, 1.0)])
def test_valid_specs_plan_or_refuse_in_one_line(mechanism, epsilon_perm, epsilon_1):
    _plans_or_names_a_field(mechanism, epsilon_perm, epsilon_1)


def _plans_or_names_a_field(mechanism, epsilon_perm, epsilon_1):
    try:
        plan = _plan(mechanism, 4, 2, 1, epsilon_perm=epsilon_perm, epsilon_1=epsilon_1)
    except SpecError as exc:  # exit 2, naming the field
        assert str(exc).startswith(("epsilon_1", "epsilon_perm")) and "\n" not in str(exc)
        return None
    gu = plan["guarantee"]
    assert gu["epsilon_perm"] <= epsilon_perm and gu["epsilon_1"] <= epsilon_1
    assert ldpplan.planner.verify_plan(plan).holds
    ldpplan.load(plan)
    return plan


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", ("l-grr",) + UNARY)
def test_solver_never_overshoots_a_sweep_of_valid_budgets(mechanism):
    planned = 0
    for epsilon_perm in (0.5, 5.0, 20.0, 33.25, 35.0, 40.0, 60.0, 100.0):
        for ratio in (0.05, 0.5, 0.95):
            planned += _plans_or_names_a_field(mechanism, epsilon_perm, epsilon_perm * ratio) is not None
    assert planned >= 12


# ----------------------------------------------------------------------------- the audit tests the lifetime
def _broken(cls, kind):
    class Broken(cls):
        """``drop``: a new memo at every call (each round); ``ignore``: a fresh permanent response per report."""

        def perturb(self, data, rng, *, memo=None, users=None, round=None):
            if kind == "drop":
                return super().perturb(data, rng=rng, memo=self.new_memo(), users=users, round=round)
            fresh = np.arange(np.asarray(data).shape[0])
            return super().perturb(data, rng=rng, memo=self.new_memo(), users=fresh, round=round)

    return Broken


def test_lifetime_pair_probabilities_are_exact_for_binary_l_grr():
    """k = 2: with the permanent response z, each half's count is binomial; the event's honest probabilities."""
    from ldpplan.planner.longitudinal._audit_lifetime import lifetime_probabilities

    plan = _plan("l-grr", 2, 6, 2, epsilon_perm=2.0, epsilon_1=1.0)
    p1, q1, p2, q2 = _numbers(plan)

    def more(n, p):  # Pr[more reports of the value with probability p than of the other], n reports
        return sum(math.comb(n, c) * p**c * (1 - p) ** (n - c) for c in range(n // 2 + 1, n + 1))

    change, one = lifetime_probabilities(plan, 6, 3)
    first = p1 * more(3, p2) + q1 * more(3, q2)
    assert change == pytest.approx(first * first, rel=1e-12)
    assert one == pytest.approx(p1 * more(3, p2) * more(3, q2) + q1 * more(3, q2) * more(3, p2), rel=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", ["l-grr", "l-osue"])
def test_audit_is_consistent_on_the_honest_runtime_and_flags_dropped_or_ignored_memos(mechanism):
    pytest.importorskip("scipy")
    plan = _plan(mechanism, 4, 8, 2, epsilon_perm=2.0, epsilon_1=1.0)
    honest = ldpplan.planner.audit(plan, trials=3000, explore=False, rng=np.random.default_rng(5))
    assert honest.consistent
    life = next(p for p in honest.pairs if "then" in p.event)
    assert life.holds and life.claim == plan["guarantee"]["epsilon_lifetime"]
    assert life.bound > 0.3  # the change is visible (a one-value claim could not cover it)
    for kind in ("drop", "ignore"):
        broken = _broken(type(ldpplan.load(plan)), kind).from_plan(plan)
        flagged = ldpplan.planner.audit(plan, mechanism=broken, trials=3000, explore=False,
                                        rng=np.random.default_rng(6))
        assert not flagged.consistent, kind
        many = next(p for p in flagged.pairs if "most reported in" in p.event and "then" not in p.event)
        assert not many.holds and many.bound > plan["guarantee"]["epsilon_perm"], kind


@pytest.mark.parametrize("epsilon_perm, epsilon_1", [(1.0, 0.9), (4.0, 1.0), (8.0, 0.5)])
@pytest.mark.parametrize("rounds", [4, 5])
def test_l_grr_three_values_bound_covers_the_brute_force_worst_case(epsilon_perm, epsilon_1, rounds):
    """k = 3, every pair of histories with at most two values and every one of the 3^T outputs."""
    for values in (1, 2):
        plan = _plan("l-grr", 3, rounds, values, epsilon_perm=epsilon_perm, epsilon_1=epsilon_1)
        gu, (p1, _, p2, _) = plan["guarantee"], _numbers(plan)
        worst = grr_worst_bruteforce(rounds, 3, p1, p2, max_values=values)
        assert gu["epsilon_lifetime_lower"] <= worst * (1 + 1e-9) <= gu["epsilon_lifetime"] * (1 + 1e-9)

"""Privacy amplification by shuffling (issue 21): solvers.shuffle and planner.shuffle.

Exhaustive checks at tiny n (every dataset, every shuffled histogram), paper closed forms,
the done-when table's properties (slow), targeting and tampering.
"""
from __future__ import annotations

import itertools
import math
from collections import defaultdict

import numpy as np
import pytest

from ldpplan.planner import ShuffleBound
from ldpplan.planner.shuffle import check_shuffled, shuffled_guarantee
from ldpplan.solvers import _shuffle_curves as curves
from ldpplan.solvers.shuffle import TARGET_STEP, fmt21_closed_form, fmt21_numerical
from ldpplan.solvers.shuffle import local_epsilon_for, shuffle_bound  # the solver's names: "krr", binary "rr"
from ldpplan.solvers.shuffle import shuffle_bound as solver_bound


def _krr_histogram_law(inputs, k, epsilon0):
    """Exact law of the shuffled histogram of k-RR reports of ``inputs`` (enumerates every report tuple)."""
    e0 = math.exp(epsilon0)
    keep, other = e0 / (e0 + k - 1), 1 / (e0 + k - 1)
    law = defaultdict(float)
    for reports in itertools.product(range(k), repeat=len(inputs)):
        prob = math.prod(keep if r == x else other for r, x in zip(reports, inputs))
        law[tuple(np.bincount(reports, minlength=k))] += prob
    return law


def _hockey(law_p, law_q, epsilon):
    keys = set(law_p) | set(law_q)
    return sum(max(0.0, law_p.get(h, 0.0) - math.exp(epsilon) * law_q.get(h, 0.0)) for h in keys)


def _worst_case_delta(k, n, epsilon0, epsilon):
    """max over every dataset of the others and both directions (x = 0 vs x' = 1 by symmetry)."""
    worst = 0.0
    for others in itertools.combinations_with_replacement(range(k), n - 1):
        p = _krr_histogram_law((0, *others), k, epsilon0)
        q = _krr_histogram_law((1, *others), k, epsilon0)
        worst = max(worst, _hockey(p, q, epsilon), _hockey(q, p, epsilon))
    return worst


@pytest.mark.parametrize("k,n,epsilon0", [(3, 4, 1.0), (3, 5, 2.0), (4, 4, 0.7), (2, 6, 1.5)])
def test_bounds_bracket_the_exhaustive_worst_case(k, n, epsilon0):
    for epsilon in (0.05, 0.3, 0.8):
        exact = _worst_case_delta(k, n, epsilon0, epsilon)
        assert curves.blanket_krr_delta_upper(epsilon, epsilon0, k, n) >= exact - 1e-12
        assert curves.clone_delta_upper(epsilon, epsilon0, n) >= exact - 1e-12
        if k >= 3:
            lower = curves.krr_pair_delta_lower(epsilon, epsilon0, k, n)
        else:
            lower = curves.binary_rr_pair_delta(epsilon, epsilon0, n)
            exhaustive = curves.binary_rr_pair_delta_exhaustive(epsilon, epsilon0, n)
            assert exact - 1e-13 <= exhaustive <= exact * (1 + 1e-8) + 1e-14
        assert lower <= exact + 1e-12


def test_binary_rr_closed_form_matches_the_enumeration():
    for n in (5, 7):
        for epsilon0, epsilon in [(1.0, 0.3), (2.0, 0.5)]:
            law_one = _krr_histogram_law((1,) + (0,) * (n - 1), 2, epsilon0)
            law_zero = _krr_histogram_law((0,) * n, 2, epsilon0)
            exact = max(_hockey(law_one, law_zero, epsilon), _hockey(law_zero, law_one, epsilon))
            value = curves.binary_rr_pair_delta(epsilon, epsilon0, n)
            assert value == pytest.approx(exact, rel=1e-8)
            assert value <= exact  # a lower bound rounds down


def test_fmt21_closed_form_value():
    # Theorem 3.1 by hand: epsilon0 = 1, n = 10^5, delta = 1e-6
    e0 = math.e
    expected = math.log(1 + (e0 - 1) / (e0 + 1) * (8 * math.sqrt(e0 * math.log(4e6)) / math.sqrt(1e5) + 8 * e0 / 1e5))
    assert fmt21_closed_form(1.0, 10**5, 1e-6) == pytest.approx(expected, rel=1e-11)
    assert fmt21_closed_form(1.0, 10**5, 1e-6) >= expected
    assert fmt21_closed_form(6.0, 10**4, 1e-8) == math.inf  # outside epsilon0 <= log(n / (16 log(2/delta)))


def test_fmt21_numerical_is_below_its_closed_form_and_meets_delta():
    for epsilon0, n in [(0.5, 10**4), (2.0, 10**5)]:
        numerical = fmt21_numerical(epsilon0, n, 1e-6)
        assert numerical < fmt21_closed_form(epsilon0, n, 1e-6)
        assert curves.clone_delta_upper(numerical, epsilon0, n) <= 1e-6
        assert curves.clone_delta_upper(numerical * 0.99, epsilon0, n) > 1e-6


def test_shuffle_bound_small_n_binary_rr_is_exact():
    bound = shuffle_bound(1.0, 200, 1e-3, mechanism="rr")
    assert isinstance(bound, ShuffleBound)
    assert bound.epsilon_lower <= bound.epsilon <= bound.epsilon_lower * (1 + 2e-3)
    assert curves.binary_rr_pair_delta_exhaustive(bound.epsilon, 1.0, 200) <= 1e-3
    assert curves.binary_rr_pair_delta_exhaustive(bound.epsilon_lower, 1.0, 200) > 1e-3
    assert "exact" in bound.source


def test_shuffle_bound_is_frozen_and_validates():
    bound = shuffle_bound(1.0, 10**4, 1e-6, mechanism="krr", domain_size=10)
    with pytest.raises(AttributeError):
        bound.epsilon = 0.0
    with pytest.raises(ValueError, match="delta"):
        shuffle_bound(1.0, 10**4, 1.5)
    with pytest.raises(ValueError, match="domain_size"):
        shuffle_bound(1.0, 10**4, 1e-6, mechanism="krr")


@pytest.mark.slow
def test_targeting_returns_the_last_grid_point_meeting_the_target():
    for kwargs in ({"mechanism": "krr", "domain_size": 10}, {}):
        epsilon0 = local_epsilon_for(0.5, 1e-6, 10**4, **kwargs)
        assert shuffle_bound(epsilon0, 10**4, 1e-6, **kwargs).epsilon <= 0.5
        assert shuffle_bound(epsilon0 + TARGET_STEP, 10**4, 1e-6, **kwargs).epsilon > 0.5
        assert shuffle_bound(epsilon0 + 0.01, 10**4, 1e-6, **kwargs).epsilon > 0.5
        assert epsilon0 > 0.5


def test_verify_refuses_a_tampered_shuffled_epsilon():
    claim = shuffled_guarantee(2.0, 10**4, 1e-6, mechanism="krr", domain_size=10)
    assert check_shuffled(claim, 2.0, mechanism="krr", domain_size=10) is None
    tampered = {**claim, "epsilon": claim["epsilon"] * 0.9}
    assert "guarantee.shuffled.epsilon" in check_shuffled(tampered, 2.0, mechanism="krr", domain_size=10)
    assert "guarantee.shuffled.n" in check_shuffled({**claim, "n": 0}, 2.0, mechanism="krr", domain_size=10)
    # the claim is tied to the plan's local epsilon
    assert check_shuffled(claim, 2.5, mechanism="krr", domain_size=10) is not None


TABLE = [(k, e0, n, d) for k in (2, 10, 100) for e0 in (0.5, 1, 2, 4, 6) for n in (10**4, 10**5, 10**6)
         for d in (1e-6, 1e-8)]


@pytest.mark.slow
@pytest.mark.parametrize("k,epsilon0,n,delta", TABLE)
def test_done_when_table(k, epsilon0, n, delta):
    bound = shuffle_bound(epsilon0, n, delta, mechanism="krr", domain_size=k)
    assert bound.epsilon_lower <= bound.epsilon <= fmt21_numerical(epsilon0, n, delta)
    if k >= 3 and n >= 10**5:
        assert bound.epsilon <= 1.1 * bound.epsilon_lower


# --- binary RR (k = 2): the exact curve at any n (solvers._shuffle_binary) --------------------------------------

def _count_pair_exact(a, b, epsilon0, epsilon):
    """Forward divergence of the pair (a ones, b zeros among the others) in 40-digit arithmetic, every count."""
    import mpmath

    with mpmath.workdps(40):
        p = 1 / (1 + mpmath.exp(-epsilon0))
        q = 1 - p
        f1 = [mpmath.binomial(a, i) * p**i * q ** (a - i) for i in range(a + 1)]
        f2 = [mpmath.binomial(b, i) * q**i * p ** (b - i) for i in range(b + 1)]
        count = [mpmath.mpf(0)] * (a + b + 3)
        for i, x in enumerate(f1):
            for j, y in enumerate(f2):
                count[i + j + 1] += x * y
        e = mpmath.exp(epsilon)
        return float(sum(max(0, (p * count[h - 1] + q * count[h]) - e * (q * count[h - 1] + p * count[h]))
                         for h in range(1, len(count))))


@pytest.mark.parametrize("n,epsilon0", [(7, 1.0), (25, 2.0), (30, 0.5)])
def test_count_pair_brackets_the_high_precision_divergence(n, epsilon0):
    from ldpplan.solvers._shuffle_binary import CountPair

    q = 1 / (math.exp(epsilon0) + 1)
    for a in range(n):
        for epsilon in (0.05, 0.4):
            exact = _count_pair_exact(a, n - 1 - a, epsilon0, epsilon)
            for independent in (False, True):
                pair = CountPair.build(a, n - 1 - a, q, 1e-20, independent=independent)
                assert pair.delta(epsilon, bound="lower") <= exact <= pair.delta(epsilon)
                assert pair.delta(epsilon) <= exact * (1 + 1e-8) + 1e-14


def test_blocks_cover_every_dataset_and_bound_it():
    """Facts 1-4: each block's bound is at least every dataset's divergence in it, both directions included."""
    from ldpplan.solvers._shuffle_binary import binary_curve

    n, epsilon0 = 40, 1.5
    curve = binary_curve(epsilon0, n, 0.3, 1e-20, eta=0.05)
    assert any(a1 - a0 >= 2 for a0, a1, _ in curve.blocks)  # real blocks, not only singletons
    covered = set()
    for epsilon in (0.1, 0.6):
        for a0, a1, pair in curve.blocks:
            worst = max(_count_pair_exact(a, n - 1 - a, epsilon0, epsilon) for a in range(a0, a1 + 1))
            assert pair.delta(epsilon) >= worst
            covered.update(range(a0, a1 + 1))
        # the backward direction of (a, b) is the forward one of (b, a): covered by the same blocks
        assert curve.upper(epsilon) >= max(_count_pair_exact(0, n - 1, epsilon0, epsilon),
                                           _count_pair_exact(n - 1, 0, epsilon0, epsilon))
    assert covered == set(range(n))


def _brute_force_curve(epsilon, epsilon0, n, bound="upper"):
    """max over every dataset and both directions, full (untruncated) pmfs, rounded toward ``bound``."""
    if bound == "upper":
        return curves.binary_rr_pair_delta_exhaustive(epsilon, epsilon0, n)
    return max(curves.binary_rr_pair_delta(epsilon, epsilon0, n, ones, bound="lower", closed_form=False)
               for ones in range(n))


@pytest.mark.slow
@pytest.mark.parametrize("n,epsilon0,delta", [(200, 1.0, 1e-6), (1000, 4.0, 1e-8), (2000, 2.0, 1e-8),
                                              (2000, 6.0, 1e-6)])
def test_binary_rr_sup_equals_the_brute_force_sup(n, epsilon0, delta):
    bound = shuffle_bound(epsilon0, n, delta, mechanism="rr")
    assert "exact privacy curve" in bound.source
    assert bound.epsilon - bound.epsilon_lower <= bound.tolerance * bound.epsilon + 1e-15
    assert bound.tolerance <= 1e-3
    if bound.epsilon < epsilon0:
        assert _brute_force_curve(bound.epsilon, epsilon0, n) <= delta
    assert _brute_force_curve(bound.epsilon_lower, epsilon0, n, "lower") > delta * (1 - 1e-9)
    from ldpplan.solvers.shuffle import binary_rr_curve

    curve = binary_rr_curve(epsilon0, n, delta)
    for epsilon in (bound.epsilon_lower, bound.epsilon):
        assert curve.lower(epsilon) <= _brute_force_curve(epsilon, epsilon0, n)
        assert curve.upper(epsilon) >= _brute_force_curve(epsilon, epsilon0, n, "lower")


@pytest.mark.slow
@pytest.mark.parametrize("epsilon0", [0.5, 1.0, 2.0, 4.0, 6.0])
@pytest.mark.parametrize("n", [10**4, 10**5, 10**6])
@pytest.mark.parametrize("delta", [1e-6, 1e-8])
def test_binary_rr_exact_curve_at_scale(epsilon0, n, delta):
    """Done-when for k = 2: upper = lower to the reported tolerance, never above FMT21's numerical bound."""
    bound = shuffle_bound(epsilon0, n, delta, mechanism="krr", domain_size=2)
    assert bound.epsilon_lower <= bound.epsilon <= fmt21_numerical(epsilon0, n, delta)
    assert bound.tolerance <= 1e-3
    assert bound.epsilon - bound.epsilon_lower <= bound.tolerance * bound.epsilon * (1 + 1e-12)
    assert "others" in bound.source  # names the concrete pair attaining the lower bound


@pytest.mark.slow
def test_binary_rr_upper_is_never_below_lower_property():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=25, deadline=None, derandomize=True)
    @given(st.floats(0.1, 8.0), st.integers(2, 30_000), st.sampled_from([1e-3, 1e-6, 1e-9]))
    def check(epsilon0, n, delta):
        bound = shuffle_bound(epsilon0, n, delta, mechanism="rr")
        assert 0 <= bound.epsilon_lower <= bound.epsilon <= epsilon0
        assert bound.epsilon - bound.epsilon_lower <= max(bound.tolerance, 1e-3) * bound.epsilon * (1 + 1e-12)

    check()


@pytest.mark.parametrize("n", [300, 5000])
def test_verify_recomputes_the_binary_rr_curve_independently(n):
    claim = shuffled_guarantee(2.0, n, 1e-6, mechanism="rr")
    assert "exact privacy curve" in claim["source"]
    assert check_shuffled(claim, 2.0, mechanism="rr") is None
    from ldpplan.planner.shuffle import _independent_divergence

    tampered = {**claim, "epsilon": claim["epsilon_lower"] * 0.98}
    message = _independent_divergence(tampered, 2.0, "rr", None)
    assert message is not None and "recomputed independently" in message
    assert "guarantee.shuffled.epsilon" in check_shuffled(tampered, 2.0, mechanism="rr")


@pytest.mark.slow
def test_targeting_binary_rr_at_scale():
    epsilon0 = local_epsilon_for(1.0, 1e-8, 10**6, mechanism="rr")
    assert shuffle_bound(epsilon0, 10**6, 1e-8, mechanism="rr").epsilon <= 1.0
    assert shuffle_bound(epsilon0 + TARGET_STEP, 10**6, 1e-8, mechanism="rr").epsilon > 1.0
    assert shuffle_bound(epsilon0 + 0.01, 10**6, 1e-8, mechanism="rr").epsilon > 1.0


# --- GLH: the support-count attack (lower bound) ------------------------------------------------------------------

def test_glh_attack_probabilities_match_the_runtime():
    """The attack's per-report law (type "h(x) = y != h(x')") is the runtime's: a seeded statistical check."""
    from ldpplan.mechanisms.pie import GeneralizedLocalHashing, collision_probability, hash_values

    g, epsilon0, draws = 5, 1.2, 200_000
    runtime = GeneralizedLocalHashing(domain=10, epsilon=epsilon0, g=g)
    kappa = collision_probability(g)
    keep = math.exp(epsilon0) / (math.exp(epsilon0) + g - 1)
    expected = {3: (1 - kappa) * keep, 7: (1 - kappa) * (1 - keep) / (g - 1)}  # holding x = 3, holding x' = 7
    for held, probability in expected.items():
        reports = runtime.perturb(np.full(draws, held), np.random.default_rng(21 + held)).columns
        hits = (hash_values(reports["a"], reports["b"], 3, g) == reports["y"]) & (
            hash_values(reports["a"], reports["b"], 7, g) != reports["y"])
        sd = math.sqrt(probability * (1 - probability) / draws)
        assert abs(hits.mean() - probability) < 5 * sd


def test_glh_lower_bound_is_the_exact_count_divergence():
    from ldpplan.solvers._shuffle_binary import support_count_pair

    keep, support, others = 0.4, 0.05, 30
    forward, backward = support_count_pair(others, keep, support, 1e-20)
    for epsilon in (0.1, 0.5, 1.5):
        e = math.exp(epsilon)
        base = [math.comb(others, i) * support**i * (1 - support) ** (others - i) for i in range(others + 1)] + [0.0]
        law_x = [keep * (base[t - 1] if t else 0.0) + (1 - keep) * base[t] for t in range(others + 2)]
        law_y = [support * (base[t - 1] if t else 0.0) + (1 - support) * base[t] for t in range(others + 2)]
        exact = sum(max(0.0, a - e * b) for a, b in zip(law_x, law_y))
        reverse = sum(max(0.0, b - e * a) for a, b in zip(law_x, law_y))
        assert forward.delta(epsilon, bound="lower") <= exact <= forward.delta(epsilon)
        assert backward.delta(epsilon, bound="lower") <= reverse <= backward.delta(epsilon)


@pytest.mark.parametrize("g,epsilon0,n", [(3, 1.0, 10**4), (268, 6.7, 10**5)])
def test_glh_bounds(g, epsilon0, n):
    from ldpplan.mechanisms.pie import collision_probability

    bound = solver_bound(epsilon0, n, 1e-8, mechanism="glh", hash_range=g, collision=collision_probability(g))
    generic = shuffle_bound(epsilon0, n, 1e-8)
    assert bound.epsilon == generic.epsilon  # the upper bound is FMT21's (any epsilon0-LDP randomizer)
    assert 0 < bound.epsilon_lower <= bound.epsilon
    assert "h(x) = y != h(x')" in bound.source
    with pytest.raises(ValueError, match="collision"):
        solver_bound(epsilon0, n, 1e-8, mechanism="glh", hash_range=g, collision=2.0 / g)

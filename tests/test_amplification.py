"""The numpy-only blanket bound of shuffled two-level randomizers (mechanisms/_amplification.py).

Soundness: the bound is at least the exact hockey-stick divergence of the shuffled histograms of
explicit neighbouring datasets (every dataset, enumerated exactly for small n) of the actual
randomizers (k-RR, GLH with an explicit hash family, unary encodings, Hadamard response), and at
least the blanket expectation summed over every blanket size with scipy's independent pmfs.
Tightness: it is below FMT21's generic bounds (Theorems 3.1 and 3.2) where the issue measured them.
"""
from __future__ import annotations

import itertools
import math
from collections import defaultdict

import mpmath
import numpy as np
import pytest
from scipy.stats import binom

from ldpplan.mechanisms import _amplification as amp
from ldpplan.mechanisms import _amplification_sums as sums


# ---------------------------------------------------------------- exact shuffled laws (independent code)
def _shuffled(dists):
    """Law of the histogram of independent reports (one distribution over outputs per user)."""
    law = {(0,) * len(dists[0]): 1.0}
    for dist in dists:
        nxt = defaultdict(float)
        for hist, prob in law.items():
            for y, py in enumerate(dist):
                if py:
                    key = hist[:y] + (hist[y] + 1,) + hist[y + 1:]
                    nxt[key] += prob * py
        law = nxt
    return law


def _add(law, dist):
    return _shuffled_from(law, dist)


def _shuffled_from(law, dist):
    nxt = defaultdict(float)
    for hist, prob in law.items():
        for y, py in enumerate(dist):
            if py:
                nxt[hist[:y] + (hist[y] + 1,) + hist[y + 1:]] += prob * py
    return nxt


def _hockey(first, second, epsilon):
    """sum (P - e^eps Q)_+ in binary64, lowered by a bound of its rounding error (so it stays a lower bound)."""
    keys = list(set(first) | set(second))
    p = np.array([first.get(key, 0.0) for key in keys])
    q = np.array([second.get(key, 0.0) for key in keys])
    e = math.exp(epsilon)
    return float(np.maximum(p - e * q, 0.0).sum()) - 1e-12 * (1.0 + e)


def _worst_exact(channel, n, epsilons, pairs=None):
    """Largest exact delta(epsilon) (both directions) over every dataset of n users: one user x vs x'."""
    k = len(channel)
    pairs = pairs or [(x, y) for x in range(k) for y in range(k) if x != y]
    worst = np.zeros(len(epsilons))
    for others in itertools.combinations_with_replacement(range(k), n - 1):
        base = _shuffled([channel[x] for x in others]) if others else {(0,) * len(channel[0]): 1.0}
        for x, y in pairs:
            p, q = _add(base, channel[x]), _add(base, channel[y])
            for i, eps in enumerate(epsilons):
                worst[i] = max(worst[i], _hockey(p, q, eps), _hockey(q, p, eps))
    return worst


def _krr(e0, k):
    return [[math.exp(e0) / (math.exp(e0) + k - 1) if y == x else 1 / (math.exp(e0) + k - 1) for y in range(k)]
            for x in range(k)]


def _glh(e0, g, family):
    keep, other = math.exp(e0) / (math.exp(e0) + g - 1), 1 / (math.exp(e0) + g - 1)
    k = len(family[0])
    return [[(keep if y == h[x] else other) / len(family) for h in family for y in range(g)] for x in range(k)]


def _unary(keep, flip, level):
    k = len(level)
    out = []
    for x in range(k):
        row = []
        for bits in itertools.product((0, 1), repeat=k):
            prob = 1.0
            for j, bit in enumerate(bits):
                one = keep[level[j]] if j == x else flip[level[j]]
                prob *= one if bit else 1 - one
            row.append(prob)
        out.append(row)
    return out


def _hadamard(e0, k, blocks):
    size = 2
    while blocks * (size - 1) < k:
        size *= 2
    total, half = blocks * size, size // 2
    keep = math.exp(e0) / (math.exp(e0) + 2 * blocks - 1)
    rows = []
    for x in range(k):
        block, t = x // (size - 1), x % (size - 1) + 1
        support = {block * size + u for u in range(size) if bin(t & u).count("1") % 2 == 0}
        rows.append([keep / half if y in support else (1 - keep) / (total - half) for y in range(total)])
    return rows


def _check_sound(channel, pairs, n, epsilons, exact_pairs=None):
    exact = _worst_exact(channel, n, epsilons, exact_pairs)
    bound = np.array([amp.blanket_delta_upper(eps, n, pairs, 1e-6) for eps in epsilons])
    assert np.all(bound >= exact), (bound, exact)
    return exact, bound


# ---------------------------------------------------------------- (a) soundness against explicit pairs
@pytest.mark.parametrize("e0,k,n", [(1.0, 3, 5), pytest.param(2.5, 4, 5, marks=pytest.mark.slow),
                                    pytest.param(0.5, 3, 7, marks=pytest.mark.slow)])
def test_krr_never_below_exact_pairs(e0, k, n):
    exact, bound = _check_sound(_krr(e0, k), amp.krr_pairs(e0, k), n, [0.0, 0.1, 0.3, 0.6])
    assert exact[0] > 0.05  # the comparison is not vacuous


@pytest.mark.slow
def test_glh_never_below_exact_pairs_injective_family():
    family = list(itertools.permutations(range(3)))  # h(x) != h(x') always: collision 0
    exact, bound = _check_sound(_glh(1.5, 3, family), amp.glh_pairs(1.5, 3, 0.0), 4, [0.0, 0.2, 0.5])
    assert exact[0] > 0.05


@pytest.mark.slow
def test_glh_never_below_exact_pairs_all_functions():
    family = list(itertools.product(range(2), repeat=3))  # every function [3] -> [2]: collision 1/2
    _check_sound(_glh(1.0, 2, family), amp.glh_pairs(1.0, 2, 0.5), 4, [0.0, 0.2, 0.5])


@pytest.mark.parametrize("keep,flip,level,n", [
    ([math.exp(0.5) / (math.exp(0.5) + 1)], [1 / (math.exp(0.5) + 1)], [0, 0, 0], 4),  # SUE, epsilon 1
    pytest.param([0.5], [1 / (math.exp(1.5) + 1)], [0, 0, 0], 4, marks=pytest.mark.slow),  # OUE, epsilon 1.5
    ([0.6, 0.5], [0.2, 0.3], [0, 1, 1], 3),                                            # IDUE, two levels
])
def test_unary_never_below_exact_pairs(keep, flip, level, n):
    exact, bound = _check_sound(_unary(keep, flip, level), amp.unary_pairs(keep, flip), n, [0.0, 0.1, 0.3, 0.6])
    assert exact[0] > 0.05


@pytest.mark.parametrize("e0,k,blocks,n", [(1.0, 3, 1, 4), pytest.param(2.0, 4, 2, 4, marks=pytest.mark.slow)])
def test_hadamard_never_below_exact_pairs(e0, k, blocks, n):
    exact, bound = _check_sound(_hadamard(e0, k, blocks), amp.hadamard_pairs(e0, k, blocks), n, [0.0, 0.2, 0.5])
    assert exact[0] > 0.05


def test_hadamard_channel_matches_runtime():
    """The test's Hadamard channel is the runtime's (so the soundness above is about the real randomizer)."""
    from ldpplan.mechanisms.hadamard import HadamardResponse

    mech = HadamardResponse(domain=4, epsilon=2.0, blocks=2)
    assert np.allclose(np.asarray(mech.channel_matrix()), np.asarray(_hadamard(2.0, 4, 2)), atol=1e-12)


# ---------------------------------------------------------------- the blanket expectation, every m summed
def _blanket_exact(epsilon, n, pair):
    """sum_m Bin(m; n-1, gamma) delta_m with delta_m summed over every (T, T') with scipy's pmfs."""
    e = math.exp(epsilon)
    total = 0.0
    for m in range(n):
        s = m + 1
        a = np.arange(s + 1)
        if pair.kind == "independent":
            pa, pb = binom.pmf(a, s, pair.support), binom.pmf(a, s, pair.support_other)
            joint = np.outer(pa, pb)
        else:
            if pair.support < 0.5:
                joint = binom.pmf(a, s, pair.support)[:, None] * binom.pmf(
                    a[None, :], (s - a)[:, None], pair.support / (1 - pair.support))
            else:
                joint = np.zeros((s + 1, s + 1))
                joint[a, s - a] = binom.pmf(a, s, 0.5)
        value = (s * pair.low + (pair.high - pair.low) * a[:, None]
                 - e * (s * pair.low_other + (pair.high_other - pair.low_other) * a[None, :]))
        total += binom.pmf(m, n - 1, pair.gamma) * float((joint * np.maximum(value, 0)).sum()) / s
    return total


@pytest.mark.parametrize("pairs", [amp.krr_pairs(2.0, 5), amp.glh_pairs(1.0, 3, 0.2), amp.clone_pairs(3.0),
                                   amp.unary_pairs([0.7, 0.5], [0.25, 0.1]), amp.hadamard_pairs(1.0, 20, 4)],
                         ids=["krr", "hash", "clone", "levels", "sylvester"])
def test_at_least_the_blanket_expectation(pairs):
    n = 60
    for epsilon in (0.05, 0.2, 0.5):
        exact = max(_blanket_exact(epsilon, n, pair) for pair in pairs)
        bound = amp.blanket_delta_upper(epsilon, n, pairs, 1e-6)
        assert exact <= bound <= exact * 1.05 + 1e-9, (epsilon, exact, bound)


def test_krr_matches_the_scipy_blanket_and_clone():
    """The numpy sums agree with the planner's scipy path (solvers/_shuffle_curves.py) to a few percent."""
    from ldpplan.solvers import _shuffle_curves as curves

    for e0, k, n, eps in [(1.0, 10, 1000, 0.05), (4.0, 10, 10 ** 5, 0.05), (2.0, 2, 1000, 0.2)]:
        mine, theirs = amp.blanket_delta_upper(eps, n, amp.krr_pairs(e0, k), 1e-6), \
            curves.blanket_krr_delta_upper(eps, e0, k, n)
        assert abs(mine / theirs - 1) < 0.05
        clone, fmt = amp.blanket_delta_upper(eps, n, amp.clone_pairs(e0), 1e-6), curves.clone_delta_upper(eps, e0, n)
        assert fmt * (1 - 1e-6) <= clone <= fmt * 1.1  # FMT21 sums every clone count; the blocks only add


# ---------------------------------------------------------------- (b) tighter than FMT21
@pytest.mark.parametrize("epsilon0", [pytest.param(1.0, marks=pytest.mark.slow), pytest.param(2.0, marks=pytest.mark.slow), 4.0,
                                      pytest.param(8.0, marks=pytest.mark.slow)])
def test_tighter_than_fmt21(epsilon0):
    from ldpplan.solvers.shuffle import fmt21_closed_form, fmt21_numerical

    n, delta = 10 ** 5, 1e-6
    fmt = min(fmt21_numerical(epsilon0, n, delta), fmt21_closed_form(epsilon0, n, delta))
    g = max(2, int(round(math.exp(epsilon0) + 1)))
    p = math.exp(epsilon0 / 2) / (math.exp(epsilon0 / 2) + 1)
    for pairs in (amp.glh_pairs(epsilon0, g, 1.0 / g), amp.unary_pairs([p], [1 - p]),
                  amp.unary_pairs([0.5], [1 / (math.exp(epsilon0) + 1)]), amp.hadamard_pairs(epsilon0, 100, 1)):
        ours = amp.blanket_epsilon_upper(n, delta, pairs, epsilon0, guess=fmt / 2)
        assert amp.blanket_delta_upper(ours, n, pairs, delta) <= delta
        assert ours < fmt / 1.5


# ---------------------------------------------------------------- the numerics, against mpmath / scipy
def test_log_factorial_within_the_stated_ulps():
    for point in (0, 1, 2, 10, 1000, 12345, 10 ** 6, 10 ** 7 + 3):
        value = float(sums._log_factorial(np.array([point]))[0])
        exact = mpmath.loggamma(mpmath.mpf(int(point)) + 1)
        assert abs(mpmath.mpf(value) - exact) <= sums.LGAMMA_ULPS * 2.0 ** -52 * max(1.0, abs(float(exact)))


def test_pmf_bounds_bracket_mpmath():
    for size, prob in [(50, 0.3), (20000, 0.5), (10 ** 6, 0.01)]:
        k = np.unique(np.linspace(0, size, 9).astype(int) // 1 + int(size * prob) // 2)
        k = k[k <= size]
        low, up = sums.pmf_bounds(k, size, prob)
        for kk, lo_v, up_v in zip(k, low, up):
            exact = mpmath.binomial(size, int(kk)) * mpmath.mpf(prob) ** int(kk) * (1 - mpmath.mpf(prob)) ** (size - int(kk))
            if exact > 1e-300:
                assert lo_v <= exact <= up_v


def test_chernoff_bounds_the_tails():
    for size, prob in [(100, 0.2), (5000, 0.5), (10 ** 5, 0.03)]:
        mean = size * prob
        for z in (1, 3, 6):
            hi = int(mean + z * math.sqrt(size * prob * (1 - prob))) + 1
            lo = int(mean - z * math.sqrt(size * prob * (1 - prob))) - 1
            assert sums.chernoff(size, prob, hi, True) >= binom.sf(hi - 1, size, prob)
            if lo >= 0:
                assert sums.chernoff(size, prob, lo, False) >= binom.cdf(lo, size, prob)


def test_bad_pairs_refused():
    with pytest.raises(ValueError, match="gamma"):
        amp.BlanketPair("independent", 0.0, 1, 2, 0.5, 1, 2, 0.5)
    with pytest.raises(ValueError, match="symmetric"):
        amp.BlanketPair("exclusive", 0.5, 1, 2, 0.2, 1, 3, 0.2)
    with pytest.raises(ValueError, match="keep/flip"):
        amp.unary_pairs([0.2], [0.5])


# ---------------------------------------------------------------- one round of the memoized protocols
@pytest.mark.parametrize("name", ["longitudinal-daily", "longitudinal-rappor"])
def test_longitudinal_round_channel_is_the_described_one(name):
    """The description load() reads (k-RR at epsilon_1; unary keep/flip composed bit by bit) is the runtime's
    channel of one report, and its blanket is never below the exact shuffled divergence of that channel."""
    import ldpplan
    from ldpplan import mechanisms
    from ldpplan.planner.longitudinal import EXAMPLES

    spec = {key: value for key, value in EXAMPLES[name].items() if key != "description"}
    spec.update(domain=3, users=1000, rounds=3)
    plan = ldpplan.make_plan(spec)
    runtime = mechanisms.load(plan)
    channel = np.asarray(runtime.channel_matrix())
    kind = runtime.PLAN_FIELDS.shuffle
    described = amp.randomizer_of_plan(plan, kind)
    epsilon0 = plan["guarantee"]["epsilon"]
    if described["kind"] == "krr":
        assert np.max(channel) / np.min(channel) <= math.exp(epsilon0) * (1 + 1e-12)  # k-RR at <= epsilon_1
        rows = channel.tolist()
    else:
        keep, flip = described["keep"][0], described["flip"][0]
        mine = np.array([[np.prod([(keep if j == x else flip) if (y >> j) & 1 else 1 - (keep if j == x else flip)
                                   for j in range(3)]) for y in range(8)] for x in range(3)])
        assert np.allclose(channel, mine, rtol=1e-12, atol=0)
        rows = channel.tolist()
    exact = _worst_exact(rows, 4, [0.0, 0.1])
    bound = [amp.blanket_delta_upper(eps, 4, amp.pairs_of(described, epsilon0), 1e-6) for eps in (0.0, 0.1)]
    assert np.all(np.array(bound) >= exact) and exact[0] > 0.01


@pytest.mark.slow
def test_item_sets_mixture_never_below_exact_pairs():
    """Padding and sampling (IDUE-PS): a user's report is a mixture of item (or dummy) encodings; by joint
    convexity the pairs of single atoms bound it. Sets over 2 items, L = 2 with 2 dummies, 3 users."""
    keep, flip = [0.7, 0.6], [0.2, 0.35]  # items level, dummies level
    atoms = _unary(keep, flip, [0, 0, 1, 1])  # 4 bits: items 0, 1 and dummies 2, 3
    sets = [(), (0,), (1,), (0, 1)]
    rows = []
    for members in sets:
        padded = list(members) + [2, 3][:2 - len(members)]
        rows.append([sum(atoms[a][y] for a in padded) / 2.0 for y in range(16)])
    exact = _worst_exact(rows, 3, [0.0, 0.1, 0.3])
    bound = np.array([amp.blanket_delta_upper(eps, 3, amp.unary_pairs(keep, flip), 1e-6) for eps in (0.0, 0.1, 0.3)])
    assert np.all(bound >= exact) and exact[0] > 0.01

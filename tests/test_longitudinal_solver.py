"""Memoized (longitudinal) closed forms and the exact L-GRR (solvers/longitudinal.py)."""
from __future__ import annotations

import itertools
import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpplan.solvers import SolverError
from ldpplan.solvers.longitudinal import (
    MECHANISMS, LongitudinalParameters, composed_channel_epsilon, l_grr, l_grr_composed_epsilon,
    l_grr_exact, l_osue, l_oue, longitudinal_parameters,
)

BUDGETS = [(0.5, 0.25), (1.0, 0.5), (2.0, 1.0), (4.0, 1.0), (4.0, 2.0), (8.0, 2.0)]


def _exp_decimal(x: float) -> Fraction:
    """exp(x) to 60 significant digits (decimal's exp is correctly rounded), as a Fraction."""
    with localcontext() as ctx:
        ctx.prec = 60
        return Fraction(Decimal(x).exp())


def _grr_matrix(p: float, q: float, k: int) -> np.ndarray:
    return np.where(np.eye(k, dtype=bool), p, q)  # entries exactly p and q (no float sums)


def _max_log_ratio(channel: np.ndarray) -> float:
    return float(np.max(np.log(channel.max(axis=0) / channel.min(axis=0))))


def _ue_matrices(r: LongitudinalParameters, k: int) -> tuple[list[list[float]], list[list[float]]]:
    """First round (one-hot inputs -> 2^k vectors) and second round (2^k -> 2^k), bit by bit."""
    vectors = list(itertools.product((0, 1), repeat=k))

    def bit(prob_one_given_one: float, prob_one_given_zero: float, x: int, y: int) -> float:
        p1 = prob_one_given_one if x else prob_one_given_zero
        return p1 if y else 1.0 - p1

    first = [[math.prod(bit(r.p1, r.q1, int(i == j), y[j]) for j in range(k)) for y in vectors]
             for i in range(k)]
    second = [[math.prod(bit(r.p2, r.q2, z[j], y[j]) for j in range(k)) for y in vectors] for z in vectors]
    return first, second


# ----------------------------------------------------------------------------- the 0.92 finding

def test_paper_l_grr_is_conservative_at_k10():
    # Two-path ratio solved for epsilon_1 = 1 (epsilon_perm = 4, k = 10): the composed 10-ary
    # channel, multiplied out by numpy, reveals only ~0.92.
    r = l_grr(4.0, 1.0, 10)
    composed = _grr_matrix(r.p1, r.q1, 10) @ _grr_matrix(r.p2, r.q2, 10)
    assert _max_log_ratio(composed) == pytest.approx(0.919574, abs=1e-6)
    assert r.recovered_epsilon_1 == pytest.approx(0.919574, abs=1e-6)
    # the papers' own two-path ratio is met exactly
    two_path = (r.p1 * r.p2 + r.q1 * r.q2) / (r.q1 * r.p2 + r.p1 * r.q2)
    assert math.log(two_path) == pytest.approx(1.0, rel=1e-12)


def test_paper_l_grr_exact_for_binary_domain():
    for epsilon_perm, epsilon_1 in BUDGETS:
        r = l_grr(epsilon_perm, epsilon_1, 2)
        composed = _grr_matrix(r.p1, r.q1, 2) @ _grr_matrix(r.p2, r.q2, 2)
        assert _max_log_ratio(composed) == pytest.approx(epsilon_1, rel=1e-10)


# ----------------------------------------------------------------------------- brute force, tiny k

@pytest.mark.parametrize("k", [2, 3, 4, 5])
@pytest.mark.parametrize("epsilon_perm,epsilon_1", BUDGETS)
def test_grr_closed_form_against_matrix_product(k, epsilon_perm, epsilon_1):
    for r in (l_grr(epsilon_perm, epsilon_1, k), l_grr_exact(epsilon_perm, epsilon_1, k).parameters):
        p1m, p2m = _grr_matrix(r.p1, r.q1, k), _grr_matrix(r.p2, r.q2, k)
        exact = composed_channel_epsilon(p1m.tolist(), p2m.tolist())
        closed = l_grr_composed_epsilon(r.p1, r.q1, r.p2, r.q2, k)
        assert exact.ratio == closed.ratio  # rational arithmetic: identical, not approximate
        assert exact.epsilon == pytest.approx(_max_log_ratio(p1m @ p2m), rel=1e-12)
        assert _max_log_ratio(p1m) == pytest.approx(epsilon_perm, rel=1e-12)
        # P and Q of the variance are the composed diagonal and off-diagonal
        composed = p1m @ p2m
        assert composed[0, 0] == pytest.approx(r.support_true, rel=1e-12)
        assert composed[1, 0] == pytest.approx(r.support_other, rel=1e-12)


@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("name", ["L-SUE", "L-OUE", "L-OSUE", "L-SOUE"])
def test_unary_closed_forms_against_exhaustive_composition(name, k):
    for epsilon_perm, epsilon_1 in [(1.0, 0.5), (4.0, 1.0), (4.0, 2.0)]:
        r = longitudinal_parameters(name, epsilon_perm, epsilon_1, k)
        first, second = _ue_matrices(r, k)
        identity = np.eye(len(second)).tolist()
        assert composed_channel_epsilon(first, identity).epsilon == pytest.approx(epsilon_perm, rel=1e-9)
        assert composed_channel_epsilon(first, second).epsilon == pytest.approx(epsilon_1, rel=1e-9)
        composed = np.array(first) @ np.array(second)
        assert _max_log_ratio(composed) == pytest.approx(epsilon_1, rel=1e-9)


def test_exp_lower_and_log_upper_are_rigorous():
    from ldpplan.solvers._exact_channel import exp_lower, log_upper

    for x in (0.0, 1e-9, 0.5, 1.0, 4.0, 12.5):
        below = exp_lower(x)
        assert below <= _exp_decimal(x) and float(below) == pytest.approx(math.exp(x), rel=1e-15)
        upper = log_upper(_exp_decimal(x))
        assert upper == pytest.approx(x, abs=4 * math.ulp(max(x, 1.0)))  # rounded up by at most a few ulps
    with pytest.raises(ValueError, match="^x: must be"):
        exp_lower(-1.0)


def test_composed_channel_rejects_bad_input():
    with pytest.raises(ValueError, match="shapes"):
        composed_channel_epsilon([[0.5, 0.5]], [[1.0, 0.0]])
    with pytest.raises(ValueError, match="probability 0"):
        composed_channel_epsilon([[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]])


# ----------------------------------------------------------------------------- recovery

@pytest.mark.parametrize("name", MECHANISMS)
@pytest.mark.parametrize("epsilon_perm,epsilon_1", BUDGETS)
def test_epsilons_recovered_from_probabilities(name, epsilon_perm, epsilon_1):
    for k in (2, 10, 100):
        try:
            r = longitudinal_parameters(name, epsilon_perm, epsilon_1, k)
        except SolverError:
            assert name in ("L-OUE", "L-SOUE")  # OUE-shaped second round has a ceiling
            continue
        assert 0 < r.q1 < r.p1 < 1 and 0 < r.q2 < r.p2 <= 1
        assert r.recovered_epsilon_perm == pytest.approx(epsilon_perm, rel=1e-12)
        if name == "L-GRR" and k > 2:
            assert r.recovered_epsilon_1 < epsilon_1 - 1e-6  # the papers' form is conservative
        else:
            assert r.recovered_epsilon_1 == pytest.approx(epsilon_1, rel=1e-10)


def test_oue_second_round_ceiling():
    # p2 = 1/2, q2 -> 0 reaches at most ln(p1 (2 - q1) / ((2 - p1) q1)) (Arcolezi et al., L-OUE).
    p1, q1 = 0.5, 1 / (math.exp(1.0) + 1)
    ceiling = math.log(p1 * (2 - q1) / ((2 - p1) * q1))
    assert l_oue(1.0, 0.999 * ceiling, 10).q2 < 1e-2
    with pytest.raises(SolverError, match="epsilon_1"):
        l_oue(1.0, 1.001 * ceiling, 10)


def test_osue_closed_form_equals_quadratic_root():
    # The paper's explicit L-OSUE p2 and the generic SUE-shaped quadratic (via L-SUE's solver path)
    from ldpplan.solvers.longitudinal import _solve_unary_second

    for epsilon_perm, epsilon_1 in BUDGETS:
        r = l_osue(epsilon_perm, epsilon_1, 7)
        p2, q2 = _solve_unary_second(r.p1, r.q1, epsilon_1, symmetric=True)
        assert r.p2 == pytest.approx(p2, rel=1e-12) and r.q2 == pytest.approx(q2, rel=1e-10)


def test_validation_messages():
    with pytest.raises(ValueError, match="^epsilon_1: must be below epsilon_perm"):
        l_grr(1.0, 1.0, 5)
    with pytest.raises(ValueError, match="^epsilon_perm: must be a finite number > 0"):
        l_osue(math.inf, 1.0, 5)
    with pytest.raises(ValueError, match="^k: must be an integer >= 2"):
        l_grr(2.0, 1.0, 1)
    with pytest.raises(ValueError, match="^mechanism: must be one of"):
        longitudinal_parameters("L-XYZ", 2.0, 1.0, 5)
    with pytest.raises(ValueError, match="^tolerance"):
        l_grr_exact(2.0, 1.0, 5, tolerance=0.0)


# ----------------------------------------------------------------------------- exact L-GRR

@pytest.mark.parametrize("k", [2, 3, 10, 100, 1000])
@pytest.mark.parametrize("epsilon_perm,epsilon_1", BUDGETS)
def test_exact_l_grr_meets_and_never_exceeds(k, epsilon_perm, epsilon_1):
    x = l_grr_exact(epsilon_perm, epsilon_1, k)
    r = x.parameters
    # independent exact checks: rational ratios against decimal's correctly rounded exp
    assert Fraction(r.p1) / Fraction(r.q1) <= _exp_decimal(epsilon_perm)
    assert l_grr_composed_epsilon(r.p1, r.q1, r.p2, r.q2, k).ratio <= _exp_decimal(epsilon_1)
    assert x.epsilon_1_achieved <= epsilon_1 and x.epsilon_perm_achieved <= epsilon_perm
    assert 0 <= x.tolerance < 1e-11
    assert x.epsilon_1_achieved == pytest.approx(epsilon_1, abs=1e-11)
    assert r.p2 == pytest.approx(x.p2_closed_form, abs=1e-12)
    paper = l_grr(epsilon_perm, epsilon_1, k)
    if k == 2:
        assert r.p2 == pytest.approx(paper.p2, abs=1e-12)
    else:
        assert r.p2 > paper.p2 and r.approximate_variance() < paper.approximate_variance()


def test_exact_l_grr_variance_gains():
    # Gains of the exact composed channel over the papers' L-GRR (variance ratio at f = 0).
    def gain(epsilon_perm, epsilon_1, k):
        return (l_grr(epsilon_perm, epsilon_1, k).approximate_variance()
                / l_grr_exact(epsilon_perm, epsilon_1, k).parameters.approximate_variance())

    assert gain(4.0, 1.0, 2) == pytest.approx(1.0, abs=1e-9)
    assert gain(4.0, 1.0, 10) == pytest.approx(1.2725, abs=1e-4)
    assert gain(2.0, 1.0, 10) == pytest.approx(2.6907, abs=1e-4)
    assert gain(4.0, 1.0, 100) == pytest.approx(7.2444, abs=1e-4)


# ----------------------------------------------------------------------------- variance

def _simulate_estimates(r: LongitudinalParameters, values: np.ndarray, repeats: int,
                        rng: np.random.Generator) -> np.ndarray:
    """Estimated frequencies (repeats x k) from a full two-round simulation of every user."""
    k, n = r.k, values.size
    unary = not r.mechanism.startswith("L-GRR")
    out = np.empty((repeats, k))
    for t in range(repeats):
        if unary:
            onehot = np.zeros((n, k), dtype=bool)
            onehot[np.arange(n), values] = True
            first = rng.random((n, k)) < np.where(onehot, r.p1, r.q1)
            second = rng.random((n, k)) < np.where(first, r.p2, r.q2)
            counts = second.sum(axis=0)
        else:
            def grr(x, p):
                keep = rng.random(n) < p
                return np.where(keep, x, (x + rng.integers(1, k, n)) % k)
            counts = np.bincount(grr(grr(values, r.p1), r.p2), minlength=k)
        out[t] = (counts / n - r.support_other) / ((r.p1 - r.q1) * (r.p2 - r.q2))
    return out


@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
@pytest.mark.parametrize("name", ["L-GRR", "L-GRR-exact", "L-SUE", "L-OUE", "L-OSUE", "L-SOUE"])
def test_variance_against_monte_carlo(name):
    r = longitudinal_parameters(name, 3.0, 1.0, 4)
    freqs = np.array([0.5, 0.3, 0.2, 0.0])
    n, repeats = 2000, 2000
    values = np.repeat(np.arange(4), (freqs * n).astype(int))
    est = _simulate_estimates(r, values, repeats, np.random.default_rng(20260522))
    for v in range(4):
        var = r.variance(n, freqs[v])
        # unbiased: the mean of `repeats` estimates has standard deviation sqrt(var / repeats)
        assert abs(est[:, v].mean() - freqs[v]) < 4.5 * math.sqrt(var / repeats)
        # sample variance: relative standard deviation ~ sqrt(2 / (repeats - 1)) (near-Gaussian)
        assert est[:, v].var(ddof=1) == pytest.approx(var, rel=4.5 * math.sqrt(2 / (repeats - 1)))
    assert r.variance(n, 0.0) == r.approximate_variance(n)


def test_approximate_variance_closed_form():
    r = l_osue(2.0, 1.0, 10)
    gamma = r.q1 * (r.p2 - r.q2) + r.q2
    expected = gamma * (1 - gamma) / (1000 * (r.p1 - r.q1) ** 2 * (r.p2 - r.q2) ** 2)
    assert r.approximate_variance(1000) == pytest.approx(expected, rel=1e-14)
    assert r.support_other == pytest.approx(gamma, rel=1e-14)


# ----------------------------------------------------------------------------- properties

@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
@settings(derandomize=True, max_examples=200, deadline=None)
@given(epsilon_perm=st.floats(0.05, 10.0), share=st.floats(0.02, 0.98), k=st.integers(2, 500))
def test_properties(epsilon_perm, share, k):
    epsilon_1 = epsilon_perm * share
    for name in MECHANISMS:
        try:
            r = longitudinal_parameters(name, epsilon_perm, epsilon_1, k)
        except SolverError:
            assert name in ("L-OUE", "L-SOUE")
            continue
        assert 0 < r.q1 < r.p1 < 1 and 0 <= r.q2 < r.p2 <= 1
        assert r.recovered_epsilon_perm == pytest.approx(epsilon_perm, rel=1e-9)
        assert r.recovered_epsilon_1 <= epsilon_1 * (1 + 1e-9)
    x = l_grr_exact(epsilon_perm, epsilon_1, k)
    assert x.epsilon_1_achieved <= epsilon_1 and x.epsilon_perm_achieved <= epsilon_perm
    assert x.parameters.approximate_variance() <= l_grr(epsilon_perm, epsilon_1, k).approximate_variance() * (1 + 1e-9)


# ----------------------------------------------------------------------------- independent implementation

_MFL = {"L-GRR": "L_GRR", "L-SUE": "L_SUE", "L-OUE": "L_OUE", "L-OSUE": "L_OSUE", "L-SOUE": "L_SOUE"}


@pytest.mark.oracle
@pytest.mark.parametrize("name", list(_MFL))
def test_probabilities_equal_multi_freq_ldpy(name, monkeypatch):
    """multi-freq-ldpy (Arcolezi's own package, bench extra) computes (p1, q1, p2, q2) inside its
    aggregators and hands them to ``MI_long``; we record them there."""
    pytest.importorskip("multi_freq_ldpy", reason="multi-freq-ldpy is in the oracle extra")
    import importlib

    module = importlib.import_module(f"multi_freq_ldpy.long_freq_est.{_MFL[name]}")
    seen = []
    monkeypatch.setattr(module, "MI_long", lambda counts, n, p1, q1, p2, q2: seen.append((p1, q1, p2, q2)))
    aggregate = getattr(module, f"{_MFL[name]}_Aggregator_MI")
    for k in (2, 5, 10, 50):
        for epsilon_perm, epsilon_1 in BUDGETS:
            try:
                ours = longitudinal_parameters(name, epsilon_perm, epsilon_1, k)
            except SolverError:
                continue
            seen.clear()
            if name == "L-GRR":
                aggregate([0], k, epsilon_perm, epsilon_1)
            else:
                aggregate([np.zeros(k)], epsilon_perm, epsilon_1)
            (theirs,) = seen
            assert np.allclose([ours.p1, ours.q1, ours.p2, ours.q2], theirs, rtol=1e-9, atol=1e-12), (k, epsilon_perm)


@pytest.mark.oracle
def test_variance_equals_multi_freq_ldpy():
    mfl = pytest.importorskip("multi_freq_ldpy.long_freq_est.Variance_LONG_PURE",
                              reason="multi-freq-ldpy is in the oracle extra")
    for name in ("L-GRR", "L-OSUE", "L-SUE"):
        r = longitudinal_parameters(name, 4.0, 1.0, 10)
        assert r.approximate_variance(5000) == pytest.approx(
            mfl.VAR_Long_Pure(r.p1, r.q1, r.p2, r.q2, n=5000), rel=1e-12)


@pytest.mark.parametrize("k", [2, 3, 10, 100])
def test_exact_l_grr_composes_to_one_shot_grr(k):
    # GRR matrices are closed under products, so the exact composed channel IS GRR(epsilon_1):
    # P = e^eps1/(e^eps1 + k - 1), Q = (1 - P)/(k - 1), and the per-round variance equals one-shot
    # GRR's q(1-q)/(n (p-q)^2) whatever epsilon_perm (Wang et al. 2017, GRR variance).
    p = math.exp(1.0) / (math.exp(1.0) + k - 1)
    q = (1 - p) / (k - 1)
    for epsilon_perm in (1.5, 3.0, 8.0):
        r = l_grr_exact(epsilon_perm, 1.0, k).parameters
        assert r.support_true == pytest.approx(p, rel=1e-11)
        assert r.support_other == pytest.approx(q, rel=1e-11)
        assert r.approximate_variance(100) == pytest.approx(q * (1 - q) / (100 * (p - q) ** 2), rel=1e-9)

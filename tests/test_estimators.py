"""Tests of the shared estimators (mechanisms/_estimators.py)."""
from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpplan.mechanisms._fit import SimplexFit
from ldpplan.mechanisms._estimators import (
    bonferroni_z,
    em_simplex,
    project_simplex,
    significance_threshold,
)


def rr_matrix(epsilon: float, k: int) -> np.ndarray:
    """k-ary RR channel Q[x, y] (ULDP paper eq. 2)."""
    e = math.exp(epsilon)
    q = np.full((k, k), 1.0 / (e + k - 1))
    np.fill_diagonal(q, e / (e + k - 1))
    return q


# ---------------------------------------------------------------- significance threshold
def test_bonferroni_z_values():
    # Phi^{-1}(1 - 0.05/1) = 1.6449, Phi^{-1}(1 - 0.05/400) = 3.6623 (standard tables)
    assert bonferroni_z(0.05, 1) == pytest.approx(1.644854, abs=1e-6)
    assert bonferroni_z(0.05, 400) == pytest.approx(NormalDist().inv_cdf(1 - 0.05 / 400), rel=1e-12)
    assert bonferroni_z(0.05, 400) == pytest.approx(3.66226, abs=1e-4)
    with pytest.raises(ValueError):
        bonferroni_z(0.0, 3)


def test_significance_threshold_hand_example():
    # K = 4, n = 100, variance 0.25 per user -> sd 0.05, z = Phi^-1(1 - 0.0125) = 2.2414 -> T = 0.11207
    est = np.array([0.5, 0.3, 0.1, 0.1])
    out = significance_threshold(est, 100, 0.25)
    # 0.5 and 0.3 are significant; the remaining 0.2 goes uniformly to the other two
    np.testing.assert_allclose(out, [0.5, 0.3, 0.1, 0.1])
    est = np.array([0.6, 0.35, 0.11, -0.06])
    out = significance_threshold(est, 100, 0.25)
    np.testing.assert_allclose(out, [0.6, 0.35, 0.025, 0.025])


def test_significance_threshold_overfull_and_empty():
    est = np.array([0.7, 0.5, -0.1, -0.1])
    out = significance_threshold(est, 10_000, 0.25)
    np.testing.assert_allclose(out, [0.7 / 1.2, 0.5 / 1.2, 0.0, 0.0])
    out = significance_threshold(np.array([0.01, 0.02, -0.01]), 10, 1.0)
    np.testing.assert_allclose(out, np.full(3, 1 / 3))


def test_significance_threshold_per_entry_variance():
    est = np.array([0.2, 0.2, 0.6])
    # second entry has a huge variance: not significant
    out = significance_threshold(est, 100, np.array([0.01, 100.0, 0.01]))
    np.testing.assert_allclose(out, [0.2, 0.2, 0.6])
    assert out.sum() == pytest.approx(1.0)
    with pytest.raises(ValueError):
        significance_threshold(est, 0, 1.0)
    with pytest.raises(ValueError):
        significance_threshold(est, 10, -1.0)


# ---------------------------------------------------------------- projection
@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-5, 5), min_size=1, max_size=12))
def test_project_simplex_is_projection(values):
    v = np.array(values)
    p = project_simplex(v)
    assert np.all(p >= 0) and p.sum() == pytest.approx(1.0, abs=1e-12)
    # KKT: p = max(v - tau, 0) for one tau, and any simplex point is not closer
    rng = np.random.default_rng(len(values))
    for _ in range(5):
        other = rng.dirichlet(np.ones(v.size))
        assert np.sum((p - v) ** 2) <= np.sum((other - v) ** 2) + 1e-12


def test_project_simplex_closed_form():
    np.testing.assert_allclose(project_simplex([0.5, 0.5]), [0.5, 0.5])
    np.testing.assert_allclose(project_simplex([2.0, 0.0]), [1.0, 0.0])
    np.testing.assert_allclose(project_simplex([0.6, 0.6, -1.0]), [0.5, 0.5, 0.0])


# ---------------------------------------------------------------- EM
def test_em_binary_rr_closed_form_interior_and_boundary():
    # binary RR, Pr(y = x) = a: the MLE on the simplex is clip((m0 - (1 - a)) / (2a - 1), 0, 1)
    a = 0.75
    lik = np.array([[a, 1 - a], [1 - a, a]])  # rows: reports, cols: inputs
    for n0, n1 in [(600, 400), (300, 700), (200, 800), (100, 900)]:
        m0 = n0 / (n0 + n1)
        expected = min(max((m0 - (1 - a)) / (2 * a - 1), 0.0), 1.0)
        res = em_simplex(lik, np.array([n0, n1], dtype=float), tol=1e-13)
        assert isinstance(res, SimplexFit)
        assert res.converged
        assert res.frequency[0] == pytest.approx(expected, abs=1e-6)
        assert res.frequency.sum() == pytest.approx(1.0, abs=1e-12)


def test_em_log_likelihood_is_monotone_and_reported():
    rng = np.random.default_rng(3)
    q = rr_matrix(0.5, 6)
    p = rng.dirichlet(np.ones(6))
    counts = rng.multinomial(500, p @ q).astype(float)
    lik = q.T  # lik[y, x] = Q[x, y]
    values = [em_simplex(lik, counts, tol=0.0, max_iter=t).log_likelihood for t in range(1, 40)]
    assert np.all(np.diff(values) >= -1e-9)
    res = em_simplex(lik, counts)
    assert res.log_likelihood == pytest.approx(float(counts @ np.log(lik @ res.frequency)), rel=1e-12)
    assert res.log_likelihood >= values[-1] - 1e-9
    assert not em_simplex(lik, counts, tol=0.0, max_iter=5).converged
    assert em_simplex(lik, counts, tol=0.0, max_iter=5).iterations == 5


def test_em_row_scaling_invariance():
    rng = np.random.default_rng(4)
    q = rr_matrix(1.0, 5)
    counts = rng.multinomial(300, rng.dirichlet(np.ones(5)) @ q).astype(float)
    a = em_simplex(q.T, counts, tol=1e-12).frequency
    b = em_simplex(q.T * rng.uniform(0.1, 10, size=(5, 1)), counts, tol=1e-12).frequency
    np.testing.assert_allclose(a, b, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(2, 8),
    st.floats(0.1, 4.0),
    st.integers(20, 2000),
    st.integers(0, 2**32 - 1),
)
@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
def test_em_beats_projected_empirical(k, epsilon, n, seed):
    rng = np.random.default_rng(seed)
    q = rr_matrix(epsilon, k)
    p = rng.dirichlet(np.ones(k) * 0.5)
    counts = rng.multinomial(n, p @ q).astype(float)
    lik = q.T
    res = em_simplex(lik, counts, tol=1e-9, max_iter=20000)
    assert np.all(res.frequency >= 0) and res.frequency.sum() == pytest.approx(1.0, abs=1e-12)
    emp = np.linalg.solve(q.T, counts / n)  # eq. (3): m = p Q
    proj = project_simplex(emp)
    ll_proj = float(counts @ np.log(lik @ proj))
    assert res.log_likelihood >= ll_proj - 1e-6 * max(1.0, abs(ll_proj))
    # when the empirical estimate is inside the simplex it is the MLE itself
    if np.all(emp > 1e-3) and res.converged:
        np.testing.assert_allclose(res.frequency, emp, atol=1e-4)


def test_em_rejects_bad_input():
    with pytest.raises(ValueError):
        em_simplex(np.ones((2, 2)), np.ones(3))
    with pytest.raises(ValueError):
        em_simplex(np.array([[1.0, 0.0], [0.0, 0.0]]), np.array([1.0, 1.0]))
    with pytest.raises(ValueError):
        em_simplex(np.ones((2, 2)), np.zeros(2))
    # a zero-weight impossible report is ignored
    res = em_simplex(np.array([[1.0, 0.0], [0.0, 0.0]]), np.array([1.0, 0.0]))
    np.testing.assert_allclose(res.frequency, [1.0, 0.0], atol=1e-9)


def test_em_accelerated_matches_plain_and_is_monotone():
    rng = np.random.default_rng(11)
    q = rr_matrix(0.3, 10)
    counts = rng.multinomial(2000, rng.dirichlet(np.ones(10) * 0.3) @ q).astype(float)
    plain = em_simplex(q.T, counts, tol=1e-11, max_iter=200000)
    fast = em_simplex(q.T, counts, tol=1e-11, max_iter=200000, accelerate=True)
    assert fast.converged
    assert fast.iterations < plain.iterations
    assert fast.log_likelihood >= plain.log_likelihood - 1e-7
    np.testing.assert_allclose(fast.frequency, plain.frequency, atol=1e-4)
    values = [em_simplex(q.T, counts, tol=0.0, max_iter=t, accelerate=True).log_likelihood for t in range(1, 30)]
    assert np.all(np.diff(values) >= -1e-9)


def test_structured_rr_channel_matches_dense_em():
    from ldpplan.mechanisms._estimators import RRChannel, em_simplex

    k, mu = 7, 0.55
    nu = (1 - mu) / (k - 1)
    dense = np.full((k, k), nu) + (mu - nu) * np.eye(k)
    counts = np.array([50, 0, 3, 20, 7, 1, 0], dtype=float)
    a = em_simplex(RRChannel(mu, nu, k), counts, tol=1e-12, accelerate=True)
    b = em_simplex(dense, counts, tol=1e-12, accelerate=True)
    np.testing.assert_allclose(a.frequency, b.frequency, atol=1e-9)
    assert a.log_likelihood == pytest.approx(b.log_likelihood, rel=1e-12)
    assert a.converged and abs(a.frequency.sum() - 1) < 1e-12 and np.all(a.frequency >= 0)

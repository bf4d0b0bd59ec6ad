"""Tests of the full-report unary MLE by projected Newton (mechanisms/_unary_mle.py) and its uRAP path.

The iterative EM (``unary_em_full``) is the cross-check; closed forms and a 1-D exact root
pin the answer on tiny cases; the certificate is checked against the true shortfall.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpplan.mechanisms._unary_em import unary_em_full
from ldpplan.mechanisms._unary_mle import binary_rows_mle, unary_mle_full, unary_mle_patterns
from ldpplan.mechanisms.uldp import BasicRAPPOR, UtilityOptimizedRAPPOR
from ldpplan.mechanisms.uldp._urap_data import sensitive_patterns
from ldpplan.mechanisms.uldp.runtime import unpack_bits

OUE = (0.5, 1 / (math.e + 1))


def unary_reports(a, b, f, n, seed):
    rng = np.random.default_rng(seed)
    d = f.size
    a, b = np.broadcast_to(a, (d,)), np.broadcast_to(b, (d,))
    x = rng.choice(d, size=n, p=f)
    y = rng.random((n, d)) < b[None, :]
    y[np.arange(n), x] = rng.random(n) < a[x]
    return y


def full_loglik(y, a, b, f):
    """sum_r log sum_x f_x prod_j Pr(y_rj | x), from the definition (ULDP eq. 8)."""
    d = y.shape[1]
    a, b = np.broadcast_to(a, (d,)), np.broadcast_to(b, (d,))
    p1 = np.where(np.eye(d, dtype=bool), a[None, :], b[:, None]).T  # p1[x, j] = Pr(y_j = 1 | x)
    lik = np.where(y[:, None, :], p1[None], 1 - p1[None]).prod(axis=2)
    with np.errstate(divide="ignore"):
        return float(np.sum(np.log(lik @ f))), lik


def gradient(lik, f):
    return lik.T @ (1.0 / (lik @ f))


def zipf(d, s=1.5):
    w = 1.0 / np.arange(1, d + 1) ** s
    return w / w.sum()


# ---------------------------------------------------------------- exact answers on tiny cases
def test_two_inputs_equals_the_exact_one_dimensional_root():
    # d = 2: L(p) = sum_r log(p l_r0 + (1 - p) l_r1) is concave in p; its derivative has one root (bisection
    # to the last bit), or the maximum sits at an end point
    a, b = OUE
    y = unary_reports(a, b, np.array([0.8, 0.2]), 500, 3)
    _, lik = full_loglik(y, a, b, np.array([0.5, 0.5]))
    deriv = lambda p: float(np.sum((lik[:, 0] - lik[:, 1]) / (p * lik[:, 0] + (1 - p) * lik[:, 1])))  # noqa: E731
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if deriv(mid) > 0 else (lo, mid)
    res = unary_mle_full(y, a, b)
    np.testing.assert_allclose(res.frequency, [lo, 1 - lo], atol=1e-10)
    assert res.converged and res.optimality_gap <= 1e-9
    assert res.log_likelihood == pytest.approx(full_loglik(y, a, b, res.frequency)[0], rel=1e-13)


def test_two_inputs_at_the_boundary():
    # every report looks like input 0: the MLE is the vertex (1, 0), where dL/df_1 <= dL/df_0
    a, b = 0.75, 0.25
    y = np.array([[1, 0]] * 30 + [[1, 1]] * 3, dtype=bool)
    res = unary_mle_full(y, a, b)
    np.testing.assert_allclose(res.frequency, [1.0, 0.0], atol=1e-12)
    _, lik = full_loglik(y, a, b, res.frequency)
    g = gradient(lik, res.frequency)
    assert g[1] <= g[0] and res.optimality_gap <= 1e-12


def test_all_reports_pinned_is_the_histogram():
    # every report has one bit with b = 0 set: the MLE is the histogram of those bits (closed form)
    a = np.array([0.6, 0.6, 0.9, 0.9])
    b = np.array([0.3, 0.3, 0.0, 0.0])
    y = np.array([[0, 1, 1, 0], [1, 1, 0, 1], [0, 0, 1, 0], [1, 0, 1, 0]], dtype=bool)
    res = unary_mle_full(y, a, b)
    np.testing.assert_allclose(res.frequency, [0, 0, 0.75, 0.25], atol=1e-12)
    assert res.log_likelihood == pytest.approx(full_loglik(y, a, b, res.frequency)[0], rel=1e-12)
    assert res.optimality_gap <= 1e-9


def test_rappor_three_inputs_equals_a_fine_exhaustive_search():
    # d = 3: the simplex on a 1/300 grid; the Newton
    # answer must be at least as good as every grid point and within the grid step of the best one
    a, b = 0.7, 0.3
    y = unary_reports(a, b, np.array([0.6, 0.4, 0.0]), 300, 9)
    res = unary_mle_full(y, a, b)
    _, lik = full_loglik(y, a, b, res.frequency)
    k = 300
    i, j = np.meshgrid(np.arange(k + 1), np.arange(k + 1), indexing="ij")
    ok = i + j <= k
    grid = np.stack([i[ok], j[ok], k - i[ok] - j[ok]], axis=1) / k
    with np.errstate(divide="ignore"):
        values = np.log(lik @ grid.T).sum(axis=0)
    best = grid[int(np.argmax(values))]
    assert res.log_likelihood - full_loglik(y, a, b, res.frequency)[0] == pytest.approx(0.0, abs=1e-9)
    assert float(np.sum(np.log(lik @ res.frequency))) >= float(values.max()) - 1e-12
    np.testing.assert_allclose(res.frequency, best, atol=2.0 / k)


# ---------------------------------------------------------------- against the EM, certificate, KKT
@pytest.mark.parametrize("seed, d, sens", [(1, 6, 6), (2, 12, 12), (3, 12, 5), (4, 20, 8)])
def test_newton_beats_em_and_satisfies_kkt(seed, d, sens):
    # RAPPOR-like (sens = d) and uRAP-like (X_N bits with b = 0 pin their report), skewed inputs with zeros
    theta, d1, d2 = 0.62, 0.38, 0.6
    mask = np.arange(d) < sens
    a, b = np.where(mask, theta, 1 - d2), np.where(mask, d1, 0.0)
    f = zipf(d)[np.random.default_rng(seed).permutation(d)]
    y = unary_reports(a, b, f, 2000, seed)
    res = unary_mle_full(y, a, b)
    em = unary_em_full(y, a, b, tol=1e-15, max_iter=20000)
    assert res.converged and res.optimality_gap < 1e-6
    assert res.log_likelihood >= em.log_likelihood - 1e-12 * abs(em.log_likelihood)
    ll, lik = full_loglik(y, a, b, res.frequency)
    assert res.log_likelihood == pytest.approx(ll, rel=1e-12)
    # KKT on the simplex: dL/df_x = n on the support, <= n off it (W = n: g . f = n)
    g = gradient(lik, res.frequency)
    on = res.frequency > 0
    np.testing.assert_allclose(g[on], 2000.0, rtol=1e-9)
    assert np.all(g[~on] <= 2000.0 * (1 + 1e-9))
    assert (~on).any() or d == 6  # skewed data put coordinates at the boundary
    # the certificate is the Jensen bound of the module docstring, recomputed here
    assert res.optimality_gap == pytest.approx(max(0.0, 2000 * math.log(g.max() / 2000)), abs=1e-9)


@pytest.mark.parametrize("tol", [1e-3, 1e-6])
def test_gap_bound_certifies_the_shortfall(tol):
    a, b = OUE
    f = np.random.default_rng(71).dirichlet(np.full(12, 0.3))
    y = unary_reports(a, b, f, 3000, 71)
    best = unary_mle_full(y, a, b, tol=1e-16)
    res = unary_mle_full(y, a, b, tol=tol, init=np.full(12, 1 / 12))
    assert res.converged and res.method == "newton"
    assert 0 <= best.log_likelihood - res.log_likelihood <= res.optimality_gap + 1e-9
    capped = unary_mle_full(y, a, b, tol=0, max_iter=1, init=np.full(12, 1 / 12))
    assert capped.iterations == 1 and not capped.converged
    assert best.log_likelihood - capped.log_likelihood <= capped.optimality_gap + 1e-9


def test_relative_tolerance_and_bad_arguments():
    a, b = OUE
    y = unary_reports(a, b, zipf(8), 1000, 5)
    loose = unary_mle_full(y, a, b, tol=1e-3)
    assert loose.converged and loose.optimality_gap <= 1e-3 * abs(loose.log_likelihood)
    with pytest.raises(ValueError, match="tol"):
        unary_mle_full(y, a, b, tol=-1)
    with pytest.raises(ValueError, match="max_iter"):
        unary_mle_full(y, a, b, max_iter=0)
    with pytest.raises(ValueError, match="0 and 1"):
        binary_rows_mle([[0, 2]], [1.0, 1.0], [2.0, 2.0])
    with pytest.raises(ValueError, match="init"):
        unary_mle_full(y, a, b, init=-np.ones(8))


def test_idle_columns_without_pins_share_their_group_total():
    # two columns that are 0 in every report and never pinned: L depends only on their sum (the MLE is not
    # unique); the split is uniform and the likelihood equals the EM's
    a, b = 0.6, 0.3
    y = unary_reports(a, b, np.random.default_rng(5).dirichlet(np.full(6, 0.5)), 400, 5)
    y[:, [1, 4]] = False
    lo, hi = np.full(6, (1 - a) / (1 - b)), np.full(6, a / b)
    lo[[1, 4]] = 2.0  # a larger low value than the others: their total is positive at the MLE
    res = binary_rows_mle(y, lo, hi)
    assert res.frequency[1] == res.frequency[4] > 0
    from ldpplan.mechanisms._unary_em import binary_rows_em

    em = binary_rows_em(y, lo, hi, tol=1e-15, max_iter=20000)
    assert res.log_likelihood >= em.log_likelihood - 1e-12 * abs(em.log_likelihood)
    assert res.frequency[1] + res.frequency[4] == pytest.approx(em.frequency[1] + em.frequency[4], abs=1e-6)


def test_grouped_rows_equal_repeated_rows():
    # weights (and the automatic merging of identical short rows) give the same MLE as repeated rows
    a, b = OUE
    y = unary_reports(a, b, zipf(5), 800, 8)
    pattern, cnt = np.unique(y, axis=0, return_counts=True)
    one = unary_mle_full(y, a, b)
    grouped = unary_mle_full(pattern, a, b, weights=cnt)
    np.testing.assert_allclose(grouped.frequency, one.frequency, atol=1e-9)
    assert grouped.log_likelihood == pytest.approx(one.log_likelihood, rel=1e-13)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(d=st.integers(2, 9), n=st.integers(5, 300), sens=st.integers(1, 9), eps=st.floats(0.3, 4.0),
       seed=st.integers(0, 10**6))
def test_property_newton_not_below_em_and_certified(d, n, sens, eps, seed):
    sens = min(sens, d)
    theta = math.exp(eps / 2) / (1 + math.exp(eps / 2))
    mask = np.arange(d) < sens
    a, b = np.where(mask, theta, 0.7), np.where(mask, 1 - theta, 0.0)
    f = np.random.default_rng(seed).dirichlet(np.full(d, 0.4))
    y = unary_reports(a, b, f, n, seed)
    res = unary_mle_full(y, a, b)
    em = unary_em_full(y, a, b, tol=1e-14, max_iter=5000)
    assert res.log_likelihood >= em.log_likelihood - 1e-12 * abs(em.log_likelihood) - 1e-9
    assert res.optimality_gap < 1e-6
    assert np.all(res.frequency >= 0) and res.frequency.sum() == pytest.approx(1.0, abs=1e-12)


# ---------------------------------------------------------------- the uRAP runtime path
def _urap(k, ks, seed=0, sensitive=None):
    rng = np.random.default_rng(seed)
    sens = np.arange(ks) if sensitive is None else np.asarray(sensitive)
    return UtilityOptimizedRAPPOR(domain=k, sensitive=sens, theta=0.625, d1=0.375, d2=0.5), rng


@pytest.mark.parametrize("k, sensitive", [(13, [0, 3, 4, 9, 12]), (16, list(range(8))), (21, list(range(21))),
                                          (30, [29]), (9, [1, 2, 3, 4, 5, 6, 7, 8])])
def test_sensitive_patterns_equal_the_unpacked_reports(k, sensitive):
    mech, rng = _urap(k, 0, sensitive=sensitive)
    x = rng.choice(k, size=3000, p=zipf(k, 1.1))
    rep = mech.perturb(x, rng)
    pat, revealed, ones = mech.sensitive_patterns(rep)
    y = unpack_bits(rep["bits"], k)
    mask = np.asarray(mech.sensitive_mask)
    inv = y[:, ~mask].any(axis=1)
    np.testing.assert_array_equal(pat, np.packbits(y[~inv][:, mask], axis=1))
    np.testing.assert_array_equal(ones, y.sum(axis=0))
    np.testing.assert_array_equal(revealed, np.where(mask, 0, y[inv].sum(axis=0)))
    a, b = mech.unary_parameters()
    fast = unary_mle_patterns(pat, np.flatnonzero(mask), revealed, ones, len(rep), a, b)
    slow = unary_mle_full(y, a, b)
    np.testing.assert_allclose(fast.frequency, slow.frequency, atol=1e-9)
    assert fast.log_likelihood == pytest.approx(slow.log_likelihood, rel=1e-13)


def test_sensitive_patterns_reject_impossible_reports():
    mech, rng = _urap(13, 5)
    rep = mech.perturb(rng.integers(0, 13, 50), rng)
    bits = rep["bits"].copy()
    bits[0, 1] |= 0b110  # items 9 and 10 (X_N) both set
    with pytest.raises(ValueError, match="two non-sensitive bits"):
        sensitive_patterns(bits, np.asarray(mech.sensitive_mask))
    bits = rep["bits"].copy()
    bits[0, 1] |= 0b10000000  # padding bit 15 of a 13-bit report
    with pytest.raises(ValueError, match="padding"):
        sensitive_patterns(bits, np.asarray(mech.sensitive_mask))
    with pytest.raises(ValueError, match="inconsistent"):
        a, b = mech.unary_parameters()
        unary_mle_patterns(np.zeros((3, 1), np.uint8), np.arange(5), np.zeros(13), np.zeros(13), 4, a, b)


@pytest.mark.parametrize("cls", ["urap", "rappor"])
def test_runtime_em_reports_the_certificate(cls):
    k = 40
    mech = UtilityOptimizedRAPPOR(domain=k, sensitive=np.arange(12), theta=0.625, d1=0.375, d2=0.5) if cls == "urap" \
        else BasicRAPPOR(domain=k, theta=0.625, psi=0.375)
    rng = np.random.default_rng(11)
    rep = mech.perturb(rng.choice(k, size=4000, p=zipf(k)), rng)
    est = mech.estimate(rep, "em")
    assert est.optimality_gap is not None and 0 <= est.optimality_gap < 1e-6
    assert est.to_dict()["optimality_gap"] == est.optimality_gap
    y = unpack_bits(rep["bits"], k)
    a, b = mech.unary_parameters()
    em = unary_em_full(y, a, b, tol=1e-15, max_iter=50000)
    assert est.log_likelihood >= em.log_likelihood - 1e-12 * abs(em.log_likelihood)
    assert est.log_likelihood == pytest.approx(full_loglik(y, a, b, est.frequency)[0], rel=1e-12)
    assert mech.estimate(mech.aggregate(rep), "em-bits").optimality_gap is None


def test_newton_does_not_stop_while_the_likelihood_still_rises():
    """Found by the property test above: d = 2, n = 27, both items sensitive, epsilon = 3, seed 753088. Newton
    stopped after two steps whose certified gap rose (1.10 nats left, not converged) although the likelihood
    was still rising; EM reached -31.8215. It now stops only when the likelihood stops rising."""
    d, n, eps, seed = 2, 27, 3.0, 753088
    theta = math.exp(eps / 2) / (1 + math.exp(eps / 2))
    a, b = np.full(d, theta), np.full(d, 1 - theta)
    f = np.random.default_rng(seed).dirichlet(np.full(d, 0.4))
    y = unary_reports(a, b, f, n, seed)
    res = unary_mle_full(y, a, b)
    em = unary_em_full(y, a, b, tol=1e-14, max_iter=5000)
    assert res.converged and res.log_likelihood >= em.log_likelihood - 1e-9

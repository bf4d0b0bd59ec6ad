"""Tests of the exact water-filling MLEs and the unary-encoding EM (mechanisms/_mle.py, _unary_em.py)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from ldpplan.mechanisms._estimators import em_simplex, project_simplex
from ldpplan.mechanisms._mle import rr_mle, unary_composite_mle, urr_mle, water_filling_mle
from ldpplan.mechanisms._fit import certified_gap, run_em as _run_em
from ldpplan.mechanisms._unary_em import binary_rows_em, unary_em, unary_em_full


# ---------------------------------------------------------------- helpers
def rr_channel(mu: float, k: int) -> tuple[np.ndarray, float]:
    nu = (1.0 - mu) / (k - 1)
    q = np.full((k, k), nu)
    np.fill_diagonal(q, mu)
    return q, nu


def rr_mu(epsilon: float, k: int) -> float:
    return math.exp(epsilon) / (math.exp(epsilon) + k - 1)


def urr_channel(mask: np.ndarray, epsilon: float) -> tuple[np.ndarray, float, float, float]:
    """uRR Q[x, y] of ULDP eq. (6) with c1/c2 = e^epsilon."""
    ks = int(mask.sum())
    c2 = 1.0 / (ks + math.exp(epsilon) - 1)
    c1, c3 = 1.0 - (ks - 1) * c2, 1.0 - ks * c2  # rows sum to one (c1/c2 = e^epsilon up to rounding)
    k = mask.size
    q = np.zeros((k, k))
    q[:, mask] = c2
    q[np.arange(k), np.arange(k)] = np.where(mask, c1, c3)
    return q, c1, c2, c3


def sample_counts(q: np.ndarray, f: np.ndarray, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.choice(f.size, size=n, p=f)
    m = np.bincount(x, minlength=f.size) @ q  # expected outputs given the inputs
    return rng.multinomial(n, m / m.sum()).astype(float)


def scipy_simplex_mle(lik: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Generic convex solver: SLSQP on the simplex for max sum_g w_g log(lik[g] @ f), restarted from
    its own answer until the objective stops decreasing: SLSQP can report success early (k = 8, seed 21
    of the URR test: 16 steps, an objective 4e-3 above the optimum, depending on float noise such as
    the BLAS thread count); one restart from there reaches the optimum."""
    k = lik.shape[1]
    wn = w / w.sum()

    def fun(f):
        m = np.maximum(lik @ f, 1e-300)
        return -float(wn @ np.log(m)), -(lik.T @ (wn / m))

    x, best = np.full(k, 1.0 / k), math.inf
    for _ in range(10):
        res = minimize(fun, x, jac=True, method="SLSQP", bounds=[(0, 1)] * k,
                       constraints=[{"type": "eq", "fun": lambda f: f.sum() - 1, "jac": lambda f: np.ones(k)}],
                       options={"ftol": 1e-16, "maxiter": 2000})
        if not res.fun < best:
            break
        x, best = res.x, res.fun
    return x


def kkt_violation(grad: np.ndarray, f: np.ndarray, lam: float) -> float:
    """Relative KKT violation: grad = lam on the support, grad <= lam off it."""
    on = f > 0
    return max(float(np.max(np.abs(grad[on] - lam), initial=0.0)),
               float(np.max(grad[~on] - lam, initial=0.0))) / abs(lam)


# ---------------------------------------------------------------- k-RR: closed forms
def test_rr_mle_hand_example():
    # k = 3, mu = 1/2, nu = 1/4, counts (5, 4, 1): r = nu/(mu - nu) = 1, breakpoints 1/5, 1/4, 1;
    # with {0, 1} active tau = (1 + 2)/9 = 1/3: f = (5/3 - 1, 4/3 - 1, 0) = (2/3, 1/3, 0), lambda = 3
    res = rr_mle([5, 4, 1], 0.5, 0.25)
    np.testing.assert_allclose(res.frequency, [2 / 3, 1 / 3, 0.0], atol=1e-15)
    assert res.lagrange_multiplier == pytest.approx(3.0, rel=1e-14)
    assert res.support_size == 2 and res.n == 10
    assert res.log_likelihood == pytest.approx(5 * math.log(5 / 12) + 4 * math.log(1 / 3) + math.log(1 / 4),
                                               rel=1e-14)
    assert not res.frequency.flags.writeable


def test_rr_mle_interior_is_empirical():
    # every empirical entry positive -> MLE = eq. 19 of the PIE paper and lambda = (mu - nu) n
    k, mu = 4, 0.7
    nu = 0.1
    c = np.array([40.0, 30.0, 20.0, 15.0])
    emp = (c / c.sum() - nu) / (mu - nu)
    assert np.all(emp > 0)
    res = rr_mle(c, mu, nu)
    np.testing.assert_allclose(res.frequency, emp, rtol=1e-13)
    assert res.lagrange_multiplier == pytest.approx((mu - nu) * 105, rel=1e-13)
    assert res.support_size == k


def test_rr_mle_single_count_is_a_point_mass():
    res = rr_mle([0, 7, 0, 0], rr_mu(1.0, 4), (1 - rr_mu(1.0, 4)) / 3)
    np.testing.assert_array_equal(res.frequency, [0, 1, 0, 0])
    assert res.support_size == 1


def test_rr_mle_identity_channel_is_the_histogram():
    res = rr_mle([3, 0, 1], 1.0, 0.0)
    np.testing.assert_allclose(res.frequency, [0.75, 0, 0.25], rtol=1e-15)


@pytest.mark.parametrize("counts, mu, nu, field", [
    ([1, -1, 2], 0.5, 0.25, "counts"), ([0, 0, 0], 0.5, 0.25, "counts"), ([1, np.nan], 0.6, 0.4, "counts"),
    ([1, 2, 3], 0.25, 0.5, "mu, nu"), ([1, 2], 0.5, 0.5, "mu, nu"), ([1, 2], 1.5, 0.1, "mu, nu"),
])
def test_rr_mle_rejects_bad_input(counts, mu, nu, field):
    with pytest.raises(ValueError, match=field):
        rr_mle(counts, mu, nu)


# ---------------------------------------------------------------- k-RR / uRR vs iterative EM and scipy
@pytest.mark.parametrize("k, epsilon, seed", [(30, 1.0, 1), (200, 2.0, 2), (12, 0.5, 3)])
def test_rr_mle_equals_em_simplex(k, epsilon, seed):
    mu = rr_mu(epsilon, k)
    q, nu = rr_channel(mu, k)
    f = np.random.default_rng(seed).dirichlet(np.full(k, 0.2))
    c = sample_counts(q, f, 3000, seed)
    res = rr_mle(c, mu, nu)
    em = em_simplex(q.T, c, tol=1e-15, max_iter=300000, accelerate=True)
    np.testing.assert_allclose(res.frequency, em.frequency, atol=1e-7)
    assert res.log_likelihood >= em.log_likelihood - 1e-9 * abs(em.log_likelihood)
    assert res.log_likelihood == pytest.approx(em.log_likelihood, rel=1e-10)
    assert 0 < res.support_size < k  # the instances exercise the boundary


@pytest.mark.parametrize("k, epsilon, seed", [(5, 1.0, 11), (10, 0.5, 12), (8, 3.0, 13)])
def test_rr_mle_equals_generic_convex_solver(k, epsilon, seed):
    mu = rr_mu(epsilon, k)
    q, nu = rr_channel(mu, k)
    f = np.random.default_rng(seed).dirichlet(np.full(k, 0.5))
    c = sample_counts(q, f, 500, seed)
    np.testing.assert_allclose(rr_mle(c, mu, nu).frequency, scipy_simplex_mle(q.T, c), atol=1e-6)


@pytest.mark.parametrize("k, sens, epsilon, seed", [(8, [0, 1, 2], 1.0, 21), (10, [3, 7], 0.5, 22),
                                                    (40, list(range(10)), 2.0, 23)])
def test_urr_mle_equals_em_simplex_and_scipy(k, sens, epsilon, seed):
    mask = np.zeros(k, dtype=bool)
    mask[sens] = True
    q, c1, c2, c3 = urr_channel(mask, epsilon)
    f = np.random.default_rng(seed).dirichlet(np.full(k, 0.3))
    c = sample_counts(q, f, 2000, seed)
    res = urr_mle(c, sens, c1, c2, c3)
    em = em_simplex(q.T, c, tol=1e-15, max_iter=300000, accelerate=True)
    np.testing.assert_allclose(res.frequency, em.frequency, atol=1e-7)
    assert res.log_likelihood == pytest.approx(em.log_likelihood, rel=1e-10)
    if k <= 10:
        np.testing.assert_allclose(res.frequency, scipy_simplex_mle(q.T, c), atol=1e-6)
    # the X_N part is proportional to the X_N counts (the derivation in the docstring)
    np.testing.assert_allclose(res.frequency[~mask], c[~mask] / res.lagrange_multiplier, rtol=1e-12)


def test_urr_all_sensitive_is_rr():
    c = np.array([9.0, 1.0, 0.0, 5.0, 2.0])
    mu = rr_mu(1.0, 5)
    _, nu = rr_channel(mu, 5)
    a = urr_mle(c, np.ones(5, dtype=bool), mu, nu, 0.0)
    np.testing.assert_allclose(a.frequency, rr_mle(c, mu, nu).frequency, atol=1e-15)


def test_urr_mle_rejects_bad_input():
    with pytest.raises(ValueError, match="sensitive"):
        urr_mle([1, 2, 3], [0, 0], 0.5, 0.25, 0.5)
    with pytest.raises(ValueError, match="sensitive"):
        urr_mle([1, 2, 3], [5], 0.5, 0.25, 0.5)
    with pytest.raises(ValueError, match="c1, c2, c3"):
        urr_mle([1, 2, 3], [0, 1], 0.5, 0.25, 0.0)
    with pytest.raises(ValueError, match="slope"):
        water_filling_mle([1, 2], 0.1, [1.0, 0.0])


# ---------------------------------------------------------------- hypothesis properties
counts_st = st.lists(st.integers(0, 60), min_size=2, max_size=12).filter(lambda c: sum(c) > 0)


@settings(max_examples=150, deadline=None)
@given(counts=counts_st, epsilon=st.floats(0.05, 6.0))
def test_rr_mle_properties(counts, epsilon):
    c = np.array(counts, dtype=float)
    k = c.size
    mu = rr_mu(epsilon, k)
    nu = (1 - mu) / (k - 1)
    res = rr_mle(c, mu, nu)
    f = res.frequency
    assert np.all(f >= 0) and f.sum() == pytest.approx(1.0, abs=1e-12)
    grad = c * (mu - nu) / (nu + (mu - nu) * f)
    assert kkt_violation(grad, f, res.lagrange_multiplier) <= 1e-9
    emp = project_simplex((c / c.sum() - nu) / (mu - nu))
    with np.errstate(divide="ignore"):
        ll_emp = float(np.sum(c * np.log(nu + (mu - nu) * emp)))
    assert res.log_likelihood >= ll_emp - 1e-9 * abs(res.log_likelihood)


@settings(max_examples=150, deadline=None)
@given(counts=counts_st, epsilon=st.floats(0.05, 6.0), data=st.data())
def test_urr_mle_properties(counts, epsilon, data):
    c = np.array(counts, dtype=float)
    k = c.size
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=k, max_size=k)))
    if not mask.any():
        mask[0] = True
    q, c1, c2, c3 = urr_channel(mask, epsilon)
    res = urr_mle(c, mask, c1, c2, c3)
    f = res.frequency
    assert np.all(f >= 0) and f.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.all(f[~mask & (c > 0)] > 0)  # an observed invertible output forces its input
    mix = f @ q
    a = np.where(mask, c2, 0.0)
    b = np.where(mask, c1 - c2, c3)
    np.testing.assert_allclose(mix, a + b * f, rtol=1e-12, atol=1e-15)  # the separable form of the docstring
    grad = np.divide(c * b, a + b * f, out=np.zeros(k), where=c > 0)
    assert kkt_violation(grad, f, res.lagrange_multiplier) <= 1e-9
    # the gradient in the unreduced parametrisation differs by the same constant for every x
    full = q @ np.divide(c, mix, out=np.zeros(k), where=c > 0)
    shift = c2 * float(np.sum(c[mask] / mix[mask]))
    assert kkt_violation(full, f, res.lagrange_multiplier + shift) <= 1e-9
    assert res.log_likelihood == pytest.approx(float(np.sum(c[c > 0] * np.log(mix[c > 0]))), rel=1e-12)
    emp = project_simplex((c / c.sum() - a) / b)
    with np.errstate(divide="ignore"):
        ll_emp = float(np.sum(c[c > 0] * np.log((emp @ q)[c > 0])))
    assert res.log_likelihood >= ll_emp - 1e-9 * abs(res.log_likelihood)


# ---------------------------------------------------------------- unary encodings
def unary_reports(a, b, f, n, seed):
    rng = np.random.default_rng(seed)
    d = f.size
    a, b = np.broadcast_to(a, (d,)), np.broadcast_to(b, (d,))
    x = rng.choice(d, size=n, p=f)
    y = rng.random((n, d)) < b
    y[np.arange(n), x] = rng.random(n) < a[x]
    return y


def per_bit_likelihood(a, b, d):
    """The 2d x d per-bit rows: (bit j = 1 | x) then (bit j = 0 | x)."""
    eye = np.eye(d, dtype=bool)
    one = np.where(eye, np.broadcast_to(a, (d,))[None, :], np.broadcast_to(b, (d,))[:, None])
    return np.vstack([one, 1.0 - one])


def full_likelihood(y, a, b):
    d = y.shape[1]
    eye = np.eye(d, dtype=bool)
    a, b = np.broadcast_to(a, (d,)), np.broadcast_to(b, (d,))
    p1 = np.where(eye, a[None, :], b[:, None]).T  # p1[x, j] = Pr(y_j = 1 | x)
    return np.where(y[:, None, :], p1[None], 1 - p1[None]).prod(axis=2)


@pytest.mark.parametrize("a, b", [(0.5, 1 / (math.e + 1)), (math.exp(0.5) / (1 + math.exp(0.5)),
                                                            1 / (1 + math.exp(0.5)))])
def test_unary_em_equals_em_simplex_on_per_bit_likelihood(a, b):
    d, n = 6, 400
    f = np.array([0.4, 0.3, 0.2, 0.1, 0.0, 0.0])
    s = unary_reports(a, b, f, n, 31).sum(axis=0).astype(float)
    res = unary_em(s, n, a, b, tol=1e-15, max_iter=100000)
    ref = em_simplex(per_bit_likelihood(a, b, d), np.concatenate([s, n - s]), tol=1e-15, max_iter=300000,
                     accelerate=False)
    assert res.likelihood == "composite" and res.converged
    np.testing.assert_allclose(res.frequency, ref.frequency, atol=1e-6)
    assert res.log_likelihood == pytest.approx(ref.log_likelihood, rel=1e-10)
    exact = unary_composite_mle(s, n, a, b)
    np.testing.assert_allclose(res.frequency, exact.frequency, atol=1e-6)
    assert exact.log_likelihood >= res.log_likelihood - 1e-9 * abs(res.log_likelihood)


@settings(max_examples=100, deadline=None)
@given(n=st.integers(1, 300), d=st.integers(2, 12), epsilon=st.floats(0.1, 5.0), data=st.data())
def test_unary_composite_mle_kkt(n, d, epsilon, data):
    s = np.array(data.draw(st.lists(st.integers(0, n), min_size=d, max_size=d)), dtype=float)
    a, b = 0.5, 1 / (math.exp(epsilon) + 1)
    res = unary_composite_mle(s, n, a, b)
    f = res.frequency
    assert np.all(f >= 0) and f.sum() == pytest.approx(1.0, abs=1e-12)
    m = b + (a - b) * f
    grad = (a - b) * (s / m - (n - s) / (1 - m))
    scale = max(abs(res.lagrange_multiplier), n * 1e-3)
    top = f >= 1 - 1e-12  # f_j <= 1 is a bound of its own: there grad >= lambda is allowed
    on = (f > 0) & ~top
    assert np.all(np.abs(grad[on] - res.lagrange_multiplier) <= 1e-7 * scale)
    assert np.all(grad[f == 0] <= res.lagrange_multiplier + 1e-7 * scale)
    assert np.all(grad[top] >= res.lagrange_multiplier - 1e-7 * scale)


@pytest.mark.parametrize("seed", [41, 42])
def test_unary_em_full_equals_em_simplex_on_full_likelihood(seed):
    d, n = 5, 600
    a, b = 0.5, 1 / (math.e + 1)  # OUE at epsilon = 1
    f = np.random.default_rng(seed).dirichlet(np.full(d, 0.5))
    y = unary_reports(a, b, f, n, seed)
    res = unary_em_full(y, a, b, tol=1e-15, max_iter=20000)
    pattern, cnt = np.unique(y, axis=0, return_counts=True)
    ref = em_simplex(full_likelihood(pattern, a, b), cnt, tol=1e-15, max_iter=300000)  # plain EM (SQUAREM stalls here)
    assert res.likelihood == "full" and res.converged
    np.testing.assert_allclose(res.frequency, ref.frequency, atol=1e-7)
    # the reported log-likelihood is the exact sum_r log Pr(y_r) (constants included)
    assert res.log_likelihood == pytest.approx(ref.log_likelihood, rel=1e-11)
    assert res.optimality_gap <= 1e-3
    grouped = unary_em_full(pattern, a, b, weights=cnt, tol=1e-15, max_iter=20000)
    dense = unary_em_full(y, a, b, storage="float64", tol=1e-15, max_iter=20000)
    np.testing.assert_allclose(dense.frequency, res.frequency, atol=1e-8)  # packed look-up == dense BLAS
    with pytest.raises(ValueError, match="storage"):
        unary_em_full(y, a, b, storage="float16")
    np.testing.assert_allclose(grouped.frequency, res.frequency, atol=1e-8)
    # float32 products: within its certified gap of the optimum, up to the ~1e-7
    # relative error of a float32 likelihood; the flat optimum lets f move by ~1e-3 (its standard error at
    # n = 600 is ~2e-2)
    # (float32 resolves the gradient, hence the certificate, to ~1e-7 relative only: tol 1e-6 is reachable)
    single = unary_em_full(y, a, b, storage="float32", tol=1e-6)
    assert single.converged and single.optimality_gap <= 1e-6 * abs(single.log_likelihood)
    assert (-1e-7 * abs(res.log_likelihood) <= res.log_likelihood - single.log_likelihood
            <= single.optimality_gap + 1e-7 * abs(res.log_likelihood))
    np.testing.assert_allclose(single.frequency, res.frequency, atol=3e-3)


def test_unary_em_full_urap_pinned_reports():
    # uRAP (ULDP eqs. 9-10): X_S = {0, 1, 2} with theta, d1; X_N = {3, 4} with 1 - d2 and b = 0
    theta, d1, d2 = 0.6, 0.35, 0.4
    sens = np.array([True, True, True, False, False])
    a = np.where(sens, theta, 1 - d2)
    b = np.where(sens, d1, 0.0)
    f = np.array([0.3, 0.0, 0.2, 0.4, 0.1])
    y = unary_reports(a, b, f, 800, 51)
    res = unary_em_full(y, a, b, tol=1e-15, max_iter=20000)
    pattern, cnt = np.unique(y, axis=0, return_counts=True)
    ref = em_simplex(full_likelihood(pattern, a, b), cnt, tol=1e-15, max_iter=300000)  # plain EM (SQUAREM stalls here)
    np.testing.assert_allclose(res.frequency, ref.frequency, atol=1e-7)
    assert res.log_likelihood == pytest.approx(ref.log_likelihood, rel=1e-11)
    bad = y.copy()
    bad[0, 3] = bad[0, 4] = True  # two non-sensitive bits: impossible under every input
    with pytest.raises(ValueError, match="impossible"):
        unary_em_full(bad, a, b)


def test_unary_inputs_rejected():
    with pytest.raises(ValueError, match="a, b"):
        unary_em([1, 2], 5, 0.2, 0.3)
    with pytest.raises(ValueError, match="bit_counts"):
        unary_composite_mle([1, 7], 5, 0.6, 0.3)
    with pytest.raises(ValueError, match="init"):
        unary_em([1, 2], 5, 0.6, 0.3, init=[1.0, 0.0])
    with pytest.raises(ValueError, match="0 and 1"):
        binary_rows_em([[0, 2]], [1.0, 1.0], [2.0, 2.0])


# ---------------------------------------------------------------- monotone EM
@pytest.mark.parametrize("accelerate", [True, False])
def test_em_likelihood_is_monotone(accelerate):
    rng = np.random.default_rng(61)
    lik = rng.random((40, 8)) ** 3
    w = rng.integers(1, 20, size=40).astype(float)
    total = w.sum()
    trace = []

    def step(q):
        m = lik @ q
        g = lik.T @ (w / m)
        ll = float(w @ np.log(m))
        trace.append((q.copy(), ll))
        return ll, certified_gap(g, total), q * g / total

    p, ll, _, it, conv = _run_em(step, np.full(8, 1 / 8), 1e-14, 5000, accelerate)
    ref = em_simplex(lik, w, tol=1e-15, max_iter=300000, accelerate=False)
    assert conv and ll == pytest.approx(ref.log_likelihood, rel=1e-10)
    # the points the loop moves through (the first evaluation of each cycle) never lose likelihood
    starts = [t[1] for t in trace[:: 3 if accelerate else 1]]
    assert all(b2 >= b1 - 1e-12 * abs(b1) for b1, b2 in zip(starts, starts[1:]))
    assert it == len(trace)


def test_unary_em_reports_iteration_cap():
    s = np.array([30.0, 5.0, 2.0, 40.0])
    res = unary_em(s, 60, 0.5, 0.25, max_iter=3, accelerate=False)
    assert res.iterations == 3 and not res.converged and res.optimality_gap > 0


def test_squarem_does_not_stall_at_a_collapsed_coordinate():
    # Regression: em_simplex(accelerate=True) floors extrapolated points at 1e-300, so a coordinate
    # can collapse and the l1 rule then stops at a non-optimal point (here f_0 ~ 0 instead of 0.0073).
    # The relative floor of _fit.run_em keeps the SQUAREM path on the MLE.
    a, b = 0.5, 1 / (math.e + 1)
    f = np.random.default_rng(41).dirichlet(np.full(5, 0.5))
    y = unary_reports(a, b, f, 600, 41)
    pattern, cnt = np.unique(y, axis=0, return_counts=True)
    lik = full_likelihood(pattern, a, b)
    plain = em_simplex(lik, cnt, tol=1e-15, max_iter=300000)
    ours = binary_rows_em(pattern, (1 - a) / (1 - b) * np.ones(5), a / b * np.ones(5), weights=cnt,
                          tol=1e-15, max_iter=20000)
    np.testing.assert_allclose(ours.frequency, plain.frequency, atol=1e-7)
    assert plain.frequency[0] == pytest.approx(0.00728, abs=1e-5)
    assert ours.log_likelihood >= plain.log_likelihood - 1e-9 * abs(plain.log_likelihood)
    # (em_simplex(lik, cnt, accelerate=True) stops here with freq[0] ~ 1e-300, 5e-3 nats below the MLE)


def test_em_simplex_squarem_keeps_a_relative_floor():
    # Regression for em_simplex(accelerate=True): with the old absolute floor (1e-300) it stopped on this
    # instance with freq[0] ~ 1e-300, 5e-3 nats below the MLE; the relative floor 1e-2 * p keeps it on the MLE.
    a, b = 0.5, 1 / (math.e + 1)
    f = np.random.default_rng(41).dirichlet(np.full(5, 0.5))
    y = unary_reports(a, b, f, 600, 41)
    pattern, cnt = np.unique(y, axis=0, return_counts=True)
    lik = full_likelihood(pattern, a, b)
    plain = em_simplex(lik, cnt, tol=1e-15, max_iter=300000)
    fast = em_simplex(lik, cnt, tol=1e-15, max_iter=300000, accelerate=True)
    assert fast.converged and fast.frequency[0] == pytest.approx(0.00728, abs=1e-5)
    np.testing.assert_allclose(fast.frequency, plain.frequency, atol=1e-7)
    assert fast.log_likelihood >= plain.log_likelihood - 1e-9 * abs(plain.log_likelihood)


@pytest.mark.parametrize("tol", [1e-4, 1e-6])
def test_full_em_gap_bound_certifies_the_shortfall(tol):
    # stopped early by the one rule; the true shortfall to the MLE must not exceed the reported bound
    a, b = 0.5, 1 / (math.e + 1)
    f = np.random.default_rng(71).dirichlet(np.full(12, 0.3))
    y = unary_reports(a, b, f, 3000, 71)
    best = unary_em_full(y, a, b, tol=1e-15, max_iter=50000)
    res = unary_em_full(y, a, b, tol=tol, init=np.full(12, 1 / 12))
    assert res.converged and res.iterations < best.iterations
    assert 0 <= best.log_likelihood - res.log_likelihood <= res.optimality_gap + 1e-9 * abs(best.log_likelihood)
    assert best.optimality_gap <= 1e-5


def test_unary_em_full_all_reports_pinned_is_the_histogram():
    # every report has one non-sensitive bit set (b = 0 there): the MLE is the histogram of those bits
    a = np.array([0.6, 0.6, 0.9, 0.9])
    b = np.array([0.3, 0.3, 0.0, 0.0])
    y = np.array([[0, 1, 1, 0], [1, 1, 0, 1], [0, 0, 1, 0], [1, 0, 1, 0]], dtype=bool)
    res = unary_em_full(y, a, b, tol=1e-15, max_iter=5000)
    np.testing.assert_allclose(res.frequency, [0, 0, 0.75, 0.25], atol=1e-9)
    # log Pr(y_r) at f: the pinned input's own bit under a, the other bits under b
    per_row = [np.log(0.75 * 0.9 * 0.7 * 0.3 * 1.0), np.log(0.25 * 0.9 * 0.3 * 0.3 * 1.0),
               np.log(0.75 * 0.9 * 0.7 * 0.7 * 1.0), np.log(0.75 * 0.9 * 0.3 * 0.7 * 1.0)]
    assert res.log_likelihood == pytest.approx(sum(per_row), rel=1e-9)


@pytest.mark.parametrize("d", [1, 8, 21, 300])
def test_packed_products_equal_dense(d):
    from ldpplan.mechanisms._unary_em import _Packed

    rng = np.random.default_rng(d)
    y = rng.random((257, d)) < 0.3
    u, r = rng.normal(size=d), rng.normal(size=257)
    k = _Packed(y)
    np.testing.assert_allclose(k.forward(u), y.astype(float) @ u, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(k.backward(r), y.T.astype(float) @ r, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("storage", ["packed", "float64"])
def test_binary_rows_em_skips_all_zero_columns_exactly(storage):
    # columns that are 0 in every report are left out of the products; the MLE must not change
    a, b = 0.6, 0.3
    f = np.random.default_rng(5).dirichlet(np.full(7, 0.5))
    y = unary_reports(a, b, f, 400, 5)
    y[:, [1, 4]] = False  # as uRAP's X_N bits in reports that reveal nothing
    pattern, cnt = np.unique(y, axis=0, return_counts=True)
    lik = full_likelihood(pattern, a, b)
    ref = em_simplex(lik, cnt, tol=1e-15, max_iter=300000)
    ours = binary_rows_em(pattern, (1 - a) / (1 - b) * np.ones(7), a / b * np.ones(7), weights=cnt,
                          storage=storage, tol=1e-15, max_iter=20000)
    np.testing.assert_allclose(ours.frequency, ref.frequency, atol=1e-7)
    const = float(np.sum(cnt * np.log(np.prod(np.where(pattern, b, 1 - b), axis=1))))
    assert ours.log_likelihood + const == pytest.approx(ref.log_likelihood, rel=1e-9)

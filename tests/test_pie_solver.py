"""PIE calculators and targeting (solvers/pie.py) against the paper and closed forms."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpplan.solvers import SolverError
from ldpplan.solvers.pie import (
    alpha_for_bayes_error, alpha_ldp_bound, alpha_rr, bayes_error_lower_bound, bits_to_nats,
    epsilon_for_alpha, l2_loss_glh, l2_loss_glh_limit, l2_loss_rr, mi_loss_from_keep_probability, mi_loss_glh,
    mi_loss_rr, solve_glh, solve_pie, solve_rr, total_l2_loss_glh, total_l2_loss_rr,
)

N_LOC, X_LOC = 1370637, 10500393  # Fig. 4 caption / Sec. 5.3


# ------------------------------------------------------------------ paper numbers
@pytest.mark.parametrize("epsilon, prop41, thm42", [(0.1, 0.014, 2.0e-7), (1.0, 1.4, 3.3e-6), (10.0, 14, 0.043)])
def test_fig4_values(epsilon, prop41, thm42):
    # Prop. 4.1 rounded to 2 significant digits: 0.014, 1.4, 14; Thm. 4.2: 2.0e-7, 3.3e-6, 0.043 bits
    assert float(f"{alpha_ldp_bound(epsilon, N_LOC, X_LOC):.2g}") == prop41
    b = alpha_rr(epsilon, N_LOC, X_LOC)
    assert float(f"{b.mechanism_bits:.2g}") == thm42
    assert b.alpha_bits == b.mechanism_bits and b.binding == "mechanism"


def test_cor39_example_bits_and_nats():
    # After Cor. 3.9: n = 10^6, Bayes error 0.8 -> alpha < 2.07 (nats) = 2.99 bits; 0.5 -> 6.21 nats = 8.97 bits
    a08, a05 = alpha_for_bayes_error(0.8, 10**6), alpha_for_bayes_error(0.5, 10**6)
    assert round(a08, 2) == 2.99 and round(a05, 2) == 8.97
    assert round(bits_to_nats(a08), 2) == 2.07 and round(bits_to_nats(a05), 2) == 6.21
    # closed form: (1 - beta) log2 n - 1
    assert a05 == pytest.approx(0.5 * math.log2(1e6) - 1, rel=1e-15)
    assert bayes_error_lower_bound(a05, 10**6) == pytest.approx(0.5, abs=1e-15)


def test_prop310_income_example():
    # Sec. 3.3: n = 10^8, |X| = 5, no obfuscation: alpha = log2 5 -> Bayes error >= 0.88 (uniform);
    # max prior 0.01 -> >= 0.5 (eq. 9)
    assert round(bayes_error_lower_bound(math.log2(5), 10**8), 2) == 0.88
    assert bayes_error_lower_bound(math.log2(5), max_prior=0.01) >= 0.5
    assert bayes_error_lower_bound(math.log2(5), max_prior=0.01) == pytest.approx(1 - (math.log2(5) + 1) / math.log2(100))


def test_theta_half_gives_bayes_half_for_large_n():
    # Sec. 4.3: theta = 0.5 guarantees Bayes error > 0.5 "when n is large" (|X| >= n)
    n = 10**9
    alpha = 0.5 * math.log2(n)
    assert bayes_error_lower_bound(alpha, n) == pytest.approx(0.5 - 1 / math.log2(n))


def test_thm48_limit_and_rr_vs_glh():
    # RR vs GLH (Sec. 4.4): with theta_RR = theta_GLH the limit (24) equals p|X|/(n(e^eps-1))
    k, n, p = 10500393, 1370637, 1e-3
    eps = math.log1p(0.5 * k / 0.5)  # theta_RR = 0.5
    theta = mi_loss_rr(eps, k)
    assert theta == pytest.approx(0.5, rel=1e-12)
    assert l2_loss_glh_limit(theta, n, p) == pytest.approx(p * k / (n * math.expm1(eps)), rel=1e-9)
    # first term of (22) ~ 2/(n|X|), second ~ p/n
    assert l2_loss_rr(eps, k, n, 0.0) == pytest.approx(2 / (n * k), rel=1e-6)
    assert l2_loss_rr(eps, k, n, p) - l2_loss_rr(eps, k, n, 0.0) == pytest.approx(p / n, rel=1e-6)
    # GLH loss at fixed theta decreases in g and tends to the limit
    prev = math.inf
    for g in (10**3, 10**5, 10**7, 10**9, 10**12):
        e = math.log1p(theta * g / (1 - theta))
        val = l2_loss_glh(e, g, n, p)
        assert val < prev
        prev = val
    assert prev == pytest.approx(l2_loss_glh_limit(theta, n, p), rel=1e-3)


def test_l2_closed_forms_match_variance_formula():
    # eq. 22 / 23 = Var of a sum of independent Bernoullis (data fixed, Sec. 4.4):
    # n p(x) users with prob. mu, the others with nu -> (p mu(1-mu) + (1-p) nu(1-nu))/(n (mu-nu)^2)
    for eps, k, n, p in [(1.0, 10, 100, 0.3), (4.0, 1000, 50, 0.0), (0.2, 3, 7, 1.0)]:
        e = math.exp(eps)
        mu, nu = e / (k + e - 1), 1 / (k + e - 1)
        var = (p * mu * (1 - mu) + (1 - p) * nu * (1 - nu)) / (n * (mu - nu) ** 2)
        assert l2_loss_rr(eps, k, n, p) == pytest.approx(var, rel=1e-12)
        g = k
        mu, nu = e / (g + e - 1), 1 / g
        var = (p * mu * (1 - mu) + (1 - p) * nu * (1 - nu)) / (n * (mu - nu) ** 2)
        assert l2_loss_glh(eps, g, n, p) == pytest.approx(var, rel=1e-12)
        assert total_l2_loss_rr(eps, k, n) == pytest.approx(k * l2_loss_rr(eps, k, n, 0) + (k - 2) / (n * math.expm1(eps)))


def test_mi_loss_from_keep_probability_exact():
    for eps, k in [(1.0, 10), (15.9, 10500393), (0.01, 2)]:
        e = math.exp(eps)
        mu = e / (k + e - 1)
        assert float(mi_loss_from_keep_probability(mu, k)) == pytest.approx(mi_loss_rr(eps, k), rel=1e-9)


def test_composition_is_linear_then_capped():
    one = alpha_rr(3.0, 1000, 50)
    assert alpha_rr(3.0, 1000, 50, releases=4).mechanism_bits == pytest.approx(4 * one.mechanism_bits)
    # t theta min(log n, log|X|) can exceed log2 n; Prop. 4.1 caps at log2 n
    big = alpha_rr(20.0, 1000, 50, releases=10)
    assert big.alpha_bits <= math.log2(1000) + 1e-12


# ------------------------------------------------------------------ inversion
@settings(max_examples=150, deadline=None)
@given(alpha=st.floats(1e-9, 40), n=st.integers(2, 10**9), k=st.integers(2, 10**8), t=st.integers(1, 5))
def test_epsilon_for_alpha_is_the_largest_feasible(alpha, n, k, t):
    eps = epsilon_for_alpha(alpha, n, k, t)
    if math.isinf(eps):  # every epsilon meets the target (pseudonymisation alone)
        assert alpha >= min(math.log2(n), t * math.log2(k)) or alpha >= t * min(math.log2(n), math.log2(k))
        return
    assert alpha_rr(eps, n, k, t).alpha_bits <= alpha * (1 + 1e-9)
    assert alpha_rr(eps * (1 + 1e-6), n, k, t).alpha_bits > alpha


@settings(max_examples=100, deadline=None)
@given(beta=st.floats(0.01, 0.99), n=st.integers(10, 10**9))
def test_bayes_inversion_round_trip(beta, n):
    a = alpha_for_bayes_error(beta, n)
    if a > 0:
        assert bayes_error_lower_bound(a, n) == pytest.approx(beta, abs=1e-12)


def test_solve_rr_matches_closed_form():
    a = alpha_for_bayes_error(0.5, N_LOC)
    res = solve_rr(n=N_LOC, domain_size=X_LOC, alpha_bits=a)
    theta = a / math.log2(N_LOC)  # log2 n < log2 |X|
    assert res.epsilon == pytest.approx(math.log(1 + theta * X_LOC / (1 - theta)), rel=1e-12)
    assert res.extra["alpha_bits"] == pytest.approx(a, rel=1e-12)
    assert res.objective == pytest.approx(total_l2_loss_rr(res.epsilon, X_LOC, N_LOC))
    assert res.status == "closed_form"
    # eps ~ 15.97 for the spec
    assert res.epsilon == pytest.approx(15.970, abs=1e-3)


def test_solve_rr_epsilon_cap_and_target():
    # |X| = 4, n = 10^6: alpha 5 bits > log2 |X| = 2 -> any epsilon; cap binds
    res = solve_rr(n=10**6, domain_size=4, alpha_bits=5.0, epsilon_max=12.0)
    assert res.epsilon == 12.0 and res.extra["binding"] == "epsilon_max"
    res = solve_rr(n=100, domain_size=10, epsilon=1.0)
    assert res.epsilon == 1.0 and res.extra["alpha_bits"] == pytest.approx(alpha_rr(1.0, 100, 10).alpha_bits)
    with pytest.raises(SolverError):
        solve_rr(n=100, domain_size=10)


def test_solve_glh_takes_largest_g_under_alpha_target():
    a = alpha_for_bayes_error(0.5, N_LOC)
    res = solve_glh(n=N_LOC, domain_size=X_LOC, alpha_bits=a, g_max=10**8)
    assert res.g == 10**8  # Thm. 4.8
    assert mi_loss_glh(res.epsilon, res.g) == pytest.approx(a / math.log2(N_LOC), rel=1e-9)


def _brute_force_glh(n, k, g_max, alpha=None, epsilon=None, eps_max=30.0):
    best = None
    for g in range(2, g_max + 1):
        e = epsilon if epsilon is not None else min(eps_max, epsilon_for_alpha(alpha, n, k, 1, g=g))
        if not e > 0:
            continue
        v = total_l2_loss_glh(e, g, n, k)
        if best is None or v < best[0] * (1 - 1e-12):
            best = (v, g, e)
    return best


@pytest.mark.parametrize("n, k, g_max, alpha, epsilon, eps_max", [
    (1000, 50, 400, None, 1.0, 30.0),     # LDP target: convex piece, optimum near e^eps + 1
    (1000, 50, 400, None, 4.0, 30.0),
    (200, 1000, 500, 0.02, None, 30.0),   # tiny alpha: Prop. 4.1 piece for small g
    (1000, 50, 300, 3.0, None, 4.0),      # cap binds for large g
    (10**5, 64, 500, 2.0, None, 30.0),
])
def test_solve_glh_equals_brute_force(n, k, g_max, alpha, epsilon, eps_max):
    res = solve_glh(n=n, domain_size=k, g_max=g_max, alpha_bits=alpha, epsilon=epsilon, epsilon_max=eps_max)
    best = _brute_force_glh(n, k, g_max, alpha, epsilon, eps_max)
    assert res.objective == pytest.approx(best[0], rel=1e-12)


def test_solve_pie_prefers_glh_for_large_domain_and_rr_for_tiny():
    a = alpha_for_bayes_error(0.5, N_LOC)
    res = solve_pie(n=N_LOC, domain_size=X_LOC, alpha_bits=a, g_max=2**31 - 1)
    assert res.parameters["mechanism"] == "glh"
    # LDP epsilon = 1 on 3 symbols: RR (eq. 22) beats GLH (best g is tiny anyway)
    res = solve_pie(n=1000, domain_size=3, epsilon=1.0, g_max=1000)
    assert res.parameters["mechanism"] == "rr"
    assert res.objective <= res.extra["glh"].objective


@pytest.mark.parametrize("epsilon", [1e-6, 0.5, 5.0, 60.0, 700.0, 1e4])
def test_losses_and_theta_are_finite_for_every_epsilon(epsilon):
    from ldpplan.solvers.pie import l2_loss_glh, l2_loss_rr, mi_loss_rr

    k, g, n = 10**6, 2**20, 10
    for value in (l2_loss_rr(epsilon, k, n, 0.3), l2_loss_glh(epsilon, g, n, 0.3), mi_loss_rr(epsilon, k)):
        assert math.isfinite(value) and value >= 0
    if epsilon <= 5:  # the overflow-free forms equal eq. 22 / eq. 23 as printed
        e = math.exp(epsilon)
        assert l2_loss_rr(epsilon, k, n, 0.3) == pytest.approx(
            (k + e - 2) / (n * (e - 1) ** 2) + 0.3 * (k - 2) / (n * (e - 1)), rel=1e-9)
        assert l2_loss_glh(epsilon, g, n, 0.3) == pytest.approx(
            (g + e - 1) ** 2 / (n * (e - 1) ** 2 * (g - 1)) + 0.3 * (g * g - 2 * g - e + 1) / (n * (e - 1) * (g - 1)),
            rel=1e-9)


def test_huge_epsilon_targets_are_capped_not_overflowing():
    from ldpplan.solvers.pie import EPSILON_CEILING

    res = solve_pie(n=10, domain_size=10**6, g_max=2**31 - 1, epsilon=700.0)  # OverflowError before
    assert res.parameters["epsilon"] == EPSILON_CEILING and math.isfinite(res.objective)
    glh = solve_glh(n=10, domain_size=10**6, g_max=2**31 - 1, epsilon=700.0)
    assert glh.parameters["epsilon"] == EPSILON_CEILING and 2 <= glh.parameters["g"] <= 2**31 - 1

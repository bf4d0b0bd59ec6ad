"""PCKV solvers: composition (Thm 2, 3), allocations (Lemma 2, 3, eq. 21, 23), L selection."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from ldpplan.solvers import pckv as S

EPS = [0.1, 0.5, 1.0, 2.0, 4.0, 8.0]


@pytest.mark.parametrize("eps", EPS)
def test_lemma2_closed_form_and_both_terms_of_eq3_equal_epsilon(eps):
    sol = S.allocate("pckv-ue", eps, method="optimized", domain_size=100)
    assert sol.epsilon1 == pytest.approx(math.log((math.exp(eps) + 1) / 2), rel=1e-14)
    assert sol.epsilon2 == pytest.approx(eps, rel=1e-14)
    # the two values inside the max of eq. (3)
    first = sol.epsilon2
    second = sol.epsilon1 + math.log(2 / (1 + math.exp(-sol.epsilon2)))
    assert first == pytest.approx(eps, rel=1e-13) and second == pytest.approx(eps, rel=1e-13)
    # OUE probabilities of the author's code: a = 1/2, b = 2/(e^eps+3), p = e^eps/(e^eps+1)
    assert sol.a == 0.5
    assert sol.b == pytest.approx(2 / (math.exp(eps) + 3), rel=1e-13)
    assert sol.p == pytest.approx(math.exp(eps) / (math.exp(eps) + 1), rel=1e-13)


@pytest.mark.parametrize("eps", EPS)
@pytest.mark.parametrize("L", [1, 2, 10, 100])
@pytest.mark.parametrize("d", [3, 100, 26744])
def test_lemma3_eq23_closed_forms(eps, L, d):
    sol = S.allocate("pckv-grr", eps, method="optimized", domain_size=d, padding_length=L)
    E, dp = math.exp(eps), d + L
    a = (L * (E - 1) + 2) / (L * (E - 1) + 2 * dp)
    assert sol.a == pytest.approx(a, rel=1e-12)
    assert sol.b == pytest.approx((1 - a) / (dp - 1), rel=1e-12)
    assert sol.p == pytest.approx((L * (E - 1) + 1) / (L * (E - 1) + 2), rel=1e-12)
    assert sol.epsilon1 == pytest.approx(math.log(L * (E - 1) / 2 + 1), rel=1e-13)
    # the allocation uses the whole budget (Theorem 3)
    assert S.compose_grr(sol.epsilon1, sol.epsilon2, L) == pytest.approx(eps, rel=1e-12)
    # Fig. 5 remark: a(1-p) = b/2 at the optimum
    assert sol.a * (1 - sol.p) == pytest.approx(sol.b / 2, rel=1e-10)


@pytest.mark.parametrize("eps", EPS)
def test_lemma3_at_L1_is_lemma2(eps):
    ue = S.allocate("pckv-ue", eps, domain_size=50)
    grr = S.allocate("pckv-grr", eps, domain_size=50, padding_length=1)
    assert grr.epsilon1 == pytest.approx(ue.epsilon1, rel=1e-13)
    assert grr.epsilon2 == pytest.approx(ue.epsilon2, rel=1e-13)


@given(st.floats(0, 10), st.floats(0, 10))
def test_theorem3_reduces_to_theorem2_at_L1(e1, e2):
    assert S.compose_grr(e1, e2, 1) == pytest.approx(S.compose_ue(e1, e2), rel=1e-12, abs=1e-12)


@given(st.floats(0, 10), st.integers(1, 1000))
def test_theorem3_at_zero_value_budget_is_itemset_result(e1, L):
    assert S.compose_grr(e1, 0.0, L) == pytest.approx(math.log((math.exp(e1) + L - 1) / L), rel=1e-12, abs=1e-13)


@given(st.floats(0.01, 10), st.floats(0, 10), st.integers(1, 50))
def test_composition_is_tighter_than_sequential(e1, e2, L):
    assert S.compose_ue(e1, e2) <= e1 + e2 + 1e-12
    assert S.compose_grr(e1, e2, L) <= S.compose_ue(e1, e2) + 1e-12   # padding only helps GRR


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["pckv-ue", "pckv-grr"]), st.floats(0.01, 15), st.integers(1, 300), st.floats(0, 0.999))
def test_frontier_never_exceeds_and_is_tight(mech, eps, L, frac):
    e1 = frac * S.max_epsilon1(mech, eps, L)
    e2 = S.max_epsilon2(mech, eps, e1, L)
    composed = S.compose(mech, e1, e2, L)
    assert composed <= eps * (1 + 1e-12)
    if 0 < e2 < S.EPSILON2_CAP:
        assert composed == pytest.approx(eps, rel=1e-9)   # the frontier uses the whole budget


def test_eq4_frontier_for_ue():
    eps = 1.5
    e1, e2 = S.feasible_frontier("pckv-ue", eps, num=50)
    theta = np.exp(e1)
    mask = theta >= (math.exp(eps) + 1) / 2
    np.testing.assert_allclose(e2[mask], np.log(1 / (2 * theta[mask] * math.exp(-eps) - 1)), rtol=1e-12)
    np.testing.assert_allclose(e2[~mask], eps)


@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0])
def test_tight_and_naive_allocations(eps):
    tight = S.allocate("pckv-ue", eps, method="tight", domain_size=10)
    assert tight.epsilon1 == pytest.approx(math.log((math.exp(eps) + math.exp(eps / 2)) / 2), rel=1e-13)  # eq. (21)
    assert tight.epsilon2 == eps / 2
    assert S.compose_ue(tight.epsilon1, tight.epsilon2) == pytest.approx(eps, rel=1e-12)
    naive = S.allocate("pckv-ue", eps, method="naive", domain_size=10)
    assert naive.epsilon1 == naive.epsilon2 == eps / 2
    assert S.compose_ue(naive.epsilon1, naive.epsilon2) < eps
    grr_tight = S.allocate("pckv-grr", eps, method="tight", domain_size=10, padding_length=4)
    assert S.compose_grr(grr_tight.epsilon1, eps / 2, 4) == pytest.approx(eps, rel=1e-9)
    # Fig. 4: the optimized allocation has the smallest g (eq. 16)
    opt = S.allocate("pckv-ue", eps, domain_size=10)
    g = lambda s: s.b / (s.a ** 2 * (2 * s.p - 1) ** 2)
    assert g(opt) < g(tight) < g(naive)


def test_numeric_allocation_beats_or_matches_closed_form():
    d = 100
    model = S.KeyModel(np.full(d, 0.01), np.full(d, 1.0), 1e6)
    for mech in ("pckv-ue", "pckv-grr"):
        num = S.allocate(mech, 1.0, method="numeric", domain_size=d, model=model)
        cf = S.allocate(mech, 1.0, method="optimized", domain_size=d, model=model)
        assert num.objective <= cf.objective
        assert num.extra["gain"] == pytest.approx((cf.objective - num.objective) / cf.objective)
        assert S.compose(mech, num.epsilon1, num.epsilon2, 1) <= 1.0 * (1 + 1e-12)
    # for GRR at d=100 the Lemma 3 approximation is clearly sub-optimal under Theorem 4
    grr = S.allocate("pckv-grr", 1.0, method="numeric", domain_size=d, model=model)
    assert grr.extra["gain"] > 0.05


def test_numeric_without_model_fails():
    with pytest.raises(S.SolverError):
        S.allocate("pckv-ue", 1.0, method="numeric", domain_size=5)


def test_theorem4_and_approximations_agree_for_large_n():
    a, b, p = 0.5, 2 / (math.e + 3), math.e / (math.e + 1)
    f, m = np.array([0.3]), np.array([0.5])
    mf, mm = S.theorem4_mse(a, b, p, 1, 1e9, f, m)
    af, am = S.approximate_mse(a, b, p, 1, 1e9, f, m)
    # (17) drops the f-term of (9); (18) drops higher-order terms
    assert mf[0] == pytest.approx(b * (1 - b) / (1e9 * (a - b) ** 2) + f[0] * (1 - a - b) / (1e9 * (a - b)), rel=1e-12)
    assert af[0] == pytest.approx(b * (1 - b) / (1e9 * (a - b) ** 2), rel=1e-12)
    assert mm[0] == pytest.approx(am[0], rel=0.05)


def test_truncation_factor():
    assert S.truncation_factor([1, 3], [0.5, 0.5], 2) == pytest.approx(1.5 / 2)
    assert S.truncation_factor([1, 3], [1, 1], 3) == 1.0
    assert S.truncation_factor([5], [1], 1) == pytest.approx(0.2)


def test_padding_length_selection_tradeoff():
    d = 1000
    # every user has exactly 4 pairs: L < 4 truncates (bias), L > 4 adds variance
    freq = np.full(d, 4 / d)
    model = S.KeyModel(freq, np.zeros(d), 1e7, set_sizes=[4], set_size_weights=[1.0])
    sol = S.choose_padding_length("pckv-grr", 2.0, domain_size=d, model=model, max_padding_length=12)
    rows = {r["padding_length"]: r["objective"] for r in sol.extra["candidates"]}
    assert sol.parameters["padding_length"] == min(rows, key=rows.get)
    assert len(rows) == 12
    single = S.KeyModel(np.full(d, 1 / d), np.zeros(d), 1e6, set_sizes=[1], set_size_weights=[1.0])
    ue = S.choose_padding_length("pckv-ue", 2.0, domain_size=d, model=single, max_padding_length=8)
    assert ue.parameters["padding_length"] == 1      # nothing to gain from padding one-pair users under UE


def test_sec54_conditions_and_choice():
    c = S.sec54_conditions(1.0, 10_000, 1)
    assert c["frequency"]["ue_better"] and c["mean"]["ue_better"]
    c = S.sec54_conditions(1.0, 3, 50)
    assert not c["frequency"]["ue_better"] and not c["mean"]["ue_better"]
    # closed form of the frequency condition: 2(d-1) > L(4L-1)(e^eps+1)
    assert c["frequency"]["rhs"] == pytest.approx(50 * 199 * (math.e + 1))

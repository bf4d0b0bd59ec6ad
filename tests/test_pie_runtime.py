"""Runtime of the k-ary RR and the GLH (mechanisms/pie.py)."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from ldpplan.mechanisms._estimators import project_simplex
from ldpplan.mechanisms._sampling import on_grid
from ldpplan.mechanisms.pie import (
    HASH_PRIME, GeneralizedLocalHashing, RandomizedResponse, collision_probability, hash_values,
)
from ldpplan.solvers.pie import l2_loss_glh, l2_loss_rr


def test_rr_channel_matches_eq2_and_is_on_grid():
    rr = RandomizedResponse(1.0, ["a", "b", "c", "d"])
    q = rr.channel_matrix()
    assert q.shape == (4, 4)
    np.testing.assert_allclose(q.sum(axis=0), 1.0, atol=1e-15)  # columns: distributions over y given x
    e = math.e
    assert rr.mu == pytest.approx(e / (4 + e - 1), abs=2**-48)
    assert rr.mu <= e / (4 + e - 1) and on_grid(rr.mu)  # rounded down
    assert q[0, 1] == pytest.approx(1 / (4 + e - 1), rel=1e-12)
    assert rr.epsilon_realized <= 1.0 and rr.epsilon_realized == pytest.approx(1.0, abs=1e-12)
    ratio = q.max(axis=1) / q.min(axis=1)
    assert np.all(np.log(ratio) <= 1.0)
    assert list(rr.domain) == ["a", "b", "c", "d"]


def test_rr_perturb_distribution_exhaustive_tiny_domain():
    # every (x, y) frequency within 5 standard errors of Q(y|x)
    rr = RandomizedResponse(0.7, 3)
    rng = np.random.default_rng(11)
    n = 60000
    q = rr.channel_matrix()
    for x in range(3):
        y = rr.perturb(np.full(n, x), rng)
        freq = np.bincount(y, minlength=3) / n
        se = np.sqrt(q[:, x] * (1 - q[:, x]) / n)
        assert np.all(np.abs(freq - q[:, x]) <= 5 * se), (x, freq, q[:, x])


def test_rr_estimates_unbiased_with_eq22_variance():
    k, n, eps, trials = 20, 2000, 2.0, 300
    rng = np.random.default_rng(5)
    items = rng.integers(0, k, size=n)
    truth = np.bincount(items, minlength=k) / n
    rr = RandomizedResponse(eps, k)
    ests = np.array([rr.estimate(rr.perturb(items, rng)) for _ in range(trials)])
    var_theory = l2_loss_rr(rr.epsilon_realized, k, n, truth)
    np.testing.assert_allclose(rr.variance_per_user(truth) / n, var_theory, rtol=1e-9)
    # mean within 5 standard errors of the truth
    assert np.all(np.abs(ests.mean(axis=0) - truth) <= 5 * np.sqrt(var_theory / trials))
    # total l2 loss: mean over trials within 5 se (se from the spread of the per-trial totals)
    tot = ((ests - truth) ** 2).sum(axis=1)
    assert abs(tot.mean() - var_theory.sum()) <= 5 * tot.std(ddof=1) / math.sqrt(trials)


def test_rr_threshold_and_em_on_simplex():
    k, n = 30, 3000
    rng = np.random.default_rng(2)
    w = 1 / np.arange(1, k + 1)
    items = rng.choice(k, size=n, p=w / w.sum())
    rr = RandomizedResponse(1.5, k)
    y = rr.perturb(items, rng)
    thr = rr.estimate(y, "threshold")
    assert thr.min() >= 0 and thr.sum() == pytest.approx(1.0)
    em = rr.estimate_em(y)
    assert em.converged and em.iterations >= 1
    assert em.freq.min() >= 0 and em.freq.sum() == pytest.approx(1.0)
    # the MLE has likelihood not below the projection of the empirical estimate
    c = rr.counts(y)
    proj = project_simplex(rr.estimate(y))
    ll_proj = float(np.sum(c * np.log(np.maximum(rr.channel_matrix() @ proj, 1e-300))))
    assert em.log_likelihood >= ll_proj - 1e-9
    np.testing.assert_allclose(rr.estimate(y, "em"), em.freq)
    with pytest.raises(ValueError):
        rr.estimate(y, "bogus")


def test_rr_input_checks():
    rr = RandomizedResponse(1.0, 5)
    with pytest.raises(TypeError):
        rr.perturb([0, 1], rng=np.random)  # no global RNG
    with pytest.raises(ValueError):
        rr.perturb([0, 5], np.random.default_rng(0))
    with pytest.raises(ValueError):
        RandomizedResponse(0.0, 5)
    with pytest.raises(ValueError):
        RandomizedResponse(1.0, ["a", "a"])
    with pytest.raises(ValueError):
        RandomizedResponse(1.0, 5, mu=0.1)  # mu <= 1/|X|: epsilon <= 0


# ------------------------------------------------------------------ hashing
def _collisions_by_enumeration(prime: int, g: int) -> Fraction:
    hits = total = 0
    for a in range(1, prime):
        for b in range(prime):
            h = [((a * x + b) % prime) % g for x in (0, 1)]
            hits += h[0] == h[1]
            total += 1
    return Fraction(hits, total)


@pytest.mark.parametrize("prime, g", [(13, 2), (13, 5), (17, 16), (11, 11), (7, 3)])
def test_collision_probability_exhaustive(prime, g):
    exact = _collisions_by_enumeration(prime, g)
    assert collision_probability(g, prime) == pytest.approx(float(exact), rel=1e-15)
    assert exact <= Fraction(1, g)  # universal (CLRS Thm. 11.5)


def test_hash_values_no_overflow_at_extremes():
    a = np.array([HASH_PRIME - 1, 1, 123456789])
    x = np.array([HASH_PRIME - 1, 0, 10500392])
    b = np.array([HASH_PRIME - 1, 0, 5])
    expected = [((int(ai) * int(xi) + int(bi)) % HASH_PRIME) % 1000 for ai, xi, bi in zip(a, x, b)]
    assert hash_values(a, b, x, 1000).tolist() == expected


# ------------------------------------------------------------------ GLH
def test_glh_reports_carry_seed_and_follow_eq3():
    glh = GeneralizedLocalHashing(1.2, 50, 8)
    rng = np.random.default_rng(3)
    n = 40000
    items = rng.integers(0, 50, size=n)
    rep = glh.perturb(items, rng)
    assert rep.dtype.names == ("a", "b", "y")
    assert rep["a"].min() >= 1 and rep["a"].max() < HASH_PRIME and rep["y"].max() < 8
    # Pr[y = h(x)] = mu (eq. 3); 5 standard errors
    match = hash_values(rep["a"], rep["b"], items, 8) == rep["y"]
    assert abs(match.mean() - glh.mu) <= 5 * math.sqrt(glh.mu * (1 - glh.mu) / n)
    # per-user seeds differ
    assert np.unique(rep["a"]).size > n * 0.99


def test_glh_estimate_unbiased_with_exact_variance():
    k, g, n, eps, trials = 12, 6, 1500, 2.0, 150
    rng = np.random.default_rng(9)
    items = rng.integers(0, k, size=n)
    truth = np.bincount(items, minlength=k) / n
    glh = GeneralizedLocalHashing(eps, k, g)
    ests = np.array([glh.estimate(glh.perturb(items, rng)) for _ in range(trials)])
    var = glh.variance_per_user(truth) / n
    # with kappa = 1/g the exact variance is eq. 23; here kappa differs from 1/g by < 1e-8 relative
    assert glh.kappa * g == pytest.approx(1.0, rel=1e-8)
    np.testing.assert_allclose(var, l2_loss_glh(glh.epsilon_realized, g, n, truth), rtol=1e-6)
    assert np.all(np.abs(ests.mean(axis=0) - truth) <= 5 * np.sqrt(var / trials))
    tot = ((ests - truth) ** 2).sum(axis=1)
    assert abs(tot.mean() - var.sum()) <= 5 * tot.std(ddof=1) / math.sqrt(trials)


def test_glh_counts_chunking_and_em():
    glh = GeneralizedLocalHashing(3.0, 40, 64)
    rng = np.random.default_rng(4)
    items = rng.integers(0, 10, size=500)
    rep = glh.perturb(items, rng)
    np.testing.assert_array_equal(glh.counts(rep), glh.counts(rep, chunk_entries=7))
    brute = np.array([(hash_values(rep["a"], rep["b"], x, 64) == rep["y"]).sum() for x in range(40)])
    np.testing.assert_array_equal(glh.counts(rep), brute)
    em = glh.estimate_em(rep, tol=1e-8)
    assert em.freq.min() >= 0 and em.freq.sum() == pytest.approx(1.0)
    # the MLE is at least as likely as the projected empirical estimate
    hit = hash_values(rep["a"][:, None], rep["b"][:, None], np.arange(40)[None, :], 64) == rep["y"][:, None]
    lik = np.where(hit, glh.mu, glh.nu_other)
    proj = project_simplex(glh.estimate(rep))
    assert em.log_likelihood >= float(np.sum(np.log(np.maximum(lik @ proj, 1e-300)))) - 1e-9
    thr = glh.estimate(rep, "threshold")
    assert thr.min() >= 0 and thr.sum() == pytest.approx(1.0)


def test_glh_checks():
    with pytest.raises(ValueError):
        GeneralizedLocalHashing(1.0, 10, HASH_PRIME + 1)
    glh = GeneralizedLocalHashing(1.0, 10, 4)
    bad = np.zeros(3, dtype=[("a", np.int64), ("b", np.int64), ("y", np.int64)])
    with pytest.raises(ValueError):
        glh.estimate(bad)  # a = 0 is not a valid seed
    with pytest.raises(ValueError):
        glh.estimate(np.arange(3))


def test_from_plan_round_trip():
    plan = {"format_version": "1.0", "mechanism": "rr",
            "params": {"epsilon": 1.0, "domain_size": 3, "mu": 0.5, "domain": ["x", "y", "z"]}}
    rr = RandomizedResponse.from_plan(plan)
    assert rr.mu == 0.5 and list(rr.domain) == ["x", "y", "z"]
    assert rr.epsilon_realized == pytest.approx(math.log(2.0))  # mu/nu = 0.5/0.25
    from ldpplan import mechanisms
    from ldpplan.mechanisms import PlanError

    with pytest.raises(PlanError):
        mechanisms.load({**plan, "params": {"epsilon": 1.0, "domain_size": 3, "mu": 0.1}})
    glh = mechanisms.load({"format_version": "1.0", "mechanism": "glh",
                           "params": {"epsilon": 1.0, "domain_size": 3, "mu": 0.5, "g": 4}})
    assert isinstance(glh, GeneralizedLocalHashing) and glh.g == 4

"""Runtime of uRR / uRAP / RAPPOR / PUM (mechanisms/uldp.py)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from ldpplan import mechanisms
from ldpplan.mechanisms._estimators import project_simplex
from ldpplan.mechanisms.uldp import BasicRAPPOR, PersonalizedULDP, UtilityOptimizedRAPPOR, UtilityOptimizedRR
from ldpplan.planner.uldp import _rappor_grid, grid_urap, grid_urr
from ldpplan.solvers.uldp import LinearMarginals


def make_urr(eps, k, sens):
    return UtilityOptimizedRR(k, sens, **grid_urr(eps, len(sens)))


def make_urap(eps, k, sens):
    return UtilityOptimizedRAPPOR(k, sens, **grid_urap(eps))


def test_urr_channel_matches_def3_exhaustively():
    eps, k, sens = 1.0, 6, [0, 2, 5]
    m = make_urr(eps, k, sens)
    q = m.channel_matrix()
    e = math.exp(eps)
    for x in range(k):
        for y in range(k):
            if x in sens and y == x:
                want = e / (3 + e - 1)
            elif y in sens:
                want = 1 / (3 + e - 1)
            elif x not in sens and y == x:
                want = (e - 1) / (3 + e - 1)
            else:
                want = 0.0
            assert q[x, y] == pytest.approx(want, abs=1e-11)  # budget shrunk by 1e-12 + grid
    assert np.all(q.sum(axis=1) == 1.0)  # exactly, on the grid


def test_urr_perturb_matches_channel():
    m = make_urr(1.0, 6, [0, 2, 5])
    rng = np.random.default_rng(1)
    n = 60_000
    q = m.channel_matrix()
    for x in range(6):
        y = m.perturb(np.full(n, x), rng)
        freq = np.bincount(y, minlength=6) / n
        se = np.sqrt(q[x] * (1 - q[x]) / n)
        assert np.all(np.abs(freq - q[x]) <= 5 * se + 1e-12)
        assert np.all(freq[q[x] == 0] == 0)


def test_urap_marginals_match_eqs_9_10():
    k, sens, eps = 7, [1, 3, 4], 1.0
    m = make_urap(eps, k, sens)
    rng = np.random.default_rng(2)
    n = 40_000
    bp = m.bit_probabilities()
    h = math.exp(eps / 2)
    assert bp[1, 1] == pytest.approx(h / (h + 1), abs=1e-12)  # theta
    assert bp[0, 1] == pytest.approx(1 / (h + 1), abs=1e-12)  # d1 from a non-sensitive input
    assert bp[0, 0] == pytest.approx(1 - math.exp(-eps / 2), abs=1e-12)  # 1 - d2
    assert bp[1, 0] == 0 and bp[0, 2] == 0
    for x in range(k):
        y = m.perturb(np.full(n, x), rng)
        freq = y.mean(axis=0)
        se = np.sqrt(bp[x] * (1 - bp[x]) / n)
        assert np.all(np.abs(freq - bp[x]) <= 5 * se + 1e-12)
        nonsens = np.setdiff1d(np.arange(k), sens)
        assert y[:, nonsens].sum(axis=1).max() <= 1  # at most one invertible bit
        if x in sens:
            assert not y[:, nonsens].any()  # no transition X_S -> Y_I


@pytest.mark.parametrize("which", ["urr", "urap"])
def test_props_4_7_and_15_18_match_simulation(which):
    # users i.i.d. from p (as in the theory); mean l1 / l2 over trials vs eq. (37) / (46), (48)
    k, sens, eps, n, trials = 12, [0, 1, 2], 1.0, 20_000, 150
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.ones(k))
    m = make_urr(eps, k, sens) if which == "urr" else make_urap(eps, k, sens)
    g = grid_urr(eps, 3) if which == "urr" else grid_urap(eps)
    model = LinearMarginals.urr(3, 9, **g) if which == "urr" else LinearMarginals.urap(3, 9, **g)
    l1s, l2s = [], []
    for _ in range(trials):
        x = rng.choice(k, size=n, p=p)
        est = m.estimate(m.perturb(x, rng))
        l1s.append(np.abs(est - p).sum())
        l2s.append(np.sum((est - p) ** 2))
    se1, se2 = np.std(l1s) / math.sqrt(trials), np.std(l2s) / math.sqrt(trials)
    assert abs(np.mean(l2s) - model.expected_l2(p, n)) <= 5 * se2
    # l1 is asymptotic (normal approximation): allow 5 SE plus 2% bias
    assert abs(np.mean(l1s) - model.expected_l1(p, n)) <= 5 * se1 + 0.02 * model.expected_l1(p, n)


@pytest.mark.parametrize("which", ["urr", "urap", "rappor"])
def test_estimators_threshold_and_em(which):
    k, sens = 10, [0, 1, 2, 3]
    m = {"urr": make_urr(2.0, k, sens), "urap": make_urap(2.0, k, sens),
         "rappor": BasicRAPPOR(k, **_rappor_grid(2.0))}[which]
    rng = np.random.default_rng(4)
    p = np.array([0.3, 0.0, 0.05, 0.0, 0.25, 0.2, 0.1, 0.1, 0.0, 0.0])
    x = rng.choice(k, size=5000, p=p)
    y = m.perturb(x, rng)
    emp = m.estimate(y, "empirical")
    assert emp.sum() == pytest.approx(1.0, abs=0.1)
    thr = m.estimate(y, "threshold")
    assert np.all(thr >= 0) and thr.sum() == pytest.approx(1.0)
    res = m.estimate_em(y, tol=1e-9, max_iter=20000)
    assert res.converged
    assert np.all(res.freq >= 0) and res.freq.sum() == pytest.approx(1.0)
    # the MLE's likelihood is not below the projected empirical estimate's
    if which == "urr":
        lik, w = m.channel_matrix().T, m.aggregate(y).astype(float)
    else:
        lik, w = m.likelihood(y)
    proj = project_simplex(emp)
    pos = w > 0
    with np.errstate(divide="ignore"):
        ll_proj = float(np.sum(w[pos] * np.log((lik @ proj)[pos])))  # -inf if proj rules out a report
    assert res.log_likelihood >= ll_proj - 1e-6
    assert 0.5 * np.abs(res.freq - p).sum() < 0.5 * np.abs(emp - p).sum() + 0.02


def test_urap_likelihood_grouping_is_exact():
    # EM invariance: grouped likelihood (row-scaled) gives the same MLE as the full product likelihood
    k, sens = 5, [0, 1]
    m = make_urap(1.5, k, sens)
    rng = np.random.default_rng(5)
    y = m.perturb(rng.integers(0, k, 800), rng)
    bp = m.bit_probabilities()
    full = np.prod(np.where(y[:, None, :], bp[None], 1 - bp[None]), axis=2)  # (n, k)
    from ldpplan.mechanisms._estimators import em_simplex

    a = em_simplex(full, np.ones(len(y)), tol=1e-12).freq
    lik, w = m.likelihood(y)
    b = em_simplex(lik, w, tol=1e-12).freq
    np.testing.assert_allclose(a, b, atol=1e-8)


def test_rappor_is_eps_ldp_on_grid():
    for eps in (0.1, 1.0, 5.0):
        g = _rappor_grid(eps)
        assert 2 * math.log(g["theta"] / g["psi"]) <= eps


def test_pum_preprocess_and_eq21():
    k, tags = 8, ["home", "work"]
    common = UtilityOptimizedRR(k + 2, [0, 8, 9], **grid_urr(3.0, 3))
    home = np.zeros(k)
    home[[4, 5]] = 0.5
    pum = PersonalizedULDP(common, tags, {"home": home})
    x = np.array([4, 5, 6, 7, 0])
    z = pum.preprocess(x, np.array([0, 0, 1, -1, -1]))
    np.testing.assert_array_equal(z, [8, 8, 9, 7, 0])
    r = np.array([0.1, 0, 0, 0, 0.1, 0.1, 0.1, 0.2, 0.2, 0.2])
    p = pum.combine(r)
    # home bot: background; work bot: proportional to r over X_N = {1..7}
    fallback = np.array([0, 0, 0, 0, 0.1, 0.1, 0.1, 0.2]) / 0.5
    np.testing.assert_allclose(p, r[:k] + 0.2 * home + 0.2 * fallback)
    assert p.sum() == pytest.approx(1.0)


def test_pum_estimate_recovers_distribution_with_true_background():
    rng = np.random.default_rng(6)
    k = 20
    p = rng.dirichlet(np.ones(k) * 2)
    n = 200_000
    x = rng.choice(k, size=n, p=p)
    # users at items 10..14 regard their item as "home" with probability 0.5
    tagged = (x >= 10) & (x < 15) & (rng.random(n) < 0.5)
    tags = np.where(tagged, 0, -1)
    pi_home = np.bincount(x[tagged], minlength=k) / tagged.sum()
    common = UtilityOptimizedRR(k + 1, [0, 1, k], **grid_urr(2.0, 3))
    pum = PersonalizedULDP(common, ["home"], {"home": pi_home})
    est = pum.estimate(pum.perturb(x, rng, private_tags=tags))
    assert 0.5 * np.abs(est - p).sum() < 0.03


def test_load_from_plan_roundtrip():
    from ldpplan import planner

    for name, cls in (("uldp-urr", UtilityOptimizedRR), ("uldp-urap", UtilityOptimizedRAPPOR),
                      ("uldp-pum", PersonalizedULDP)):
        plan = planner.make_plan(planner.example_spec(name))
        mech = mechanisms.load(plan)
        assert isinstance(mech, cls)
        rng = np.random.default_rng(7)
        x = rng.integers(0, mech.domain_size, 3000)
        freq = mech.estimate(mech.perturb(x, rng), method="threshold")
        assert freq.shape == (mech.domain_size,) and freq.sum() == pytest.approx(1.0)


def test_bad_inputs():
    m = make_urr(1.0, 4, [0])
    with pytest.raises(ValueError):
        m.perturb(np.array([4]), np.random.default_rng(0))
    with pytest.raises(TypeError):
        m.perturb(np.array([1]), 0)
    with pytest.raises(ValueError):
        m.estimate(np.array([1, 2]), method="mle")
    with pytest.raises(ValueError):
        UtilityOptimizedRR(4, [0], 0.5, 0.3, 0.7)  # off the row-sum constraint / grid

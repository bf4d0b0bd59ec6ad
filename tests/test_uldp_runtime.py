"""Runtime of uRR / uRAP / RAPPOR / PUM (ldpplan.mechanisms.uldp) on the runtime protocol."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpplan.mechanisms import Aggregate, Estimate, Reports
from ldpplan.mechanisms._estimators import em_simplex, em_structured, project_simplex
from ldpplan.mechanisms.uldp.runtime import BitwiseChannel
from ldpplan.mechanisms.uldp import (BasicRAPPOR, PersonalizedULDP, PreProcessor, UtilityOptimizedRAPPOR,
                                     UtilityOptimizedRR, pack_bits, unpack_bits, urap_epsilon,
                                     urr_epsilon)
from ldpplan.planner._exact import SAFETY_MARGIN
from ldpplan.planner.uldp._numbers import grid_rappor, grid_urap, grid_urr
from ldpplan.solvers.uldp import LinearMarginals



def make_urr(eps, k, sens):
    return UtilityOptimizedRR(domain=k, sensitive=sens, **grid_urr(eps, len(sens)))


def make_urap(eps, k, sens, theta=None):
    return UtilityOptimizedRAPPOR(domain=k, sensitive=sens, **grid_urap(eps, len(sens), k - len(sens), theta))


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
            assert q[x, y] == pytest.approx(want, abs=SAFETY_MARGIN * eps)  # budget shrunk by SAFETY_MARGIN + grid
    assert np.all(q.sum(axis=1) == 1.0)  # exactly, on the grid
    # Def. 2 by enumeration: the worst ratio over Y_P = X_S equals the privacy map's epsilon
    cols = q[:, sens]
    assert math.log((cols.max(axis=0) / cols.min(axis=0)).max()) == pytest.approx(m.privacy_map()["epsilon"], rel=1e-12)
    assert m.privacy_map()["epsilon"] <= eps


@pytest.mark.parametrize("k,sens,theta", [(5, [1, 3], None), (4, [2], None), (5, [0, 1, 2], 0.8), (3, [0, 1, 2], None)])
def test_urap_def2_by_enumeration_of_all_outputs(k, sens, theta):
    """Every one of the 2^|X| outputs: Def. 2 (4) on Y_I, and (5) on Y_P equals urap_epsilon."""
    eps = 0.8
    m = make_urap(eps, k, sens, theta)
    q = m.channel_matrix()  # (k, 2^k)
    assert q.shape == (k, 2**k)
    np.testing.assert_allclose(q.sum(axis=1), 1.0, rtol=1e-12)
    nonsens = [j for j in range(k) if j not in sens]
    ys = ((np.arange(2**k)[:, None] >> np.arange(k)[None, :]) & 1).astype(bool)
    protected = ~ys[:, nonsens].any(axis=1)
    worst = 0.0
    for y in range(2**k):
        col = q[:, y]
        if protected[y]:
            assert col.min() > 0
            worst = max(worst, math.log(col.max() / col.min()))
        elif col.max() > 0:  # Def. 2 (4): a possible invertible output reveals exactly one x in X_N
            assert np.count_nonzero(col) == 1 and int(np.flatnonzero(col)[0]) in nonsens
    assert worst == pytest.approx(m.privacy_map()["epsilon"], rel=1e-9, abs=1e-12)
    assert worst <= eps * (1 + 1e-12)


def test_urap_epsilon_edge_cases_are_infinite():
    assert urap_epsilon(1.0, 0.3, 0.5, 2, 3) == math.inf  # theta = 1: a protected output excludes inputs
    assert urap_epsilon(0.6, 1.0, 0.5, 2, 3) == math.inf  # d1 = 1: no ZeroDivisionError
    assert urap_epsilon(0.6, 0.0, 0.5, 2, 3) == math.inf
    assert urap_epsilon(0.6, 0.3, 0.0, 2, 3) == math.inf
    assert urap_epsilon(0.6, 0.3, float("nan"), 2, 3) == math.inf
    assert urap_epsilon(0.6, 0.3, 0.0, 2, 0) == pytest.approx(math.log(0.6 / 0.3 * 0.7 / 0.4))  # d2 unused


def test_urr_perturb_matches_channel():
    m = make_urr(1.0, 6, [0, 2, 5])
    rng = np.random.default_rng(1)
    n = 60_000
    q = m.channel_matrix()
    for x in range(6):
        y = m.perturb(np.full(n, x), rng)["y"]
        freq = np.bincount(y, minlength=6) / n
        se = np.sqrt(q[x] * (1 - q[x]) / n)
        assert np.all(np.abs(freq - q[x]) <= 5 * se + 1e-12)
        assert np.all(freq[q[x] == 0] == 0)


def test_urap_marginals_match_eqs_9_10():
    k, sens, eps = 11, [1, 3, 4], 1.0
    m = make_urap(eps, k, sens)
    rng = np.random.default_rng(2)
    n = 40_000
    bp = m.bit_probabilities()
    h = math.exp(eps / 2)
    tol = SAFETY_MARGIN * eps  # budget shrunk by SAFETY_MARGIN, then the 2^-48 grid
    assert bp[1, 1] == pytest.approx(h / (h + 1), abs=tol)  # theta
    assert bp[0, 1] == pytest.approx(1 / (h + 1), abs=tol)  # d1 from a non-sensitive input
    assert bp[0, 0] == pytest.approx(1 - math.exp(-eps / 2), abs=tol)  # 1 - d2
    assert bp[1, 0] == 0 and bp[0, 2] == 0
    nonsens = np.setdiff1d(np.arange(k), sens)
    for x in range(k):
        rep = m.perturb(np.full(n, x), rng)
        assert rep["bits"].dtype == np.uint8 and rep["bits"].shape == (n, 2)
        y = unpack_bits(rep["bits"], k)
        se = np.sqrt(bp[x] * (1 - bp[x]) / n)
        assert np.all(np.abs(y.mean(axis=0) - bp[x]) <= 5 * se + 1e-12)
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
    g = grid_urr(eps, 3) if which == "urr" else grid_urap(eps, 3, 9)
    model = LinearMarginals.urr(3, 9, **g) if which == "urr" else LinearMarginals.urap(3, 9, **g)
    l1s, l2s = [], []
    for _ in range(trials):
        x = rng.choice(k, size=n, p=p)
        est = m.estimate(m.perturb(x, rng)).frequency
        l1s.append(np.abs(est - p).sum())
        l2s.append(np.sum((est - p) ** 2))
    se1, se2 = np.std(l1s) / math.sqrt(trials), np.std(l2s) / math.sqrt(trials)
    assert abs(np.mean(l2s) - model.expected_l2(p, n)) <= 5 * se2
    # l1 is asymptotic (normal approximation): allow 5 SE plus 2% bias
    assert abs(np.mean(l1s) - model.expected_l1(p, n)) <= 5 * se1 + 0.02 * model.expected_l1(p, n)


@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
@pytest.mark.parametrize("which", ["urr", "urap", "rappor"])
def test_estimators_threshold_and_em(which):
    k, sens = 10, [0, 1, 2, 3]
    m = {"urr": make_urr(2.0, k, sens), "urap": make_urap(2.0, k, sens),
         "rappor": BasicRAPPOR(domain=k, **grid_rappor(2.0))}[which]
    rng = np.random.default_rng(4)
    p = np.array([0.3, 0.0, 0.05, 0.0, 0.25, 0.2, 0.1, 0.1, 0.0, 0.0])
    x = rng.choice(k, size=5000, p=p)
    rep = m.perturb(x, rng)
    agg = m.aggregate(rep)
    emp = m.estimate(rep, "empirical")
    assert isinstance(emp, Estimate) and emp.method == "empirical" and emp.n == 5000
    assert emp.frequency.sum() == pytest.approx(1.0, abs=0.1)
    np.testing.assert_array_equal(emp.frequency, m.estimate(agg).frequency)  # default = empirical, same from counts
    # plug-in standard error: sqrt(m_hat (1 - m_hat) / n) / beta
    a, b = m.marginals()
    m_hat = a + b * emp.frequency
    np.testing.assert_allclose(emp.std_error, np.sqrt(m_hat * (1 - m_hat) / 5000) / b, rtol=1e-9)
    thr = m.estimate(agg, "threshold").frequency
    assert np.all(thr >= 0) and thr.sum() == pytest.approx(1.0)
    res = m.estimate(rep, "em", tol=1e-9, max_iter=20000)
    assert res.iterations < 20000  # converged
    assert np.all(res.frequency >= 0) and res.frequency.sum() == pytest.approx(1.0)
    # the MLE's likelihood is not below the projected empirical estimate's
    if which == "urr":
        lik, w = m.channel_matrix().T, agg["y"].astype(float)
        assert res.iterations == 0  # exact water-filling MLE
    else:  # the exact likelihood of eq. (8), one row per report
        y = unpack_bits(rep["bits"], k)
        bp = m.bit_probabilities()
        lik = np.prod(np.where(y[:, None, :], bp[None], 1 - bp[None]), axis=2)
        w = np.ones(len(y))
        # the iterative EM on the grouped pattern likelihood (row-scaled) is a cross-check of the MLE
        channel, wg = m.pattern_channel(rep)
        ref = em_structured(channel, wg, tol=1e-13, max_iter=200000, accelerate=True).frequency
        assert res.log_likelihood == pytest.approx(float(np.sum(np.log(lik @ res.frequency))), rel=1e-10)
        ll_ref = float(np.sum(np.log(lik @ ref)))
        assert res.log_likelihood >= ll_ref - 1e-2  # tol = 1e-9: stops on a certified gap <= 1e-9 |L| nats
        tight = m.estimate(rep, "em", tol=1e-16, max_iter=20000)
        np.testing.assert_allclose(tight.frequency, ref, atol=1e-5)
        assert tight.log_likelihood >= ll_ref - 1e-7
    proj = project_simplex(emp.frequency)
    pos = w > 0
    with np.errstate(divide="ignore"):
        ll_proj = float(np.sum(w[pos] * np.log((lik @ proj)[pos])))
    assert res.log_likelihood >= ll_proj - 1e-6
    assert 0.5 * np.abs(res.frequency - p).sum() < 0.5 * np.abs(emp.frequency - p).sum() + 0.02
    if which != "urr":
        bits = m.estimate(agg, "em-bits")
        assert bits.method == "em-bits" and np.all(bits.frequency >= 0) and bits.iterations == 0
        # the exact composite MLE is the fixed point of the iterative per-bit EM
        bch = BitwiseChannel(np.asarray(m.sensitive_mask), m.theta, m.d1, m.d2)
        counts = agg["bits"].astype(float)
        it = em_structured(bch, np.concatenate([counts, 5000 - counts]), tol=1e-14, max_iter=300000,
                           accelerate=True)
        np.testing.assert_allclose(bits.frequency, it.frequency, atol=1e-5)
        assert 0.5 * np.abs(bits.frequency - p).sum() < 0.5 * np.abs(emp.frequency - p).sum() + 0.02
        with pytest.raises(ValueError, match="needs each report's pattern"):
            m.estimate(agg, "em")


def test_structured_channels_equal_dense_products():
    rng = np.random.default_rng(8)
    k, sens = 7, [0, 2, 3]
    u = make_urr(1.3, k, sens)
    from ldpplan.mechanisms.uldp.runtime import BitwiseChannel
    from ldpplan.mechanisms.uldp.runtime import URRChannel

    ch = URRChannel(np.asarray(u.sensitive_mask), u.c1, u.c2, u.c3)
    p, r = rng.dirichlet(np.ones(k)), rng.random(k)
    np.testing.assert_allclose(ch @ p, u.channel_matrix().T @ p, rtol=1e-13)
    np.testing.assert_allclose(ch.rmatvec(r), u.channel_matrix() @ r, rtol=1e-13)
    a = make_urap(1.3, k, sens)
    bch = BitwiseChannel(np.asarray(a.sensitive_mask), a.theta, a.d1, a.d2)
    bp = a.bit_probabilities()  # (x, j)
    dense = np.concatenate([bp.T, 1 - bp.T])  # rows (bit j = 1), then (bit j = 0)
    r2 = rng.random(2 * k)
    np.testing.assert_allclose(bch @ p, dense @ p, rtol=1e-13)
    np.testing.assert_allclose(bch.rmatvec(r2), dense.T @ r2, rtol=1e-13)
    # exact grouped likelihood with 11 sensitive bits (two bytes per pattern) against eq. (8) row by row
    big = make_urap(0.7, 14, list(range(11)))
    rep = big.perturb(rng.integers(0, 14, 3000), rng)
    pch, w = big.pattern_channel(rep)
    assert w.sum() == 3000
    bpb = big.bit_probabilities()
    rows = []
    for j in pch.revealed:  # invertible groups: a unit vector on the revealed item
        rows.append(np.eye(14)[j])
    for packed in pch.packed:
        bits = np.zeros(14, dtype=bool)
        bits[:11] = np.unpackbits(packed)[:11].astype(bool)
        full = np.prod(np.where(bits[None, :], bpb, 1 - bpb), axis=1)  # Q(y | x), eq. (8)
        base = np.prod(np.where(bits[:11], big.d1, 1 - big.d1))  # the dropped common factor
        rows.append(full / base)
    dense = np.array(rows)
    p14, r14 = rng.dirichlet(np.ones(14)), rng.random(dense.shape[0])
    np.testing.assert_allclose(pch @ p14, dense @ p14, rtol=1e-12)
    np.testing.assert_allclose(pch.rmatvec(r14), dense.T @ r14, rtol=1e-12)


def test_urap_grouped_likelihood_is_exact():
    # EM invariance: grouped likelihood (row-scaled) gives the same MLE as the full product likelihood
    k, sens = 5, [0, 1]
    m = make_urap(1.5, k, sens)
    rng = np.random.default_rng(5)
    rep = m.perturb(rng.integers(0, k, 800), rng)
    y = unpack_bits(rep["bits"], k)
    bp = m.bit_probabilities()
    full = np.prod(np.where(y[:, None, :], bp[None], 1 - bp[None]), axis=2)  # (n, k)
    a = em_simplex(full, np.ones(len(y)), tol=1e-12).frequency
    channel, w = m.pattern_channel(rep)
    b = em_structured(channel, w, tol=1e-12).frequency
    np.testing.assert_allclose(a, b, atol=1e-8)


def test_rappor_is_eps_ldp_on_grid():
    for eps in (0.1, 1.0, 5.0):
        g = grid_rappor(eps)
        assert 2 * math.log(g["theta"] / g["psi"]) <= eps
        rap = BasicRAPPOR(domain=6, theta=g["theta"], psi=g["psi"])
        assert rap.privacy_map() == {"notion": "LDP", "epsilon": pytest.approx(2 * math.log(g["theta"] / g["psi"]))}


def test_basic_rappor_from_an_all_sensitive_urap_plan():
    from ldpplan import planner
    from ldpplan.mechanisms import PlanError

    plan = planner.make_plan({"mechanism": "urap", "epsilon": 2.0, "domain": 8, "sensitive": 8})
    rap = BasicRAPPOR.from_plan(plan)
    assert rap.mechanism == "rappor" and rap.privacy_map()["epsilon"] <= 2.0
    with pytest.raises(PlanError, match="every item"):
        BasicRAPPOR.from_plan(_plan("uldp-urap"))


def test_pum_preprocess_and_eq21():
    k, tags = 8, ["home", "work"]
    common = UtilityOptimizedRR(domain=k + 2, sensitive=[0, 8, 9], **grid_urr(3.0, 3))
    home = np.zeros(k)
    home[[4, 5]] = 0.5
    pum = PersonalizedULDP(domain=k, common=common, tags=tags, background={"home": home})
    x = np.array([4, 5, 6, 7, 0])
    z = pum.preprocess(x, np.array([0, 0, 1, -1, -1]))
    np.testing.assert_array_equal(z, [8, 8, 9, 7, 0])
    users = [PreProcessor({4: 0, 5: 0}), PreProcessor({5: 0}), PreProcessor({6: 1}), PreProcessor({}), PreProcessor({})]
    np.testing.assert_array_equal(PersonalizedULDP.tags_from_preprocessors(x, users), [0, 0, 1, -1, -1])
    r = np.array([0.1, 0, 0, 0, 0.1, 0.1, 0.1, 0.2, 0.2, 0.2])
    p = pum.combine(r)
    # home bot: background; work bot: proportional to r over X_N = {1..7}
    fallback = np.array([0, 0, 0, 0, 0.1, 0.1, 0.1, 0.2]) / 0.5
    np.testing.assert_allclose(p, r[:k] + 0.2 * home + 0.2 * fallback)
    assert p.sum() == pytest.approx(1.0)
    assert pum.privacy_map()["sensitive"] == [0]
    assert pum.privacy_map()["intermediate_sensitive"] == [0, 8, 9]


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
    common = UtilityOptimizedRR(domain=k + 1, sensitive=[0, 1, k], **grid_urr(2.0, 3))
    pum = PersonalizedULDP(domain=k, common=common, tags=["home"], background={"home": pi_home})
    rep = pum.perturb({"item": x, "tag": tags}, rng)
    assert rep.mechanism == "pum" and len(rep) == n
    est = pum.estimate(rep)
    assert est.frequency.shape == (k,)
    assert 0.5 * np.abs(est.frequency - p).sum() < 0.03
    np.testing.assert_allclose(pum.estimate(pum.aggregate(rep)).frequency, est.frequency)


def _plan(name):
    from ldpplan import planner

    return planner.make_plan(planner.example_spec(name))


@pytest.mark.parametrize("name,cls", [("uldp-urr", UtilityOptimizedRR), ("uldp-urap", UtilityOptimizedRAPPOR),
                                      ("uldp-pum", PersonalizedULDP)])
def test_protocol_round_trip(name, cls):
    from ldpplan import mechanisms

    plan = _plan(name)
    mech = mechanisms.load(plan)
    assert isinstance(mech, cls) and mech.labels is None and "empirical" == mech.methods[0]
    assert cls.from_plan(plan).privacy_map() == mech.privacy_map()
    assert mech.privacy_map()["epsilon"] <= 1.0
    rng = np.random.default_rng(7)
    x = rng.integers(0, mech.domain_size, 3000)
    r1, r2 = mech.perturb(x[:1000], rng), mech.perturb(x[1000:], rng)
    assert isinstance(r1, Reports) and len(r1) == 1000 and "mechanism='" in repr(r1)
    merged = mech.aggregate(r1) + mech.aggregate(r2)
    assert merged.n == 3000 and Aggregate.from_dict(merged.to_dict()) == merged
    both = Reports(r1.mechanism, {k: np.concatenate([r1[k], r2[k]]) for k in r1.columns})
    assert mech.aggregate(both) == merged
    for method in mech.methods:
        src = both if method == "em" and name != "uldp-urr" else merged
        est = mech.estimate(src, method=method, max_iter=50) if method.startswith("em") else mech.estimate(src, method)
        assert est.frequency.shape == (mech.domain_size,) and est.n == 3000 and est.method == method
    with pytest.raises(ValueError, match="method: must be one of"):
        mech.estimate(merged, method="mle")
    with pytest.raises(AttributeError):
        mech.domain_size = 3  # immutable


def test_bad_inputs_and_foreign_reports():
    m = make_urr(1.0, 4, [0])
    with pytest.raises(ValueError, match="items"):
        m.perturb(np.array([4]), np.random.default_rng(0))
    with pytest.raises(TypeError):
        m.perturb(np.array([1]), 0)
    with pytest.raises(ValueError, match="rows of Q must sum to one"):
        UtilityOptimizedRR(domain=4, sensitive=[0], c1=0.5, c2=0.25, c3=0.75)
    with pytest.raises(ValueError, match="reports.y"):
        m.aggregate(Reports("urr", {"y": np.array([0, 7])}))
    with pytest.raises(ValueError, match="reports.y"):
        m.aggregate(Reports("urr", {"y": np.array([0.0, 1.0])}))
    with pytest.raises(ValueError, match="urr Reports"):
        m.aggregate(Reports("urap", {"y": np.array([0, 1])}))
    u = make_urap(1.0, 10, [0, 1])
    ok = pack_bits(np.eye(10, dtype=bool)[[2]])
    assert u.aggregate(Reports("urap", {"bits": ok})).n == 1
    two_n = pack_bits(np.array([[0, 0, 1, 1, 0, 0, 0, 0, 0, 0]], dtype=bool))
    with pytest.raises(ValueError, match="two non-sensitive bits"):
        u.aggregate(Reports("urap", {"bits": two_n}))
    padded = ok.copy()
    padded[0, 1] |= 0x80
    with pytest.raises(ValueError, match="padding"):
        u.aggregate(Reports("urap", {"bits": padded}))
    with pytest.raises(ValueError, match="reports.bits"):
        u.aggregate(Reports("urap", {"bits": ok.astype(np.int16)}))
    with pytest.raises(ValueError, match="counts.bits"):
        u.estimate(Aggregate("urap", 2, {"bits": np.array([3] + [0] * 9)}))
    with pytest.raises(ValueError, match="n = 0"):
        m.estimate(Aggregate("urr", 0, {"y": np.zeros(4, dtype=np.int64)}))


def test_aggregate_mode_sampler_matches_the_runtime():
    """Counts sampled from the true counts have the runtime's mean and variance (5 SE)."""
    from ldpplan.planner.uldp._counts import sample_aggregate

    rng = np.random.default_rng(9)
    true = np.array([300, 0, 120, 50, 530])
    for m in (make_urr(1.0, 5, [0, 2, 3]), make_urap(1.0, 5, [0, 2])):
        key = "y" if hasattr(m, "c1") else "bits"
        q = m.channel_matrix() if key == "y" else m.bit_probabilities()
        mean = true @ q
        var = true @ (q * (1 - q))  # per-column variance (uRR columns: sum of independent multinomials)
        draws = np.array([sample_aggregate(m, true, rng)[key] for _ in range(400)])
        assert np.all(np.abs(draws.mean(axis=0) - mean) <= 5 * np.sqrt(var / 400) + 1e-9)
        assert np.all(np.abs(draws.var(axis=0) - var) <= 0.3 * var + 1e-9)
        if key == "y":
            assert np.all(draws.sum(axis=1) == true.sum())


def test_all_permutations_of_small_urr_perturb_are_exact_in_support():
    m = make_urr(0.5, 4, [1, 3])
    rng = np.random.default_rng(10)
    for x in range(4):
        y = m.perturb(np.full(2000, x), rng)["y"]
        support = set(np.flatnonzero(m.channel_matrix()[x]).tolist())
        assert set(np.unique(y).tolist()) <= support
    assert list(itertools.islice(m.sensitive, 2)) == [1, 3]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 2**48 - 1), st.integers(1, 2**48 - 1), st.integers(1, 2**48 - 1), st.integers(1, 5),
       st.integers(0, 3))
def test_runtime_privacy_map_agrees_with_the_exact_ratio(kt, k1, k2, ks, kn):
    """The runtime's numpy epsilon equals ln of the verifier's exact worst ratio (Def. 2 (5))."""
    from ldpplan.planner.uldp._numbers import urap_ratio, urr_ratio

    theta, d1, d2 = kt / 2**48, k1 / 2**48, k2 / 2**48
    exact = urap_ratio(theta, d1, d2, ks, kn)
    value = urap_epsilon(theta, d1, d2, ks, kn)
    assert exact is not None
    want = math.log(exact.numerator) - math.log(exact.denominator)
    assert value == pytest.approx(want, rel=1e-9, abs=1e-12)
    c = urr_ratio(theta, d1)
    assert urr_epsilon(theta, d1) == pytest.approx(math.log(c.numerator) - math.log(c.denominator), rel=1e-9,
                                                   abs=1e-12)

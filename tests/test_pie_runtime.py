"""Runtime of the k-ary RR and the GLH (mechanisms/pie.py) on the runtime protocol."""
from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from ldpplan.mechanisms import Aggregate, Estimate, Reports
from ldpplan.mechanisms._estimators import project_simplex, significance_threshold
from ldpplan.mechanisms.pie import (
    HASH_PRIME, GeneralizedLocalHashing, RandomizedResponse, collision_probability, hash_values, keep_probability,
    split_streams,
)
from ldpplan.solvers.pie import alpha_rr, l2_loss_glh, l2_loss_rr


# ------------------------------------------------------------------ keep probability
@pytest.mark.parametrize("epsilon, k", [(1.0, 4), (0.01, 10**6), (15.97, 10500393), (1e-6, 2), (30.0, 65536)])
def test_keep_probability_is_the_largest_grid_point_within_epsilon(epsilon, k):
    mu = keep_probability(epsilon, k)
    assert mu * 2**48 == int(mu * 2**48)

    def ratio(m: Fraction) -> Fraction:
        return m * (k - 1) / (1 - m)

    with localcontext() as ctx:
        ctx.prec = 60
        e = Decimal(epsilon).exp()
        r = ratio(Fraction(mu))
        assert Decimal(r.numerator) / Decimal(r.denominator) <= e  # mu/nu <= e^eps
        r_up = ratio(Fraction(mu) + Fraction(1, 2**48))
        assert Decimal(r_up.numerator) / Decimal(r_up.denominator) > e  # one grid step more breaks it


def test_keep_probability_extremes_and_errors():
    assert keep_probability(700.0, 10**6) == 1 - 2**-48  # capped below 1: epsilon stays finite
    assert keep_probability(1e300, 2) == 1 - 2**-48
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="epsilon"):
            keep_probability(bad, 4)
    with pytest.raises(ValueError, match="k"):
        keep_probability(1.0, 1)


# ------------------------------------------------------------------ RR
def test_rr_channel_matches_eq2_rows_are_inputs():
    rr = RandomizedResponse(domain=["a", "b", "c", "d"], epsilon=1.0)
    q = rr.channel_matrix()
    assert q.shape == (4, 4)
    np.testing.assert_allclose(q.sum(axis=1), 1.0, atol=1e-15)  # Q[x, :] is a distribution over y
    e = math.e
    assert rr.mu <= e / (4 + e - 1) and rr.mu == pytest.approx(e / (4 + e - 1), abs=2**-48)
    assert q[0, 1] == pytest.approx(1 / (4 + e - 1), rel=1e-12)
    assert rr.epsilon_realized <= 1.0 and rr.epsilon_realized == pytest.approx(1.0, abs=1e-12)
    assert np.log(q.max(axis=0) / q.min(axis=0)).max() <= 1.0
    assert list(rr.domain) == ["a", "b", "c", "d"] and rr.labels == ["a", "b", "c", "d"]
    assert rr.methods == ("empirical", "threshold", "em")
    assert "RandomizedResponse(epsilon=1.0" in repr(rr)
    with pytest.raises(AttributeError):
        rr.mu = 0.5  # immutable


def test_rr_perturb_distribution_exhaustive_tiny_domain():
    rr = RandomizedResponse(domain=3, epsilon=0.7)
    rng = np.random.default_rng(11)
    n = 60000
    q = rr.channel_matrix()
    for x in range(3):
        rep = rr.perturb(np.full(n, x), rng=rng)
        assert isinstance(rep, Reports) and len(rep) == n and rep["y"].dtype == np.int64
        freq = np.bincount(rep["y"], minlength=3) / n
        se = np.sqrt(q[x] * (1 - q[x]) / n)
        assert np.all(np.abs(freq - q[x]) <= 5 * se), (x, freq, q[x])


def _chi2_pvalue(counts: np.ndarray, probs: np.ndarray) -> float:
    expected = probs * counts.sum()
    return float(stats.chi2.sf(((counts - expected) ** 2 / expected).sum(), df=counts.size - 1))


@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
def test_rr_output_per_user_position_mt19937_one_user_per_call():
    # Before the sampling fix, bytes taken from random_raw() of a 32-bit generator were 0 in the
    # upper half of every 64-bit word: users at index 4..7 mod 8 kept their value with probability 1.
    rr = RandomizedResponse(domain=4, epsilon=1.0)
    q = rr.channel_matrix()
    rng = np.random.Generator(np.random.MT19937(1))
    calls = 8 * 1500
    ys = np.array([rr.perturb([2], rng=rng)["y"][0] for _ in range(calls)])
    for pos in range(8):
        counts = np.bincount(ys[pos::8], minlength=4)
        assert _chi2_pvalue(counts, q[2]) > 1e-4 / 16, (pos, counts)
    # the same per position inside one batch
    rng = np.random.Generator(np.random.MT19937(1))
    batch = rr.perturb(np.full(8 * 1500, 2), rng=rng)["y"]
    for pos in range(8):
        counts = np.bincount(batch[pos::8], minlength=4)
        assert _chi2_pvalue(counts, q[2]) > 1e-4 / 16, (pos, counts)


def test_rr_estimates_unbiased_with_eq22_std_error():
    k, n, eps, trials = 20, 2000, 2.0, 300
    rng = np.random.default_rng(5)
    items = rng.integers(0, k, size=n)
    truth = np.bincount(items, minlength=k) / n
    rr = RandomizedResponse(domain=k, epsilon=eps)
    ests = np.array([rr.estimate(rr.perturb(items, rng=rng)).frequency for _ in range(trials)])
    var_theory = l2_loss_rr(rr.epsilon_realized, k, n, truth)  # Prop. 4.6, eq. 22
    np.testing.assert_allclose(rr.variance_per_user(truth) / n, var_theory, rtol=1e-9)
    assert np.all(np.abs(ests.mean(axis=0) - truth) <= 5 * np.sqrt(var_theory / trials))
    tot = ((ests - truth) ** 2).sum(axis=1)
    assert abs(tot.mean() - var_theory.sum()) <= 5 * tot.std(ddof=1) / math.sqrt(trials)
    est = rr.estimate(rr.perturb(items, rng=rng))
    assert isinstance(est, Estimate) and est.method == "empirical" and est.n == n and est.mean is None
    # std_error is eq. 22 at the clipped estimate
    np.testing.assert_allclose(est.std_error ** 2, l2_loss_rr(rr.epsilon_realized, k, n, np.clip(est.frequency, 0, 1)),
                               rtol=1e-9)


def test_rr_threshold_zero_fill_default_uniform_option_and_em():
    k, n = 30, 3000
    rng = np.random.default_rng(2)
    w = 1 / np.arange(1, k + 1)
    items = rng.choice(k, size=n, p=w / w.sum())
    rr = RandomizedResponse(domain=k, epsilon=1.5)
    rep = rr.perturb(items, rng=rng)
    emp = rr.estimate(rep, "empirical").frequency
    thr = rr.estimate(rep, "threshold").frequency
    z = stats.norm.ppf(1 - 0.05 / k)
    cut = z * math.sqrt(rr.variance_per_user(0.0) / n)
    # PIE Sec. 5.3: below the threshold -> 0, the others are the empirical values
    np.testing.assert_array_equal(thr, np.where(emp > cut, emp, 0.0))
    assert 0 < (thr == 0).sum() < k
    uni = rr.estimate(rep, "threshold", threshold_fill="uniform").frequency
    np.testing.assert_allclose(uni, significance_threshold(emp, n, rr.variance_per_user(0.0)))
    assert uni.sum() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="threshold_fill"):
        rr.estimate(rep, "threshold", threshold_fill="mean")
    em = rr.estimate(rep, "em")
    assert em.frequency.min() >= 0 and em.frequency.sum() == pytest.approx(1.0) and em.iterations == 0  # exact
    c = np.bincount(rep["y"], minlength=k)
    proj = project_simplex(emp)
    ll_proj = float(np.sum(c * np.log(np.maximum(proj @ rr.channel_matrix(), 1e-300))))
    assert em.log_likelihood >= ll_proj - 1e-9  # the MLE beats the projected empirical estimate
    with pytest.raises(ValueError, match=r"\['empirical', 'threshold', 'em'\]"):
        rr.estimate(rep, "bogus")


def test_rr_aggregates_merge_and_round_trip():
    rr = RandomizedResponse(domain=6, epsilon=1.0)
    rng = np.random.default_rng(7)
    x1, x2 = rng.integers(0, 6, 500), rng.integers(0, 6, 300)
    r1, r2 = rr.perturb(x1, rng=rng), rr.perturb(x2, rng=rng)
    both = Reports("rr", {"y": np.concatenate([r1["y"], r2["y"]])})
    merged = rr.aggregate(r1) + rr.aggregate(r2)
    assert merged == rr.aggregate(both) and merged.n == 800
    assert Aggregate.from_dict(merged.to_dict()) == merged
    for m in rr.methods:
        np.testing.assert_allclose(rr.estimate(merged, m).frequency, rr.estimate(both, m).frequency)


@pytest.mark.parametrize("columns, field", [
    ({"y": np.array([0.0, 1.0])}, "reports.y"),
    ({"y": np.array([0, 6])}, "reports.y"),
    ({"y": np.array([-1, 0])}, "reports.y"),
    ({"y": np.zeros((2, 2), dtype=np.int64)}, "reports.y"),
    ({"z": np.array([0, 1])}, "reports.y"),
])
def test_rr_aggregate_validates_untrusted_reports(columns, field):
    rr = RandomizedResponse(domain=6, epsilon=1.0)
    with pytest.raises(ValueError, match=field.replace(".", r"\.")):
        rr.aggregate(Reports("rr", columns))


def test_rr_input_checks():
    rr = RandomizedResponse(domain=5, epsilon=1.0)
    with pytest.raises(TypeError):
        rr.perturb([0, 1], rng=np.random)  # no global RNG
    with pytest.raises(ValueError):
        rr.perturb([0, 5], rng=np.random.default_rng(0))
    with pytest.raises(ValueError):
        RandomizedResponse(domain=5, epsilon=0.0)
    with pytest.raises(ValueError):
        RandomizedResponse(domain=["a", "a"], epsilon=1.0)
    with pytest.raises(ValueError, match="mu"):
        RandomizedResponse(domain=5, epsilon=1.0, mu=0.5)  # above the grid rounding of epsilon: epsilon would be exceeded
    slower = RandomizedResponse(domain=5, epsilon=1.0, mu=0.25)  # a smaller grid keep probability is more private
    assert slower.mu == 0.25 and slower.epsilon_realized == pytest.approx(math.log(0.25 * 4 / 0.75))
    with pytest.raises(ValueError, match="too small"):
        RandomizedResponse(domain=10**6, epsilon=1e-13)  # the keep probability rounds to <= 1/|X|
    with pytest.raises(ValueError, match="aggregate.mechanism"):
        rr.estimate(Aggregate("glh", 3, {"support": np.zeros(5, dtype=np.int64)}))
    with pytest.raises(ValueError, match="sum"):
        rr.estimate(Aggregate("rr", 3, {"y": np.array([1, 0, 0, 0, 0])}))


def test_rr_privacy_map_recomputes_from_the_numbers():
    rr = RandomizedResponse(domain=10500393, epsilon=1.0, n=1370637)
    pm = rr.privacy_map()
    assert pm["notion"] == "LDP+PIE"
    mu, nu = rr.mu, rr.nu_other
    assert pm["epsilon"] == pytest.approx(math.log(mu / nu), rel=1e-12) and pm["epsilon"] <= 1.0
    # Fig. 4: epsilon = 1 -> alpha = 3.3e-6 bits (Thm. 4.2)
    assert float(f"{pm['alpha_bits']:.2g}") == 3.3e-6
    assert pm["alpha_bits"] == pytest.approx(alpha_rr(pm["epsilon"], 1370637, 10500393).alpha_bits, rel=1e-6)
    assert pm["bayes_error_lower_bound"] == pytest.approx(1 - (pm["alpha_bits"] + 1) / math.log2(1370637))
    assert RandomizedResponse(domain=4, epsilon=1.0).privacy_map()["notion"] == "LDP"


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
    glh = GeneralizedLocalHashing(domain=50, epsilon=1.2, g=8)
    rng = np.random.default_rng(3)
    n = 40000
    items = rng.integers(0, 50, size=n)
    rep = glh.perturb(items, rng=rng)
    assert set(rep.columns) == {"a", "b", "y"} and len(rep) == n
    assert rep["a"].min() >= 1 and rep["a"].max() < HASH_PRIME and rep["y"].max() < 8
    match = hash_values(rep["a"], rep["b"], items, 8) == rep["y"]
    assert abs(match.mean() - glh.mu) <= 5 * math.sqrt(glh.mu * (1 - glh.mu) / n)  # Pr[y = h(x)] = mu
    assert np.unique(rep["a"]).size > n * 0.99
    assert not hasattr(glh, "channel_matrix")  # the channel depends on each user's hash


def test_glh_seed_and_coin_streams_are_independent():
    glh = GeneralizedLocalHashing(domain=20, epsilon=1.0, g=4)
    items = np.arange(20).repeat(50)
    fixed = [glh.perturb_streams(items, seed_rng=np.random.default_rng(1), coin_rng=np.random.default_rng(c))
             for c in (2, 3)]
    # the published seed depends on the seed stream only; the coins do change the reports
    np.testing.assert_array_equal(fixed[0]["a"], fixed[1]["a"])
    np.testing.assert_array_equal(fixed[0]["b"], fixed[1]["b"])
    assert not np.array_equal(fixed[0]["y"], fixed[1]["y"])
    # perturb(rng) = perturb_streams with rng.spawn(2): the seeds never come from the coin stream
    rep = glh.perturb(items, rng=np.random.default_rng(9))
    seed_rng, coin_rng = np.random.default_rng(9).spawn(2)
    again = glh.perturb_streams(items, seed_rng=seed_rng, coin_rng=coin_rng)
    for c in ("a", "b", "y"):
        np.testing.assert_array_equal(rep[c], again[c])
    a_from_parent = np.random.default_rng(9).integers(1, HASH_PRIME, size=items.size, dtype=np.int64)
    assert not np.array_equal(rep["a"], a_from_parent)


def test_split_streams_fallback_without_seed_sequence():
    # a legacy-seeded MT19937 has no SeedSequence: Generator.spawn raises, the fallback keys new children
    legacy = np.random.Generator(np.random.RandomState(5)._bit_generator)
    with pytest.raises(TypeError):
        legacy.spawn(2)
    s, c = split_streams(legacy)
    assert type(s.bit_generator) is np.random.MT19937 and type(c.bit_generator) is np.random.MT19937
    assert not np.array_equal(s.integers(0, 2**62, size=4), c.integers(0, 2**62, size=4))
    glh = GeneralizedLocalHashing(domain=10, epsilon=1.0, g=4)
    rep = glh.perturb(np.arange(10), rng=np.random.Generator(np.random.RandomState(5)._bit_generator))
    assert len(rep) == 10


def test_glh_estimate_unbiased_with_exact_variance():
    k, g, n, eps, trials = 12, 6, 1500, 2.0, 150
    rng = np.random.default_rng(9)
    items = rng.integers(0, k, size=n)
    truth = np.bincount(items, minlength=k) / n
    glh = GeneralizedLocalHashing(domain=k, epsilon=eps, g=g)
    ests = np.array([glh.estimate(glh.perturb(items, rng=rng)).frequency for _ in range(trials)])
    var = glh.variance_per_user(truth) / n
    assert glh.kappa * g == pytest.approx(1.0, rel=1e-8)
    np.testing.assert_allclose(var, l2_loss_glh(glh.epsilon_realized, g, n, truth), rtol=1e-6)  # eq. 23
    assert np.all(np.abs(ests.mean(axis=0) - truth) <= 5 * np.sqrt(var / trials))
    tot = ((ests - truth) ** 2).sum(axis=1)
    assert abs(tot.mean() - var.sum()) <= 5 * tot.std(ddof=1) / math.sqrt(trials)


def test_glh_support_counts_chunking_merge_and_estimators():
    glh = GeneralizedLocalHashing(domain=40, epsilon=3.0, g=64)
    rng = np.random.default_rng(4)
    items = rng.integers(0, 10, size=500)
    rep = glh.perturb(items, rng=rng)
    agg = glh.aggregate(rep)
    np.testing.assert_array_equal(agg["support"], glh.aggregate(rep, chunk_entries=7)["support"])
    brute = np.array([(hash_values(rep["a"], rep["b"], x, 64) == rep["y"]).sum() for x in range(40)])
    np.testing.assert_array_equal(agg["support"], brute)
    half = {c: v[:200] for c, v in rep.columns.items()}, {c: v[200:] for c, v in rep.columns.items()}
    merged = glh.aggregate(Reports("glh", half[0])) + glh.aggregate(Reports("glh", half[1]))
    assert merged == agg and Aggregate.from_dict(merged.to_dict()) == agg
    for m in ("empirical", "threshold"):
        np.testing.assert_allclose(glh.estimate(merged, m).frequency, glh.estimate(rep, m).frequency)
    em = glh.estimate(merged, "em")  # EM on the support counts: works on merged aggregates
    np.testing.assert_allclose(em.frequency, glh.estimate(rep, "em").frequency)
    assert em.frequency.min() >= 0 and em.frequency.sum() == pytest.approx(1.0)
    exact_em = glh.estimate_em_reports(rep)  # the per-report MLE
    assert exact_em.frequency.min() >= 0 and exact_em.frequency.sum() == pytest.approx(1.0)
    hit = hash_values(rep["a"][:, None], rep["b"][:, None], np.arange(40)[None, :], 64) == rep["y"][:, None]
    lik = np.where(hit, glh.mu, glh.nu_other)

    def loglik(p):
        return float(np.sum(np.log(np.maximum(lik @ p, 1e-300))))

    proj = project_simplex(glh.estimate(rep).frequency)
    assert exact_em.log_likelihood >= loglik(proj) - 1e-9
    assert exact_em.log_likelihood >= loglik(em.frequency) - 1e-9  # the MLE beats the composite EM


@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
@pytest.mark.parametrize("make", [lambda: RandomizedResponse(domain=300, epsilon=1.5),
                                  lambda: GeneralizedLocalHashing(domain=300, epsilon=2.0, g=64)])
def test_em_on_groups_of_equal_counts_is_the_full_space_mle(make):
    from ldpplan.mechanisms._estimators import RRChannel, em_simplex, em_warm_start

    mech = make()
    rng = np.random.default_rng(3)
    w = 1 / np.arange(1, 301)
    agg = mech.aggregate(mech.perturb(rng.choice(300, 3000, p=w / w.sum()), rng=rng))
    counts = agg["y"] if "y" in agg.counts else agg["support"]
    emp = mech.estimate(agg).frequency
    init = em_warm_start(significance_threshold(emp, agg.n, mech.variance_per_user(0.0)))
    full = em_simplex(RRChannel(mu=mech.mu, nu=mech.nu, k=300), counts.astype(float), init=init, tol=1e-13,
                      accelerate=True)
    grouped = mech.estimate(agg, "em", tol=1e-13)
    np.testing.assert_allclose(grouped.frequency, full.frequency, atol=1e-6)
    assert grouped.log_likelihood == pytest.approx(full.log_likelihood, abs=1e-6)
    # items with equal counts get equal estimates
    for c in np.unique(counts)[:5]:
        assert np.ptp(grouped.frequency[counts == c]) == 0


def test_glh_support_em_fixed_point_is_the_empirical_estimate_inside_the_simplex():
    glh = GeneralizedLocalHashing(domain=5, epsilon=4.0, g=16)
    rng = np.random.default_rng(12)
    rep = glh.perturb(rng.choice(5, size=20000, p=[0.3, 0.25, 0.2, 0.15, 0.1]), rng=rng)
    emp = glh.estimate(rep).frequency
    em = glh.estimate(rep, "em", tol=1e-13).frequency
    assert emp.min() > 0
    # stationary point of sum_x c(x) log(nu + (mu - nu) p(x)) on the simplex, with s = nu/(mu - nu):
    # p(x) + s = (emp(x) + s)(1 + |X| s)/(sum(emp) + |X| s)
    s = glh.nu / (glh.mu - glh.nu)
    np.testing.assert_allclose(em + s, (emp + s) * (1 + 5 * s) / (emp.sum() + 5 * s), rtol=1e-6)


@pytest.mark.parametrize("column, value, field", [
    ("a", 0, "reports.a"), ("a", HASH_PRIME, "reports.a"), ("b", -1, "reports.b"), ("y", 4, "reports.y"),
])
def test_glh_aggregate_validates_untrusted_reports(column, value, field):
    glh = GeneralizedLocalHashing(domain=10, epsilon=1.0, g=4)
    cols = {"a": np.array([1, 2, 3]), "b": np.array([0, 1, 2]), "y": np.array([0, 1, 3])}
    cols[column] = cols[column].copy()
    cols[column][1] = value
    with pytest.raises(ValueError, match=field.replace(".", r"\.")):
        glh.aggregate(Reports("glh", cols))
    with pytest.raises(ValueError, match="reports"):
        glh.aggregate(Reports("rr", {"y": np.array([0, 1])}))
    with pytest.raises(ValueError):  # g up to the large hash prime 2^61 - 1 (issue 27), not beyond
        GeneralizedLocalHashing(domain=10, epsilon=1.0, g=2**61)


@pytest.mark.parametrize("k, g, n", [(5000, 2**24, 300), (50, 2**30, 1000), (3000, 2**20, 200)])
def test_support_counts_by_hash_inversion_equal_brute_force(k, g, n):
    from ldpplan.mechanisms.pie import support_counts

    rng = np.random.default_rng(k)
    a, b = rng.integers(1, HASH_PRIME, n), rng.integers(0, HASH_PRIME, n)
    a[0], b[0] = HASH_PRIME - 1, HASH_PRIME - 1  # extremes of the seed range
    y = hash_values(a, b, rng.integers(0, k, n), g)
    y[::3] = rng.integers(0, g, y[::3].size)  # reports whose value was replaced
    brute = np.array([(hash_values(a, b, x, g) == y).sum() for x in range(k)])
    np.testing.assert_array_equal(support_counts(a, b, y, k, g), brute)
    np.testing.assert_array_equal(support_counts(a, b, y, k, g, chunk_entries=1000), brute)


@pytest.mark.parametrize("g", [2, 3, 7, 64, 1000, 65537, 2**30 + 3, HASH_PRIME - 1, HASH_PRIME])
def test_division_magic_is_exact_at_the_edges(g):
    from ldpplan.mechanisms.pie._channel import _division_magic

    magic, shift = _division_magic(g)
    m = np.arange(0, HASH_PRIME // g + 1, max(1, (HASH_PRIME // g) // 5000), dtype=np.int64) * g
    r = np.concatenate([np.arange(5000), HASH_PRIME - np.arange(5000), m, m - 1, m + 1,
                        np.random.default_rng(g % 1000).integers(0, HASH_PRIME + 1, 50000)])
    r = r[(r >= 0) & (r <= HASH_PRIME)].astype(np.int64)
    np.testing.assert_array_equal((r * magic) >> shift, r // g)


@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
@pytest.mark.parametrize("k, g", [(50, 7), (300, 64), (40, HASH_PRIME - 1), (1000, 2**20)])
def test_support_counts_direct_and_inversion_agree_with_brute_force(k, g):
    from ldpplan.mechanisms.pie import support_counts

    rng = np.random.default_rng(k + g % 97)
    n = 400
    a, b = rng.integers(1, HASH_PRIME, n), rng.integers(0, HASH_PRIME, n)
    a[:4], b[:4] = [1, HASH_PRIME - 1, 2, HASH_PRIME - 1], [0, HASH_PRIME - 1, HASH_PRIME - 2, 1]  # fold edges
    y = rng.integers(0, g, n)
    y[:4] = hash_values(a[:4], b[:4], np.arange(4), g)  # make the edge users hit
    brute = np.array([(hash_values(a, b, x, g) == y).sum() for x in range(k)])
    for method in ("direct", "inversion") if g >= 2**20 else ("direct",):  # inversion: ceil(P/g) per user
        for chunk in (None, 5, 997) if method == "direct" else (None, 997):
            np.testing.assert_array_equal(support_counts(a, b, y, k, g, chunk, method=method), brute)
    with pytest.raises(ValueError, match="method"):
        support_counts(a, b, y, k, g, method="numba")

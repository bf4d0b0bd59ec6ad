"""The Hadamard response family (Acharya, Sun & Zhang, AISTATS 2019): closed forms, exact channel, estimator,
agreement with pure-ldp's implementation, tampering.

The cross-family suites (conformance, plan gate, tamper, aggregate integrity, intervals, predicted vs
simulated) run this family as registered; this file pins what is particular to it.
"""
from __future__ import annotations

import copy
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.linalg import hadamard

import ldpplan
from ldpplan import mechanisms, planner
from ldpplan.mechanisms import PlanError
from ldpplan.mechanisms.hadamard import HadamardResponse
from ldpplan.planner.errors import SpecError
from ldpplan.solvers import hadamard as hr

GRID = 2**48


def _plan(epsilon=1.0, domain=6, **extra):
    return planner.make_plan({"mechanism": "hr", "epsilon": epsilon, "domain": domain, **extra})


# --------------------------------------------------------------------------- closed forms
def test_output_size_is_the_smallest_power_of_two_above_k():
    for k in range(2, 3000):
        K = hr.output_size(k)
        assert K & (K - 1) == 0 and K > k >= K // 2, k
        assert hr.output_bits(k) == math.ceil(math.log2(k + 1))
    assert hr.output_size(100) == 128 and hr.output_size(127) == 128 and hr.output_size(128) == 256


@pytest.mark.parametrize("K", [4, 8, 16, 64])
def test_sets_are_the_rows_of_the_sylvester_matrix(K):
    # C_x = {y : H_K[x + 1, y] = +1} (scipy's Sylvester construction), |C_x| = K/2, |C_x n C_x'| = K/4
    H = hadamard(K)
    x, y = np.meshgrid(np.arange(K - 1), np.arange(K), indexing="ij")
    inside = hr.in_set(x, y)
    np.testing.assert_array_equal(inside, H[1:, :] == 1)
    assert np.all(inside.sum(axis=1) == K // 2)
    overlap = inside.astype(int) @ inside.T.astype(int)
    assert np.all(overlap[~np.eye(K - 1, dtype=bool)] == K // 4) and np.all(np.diag(overlap) == K // 2)


def test_fast_walsh_hadamard_set_counts_equal_brute_force():
    rng = np.random.default_rng(1)
    for k in (2, 3, 7, 8, 100):
        K = hr.output_size(k)
        counts = rng.integers(0, 1000, size=K)
        brute = np.array([counts[hr.in_set(x, np.arange(K))].sum() for x in range(k)])
        np.testing.assert_array_equal(hr.set_counts(counts, k), brute)
        np.testing.assert_array_equal(hr.fwht(counts), hadamard(K) @ counts)
        from ldpplan.mechanisms.hadamard._channel import set_counts

        np.testing.assert_array_equal(set_counts(counts, k), brute)


@pytest.mark.parametrize("epsilon", [1e-6, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 40.0, 100.0])
def test_grid_probability_ratio_is_e_to_the_epsilon_from_below(epsilon):
    from ldpplan.mechanisms.hadamard._channel import keep_probability

    p = hr.keep_probability(epsilon)
    assert p == keep_probability(epsilon)  # the runtime derives the same grid value on its own
    assert (Fraction(p) * GRID).denominator == 1 and 0.5 < p < 1
    eps = hr.exact_epsilon(p)
    assert eps <= Fraction(epsilon) or float(eps) <= epsilon
    # rounding p down by less than one grid step lowers ln(p/(1-p)) by less than 2^-48/(p(1-p))
    if epsilon < 33:
        assert epsilon - float(eps) <= 1.01 * 2**-48 / (p * (1 - p)) + 1e-15
    else:  # the grid bounds the channel: p = 1 - 2^-48
        assert p == 1 - 2**-48


@pytest.mark.parametrize("k", [2, 3, 5, 8])
def test_exact_channel_on_tiny_domains(k):
    p = hr.keep_probability(1.0)
    mech = HadamardResponse(epsilon=1.0, domain=k)
    q = mech.channel_matrix()
    np.testing.assert_array_equal(q, hr.channel_matrix(k, p))
    K = hr.output_size(k)
    assert q.shape == (k, K)
    exact = [[Fraction(2) * (Fraction(p) if hr.in_set(x, y) else 1 - Fraction(p)) / K for y in range(K)]
             for x in range(k)]
    assert all(sum(row) == 1 for row in exact)
    ratios = {exact[a][y] / exact[b][y] for a in range(k) for b in range(k) for y in range(K)}
    assert max(ratios) == Fraction(p) / (1 - Fraction(p))  # attained: C_a \ C_b is never empty
    assert mech.privacy_map()["epsilon"] == pytest.approx(float(hr.exact_epsilon(p)), rel=1e-15)


@pytest.mark.parametrize("bit_generator", [np.random.PCG64, np.random.MT19937, np.random.Philox, np.random.SFC64])
def test_perturb_samples_the_channel_for_every_generator(bit_generator):
    mech = HadamardResponse(epsilon=1.0, domain=5)
    q = mech.channel_matrix()
    n = 40_000
    rng = np.random.Generator(bit_generator(7))
    for x in range(5):
        y = mech.perturb(np.full(n, x), rng=rng)["y"]
        freq = np.bincount(y, minlength=mech.output_size) / n
        se = np.sqrt(q[x] * (1 - q[x]) / n)
        assert np.all(np.abs(freq - q[x]) <= 5 * se), (x, freq, q[x])


# --------------------------------------------------------------------------- the estimator
def test_unbiased_with_the_exact_variance():
    mech = HadamardResponse(epsilon=1.0, domain=6)
    counts = np.array([900, 500, 300, 200, 100, 0])
    data = np.repeat(np.arange(6), counts)
    n, runs = data.size, 600
    truth = counts / n
    ests = np.array([mech.estimate(mech.aggregate(mech.perturb(data, rng=np.random.default_rng(s)))).frequency
                     for s in np.random.SeedSequence(3).spawn(runs)])
    c0, c1 = mech.variance_coefficients()
    var = (c0 + c1 * truth) / n  # exact for fixed users' data
    assert np.all(np.abs(ests.mean(axis=0) - truth) <= 5 * np.sqrt(var / runs))
    # sample variance of runs normal draws: relative sd sqrt(2/(runs-1)) ~ 0.058
    np.testing.assert_allclose(ests.var(axis=0, ddof=1), var, rtol=5 * math.sqrt(2 / (runs - 1)))
    est = mech.estimate(mech.aggregate(mech.perturb(data, rng=np.random.default_rng(1))))
    assert est.variance is not None and est.variance.source
    np.testing.assert_allclose(est.std_error, np.sqrt((c0 + c1 * np.clip(est.frequency, 0, 1)) / n))
    projected = mech.estimate(mech.aggregate(mech.perturb(data, rng=np.random.default_rng(1))), "projected")
    assert projected.frequency.sum() == pytest.approx(1.0) and np.all(projected.frequency >= 0)


def test_predicted_total_error_is_the_closed_form():
    plan = _plan(epsilon=1.5, domain=40, users=1000)
    e = math.exp(1.5)
    p = plan["params"]["keep_probability"]
    closed = ((40 - 1) * (e + 1) ** 2 + 4 * e) / (1000 * (e - 1) ** 2)  # at p = e^eps/(1+e^eps)
    assert plan["predicted"]["l2_total"]["value"] == pytest.approx(closed, rel=1e-12)
    assert plan["predicted"]["l2_total"]["value"] == pytest.approx(hr.total_l2(40, p, 1000), rel=1e-15)
    assert plan["predicted"]["report_bits"]["value"] == 6  # K = 64
    assert plan["baselines"][0]["predicted"]["l2_total"]["value"] > plan["predicted"]["l2_total"]["value"]


def test_aggregate_counts_must_sum_to_n():
    mech = HadamardResponse(domain=6, epsilon=1.0)
    assert mech.privacy_map() == {"notion": "LDP", "epsilon": mech.epsilon_realized}
    assert type(mech.privacy_map()["epsilon"]) is float
    agg = mech.aggregate(mech.perturb(np.arange(6), rng=np.random.default_rng(0)))
    exact = mech.estimate(agg, "projected", tol=0.0, max_iter=1)  # the API's options: accepted, unused
    assert exact.iterations is None
    doc = agg.to_dict()
    doc["counts"]["y"][0] += 1
    with pytest.raises(ValueError, match="sum to n"):
        mechanisms.Aggregate.from_dict(doc)


# --------------------------------------------------------------------------- pure-ldp, the peer implementation
def _pure_ldp():
    return pytest.importorskip("pure_ldp.frequency_oracles.hadamard_response",
                               reason="pure-ldp (the `bench` extra) is the peer implementation")


@pytest.mark.slow  # importing pure-ldp takes seconds
@pytest.mark.parametrize("k,epsilon", [(6, 0.5), (40, 1.0), (200, 1.0)])
def test_estimates_equal_pure_ldps_on_the_same_reports(k, epsilon):
    hrmod = _pure_ldp()
    mech = HadamardResponse(epsilon=epsilon, domain=k)
    rng = np.random.default_rng(4)
    data = rng.integers(0, k, size=3000)
    reports = mech.perturb(data, rng=rng)
    server = hrmod.HadamardResponseServer(epsilon, k, index_mapper=lambda x: x)
    server.aggregate_all(reports["y"].tolist())
    theirs = np.array([server.estimate(x, suppress_warnings=True) for x in range(k)]) / data.size
    ours = mech.estimate(mech.aggregate(reports)).frequency
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


@pytest.mark.slow
def test_pure_ldps_client_samples_our_channel():
    import random
    import warnings

    hrmod = _pure_ldp()
    k, n = 5, 30_000
    mech = HadamardResponse(epsilon=0.8, domain=k)
    client = hrmod.HadamardResponseClient(0.8, k, None, index_mapper=lambda x: x)
    random.seed(5)
    np.random.seed(5)
    q = mech.channel_matrix()
    for x in (0, 3):
        with warnings.catch_warnings():  # pure-ldp passes a float to random.randint (deprecated since 3.10)
            warnings.simplefilter("ignore", DeprecationWarning)
            y = np.array([client.privatise(x) for _ in range(n)])
        freq = np.bincount(y, minlength=mech.output_size) / n
        assert np.all(np.abs(freq - q[x]) <= 5 * np.sqrt(q[x] * (1 - q[x]) / n))


# --------------------------------------------------------------------------- plans: verify and load refuse edits
def test_plan_numbers_and_guarantee():
    plan = _plan(epsilon=2.0, domain=["a", "b", "c"])
    p = plan["params"]
    assert plan["mechanism"] == "hr" and p["output_size"] == 4 and p["keep_probability"] == hr.keep_probability(2.0)
    assert plan["guarantee"]["notion"] == "LDP"
    exact = hr.exact_epsilon(p["keep_probability"])
    g = plan["guarantee"]["epsilon"]
    assert Fraction(g) >= Fraction(exact) and Fraction(math.nextafter(g, 0)) < Fraction(exact)  # rounded up, tight
    assert ldpplan.load(plan).labels == ["a", "b", "c"]


@pytest.mark.parametrize("edit", [
    ("params", "keep_probability", lambda v: v + 2**-48),
    ("params", "keep_probability", lambda v: v - 2**-48),
    ("params", "output_size", lambda v: v * 2),
    ("params", "epsilon", lambda v: v * 2),
    ("guarantee", "epsilon", lambda v: math.nextafter(v, 0)),
    ("guarantee", "epsilon", lambda v: v / 2),
    ("spec", "epsilon", lambda v: v / 2),
    ("spec", "domain", lambda v: v + 1),
])
def test_verify_and_load_refuse_edited_plans(edit):
    block, key, change = edit
    plan = _plan(epsilon=1.0, domain=6)
    bad = copy.deepcopy(plan)
    bad[block][key] = change(bad[block][key])
    assert not planner.verify_plan(bad).holds
    with pytest.raises(PlanError):
        ldpplan.load(bad)


def test_small_epsilon_and_bad_domains_are_spec_errors():
    with pytest.raises(SpecError, match="grid"):
        _plan(epsilon=1e-15)
    for domain in (1, 2**24 + 1, ["a", "a"], "ten"):
        with pytest.raises(SpecError, match="domain"):
            _plan(domain=domain)
    with pytest.raises(SpecError, match="epsilon"):
        _plan(epsilon="1.0")


def test_runtime_constructor_is_keyword_only_and_checks_p():
    with pytest.raises(TypeError):
        HadamardResponse(6, 1.0)  # type: ignore[misc]
    with pytest.raises(ValueError, match="keep_probability"):
        HadamardResponse(epsilon=1.0, domain=6, keep_probability=hr.keep_probability(1.0) + 2**-48)
    with pytest.raises(ValueError, match="domain"):
        HadamardResponse(epsilon=1.0, domain=1)


def test_audit_pair_is_the_tight_event():
    from ldpplan.planner.families import family_for

    plan = _plan(epsilon=1.0, domain=6)
    (pair,) = family_for("hadamard").audit_pairs(plan)
    (test,) = pair.tests
    p = plan["params"]["keep_probability"]
    assert (test.p_first, test.p_second) == (p / 2, (1 - p) / 2)
    K = plan["params"]["output_size"]
    event = test.occurs({"y": np.arange(K)})
    q = HadamardResponse(epsilon=1.0, domain=6).channel_matrix()
    assert event.sum() == K // 4
    assert q[0, event].sum() == pytest.approx(p / 2) and q[1, event].sum() == pytest.approx((1 - p) / 2)


@pytest.mark.slow  # the default trials: about 2 s (hadamard-gss) and 7 s (k = 10,000, every input screened)
@pytest.mark.parametrize("name", ["hadamard-gss", "hadamard-synthetic"])
def test_audit_at_default_trials_is_consistent_and_reaches_80_percent_of_the_claim(name):
    from ldpplan.planner.audit import audit

    result = audit(planner.make_plan(planner.example_spec(name)), rng=np.random.default_rng(18))
    assert result.consistent, result.table()
    assert result.epsilon_lower_bound >= 0.8 * result.epsilon_claimed, result.table()


def test_runtime_and_solver_derive_the_same_grid_probability():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from ldpplan.mechanisms.hadamard._channel import keep_probability

    @settings(derandomize=True, max_examples=300, deadline=None)
    @given(st.floats(min_value=2**-40, max_value=100.0, allow_nan=False))
    def prop(epsilon):
        p = hr.keep_probability(epsilon)
        assert p == keep_probability(epsilon)
        # the grid value is the largest multiple of 2^-48 whose ratio stays within e^epsilon
        assert float(hr.exact_epsilon(p)) <= epsilon
        up = p + 2**-48
        if up < 1:
            assert hr.exact_epsilon(up) > Fraction(epsilon) or float(hr.exact_epsilon(up)) > epsilon

    prop()

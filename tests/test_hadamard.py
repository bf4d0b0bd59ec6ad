"""The Hadamard response family (Acharya, Sun & Zhang, AISTATS 2019): closed forms, exact channel, estimator,
agreement with pure-ldp's implementation, tampering.

The cross-family suites (conformance, plan gate, tamper, aggregate integrity, intervals, predicted vs
simulated) run this family as registered; this file pins what is particular to it.
"""
from __future__ import annotations

import copy
import math
from decimal import Decimal
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
    # one block: C_x = {y : H_K[x + 1, y] = +1} (scipy's Sylvester construction), |C_x| = K/2, overlaps K/4
    H = hadamard(K)
    x, y = np.meshgrid(np.arange(K - 1), np.arange(K), indexing="ij")
    inside = hr.in_set(x, y, K)
    np.testing.assert_array_equal(inside, H[1:, :] == 1)
    assert np.all(inside.sum(axis=1) == K // 2)
    overlap = inside.astype(int) @ inside.T.astype(int)
    assert np.all(overlap[~np.eye(K - 1, dtype=bool)] == K // 4) and np.all(np.diag(overlap) == K // 2)


@pytest.mark.parametrize("k,blocks", [(10, 2), (10, 4), (100, 8), (5, 8)])
def test_block_layout(k, blocks):
    b = hr.block_size(k, blocks)
    assert b & (b - 1) == 0 and blocks * (b - 1) >= k and (b == 2 or blocks * (b // 2 - 1) < k)
    K = hr.output_size(k, blocks)
    inside = hr.in_set(np.arange(k)[:, None], np.arange(K)[None, :], b)
    assert np.all(inside.sum(axis=1) == b // 2)
    for x in range(k):  # C_x is row t of H_b inside x's block
        j, t = divmod(x, b - 1)
        np.testing.assert_array_equal(inside[x, j * b:(j + 1) * b], hadamard(b)[t + 1] == 1)
        assert not inside[x, :j * b].any() and not inside[x, (j + 1) * b:].any()


def test_fast_walsh_hadamard_supports_equal_brute_force():
    from ldpplan.mechanisms.hadamard._channel import supports

    rng = np.random.default_rng(1)
    for k, B in ((2, 1), (3, 1), (7, 1), (8, 1), (100, 1), (10, 2), (100, 8), (5, 8)):
        b = hr.block_size(k, B)
        K = B * b
        counts = rng.integers(0, 1000, size=K)
        y = np.arange(K)
        brute = np.array([counts[hr.in_set(x, y, b)].sum() - counts[(y // b == x // (b - 1)) & ~hr.in_set(x, y, b)].sum()
                          for x in range(k)])
        np.testing.assert_array_equal(hr.supports(counts, k, B), brute)
        np.testing.assert_array_equal(supports(counts, k, B, b), brute)
        np.testing.assert_array_equal(hr.fwht(counts[:b]), hadamard(b) @ counts[:b])


@pytest.mark.parametrize("epsilon", [1e-6, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 40.0, 100.0])
def test_grid_probability_ratio_is_e_to_the_epsilon_from_below(epsilon):
    from ldpplan.mechanisms.hadamard._channel import keep_probability

    p = hr.keep_probability(epsilon)
    assert p == keep_probability(epsilon, 1)  # the runtime derives the same grid value on its own
    assert (Fraction(p) * GRID).denominator == 1 and 0.5 < p < 1
    eps = hr.exact_epsilon(p)
    assert eps <= Fraction(epsilon) or float(eps) <= epsilon
    # rounding p down by less than one grid step lowers ln(p/(1-p)) by less than 2^-48/(p(1-p))
    if epsilon < 33:
        assert epsilon - float(eps) <= 1.01 * 2**-48 / (p * (1 - p)) + 1e-15
    else:  # the grid bounds the channel: p = 1 - 2^-48
        assert p == 1 - 2**-48


@pytest.mark.parametrize("k,blocks", [(2, 1), (3, 1), (5, 1), (8, 1), (6, 2), (7, 4), (3, 4)])
def test_exact_channel_on_tiny_domains(k, blocks):
    p = hr.keep_probability(1.0, blocks)
    mech = HadamardResponse(domain=k, epsilon=1.0, blocks=blocks)
    q = mech.channel_matrix()
    np.testing.assert_array_equal(q, hr.channel_matrix(k, p, blocks))
    b = hr.block_size(k, blocks)
    K, s = blocks * b, b // 2
    assert q.shape == (k, K)
    exact = [[Fraction(p) / s if hr.in_set(x, y, b) else (1 - Fraction(p)) / (K - s) for y in range(K)]
             for x in range(k)]
    assert all(sum(row) == 1 for row in exact)
    ratios = {exact[a][y] / exact[c][y] for a in range(k) for c in range(k) for y in range(K)}
    assert max(ratios) == Fraction(p) * (2 * blocks - 1) / (1 - Fraction(p))  # attained: C_a \ C_c is never empty
    assert math.exp(float(hr.exact_epsilon(p, blocks))) <= math.e * (1 + 1e-15)
    assert mech.privacy_map()["epsilon"] == pytest.approx(float(hr.exact_epsilon(p, blocks)), rel=1e-15)


@pytest.mark.parametrize("blocks", [1, 4])
@pytest.mark.parametrize("bit_generator", [np.random.PCG64, np.random.MT19937, np.random.Philox, np.random.SFC64])
def test_perturb_samples_the_channel_for_every_generator(bit_generator, blocks):
    mech = HadamardResponse(domain=5, epsilon=1.5, blocks=blocks)
    q = mech.channel_matrix()
    n = 40_000
    rng = np.random.Generator(bit_generator(7))
    for x in range(5):
        y = mech.perturb(np.full(n, x), rng=rng)["y"]
        freq = np.bincount(y, minlength=mech.output_size) / n
        se = np.sqrt(q[x] * (1 - q[x]) / n)
        assert np.all(np.abs(freq - q[x]) <= 5 * se), (x, freq, q[x])


# --------------------------------------------------------------------------- the estimator
@pytest.mark.parametrize("blocks", [1, 2, 4])
def test_unbiased_with_the_exact_variance(blocks):
    mech = HadamardResponse(domain=6, epsilon=2.0, blocks=blocks)
    counts = np.array([900, 500, 300, 200, 100, 0])
    data = np.repeat(np.arange(6), counts)
    n, runs = data.size, 600
    truth = counts / n
    ests = np.array([mech.estimate(mech.aggregate(mech.perturb(data, rng=np.random.default_rng(s)))).frequency
                     for s in np.random.SeedSequence(3).spawn(runs)])
    c0, cb, c1 = mech.variance_coefficients()
    block_of = np.arange(6) // (mech.block_size - 1)
    var = (c0 + cb * np.bincount(block_of, weights=truth)[block_of] + c1 * truth) / n  # exact for fixed data
    np.testing.assert_allclose(mech.variance_per_user(truth) / n, var, rtol=1e-12)
    assert np.all(np.abs(ests.mean(axis=0) - truth) <= 5 * np.sqrt(var / runs))
    # sample variance of runs normal draws: relative sd sqrt(2/(runs-1)) ~ 0.058
    np.testing.assert_allclose(ests.var(axis=0, ddof=1), var, rtol=5 * math.sqrt(2 / (runs - 1)))
    est = mech.estimate(mech.aggregate(mech.perturb(data, rng=np.random.default_rng(1))))
    assert est.variance is not None and est.variance.source
    if blocks == 1:  # the block mass is 1: the standard error is exact at the estimate
        np.testing.assert_allclose(est.std_error, np.sqrt((c0 + cb + c1 * np.clip(est.frequency, 0, 1)) / n))
    projected = mech.estimate(mech.aggregate(mech.perturb(data, rng=np.random.default_rng(1))), "projected")
    assert projected.frequency.sum() == pytest.approx(1.0) and np.all(projected.frequency >= 0)


def test_predicted_total_error_is_the_closed_form():
    plan = _plan(epsilon=1.5, domain=40, users=1000, blocks=1)
    e = math.exp(1.5)
    closed = ((40 - 1) * (e + 1) ** 2 + 4 * e) / (1000 * (e - 1) ** 2)  # B = 1 at p = e^eps/(1+e^eps)
    assert plan["predicted"]["l2_total"]["value"] == pytest.approx(closed, rel=1e-12)
    assert plan["predicted"]["report_bits"]["value"] == 6  # K = 64
    assert plan["baselines"][0]["predicted"]["l2_total"]["value"] > plan["predicted"]["l2_total"]["value"]


@pytest.mark.parametrize("epsilon,k", [(1.0, 100), (2.0, 100), (4.0, 1000), (8.0, 1000)])
def test_auto_blocks_minimise_the_worst_case_error(epsilon, k):
    plan = _plan(epsilon=epsilon, domain=k, users=1000)
    chosen = plan["predicted"]["l2_total"]["value"]
    B = plan["params"]["blocks"]
    for other in hr.block_candidates(k):
        assert hr.solve_hadamard(epsilon, k, other).worst_l2(1000) >= chosen * (1 - 1e-12), other
    assert B == hr.solve_hadamard(epsilon, k).blocks
    assert plan["params"]["output_size"] <= 4 * k  # log2 K <= log2 k + 2 bits
    for base in plan["baselines"][1:]:
        assert base["predicted"]["l2_total"]["value"] >= chosen


def test_predicted_worst_case_is_attained_with_blocks():
    # all users in the first full block: the worst case the plan states (B > 1)
    plan = _plan(epsilon=4.0, domain=200)
    mech = ldpplan.load(plan)
    b, n = mech.block_size, 3000
    assert mech.blocks > 1
    data = np.random.default_rng(9).integers(0, b - 1, size=n)
    truth = np.bincount(data, minlength=200) / n
    losses = [float(np.sum((mech.estimate(mech.aggregate(mech.perturb(data, rng=np.random.default_rng(c)))).frequency
                            - truth) ** 2)) for c in np.random.SeedSequence(10).spawn(200)]
    predicted = plan["predicted"]["l2_total_times_n"]["value"] / n
    se = np.std(losses, ddof=1) / math.sqrt(len(losses))
    assert abs(np.mean(losses) - predicted) <= 4 * se and 4 * se < 0.1 * predicted


def test_aggregate_counts_must_sum_to_n():
    mech = HadamardResponse(domain=6, epsilon=1.0)
    assert mech.privacy_map() == {"notion": "LDP", "epsilon": mech.epsilon_realized}
    assert type(mech.privacy_map()["epsilon"]) is float
    agg = mech.aggregate(mech.perturb(np.arange(6), rng=np.random.default_rng(0)))
    exact = mech.estimate(agg, "projected", tol=0.0, max_iter=1)  # the API's options: accepted, unused
    assert exact.iterations is None
    with pytest.raises(ValueError, match="tol"):
        mech.estimate(agg, tol=-1.0)
    with pytest.raises(ValueError, match="max_iter"):
        mech.estimate(agg, max_iter=0)
    # the constructor takes the runtime's own numbers back under the same names (the runtime API)
    rebuilt = HadamardResponse(domain=mech.domain_size, epsilon=mech.epsilon, blocks=mech.blocks,
                               keep_probability=mech.keep_probability)
    assert repr(rebuilt) == repr(mech) and rebuilt.privacy_map() == mech.privacy_map()
    doc = agg.to_dict()
    doc["counts"]["y"][0] += 1
    with pytest.raises(ValueError, match="sum to n"):
        mechanisms.Aggregate.from_dict(doc)


# --------------------------------------------------------------------------- pure-ldp, the peer implementation
def _pure_ldp():
    return pytest.importorskip("pure_ldp.frequency_oracles.hadamard_response",
                               reason="pure-ldp (the `oracle` extra) is the peer implementation")


@pytest.mark.oracle
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


@pytest.mark.oracle
@pytest.mark.slow
@pytest.mark.parametrize("k,epsilon", [(20, 2.0), (100, 4.0), (60, 3.0)])
def test_block_estimates_equal_pure_ldps_on_the_same_reports(k, epsilon):
    # epsilon > 1: pure-ldp runs the authors' block scheme with B = 2^floor(log2 min(e^eps, 2k)) and a random
    # relabelling of the items (undone on decoding); with the identity relabelling it reads our reports as they are
    hrmod = _pure_ldp()
    B = hr.authors_blocks(epsilon, k)
    mech = HadamardResponse(domain=k, epsilon=epsilon, blocks=B)
    server = hrmod.HadamardResponseServer(epsilon, k, index_mapper=lambda x: x)
    assert (server.hr.part, server.hr.partsz, server.hr.outsz) == (B, mech.block_size, mech.output_size)
    server.hr.permute, server.hr.reverse = list(range(k)), list(range(k))
    rng = np.random.default_rng(6)
    data = rng.integers(0, k, size=4000)
    reports = mech.perturb(data, rng=rng)
    server.aggregate_all(reports["y"].tolist())
    theirs = np.array([server.estimate(x, suppress_warnings=True) for x in range(k)]) / data.size
    np.testing.assert_allclose(mech.estimate(mech.aggregate(reports)).frequency, theirs, rtol=1e-9, atol=1e-12)


@pytest.mark.oracle
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
    plan = _plan(epsilon=2.0, domain=["a", "b", "c"], blocks=1)
    p = plan["params"]
    assert plan["mechanism"] == "hr" and p["output_size"] == 4 and p["keep_probability"] == hr.keep_probability(2.0)
    assert plan["guarantee"]["notion"] == "LDP"
    exact = hr.exact_epsilon(p["keep_probability"], p["blocks"])
    g = plan["guarantee"]["epsilon"]
    assert Fraction(g) >= Fraction(exact) and Fraction(math.nextafter(g, 0)) < Fraction(exact)  # rounded up, tight
    assert ldpplan.load(plan).labels == ["a", "b", "c"]


@pytest.mark.parametrize("edit", [
    ("params", "keep_probability", lambda v: v + 2**-48),
    ("params", "keep_probability", lambda v: v - 2**-48),
    ("params", "output_size", lambda v: v * 2),
    ("params", "blocks", lambda v: v * 2),
    ("spec", "blocks", lambda v: 4),
    ("params", "epsilon", lambda v: v * 2),
    ("guarantee", "epsilon", lambda v: math.nextafter(v, 0)),
    ("guarantee", "epsilon", lambda v: v / 2),
    ("spec", "epsilon", lambda v: v / 2),
    ("spec", "domain", lambda v: v + 1),
])
def test_verify_and_load_refuse_edited_plans(edit):
    block, key, change = edit
    plan = _plan(epsilon=1.0, domain=6, blocks=2)
    bad = copy.deepcopy(plan)
    bad[block][key] = change(bad[block][key])
    assert not planner.verify_plan(bad).holds
    with pytest.raises(PlanError):
        ldpplan.load(bad)


@pytest.mark.parametrize("blocks", [1, 8])
def test_load_refuses_a_consistent_plan_with_other_blocks_than_the_spec_asks(blocks):
    # every number rewritten consistently for another B (still epsilon-LDP): verify and load both refuse it,
    # since the spec's blocks = "auto" names one B (load recomputes the planner's rule)
    from ldpplan.planner.hadamard.claims import claimed_epsilon

    plan = _plan(epsilon=4.0, domain=200)
    assert plan["params"]["blocks"] not in (blocks,)
    bad = copy.deepcopy(plan)
    numbers = hr.solve_hadamard(4.0, 200, blocks)
    bad["params"].update(blocks=blocks, block_size=numbers.block_size, output_size=numbers.output_size,
                         keep_probability=numbers.keep_probability)
    bad["guarantee"]["epsilon"] = claimed_epsilon(numbers.epsilon_exact)
    assert not planner.verify_plan(bad).holds
    with pytest.raises(PlanError, match="params.blocks"):
        ldpplan.load(bad)
    bad["spec"]["blocks"] = blocks  # the spec asks for it: the numbers hold (predictions aside, which verify checks)
    ldpplan.load(bad)


def test_small_epsilon_and_bad_domains_are_spec_errors():
    with pytest.raises(SpecError, match="grid"):
        _plan(epsilon=1e-15)
    for domain in (1, 2**24 + 1, ["a", "a"], "ten"):
        with pytest.raises(SpecError, match="domain"):
            _plan(domain=domain)
    with pytest.raises(SpecError, match="epsilon"):
        _plan(epsilon="1.0")
    for blocks in (3, 0, "many", 64):
        with pytest.raises(SpecError, match="blocks"):
            _plan(domain=10, blocks=blocks)


def test_runtime_constructor_is_keyword_only_and_checks_p():
    with pytest.raises(TypeError):
        HadamardResponse(6, 1.0)  # type: ignore[misc]
    with pytest.raises(ValueError, match="keep_probability"):
        HadamardResponse(epsilon=1.0, domain=6, keep_probability=hr.keep_probability(1.0) + 2**-48)
    with pytest.raises(ValueError, match="blocks"):
        HadamardResponse(epsilon=1.0, domain=6, blocks=3)
    with pytest.raises(ValueError, match="domain"):
        HadamardResponse(epsilon=1.0, domain=1)


@pytest.mark.parametrize("blocks", [1, 2])
def test_audit_pairs_are_the_tight_events(blocks):
    from ldpplan.planner.families import family_for

    plan = _plan(epsilon=1.0, domain=6, blocks=blocks)
    mech = ldpplan.load(plan)
    q = mech.channel_matrix()
    pairs = family_for("hadamard").audit_pairs(plan)
    assert len(pairs) == blocks  # a same-block pair, and a cross-block pair when there are blocks
    for pair in pairs:
        (test,) = pair.tests
        first, second = int(pair.first), int(pair.second)
        event = test.occurs({"y": np.arange(mech.output_size)})
        assert q[first, event].sum() == pytest.approx(test.p_first, rel=1e-12)
        assert q[second, event].sum() == pytest.approx(test.p_second, rel=1e-12)
        assert math.log(test.p_first / test.p_second) == pytest.approx(mech.privacy_map()["epsilon"], rel=1e-12)


@pytest.mark.slow  # the default trials: about 2 s (hadamard-gss) and 7 s (k = 10,000, every input screened)
@pytest.mark.parametrize("name", ["hadamard-gss", "hadamard-synthetic"])
def test_audit_at_default_trials_is_consistent_and_reaches_80_percent_of_the_claim(name):
    from ldpplan.planner import audit

    result = audit(planner.make_plan(planner.example_spec(name)), rng=np.random.default_rng(18))
    assert result.consistent, result.table()
    assert result.epsilon_lower_bound >= 0.8 * result.epsilon_claimed, result.table()


def test_runtime_and_solver_derive_the_same_grid_probability():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from ldpplan.mechanisms.hadamard._channel import keep_probability

    @settings(derandomize=True, max_examples=300, deadline=None)
    @given(st.floats(min_value=2**-40, max_value=100.0, allow_nan=False), st.sampled_from([1, 2, 8, 1024]))
    def prop(epsilon, blocks):
        p = hr.keep_probability(epsilon, blocks)
        assert p == keep_probability(epsilon, blocks)
        # the grid value is the largest multiple of 2^-48 whose ratio stays within e^epsilon
        assert hr.exact_epsilon(p, blocks) <= Decimal(epsilon)
        up = p + 2**-48
        if up < 1:
            assert hr.exact_epsilon(up, blocks) > Decimal(epsilon)

    prop()


@pytest.mark.slow  # 1,000 runs
def test_block_intervals_cover_at_the_level():
    # with blocks the interval plugs in the block's estimated mass; its coverage stays at the level
    mech = HadamardResponse(domain=6, epsilon=3.0, blocks=4)
    counts = np.array([1200, 800, 600, 500, 500, 400])
    data = np.repeat(np.arange(6), counts)
    truth = counts / counts.sum()
    hits = np.zeros(6)
    runs = 1000
    for child in np.random.SeedSequence(77).spawn(runs):
        low, high = mech.estimate(mech.aggregate(mech.perturb(data, rng=np.random.default_rng(child)))) \
            .confidence_interval(0.95)
        hits += (low <= truth) & (truth <= high)
    se = math.sqrt(0.95 * 0.05 / runs)
    assert np.all(hits / runs >= 0.95 - 4 * se), hits / runs



@pytest.mark.slow
def test_hadamard_at_two_to_the_24_aggregate_and_estimate_refuse_before_allocating(tmp_path):
    """k = 2^24 (2^25 outputs; issue 27): `aggregate` refuses under the default 1 GiB budget instead of
    writing a file `estimate` refuses, and `estimate` under a 4 GB budget refuses before it allocates
    (its predicted peak, about 15 GiB, names the memory; the issue measured 12.2 GB)."""
    import tracemalloc

    from click.testing import CliRunner

    from ldpplan.planner.cli import main

    def run(*args):
        return CliRunner().invoke(main, [str(a) for a in args])

    spec = tmp_path / "hr.toml"
    spec.write_text('mechanism = "hr"\nepsilon = 2.0\ndomain = 16777216\nusers = 1000\n')
    data = tmp_path / "users.csv"
    data.write_text("item\n1\n2\n16777215\n")
    plan, reports, agg = tmp_path / "hr.json", tmp_path / "r.parquet", tmp_path / "agg.json"
    assert run("plan", spec, "-o", plan).exit_code == 0
    assert run("perturb", plan, "--input", data, "-o", reports, "--seed", 1).exit_code == 0
    res = run("aggregate", plan, reports, "-o", agg)
    assert res.exit_code == 2 and "--max-memory" in res.output and "GiB" in res.output
    assert not agg.exists()
    tracemalloc.start()
    try:
        res = run("estimate", plan, reports, "--max-memory", "4GB")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert res.exit_code == 2 and "needs about 15.2 GiB" in res.output, res.output
    assert peak < 64 << 20  # nothing of the domain's size (2^25 int64 counts alone are 256 MiB)

"""Runtime of IDUE / IDUE-PS (mechanisms.idue): Gu, Li, Xiong & Cao, ICDE 2020, Sec. V-VI.

Plans are built here as dicts with grid probabilities (no planner involved). Statistical
checks use fixed seeds and tolerances derived from the variance (5 standard errors).
"""
from __future__ import annotations

import copy
import io
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from ldpplan import mechanisms
from ldpplan.mechanisms import PlanError
from ldpplan.mechanisms._sampling import GRID, to_grid
from ldpplan.mechanisms import Aggregate, Estimate
from ldpplan.mechanisms.idue import COUNTS, IDUE, IDUEPS, UnaryReports

REPO = Path(__file__).resolve().parents[1]
Z = 5.0  # standard errors allowed in statistical checks


def make_plan(levels, *, padding_length=None, dummy=None, labels=None, notion="MinID-LDP"):
    """levels: list of (epsilon, [item labels], a, b) with a, b rounded onto the 2^-48 grid (format 2.0)."""
    if labels is None:
        labels = [lab for _, labs, _, _ in levels for lab in labs]
    plan = {
        "format_version": "2.0",
        "mechanism": "idue" if padding_length is None else "idue-ps",
        "domain": {"size": len(labels), "labels": list(labels)},
        "params": {
            "model": "opt0",
            "levels": [
                {"name": f"level{j}", "epsilon": e, "size": len(labs), "items": list(labs),
                 "a": to_grid(a, "down"), "b": to_grid(b, "up")}
                for j, (e, labs, a, b) in enumerate(levels)
            ],
            "padding_length": padding_length,
        },
        "guarantee": {"notion": notion, "epsilon": min(e for e, _, _, _ in levels),
                      "levels": {f"level{j}": e for j, (e, _, _, _) in enumerate(levels)}},
        "predicted": {}, "baselines": [], "planning_inputs": [], "solver": {},
        "verification": {"holds": True, "message": "test plan"},
        # the spec the plan promises: load() checks the domain and every item's level and epsilon against it
        "spec": {"mechanism": "idue" if padding_length is None else "idue-ps",
                 "notion": "minid" if notion == "MinID-LDP" else "avgid", "padding_length": padding_length,
                 "domain": list(labels),
                 "levels": [{"name": f"level{j}", "epsilon": e, "items": list(labs)}
                            for j, (e, labs, _, _) in enumerate(levels)]},
        "provenance": {},
    }
    if padding_length is not None:
        e, a, b = dummy
        plan["params"]["dummy"] = {"epsilon": e, "a": to_grid(a, "down"), "b": to_grid(b, "up")}
    return plan


# Two levels with items interleaved in index order (so the per-item arrays must follow plan["items"]).
LABELS = ["anemia", "hiv", "headache", "stomachache", "toothache"]
PLAN = make_plan(
    [(math.log(4), ["hiv", "toothache"], 0.59, 0.33), (math.log(6), ["anemia", "headache", "stomachache"], 0.67, 0.28)],
    labels=LABELS,
)
PS_PLAN = make_plan(
    [(math.log(4), ["hiv", "toothache"], 0.59, 0.33), (math.log(6), ["anemia", "headache", "stomachache"], 0.67, 0.28)],
    labels=LABELS, padding_length=3, dummy=(math.log(4), 0.59, 0.33),
)


@pytest.fixture(scope="module")
def mech() -> IDUE:
    return mechanisms.load(PLAN)


@pytest.fixture(scope="module")
def ps() -> IDUEPS:
    return mechanisms.load(PS_PLAN)


# --------------------------------------------------------------------------- loading


def test_load_builds_per_item_arrays_in_index_order(mech, tmp_path):
    a_lo, b_lo = to_grid(0.59, "down"), to_grid(0.33, "up")
    a_hi, b_hi = to_grid(0.67, "down"), to_grid(0.28, "up")
    assert isinstance(mech, IDUE)
    assert mech.items == LABELS and mech.m == 5 and mech.width == 5 and mech.padding_length is None
    np.testing.assert_array_equal(mech.a, [a_hi, a_lo, a_hi, a_hi, a_lo])
    np.testing.assert_array_equal(mech.b, [b_hi, b_lo, b_hi, b_hi, b_lo])
    np.testing.assert_array_equal(mech.epsilon, [math.log(6), math.log(4), math.log(6), math.log(6), math.log(4)])
    with pytest.raises(ValueError):
        mech.a[0] = 0.5  # read-only
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(PLAN))
    again = mechanisms.load(path)
    np.testing.assert_array_equal(again.a, mech.a)


def test_load_ps_appends_dummy_items(ps):
    assert isinstance(ps, IDUEPS)
    assert ps.m == 5 and ps.width == 8 and ps.padding_length == 3
    np.testing.assert_array_equal(ps.a[5:], [to_grid(0.59, "down")] * 3)
    np.testing.assert_array_equal(ps.b[5:], [to_grid(0.33, "up")] * 3)
    np.testing.assert_array_equal(ps.a[:5], mechanisms.load(PLAN).a)


def _mutate(path, value):
    plan = copy.deepcopy(PLAN)
    node = plan
    keys = path.split(".")
    for k in keys[:-1]:
        node = node[int(k)] if isinstance(node, list) else node[k]
    last = keys[-1]
    if value is KeyError:
        del node[last]
    elif isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return plan


@pytest.mark.parametrize(
    "path,value,field",
    [
        ("mechanism", "idue-ps", "padding_length"),  # idue-ps needs padding_length >= 1
        ("mechanism", KeyError, "mechanism"),
        ("format_version", "1.0", "format_version"),
        ("domain.labels", KeyError, "domain.labels"),
        ("domain.labels", [], "domain.labels"),
        ("domain.labels.1", 7, "domain.labels[1]"),
        ("domain.labels.1", "anemia", "domain.labels[1]"),
        ("domain.size", 6, "domain.labels"),
        ("verification.holds", False, "verification.holds"),
        ("guarantee.notion", "LDP", "guarantee.notion"),
        ("guarantee.epsilon", 0.5, "guarantee.epsilon"),
        ("guarantee.levels.level0", 1.0, "guarantee.levels.level0"),
        ("guarantee.levels", {"level0": 2.0}, "guarantee.levels"),
        ("params.levels.1.epsilon", 1.5, "params.levels[1].epsilon"),  # numbers give 1.652 nats
        ("params.levels.0.a", to_grid(1 - 1e-6, "down"), "params.levels[0].epsilon"),  # (6) violated by ~13 nats
        ("params.levels.0.b", float("nan"), "params.levels[0].b"),
        ("params.levels", KeyError, "params.levels"),
        ("params.levels.0.a", 0.5 + 2.0**-50, "params.levels[0].a"),  # off the 2^-48 grid
        ("params.levels.0.a", 0.2, "params.levels[0]"),  # a < b
        ("params.levels.0.b", 0.0, "params.levels[0]"),  # b = 0: infinite ratio
        ("params.levels.0.a", 1.0, "params.levels[0]"),
        ("params.levels.0.b", KeyError, "params.levels[0].b"),
        ("params.levels.0.a", "0.6", "params.levels[0].a"),
        ("params.levels.1.epsilon", float("nan"), "params.levels[1].epsilon"),
        ("params.levels.1.epsilon", -1.0, "params.levels[1].epsilon"),
        ("params.levels.1.size", 2, "params.levels[1].size"),
        ("params.levels.1.items", ["anemia", "headache", "nosebleed"], "params.levels[1].items"),
        ("params.levels.1.items", ["anemia", "headache", "hiv"], "params.levels[1].items"),  # hiv in two levels
        ("params.padding_length", 3, "params.padding_length"),
    ],
)
def test_bad_plan_raises_plan_error_naming_the_field(path, value, field):
    with pytest.raises(PlanError, match=re.escape(field)):
        mechanisms.load(_mutate(path, value))


def test_item_in_no_level_is_rejected():
    plan = copy.deepcopy(PLAN)
    plan["params"]["levels"][1]["items"] = ["anemia", "headache"]
    plan["params"]["levels"][1]["size"] = 2
    with pytest.raises(PlanError, match="'stomachache' is in no level"):
        mechanisms.load(plan)


@pytest.mark.parametrize(
    "key,value,field",
    [("padding_length", 0, "params.padding_length"), ("padding_length", None, "params.padding_length"),
     ("padding_length", True, "params.padding_length"), ("dummy", None, "params.dummy"),
     ("dummy", {"epsilon": 1.0, "a": 0.3, "b": 0.6}, "params.dummy")],
)
def test_bad_ps_plan(key, value, field):
    plan = copy.deepcopy(PS_PLAN)
    plan["params"][key] = value
    with pytest.raises(PlanError, match=re.escape(field)):
        mechanisms.load(plan)


def test_wrong_class_for_mechanism():
    with pytest.raises(PlanError, match="mechanism"):
        IDUEPS.from_plan(PLAN)
    with pytest.raises(PlanError, match="mechanism"):
        IDUE.from_plan(PS_PLAN)


# --------------------------------------------------------------------------- reports containers


def test_packbits_round_trip_and_layout(mech):
    rng = np.random.default_rng(1)
    y = rng.random((37, 13)) < 0.4
    rep = UnaryReports.from_bool("idue", y)
    assert rep.bits.shape == (37, 2) and rep.n == 37 == len(rep)
    np.testing.assert_array_equal(rep.bits, np.packbits(y, axis=1, bitorder="little"))  # little bit order
    np.testing.assert_array_equal(rep.unpack(13), y)
    assert UnaryReports.from_bool("idue", y.astype(np.int8)).bits.tobytes() == rep.bits.tobytes()
    with pytest.raises(ValueError):
        rep.bits[0, 0] = 1
    # perturb output: padding bits are zero, unpack/pack round trip is the identity
    out = mech.perturb(rng.integers(0, 5, 1000), rng)
    assert out.bits.shape == (1000, 1) and out.bits.dtype == np.uint8
    assert not np.any(out.bits & np.uint8(0b11100000))  # padding bits 5..7 (little order) are zero
    np.testing.assert_array_equal(UnaryReports.from_bool("idue", out.unpack(5)).bits, out.bits)
    # npz round trip (the format of reports files)
    buf = io.BytesIO()
    np.savez(buf, **out.to_arrays())
    buf.seek(0)
    with np.load(buf) as z:
        back = UnaryReports.from_arrays("idue", dict(z))
    assert back.bits.tobytes() == out.bits.tobytes()
    np.testing.assert_array_equal(mech.aggregate(back)[COUNTS], mech.aggregate(out)[COUNTS])
    # attacker-controlled report columns are validated by aggregate(), naming the column
    with pytest.raises(ValueError, match="reports.bits"):
        mech.aggregate(UnaryReports("idue", {"bits": out.bits.astype(np.int16)}))
    with pytest.raises(ValueError, match="reports.bits"):
        mech.aggregate(UnaryReports("idue", {"bits": np.zeros((3, 2), np.uint8)}))
    with pytest.raises(ValueError, match="padding bits"):
        mech.aggregate(UnaryReports("idue", {"bits": np.full((3, 1), 0b10000000, np.uint8)}))
    with pytest.raises(ValueError, match="reports.mechanism"):
        mech.aggregate(UnaryReports("idue-ps", {"bits": out.bits}))


def test_estimate_accepts_reports_counts_and_plain_arrays(mech):
    rng = np.random.default_rng(2)
    rep = mech.perturb(rng.integers(0, 5, 999), rng)
    y = rep.unpack(5)
    counts = mech.aggregate(rep)
    np.testing.assert_array_equal(counts[COUNTS], y.sum(axis=0))
    assert counts.n == 999
    expected = (y.sum(axis=0) / 999 - mech.b) / (mech.a - mech.b)  # eq. (7) / n
    for x in (rep, counts, y, y.astype(np.uint8), y.astype(float)):
        est = mech.estimate(x)
        assert isinstance(est, Estimate) and est.method == "empirical" and est.n == 999 and est.mean is None
        np.testing.assert_allclose(est.frequency, expected, rtol=1e-13, atol=1e-15)
    # std_error: eq. (8) at the clipped estimate
    f = np.clip(expected, 0, 1)
    se = np.sqrt((mech.b * (1 - mech.b) / (mech.a - mech.b) ** 2 + f * (1 - mech.a - mech.b) / (mech.a - mech.b)) / 999)
    np.testing.assert_allclose(mech.estimate(counts).std_error, se, rtol=1e-12)
    with pytest.raises(ValueError, match="empirical"):
        mech.estimate(counts, method="em")
    # aggregates merge and round-trip through JSON
    again = Aggregate.from_dict(json.loads(json.dumps(counts.to_dict())))
    assert again == counts and (again + counts).n == 1998


def test_aggregate_of_wide_reports_matches_unpacked_sum():
    labels = [f"i{k}" for k in range(1003)]
    m = mechanisms.load(make_plan([(5.0, labels[:500], 0.6, 0.3), (6.0, labels[500:], 0.8, 0.2)]))
    rng = np.random.default_rng(3)
    rep = m.perturb(rng.integers(0, 1003, 3000), rng)
    assert rep.bits.shape == (3000, 126)
    np.testing.assert_array_equal(m.aggregate(rep)[COUNTS], rep.unpack(1003).sum(axis=0))


def test_aggregate_validation_and_merge(mech):
    c = Aggregate("idue", 5, {COUNTS: [1, 2, 3, 0, 0]}) + Aggregate("idue", 4, {COUNTS: [0, 4, 1, 0, 0]})
    np.testing.assert_array_equal(c[COUNTS], [1, 6, 4, 0, 0])
    assert c.n == 9
    mech.estimate(c)
    with pytest.raises(ValueError, match="<= n"):
        mech.estimate(Aggregate("idue", 5, {COUNTS: [1, 6, 0, 0, 0]}))
    with pytest.raises(ValueError, match="shape"):
        mech.estimate(Aggregate("idue", 5, {COUNTS: [1, 2]}))
    with pytest.raises(ValueError, match="aggregate.mechanism"):
        mech.estimate(Aggregate("idue-ps", 5, {COUNTS: [1, 2, 0, 0, 0]}))
    with pytest.raises(ValueError, match="aggregate.counts"):
        mech.estimate(Aggregate("idue", 5, {"ones": [1, 2, 0, 0, 0]}))
    with pytest.raises(ValueError):
        Aggregate("idue", 5, {COUNTS: [-1, 0, 0, 0, 0]})
    with pytest.raises(ValueError):
        Aggregate("idue", 5, {COUNTS: [0.5, 1.0, 0, 0, 0]})
    with pytest.raises(ValueError):
        c + Aggregate("idue", 1, {COUNTS: [1]})


# --------------------------------------------------------------------------- exact perturbation


def test_perturb_per_bit_probabilities(mech):
    """Each bit is 1 w.p. a[k] for the holder and b[k] otherwise (z-tests, 5 s.e.)."""
    rng = np.random.default_rng(4)
    n_per = 40000
    items = np.repeat(np.arange(5), n_per)
    rng.shuffle(items)
    y = mech.perturb(items, rng).unpack(5)
    for x in range(5):
        rows = y[items == x]
        p = np.where(np.arange(5) == x, mech.a, mech.b)
        ones = rows.sum(axis=0)
        sd = np.sqrt(n_per * p * (1 - p))
        assert np.all(np.abs(ones - n_per * p) < Z * sd), (x, ones, n_per * p)


def test_perturb_joint_distribution_is_product(mech):
    """All 2^5 report vectors for holders of item 1: chi-square against the product law."""
    rng = np.random.default_rng(5)
    n = 100000
    y = mech.perturb(np.full(n, 1), rng).unpack(5)
    codes = y.astype(np.int64) @ (1 << np.arange(5))
    observed = np.bincount(codes, minlength=32)
    p = np.where(np.arange(5) == 1, mech.a, mech.b)
    bits = (np.arange(32)[:, None] >> np.arange(5)) & 1
    probs = np.prod(np.where(bits == 1, p, 1 - p), axis=1)
    stat = float(np.sum((observed - n * probs) ** 2 / (n * probs)))
    assert stat < stats.chi2.ppf(1 - 1e-6, df=31)


def test_sampling_is_exact_at_fine_grid_resolution():
    """b = 2^-40 and a = 1 - 2^-40 are sampled at that resolution, not rounded to 2^-16."""
    labels = [f"i{k}" for k in range(50)]
    plan = make_plan([(56.0, labels, 1 - 2.0**-40, 2.0**-40)])  # u + w = 55.45 nats
    assert plan["params"]["levels"][0]["b"] * GRID == 2**8
    m = mechanisms.load(plan)
    rng = np.random.default_rng(6)
    items = rng.integers(0, 50, 40000)
    y = m.perturb(items, rng).unpack(50)  # 2e6 bits: Pr[any wrong bit] ~ 2e6 * 2^-40 ~ 2e-6
    expected = np.zeros_like(y)
    expected[np.arange(items.size), items] = True
    np.testing.assert_array_equal(y, expected)


def test_same_seed_same_reports(mech):
    items = np.random.default_rng(7).integers(0, 5, 5000)
    r1 = mech.perturb(items, np.random.default_rng(8))
    r2 = mech.perturb(items, np.random.default_rng(8))
    assert r1.bits.tobytes() == r2.bits.tobytes()
    r3 = mech.perturb(items, np.random.default_rng(9))
    assert r1.bits.tobytes() != r3.bits.tobytes()


# --------------------------------------------------------------------------- estimator: unbiasedness, eq. (8)


def _check_mean_and_variance(estimates, truth, variance):
    """estimates (T, m): mean within 5 s.e. of truth; sample variance within 5 s.e. of theory."""
    t = estimates.shape[0]
    mean = estimates.mean(axis=0)
    assert np.all(np.abs(mean - truth) < Z * np.sqrt(variance / t)), (mean, truth)
    # s.e. of the sample variance ~ var * sqrt(2 / (T - 1)) (near-normal estimates)
    sv = estimates.var(axis=0, ddof=1)
    assert np.all(np.abs(sv - variance) < Z * variance * np.sqrt(2 / (t - 1))), (sv, variance)


@pytest.mark.parametrize("path", ["perturb", "collect", "simulate_counts"])
def test_idue_estimator_unbiased_with_eq8_variance(mech, path):
    rng = np.random.default_rng(10)
    n = 2000
    true_counts = np.array([700, 20, 500, 180, 600])
    items = np.repeat(np.arange(5), true_counts)
    truth = true_counts / n
    trials = 400
    est = np.empty((trials, 5))
    for t in range(trials):
        if path == "perturb":
            est[t] = mech.estimate(mech.perturb(items, rng)).frequency
        elif path == "collect":
            est[t] = mech.estimate(mech.collect(items, rng, chunk_size=333)).frequency
        else:
            est[t] = mech.estimate(mech.simulate_counts(true_counts, n, rng)).frequency
    var = mech.variance(truth, n)
    a, b = mech.a, mech.b
    # eq. (8) in its first form: (c a (1-a) + (n-c) b (1-b)) / (a-b)^2, divided by n^2
    np.testing.assert_allclose(
        var, (true_counts * a * (1 - a) + (n - true_counts) * b * (1 - b)) / (a - b) ** 2 / n**2, rtol=1e-12)
    _check_mean_and_variance(est, truth, var)


def test_collect_equals_aggregate_of_perturb(mech):
    items = np.random.default_rng(11).integers(0, 5, 7777)
    for chunk in (None, 7, 1000, 10**6):
        c = mech.collect(items, np.random.default_rng(12), chunk_size=chunk)
        r = mech.aggregate(mech.perturb(items, np.random.default_rng(12), chunk_size=chunk))
        np.testing.assert_array_equal(c[COUNTS], r[COUNTS])
        assert c.n == r.n == 7777


def test_simulate_counts_moments(mech):
    """counts_k ~ Bin(c_k, a_k) + Bin(n - c_k, b_k): mean and variance of the counts."""
    rng = np.random.default_rng(13)
    c = np.array([10, 0, 300, 90, 600])
    n = 1000
    draws = np.array([mech.simulate_counts(c, n, rng)[COUNTS] for _ in range(3000)])
    mean = c * mech.a + (n - c) * mech.b
    var = c * mech.a * (1 - mech.a) + (n - c) * mech.b * (1 - mech.b)
    assert np.all(np.abs(draws.mean(0) - mean) < Z * np.sqrt(var / 3000))
    assert np.all(np.abs(draws.var(0, ddof=1) - var) < Z * var * np.sqrt(2 / 2999))


# --------------------------------------------------------------------------- IDUE-PS


def _exact_sampling_law(s, L, m):
    """Algorithm 1 for one set of size s (items 0..s-1): distribution over m + L indices."""
    p = np.zeros(m + L)
    if s >= L:
        p[:s] = 1 / s
    else:
        p[:s] = 1 / L
        p[m:] = (L - s) / L / L
    return p


@pytest.mark.parametrize("s", [0, 1, 2, 3, 5])
def test_ps_sample_items_follows_algorithm_1(ps, s):
    rng = np.random.default_rng(20 + s)
    n = 30000
    sets = [np.arange(s)] * n
    sampled = ps.sample_items(sets, rng)
    assert sampled.dtype == np.int64 and sampled.shape == (n,)
    p = _exact_sampling_law(s, 3, 5)
    observed = np.bincount(sampled, minlength=8)
    assert np.all(observed[p == 0] == 0)
    support = p > 0
    stat = float(np.sum((observed[support] - n * p[support]) ** 2 / (n * p[support])))
    assert stat < stats.chi2.ppf(1 - 1e-6, df=max(int(support.sum()) - 1, 1))


def test_ps_sample_items_list_and_csr_agree(ps):
    rng = np.random.default_rng(30)
    sets = [rng.choice(5, size=k, replace=False) for k in rng.integers(0, 6, 500)]
    indptr = np.concatenate([[0], np.cumsum([len(s) for s in sets])])
    indices = np.concatenate(sets)
    s1 = ps.sample_items(sets, np.random.default_rng(31))
    s2 = ps.sample_items((indptr, indices), np.random.default_rng(31))
    np.testing.assert_array_equal(s1, s2)
    # each sampled real item belongs to its user's set
    for u in np.nonzero(s1 < 5)[0]:
        assert s1[u] in sets[u]
    sizes = np.diff(indptr)
    assert np.all(s1[sizes >= 3] < 5)  # long sets never sample a dummy
    assert np.all(s1[sizes == 0] >= 5)  # empty sets always do


@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
def test_ps_estimator_unbiased_with_variance(ps):
    """Mean L f^s; variance = L^2 eq.(8)/n^2 at f^s plus the sampling term L^2 spread / n."""
    rng = np.random.default_rng(40)
    base = [np.array([0, 1]), np.array([1, 2, 3, 4]), np.array([2]), np.array([], dtype=np.int64),
            np.array([0, 2, 4])]
    sets = base * 300
    n = len(sets)
    expected, spread = ps.sampling_probabilities(sets)
    # exact per-item expectation for this population
    want = np.zeros(5)
    for s in base:
        for k in s:
            want[k] += 1 / max(len(s), 3)
    np.testing.assert_allclose(expected, want / len(base), rtol=1e-12)
    trials = 400
    est = np.array([ps.estimate(ps.perturb(sets, rng)).frequency for _ in range(trials)])
    var = ps.variance(expected, n) + 9 * spread / n
    _check_mean_and_variance(est, 3 * expected, var)
    # item 0 is only in sets no longer than L: L f^s equals its true set frequency 2/5; item 2 is also
    # in the 4-item set, truncated to L = 3: L f^s = 3 (1/3 + 1 + 1/4) / 5 = 0.55 < 3/5 (Algorithm 1's bias)
    np.testing.assert_allclose(3 * expected[[0, 2]], [2 / 5, 0.55], rtol=1e-12)


def test_ps_simulate_counts_matches_collect_in_distribution(ps):
    rng = np.random.default_rng(50)
    sets = [np.array([0, 1]), np.array([2]), np.array([], dtype=np.int64), np.array([0, 1, 3, 4])] * 250
    n = len(sets)
    trials = 300
    sampled = ps.sample_items(sets, rng)
    sc = np.bincount(sampled, minlength=8)
    full = np.array([ps.simulate_counts(sc, n, rng)[COUNTS] for _ in range(trials)])
    real_only = np.array([ps.simulate_counts(sc[:5], n, rng)[COUNTS] for _ in range(trials)])
    mean = sc * ps.a + (n - sc) * ps.b
    var = sc * ps.a * (1 - ps.a) + (n - sc) * ps.b * (1 - ps.b)
    assert np.all(np.abs(full.mean(0) - mean) < Z * np.sqrt(var / trials))
    # from real-item counts only, dummy counts get the extra multinomial spread but the same mean
    assert np.all(np.abs(real_only.mean(0) - mean) < Z * np.sqrt(2 * var / trials + 1))
    np.testing.assert_allclose(real_only[:, :5].mean(0), mean[:5], atol=Z * np.sqrt(var[:5].max() / trials))
    # collect with the same sampled items (perturb_sampled path) agrees in distribution
    coll = np.array([ps.aggregate(ps.perturb_sampled(sampled, rng))[COUNTS] for _ in range(trials)])
    assert np.all(np.abs(coll.mean(0) - mean) < Z * np.sqrt(var / trials))


def test_ps_collect_equals_aggregate_of_perturb(ps):
    rng = np.random.default_rng(60)
    sets = [rng.choice(5, size=k, replace=False) for k in rng.integers(0, 6, 3000)]
    c = ps.collect(sets, np.random.default_rng(61), chunk_size=100)
    r = ps.aggregate(ps.perturb(sets, np.random.default_rng(61), chunk_size=100))
    np.testing.assert_array_equal(c[COUNTS], r[COUNTS])
    assert c[COUNTS].shape == (8,) and ps.estimate(c).frequency.shape == (5,)


def test_ps_errors(ps):
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="item 1 twice"):
        ps.perturb([np.array([0, 1, 1])], rng)
    with pytest.raises(ValueError, match="user 1's set contains item 4 twice"):
        ps.perturb([np.array([2, 1]), np.array([4, 0, 4])], rng)  # unsorted sets take the sorting path
    with pytest.raises(ValueError, match="user 2's set contains item 3 twice"):
        ps.collect((np.array([0, 0, 2, 4]), np.array([0, 1, 3, 3])), rng)
    with pytest.raises(ValueError, match=r"item_sets indices\[2\] = 5"):
        ps.perturb([np.array([0]), np.array([1, 5])], rng)
    with pytest.raises(ValueError, match="indptr"):
        ps.perturb((np.array([0, 2, 1]), np.array([0, 1])), rng)
    with pytest.raises(TypeError, match="Generator"):
        ps.sample_items([np.array([0])], np.random.RandomState(0))
    with pytest.raises(ValueError, match=r"sampled\[0\] = 8"):
        ps.perturb_sampled(np.array([8]), rng)
    with pytest.raises(ValueError, match="sum to n"):
        ps.simulate_counts(np.ones(8, dtype=int), 5, rng)
    with pytest.raises(ValueError, match="at most n"):
        ps.simulate_counts(np.full(5, 3), 5, rng)
    with pytest.raises(ValueError, match="width"):
        ps.estimate(np.zeros((3, 5), dtype=bool))


# --------------------------------------------------------------------------- error paths (IDUE)


def test_idue_errors(mech):
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"items\[2\] = 5 is outside \[0, 5\)"):
        mech.perturb(np.array([0, 4, 5]), rng)
    with pytest.raises(ValueError, match=r"items\[0\] = -1"):
        mech.collect(np.array([-1]), rng)
    with pytest.raises(TypeError, match="integer"):
        mech.perturb(np.array([0.0, 1.0]), rng)
    with pytest.raises(TypeError, match="Generator"):
        mech.perturb(np.array([0]), rng=0)
    with pytest.raises(TypeError, match="Generator"):
        mech.simulate_counts(np.array([1, 0, 0, 0, 0]), 1, np.random.RandomState(0))
    with pytest.raises(ValueError, match="width 6"):
        mech.estimate(np.zeros((4, 6), dtype=bool))
    with pytest.raises(ValueError, match="only 0 and 1"):
        mech.estimate(np.full((4, 5), 2))
    with pytest.raises(ValueError, match="at least one user"):
        mech.estimate(mech.perturb(np.zeros(0, dtype=np.int64), rng))
    with pytest.raises(ValueError, match="sum to n"):
        mech.simulate_counts(np.array([1, 0, 0, 0, 0]), 2, rng)
    with pytest.raises(ValueError, match="shape"):
        mech.variance(np.zeros(4), 10)
    with pytest.raises(ValueError, match="n: must be"):
        mech.variance(np.zeros(5), 0)
    with pytest.raises(ValueError, match="chunk_size"):
        mech.perturb(np.array([0]), rng, chunk_size=0)
    empty = mech.perturb([], rng)
    assert len(empty) == 0 and empty.bits.shape == (0, 1)


# --------------------------------------------------------------------------- properties


@st.composite
def small_plans(draw):
    m = draw(st.integers(1, 20))
    t = draw(st.integers(1, min(m, 4)))
    cuts = sorted(draw(st.lists(st.integers(1, m - 1), min_size=t - 1, max_size=t - 1, unique=True))) if m > 1 else []
    bounds = [0, *cuts, m]
    labels = [f"x{k}" for k in range(m)]
    perm = draw(st.permutations(labels))
    levels = []
    for j in range(len(bounds) - 1):
        b = draw(st.floats(0.01, 0.49))
        a = draw(st.floats(b + 0.01, 0.99))
        levels.append((100.0 + j, perm[bounds[j]:bounds[j + 1]], a, b))  # u + w <= 2 ln 99 < 100
    return make_plan(levels, labels=labels)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=small_plans(), seed=st.integers(0, 2**32 - 1), n=st.integers(1, 300))
def test_property_reports_shape_and_estimator_formula(plan, seed, n):
    m = mechanisms.load(plan)
    rng = np.random.default_rng(seed)
    items = rng.integers(0, m.m, n)
    rep = m.perturb(items, rng)
    assert rep.bits.shape == (n, (m.width + 7) // 8)
    y = rep.unpack(m.width)
    pad = np.unpackbits(rep.bits, axis=1, bitorder="little")[:, m.width:]
    assert not pad.any()
    freq = m.estimate(rep).frequency
    np.testing.assert_allclose(freq * (m.a - m.b) + m.b, y.mean(axis=0), rtol=1e-12, atol=1e-12)
    # level structure: every item's (a, b) is its level's pair
    for level in plan["params"]["levels"]:
        for label in level["items"]:
            k = m.items.index(label)
            assert (m.a[k], m.b[k]) == (level["a"], level["b"])


@settings(max_examples=60, deadline=None)
@given(sets=st.lists(st.lists(st.integers(0, 4), max_size=6), max_size=8), seed=st.integers(0, 2**16))
def test_property_ps_duplicates_rejected_exactly_when_present(ps, sets, seed):
    has_dup = any(len(set(s)) < len(s) for s in sets)
    arrays = [np.array(s, dtype=np.int64) for s in sets]
    rng = np.random.default_rng(seed)
    if has_dup:
        with pytest.raises(ValueError, match="twice"):
            ps.sample_items(arrays, rng)
    else:
        sampled = ps.sample_items(arrays, rng)
        assert sampled.shape == (len(sets),)
        for s, k in zip(sets, sampled):
            assert (k in s) if k < 5 else (5 <= k < 8 and len(s) < 3)


# --------------------------------------------------------------------------- numpy-only import


def test_runtime_imports_and_runs_without_cvxpy_scipy_or_planner():
    code = (
        "import sys\n"
        "for name in ('cvxpy', 'scipy', 'ldpplan.planner', 'ldpplan.solvers', 'pydantic'):\n"
        "    sys.modules[name] = None\n"
        "import json, numpy as np\n"
        "from ldpplan import mechanisms\n"
        f"mech = mechanisms.load(json.loads({json.dumps(json.dumps(PS_PLAN))}))\n"
        "f = mech.estimate(mech.perturb([np.array([0, 1]), np.array([2])], rng=np.random.default_rng(0))).frequency\n"
        "assert f.shape == (5,)\n"
        "print('ok', type(mech).__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok IDUEPS"


# --------------------------------------------------------------------------- privacy map


def test_privacy_map_matches_brute_force_over_all_pairs():
    from ldpplan.mechanisms.idue import ldp_epsilon, level_privacy

    rng = np.random.default_rng(70)
    for _ in range(200):
        t = int(rng.integers(1, 6))
        b = rng.uniform(0.01, 0.45, t)
        a = rng.uniform(b + 0.01, 0.99)
        e = rng.uniform(0.5, 8.0, t)
        sizes = rng.integers(1, 3, t)
        u, w = np.log(a / b), np.log((1 - b) / (1 - a))
        # MinID: level i is in pairs (i, j) and (j, i), each needing min(e_i, e_j) >= u_row + w_col
        want = [max(max(u[i] + w[j], u[j] + w[i]) for j in range(t)) for i in range(t)]
        np.testing.assert_allclose(level_privacy(e, a, b, "MinID-LDP"), want, rtol=1e-12)
        # AvgID, other claims fixed: (e_i + e_j) / 2 >= u_i + w_j and >= u_j + w_i; (i, i): e_i >= u_i + w_i
        want = [max([u[i] + w[i]] + [max(2 * (u[i] + w[j]), 2 * (u[j] + w[i])) - e[j] for j in range(t) if j != i])
                for i in range(t)]
        np.testing.assert_allclose(level_privacy(e, a, b, "AvgID-LDP"), want, rtol=1e-12)
        # Lemma 1 exactly: distinct items only (a level of one item has no pair with itself)
        item_level = np.repeat(np.arange(t), sizes)
        pairs = [u[item_level[x]] + w[item_level[y]] for x in range(item_level.size) for y in range(item_level.size) if x != y]
        assert ldp_epsilon(a, b, sizes) == pytest.approx(max(pairs, default=0.0), rel=1e-12)


def test_runtime_is_immutable_with_a_useful_repr(mech, ps):
    with pytest.raises(AttributeError):
        mech.a = np.zeros(5)
    assert "IDUE(domain_size=5" in repr(mech) and "padding_length=3" in repr(ps)
    assert isinstance(mech, mechanisms.Runtime) and mech.methods == ("empirical",)
    pm = mech.privacy_map()
    assert pm["notion"] == "MinID-LDP" and set(pm["levels"]) == {"level0", "level1"}
    assert pm["epsilon"] <= math.log(4) and pm["ldp_epsilon"] > 0

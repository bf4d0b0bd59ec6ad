"""Issue 19 point 2: ``Estimate.confidence_interval`` on every runtime, its closed forms and its coverage.

* the critical value and the score interval against textbook closed forms (Wilson 1927);
* every runtime class of ``ldpplan.mechanisms.RUNTIMES``, through the runtime protocol, returns
  per-item ``(low, high)`` arrays for every estimation method (and PCKV means);
* the GLH near-zero case of the issue: a cell that 7 of 5,000 users hold, estimated near 0 with a
  plug-in ``std_error`` of ~1e-6, gets an interval that reaches 7/n;
* coverage by simulation (slow): 2,000 seeded runs per runtime class, every family, at least
  ``level - 1%`` pooled over the items and ``level - 2.5%`` (5 binomial standard errors) per item.
"""
from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from ldpplan import mechanisms, planner
from ldpplan.mechanisms._intervals import score_interval, two_sided_z
from ldpplan.mechanisms.pckv import KeyValueUsers

from _family_helpers import conformance_of, interval_specs, perturb

N_USERS = 4000
RUNS = 2000
LEVEL = 0.95


def _specs(n: int) -> dict[str, dict]:
    """A small plan per runtime class (keys: ``mechanisms.RUNTIMES``): every registered family's
    ``interval_specs(n)`` (its ``tests/test_<family>_conformance.py``)."""
    return interval_specs(n)


_RUNTIMES: dict[str, object] = {}


def _runtime(name: str):
    if name not in _RUNTIMES:
        plan = planner.make_plan(_specs(N_USERS)[name])
        assert plan["mechanism"] == name
        _RUNTIMES[name] = mechanisms.load(plan)
    return _RUNTIMES[name]


def _data(name: str, mech, n: int):
    """Users' inputs (skewed, every item held by >= 4% of users) and the true frequencies (and means).

    One item per user, unless the family's ``interval_inputs`` builds its own inputs from the items
    (key-value users with their true means, item sets).
    """
    d = mech.domain_size
    weights = np.linspace(3.0, 1.0, d)
    counts = np.floor(weights / weights.sum() * n).astype(int)
    counts[0] += n - counts.sum()
    items = np.repeat(np.arange(d), counts)
    truth = counts / n
    hook = getattr(conformance_of(name), "interval_inputs", None)
    made = None if hook is None else hook(name, items, counts, n)
    if made is None:
        return items, truth, None
    if len(made) == 3:  # the family's own truth (records: each attribute's frequencies, concatenated)
        return made[0], made[2], made[1]
    data, means = made
    return data, truth, means


def test_critical_value_is_the_normal_quantile():
    assert two_sided_z(0.95) == pytest.approx(1.959963984540054, rel=1e-12)
    assert two_sided_z(0.5) == pytest.approx(NormalDist().inv_cdf(0.75), rel=1e-12)
    for bad in (0, 1, 1.5, -0.1, float("nan"), "0.95", True, None):
        with pytest.raises(ValueError, match="level"):
            two_sided_z(bad)


def test_score_interval_is_wilson_for_a_proportion():
    """n Var = p (1 - p) (c0 = 0, c1 = 1, c2 = -1): the Wilson (1927) interval in closed form."""
    n, z = 50, two_sided_z(0.95)
    phat = np.array([0.0, 0.02, 0.3, 0.5, 1.0])
    low, high = score_interval(phat, n, 0.0, 1.0, -1.0, z=z)
    centre = (phat + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    np.testing.assert_allclose(low, centre - half, atol=1e-12)
    np.testing.assert_allclose(high, centre + half, atol=1e-12)


def test_score_interval_constant_variance_is_wald_clipped():
    z = two_sided_z(0.9)
    est = np.array([-0.5, 0.01, 0.4, 1.3])
    low, high = score_interval(est, 100, 0.04, 0.0, 0.0, z=z)
    half = z * math.sqrt(0.04 / 100)
    assert half > 0.01  # the second estimate's interval reaches below 0
    np.testing.assert_allclose(low, [0.0, 0.0, 0.4 - half, 1.0])  # outside [0, 1]: the nearest end point
    np.testing.assert_allclose(high, [0.0, 0.01 + half, 0.4 + half, 1.0])


@pytest.mark.parametrize("name", sorted(mechanisms.RUNTIMES))
def test_every_runtime_gives_intervals_through_the_protocol(name):
    mech = _runtime(name)
    data, truth, means = _data(name, mech, 600)
    reports = perturb(mech, data, np.random.default_rng(3))
    agg = mech.aggregate(reports)
    d = mech.domain_size
    for method in mech.methods:
        source = reports if method == "em" else agg  # uRAP's exact EM needs the reports
        est = mech.estimate(source, method=method)
        assert est.interval_method and "score" in est.interval_method
        for level in (0.5, 0.95, 0.999):
            low, high = est.confidence_interval(level)
            assert low.shape == high.shape == (d,) and low.dtype == np.float64
            assert np.all(0 <= low) and np.all(low <= high) and np.all(high <= 1), (name, method, low, high)
        wide = est.confidence_interval(0.999)
        narrow = est.confidence_interval(0.5)
        assert np.all(wide[0] <= narrow[0] + 1e-15) and np.all(narrow[1] <= wide[1] + 1e-15)
        doc = est.to_dict(confidence=0.9)
        assert len(doc["ci_low"]) == len(doc["ci_high"]) == d and doc["confidence"] == 0.9
        if est.mean is not None:
            mlow, mhigh = est.confidence_interval(0.95, which="mean")
            assert mlow.shape == (d,) and np.all(-1 <= mlow) and np.all(mlow <= mhigh) and np.all(mhigh <= 1)
            assert len(doc["mean_ci_low"]) == d and "delta-method" in doc["mean_interval_method"]
        else:
            with pytest.raises(ValueError, match="mean"):
                est.confidence_interval(which="mean")
        with pytest.raises(ValueError, match="which"):
            est.confidence_interval(which="frequencies")
        with pytest.raises(ValueError, match="level"):
            est.confidence_interval(1.0)


def test_interval_of_the_empirical_estimate_matches_its_variance_formula():
    """At a large n the score interval is f_hat +- z sqrt(Var(f_hat)) to first order (eq. 22 here)."""
    mech = _runtime("rr")
    items = np.repeat(np.arange(6), [200_000, 150_000, 100_000, 80_000, 40_000, 30_000])
    est = mech.estimate(mech.aggregate(mech.perturb(items, rng=np.random.default_rng(4))))
    low, high = est.confidence_interval(0.95)
    np.testing.assert_allclose((high - low) / 2, 1.959963984540054 * est.std_error, rtol=2e-3)


def test_glh_cell_estimated_near_zero_still_gets_an_honest_interval():
    """The issue's case: std_error ~1e-6 for a cell that 7 of 5,000 users hold (GLH, g ~ 2^31)."""
    spec = planner.example_spec("pie-gss")
    spec = {k: v for k, v in spec.items() if k != "g_max"} | {"mechanism": "glh", "users": 5000}
    mech = mechanisms.load(planner.make_plan(spec))
    assert mech.g > 10**8
    n, d = 5000, mech.domain_size
    items = np.concatenate([np.zeros(7, dtype=np.int64), 1 + np.arange(n - 7) % (d - 1)])
    true0 = 7 / n
    near_zero = covered = 0
    for seed in range(60):
        est = mech.estimate(mech.aggregate(mech.perturb(items, rng=np.random.default_rng(seed))))
        low, high = est.confidence_interval(0.95)
        if est.frequency[0] < 0.0005:  # every holder's report was randomised away
            near_zero += 1
            assert est.std_error[0] < 1e-5  # the plug-in standard error: the symptom
            assert high[0] >= true0, (est.frequency[0], high[0])
        covered += low[0] <= true0 <= high[0]
    assert near_zero >= 2  # the case occurs (0.7^7 = 8% of runs)
    assert covered >= 54  # >= 90% in this few-holders regime (the normal approximation is rough here)


# --------------------------------------------------------------------------- coverage (slow)
def _coverage(name: str, level: float = LEVEL, runs: int = RUNS) -> dict[str, np.ndarray]:
    mech = _runtime(name)
    data, truth, means = _data(name, mech, N_USERS)
    hits = np.zeros(mech.domain_size)
    mean_hits = np.zeros(mech.domain_size)
    for child in np.random.SeedSequence(1900 + len(name)).spawn(runs):
        est = mech.estimate(mech.aggregate(perturb(mech, data, np.random.default_rng(child))))
        low, high = est.confidence_interval(level)
        hits += (low <= truth) & (truth <= high)
        if means is not None:
            mlow, mhigh = est.confidence_interval(level, which="mean")
            mean_hits += (mlow <= means) & (means <= mhigh)
    out = {"frequency": hits / runs}
    if means is not None:
        out["mean"] = mean_hits / runs
    return out


COVERAGE: dict[str, dict] = {}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(mechanisms.RUNTIMES))
def test_coverage_is_at_least_the_level(name):
    cov = _coverage(name)
    COVERAGE[name] = cov
    se = math.sqrt(LEVEL * (1 - LEVEL) / RUNS)
    for what, per_item in cov.items():
        pooled = float(per_item.mean())
        assert pooled >= LEVEL - 0.01, f"{name} {what}: pooled coverage {pooled:.4f} (per item {per_item})"
        assert per_item.min() >= LEVEL - 5 * se, f"{name} {what}: per-item coverage {per_item}"


def test_every_family_has_a_runtime_in_the_coverage_test():
    from ldpplan.planner.families import all_families

    for fam in all_families():
        assert set(fam.plan_mechanisms) <= set(_specs(N_USERS)), fam.name


# --------------------------------------------------------------------------- the command line
def test_cli_estimate_confidence_adds_intervals(tmp_path):
    import json

    from click.testing import CliRunner

    from ldpplan.planner import write_plan
    from ldpplan.planner.cli import main

    plan = planner.make_plan(_specs(3000)["pckv-ue"])
    plan_file = tmp_path / "plan.json"
    write_plan(plan, plan_file)
    rng = np.random.default_rng(8)
    rows = [f"{u},{int(rng.integers(5))},{rng.uniform(-1, 1):.3f}" for u in range(3000)]
    (tmp_path / "kv.csv").write_text("user,key,value\n" + "\n".join(rows) + "\n", encoding="utf-8")
    runner = CliRunner()
    reports = tmp_path / "r.parquet"
    res = runner.invoke(main, ["perturb", str(plan_file), "--input", str(tmp_path / "kv.csv"), "-o", str(reports),
                               "--seed", "2"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(main, ["estimate", str(plan_file), str(reports), "--json", "--confidence", "0.9"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["confidence"] == 0.9 and "score" in out["interval_method"]
    mech = mechanisms.load(plan)
    from ldpplan.planner._reports_file import read_reports

    est = mech.estimate(mechanisms.Reports(plan["mechanism"], read_reports(reports).arrays))
    low, high = est.confidence_interval(0.9)
    mlow, mhigh = est.confidence_interval(0.9, which="mean")
    np.testing.assert_allclose(out["ci_low"], low, rtol=1e-12)
    np.testing.assert_allclose(out["ci_high"], high, rtol=1e-12)
    np.testing.assert_allclose(out["mean_ci_low"], mlow, rtol=1e-12)
    np.testing.assert_allclose(out["mean_ci_high"], mhigh, rtol=1e-12)
    assert all(lo <= f <= hi for lo, f, hi in zip(out["ci_low"], out["frequency"], out["ci_high"]))
    # without the flag the document is unchanged
    plain = json.loads(runner.invoke(main, ["estimate", str(plan_file), str(reports), "--json"]).stdout)
    assert "ci_low" not in plain and "confidence" not in plain
    # CSV and table carry the columns too
    csv_path = tmp_path / "e.csv"
    res = runner.invoke(main, ["estimate", str(plan_file), str(reports), "-o", str(csv_path), "--confidence", "0.9"])
    assert res.exit_code == 0 and csv_path.read_text().splitlines()[0] == (
        "label,frequency,count,std_error,ci_low,ci_high,mean,mean_ci_low,mean_ci_high")
    for bad in ("1", "0", "abc", "nan"):
        res = runner.invoke(main, ["estimate", str(plan_file), str(reports), "--confidence", bad])
        assert res.exit_code == 2 and "--confidence" in res.output and "Traceback" not in res.output


# --------------------------------------------------------------------------- padding and sampling
def test_idue_ps_variance_is_eq8_plus_the_sampling_variance():
    """c0 + c1 F equals s^2 n Var(c/n)/(a-b)^2 with n Var(c/n) = b(1-b) + (a-b)(1-2b) f_s - (a-b)^2 E[pi^2]
    computed from the users' sampling probabilities (sets of at most L items: pi = 1/L)."""
    mech = _runtime("idue-ps")
    L, m = mech.padding_length, mech.m
    rng = np.random.default_rng(9)
    sets = [np.sort(rng.choice(m, size=int(rng.integers(1, L + 1)), replace=False)) for _ in range(3000)]
    expected, spread = mech.sampling_probabilities(sets)  # sum pi / n and sum pi (1 - pi) / n
    est = mech.estimate(mech.perturb(sets, rng=np.random.default_rng(10)))
    a, b = mech.a[:m], mech.b[:m]
    var_counts = b * (1 - b) + (a - b) * (1 - 2 * b) * expected - (a - b) ** 2 * (expected - spread)
    exact = L * L * var_counts / (a - b) ** 2  # n Var(F_hat), F = L f_s
    v = est.variance
    np.testing.assert_allclose(v.c0 + v.c1 * L * expected, exact, rtol=1e-12)


@pytest.mark.slow
def test_pckv_padding_and_sampling_variance_and_coverage():
    """PCKV-UE with L = 2 and users holding 1 or 2 pairs: eq. (9) misses the key-sampling variance
    (L - 1) f / n; the interval's variance has it (empirical variance within 4 sd of the model) and covers."""
    n, d = 4000, 5
    spec = planner.example_spec("pckv-synthetic") | {"mechanism": "pckv-ue", "domain": d, "users": n,
                                                     "epsilon": 2.0, "padding_length": 2}
    mech = mechanisms.load(planner.make_plan(spec))
    rng = np.random.default_rng(11)
    sizes = rng.integers(1, 3, size=n)
    keys = np.concatenate([rng.choice(d, size=s, replace=False, p=np.linspace(3, 1, d) / np.linspace(3, 1, d).sum())
                           for s in sizes])
    users = KeyValueUsers(np.concatenate([[0], np.cumsum(sizes)]), keys, rng.uniform(-1, 1, keys.size))
    truth = np.bincount(keys, minlength=d) / n
    freqs, hits = [], np.zeros(d)
    for child in np.random.SeedSequence(12).spawn(RUNS):
        est = mech.estimate(mech.aggregate(mech.perturb(users, rng=np.random.default_rng(child))))
        low, high = est.confidence_interval(LEVEL)
        hits += (low <= truth) & (truth <= high)
        freqs.append(est.frequency)
    v = est.variance
    model = (v.c0 + v.c1 * truth) / n
    empirical = np.var(np.array(freqs), axis=0, ddof=1)
    assert np.all(np.abs(empirical / model - 1) <= 4 * math.sqrt(2 / (RUNS - 1))), empirical / model
    eq9 = est.std_error ** 2  # plug-in eq. (9): smaller by about (L - 1) f / n
    assert np.mean(empirical) > np.mean(eq9)
    cov = hits / RUNS
    assert cov.mean() >= LEVEL - 0.01 and cov.min() >= LEVEL - 5 * math.sqrt(LEVEL * (1 - LEVEL) / RUNS), cov

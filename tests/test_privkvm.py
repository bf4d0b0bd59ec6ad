"""PrivKVM / KVUE comparison runtimes: exact privacy on tiny domains, unbiasedness, bias, checks."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ldpplan.mechanisms import Aggregate, Reports
from ldpplan.mechanisms.pckv import KeyValueUsers
from ldpplan.planner.pckv._baselines import KVUE, PrivKVM


def _users_all_states(d: int):
    """Every user data set on d keys with values at the extremes: each key absent, +1 or -1."""
    return list(itertools.product((0, 1, -1), repeat=d))


def _worst_log_ratio(mech, d: int, **kw) -> float:
    """max over two users' data and an output (j, report) of ln Pr(out | x) / Pr(out | x')."""
    rows = []
    for x in _users_all_states(d):
        dist = {}
        for j in range(d):
            for out, pr in mech.channel_row(x[j], **kw).items():
                dist[(j, out)] = pr / d
        rows.append(dist)
    worst = 0.0
    for a, b in itertools.permutations(rows, 2):
        for out, pa in a.items():
            pb = b[out]
            if pa > 0:
                assert pb > 0
                worst = max(worst, math.log(pa / pb))
    return worst


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
def test_privkv_split_and_exact_channel_epsilon(epsilon):
    mech = PrivKVM(epsilon, 2)
    pm = mech.privacy_map()
    # PCKV Sec. 4.2: key budget epsilon/2, value budget epsilon/(2c), sequential composition = epsilon
    assert pm["epsilon1"] == pytest.approx(epsilon / 2, rel=1e-12)
    assert pm["epsilon2"] == pytest.approx(epsilon / 2, rel=1e-12)
    assert pm["epsilon"] == pytest.approx(epsilon, rel=1e-12) and pm["epsilon"] <= epsilon
    # exact worst case of the real channel (fake value 0 in round 1): eps/2 + ln(2 p2) < eps
    worst = _worst_log_ratio(mech, 2)
    p2 = math.exp(epsilon / 2) / (1 + math.exp(epsilon / 2))
    assert worst == pytest.approx(epsilon / 2 + math.log(2 * p2), rel=1e-12)
    assert worst == pytest.approx(pm["epsilon_channel"], rel=1e-12)
    assert worst < epsilon


def test_privkvm_multiround_worst_case_with_adversarial_fake_means():
    epsilon, c = 2.0, 3
    mech = PrivKVM(epsilon, 2, rounds=c)
    pm = mech.privacy_map()
    assert pm["epsilon2"] == pytest.approx(epsilon / (2 * c), rel=1e-12)
    assert pm["epsilon"] == pytest.approx(epsilon, rel=1e-12)
    worst = max(_worst_log_ratio(mech, 2, fake_means=(0.0,) + later)
                for later in itertools.product((-1.0, 1.0), repeat=c - 1))
    assert worst == pytest.approx(pm["epsilon_channel"], rel=1e-12)
    # PCKV Sec. 5.2: the later rounds compose without any saving (each adds epsilon/(2c))
    e2 = epsilon / (2 * c)
    assert worst == pytest.approx(epsilon / 2 + math.log(2 * math.exp(e2) / (1 + math.exp(e2))) + (c - 1) * e2,
                                  rel=1e-12)
    assert worst <= epsilon


@pytest.mark.parametrize("epsilon", [0.5, 2.0, 5.0])
def test_kvue_exact_channel_epsilon_is_the_whole_budget(epsilon):
    mech = KVUE(epsilon, 3)
    worst = _worst_log_ratio(mech, 3)
    assert worst == pytest.approx(epsilon, rel=1e-12) and worst <= epsilon + 1e-12
    assert mech.privacy_map()["epsilon"] == pytest.approx(worst, rel=1e-12)


def _population(n: int, d: int, rng) -> KeyValueUsers:
    sizes = rng.integers(1, 4, size=n)
    keys = np.concatenate([rng.choice(d, size=s, replace=False) for s in sizes])
    means = np.linspace(-0.8, 0.8, d)
    values = np.clip(means[keys] + rng.uniform(-0.2, 0.2, size=keys.size), -1, 1)
    indptr = np.concatenate([[0], np.cumsum(sizes)])
    return KeyValueUsers(indptr, keys, values)


def _truth(users: KeyValueUsers, d: int):
    from ldpplan.planner.pckv._model import data_model

    f, m, _, _ = data_model(users.indptr, users.keys, users.values, d)
    return f, m


@pytest.mark.parametrize("cls", [PrivKVM, KVUE])
def test_frequency_estimators_are_unbiased(cls):
    rng = np.random.default_rng(20260101)
    d, n, trials = 8, 20000, 40
    users = _population(n, d, rng)
    f, m = _truth(users, d)
    mech = cls(1.5, d)
    errs = np.array([mech.estimate(mech.aggregate(mech.perturb(users, rng)), "empirical").frequency - f
                     for _ in range(trials)])
    var = mech.predicted_mse(f, m, n)[0]  # unbiased: the MSE is the variance
    z = errs.mean(axis=0) / np.sqrt(var / trials)
    assert np.all(np.abs(z) < 4.0), z  # Bonferroni over 8 keys at ~5e-4
    assert np.mean(errs ** 2) == pytest.approx(np.mean(var), rel=0.35)


def test_privkv_mean_is_biased_toward_the_fake_zero_as_predicted():
    """PCKV Sec. 6: PrivKVM (c = 1) fakes v = 0, so E[m_hat] = f p1 m / (f p1 + (1-f)(1-p1))."""
    d, n = 4, 10 ** 8
    mech = PrivKVM(2.0, d)
    f, m = np.array([0.5, 0.2, 0.05, 0.9]), np.array([0.6, -0.4, 0.8, 0.1])
    p1, p2 = mech.p1, mech.p2
    N = np.full(d, n // d)
    plus = f * p1 * (1 + m * (2 * p2 - 1)) / 2 + (1 - f) * (1 - p1) / 2
    minus = f * p1 * (1 - m * (2 * p2 - 1)) / 2 + (1 - f) * (1 - p1) / 2
    agg = Aggregate("privkvm", n, {"sampled": N, "n1": np.rint(N * plus).astype(np.int64),
                                   "n2": np.rint(N * minus).astype(np.int64)})
    est = mech.estimate(agg, "empirical")
    np.testing.assert_allclose(est.frequency, f, atol=1e-6)
    q = f * p1 + (1 - f) * (1 - p1)
    np.testing.assert_allclose(est.mean, f * p1 * m / q, atol=1e-5)
    assert np.all(np.abs(est.mean - m)[:3] > 0.1)  # the rarer the key, the larger the pull to 0
    # virtual rounds converge to the calibrated (unbiased) mean m_1 / (1 - beta)
    many = PrivKVM(2.0, d, virtual_rounds=400).estimate(agg, "empirical")
    np.testing.assert_allclose(many.mean, m, atol=1e-4)


@pytest.mark.slow
def test_multiround_privkvm_reduces_the_fake_value_bias():
    rng = np.random.default_rng(7)
    d, n = 4, 200000
    users = _population(n, d, rng)
    f, m = _truth(users, d)
    one = np.mean([PrivKVM(8.0, d).collect(users, rng).mean for _ in range(3)], axis=0)
    many = np.mean([PrivKVM(8.0, d, rounds=4).collect(users, rng).mean for _ in range(3)], axis=0)
    assert np.mean(np.abs(many - m)) < np.mean(np.abs(one - m))


def test_aggregate_merges_and_rejects_forged_columns():
    rng = np.random.default_rng(3)
    users = _population(1000, 5, rng)
    for mech in (PrivKVM(1.0, 5), KVUE(1.0, 5)):
        r = mech.perturb(users, rng)
        cols = r.columns
        half = {k: v[:400] for k, v in cols.items()}
        rest = {k: v[400:] for k, v in cols.items()}
        merged = mech.aggregate(Reports(mech.mechanism, half)) + mech.aggregate(Reports(mech.mechanism, rest))
        whole = mech.aggregate(r)
        for k in whole.counts:
            np.testing.assert_array_equal(merged.counts[k], whole.counts[k])
        bad = dict(cols)
        bad["j"] = cols["j"].copy()
        bad["j"][0] = 5
        with pytest.raises(ValueError, match="reports.j"):
            mech.aggregate(Reports(mech.mechanism, bad))
    cols = PrivKVM(1.0, 5).perturb(users, rng).columns
    forged = dict(cols)
    forged["v"] = np.where(cols["k"] == 0, 1, cols["v"]).astype(np.int8)
    with pytest.raises(ValueError, match="reports.k/v"):
        PrivKVM(1.0, 5).aggregate(Reports("privkvm", forged))


def test_bad_arguments_and_repr():
    with pytest.raises(ValueError, match="epsilon"):
        PrivKVM(float("nan"), 4)
    with pytest.raises(ValueError, match="rounds"):
        PrivKVM(1.0, 4, rounds=0)
    with pytest.raises(ValueError, match="domain_size"):
        KVUE(1.0, 1)
    with pytest.raises(ValueError, match="method"):
        KVUE(1.0, 4).estimate(Aggregate("kvue", 1, {"sampled": np.ones(4, np.int64), "n1": np.zeros(4, np.int64),
                                                    "n2": np.zeros(4, np.int64)}), "em")
    assert "rounds=3" in repr(PrivKVM(1.0, 4, rounds=3))
    with pytest.raises(AttributeError):
        KVUE(1.0, 4).q = 0.5


def test_simulate_adds_the_papers_baselines_and_the_epsilon_sweep():
    from ldpplan.planner import api
    from ldpplan.planner._report import SimulateOptions
    from ldpplan.planner.errors import SpecError

    plan = api.make_plan({"mechanism": "pckv-ue", "epsilon": 4.0, "domain": 20, "padding_length": 1,
                          "users": 20000})
    rep = api.simulate(plan, SimulateOptions(trials=2, seed=2, extra={"epsilons": "1,4", "top": "10"}))
    names = [r["mechanism"] for r in rep.data["baselines"]]
    assert names == ["PrivKVM (c=1)", "PrivKVM (1r5v)", "PrivKVM (c=3)", "KVUE"]
    rows = {r["mechanism"]: r["all keys"] for r in rep.data["baselines"]}
    # PCKV Sec. 6: the PrivKVM variants share round 1, hence the same frequency estimate
    assert rows["PrivKVM (c=1)"]["mse_frequency"] == rows["PrivKVM (1r5v)"]["mse_frequency"] \
        == rows["PrivKVM (c=3)"]["mse_frequency"]
    assert rows["PrivKVM (c=1)"]["mse_frequency_theory"] > 0 and rows["PrivKVM (1r5v)"]["mse_frequency_theory"] is None
    sweep = rep.data["epsilon_sweep"]
    assert len(sweep) == 12 and {r["epsilon"] for r in sweep} == {1.0, 4.0}
    at4 = {r["mechanism"]: r["all keys"]["mse_frequency"] for r in sweep if r["epsilon"] == 4.0}
    assert at4["pckv-ue"] < at4["PrivKVM (c=1)"] and at4["pckv-ue"] < at4["KVUE"]  # Fig. 6a
    assert any("Fig. 6" in t.title for t in rep.tables)
    with pytest.raises(SpecError, match="epsilons"):
        api.simulate(plan, SimulateOptions(trials=1, extra={"epsilons": "0,x"}))

"""PCKV runtime: exhaustive privacy check on tiny domains, estimator statistics, protocol, input handling."""
import itertools
import json
import math
import subprocess
import sys

import numpy as np
import pytest

from ldpplan import mechanisms
from ldpplan.mechanisms import Aggregate, PlanError
from ldpplan.mechanisms.pckv import (PCKVGRR, PCKVUE, KeyValueUsers, PCKVReports, _random_signs, estimate_from_counts,
                                     to_grid)
from ldpplan.planner import api
from ldpplan.planner.pckv._allocation import composed_ratio_exact
from ldpplan.solvers import pckv as S



def _ue(eps, d, L, method="optimized"):
    pr = S.allocate("pckv-ue", eps, method=method, domain_size=d, padding_length=L)
    return PCKVUE(domain=d, a=0.5, b=to_grid(pr.b, "up"), p=to_grid(pr.p, "down"), padding_length=L)


def _grr(eps, d, L, method="optimized"):
    pr = S.allocate("pckv-grr", eps, method=method, domain_size=d, padding_length=L)
    a = to_grid(pr.a, "down")
    return PCKVGRR(domain=d, a=a, b=(1 - a) / (d + L - 1), p=to_grid(pr.p, "down"), padding_length=L)


def _sampled_distribution(S_pairs, d, L):
    """Algorithm 1: probability of each sampled (k, v), k in 0..d+L-1, v in {+1,-1}."""
    out = {}
    s = len(S_pairs)
    m = max(s, L)
    for k, vstar in S_pairs:
        for v in (1, -1):
            out[(k, v)] = out.get((k, v), 0.0) + (1 / m) * (1 + v * vstar) / 2
    for j in range(L):
        for v in (1, -1):
            out[(d + j, v)] = out.get((d + j, v), 0.0) + (1 - s / m) / L * 0.5
    return out


def _ue_output_probs(mech, S_pairs):
    d, L = mech.domain_size, mech.padding_length
    a, b, p = mech.a, mech.b, mech.p
    samp = _sampled_distribution(S_pairs, d, L)
    outs = list(itertools.product((1, -1, 0), repeat=d + L))
    probs = np.zeros(len(outs))
    for (k, v), w in samp.items():
        for i, y in enumerate(outs):
            pr = 1.0
            for j, yj in enumerate(y):
                if j == k:
                    pr *= a * p if yj == v else (a * (1 - p) if yj == -v else 1 - a)
                else:
                    pr *= b / 2 if yj != 0 else 1 - b
            probs[i] += w * pr
    return probs


def _grr_output_probs(mech, S_pairs):
    d, L = mech.domain_size, mech.padding_length
    a, b, p = mech.a, mech.b, mech.p
    samp = _sampled_distribution(S_pairs, d, L)
    outs = [(k, v) for k in range(d + L) for v in (1, -1)]
    probs = np.zeros(len(outs))
    for (k, v), w in samp.items():
        for i, (k2, v2) in enumerate(outs):
            probs[i] += w * ((a * p if v2 == v else a * (1 - p)) if k2 == k else b / 2)
    return probs


def _all_inputs(d):
    """Every key set of a d-key domain with extreme and middle values (incl. the empty set)."""
    sets = []
    for size in range(d + 1):
        for keys in itertools.combinations(range(d), size):
            for vals in itertools.product((-1.0, 0.0, 1.0), repeat=size):
                sets.append(list(zip(keys, vals)))
    return sets


@pytest.mark.parametrize("kind", ["ue", "grr"])
@pytest.mark.parametrize("L", [1, 2])
@pytest.mark.parametrize("eps,method", [(1.0, "optimized"), (2.0, "naive"), (0.7, "tight")])
def test_exhaustive_ratio_bound_tiny_domain(kind, L, eps, method):
    d = 3
    mech = (_ue if kind == "ue" else _grr)(eps, d, L, method)
    fn = _ue_output_probs if kind == "ue" else _grr_output_probs
    table = np.array([fn(mech, s) for s in _all_inputs(d)])      # (inputs, outputs)
    np.testing.assert_allclose(table.sum(axis=1), 1.0, rtol=1e-12)
    worst = float(np.max(table.max(axis=0) / table.min(axis=0)))
    bound = composed_ratio_exact(mech.mechanism, mech.a, mech.b, mech.p, d, L)
    assert worst <= float(bound) * (1 + 1e-9)
    assert math.log(worst) <= eps * (1 + 1e-9)
    # the runtime's privacy map is the same bound in float64
    assert mech.privacy_map()["epsilon"] == pytest.approx(math.log(float(bound)), rel=1e-12)
    if L == 1:   # Theorem 2/3 are tight when L = 1
        assert worst == pytest.approx(float(bound), rel=1e-9)


def test_grr_runtime_matches_exact_output_distribution():
    d, L = 3, 2
    mech = _grr(1.0, d, L)
    user = [(0, 0.5), (2, -1.0)]
    n = 200_000
    users = KeyValueUsers(np.arange(0, 2 * n + 1, 2), np.tile([0, 2], n), np.tile([0.5, -1.0], n))
    rep = mech.perturb(users, np.random.default_rng(3))
    assert isinstance(rep, PCKVReports) and len(rep) == n
    idx = rep["key"] * 2 + (rep["value"] < 0)
    emp = np.bincount(idx, minlength=2 * (d + L)) / n
    expected = _grr_output_probs(mech, user)
    z = (emp - expected) / np.sqrt(expected * (1 - expected) / n)
    assert np.max(np.abs(z)) < 5


def test_ue_runtime_matches_exact_marginals():
    d, L = 3, 1
    mech = _ue(1.0, d, L)
    n = 200_000
    users = KeyValueUsers(np.arange(n + 1), np.full(n, 1), np.full(n, 0.5))
    rep = mech.perturb(users, np.random.default_rng(4))
    assert rep["nonzero"].shape == rep["negative"].shape == (n, 1) and rep["nonzero"].dtype == np.uint8
    y = rep.unpack()
    assert y.shape == (n, d + L) and y.dtype == np.int8
    a, b, p = mech.a, mech.b, mech.p
    up = 0.75   # (1 + 0.5) / 2
    for col in range(d + L):
        for val in (1, -1):
            if col == 1:
                exp = a * (p * up + (1 - p) * (1 - up)) if val == 1 else a * (p * (1 - up) + (1 - p) * up)
            else:
                exp = b / 2
            emp = np.mean(y[:, col] == val)
            assert abs(emp - exp) < 5 * math.sqrt(exp * (1 - exp) / n)


@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
@pytest.mark.parametrize("kind", ["ue", "grr"])
def test_estimators_bias_and_variance_vs_theorem4(kind):
    d, L, n, trials = 5, 2, 20_000, 120
    mech = (_ue if kind == "ue" else _grr)(2.0, d, L)
    rng = np.random.default_rng(11)
    # users hold 1 or 2 pairs (never more than L): Theorem 4 applies exactly
    sizes = rng.integers(1, 3, size=n)
    indptr = np.concatenate([[0], np.cumsum(sizes)])
    keys = np.empty(indptr[-1], dtype=np.int64)
    keys[indptr[:-1]] = rng.integers(0, d, size=n)
    two = np.nonzero(sizes == 2)[0]
    keys[indptr[two] + 1] = (keys[indptr[two]] + rng.integers(1, d, size=two.size)) % d
    values = rng.uniform(-1, 1, size=keys.size) * 0.5 + 0.3
    users = KeyValueUsers(indptr, keys, values)
    f_true = np.bincount(keys, minlength=d) / n
    m_true = np.bincount(keys, weights=values, minlength=d) / np.bincount(keys, minlength=d)
    est_f, est_m = [], []
    for _ in range(trials):
        est = mech.estimate(mech.perturb(users, rng), method="empirical")
        est_f.append(est.frequency)
        est_m.append(est.mean)
    est_f, est_m = np.array(est_f), np.array(est_m)
    th_f, th_m = S.theorem4_mse(mech.a, mech.b, mech.p, L, n, f_true, m_true)
    # (7) is unbiased with variance (9)
    se = np.sqrt(th_f / trials)
    assert np.all(np.abs(est_f.mean(axis=0) - f_true) < 5 * se)
    ratio = est_f.var(axis=0, ddof=1) / th_f
    assert np.all((ratio > 0.6) & (ratio < 1.5))      # chi-square with 119 dof: 5-sigma band
    # (8): consistent, error within the (upper-bound) prediction of (10)-(11)
    mse_m = ((est_m - m_true) ** 2).mean(axis=0)
    assert np.all(mse_m < 1.5 * th_m)
    assert np.all(np.abs(est_m.mean(axis=0) - m_true) < 5 * np.sqrt(th_m / trials))


def test_lemma1_counts_unbiased_and_algorithm4_bounds():
    a, b, p, L, n = 0.5, 0.2, 0.8, 1, 10_000
    n1s, n2s = 3000, 1000    # true counts of sampled <k,1>, <k,-1>
    rng = np.random.default_rng(5)
    r1 = rng.multinomial(n1s, [a * p, a * (1 - p), 1 - a], size=4000)
    r2 = rng.multinomial(n2s, [a * (1 - p), a * p, 1 - a], size=4000)
    r3 = rng.multinomial(n - n1s - n2s, [b / 2, b / 2, 1 - b], size=4000)
    c = r1 + r2 + r3
    alpha, beta = a * p - b / 2, a * (1 - p) - b / 2
    det = alpha ** 2 - beta ** 2
    hat1 = (alpha * (c[:, 0] - n * b / 2) - beta * (c[:, 1] - n * b / 2)) / det
    assert abs(hat1.mean() - n1s) < 5 * hat1.std() / math.sqrt(4000)
    cor = estimate_from_counts(n, c[:, 0], c[:, 1], a, b, p, L)
    assert cor.method == "corrected"
    f, m = cor.frequency, cor.mean
    assert np.all((f >= 1 / n) & (f <= 1)) and np.all(np.abs(m) <= 1)
    emp = estimate_from_counts(n, c[:, 0], c[:, 1], a, b, p, L, method="empirical")
    fr, mr = emp.frequency, emp.mean
    # (14) equals (8) when no correction applies
    hat2 = (alpha * (c[:, 1] - n * b / 2) - beta * (c[:, 0] - n * b / 2)) / det
    cap = n * fr / L
    unclipped = (fr > 1 / n) & (fr < 1) & (hat1 >= 0) & (hat1 <= cap) & (hat2 >= 0) & (hat2 <= cap)
    assert unclipped.sum() > 3000
    np.testing.assert_allclose(m[unclipped], mr[unclipped], rtol=1e-9)    # (14) == (8) without correction
    assert abs(fr.mean() - (n1s + n2s) / n) < 5 * fr.std() / math.sqrt(4000)
    assert abs(mr.mean() - 0.5) < 0.01    # true mean (3000 - 1000) / 4000
    # std_error is eq. (9) at the clipped frequency estimate
    f0 = np.clip(fr[0], 0, 1)
    var = L * L * b * (1 - b) / (n * (a - b) ** 2) + L * f0 * (1 - a - b) / (n * (a - b))
    assert emp.std_error[0] == pytest.approx(math.sqrt(var), rel=1e-12)
    with pytest.raises(ValueError, match="corrected"):
        estimate_from_counts(n, c[0, :1], c[1, :1], a, b, p, L, method="raw")


def test_input_handling():
    mech = _ue(1.0, 4, 1)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        mech.perturb([([0], [1.5])], rng=rng)
    with pytest.raises(ValueError, match="0..3"):
        mech.perturb([([7], [0.5])], rng=rng)
    with pytest.raises(ValueError, match="distinct"):
        mech.perturb([([1, 1], [0.5, 0.2])], rng=rng)
    with pytest.raises(ValueError, match="NaN"):
        mech.perturb([([1], [float("nan")])], rng=rng)
    with pytest.raises(TypeError):
        mech.perturb([([1], [0.5])], rng=np.random.RandomState(0))
    clip = PCKVUE(domain=4, a=mech.a, b=mech.b, p=mech.p, padding_length=1, values="clip",
                  out_of_domain_keys="drop")
    rep = clip.perturb([([0, 9], [1.5, 0.0]), ([], []), ([0, 1, 2, 3], [0.1, 0.2, 0.3, 0.4])], rng=rng)
    assert rep.unpack().shape == (3, 5) and rep.dropped_pairs == 1 and len(rep) == 3
    with pytest.raises(AttributeError, match="immutable"):
        clip.a = 0.9
    grr = _grr(1.0, 4, 2)
    rep = grr.perturb([([0, 1, 2], [0.1, -0.2, 1.0])], rng=rng)   # more pairs than L: sampled 1/|S|
    assert len(rep) == 1 and 0 <= rep["key"][0] < 6 and rep["value"][0] in (-1, 1)


@pytest.mark.parametrize("columns,match", [
    ({"key": np.array([9]), "value": np.array([1], np.int8)}, "reports.key"),
    ({"key": np.array([0]), "value": np.array([0], np.int8)}, "reports.value"),
    ({"key": np.array([0.0]), "value": np.array([1], np.int8)}, "reports.key"),
    ({"key": np.array([0])}, "reports.value"),
])
def test_grr_aggregate_validates_foreign_reports(columns, match):
    grr = _grr(1.0, 4, 2)
    with pytest.raises(ValueError, match=match):
        grr.aggregate(PCKVReports("pckv-grr", columns))


def test_ue_aggregate_validates_foreign_reports():
    ue = _ue(1.0, 4, 1)
    for cols, match in [({"y": np.zeros((2, 3), np.int8)}, "shape"), ({"y": np.full((2, 5), 2, np.int8)}, "-1, 0 or 1"),
                        ({"y": np.zeros((2, 5))}, "integer")]:
        with pytest.raises(ValueError, match=match):
            ue.aggregate(PCKVReports("pckv-ue", cols))
    with pytest.raises(ValueError, match="mechanism"):
        ue.aggregate(PCKVReports("pckv-grr", {"y": np.zeros((2, 5), np.int8)}))
    with pytest.raises(ValueError, match="n1 \\+ n2"):
        ue.estimate(Aggregate("pckv-ue", 1, {"n1": [1, 1, 0, 0], "n2": [1, 0, 0, 0]}))
    with pytest.raises(ValueError, match="shape"):
        ue.estimate(Aggregate("pckv-ue", 5, {"n1": [1, 1, 0], "n2": [1, 0, 0]}))
    with pytest.raises(ValueError, match="'corrected', 'empirical'"):
        ue.estimate(Aggregate("pckv-ue", 5, {"n1": [1, 1, 0, 0], "n2": [1, 0, 0, 0]}), method="em")


@pytest.mark.parametrize("kind", ["ue", "grr"])
def test_aggregate_merges_and_round_trips(kind):
    mech = (_ue if kind == "ue" else _grr)(2.0, 6, 2)
    rng = np.random.default_rng(8)
    users = [([i % 6], [0.3]) for i in range(300)]
    r1, r2 = mech.perturb(users[:100], rng), mech.perturb(users[100:], rng)
    both = PCKVReports(mech.mechanism, {k: np.concatenate([r1[k], r2[k]]) for k in r1.columns})
    merged = mech.aggregate(r1) + mech.aggregate(r2)
    assert merged == mech.aggregate(both) and merged.n == 300
    again = Aggregate.from_dict(json.loads(json.dumps(merged.to_dict())))
    assert again == merged
    np.testing.assert_array_equal(mech.estimate(again).frequency, mech.estimate(both).frequency)
    assert mech.methods == ("corrected", "empirical")


def test_sequence_input_equals_csr_input():
    mech = _grr(1.0, 6, 2)
    users = [([0, 3], [0.5, -0.5]), ([5], [1.0]), ([], [])]
    a = mech.perturb(users, rng=np.random.default_rng(9))
    b = mech.perturb(KeyValueUsers.from_pairs(users), rng=np.random.default_rng(9))
    for k in a.columns:
        np.testing.assert_array_equal(a[k], b[k])


@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
def test_random_signs_fair_per_position_under_mt19937():
    """uniform_bits is exact under 32-bit generators: every sign position is fair, one user per call."""
    rng = np.random.Generator(np.random.MT19937(1))
    calls = 10_000
    signs = np.array([_random_signs(rng, 3) for _ in range(calls)])       # (calls, 3)
    plus = (signs == 1).mean(axis=0)
    assert set(np.unique(signs)) == {-1, 1}
    assert np.all(np.abs(plus - 0.5) < 5 * math.sqrt(0.25 / calls))
    # the same through the runtime: PCKV-UE's +-1 at positions the user does not hold, one user per call
    ue = PCKVUE(domain=3, a=0.5, b=to_grid(0.4, "up"), p=0.5, padding_length=1)
    y = np.array([ue.perturb([([0], [1.0])], rng).unpack()[0] for _ in range(2500)])   # (2500, 4)
    for col in range(1, 4):
        nonzero = y[:, col] != 0
        frac = (y[nonzero, col] == 1).mean()
        assert abs(frac - 0.5) < 5 * math.sqrt(0.25 / nonzero.sum())
        assert abs(nonzero.mean() - ue.b) < 5 * math.sqrt(ue.b * (1 - ue.b) / 2500)


def test_runtime_rejects_off_grid_parameters():
    with pytest.raises(PlanError):
        PCKVUE(domain=5, a=0.5, b=0.3, p=0.7, padding_length=1)        # 0.3 and 0.7 are not multiples of 2^-48
    with pytest.raises(PlanError):
        PCKVGRR(domain=5, a=0.5, b=0.2, p=0.75, padding_length=1)      # b != (1-a)/(d+L-1)
    with pytest.raises(PlanError):
        PCKVUE(domain=5, a=0.5, b=0.25, p=0.75, padding_length=1, values="ignore")


@pytest.mark.parametrize("mechanism", ["pckv-ue", "pckv-grr"])
def test_from_plan_accepts_a_path_and_load_equals_from_plan(tmp_path, mechanism):
    plan = api.make_plan({"mechanism": mechanism, "epsilon": 2.0, "domain": ["x", "y", "z"], "padding_length": 2})
    path = tmp_path / "plan.json"
    api.write_plan(plan, path)
    cls = PCKVUE if mechanism == "pckv-ue" else PCKVGRR
    mech = cls.from_plan(str(path))
    assert mech.labels == ["x", "y", "z"] and mech.domain_size == 3
    assert repr(mech).startswith(cls.__name__ + "(a=")
    loaded = mechanisms.load(path)
    assert type(loaded) is cls and loaded.a == mech.a
    pm = mech.privacy_map()
    assert pm["notion"] == "LDP" and pm["epsilon"] <= 2.0
    assert pm["epsilon"] == pytest.approx(plan["guarantee"]["epsilon"], rel=1e-12)
    assert pm["epsilon2"] == pytest.approx(plan["params"]["epsilon2"], rel=1e-12)


def test_mechanisms_import_without_cvxpy_or_scipy():
    code = ("import sys; sys.modules['cvxpy'] = None; sys.modules['scipy'] = None\n"
            "import ldpplan.mechanisms.pckv\n"
            "assert 'ldpplan.planner' not in sys.modules and 'ldpplan.solvers' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)

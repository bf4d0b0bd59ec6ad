"""Issue 10, item 3: every family's predicted error against a seeded simulation of its runtime.

For each registered family (``ldpplan.planner.families.all_families()``) a small plan is made
and its ``predicted`` figures are compared, in their stated units, with the runtime's own
estimator (``method="empirical"``: the papers' unbiased linear estimators the predictions are
about) on data where the prediction is exact (the worst case, or any data when the paper's
formula is affine in the data). The tolerance is 4 standard errors of the trial mean (from
the trials' own spread) plus, for predictions that are first-order approximations (PCKV's
mean estimator, ULDP's n -> infinity l1), a stated model slack.

A family registered without a case here fails :func:`test_every_family_has_a_case`.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from ldpplan import mechanisms, planner
from ldpplan.mechanisms.pckv import KeyValueUsers
from ldpplan.planner.families import all_families


def _check(name: str, predicted: float, samples, *, slack: float = 0.0, z: float = 4.0) -> None:
    """``|mean - predicted| <= z * se + slack * predicted`` (se from the trials' spread)."""
    x = np.asarray(samples, dtype=float)
    mean, se = float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))
    assert abs(mean - predicted) <= z * se + slack * abs(predicted), (
        f"{name}: simulated {mean:.6g} +- {se:.3g} (se, {x.size} trials) vs predicted {predicted:.6g}")
    # the test can fail: the prediction is resolved to a few per cent
    assert z * se + slack * abs(predicted) < 0.15 * abs(predicted), f"{name}: too few trials to test anything"


# ------------------------------------------------------------------ IDUE / IDUE-PS

def _idue_worst_items(plan) -> list[int]:
    """Items (indices) where eq. (9) / its IDUE-PS form is attained: the L (or 1) items of largest coef_c."""
    mech = mechanisms.load(plan)
    L = plan["params"]["padding_length"] or 1
    coef = (1 - mech.a[: mech.m] - mech.b[: mech.m]) / (mech.a[: mech.m] - mech.b[: mech.m])
    return [int(k) for k in np.argsort(-coef, kind="stable")[:L]]


def _idue_trials(plan, n: int, trials: int, seed: int) -> list[float]:
    mech = mechanisms.load(plan)
    items = _idue_worst_items(plan)
    m = mech.m
    f = np.zeros(m)
    f[items] = 1.0  # every user holds the same worst-case item (set)
    out = []
    for child in np.random.SeedSequence(seed).spawn(trials):
        rng = np.random.default_rng(child)
        if plan["mechanism"] == "idue":
            agg = mech.simulate_counts(np.bincount(np.full(n, items[0]), minlength=m), n, rng)
        else:
            indptr = np.arange(0, n * len(items) + 1, len(items))
            sampled = mech.sample_items((indptr, np.tile(np.sort(items), n)), rng)
            agg = mech.simulate_counts(np.bincount(sampled, minlength=mech.width), n, rng)
        est = mech.estimate(agg, "empirical").frequency
        out.append(n * float(np.sum((est - f) ** 2)))  # counts^2 per user
    return out


@pytest.mark.parametrize("example", ["health", "health-itemsets", "three-levels-itemsets"])
def test_idue_worst_case_mse_per_user(example):
    plan = planner.make_plan(planner.example_spec(example))
    value = plan["predicted"]["worst_case_mse_per_user"]["value"]
    _check(example, value, _idue_trials(plan, n=5000, trials=400, seed=10))


@pytest.mark.slow
def test_idue_ps_sampling_variance_is_part_of_the_prediction():
    """The old prediction L^2 eq. (9) (77.1 here, vs 82.0 with the sampling variance) is refuted by the simulation."""
    from ldpplan.solvers.idue import worst_case_mse as eq9

    plan = planner.make_plan(planner.example_spec("health-itemsets"))
    lv = plan["params"]["levels"]
    L = plan["params"]["padding_length"]
    old = L * L * eq9([x["a"] for x in lv], [x["b"] for x in lv], [x["size"] for x in lv])
    value = plan["predicted"]["worst_case_mse_per_user"]["value"]
    assert value - old == pytest.approx(4.92, abs=0.01)
    samples = np.array(_idue_trials(plan, n=2000, trials=6000, seed=11))
    se = samples.std(ddof=1) / math.sqrt(samples.size)
    assert samples.mean() - old > 4 * se
    _check("health-itemsets (6000 trials)", value, samples)


# ------------------------------------------------------------------ PCKV

def _pckv_trials(mechanism: str, d: int, epsilon: float, n: int, trials: int, seed: int):
    spec = planner.example_spec("pckv-synthetic") | {"mechanism": mechanism, "users": n, "domain": d,
                                                     "epsilon": epsilon}
    plan = planner.make_plan(spec)
    mech = mechanisms.load(plan)
    # the plan's priors: one pair per user, f_k = 1/d, |m_k| = 1 (the worst case of eq. 11)
    keys = np.repeat(np.arange(d), n // d)
    users = KeyValueUsers(np.arange(n + 1, dtype=np.int64), keys.astype(np.int64), np.ones(n))
    f, m = np.full(d, 1.0 / d), np.ones(d)
    mse_f, mse_m = [], []
    for child in np.random.SeedSequence(seed).spawn(trials):
        est = mech.estimate(mech.perturb(users, np.random.default_rng(child)), "empirical")
        mse_f.append(float(np.mean((est.frequency - f) ** 2)))
        mse_m.append(float(np.mean((est.mean - m) ** 2)))
    return plan, mse_f, mse_m


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", ["pckv-ue", "pckv-grr"])
def test_pckv_theorem4_mse(mechanism):
    """Theorem 4 at d = 10, epsilon = 2, n = 20,000 (PCKV estimators (7)-(8), frequency and mean units).

    The mean's eq. (10)-(11) are a delta-method expansion of the ratio estimator (8); they hold
    when every key gets many reports. At d = 100, epsilon = 1, n = 20,000 (200 users per key)
    the simulated mean MSE is 30x (PCKV-UE) above, or 70x (PCKV-GRR) below, the prediction:
    the ratio's denominator comes near zero. Not tested there (a limit of the paper's formula).
    """
    plan, mse_f, mse_m = _pckv_trials(mechanism, 10, 2.0, 20_000, 600, 20)
    _check(f"{mechanism} mse_frequency", plan["predicted"]["mse_frequency"]["value"], mse_f)
    # without priors the headline mse_mean is the worst case; the figure at the uniform assumption is beside it
    assert plan["predicted"]["mse_mean"]["case"] == "worst"
    assert plan["predicted"]["mse_mean_uniform"]["case"] == "assumption"
    _check(f"{mechanism} mse_mean_uniform", plan["predicted"]["mse_mean_uniform"]["value"], mse_m, slack=0.02)
    assert np.mean(mse_m) <= plan["predicted"]["mse_mean"]["value"]


def _answer_scale_users(n: int, d: int, zipf: float, seed: int):
    """Zipf(``zipf``) keys over ``d`` and answers 1..5 mapped to [-1, 1], skewed per key (a survey)."""
    rng = np.random.default_rng(seed)
    weights = np.arange(1, d + 1, dtype=float) ** -zipf
    keys = np.sort(rng.choice(d, size=n, p=weights / weights.sum()))
    answers = np.empty(n)
    for k in range(d):  # key k's answers lean towards 5 (frequent keys) or 1 (rare keys)
        tilt = np.linspace(2.0, -2.0, d)[k]
        probs = np.exp(tilt * np.arange(5) / 4.0)
        rows = keys == k
        answers[rows] = 1 + rng.choice(5, size=int(rows.sum()), p=probs / probs.sum())
    values = (answers - 3.0) / 2.0
    users = KeyValueUsers(np.arange(n + 1, dtype=np.int64), keys.astype(np.int64), values)
    f = np.bincount(keys, minlength=d) / n
    m = np.bincount(keys, weights=values, minlength=d) / np.maximum(np.bincount(keys, minlength=d), 1)
    return users, f, m


def _skewed_mean_mse(mechanism: str, zipf: float, trials: int, seed: int):
    d, n = 10, 20_000
    spec = planner.example_spec("pckv-synthetic") | {"mechanism": mechanism, "users": n, "domain": d, "epsilon": 2.0}
    plan = planner.make_plan(spec)
    mech = mechanisms.load(plan)
    users, f, m = _answer_scale_users(n, d, zipf, seed)
    per_key = {"corrected": [], "empirical": []}
    for child in np.random.SeedSequence(seed + 1).spawn(trials):
        agg = mech.aggregate(mech.perturb(users, np.random.default_rng(child)))
        for method in per_key:
            per_key[method].append((mech.estimate(agg, method).mean - m) ** 2)
    return plan, f, {k: np.array(v) for k, v in per_key.items()}


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", ["pckv-ue", "pckv-grr"])
def test_pckv_headline_mean_error_bounds_skewed_data(mechanism):
    """Issue 19 point 1: on skewed survey-like data the headline (worst case) bounds the measured mean MSE.

    Zipf(0.6) keys over d = 10 (every key above the plan's min_key_frequency = 0.05): the mean MSE over
    all keys, of the default (Algorithm 4) and the paper's (8) estimators, stays below the headline.
    """
    plan, f, per_key = _skewed_mean_mse(mechanism, 0.6, 200, 50)
    pred = plan["predicted"]
    floor = pred["mse_mean"]["min_key_frequency"]
    assert floor == pytest.approx(0.05) and f.min() >= floor
    for method, err in per_key.items():
        measured = float(np.mean(err))
        assert measured <= pred["mse_mean"]["value"], (method, measured, pred["mse_mean"]["value"])


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", ["pckv-ue", "pckv-grr"])
def test_pckv_headline_covers_each_key_above_the_floor(mechanism):
    """Zipf(1.2): the figure under the uniform assumption is optimistic (the issue's symptom: the default
    estimator's all-keys mean MSE is > 2x it); keys rarer than min_key_frequency are outside the
    headline's bound (stated in ``at``); every key at or above it measures below the headline."""
    plan, f, per_key = _skewed_mean_mse(mechanism, 1.2, 200, 60)
    assert float(np.mean(per_key["corrected"])) > 2 * plan["predicted"]["mse_mean_uniform"]["value"]
    pred = plan["predicted"]["mse_mean"]
    covered = f >= pred["min_key_frequency"]
    assert 0 < covered.sum() < f.size and "min_key_frequency" in pred["at"]
    for method, err in per_key.items():
        per = err.mean(axis=0)
        assert np.all(per[covered] <= pred["value"]), (method, per, f)
        assert float(per[covered].mean()) <= pred["value"]


def test_pckv_worst_case_is_the_sup_of_theorem4():
    """The headline equals Theorem 4 maximised over f in [floor, 1] and m in [-1, 1] (checked on a dense grid)."""
    from ldpplan.solvers.pckv import theorem4_mse

    plan = planner.make_plan(planner.example_spec("pckv-synthetic") | {"domain": 10, "users": 20_000, "epsilon": 2.0})
    q, pred = plan["params"], plan["predicted"]["mse_mean"]
    fgrid = np.linspace(pred["min_key_frequency"], 1.0, 20_001)
    values = [theorem4_mse(q["a"], q["b"], q["p"], 1, 20_000, fgrid, np.full_like(fgrid, m))[1].max()
              for m in np.linspace(-1, 1, 21)]
    assert pred["value"] == pytest.approx(max(values), rel=1e-9)
    # the old figure (uniform keys, |m| = 1) is the same formula at f = 1/d: the worst case is larger
    assert pred["value"] > plan["predicted"]["mse_mean_uniform"]["value"]


def test_pckv_frequency_prediction_at_the_example_scale():
    for mechanism in ("pckv-ue", "pckv-grr"):
        plan, mse_f, _ = _pckv_trials(mechanism, 100, 1.0, 20_000, 30, 21)
        _check(f"{mechanism} mse_frequency (d = 100)", plan["predicted"]["mse_frequency"]["value"], mse_f)


# ------------------------------------------------------------------ PIE (RR, GLH)

@pytest.mark.parametrize("mechanism", ["rr", "glh"])
def test_pie_l2_loss_total(mechanism):
    base = planner.example_spec("pie-gss")
    spec = base | ({"mechanism": mechanism} if mechanism == "rr" else {"g_max": 256})
    plan = planner.make_plan(spec)
    assert plan["mechanism"] == mechanism
    mech = mechanisms.load(plan)
    size, n = plan["domain"]["size"], 5000
    rng0 = np.random.default_rng(30)
    data = rng0.choice(size, size=n, p=rng0.dirichlet(np.ones(size)))
    p = np.bincount(data, minlength=size) / n
    losses = []
    for child in np.random.SeedSequence(31).spawn(60):
        est = mech.estimate(mech.perturb(data, np.random.default_rng(child)), "empirical").frequency
        losses.append(float(np.sum((est - p) ** 2)))
    # eq. 22/23 are affine in p: the prediction at the plan's n holds for any p; rescale to n users
    total = plan["predicted"]["l2_loss_total"]["value"] * plan["spec"]["users"] / n
    _check(f"PIE {mechanism} l2_loss_total", total, losses)


# ------------------------------------------------------------------ ULDP (uRR, uRAP, PUM)

@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
@pytest.mark.parametrize("example", ["uldp-urr", "uldp-urap", "uldp-pum"])
def test_uldp_worst_case_l2_and_l1(example):
    plan = planner.make_plan(planner.example_spec(example))
    mech = mechanisms.load(plan)
    size = plan["params"]["domain_size"]
    sensitive = set(plan["params"]["sensitive"])
    nonsensitive = np.array([x for x in range(size) if x not in sensitive])
    n = nonsensitive.size * 40
    data = np.repeat(nonsensitive, 40)  # p_UN: uniform over X_N, the worst case the plan states
    p = np.bincount(data, minlength=size) / n
    if example == "uldp-pum":
        # the prediction is about the common mechanism's estimate r_hat over Z = X + bots (no user has a tag,
        # so r = p padded with zeros); eq. (21) then moves the bots' (noise) mass onto X
        p = np.concatenate([p, np.zeros(len(plan["params"]["tags"]))])
    l2, l1 = [], []
    for child in np.random.SeedSequence(40).spawn(160 if example == "uldp-pum" else 40):
        reports = mech.perturb(data, np.random.default_rng(child))
        est = (mech.estimate_intermediate(reports, "empirical") if example == "uldp-pum"
               else mech.estimate(reports, "empirical")).frequency
        l2.append(n * float(np.sum((est - p) ** 2)))
        l1.append(math.sqrt(n) * float(np.sum(np.abs(est - p))))
    assert "uniform over X_N" in plan["predicted"]["l2_worst_times_n"]["at"]
    _check(f"{example} l2_worst_times_n", plan["predicted"]["l2_worst_times_n"]["value"], l2)
    # eq. (37) is the n -> infinity (normal) limit of E l1: 3% slack at finite n
    _check(f"{example} l1_worst_times_sqrt_n", plan["predicted"]["l1_worst_times_sqrt_n"]["value"], l1, slack=0.03)


# ------------------------------------------------------------------ Hadamard response

def test_hadamard_l2_total():
    # the exact total l2 error holds for every distribution (sum_x f(x) = 1): a Dirichlet draw
    plan = planner.make_plan(planner.example_spec("hadamard-gss"))
    mech = mechanisms.load(plan)
    size, n = plan["domain"]["size"], 5000
    rng0 = np.random.default_rng(32)
    data = rng0.choice(size, size=n, p=rng0.dirichlet(np.ones(size)))
    p = np.bincount(data, minlength=size) / n
    losses = [float(np.sum((mech.estimate(mech.perturb(data, np.random.default_rng(child)), "empirical").frequency
                            - p) ** 2)) for child in np.random.SeedSequence(33).spawn(60)]
    _check("Hadamard response l2_total", plan["predicted"]["l2_total_times_n"]["value"] / n, losses)


# ------------------------------------------------------------------ longitudinal (memoized)

@pytest.mark.parametrize("example", ["longitudinal-daily", "longitudinal-rappor"])
def test_longitudinal_mse_total_per_round(example):
    # each trial: a fresh population (fresh memo) reports one round; the prediction is the exact
    # per-round variance summed over the values, rescaled from the plan's users to n
    plan = planner.make_plan(planner.example_spec(example))
    mech = mechanisms.load(plan)
    size, n = plan["domain"]["size"], 2000
    rng0 = np.random.default_rng(40)
    data = rng0.choice(size, size=n, p=rng0.dirichlet(np.ones(size)))
    p = np.bincount(data, minlength=size) / n
    losses = []
    for t, child in enumerate(np.random.SeedSequence(41).spawn(300)):
        reports = mech.perturb(data, rng=np.random.default_rng(child), memo=mech.new_memo(), users=np.arange(n),
                               round=t % plan["guarantee"]["rounds"])
        losses.append(float(np.sum((mech.estimate(reports).frequency - p) ** 2)))
    total = plan["predicted"]["mse_total_per_round"]["value"] * plan["spec"]["users"] / n
    _check(f"{example} mse_total_per_round", total, losses)


CASES = {"hadamard": test_hadamard_l2_total, "idue": test_idue_worst_case_mse_per_user, "pckv": test_pckv_theorem4_mse,
         "pie": test_pie_l2_loss_total, "uldp": test_uldp_worst_case_l2_and_l1,
         "longitudinal": test_longitudinal_mse_total_per_round}


def test_every_family_has_a_case():
    names = [fam.name for fam in all_families()]
    missing = [x for x in names if x not in CASES]
    assert not missing, f"families without a predicted-vs-simulated test: {missing}"


# ------------------------------------------------------------------ PCKV: what the headline is computed at
def test_pckv_min_key_frequency_spec_key_and_verify():
    import copy

    from ldpplan.planner import verify_plan
    from ldpplan.planner.errors import SpecError

    base = planner.example_spec("pckv-synthetic") | {"domain": 10, "users": 20_000, "epsilon": 2.0}
    default = planner.make_plan(base)
    pred = default["predicted"]
    assert pred["mse_mean"]["min_key_frequency"] == pytest.approx(0.05)  # half the uniform 1/d
    assert pred["mse_mean"]["case"] == "worst" and pred["mse_frequency"]["case"] == "assumption"
    lower = planner.make_plan(base | {"min_key_frequency": 0.02})["predicted"]["mse_mean"]
    assert lower["min_key_frequency"] == 0.02 and lower["value"] > 5 * pred["mse_mean"]["value"]  # ~ 1/f^2
    # with prior frequencies the figures are at the priors: no worst case, and the floor is refused
    priors = planner.make_plan(base | {"prior_frequencies": [0.1] * 10})["predicted"]
    assert "mse_mean_uniform" not in priors and priors["mse_mean"]["case"] == "priors"
    assert priors["mse_mean"]["value"] == pytest.approx(pred["mse_mean_uniform"]["value"])
    with pytest.raises(SpecError, match="min_key_frequency"):
        planner.make_plan(base | {"prior_frequencies": [0.1] * 10, "min_key_frequency": 0.01})
    # verify recomputes the headline and what it is computed at
    for key, field, value in (("mse_mean", "value", pred["mse_mean"]["value"] / 2),
                              ("mse_mean", "min_key_frequency", 0.1), ("mse_mean", "case", "data"),
                              ("mse_mean_uniform", "value", pred["mse_mean"]["value"])):
        bad = copy.deepcopy(default)
        bad["predicted"][key][field] = value
        check = verify_plan(bad)
        assert not check.holds and f"predicted.{key}" in check.message, check.message

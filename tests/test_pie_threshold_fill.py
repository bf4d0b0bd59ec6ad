"""Issue 10, item 6: PIE's thresholded estimator follows the PIE paper (below threshold -> 0) by default.

The ULDP paper's convention (the mass left by the significant estimates spread uniformly over
the others) stays available as ``threshold_fill="uniform"``. The issue measured a 22% change
of the l2 loss at |X| = 10^5, n = 10^6, theta_RR = 1/2 (data distribution not stated). Here:
the k-ary RR at theta_RR = (e^eps - 1)/(|X| + e^eps - 1) = 1/2 (eps = ln(|X| + 1)) on Zipf(1)
data: at |X| = 10^4, n = 10^5 the uniform fill's l2 loss is 30% below the zero fill's (the
zeroed items' true mass is spread back), at the issue's instance 27% (the issue: 22%, data not
stated; both run in well under a second).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from ldpplan import mechanisms, planner
from ldpplan.planner import SimulateOptions
from ldpplan.planner.pie.simulate import SimulateOptions as PIESimulateOptions


def _rr_plan(size: int, n: int):
    eps = math.log(size + 1)  # theta_RR = 1/2
    return planner.make_plan({"mechanism": "rr", "domain": size, "users": n, "target": {"epsilon": eps}})


def _relative_change(size: int, n: int, trials: int, seed: int) -> np.ndarray:
    mech = mechanisms.load(_rr_plan(size, n))
    rng = np.random.default_rng(seed)
    w = 1.0 / np.arange(1, size + 1)
    data = rng.choice(size, size=n, p=w / w.sum())
    p = np.bincount(data, minlength=size) / n
    out = []
    for _ in range(trials):
        agg = mech.aggregate(mech.perturb(data, rng))
        zero = np.sum((mech.estimate(agg, "threshold", threshold_fill="zero").frequency - p) ** 2)
        unif = np.sum((mech.estimate(agg, "threshold", threshold_fill="uniform").frequency - p) ** 2)
        out.append((zero - unif) / zero)
    return np.array(out)


def test_defaults_are_the_pie_papers_rule():
    assert PIESimulateOptions().threshold_fill == "zero"
    mech = mechanisms.load(_rr_plan(1000, 10_000))
    rng = np.random.default_rng(1)
    data = rng.integers(0, 50, size=10_000)
    agg = mech.aggregate(mech.perturb(data, rng))
    emp = mech.estimate(agg, "empirical").frequency
    default = mech.estimate(agg, "threshold").frequency
    zero = mech.estimate(agg, "threshold", threshold_fill="zero").frequency
    unif = mech.estimate(agg, "threshold", threshold_fill="uniform").frequency
    assert np.array_equal(default, zero)
    kept = zero != 0
    assert 0 < kept.sum() < 1000 and np.array_equal(zero[kept], emp[kept])  # significant ones kept as they are
    assert np.array_equal(unif[kept], emp[kept])
    rest = unif[~kept]
    assert np.allclose(rest, rest[0]) and unif.sum() == pytest.approx(1.0, abs=1e-12)  # ULDP: sums to one
    with pytest.raises(ValueError, match="threshold_fill"):
        mech.estimate(agg, "threshold", threshold_fill="nearest")


def test_simulate_reports_the_convention():
    plan = _rr_plan(200, 2000)
    for fill, words in (("zero", "set to 0 (PIE paper"), ("uniform", "ULDP paper's convention")):
        rep = planner.simulate(plan, SimulateOptions(trials=2, seed=3, extra={"threshold_fill": fill}))
        assert words in rep.tables[0].note
        assert rep.data["options"]["threshold_fill"] == fill


def test_l2_change_small_instance():
    """|X| = 10^4, n = 10^5, theta = 1/2, Zipf(1): the fills differ by 30% of the zero fill's l2 loss."""
    d = _relative_change(10_000, 100_000, trials=20, seed=5)
    mean, se = d.mean(), d.std(ddof=1) / math.sqrt(d.size)
    assert 4 * se < 0.05
    assert abs(mean - 0.30) <= 4 * se + 0.01, (mean, se)


def test_l2_change_issue_instance():
    """The issue's |X| = 10^5, n = 10^6, theta = 1/2 on Zipf(1) data: 27% (the issue: 22%, data not stated)."""
    d = _relative_change(100_000, 1_000_000, trials=6, seed=6)
    mean, se = d.mean(), d.std(ddof=1) / math.sqrt(d.size)
    assert abs(mean - 0.27) <= 4 * se + 0.01, (mean, se)
    assert 0.15 < mean < 0.35  # the same order as the issue's 22%

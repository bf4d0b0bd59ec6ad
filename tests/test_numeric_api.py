"""``planner.n_for`` (issue 29: "and ``n_for`` in the API: the users needed at a given epsilon"): against
``solvers.numeric.n_for``, the mechanisms' closed forms written out here, and the plans it is the inverse of."""
from __future__ import annotations

import math

import pytest

from ldpplan import planner
from ldpplan.planner.errors import SpecError
from ldpplan.solvers import numeric

Z95 = 1.959963984540054  # the two-sided 95% normal quantile


def _closed_form_variance(mechanism, epsilon):
    """Worst-case variance of one report on [-1, 1] (Wang et al., ICDE 2019, Sec. III), written out."""
    e, s = math.exp(epsilon), math.exp(epsilon / 2)
    duchi = ((e + 1) / (e - 1)) ** 2  # at x = 0
    piecewise = 4 * s / (3 * (s - 1) ** 2)  # at |x| = 1
    hybrid = (s + 3) / (3 * s * (s - 1)) + (e + 1) ** 2 / (s * (e - 1) ** 2)  # alpha = 1 - e^(-eps/2), eps > eps*
    return {"duchi": duchi, "piecewise": piecewise, "hybrid": hybrid}[mechanism]


@pytest.mark.parametrize("mechanism,epsilon", [("duchi", 0.5), ("duchi", 2.0), ("piecewise", 1.0),
                                               ("piecewise", 4.0), ("hybrid", 1.0), ("hybrid", 8.0)])
def test_closed_form_n_for_is_the_solvers_and_the_fewest_users(mechanism, epsilon):
    low, high, halfwidth = -30.0, 120.0, 1.5
    n = planner.n_for(epsilon, halfwidth, low=low, high=high, mechanism=mechanism, exact=False)
    assert n == numeric.n_for(mechanism, epsilon, 2 * halfwidth / (high - low), 0.95)
    half_range = (high - low) / 2
    variance = _closed_form_variance(mechanism, epsilon)
    assert Z95 * math.sqrt(variance / n) * half_range <= halfwidth < Z95 * math.sqrt(variance / (n - 1)) * half_range


def test_numeric_is_the_planners_choice_and_confidence_counts():
    kwargs = {"low": 0, "high": 1, "exact": False}
    assert planner.n_for(0.5, 0.01, **kwargs) == planner.n_for(0.5, 0.01, mechanism="duchi", **kwargs)
    assert planner.n_for(2.0, 0.01, **kwargs) == planner.n_for(2.0, 0.01, mechanism="hybrid", **kwargs)
    sw = planner.n_for(2.0, 0.01, mechanism="square-wave", **kwargs)
    assert sw == numeric.n_for("square_wave", 2.0, 0.02, 0.95)
    # the z^2 scaling: 99% against 95%
    n99 = planner.n_for(2.0, 0.01, confidence=0.99, **kwargs)
    assert n99 / planner.n_for(2.0, 0.01, **kwargs) == pytest.approx((2.5758293035489 / Z95) ** 2, rel=1e-4)


@pytest.mark.parametrize("mechanism,epsilon", [pytest.param("numeric", 1.0, marks=pytest.mark.slow),  # 3 HM plans
                                               ("duchi", 0.5), ("piecewise", 4.0)])
def test_exact_n_for_is_the_fewest_users_the_plans_half_width_allows(mechanism, epsilon):
    low, high, halfwidth = -30, 120, 2.0
    n = planner.n_for(epsilon, halfwidth, low=low, high=high, mechanism=mechanism)
    closed = planner.n_for(epsilon, halfwidth, low=low, high=high, mechanism=mechanism, exact=False)
    assert closed <= n <= math.ceil(1.02 * closed)  # the grid channel's worst case is within 2% of the closed form
    spec = {"mechanism": mechanism, "epsilon": epsilon, "range": [low, high]}
    assert planner.make_plan(dict(spec, users=n))["predicted"]["mean_halfwidth"]["value"] <= halfwidth
    assert planner.make_plan(dict(spec, users=n - 1))["predicted"]["mean_halfwidth"]["value"] > halfwidth * (1 - 1e-9)


@pytest.mark.parametrize("kwargs,field", [
    ({"epsilon": 0.0}, "epsilon"), ({"epsilon": 11.0}, "epsilon"), ({"mean_halfwidth": -1.0}, "target.mean_halfwidth"),
    ({"mean_halfwidth": math.inf}, "target.mean_halfwidth"), ({"confidence": 1.0}, "target.confidence"),
    ({"high": -40.0}, "range"), ({"low": "0"}, "range"), ({"high": math.nan}, "range"),
    ({"mechanism": "laplace"}, "mechanism"), ({"epsilon": True}, "epsilon")])
def test_bad_values_are_refused_naming_the_spec_key(kwargs, field):
    args = {"epsilon": 1.0, "mean_halfwidth": 1.0, "low": -30.0, "high": 120.0} | kwargs
    with pytest.raises(SpecError, match=f"^{field}: "):
        planner.n_for(args.pop("epsilon"), args.pop("mean_halfwidth"), **args)

"""Sizing a numeric plan: the users needed for a mean's half-width at a given epsilon (``planner.n_for``).

The inverse of the spec's ``[target] mean_halfwidth`` (which plans epsilon at a given ``n``; issue 29:
"and ``n_for`` in the API: the users needed at a given epsilon"), exposed as ``ldpplan.planner.n_for``
beside the shuffler's ``local_epsilon_for``.
"""
from __future__ import annotations

import math
from statistics import NormalDist

from ...solvers import numeric
from ..errors import SpecError
from .plan import build_plan
from .spec import EPSILON_MAX, SPEC_MECHANISMS

__all__ = ["n_for"]


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def n_for(epsilon: float, mean_halfwidth: float, *, low: float, high: float, mechanism: str = "numeric",
          confidence: float = 0.95, exact: bool = True) -> int:
    """Users a numeric plan needs for its mean's confidence half-width at a given epsilon (the numeric family).

    The inverse of the spec's ``[target] mean_halfwidth`` (which plans epsilon at a given ``n``): the
    fewest ``n`` with ``z sqrt(V / n) <= mean_halfwidth``, ``V`` the worst-case variance of one report
    (user units squared) and ``z`` the two-sided normal quantile of ``confidence``.

    Parameters
    ----------
    epsilon : float
        Budget, nats, in (0, 10] (the family's range, ``spec.EPSILON_MAX``).
    mean_halfwidth : float
        The half-width of the mean's interval, user units (> 0).
    low, high : float
        The spec's ``range`` (values outside are clipped to it).
    mechanism : str, default ``"numeric"``
        A spec mechanism: ``"numeric"`` (the planner's choice at ``epsilon``: Duchi at or below
        ``eps* ~ 0.61``, Hybrid above), ``"duchi"``, ``"piecewise"``, ``"hybrid"`` or ``"square-wave"``.
    confidence : float, default 0.95
        In (0, 1).
    exact : bool, default True
        True: ``V`` is the plan's ``predicted.mean_variance_times_n`` (the exact grid channel, randomized
        rounding included: the plan of ``{mechanism, epsilon, range}`` is built, ~0.3 s), so a plan with
        ``users = n`` states a half-width of at most ``mean_halfwidth``; the count is rounded toward the
        safe side (a relative ``1e-12`` margin). False: the continuous mechanism's closed form,
        ``ceil(z^2 V h^-2)`` on ``[-1, 1]`` with ``h = 2 mean_halfwidth / (high - low)``
        (:func:`ldpplan.solvers.numeric.n_for`; up to ~2% fewer users than the grid channel needs).

    Returns
    -------
    int
        The number of users (>= 1).

    Raises
    ------
    SpecError
        A value out of range (named as the spec's key).

    References
    ----------
    Wang et al., ICDE 2019, Sec. III (worst-case variances of Duchi et al.'s mechanism, PM, HM);
    Li et al., SIGMOD 2020, Sec. 4 (Square Wave).

    Examples
    --------
    >>> from ldpplan import planner
    >>> planner.n_for(1.0, 2.0, low=-30, high=120, exact=False)
    23170
    """
    checks = [("epsilon", epsilon, f"must be a number in (0, {EPSILON_MAX:g}] nats", lambda v: 0 < v <= EPSILON_MAX),
              ("target.mean_halfwidth", mean_halfwidth, "must be a finite number > 0", lambda v: 0 < v < math.inf),
              ("target.confidence", confidence, "must be in (0, 1)", lambda v: 0 < v < 1),
              ("range", [low, high], "must be [low, high] with finite low < high",
               lambda v: -math.inf < v[0] < v[1] < math.inf)]
    for field, value, rule, ok in checks:
        if not all(_is_number(v) for v in (value if isinstance(value, list) else [value])) or not ok(value):
            raise SpecError(field, rule, value)
    if mechanism not in SPEC_MECHANISMS:
        raise SpecError("mechanism", f"must be one of {', '.join(SPEC_MECHANISMS)}", mechanism)
    if not exact:
        name = numeric.best_mean_mechanism(epsilon).mechanism if mechanism == "numeric" else mechanism.replace("-", "_")
        return numeric.n_for(name, float(epsilon), 2.0 * float(mean_halfwidth) / (float(high) - float(low)),
                             float(confidence))
    plan = build_plan({"mechanism": mechanism, "epsilon": epsilon, "range": [low, high]})
    variance = float(plan["predicted"]["mean_variance_times_n"]["value"])
    z = NormalDist().inv_cdf((1 + float(confidence)) / 2)
    limit = float(mean_halfwidth) * (1 - 1e-12)
    n = max(1, math.ceil(z * z * variance / limit ** 2))
    while z * math.sqrt(variance / n) > limit:
        n += 1
    while n > 1 and z * math.sqrt(variance / (n - 1)) <= limit:
        n -= 1
    return n

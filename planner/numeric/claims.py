"""The claims of a numeric plan that follow from its numbers: the solve, guarantee, predictions, baselines.

The planner writes them and the verifier recomputes and compares them (never reads them).
"""
from __future__ import annotations

import copy
import dataclasses
import math
from statistics import NormalDist
from typing import Any, Mapping

from ...mechanisms.numeric import NOTION
from ...solvers import numeric
from ...solvers._numeric_plan import (PLAN_MECHANISMS, PlannedChannel, mixture_mean_bias, mixture_worst_variance, planned_channel,
                                      solver_name)
from .._exact import float_up
from .._plan_format import predicted
from .._report import Bound, ReportFacts
from ..errors import SpecError
from .spec import EPSILON_MAX, Resolved

__all__ = ["SOURCES", "Solved", "solve", "guarantee_of", "predicted_of", "baselines_of", "report_facts",
           "report_spec"]

#: ``guarantee.sources``.
SOURCES = ("numeric mechanisms on finite grids (Duchi et al. JASA 2018; Wang et al. ICDE 2019 Sec. III; Li et al. "
           "SIGMOD 2020 Sec. 4): values clipped to [low, high], rounded at random to the input grid; epsilon = max "
           "over outputs of ln(max/min) of the integer numerators' column, exactly")
_UNIT = "squared user units x users"
_STEP = 1.0005  # a targeted epsilon grows by this factor until the exact channel reaches the half-width


@dataclasses.dataclass(frozen=True)
class Solved:
    """A spec solved: the plan mechanism, its epsilon, the channel and its exact figures ([-1, 1] units)."""

    mechanism: str
    epsilon: float
    channel: PlannedChannel
    epsilon_exact: Any
    worst_variance: float
    mean_bias: float


def _mechanism(res: Resolved, epsilon: float) -> str:
    if res.spec.mechanism != "numeric":
        return res.spec.mechanism
    return "square-wave" if res.spec.task == "distribution" else numeric.best_mean_mechanism(epsilon).mechanism


def _build(res: Resolved, epsilon: float) -> Solved:
    mechanism = _mechanism(res, epsilon)
    try:
        channel = planned_channel(mechanism, epsilon, res.spec.input_points, res.spec.output_cells, res.spec.task)
    except ValueError as exc:
        raise SpecError("output_cells", str(exc).removeprefix("cells: "), res.spec.output_cells) from None
    exact = channel.exact()
    return Solved(mechanism, epsilon, channel, exact.log_ratio, mixture_worst_variance(channel),
                  mixture_mean_bias(channel))


def _z(res: Resolved) -> float:
    confidence = res.spec.target.confidence if res.spec.target is not None else 0.95
    return NormalDist().inv_cdf((1 + float(confidence)) / 2)


def solve(res: Resolved) -> Solved:
    """The plan's numbers; for a ``[target] mean_halfwidth``, the smallest epsilon (closed form, then
    grown by 0.05% steps until the exact channel's worst-case half-width at n is at most the target).

    Raises
    ------
    SpecError
        An unreachable target or a grid the channel refuses.
    """
    if res.epsilon is not None:
        return _build(res, res.epsilon)
    target, half = res.spec.target, (res.high - res.low) / 2
    if target is None or target.mean_halfwidth is None or target.n is None:  # parse_spec guarantees them
        raise SpecError("target", "needs mean_halfwidth and n", None)
    goal, users = float(target.mean_halfwidth) / half, int(target.n)
    fixed = None if res.spec.mechanism == "numeric" else solver_name(res.spec.mechanism)
    try:
        epsilon = numeric.epsilon_for_halfwidth(fixed, goal, float(target.confidence), users, high=EPSILON_MAX)
    except ValueError:
        raise SpecError("target.mean_halfwidth", f"out of reach at n = {users} even at epsilon = {EPSILON_MAX:g} nats",
                        target.mean_halfwidth) from None
    epsilon = float(f"{epsilon:.6g}")
    for _ in range(400):
        solved = _build(res, min(epsilon, EPSILON_MAX))
        if _z(res) * math.sqrt(solved.worst_variance / users) <= goal:
            return solved
        if epsilon >= EPSILON_MAX:
            break
        epsilon = float(f"{epsilon * _STEP:.6g}")
    raise SpecError("target.mean_halfwidth", "the grid channel does not reach it", target.mean_halfwidth)


def guarantee_of(solved: Solved) -> dict[str, Any]:
    """``{"notion": "LDP", "epsilon": the exact epsilon rounded up, "sources"}``."""
    return {"notion": NOTION, "epsilon": float_up(solved.epsilon_exact), "sources": SOURCES}


def predicted_of(res: Resolved, solved: Solved) -> dict[str, Any]:
    """Worst-case variance of the mean (times n, and at n), the discretization bias bound, the closed form."""
    half = (res.high - res.low) / 2
    closed = numeric.worst_case_variance(solver_name(solved.mechanism), solved.epsilon).variance
    out = {
        "mean_variance_times_n": predicted(solved.worst_variance * half * half, _UNIT,
                                           "exact channel: max over real inputs (randomized rounding) of the "
                                           "report's variance, times ((high - low)/2)^2"),
        "closed_form_variance_times_n": predicted(closed * half * half, _UNIT,
                                                  "the continuous mechanism's worst case (Wang et al. Sec. III; "
                                                  "Li et al. Sec. 4)"),
        "mean_bias_bound": predicted(solved.mean_bias * half, "user units",
                                     "max |E[report] - x| of the grid channel (exact) + 2^-48, times (high-low)/2"),
    }
    users = res.spec.users if res.spec.users is not None else (res.spec.target.n if res.spec.target else None)
    if users is not None:
        out["mean_halfwidth"] = predicted(_z(res) * math.sqrt(solved.worst_variance / users) * half, "user units",
                                          f"z sqrt(worst variance / n), n = {users}, worst case over data")
    return out


def baselines_of(res: Resolved, solved: Solved) -> list[dict[str, Any]]:
    """Every candidate's closed-form worst-case variance of one report at the plan's epsilon."""
    half = (res.high - res.low) / 2
    return [{"name": name, "guarantee": f"{solved.epsilon:g}-LDP",
             "predicted": {"mean_variance_times_n": predicted(
                 numeric.worst_case_variance(solver_name(name), solved.epsilon).variance * half * half, _UNIT,
                 "closed form, worst case over inputs (Wang et al. Sec. III; Li et al. Sec. 4)")}}
            for name in PLAN_MECHANISMS]


def report_facts(plan: Mapping[str, Any]) -> ReportFacts:
    """What ``ldpplan report`` says about a numeric plan.

    References
    ----------
    Wang et al., ICDE 2019, Sec. III (the mechanisms and their worst-case variance).
    """
    epsilon = Bound("epsilon of one report", ("guarantee", "epsilon"), "nats", plan["guarantee"]["sources"],
                    lower_field=("verification", "epsilon_effective"),
                    lower_source="attained: ln(max/min) of the decisive column of the plan's numerators, exactly")
    users = "mean_halfwidth" in plan["predicted"]
    return ReportFacts(
        notion_words="local differential privacy: any two values a user may hold are nearly indistinguishable "
                     "from the report",
        unit_of_privacy="one report of one user's value; several reports of a user compose",
        bounds=(epsilon,), ldp_epsilon=epsilon, headline="mean_halfwidth" if users else "mean_variance_times_n",
        users_field=("spec", "users") if plan["spec"].get("users") is not None else None,
        per_user_exponent=0.0 if users else -1.0, per_user_unit=_UNIT, slack_field=("verification", "slack_nats"))


def report_spec(plan: Mapping[str, Any], *, budget: float = 1.0, users: int | None = None) -> dict[str, Any] | None:
    """The plan's spec with its budget times ``budget`` and ``users`` users (None when it cannot say it)."""
    spec = copy.deepcopy(dict(plan["spec"]))
    if "epsilon" not in spec or (users is not None and spec.get("users") is None):
        return None
    spec["epsilon"] = spec["epsilon"] * budget
    if users is not None:
        spec["users"] = int(users)
    return spec

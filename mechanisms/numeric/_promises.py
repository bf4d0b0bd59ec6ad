"""What a numeric plan's embedded spec promises, read by the runtime (stdlib + numpy only).

``load()`` refuses what ``verify`` refuses: the spec's mechanism (``"numeric"`` lets the planner
choose among the four), the declared range, the task, the input grid's size and spacing (equal steps
from -1 to 1) and the budget (``epsilon``, or a ``[target]`` whose planned epsilon is
``params.epsilon``) must be the plan's; the caller then checks the numbers' epsilon against it.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from .._plan import PlanError
from .._promises import is_int, is_number, spec_of

__all__ = ["numeric_promises", "default_input_points", "equal_grid", "DISTRIBUTION_INPUT_POINTS"]

#: the plan mechanisms (the spec may also say the family's name: the planner's choice)
_MECHANISMS = ("duchi", "piecewise", "hybrid", "square-wave")


#: the input grid of a ``task = "distribution"`` plan when the spec gives none: Li et al.'s ``d = 1024``
#: buckets (1025 points). EMS smooths across neighbouring points, so a coarse grid costs accuracy: on the
#: flights' departure delays clipped to [-43, 300] at epsilon 1, W1 of SW + EMS was 12.9 minutes on 65 points,
#: 5.3 on 257 and 2.2 on 1025 (binning + the best oracle: 3.3; docs/families/numeric.md)
DISTRIBUTION_INPUT_POINTS = 1025


def default_input_points(mechanism: str, task: str = "mean") -> int:
    """The input grid's size when the spec gives none: for the mean, Duchi's two ends (randomized
    rounding to ``{-1, 1}`` is Duchi's own first step) and 65 points (steps of 1/32) otherwise; for
    ``task = "distribution"``, :data:`DISTRIBUTION_INPUT_POINTS` (Li et al., SIGMOD 2020, Sec. 6: d = 1024)."""
    if task == "distribution":
        return DISTRIBUTION_INPUT_POINTS
    return 2 if mechanism == "duchi" else 65


def equal_grid(points: int) -> np.ndarray:
    """``points`` equally spaced inputs from -1 to 1 (``numpy.linspace``, both ends exact)."""
    return np.linspace(-1.0, 1.0, int(points))


def _range(spec: Mapping[str, Any]) -> tuple[float, float]:
    value = spec.get("range")
    if not isinstance(value, list) or len(value) != 2 or not all(is_number(v) for v in value) \
            or not float(value[0]) < float(value[1]):
        raise PlanError(f"spec.range: must be [low, high] with low < high (got {value!r:.60})")
    return float(value[0]), float(value[1])


def numeric_promises(plan: Mapping[str, Any]) -> float:
    """Check the plan against its spec; return the budget (nats) its ``guarantee.epsilon`` may not exceed.

    Raises
    ------
    PlanError
        Naming the plan field that differs from its spec.
    """
    spec, params, mechanism = spec_of(plan), plan["params"], plan["mechanism"]
    asked = spec.get("mechanism")
    if asked not in (*_MECHANISMS, "numeric") or (asked != "numeric" and asked != mechanism):
        raise PlanError(f"mechanism: must match the embedded spec ({asked!r:.40}) (got {mechanism!r:.40})")
    low, high = _range(spec)
    if (params.get("low"), params.get("high")) != (low, high):
        raise PlanError(f"params.low, params.high: must be the embedded spec.range [{low!r}, {high!r}] "
                        f"(got [{params.get('low')!r:.30}, {params.get('high')!r:.30}])")
    if params.get("task") != spec.get("task", "mean"):
        raise PlanError(f"params.task: must match the embedded spec ({spec.get('task', 'mean')!r:.30})")
    points = spec.get("input_points", default_input_points(mechanism, spec.get("task", "mean")))
    grid = params.get("input_grid")
    if not is_int(points) or not isinstance(grid, (list, tuple)) or len(grid) != points \
            or list(grid) != equal_grid(int(points)).tolist():
        raise PlanError(f"params.input_grid: must be {points!r:.20} equally spaced points from -1 to 1 "
                        "(the embedded spec's input_points)")
    if "epsilon" in spec:
        epsilon = spec["epsilon"]
        if not is_number(epsilon) or not epsilon > 0 or params.get("epsilon") != epsilon:
            raise PlanError(f"params.epsilon: must match the embedded spec ({epsilon!r:.30}) "
                            f"(got {params.get('epsilon')!r:.30})")
        return float(epsilon)
    if not isinstance(spec.get("target"), Mapping):
        raise PlanError("spec: needs epsilon or a [target] block")
    epsilon = params.get("epsilon")
    if "epsilon" in spec["target"] and spec["target"]["epsilon"] != epsilon:
        raise PlanError(f"params.epsilon: must match the embedded spec.target.epsilon "
                        f"({spec['target']['epsilon']!r:.30}) (got {epsilon!r:.30})")
    if not is_number(epsilon) or not 0 < epsilon <= 100:
        raise PlanError(f"params.epsilon: must be in (0, 100] (got {epsilon!r:.30})")
    return float(epsilon)

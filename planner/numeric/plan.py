"""Numeric planning: spec -> exact grid channel -> plan format 2.0 (verified by ``ModuleFamily.plan``)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from .._plan_format import envelope
from .._solve_once import once
from .claims import baselines_of, guarantee_of, predicted_of, solve
from .spec import parse_spec

__all__ = ["build_plan", "params_of"]


def params_of(res, solved) -> dict[str, Any]:
    """The plan's ``params`` (see :class:`ldpplan.mechanisms.numeric.NumericParams`)."""
    channel = solved.channel
    return {"epsilon": solved.epsilon, "low": res.low, "high": res.high, "clipping": "clip", "task": res.spec.task,
            "input_grid": list(channel.input_grid), "output_values": list(channel.output_values),
            "component_weights": list(channel.component_weights), "component_sizes": list(channel.component_sizes),
            "numerators": list(channel.numerators)}


def build_plan(raw: Mapping[str, Any], *, base_dir: Path | None = None) -> dict[str, Any]:
    """Solve a numeric spec into an (unverified) plan 2.0 dict.

    Returns
    -------
    dict
        ``domain``: the input grid's size (labels null); ``params``: the range and clipping rule, the
        grids and the integer numerators; ``guarantee``: the exact epsilon rounded up; ``predicted``:
        the worst-case variance of the mean, the discretization bias bound, the closed form;
        ``baselines``: every candidate's closed-form worst case at the plan's epsilon.

    Raises
    ------
    SpecError
        A bad spec, an unreachable target, a grid the channel refuses.
    """
    res = once(parse_spec, raw)
    solved = once(solve, res, memo_key=dict(raw))
    channel = solved.channel
    solver = {"name": "numeric-grid-channel", "status": "optimal", "time_seconds": 0.0,
              "certificate": {"kind": "exact-epsilon", "decisive_output": channel.exact().output,
                              "components": len(channel.component_sizes)}}
    return envelope(mechanism=solved.mechanism, domain_size=len(channel.input_grid), labels=None,
                    params=params_of(res, solved), guarantee=guarantee_of(solved),
                    predicted=predicted_of(res, solved), baselines=baselines_of(res, solved), solver=solver,
                    spec=dict(raw))

"""Hadamard-response planning: spec -> grid numbers -> plan format 2.0 (verified by ``ModuleFamily.plan``)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from ...solvers import SolverError
from ...solvers.hadamard import solve_hr
from .._plan_format import envelope
from .._solve_once import once
from ..errors import SpecError
from .claims import baselines_of, guarantee_of, predicted_of
from .spec import parse_spec

__all__ = ["build_plan"]


def build_plan(raw: Mapping[str, Any], *, base_dir: Path | None = None) -> dict[str, Any]:
    """Solve a Hadamard-response spec into an (unverified) plan 2.0 dict.

    Returns
    -------
    dict
        ``params``: ``epsilon`` (the spec's), ``domain_size`` (k), ``blocks`` (B), ``block_size`` (b),
        ``output_size`` (K = B b) and ``keep_probability`` (P, rounded down to the 2^-48 grid);
        ``guarantee``: ``notion`` LDP, ``epsilon`` = ln(P (2B-1)/(1-P)) rounded up, ``sources``;
        ``predicted``: the exact variance coefficients, the (worst-case) total l2 error (at n with
        ``users``) and the report size; ``baselines``: the k-ary RR at the same epsilon and the other
        choices of B (1, the authors' rule).

    Raises
    ------
    SpecError
        A bad spec, or an epsilon too small for the 2^-48 grid.
    """
    res = once(parse_spec, raw)
    try:
        solved = once(solve_hr, res.spec.epsilon, res.size, res.spec.blocks)
    except SolverError as exc:
        raise SpecError("epsilon", str(exc).removeprefix("epsilon: "), res.spec.epsilon) from None
    numbers = solved.extra["numbers"]
    params = {"epsilon": res.spec.epsilon, "domain_size": res.size, "blocks": numbers.blocks,
              "block_size": numbers.block_size, "output_size": numbers.output_size,
              "keep_probability": numbers.keep_probability}
    solver = {"name": solved.solver, "status": solved.status, "time_seconds": solved.time_seconds,
              "certificate": {"kind": solved.certificate.kind, **solved.certificate.details}}
    return envelope(mechanism="hr", domain_size=res.size, labels=res.labels, params=params,
                    guarantee=guarantee_of(numbers), predicted=predicted_of(numbers, res.spec.users),
                    baselines=baselines_of(numbers, res.spec.users), solver=solver, spec=dict(raw))

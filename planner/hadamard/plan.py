"""Hadamard-response planning: spec -> grid numbers -> plan format 2.0 (verified by ``ModuleFamily.plan``)."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Mapping

from ...solvers.hadamard import solve_hadamard
from .._plan_format import envelope
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
    t0 = time.perf_counter()
    res = parse_spec(raw)
    try:
        numbers = solve_hadamard(res.spec.epsilon, res.size, res.spec.blocks)
    except ValueError as exc:
        raise SpecError("epsilon", str(exc).removeprefix("epsilon: "), res.spec.epsilon) from None
    params = {"epsilon": res.spec.epsilon, "domain_size": res.size, "blocks": numbers.blocks,
              "block_size": numbers.block_size, "output_size": numbers.output_size,
              "keep_probability": numbers.keep_probability}
    solver = {"name": "closed form on the 2^-48 grid (P rounded down), exact ln(P (2B-1)/(1-P)); B by the smallest "
                      "worst-case l2 over powers of two" if res.spec.blocks == "auto" else
                      "closed form on the 2^-48 grid (P rounded down), exact ln(P (2B-1)/(1-P)); B from the spec",
              "status": "closed_form",
              "time_seconds": time.perf_counter() - t0,
              "certificate": {"kind": "closed form", "source": "Hadamard response, Acharya-Sun-Zhang AISTATS 2019"}}
    return envelope(mechanism="hr", domain_size=res.size, labels=res.labels, params=params,
                    guarantee=guarantee_of(numbers), predicted=predicted_of(numbers, res.spec.users),
                    baselines=baselines_of(numbers, res.spec.users), solver=solver, spec=dict(raw))

"""Independent verification of Hadamard-response plans: the numbers exactly, and the plan against its spec.

The channel's worst ratio is ``(P/s)/((1-P)/(K-s)) = P (2B-1)/(1-P)`` (an output in ``C_x`` outside
``C_x'``, which exists for every ``x != x'``), so epsilon-LDP is the one exact check
``P (2B-1)/(1-P) <= e^epsilon`` on the exact rational ``P`` (:func:`ldpplan.planner._exact.ratio_within`). Everything else is recomputed
from the embedded spec (the grid ``p``, ``K``, the claims, the predictions, the baselines) and
compared; a difference fails naming the field.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Mapping

from ...mechanisms.hadamard import NOTION
from ...mechanisms.hadamard._channel import GRID_STEPS, exact_epsilon
from ...solvers import SolverError
from ...solvers.hadamard import solve_hr
from .._exact import log_ratio_slack, ratio_within
from .._plan_format import validate_plan
from .._report import Verification
from .._solve_once import once
from ..errors import SpecError
from .claims import baselines_of, guarantee_of, predicted_of
from .spec import parse_spec

__all__ = ["verify"]


def _fail(message: str, **details: Any) -> Verification:
    return Verification(False, message, details)


def _spec_mismatch(plan: Mapping[str, Any]):
    """``(message, None)`` for a plan that differs from its spec, else ``(None, (resolved, numbers))``."""
    try:
        res = once(parse_spec, plan["spec"])
    except SpecError as exc:
        return f"spec: the embedded spec is invalid ({exc})", None
    if plan["mechanism"] != res.spec.mechanism:
        return f"mechanism: must match the embedded spec ({res.spec.mechanism!r}) (got {plan['mechanism']!r})", None
    if plan["domain"]["size"] != res.size or plan["domain"]["labels"] != res.labels:
        return f"domain: must be the embedded spec.domain ({res.size} items)", None
    params = plan["params"]
    expected = {"epsilon": res.spec.epsilon, "domain_size": res.size}
    for key, value in expected.items():
        if params.get(key) != value:
            return f"params.{key}: must match the embedded spec ({value!r}) (got {params.get(key)!r})", None
    try:
        numbers = once(solve_hr, res.spec.epsilon, res.size, res.spec.blocks).extra["numbers"]
    except SolverError as exc:
        return f"spec.epsilon: {exc}", None
    return None, (res, numbers)


def _numbers(params: Mapping[str, Any], numbers) -> str | None:
    """``B``, ``b``, ``K`` and the grid number ``P`` against the spec's, exactly."""
    for key in ("blocks", "block_size", "output_size"):
        if params.get(key) != getattr(numbers, key):
            return (f"params.{key}: must be {getattr(numbers, key)} for the embedded spec (blocks "
                    f"{'chosen by the smallest worst-case error' if key == 'blocks' else 'layout'}) (got {params.get(key)!r})")
    p = Fraction(params["keep_probability"])
    if (p * GRID_STEPS).denominator != 1 or not 0 < p < 1:
        return f"params.keep_probability: must be a multiple of 2^-48 in (0, 1) (got {params['keep_probability']!r})"
    if params["keep_probability"] != numbers.keep_probability:
        return (f"params.keep_probability: must be the 2^-48 grid rounding (down) of e^eps/(e^eps + 2B - 1), "
                f"{numbers.keep_probability!r} (got {params['keep_probability']!r})")
    return None


def _claims(plan: Mapping[str, Any], res, numbers) -> str | None:
    """Guarantee, predictions and baselines recomputed and compared (floats to 1e-12 relative)."""
    want_g, gu = guarantee_of(numbers), plan["guarantee"]
    if gu.get("notion") != NOTION or gu.get("sources") != want_g["sources"]:
        return f"guarantee.notion: must be {NOTION!r} with the family's sources (got {gu.get('notion')!r})"
    extra = sorted(set(gu) - set(want_g) - {"shuffled"})
    if extra:
        return f"guarantee.{extra[0]}: not a claim of a Hadamard-response plan"
    exact = exact_epsilon(plan["params"]["keep_probability"], plan["params"]["blocks"])
    claim = gu.get("epsilon")
    if isinstance(claim, bool) or not isinstance(claim, (int, float)) or Fraction(claim) < Fraction(exact):
        return (f"guarantee.epsilon: claims {claim!r} but ln(P (2B-1)/(1-P)) of the plan's numbers is {exact:.20g} "
                "(a plan never promises more than its numbers give)")
    if claim > res.spec.epsilon:
        return f"guarantee.epsilon: {claim!r} exceeds the embedded spec.epsilon = {res.spec.epsilon!r}"
    for where, got, want in (("predicted", plan["predicted"], predicted_of(numbers, res.spec.users)),
                             ("baselines", plan["baselines"], baselines_of(numbers, res.spec.users))):
        message = _compare(where, got, want)
        if message:
            return message
    return None


def _compare(where: str, got: Any, want: Any) -> str | None:
    if isinstance(want, Mapping):
        if not isinstance(got, Mapping) or set(got) != set(want):
            return f"{where}: must have the keys {sorted(want)} (got {sorted(got) if isinstance(got, Mapping) else got!r})"
        for key in want:
            message = _compare(f"{where}.{key}", got[key], want[key])
            if message:
                return message
        return None
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return f"{where}: must have {len(want)} entries"
        for i, (g, w) in enumerate(zip(got, want)):
            message = _compare(f"{where}[{i}]", g, w)
            if message:
                return message
        return None
    if isinstance(want, float) and not isinstance(got, bool) and isinstance(got, (int, float)):
        if math.isclose(got, want, rel_tol=1e-12, abs_tol=0.0):
            return None
    elif got == want and type(got) is type(want):
        return None
    return f"{where}: must equal the value recomputed from the spec ({want!r:.80}) (got {got!r:.80})"


def verify(plan: Mapping[str, Any]) -> Verification:
    """Decide epsilon-LDP of the plan's grid channel exactly and compare the plan with its spec.

    Returns
    -------
    Verification
        ``holds`` with ``epsilon_effective`` (nats) and ``slack_nats`` in ``details``, or the first
        failure naming the field.

    Raises
    ------
    PlanFormatError
        Malformed plan (the runtime's envelope reader, then the JSON Schema).
    """
    validate_plan(plan)
    mismatch, solved = _spec_mismatch(plan)
    if mismatch:
        return _fail(mismatch)
    res, numbers = solved
    message = _numbers(plan["params"], numbers) or _claims(plan, res, numbers)
    if message:
        return _fail(message)
    p, B = Fraction(plan["params"]["keep_probability"]), plan["params"]["blocks"]
    ratio = p * (2 * B - 1) / (1 - p)
    epsilon = res.spec.epsilon
    slack = log_ratio_slack(ratio, epsilon)
    details = {"epsilon_effective": float(exact_epsilon(plan["params"]["keep_probability"], B)),
               "slack_nats": float(slack), "decisive": "P (2B-1)/(1-P): an output in C_x outside C_x'"}
    if not ratio_within(ratio, epsilon):
        return _fail(f"LDP: ln(P (2B-1)/(1-P)) = {details['epsilon_effective']!r} > epsilon {epsilon!r}", **details)
    k, big_k = plan["domain"]["size"], plan["params"]["output_size"]
    msg = (f"{epsilon:g}-LDP of the Hadamard response holds exactly: ln(P (2B-1)/(1-P)) = "
           f"{details['epsilon_effective']:.15g} <= {epsilon:g} nats (slack {float(slack):.3g}); k = {k}, B = {B}, "
           f"K = {big_k}; plan matches its spec")
    return Verification(True, msg, {**details, "domain_size": k, "blocks": B, "output_size": big_k})

"""Independent verification of numeric plans: epsilon decided exactly, and the plan against its spec.

Epsilon: :func:`ldpplan.solvers._numeric_channel.exact_epsilon` on each component read back from the
plan's integer numerators (every input pair of every output: ``max/min`` of each column, a rational,
and its 50-digit logarithm); the components' outputs are disjoint, so the plan's epsilon is the
largest. Everything else is re-derived from the embedded spec (the mechanism choice, the grids, the
numerators, the claims) and compared exactly; a difference fails naming the field.
"""
from __future__ import annotations

from decimal import Decimal
from typing import Any, Mapping

from ...mechanisms.numeric import NOTION
from ...solvers._numeric_plan import components_of
from .._plan_format import validate_plan
from .._report import Verification
from .._solve_once import once
from ..errors import SpecError
from .claims import baselines_of, guarantee_of, predicted_of, solve
from .plan import params_of
from .spec import parse_spec

__all__ = ["verify"]


def _fail(message: str, **details: Any) -> Verification:
    return Verification(False, message, details)


def _against_spec(plan: Mapping[str, Any]):
    """``(message, None)`` for a plan that differs from its spec, else ``(None, (res, solved))``."""
    try:
        res = once(parse_spec, plan["spec"])
        solved = once(solve, res, memo_key=dict(plan["spec"]))
    except SpecError as exc:
        return f"spec: the embedded spec is invalid ({exc})", None
    if plan["mechanism"] != solved.mechanism:
        return f"mechanism: must be {solved.mechanism!r} for the embedded spec (got {plan['mechanism']!r})", None
    if plan["domain"]["size"] != len(solved.channel.input_grid) or plan["domain"]["labels"] is not None:
        return f"domain: must be the input grid's size {len(solved.channel.input_grid)} with no labels", None
    want, got = params_of(res, solved), plan["params"]
    for key in want:
        if got.get(key) != want[key]:
            return (f"params.{key}: must be the value re-derived from the embedded spec "
                    f"({'a list' if isinstance(want[key], list) else repr(want[key])})"), None
    if set(got) != set(want):
        return f"params: unknown fields {sorted(set(got) - set(want))}", None
    for where, value, expected in (("predicted", plan["predicted"], predicted_of(res, solved)),
                                   ("baselines", plan["baselines"], baselines_of(res, solved))):
        if value != expected:
            return f"{where}: must equal the values recomputed from the spec", None
    return None, (res, solved)


def verify(plan: Mapping[str, Any]) -> Verification:
    """Decide epsilon-LDP of the plan's grid channel exactly and compare the plan with its spec.

    Returns
    -------
    Verification
        ``holds`` with ``epsilon_effective`` (nats) and ``slack_nats``, or the first failure naming the field.

    Raises
    ------
    PlanFormatError
        Malformed plan (the envelope reader, then the JSON Schema).
    """
    validate_plan(plan)
    mismatch, solved_pair = _against_spec(plan)
    if mismatch:
        return _fail(mismatch)
    res, solved = solved_pair
    p = plan["params"]
    channel = components_of(plan["mechanism"], p["epsilon"], p["input_grid"], p["output_values"],
                            p["component_weights"], p["component_sizes"], p["numerators"])
    try:
        exact = channel.exact()
    except (ValueError, ArithmeticError) as exc:
        return _fail(f"params.numerators: {exc}")
    gu, want = plan["guarantee"], guarantee_of(solved)
    if gu.get("notion") != NOTION or gu.get("sources") != want["sources"]:
        return _fail(f"guarantee.notion: must be {NOTION!r} with the family's sources")
    if sorted(set(gu) - set(want) - {"shuffled"}):
        return _fail(f"guarantee.{sorted(set(gu) - set(want) - {'shuffled'})[0]}: not a claim of a numeric plan")
    claim = gu.get("epsilon")
    details = {"epsilon_effective": float(exact.log_ratio), "slack_nats": float(Decimal(p["epsilon"]) - exact.log_ratio),
               "decisive": f"output {exact.output}: inputs {exact.high_input} and {exact.low_input}"}
    if isinstance(claim, bool) or not isinstance(claim, (int, float)) or Decimal(claim) < exact.log_ratio:
        return _fail(f"guarantee.epsilon: claims {claim!r} but the numerators give {exact.log_ratio:.20g} "
                     "(a plan never promises more than its numbers give)", **details)
    if not exact.holds or claim > p["epsilon"]:
        return _fail(f"LDP: ln(ratio) = {exact.log_ratio:.20g} or the claim {claim!r} exceeds epsilon "
                     f"{p['epsilon']!r}", **details)
    msg = (f"{p['epsilon']:g}-LDP of {plan['mechanism']} on the grid holds exactly: ln(max/min) = "
           f"{float(exact.log_ratio):.15g} <= {p['epsilon']:g} nats; k = {len(p['input_grid'])}, "
           f"m = {len(p['output_values'])}; values clipped to [{res.low:g}, {res.high:g}]; plan matches its spec")
    return Verification(True, msg, details)

"""What a longitudinal plan's embedded spec promises, read by the runtime (stdlib + numpy only).

Spec keys (``planner/longitudinal/spec.py``): ``mechanism`` (a plan mechanism or ``"auto"``),
``domain``, ``epsilon_perm``, ``epsilon_1``, ``rounds``, ``max_changes``. The plan's mechanism,
domain, rounds and changes must be the spec's, and its claimed budgets at most the spec's.
"""
from __future__ import annotations

from typing import Any, Mapping

from .._plan import PlanError, integer, number
from .._promises import spec_domain, spec_of

__all__ = ["longitudinal_promises"]


def longitudinal_promises(plan: Mapping[str, Any]) -> None:
    """Raise :class:`PlanError` naming the plan field that contradicts the embedded spec."""
    spec = spec_of(plan)
    mech = spec.get("mechanism")
    if mech not in ("auto", plan["mechanism"]):
        raise PlanError(f"mechanism: must match the embedded spec ({mech!r:.40}) (got {plan['mechanism']!r:.40})")
    size, labels = spec_domain(spec.get("domain"), "spec.domain")
    if plan["domain"]["size"] != size or plan["domain"]["labels"] != labels:
        raise PlanError(f"domain: must be the embedded spec's domain (size {size})")
    gu = plan["guarantee"]
    for key in ("rounds", "max_changes"):
        want = integer(spec.get(key, 1), f"spec.{key}", low=1)
        if integer(gu.get(key), f"guarantee.{key}", low=1) != want:
            raise PlanError(f"guarantee.{key}: must match the embedded spec ({want}) (got {gu.get(key)!r:.40})")
    for key in ("epsilon_perm", "epsilon_1"):
        cap = number(spec.get(key), f"spec.{key}", low=0.0, low_open=True)
        if number(gu.get(key), f"guarantee.{key}", low=0.0) > cap:
            raise PlanError(f"guarantee.{key}: {gu.get(key)!r} exceeds the embedded spec.{key} = {cap!r}")

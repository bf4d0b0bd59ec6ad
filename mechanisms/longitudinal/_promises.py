"""What a longitudinal plan's embedded spec promises, read by the runtime (stdlib + numpy only).

Spec keys (``planner/longitudinal/spec.py``): ``mechanism`` (a plan mechanism or ``"auto"``),
``domain``, ``epsilon_perm``, ``epsilon_1``, ``rounds``, ``max_values`` (or its deprecated spelling
``max_changes``), ``target.epsilon_lifetime``. The plan's mechanism, domain, rounds and values must be the
spec's, its claimed budgets at most the spec's, and its ``epsilon_lifetime`` at most a target.
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
    values_key = "max_changes" if "max_changes" in spec and "max_values" not in spec else "max_values"
    for key, spec_key in (("rounds", "rounds"), ("max_values", values_key)):
        want = integer(spec.get(spec_key, 1), f"spec.{spec_key}", low=1)
        if integer(gu.get(key), f"guarantee.{key}", low=1) != want:
            raise PlanError(f"guarantee.{key}: must match the embedded spec ({want}) (got {gu.get(key)!r:.40})")
    target = spec.get("target")
    if target is not None:
        if not isinstance(target, dict):
            raise PlanError("spec.target: must be a table with epsilon_lifetime")
        cap = number(target.get("epsilon_lifetime"), "spec.target.epsilon_lifetime", low=0.0, low_open=True)
        if number(gu.get("epsilon_lifetime"), "guarantee.epsilon_lifetime", low=0.0) > cap:
            raise PlanError(f"guarantee.epsilon_lifetime: {gu.get('epsilon_lifetime')!r} exceeds the embedded "
                            f"spec.target.epsilon_lifetime = {cap!r}")
    for key in ("epsilon_perm", "epsilon_1"):
        cap = number(spec.get(key), f"spec.{key}", low=0.0, low_open=True)
        if number(gu.get(key), f"guarantee.{key}", low=0.0) > cap:
            raise PlanError(f"guarantee.{key}: {gu.get(key)!r} exceeds the embedded spec.{key} = {cap!r}")

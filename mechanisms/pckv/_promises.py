"""What a PCKV plan's embedded spec promises, read by the runtime (numpy + stdlib only).

The spec keys that determine the guarantee: mechanism, epsilon, the domain, the padding length. See :mod:`ldpplan.mechanisms._promises`.
"""
from __future__ import annotations

from typing import Any, Mapping

from .._plan import PlanError
from .._promises import spec_of, spec_domain, same, is_int, is_number, check_domain

__all__ = ["pckv_promises"]


def pckv_promises(plan: Mapping[str, Any], d: int, padding_length: int) -> float:
    """Check a PCKV plan's mechanism, domain and padding length against its spec; return ``spec.epsilon``.

    The caller checks the numbers' composed epsilon against the returned budget.
    """
    spec = spec_of(plan)
    mech = spec.get("mechanism")
    if mech not in ("pckv", plan["mechanism"]):
        raise PlanError(f"mechanism: must match the embedded spec ({mech!r:.40}) (got {plan['mechanism']!r})")
    epsilon = spec.get("epsilon")
    if not is_number(epsilon) or not 0 < epsilon <= 20:
        raise PlanError(f"spec.epsilon: must be a number in (0, 20] (got {epsilon!r:.40})")
    field = "keys" if spec.get("domain") is None and "keys" in spec else "domain"
    value = spec.get(field)
    if value == "data":
        if plan["domain"]["labels"] is None:
            raise PlanError(f"domain.labels: a spec.{field} = \"data\" plan must list the data's keys")
    else:
        size, labels = spec_domain(value, f"spec.{field}")
        check_domain(plan, size, labels, f"spec.{field}")
    same("params.domain_size", d, plan["domain"]["size"])
    L = spec.get("padding_length", 1)
    if is_int(L):
        same("params.padding_length", padding_length, int(L))
    else:
        private = L.get("private") if isinstance(L, Mapping) else None
        bound = private.get("max") if isinstance(private, Mapping) else spec.get("max_padding_length", 64)
        if L != "auto" and private is None:
            raise PlanError(f"spec.padding_length: must be an integer, \"auto\" or {{private = ...}} (got {L!r:.40})")
        if not is_int(bound) or padding_length > bound:
            raise PlanError(f"params.padding_length: must be <= the spec's bound {bound!r:.40} (got {padding_length})")
    return float(epsilon)

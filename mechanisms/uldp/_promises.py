"""What a ULDP (urr/urap/pum) plan's embedded spec promises, read by the runtime (numpy + stdlib only).

The spec keys that determine the guarantee: mechanism, epsilon, the domain, the sensitive set, PUM's tags and
common mechanism. See :mod:`ldpplan.mechanisms._promises`.
"""
from __future__ import annotations

from typing import Any, Mapping

from .._plan import PlanError
from .._promises import spec_of, spec_domain, same, is_int, is_number, check_domain

__all__ = ["uldp_promises"]


def _uldp_sensitive(value: Any, size: int, labels: list[str] | None) -> list[int]:
    if is_int(value):
        if not 1 <= value <= size:
            raise PlanError(f"spec.sensitive: must be a count in [1, {size}] (got {value})")
        return list(range(int(value)))
    if not isinstance(value, list) or not value:
        raise PlanError("spec.sensitive: must be a count or a non-empty list of items")
    index = {lab: k for k, lab in enumerate(labels)} if labels is not None else None
    idx = []
    for j, item in enumerate(value):
        k = index.get(str(item), -1) if index is not None else (int(item) if is_int(item) else -1)
        if not 0 <= k < size:
            raise PlanError(f"spec.sensitive[{j}]: must be an item of the spec's domain (got {item!r:.40})")
        idx.append(k)
    if len(set(idx)) != len(idx):
        raise PlanError("spec.sensitive: must list distinct items")
    return sorted(idx)


def uldp_promises(plan: Mapping[str, Any]) -> float:
    """Check a ULDP plan's mechanism, domain, sensitive set (params and guarantee) and PUM tags
    against its spec; return ``spec.epsilon`` (the caller checks the numbers against it)."""
    spec = spec_of(plan)
    same("mechanism", plan["mechanism"], spec.get("mechanism"))
    epsilon = spec.get("epsilon")
    if not is_number(epsilon) or not epsilon > 0:
        raise PlanError(f"spec.epsilon: must be a number > 0 (got {epsilon!r:.40})")
    size, labels = spec_domain(spec.get("domain"), "spec.domain")
    check_domain(plan, size, labels, "spec.domain")
    sensitive = _uldp_sensitive(spec.get("sensitive"), size, labels)
    same("params.sensitive", sorted(plan["params"].get("sensitive") or []), sensitive)
    same("guarantee.sensitive", sorted(plan["guarantee"].get("sensitive") or []), sensitive)
    if spec.get("mechanism") == "pum":
        same("params.tags", plan["params"].get("tags"), spec.get("tags"))
        same("params.common", plan["params"].get("common"), spec.get("common") or "urr")
    return float(epsilon)

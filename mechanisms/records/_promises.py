"""What a record plan's embedded spec promises, read by the runtime (stdlib + numpy only).

``load()`` refuses what ``verify`` refuses: the spec's ``mechanism`` (``"records"``: the planner's
choice among ``spl``, ``smp``, ``rsfd``; else that scheme), ``epsilon`` and every attribute's
``name``, ``domain`` and ``oracle`` (unless ``"auto"``) must be the plan's, and the plan's domain
must be the concatenation of the attributes' domains as labels ``name=value``.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from .._plan import PlanError
from .._promises import spec_domain, spec_of

__all__ = ["record_promises", "record_labels", "AUTO"]

#: the spec mechanism that lets the planner choose the scheme
AUTO = "records"


def record_labels(name: str, size: int, labels: list[str] | None) -> list[str]:
    """The concatenated-domain labels of one attribute: ``name=value`` (``value`` a label or ``0 .. k-1``)."""
    return [f"{name}={x}" for x in (labels if labels is not None else range(size))]


def record_promises(plan: Mapping[str, Any], params: Any) -> float:
    """Check the plan's mechanism, epsilon, attributes and domain against its spec; return ``spec.epsilon``.

    Raises
    ------
    PlanError
        Naming the plan field that differs from its spec.
    """
    spec = spec_of(plan)
    mech = spec.get("mechanism")
    if mech != plan["mechanism"] and mech != AUTO:
        raise PlanError(f"mechanism: must match the embedded spec ({mech!r:.40}) (got {plan['mechanism']!r:.40})")
    epsilon = spec.get("epsilon")
    if isinstance(epsilon, (bool, np.bool_)) or not isinstance(epsilon, (int, float)) or not epsilon > 0:
        raise PlanError(f"spec.epsilon: must be a number > 0 (got {epsilon!r:.40})")
    if params.epsilon != epsilon:
        raise PlanError(f"params.epsilon: must match the embedded spec ({epsilon!r}) (got {params.epsilon!r:.40})")
    attributes = spec.get("attributes")
    if not isinstance(attributes, list) or len(attributes) != len(params.names):
        raise PlanError(f"params.names: must list the {len(attributes) if isinstance(attributes, list) else '?'} "
                        "attributes of the embedded spec")
    labels: list[str] = []
    for j, attribute in enumerate(attributes):
        if not isinstance(attribute, Mapping) or attribute.get("name") != params.names[j]:
            raise PlanError(f"params.names[{j}]: must be the embedded spec's attribute name "
                            f"({attribute.get('name') if isinstance(attribute, Mapping) else None!r:.40})")
        size, values = spec_domain(attribute.get("domain"), f"spec.attributes[{j}].domain")
        if params.domain_sizes[j] != size:
            raise PlanError(f"params.domain_sizes[{j}]: must match the embedded spec ({size}) "
                            f"(got {params.domain_sizes[j]!r:.40})")
        oracle = attribute.get("oracle", "auto")
        if oracle != "auto" and params.oracles[j] != oracle:
            raise PlanError(f"params.oracles[{j}]: must match the embedded spec ({oracle!r:.40}) "
                            f"(got {params.oracles[j]!r:.40})")
        labels.extend(record_labels(str(params.names[j]), size, values))
    if plan["domain"]["size"] != len(labels) or plan["domain"]["labels"] != labels:
        raise PlanError("domain.labels: must be the embedded spec's attribute domains, concatenated as 'name=value'")
    return float(epsilon)

"""What a Hadamard-response plan's embedded spec promises, read by the runtime (stdlib + numpy only).

``load()`` refuses what ``verify`` refuses: the spec's ``mechanism``, ``epsilon``, ``domain`` and
``blocks`` (a number, or ``"auto"``: the planner's rule, recomputed by :func:`._channel.auto_blocks`)
must be the plan's; the caller then checks the numbers' epsilon against the spec's budget.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from .._plan import PlanError
from .._promises import spec_domain, spec_of
from ._channel import auto_blocks

__all__ = ["hadamard_promises"]


def hadamard_promises(plan: Mapping[str, Any]) -> float:
    """Check the plan's mechanism, epsilon and domain against its spec; return ``spec.epsilon`` (nats).

    Raises
    ------
    PlanError
        Naming the plan field that differs from its spec.
    """
    spec = spec_of(plan)
    if spec.get("mechanism") != plan["mechanism"]:
        raise PlanError(f"mechanism: must match the embedded spec ({spec.get('mechanism')!r:.40}) "
                        f"(got {plan['mechanism']!r:.40})")
    epsilon = spec.get("epsilon")
    if isinstance(epsilon, (bool, np.bool_)) or not isinstance(epsilon, (int, float)) or not epsilon > 0:
        raise PlanError(f"spec.epsilon: must be a number > 0 (got {epsilon!r:.40})")
    if plan["params"].get("epsilon") != epsilon:
        raise PlanError(f"params.epsilon: must match the embedded spec ({epsilon!r}) "
                        f"(got {plan['params'].get('epsilon')!r:.40})")
    size, labels = spec_domain(spec.get("domain"), "spec.domain")
    blocks = spec.get("blocks", "auto")
    if blocks == "auto" and size >= 2:
        blocks = auto_blocks(epsilon, size)
    if plan["params"].get("blocks") != blocks:
        raise PlanError(f"params.blocks: must match the embedded spec ({spec.get('blocks', 'auto')!r:.40}: "
                        f"{blocks!r:.40}) (got {plan['params'].get('blocks')!r:.40})")
    if plan["domain"]["size"] != size:
        raise PlanError(f"domain.size: must match the embedded spec ({size}) (got {plan['domain']['size']!r:.40})")
    if plan["domain"]["labels"] != labels:
        raise PlanError(f"domain.labels: must be the labels of the embedded spec.domain "
                        f"({'none' if labels is None else len(labels)})")
    return float(epsilon)

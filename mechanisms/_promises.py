"""What a plan's embedded spec promises, read by the runtime itself (numpy + stdlib only).

``load()`` must refuse what ``verify`` refuses, and a plan whose ``params``, ``guarantee``
and ``domain`` were rewritten *consistently* still contradicts the spec it embeds. The
planner's spec models (pydantic) are not available on a client, so each family has a small
reader of the spec keys that determine the guarantee in its own package
(``mechanisms/<family>/_promises.py``, built on the shared readers here; the planner's spec
modules document the keys):

* IDUE / IDUE-PS: mechanism, notion, padding length, the domain and every item's level and
  epsilon (``items`` per level, or ``share`` + ``domain`` + ``assignment_seed``);
* PCKV: mechanism, epsilon, the domain, the padding length;
* PIE (rr/glh): mechanism, the domain, n, releases, the prior bound, ``g_max`` and the target;
* ULDP (urr/urap/pum): mechanism, epsilon, the domain, the sensitive set, PUM's tags and
  common mechanism.

Each reader raises :class:`PlanError` naming the plan field that differs from its spec.
"""
from __future__ import annotations

from typing import Any, Mapping, TypeGuard

import numpy as np

from ._envelope import MAX_DOMAIN_SIZE
from ._plan import PlanError

__all__ = ["spec_of", "spec_domain", "same", "is_int", "is_number", "check_domain", "recorded"]


def spec_of(plan: Mapping[str, Any]) -> Mapping[str, Any]:
    """The embedded spec (an object), with no file references (plans embed their files inlined)."""
    spec = plan.get("spec")
    if not isinstance(spec, Mapping):
        raise PlanError("spec: must be the object the plan was solved from")
    return spec


def is_int(x: object) -> TypeGuard[int | np.integer[Any]]:
    """An integer (numpy too), not a bool (a type guard: ``x`` is an integer where it holds)."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def is_number(x: object) -> TypeGuard[float | np.integer[Any] | np.floating[Any]]:
    """A real number (numpy too), not a bool (a type guard: ``x`` is a number where it holds)."""
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


def same(field: str, plan_value: Any, spec_value: Any) -> None:
    """PlanError unless the plan's value equals the spec's."""
    if plan_value != spec_value:
        raise PlanError(f"{field}: must match the embedded spec ({spec_value!r:.80}) (got {plan_value!r:.80})")


def spec_domain(value: Any, field: str, high: int = MAX_DOMAIN_SIZE) -> tuple[int, list[str] | None]:
    """``(size, labels)`` of a spec domain: a count (labels None) or a list of distinct labels.

    The count is bounded by ``high`` (the runtime class's ``PLAN_FIELDS.max_domain``, default
    :data:`MAX_DOMAIN_SIZE`) before anything is allocated.
    """
    if is_int(value):
        if not 1 <= int(value) <= high:
            raise PlanError(f"{field}: must be a count in 1..{high} (got {value!r:.40})")
        return int(value), None
    if isinstance(value, list) and len(value) <= MAX_DOMAIN_SIZE:
        labels = [str(x) for x in value]
        if len(set(labels)) != len(labels):
            raise PlanError(f"{field}: labels must be distinct")
        return len(labels), labels
    raise PlanError(f"{field}: must be a count or a list of labels (got {type(value).__name__})")


def check_domain(plan: Mapping[str, Any], size: int, labels: list[str] | None, field: str) -> None:
    """The plan's ``domain`` is the spec's (size, then labels)."""
    same("domain.size", plan["domain"]["size"], size)
    if plan["domain"]["labels"] != labels:
        raise PlanError(f"domain.labels: must be the labels of the embedded {field} "
                        f"({'none' if labels is None else len(labels)})")


def recorded(plan: Mapping[str, Any], what: str) -> Any:
    """The value a plan records in ``planning_inputs`` for ``what`` (a number the spec read from a data file)."""
    for entry in plan["planning_inputs"] if isinstance(plan["planning_inputs"], list) else ():
        if isinstance(entry, Mapping) and entry.get("what") == what:
            return entry.get("value")
    raise PlanError(f"planning_inputs: the spec reads {what!r} from a data file; the plan must record its value")

"""The one registry of mechanism families: the rooms, imported by name in one line.

A *family* is one paper's mechanisms (IDUE, PCKV, PIE, ULDP, ...). Each is a planner room
``ldpplan.planner.<family>`` with the same public modules (``spec``, ``plan``, ``verify``,
``claims``, ``inputs``, ``simulate``, ``tables``, ``audit``) whose ``__init__`` declares ``FAMILY``
(a :class:`ModuleFamily` holding direct references to those modules' functions and to the runtime
package's ``RUNTIME_CLASSES``), and a runtime package ``ldpplan.mechanisms.<family>`` listed in the
runtime's own registry line (``ldpplan.mechanisms.RUNTIME_PACKAGES``: the runtime imports
nothing of the planner). A new family is those two rooms, a schema part, and one entry in each
registry line: :func:`_registry_line` here (its ``from . import`` and tuple) and ``RUNTIME_PACKAGES``
(``docs/ARCHITECTURE.md``, "A new family"); the conformance test (``tests/test_conformance.py``)
then runs it through spec -> plan -> verify -> load -> perturb -> aggregate -> merge -> estimate ->
simulate. The protocol and the family class live in :mod:`._family` (below the rooms).
"""
from __future__ import annotations

from typing import Any, Mapping

from ._family import Family, ModuleFamily, Room
from .errors import PlanFormatError, SpecError

__all__ = ["Family", "ModuleFamily", "Room", "REGISTRY", "FAMILIES", "family_names", "spec_mechanisms",
           "family_for", "family_of_plan", "all_families", "all_examples", "explain_items"]


def _registry_line() -> tuple[Family, ...]:
    """The registry line: the registered families, in order.

    Family ``name`` is the planner room ``planner/<name>/`` (its ``FAMILY``: spec mechanism names,
    examples, the room's functions) and the runtime package ``mechanisms/<name>/`` (its
    ``RUNTIME_CLASSES``, whose ``PLAN_FIELDS`` name the plan mechanisms). Nothing else lists families
    or mechanism names: CLI, API, audit, schema composition and the conformance tests read the
    declarations. (A test registers other families by replacing this function, ``tests/_toy_family.py``.)
    """
    # deferred: pydantic (the planner extra; the rooms' spec models), so that ``import ldpplan.planner``
    # works without it (``ldpplan.make_plan`` then raises MissingDependency) and ``ldpplan --help``
    # does not import the rooms (0.5 s of CPU)
    from . import hadamard, idue, longitudinal, pckv, pie, records, uldp  # deferred: pydantic

    return (idue.FAMILY, pckv.FAMILY, pie.FAMILY, uldp.FAMILY, hadamard.FAMILY, longitudinal.FAMILY, records.FAMILY)


def __getattr__(name: str) -> Any:
    # FAMILIES and REGISTRY read the registry line on first use (it imports the rooms)
    if name == "FAMILIES":  # the registered family objects, in order
        return _registry_line()
    if name == "REGISTRY":  # the registered family names, in order
        return tuple(fam.name for fam in _registry_line())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def all_families() -> list[Family]:
    """Every registered family object, in registry order (imports the rooms)."""
    return list(_registry_line())


def family_names() -> list[str]:
    """The registered family names."""
    return [fam.name for fam in all_families()]


def spec_mechanisms() -> dict[str, str]:
    """Spec ``mechanism`` value -> family name (as each family declares them; its plan mechanisms map to it too)."""
    out: dict[str, str] = {}
    for fam in all_families():
        for n in (*fam.spec_mechanisms, *fam.plan_mechanisms):
            out[n] = fam.name
    return out


def family_for(mechanism: Any, *, field: str = "mechanism") -> Family:
    """The family of a spec ``mechanism`` value or of a family name.

    Raises
    ------
    SpecError
        If the name is neither (the message lists the valid names).
    """
    by_name = {fam.name: fam for fam in all_families()}
    if isinstance(mechanism, str) and mechanism in by_name:
        return by_name[mechanism]
    names = spec_mechanisms()
    if not isinstance(mechanism, str) or mechanism not in names:
        raise SpecError(field, f"must be one of {sorted(names)}", mechanism)
    return by_name[names[mechanism]]


def family_of_plan(plan: Mapping[str, Any]) -> Family:
    """Family of a plan dict: the family whose runtime runs its ``mechanism`` (PlanFormatError otherwise)."""
    mech = plan.get("mechanism") if isinstance(plan, Mapping) else None
    owners = {m: fam for fam in all_families() for m in fam.plan_mechanisms}
    if not isinstance(mech, str) or mech not in owners:
        raise PlanFormatError(f"mechanism: must be one of {sorted(owners)} (got {mech!r})")
    return owners[mech]


def all_examples() -> dict[str, tuple[Family, dict]]:
    """Every embedded example: name -> (family, raw spec)."""
    out: dict[str, tuple[Family, dict]] = {}
    for fam in all_families():
        for name, spec in fam.examples.items():
            out[name] = (fam, spec)
    return out


def explain_items(plan: Mapping[str, Any], items: list) -> dict[str, Any]:
    """The budget a verified plan gives one user's item set, through its family (``Family.explain_items``).

    Raises
    ------
    SpecError
        In one line, for a plan whose family has no item-set budgets, naming the plan mechanisms
        that have them.
    PlanFormatError
        The plan's mechanism is not registered.
    PrivacyViolation
        The plan fails its re-check.
    """
    fam = family_of_plan(plan)
    if isinstance(fam, ModuleFamily) and not fam.has_item_sets:
        names = [m for f in all_families() if isinstance(f, ModuleFamily) and f.has_item_sets
                 for m in f.plan_mechanisms]
        raise SpecError("PLAN", f"item-set budgets exist for {', '.join(repr(n) for n in names) or 'no'} plans only "
                        f"(the {fam.name} family has none)", plan.get("mechanism"))
    return fam.explain_items(plan, items)

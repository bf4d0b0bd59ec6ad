"""Registry of mechanism families.

Each family is a module of :mod:`planner` implementing the same functions:

``MECHANISMS``
    tuple of spec ``mechanism`` names the module handles.
``EXAMPLES``
    mapping of example name -> raw spec dict (embedded examples for ``plan --example``).
``plan_from_spec(raw, *, base_dir=None) -> dict``
    validate the raw spec (raise :class:`~planner.errors.SpecError`), solve, build the
    plan dict, re-verify it independently and raise
    :class:`~planner.errors.PrivacyViolation` rather than return a failing plan.
``verify_plan(plan) -> Verification``
    independent re-check from the numbers in the file (raise
    :class:`~planner.errors.PlanFormatError` for a malformed plan).
``summarize(plan) -> list[Table]``
    what ``ldpplan plan`` shows.
``simulate(plan, options, progress=None) -> SimulationReport``
    ``progress`` is ``None`` or a callable ``progress(advance: int, total: int)``.
``perturb_file(plan, input_path, output_path, rng) -> dict`` and
``estimate_file(plan, reports_path) -> Table``
    the runtime from the command line (reports are ``.npz`` files).

Family modules are imported lazily so that ``ldpplan --help`` stays fast.
"""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any, Mapping

from .errors import PlanFormatError, SpecError

__all__ = ["FAMILY_MODULES", "family_for", "all_examples", "family_of_plan"]

#: spec/plan mechanism name -> family module
FAMILY_MODULES: dict[str, str] = {
    "idue": "planner.idue",
    "idue-ps": "planner.idue",
    "pckv": "planner.pckv",
    "pckv-ue": "planner.pckv",
    "pckv-grr": "planner.pckv",
    "pie": "planner.pie",
    "rr": "planner.pie",
    "glh": "planner.pie",
    "urr": "planner.uldp",
    "urap": "planner.uldp",
    "pum": "planner.uldp",
}


def family_for(mechanism: Any, *, field: str = "mechanism") -> ModuleType:
    """Return the family module for a mechanism name.

    Raises
    ------
    SpecError
        If the name is not one of :data:`FAMILY_MODULES`.
    """
    if not isinstance(mechanism, str) or mechanism not in FAMILY_MODULES:
        raise SpecError(field, f"must be one of {sorted(FAMILY_MODULES)}", mechanism)
    return importlib.import_module(FAMILY_MODULES[mechanism])


def family_of_plan(plan: Mapping[str, Any]) -> ModuleType:
    """Family module of a plan dict (raises PlanFormatError for unknown mechanisms)."""
    mech = plan.get("mechanism")
    if not isinstance(mech, str) or mech not in FAMILY_MODULES:
        raise PlanFormatError(f"mechanism: must be one of {sorted(FAMILY_MODULES)} (got {mech!r})")
    return importlib.import_module(FAMILY_MODULES[mech])


def all_examples() -> dict[str, tuple[ModuleType, dict]]:
    """Every embedded example: name -> (family module, raw spec)."""
    out: dict[str, tuple[ModuleType, dict]] = {}
    for modname in dict.fromkeys(FAMILY_MODULES.values()):
        try:
            mod = importlib.import_module(modname)
        except ModuleNotFoundError as exc:  # family not implemented yet
            if exc.name == modname:
                continue
            raise
        for name, spec in getattr(mod, "EXAMPLES", {}).items():
            out[name] = (mod, spec)
    return out

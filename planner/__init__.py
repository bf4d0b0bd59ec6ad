"""ldpplan planner: spec models, planning, plan export/import, verification and the CLI.

The public API lives in :mod:`planner.api` and is re-exported here. The names are loaded on first
use (PEP 562 ``__getattr__``), so importing a submodule such as the CLI's group
(``ldpplan --help``) does not load numpy and the planner's models with the package.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what a type checker and a reader see: the same names, imported at the top
    from ..solvers.shuffle import ShuffleBound
    from ._report import SimulateOptions, SimulationReport, Table, Verification
    from .api import (example_spec, explain_items, list_examples, load_spec, make_plan, plan_schema, read_plan,
                      simulate, summarize, verify_plan, write_plan)
    from .numeric._sizing import n_for
    from .auditing import AuditResult, audit  # the function; its subpackage is planner/auditing (issue 18)
    from .errors import InputDataError, LdpplanError, PlanFormatError, PrivacyViolation, SpecError
    from .reporting import report  # the function; its package is planner/reporting (issue 31)
    from .shuffle import local_epsilon_for, shuffle_bound

__all__ = [
    "make_plan", "verify_plan", "audit", "AuditResult", "report", "write_plan", "read_plan", "load_spec", "summarize", "simulate",
    "example_spec", "list_examples", "plan_schema", "explain_items",
    "SimulateOptions", "SimulationReport", "Table", "Verification",
    "shuffle_bound", "local_epsilon_for", "ShuffleBound", "n_for",
    "LdpplanError", "SpecError", "PlanFormatError", "PrivacyViolation", "InputDataError",
]


def __getattr__(name: str) -> Any:
    # One place loads the public names, on first use: the CLI's group and `ldpplan --help` stay free of
    # numpy and pydantic.
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import _report, api, auditing, errors, reporting, shuffle  # deferred: numpy
    from .numeric import _sizing  # deferred: numpy (the numeric family's sizing helper, issue 29)

    found = {"audit": auditing.audit, "AuditResult": auditing.AuditResult, "report": reporting.report,
             "ShuffleBound": shuffle.ShuffleBound, "shuffle_bound": shuffle.shuffle_bound,
             "local_epsilon_for": shuffle.local_epsilon_for, "n_for": _sizing.n_for}
    for module in (api, errors, _report):
        found.update((n, getattr(module, n)) for n in __all__ if n not in found and hasattr(module, n))
    globals().update(found)
    return found[name]

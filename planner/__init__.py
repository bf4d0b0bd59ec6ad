"""ldpplan planner: spec models, planning, plan export/import, verification and the CLI.

The public API lives in :mod:`planner.api` and is re-exported here.
"""
from ._report import SimulateOptions, SimulationReport, Table, Verification
from .api import (example_spec, explain_items, list_examples, load_spec, make_plan, plan_schema, read_plan, simulate,
                  summarize, verify_plan, write_plan)
from .auditing import AuditResult, audit  # the function; its subpackage is planner/auditing (issue 18)
from .reporting import report  # the function; its package is planner/reporting (issue 31)
from .errors import InputDataError, LdpplanError, PlanFormatError, PrivacyViolation, SpecError
from .shuffle import local_epsilon_for, shuffle_bound

__all__ = [
    "make_plan", "verify_plan", "audit", "AuditResult", "report", "write_plan", "read_plan", "load_spec", "summarize", "simulate",
    "example_spec", "list_examples", "plan_schema", "explain_items",
    "SimulateOptions", "SimulationReport", "Table", "Verification",
    "shuffle_bound", "local_epsilon_for", "ShuffleBound",
    "LdpplanError", "SpecError", "PlanFormatError", "PrivacyViolation", "InputDataError",
]


def __getattr__(name: str):  # ShuffleBound is a solvers type: imported (with scipy) on first use
    if name == "ShuffleBound":
        from ..solvers.shuffle import ShuffleBound

        return ShuffleBound
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

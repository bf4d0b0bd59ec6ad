"""The plan report (``ldpplan report``): one self-contained HTML page per verified plan.

Modules: :mod:`.page` (``report(plan, audit=..., simulation=...) -> str``, the jinja2 template in
``templates/``), :mod:`.context` (what the page shows, read from the plan), :mod:`.whatif` (the
plan re-planned by its family for the curves and what-ifs), :mod:`.security` (the trust model and
hazards cut from ``docs/SECURITY.md``), :mod:`.values` (numbers traceable to their field). The
package is named ``reporting`` so that ``ldpplan.planner.report`` is only the function.
"""
from __future__ import annotations

from .page import report as _report

__all__ = ["report"]


def report(plan, *, audit=None, simulation=None) -> str:
    """The HTML report of a verified plan; see :func:`ldpplan.planner.reporting.page.report`."""
    return _report(plan, audit=audit, simulation=simulation)

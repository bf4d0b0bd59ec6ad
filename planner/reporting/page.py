"""``ldpplan report``: one self-contained HTML page per verified plan (jinja2 template, inline CSS and SVG).

The page has no script, no font, no image and no link outside itself: it reads the same with
scripts off, printed to PDF, at phone and desktop widths. It is written only for a plan that
verifies (:class:`~..errors.PrivacyViolation` otherwise).
"""
from __future__ import annotations

import json
from typing import Any, Mapping

from ..errors import PrivacyViolation, SpecError
from . import context
from .values import derived, fmt, number
from .whatif import curves
from .. import api
from ...mechanisms import loads_strict
from .._plan_format import tool_version
from .._report import default_report_facts
from ..families import family_of_plan
from ..plotting import Curve, svg
from .security import sections

__all__ = ["report", "check_audit", "check_simulation", "read_json"]

#: keys ``ldpplan audit --json`` always writes (``AuditResult.to_dict``)
AUDIT_KEYS = ("mechanism", "epsilon_claimed", "epsilon_lower_bound", "confidence", "trials", "consistent",
              "min_detectable_epsilon", "pairs")
#: keys ``ldpplan simulate --json`` always writes
SIMULATION_KEYS = ("seed", "trials", "mode")


def read_json(path: str, option: str) -> Any:
    """The JSON value of the file given to ``option`` (strict JSON; SpecError naming the option otherwise)."""
    try:
        with open(path, encoding="utf-8") as fh:
            return loads_strict(fh.read(), option)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise SpecError(option, f"must be a readable JSON file ({' '.join(str(exc).split())})", path) from None


def check_audit(audit: Any, plan: Mapping[str, Any]) -> dict[str, Any]:
    """An ``ldpplan audit --json`` result of this plan's mechanism (SpecError naming the field otherwise)."""
    if not isinstance(audit, Mapping):
        raise SpecError("--audit", "must be the JSON object `ldpplan audit --json` writes", type(audit).__name__)
    for key in AUDIT_KEYS:
        if key not in audit:
            raise SpecError(f"--audit: {key}", "is missing (expected the output of `ldpplan audit --json`)", None)
    if audit["mechanism"] != plan.get("mechanism"):
        raise SpecError("--audit: mechanism", f"must be the plan's mechanism {plan.get('mechanism')!r}",
                        audit["mechanism"])
    if not isinstance(audit["pairs"], list):
        raise SpecError("--audit: pairs", "must be a list", type(audit["pairs"]).__name__)
    return dict(audit)


def check_simulation(simulation: Any) -> dict[str, Any]:
    """An ``ldpplan simulate --json`` result (SpecError naming the field otherwise)."""
    if not isinstance(simulation, Mapping):
        raise SpecError("--simulate", "must be the JSON object `ldpplan simulate --json` writes",
                        type(simulation).__name__)
    for key in SIMULATION_KEYS:
        if key not in simulation:
            raise SpecError(f"--simulate: {key}", "is missing (expected the output of `ldpplan simulate --json`)", None)
    return dict(simulation)


def _figures(plan, facts, lines) -> dict[str, str]:
    """The two figures (inline SVG) with their text alternatives; the tables beside them carry the numbers."""
    unit = plan["predicted"][facts.headline].get("unit", "")
    out = {}
    if len(lines.by_epsilon) >= 2:
        xs = [float(p.epsilon.value) for p in lines.by_epsilon]
        ys = [float(p.error.value) for p in lines.by_epsilon]
        here = [float(number(plan, ("guarantee", "epsilon")).value)], [float(plan["predicted"][facts.headline]["value"])]
        out["epsilon"] = svg([Curve(f"{plan['mechanism']} re-planned", xs, ys, style="theory"),
                              Curve("this plan", *here, style="points", color=1)],
                             title=f"Predicted {facts.headline} against epsilon", xlabel="epsilon (nats)",
                             ylabel=unit[:60], ident="fig-epsilon",
                             description=f"Predicted {facts.headline} ({unit}) of the plan re-planned at "
                                         f"{len(xs)} budgets, epsilon from {fmt(min(xs))} to {fmt(max(xs))} nats: "
                                         f"from {fmt(max(ys))} down to {fmt(min(ys))}. The table below lists the "
                                         f"points.")
    if len(lines.by_users) >= 2:
        xs = [float(p.users.value) for p in lines.by_users]
        ys = [float(p.error.value) for p in lines.by_users]
        yunit = facts.per_user_unit if lines.scaled else unit
        out["users"] = svg([Curve(f"{plan['mechanism']}", xs, ys, style="theory")],
                           title="Predicted error against the number of users n", xlabel="users n",
                           ylabel=yunit[:60], ident="fig-users", logx=True,
                           description=f"Predicted error ({yunit}) for n from {fmt(int(min(xs)))} to "
                                       f"{fmt(int(max(xs)))} users: from {fmt(max(ys))} down to {fmt(min(ys))}. "
                                       "The table below lists the points.")
    return out


def _environment():
    import jinja2  # deferred: jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader(__package__, "templates"),
                             autoescape=jinja2.select_autoescape(["html", "j2"]), undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["fmt"] = fmt
    return env


def report(plan: Mapping[str, Any], *, audit: Mapping[str, Any] | None = None,
           simulation: Mapping[str, Any] | None = None) -> str:
    """The HTML report of a verified plan: guarantee, cost, what-ifs, trust model, verification, record.

    Parameters
    ----------
    plan : mapping
        A plan (format 2.0) that verifies.
    audit : mapping, optional
        What ``ldpplan audit PLAN --json`` wrote for this plan.
    simulation : mapping, optional
        What ``ldpplan simulate PLAN --json`` wrote.

    Returns
    -------
    str
        One self-contained HTML5 document (inline CSS and SVG; no script, font or external reference).

    Raises
    ------
    PrivacyViolation
        The plan fails its re-check (no report is made for it).
    PlanFormatError, SpecError
        A malformed plan; an audit or simulation result that is not one of this plan.

    References
    ----------
    NIST SP 800-226 (2025), Guidelines for Evaluating Differential Privacy Guarantees: the unit of
    privacy, the trust model, epsilon and delta, the hazards.
    """
    family = family_of_plan(plan)
    result = family.verify(plan)
    if not result.holds:
        raise PrivacyViolation(f"refusing to report on a plan that fails verification: {result.message}",
                               result.details)
    audit = None if audit is None else check_audit(audit, plan)
    simulation = None if simulation is None else check_simulation(simulation)
    hook = getattr(family, "report_facts", None)  # a Family without the hook: the defaults
    facts = hook(plan) if hook is not None else default_report_facts(plan)
    fingerprint = api.fingerprint(plan)
    lines = curves(family, plan, facts)
    head = plan["predicted"][facts.headline]
    record = context.record(plan, facts, fingerprint, tool_version())
    page = {
        "plan": plan, "family": family.name, "facts": facts, "fingerprint": fingerprint, "version": tool_version(),
        "description": str((plan.get("spec") or {}).get("description", "")),
        "notion": number(plan, ("guarantee", "notion")), "mechanism": number(plan, ("mechanism",)),
        "epsilon": number(plan, facts.bounds[0].field),
        "ldp": None if facts.ldp_epsilon is None else number(plan, facts.ldp_epsilon.field),
        "bounds": context.bounds(plan, facts), "shuffled": context.shuffled(plan),
        "headline": {"name": facts.headline, "value": number(plan, ("predicted", facts.headline, "value")),
                     "unit": head.get("unit", ""), "source": head.get("source", "")},
        "users": None if facts.users_field is None else number(plan, facts.users_field),
        "predictions": context.predictions(plan, facts.headline),
        "baselines": context.baselines(plan, facts.headline), "curves": lines,
        "figures": _figures(plan, facts, lines), "security": sections(),
        "verification": context.verification(plan, facts), "ratio": context.derived_ratio, "derived": derived,
        "planning_inputs": [p for p in plan.get("planning_inputs") or [] if isinstance(p, Mapping)],
        "audit": audit, "simulation": simulation,
        "simulation_rows": [] if simulation is None else context.scalars(simulation),
        "record": json.dumps(record, indent=1, sort_keys=True, allow_nan=False).replace("</", "<\\/"),
    }
    return _environment().get_template("report.html.j2").render(**page)

"""The report's what-ifs and curves: the plan's spec changed and planned again by its own family.

Nothing here computes an error or an epsilon: each point is a plan made by the family's ``plan``
(``Family.report_spec`` says how its spec scales the budget and the number of users), and its
numbers are read from that plan as from the reported one. A point the family cannot plan (its
spec has no number of users, an epsilon out of range) is left out with the reason.

For a plan whose numbers do not depend on ``n`` (``ReportFacts.users_field`` None), the curve
against ``n`` is the family's stated scaling of its per-user headline
(``value * n ** per_user_exponent``: the estimators are unbiased and their variance is a sum over
independent users).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from ..errors import LdpplanError
from .values import Number, derived, read

__all__ = ["BUDGETS", "USERS", "Point", "Curves", "curves"]

#: budget factors of the curve against epsilon (1: the plan itself)
BUDGETS = (0.25, 0.5, 1.0, 2.0, 4.0)
#: user-count factors of the curve against n (1: the plan itself)
USERS = (0.01, 0.1, 1.0, 10.0, 100.0)
#: n of the curve of a plan whose numbers hold for any n
ANY_N = (100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000)


@dataclasses.dataclass(frozen=True)
class Point:
    """One plan of a curve: its epsilon, users, central epsilon (shuffled plans) and headline error."""

    factor: float
    epsilon: Number
    users: Number | None
    central_epsilon: Number | None
    error: Number


@dataclasses.dataclass(frozen=True)
class Curves:
    """The plan's points against epsilon and against n, the two what-ifs and what could not be planned."""

    by_epsilon: tuple[Point, ...]
    by_users: tuple[Point, ...]
    fewer_users: Point | None
    half_budget: Point | None
    notes: tuple[str, ...]
    scaled: bool  # by_users follows the per-user scaling (the plan fixes no n)
    fewer_users_note: str = ""  # why 10x fewer users was not planned
    half_budget_note: str = ""  # why half the budget was not planned


def _replan(family, plan: Mapping[str, Any], facts, *, budget: float = 1.0, users: int | None = None):
    """``(plan, None)`` or ``(None, reason)``: the family's plan of the scaled spec."""
    hook = getattr(family, "report_spec", None)
    spec = None if hook is None else hook(plan, budget=budget, users=users)
    if spec is None:
        return None, "the family's spec cannot say it (e.g. its n is read from a data file)"
    if users is not None and isinstance(spec.get("shuffle"), Mapping) and facts.users_field is not None:
        planned = int(read(plan, facts.users_field))
        spec["shuffle"] = dict(spec["shuffle"], n=max(2, round(spec["shuffle"]["n"] * users / planned)))
    try:
        return family.plan(spec), None
    except (LdpplanError, ValueError, ArithmeticError) as exc:
        return None, " ".join(str(exc).split())


def _point(other: Mapping[str, Any], facts, factor: float, n: int | None = None) -> Point:
    guarantee = other["guarantee"]
    error = float(other["predicted"][facts.headline]["value"])
    if n is not None:
        error *= float(n) ** facts.per_user_exponent
    users = int(read(other, facts.users_field)) if facts.users_field is not None else n
    shuffled = guarantee.get("shuffled")
    return Point(factor, derived(guarantee["epsilon"]), None if users is None else derived(users),
                 derived(shuffled["epsilon"]) if isinstance(shuffled, Mapping) else None, derived(error))


def _sweep(family, plan, facts, kind: str, changes: dict, failed: dict, why: dict) -> list[Point]:
    """The plans of ``changes`` (factor -> ``(label, report_spec keywords)``); what fails goes to ``failed``/``why``."""
    points = []
    for factor, (label, change) in changes.items():
        other, reason = (plan, None) if factor == 1.0 else _replan(family, plan, facts, **change)
        if other is None:
            failed.setdefault(reason, []).append(label)
            why[kind, factor] = reason
        else:
            points.append(_point(other, facts, factor))
    return points


def curves(family, plan: Mapping[str, Any], facts) -> Curves:
    """The plan re-planned at :data:`BUDGETS` x its budget and :data:`USERS` x its users, through ``family``."""
    failed: dict[str, list[str]] = {}  # reason -> the points it left out
    why: dict[tuple[str, float], str] = {}
    by_epsilon = _sweep(family, plan, facts, "budget", {f: (f"{f:g} x the budget", {"budget": f}) for f in BUDGETS},
                        failed, why)
    by_users = []
    if facts.users_field is None:
        if facts.per_user_exponent:
            by_users = [_point(plan, facts, float(n), n=n) for n in ANY_N]
    else:
        planned = int(read(plan, facts.users_field))
        sizes = {f: max(2, round(planned * f)) for f in USERS}
        by_users = _sweep(family, plan, facts, "users", {f: (f"{n:,} users", {"users": n}) for f, n in sizes.items()},
                          failed, why)
    notes = tuple(f"{', '.join(points)}: {reason}" for reason, points in failed.items())
    half = next((p for p in by_epsilon if p.factor == 0.5), None)
    fewer = next((p for p in by_users if p.factor == 0.1), None) if facts.users_field is not None else None
    return Curves(tuple(by_epsilon), tuple(by_users), fewer, half, notes, facts.users_field is None,
                  fewer_users_note=why.get(("users", 0.1), ""), half_budget_note=why.get(("budget", 0.5), ""))

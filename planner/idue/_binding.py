"""Which constraint of ID-LDP eq. (6) binds an IDUE plan, read from the solution.

A level whose budget is looser than another's but whose solved ``(a, b)`` is the same "buys
nothing": the solver could not use its budget because constraint (6) against a stricter level
is active (slack ~ 0). :func:`binding_constraints` lists the active constraints,
:func:`collapse_note` says in one paragraph which levels collapsed and why.

References
----------
Gu, Li, Xiong & Cao, "Providing Input-Discriminative Protection for Local Differential Privacy",
ICDE 2020: eq. (6) ``a_i (1 - b_j) / (b_i (1 - a_j)) <= e^{r(eps_i, eps_j)}``, Def. 3 (MinID-LDP,
``r = min``), Sec. VIII (AvgID-LDP, ``r`` = the average), Lemma 1.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping

__all__ = ["ActiveConstraint", "binding_constraints", "collapsed_levels", "collapse_note", "ACTIVE_TOLERANCE"]

#: A constraint is active when its slack is below this (nats, relative to max(1, r)); the solver's safety
#: margins are 1e-10 .. 1e-3 nats of r, so a constraint it pushed to the boundary has slack <= 1e-3 r.
ACTIVE_TOLERANCE = 2e-3
#: Two levels have "the same (a, b)" when both differ by less than this (relative).
SAME_PARAMS_RTOL = 1e-9


@dataclasses.dataclass(frozen=True)
class ActiveConstraint:
    """One active constraint (6) for the ordered level pair ``(i, j)``.

    Attributes
    ----------
    level_i, level_j : str
        Level names (row ``i``: the item reported as 1; column ``j``: the other item).
    r : float
        ``r(eps_i, eps_j)`` in nats (min for MinID-LDP, average for AvgID-LDP).
    log_ratio : float
        ``ln[a_i (1 - b_j) / (b_i (1 - a_j))] = u_i + w_j`` in nats.
    slack : float
        ``r - log_ratio`` in nats (>= 0 up to rounding in a verified plan).
    """

    level_i: str
    level_j: str
    r: float
    log_ratio: float
    slack: float


def _levels(plan: Mapping[str, Any]):
    lv = plan["params"]["levels"]
    return ([x["name"] for x in lv], [float(x["epsilon"]) for x in lv], [float(x["a"]) for x in lv],
            [float(x["b"]) for x in lv], [int(x["size"]) for x in lv])


def _r(notion: str, e_i: float, e_j: float) -> float:
    return min(e_i, e_j) if notion == "MinID-LDP" else (e_i + e_j) / 2


def binding_constraints(plan: Mapping[str, Any], tolerance: float = ACTIVE_TOLERANCE) -> list[ActiveConstraint]:
    """The active constraints (6) of a plan: ordered level pairs ``(i, j)`` whose slack is ~0.

    Pairs ``(i, i)`` count only for levels of at least two items (distinct items of one level).

    Parameters
    ----------
    plan : mapping
        An IDUE / IDUE-PS plan (format 2.0).
    tolerance : float
        Slack (nats, relative to ``max(1, r)``) below which a constraint is active.

    Returns
    -------
    list of ActiveConstraint
        In level order (row, then column).
    """
    names, e, a, b, sizes = _levels(plan)
    notion = plan["guarantee"]["notion"]
    u = [math.log(x / y) for x, y in zip(a, b)]
    w = [math.log((1 - y) / (1 - x)) for x, y in zip(a, b)]
    out = []
    for i in range(len(names)):
        for j in range(len(names)):
            if i == j and sizes[i] < 2:
                continue
            r = _r(notion, e[i], e[j])
            slack = r - (u[i] + w[j])
            if slack <= tolerance * max(1.0, r):
                out.append(ActiveConstraint(names[i], names[j], r, u[i] + w[j], slack))
    return out


def collapsed_levels(plan: Mapping[str, Any]) -> dict[str, str]:
    """``{looser level: stricter level}`` for levels whose solved ``(a, b)`` equals a stricter level's.

    The stricter level named is the one with the smallest budget among those sharing the ``(a, b)``.
    """
    names, e, a, b, _ = _levels(plan)
    out = {}
    for j in range(len(names)):
        same = [k for k in range(len(names)) if e[k] < e[j]
                and math.isclose(a[k], a[j], rel_tol=SAME_PARAMS_RTOL)
                and math.isclose(b[k], b[j], rel_tol=SAME_PARAMS_RTOL)]
        if same:
            out[names[j]] = names[min(same, key=lambda k: e[k])]
    return out


def collapse_note(plan: Mapping[str, Any]) -> str:
    """One paragraph naming the binding constraint when looser levels collapse, else ``""``.

    Examples
    --------
    Levels 0.7 / 1.0 / 2.0 where the 0.7 level holds most items: every level gets the (a, b)
    of the 0.7 level, the plan is plain 0.7-LDP, and the note names the MinID constraint
    (6) with the 0.7 level, active in both directions for every looser level.
    """
    collapsed = collapsed_levels(plan)
    if not collapsed:
        return ""
    names, e, _, _, _ = _levels(plan)
    eps = dict(zip(names, e))
    notion = plan["guarantee"]["notion"]
    r_text = "r(eps_i, eps_j) = min(eps_i, eps_j)" if notion == "MinID-LDP" else \
        "r(eps_i, eps_j) = (eps_i + eps_j) / 2"
    short = "MinID" if notion == "MinID-LDP" else "AvgID"
    looser = [n for n in names if n in collapsed]
    strictest = min(names, key=lambda n: eps[n])
    group = set(looser) | set(collapsed.values())
    everything = group == set(names)
    held = group - {strictest} if everything else group  # the levels held down, and by whom
    active = [c for c in binding_constraints(plan) if c.level_i != c.level_j
              and ((c.level_i in held) != (c.level_j in held))]
    partners = sorted({c.level_j if c.level_i in held else c.level_i for c in active}, key=lambda n: eps[n])
    same = "; ".join(f"{n!r} ({eps[n]:.4g}) has the (a, b) of {collapsed[n]!r} ({eps[collapsed[n]]:.4g})"
                     for n in looser)
    plain = (f" Every level has the (a, b) of the strictest level {strictest!r}: the plan is plain "
             f"{eps[strictest]:.4g}-LDP." if everything else "")
    if not partners:
        return (f"The looser levels buy nothing: {same}.{plain} No constraint (6) between distinct levels is "
                f"active within {ACTIVE_TOLERANCE:g} nats; the objective, not privacy, equalises them.")
    with_text = " and ".join(f"the {eps[n]:.4g} level {n!r}" for n in partners)
    pairs = ", ".join(f"({c.level_i}, {c.level_j})" for c in active)
    p = partners[0]
    r = next(c.r for c in active if p in (c.level_i, c.level_j))
    return (f"The looser levels buy nothing: {same}.{plain} They are limited by the {short} constraint (eq. 6) "
            f"{r_text} with {with_text}: ln[a_i(1-b_j)/(b_i(1-a_j))] = u_i + w_j reaches r (slack ~ 0) for the "
            f"pairs {pairs}, so u_j <= {r:.4g} - w_{p} and w_j <= {r:.4g} - u_{p} for every level j held, "
            f"however large its own budget (u = ln(a/b), w = ln((1-b)/(1-a))).")

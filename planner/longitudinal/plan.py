"""Solve a longitudinal spec into a plan 2.0 (both rounds on the 2^-48 grid, claims derived exactly).

``auto`` plans every mechanism that reaches the budgets and keeps the lowest predicted variance
per round (ties: the first in ``l-grr, l-sue, l-oue, l-osue, l-soue`` order), as PCKV picks UE or
GRR. ``[target] epsilon_lifetime = X`` plans the lowest-variance budgets whose sound lifetime bound
meets X (:mod:`._target`: mechanism, domain, rounds and ``max_values`` held fixed). See :mod:`.claims` for the safe-side rounding, the L-GRR second round and the lifetime bound.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from .._plan_format import envelope
from .._solve_once import once
from ..errors import SpecError
from ._target import target_search
from .claims import baselines, claims, predictions, solve, variance_line
from .spec import PLAN_MECHANISMS, ParsedSpec, parse_spec

__all__ = ["build_plan", "choose", "plan_budgets"]


def choose(spec: ParsedSpec) -> tuple[str, dict[str, Any], dict[str, Any], str]:
    """``(mechanism, params, candidates, reason)``: the spec's mechanism, or ``auto``'s lowest variance.

    Raises
    ------
    SpecError
        The requested mechanism (or every one, for ``auto``) cannot reach the budgets.
    """
    m = spec.model
    e_perm, e_1 = m.epsilon_perm, m.epsilon_1
    names = PLAN_MECHANISMS if m.mechanism == "auto" else (m.mechanism,)
    candidates: dict[str, Any] = {}
    for name in names:
        try:
            candidates[name] = solve(name, e_perm, e_1, spec.k)
        except SpecError as exc:
            if m.mechanism != "auto":
                raise
            candidates[name] = str(exc)
    reachable = {n: p for n, p in candidates.items() if not isinstance(p, str)}
    if not reachable:
        raise SpecError("epsilon_1", "no longitudinal mechanism reaches it on the 2^-48 grid", e_1)
    chosen = min(reachable, key=lambda n: (variance_line(n, reachable[n])[0], names.index(n)))
    reason = ("requested" if m.mechanism != "auto" else
              f"auto: lowest predicted variance per round among {', '.join(reachable)}")
    return chosen, reachable[chosen], candidates, reason


def plan_budgets(spec: ParsedSpec) -> tuple[str, dict[str, Any], dict[str, Any], str]:
    """:func:`choose` without a target; under ``[target] epsilon_lifetime = X`` the lowest-variance plan whose
    sound lifetime bound is at most X (:func:`._target.target_search`)."""
    m = spec.model
    if m.target is None:
        return choose(spec)
    return target_search(spec, PLAN_MECHANISMS if m.mechanism == "auto" else (m.mechanism,))


def build_plan(raw: Mapping[str, Any], *, base_dir: Path | None = None) -> dict[str, Any]:
    """Solve a longitudinal spec into an (unverified) plan 2.0 dict.

    Returns
    -------
    dict
        ``params`` (``domain_size``, ``p1``, ``p2`` and ``second_round`` for L-GRR; ``p1``, ``q1``,
        ``p2``, ``q2`` for the unary encodings), ``guarantee`` (``notion = "longitudinal-LDP"``,
        ``epsilon`` = ``epsilon_1``, ``epsilon_perm``, ``epsilon_1``, ``rounds``, ``max_values``,
        ``epsilon_2``, ``epsilon_lifetime`` (sound), ``epsilon_lifetime_lower``,
        ``epsilon_lifetime_one_value``), ``predicted`` variance per round, ``baselines`` (candidates, the
        papers' L-GRR second round, fresh reports without memoization).

    Raises
    ------
    SpecError
        Invalid spec or unreachable budgets (or lifetime target).
    """
    spec = once(parse_spec, raw, base_dir=base_dir)
    m = spec.model
    chosen, params, candidates, reason = once(plan_budgets, spec, memo_key=raw)  # keyed by spec's mapping
    guarantee = claims(chosen, params, m.rounds, m.values)
    solver: dict[str, Any] = {"name": "closed form + exact composed channel" if chosen == "l-grr" else "closed form",
              "status": "optimal", "selection": {"requested": m.mechanism, "chosen": chosen, "reason": reason},
              "second_round": ("solved on the exact composed k-ary channel (l_grr_exact): more utility than the "
                               "papers' two-path form for k > 2, identical for k = 2") if chosen == "l-grr" else
              "the papers' closed form on the grid-rounded first round", "notes": m.notes}
    if m.target is not None:
        solver["target"] = {"epsilon_lifetime": m.target.epsilon_lifetime,
                            "held_fixed": "mechanism (or auto's candidates), domain, rounds, max_values; the spec's "
                                          "epsilon_perm and epsilon_1 are upper limits"}
    return envelope(mechanism=chosen, domain_size=spec.k, labels=spec.labels, params=params, guarantee=guarantee,
                    predicted=predictions(chosen, params, m.users),
                    baselines=baselines(chosen, candidates, spec, guarantee["epsilon_lifetime"],
                                        (guarantee["epsilon_perm"], guarantee["epsilon_1"])),
                    solver=solver, spec=dict(raw))

"""IDUE / IDUE-PS planning: spec -> solved, grid-rounded parameters -> plan format 2.0.

Source: Gu, Li, Xiong, Cao, ICDE 2020 (ID-LDP). Sec. V (IDUE, eq. 6-12), Sec. VI
(IDUE-PS, Algorithms 1-2, Theorem 4), Lemma 1 (MinID-LDP implies LDP).

Range of budgets: every budget in [1e-6, 100] nats plans (tested). At 1e-6 nats ``a - b`` is
about 2.5e-7, some 7e7 steps of the 2^-48 grid, so the grid resolves it; ``u`` and ``w`` are
computed as ``log1p`` of exact differences. Budgets above 30 nats are solved at 30
(``solvers.idue.EPSILON_CAP``): ``1 - a`` and ``b`` must stay representable on the grid and
in float64; the plan still states the requested budgets, which the capped parameters satisfy
with room to spare. Where float64 cannot resolve ``1 - a`` (tens of nats) the next larger
safety margin of :data:`MARGINS` is used (the shared grid step, :mod:`ldpplan.planner._grid`); the
exact check of (6) decides in every case.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import numpy as np

from .._common import attach_verification
from .._plan_format import envelope
from .._solve_once import once
from ..errors import PrivacyViolation
from .._grid import MARGINS, Attempt, ladder, round_and_repair, round_safe
from .claims import DIRECTIONS, USERS_SETS_WHAT, baselines_of, guarantee_of, predicted_of, worst_case_mse
from .spec import NOTION_NAMES, ResolvedLevels, inline_spec, parse_idue_spec
from . import verify as _verify
from ...solvers.idue import solve_idue
from ..data import read_item_sets
from ._itemsets import budget_distribution, user_set_budgets
from .verify import check_numbers

__all__ = ["build_plan", "solve_levels", "worst_case_mse", "guarantee_of", "predicted_of",
           "baselines_of", "MARGINS"]


def solve_levels(levels: ResolvedLevels, model: str, notion: str):
    """Solve the model and put ``a``, ``b`` on the grid; returns ``(a, b, SolveResult, margin)``.

    The shared grid step (:func:`~.._grid.round_and_repair`): ``a`` down and ``b`` up (every ratio
    of (6) decreases), constraint (6) decided exactly over all level pairs
    (:func:`.verify.check_numbers`); on failure the levels are solved again at the next relative
    margin of :data:`~.._grid.MARGINS`.

    Raises
    ------
    PrivacyViolation
        If no margin of :data:`MARGINS` gives grid parameters satisfying (6)
        (never observed for budgets in [1e-6, 100] nats).
    """
    gname = NOTION_NAMES[notion]

    def attempt(margin: float) -> Attempt:
        res = solve_idue(levels.epsilons, levels.sizes, model=model, notion=notion, safety_margin=margin)
        q = round_safe({"a": res.a, "b": res.b}, DIRECTIONS)
        a, b = q["a"], q["b"]
        valid = bool(np.all((0 < b) & (b < a) & (a < 1)))
        holds = valid and check_numbers(levels.names, [float(e) for e in levels.epsilons], [float(x) for x in a],
                                        [float(x) for x in b], gname)[0]
        return Attempt(q, holds, solution=res)

    def failure(_last) -> PrivacyViolation:
        return PrivacyViolation(f"IDUE {model}/{notion}: no safety margin in {MARGINS} gives grid parameters "
                                "satisfying constraint (6)")

    out = round_and_repair(attempt, start=MARGINS[0], repair=ladder(MARGINS), max_attempts=len(MARGINS),
                           failure=failure)
    return out.params["a"], out.params["b"], out.solution, out.setting


def build_plan(raw: Mapping[str, Any], *, base_dir: Path | None = None) -> dict[str, Any]:
    """Solve an IDUE / IDUE-PS spec into a verified plan (format 2.0).

    Returns
    -------
    dict
        ``domain`` (labels or null), ``params`` (``model``, ``levels[].{name, epsilon, size,
        items, a, b}``, ``padding_length``, ``dummy`` for IDUE-PS), ``guarantee`` (MinID-LDP /
        AvgID-LDP, per-level budgets, Lemma 1 LDP budget), ``predicted.worst_case_mse_per_user``,
        ``baselines`` (RAPPOR, OUE), ``solver``, ``verification``, ``spec`` (files inlined).

    Raises
    ------
    SpecError
        Invalid spec.
    PrivacyViolation
        The independent re-check failed (the plan is not returned).
    """
    spec, levels = once(parse_idue_spec, raw, base_dir=base_dir)
    a, b, res, margin = solve_levels(levels, spec.model, spec.notion)
    L = spec.padding_length
    params: dict[str, Any] = {
        "model": spec.model,
        "levels": [{"name": n, "epsilon": float(e), "size": len(it), "items": list(it), "a": float(ai), "b": float(bi)}
                   for n, e, it, ai, bi in zip(levels.names, levels.epsilons, levels.items, a, b)],
        "padding_length": L,
    }
    dummy = None
    if spec.mechanism == "idue-ps":
        k = int(np.argmin(levels.epsilons))
        dummy = {"epsilon": float(levels.epsilons[k]), "a": float(a[k]), "b": float(b[k])}
        params["dummy"] = dummy
    cert = res.certificate.to_dict()
    plan = envelope(
        mechanism=spec.mechanism, domain_size=levels.size, labels=levels.labels, params=params,
        guarantee=guarantee_of(levels.names, levels.epsilons, a, b, levels.sizes, spec.notion, L, dummy),
        predicted=predicted_of(a, b, levels.sizes, L, spec.users),
        baselines=baselines_of(float(levels.epsilons.min()), levels.size, L),
        solver={"name": res.solver, "status": res.status, "time_seconds": res.time_seconds,
                "objective": res.objective, "certificate": cert, "safety_margin": margin,
                "merged_levels": res.extra["merged_levels"], "capped_levels": res.extra["capped_levels"],
                "epsilon_cap": res.extra["epsilon_cap"]},
        spec=inline_spec(raw, levels), planning_inputs=levels.planning_inputs)
    if spec.user_set_budgets:
        _add_user_set_budgets(plan, levels.planning_inputs[0]["source"])
    return attach_verification(plan, _verify.verify(plan))


#: ``planning_inputs[].what`` of the users' item sets read for ``guarantee.users_set_budgets``.


def _add_user_set_budgets(plan: dict[str, Any], path: str) -> None:
    """``guarantee.users_set_budgets``: eq. (16) over the users of the domain file (raw data, private: false)."""
    _, indptr, indices = read_item_sets(path, plan["domain"]["labels"], plan["domain"]["size"])
    plan["guarantee"]["users_set_budgets"] = budget_distribution(user_set_budgets(plan, indptr, indices),
                                                                 Path(path).name)
    plan["planning_inputs"].append({"what": USERS_SETS_WHAT, "source": str(path), "private": False})

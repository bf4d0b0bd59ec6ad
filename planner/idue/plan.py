"""IDUE / IDUE-PS planning: spec -> solved, grid-rounded parameters -> plan format 2.0.

Source: Gu, Li, Xiong, Cao, ICDE 2020 (ID-LDP). Sec. V (IDUE, eq. 6-12), Sec. VI
(IDUE-PS, Algorithms 1-2, Theorem 4), Lemma 1 (MinID-LDP implies LDP).

Range of budgets: every budget in [1e-6, 100] nats plans (tested). At 1e-6 nats ``a - b`` is
about 2.5e-7, some 7e7 steps of the 2^-48 grid, so the grid resolves it; ``u`` and ``w`` are
computed as ``log1p`` of exact differences. Budgets above 30 nats are solved at 30
(``solvers.idue.EPSILON_CAP``): ``1 - a`` and ``b`` must stay representable on the grid and
in float64; the plan still states the requested budgets, which the capped parameters satisfy
with room to spare. Where float64 cannot resolve ``1 - a`` (tens of nats) the next larger
safety margin of :data:`MARGINS` is used; the exact verifier decides in every case.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from .._common import attach_verification
from .._plan_format import envelope, predicted
from ..errors import PrivacyViolation
from .spec import NOTION_NAMES, ResolvedLevels, inline_spec, parse_idue_spec

__all__ = ["EXAMPLES", "plan_from_spec", "solve_levels", "worst_case_mse", "guarantee_of", "predicted_of",
           "baselines_of", "to_grid_safe", "MARGINS"]

_LN4, _LN6 = math.log(4.0), math.log(6.0)
EXAMPLES: dict[str, dict] = {
    # ID-LDP Sec. IV-A example / Table II: HIV at ln 4, four common conditions at ln 6.
    "health": {
        "mechanism": "idue", "model": "opt0", "notion": "minid",
        "description": "ID-LDP Table II: HIV (epsilon = ln 4) vs anemia, headache, stomachache, toothache (ln 6)",
        "levels": [
            {"name": "hiv", "epsilon": _LN4, "items": 1},
            {"name": "other", "epsilon": _LN6, "items": ["anemia", "headache", "stomachache", "toothache"]},
        ],
    },
    # ID-LDP Sec. VII default: budgets {eps, 1.2 eps, 2 eps} on {5%, 5%, 90%} of m = 100 items.
    # The same health levels for item sets (IDUE-PS, L = 3): ID-LDP eq. (16) gives {hiv} ln 4 but
    # {hiv, anemia, headache} ln((4 + 6 + 6) / 3) (`ldpplan explain PLAN --items hiv,anemia,headache`).
    "health-itemsets": {
        "mechanism": "idue-ps", "model": "opt0", "notion": "minid", "padding_length": 3,
        "description": "ID-LDP Table II levels on item sets (IDUE-PS, L = 3): HIV ln 4, common conditions ln 6",
        "levels": [
            {"name": "hiv", "epsilon": _LN4, "items": 1},
            {"name": "other", "epsilon": _LN6, "items": ["anemia", "headache", "stomachache", "toothache"]},
        ],
    },
    "three-levels": {
        "mechanism": "idue", "model": "opt0", "notion": "minid", "domain": 100, "assignment_seed": 0,
        "description": "ID-LDP Sec. VII default: {eps, 1.2 eps, 2 eps} on {5%, 5%, 90%} of 100 items, eps = 1",
        "levels": [
            {"name": "eps", "epsilon": 1.0, "share": 0.05},
            {"name": "1.2eps", "epsilon": 1.2, "share": 0.05},
            {"name": "2eps", "epsilon": 2.0, "share": 0.90},
        ],
    },
    "three-levels-itemsets": {
        "mechanism": "idue-ps", "model": "opt0", "notion": "minid", "padding_length": 2, "domain": 1000,
        "assignment_seed": 0,
        "description": "IDUE-PS with L = 2 on 1,000 items, {eps, 1.2 eps, 2 eps} on {5%, 5%, 90%}, eps = 2",
        "levels": [
            {"name": "eps", "epsilon": 2.0, "share": 0.05},
            {"name": "1.2eps", "epsilon": 2.4, "share": 0.05},
            {"name": "2eps", "epsilon": 4.0, "share": 0.90},
        ],
    },
}

#: Relative budget shrinks tried in turn: the first whose grid-rounded parameters pass the
#: float check of (6) is kept (the tiny default almost always; larger ones only where float64
#: cannot resolve 1 - a near 1, i.e. budgets of tens of nats).
MARGINS = (1e-10, 1e-8, 1e-6, 1e-4, 1e-3)


def to_grid_safe(a, b) -> tuple[np.ndarray, np.ndarray]:
    """Round ``a`` down and ``b`` up onto the 2^-48 grid: every ratio of (6) decreases (the safe side)."""
    from ldpplan.mechanisms.idue import to_grid

    return np.asarray(to_grid(a, "down"), dtype=float), np.asarray(to_grid(b, "up"), dtype=float)


def worst_case_mse(a, b, sizes, padding_length: int | None = None) -> float:
    """Worst-case total MSE of the runtime's count estimates divided by ``n`` (counts^2 per user).

    IDUE: eq. (9), ``sum_i m_i coef_n_i + max_i coef_c_i`` with ``coef_n = b(1-b)/(a-b)^2`` and
    ``coef_c = (1-a-b)/(a-b)``. IDUE-PS (estimator ``L`` times eq. 7): a user with a set of
    ``s <= L`` items samples each with probability ``1/L``; bit ``k`` is then Bernoulli
    ``b + pi (a - b)`` whose variance exceeds the known-sample one by ``pi (1 - pi) (a-b)^2``, so
    the worst case over users holding at most ``L`` items (no truncation bias) is
    ``L^2 [sum_i m_i coef_n_i + (1/L) sum over the L items of largest coef_c of
    max(0, coef_c + 1 - 1/L)]`` (``L^2 eq. 9 + L (L - 1)`` when the top level has >= L items).

    Returns
    -------
    float
        Counts^2 per user (divide by ``n`` for the total MSE of frequencies).

    References
    ----------
    Gu et al., ICDE 2020, eq. (7)-(9), Sec. VI-B (Algorithm 1).
    """
    from ldpplan.solvers.idue import worst_case_mse as eq9

    if not padding_length:
        return eq9(a, b, sizes)
    aa, bb = np.asarray(a, float), np.asarray(b, float)
    L = int(padding_length)
    noise = float(np.sum(np.asarray(sizes, float) * bb * (1 - bb) / (aa - bb) ** 2))
    gain = (1 - aa - bb) / (aa - bb) + 1.0 - 1.0 / L
    order = np.argsort(-gain, kind="stable")
    top = np.repeat(gain[order], np.minimum(np.asarray(sizes)[order], L))[:L]
    return float(L * L * noise + L * np.sum(np.maximum(top, 0.0)))


def solve_levels(levels: ResolvedLevels, model: str, notion: str):
    """Solve the model and round onto the grid; returns ``(a, b, SolveResult, margin)``.

    Raises
    ------
    PrivacyViolation
        If no margin of :data:`MARGINS` gives grid parameters satisfying (6) in float64
        (never observed for budgets in [1e-6, 100] nats; the exact check follows anyway).
    """
    from ldpplan.mechanisms.idue import level_privacy

    from ldpplan.solvers.idue import solve_idue

    gname = NOTION_NAMES[notion]
    for margin in MARGINS:
        res = solve_idue(levels.epsilons, levels.sizes, model=model, notion=notion, safety_margin=margin)
        a, b = to_grid_safe(res.a, res.b)
        if not np.all((0 < b) & (b < a) & (a < 1)):
            continue
        need = level_privacy(levels.epsilons, a, b, gname)
        if np.all(need <= levels.epsilons):
            return a, b, res, margin
    raise PrivacyViolation(f"IDUE {model}/{notion}: no safety margin in {MARGINS} gives grid parameters "
                           "satisfying constraint (6)")


def guarantee_of(names, epsilons, a, b, sizes, notion: str, padding_length=None, dummy=None) -> dict[str, Any]:
    """``guarantee``: notion, epsilon = min level budget, per-level budgets, Lemma 1's LDP budgets and,
    for IDUE-PS, ``set_budgets`` (eq. 16 min / max by set size, :func:`.itemsets.set_budget_table`).

    ``ldp_epsilon`` is the exact largest ``u_i + w_j`` over distinct items (the dummy items of
    IDUE-PS included); ``ldp_epsilon_kind`` says what it is for the plan's inputs: ``"exact"``, the
    plain-LDP budget of single-item inputs (IDUE), or ``"upper_bound"`` (IDUE-PS: an item set's report
    is a mixture over the items it samples, so the plain-LDP budget between item sets is at most the
    single-item value and can be lower, e.g. 1.49 vs 1.68 nats on ``health-itemsets``);
    ``ldp_epsilon_lemma1`` is Lemma 1's bound ``min(max E, 2 min E)`` (MinID-LDP only: Lemma 1 is
    about MinID-LDP).
    """
    from .itemsets import round_up
    from .verify import exact_ldp_epsilon

    e = np.asarray(epsilons, dtype=float)
    aa, bb, ss = np.asarray(a, float), np.asarray(b, float), np.asarray(sizes)
    if dummy is not None:
        aa, bb, ss = np.append(aa, dummy["a"]), np.append(bb, dummy["b"]), np.append(ss, padding_length)
    out = {"notion": NOTION_NAMES[notion], "epsilon": float(e.min()),
           "levels": {n: float(x) for n, x in zip(names, e)},
           # the exact value (50-digit logs of the exact rationals) rounded up to the next float
           "ldp_epsilon": round_up(exact_ldp_epsilon([float(x) for x in aa], [float(x) for x in bb],
                                                     [int(x) for x in ss])),
           "ldp_epsilon_kind": "exact" if dummy is None else "upper_bound"}
    if notion == "minid":
        out["ldp_epsilon_lemma1"] = float(min(e.max(), 2 * e.min()))
    if dummy is not None:
        from .itemsets import set_budget_table

        out["set_budgets"] = set_budget_table([float(x) for x in e], [int(x) for x in np.asarray(sizes)],
                                              int(padding_length), float(dummy["epsilon"]))
    return out


def predicted_of(a, b, sizes, padding_length=None, users: int | None = None) -> dict[str, Any]:
    """``predicted``: eq. (9) worst-case MSE in the units of the runtime's estimator."""
    value = worst_case_mse(a, b, sizes, padding_length)
    src = "Gu et al. ICDE 2020 eq. (9) at the plan's a, b"
    unit = "counts^2 per user (sum over items of MSE of counts / n)"
    if padding_length:
        src += (f", times L^2 = {padding_length ** 2} (the IDUE-PS estimator is L times eq. 7, Sec. VI-B), plus the "
                "padding-and-sampling variance; worst case over users holding at most L items (no truncation bias)")
        unit = "counts^2 per user (sum over items of MSE of the IDUE-PS count estimates L (c - n b)/(a - b), / n)"
    out = {"worst_case_mse_per_user": predicted(value, unit, src)}
    if users:
        out["worst_case_total_mse_frequency"] = predicted(
            value / users, "frequency^2 (sum over items)", f"worst_case_mse_per_user / n with n = {users} (spec users)")
    return out


def baselines_of(epsilon_min: float, m: int, padding_length=None) -> list[dict[str, Any]]:
    """RAPPOR and OUE at ``epsilon = min(E)`` (plain LDP) on the same ``m`` items, with eq. (9)."""
    from ldpplan.solvers.idue import oue, rappor

    rows = []
    for name, res in (("RAPPOR", rappor(epsilon_min)), ("OUE", oue(epsilon_min))):
        a, b = to_grid_safe(res.a, res.b)
        rows.append({"name": name, "guarantee": {"notion": "LDP", "epsilon": float(epsilon_min)},
                     "params": {"a": float(a), "b": float(b)},
                     "predicted": predicted_of([float(a)], [float(b)], [m], padding_length)})
    return rows


def plan_from_spec(raw: Mapping[str, Any], *, base_dir: Path | None = None) -> dict[str, Any]:
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
    from . import verify as _verify

    spec, levels = parse_idue_spec(raw, base_dir)
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
    return attach_verification(plan, _verify.verify_plan(plan))


#: ``planning_inputs[].what`` of the users' item sets read for ``guarantee.users_set_budgets``.
USERS_SETS_WHAT = "users' item sets (distribution of eq. 16 budgets in guarantee.users_set_budgets)"


def _add_user_set_budgets(plan: dict[str, Any], path: str) -> None:
    """``guarantee.users_set_budgets``: eq. (16) over the users of the domain file (raw data, private: false)."""
    from pathlib import Path as _Path

    from ..data import read_item_sets
    from .itemsets import budget_distribution, user_set_budgets

    _, indptr, indices = read_item_sets(path, plan["domain"]["labels"], plan["domain"]["size"])
    plan["guarantee"]["users_set_budgets"] = budget_distribution(user_set_budgets(plan, indptr, indices),
                                                                 _Path(path).name)
    plan["planning_inputs"].append({"what": USERS_SETS_WHAT, "source": str(path), "private": False})

"""IDUE / IDUE-PS family: spec -> certified plan -> independent verification -> simulation.

Source: Gu, Li, Xiong, Cao, ICDE 2020 (ID-LDP). Sec. V (IDUE, eq. 6-12), Sec. VI
(IDUE-PS, Algorithms 1-2, Theorem 4), Sec. VII (evaluation metrics MSE and RE(top-k)).
"""
from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ._common import attach_verification, plan_header, validate_plan_schema
from ._idue_spec import parse_idue_spec
from ._report import Table, Verification
from .errors import PlanFormatError, SpecError

__all__ = ["MECHANISMS", "EXAMPLES", "plan_from_spec", "verify_plan", "summarize", "simulate",
           "perturb_file", "estimate_file", "baseline_plan"]

MECHANISMS = ("idue", "idue-ps")

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


# ============================================================================ planning
def _grid(a, b):
    from ldpplan.mechanisms._sampling import to_grid

    # a down and b up lower every ratio a_i(1-b_j)/(b_i(1-a_j)): the safe direction.
    return np.asarray(to_grid(a, "down")), np.asarray(to_grid(b, "up"))


def _baseline_params(epsilon: float) -> dict[str, dict[str, float]]:
    from ldpplan.solvers.idue import oue, rappor

    out = {}
    for name, res in (("rappor", rappor(epsilon)), ("oue", oue(epsilon))):
        a, b = _grid(res.a, res.b)
        out[name] = {"epsilon": float(epsilon), "a": float(a), "b": float(b)}
    return out


def plan_from_spec(raw: Mapping[str, Any], *, base_dir: Path | None = None) -> dict[str, Any]:
    """Solve an IDUE / IDUE-PS spec into a verified plan.

    Parameters
    ----------
    raw : mapping
        The spec (see :mod:`planner._idue_spec` for the keys).
    base_dir : Path, optional
        Folder for relative CSV paths in the spec.

    Returns
    -------
    dict
        Plan with ``format_version``, ``mechanism``, ``model``, ``notion``, ``items`` (labels
        in index order), ``params.levels`` (``name, epsilon, size, items, a, b``),
        ``params.padding_length``, ``params.dummy`` (IDUE-PS), ``worst_case_mse_per_user``
        (eq. 9 at the returned parameters, counts^2 per user), ``baselines`` (RAPPOR and
        OUE at ``epsilon = min(E)``), ``solver``, ``verification``, ``spec``.

    Raises
    ------
    SpecError
        Invalid spec.
    PrivacyViolation
        The independent re-check failed (the plan is not returned).
    """
    from ldpplan.solvers.idue import solve_idue, worst_case_mse

    spec, levels = parse_idue_spec(raw, base_dir)
    try:
        res = solve_idue(levels.epsilons, levels.sizes, model=spec.model, notion=spec.notion)
    except ValueError as exc:  # pragma: no cover - the spec model already validated inputs
        raise SpecError("levels", str(exc), None) from None
    a, b = _grid(res.a, res.b)
    eps_min = float(levels.epsilons.min())
    plan = plan_header(spec.mechanism)
    plan.update({
        "model": spec.model,
        "notion": spec.notion,
        "items": list(levels.order),
        "params": {
            "levels": [
                {"name": n, "epsilon": float(e), "size": len(it), "items": list(it), "a": float(ai), "b": float(bi)}
                for n, e, it, ai, bi in zip(levels.names, levels.epsilons, levels.items, a, b)
            ],
            "padding_length": spec.padding_length,
        },
        "worst_case_mse_per_user": worst_case_mse(a, b, levels.sizes),
        "model_objective": float(res.objective),
        "baselines": {},
        "solver": {
            "name": res.solver, "status": res.status, "time_seconds": res.time_seconds,
            "objective": res.objective, "certificate": res.certificate.to_dict(),
            "merged_levels": res.extra["merged_levels"],
        },
    })
    if spec.mechanism == "idue-ps":
        k = int(np.argmin(levels.epsilons))
        plan["params"]["dummy"] = {"epsilon": eps_min, "a": float(a[k]), "b": float(b[k]),
                                   "note": "dummy items use the parameters of a level with epsilon* = min(E) (Theorem 4)"}
    m_total = int(levels.sizes.sum())
    for name, p in _baseline_params(eps_min).items():
        p["worst_case_mse_per_user"] = worst_case_mse([p["a"]], [p["b"]], [m_total])
        plan["baselines"][name] = p
    plan["spec"] = dict(raw)
    return attach_verification(plan, verify_plan(plan))


# ============================================================================ verification
def _exact_pair_slack(ai: float, bi: float, aj: float, bj: float, r: Fraction) -> Decimal:
    """Exact-rational log slack ``r - ln[a_i(1-b_j)/(b_i(1-a_j))]`` (50 significant digits)."""
    ratio = Fraction(ai) * (1 - Fraction(bj)) / (Fraction(bi) * (1 - Fraction(aj)))
    with localcontext() as ctx:
        ctx.prec = 50
        return Decimal(r.numerator) / Decimal(r.denominator) - (Decimal(ratio.numerator) / Decimal(ratio.denominator)).ln()


def _pair_budget(ei: float, ej: float, notion: str) -> Fraction:
    return Fraction(min(ei, ej)) if notion == "minid" else (Fraction(ei) + Fraction(ej)) / 2


def verify_plan(plan: Mapping[str, Any]) -> Verification:
    """Independently re-check an IDUE / IDUE-PS plan from its numbers.

    Checks the plan schema, that levels partition ``items``, ``0 < b < a < 1``, and
    constraint (6) ``a_i(1-b_j)/(b_i(1-a_j)) <= e^{r(eps_i, eps_j)}`` for every ordered
    pair of levels (including the dummy level of IDUE-PS, Theorem 4). The worst pair is
    found in O(t) in float64 and then re-checked in exact rational arithmetic with 50-digit
    logarithms; the float result is trusted only with a margin above its rounding error.

    Returns
    -------
    Verification
        ``details``: ``max_log_ratio_slack`` (max over pairs of log-ratio minus log-bound,
        nats; <= 0 holds), ``min_slack_nats`` (its negative), ``worst_pair``,
        ``pairs_checked``, ``exact_worst_slack``.

    Raises
    ------
    PlanFormatError
        Schema violations, inconsistent item lists, probabilities out of range.
    """
    validate_plan_schema(plan, "idue")
    notion = plan["notion"]
    levels = plan["params"]["levels"]
    names = [lv["name"] for lv in levels]
    e = np.array([lv["epsilon"] for lv in levels], dtype=float)
    a = np.array([lv["a"] for lv in levels], dtype=float)
    b = np.array([lv["b"] for lv in levels], dtype=float)
    listed = [x for lv in levels for x in lv["items"]]
    if sorted(listed) != sorted(plan["items"]) or len(set(listed)) != len(listed):
        raise PlanFormatError("params.levels[*].items: the levels must partition 'items' (each item in exactly one level)")
    for lv in levels:
        if lv["size"] != len(lv["items"]):
            raise PlanFormatError(f"params.levels[{lv['name']}].size: must equal the number of items ({len(lv['items'])})")
    if plan["mechanism"] == "idue-ps":
        dummy = plan["params"].get("dummy")
        if not plan["params"].get("padding_length") or not dummy:
            raise PlanFormatError("params.padding_length / params.dummy: required for mechanism 'idue-ps'")
        if notion != "minid":
            raise PlanFormatError("notion: IDUE-PS plans must use 'minid' (Theorem 4)")
        if dummy["epsilon"] > e.min():
            raise PlanFormatError(f"params.dummy.epsilon: must be <= min level epsilon {e.min()} (Theorem 4)")
        names = names + ["<dummy>"]
        e = np.append(e, dummy["epsilon"])
        a = np.append(a, dummy["a"])
        b = np.append(b, dummy["b"])
    bad = ~((0 < b) & (b < a) & (a < 1))
    if bad.any():
        k = int(np.argmax(bad))
        return Verification(False, f"level {names[k]!r}: probabilities must satisfy 0 < b < a < 1 (a={a[k]}, b={b[k]})",
                            {"worst_pair": [names[k], names[k]]})
    from ldpplan.solvers.idue import log_ratio_slack  # O(t) float reduction

    slack, i, j = log_ratio_slack(a, b, e, notion)
    exact = _exact_pair_slack(a[i], b[i], a[j], b[j], _pair_budget(e[i], e[j], notion))
    # float64 error of the O(t) reduction is below ~16 ulp of the largest log term
    scale = float(np.max(np.abs(np.concatenate([e, np.log(a), np.log(b), np.log1p(-a), np.log1p(-b)]))))
    float_err = 64 * np.finfo(float).eps * max(1.0, scale)
    holds = exact >= 0 and slack >= float_err
    if exact >= 0 and not holds:
        # near-tie: re-check exactly every pair whose float slack is within the error bound
        holds = _exact_near_ties(a, b, e, notion, slack + 2 * float_err)
    t = len(names)
    details = {
        "max_log_ratio_slack": -float(slack),
        "min_slack_nats": float(slack),
        "exact_worst_slack": f"{exact:.6e}",
        "worst_pair": [names[i], names[j]],
        "pairs_checked": t * t,
        "method": "O(t) float64 reduction of all ordered level pairs + exact rational re-check of the worst pair",
    }
    if holds:
        msg = (f"constraint (6) holds for all {t * t} ordered level pairs ({notion}); "
               f"smallest slack {float(slack):.3e} nats at ({names[i]}, {names[j]})")
    else:
        msg = (f"constraint (6) violated for levels ({names[i]}, {names[j]}) by {-float(slack):.3e} nats "
               f"(exact {-exact:.3e}): a_i(1-b_j)/(b_i(1-a_j)) exceeds e^r")
    return Verification(bool(holds), msg, details)


def _exact_near_ties(a, b, e, notion, threshold) -> bool:
    u = np.log(a) - np.log(b)
    w = np.log1p(-b) - np.log1p(-a)
    r = np.minimum.outer(e, e) if notion == "minid" else np.add.outer(e, e) / 2
    s = r - u[:, None] - w[None, :]
    for i, j in zip(*np.nonzero(s <= threshold)):
        if _exact_pair_slack(a[i], b[i], a[j], b[j], _pair_budget(e[i], e[j], notion)) < 0:
            return False
    return True


# ============================================================================ summary
def summarize(plan: Mapping[str, Any]) -> list[Table]:
    """Per-level table (epsilon, size, a, b, flip probabilities, variance coefficients) and
    the comparison of worst-case MSE with RAPPOR and OUE at ``epsilon = min(E)``."""
    rows = []
    for lv in plan["params"]["levels"]:
        a, b = lv["a"], lv["b"]
        rows.append([lv["name"], lv["epsilon"], lv["size"], a, b, 1 - a,
                     b * (1 - b) / (a - b) ** 2, (1 - a - b) / (a - b)])
    ps = plan["mechanism"] == "idue-ps"
    title = (f"{plan['mechanism'].upper()} {plan['model']} ({'MinID' if plan['notion'] == 'minid' else 'AvgID'}-LDP)"
             + (f", padding length L = {plan['params']['padding_length']}" if ps else ""))
    cols = ["level", "epsilon", "size", "a", "b", "1-a", "coef n", "coef c"]
    cert = plan["solver"]["certificate"]
    levels_table = Table(title, cols, rows,
                         note=(f"Flip probabilities: 1->0 is 1-a, 0->1 is b. Var[c_hat_k] = n * coef_n + c_k * coef_c (eq. 8). Solver {plan['solver']['name']}, "
                               f"{plan['solver']['status']}, certified gap {cert['gap']:.2e}, {plan['solver']['time_seconds']:.3f} s."))
    wc = plan["worst_case_mse_per_user"]
    cmp_rows = [[f"IDUE {plan['model']}", "MinID-LDP" if plan["notion"] == "minid" else "AvgID-LDP",
                 "per level", "per level", wc, 1.0]]
    for name, p in plan["baselines"].items():
        cmp_rows.append([name.upper(), f"{p['epsilon']:.4g}-LDP", p["a"], p["b"], p["worst_case_mse_per_user"],
                         p["worst_case_mse_per_user"] / wc])
    cmp = Table("Worst-case total MSE of counts per user (eq. 9; multiply by n)",
                ["mechanism", "guarantee", "a", "b", "MSE / n", "vs IDUE"], cmp_rows,
                note="RAPPOR and OUE satisfy epsilon-LDP with epsilon = min(E), the strongest level.")
    return [levels_table, cmp]


# ============================================================================ runtime helpers
def baseline_plan(plan: Mapping[str, Any], name: str) -> dict[str, Any]:
    """An in-memory plan running baseline ``name`` ("rappor" | "oue") on the same items
    (and the same padding length for IDUE-PS), for comparisons."""
    p = plan["baselines"][name]
    out = {k: plan[k] for k in ("format_version", "mechanism", "items")}
    out["params"] = {
        "levels": [{"name": name, "epsilon": p["epsilon"], "size": len(plan["items"]), "items": list(plan["items"]),
                    "a": p["a"], "b": p["b"]}],
        "padding_length": plan["params"].get("padding_length"),
    }
    if plan["mechanism"] == "idue-ps":
        out["params"]["dummy"] = {"epsilon": p["epsilon"], "a": p["a"], "b": p["b"]}
    return out


from ._idue_sim import estimate_file, perturb_file, simulate  # noqa: E402  (kept in a separate module)

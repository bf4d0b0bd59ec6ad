r"""IDUE perturbation probabilities: the optimisation models opt0, opt1, opt2.

Source: Gu, Li, Xiong, Cao, *Providing Input-Discriminative Protection for Local
Differential Privacy*, ICDE 2020 (``ID-LDP`` below), Sec. V-D, eq. (6), (9), (11), (12),
and Sec. VIII (AvgID-LDP).

The privacy levels ``i = 1..t`` have budgets ``epsilon_i`` and sizes ``m_i`` (items per
level). Each level gets unary-encoding probabilities ``a_i = Pr(y[k]=1 | x[k]=1)`` and
``b_i = Pr(y[k]=1 | x[k]=0)``. The ID-LDP constraint (6) is

.. math:: \frac{a_i (1-b_j)}{b_i (1-a_j)} \le e^{r(\epsilon_i, \epsilon_j)}\quad \forall i, j,

with ``r = min`` (MinID-LDP) or ``r = average`` (AvgID-LDP).

Exact reduction used here (a proof sketch, checked numerically in the tests)
-------------------------------------------------------------------------
Write ``u_i = ln(a_i / b_i)`` and ``w_i = ln((1-b_i)/(1-a_i))``; for ``0 < b < a < 1``
this is a bijection onto ``u, w > 0`` with ``b = expm1(w)/expm1(u+w)``, ``a = b e^u``.
Constraint (6) becomes linear: ``u_i + w_j <= r(eps_i, eps_j)``. With
``X = 1/(e^u - 1)`` and ``Y = 1/(e^w - 1)``,
``b(1-b)/(a-b)^2 = X(1+Y)`` and ``(1-a-b)/(a-b) = Y - X``, so the objective of (9) is
``f = sum_i m_i X_i (1+Y_i) + max_k (Y_k - X_k)``
``  = max_k [ Y_k + (m_k - 1) X_k + m_k X_k Y_k + sum_{i != k} m_i X_i (1+Y_i) ]``,
a maximum of convex functions (``X``, ``Y`` and ``XY`` are convex; ``m_k >= 1``): opt0 is
convex in ``(u, w)``. Every branch is non-increasing in every ``u_i`` and ``w_i``.

* MinID (r = min): the ``t^2`` constraints are equivalent to ``u_i <= U``, ``w_j <= W``,
  ``u_i + W <= eps_i``, ``U + w_j <= eps_j`` with two scalars ``U, W`` (take ``U = max u``,
  ``W = max w``). Because ``f`` is non-increasing, for fixed ``(U, W)`` the optimum is
  ``u_i = min(U, eps_i - W)``, ``w_i = min(W, eps_i - U)``; the reduced function
  ``F(U, W)`` is convex (partial minimisation of a convex problem) on
  ``(0, eps_min)^2``. opt0 is therefore a 2-variable convex problem, O(t) per evaluation.
* AvgID (r = average): ``u_i - eps_i/2 <= P`` and ``w_j - eps_j/2 <= Q`` with ``P + Q <= 0``;
  at the optimum ``Q = -P`` and ``u_i = eps_i/2 + P``, ``w_i = eps_i/2 - P``: one variable.
* opt1 (a + b = 1, so ``u = w = tau``): MinID ``tau_i = min(T, eps_i - T)``, one variable;
  AvgID ``tau_i = eps_i / 2`` in closed form.
* opt2 (a = 1/2): constraints ``e^r b_i + b_j >= 1`` are linear in ``b``; MinID reduces to
  ``b_i = max(B, (1-B) e^{-eps_i}, 1 - B e^{eps_i})`` with ``B = min b``; AvgID to
  ``b_i = max(S e^{-eps_i/2}, 1 - S e^{eps_i/2})``; one variable each.

The reduced problems are minimised by Brent's bounded line search and certified by a
cutting-plane lower bound (:mod:`solvers._lowdim`); :func:`solve_opt0_conic` solves the
full exponential-cone program with CVXPY as an independent cross-check.
"""
from __future__ import annotations

import math
import time
from typing import Sequence

import numpy as np
import numpy.typing as npt

from ._idue_reduced import _Opt0, _reduce_opt0_avg, _reduce_opt0_min, _reduce_opt1_min, _reduce_opt2  # noqa: F401
from ._lowdim import minimize_convex
from ._result import STATUS_CLOSED_FORM, STATUS_OPTIMAL, Certificate, SolveResult, SolverError

__all__ = [
    "MODELS", "NOTIONS", "EPSILON_CAP", "solve_idue", "solve_opt0_conic", "rappor", "oue",
    "worst_case_mse", "model_objective", "log_ratio_slack", "ue_from_uw",
]

MODELS = ("opt0", "opt1", "opt2")
NOTIONS = ("minid", "avgid")

#: Budgets are shrunk by this relative amount before solving, so that the
#: returned probabilities satisfy (6) with a margin far above float64 rounding.
SAFETY_MARGIN = 1e-10
#: Budgets above this many nats are solved at it. ``1 - a`` and ``b`` then stay above
#: ``e^-30 ~ 9e-14``: representable on the 2^-48 probability grid (3.6e-15) and in float64
#: near 1. Parameters that satisfy (6) at the capped budgets satisfy it a fortiori at the
#: larger ones; the variance given up is below ``m e^-15`` counts^2 per user.
EPSILON_CAP = 30.0
#: The solver's own float check of (6) tolerates this much (nats, relative to max(1, eps)):
#: float64 cannot resolve ``1 - a`` near 1 better; planners re-check exactly on the grid.
FLOAT_CHECK_TOLERANCE = 1e-6


# ----------------------------------------------------------------------------- helpers
def ue_from_uw(u: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Map ``u = ln(a/b)``, ``w = ln((1-b)/(1-a))`` (both > 0) back to ``(a, b)``."""
    u = np.asarray(u, dtype=float)
    w = np.asarray(w, dtype=float)
    b = np.expm1(w) / np.expm1(u + w)
    a = b * np.exp(u)
    return a, b


def worst_case_mse(a: npt.ArrayLike, b: npt.ArrayLike, sizes: npt.ArrayLike) -> float:
    """Objective of ID-LDP eq. (9) at given probabilities.

    ``sum_i m_i b_i(1-b_i)/(a_i-b_i)^2 + max_i (1-a_i-b_i)/(a_i-b_i)``: the worst-case
    total MSE of the count estimates (eq. 7) divided by ``n`` (units: counts^2 per user;
    divide by ``n`` once more for the total MSE of frequencies).

    Parameters
    ----------
    a, b : array_like, shape (t,)
    sizes : array_like, shape (t,)
        Items per level ``m_i``.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    m = np.asarray(sizes, dtype=float)
    return float(np.sum(m * b * (1 - b) / (a - b) ** 2) + np.max((1 - a - b) / (a - b)))


def model_objective(model: str, a: npt.ArrayLike, b: npt.ArrayLike, sizes: npt.ArrayLike) -> float:
    """The objective each model minimises, at ``(a, b)``: eq. (9), (11) or (12)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    m = np.asarray(sizes, dtype=float)
    if model == "opt0":
        return worst_case_mse(a, b, m)
    if model in ("opt1", "opt2"):
        return float(np.sum(m * b * (1 - b) / (a - b) ** 2))
    raise ValueError(f"model must be one of {MODELS} (got {model!r})")


def log_ratio_slack(a: npt.ArrayLike, b: npt.ArrayLike, epsilons: npt.ArrayLike, notion: str = "minid"
                    ) -> tuple[float, int, int]:
    """Smallest slack of constraint (6) in nats, over all ordered pairs of levels.

    ``slack_ij = r(eps_i, eps_j) - ln[a_i (1-b_j) / (b_i (1-a_j))]``; computed in O(t)
    (see the module notes). Returns ``(min slack, i, j)``; the constraint holds iff the
    slack is >= 0.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    e = np.asarray(epsilons, dtype=float)
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b)) and np.all(np.isfinite(e))):
        raise ValueError("log_ratio_slack: a, b and epsilons must be finite (a NaN would make argmin pick it)")
    d = a - b  # exact (Sterbenz) when a and b are close: accurate u, w at tiny budgets
    u = np.log1p(d / b)
    w = np.log1p(d / (1.0 - a))
    if notion == "minid":
        # min_{i,j} min(e_i, e_j) - u_i - w_j
        j1 = int(np.argmax(w))
        i1 = int(np.argmin(e - u))
        s1 = float(e[i1] - u[i1] - w[j1])           # branch r = e_i
        i2 = int(np.argmax(u))
        j2 = int(np.argmin(e - w))
        s2 = float(e[j2] - w[j2] - u[i2])           # branch r = e_j
        return (s1, i1, j1) if s1 <= s2 else (s2, i2, j2)
    if notion == "avgid":
        i = int(np.argmin(e / 2 - u))
        j = int(np.argmin(e / 2 - w))
        return float(e[i] / 2 - u[i] + e[j] / 2 - w[j]), i, j
    raise ValueError(f"notion must be one of {NOTIONS} (got {notion!r})")


def _validate(epsilons, sizes, model: str, notion: str) -> tuple[np.ndarray, np.ndarray]:
    e = np.asarray(epsilons, dtype=float)
    m = np.asarray(sizes, dtype=float)
    if e.ndim != 1 or e.size == 0:
        raise ValueError("`epsilons` must be a non-empty one-dimensional array")
    if m.shape != e.shape:
        raise ValueError(f"`sizes` must have the same shape as `epsilons` ({m.shape} != {e.shape})")
    if not np.all(np.isfinite(e)) or np.any(e <= 0):
        raise ValueError(f"`epsilons` must be finite and > 0 (got {e[~(np.isfinite(e) & (e > 0))][:3]})")
    if np.any(m < 1) or np.any(m != np.floor(m)):
        raise ValueError("`sizes` must be integers >= 1")
    if model not in MODELS:
        raise ValueError(f"`model` must be one of {MODELS} (got {model!r})")
    if notion not in NOTIONS:
        raise ValueError(f"`notion` must be one of {NOTIONS} (got {notion!r})")
    return e, m


# ----------------------------------------------------------------------------- reduced problems (see _idue_reduced)
def _solve_reduced(e, m, model, notion):
    """Return (a, b, lowdim_solution or None, reduced_dimension)."""
    if model == "opt1" and notion == "avgid":
        tau = e / 2
        return np.exp(tau) / (np.exp(tau) + 1), 1 / (np.exp(tau) + 1), None, 0
    if model == "opt0":
        uw, vg, lo, hi, value = (_reduce_opt0_min if notion == "minid" else _reduce_opt0_avg)(e, m)
        sol = minimize_convex(value, vg, lo, hi)
        u, w = uw(sol.z)
        a, b = ue_from_uw(u, w)
        return a, b, sol, len(lo)
    if model == "opt1":
        uw, vg, lo, hi = _reduce_opt1_min(e, m)
        sol = minimize_convex(lambda z: vg(z)[0], vg, lo, hi)
        tau, _ = uw(sol.z)
        return np.exp(tau) / (np.exp(tau) + 1), 1 / (np.exp(tau) + 1), sol, 1
    b_of, vg, lo, hi = _reduce_opt2(e, m, notion)
    sol = minimize_convex(lambda z: vg(z)[0], vg, lo, hi)
    b, _ = b_of(sol.z)
    return np.full_like(b, 0.5), b, sol, 1


# ----------------------------------------------------------------------------- public solvers
def solve_idue(epsilons: Sequence[float] | np.ndarray, sizes: Sequence[int] | np.ndarray, *, model: str = "opt0",
               notion: str = "minid", safety_margin: float = SAFETY_MARGIN) -> SolveResult:
    """Optimal IDUE probabilities ``(a_i, b_i)`` per privacy level.

    Parameters
    ----------
    epsilons : array_like of float, shape (t,)
        Privacy budget of each level (nats, > 0). Levels with equal budgets are merged
        internally (they get equal probabilities).
    sizes : array_like of int, shape (t,)
        Number of items ``m_i >= 1`` in each level.
    model : {"opt0", "opt1", "opt2"}
        ID-LDP eq. (9) (worst-case MSE, global optimum), (11) (RAPPOR structure
        ``a + b = 1``) or (12) (OUE structure ``a = 1/2``).
    notion : {"minid", "avgid"}
        ``r = min`` (MinID-LDP, Def. 3) or ``r = average`` (AvgID-LDP, Sec. VIII).
    safety_margin : float
        Budgets are multiplied by ``1 - safety_margin`` before solving so that (6) holds
        with slack at the returned float probabilities. Budgets above :data:`EPSILON_CAP`
        (30 nats) are solved at the cap (float64 cannot represent ``1 - a`` below ~1e-16).

    Returns
    -------
    SolveResult
        ``parameters``: ``a``, ``b`` (shape (t,), in input order), ``epsilon``, ``size``.
        ``objective``: the model's own objective (eq. 9, 11 or 12; counts^2 per user).
        ``extra["worst_case_mse"]``: eq. (9) at the returned parameters (every model).
        ``extra["min_log_ratio_slack"]``: smallest slack of (6) in nats (>= 0).
        ``certificate``: cutting-plane lower bound on the reduced convex problem
        (or ``closed form``), so ``certificate.gap`` bounds the distance to the global
        optimum of the model.

    Raises
    ------
    ValueError
        Invalid epsilons (<= 0, NaN), sizes (< 1), model or notion.
    SolverError
        If the certified gap is not small (relative gap > 1e-6) or the returned
        probabilities violate (6) by more than float64 can resolve
        (:data:`FLOAT_CHECK_TOLERANCE`); planners round onto the 2^-48 grid toward the safe
        side and decide (6) exactly.
    """
    t0 = time.perf_counter()
    e, m = _validate(epsilons, sizes, model, notion)
    capped = np.minimum(e, EPSILON_CAP)
    uniq, inverse = np.unique(capped, return_inverse=True)
    msum = np.bincount(inverse, weights=m)
    shrunk = uniq * (1.0 - safety_margin)
    a_u, b_u, sol, dim = _solve_reduced(shrunk, msum, model, notion)
    a, b = a_u[inverse], b_u[inverse]
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b)) and np.all((0 < b) & (b < a) & (a < 1))):
        raise SolverError(f"IDUE {model}/{notion}: reduced solve produced probabilities outside 0 < b < a < 1")
    slack, _, _ = log_ratio_slack(a_u, b_u, uniq, notion)
    if slack < -FLOAT_CHECK_TOLERANCE * max(1.0, float(uniq.max())):
        raise SolverError(f"IDUE {model}/{notion}: solution violates constraint (6) by {-slack:.3g} nats")
    objective = model_objective(model, a_u, b_u, msum)
    if sol is None:
        cert = Certificate("closed form", objective, objective, {"reduced_dimension": 0})
        status = STATUS_CLOSED_FORM
    else:
        cert = Certificate(
            "cutting-plane lower bound on the exact convex reduction",
            lower_bound=min(sol.lower_bound, objective), upper_bound=objective,
            details={"reduced_dimension": dim, "evaluations": sol.evaluations, "cuts": sol.cuts,
                     "reduced_point": [float(x) for x in sol.z], "safety_margin": safety_margin},
        )
        status = STATUS_OPTIMAL
        if cert.relative_gap > 1e-6:
            raise SolverError(f"IDUE {model}/{notion}: could not certify optimality (relative gap {cert.relative_gap:.3g})")
    return SolveResult(
        status=status,
        objective=objective,
        parameters={"a": a, "b": b, "epsilon": e, "size": m.astype(np.int64)},
        certificate=cert,
        solver=f"ldpplan-reduced-{model}-{notion}",
        time_seconds=time.perf_counter() - t0,
        extra={"worst_case_mse": worst_case_mse(a_u, b_u, msum), "min_log_ratio_slack": slack,
               "merged_levels": int(uniq.size), "model": model, "notion": notion,
               "capped_levels": int(np.count_nonzero(e > EPSILON_CAP)), "epsilon_cap": EPSILON_CAP},
    )


def solve_opt0_conic(epsilons: Sequence[float], sizes: Sequence[int], *, notion: str = "minid",
                     solver: str | None = None) -> SolveResult:
    """opt0 (eq. 9) as an exponential-cone program in CVXPY: an independent cross-check.

    Variables ``xi = ln X``, ``zeta = ln Y``, ``u``, ``w``; ``u >= log(1 + e^{-xi})``,
    ``w >= log(1 + e^{-zeta})``; the O(t) linear form of constraint (6); and the
    objective ``max_k [R - E_k + e^{zeta_k}] + sum_i m_i e^{xi_i + zeta_i}`` with
    ``R = sum_i m_i E_i``, ``E_i >= e^{xi_i}`` (exact because every ``E`` has a
    non-negative coefficient). Intended for small ``t`` (tests): generic conic solvers
    lose accuracy on large instances, which is why :func:`solve_idue` does not use it.

    Returns
    -------
    SolveResult
        ``certificate.kind == "conic duality gap"``; ``objective`` is eq. (9) evaluated
        at the recovered ``(a, b)``.

    Raises
    ------
    SolverError
        If CVXPY's status is not optimal.
    """
    import cvxpy as cp  # deferred: cvxpy

    t0 = time.perf_counter()
    e, m = _validate(epsilons, sizes, "opt0", notion)
    t = e.size
    xi, zeta, u, w, E = (cp.Variable(t) for _ in range(5))
    s = cp.Variable()
    cons = [u >= cp.logistic(-xi), w >= cp.logistic(-zeta), E >= cp.exp(xi)]
    if notion == "minid":
        U, W = cp.Variable(), cp.Variable()
        cons += [u <= U, w <= W, u + W <= e, U + w <= e]
    else:
        P = cp.Variable()
        cons += [u - e / 2 <= P, w - e / 2 <= -P]
    R = m @ E
    cons += [s >= R - E + cp.exp(zeta)]
    prob = cp.Problem(cp.Minimize(s + m @ cp.exp(xi + zeta)), cons)
    try:
        prob.solve(solver=solver or cp.CLARABEL)
    except cp.error.SolverError as exc:
        raise SolverError(f"IDUE opt0 conic: backend failed ({exc})") from None
    if prob.status != cp.OPTIMAL:
        raise SolverError(f"IDUE opt0 conic: solver status {prob.status!r}")
    if u.value is None or w.value is None:
        raise SolverError("IDUE opt0 conic: the backend reported optimal but returned no solution")
    a, b = ue_from_uw(np.maximum(u.value, 1e-300), np.maximum(w.value, 1e-300))
    obj = worst_case_mse(a, b, m)
    stats = prob.solver_stats
    return SolveResult(
        status=STATUS_OPTIMAL, objective=obj, parameters={"a": a, "b": b, "epsilon": e, "size": m.astype(np.int64)},
        certificate=Certificate("conic duality gap", lower_bound=float(prob.value) - 1e-6 * max(1.0, abs(prob.value)),
                                upper_bound=obj, details={"backend": stats.solver_name, "iterations": stats.num_iters}),
        solver=f"cvxpy-{stats.solver_name}", time_seconds=time.perf_counter() - t0,
        extra={"worst_case_mse": obj, "conic_objective": float(prob.value)},
    )


def rappor(epsilon: float) -> SolveResult:
    """Basic RAPPOR (symmetric unary encoding) under epsilon-LDP.

    ``a = e^{eps/2}/(e^{eps/2}+1)``, ``b = 1 - a`` (ID-LDP Sec. III-C; Erlingsson et al. 2014).
    ``objective`` is the per-item variance coefficient ``b(1-b)/(a-b)^2`` (counts^2 per user).
    """
    return _closed_form_ue("rappor", epsilon, math.exp(epsilon / 2) / (math.exp(epsilon / 2) + 1),
                           1 / (math.exp(epsilon / 2) + 1))


def oue(epsilon: float) -> SolveResult:
    """Optimized unary encoding under epsilon-LDP: ``a = 1/2``, ``b = 1/(e^eps + 1)``.

    ID-LDP Sec. III-C (Wang et al. 2017). ``objective`` is ``b(1-b)/(a-b)^2 = 4e^eps/(e^eps-1)^2``.
    """
    return _closed_form_ue("oue", epsilon, 0.5, 1 / (math.exp(epsilon) + 1))


def _closed_form_ue(name: str, epsilon: float, a: float, b: float) -> SolveResult:
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"`epsilon` must be finite and > 0 (got {epsilon!r})")
    obj = b * (1 - b) / (a - b) ** 2
    return SolveResult(STATUS_CLOSED_FORM, obj, {"a": a, "b": b, "epsilon": epsilon},
                       Certificate("closed form", obj, obj), name, 0.0)

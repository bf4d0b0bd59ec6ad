r"""PCKV budget composition, allocation, error analysis and padding-length selection.

Source: Gu, Li, Cheng, Xiong, Cao, *PCKV: Locally Differentially Private Correlated
Key-Value Data Collection with Optimized Utility*, USENIX Security 2020 ("PCKV" below),
Sec. 5.2-5.4 and App. A-F. Equation numbers refer to that paper.

Symbols (all budgets in nats):

* ``epsilon1`` / ``epsilon2``: budgets of the key and of the value perturbation;
* ``a``, ``b``: key kept / key reported when not held (PCKV-UE: per position;
  PCKV-GRR: ``b = (1 - a) / (d' - 1)`` per other key);
* ``p``: value kept given the key was kept;
* ``padding_length`` (``L``, the paper's ``ell``) and ``d' = d + L``.

Composition (both ways)
-----------------------
* :func:`compose_ue` - Theorem 2, eq. (3); :func:`compose_grr` - Theorem 3, eq. (6).
* :func:`max_epsilon2` - the largest ``epsilon2`` feasible with a given ``epsilon1``
  (eq. (4) for PCKV-UE; for PCKV-GRR eq. (6) solved for ``e^{epsilon2}``, a quadratic).
  The feasible set of ``(epsilon1, epsilon2)`` under a total ``epsilon`` is
  ``{0 <= epsilon1 < epsilon1_max, 0 <= epsilon2 <= max_epsilon2(epsilon1)}``
  (:func:`feasible_frontier`).

Allocation
----------
:func:`allocate` - ``"optimized"`` (Lemma 2 eq. (20) / Lemma 3 eq. (22)-(23)),
``"naive"`` (``epsilon/2`` each, sequential composition as in PrivKVM),
``"tight"`` (eq. (21): ``epsilon2 = epsilon/2`` and the largest ``epsilon1`` the exact
composition allows) and ``"numeric"`` (minimise ``w_f MSE_f + w_m MSE_m`` of
Theorem 4 over the exact composition frontier).

Errors
------
:func:`theorem4_mse` - eq. (9)-(12) per key, plus the truncation bias of users holding
more than ``L`` pairs (see :func:`truncation_factor`); :func:`approximate_mse` - eq. (16)-(18).
"""
from __future__ import annotations

import math
import time
from typing import Any, Callable

import numpy as np

from ._checks import check_epsilon
from ._pckv_compose import (EPSILON2_CAP, MECHANISMS, budgets_from_probabilities, compose, compose_grr, compose_ue,
                            feasible_frontier, grr_probabilities, max_epsilon1, max_epsilon2, probabilities,
                            ue_probabilities)
from ._pckv_errors import (KeyModel, WorstKey, approximate_mse, corrected_mean_mse, theorem4_mse, truncation_factor,
                           worst_case_corrected_mean_mse, worst_case_mean_mse)
from ._result import Certificate, SolveResult, SolverError, STATUS_CLOSED_FORM, STATUS_OPTIMAL

__all__ = [
    "compose_ue", "compose_grr", "compose", "max_epsilon1", "max_epsilon2", "feasible_frontier",
    "ue_probabilities", "grr_probabilities", "probabilities", "budgets_from_probabilities",
    "allocate", "ALLOCATIONS", "theorem4_mse", "approximate_mse", "truncation_factor", "worst_case_mean_mse",
    "corrected_mean_mse", "worst_case_corrected_mean_mse", "WorstKey",
    "choose_mechanism", "choose_padding_length", "KeyModel", "sec54_conditions", "MECHANISMS", "EPSILON2_CAP",
]

#: Allocation methods accepted by :func:`allocate`.
ALLOCATIONS = ("optimized", "numeric", "naive", "tight")
#: Grid points of the numeric allocation's 1-D search before the bounded Brent refinement.
NUMERIC_GRID_POINTS = 500


# -------------------------------------------------------------- allocation
def _closed_form(mechanism: str, method: str, epsilon: float, L: int) -> tuple[float, float]:
    eps = float(epsilon)
    if method == "naive":
        return eps / 2.0, eps / 2.0
    if method == "optimized":
        if mechanism == "pckv-ue":
            return math.log((math.exp(eps) + 1.0) / 2.0), eps            # (20)
        return math.log(L * math.expm1(eps) / 2.0 + 1.0), math.log(L * math.expm1(eps) + 1.0)  # (22)
    if method == "tight":
        e2 = eps / 2.0
        if mechanism == "pckv-ue":
            return math.log((math.exp(eps) + math.exp(eps / 2.0)) / 2.0), e2   # (21)
        return _max_epsilon1_given_epsilon2(mechanism, eps, e2, L), e2
    raise ValueError(f"allocation must be one of {ALLOCATIONS} (got {method!r})")


def _max_epsilon1_given_epsilon2(mechanism: str, epsilon: float, epsilon2: float, L: int) -> float:
    """Largest ``epsilon1`` with composed budget ``<= epsilon`` (bisection; composition increases in epsilon1)."""
    lo, hi = 0.0, max_epsilon1(mechanism, epsilon, L)
    if compose(mechanism, 0.0, epsilon2, L) > epsilon:
        raise SolverError(f"epsilon2={epsilon2} alone exceeds epsilon={epsilon}")
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if compose(mechanism, mid, epsilon2, L) <= epsilon:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-15 * max(1.0, hi):
            break
    return lo


def allocate(mechanism: str, epsilon: float, *, method: str = "optimized", domain_size: int,
             padding_length: int = 1, model: KeyModel | None = None,
             weights: tuple[float, float] = (1.0, 1.0)) -> SolveResult:
    r"""Split a total budget into ``(epsilon1, epsilon2)`` and perturbation probabilities.

    Parameters
    ----------
    mechanism : {"pckv-ue", "pckv-grr"}
    epsilon : float
        Total budget in nats (> 0).
    method : {"optimized", "numeric", "naive", "tight"}
        ``optimized``: Lemma 2, eq. (20) (UE) / Lemma 3, eq. (22)-(23) (GRR), closed form.
        ``naive``: ``epsilon/2`` each (sequential composition, Theorem 1; PrivKVM).
        ``tight``: eq. (21) for UE; for GRR ``epsilon2 = epsilon/2`` and the largest
        feasible ``epsilon1`` under Theorem 3 (bisection).
        ``numeric``: minimise ``w_f MSE_f + w_m MSE_m`` (Theorem 4, averaged over
        ``model.objective_keys``) over ``epsilon1`` with ``epsilon2 = max_epsilon2(epsilon1)``
        from the *exact* composition (both MSEs are non-increasing in ``epsilon2``, so
        the optimum is on this frontier). Grid of NUMERIC_GRID_POINTS (500) then bounded
        Brent refinement; the result is never worse than the closed form (it is
        kept if the search does not beat it).
    domain_size : int
        ``d`` (number of keys).
    padding_length : int
        ``L``.
    model : KeyModel, optional
        Prior frequencies/means and ``n`` for the predicted objective (required for
        ``numeric``; otherwise only used to report the objective).
    weights : (w_f, w_m)

    Returns
    -------
    SolveResult
        ``parameters``: ``epsilon1``, ``epsilon2``, ``a``, ``b``, ``p`` (unrounded floats);
        ``objective``: predicted ``w_f MSE_f + w_m MSE_m`` (``nan`` without a model);
        ``extra``: ``composed_epsilon`` and, for ``numeric``, ``closed_form_objective``
        and ``gain`` (relative reduction versus the Lemma 2/3 allocation).

    Raises
    ------
    SolverError
        If ``numeric`` is asked without a model, or no finite objective is found.
    ValueError
        Unknown mechanism or method, ``epsilon <= 0``.
    """
    t0 = time.perf_counter()
    if mechanism not in MECHANISMS:
        raise ValueError(f"mechanism must be one of {MECHANISMS} (got {mechanism!r})")
    if method not in ALLOCATIONS:
        raise ValueError(f"allocation must be one of {ALLOCATIONS} (got {method!r})")
    eps = check_epsilon(epsilon)
    L, d = int(padding_length), int(domain_size)

    def evaluate(e1: float, e2: float) -> float:
        if model is None:
            return math.nan
        pr = probabilities(mechanism, e1, e2, d, L)
        return model.objective(pr["a"], pr["b"], pr["p"], L, weights)[0]

    if method != "numeric":
        return _closed_form_result(mechanism, method, eps, d, L, evaluate, t0)
    if model is None:
        raise SolverError("numeric allocation needs a KeyModel (prior frequencies, means and n)")
    return _numeric_allocation(mechanism, eps, d, L, evaluate, t0)


_SOURCES = {"optimized": {"pckv-ue": "Lemma 2, eq. (20)", "pckv-grr": "Lemma 3, eq. (22)-(23)"},
            "naive": {m: "epsilon1 = epsilon2 = epsilon/2 (Theorem 1)" for m in MECHANISMS},
            "tight": {"pckv-ue": "eq. (21)", "pckv-grr": "epsilon2 = epsilon/2, Theorem 3 solved for epsilon1"}}


def _closed_form_result(mechanism: str, method: str, eps: float, d: int, L: int,
                        evaluate: Callable[[float, float], float], t0: float) -> SolveResult:
    """The ``optimized`` / ``naive`` / ``tight`` allocations as a SolveResult."""
    e1, e2 = _closed_form(mechanism, method, eps, L)
    obj = evaluate(e1, e2)
    pr = probabilities(mechanism, e1, e2, d, L)
    cert = Certificate("closed form", -math.inf, obj, {"source": _SOURCES[method][mechanism]})
    return SolveResult(STATUS_CLOSED_FORM, obj, {"epsilon1": e1, "epsilon2": e2, **pr}, cert,
                       f"pckv.{method}", time.perf_counter() - t0,
                       {"composed_epsilon": compose(mechanism, e1, e2, L)})


def _numeric_allocation(mechanism: str, eps: float, d: int, L: int, evaluate: Callable[[float, float], float],
                        t0: float) -> SolveResult:
    """Grid + bounded Brent over ``epsilon1`` on the exact frontier, never worse than the closed form."""
    hi = max_epsilon1(mechanism, eps, L)

    def f_of(e1: float) -> float:
        e2 = max_epsilon2(mechanism, eps, e1, L)
        if e2 <= 0:
            return math.inf
        val = evaluate(e1, e2)
        return val if math.isfinite(val) else math.inf

    grid = np.linspace(0.0, hi, NUMERIC_GRID_POINTS + 2)[1:-1]
    vals = np.array([f_of(x) for x in grid])
    if not np.isfinite(vals).any():
        raise SolverError("numeric allocation: the predicted MSE is infinite everywhere (keys with zero frequency?)")
    i = int(np.nanargmin(vals))
    from scipy.optimize import minimize_scalar  # deferred: scipy

    lo_b, hi_b = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    res = minimize_scalar(f_of, bounds=(lo_b, hi_b), method="bounded", options={"xatol": 1e-12 * max(1.0, hi)})
    best_e1, best_val = (float(res.x), float(res.fun)) if res.fun <= vals[i] else (float(grid[i]), float(vals[i]))
    cf1, cf2 = _closed_form(mechanism, "optimized", eps, L)
    cf_val = evaluate(cf1, cf2)
    if not (best_val <= cf_val):   # keep the closed form if the search did not beat it
        best_e1, best_val = cf1, cf_val
    e1, e2 = best_e1, max_epsilon2(mechanism, eps, best_e1, L) if best_e1 != cf1 else cf2
    pr = probabilities(mechanism, e1, e2, d, L)
    gain = (cf_val - best_val) / cf_val if cf_val > 0 and math.isfinite(cf_val) else 0.0
    step = float(grid[1] - grid[0])
    cert = Certificate("dense grid + bounded Brent (1-D, not a global bound)", -math.inf, best_val,
                       {"grid_points": len(grid), "grid_step": step, "closed_form_objective": cf_val})
    return SolveResult(STATUS_OPTIMAL, best_val, {"epsilon1": e1, "epsilon2": e2, **pr}, cert, "pckv.numeric",
                       time.perf_counter() - t0,
                       {"composed_epsilon": compose(mechanism, e1, e2, L), "closed_form_objective": cf_val,
                        "gain": gain, "closed_form": {"epsilon1": cf1, "epsilon2": cf2}})


# -------------------------------------------------------- mechanism choice
def sec54_conditions(epsilon: float, domain_size: int, padding_length: int) -> dict[str, Any]:
    r"""The two conditions at the end of Sec. 5.4 (optimized allocations).

    * frequency (smaller ``h``): PCKV-UE better iff ``2(d-1) > L(4L-1)(e^eps+1)``;
    * mean (smaller ``g``): PCKV-UE better iff ``2d > L(4L(e^eps+1)/(e^eps+3) - 1)(e^eps+1)``.
    """
    E, d, L = math.exp(epsilon), int(domain_size), int(padding_length)
    freq_lhs, freq_rhs = 2 * (d - 1), L * (4 * L - 1) * (E + 1)
    mean_lhs, mean_rhs = 2 * d, L * (4 * L * (E + 1) / (E + 3) - 1) * (E + 1)
    return {
        "frequency": {"ue_better": bool(freq_lhs > freq_rhs), "lhs": freq_lhs, "rhs": freq_rhs,
                      "rule": "2(d-1) > L(4L-1)(e^eps+1)"},
        "mean": {"ue_better": bool(mean_lhs > mean_rhs), "lhs": mean_lhs, "rhs": mean_rhs,
                 "rule": "2d > L(4L(e^eps+1)/(e^eps+3)-1)(e^eps+1)"},
    }


def choose_mechanism(candidates: dict[str, SolveResult], epsilon: float, domain_size: int,
                     padding_length: int | dict[str, int]) -> tuple[str, str]:
    """Pick PCKV-UE or PCKV-GRR: the smaller predicted objective wins.

    Parameters
    ----------
    candidates : {"pckv-ue": SolveResult, "pckv-grr": SolveResult}
        Allocations with objectives from the same KeyModel and weights.
    epsilon, domain_size, padding_length
        For the Sec. 5.4 conditions quoted in the reason.

    Returns
    -------
    mechanism, reason : str
    """
    ue, grr = candidates["pckv-ue"], candidates["pckv-grr"]
    Lu = padding_length["pckv-ue"] if isinstance(padding_length, dict) else padding_length
    Lg = padding_length["pckv-grr"] if isinstance(padding_length, dict) else padding_length
    cond = sec54_conditions(epsilon, domain_size, Lg)
    pick = "pckv-ue" if ue.objective <= grr.objective else "pckv-grr"
    reason = (f"predicted w_f*MSE_f + w_m*MSE_m (Theorem 4): PCKV-UE {ue.objective:.4g} (L={Lu}) vs "
              f"PCKV-GRR {grr.objective:.4g} (L={Lg}); Sec. 5.4 at L={Lg}: frequency favours "
              f"{'UE' if cond['frequency']['ue_better'] else 'GRR'}, mean favours "
              f"{'UE' if cond['mean']['ue_better'] else 'GRR'}")
    return pick, reason


# ---------------------------------------------------------- padding length
def choose_padding_length(mechanism: str, epsilon: float, *, domain_size: int, model: KeyModel,
                          method: str = "optimized", weights=(1.0, 1.0), max_padding_length: int = 64) -> SolveResult:
    r"""Choose ``L`` minimising the predicted ``w_f MSE_f + w_m MSE_m`` including truncation.

    Model: for each candidate ``L`` the budget is allocated with ``method``; the error
    of key ``k`` is Theorem 4 (eq. (9)-(12)) evaluated at the *sampled* frequency
    ``f_s(L)`` plus the squared truncation bias ``(f_s(L) - f)^2`` of estimator (7)
    (users holding ``s > L`` pairs report each pair with probability ``1/s``, not
    ``1/L``). ``f_s`` is exact when computed from a data file, or
    ``rho(L) f`` (:func:`truncation_factor`) from a set-size distribution. The mean
    estimator (8) is assumed unbiased by truncation (values independent of set size).
    Candidates ``L = 1..max_padding_length`` are all evaluated (exhaustive search).

    Returns
    -------
    SolveResult
        ``parameters``: ``padding_length`` and the allocation's ``epsilon1, epsilon2, a, b, p``;
        ``extra["candidates"]``: list of ``{padding_length, objective, mse_frequency, mse_mean}``.
    """
    t0 = time.perf_counter()
    rows = []
    best = None
    for L in range(1, int(max_padding_length) + 1):
        try:
            sol = allocate(mechanism, epsilon, method=method, domain_size=domain_size, padding_length=L,
                           model=model, weights=weights)
        except SolverError:
            continue
        obj, ef, em = model.objective(sol.a, sol.b, sol.p, L, weights)
        rows.append({"padding_length": L, "objective": obj, "mse_frequency": ef, "mse_mean": em})
        if math.isfinite(obj) and (best is None or obj < best[0]):
            best = (obj, L, sol)
    if best is None:
        raise SolverError("padding-length selection: no candidate L has a finite predicted error")
    obj, L, sol = best
    cert = Certificate("exhaustive search over L", obj, obj, {"candidates": len(rows), "max_padding_length": int(max_padding_length)})
    return SolveResult(STATUS_OPTIMAL, obj, {"padding_length": L, **dict(sol.parameters)}, cert,
                       "pckv.padding_length", time.perf_counter() - t0, {"candidates": rows, "allocation": sol})

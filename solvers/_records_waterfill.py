"""Water-filling for the budget split of a record (SPL): KKT conditions, bisection, dual bound.

Every frequency oracle of :mod:`solvers.records` has, per user, the variance (at a true frequency
``f``)::

    V(epsilon) = a t + b t^2 + c,      t = 1 / (e^epsilon - 1),   a > 0, b >= 0

(GRR: ``a = 1 + (k - 2) f``, ``b = k - 1``, ``c = 0``; OUE: ``a = b = 4``, ``c = f``), which is
convex and decreasing in ``epsilon`` (``1/(e^s - 1)`` and its square are convex). With
``x = e^epsilon = 1 + 1/t``, ``dV/d epsilon = -P(t)``, ``P(t) = 2 b t^3 + (a + 2 b) t^2 + a t``,
an increasing cubic on ``t > 0``. The program

    minimize sum_j w_j V_j(epsilon_j)   s.t.  sum_j epsilon_j = epsilon,  epsilon_j > 0

is separable and convex; its KKT conditions are ``w_j P_j(t_j) = lambda`` for one multiplier
``lambda > 0`` (interior optimum: ``V_j' -> -inf`` at 0). Each ``t_j(lambda)`` is the unique
positive root of a cubic (Newton from above: monotone), ``sum_j epsilon_j(lambda)`` decreases in
``lambda``, and bisection on ``log lambda`` finds the multiplier (water-filling) to the last float.

Certificate: the Lagrangian dual ``g(lambda) = sum_j min_s [w_j V_j(s) + lambda s] - lambda epsilon``
is a lower bound on the optimum for every ``lambda > 0`` (weak duality). Each inner minimum is
bounded below rigorously by the two tangent lines at a bracket ``s_lo < s* < s_hi`` (slopes of
opposite signs), not by the value at an approximate minimiser (which would over-estimate it).

References
----------
Boyd & Vandenberghe, Convex Optimization (2004), Sec. 5.5.3 (KKT), Example 5.2 (water-filling).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

__all__ = ["WaterFilling", "water_fill", "objective_value"]


@dataclasses.dataclass(frozen=True)
class WaterFilling:
    """One certified solution of the separable program (arrays have shape ``(d,)``).

    Attributes
    ----------
    epsilons : ndarray
        Per-attribute budgets (nats), positive, summing to the total up to one rounding step.
    objective : float
        ``sum_j w_j V_j(epsilon_j)`` at ``epsilons`` (an upper bound on the optimum).
    lower_bound : float
        The Lagrangian dual bound at ``multiplier`` (a proven lower bound on the optimum).
    multiplier : float
        ``lambda`` of the KKT conditions.
    """

    epsilons: np.ndarray
    objective: float
    lower_bound: float
    multiplier: float


def _cubic_root(a: np.ndarray, b: np.ndarray, target: np.ndarray) -> np.ndarray:
    """The positive ``t`` with ``2 b t^3 + (a + 2 b) t^2 + a t = target`` (``target > 0``)."""
    t = np.maximum.reduce([target / a, np.sqrt(target / (a + 2 * b)),
                           np.cbrt(target / np.maximum(2 * b, 1e-300))])
    for _ in range(200):  # Newton from the right of the root of a convex increasing cubic: monotone
        value = ((2 * b * t + (a + 2 * b)) * t + a) * t - target
        slope = (6 * b * t + 2 * (a + 2 * b)) * t + a
        step = value / slope
        t_next = t - step
        if np.all(step <= 2e-16 * t):  # from the right the step is >= 0 until rounding reaches the root
            return t_next
        t = t_next
    return t


def objective_value(epsilons: np.ndarray, weights: np.ndarray, a: np.ndarray, b: np.ndarray,
                    c: np.ndarray, scales: np.ndarray | None = None) -> float:
    """``sum_j w_j (a_j t_j + b_j t_j^2 + c_j)`` with ``t_j = 1/(e^{s_j epsilon_j} - 1)`` (``s_j``: ``scales``, default 1)."""
    t = 1.0 / np.expm1(epsilons if scales is None else scales * epsilons)
    return float(np.sum(weights * ((a + b * t) * t + c)))


def _inner_lower_bound(s: np.ndarray, weights, a, b, c, multiplier: float, scales=None) -> float:
    """Rigorous lower bound on ``sum_j min_s [w_j V_j(s) + lambda s]`` from tangent lines at a bracket."""
    total = 0.0
    for j in range(s.size):
        def phi(x: float) -> tuple[float, float]:
            r = 1.0 if scales is None else float(scales[j])
            t = 1.0 / math.expm1(r * x if scales is not None else x)
            value = weights[j] * ((a[j] + b[j] * t) * t + c[j]) + multiplier * x
            slope = -weights[j] * r * ((2 * b[j] * t + (a[j] + 2 * b[j])) * t + a[j]) * t + multiplier
            return value, slope
        width = 1e-7
        while True:
            lo, hi = s[j] * (1 - width), s[j] * (1 + width)
            (f_lo, g_lo), (f_hi, g_hi) = phi(lo), phi(hi)
            if g_lo <= 0.0 <= g_hi:
                break
            width *= 10.0
            if width >= 1.0:
                raise ArithmeticError("water-filling: no bracket of the inner minimiser")
        if g_hi - g_lo <= 0.0:
            total += min(f_lo, f_hi)
            continue
        crossing = (f_hi - f_lo + g_lo * lo - g_hi * hi) / (g_lo - g_hi)
        total += min(f_lo + g_lo * (crossing - lo), f_lo, f_hi)
    return total


def water_fill(epsilon: float, weights: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray,
               scales: np.ndarray | None = None) -> WaterFilling:
    """Solve ``min sum_j w_j (a_j t_j + b_j t_j^2 + c_j)`` s.t. ``sum_j epsilon_j = epsilon`` by its KKT conditions.

    Parameters
    ----------
    epsilon : float, > 0 (nats)
        The record's budget.
    weights, a, b, c : ndarray, shape (d,)
        Weights ``w_j > 0`` and the variance coefficients (``a > 0``, ``b >= 0``).
    scales : ndarray, shape (d,), optional
        ``s_j > 0`` with ``t_j = 1/(e^{s_j epsilon_j} - 1)`` (default 1: the frequency oracles; the
        Piecewise Mechanism's worst case is ``(4/3)(u + u^2)``, ``u = 1/(e^{epsilon/2} - 1)``: ``s = 1/2``).
        Then ``dV/d epsilon = -s P(t)``, so the KKT conditions are ``w_j s_j P_j(t_j) = lambda``.

    Returns
    -------
    WaterFilling

    Raises
    ------
    ArithmeticError
        If the multiplier cannot be bracketed (not expected for ``a > 0``).
    """
    def epsilons_at(log_multiplier: float) -> np.ndarray:
        if scales is None:
            return np.log1p(1.0 / _cubic_root(a, b, math.exp(log_multiplier) / weights))
        return np.log1p(1.0 / _cubic_root(a, b, math.exp(log_multiplier) / (weights * scales))) / scales

    def excess(log_multiplier: float) -> float:
        return float(np.sum(epsilons_at(log_multiplier))) - epsilon

    t_uniform = 1.0 / math.expm1(epsilon / a.size)
    start = math.log(float(np.median(weights * ((2 * b * t_uniform + a + 2 * b) * t_uniform + a) * t_uniform)))
    low, high = start - 1.0, start + 1.0
    while excess(low) < 0:
        low -= 2.0 * (start - low + 1.0)
        if low < -1400:
            raise ArithmeticError("water-filling: multiplier below range")
    while excess(high) > 0:
        high += 2.0 * (high - start + 1.0)
        if high > 1400:
            raise ArithmeticError("water-filling: multiplier above range")
    while True:  # bisection: excess(low) >= 0 >= excess(high); stops when no float lies between them
        middle = 0.5 * (low + high)
        if middle in (low, high):
            break
        if excess(middle) >= 0:
            low = middle
        else:
            high = middle
    log_multiplier = low if abs(excess(low)) <= abs(excess(high)) else high
    epsilons = epsilons_at(log_multiplier)
    epsilons = epsilons * (epsilon / float(np.sum(epsilons)))
    while float(np.sum(epsilons)) > epsilon:  # feasible on the safe side: the split never exceeds the budget
        epsilons = epsilons * (1.0 - 2.0 ** -52)
    multiplier = math.exp(log_multiplier)
    lower = _inner_lower_bound(epsilons, weights, a, b, c, multiplier, scales) - multiplier * epsilon
    return WaterFilling(epsilons, objective_value(epsilons, weights, a, b, c, scales), lower, multiplier)


@dataclasses.dataclass(frozen=True)
class SamplingOptimum:
    """SMP's sampling probabilities and their certified value (:func:`sampling_optimum`).

    Attributes
    ----------
    probabilities : ndarray, shape (d,)
        ``pi_j`` (the optimum ``sqrt(A_j) / sum_i sqrt(A_i)``, or the ones given).
    variances : ndarray, shape (d,)
        ``n Var_j = (V_j + S_j) / pi_j - S_j`` per attribute.
    value : float
        ``sum_j w_j n Var_j``.
    lower_bound : float
        ``(sum_j sqrt(A_j))^2 - sum_j w_j S_j`` (the optimum, by Cauchy-Schwarz), stepped below float rounding.
    """

    probabilities: np.ndarray
    variances: np.ndarray
    value: float
    lower_bound: float


def sampling_optimum(weights: np.ndarray, noise: np.ndarray, spread: np.ndarray,
                     probabilities: np.ndarray | None = None) -> SamplingOptimum:
    """Minimise ``sum_j A_j / pi_j`` over the simplex, ``A_j = w_j (V_j + S_j)`` (or evaluate given ``pi``).

    Parameters
    ----------
    weights, noise, spread : ndarray, shape (d,)
        ``w_j > 0``, ``V_j > 0`` (the report's ``n Var`` at the whole budget), ``S_j >= 0`` (the sampling
        term: ``f_j (1 - f_j)`` of a frequency, the spread of a mean).
    probabilities : ndarray, shape (d,), optional
        Evaluate these instead of the optimum (a baseline).

    Returns
    -------
    SamplingOptimum

    References
    ----------
    .. [1] Cauchy-Schwarz: ``(sum_j sqrt(A_j))^2 <= (sum_j A_j / pi_j)(sum_j pi_j)``, with equality at
       ``pi_j`` proportional to ``sqrt(A_j)``: the bound is the optimum, hence an exact certificate.
    """
    root = np.sqrt(weights * (noise + spread))
    pi = root / np.sum(root) if probabilities is None else np.asarray(probabilities, dtype=np.float64)
    variances = (noise + spread) / pi - spread
    value = float(np.sum(weights * variances))
    # the bound is computed in floats: step it down past their rounding (a few ulps per term) so that it
    # never exceeds the exact optimum (it came out one step above the value at f = 1/k, epsilon 0.5)
    lower = float(np.sum(root) ** 2 - np.sum(weights * spread))
    lower -= 8 * len(weights) * math.ulp(max(abs(lower), abs(value)))
    return SamplingOptimum(pi, variances, value, lower)

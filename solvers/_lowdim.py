"""Certified minimisation of convex functions of one or two variables.

The IDUE models reduce exactly to convex problems in at most two scalars
(see :mod:`solvers.idue`). Here they are minimised by Brent's bounded method
(nested for two variables: the partial minimum of a convex function is convex,
hence unimodal), which needs only convexity (the functions have kinks), and certified by a cutting-plane lower bound: for a convex ``F`` with
subgradient ``g_j`` at ``z_j``, ``F(z) >= F(z_j) + g_j.(z - z_j)`` for all ``z``, so
``min_z max_j [F(z_j) + g_j.(z - z_j)]`` over the box (a small linear program)
is a proven lower bound on ``min F``.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Callable, Sequence

import numpy as np

__all__ = ["minimize_1d", "golden_section", "minimize_convex", "cutting_plane_lower_bound", "LowDimSolution"]

_INVPHI = (math.sqrt(5.0) - 1.0) / 2.0


def _safe(value: float) -> float:
    return value if math.isfinite(value) else math.inf


def minimize_1d(f: Callable[[float], float], lo: float, hi: float, *, xtol: float, max_iter: int = 500) -> tuple[float, float, int]:
    """Minimise a convex (hence unimodal) ``f`` on the open interval ``(lo, hi)``.

    Brent's bounded method (``scipy.optimize.minimize_scalar(method="bounded")``):
    parabolic steps where ``f`` is smooth, golden-section steps otherwise, so kinks
    (the IDUE objectives have them) only slow it down. Non-finite values are treated as
    a huge number (the objectives blow up at the boundary). Returns ``(x, f(x), evaluations)``.
    """
    from scipy.optimize import minimize_scalar  # deferred: scipy

    count = [0]

    def g(x: float) -> float:
        count[0] += 1
        v = _safe(float(f(x)))
        return v if v != math.inf else 1e300

    res = minimize_scalar(g, bounds=(float(lo), float(hi)), method="bounded",
                          options={"xatol": xtol, "maxiter": max_iter})
    return float(res.x), _safe(float(f(float(res.x)))), count[0]


def golden_section(f: Callable[[float], float], lo: float, hi: float, *, xtol: float, max_iter: int = 200) -> tuple[float, float, int]:
    """Golden-section search for a convex ``f`` on ``(lo, hi)``: slower than
    :func:`minimize_1d` but locates kinked minima to ``xtol`` (no ``sqrt(eps)`` floor).
    Returns ``(x, f(x), evaluations)``."""
    a, b = float(lo), float(hi)
    c = b - _INVPHI * (b - a)
    d = a + _INVPHI * (b - a)
    fc, fd = _safe(f(c)), _safe(f(d))
    evals = 2
    for _ in range(max_iter):
        if b - a <= xtol:
            break
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - _INVPHI * (b - a)
            fc = _safe(f(c))
        else:
            a, c, fc = c, d, fd
            d = a + _INVPHI * (b - a)
            fd = _safe(f(d))
        evals += 1
    x, fx = (c, fc) if fc <= fd else (d, fd)
    return x, fx, evals


@dataclasses.dataclass(frozen=True)
class LowDimSolution:
    """Minimiser ``z`` (shape (k,)), value, lower bound and evaluation count."""

    z: np.ndarray
    value: float
    lower_bound: float
    evaluations: int
    cuts: int


def cutting_plane_lower_bound(value_grad: Callable[[np.ndarray], tuple[float, np.ndarray]], z_star: np.ndarray,
                              lo: Sequence[float] | np.ndarray, hi: Sequence[float] | np.ndarray,
                              steps: Sequence[float]) -> tuple[float, int]:
    """Lower bound on ``min F`` over the box ``[lo, hi]`` from subgradient cuts.

    Cuts are taken at ``z_star`` and at a stencil of points around it (each
    ``step`` in ``steps``, along every axis and diagonal). Returns the best
    bound and the number of cuts used.

    Notes
    -----
    The bound is valid for any convex ``F`` whose ``value_grad`` returns a true
    subgradient; it is tight to ``O(step * |gradient change|)``.
    """
    from scipy.optimize import linprog  # deferred: scipy

    z_star = np.asarray(z_star, dtype=float)
    k = z_star.size
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    if k == 1:
        dirs = [np.array([1.0]), np.array([-1.0])]
    else:
        dirs = [np.array(d, dtype=float) for d in [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)]]
    points = [z_star]
    for h in steps:
        for d in dirs:
            p = z_star + h * d * (hi - lo)
            if np.all(p > lo) and np.all(p < hi):
                points.append(p)
    values = []
    for p in points:
        val, grad = value_grad(p)
        if math.isfinite(val) and np.all(np.isfinite(grad)):
            values.append((p, float(val), np.asarray(grad, dtype=float)))
    if not values:
        return -math.inf, 0
    # First the LP as posed; if HiGHS fails (budgets of 1e-6 nats give boxes of width 1e-6 and
    # objectives of 1e13), again in normalised variables t in [0, 1]^k (z = lo + t (hi - lo)) with
    # values divided by max(1, |F(z_star)|).
    for scaled in (False, True):
        width = (hi - lo) if scaled else np.ones(k)
        origin = lo if scaled else np.zeros(k)
        scale = max(1.0, abs(values[0][1])) if scaled else 1.0
        rows, rhs = [], []
        for p, val, grad in values:
            g_t = grad * width / scale
            t_p = (p - origin) / width
            # s >= val + g.(z - p)   <=>   g_t.t - s <= g_t.t_p - val / scale
            rows.append(np.concatenate([g_t, [-1.0]]))
            rhs.append(float(g_t @ t_p - val / scale))
        c = np.zeros(k + 1)
        c[-1] = 1.0
        box = [((float(lo[i]) - origin[i]) / width[i], (float(hi[i]) - origin[i]) / width[i]) for i in range(k)]
        res = linprog(c, A_ub=np.array(rows), b_ub=np.array(rhs), bounds=box + [(None, None)], method="highs")
        if res.status == 0 and res.fun is not None and math.isfinite(res.fun):
            return float(res.fun) * scale, len(rows)
    return -math.inf, len(values)


def _nested(f, lo, hi, rel_xtol, line):
    k = lo.size
    if k == 1:
        x, _, _ = line(lambda t: f([t]), lo[0], hi[0], xtol=rel_xtol * (hi[0] - lo[0]))
        return np.array([x])
    inner_tol = rel_xtol * (hi[1] - lo[1])

    def outer(t0: float) -> float:
        _, val, _ = line(lambda t1: f([t0, t1]), lo[1], hi[1], xtol=inner_tol)
        return val

    x0, _, _ = line(outer, lo[0], hi[0], xtol=rel_xtol * (hi[0] - lo[0]))
    x1, _, _ = line(lambda t1: f([x0, t1]), lo[1], hi[1], xtol=inner_tol)
    return np.array([x0, x1])


def minimize_convex(value: Callable[[np.ndarray], float], value_grad: Callable[[np.ndarray], tuple[float, np.ndarray]],
                    lo: Sequence[float] | np.ndarray, hi: Sequence[float] | np.ndarray, *, rel_xtol: float = 1e-13,
                    target_rel_gap: float = 1e-10) -> LowDimSolution:
    """Minimise a convex function of 1 or 2 variables over an open box, with a lower bound.

    Brent line searches (nested for two variables) are tried first; if the certified
    relative gap is above ``target_rel_gap`` (a kinked minimum that Brent's ``sqrt(eps)``
    tolerance cannot resolve), the search is redone with golden sections.

    Parameters
    ----------
    value : callable
        ``value(z) -> float`` (``+inf``/NaN outside the domain).
    value_grad : callable
        ``value_grad(z) -> (float, ndarray (k,))``: value and a subgradient.
    lo, hi : sequence of float, length k (1 or 2)
        Open box.
    rel_xtol : float
        Line-search tolerance relative to the box width.
    target_rel_gap : float
        Gap below which the fast path is accepted.
    """
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    if lo.size not in (1, 2):  # pragma: no cover - not used
        raise ValueError("minimize_convex handles 1 or 2 variables")
    counter = [0]

    def f(z):
        counter[0] += 1
        return _safe(float(value(np.asarray(z, dtype=float))))

    best: LowDimSolution | None = None
    for line in (minimize_1d, golden_section):
        z = _nested(f, lo, hi, rel_xtol, line)
        fx = f(z)
        lb, cuts = cutting_plane_lower_bound(value_grad, z, lo, hi, steps=(1e-4, 1e-6, 1e-8))
        cand = LowDimSolution(z=z, value=fx, lower_bound=min(lb, fx), evaluations=counter[0], cuts=cuts)
        if best is None or cand.value < best.value:
            best = LowDimSolution(z=cand.z, value=cand.value, lower_bound=max(cand.lower_bound, best.lower_bound if best else -math.inf),
                                  evaluations=counter[0], cuts=cand.cuts)
        else:
            best = LowDimSolution(z=best.z, value=best.value, lower_bound=max(best.lower_bound, cand.lower_bound),
                                  evaluations=counter[0], cuts=best.cuts)
        if (best.value - best.lower_bound) <= target_rel_gap * max(1.0, abs(best.value)):
            break
    assert best is not None  # the loop over the two line searches ran
    return best

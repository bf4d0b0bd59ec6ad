"""Certified minimisation of convex functions of one or two variables.

The IDUE models reduce exactly to convex problems in at most two scalars
(see :mod:`solvers.idue`). Here they are minimised by golden-section search
(nested for two variables), which needs only convexity (the functions have
kinks), and certified by a cutting-plane lower bound: for a convex ``F`` with
subgradient ``g_j`` at ``z_j``, ``F(z) >= F(z_j) + g_j.(z - z_j)`` for all ``z``, so
``min_z max_j [F(z_j) + g_j.(z - z_j)]`` over the box (a small linear program)
is a proven lower bound on ``min F``.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Callable, Sequence

import numpy as np

__all__ = ["golden_section", "minimize_convex", "cutting_plane_lower_bound", "LowDimSolution"]

_INVPHI = (math.sqrt(5.0) - 1.0) / 2.0


def _safe(value: float) -> float:
    return value if math.isfinite(value) else math.inf


def golden_section(f: Callable[[float], float], lo: float, hi: float, *, xtol: float, max_iter: int = 200) -> tuple[float, float, int]:
    """Minimise a convex (unimodal) ``f`` on the open interval ``(lo, hi)``.

    Non-finite values are treated as ``+inf`` (the IDUE objectives blow up at
    the boundary). Returns ``(x, f(x), evaluations)``.
    """
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
                              lo: Sequence[float], hi: Sequence[float], steps: Sequence[float]) -> tuple[float, int]:
    """Lower bound on ``min F`` over the box ``[lo, hi]`` from subgradient cuts.

    Cuts are taken at ``z_star`` and at a stencil of points around it (each
    ``step`` in ``steps``, along every axis and diagonal). Returns the best
    bound and the number of cuts used.

    Notes
    -----
    The bound is valid for any convex ``F`` whose ``value_grad`` returns a true
    subgradient; it is tight to ``O(step * |gradient change|)``.
    """
    from scipy.optimize import linprog

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
    rows, rhs = [], []
    for p in points:
        val, grad = value_grad(p)
        if not (math.isfinite(val) and np.all(np.isfinite(grad))):
            continue
        # s >= val + g.(z - p)   <=>   g.z - s <= g.p - val
        rows.append(np.concatenate([grad, [-1.0]]))
        rhs.append(float(grad @ p - val))
    c = np.zeros(k + 1)
    c[-1] = 1.0
    bounds = [(float(lo[i]), float(hi[i])) for i in range(k)] + [(None, None)]
    res = linprog(c, A_ub=np.array(rows), b_ub=np.array(rhs), bounds=bounds, method="highs")
    if res.status != 0:
        return -math.inf, len(rows)
    return float(res.fun), len(rows)


def minimize_convex(value: Callable[[np.ndarray], float], value_grad: Callable[[np.ndarray], tuple[float, np.ndarray]],
                    lo: Sequence[float], hi: Sequence[float], *, rel_xtol: float = 1e-13) -> LowDimSolution:
    """Minimise a convex function of 1 or 2 variables over an open box, with a lower bound.

    Parameters
    ----------
    value : callable
        ``value(z) -> float`` (``+inf``/NaN outside the domain).
    value_grad : callable
        ``value_grad(z) -> (float, ndarray (k,))``: value and a subgradient.
    lo, hi : sequence of float, length k (1 or 2)
        Open box.
    rel_xtol : float
        Golden-section tolerance relative to the box width.
    """
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    k = lo.size
    counter = [0]

    def f(z):
        counter[0] += 1
        return _safe(float(value(np.asarray(z, dtype=float))))

    if k == 1:
        x, fx, _ = golden_section(lambda t: f([t]), lo[0], hi[0], xtol=rel_xtol * (hi[0] - lo[0]))
        z = np.array([x])
    elif k == 2:
        inner_tol = rel_xtol * (hi[1] - lo[1])

        def outer(t0: float) -> float:
            _, val, _ = golden_section(lambda t1: f([t0, t1]), lo[1], hi[1], xtol=inner_tol)
            return val

        x0, _, _ = golden_section(outer, lo[0], hi[0], xtol=rel_xtol * (hi[0] - lo[0]))
        x1, fx, _ = golden_section(lambda t1: f([x0, t1]), lo[1], hi[1], xtol=inner_tol)
        z = np.array([x0, x1])
    else:  # pragma: no cover - not used
        raise ValueError("minimize_convex handles 1 or 2 variables")
    fx = f(z)
    lb, cuts = cutting_plane_lower_bound(value_grad, z, lo, hi, steps=(1e-4, 1e-6, 1e-8))
    return LowDimSolution(z=z, value=fx, lower_bound=min(lb, fx), evaluations=counter[0], cuts=cuts)

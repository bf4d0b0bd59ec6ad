"""Numbers of the Hadamard response runtime (numpy + stdlib only).

The runtime derives these itself (it imports nothing of the planner or the solvers), so a plan's
numbers are re-derived independently of the planner that wrote them:

* :func:`block_size`: ``b``, the smallest power of two with ``B (b - 1) >= k`` (``K = B b``);
* :func:`keep_probability`: ``P = e^eps/(e^eps + 2B - 1)`` rounded **down** to the ``2^-48`` grid
  (60-digit decimal ``exp``: the same value on every platform);
* :func:`in_set`: ``y in C_x``: ``y`` in ``x``'s block and ``popcount(t & u)`` even (row ``t`` of the
  Sylvester matrix ``H_b``; no ``K x K`` matrix);
* :func:`supports`: each item's ``sum z`` (reports in ``C_x`` minus reports in its block outside
  ``C_x``) from the ``K`` output counts by the fast Walsh-Hadamard transform of each block (int64, exact).

References
----------
Acharya, Sun & Zhang, "Hadamard Response: Estimating Distributions Privately, Efficiently, and with
Little Communication", AISTATS 2019 (arXiv:1802.04705).
"""
from __future__ import annotations

import math
from decimal import ROUND_FLOOR, Decimal, localcontext
from fractions import Fraction

import numpy as np

from .._api import check_items  # the one check of item indices (re-exported)

__all__ = ["GRID_STEPS", "block_size", "keep_probability", "realized_epsilon", "exact_epsilon", "in_set",
           "supports", "auto_blocks", "check_items"]

#: Number of steps of the probability grid.
GRID_STEPS = 2**48


def block_size(k: int, blocks: int) -> int:
    """``b``: the smallest power of two with ``blocks (b - 1) >= k``."""
    return 1 << (-(-int(k) // int(blocks))).bit_length()


def keep_probability(epsilon: float, blocks: int) -> float:
    """``e^eps/(e^eps + 2B - 1)`` rounded down to the ``2^-48`` grid, at most ``1 - 2^-48``.

    Raises
    ------
    ValueError
        For a non-finite or non-positive epsilon.
    """
    eps = float(epsilon)
    if not (math.isfinite(eps) and eps > 0.0):
        raise ValueError(f"epsilon: must be finite and > 0 (got {epsilon!r})")
    eps = min(eps, 100.0 + math.log(2 * int(blocks)))
    with localcontext() as ctx:
        ctx.prec = 60
        e = Decimal(eps).exp()
        steps = int((e / (e + 2 * int(blocks) - 1) * GRID_STEPS).to_integral_value(rounding=ROUND_FLOOR))
    return min(steps, GRID_STEPS - 1) / GRID_STEPS


def auto_blocks(epsilon: float, k: int) -> int:
    """The ``B`` a spec's ``blocks = "auto"`` plans: the power of two with the smallest worst-case total error.

    ``(2 q k + (P - q) min(b - 1, k))/(P - q)^2 - 1`` over ``B = 1, 2, 4, ...`` up to one item per
    block (ties: the smaller ``B``), ``P`` the grid value, ``q = (1 - P)/(2B - 1)``: the planner's rule
    (``ldpplan.solvers.hadamard.solve_hadamard``), recomputed so that ``load()`` refuses a plan whose
    ``blocks`` is not the one its spec asks for.
    """
    k = int(k)
    best, best_l2, B = 1, math.inf, 1
    while True:
        p = keep_probability(epsilon, B)
        q = (1.0 - p) / (2 * B - 1)
        b = block_size(k, B)
        if p > q:
            d = p - q
            l2 = k * (2.0 * q / (d * d)) + (1.0 / d) * min(b - 1, k) - 1.0
            if l2 < best_l2:
                best, best_l2 = B, l2
        if b == 2:
            return best
        B *= 2


def realized_epsilon(p: float, blocks: int) -> float:
    """``log(P (2B - 1)/(1 - P))`` in float64 (nats); callers check ``0 < P < 1``."""
    p = np.float64(p)
    return float(np.log(p) + np.log(np.float64(2 * int(blocks) - 1)) - np.log1p(-p))


def exact_epsilon(p: float, blocks: int) -> Decimal:
    """``ln(P (2B - 1)/(1 - P))`` of the exact rational ``P`` (60 digits)."""
    r = Fraction(p) * (2 * int(blocks) - 1) / (1 - Fraction(p))
    with localcontext() as ctx:
        ctx.prec = 60
        return Decimal(r.numerator).ln() - Decimal(r.denominator).ln()


def in_set(x, y, b: int) -> np.ndarray:
    """``y in C_x`` for blocks of size ``b``: same block and ``popcount(t & (y mod b))`` even (broadcasts)."""
    x, y = np.asarray(x, dtype=np.int64), np.asarray(y, dtype=np.int64)
    block, t = np.divmod(x, b - 1)
    return (y // b == block) & ((np.bitwise_count((t + 1) & (y % b)) & 1) == 0)


def supports(counts: np.ndarray, k: int, blocks: int, b: int) -> np.ndarray:
    """Each item's ``sum z`` = reports in ``C_x`` minus reports in its block outside ``C_x`` (int64, exact).

    Block ``j``'s Walsh-Hadamard transform ``T_j = H_b c_j`` has ``T_j[t]`` = exactly that for the
    item at position ``t`` of block ``j``. ``O(K log b)`` time, ``K`` entries of memory.
    """
    v = np.array(counts, dtype=np.int64, copy=True).reshape(int(blocks), int(b))
    h = 1
    while h < b:
        w = v.reshape(int(blocks), -1, 2, h)
        a = w[:, :, 0, :].copy()
        w[:, :, 0, :] += w[:, :, 1, :]
        w[:, :, 1, :] = a - w[:, :, 1, :]
        h *= 2
    block, pos = np.divmod(np.arange(int(k)), b - 1)
    return v[block, pos + 1]



"""Numbers of the Hadamard response: the one copy of the channel's formulas (numpy + stdlib only).

The runtime derives these itself (it imports nothing of the planner or the solvers); the solver
(:mod:`ldpplan.solvers.hadamard`) and the planner import them from here, so the planner and the
runtime derive every number with the same code. The independent second path is exact arithmetic,
not a copy: :func:`exact_epsilon` (rational ``P``, 60-digit logarithms) against the float64
:func:`realized_epsilon`, and the planner's verifier deciding ``P (2B-1)/(1-P) <= e^epsilon`` on the
exact rational (``ldpplan.planner._exact.ratio_within``); :func:`supports` is checked against
integer counting over ``C_x`` in the tests.

* :func:`block_size`: ``b``, the smallest power of two with ``B (b - 1) >= k`` (``K = B b``);
* :func:`keep_probability`: ``P = e^eps/(e^eps + 2B - 1)`` rounded **down** to the ``2^-48`` grid
  (60-digit decimal ``exp``: the same value on every platform);
* :func:`in_set`: ``y in C_x``: ``y`` in ``x``'s block and ``popcount(t & u)`` even (row ``t`` of the
  Sylvester matrix ``H_b``; no ``K x K`` matrix);
* :func:`variance_coefficients` and :func:`worst_l2`: the empirical estimate's variance and its
  worst-case total squared error, behind :func:`auto_blocks` (the ``B`` of ``blocks = "auto"``);
* :func:`fwht` and :func:`supports`: each item's ``sum z`` (reports in ``C_x`` minus reports in its block outside
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

from .._sampling import GRID_DENOMINATOR
from .._api import check_items  # the one check of item indices (re-exported)

__all__ = ["GRID_STEPS", "DIGITS", "check_blocks", "block_size", "keep_probability", "realized_epsilon",
           "exact_epsilon", "in_set", "channel_matrix", "fwht", "supports", "variance_coefficients", "worst_l2", "auto_blocks",
           "check_items"]

#: Number of steps of the probability grid (probabilities are multiples of ``1/GRID_STEPS``).
GRID_STEPS = GRID_DENOMINATOR
#: Significant decimal digits of the exact computations (:func:`keep_probability`, :func:`exact_epsilon`).
DIGITS = 60


def check_blocks(blocks: object) -> int:
    """``B`` as an int after checking it is a power of two ``>= 1``.

    Raises
    ------
    ValueError
        ``blocks: must be a power of two >= 1 (got ...)`` (also for a string, a bool or a fraction).
    """
    B = int(blocks) if isinstance(blocks, (int, float, np.integer)) and not isinstance(blocks, bool) else 0
    if B != blocks or B < 1 or B & (B - 1):
        raise ValueError(f"blocks: must be a power of two >= 1 (got {blocks!r})")
    return B


def block_size(k: int, blocks: int = 1) -> int:
    """``b``: the smallest power of two with ``blocks (b - 1) >= k`` (``blocks = 1``: the smallest above ``k``).

    Raises
    ------
    ValueError
        ``k < 2`` or ``blocks`` not a power of two.
    """
    k, B = int(k), check_blocks(blocks)
    if k < 2:
        raise ValueError(f"k: must be an integer >= 2 (got {k})")
    return 1 << (-(-k // B)).bit_length()


def keep_probability(epsilon: float, blocks: int = 1) -> float:
    """``P = e^eps/(e^eps + 2B - 1)`` rounded down to the ``2^-48`` grid, at most ``1 - 2^-48``.

    Computed with :data:`DIGITS` significant digits (a tie would need the exact value within
    ``10^-45`` of a grid point), so the value is the same on every platform.

    Raises
    ------
    ValueError
        For a non-finite or non-positive epsilon, or ``blocks`` not a power of two.

    References
    ----------
    Acharya, Sun & Zhang (AISTATS 2019), the general Hadamard response (``P`` of ``C_x``).
    """
    eps, B = float(epsilon), check_blocks(blocks)
    if not (math.isfinite(eps) and eps > 0.0):
        raise ValueError(f"epsilon: must be finite and > 0 (got {epsilon!r})")
    eps = min(eps, 100.0 + math.log(2 * B))  # beyond, (2B - 1)/(e^eps + 2B - 1) < 2^-48: the value is 1 - 2^-48
    with localcontext() as ctx:
        ctx.prec = DIGITS
        e = Decimal(eps).exp()
        steps = int((e / (e + 2 * B - 1) * GRID_STEPS).to_integral_value(rounding=ROUND_FLOOR))
    return min(steps, GRID_STEPS - 1) / GRID_STEPS


def variance_coefficients(p: float, blocks: int) -> tuple[float, float, float]:
    """``(c0, c_block, c1)`` of ``n Var f_hat(x) = c0 + c_block F_j + c1 f(x)`` (squared frequency x users).

    ``q = (1 - P)/(2B - 1)``, ``d = P - q``: ``c0 = 2q/d^2``, ``c_block = 1/d``, ``c1 = -1`` (``F_j`` the
    mass of ``x``'s block; exact for fixed users' data).
    """
    q = (1.0 - p) / (2 * int(blocks) - 1)
    d = p - q
    return 2.0 * q / (d * d), 1.0 / d, -1.0


def worst_l2(p: float, k: int, blocks: int, n: int = 1) -> float:
    """Largest ``E ||f_hat - f||^2`` over distributions: ``(k c0 + c_block min(b - 1, k) + c1)/n``.

    All users in one full block (``B = 1``: every distribution gives this value).
    """
    c0, cb, c1 = variance_coefficients(p, blocks)
    return (k * c0 + cb * min(block_size(k, blocks) - 1, k) + c1) / n


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
        if p > (1.0 - p) / (2 * B - 1):
            l2 = worst_l2(p, k, B)
            if l2 < best_l2:
                best, best_l2 = B, l2
        if block_size(k, B) == 2:
            return best
        B *= 2


def realized_epsilon(p: float, blocks: int) -> float:
    """``log(P (2B - 1)/(1 - P))`` in float64 (nats); callers check ``0 < P < 1``."""
    p = np.float64(p)
    return float(np.log(p) + np.log(np.float64(2 * int(blocks) - 1)) - np.log1p(-p))


def exact_epsilon(p: float, blocks: int = 1) -> Decimal:
    """``ln(P (2B - 1)/(1 - P))`` of the exact rational ``P`` (nats, :data:`DIGITS` digits): the channel's epsilon.

    The exact path beside the float64 :func:`realized_epsilon` (rational arithmetic, then
    60-digit logarithms of the numerator and denominator).
    """
    r = Fraction(p) * (2 * check_blocks(blocks) - 1) / (1 - Fraction(p))
    with localcontext() as ctx:
        ctx.prec = DIGITS
        return Decimal(r.numerator).ln() - Decimal(r.denominator).ln()


def in_set(x, y, b: int) -> np.ndarray:
    """``y in C_x`` for blocks of size ``b``: same block and ``popcount(t & (y mod b))`` even (broadcasts)."""
    x, y = np.asarray(x, dtype=np.int64), np.asarray(y, dtype=np.int64)
    block, t = np.divmod(x, b - 1)
    return (y // b == block) & ((np.bitwise_count((t + 1) & (y % b)) & 1) == 0)


def channel_matrix(k: int, p: float, blocks: int = 1) -> np.ndarray:
    """``Q[x, y]``, shape ``(k, K)``: ``P/s`` on ``C_x``, ``(1 - P)/(K - s)`` elsewhere (small domains; ``s = b/2``)."""
    b = block_size(k, blocks)
    K, s = int(blocks) * b, b // 2
    inside = in_set(np.arange(k)[:, None], np.arange(K)[None, :], b)
    return np.where(inside, p / s, (1.0 - p) / (K - s))


def fwht(values) -> np.ndarray:
    """Fast Walsh-Hadamard transform ``H_b v`` (Sylvester order) along the last axis (length a power of 2).

    Integer input stays integer (exact); ``O(b log b)`` per row.

    Raises
    ------
    ValueError
        The last axis' length is not a power of two.
    """
    v = np.array(values, copy=True)
    b = v.shape[-1]
    if b < 1 or b & (b - 1):
        raise ValueError(f"fwht: the length must be a power of two (got {b})")
    lead = v.shape[:-1]
    h = 1
    while h < b:
        w = v.reshape(*lead, -1, 2, h)
        a = w[..., 0, :].copy()
        w[..., 0, :] += w[..., 1, :]
        w[..., 1, :] = a - w[..., 1, :]
        h *= 2
    return v


def supports(counts, k: int, blocks: int = 1, b: int | None = None) -> np.ndarray:
    """Each item's ``sum z`` = reports in ``C_x`` minus reports in its block outside ``C_x`` (int64, exact).

    Block ``j``'s Walsh-Hadamard transform ``T_j = H_b c_j`` has ``T_j[t]`` = exactly that for the
    item at position ``t`` of block ``j``. ``O(K log b)`` time, ``K`` entries of memory.

    Parameters
    ----------
    counts : array_like of int, shape (K,)
        Output counts, ``K = B b``.
    k, blocks : int
        ``k`` items, ``B`` blocks.
    b : int, optional
        The block size (default :func:`block_size`).
    """
    if b is None:
        b = block_size(k, blocks)
    t = fwht(np.asarray(counts, dtype=np.int64).reshape(int(blocks), int(b)))
    block, pos = np.divmod(np.arange(int(k)), b - 1)
    return t[block, pos + 1]



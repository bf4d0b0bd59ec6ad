"""Binomial sums behind :mod:`ldpplan.mechanisms._amplification`, rounded toward the safe side (numpy + math only).

``delta_given_m(epsilon, pair, m, tail)`` bounds ``delta_m = E_{omega^s}[((1/s) sum l - e^epsilon (1/s) sum l')_+]``
from above, ``s = m + 1``, for the two kinds of :class:`~ldpplan.mechanisms._amplification.BlanketPair`:

* ``"independent"``: ``T' = b`` (rows) and ``T = a ~ Bin(s, rho)`` (columns, the same law on every
  row): the row's value ``E[(d a - beta_b)_+]`` is ``d S1(j) + (d c - beta_b) S0(j)`` with ``S0``, ``S1``
  suffix sums of the pmf and of ``(a - c) pmf`` (``c`` the column mean, so the two terms nearly
  cancel only by a factor ``~ z^2``), computed once per ``m``;
* ``"exclusive"``: ``t = T + T'`` (rows) and ``a | t ~ Bin(t, 1/2)``: ``E[(alpha a - beta_t)_+] = (alpha t/2
  - beta_t) S(t, j) + (alpha t / 4) Bin(j - 1; t - 1, 1/2)`` with ``S(t, j) = P(Bin(t, 1/2) >= j)``; the
  threshold ``j(t)`` steps by 0 or 1 from row to row (slope ``e^epsilon/(1 + e^epsilon) < 1``), so
  ``S`` follows the recursions ``S(t + 1, j) = S(t, j) + pmf(j - 1; t)/2`` and ``S(t, j + 1) = S(t, j) -
  pmf(j; t)`` from a direct sum every :data:`ANCHOR` rows.

Every pmf is bracketed (``pmf_lo <= pmf <= pmf_up``, log-space ``math.lgamma`` with the margin of
:func:`log_margin`); sums that are subtracted use the lower value, sums that are added the upper
one; each cumulative sum carries ``k u`` times the sum of its terms' sizes; windows drop mass
bounded by the Chernoff bound (:func:`ldpplan.mechanisms._binomial.chernoff`, the runtime's one copy),
added in full times the largest value a term can take there.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ._binomial import chernoff  # the one Chernoff bound (re-exported)

__all__ = ["LGAMMA_ULPS", "ANCHOR", "log_pmf", "pmf_bounds", "chernoff", "window", "delta_given_m"]

_U = 2.0 ** -53
#: assumed bound of math.lgamma's error in ulp (glibc documents at most a few ulp on x86_64)
LGAMMA_ULPS = 16
#: exclusive pairs: a direct tail sum every ANCHOR rows, the recursions in between
ANCHOR = 64
_CHUNK = 1024


@functools.lru_cache(maxsize=256)
def _lgamma_range(lo: int, hi: int) -> np.ndarray:
    out = np.array([math.lgamma(i + 1.0) for i in range(lo, hi + 1)], dtype=float)
    out.setflags(write=False)
    return out


def _log_factorial(index) -> np.ndarray:
    """``log(i!)`` elementwise (``i >= 0``); tables of ``math.lgamma`` cached by 1024-aligned range."""
    index = np.asarray(index, dtype=np.int64)
    if index.size == 0:
        return np.zeros(index.shape)
    lo, hi = int(index.min()) // _CHUNK * _CHUNK, (int(index.max()) // _CHUNK + 1) * _CHUNK - 1
    return _lgamma_range(lo, hi)[index - lo]


def log_margin(size, prob: float):
    """Bound of the absolute error of a computed ``log Bin(k; size, prob)`` for any ``k``.

    The three log-factorials (each within ``LGAMMA_ULPS`` ulp, and ``log k! + log (N-k)! <= log N!``),
    the two ``k log p`` terms (``p`` itself off by a few ulp) and the additions:
    ``(2 LGAMMA_ULPS + 8) u (2 log N! + N (1 + |log p| + |log(1 - p)|) + 1)``.
    """
    size = np.asarray(size, dtype=np.int64)
    logs = abs(math.log(prob)) + (abs(math.log1p(-prob)) if prob < 1.0 else 0.0)
    return (2 * LGAMMA_ULPS + 8) * _U * (2.0 * _log_factorial(size) + size * (1.0 + logs) + 1.0)


def log_pmf(k, size, prob: float):
    """``log Bin(k; size, prob)`` elementwise; ``-inf`` for ``k`` outside ``[0, size]`` (``prob = 1`` allowed)."""
    k, size = np.broadcast_arrays(np.asarray(k, dtype=np.int64), np.asarray(size, dtype=np.int64))
    valid = (k >= 0) & (k <= size)
    kk = np.where(valid, k, 0)
    out = _log_factorial(size) - _log_factorial(kk) - _log_factorial(size - kk) + kk * math.log(prob)
    if prob < 1.0:
        out = out + (size - kk) * math.log1p(-prob)
    else:
        valid = valid & (kk == size)
    return np.where(valid, out, -np.inf)


def pmf_bounds(k, size, prob: float) -> tuple[np.ndarray, np.ndarray]:
    """``(pmf_lo, pmf_up)`` bracketing ``Bin(k; size, prob)`` elementwise."""
    value = log_pmf(k, size, prob)
    margin = log_margin(size, prob)
    return np.exp(value - margin) * (1.0 - 4 * _U), np.exp(value + margin) * (1.0 + 4 * _U)


def window(size: int, prob: float, tail: float) -> tuple[int, int, float]:
    """``(lo, hi, outside)``: a window of ``Bin(size, prob)`` and a bound (<= ``tail``) of the mass outside it."""
    if prob >= 1.0:
        return size, size, 0.0
    mean, sd = size * prob, math.sqrt(size * prob * (1.0 - prob))
    z = math.sqrt(2.0 * math.log(2.0 / tail)) + 1.0
    while True:
        lo, hi = max(0, int(math.floor(mean - z * sd - 2))), min(size, int(math.ceil(mean + z * sd + 2)))
        outside = float(chernoff(size, prob, lo - 1, False) + chernoff(size, prob, hi + 1, True))
        if outside <= tail or (lo == 0 and hi == size):
            return lo, hi, outside
        z *= 1.25


def _rows(size: int, prob: float, tail: float):
    lo, hi, outside = window(size, prob, tail)
    rows = np.arange(lo, hi + 1, dtype=np.int64)
    return rows, pmf_bounds(rows, size, prob)[1], outside


@functools.lru_cache(maxsize=512)
def _independent(pair, m: int, tail: float):
    """The epsilon-free part of an independent pair's ``delta_m``: rows, and the column suffix sums."""
    s = m + 1
    rows, row_up, row_outside = _rows(s, pair.support_other, tail)
    lo, hi, _ = window(s, pair.support, tail)
    cols = np.arange(lo, hi + 1, dtype=np.int64)
    low, up = pmf_bounds(cols, s, pair.support)
    center = int(round(s * pair.support))
    shift = (cols - center).astype(float)
    above, below = float(chernoff(s, pair.support, hi + 1, True)), float(chernoff(s, pair.support, lo - 1, False))

    def suffix(values):
        return np.r_[np.cumsum(values[::-1])[::-1], 0.0]

    s0_up, s0_lo = suffix(up) + above, suffix(low)
    s1_up = suffix(shift * np.where(shift >= 0, up, low)) + s * above
    size1 = suffix(np.abs(shift) * up) + s * above
    rounding = (cols.size + 16) * _U
    return s, rows, row_up, row_outside, lo, hi, center, s0_up, s0_lo, s1_up, size1, rounding, below


def _independent_delta(epsilon: float, pair, m: int, tail: float) -> float:
    s, rows, row_up, row_outside, lo, hi, center, s0_up, s0_lo, s1_up, size1, rounding, below = \
        _independent(pair, m, tail)
    e = math.exp(epsilon)
    d = pair.high - pair.low
    b = rows.astype(float)
    beta = e * (s * pair.low_other + (pair.high_other - pair.low_other) * b) - s * pair.low
    size_beta = e * (s * pair.low_other + (pair.high_other - pair.low_other) * b) + s * pair.low
    j = np.floor(beta / d).astype(np.int64) + 1
    index = np.clip(j, lo, hi + 1) - lo
    coef = d * center - beta
    value = d * s1_up[index] + coef * np.where(coef >= 0, s0_up[index], s0_lo[index])
    margin = (rounding * (d * size1[index] + np.abs(coef) * s0_up[index]) + 8 * _U * size_beta * s0_up[index]
              + 32 * _U * (d * s + size_beta))
    most = np.maximum(d * s - beta, 0.0) + 8 * _U * (d * s + size_beta)  # a term's value is at most this
    value = np.maximum(value, 0.0) + margin + np.where(j < lo, below * most, 0.0)
    total = float(np.dot(row_up, value)) * (1.0 + (rows.size + 16) * _U) / s
    return total * (1.0 + 4 * _U) + row_outside * pair.high * (1.0 + 4 * _U)


@functools.lru_cache(maxsize=512)
def _exclusive(pair, m: int, tail: float):
    """The epsilon-free part of an exclusive pair's ``delta_m``: rows ``t`` and their column windows."""
    s = m + 1
    rows, row_up, row_outside = _rows(s, min(1.0, 2.0 * pair.support), tail)
    mean, sd = rows / 2.0, np.sqrt(rows) / 2.0
    z = math.sqrt(2.0 * math.log(2.0 / tail)) + 1.0
    col_lo = np.maximum(0, np.floor(mean - z * sd - 2)).astype(np.int64)
    col_hi = np.minimum(rows, np.ceil(mean + z * sd + 2)).astype(np.int64)
    above = chernoff(rows, 0.5, col_hi + 1, True)
    outside = above + chernoff(rows, 0.5, col_lo - 1, False)
    return s, rows, row_up, row_outside, col_lo, col_hi, above, outside


def _direct_tails(rows, j, col_hi, above):
    """``(S_lo, S_up)`` of ``P(Bin(t, 1/2) >= j)`` by direct sums over ``[j, col_hi]`` plus the Chernoff tail."""
    width = int(max(1, (col_hi - j + 1).max()))
    a = j[:, None] + np.arange(width)[None, :]
    inside = a <= col_hi[:, None]
    low, up = pmf_bounds(np.where(inside, a, j[:, None]), rows[:, None], 0.5)
    low, up = np.where(inside, low, 0.0), np.where(inside, up, 0.0)
    rounding = (width + 8) * _U
    s_up = up.sum(axis=1) * (1.0 + rounding) + above
    return low.sum(axis=1) * (1.0 - rounding), s_up


def _exclusive_tails(rows, j, col_hi, above):
    """``(S_lo, S_up)`` along the path ``(t, j(t))``: direct sums every ANCHOR rows, the recursions between."""
    count = rows.size
    blocks = -(-count // ANCHOR)
    pad = blocks * ANCHOR - count
    step = np.r_[0, np.diff(j)]
    irregular = np.r_[(step < 0) | (step > 1), np.zeros(pad, dtype=bool)].reshape(blocks, ANCHOR).any(axis=1)
    # increments from row i - 1 to row i: + pmf(j_{i-1} - 1; t_{i-1}) / 2 - step_i pmf(j_{i-1}; t_i)
    add_lo, add_up = pmf_bounds(j[:-1] - 1, rows[:-1], 0.5)
    sub_lo, sub_up = pmf_bounds(j[:-1], rows[1:], 0.5)
    grow = np.zeros((2, blocks * ANCHOR))
    grow[0, 1:count] = 0.5 * add_lo - step[1:] * sub_up
    grow[1, 1:count] = 0.5 * add_up - step[1:] * sub_lo
    size = np.zeros(blocks * ANCHOR)
    size[1:count] = 0.5 * add_up + step[1:] * sub_up
    grow, size = grow.reshape(2, blocks, ANCHOR), size.reshape(blocks, ANCHOR)
    anchors = np.arange(0, count, ANCHOR)
    grow[0, :, 0], grow[1, :, 0] = _direct_tails(rows[anchors], j[anchors], col_hi[anchors], above[anchors])
    size[:, 0] = grow[1, :, 0]
    error = ANCHOR * _U * np.cumsum(size, axis=1)
    s_lo = (np.cumsum(grow[0], axis=1) - error).ravel()[:count]
    s_up = (np.cumsum(grow[1], axis=1) + error).ravel()[:count]
    direct = np.repeat(irregular, ANCHOR)[:count]
    if direct.any():
        s_lo[direct], s_up[direct] = _direct_tails(rows[direct], j[direct], col_hi[direct], above[direct])
    return np.maximum(s_lo, 0.0), s_up


def _exclusive_delta(epsilon: float, pair, m: int, tail: float) -> float:
    s, rows, row_up, row_outside, col_lo, col_hi, above, outside = _exclusive(pair, m, tail)
    e = math.exp(epsilon)
    d = pair.high - pair.low
    t = rows.astype(float)
    alpha = d * (1.0 + e)
    beta = e * (s * pair.low + d * t) - s * pair.low
    size_beta = e * (s * pair.low + d * t) + s * pair.low
    j_true = np.floor(beta / alpha).astype(np.int64) + 1
    beyond = j_true > col_hi + 1  # every positive term is outside the window: counted in `outside` below
    j = np.clip(j_true, col_lo, col_hi + 1)
    s_lo, s_up = _exclusive_tails(rows, j, col_hi, above)
    edge_up = pmf_bounds(j - 1, np.maximum(rows - 1, 0), 0.5)[1]
    coef = alpha * t / 2.0 - beta
    value = alpha * t / 4.0 * edge_up + coef * np.where(coef >= 0, s_up, s_lo)
    margin = (16 * _U * (alpha * t / 4.0 * edge_up + np.abs(coef) * s_up) + 8 * _U * size_beta * s_up
              + 32 * _U * (alpha * t + size_beta))
    value = np.where(beyond, 0.0, np.maximum(value, 0.0) + margin)
    most = np.maximum(alpha * t - beta, 0.0) + 8 * _U * (alpha * t + size_beta)
    total = float(np.dot(row_up, value + outside * most)) * (1.0 + (rows.size + 16) * _U) / s
    return total * (1.0 + 4 * _U) + row_outside * pair.high * (1.0 + 4 * _U)


def delta_given_m(epsilon: float, pair, m: int, tail: float) -> float:
    """Upper bound of ``delta_m(epsilon)`` for one pair, ``s = m + 1`` reports (module docstring).

    ``tail``: mass each window may drop (added in full, times the largest value there).
    """
    if pair.kind == "independent":
        return _independent_delta(epsilon, pair, m, tail)
    return _exclusive_delta(epsilon, pair, m, tail)

"""Binomial pmfs and tails in numpy (no scipy), accurate to a few parts in 10^15, for the runtime's checks.

:func:`binom_pmf` is Loader's saddle-point formula (``stirlerr`` and ``bd0``), vectorized:
relative error ~1e-15 at any ``n`` (``math.lgamma`` differences lose ``log(n!)``'s magnitude:
3e-8 at ``n = 10^7``). :func:`chernoff` bounds a tail and :func:`chernoff_outside` the mass outside
a window (the one Chernoff bound of the runtime: :mod:`ldpplan.mechanisms._amplification_sums`,
whose pmfs are rigorous brackets rather than accurate values, takes its tails from here). :func:`positive_part_half`
gives ``E[(a X - b)_+]`` for ``X ~ Bin(m_i, 1/2)`` along a path of consecutive ``m`` (the
threshold moving by 0 or 1 per step) from binomial tails computed by one exact windowed sum per
:data:`ANCHOR` points and the recursion ``S(t + 1, j) = S(t, j) + pmf(j - 1; t) / 2`` in between,
with an error bound returned beside each value.

References
----------
.. [Loader00] C. Loader, "Fast and accurate computation of binomial probabilities", 2000
   (the algorithm of R's ``dbinom``).
.. [Chernoff] ``P(X >= a) <= exp(-n KL(a / n || p))`` for ``a >= n p`` (and symmetrically below).
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["binom_pmf", "chernoff", "chernoff_outside", "window", "positive_part_half", "ANCHOR", "TAIL_SLACK"]

#: points between exact anchors of the tail recursion (accumulated rounding <= ANCHOR * 3e-16, relative)
ANCHOR = 4096
#: relative error bound of every tail (anchor sums, recursion, pmf), applied to the terms a value is a difference of
TAIL_SLACK = 1e-10
_Z = 14.0  # window half-width in standard deviations (plus 30): Chernoff tails below 1e-40
_S = (1.0 / 12, 1.0 / 360, 1.0 / 1260, 1.0 / 1680, 1.0 / 1188)
_SMALL = np.array([0.0] + [math.lgamma(n + 1.0) - (n + 0.5) * math.log(n) + n - 0.5 * math.log(2.0 * math.pi)
                           for n in range(1, 16)])


def _stirlerr(n: np.ndarray) -> np.ndarray:
    """``log(n!) - log(sqrt(2 pi n) (n / e)^n)`` for integers ``n >= 1`` (Loader 2000)."""
    out = np.empty_like(n)
    small = n <= 15
    out[small] = _SMALL[n[small].astype(np.int64)]
    m = n[~small]
    nn = m * m
    s0, s1, s2, s3, s4 = _S
    out[~small] = np.where(m > 500, (s0 - s1 / nn) / m,
                  np.where(m > 80, (s0 - (s1 - s2 / nn) / nn) / m,
                  np.where(m > 35, (s0 - (s1 - (s2 - s3 / nn) / nn) / nn) / m,
                           (s0 - (s1 - (s2 - (s3 - s4 / nn) / nn) / nn) / nn) / m)))
    return out


def _bd0(x: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """``x log(x / mean) + mean - x`` without cancellation (Loader 2000); ``x, mean > 0``."""
    out = x * np.log(x / mean) + mean - x
    close = np.abs(x - mean) < 0.1 * (x + mean)
    if np.any(close):
        xc, mc = x[close], mean[close]
        v = (xc - mc) / (xc + mc)
        s, ej, v2 = (xc - mc) * v, 2.0 * xc * v, v * v
        for j in range(1, 100):
            ej = ej * v2
            s1 = s + ej / (2 * j + 1)
            if np.array_equal(s1, s):
                break
            s = s1
        out[close] = s
    return out


def binom_pmf(x, n, p: float) -> np.ndarray:
    """``P(Bin(n, p) = x)`` for integer-valued arrays ``x`` and ``n`` (0 outside ``0..n``), relative error ~1e-15."""
    x = np.asarray(x, dtype=float)
    n = np.broadcast_to(np.asarray(n, dtype=float), x.shape).astype(float)
    out = np.zeros(x.shape)
    inside = (x >= 0) & (x <= n)
    if p <= 0.0 or p >= 1.0:
        return np.where(inside & (x == (0.0 if p <= 0.0 else n)), 1.0, 0.0)
    zero, full = inside & (x == 0), inside & (x == n) & (x > 0)
    out[zero] = np.exp(n[zero] * math.log1p(-p))
    out[full] = np.exp(n[full] * math.log(p))
    mid = inside & (x > 0) & (x < n)
    xm, nm = x[mid], n[mid]
    lc = _stirlerr(nm) - _stirlerr(xm) - _stirlerr(nm - xm) - _bd0(xm, nm * p) - _bd0(nm - xm, nm * (1.0 - p))
    out[mid] = np.exp(lc - 0.5 * (math.log(2.0 * math.pi) + np.log(xm) + np.log1p(-xm / nm)))
    return out


def chernoff(size, prob: float, point, upper: bool):
    """Upper bound of ``P(Bin(size, prob) >= point)`` (``upper``) or of ``P(... <= point)``: ``exp(-size KL)``.

    Elementwise over ``size`` and ``point``; 1 where ``point`` is on the mean's side (not a tail), 0
    where the tail is empty. The exponent is shrunk by ``1e-9`` relative and the value raised by
    ``1e-12`` relative, so the float evaluation of ``KL`` cannot make the bound too small.
    """
    size, point = np.broadcast_arrays(np.asarray(size, dtype=float), np.asarray(point, dtype=float))
    x = np.clip(point / np.maximum(size, 1.0), 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        first = np.where(x > 0, x * np.log(x / prob), 0.0)
        second = np.where(x < 1, (1 - x) * np.log((1 - x) / (1 - prob)), 0.0) if prob < 1 else 0.0
    kl = np.maximum(first + second, 0.0)
    beyond = (x > prob) if upper else (x < prob)
    bound = np.where(beyond, np.exp(-size * kl * (1.0 - 1e-9)) * (1.0 + 1e-12), 1.0)
    empty = (point > size) if upper else (point < 0)
    return np.where(empty, 0.0, np.minimum(bound, 1.0))


def chernoff_outside(n: int, p: float, lo: int, hi: int) -> float:
    """Upper bound of ``P(X < lo) + P(X > hi)``, ``X ~ Bin(n, p)`` (:func:`chernoff`; 1 per tail that is not a tail)."""
    return min(float(chernoff(n, p, lo - 1, False) + chernoff(n, p, hi + 1, True)), 1.0)


def window(n: int, p: float) -> tuple[int, int]:
    """``[lo, hi]`` around the mean of ``Bin(n, p)``: ``14`` standard deviations plus 30."""
    mean, sd = n * p, math.sqrt(n * p * (1.0 - p))
    return int(max(0, math.floor(mean - _Z * sd - 30))), int(min(n, math.ceil(mean + _Z * sd + 30)))


def _tail_direct(t: int, j: int) -> tuple[float, float]:
    """``(S, bound)``: ``S`` the windowed sum of ``P(Bin(t, 1/2) >= j)``, ``bound`` the mass it may miss."""
    lo, hi = window(t, 0.5)
    start = max(j, lo)
    missed = chernoff_outside(t, 0.5, lo if j < lo else 0, hi)
    if start > hi:
        return 0.0, missed
    return float(binom_pmf(np.arange(start, hi + 1), t, 0.5).sum()), missed


def _half_tails(t: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``P(Bin(t_i, 1/2) >= j_i)`` and the mass each may miss; ``t`` consecutive, ``j`` steps 0 or 1 (else direct)."""
    size = t.size
    steps = np.diff(j)
    if size < 2 or np.any(np.diff(t) != 1.0) or np.any((steps != 0.0) & (steps != 1.0)):
        pairs = [_tail_direct(int(a), int(b)) for a, b in zip(t, j)]
        return np.array([s for s, _ in pairs]), np.array([m for _, m in pairs])
    inc = 0.5 * binom_pmf(j[:-1] - 1.0, t[:-1], 0.5) - steps * binom_pmf(j[:-1], t[1:], 0.5)
    out, missed = np.empty(size), np.empty(size)
    for a in range(0, size, ANCHOR):
        b = min(a + ANCHOR, size)
        start, miss = _tail_direct(int(t[a]), int(j[a]))
        out[a:b] = start + np.concatenate(([0.0], np.cumsum(inc[a:b - 1])))
        missed[a:b] = miss
    return np.clip(out, 0.0, 1.0), missed


def positive_part_half(m, slope: float, offset) -> np.ndarray:
    """Upper bounds of ``E[(slope X - offset_i)_+]``, ``X ~ Bin(m_i, 1/2)``, ``slope > 0``, integers ``m_i >= 0``.

    ``E[X 1{X >= j}] = (m / 2) P(Bin(m - 1, 1/2) >= j - 1)`` with ``j`` the smallest ``x`` with
    ``slope x > offset``; the value is ``slope (m / 2) S1 - offset S2`` plus the error bound
    ``TAIL_SLACK (|first| + |second|)``, the missed masses times their coefficients, and one term
    ``1e-15 |offset| pmf`` for a threshold off by one through rounding of ``offset / slope``.
    """
    m = np.atleast_1d(np.asarray(m, dtype=float))
    b = np.broadcast_to(np.asarray(offset, dtype=float), m.shape)
    out = np.maximum(-b, 0.0)  # m = 0: X = 0
    pos = m >= 1
    if not np.any(pos):
        return out
    mm, bb = m[pos], b[pos]
    j = np.clip(np.floor(bb / slope) + 1.0, 0.0, mm + 1.0)
    s1, miss1 = _half_tails(mm - 1.0, j - 1.0)
    s2, miss2 = _half_tails(mm, j)
    first, second = slope * mm / 2.0 * s1, bb * s2
    error = (TAIL_SLACK * (np.abs(first) + np.abs(second)) + slope * mm / 2.0 * miss1 + np.abs(bb) * miss2
             + 1e-15 * np.abs(bb) * binom_pmf(j - 1.0, mm, 0.5))
    out[pos] = np.maximum(first - second, 0.0) + error
    return out

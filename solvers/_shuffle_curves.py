"""Hockey-stick divergences of shuffled reports (the privacy curves behind :mod:`solvers.shuffle`).

Every function returns ``delta(epsilon)`` for one neighbouring pair (or one dominating pair) of the
shuffled view, ``delta(epsilon) = sum_y max(0, P(y) - e^epsilon Q(y))``. Upper-bound curves
(``*_upper``) round toward the safe side: truncated tails are added in full and the result is
multiplied by ``1 + RELATIVE_SLACK`` and increased by ``ABSOLUTE_SLACK``. Lower-bound curves
(``*_lower``) round the other way (``1 - RELATIVE_SLACK``), so that a pair that is *not*
``(epsilon, delta)``-DP according to the computed number provably is not.

All sums reduce, per value of a total count, to one expression
``E[(A X - B)_+]`` with ``X ~ Bin(N, pi)``: the likelihood ratio of every pair below is monotone in
``X`` once the total is fixed, so the positive part is a binomial tail, and the tail sums are
regularised incomplete beta functions (``scipy.special.bdtrc``; no pmf is summed term by term).

References
----------
.. [FMT21] V. Feldman, A. McMillan, K. Talwar, "Hiding among the clones: a simple and nearly
   optimal analysis of privacy amplification by shuffling", FOCS 2021 (arXiv 2012.12803),
   Theorem 3.2 (the clone reduction) and Section 4 (its numerical evaluation).
.. [BBGN19] B. Balle, J. Bell, A. Gascon, K. Nissim, "The privacy blanket of the shuffle model",
   CRYPTO 2019, Section 3 (the blanket decomposition of a local randomizer; Lemma 3.1 for k-RR).
.. [SCW25] P. Su, H. Cheng, P. Wang, "Decomposition-based optimal bounds for privacy amplification
   via shuffling", arXiv 2504.07414: the blanket decomposition is the optimal one among all
   clone-type decompositions.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["RELATIVE_SLACK", "ABSOLUTE_SLACK", "clone_delta_upper", "blanket_krr_delta_upper",
           "krr_pair_delta_lower", "binary_rr_pair_delta", "binary_rr_pair_delta_exhaustive"]

#: relative safety margin on every computed divergence (far above the ~1e-13 error of bdtrc)
RELATIVE_SLACK = 1e-9
#: absolute safety margin on every computed upper-bound divergence
ABSOLUTE_SLACK = 1e-15
#: rounding error of the tail sums, relative to the terms they are differences of
SCALE_SLACK = 1e-11
_ANCHOR = 64


def _tail_at_least(j, n, p):
    """``P(Bin(n, p) >= j)`` for integer arrays ``j`` (1 when ``j <= 0``, 0 when ``j > n``)."""
    from scipy.special import bdtrc  # deferred: scipy

    j = np.asarray(j, dtype=float)
    n = np.broadcast_to(np.asarray(n, dtype=float), j.shape)
    out = bdtrc(np.clip(j - 1, 0, None).astype(np.int64), n.astype(np.int64), p)
    out = np.where(j <= 0, 1.0, out)
    return np.where(j > n, 0.0, out)


def _half_tails(t, j):
    """``P(Bin(t_i, 1/2) >= j_i)`` along a path: ``t`` consecutive integers, ``j`` steps of 0 or 1.

    Exact values (``bdtrc``) every :data:`_ANCHOR` points; in between, the recursion
    ``S(t + 1, j) = S(t, j) + pmf(j - 1; t) / 2`` and ``S(t, j + 1) = S(t, j) - pmf(j; t)``
    (pmf by ``scipy.stats.binom``, relative error ~1e-15), so at most ``_ANCHOR`` rounded terms
    accumulate. Any other shape falls back to ``bdtrc`` everywhere.
    """
    from scipy.stats import binom  # deferred: scipy

    t = np.asarray(t, dtype=float)
    j = np.asarray(j, dtype=float)
    if t.size < 2 or np.any(np.diff(t) != 1.0) or np.any((np.diff(j) != 0.0) & (np.diff(j) != 1.0)):
        return _tail_at_least(j, t, 0.5)
    dj = np.diff(j)
    inc = 0.5 * binom.pmf(j[:-1] - 1.0, t[:-1], 0.5) - dj * binom.pmf(j[:-1], t[1:], 0.5)
    size = t.size
    chunks = -(-size // _ANCHOR)
    padded = np.zeros(chunks * _ANCHOR)
    padded[1:size] = inc  # padded[i] = S(i) - S(i - 1); the anchors' own slots are reset below
    padded = padded.reshape(chunks, _ANCHOR)
    padded[:, 0] = _tail_at_least(j[::_ANCHOR], t[::_ANCHOR], 0.5)
    out = np.cumsum(padded, axis=1).ravel()[:size]
    return np.clip(out, 0.0, 1.0)


def _positive_part_with_scale(n, p, a, b, *, path=True):
    """``(E[(a X - b)_+], scale)``: the value and the size of the terms it is a difference of.

    ``E[X 1{X >= j}] = n p P(Bin(n - 1, p) >= j - 1)`` with ``j`` the smallest ``x`` such that
    ``a x > b``. A threshold off by one through rounding of ``b / a`` adds or drops one term
    ``(a x - b) pmf(x)`` with ``|a x - b| <= 4e-16 b``, far inside ``SCALE_SLACK * scale``.
    With ``p = 1/2`` and ``n`` consecutive integers the tails follow :func:`_half_tails` (unless
    ``path`` is false: ``bdtrc`` for every tail, the independent path ``verify`` uses). Callers add ``SCALE_SLACK * scale`` (upper bounds) or subtract it (lower bounds).
    """
    n = np.atleast_1d(np.asarray(n, dtype=float))
    b = np.broadcast_to(np.asarray(b, dtype=float), n.shape)
    if n.size > 1 and n[0] == 0.0:  # X = 0: the value is (-b)_+; the path starts at n = 1
        value, scale = _positive_part_with_scale(n[1:], p, a, b[1:], path=path)
        return np.r_[max(0.0, -b[0]), value], np.r_[abs(b[0]), scale]
    j = np.clip(np.floor(b / a) + 1.0, 0.0, n + 1.0)
    if path and p == 0.5 and n.size > 1 and np.all(np.diff(n) == 1.0):
        first, second = _half_tails(n - 1.0, j - 1.0), _half_tails(n, j)
    else:
        first = _tail_at_least(j - 1.0, np.maximum(n - 1.0, 0.0), p)
        second = _tail_at_least(j, n, p)
    first_term, second_term = a * n * p * first, b * second
    return np.maximum(first_term - second_term, 0.0), first_term + np.abs(second_term)


def _bulk(n, p, z=10.0):
    """Integer range ``[lo, hi]`` around the mean of ``Bin(n, p)`` (``z`` standard deviations plus a
    margin) and the exact probability mass outside it (callers add it to delta in full)."""
    from scipy.stats import binom  # deferred: scipy

    if n <= 0:
        return 0, 0, 0.0
    mean, sd = n * p, math.sqrt(n * p * (1.0 - p))
    lo = int(max(0, math.floor(mean - z * sd - 10)))
    hi = int(min(n, math.ceil(mean + z * sd + 10)))
    outside = (float(binom.cdf(lo - 1, n, p)) if lo > 0 else 0.0) + float(binom.sf(hi, n, p))
    return lo, hi, outside


def _safe_up(value):
    return float(value) * (1.0 + RELATIVE_SLACK) + ABSOLUTE_SLACK


def clone_delta_upper(epsilon: float, epsilon0: float, n: int, *, independent: bool = False) -> float:
    """FMT21 Theorem 3.2: the hockey-stick divergence of the two clone mixtures (an upper bound).

    ``C ~ Bin(n - 1, e^-epsilon0)`` clones, ``A ~ Bin(C, 1/2)``, ``Delta ~ Bern(e^epsilon0 / (e^epsilon0 + 1))``;
    ``P = (A + Delta, C - A + 1 - Delta)`` and ``Q = (A + 1 - Delta, C - A + Delta)``. The pair is
    symmetric (swapping the coordinates maps ``P`` to ``Q``), so one direction suffices. Given
    ``C = c`` the first coordinate ``j`` has likelihood ratio ``(p j + (1-p)(c+1-j)) / ((1-p) j +
    p (c+1-j))`` with ``P(j | c) = Bin(j; c+1, 1/2) (p j + (1 - p)(c + 1 - j)) * 2 / (c + 1)``, so
    ``P - e^epsilon Q = Bin(j; c+1, 1/2) * 2 / (c+1) * (a j - b)`` with ``a = (p - (1-p) e^epsilon)
    + (p e^epsilon - (1 - p))`` and ``b = (p e^epsilon - (1 - p)) (c + 1)``.
    """
    from scipy.stats import binom  # deferred: scipy

    if epsilon >= epsilon0:
        return 0.0
    p = math.exp(epsilon0) / (math.exp(epsilon0) + 1.0)
    e = math.exp(epsilon)
    lo, hi, outside = _bulk(n - 1, math.exp(-epsilon0))
    c = np.arange(lo, hi + 1, dtype=float)
    weights = binom.pmf(c, n - 1, math.exp(-epsilon0))
    slope = (p - (1.0 - p) * e) + (p * e - (1.0 - p))
    offset = (p * e - (1.0 - p)) * (c + 1.0)
    value, scale = _positive_part_with_scale(c + 1.0, 0.5, slope, offset, path=not independent)
    inner = 2.0 / (c + 1.0) * (value + SCALE_SLACK * scale)
    return _safe_up(np.dot(weights, np.minimum(inner, 1.0)) + outside)


def _blanket_given_m(epsilon, epsilon0, k, m, independent=False):
    """Hockey-stick of k-RR given ``m`` blanket reports besides the differing user's (exact).

    With ``s = m + 1`` reports and the histogram's counts ``(h_x, h_x')`` of the two differing
    inputs, ``P(h) - e^epsilon Q(h) = Mult_s(h) * gamma / s * ((e^epsilon0 - 1)(h_x - e^epsilon h_x')
    - (e^epsilon - 1) s)`` where ``Mult_s`` is the uniform multinomial on ``k`` values and ``gamma =
    k / (e^epsilon0 + k - 1)``. Summing over ``t = h_x + h_x' ~ Bin(s, 2/k)`` and ``h_x | t ~ Bin(t, 1/2)``.
    """
    from scipy.stats import binom  # deferred: scipy

    e, e0 = math.exp(epsilon), math.exp(epsilon0)
    gamma = k / (e0 + k - 1.0)
    s = m + 1
    slope = (e0 - 1.0) * (1.0 + e)
    if k == 2:
        t = np.array([float(s)])
        weights, outside = np.array([1.0]), 0.0
    else:
        lo, hi, outside = _bulk(s, 2.0 / k)
        t = np.arange(lo, hi + 1, dtype=float)
        weights = binom.pmf(t, s, 2.0 / k)
    offset = (e0 - 1.0) * e * t + (e - 1.0) * s
    value, scale = _positive_part_with_scale(t, 0.5, slope, offset, path=not independent)
    inner = gamma / s * (value + SCALE_SLACK * scale)
    if k > 2:
        # the truncated t's: their hockey-stick terms are at most their mass under P, where the
        # x/x' count is Bin(m, 2/k) plus at most one
        outside = float(_tail_at_least(hi, m, 2.0 / k)) + (1.0 - float(_tail_at_least(lo, m, 2.0 / k)))
    return float(np.dot(weights, inner)) + outside


def blanket_krr_delta_upper(epsilon: float, epsilon0: float, k: int, n: int, *, independent: bool = False) -> float:
    """Balle et al.'s privacy blanket for k-RR, summed over the blanket size (an upper bound).

    Each of the other ``n - 1`` users reports uniformly at random with probability ``gamma = k /
    (e^epsilon0 + k - 1)`` (the blanket) and its own input otherwise [BBGN19, Lemma 3.1]; revealing who is
    in the blanket only helps the adversary, so ``delta <= E_M[delta_M]`` with ``M ~ Bin(n - 1, gamma)``.
    ``delta_m`` is non-increasing in ``m`` (one more uniform report is post-processing), so each
    block ``[m_i, m_{i+1})`` of ``M``'s range is bounded by ``delta_{m_i}`` and the lowest quantile
    block by 1. [SCW25] show this decomposition is the optimal one.
    """
    from scipy.stats import binom  # deferred: scipy

    if epsilon >= epsilon0:
        return 0.0
    gamma = k / (math.exp(epsilon0) + k - 1.0)
    levels = np.array([1e-18, 1e-12, 1e-8, 1e-5, 1e-3, 0.02, 0.1, 0.3, 0.5, 0.7, 0.9])
    points = np.unique(np.clip(binom.ppf(levels, n - 1, gamma), 0, n - 1).astype(int))
    below = float(binom.cdf(points[0] - 1, n - 1, gamma)) if points[0] > 0 else 0.0
    total = below
    cdf_at = binom.cdf(points - 1, n - 1, gamma)
    mass = np.diff(np.append(cdf_at, 1.0))
    for m, w in zip(points, mass):
        if w > 0:
            value = _blanket_given_m(epsilon, epsilon0, k, int(m), independent)
            if not math.isfinite(value):
                raise FloatingPointError(f"blanket divergence at m = {m} is {value}")
            total += w * min(1.0, value)
    return _safe_up(total)


def krr_pair_delta_lower(epsilon: float, epsilon0: float, k: int, n: int) -> float:
    """Exact hockey-stick of the counts ``(h_x, h_x')`` for one concrete k-RR pair (``k >= 3``): a lower bound.

    Datasets ``D = (x, z, ..., z)`` and ``D' = (x', z, ..., z)`` with ``z`` a third value. Every
    other user reports ``x`` and ``x'`` with probability ``q = 1 / (e^epsilon0 + k - 1)`` each; the
    adversary looks only at the two counts (a post-processing of the shuffled histogram, so the
    divergence of the counts is at most that of the histogram, hence at most the worst case).
    With ``M_n`` the trinomial ``(n; q, q)``, ``alpha = (e^epsilon0 + 1) q``, ``rho = (1 - alpha) / (1 - 2q)``
    and ``t = h_x + h_x'``: ``P - e^epsilon Q = M_n(h) / n * ((e^epsilon0 - 1)(1 + e^epsilon) h_x
    - (e^(epsilon + epsilon0) - 1) t - (e^epsilon - 1) rho (n - t))``. The pair is symmetric.
    """
    from scipy.stats import binom  # deferred: scipy

    if epsilon >= epsilon0:
        return 0.0
    e, e0 = math.exp(epsilon), math.exp(epsilon0)
    q = 1.0 / (e0 + k - 1.0)
    rho = (1.0 - (e0 + 1.0) * q) / (1.0 - 2.0 * q)
    lo, hi, _ = _bulk(n, 2.0 * q)
    t = np.arange(lo, hi + 1, dtype=float)
    weights = binom.pmf(t, n, 2.0 * q)
    offset = (e * e0 - 1.0) * t + (e - 1.0) * rho * (n - t)
    value, scale = _positive_part_with_scale(t, 0.5, (e0 - 1.0) * (1.0 + e), offset)
    inner = np.maximum(value - SCALE_SLACK * scale, 0.0) / n
    return float(np.dot(weights, inner)) * (1.0 - RELATIVE_SLACK)


def binary_rr_pair_delta(epsilon: float, epsilon0: float, n: int, ones: int = 0, *, bound: str = "lower",
                         closed_form: bool = True) -> float:
    """Exact hockey-stick (both directions, the larger) of the shuffled count of binary RR.

    Datasets ``D = (1, x_2..x_n)`` and ``D' = (0, x_2..x_n)`` with ``ones`` of the others holding 1.
    The view is the number of reported ones. For ``ones = 0`` the others' count is ``Bin(n - 1, q)``,
    ``q = 1 / (e^epsilon0 + 1)``, and with ``G = Bin(n, q)``: ``Q(h) = G(h)`` and ``P(h) = G(h) / n *
    (e^epsilon0 h + e^-epsilon0 (n - h))`` (closed forms, summed as binomial tails). Other values of
    ``ones`` are summed term by term (used at small ``n`` only). ``bound`` says which way to
    round: ``"lower"`` (the result is at most the exact value) or ``"upper"``. ``closed_form=False``
    sums ``ones = 0`` term by term too (the tail formula's rounding margin is wide when its two
    terms nearly cancel).
    """
    from scipy.stats import binom  # deferred: scipy

    sign = 1.0 if bound == "upper" else -1.0
    if epsilon >= epsilon0:
        return 0.0
    e, e0 = math.exp(epsilon), math.exp(epsilon0)
    q = 1.0 / (e0 + 1.0)
    if ones == 0 and closed_form:
        slope = e0 - 1.0 / e0
        forward, forward_scale = _positive_part_with_scale(float(n), q, slope / n, e - 1.0 / e0)
        plus, plus_scale = _positive_part_with_scale(float(n), q, e * slope / n, 1.0 - e / e0)
        mean = e * slope * q - (1.0 - e / e0)  # E[a X - b] for the backward direction
        backward = plus[0] - mean
        forward_bound = forward[0] + sign * SCALE_SLACK * forward_scale[0]
        backward_bound = backward + sign * SCALE_SLACK * (plus_scale[0] + abs(e * slope * q) + abs(1.0 - e / e0))
        value = max(forward_bound, backward_bound, 0.0)
        return _safe_up(value) if bound == "upper" else value * (1.0 - RELATIVE_SLACK)
    pmf = np.convolve(binom.pmf(np.arange(ones + 1), ones, 1 - q), binom.pmf(np.arange(n - ones), n - 1 - ones, q))
    shifted, same = np.r_[0.0, pmf], np.r_[pmf, 0.0]
    p = e0 * q
    forward_pmf, backward_pmf = p * shifted + (1 - p) * same, (1 - p) * shifted + p * same
    value = float(max(np.maximum(forward_pmf - e * backward_pmf, 0).sum(),
                      np.maximum(backward_pmf - e * forward_pmf, 0).sum()))
    return _safe_up(value * (1.0 + 1e-12 * n)) if bound == "upper" else value * (1.0 - 1e-12 * n)


def binary_rr_pair_delta_exhaustive(epsilon: float, epsilon0: float, n: int) -> float:
    """The exact privacy curve of shuffled binary RR: the largest divergence over every dataset.

    The view depends on the dataset only through the number of others holding 1, so the maximum
    over ``ones = 0 .. n - 1`` (both directions) is the exact worst case. ``O(n^2)``: small ``n``.
    """
    return max(binary_rr_pair_delta(epsilon, epsilon0, n, ones, bound="upper", closed_form=False) for ones in range(n))


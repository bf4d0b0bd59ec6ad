"""The numeric mechanisms' formulas (one copy: the runtime's, imported back by ``solvers._numeric_params``).

``load()`` recomputes a plan's report values and hybrid weights from them, so a plan whose output
values differ from the mechanism's by one float step is refused, as ``verify`` refuses it.

References
----------
.. [1] J. C. Duchi, M. I. Jordan, M. J. Wainwright, JASA 2018, Sec. 4.2.3.
.. [2] N. Wang et al., ICDE 2019 (arXiv:1907.00782), Sec. III (Alg. 1, Alg. 2, the Hybrid Mechanism).
.. [3] Z. Li et al., SIGMOD 2020 (arXiv:1912.01051), Sec. 4 (Square Wave).
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

__all__ = ["duchi_bound", "piecewise_bound", "square_wave_bandwidth", "square_wave_moments", "piecewise_densities",
           "hybrid_epsilon_star", "hybrid_alpha", "band_values", "expected_layout"]

_SCALE = 1 << 48


def _check(epsilon: float) -> float:
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(epsilon)) or not float(epsilon) > 0:
        raise ValueError(f"epsilon: must be a finite number > 0 (got {epsilon!r})")
    return float(epsilon)


def duchi_bound(epsilon: float) -> float:
    """``C_D = (e^eps + 1)/(e^eps - 1)``: the magnitude of Duchi et al.'s two outputs ([1]_, [2]_ Alg. 1)."""
    epsilon = _check(epsilon)
    return (math.exp(epsilon) + 1) / math.expm1(epsilon)


def piecewise_bound(epsilon: float) -> float:
    """``C = (e^(eps/2) + 1)/(e^(eps/2) - 1)``: PM's output range ``[-C, C]`` ([2]_ Alg. 2)."""
    epsilon = _check(epsilon)
    return (math.exp(epsilon / 2) + 1) / math.expm1(epsilon / 2)


def piecewise_densities(epsilon: float) -> tuple[float, float]:
    """PM's output densities ``(p, p/e^eps)`` inside and outside the band, ``p = (e^eps - e^(eps/2))/(2 e^(eps/2) + 2)`` ([2]_ Alg. 2)."""
    epsilon = _check(epsilon)
    s = math.exp(epsilon / 2)
    high = s * math.expm1(epsilon / 2) / (2 * (s + 1))
    return high, high / math.exp(epsilon)


def square_wave_bandwidth(epsilon: float) -> float:
    """SW's half-width ``b = (eps e^eps - e^eps + 1)/(2 e^eps (e^eps - 1 - eps))`` ([3]_ Sec. 4).

    Computed in a form stable at small epsilon (numerator ``e^eps (eps - 1) + 1``, denominator with
    ``expm1(eps) - eps``); ``b -> 1/2`` as ``eps -> 0`` and ``b -> 0`` as ``eps -> inf``.
    """
    epsilon = _check(epsilon)
    e = math.exp(epsilon)
    numerator = e * (epsilon - 1) + 1
    denominator = 2 * e * (math.expm1(epsilon) - epsilon)
    if epsilon < 1e-3:  # both sides are O(eps^2): use the series (eps^2/2 + eps^3/3) / (eps^2 + 4 eps^3/3)
        numerator = epsilon**2 / 2 + epsilon**3 / 3
        denominator = epsilon**2 + 4 * epsilon**3 / 3
    return numerator / denominator


def hybrid_epsilon_star() -> float:
    """``eps*`` of the Hybrid Mechanism ([2]_ Sec. III-C): below it ``alpha = 0``.

    ``eps* = ln((-5 + 2 cbrt(6353 - 405 sqrt(241)) + 2 cbrt(6353 + 405 sqrt(241)))/27) ~ 0.6096``.
    """
    root = math.sqrt(241)
    return math.log((-5 + 2 * math.cbrt(6353 - 405 * root) + 2 * math.cbrt(6353 + 405 * root)) / 27)


def hybrid_alpha(epsilon: float) -> float:
    """HM's probability of running PM: ``1 - e^(-eps/2)`` above ``eps*``, else 0 ([2]_ Sec. III-C)."""
    epsilon = _check(epsilon)
    return -math.expm1(-epsilon / 2) if epsilon > hybrid_epsilon_star() else 0.0


def square_wave_moments(epsilon: float) -> tuple[float, float, float, float]:
    """``(b, p, q, B)`` of SW and its mean's slope ``B = 2 b (p - q)`` (internal helper, [3]_)."""
    b = square_wave_bandwidth(epsilon)
    e = math.exp(epsilon)
    p = e / (2 * b * e + 1)
    q = 1 / (2 * b * e + 1)
    return b, p, q, 2 * b * (p - q)


def band_values(mechanism: str, epsilon: float, cells: int) -> np.ndarray:
    """Report values of ``cells`` equal output cells (shape (cells,)): PM's midpoints over ``[-C, C]``, or SW's
    debiased midpoints ``2 (mid - A)/B - 1`` over ``[-b, 1 + b]`` (``A = q (1 + 2b)/2``, ``B = 2 b (p - q)``).

    References
    ----------
    [2]_ Alg. 2; [3]_ Sec. 4.
    """
    if mechanism == "piecewise":
        bound = piecewise_bound(epsilon)
        edges = np.linspace(-bound, bound, int(cells) + 1)
        return (edges[:-1] + edges[1:]) / 2
    b, _, q, slope = square_wave_moments(epsilon)
    edges = np.linspace(-b, 1 + b, int(cells) + 1)
    middles = (edges[:-1] + edges[1:]) / 2
    return 2 * (middles - q * (1 + 2 * b) / 2) / slope - 1


def expected_layout(mechanism: str, epsilon: float, sizes: Sequence[int]) -> tuple[np.ndarray, tuple[int, ...]]:
    """The report values and component weights a plan of ``mechanism`` at ``epsilon`` must carry.

    Duchi: ``(+C_D, -C_D)``, one component; PM / SW: :func:`band_values`; hybrid: PM's cells then
    Duchi's two outputs with weights ``alpha`` (``hybrid_alpha`` rounded to the nearest multiple of
    ``2^-48``) and ``2^48 - alpha``, or Duchi alone when ``alpha`` is 0.
    """
    duchi = np.array([duchi_bound(epsilon), -duchi_bound(epsilon)])
    if mechanism == "duchi":
        return duchi, (_SCALE,)
    if mechanism in ("piecewise", "square-wave"):
        return band_values(mechanism, epsilon, sizes[0]), (_SCALE,)
    alpha = int(round(hybrid_alpha(epsilon) * _SCALE))
    if alpha == 0:
        return duchi, (_SCALE,)
    return np.concatenate([band_values("piecewise", epsilon, sizes[0]), duchi]), (alpha, _SCALE - alpha)

"""The parameters of the numeric mechanisms (one copy, shared by :mod:`.numeric` and its helpers).

References
----------
.. [1] J. C. Duchi, M. I. Jordan, M. J. Wainwright, JASA 2018, Sec. 4.2.3.
.. [2] N. Wang et al., ICDE 2019 (arXiv:1907.00782), Sec. III (Alg. 1, Alg. 2, the Hybrid Mechanism).
.. [3] Z. Li et al., SIGMOD 2020 (arXiv:1912.01051), Sec. 4 (Square Wave).
"""
from __future__ import annotations

import math

from ._checks import check_epsilon

__all__ = ["MECHANISMS", "duchi_bound", "piecewise_bound", "square_wave_bandwidth", "square_wave_moments", "piecewise_densities", "hybrid_epsilon_star",
           "hybrid_alpha"]

#: every numeric mechanism, by the name a spec will use
MECHANISMS = ("duchi", "piecewise", "hybrid", "square_wave")


def duchi_bound(epsilon: float) -> float:
    """``C_D = (e^eps + 1)/(e^eps - 1)``: the magnitude of Duchi et al.'s two outputs ([1]_, [2]_ Alg. 1)."""
    epsilon = check_epsilon(epsilon)
    return (math.exp(epsilon) + 1) / math.expm1(epsilon)


def piecewise_bound(epsilon: float) -> float:
    """``C = (e^(eps/2) + 1)/(e^(eps/2) - 1)``: PM's output range ``[-C, C]`` ([2]_ Alg. 2)."""
    epsilon = check_epsilon(epsilon)
    return (math.exp(epsilon / 2) + 1) / math.expm1(epsilon / 2)


def piecewise_densities(epsilon: float) -> tuple[float, float]:
    """PM's output densities ``(p, p/e^eps)`` inside and outside the band, ``p = (e^eps - e^(eps/2))/(2 e^(eps/2) + 2)`` ([2]_ Alg. 2)."""
    epsilon = check_epsilon(epsilon)
    s = math.exp(epsilon / 2)
    high = s * math.expm1(epsilon / 2) / (2 * (s + 1))
    return high, high / math.exp(epsilon)


def square_wave_bandwidth(epsilon: float) -> float:
    """SW's half-width ``b = (eps e^eps - e^eps + 1)/(2 e^eps (e^eps - 1 - eps))`` ([3]_ Sec. 4).

    Computed in a form stable at small epsilon (numerator ``e^eps (eps - 1) + 1``, denominator with
    ``expm1(eps) - eps``); ``b -> 1/2`` as ``eps -> 0`` and ``b -> 0`` as ``eps -> inf``.
    """
    epsilon = check_epsilon(epsilon)
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
    epsilon = check_epsilon(epsilon)
    return -math.expm1(-epsilon / 2) if epsilon > hybrid_epsilon_star() else 0.0


def square_wave_moments(epsilon: float) -> tuple[float, float, float, float]:
    """``(b, p, q, B)`` of SW and its mean's slope ``B = 2 b (p - q)`` (internal helper, [3]_)."""
    b = square_wave_bandwidth(epsilon)
    e = math.exp(epsilon)
    p = e / (2 * b * e + 1)
    q = 1 / (2 * b * e + 1)
    return b, p, q, 2 * b * (p - q)

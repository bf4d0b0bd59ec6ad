"""Numeric values under LDP (issue 29): closed-form variances and the choice of a mean mechanism.

Every input is a number ``x`` in ``[-1, 1]`` (a spec's range ``[low, high]`` maps onto it affinely;
that mapping, the clipping rule and the plan format come later, on top of this module). Four
mechanisms, each giving an *unbiased* report ``x_hat`` of ``x`` (``E[x_hat | x] = x``):

``duchi``
    Duchi, Jordan & Wainwright's one-dimensional mechanism: report ``+C_D`` with probability
    ``1/2 + x (e^eps - 1)/(2 (e^eps + 1))``, else ``-C_D``, where ``C_D = (e^eps + 1)/(e^eps - 1)``.
    ``Var[x_hat | x] = C_D^2 - x^2``; worst case at ``x = 0``.
``piecewise`` (PM)
    Wang et al.'s Piecewise Mechanism: with ``s = e^(eps/2)``, ``C = (s + 1)/(s - 1)``,
    ``l(x) = (C + 1) x/2 - (C - 1)/2``, ``r(x) = l(x) + C - 1``, the output has density
    ``p = (e^eps - s)/(2 s + 2)`` on ``[l(x), r(x)]`` and ``p/e^eps`` on the rest of ``[-C, C]``.
    ``Var[x_hat | x] = x^2/(s - 1) + (s + 3)/(3 (s - 1)^2)``; worst case at ``|x| = 1``:
    ``4 s/(3 (s - 1)^2)``.
``hybrid`` (HM)
    PM with probability ``alpha``, Duchi otherwise; ``alpha = 1 - e^(-eps/2)`` for
    ``eps > eps*`` and ``alpha = 0`` below (``eps* ~ 0.61``, :func:`hybrid_epsilon_star`). The
    variance is ``alpha Var_PM(x) + (1 - alpha) Var_D(x)`` (both parts unbiased); for
    ``alpha = 1 - e^(-eps/2)`` the ``x^2`` terms cancel and it equals, for every ``x``,
    ``(s + 3)/(3 s (s - 1)) + (e^eps + 1)^2/(s (e^eps - 1)^2)``.
``square_wave`` (SW)
    Li et al.'s Square Wave on ``v = (x + 1)/2`` in ``[0, 1]``: output density ``p`` on
    ``[v - b, v + b]`` and ``q = p/e^eps`` elsewhere on ``[-b, 1 + b]``, ``p = e^eps/(2 b e^eps + 1)``,
    bandwidth ``b = (eps e^eps - e^eps + 1)/(2 e^eps (e^eps - 1 - eps))``. SW is built for
    distribution estimation (with EMS); for the mean we debias it: ``E[v_out] = A + B v`` with
    ``A = q (1 + 2b)/2``, ``B = 2 b (p - q)``, so ``x_hat = 2 (v_out - A)/B - 1``. Its variance is a
    convex quadratic in ``v`` (worst case at an end of the range). It is not a candidate of
    :func:`best_mean_mechanism` (the issue assigns it to distributions); its figures are reported.

The crossover where PM's worst case falls below Duchi's (:func:`piecewise_duchi_crossover`,
``eps ~ 1.29``) is computed by bisection of the closed forms; ``eps*`` is the paper's closed form
(the root of ``Var_PM(0) = Var_D(0)``, checked by bisection in the tests).

Samplers (continuous floats: a *reference* for the closed forms and Monte Carlo tests, not a
production runtime; the runtime samples the exact discretized channels of
:mod:`ldpplan.solvers._numeric_channel`) and densities are in :mod:`._numeric_sampling`.

References
----------
.. [1] J. C. Duchi, M. I. Jordan, M. J. Wainwright, "Minimax optimal procedures for locally private
   estimation", JASA 113(521), 2018 (arXiv:1604.02390): the one-dimensional mechanism of
   Sec. 4.2.3 (the mean of ``[-1, 1]`` values; two outputs ``+-B``).
.. [2] N. Wang, X. Xiao, Y. Yang, J. Zhao, S. C. Hui, H. Shin, J. Shin, G. Yu, "Collecting and
   analyzing multidimensional data with local differential privacy", ICDE 2019
   (arXiv:1907.00782), Sec. III: Algorithm 1 (Duchi et al.'s solution and its variance), Algorithm 2
   and Lemma 1 (PM, ``Var[t* | t]``), the Hybrid Mechanism with ``alpha = 1 - e^(-eps/2)`` and
   ``eps* = ln((-5 + 2 (6353 - 405 sqrt 241)^(1/3) + 2 (6353 + 405 sqrt 241)^(1/3))/27) ~ 0.61``,
   and the remark that PM's worst case is below Duchi's for ``eps > 1.29``.
.. [3] Z. Li, T. Wang, M. Lopuhaa-Zwakenberg, N. Li, B. Skoric, "Estimating numerical distributions
   under local differential privacy", SIGMOD 2020 (arXiv:1912.01051), Sec. 4: the Square Wave
   mechanism and its bandwidth ``b`` maximising the mutual-information bound.

The numbering of the papers' equations was not available in the search corpus when this module
was written (only abstracts were); the formulas above are cited by section and content, and the
tests check each against numerical integration of the density and a Monte Carlo.
"""
from __future__ import annotations

import dataclasses
import math
from statistics import NormalDist
from types import MappingProxyType
from typing import Mapping

import numpy as np

from ._checks import check_epsilon
from ._numeric_channel import (DiscreteChannel, ExactEpsilon, channel_mean_bias, duchi_channel, exact_epsilon,
                               piecewise_channel, sample_channel, square_wave_channel)
from ._numeric_binning import (BinnedDistribution, BinningChoice, binned_distribution, choose_binning,
                              wasserstein_1)
from ._numeric_params import (MECHANISMS, duchi_bound, hybrid_alpha, hybrid_epsilon_star, piecewise_bound,
                              square_wave_bandwidth, square_wave_moments)
from ._numeric_sampling import piecewise_density, sample_reports, square_wave_density

__all__ = ["MECHANISMS", "MEAN_CANDIDATES", "WorstCase", "MeanMechanismChoice", "duchi_bound", "piecewise_bound",
           "square_wave_bandwidth", "square_wave_moments", "hybrid_alpha", "hybrid_epsilon_star", "piecewise_duchi_crossover",
           "report_variance", "worst_case_variance", "mean_variance", "worst_case_mean_variance",
           "best_mean_mechanism", "piecewise_density", "square_wave_density", "sample_reports",
           "DiscreteChannel", "ExactEpsilon", "duchi_channel", "piecewise_channel", "square_wave_channel",
           "exact_epsilon", "channel_mean_bias", "sample_channel", "n_for", "epsilon_for_halfwidth"]

#: the candidates of :func:`best_mean_mechanism`, in tie-breaking order (the simpler one first)
MEAN_CANDIDATES = ("duchi", "piecewise", "hybrid")


@dataclasses.dataclass(frozen=True)
class WorstCase:
    """The worst-case variance of one report over inputs in ``[-1, 1]``.

    Attributes
    ----------
    mechanism : str
    epsilon : float
        Nats.
    variance : float
        ``max over x in [-1, 1] of Var[x_hat | x]`` (squared units of the ``[-1, 1]`` scale).
    worst_input : float
        An input attaining it (``0`` or ``1``; HM above ``eps*``: any input, ``1`` is given).
    """

    mechanism: str
    epsilon: float
    variance: float
    worst_input: float


@dataclasses.dataclass(frozen=True)
class MeanMechanismChoice:
    """The mean mechanism with the smallest worst-case variance at one epsilon.

    Attributes
    ----------
    epsilon : float
    mechanism : str
        One of :data:`MEAN_CANDIDATES`; ties go to the earlier one (below ``eps*`` HM is Duchi).
    worst_case_variance : float
        Of one report; divide by ``n`` for the mean of ``n`` users.
    candidates : Mapping[str, float]
        Every candidate's worst-case variance of one report (the plan's ``baselines``).
    hybrid_alpha : float
        HM's probability of using PM at this epsilon.
    """

    epsilon: float
    mechanism: str
    worst_case_variance: float
    candidates: Mapping[str, float]
    hybrid_alpha: float


def _mechanism(name: str) -> str:
    if name not in MECHANISMS:
        raise ValueError(f"mechanism: must be one of {', '.join(MECHANISMS)} (got {name!r})")
    return name


def _inputs(x) -> np.ndarray:
    values = np.asarray(x, dtype=float)
    if not np.all(np.isfinite(values)) or np.any(np.abs(values) > 1):
        raise ValueError("x: every input must be a finite number in [-1, 1]")
    return values


def _duchi_variance(x: np.ndarray, epsilon: float) -> np.ndarray:
    return duchi_bound(epsilon) ** 2 - x**2


def _piecewise_variance(x: np.ndarray, epsilon: float) -> np.ndarray:
    s_minus_1 = math.expm1(epsilon / 2)
    return x**2 / s_minus_1 + (s_minus_1 + 4) / (3 * s_minus_1**2)


def _square_wave_variance(x: np.ndarray, epsilon: float) -> np.ndarray:
    b, p, q, slope = square_wave_moments(epsilon)
    v = (x + 1) / 2
    offset = q * (1 + 2 * b) / 2
    second = q * ((1 + b) ** 3 + b**3) / 3 + (p - q) * (2 * b * v**2 + 2 * b**3 / 3)
    variance_out = second - (offset + slope * v) ** 2
    return 4 * variance_out / slope**2


def report_variance(mechanism: str, x, epsilon: float) -> np.ndarray:
    """``Var[x_hat | x]`` of one unbiased report, in closed form.

    Parameters
    ----------
    mechanism : str
        One of :data:`MECHANISMS`.
    x : float or array_like, shape (n,)
        Inputs in ``[-1, 1]``.
    epsilon : float
        Budget in nats (> 0).

    Returns
    -------
    numpy.ndarray, shape of ``x``
        Variances (squared ``[-1, 1]`` units).

    Raises
    ------
    ValueError
        Unknown mechanism, bad epsilon, or an input outside ``[-1, 1]``.

    References
    ----------
    [1]_ Sec. 4.2.3 and [2]_ Alg. 1 (Duchi: ``C_D^2 - x^2``); [2]_ Lemma 1 (PM); [2]_ Sec. III-C (HM,
    the mixture); [3]_ Sec. 4 (SW, debiased here).
    """
    mechanism = _mechanism(mechanism)
    epsilon = check_epsilon(epsilon)
    values = _inputs(x)
    if mechanism == "duchi":
        return _duchi_variance(values, epsilon)
    if mechanism == "piecewise":
        return _piecewise_variance(values, epsilon)
    if mechanism == "square_wave":
        return _square_wave_variance(values, epsilon)
    alpha = hybrid_alpha(epsilon)
    return alpha * _piecewise_variance(values, epsilon) + (1 - alpha) * _duchi_variance(values, epsilon)


def worst_case_variance(mechanism: str, epsilon: float) -> WorstCase:
    """The largest ``Var[x_hat | x]`` over ``x in [-1, 1]`` (a :class:`WorstCase`).

    Every variance here is a quadratic in ``x`` (even for Duchi, PM and HM; convex in ``v`` for SW),
    so the maximum is at ``x = 0`` or at an end of the range; both ends are compared.

    References
    ----------
    [2]_ Sec. III (worst-case noise variance, the criterion of the paper); [3]_ Sec. 4.
    """
    mechanism = _mechanism(mechanism)
    epsilon = check_epsilon(epsilon)
    points = np.array([1.0, 0.0, -1.0])
    values = report_variance(mechanism, points, epsilon)
    index = int(np.argmax(values))
    return WorstCase(mechanism, epsilon, float(values[index]), float(points[index]))


def mean_variance(mechanism: str, epsilon: float, values) -> float:
    """Predicted variance of the estimated mean ``sum x_hat_i / n`` for the given inputs.

    ``Var = sum_i Var[x_hat_i | x_i] / n^2`` (independent users, each report unbiased).

    Parameters
    ----------
    mechanism : str
    epsilon : float
    values : array_like, shape (n,)
        The users' inputs in ``[-1, 1]``.

    Returns
    -------
    float
    """
    variances = report_variance(mechanism, values, epsilon)
    if variances.size == 0:
        raise ValueError("values: at least one user is needed")
    return float(np.sum(variances) / variances.size**2)


def worst_case_mean_variance(mechanism: str, epsilon: float, n: int) -> float:
    """The worst case over inputs of the variance of the mean at ``n`` users: ``worst / n``."""
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n: must be an integer >= 1 (got {n!r})")
    return worst_case_variance(mechanism, epsilon).variance / int(n)


def _worst_gap(epsilon: float) -> float:
    return worst_case_variance("piecewise", epsilon).variance - worst_case_variance("duchi", epsilon).variance


def piecewise_duchi_crossover(low: float = 0.1, high: float = 5.0) -> float:
    """The epsilon where PM's worst-case variance equals Duchi's (``~1.29``, [2]_ Sec. III-B).

    Bisection on ``[low, high]`` to float resolution (PM is worse below, better above).

    Raises
    ------
    ValueError
        The two worst cases do not change order on ``[low, high]``.
    """
    if not _worst_gap(low) > 0 > _worst_gap(high):
        raise ValueError("low, high: PM - Duchi worst cases must change sign on the interval")
    while high - low > 1e-15 * high:
        middle = (low + high) / 2
        if _worst_gap(middle) > 0:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def best_mean_mechanism(epsilon: float) -> MeanMechanismChoice:
    """The candidate with the smallest worst-case variance of the mean at ``epsilon``.

    Parameters
    ----------
    epsilon : float
        Budget in nats (> 0).

    Returns
    -------
    MeanMechanismChoice
        Duchi below ``eps*`` (HM equals Duchi there: ``alpha = 0``; the tie goes to Duchi), HM
        above (its worst case is below both PM's and Duchi's for ``eps > eps*``); PM never wins
        strictly, but is a candidate with its figure (it beats Duchi above ``~1.29``).

    References
    ----------
    [2]_ Sec. III-C (HM's worst case is at most that of PM and Duchi; ``eps*``).
    """
    epsilon = check_epsilon(epsilon)
    figures = {name: worst_case_variance(name, epsilon).variance for name in MEAN_CANDIDATES}
    best = min(MEAN_CANDIDATES, key=lambda name: (figures[name], MEAN_CANDIDATES.index(name)))
    return MeanMechanismChoice(epsilon, best, figures[best], MappingProxyType(figures), hybrid_alpha(epsilon))


def n_for(mechanism: str, epsilon: float, halfwidth: float, confidence: float = 0.95) -> int:
    """Users needed for a confidence-interval half-width of the mean at ``epsilon`` (``[-1, 1]`` units).

    ``n = ceil(z^2 V / h^2)`` with ``V`` the mechanism's worst-case variance of one report
    (:func:`worst_case_variance`) and ``z`` the two-sided normal quantile of ``confidence``: the
    Wald half-width ``z sqrt(V/n)`` is then at most ``h`` for every data set. A range ``[low, high]``
    maps a half-width ``H`` in user units to ``h = 2 H/(high - low)``.

    Raises
    ------
    ValueError
        A bad mechanism, epsilon, half-width or confidence.

    References
    ----------
    [2]_ Sec. III (the worst-case variance); the normal approximation of the mean of ``n`` reports.
    """
    if not (isinstance(halfwidth, (int, float)) and halfwidth > 0 and math.isfinite(halfwidth)):
        raise ValueError(f"halfwidth: must be a finite number > 0 (got {halfwidth!r})")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence: must be in (0, 1) (got {confidence!r})")
    z = NormalDist().inv_cdf((1 + confidence) / 2)
    return max(1, math.ceil(z * z * worst_case_variance(mechanism, epsilon).variance / halfwidth**2))


def epsilon_for_halfwidth(mechanism: str | None, halfwidth: float, confidence: float, n: int,
                          high: float = 100.0) -> float:
    """The smallest epsilon (nats, bisection to 1e-9 relative) whose worst-case half-width at ``n`` is ``<= h``.

    ``mechanism`` None: the best mean mechanism at each epsilon (:func:`best_mean_mechanism`). The
    half-width ``z sqrt(V(eps)/n)`` decreases in epsilon for each candidate.

    Raises
    ------
    ValueError
        When even ``high`` nats do not reach the half-width.

    References
    ----------
    [2]_ Sec. III; as PIE targets alpha, by bisection of a closed form.
    """
    z = NormalDist().inv_cdf((1 + confidence) / 2)

    def width(epsilon: float) -> float:
        name = best_mean_mechanism(epsilon).mechanism if mechanism is None else mechanism
        return z * math.sqrt(worst_case_variance(name, epsilon).variance / n)

    if width(high) > halfwidth:
        raise ValueError(f"mean_halfwidth: {halfwidth!r} is out of reach at n = {n} even at epsilon = {high}")
    low = 1e-6
    if width(low) <= halfwidth:
        return low
    while high - low > 1e-9 * high:
        middle = (low + high) / 2
        low, high = (low, middle) if width(middle) <= halfwidth else (middle, high)
    return high

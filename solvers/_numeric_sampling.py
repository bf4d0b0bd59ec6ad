"""Reference densities and samplers of the numeric mechanisms (continuous floats).

These are the textbook mechanisms of :mod:`ldpplan.solvers.numeric`, sampled with floats: they serve
the closed forms' tests (Monte Carlo) and the planner's simulations. They are *not* a production
runtime: a float sampler of a continuous output can leak the input through its low bits (Mironov,
CCS 2012); the runtime samples the exact discretized channels of :mod:`._numeric_channel` instead.

References
----------
See :mod:`ldpplan.solvers.numeric` ([1] Duchi et al. 2018, [2] Wang et al. ICDE 2019 Sec. III,
[3] Li et al. SIGMOD 2020 Sec. 4).
"""
from __future__ import annotations

import math

import numpy as np

from ._checks import check_epsilon
from ._numeric_params import (MECHANISMS, duchi_bound, hybrid_alpha, piecewise_bound, piecewise_densities,
                              square_wave_moments)

__all__ = ["piecewise_density", "square_wave_density", "sample_reports"]


def piecewise_density(y, x: float, epsilon: float) -> np.ndarray:
    """PM's output density ``f(y | x)`` ([2] Alg. 2): ``p`` on ``[l(x), r(x)]``, ``p/e^eps`` elsewhere in ``[-C, C]``.

    Parameters
    ----------
    y : array_like
        Output points.
    x : float
        Input in ``[-1, 1]``.
    epsilon : float

    Returns
    -------
    numpy.ndarray, shape of ``y``
        Density (0 outside ``[-C, C]``).
    """
    epsilon = check_epsilon(epsilon)
    bound = piecewise_bound(epsilon)
    high, low = piecewise_densities(epsilon)
    left = (bound + 1) / 2 * x - (bound - 1) / 2
    right = left + bound - 1
    points = np.asarray(y, dtype=float)
    inside = (points >= -bound) & (points <= bound)
    return np.where((points >= left) & (points <= right), high, np.where(inside, low, 0.0))


def square_wave_density(y, x: float, epsilon: float) -> np.ndarray:
    """SW's output density on ``[-b, 1 + b]`` for input ``x`` in ``[-1, 1]`` (``v = (x + 1)/2``; [3] Sec. 4)."""
    b, p, q, _ = square_wave_moments(check_epsilon(epsilon))
    v = (x + 1) / 2
    points = np.asarray(y, dtype=float)
    inside = (points >= -b) & (points <= 1 + b)
    return np.where(np.abs(points - v) <= b, p, np.where(inside, q, 0.0))


def _sample_duchi(x: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    bound = duchi_bound(epsilon)
    positive = rng.random(x.size) < 0.5 + x * math.expm1(epsilon) / (2 * (math.exp(epsilon) + 1))
    return np.where(positive, bound, -bound)


def _sample_piecewise(x: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    s = math.exp(epsilon / 2)
    bound = piecewise_bound(epsilon)
    left = (bound + 1) / 2 * x - (bound - 1) / 2
    right = left + bound - 1
    in_band = rng.random(x.size) < s / (s + 1)
    band = left + rng.random(x.size) * (bound - 1)
    u = rng.random(x.size) * (bound + 1)  # the two outer pieces, total length C + 1
    outer = np.where(u < left + bound, -bound + u, right + (u - (left + bound)))
    return np.where(in_band, band, outer)


def _sample_square_wave(x: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:


    b, p, q, slope = square_wave_moments(epsilon)
    v = (x + 1) / 2
    in_band = rng.random(x.size) < 2 * b * p
    band = v - b + rng.random(x.size) * 2 * b
    u = rng.random(x.size)  # the rest of [-b, 1 + b] has length 1
    outer = np.where(u < v, -b + u, v + b + (u - v))
    raw = np.where(in_band, band, outer)
    return 2 * (raw - q * (1 + 2 * b) / 2) / slope - 1


def sample_reports(mechanism: str, values, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """One unbiased report per input (float reference sampler; see the module note).

    Parameters
    ----------
    mechanism : str
        ``duchi``, ``piecewise``, ``hybrid`` or ``square_wave`` (SW debiased: ``2 (v_out - A)/B - 1``).
    values : array_like, shape (n,)
        Inputs in ``[-1, 1]``.
    epsilon : float
    rng : numpy.random.Generator
        The only source of randomness.

    Returns
    -------
    numpy.ndarray, shape (n,)
        Reports ``x_hat`` with ``E[x_hat | x] = x``.

    Raises
    ------
    ValueError
        Unknown mechanism, bad epsilon or input outside ``[-1, 1]``.
    """


    epsilon = check_epsilon(epsilon)
    x = np.asarray(values, dtype=float).ravel()
    if not np.all(np.isfinite(x)) or np.any(np.abs(x) > 1):
        raise ValueError("values: every input must be a finite number in [-1, 1]")
    if mechanism not in MECHANISMS:
        raise ValueError(f"mechanism: must be one of {', '.join(MECHANISMS)} (got {mechanism!r})")
    if mechanism == "duchi":
        return _sample_duchi(x, epsilon, rng)
    if mechanism == "piecewise":
        return _sample_piecewise(x, epsilon, rng)
    if mechanism == "square_wave":
        return _sample_square_wave(x, epsilon, rng)
    use_piecewise = rng.random(x.size) < hybrid_alpha(epsilon)
    return np.where(use_piecewise, _sample_piecewise(x, epsilon, rng), _sample_duchi(x, epsilon, rng))

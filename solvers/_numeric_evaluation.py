"""The done-when evaluations of issue 29 (numeric values), as library functions.

(a) :func:`mean_variance_check`: per mechanism and epsilon, the closed-form variance of one report
    at a worst input (:func:`ldpplan.solvers.numeric.worst_case_variance`) against the exact
    variance of the discretized channel there, and a Monte Carlo of ``n`` users sampled exactly
    from that channel (:func:`ldpplan.solvers._numeric_channel.sample_channel`).
(b) :func:`flights_mean_error`: on real values (the flights' delays), the RMSE of the estimated mean
    over repetitions against the predicted standard deviation ``sqrt(sum_i Var[x_hat | x_i])/n``.
(c) :func:`distribution_comparison`: Square Wave + EMS against binning + the best frequency oracle
    (:mod:`ldpplan.solvers._numeric_binning`) in Wasserstein-1 distance to the true distribution.

Hybrid has no channel of its own: it is the mixture ``alpha PM + (1 - alpha) Duchi``
(Wang et al. 2019, Sec. III-C); a user picks PM with probability ``alpha``, then samples that
channel exactly. Real values map affinely from ``[low, high]`` onto ``[-1, 1]`` after clipping.

References
----------
.. [1] Wang et al., ICDE 2019, Sec. III; Li et al., SIGMOD 2020, Sec. 4-6 (see
   :mod:`ldpplan.solvers.numeric`).
.. [2] S. S. Vallender, Theory Probab. Appl. 18(4), 1973 (``W1 = integral |F - G|`` on the line).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..mechanisms._ems import ems
from . import numeric
from ._numeric_binning import BinningChoice, binned_distribution, choose_binning
from ._numeric_channel import DiscreteChannel, sample_channel

__all__ = ["MeanCheck", "MeanErrorCheck", "DistributionComparison", "wasserstein_1", "to_unit", "channels",
           "mean_variance_check", "flights_mean_error", "distribution_comparison"]


@dataclasses.dataclass(frozen=True)
class MeanCheck:
    """Closed form, exact discretized channel and Monte Carlo of one report's variance at a worst input.

    Attributes
    ----------
    mechanism : str
    epsilon : float
    worst_input : float
    closed_form : float
        ``Var[x_hat | x*]`` of the continuous mechanism ([-1, 1] scale).
    channel_variance : float
        The discretized channel's exact variance at ``x*``.
    channel_bias : float
        ``E[x_hat | x*] - x*`` of the channel (exact up to float sums).
    sample_variance : float
        The Monte Carlo's unbiased sample variance of ``n`` reports.
    sample_bias_in_se : float
        ``(mean of the reports - x*) / sqrt(channel_variance / n)``.
    relative_tolerance : float
        5 standard errors of ``sample_variance / channel_variance``: ``Var[s^2] = (mu4 - sigma^4 (n - 3)/(n - 1))/n``
        exactly for i.i.d. reports (``mu4`` the channel's exact fourth central moment).
    n : int
    """

    mechanism: str
    epsilon: float
    worst_input: float
    closed_form: float
    channel_variance: float
    channel_bias: float
    sample_variance: float
    sample_bias_in_se: float
    relative_tolerance: float
    n: int

    @property
    def relative_error(self) -> float:
        """``sample_variance / closed_form - 1``."""
        return self.sample_variance / self.closed_form - 1


@dataclasses.dataclass(frozen=True)
class MeanErrorCheck:
    """Observed error of the estimated mean on real values against its prediction (value units).

    Attributes
    ----------
    mechanism : str
    epsilon : float
    repetitions : int
    n : int
        Users (values).
    predicted_std : float
        ``(high - low)/2 sqrt(sum_i Var[x_hat | x_i])/n`` with the closed-form variances.
    observed_rmse : float
        Root mean square of ``estimate - true mean`` over the repetitions.
    channel_bias : float
        The discretized channels' bias of the mean for these values (value units, exact sums).
    """

    mechanism: str
    epsilon: float
    repetitions: int
    n: int
    predicted_std: float
    observed_rmse: float
    channel_bias: float

    @property
    def ratio(self) -> float:
        """``observed_rmse / predicted_std``."""
        return self.observed_rmse / self.predicted_std


@dataclasses.dataclass(frozen=True)
class DistributionComparison:
    """Square Wave + EMS against binning + frequency oracles in W1 (value units).

    Attributes
    ----------
    epsilon : float
    n : int
    square_wave_w1 : float
        Mean over the repetitions.
    binning : BinningChoice
        The criterion's choice of bins and oracle.
    binning_w1 : Mapping-like dict of str -> float
        Mean W1 of each oracle at its chosen number of bins (projected estimate).
    ems_iterations : int
        The most EMS iterations of one run.
    """

    epsilon: float
    n: int
    square_wave_w1: float
    binning: BinningChoice
    binning_w1: dict
    ems_iterations: int

    @property
    def best_binning_w1(self) -> float:
        """The smallest W1 over the oracles (the best frequency oracle in hindsight)."""
        return min(self.binning_w1.values())


def wasserstein_1(points_a, weights_a, points_b, weights_b) -> float:
    """W1 between two discrete distributions on the line: ``integral |F_a - F_b|`` ([2]_).

    Parameters
    ----------
    points_a, weights_a : array_like, shape (k,)
    points_b, weights_b : array_like, shape (l,)
        Weights are normalised to sum 1 (non-negative).

    Returns
    -------
    float
        In the points' units.
    """
    xa, wa = np.asarray(points_a, dtype=float), np.asarray(weights_a, dtype=float)
    xb, wb = np.asarray(points_b, dtype=float), np.asarray(weights_b, dtype=float)
    if xa.shape != wa.shape or xb.shape != wb.shape or np.any(wa < 0) or np.any(wb < 0):
        raise ValueError("points and weights: matching shapes and non-negative weights are needed")
    x = np.concatenate([xa, xb])
    w = np.concatenate([wa / wa.sum(), -wb / wb.sum()])
    order = np.argsort(x, kind="stable")
    return float(np.sum(np.abs(np.cumsum(w[order])[:-1]) * np.diff(x[order])))


def to_unit(values, low: float, high: float) -> np.ndarray:
    """Clip to ``[low, high]`` and map affinely onto ``[-1, 1]``."""
    x = np.clip(np.asarray(values, dtype=float), low, high)
    return np.clip(2 * (x - low) / (high - low) - 1, -1.0, 1.0)


def channels(mechanism: str, epsilon: float, grid, cells: int) -> list[tuple[float, DiscreteChannel]]:
    """The weighted channels of a mechanism: ``[(1, channel)]``, or HM's ``[(alpha, PM), (1 - alpha, Duchi)]``."""
    if mechanism == "duchi":
        return [(1.0, numeric.duchi_channel(epsilon, grid))]
    if mechanism == "piecewise":
        return [(1.0, numeric.piecewise_channel(epsilon, grid, cells))]
    if mechanism == "square_wave":
        return [(1.0, numeric.square_wave_channel(epsilon, grid, cells))]
    if mechanism != "hybrid":
        raise ValueError(f"mechanism: must be one of {', '.join(numeric.MECHANISMS)} (got {mechanism!r})")
    alpha = numeric.hybrid_alpha(epsilon)
    parts = [(alpha, numeric.piecewise_channel(epsilon, grid, cells)), (1 - alpha, numeric.duchi_channel(epsilon, grid))]
    return [(w, c) for w, c in parts if w > 0]


def _moments(parts, index: int) -> tuple[float, float, float]:
    """Exact mean, variance and fourth central moment of the (mixture) report at input ``index``."""
    values = np.concatenate([np.asarray(c.output_values) for _, c in parts])
    probs = np.concatenate([w * c.probabilities()[index] for w, c in parts])
    mean = float(probs @ values)
    centred = values - mean
    return mean, float(probs @ centred**2), float(probs @ centred**4)


def _sample(parts, index: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Report values of users at grid indices ``index`` (mixture: pick a channel per user first)."""
    out = np.empty(index.size)
    choice = np.zeros(index.size, dtype=np.int64)
    if len(parts) == 2:
        choice = (rng.random(index.size) >= parts[0][0]).astype(np.int64)
    for j, (_, c) in enumerate(parts):
        mask = choice == j
        out[mask] = np.asarray(c.output_values)[sample_channel(c, index[mask], rng)]
    return out


def mean_variance_check(mechanism: str, epsilon: float, rng: np.random.Generator, *, n: int = 200_000,
                        cells: int = 1024, grid_size: int = 9) -> MeanCheck:
    """Check (a) for one mechanism and epsilon: closed form vs exact channel vs Monte Carlo at ``x*``.

    Parameters
    ----------
    mechanism : str
        One of :data:`ldpplan.solvers.numeric.MECHANISMS`.
    epsilon : float
    rng : numpy.random.Generator
    n : int, default 200000
        Users, all at the worst input.
    cells : int, default 1024
        Output cells of PM / SW.
    grid_size : int, default 9
        The input grid ``linspace(-1, 1, grid_size)`` (odd: it holds 0, -1 and 1).

    Returns
    -------
    MeanCheck
    """
    worst = numeric.worst_case_variance(mechanism, epsilon)
    grid = np.linspace(-1, 1, grid_size)
    index = int(np.argmin(np.abs(grid - worst.worst_input)))
    parts = channels(mechanism, epsilon, grid, cells)
    mean, variance, fourth = _moments(parts, index)
    reports = _sample(parts, np.full(n, index, dtype=np.int64), rng)
    se_relative = math.sqrt(max(fourth / variance**2 - (n - 3) / (n - 1), 0.0) / n)
    return MeanCheck(mechanism, float(epsilon), float(grid[index]), worst.variance, variance, mean - grid[index],
                     float(np.var(reports, ddof=1)), float((reports.mean() - grid[index]) / math.sqrt(variance / n)),
                     5 * se_relative, n)


def flights_mean_error(values, low: float, high: float, mechanism: str, epsilon: float, rng: np.random.Generator,
                       *, repetitions: int = 400, cells: int = 256) -> MeanErrorCheck:
    """Check (b): the RMSE of the mean of real values over repetitions against the closed-form prediction.

    Values are clipped to ``[low, high]``; they must lie on an integer grid of ``low .. high`` after
    clipping (the flights' delays are whole minutes), which is the channels' input grid, so no
    input is rounded. Each repetition draws every report afresh; the counts per input grid point
    are sampled as multinomials of the exact channel rows (exact in distribution: the ``2^-48``
    probabilities are exact floats). The error is measured against the mean of the *clipped*
    values (the clipping bias is the spec's to declare, not the mechanism's).

    Parameters
    ----------
    values : array_like of float, shape (n,)
        Finite whole numbers (drop missing values first).
    low, high : float
        Integer range; values are clipped to it.
    mechanism : {"duchi", "piecewise", "hybrid", "square_wave"}
    epsilon : float
    rng : numpy.random.Generator
    repetitions : int, default 400
        The RMSE's relative standard error is about ``1/sqrt(2 repetitions)`` (3.5% at 400).
    cells : int, default 256
        Output cells of PM / SW.

    Returns
    -------
    MeanErrorCheck
    """
    x = np.clip(np.asarray(values, dtype=float), low, high)
    if not np.all(x == np.round(x)) or low != round(low) or high != round(high):
        raise ValueError("values: must be whole numbers within integer low, high (one grid point per value)")
    points = np.arange(low, high + 1)
    counts = np.bincount((x - low).astype(np.int64), minlength=points.size)
    grid = to_unit(points, low, high)
    parts = channels(mechanism, epsilon, grid, cells)
    half = (high - low) / 2
    predicted = half * math.sqrt(float(counts @ numeric.report_variance(mechanism, grid, epsilon))) / x.size
    truth = float(counts @ grid) / x.size
    present = np.nonzero(counts)[0]
    bias = sum(w * float(counts @ (c.probabilities() @ np.asarray(c.output_values) - grid)) for w, c in parts) / x.size
    errors = np.empty(repetitions)
    for r in range(repetitions):
        split = [counts[present]] if len(parts) == 1 else _binomial_split(counts[present], parts[0][0], rng)
        total = 0.0
        for users, (_, c) in zip(split, parts):
            rows = c.probabilities()[present]
            drawn = rng.multinomial(users, rows)  # (present, m): one multinomial per input point
            total += float(drawn.sum(axis=0) @ np.asarray(c.output_values))
        errors[r] = total / x.size - truth
    return MeanErrorCheck(mechanism, float(epsilon), repetitions, int(x.size), predicted,
                          half * float(np.sqrt(np.mean(errors**2))), half * bias)


def _binomial_split(users: np.ndarray, alpha: float, rng: np.random.Generator) -> list[np.ndarray]:
    first = rng.binomial(users, alpha)
    return [first, users - first]


def distribution_comparison(values, low: float, high: float, epsilon: float, rng: np.random.Generator, *,
                            grid_size: int = 2048, cells: int = 512, max_bins: int = 1024,
                            repetitions: int = 1) -> DistributionComparison:
    """Check (c): W1 of Square Wave + EMS and of binning + each oracle to the true distribution.

    The truth is the empirical distribution of the clipped values. SW's input grid is
    ``grid_size`` equally spaced points on ``[low, high]`` (each value rounded to the nearest);
    its ``cells`` output cells feed :func:`ldpplan.mechanisms._ems.ems`. The default grid is twice
    the paper's ``d = 1024``: the EMS fixed point's smoothing bias shrinks with the grid spacing
    (on the flights' delays at epsilon 0.25, W1 of EMS on exact expected counts, 1024 cells:
    6.25 minutes with 1024 points, 4.51 with 2048). Binning uses
    :func:`ldpplan.solvers._numeric_binning.choose_binning`'s number of bins per oracle. Every W1
    is the mean over ``repetitions`` independent runs (fresh reports each).

    Returns
    -------
    DistributionComparison
    """
    if isinstance(repetitions, bool) or not isinstance(repetitions, int) or repetitions < 1:
        raise ValueError(f"repetitions: must be an integer >= 1 (got {repetitions!r})")
    x = np.clip(np.asarray(values, dtype=float), low, high)
    points = np.linspace(low, high, grid_size)
    index = np.rint((x - low) / (high - low) * (grid_size - 1)).astype(np.int64)
    channel = numeric.square_wave_channel(epsilon, to_unit(points, low, high).tolist(), cells)
    probabilities = channel.probabilities()
    distinct, weights = np.unique(x, return_counts=True)
    choice = choose_binning(epsilon, int(x.size), low, high, max_bins=max_bins)
    square_wave, iterations = 0.0, 0
    binning = dict.fromkeys(choice.candidates, 0.0)
    for _ in range(repetitions):
        fit = ems(np.bincount(sample_channel(channel, index, rng), minlength=cells), probabilities)
        square_wave += wasserstein_1(points, fit.frequency, distinct, weights) / repetitions
        iterations = max(iterations, fit.iterations)
        for oracle, (bins, _) in choice.candidates.items():
            estimate = binned_distribution(x, low, high, bins, oracle, epsilon, rng)
            binning[oracle] += wasserstein_1(estimate.centres, estimate.frequency, distinct, weights) / repetitions
    return DistributionComparison(float(epsilon), int(x.size), square_wave, choice, binning, iterations)

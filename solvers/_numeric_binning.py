"""The baseline of numeric distribution estimation: equal bins plus a frequency oracle (issue 29).

Split the declared range ``[low, high]`` into ``B`` equal bins; each user reports the index of
her bin with a frequency oracle of the existing families (GRR, OUE or the Hadamard response); the
server estimates the bins' frequencies, projects them onto the probability simplex and puts each
bin's mass at its centre.

**Choosing B: a bias-variance trade-off in Wasserstein-1.** On the line
``W1(F, G) = integral |F(t) - G(t)| dt`` (Vallender 1973). With bin width ``w = (high - low)/B``:

* *discretization*: moving each value to its bin's centre costs ``w/4`` on average when the
  values are uniform within their bin (at most ``w/2``);
* *noise*: between bin edges the estimated CDF is flat; at the ``c``-th inner edge it is off by
  the error of a sum of ``c`` frequency estimates, whose mean absolute value is at most its
  standard deviation (Jensen), ``sqrt(c V/n)`` when the estimates are uncorrelated with per-item
  variance ``V/n`` each (exact for OUE's independent bits up to the ``f`` terms; GRR's estimates
  are negatively correlated, so it overestimates). Summed over the ``B - 1`` inner edges and
  times ``w``: ``w sqrt(V/n) sum_{c=1}^{B-1} sqrt(c)``.

``predicted W1(B) = w/4 + w sqrt(V_B/n) sum_{c<B} sqrt(c)`` (value units), ``V_B`` the oracle's
``n Var f_hat`` at the uniform distribution over the ``B`` bins
(:func:`ldpplan.solvers.records.frequency_oracle_variance` for GRR and OUE,
:meth:`ldpplan.solvers.hadamard.HadamardNumbers.variance_coefficients` for HR with its chosen
blocks). It grows like ``B^(1/2)`` (OUE, HR) or ``B`` (GRR) in the noise term and falls like
``1/B`` in the discretization term; :func:`choose_binning` minimises it over ``2 <= B <= max_bins``
for each oracle and keeps the oracle with the smallest value. The projection (which lowers the
noise at small epsilon) is left out of the criterion: it is a prediction for the unprojected
estimate, documented as such, not a guarantee.

References
----------
.. [1] S. S. Vallender, "Calculation of the Wasserstein distance between probability distributions
   on the line", Theory Probab. Appl. 18(4), 1973 (``W1 = integral |F - G|``).
.. [2] T. Wang, J. Blocki, N. Li, S. Jha, "Locally differentially private protocols for frequency
   estimation", USENIX Security 2017, Eq. (2), Sec. 4 (GRR, OUE variances).
.. [3] J. Acharya, Z. Sun, H. Zhang, "Hadamard response", AISTATS 2019 (arXiv:1802.04705).
.. [4] T. Wang, M. Lopuhaä-Zwakenberg, Z. Li, B. Škorić, N. Li, "Locally differentially private
   frequency estimation with consistency", NDSS 2020 (Norm-Sub: ``max(f + delta, 0)`` summing to
   1, which is the Euclidean projection onto the simplex).
.. [5] Z. Li et al., SIGMOD 2020 (arXiv:1912.01051), Sec. 6 (binning + frequency oracles as the
   baseline of Square Wave + EMS).
"""
from __future__ import annotations

import dataclasses
import math
from types import MappingProxyType
from typing import Mapping

import numpy as np

from ..mechanisms._estimators import project_simplex
from ..mechanisms.hadamard.runtime import HadamardResponse
from ..mechanisms.idue.runtime import IDUE
from ..mechanisms.pie.runtime import RandomizedResponse
from ._checks import check_epsilon
from .hadamard import solve_hadamard
from .records import frequency_oracle_variance

__all__ = ["ORACLES", "BinningChoice", "BinnedDistribution", "bin_variance", "predicted_w1", "choose_binning",
           "bin_values", "binned_distribution"]

#: the frequency oracles of the baseline (GRR: the PIE family's RR; OUE: IDUE with one level; HR)
ORACLES = ("grr", "oue", "hadamard_response")


@dataclasses.dataclass(frozen=True)
class BinningChoice:
    """The number of bins and the frequency oracle of the binning baseline.

    Attributes
    ----------
    epsilon : float
        Nats.
    n : int
        Users.
    low, high : float
        The declared range (value units).
    bins : int
        ``B``.
    oracle : str
        One of :data:`ORACLES`.
    predicted_w1 : float
        The criterion at the choice (value units).
    candidates : Mapping[str, tuple[int, float]]
        Per oracle: its best ``B`` and its criterion there.
    """

    epsilon: float
    n: int
    low: float
    high: float
    bins: int
    oracle: str
    predicted_w1: float
    candidates: Mapping[str, tuple[int, float]]

    @property
    def bin_width(self) -> float:
        """``(high - low)/bins``."""
        return (self.high - self.low) / self.bins


@dataclasses.dataclass(frozen=True)
class BinnedDistribution:
    """A distribution estimated by binning plus a frequency oracle.

    Attributes
    ----------
    oracle : str
    epsilon : float
    edges : ndarray, shape (B + 1,)
        Bin edges (value units).
    centres : ndarray, shape (B,)
        Where each bin's mass is put.
    frequency : ndarray, shape (B,)
        The projected estimate (non-negative, sums to 1).
    unbiased : ndarray, shape (B,)
        The oracle's unbiased estimate before projection (may be negative).
    n : int
        Users.
    """

    oracle: str
    epsilon: float
    edges: np.ndarray
    centres: np.ndarray
    frequency: np.ndarray
    unbiased: np.ndarray
    n: int


def _oracle(oracle: str) -> str:
    if oracle not in ORACLES:
        raise ValueError(f"oracle: must be one of {', '.join(ORACLES)} (got {oracle!r})")
    return oracle


def _bins(bins: int) -> int:
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 2:
        raise ValueError(f"bins: must be an integer >= 2 (got {bins!r})")
    return int(bins)


def _range(low: float, high: float) -> tuple[float, float]:
    low, high = float(low), float(high)
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(f"low, high: must be finite with low < high (got {low!r}, {high!r})")
    return low, high


def bin_variance(oracle: str, epsilon: float, bins: int) -> float:
    """``n Var f_hat`` of one bin's estimate at the uniform distribution over ``bins`` bins (per user).

    Parameters
    ----------
    oracle : {"grr", "oue", "hadamard_response"}
    epsilon : float
    bins : int

    Returns
    -------
    float
        GRR, OUE: ``c0 + c1/B`` of [2]_ Eq. (2); ``"hadamard_response"`` (HR) (its blocks chosen as the family does):
        ``c0 + c_block (b - 1)/B - 1/B`` ([3]_; ``(b - 1)/B`` the block mass of a uniform distribution, ``b - 1`` items a block).

    References
    ----------
    [2]_ Eq. (2); [3]_.
    """
    oracle, epsilon, bins = _oracle(oracle), check_epsilon(epsilon), _bins(bins)
    if oracle in ("grr", "oue"):
        return frequency_oracle_variance(oracle, epsilon, bins, frequency=1.0 / bins)
    numbers = solve_hadamard(epsilon, bins)
    c0, c_block, c1 = numbers.variance_coefficients()
    return c0 + c_block * min(1.0, (numbers.block_size - 1) / bins) + c1 / bins


def predicted_w1(oracle: str, epsilon: float, n: int, bins: int, low: float, high: float) -> float:
    """The criterion ``w/4 + w sqrt(V_B/n) sum_{c<B} sqrt(c)`` (value units; see the module docstring).

    References
    ----------
    [1]_ (W1 on the line); [2]_, [3]_ (the variances).
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n: must be an integer >= 1 (got {n!r})")
    low, high = _range(low, high)
    bins = _bins(bins)
    width = (high - low) / bins
    edges_sum = float(np.sqrt(np.arange(1, bins)).sum())
    return width / 4 + width * math.sqrt(bin_variance(oracle, epsilon, bins) / int(n)) * edges_sum


def choose_binning(epsilon: float, n: int, low: float, high: float, *, max_bins: int = 1024,
                   oracles: tuple[str, ...] = ORACLES) -> BinningChoice:
    """The bins and oracle minimising :func:`predicted_w1` (ties: fewer bins, then the earlier oracle).

    Parameters
    ----------
    epsilon : float
    n : int
    low, high : float
        The declared range.
    max_bins : int, default 1024
        Largest ``B`` tried (every ``B`` in ``2 .. max_bins``).
    oracles : tuple of str, default :data:`ORACLES`

    Returns
    -------
    BinningChoice

    Raises
    ------
    ValueError
        Bad epsilon, ``n``, range, ``max_bins`` or oracle.
    """
    epsilon, max_bins = check_epsilon(epsilon), _bins(max_bins)
    candidates: dict[str, tuple[int, float]] = {}
    for oracle in oracles:
        values = [predicted_w1(_oracle(oracle), epsilon, n, bins, low, high) for bins in range(2, max_bins + 1)]
        best = int(np.argmin(values))
        candidates[oracle] = (best + 2, float(values[best]))
    oracle = min(candidates, key=lambda name: (candidates[name][1], candidates[name][0]))
    bins, value = candidates[oracle]
    return BinningChoice(epsilon, int(n), float(low), float(high), bins, oracle, value,
                         MappingProxyType(candidates))


def bin_values(values, low: float, high: float, bins: int) -> np.ndarray:
    """Each value's bin in ``0 .. bins - 1`` after clipping to ``[low, high]`` (``high`` in the last bin).

    Raises
    ------
    ValueError
        A non-finite value (drop missing values first), a bad range or ``bins``.
    """
    low, high = _range(low, high)
    bins = _bins(bins)
    x = np.asarray(values, dtype=np.float64).ravel()
    if not np.all(np.isfinite(x)):
        raise ValueError("values: must be finite (drop missing values first)")
    index = np.floor((np.clip(x, low, high) - low) / (high - low) * bins).astype(np.int64)
    return np.minimum(index, bins - 1)


def _oue(bins: int, epsilon: float) -> IDUE:
    """OUE as a one-level IDUE: ``a = 1/2``, ``b = 1/(e^eps + 1)`` rounded up to the ``2^-48`` grid (safe side)."""
    b = math.ceil(2**48 / (math.exp(epsilon) + 1)) / 2**48
    return IDUE(domain=bins, a=np.full(bins, 0.5), b=np.full(bins, b), epsilon=np.full(bins, epsilon))


def binned_distribution(values, low: float, high: float, bins: int, oracle: str, epsilon: float,
                        rng: np.random.Generator) -> BinnedDistribution:
    """Simulate the binning baseline on real values through the runtime classes, estimate, project.

    GRR: :class:`ldpplan.mechanisms.pie.RandomizedResponse` (``perturb``); OUE: a one-level
    :class:`ldpplan.mechanisms.idue.IDUE` (``simulate_counts``, exact in distribution); HR:
    :class:`ldpplan.mechanisms.hadamard.HadamardResponse` with the family's blocks (``perturb``).
    Constructed directly (trusted code, as baselines are). The unbiased ``"empirical"`` estimate is
    projected onto the simplex (Norm-Sub, [4]_).

    Parameters
    ----------
    values : array_like of float, shape (n,)
        Finite values; clipped to ``[low, high]``.
    low, high : float
    bins : int
    oracle : {"grr", "oue", "hadamard_response"}
    epsilon : float
    rng : numpy.random.Generator

    Returns
    -------
    BinnedDistribution
    """
    oracle, epsilon = _oracle(oracle), check_epsilon(epsilon)
    index = bin_values(values, low, high, bins)
    if oracle == "grr":
        runtime = RandomizedResponse(domain=bins, epsilon=epsilon)
        estimate = runtime.estimate(runtime.aggregate(runtime.perturb(index, rng)), "empirical")
    elif oracle == "oue":
        unary = _oue(bins, epsilon)
        estimate = unary.estimate(unary.simulate_counts(np.bincount(index, minlength=bins), index.size, rng))
    else:
        hadamard = HadamardResponse(domain=bins, epsilon=epsilon, blocks=solve_hadamard(epsilon, bins).blocks)
        estimate = hadamard.estimate(hadamard.aggregate(hadamard.perturb(index, rng)), "empirical")
    edges = np.linspace(float(low), float(high), bins + 1)
    unbiased = np.asarray(estimate.frequency, dtype=np.float64)
    return BinnedDistribution(oracle, epsilon, edges, (edges[:-1] + edges[1:]) / 2, project_simplex(unbiased),
                              unbiased, int(index.size))

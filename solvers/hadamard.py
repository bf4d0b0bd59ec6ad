"""Hadamard response (Acharya, Sun & Zhang, AISTATS 2019): closed forms, grid numbers, exact checks.

The mechanism (the paper's Hadamard response with ``B = 1`` block, its scheme for every epsilon):
an input ``x`` in ``[0, k)`` is encoded by row ``x + 1`` of the Sylvester Hadamard matrix
``H_K`` of order ``K = 2^ceil(log2(k + 1))`` (the smallest power of two above ``k``; row 0 is all
ones and is not used). ``C_x = {y in [0, K) : H_K[x + 1, y] = +1}``, i.e. the outputs ``y`` with
``popcount((x + 1) & y)`` even: ``|C_x| = K/2`` and ``|C_x n C_x'| = K/4`` for ``x != x'``. The
user reports ``y`` uniform on ``C_x`` with probability ``p = e^eps/(1 + e^eps)`` and uniform on its
complement otherwise, so

    Q(y | x) = 2p/K  (y in C_x),   2(1 - p)/K  (otherwise),    max ratio p/(1 - p) = e^eps.

A report lands in ``C_x`` with probability ``p`` when the user holds ``x`` and exactly ``1/2``
otherwise, so with ``c(x)`` the reports in ``C_x`` the estimator

    f_hat(x) = (c(x)/n - 1/2) / (p - 1/2)

is unbiased, with ``n Var f_hat(x) = (f p (1 - p) + (1 - f)/4) / (p - 1/2)^2`` for fixed users'
data (a sum of independent Bernoulli reports), and the total squared error, for every
distribution (``sum_x f(x) = 1``), ``E ||f_hat - f||^2 = (k/4 - 1/4 + p (1 - p)) / (n (p - 1/2)^2)``
(at ``p = e^eps/(1+e^eps)``: ``((k - 1)(e^eps + 1)^2 + 4 e^eps) / (n (e^eps - 1)^2)``).
``c(x) = (n + T[x + 1]) / 2`` where ``T = H_K counts`` is the fast Walsh-Hadamard transform of
the ``K`` output counts (``O(K log K)``); no ``K x K`` matrix is built.

Which version. The paper also gives a general scheme with ``B`` blocks (the authors' code:
``B = 2^floor(log2 min(e^eps, 2k))`` blocks of size ``b``, each a Hadamard response of its own) whose
sample complexity is order optimal for large epsilon as well. Its estimator subtracts an estimated
block mass, so its variance depends on both ``f(x)`` and the block's mass: the exact per-item
variance ``c0 + c1 f`` behind the runtime's score intervals does not carry over. This module
implements the one-block scheme (optimal for ``epsilon = O(1)``; for ``epsilon`` well above 1 its
error tends to ``(k - 1)/n``, that of the block scheme to about ``k/(n e^eps)``).

All probabilities in a plan are multiples of ``2^-48``: ``p`` is rounded *down* (a smaller ``p``
has a smaller ratio ``p/(1-p)``), and the plan's epsilon is ``ln(p/(1-p))`` of the rounded ``p``,
decided exactly (60-digit logarithm of the exact rational).

References
----------
J. Acharya, Z. Sun, H. Zhang, "Hadamard Response: Estimating Distributions Privately, Efficiently,
and with Little Communication", AISTATS 2019 (arXiv:1802.04705): the Hadamard response, its
``log2 K <= log2 k + 1`` bits of communication and ``O(n + K log K)`` decoding by the fast
Walsh-Hadamard transform; the authors' implementation ``k2k_hadamard.py``
(``Hadamard_Rand_high_priv``: this scheme; ``Hadamard_Rand_general_original``: the block scheme).
"""
from __future__ import annotations

import dataclasses
import math
from decimal import ROUND_FLOOR, Decimal, localcontext
from fractions import Fraction

import numpy as np

__all__ = ["GRID_STEPS", "MAX_DOMAIN", "output_size", "output_bits", "keep_probability", "exact_epsilon",
           "in_set", "channel_matrix", "set_counts", "fwht", "variance_coefficients", "HadamardNumbers",
           "solve_hadamard", "total_l2", "randomized_response_l2"]

#: Denominator of the probability grid.
GRID_STEPS = 2**48
#: Largest input domain (the runtime reads domains of at most 2^24 items).
MAX_DOMAIN = 2**24
#: Digits of the exact computations.
DIGITS = 60


def output_size(k: int) -> int:
    """``K = 2^ceil(log2(k + 1))``: the smallest power of two above ``k`` (rows 1..k of ``H_K`` are used)."""
    k = int(k)
    if k < 2:
        raise ValueError(f"k: must be an integer >= 2 (got {k})")
    return 1 << int(k).bit_length()  # 2^(floor(log2 k) + 1) = smallest power of two > k


def output_bits(k: int) -> int:
    """Bits of one report: ``log2 K`` (at most ``log2 k + 1``)."""
    return output_size(k).bit_length() - 1


def keep_probability(epsilon: float) -> float:
    """``p = e^eps/(1 + e^eps)`` rounded down to the ``2^-48`` grid, at most ``1 - 2^-48``.

    Computed with 60 significant digits (a tie would need ``e^eps/(1+e^eps)`` within ``10^-45``
    of a grid point), so the value is the same on every platform and equal to the runtime's.

    Raises
    ------
    ValueError
        For a non-finite or non-positive epsilon.
    """
    eps = float(epsilon)
    if not (math.isfinite(eps) and eps > 0.0):
        raise ValueError(f"epsilon: must be finite and > 0 (got {epsilon!r})")
    eps = min(eps, 100.0)  # 1/(1 + e^100) < 2^-48: the value is 1 - 2^-48 already
    with localcontext() as ctx:
        ctx.prec = DIGITS
        e = Decimal(eps).exp()
        steps = int((e / (1 + e) * GRID_STEPS).to_integral_value(rounding=ROUND_FLOOR))
    return min(steps, GRID_STEPS - 1) / GRID_STEPS


def exact_epsilon(p: float) -> Decimal:
    """``ln(p/(1 - p))`` of the grid value ``p`` (nats, 60 digits): the channel's epsilon exactly."""
    r = Fraction(p) / (1 - Fraction(p))
    with localcontext() as ctx:
        ctx.prec = DIGITS
        return Decimal(r.numerator).ln() - Decimal(r.denominator).ln()


def in_set(x, y) -> np.ndarray:
    """``y in C_x``: ``H_K[x + 1, y] = +1``, i.e. ``popcount((x + 1) & y)`` even (broadcasts)."""
    z = np.bitwise_and(np.asarray(x, dtype=np.int64) + 1, np.asarray(y, dtype=np.int64))
    return (np.bitwise_count(z) & 1) == 0


def channel_matrix(k: int, p: float) -> np.ndarray:
    """``Q[x, y]``, shape ``(k, K)``: ``2p/K`` on ``C_x``, ``2(1-p)/K`` elsewhere (small domains)."""
    K = output_size(k)
    inside = in_set(np.arange(k)[:, None], np.arange(K)[None, :])
    return np.where(inside, 2.0 * p / K, 2.0 * (1.0 - p) / K)


def fwht(values) -> np.ndarray:
    """Fast Walsh-Hadamard transform ``H_K v`` (Sylvester order) of a length-``K`` vector, ``K`` a power of 2.

    Integer input stays integer (exact); ``O(K log K)`` with ``K`` entries of memory.
    """
    v = np.array(values, copy=True)
    K = v.shape[0]
    if K & (K - 1) or K < 1:
        raise ValueError(f"fwht: the length must be a power of two (got {K})")
    h = 1
    while h < K:
        w = v.reshape(-1, 2, h)
        a, b = w[:, 0, :].copy(), w[:, 1, :]
        w[:, 0, :] += b
        w[:, 1, :] = a - b
        h *= 2
    return v


def set_counts(counts, k: int) -> np.ndarray:
    """``c(x) = sum_{y in C_x} counts[y]`` for ``x < k`` from the ``K`` output counts (int64, exact)."""
    counts = np.asarray(counts, dtype=np.int64)
    t = fwht(counts)
    return (int(counts.sum()) + t[1:k + 1]) // 2


def variance_coefficients(p: float) -> tuple[float, float]:
    """``(c0, c1)`` of ``n Var f_hat(x) = c0 + c1 f(x)``: ``1/(4 d^2)`` and ``(p(1-p) - 1/4)/d^2``, ``d = p - 1/2``."""
    d2 = (p - 0.5) ** 2
    return 0.25 / d2, (p * (1.0 - p) - 0.25) / d2


def total_l2(k: int, p: float, n: int = 1) -> float:
    """``E ||f_hat - f||_2^2`` of the empirical estimate (any distribution): ``(k c0 + c1)/n``."""
    c0, c1 = variance_coefficients(p)
    return (k * c0 + c1) / n


def randomized_response_l2(epsilon: float, k: int, n: int = 1) -> float:
    """Worst-case ``E ||f_hat - f||^2`` of the k-ary RR at ``epsilon`` (the paper's baseline), uniform input.

    ``mu = e^eps/(k - 1 + e^eps)``, ``nu = (1 - mu)/(k - 1)``: ``sum_x (nu(1-nu) + f(mu(1-mu) - nu(1-nu)))/(mu-nu)^2``.
    """
    e = math.exp(min(float(epsilon), 700.0))
    mu = e / (k - 1 + e)
    nu = (1 - mu) / (k - 1)
    return (k * nu * (1 - nu) + (mu * (1 - mu) - nu * (1 - nu))) / ((mu - nu) ** 2 * n)


@dataclasses.dataclass(frozen=True)
class HadamardNumbers:
    """The numbers of a Hadamard-response plan.

    Attributes
    ----------
    epsilon : float
        The requested budget (nats).
    domain_size : int
        ``k``.
    output_size : int
        ``K = 2^ceil(log2(k + 1))``.
    keep_probability : float
        ``p``, a multiple of ``2^-48`` in ``(1/2, 1)``.
    epsilon_exact : Decimal
        ``ln(p/(1-p))`` (nats), at most ``epsilon``.
    c0, c1 : float
        ``n Var f_hat(x) = c0 + c1 f(x)`` (squared frequency x users).
    """

    epsilon: float
    domain_size: int
    output_size: int
    keep_probability: float
    epsilon_exact: Decimal
    c0: float
    c1: float

    @property
    def report_bits(self) -> int:
        """``log2 K``."""
        return self.output_size.bit_length() - 1

    def total_l2(self, n: int = 1) -> float:
        """``E ||f_hat - f||^2`` with ``n`` users (squared frequency)."""
        return (self.domain_size * self.c0 + self.c1) / n


def solve_hadamard(epsilon: float, domain_size: int) -> HadamardNumbers:
    """The grid numbers of the Hadamard response for ``epsilon`` over ``domain_size`` items.

    Raises
    ------
    ValueError
        ``domain_size`` outside ``[2, 2^24]``, a bad epsilon, or an epsilon too small for the grid
        (``p`` rounds to ``1/2``: the estimator would divide by zero).
    """
    k = int(domain_size)
    if not 2 <= k <= MAX_DOMAIN:
        raise ValueError(f"domain_size: must be in [2, {MAX_DOMAIN}] (got {k})")
    p = keep_probability(epsilon)
    if not p > 0.5:
        raise ValueError(f"epsilon: {float(epsilon)!r} is too small for the 2^-48 probability grid "
                         "(e^eps/(1+e^eps) rounds down to 1/2)")
    eps = exact_epsilon(p)
    if eps > Decimal(float(epsilon)):  # cannot happen (p was rounded down); kept as a guard
        raise ValueError("epsilon: the grid rounding of p exceeds the budget")
    c0, c1 = variance_coefficients(p)
    return HadamardNumbers(float(epsilon), k, output_size(k), p, eps, c0, c1)

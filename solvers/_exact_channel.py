"""Exact epsilon of composed channels (rational arithmetic, rigorous rounding).

Helpers of :mod:`solvers.longitudinal`: the epsilon of ``Q = P1 @ P2`` computed exactly from the
floats of both rounds, a rigorous rational lower bound of ``exp`` and a rounded-up ``ln``.
No printing and no file I/O happen here.

References
----------
.. [1] U. Erlingsson, V. Pihur, A. Korolova, "RAPPOR: Randomized aggregatable
   privacy-preserving ordinal response", ACM CCS 2014 (epsilon_1 of one report is that of the
   composed permanent + instantaneous channel).
.. [2] H. H. Arcolezi, J.-F. Couchot, B. Al Bouna, X. Xiao, "Improving the utility of locally
   differentially private protocols for longitudinal and multidimensional frequency
   estimates", Digital Communications and Networks, 2022 (arXiv:2111.04636): L-GRR's two-path
   ratio, which :func:`l_grr_composed_epsilon` generalises to k values.
"""
from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from typing import Sequence

__all__ = ["ComposedChannel", "composed_channel_epsilon", "l_grr_composed_epsilon", "exp_lower", "log_upper"]

_EXP_BITS = 256  # fixed-point precision of the rigorous exp lower bound


@dataclasses.dataclass(frozen=True)
class ComposedChannel:
    """Exact epsilon of a channel.

    Attributes
    ----------
    ratio : fractions.Fraction
        ``max over outputs y and input pairs (x, x') of Q[x, y] / Q[x', y]``, exact in rationals
        from the given floats.
    epsilon : float
        ``ln(ratio)`` rounded up (a float never below the true value).
    """

    ratio: Fraction
    epsilon: float


def exp_lower(x: float) -> Fraction:
    """A rational lower bound of ``exp(x)`` for a float ``x >= 0``.

    The Taylor series of ``exp`` has positive terms for ``x >= 0``; each term is floored to the
    ``2^-256`` grid (from the previous floored term), so every partial sum is below ``exp(x)``.
    The sum stops when a floored term is 0 (error below ``n * 2^-256`` in relative terms of
    ``exp(x)`` for moderate ``x``).
    """
    if not (math.isfinite(x) and x >= 0):
        raise ValueError(f"x: must be a finite float >= 0, got {x!r}")
    num, den = Fraction(x).as_integer_ratio()
    scale = 1 << _EXP_BITS
    term, total, n = scale, scale, 1
    while term:
        term = term * num // (den * n)  # floor keeps every term a lower bound
        total += term
        n += 1
    return Fraction(total, scale)


def log_upper(ratio: Fraction) -> float:
    """A float ``e >= ln(ratio)``: the first float from ``log1p`` upward with ``exp_lower(e) >= ratio``."""
    if ratio <= 1:
        return 0.0
    e = max(math.log1p(float(ratio - 1)), 0.0)  # within an ulp or two of ln(ratio)
    while exp_lower(e) < ratio:
        e = math.nextafter(e, math.inf)
    return e


def composed_channel_epsilon(first: Sequence[Sequence[float]],
                             second: Sequence[Sequence[float]]) -> ComposedChannel:
    """Exact epsilon of the composed channel ``Q = first @ second``.

    ``epsilon = ln max_y max_{x, x'} Q[x, y] / Q[x', y]`` with ``Q`` computed in rationals from
    the given floats (every float is a rational), so the ratio is exact; ``epsilon`` is rounded
    up. Cost ``O(k m r)`` rational operations: meant for small channels and tests (for L-GRR use
    :func:`l_grr_composed_epsilon`).

    Parameters
    ----------
    first : sequence of sequences, shape (k, m)
        Row-stochastic first round: ``first[x][z] = Pr[z | x]``.
    second : sequence of sequences, shape (m, r)
        Row-stochastic second round.

    Returns
    -------
    ComposedChannel
        ``ratio = inf`` is not representable: a zero next to a positive entry in one column
        raises instead.

    Raises
    ------
    ValueError
        Shapes do not chain, or a column has both zero and positive entries (no finite epsilon).

    References
    ----------
    Erlingsson et al. (2014) (epsilon_1 of one report is that of the composed
    PRR + IRR channel); the definition of epsilon-LDP.
    """
    a = [[Fraction(v) for v in row] for row in first]
    b = [[Fraction(v) for v in row] for row in second]
    if not a or not b or any(len(row) != len(b) for row in a) or len({len(row) for row in b}) != 1:
        raise ValueError("first, second: shapes (k, m) and (m, r) must chain")
    r = len(b[0])
    best = Fraction(1)
    for y in range(r):
        column = [sum((row[z] * b[z][y] for z in range(len(b))), Fraction(0)) for row in a]
        hi, lo = max(column), min(column)
        if hi == 0:
            continue
        if lo == 0:
            raise ValueError(f"composed channel: output {y} has probability 0 for some input only")
        best = max(best, hi / lo)
    return ComposedChannel(best, log_upper(best))


def l_grr_composed_epsilon(p1: float, q1: float, p2: float, q2: float, k: int) -> ComposedChannel:
    """Exact epsilon of two composed GRR rounds on ``k`` values.

    Proof of the closed form: a GRR matrix is ``(p - q) I + q J`` (``J`` all ones). Products of
    such matrices are again of this form, since ``I J = J I = J`` and ``J J = k J``; entry by entry,
    ``Q = P1 @ P2`` has diagonal ``d = p1 p2 + (k-1) q1 q2`` (keep-keep, or move away and back
    along one of ``k-1`` values) and off-diagonal ``o = p1 q2 + q1 p2 + (k-2) q1 q2`` (keep then
    move, move directly, or move through one of the ``k-2`` other values). Every column holds one
    ``d`` and ``k-1`` copies of ``o``, so the maximal ratio is ``max(d/o, o/d)``. For ``k = 2`` it
    reduces to the papers' two-path ratio ``(p1 p2 + q1 q2) / (q1 p2 + p1 q2)``; for ``k > 2``
    the extra ``(k-2) q1 q2`` paths lower the ratio. Computed in exact rationals from the floats.

    Parameters
    ----------
    p1, q1, p2, q2 : float
        GRR probabilities of both rounds.
    k : int
        Domain size (>= 2).

    Returns
    -------
    ComposedChannel

    References
    ----------
    Arcolezi et al. (2022) (the two-path ratio this corrects for k > 2).
    """
    f1, g1, f2, g2 = (Fraction(v) for v in (p1, q1, p2, q2))
    d = f1 * f2 + (k - 1) * g1 * g2
    o = f1 * g2 + g1 * f2 + (k - 2) * g1 * g2
    ratio = max(d / o, o / d)
    return ComposedChannel(ratio, log_upper(ratio))

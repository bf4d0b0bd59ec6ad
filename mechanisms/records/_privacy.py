"""The record's epsilon from its numbers: float64 rounded up (the runtime) and exact (the gate).

* SPL (sequential composition of independent oracles): the whole record's worst ratio is the
  product of the attributes' worst ratios (attained: every attribute's worst output at once), so
  ``epsilon = sum_j epsilon_j``; one attribute changed: ``epsilon_j``.
* SMP (one sampled attribute ``j`` with probability ``pi_j``, independent of the data, reported with
  its index): ``Pr[(j, y) | x] = pi_j Q_j(y | x_j)``, so ``epsilon = max_j epsilon_j`` (attribute
  ``j`` alone: ``epsilon_j``).
* RS+FD[GRR] with uniform fake data: ``Pr[y | x] = prod_i (1/k_i) (1/d) sum_j k_j Q_j(y_j | x_j)``,
  so the ratio of two records is ``sum_j k_j Q_j(y_j|x_j) / sum_j k_j Q_j(y_j|x'_j)``, maximised
  termwise: ``sum_j k_j P_j / sum_j k_j q_j`` (records differing in every attribute, report equal
  to the first); attribute ``i`` alone: ``(S_i + k_i P_i)/(S_i + k_i q_i)``, ``S_i = sum_{j != i} k_j q_j``.

References
----------
Arcolezi, Couchot, Al Bouna, Xiao, CIKM 2021, Sec. 2.3 and 3; Wang et al., ICDE 2019, Sec. IV.
"""
from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Sequence

from .._plan import log_fraction
from ._oracles import exact_ratio

__all__ = ["record_epsilons", "exact_record_ratio", "exact_attribute_ratios"]


def _rsfd_terms(numbers: Sequence[float], sizes: Sequence[int]) -> list[tuple[Fraction, Fraction]]:
    """``(k_j P_j, k_j q_j)`` of every GRR attribute, exactly."""
    out = []
    for p, k in zip(numbers, sizes):
        big = Fraction(p)
        out.append((k * big, Fraction(k, k - 1) * (1 - big)))
    return out


def exact_attribute_ratios(scheme: str, oracles: Sequence[str], numbers: Sequence[float],
                           sizes: Sequence[int]) -> list[Fraction]:
    """Worst ratio of two records differing in attribute ``j`` only, per ``j`` (exact)."""
    if scheme == "rsfd":
        terms = _rsfd_terms(numbers, sizes)
        low = sum((t[1] for t in terms), Fraction(0))
        return [(low - lo + hi) / low for hi, lo in terms]
    return [exact_ratio(o, x, k) for o, x, k in zip(oracles, numbers, sizes)]


def exact_record_ratio(scheme: str, oracles: Sequence[str], numbers: Sequence[float], sizes: Sequence[int]) -> Fraction:
    """Worst ratio of two records (any pair), exact (module docstring)."""
    if scheme == "rsfd":
        terms = _rsfd_terms(numbers, sizes)
        return sum((t[0] for t in terms), Fraction(0)) / sum((t[1] for t in terms), Fraction(0))
    ratios = exact_attribute_ratios(scheme, oracles, numbers, sizes)
    if scheme == "smp":
        return max(ratios)
    out = Fraction(1)
    for r in ratios:
        out *= r
    return out


def _up(ratio: Fraction) -> float:
    """``ln(ratio)`` (50 digits) as the smallest float at or above it (toward the safe side)."""
    value = exact_epsilon(ratio)
    out = float(value)
    return math.nextafter(out, math.inf) if Decimal(out) < value else out


def record_epsilons(scheme: str, oracles: Sequence[str], numbers: Sequence[float],
                    sizes: Sequence[int]) -> tuple[float, tuple[float, ...]]:
    """``(record epsilon, per-attribute epsilons)`` (nats) of the grid numbers: exact rationals, their logs
    rounded up to float64 (no float cancellation, so a claim one float step below is refused at any epsilon)."""
    whole = _up(exact_record_ratio(scheme, oracles, numbers, sizes))
    return whole, tuple(_up(r) for r in exact_attribute_ratios(scheme, oracles, numbers, sizes))


def exact_epsilon(ratio: Fraction):
    """``ln(ratio)`` to 60 digits (a :class:`decimal.Decimal`, for ``check_claim``)."""
    with localcontext() as context:
        context.prec = 60
        return log_fraction(ratio)

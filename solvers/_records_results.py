"""Frozen inputs and results of :mod:`solvers.records` (the record's attributes, one class per scheme).

References
----------
Arcolezi, Couchot, Al Bouna, Xiao, CIKM 2021, Sec. 2.3 and 3 (SPL, SMP, RS+FD).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Sequence

from ._records_rsfd import RecordPrivacy
from ._result import Certificate

__all__ = ["RecordAttributes", "SplitAllocation", "SamplingAllocation", "RSFDAllocation"]

#: frequency oracles the split and the sampling choose between (OLH with ``g = e^epsilon + 1`` has
#: OUE's variance exactly, so ``"oue"`` stands for both in the optimisation)
ORACLES = ("grr", "oue")


@dataclasses.dataclass(frozen=True)
class RecordAttributes:
    """The record's categorical attributes, checked (tuples of length ``d >= 1``).

    Attributes
    ----------
    domain_sizes : tuple of int, each >= 2
    weights : tuple of float, each > 0 (how much each attribute's variance counts)
    frequencies : tuple of float, each in [0, 1] (the true frequency the variance is taken at; 0 by default)
    """

    domain_sizes: tuple[int, ...]
    weights: tuple[float, ...]
    frequencies: tuple[float, ...]

    @classmethod
    def of(cls, domain_sizes: Sequence[int], weights: Sequence[float] | None = None,
           frequencies: Sequence[float] | float = 0.0) -> "RecordAttributes":
        """Checked attributes; ``weights`` default to 1, ``frequencies`` to 0 (one value or one each)."""
        sizes = tuple(int(k) for k in domain_sizes)
        if not sizes or any(k < 2 or k != kk for k, kk in zip(sizes, domain_sizes)):
            raise ValueError(f"domain_sizes: must be one or more integers >= 2 (got {list(domain_sizes)!r})")
        w = tuple(float(x) for x in (weights if weights is not None else [1.0] * len(sizes)))
        if len(w) != len(sizes) or not all(math.isfinite(x) and x > 0 for x in w):
            raise ValueError(f"weights: must be {len(sizes)} finite numbers > 0 (got {weights!r})")
        if isinstance(frequencies, (int, float)):
            f: tuple[float, ...] = (float(frequencies),) * len(sizes)
        else:
            f = tuple(float(x) for x in frequencies)
        if len(f) != len(sizes) or not all(0.0 <= x <= 1.0 for x in f):
            raise ValueError(f"frequencies: must be {len(sizes)} numbers in [0, 1] (got {frequencies!r})")
        return cls(sizes, w, f)


@dataclasses.dataclass(frozen=True)
class SplitAllocation:
    """An SPL allocation: attribute ``j`` reported through ``protocols[j]`` at ``epsilons[j]``.

    Attributes
    ----------
    scheme : str
        ``"spl"`` (certified optimum) or ``"spl-uniform"`` (``epsilon / d`` each, the baseline).
    epsilons : tuple of float (nats), summing to at most the record's budget
    protocols : tuple of str, each in :data:`ORACLES`
    variances : tuple of float
        ``n Var(f_hat_j)`` per attribute (frequency^2 times users).
    weighted_variance : float
        ``sum_j w_j variances[j]``.
    certificate : Certificate
        Lower bound (Lagrangian dual, minimised over the protocol choices) and the value.
    """

    scheme: str
    epsilons: tuple[float, ...]
    protocols: tuple[str, ...]
    variances: tuple[float, ...]
    weighted_variance: float
    certificate: Certificate


@dataclasses.dataclass(frozen=True)
class SamplingAllocation:
    """An SMP allocation: a user reports attribute ``j`` with probability ``probabilities[j]`` at ``epsilon``.

    Attributes
    ----------
    scheme : str
        ``"smp"`` (optimal ``pi``) or ``"smp-uniform"`` (``pi_j = 1/d``).
    probabilities : tuple of float, summing to 1
    protocols : tuple of str (the better of GRR and OUE at the whole budget, per attribute)
    variances : tuple of float
        ``n Var(f_hat_j)``, large-``n`` limit with the sampling term (module docstring).
    weighted_variance : float
    certificate : Certificate
        Cauchy-Schwarz / dual bound ``(sum_j sqrt(A_j))^2 - sum_j w_j f_j (1 - f_j)``.
    """

    scheme: str
    probabilities: tuple[float, ...]
    protocols: tuple[str, ...]
    variances: tuple[float, ...]
    weighted_variance: float
    certificate: Certificate


@dataclasses.dataclass(frozen=True)
class RSFDAllocation:
    """RS+FD at the per-attribute budget ``amplified_epsilon`` its whole record provably satisfies.

    Attributes
    ----------
    amplified_epsilon : float
        ``epsilon'`` used (nats): :func:`rsfd_epsilon_for` of the record's budget.
    paper_amplified_epsilon : float
        The paper's ``ln(d (e^epsilon - 1) + 1)`` (for the record: its actual guarantee is this value).
    protocols : tuple of str, each in :data:`RSFD_PROTOCOLS` (the best per attribute)
    variances : tuple of float
        ``n Var(f_hat_j)`` for fixed data, as SPL's and SMP's: the paper's
        ``d^2 sigma (1 - sigma) / (p - q)^2`` (CIKM 2021, Sec. 3) minus ``f_j (1 - f_j)`` (module docstring
        of :func:`rsfd_variance`); equal at ``f = 0``.
    weighted_variance : float
    privacy : RecordPrivacy
        Whole-record and one-attribute privacy loss at ``amplified_epsilon``.
    """

    amplified_epsilon: float
    paper_amplified_epsilon: float
    protocols: tuple[str, ...]
    variances: tuple[float, ...]
    weighted_variance: float
    privacy: RecordPrivacy

"""``params`` of record plans (see :mod:`.._params`): one record for the three schemes."""
from __future__ import annotations

import dataclasses

from .._params import PlanParams

__all__ = ["RecordParams"]


@dataclasses.dataclass(frozen=True, slots=True)
class RecordParams(PlanParams):
    """``params`` of an ``spl``, ``smp`` or ``rsfd`` plan (Arcolezi et al., CIKM 2021; Wang et al., ICDE 2019).

    Attributes
    ----------
    epsilon : float
        The record's budget (nats, per report).
    names : tuple of str
        The attributes' names, in the spec's order (``d`` of them).
    domain_sizes : tuple of int
        ``k_j`` (the plan's ``domain`` is their concatenation, ``sum_j k_j`` labels ``name=value``).
    oracles : tuple of str
        ``"grr"`` or ``"oue"`` per attribute (RS+FD: ``"grr"`` only).
    epsilons : tuple of float
        The budget each attribute's oracle is tuned to (SPL: ``epsilon_j``; SMP and RS+FD: the whole
        budget, shrunk by the planner's safety margin).
    numbers : tuple of float
        The grid number of each oracle: GRR's keep probability ``P`` (rounded down), OUE's ``q``
        (rounded up); multiples of 2^-48.
    sampling : tuple of float, optional
        SMP only: ``pi_j``, multiples of 2^-48 summing to exactly 1.
    """

    epsilon: float
    names: tuple[str, ...]
    domain_sizes: tuple[int, ...]
    oracles: tuple[str, ...]
    epsilons: tuple[float, ...]
    numbers: tuple[float, ...]
    sampling: tuple[float, ...] | None = None

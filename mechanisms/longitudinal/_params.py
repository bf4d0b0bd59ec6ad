"""``params`` of longitudinal (memoized) plans (see :mod:`.._params`)."""
from __future__ import annotations

import dataclasses
from typing import Literal

from .._params import PlanParams

__all__ = ["LongitudinalGRRParams", "LongitudinalUEParams"]


@dataclasses.dataclass(frozen=True, slots=True)
class LongitudinalGRRParams(PlanParams):
    """``params`` of an ``l-grr`` plan (Arcolezi et al. 2022, L-GRR).

    Attributes
    ----------
    domain_size : int
        ``k``.
    p1, p2 : float
        Keep probabilities of the permanent and the instantaneous GRR (multiples of 2^-48).
    second_round : {"exact-composed"}
        ``p2`` solved on the exact composed k-ary channel.
    """

    domain_size: int
    p1: float
    p2: float
    second_round: Literal["exact-composed"]


@dataclasses.dataclass(frozen=True, slots=True)
class LongitudinalUEParams(PlanParams):
    """``params`` of an ``l-sue``, ``l-oue``, ``l-osue`` or ``l-soue`` plan.

    Erlingsson et al. (CCS 2014), basic one-time RAPPOR; Arcolezi et al. (2022).

    Attributes
    ----------
    domain_size : int
        ``k`` bits per report.
    p1, q1, p2, q2 : float
        Per-bit probabilities of the permanent and the instantaneous round (multiples of 2^-48).
    """

    domain_size: int
    p1: float
    q1: float
    p2: float
    q2: float

"""``params`` of PCKV plans (see :mod:`.._params`)."""
from __future__ import annotations

import dataclasses
from typing import Literal

from .._params import PlanParams

__all__ = ["PCKVParams"]


@dataclasses.dataclass(frozen=True, slots=True)
class PCKVParams(PlanParams):
    """``params`` of a ``pckv-ue`` or ``pckv-grr`` plan (Gu et al., USENIX Security 2020; the same fields).

    Attributes
    ----------
    a, b, p : float
        Key and value probabilities (multiples of 2^-48; PCKV-GRR: ``b = (1 - a)/(d + L - 1)``).
    epsilon1, epsilon2 : float
        Key and value budgets (nats), Theorem 2 / 3.
    padding_length : int
        ``L``.
    domain_size : int
        ``d`` keys.
    values : {"reject", "clip"}
        Handling of values outside [-1, 1].
    out_of_domain_keys : {"reject", "drop"}
        Handling of keys outside the domain.
    """

    a: float
    b: float
    p: float
    epsilon1: float
    epsilon2: float
    padding_length: int
    domain_size: int
    values: Literal["reject", "clip"]
    out_of_domain_keys: Literal["reject", "drop"]

"""``params`` of Hadamard response plans (see :mod:`.._params`)."""
from __future__ import annotations

import dataclasses

from .._params import PlanParams

__all__ = ["HadamardResponseParams"]


@dataclasses.dataclass(frozen=True, slots=True)
class HadamardResponseParams(PlanParams):
    """``params`` of an ``hr`` plan (Acharya, Sun & Zhang, AISTATS 2019).

    Attributes
    ----------
    epsilon : float
        LDP budget (nats).
    domain_size : int
        ``k``.
    blocks, block_size, output_size : int
        ``B`` (a power of two), ``b`` and ``K = B b``.
    keep_probability : float
        ``P = Pr(y in C_x)``, the 2^-48 grid rounding (down) of ``e^eps / (e^eps + 2B - 1)``.
    """

    epsilon: float
    domain_size: int
    blocks: int
    block_size: int
    output_size: int
    keep_probability: float

"""``params`` of the PIE family's plans, one frozen record per runtime class (see :mod:`.._params`)."""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from .._params import PlanParams

__all__ = ["RandomizedResponseParams", "GeneralizedLocalHashingParams"]


@dataclasses.dataclass(frozen=True, slots=True)
class RandomizedResponseParams(PlanParams):
    """``params`` of an ``rr`` plan (Murakami & Takahashi, TDP 2021, eq. 2 and 19).

    Attributes
    ----------
    epsilon : float
        LDP budget the keep probability is derived from (nats).
    domain_size : int
        ``|X|`` (= ``domain.size``).
    mu : float
        Keep probability ``mu_RR``, the 2^-48 grid rounding (down) of ``e^eps / (|X| + e^eps - 1)``.
    """

    epsilon: float
    domain_size: int
    mu: float


@dataclasses.dataclass(frozen=True, slots=True)
class GeneralizedLocalHashingParams(RandomizedResponseParams):
    """``params`` of a ``glh`` plan (eq. 3 and 20): those of RR over ``g`` hash values, plus the hash.

    Attributes
    ----------
    g : int
        Hash range (``mu`` is ``mu_GLH``, the keep probability over ``g`` symbols).
    hash : mapping
        The Carter-Wegman family ``((a x + b) mod P) mod g`` and its prime ``P``.
    """

    g: int
    hash: Mapping[str, Any]

"""``params`` of ULDP plans (uRR, uRAP, PUM; see :mod:`.._params`)."""
from __future__ import annotations

import dataclasses
from typing import Any, Literal, Mapping

from .._params import PlanParams

__all__ = ["UtilityOptimizedRRParams", "UtilityOptimizedRAPPORParams", "PersonalizedULDPParams"]


@dataclasses.dataclass(frozen=True, slots=True)
class UtilityOptimizedRRParams(PlanParams):
    """``params`` of a ``urr`` plan (Murakami & Kawamoto, USENIX Security 2019, Def. 3, eq. (6)).

    Attributes
    ----------
    epsilon : float
        The budget the numbers were solved for (nats).
    domain_size : int
        ``|X|``.
    sensitive : tuple of int
        ``X_S``, 0-based item indices.
    c1, c2, c3 : float
        The uRR's probabilities (eq. (6)), multiples of 2^-48.
    """

    epsilon: float
    domain_size: int
    sensitive: tuple[int, ...]
    c1: float
    c2: float
    c3: float


@dataclasses.dataclass(frozen=True, slots=True)
class UtilityOptimizedRAPPORParams(PlanParams):
    """``params`` of a ``urap`` plan (Def. 4, eq. (7)).

    Attributes
    ----------
    epsilon, domain_size, sensitive
        As :class:`UtilityOptimizedRRParams`.
    theta, d1, d2 : float
        The uRAP's bit probabilities (eq. (7)), multiples of 2^-48.
    """

    epsilon: float
    domain_size: int
    sensitive: tuple[int, ...]
    theta: float
    d1: float
    d2: float


@dataclasses.dataclass(frozen=True, slots=True)
class PersonalizedULDPParams(PlanParams):
    """``params`` of a ``pum`` plan (Sec. 5): the common mechanism over ``Z = X + bots`` and its numbers.

    Attributes
    ----------
    epsilon, domain_size, sensitive
        As :class:`UtilityOptimizedRRParams` (over ``X``).
    common : {"urr", "urap"}
        The common mechanism; its numbers ``c1, c2, c3`` (uRR) or ``theta, d1, d2`` (uRAP) are present.
    tags : tuple of str
        The kappa semantic tags, in bot order.
    intermediate_size : int
        ``|Z| = |X| + kappa``.
    intermediate_sensitive : tuple of int
        ``Z_S``: ``X_S`` followed by every bot.
    c1, c2, c3, theta, d1, d2 : float or None
        The common mechanism's numbers (absent for the other one).
    background : mapping or None
        Background distributions per tag (eq. (21)); absent: the proportional fallback.
    """

    epsilon: float
    domain_size: int
    sensitive: tuple[int, ...]
    common: Literal["urr", "urap"]
    tags: tuple[str, ...]
    intermediate_size: int
    intermediate_sensitive: tuple[int, ...]
    c1: float | None = None
    c2: float | None = None
    c3: float | None = None
    theta: float | None = None
    d1: float | None = None
    d2: float | None = None
    background: Mapping[str, Any] | None = None

"""``params`` of ULDP plans (uRR, uRAP, PUM; see :mod:`.._params`)."""
from __future__ import annotations

import dataclasses
from typing import Any, Literal, Mapping

from .._params import PlanParams

__all__ = ["UtilityOptimizedRRParams", "UtilityOptimizedRAPPORParams", "PersonalizedULDPParams"]


@dataclasses.dataclass(frozen=True, slots=True)
class _ULDPParams(PlanParams):
    """The fields every ULDP plan carries (Murakami & Kawamoto, USENIX Security 2019, Def. 2).

    Attributes
    ----------
    epsilon : float
        The budget the numbers were solved for (nats).
    domain_size : int
        ``|X|``.
    sensitive : tuple of int
        ``X_S``, 0-based item indices.
    """

    epsilon: float
    domain_size: int
    sensitive: tuple[int, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class UtilityOptimizedRRParams(_ULDPParams):
    """``params`` of a ``urr`` plan (Def. 3, eq. (6)): the common fields and ``c1, c2, c3``.

    Attributes
    ----------
    c1, c2, c3 : float
        The uRR's probabilities (eq. (6)), multiples of 2^-48.
    """

    c1: float
    c2: float
    c3: float


@dataclasses.dataclass(frozen=True, slots=True)
class UtilityOptimizedRAPPORParams(_ULDPParams):
    """``params`` of a ``urap`` plan (Def. 4, eq. (7)): the common fields and ``theta, d1, d2``.

    Attributes
    ----------
    theta, d1, d2 : float
        The uRAP's bit probabilities (eq. (7)), multiples of 2^-48.
    """

    theta: float
    d1: float
    d2: float


@dataclasses.dataclass(frozen=True, slots=True)
class PersonalizedULDPParams(_ULDPParams):
    """``params`` of a ``pum`` plan (Sec. 5): the common fields (over ``X``) and the common mechanism over ``Z``.

    ``Z = X + bots``: one bot per semantic tag.

    Attributes
    ----------
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

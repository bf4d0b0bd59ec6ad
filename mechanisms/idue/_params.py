"""``params`` of IDUE and IDUE-PS plans (see :mod:`.._params`)."""
from __future__ import annotations

import dataclasses
from typing import Any, Literal, Mapping

from .._params import PlanParams

__all__ = ["IDUEParams", "IDUEPSParams"]


@dataclasses.dataclass(frozen=True, slots=True)
class IDUEParams(PlanParams):
    """``params`` of an ``idue`` plan (Gu, Li, Xiong & Cao, ICDE 2020, Sec. V).

    Attributes
    ----------
    model : {"opt0", "opt1", "opt2"}
        The optimisation model the numbers solve (eq. (9), (11), (12)).
    levels : tuple of mapping
        Per privacy level: ``name``, ``epsilon`` (nats), ``size``, ``items``, ``a``, ``b``.
    padding_length : None
        Null for IDUE (no item sampling).
    """

    model: Literal["opt0", "opt1", "opt2"]
    levels: tuple[Mapping[str, Any], ...]
    padding_length: None


@dataclasses.dataclass(frozen=True, slots=True)
class IDUEPSParams(PlanParams):
    """``params`` of an ``idue-ps`` plan (Sec. VI, Theorem 4): IDUE's, with ``L`` and the dummy items.

    Attributes
    ----------
    model, levels
        As :class:`IDUEParams`.
    padding_length : int
        ``L``, the padding length of the item sets.
    dummy : mapping
        ``epsilon`` (= min over levels), ``a``, ``b`` of the ``L`` dummy items.
    """

    model: Literal["opt0", "opt1", "opt2"]
    levels: tuple[Mapping[str, Any], ...]
    padding_length: int
    dummy: Mapping[str, Any]

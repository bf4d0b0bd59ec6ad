"""The input pairs and the input domain of a plan's audit, from its family's room.

Every family says how its mechanisms are audited in its module ``audit`` (``pairs(plan)``: the
input pairs and events that attain its privacy map; ``domain(plan)``: every input, for the
exploration stage), reached through the family protocol
(:meth:`ldpplan.planner.families.ModuleFamily.audit_pairs`); the vocabulary is in :mod:`.events`.
"""
from __future__ import annotations

from typing import Any, Mapping

from ..errors import PlanFormatError
from ..families import family_of_plan
from .events import Domain, InputPair, Test, item_index, item_label, repeat, unpacked_bit

__all__ = ["Test", "InputPair", "Domain", "audit_pairs", "audit_domain", "item_index", "item_label", "repeat",
           "unpacked_bit"]


def audit_pairs(plan: Mapping[str, Any]) -> list[InputPair]:
    """The input pairs and events that make the audit tight for ``plan``.

    Raises
    ------
    PlanFormatError
        Unknown mechanism or a plan without the numbers the family needs.
    """
    family = family_of_plan(plan)
    try:
        return family.audit_pairs(plan)
    except (KeyError, TypeError, IndexError) as exc:
        raise PlanFormatError(f"params: the plan lacks a number the audit needs ({type(exc).__name__}: {exc})"
                              ) from None


def audit_domain(plan: Mapping[str, Any]) -> Domain:
    """Every input of ``plan``'s family, for the exploration stage (:class:`.events.Domain`).

    Raises
    ------
    PlanFormatError
        Unknown mechanism or a plan without the numbers the family needs.
    """
    try:
        return family_of_plan(plan).audit_domain(plan)
    except (KeyError, TypeError, IndexError, ValueError) as exc:
        raise PlanFormatError(f"params: the plan lacks a number the audit needs ({type(exc).__name__}: {exc})"
                              ) from None

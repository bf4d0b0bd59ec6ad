"""The randomizer's own blanket in the planner's shuffle claims (issue 26): which description, and when it wins.

:func:`solver_keywords` keeps the solver's part of a family's ``shuffle_randomizer`` keywords;
:func:`two_level_claim` is the claim of the
randomizer's own blanket (:mod:`ldpplan.mechanisms._amplification`, numpy only) when it beats the
solver's bound. Used by :mod:`ldpplan.planner.shuffle`.
"""
from __future__ import annotations

from typing import Any, Mapping
from ..mechanisms import _amplification as amplification
from ..mechanisms._amplification import SOURCE_TWO_LEVEL

__all__ = ["solver_keywords", "two_level_claim", "two_level_source"]


def solver_keywords(randomizer: Mapping[str, Any]) -> dict[str, Any]:
    """The solver's keywords of a family's randomizer (a two-level-only description: none, the generic bounds)."""
    return {key: value for key, value in randomizer.items() if key != "blanket"}


def two_level_claim(claim: Mapping[str, Any], epsilon0: float, gate: Mapping[str, Any]) -> dict[str, Any] | None:
    """The randomizer's own blanket (mechanisms/_amplification.py) when it beats ``claim``; else None.

    GLH, Hadamard response and unary encodings only (k-RR keeps the solver's blanket, the same theorem).
    """
    if gate.get("kind") not in amplification.TWO_LEVEL_KINDS or gate.get("kind") == "krr" \
            or int(claim["n"]) > amplification.MAX_N:
        return None
    n, delta = int(claim["n"]), float(claim["delta"])
    pairs = amplification.pairs_of(gate, epsilon0)
    epsilon = amplification.blanket_epsilon_upper(n, delta, pairs, float(epsilon0), guess=0.5 * claim["epsilon"])
    if not epsilon < claim["epsilon"]:
        return None
    lower = claim["source"].partition("; lower: ")[2]
    return {**claim, "epsilon": epsilon, "epsilon_lower": min(claim["epsilon_lower"], epsilon),
            "source": f"{amplification.SOURCE_TWO_LEVEL}; lower: {lower}"}


def two_level_source() -> str:
    """``guarantee.shuffled.source`` of the randomizer's own blanket (:data:`ldpplan.mechanisms._amplification.SOURCE_TWO_LEVEL`)."""
    return SOURCE_TWO_LEVEL

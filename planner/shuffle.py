"""Privacy amplification by shuffling, as the planner offers it (wraps :mod:`ldpplan.solvers.shuffle`).

``shuffle_bound(epsilon0, n, delta, *, mechanism=None, domain_size=None)`` gives the central
``(epsilon, delta)`` of ``n`` shuffled reports (a sound upper bound ``epsilon`` and a lower bound
``epsilon_lower``, with their sources); ``local_epsilon_for(central_epsilon, delta, n, ...)`` the
largest ``epsilon0`` (0.001 grid) that meets a central target. ``mechanism`` is ``None`` (any
epsilon0-LDP randomizer: Feldman, McMillan, Talwar, FOCS 2021, Theorems 3.1 and 3.2), ``"krr"``
(k-ary randomized response with ``domain_size = k``) or ``"rr"`` (binary randomized response).

:func:`shuffled_guarantee` is the ``guarantee.shuffled`` block of a plan, and
:func:`check_shuffled` recomputes it for ``verify``.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

from ldpplan.solvers.shuffle import (ShuffleBound, fmt21_closed_form, local_epsilon_for, shuffle_bound)

__all__ = ["ShuffleBound", "shuffle_bound", "local_epsilon_for", "shuffled_guarantee", "check_shuffled",
           "shuffle_mechanism"]


def shuffle_mechanism(mechanism: str, domain_size: int | None) -> tuple[str | None, int | None]:
    """Which bound family a plan's mechanism gets: k-RR plans the randomizer-specific one, the rest the generic."""
    if mechanism == "rr" and domain_size is not None:
        return ("rr", None) if domain_size == 2 else ("krr", int(domain_size))
    return None, None


def shuffled_guarantee(epsilon0: float, n: int, delta: float, *, mechanism: str | None = None,
                       domain_size: int | None = None) -> dict[str, Any]:
    """``guarantee.shuffled = {n, delta, epsilon, epsilon_lower, source}`` for a local ``epsilon0``.

    References
    ----------
    See :mod:`ldpplan.solvers.shuffle`.
    """
    bound = shuffle_bound(epsilon0, n, delta, mechanism=mechanism, domain_size=domain_size)
    return {"n": int(n), "delta": float(delta), "epsilon": bound.epsilon, "epsilon_lower": bound.epsilon_lower,
            "source": bound.source}


def check_shuffled(shuffled: Mapping[str, Any], epsilon0: float, *, mechanism: str | None = None,
                   domain_size: int | None = None) -> str | None:
    """Recompute a plan's ``guarantee.shuffled`` through an independent path; ``None`` when it holds.

    The claim must (1) equal the recomputed bound, and (2) pass the independent cross-checks: it
    is at least the recomputed lower bound and, where FMT21 Theorem 3.1 applies, at most its
    closed form (a claim below a sound lower bound, or one that the closed form contradicts,
    is refused).
    """
    for key in ("n", "delta", "epsilon", "epsilon_lower", "source"):
        if key not in shuffled:
            return f"guarantee.shuffled.{key}: required"
    n, delta = shuffled["n"], shuffled["delta"]
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        return f"guarantee.shuffled.n: must be a positive integer, got {n!r}"
    if not isinstance(delta, (int, float)) or not 0 < delta < 1:
        return f"guarantee.shuffled.delta: must be in (0, 1), got {delta!r}"
    expected = shuffled_guarantee(epsilon0, n, float(delta), mechanism=mechanism, domain_size=domain_size)
    for key in ("epsilon", "epsilon_lower", "source"):
        if shuffled[key] != expected[key]:
            return (f"guarantee.shuffled.{key}: claims {shuffled[key]!r} but the bound recomputed from the plan's "
                    f"local epsilon {epsilon0!r} gives {expected[key]!r}")
    if shuffled["epsilon"] < shuffled["epsilon_lower"]:
        return f"guarantee.shuffled.epsilon: {shuffled['epsilon']!r} is below the lower bound {shuffled['epsilon_lower']!r}"
    closed = fmt21_closed_form(epsilon0, n, float(delta))
    if math.isfinite(closed) and shuffled["epsilon"] > closed:
        return f"guarantee.shuffled.epsilon: {shuffled['epsilon']!r} exceeds FMT21 Theorem 3.1's closed form {closed!r}"
    return None

"""``[target] epsilon_lifetime = X``: the budgets of lowest per-round variance whose sound lifetime bound is <= X.

The sound bound is ``min(T epsilon_2, V epsilon_perm + M epsilon_2)`` with ``M = floor(T (V-1)/V)``
(:mod:`._lifetime`; ``epsilon_perm`` for ``V = 1``), so a plan meets X when its second round's own epsilon is
at most ``epsilon_2 = max(X / T, (X - V epsilon_perm) / M)``. Held fixed: the mechanism (or ``auto``'s
candidates), the domain, ``rounds`` and ``max_values``; the spec's ``epsilon_perm`` and ``epsilon_1`` stay
upper limits. For each candidate ``epsilon_perm`` on a fixed grid of :data:`GRID_POINTS` points in
``(0, epsilon_perm]``, the second round is set from that ``epsilon_2`` directly (L-GRR: ``p2/q2 =
e^epsilon_2``; SUE-shaped: ``p2/q2 = e^(epsilon_2/k)``, OUE-shaped: ``1/(2 q2) = e^(epsilon_2/k)``), rounded
toward the safe side on the 2^-48 grid, or solved at the spec's ``epsilon_1`` when that composes to less; the
plan of lowest predicted variance per round whose exact sound bound is <= X wins (ties: the lower
``epsilon_perm``, then the mechanism order). With ``V = 1`` the bound is ``epsilon_perm``: the grid stops at X
and ``epsilon_1`` keeps the spec's ratio to ``epsilon_perm``.
"""
from __future__ import annotations

import math
from typing import Any

from ..errors import SpecError
from .claims import solve, sound_lifetime, variance_line, exact_ratios
from .._exact import ratio_within

__all__ = ["target_search", "GRID_POINTS"]

#: Candidate epsilon_perm values per mechanism.
GRID_POINTS = 32
_GRID = 2.0**48


def _second_from_epsilon_2(mechanism: str, first: dict[str, Any], epsilon_2: float, k: int) -> dict[str, Any]:
    """``first``'s params with a second round whose own epsilon is at most ``epsilon_2`` (grid, safe side)."""
    if mechanism == "l-grr":
        r = math.exp(epsilon_2)
        p2 = math.floor(r / (r + k - 1) * _GRID) / _GRID
        return dict(first, p2=p2)
    r = math.exp(epsilon_2 / k)
    if mechanism in ("l-oue", "l-soue"):
        q2 = min(math.ceil(1 / (2 * r) * _GRID) / _GRID, 0.5 - 1 / _GRID)
        return dict(first, p2=0.5, q2=q2)
    p2 = max(math.floor(r / (1 + r) * _GRID) / _GRID, 0.5 + 1 / _GRID)
    return dict(first, p2=p2, q2=1.0 - p2)


def _candidate(mechanism: str, epsilon_perm: float, epsilon_1_cap: float, epsilon_2: float, k: int,
               rounds: int, values: int, target: float):
    try:
        capped = solve(mechanism, epsilon_perm, min(epsilon_1_cap, epsilon_perm * (1 - 1e-6)), k)
    except SpecError:
        return None
    options = [capped]
    if epsilon_2 > 0:
        own = _second_from_epsilon_2(mechanism, capped, epsilon_2, k)
        if own["p2"] * (k if mechanism == "l-grr" else 1) > (1 if mechanism == "l-grr" else own["q2"]):
            options.append(own)

    best = None
    for params in options:
        if not ratio_within(exact_ratios(mechanism, params)["one"], epsilon_1_cap):
            continue  # composes above the spec's epsilon_1: the capped solution applies
        if sound_lifetime(mechanism, params, rounds, values)[1] > target:
            continue
        v = variance_line(mechanism, params)[0]
        if best is None or v < best[0]:
            best = (v, params)
    return best


def target_search(spec, names: tuple[str, ...]) -> tuple[str, dict[str, Any], dict[str, Any], str]:
    """``(mechanism, params, candidates, reason)`` of the lowest-variance plan meeting the lifetime target.

    Raises
    ------
    SpecError
        No candidate meets ``target.epsilon_lifetime``.
    """
    m, k = spec.model, spec.k
    x, v = m.target.epsilon_lifetime, m.values
    moved = (m.rounds * (v - 1)) // v
    top = min(m.epsilon_perm, x) if v == 1 else m.epsilon_perm
    candidates: dict[str, Any] = {}
    for name in names:
        best = None
        for j in range(1, GRID_POINTS + 1):
            e_perm = top * j / GRID_POINTS
            e_2 = max(x / m.rounds, (x - v * e_perm) / moved) if moved else 0.0
            cap = min(m.epsilon_1, e_perm * m.epsilon_1 / m.epsilon_perm) if not moved else m.epsilon_1
            got = _candidate(name, e_perm, cap, e_2, k, m.rounds, v, x)
            if got is not None and (best is None or got[0] < best[0]):
                best = got
        candidates[name] = best[1] if best else "no budgets on the grid meet target.epsilon_lifetime"
    reachable = {n: p for n, p in candidates.items() if not isinstance(p, str)}
    if not reachable:
        raise SpecError("target.epsilon_lifetime", "no budgets of this mechanism meet it (the grid leaves no "
                        "informative round)", x)
    chosen = min(reachable, key=lambda n: (variance_line(n, reachable[n])[0], names.index(n)))
    reason = (f"target epsilon_lifetime = {x:g}: lowest predicted variance per round among "
              f"{', '.join(reachable)} over {GRID_POINTS} epsilon_perm values")
    return chosen, reachable[chosen], candidates, reason

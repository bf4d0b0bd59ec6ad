"""Audit pairs of numeric plans: the range's two ends and the decisive pair of the exact epsilon.

Every output ``y`` of a grid channel has ``Pr[y | x] <= e^epsilon Pr[y | x']``; the audit tests

* the extremes ``low`` and ``high`` (grid points -1 and 1) on the event ``{y : Q[high, y] > Q[low, y]}``
  (the likelihood-ratio set: the most powerful event of the pair) and its reverse;
* the decisive pair of :func:`ldpplan.solvers._numeric_channel.exact_epsilon` (the column whose
  ``max/min`` gives epsilon) on that one output.

Probabilities come from the plan's numerators (``channel_matrix``). Inputs are sent as the grid
points' values in user units, so the runtime's randomized rounding is the identity on them.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ...mechanisms import load
from ...mechanisms.numeric._channel import decisive_column
from ..auditing.events import Domain, InputPair, Test

__all__ = ["pairs", "domain"]

_SOURCE = "LDP: Q(y|x) <= e^epsilon Q(y|x') for every output y of the grid channel (numerators over 2^48)"


def _values(plan: Mapping[str, Any]) -> np.ndarray:
    p = plan["params"]
    half = (p["high"] - p["low"]) / 2.0
    return p["low"] + (np.asarray(p["input_grid"], dtype=np.float64) + 1.0) * half


def _pair(plan: Mapping[str, Any], q: np.ndarray, i: int, j: int, outputs: np.ndarray, what: str) -> InputPair:
    claim, values = float(plan["guarantee"]["epsilon"]), _values(plan)
    chosen = np.zeros(q.shape[1], dtype=bool)
    chosen[outputs] = True
    p_i, p_j = float(q[i, chosen].sum()), float(q[j, chosen].sum())
    test = Test(what, lambda r: chosen[np.asarray(r["y"], dtype=np.int64)], claim, p_i, p_j, source=_SOURCE)
    return InputPair(f"{values[i]:g}", f"{values[j]:g}",
                     lambda which, n: np.full(int(n), values[(i, j)[which]]), (test,))


def _tight(plan: Mapping[str, Any], q: np.ndarray, i: int, j: int) -> InputPair:
    favoured = np.nonzero(q[i] > q[j])[0]
    if favoured.size == 0:
        favoured = np.array([int(np.argmax(q[i]))])
    return _pair(plan, q, i, j, favoured, f"y in {{Q(y|x) > Q(y|x')}} ({favoured.size} outputs)")


def pairs(plan: Mapping[str, Any]) -> list[InputPair]:
    """The two ends (both directions) and the decisive pair of the exact epsilon (integer numerators)."""
    mech = load(plan)
    q = mech.channel_matrix()
    k, m = q.shape
    table = np.asarray(mech.numerators, dtype=np.int64).reshape(k, m)
    column, _, _ = decisive_column(table, mech.component_weights, mech.component_sizes)
    high, low = int(np.argmax(table[:, column])), int(np.argmin(table[:, column]))
    decisive = _pair(plan, q, high, low, np.array([column]), f"y = {column} (the decisive column)")
    return [_tight(plan, q, k - 1, 0), _tight(plan, q, 0, k - 1), decisive]


def domain(plan: Mapping[str, Any]) -> Domain:
    """Every input grid point (values in user units), with the likelihood-ratio event of each pair."""
    claim, values = float(plan["guarantee"]["epsilon"]), _values(plan)
    q = load(plan).channel_matrix()
    return Domain([f"{v:g}" for v in values], lambda idx: values[np.asarray(idx, dtype=np.int64)],
                  lambda i, j: claim, tight=lambda i, j: _tight(plan, q, int(i), int(j)))

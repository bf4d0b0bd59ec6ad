"""Audit pairs of the Hadamard response (Acharya, Sun & Zhang, AISTATS 2019).

For inputs ``x, x'`` the outputs in ``C_x`` but not in ``C_x'`` (``K/4`` of them) attain the worst
ratio: ``Pr[y in C_x \\ C_x' | x] = p/2`` and ``Pr[... | x'] = (1 - p)/2``, ratio ``p/(1-p) = e^epsilon``
of the plan's numbers.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..audit.events import Domain, InputPair, Test, item_label, repeat

__all__ = ["pairs", "domain"]

_SOURCE = "LDP: Q(y|x) <= e^epsilon Q(y|x') (Hadamard response, ratio p/(1-p))"


def _in_set(x: int, y) -> np.ndarray:
    return (np.bitwise_count(np.bitwise_and(np.int64(x + 1), np.asarray(y, dtype=np.int64))) & 1) == 0


def _tight(plan: Mapping[str, Any], i: int, j: int) -> InputPair:
    p, claim = float(plan["params"]["keep_probability"]), float(plan["guarantee"]["epsilon"])
    li, lj = item_label(plan, i), item_label(plan, j)

    def occurs(r) -> np.ndarray:
        y = np.asarray(r["y"])
        return _in_set(i, y) & ~_in_set(j, y)

    test = Test(f"y in C_{li} \\ C_{lj}", occurs, claim, p / 2.0, (1.0 - p) / 2.0, source=_SOURCE)
    return InputPair(li, lj, lambda which, n: repeat((i, j)[which], n), (test,))


def pairs(plan: Mapping[str, Any]) -> list[InputPair]:
    """Items 0 and 1 with the event ``y in C_0 \\ C_1`` (every pair attains the same ratio)."""
    return [_tight(plan, 0, 1)]


def domain(plan: Mapping[str, Any]) -> Domain:
    """Every item, with the tight event of each pair."""
    size, claim = int(plan["domain"]["size"]), float(plan["guarantee"]["epsilon"])
    labels = [item_label(plan, i) for i in range(size)]
    return Domain(labels, lambda idx: np.asarray(idx, dtype=np.int64), lambda i, j: claim,
                  tight=lambda i, j: _tight(plan, i, j))

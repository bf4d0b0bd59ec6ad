"""Audit pairs of the Hadamard response (Acharya, Sun & Zhang, AISTATS 2019), with ``B`` blocks.

Every pair ``x, x'`` attains the worst ratio ``P (2B-1)/(1-P) = e^epsilon`` of the plan's numbers:

* same block: the ``s/2`` outputs of ``C_x`` outside ``C_x'``: ``Pr = P/2`` on ``x``, ``q/2`` on ``x'``;
* different blocks: ``C_x``: ``Pr = P`` on ``x``, ``q`` on ``x'``;

with ``q = (1 - P)/(2B - 1)``. The audit runs one pair of each kind that exists.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..auditing.events import Domain, InputPair, Test, item_label, repeat

__all__ = ["pairs", "domain"]

_SOURCE = "LDP: Q(y|x) <= e^epsilon Q(y|x') (Hadamard response, ratio P (2B-1)/(1-P))"


def _in_set(x: int, y, b: int) -> np.ndarray:
    y = np.asarray(y, dtype=np.int64)
    block, t = divmod(int(x), b - 1)
    return (y // b == block) & ((np.bitwise_count(np.int64(t + 1) & (y % b)) & 1) == 0)


def _tight(plan: Mapping[str, Any], i: int, j: int) -> InputPair:
    params, claim = plan["params"], float(plan["guarantee"]["epsilon"])
    p, B, b = float(params["keep_probability"]), int(params["blocks"]), int(params["block_size"])
    q = (1.0 - p) / (2 * B - 1)
    li, lj = item_label(plan, i), item_label(plan, j)
    if i // (b - 1) == j // (b - 1):
        test = Test(f"y in C_{li} \\ C_{lj}", lambda r: _in_set(i, r["y"], b) & ~_in_set(j, r["y"], b), claim,
                    p / 2.0, q / 2.0, source=_SOURCE)
    else:
        test = Test(f"y in C_{li}", lambda r: _in_set(i, r["y"], b), claim, p, q, source=_SOURCE)
    return InputPair(li, lj, lambda which, n: repeat((i, j)[which], n), (test,))


def pairs(plan: Mapping[str, Any]) -> list[InputPair]:
    """Items 0 and 1 (same block when ``b >= 4``) and items 0 and ``b - 1`` (the next block), where they exist."""
    k, b = int(plan["domain"]["size"]), int(plan["params"]["block_size"])
    out = [_tight(plan, 0, 1)] if b >= 4 else []
    if b - 1 < k:
        out.append(_tight(plan, 0, b - 1))
    return out


def domain(plan: Mapping[str, Any]) -> Domain:
    """Every item, with the tight event of each pair."""
    size, claim = int(plan["domain"]["size"]), float(plan["guarantee"]["epsilon"])
    labels = [item_label(plan, i) for i in range(size)]
    return Domain(labels, lambda idx: np.asarray(idx, dtype=np.int64), lambda i, j: claim,
                  tight=lambda i, j: _tight(plan, i, j))

"""Item-set input pairs of the IDUE-PS audit (Gu, Li, Xiong & Cao, ICDE 2020, Sec. VI).

A singleton ``{x}`` is sampled with probability ``1/L`` only, so its events dilute the ratio
far below the set budget. Lemma 2 (eq. 14) gives the ratio of the event ``E = {y_i = 1 for i in
x, y_j = 0 for j in x'}`` (every other bit free, optionally every dummy bit 0) for two disjoint
sets of sizes ``s, s' <= L``: with ``alpha_i = a_i / b_i``, ``beta_j = (1 - a_j)/(1 - b_j)`` (eq.
13) and the dummy factors ``D0 = (1 - b*)^L`` (no dummy sampled), ``D1 = (1 - a*)(1 - b*)^(L-1)``
(one sampled) when the dummy bits are required to be 0 (else 1),

``Pr[E | x] / Pr[E | x'] = ((1/L) sum_{i in x} alpha_i D0 + (1 - s/L) D1) /
((1/L) sum_{j in x'} beta_j D0 + (1 - s'/L) D1)``

(the common factor ``prod_{i in x} b_i prod_{j in x'} (1 - b_j)`` cancels). The claim of the
pair is ``r(epsilon_x, epsilon_x')`` with the set budgets of eq. (16), ``epsilon_x = ln((1/L)
sum_{i in x} e^{epsilon_i} + (1 - s/L) e^{epsilon*})``, capped by ``guarantee.ldp_epsilon``
(Theorem 4). Items of one level are interchangeable, so the search runs over the level
compositions of both sets (counts per level, at most ``L`` items, disjoint) and keeps the pairs
with the largest ``ln(ratio) / claim``.
"""
from __future__ import annotations

import itertools
import math
from typing import Any, Mapping

import numpy as np

from ..auditing.events import InputPair, Test, item_index, item_label, unpacked_bit

__all__ = ["set_pairs", "MAX_COMPOSITIONS"]

#: Largest number of level compositions searched (per set).
MAX_COMPOSITIONS = 400
_SOURCE = "MinID-LDP for item sets: Lemma 2 (eq. 14) and eq. (16) set budgets (Theorem 4)"


def _compositions(sizes: list[int], L: int) -> list[tuple[int, ...]]:
    out = []
    for counts in itertools.product(*[range(min(s, L) + 1) for s in sizes]):
        if 1 <= sum(counts) <= L:
            out.append(counts)
            if len(out) > MAX_COMPOSITIONS:
                return []
    return out


def set_pairs(plan: Mapping[str, Any], top: int = 2) -> list[InputPair]:
    """The ``top`` set pairs with the largest honest ``ln(ratio) / claim`` (none when ``L = 1``)."""
    params, guarantee = plan["params"], plan["guarantee"]
    L = int(params["padding_length"])
    levels = params["levels"]
    if L <= 1:
        return []
    a = np.array([float(lv["a"]) for lv in levels])
    b = np.array([float(lv["b"]) for lv in levels])
    alpha, beta = a / b, (1 - a) / (1 - b)
    eps = np.exp([float(guarantee["levels"][lv["name"]]) for lv in levels])
    a_star, b_star = float(params["dummy"]["a"]), float(params["dummy"]["b"])
    e_star = math.exp(float(params["dummy"]["epsilon"]))
    cap = float(guarantee.get("ldp_epsilon", math.inf))
    average = guarantee["notion"] == "AvgID-LDP"
    members = [[item_index(plan, it) for it in lv["items"]] for lv in levels]
    comps = _compositions([len(m) for m in members], L)
    found = []
    for x, xp in itertools.product(comps, comps):
        if any(i + j > len(m) for i, j, m in zip(x, xp, members)):
            continue
        cx, cxp = np.array(x), np.array(xp)
        bx = math.log(float(cx @ eps) / L + (1 - cx.sum() / L) * e_star)
        bxp = math.log(float(cxp @ eps) / L + (1 - cxp.sum() / L) * e_star)
        claim = min((bx + bxp) / 2 if average else min(bx, bxp), cap)
        for quiet in (True, False):
            d0, d1 = ((1 - b_star) ** L, (1 - a_star) * (1 - b_star) ** (L - 1)) if quiet else (1.0, 1.0)
            num = float(cx @ alpha) / L * d0 + (1 - cx.sum() / L) * d1
            den = float(cxp @ beta) / L * d0 + (1 - cxp.sum() / L) * d1
            common = float(np.prod(b ** cx) * np.prod((1 - b) ** cxp))
            found.append((math.log(num / den) / claim, common * den, x, xp, quiet, claim, common * num))
    found.sort(key=lambda f: (-round(f[0], 9), -f[1]))
    return [_pair(plan, members, f) for f in found[:top]]


def _pair(plan: Mapping[str, Any], members: list[list[int]], found: tuple) -> InputPair:
    _, p_second, x, xp, quiet, claim, p_first = found
    first = [i for m, c in zip(members, x) for i in m[:c]]
    second = [i for m, c, skip in zip(members, xp, x) for i in m[skip:skip + c]]
    m = int(plan["domain"]["size"])
    L = int(plan["params"]["padding_length"])
    dummies = list(range(m, m + L)) if quiet else []

    def occurs(r) -> np.ndarray:
        out = np.ones(len(r), dtype=bool)
        for k in first:
            out &= unpacked_bit(r, k)
        for k in second + dummies:
            out &= ~unpacked_bit(r, k)
        return out

    sets = (np.array(first, dtype=np.int64), np.array(second, dtype=np.int64))

    def make(which: int, n: int):
        items = sets[which]
        return (np.arange(n + 1, dtype=np.int64) * items.size, np.tile(items, n))

    lx = "{" + ", ".join(item_label(plan, i) for i in first) + "}"
    lxp = "{" + ", ".join(item_label(plan, i) for i in second) + "}"
    event = f"y = 1 on {lx}, y = 0 on {lxp}" + (", dummy bits 0" if quiet else "")
    test = Test(event, occurs, claim, p_first, p_second, source=_SOURCE)
    return InputPair(lx, lxp, make, (test,), cost=float(m + L))

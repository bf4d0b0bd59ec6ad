"""Audit pairs of IDUE and IDUE-PS (Gu, Li, Xiong & Cao, ICDE 2020).

For levels ``i`` and ``j`` (one item of each; two items of one level when ``i = j``) the
tight events of constraint (6) are ``E1 = {y_x = 1, y_x' = 0}`` (ratio
``a_i (1 - b_j) / (b_i (1 - a_j))``) and ``E2 = {y_x = 0, y_x' = 1}`` (the reverse pair).
The claim of the pair is ``r(epsilon_i, epsilon_j)`` (MinID-LDP: min, AvgID-LDP: average,
Def. 3 / Sec. VIII), capped by ``guarantee.ldp_epsilon`` when the plan states one.

IDUE-PS (Sec. VI) audits singleton item sets ``{x}`` vs ``{x'}``: with ``L`` the padding length
the sampled item is ``x`` with probability ``1/L`` and a dummy otherwise, and each set's budget
is eq. (16), ``epsilon_x = ln((1/L) e^{epsilon_i} + (1 - 1/L) e^{epsilon*})``; and the sets of up
to ``L`` items that attain Lemma 2 (:mod:`.itemsets`), where the bound reaches the claim.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from ..auditing.events import Domain, InputPair, Test, item_index, item_label, unpacked_bit
from ._audit_itemsets import set_pairs

__all__ = ["pairs", "MAX_DUMMY_BITS"]

#: IDUE-PS events require the dummy bits to be 0 up to this padding length.
MAX_DUMMY_BITS = 8


def _representatives(plan: Mapping[str, Any]) -> list[list[int]]:
    """Up to two item indices of each level (in level order)."""
    return [[item_index(plan, it) for it in level["items"][:2]] for level in plan["params"]["levels"]]


def _set_budget(epsilon: float, dummy_epsilon: float, L: int) -> float:
    """Eq. (16) for a singleton set (``eta = 1/L``), nats."""
    return math.log(math.exp(epsilon) / L + (1.0 - 1.0 / L) * math.exp(dummy_epsilon))


def pairs(plan: Mapping[str, Any]) -> list[InputPair]:
    """Every pair of levels (including a level with itself when it has two items), two events each."""
    params, guarantee = plan["params"], plan["guarantee"]
    levels = params["levels"]
    itemsets = plan["mechanism"] == "idue-ps"
    L = int(params["padding_length"]) if itemsets else 1
    claims = [float(guarantee["levels"][lv["name"]]) for lv in levels]
    if itemsets:
        dummy_epsilon = float(params["dummy"]["epsilon"])
        claims = [_set_budget(e, dummy_epsilon, L) for e in claims]
    cap = float(guarantee.get("ldp_epsilon", math.inf))
    average = guarantee["notion"] == "AvgID-LDP"
    reps = _representatives(plan)
    a = [float(lv["a"]) for lv in levels]
    b = [float(lv["b"]) for lv in levels]
    width = int(plan["domain"]["size"]) + (L if itemsets else 0)
    out: list[InputPair] = []
    for i in range(len(levels)):
        for j in range(i, len(levels)):
            if i == j and len(reps[i]) < 2:
                continue
            x, xp = (reps[i][0], reps[i][1]) if i == j else (reps[i][0], reps[j][0])
            claim = (claims[i] + claims[j]) / 2 if average else min(claims[i], claims[j])
            claim = min(claim, cap)
            out.append(_pair(plan, x, xp, a[i], b[i], a[j], b[j], L, claim, width, itemsets))
    if itemsets:
        out.extend(set_pairs(plan))
    return out


def _pair(plan, x: int, xp: int, ai: float, bi: float, aj: float, bj: float, L: int, claim: float,
          width: int, itemsets: bool) -> InputPair:
    s = 1.0 / L  # probability that the singleton's own item is sampled (else a dummy)
    # with L > 1 the events also require every dummy bit to be 0 (while L <= MAX_DUMMY_BITS): the
    # likelihood ratio is largest there. Factor of a real item sampled vs a dummy sampled:
    real, dummy = 1.0, 1.0
    m = int(plan["domain"]["size"])
    dummies = list(range(m, m + L)) if (itemsets and 1 < L <= MAX_DUMMY_BITS) else []
    if dummies:
        a_star, b_star = float(plan["params"]["dummy"]["a"]), float(plan["params"]["dummy"]["b"])
        real, dummy = (1 - b_star) ** L, (1 - a_star) * (1 - b_star) ** (L - 1)
    # E1 = {y_x = 1, y_x' = 0}: holder x gives a_i (1-b_j), holder x' gives b_i (1-a_j), a dummy b_i (1-b_j)
    p1_first = s * ai * (1 - bj) * real + (1 - s) * bi * (1 - bj) * dummy
    p1_second = s * bi * (1 - aj) * real + (1 - s) * bi * (1 - bj) * dummy
    # E2 = {y_x = 0, y_x' = 1}
    p2_first = s * (1 - ai) * bj * real + (1 - s) * (1 - bi) * bj * dummy
    p2_second = s * (1 - bi) * aj * real + (1 - s) * (1 - bi) * bj * dummy
    lx, lxp = item_label(plan, x), item_label(plan, xp)

    def quiet(r) -> np.ndarray:
        out = np.ones(len(r), dtype=bool)
        for k in dummies:
            out &= ~unpacked_bit(r, k)
        return out

    tail = ", dummy bits 0" if dummies else ""
    src = "MinID-LDP constraint (6)" + (" with eq. (16) set budgets (Theorem 4)" if itemsets else "")
    tests = (
        Test(f"y({lx}) = 1, y({lxp}) = 0{tail}", lambda r: unpacked_bit(r, x) & ~unpacked_bit(r, xp) & quiet(r), claim,
             p1_first, p1_second, source=src),
        Test(f"y({lx}) = 0, y({lxp}) = 1{tail}", lambda r: ~unpacked_bit(r, x) & unpacked_bit(r, xp) & quiet(r), claim,
             p2_first, p2_second, reverse=True, source=src),
    )
    items = (x, xp)
    if itemsets:
        def make(which: int, n: int):
            return (np.arange(n + 1, dtype=np.int64), np.full(n, items[which], dtype=np.int64))
        return InputPair("{" + lx + "}", "{" + lxp + "}", make, tests, cost=float(width))
    return InputPair(lx, lxp, lambda which, n: np.full(n, items[which], dtype=np.int64), tests, cost=float(width))


def domain(plan: Mapping[str, Any]) -> Domain:
    """Every item (IDUE-PS: every singleton set ``{x}``), with the level pair's claim."""
    params, guarantee = plan["params"], plan["guarantee"]
    levels = params["levels"]
    itemsets = plan["mechanism"] == "idue-ps"
    L = int(params["padding_length"]) if itemsets else 1
    claims = [float(guarantee["levels"][lv["name"]]) for lv in levels]
    if itemsets:
        claims = [_set_budget(e, float(params["dummy"]["epsilon"]), L) for e in claims]
    cap = float(guarantee.get("ldp_epsilon", math.inf))
    average = guarantee["notion"] == "AvgID-LDP"
    size = int(plan["domain"]["size"])
    level_of = np.zeros(size, dtype=np.int64)
    for k, lv in enumerate(levels):
        level_of[[item_index(plan, it) for it in lv["items"]]] = k

    def claim(i: int, j: int) -> float:
        ci, cj = claims[level_of[i]], claims[level_of[j]]
        return min((ci + cj) / 2 if average else min(ci, cj), cap)

    labels = [item_label(plan, i) for i in range(size)]
    a = [float(lv["a"]) for lv in levels]
    b = [float(lv["b"]) for lv in levels]
    width = size + (L if itemsets else 0)

    def tight(i: int, j: int) -> InputPair:
        li, lj = level_of[i], level_of[j]
        return _pair(plan, i, j, a[li], b[li], a[lj], b[lj], L, claim(i, j), width, itemsets)

    if itemsets:
        def make(idx):
            idx = np.asarray(idx, dtype=np.int64)
            return (np.arange(idx.size + 1, dtype=np.int64), idx)
        return Domain(["{" + x + "}" for x in labels], make, claim, cost=float(size + L), tight=tight)
    return Domain(labels, lambda idx: np.asarray(idx, dtype=np.int64), claim, cost=float(size), tight=tight)

"""Audit pairs of the k-ary randomized response and GLH (PIE family).

RR (Murakami & Takahashi, TDP 2021, eq. 2): inputs 0 and 1, event ``y = 0``:
``Pr = mu`` vs ``nu = (1 - mu)/(|X| - 1)``, ratio ``e^epsilon`` exactly.
GLH (eq. 3): inputs 0 and 1, event ``y = h_{a,b}(0) != h_{a,b}(1)`` with each report's own
seed ``(a, b)``: ``(1 - kappa) mu`` vs ``(1 - kappa)(1 - mu)/(g - 1)``, ratio ``mu / nu``.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ...mechanisms.pie import collision_probability, hash_values

from ..auditing.events import InputPair, Test, item_label, repeat

__all__ = ["pairs"]

_SOURCE = "LDP (PIE eq. 2/3): Q(y|x) <= e^epsilon Q(y|x')"


def pairs(plan: Mapping[str, Any]) -> list[InputPair]:
    """One pair (items 0 and 1) with the event that attains ``mu / nu``."""
    params, claim = plan["params"], float(plan["guarantee"]["epsilon"])
    mu = float(params["mu"])
    x0, x1 = item_label(plan, 0), item_label(plan, 1)
    if plan["mechanism"] == "rr":
        k = int(plan["domain"]["size"])
        test = Test(f"y = {x0}", lambda r: np.asarray(r["y"]) == 0, claim, mu, (1.0 - mu) / (k - 1), source=_SOURCE)
        return [InputPair(x0, x1, lambda which, n: repeat(which, n), (test,))]
    g = int(params["g"])
    kappa = collision_probability(g)

    def occurs(r) -> np.ndarray:
        a, b, y = np.asarray(r["a"]), np.asarray(r["b"]), np.asarray(r["y"])
        return (hash_values(a, b, 0, g) == y) & (hash_values(a, b, 1, g) != y)

    test = Test(f"y = h(a, b, {x0}) != h(a, b, {x1})", occurs, claim, (1 - kappa) * mu,
                (1 - kappa) * (1.0 - mu) / (g - 1), source=_SOURCE)
    return [InputPair(x0, x1, lambda which, n: repeat(which, n), (test,), cost=3.0)]


def domain(plan: Mapping[str, Any]):
    """Every item (GLH: the seed columns ``a``, ``b`` must not depend on the input)."""
    from ..auditing.events import Domain

    size, claim = int(plan["domain"]["size"]), float(plan["guarantee"]["epsilon"])
    labels = [item_label(plan, i) for i in range(size)]
    glh = plan["mechanism"] == "glh"
    mu = float(plan["params"]["mu"])
    if glh:
        g = int(plan["params"]["g"])
        kappa = collision_probability(g)

        def tight(i: int, j: int) -> InputPair:
            def occurs(r) -> np.ndarray:
                a, b, y = np.asarray(r["a"]), np.asarray(r["b"]), np.asarray(r["y"])
                return (hash_values(a, b, i, g) == y) & (hash_values(a, b, j, g) != y)

            test = Test(f"y = h(a, b, {labels[i]}) != h(a, b, {labels[j]})", occurs, claim, (1 - kappa) * mu,
                        (1 - kappa) * (1.0 - mu) / (g - 1), source=_SOURCE)
            return InputPair(labels[i], labels[j], lambda which, n: repeat((i, j)[which], n), (test,), cost=3.0)
    else:
        def tight(i: int, j: int) -> InputPair:
            test = Test(f"y = {labels[i]}", lambda r: np.asarray(r["y"]) == i, claim, mu, (1.0 - mu) / (size - 1),
                        source=_SOURCE)
            return InputPair(labels[i], labels[j], lambda which, n: repeat((i, j)[which], n), (test,))
    return Domain(labels, lambda idx: np.asarray(idx, dtype=np.int64), lambda i, j: claim,
                  fixed_columns=("a", "b") if glh else (), cost=3.0 if glh else 1.0, tight=tight)

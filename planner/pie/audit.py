"""Audit pairs of the k-ary randomized response and GLH (PIE family).

RR (Murakami & Takahashi, TDP 2021, eq. 2): inputs 0 and 1, event ``y = 0``:
``Pr = mu`` vs ``nu = (1 - mu)/(|X| - 1)``, ratio ``e^epsilon`` exactly.
GLH (eq. 3): inputs 0 and 1, event ``y = h_{a,b}(0) != h_{a,b}(1)`` with each report's own
seed ``(a, b)``: ``(1 - kappa) mu`` vs ``(1 - kappa)(1 - mu)/(g - 1)``, ratio ``mu / nu``.

**Pooled tests** (huge domains, e.g. the PIE location example, |X| = 10.5 M). When the
denominator probability ``nu`` of the single tight event is below :data:`POOL_BELOW`, no feasible
number of runs bounds it near ``e^-epsilon`` (about ``e^epsilon ln(1/alpha)`` runs of ``x'`` are
needed). Summing the LDP inequality over disjoint events ``E_i`` and inputs ``x_i in S`` gives
``sum_i Pr[E_i | x_i] <= e^epsilon Pr[U_i E_i | x']`` (:class:`..auditing.events.Test`, ``pool``),
which holds for *any* epsilon-LDP mechanism and is tight for the plan's numbers:

* RR: ``x' = 0``, ``S = X - {0}``, ``E_i = {y = i}``: ``sum = (|X| - 1) mu`` vs
  ``Pr[y != 0 | 0] = 1 - mu``, exactly ``e^epsilon`` (eq. 2).
* GLH: ``x' = 0``, ``S = {1, .., s}``, ``E_i = {x_i is the only input of S whose hash is y, and
  h(0) != y}`` (report's own seed). Per input ``Pr[E_i | x_i] ~ mu (1 - kappa)^s`` and
  ``Pr[U E_i | 0] ~ (1 - mu) s (1 - kappa)^s / (g - 1)`` (first order in ``s kappa``; pairwise
  collisions are exactly ``kappa``, :func:`collision_probability`), ratio ``mu (g - 1) / (1 - mu) =
  e^epsilon`` (eq. 3); ``s`` is kept at ``s kappa <= 0.01``. The inputs of ``S`` hashing to ``y``
  are found by inverting the hash (``(a x + b) mod P = y + m g`` has the one solution ``x = a^-1
  (y + m g - b) mod P``, ``ceil(P / g)`` candidates) when ``ceil(P/g) <= 64``, else by hashing
  the ``s <= 64`` inputs of ``S``.

These probabilities choose the trials and state the power; the bound itself needs only LDP.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ...mechanisms.pie import HASH_PRIME, collision_probability, hash_prime, hash_values, inverse_mod_prime

from ..auditing.events import InputPair, ItemLabels, Test, item_label, repeat, Domain

__all__ = ["pairs", "domain", "POOL_BELOW"]

#: A pooled test is added when the single tight event's denominator probability is below this.
POOL_BELOW = 1e-5
_PRIME = HASH_PRIME  # the runtime's hash prime (a plan's ``params.hash.prime``; checked in :func:`_glh_pool`)
_MAX_CANDIDATES = 64

_SOURCE = "LDP (PIE eq. 2/3): Q(y|x) <= e^epsilon Q(y|x')"


def pairs(plan: Mapping[str, Any]) -> list[InputPair]:
    """One pair (items 0 and 1) with the event that attains ``mu / nu``."""
    params, claim = plan["params"], float(plan["guarantee"]["epsilon"])
    mu = float(params["mu"])
    x0, x1 = item_label(plan, 0), item_label(plan, 1)
    if plan["mechanism"] == "rr":
        k = int(plan["domain"]["size"])
        test = Test(f"y = {x0}", lambda r: np.asarray(r["y"]) == 0, claim, mu, (1.0 - mu) / (k - 1), source=_SOURCE)
        out = [InputPair(x0, x1, lambda which, n: repeat(which, n), (test,))]
        return out + (_rr_pool(plan, claim, mu, k) if (1.0 - mu) / (k - 1) < POOL_BELOW else [])
    g = int(params["g"])
    prime = hash_prime(int(plan["domain"]["size"]), g)  # the runtime's prime (2^61 - 1 for big domains)
    kappa = collision_probability(g, prime)

    def occurs(r) -> np.ndarray:
        a, b, y = np.asarray(r["a"]), np.asarray(r["b"]), np.asarray(r["y"])
        return (hash_values(a, b, 0, g, prime) == y) & (hash_values(a, b, 1, g, prime) != y)

    test = Test(f"y = h(a, b, {x0}) != h(a, b, {x1})", occurs, claim, (1 - kappa) * mu,
                (1 - kappa) * (1.0 - mu) / (g - 1), source=_SOURCE)
    out = [InputPair(x0, x1, lambda which, n: repeat(which, n), (test,), cost=3.0)]
    return out + (_glh_pool(plan, claim, mu, g, kappa) if (1 - kappa) * (1.0 - mu) / (g - 1) < POOL_BELOW else [])


_POOL_SOURCE = "LDP (PIE eq. 2/3) summed over disjoint events E_i: sum_i Q(E_i|x_i) <= e^epsilon Q(U E_i|x')"


def _rr_pool(plan: Mapping[str, Any], claim: float, mu: float, k: int) -> list[InputPair]:
    """RR: ``x_i = i`` for ``i`` in ``1 .. |X|-1``, ``E_i = {y = i}``, vs ``x' = 0``."""
    s = k - 1

    def member(r) -> np.ndarray:
        return np.asarray(r["y"], dtype=np.int64) - 1  # -1 exactly when y = 0

    test = Test(f"y = x_i on x_i; y != {item_label(plan, 0)} on {item_label(plan, 0)}", member, claim, mu,
                1.0 - mu, source=_POOL_SOURCE, pool=s)
    return [InputPair(f"x_i drawn from 1..{s:,}", item_label(plan, 0), lambda which, n: repeat(0, n), (test,),
                      pool=lambda drawn: np.asarray(drawn, dtype=np.int64) + 1)]



def _only_preimage(a: np.ndarray, b: np.ndarray, y: np.ndarray, s: int, g: int) -> np.ndarray:
    """Per report: ``i - 1`` when ``i`` is the only input of ``{1 .. s}`` with ``h_{a,b}(i) = y``, else -1."""
    count = np.zeros(y.size, dtype=np.int64)
    found = np.full(y.size, -1, dtype=np.int64)
    if -(-_PRIME // g) <= _MAX_CANDIDATES:
        inverse = inverse_mod_prime(a)
        for m in range(-(-_PRIME // g)):
            v = y + m * g
            x = inverse * ((v - b) % _PRIME) % _PRIME
            hit = (v < _PRIME) & (x >= 1) & (x <= s)
            count += hit
            found = np.where(hit, x - 1, found)
    else:
        for i in range(1, s + 1):
            hit = hash_values(a, b, i, g) == y
            count += hit
            found = np.where(hit, i - 1, found)
    return np.where(count == 1, found, -1)


def _glh_pool(plan: Mapping[str, Any], claim: float, mu: float, g: int, kappa: float) -> list[InputPair]:
    """GLH: ``x_i = i`` in ``S = {1 .. s}``, ``E_i`` = only preimage of ``y`` in ``S`` and ``h(0) != y``."""
    if int(plan["params"].get("hash", {}).get("prime", _PRIME)) != _PRIME:
        return []
    size = int(plan["domain"]["size"])
    direct = -(-_PRIME // g) > _MAX_CANDIDATES
    s = int(min(size - 1, max(1.0, 0.01 / kappa), _MAX_CANDIDATES if direct else size))
    spread = (1.0 - kappa) ** s

    def member(r) -> np.ndarray:
        a, b, y = (np.asarray(r[c], dtype=np.int64) for c in ("a", "b", "y"))
        return np.where(hash_values(a, b, 0, g) != y, _only_preimage(a, b, y, s, g), -1)

    label = item_label(plan, 0)
    test = Test(f"y = h(a, b, x_i), x_i the only input of S with hash y, y != h(a, b, {label})", member, claim,
                mu * spread, (1.0 - mu) * s * spread / (g - 1), source=_POOL_SOURCE + " (first order in s kappa)",
                pool=s)
    cost = 3.0 + (s if direct else 2.0 * -(-_PRIME // g) + 90.0) / 4.0
    return [InputPair(f"x_i drawn from S = 1..{s:,}", label, lambda which, n: repeat(0, n), (test,), cost=cost,
                      pool=lambda drawn: np.asarray(drawn, dtype=np.int64) + 1)]


def domain(plan: Mapping[str, Any]):
    """Every item (GLH: the seed columns ``a``, ``b`` must not depend on the input)."""
    size, claim = int(plan["domain"]["size"]), float(plan["guarantee"]["epsilon"])
    labels = ItemLabels(plan)
    glh = plan["mechanism"] == "glh"
    mu = float(plan["params"]["mu"])
    if glh:
        g = int(plan["params"]["g"])
        prime = hash_prime(size, g)
        kappa = collision_probability(g, prime)

        def tight(i: int, j: int) -> InputPair:
            def occurs(r) -> np.ndarray:
                a, b, y = np.asarray(r["a"]), np.asarray(r["b"]), np.asarray(r["y"])
                return (hash_values(a, b, i, g, prime) == y) & (hash_values(a, b, j, g, prime) != y)

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

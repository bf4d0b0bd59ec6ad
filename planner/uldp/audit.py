"""Audit pairs of the utility-optimized mechanisms uRR, uRAP and PUM (Murakami & Kawamoto 2019).

(X_S, Y_P, epsilon)-ULDP (Def. 2): ``Q(y|x) <= e^epsilon Q(y|x')`` for every ``x, x'`` and every
protected output ``y`` in Y_P, and a sensitive input never produces an invertible output (Y_I).
The audit takes two sensitive inputs ``s, s'`` and a non-sensitive ``n`` (over Z = X + bots for
the PUM, whose first bot is one of the two sensitive inputs: a user's private item):

* uRR (Def. 3, eq. 6): event ``y = s`` on ``s`` vs ``s'`` and on ``s`` vs ``n`` (``c1`` vs ``c2``);
* uRAP (Def. 4, eq. 7-10): ``{y_s = 1, y_s' = 0} & Y_P`` (``theta (1-d1)`` vs ``d1 (1-theta)``),
  ``{y_s = 1} & Y_P`` on ``s`` vs ``n`` (``theta`` vs ``d1 d2``) and ``{y_s = 0} & Y_P`` on ``n`` vs
  ``s`` (``(1-d1) d2`` vs ``1 - theta``);
* every family: ``never``: an output in Y_I from ``s`` or ``s'``.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..auditing.events import Domain, InputPair, Test, item_label, unpacked_bit

__all__ = ["pairs"]

_SOURCE = "ULDP Def. 2 (X_S, Y_P, epsilon)"


def _space(plan: Mapping[str, Any]) -> tuple[int, np.ndarray, str, Any]:
    """``(size of Z, sensitive mask over Z, common mechanism, make(z, n))``."""
    params, mech = plan["params"], plan["mechanism"]
    size = int(plan["domain"]["size"])
    if mech != "pum":
        mask = np.zeros(size, dtype=bool)
        mask[np.asarray(params["sensitive"], dtype=np.int64)] = True
        return size, mask, mech, lambda z, n: np.full(n, z, dtype=np.int64)
    z_size = int(params["intermediate_size"])
    mask = np.zeros(z_size, dtype=bool)
    mask[np.asarray(params["intermediate_sensitive"], dtype=np.int64)] = True
    nonsens = np.flatnonzero(~mask[:size])
    private_item = int(nonsens[0]) if nonsens.size else 0

    def make(z: int, n: int):
        if z >= size:  # a bot: the user's own private item, mapped to tag z - |X| by her pre-processor
            return {"item": np.full(n, private_item, dtype=np.int64), "tag": np.full(n, z - size, dtype=np.int64)}
        return {"item": np.full(n, z, dtype=np.int64), "tag": np.full(n, -1, dtype=np.int64)}

    return z_size, mask, params["common"], make


def _label(plan: Mapping[str, Any], z: int) -> str:
    size = int(plan["domain"]["size"])
    if z >= size:
        return f"bot:{plan['params']['tags'][z - size]}"
    return item_label(plan, z)


def pairs(plan: Mapping[str, Any]) -> list[InputPair]:
    """Sensitive vs sensitive, sensitive vs non-sensitive, and the invertible-output checks."""
    params, eps = plan["params"], float(plan["guarantee"]["epsilon"])
    z_size, mask, common, make = _space(plan)
    sens = np.flatnonzero(mask)
    if plan["mechanism"] == "pum":
        sens = np.concatenate([sens[sens >= int(plan["domain"]["size"])], sens[sens < int(plan["domain"]["size"])]])
    nonsens = np.flatnonzero(~mask)
    s = int(sens[0])
    s2 = int(sens[1]) if sens.size > 1 else None
    n = int(nonsens[0]) if nonsens.size else None
    ls = _label(plan, s)
    ls2 = _label(plan, s2) if s2 is not None else ""
    ln = _label(plan, n) if n is not None else ""
    cost = float(z_size) if common == "urap" else 1.0
    if common == "urap":
        invertible = _nonsensitive_bits(mask)
    else:
        invertible = (lambda r: ~mask[np.asarray(r["y"])])
    never = Test("an invertible output (Y_I)", invertible, 0.0, 0.0, 0.0, never=True, source=_SOURCE)
    never_both = Test("an invertible output (Y_I)", invertible, 0.0, 0.0, 0.0, never=True, both=True, source=_SOURCE)
    alone = (never,) if s2 is None else ()  # the invertible check rides on the s vs n pair when s is alone
    out: list[InputPair] = []
    if common == "urr":
        c1, c2 = float(params["c1"]), float(params["c2"])
        hit = (lambda r: np.asarray(r["y"]) == s)
        if s2 is not None:
            out.append(InputPair(ls, ls2, lambda w, k: make((s, s2)[w], k),
                                 (Test(f"y = {ls}", hit, eps, c1, c2, source=_SOURCE), never_both), cost))
        if n is not None:
            out.append(InputPair(ls, ln, lambda w, k: make((s, n)[w], k),
                                 (Test(f"y = {ls}", hit, eps, c1, c2, source=_SOURCE),) + alone, cost))
        return out
    theta, d1, d2 = float(params["theta"]), float(params["d1"]), float(params["d2"])

    def protected(r) -> np.ndarray:
        return ~invertible(r)

    if s2 is not None:
        e1 = Test(f"y({ls}) = 1, y({ls2}) = 0, y in Y_P",
                  lambda r: unpacked_bit(r, s) & ~unpacked_bit(r, s2) & protected(r), eps,
                  theta * (1 - d1), d1 * (1 - theta), source=_SOURCE)
        out.append(InputPair(ls, ls2, lambda w, k: make((s, s2)[w], k), (e1, never_both), cost))
    if n is not None:
        e3 = Test(f"y({ls}) = 1, y in Y_P", lambda r: unpacked_bit(r, s) & protected(r), eps, theta, d1 * d2,
                  source=_SOURCE)
        e4 = Test(f"y({ls}) = 0, y in Y_P", lambda r: ~unpacked_bit(r, s) & protected(r), eps, 1 - theta,
                  (1 - d1) * d2, reverse=True, source=_SOURCE)
        out.append(InputPair(ls, ln, lambda w, k: make((s, n)[w], k), (e3, e4) + alone, cost))
    return out


def _nonsensitive_bits(mask: np.ndarray):
    packed = np.packbits(~mask, bitorder="little")

    def occurs(r) -> np.ndarray:
        bits = np.asarray(r["bits"])
        return np.any(bits[:, : packed.size] & packed[None, :], axis=1)

    return occurs


def domain(plan: Mapping[str, Any]) -> Domain:
    """Every input over Z (PUM: items and bots); only protected outputs (Y_P) count."""
    eps = float(plan["guarantee"]["epsilon"])
    z_size, mask, common, _ = _space(plan)
    size = int(plan["domain"]["size"])
    if plan["mechanism"] == "pum":
        nonsens = np.flatnonzero(~mask[:size])
        private_item = int(nonsens[0]) if nonsens.size else 0

        def make(idx):
            z = np.asarray(idx, dtype=np.int64)
            return {"item": np.where(z >= size, private_item, z), "tag": np.where(z >= size, z - size, -1)}
    else:
        def make(idx):
            return np.asarray(idx, dtype=np.int64)
    if common == "urap":
        invertible = _nonsensitive_bits(mask)

        def restrict(r) -> np.ndarray:
            return ~invertible(r)
    else:
        def restrict(r) -> np.ndarray:
            return mask[np.asarray(r["y"])]
    labels = [_label(plan, z) for z in range(z_size)]
    return Domain(labels, make, lambda i, j: eps, restrict=restrict, cost=float(z_size) if common == "urap" else 1.0)

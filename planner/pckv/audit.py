"""Audit pairs of PCKV-UE and PCKV-GRR (Gu, Li, Cheng, Xiong & Cao, USENIX Security 2020).

Users hold one pair each (``|S| = 1``, so Algorithm 1 samples it with probability ``1/L`` and a
dummy key otherwise). Two input pairs attain Theorem 2 / 3:

* keys: ``{<k1, 1>}`` vs ``{<k2, 1>}``; PCKV-UE event ``y[k1] = 1, y[k2] = 0`` (ratio
  ``2 p a (1-b) / (b (1-a))`` at ``L = 1``), PCKV-GRR event ``<k1, 1>`` (ratio
  ``(a p / L + (1 - 1/L) b/2) / (b/2)``, eq. 29);
* values: ``{<k, 1>}`` vs ``{<k, -1>}``; event ``y[k] = 1`` (UE) / ``<k, 1>`` (GRR): ratio
  ``p / (1-p)`` at ``L = 1`` (eq. 28 for GRR), claim ``min(epsilon, epsilon2)``.

For PCKV-GRR with ``L > 1`` the singleton is tight (its dummy-sampled reports hit ``<k1, 1>``
with ``b/2`` as any other key would: eq. 29 is attained). For PCKV-UE with ``L > 1`` the singleton
sets dilute the ratio (Theorem 2 does not depend on ``L``; Sec. 4.3 "No privacy benefits from
padding-and-sampling": it is attained by sets of ``L`` keys), so :func:`set_pairs` adds users
holding ``m <= L`` pairs, ``A = {<k_1, 1> .. <k_m, 1>}`` vs ``B`` (``m`` other keys, value 1) and
``A`` vs ``A-`` (the same keys, value -1). With ``D0 = (1-b)^L`` (a real key sampled) and ``D1 =
(1-a)(1-b)^(L-1)`` (a dummy sampled) when every dummy bit must be 0 (else both 1):

* keys, event ``y[A] = 1, y[B] = 0``: ``Pr[E | A] = (m/L) a p (b/2)^(m-1) (1-b)^m D0 + (1 - m/L)
  (b/2)^m (1-b)^m D1`` vs ``Pr[E | B] = (m/L) (b/2)^m (1-a) (1-b)^(m-1) D0 + (1 - m/L) (b/2)^m
  (1-b)^m D1``; at ``m = L`` the ratio is ``2 a p (1-b) / (b (1-a))``, Theorem 2's key case;
* values, event ``y[A] = 1``: ``(m/L) a p (b/2)^(m-1) D0 + (1 - m/L) (b/2)^m D1`` vs the same
  with ``a (1-p)``; at ``m = L`` the ratio is ``p / (1-p) = e^epsilon2``.

``m`` (and whether the dummy bits are required 0) is chosen for the largest ``ln(ratio) / claim``
among the designs whose denominator probability is at least :data:`MIN_EVENT_PROBABILITY`.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from ...mechanisms.pckv import KeyValueUsers

from ..auditing.events import Domain, InputPair, Test, item_label, unpacked_bit

__all__ = ["pairs", "domain", "set_pairs", "MIN_EVENT_PROBABILITY"]

#: Set designs whose event is rarer than this on the denominator input are not used.
MIN_EVENT_PROBABILITY = 1e-4


def _users(key: int, value: float, n: int) -> KeyValueUsers:
    return KeyValueUsers(np.arange(n + 1, dtype=np.int64), np.full(n, key, dtype=np.int64),
                         np.full(n, value, dtype=np.float64))


def _nonzero(reports: Any, k: int) -> np.ndarray:
    """``y[k] != 0`` from the packed ``nonzero`` plane (docs/REPORTS.md)."""
    return unpacked_bit({"bits": reports["nonzero"]}, k)


def _positive(reports: Any, k: int) -> np.ndarray:
    """``y[k] = +1``: nonzero and not negative."""
    return _nonzero(reports, k) & ~unpacked_bit({"bits": reports["negative"]}, k)


def pairs(plan: Mapping[str, Any]) -> list[InputPair]:
    """The key pair and the value pair."""
    params, guarantee = plan["params"], plan["guarantee"]
    a, b, p = float(params["a"]), float(params["b"]), float(params["p"])
    d, L = int(params["domain_size"]), int(params["padding_length"])
    eps = float(guarantee["epsilon"])
    eps_value = min(eps, float(guarantee.get("epsilon2", eps)))
    k1, k2 = item_label(plan, 0), item_label(plan, 1)
    s = 1.0 / L
    if plan["mechanism"] == "pckv-ue":
        width = float(d + L)
        src = "PCKV Theorem 2 (App. A)"
        key_test = Test(f"y({k1}) = 1, y({k2}) = 0",
                        lambda r: _positive(r, 0) & ~_nonzero(r, 1),
                        eps, s * p * a * (1 - b) + (1 - s) * b / 2 * (1 - b),
                        s * b / 2 * (1 - a) + (1 - s) * b / 2 * (1 - b), source=src)
        value_test = Test(f"y({k1}) = 1", lambda r: _positive(r, 0), eps_value,
                          s * p * a + (1 - s) * b / 2, s * (1 - p) * a + (1 - s) * b / 2, source=src)
    else:
        width = 2.0
        b = (1.0 - a) / (d + L - 1)
        src = "PCKV Theorem 3 (App. B)"

        def report(key: int):
            return lambda r: (np.asarray(r["key"]) == key) & (np.asarray(r["value"]) == 1)

        key_test = Test(f"<{k1}, 1>", report(0), eps, s * a * p + (1 - s) * b / 2, b / 2, source=src)
        value_test = Test(f"<{k1}, 1>", report(0), eps_value, s * a * p + (1 - s) * b / 2,
                          s * a * (1 - p) + (1 - s) * b / 2, source=src)
    out = [
        InputPair(f"{{<{k1}, 1>}}", f"{{<{k2}, 1>}}", lambda which, n: _users(which, 1.0, n), (key_test,), cost=width),
        InputPair(f"{{<{k1}, 1>}}", f"{{<{k1}, -1>}}", lambda which, n: _users(0, 1.0 - 2.0 * which, n),
                  (value_test,), cost=width),
    ]
    return out + (set_pairs(plan) if plan["mechanism"] == "pckv-ue" and L > 1 else [])


def _set_probabilities(a: float, b: float, p: float, L: int, m: int, quiet: bool) -> tuple[tuple[float, float], ...]:
    """``((key num, key den), (value num, value den))`` for sets of ``m`` pairs (module docstring)."""
    d0, d1 = ((1 - b) ** L, (1 - a) * (1 - b) ** (L - 1)) if quiet else (1.0, 1.0)
    r, h = m / L, b / 2
    dummy_keys = (1 - r) * h ** m * (1 - b) ** m * d1
    keys = (r * a * p * h ** (m - 1) * (1 - b) ** m * d0 + dummy_keys,
            r * h ** m * (1 - a) * (1 - b) ** (m - 1) * d0 + dummy_keys)
    dummy_values = (1 - r) * h ** m * d1
    values = (r * a * p * h ** (m - 1) * d0 + dummy_values, r * a * (1 - p) * h ** (m - 1) * d0 + dummy_values)
    return keys, values


def _set_users(keys: np.ndarray, value: float, n: int) -> KeyValueUsers:
    m = keys.size
    return KeyValueUsers(np.arange(n + 1, dtype=np.int64) * m, np.tile(keys, n), np.full(n * m, value, dtype=np.float64))


def set_pairs(plan: Mapping[str, Any]) -> list[InputPair]:
    """PCKV-UE, ``L > 1``: the key pair and the value pair of users holding ``m <= L`` pairs."""
    params, guarantee = plan["params"], plan["guarantee"]
    a, b, p = float(params["a"]), float(params["b"]), float(params["p"])
    d, L = int(params["domain_size"]), int(params["padding_length"])
    eps = float(guarantee["epsilon"])
    eps_value = min(eps, float(guarantee.get("epsilon2", eps)))
    out = []
    for kind, claim in ((0, eps), (1, eps_value)):
        best: tuple[float, int, bool, float, float] | None = None
        for m in range(1, min(L, d // 2) + 1):
            for quiet in ((False,) if m == L else (True, False)):
                num, den = _set_probabilities(a, b, p, L, m, quiet)[kind]
                if m > 1 and den < MIN_EVENT_PROBABILITY:
                    continue
                score = math.log(num / den) / claim
                if best is None or score > best[0] + 1e-12:
                    best = (score, m, quiet, num, den)
        assert best is not None  # m = 1 is never skipped
        _, m, quiet, num, den = best
        out.append(_set_pair(plan, kind, m, quiet, claim, num, den, d, L))
    return out


def _set_pair(plan, kind: int, m: int, quiet: bool, claim: float, num: float, den: float, d: int, L: int) -> InputPair:
    first = np.arange(m, dtype=np.int64)
    second = first + m if kind == 0 else first
    dummies = list(range(d, d + L)) if quiet else []

    def occurs(r) -> np.ndarray:
        out = np.ones(len(r), dtype=bool)
        for k in first.tolist():
            out &= _positive(r, k)
        if kind == 0:
            for k in second.tolist():
                out &= ~_nonzero(r, k)
        for k in dummies:
            out &= ~_nonzero(r, k)
        return out

    names = [item_label(plan, k) for k in range(2 * m if kind == 0 else m)]
    lx = "{" + ", ".join(f"<{k}, 1>" for k in names[:m]) + "}"
    lxp = ("{" + ", ".join(f"<{k}, 1>" for k in names[m:]) + "}" if kind == 0
           else "{" + ", ".join(f"<{k}, -1>" for k in names[:m]) + "}")
    event = (f"y = 1 on {', '.join(names[:m])}" + (f", y = 0 on {', '.join(names[m:])}" if kind == 0 else "")
             + (", dummy bits 0" if quiet else ""))
    test = Test(event, occurs, claim, num, den,
                source=f"PCKV Theorem 2 ({'key' if kind == 0 else 'value'} case) on sets of {m} of L = {L} pairs")
    values = (1.0, 1.0) if kind == 0 else (1.0, -1.0)
    return InputPair(lx, lxp, lambda which, n: _set_users((first, second)[which], values[which], n), (test,),
                     cost=float(d + L))


def domain(plan: Mapping[str, Any]) -> Domain:
    """Every key-value pair ``<k, v>``, ``v`` in {1, -1} (input ``2 k + (v == -1)``)."""
    params, guarantee = plan["params"], plan["guarantee"]
    d, L = int(params["domain_size"]), int(params["padding_length"])
    eps = float(guarantee["epsilon"])
    eps_value = min(eps, float(guarantee.get("epsilon2", eps)))
    labels = [f"<{item_label(plan, k)}, {v}>" for k in range(d) for v in (1, -1)]

    def make(idx):
        idx = np.asarray(idx, dtype=np.int64)
        return KeyValueUsers(np.arange(idx.size + 1, dtype=np.int64), idx // 2, 1.0 - 2.0 * (idx % 2))

    width = float(d + L) if plan["mechanism"] == "pckv-ue" else 2.0
    return Domain(labels, make, lambda i, j: eps_value if i // 2 == j // 2 else eps, cost=width)

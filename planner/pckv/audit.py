"""Audit pairs of PCKV-UE and PCKV-GRR (Gu, Li, Cheng, Xiong & Cao, USENIX Security 2020).

Users hold one pair each (``|S| = 1``, so Algorithm 1 samples it with probability ``1/L`` and a
dummy key otherwise). Two input pairs attain Theorem 2 / 3:

* keys: ``{<k1, 1>}`` vs ``{<k2, 1>}``; PCKV-UE event ``y[k1] = 1, y[k2] = 0`` (ratio
  ``2 p a (1-b) / (b (1-a))`` at ``L = 1``), PCKV-GRR event ``<k1, 1>`` (ratio
  ``(a p / L + (1 - 1/L) b/2) / (b/2)``, eq. 29);
* values: ``{<k, 1>}`` vs ``{<k, -1>}``; event ``y[k] = 1`` (UE) / ``<k, 1>`` (GRR): ratio
  ``p / (1-p)`` at ``L = 1`` (eq. 28 for GRR), claim ``min(epsilon, epsilon2)``.

For PCKV-UE with ``L > 1`` the singleton sets dilute the ratio (Theorem 2 is attained only by
sets of ``L`` pairs with rare events), so the bound stays below the claim there.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ...mechanisms.pckv import KeyValueUsers

from ..auditing.events import InputPair, Test, item_label, unpacked_bit

__all__ = ["pairs"]


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
    return [
        InputPair(f"{{<{k1}, 1>}}", f"{{<{k2}, 1>}}", lambda which, n: _users(which, 1.0, n), (key_test,), cost=width),
        InputPair(f"{{<{k1}, 1>}}", f"{{<{k1}, -1>}}", lambda which, n: _users(0, 1.0 - 2.0 * which, n),
                  (value_test,), cost=width),
    ]


def domain(plan: Mapping[str, Any]):
    """Every key-value pair ``<k, v>``, ``v`` in {1, -1} (input ``2 k + (v == -1)``)."""
    from ..auditing.events import Domain

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

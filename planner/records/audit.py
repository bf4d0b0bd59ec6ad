"""Audit pairs of record plans: records differing in one attribute, and in all of them.

For each plan the tight events of its privacy map (:mod:`ldpplan.mechanisms.records._privacy`),
with the honest probabilities from the plan's numbers; ``x`` is the all-zero record:

* one attribute ``j`` changed (``x'_j = 1``), claim ``guarantee.attribute_epsilons[j]``: SPL: ``a_j``
  at its worst output (GRR ``a_j = 0``; OUE bit 0 set and bit 1 clear); SMP: the same and
  ``attribute = j``; RS+FD: ``a_j = 0`` and every other ``a_i != 0``;
* every attribute changed (``x' = 1``), claim ``guarantee.epsilon``: SPL: every attribute at its
  worst output; SMP: every attribute's column at its worst output or, when not sampled, the filler 0
  (``Pr = sum_j pi_j Pr_j[worst]``: a runtime that reports a second attribute multiplies the ratio);
  RS+FD: every ``a_i = 0``.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..auditing.events import Domain, InputPair, Test

__all__ = ["pairs", "domain"]

_SOURCE = "LDP of the whole record: Pr[E|x] <= e^epsilon Pr[E|x'] (records: SPL / SMP / RS+FD)"


def _worst(reports: Any, j: int, oracle: str) -> np.ndarray:
    """Attribute ``j``'s report is its worst output for the value 0 against 1."""
    y = np.asarray(reports[f"a{j}"])
    if oracle == "grr":
        return y == 0
    return ((y[:, 0] & 1) == 1) & ((y[:, 0] >> 1 & 1) == 0)


def _filler(reports: Any, j: int) -> np.ndarray:
    """Attribute ``j``'s column holds the SMP filler (0, or no bit set): no report of it."""
    y = np.asarray(reports[f"a{j}"])
    return y == 0 if y.ndim == 1 else ~np.any(y, axis=1)


def _oracle_probabilities(oracle: str, number: float, k: int) -> tuple[float, float]:
    """``(Pr[worst | 0], Pr[worst | 1])`` of one attribute's oracle."""
    if oracle == "grr":
        return number, (1.0 - number) / (k - 1)
    return 0.5 * (1.0 - number), 0.5 * number


def _records(first: np.ndarray, second: np.ndarray):
    return lambda which, n: np.tile((first, second)[which], (int(n), 1)).astype(np.int64)


def _rsfd_one(p: Mapping[str, Any], j: int) -> tuple[float, float]:
    sizes, numbers = p["domain_sizes"], p["numbers"]
    d = len(sizes)
    away = [(k - 1) / k for k in sizes]  # a fake value avoids 0

    def prob(value_j: int) -> float:
        total = 0.0
        for s in range(d):
            term = 1.0
            for i in range(d):
                if i == j:
                    hit = (numbers[j] if value_j == 0 else (1 - numbers[j]) / (sizes[j] - 1)) if s == j else 1 / sizes[j]
                else:
                    hit = (1 - numbers[i]) if s == i else away[i]
                term *= hit
            total += term
        return total / d
    return prob(0), prob(1)


def _rsfd_all(p: Mapping[str, Any]) -> tuple[float, float]:
    sizes, numbers = p["domain_sizes"], p["numbers"]
    d, base = len(sizes), float(np.prod([1.0 / k for k in sizes]))
    first = sum(numbers[s] * sizes[s] * base for s in range(d)) / d
    second = sum((1 - numbers[s]) / (sizes[s] - 1) * sizes[s] * base for s in range(d)) / d
    return first, second


def _one(plan: Mapping[str, Any], j: int) -> InputPair:
    p, scheme = plan["params"], plan["mechanism"]
    d, o = len(p["names"]), p["oracles"][j]
    claim = float(plan["guarantee"]["attribute_epsilons"][j])
    first, second = np.zeros(d, dtype=np.int64), np.zeros(d, dtype=np.int64)
    second[j] = 1
    if scheme == "rsfd":
        p1, p2 = _rsfd_one(p, j)
        occurs = (lambda r: (np.asarray(r[f"a{j}"]) == 0)
                  & np.all([np.asarray(r[f"a{i}"]) != 0 for i in range(d) if i != j] or [True], axis=0))
        event = f"a{j} = 0, every other a_i != 0"
    else:
        p1, p2 = _oracle_probabilities(o, p["numbers"][j], p["domain_sizes"][j])
        if scheme == "smp":
            p1, p2 = p1 * p["sampling"][j], p2 * p["sampling"][j]
            occurs = lambda r: (np.asarray(r["attribute"]) == j) & _worst(r, j, o)  # noqa: E731
        else:
            occurs = lambda r: _worst(r, j, o)  # noqa: E731
        event = f"a{j} at its worst output for 0 vs 1" + (f", attribute = {j}" if scheme == "smp" else "")
    test = Test(event, occurs, claim, p1, p2, source=_SOURCE)
    return InputPair("0" * d, "".join(str(int(v)) for v in second), _records(first, second), (test,))


def _all(plan: Mapping[str, Any]) -> InputPair:
    p, scheme = plan["params"], plan["mechanism"]
    d, claim = len(p["names"]), float(plan["guarantee"]["epsilon"])
    first, second = np.zeros(d, dtype=np.int64), np.ones(d, dtype=np.int64)
    if scheme == "rsfd":
        p1, p2 = _rsfd_all(p)
        occurs = lambda r: np.all([np.asarray(r[f"a{i}"]) == 0 for i in range(d)], axis=0)  # noqa: E731
        event = "every a_i = 0"
    elif scheme == "smp":  # every attribute's column at its worst output, or not the sampled one (a report of a
        # second attribute multiplies the ratio)
        each = [_oracle_probabilities(o, x, k) for o, x, k in zip(p["oracles"], p["numbers"], p["domain_sizes"])]
        p1 = float(sum(pi * a for pi, (a, _) in zip(p["sampling"], each)))
        p2 = float(sum(pi * b for pi, (_, b) in zip(p["sampling"], each)))
        occurs = lambda r: np.all([_worst(r, i, p["oracles"][i]) | ((np.asarray(r["attribute"]) != i)  # noqa: E731
                                                                    & _filler(r, i)) for i in range(d)], axis=0)
        event = "every a_i at its worst output, or 0 when not sampled"
    else:
        pairs_ = [_oracle_probabilities(o, x, k) for o, x, k in zip(p["oracles"], p["numbers"], p["domain_sizes"])]
        p1, p2 = float(np.prod([a for a, _ in pairs_])), float(np.prod([b for _, b in pairs_]))
        occurs = lambda r: np.all([_worst(r, i, p["oracles"][i]) for i in range(d)], axis=0)  # noqa: E731
        event = "every attribute at its worst output"
    test = Test(event, occurs, claim, p1, p2, source=_SOURCE)
    return InputPair("0" * d, "1" * d, _records(first, second), (test,), cost=float(d))


def pairs(plan: Mapping[str, Any]) -> list[InputPair]:
    """One pair per attribute (that attribute changed) and the pair differing in every attribute."""
    d = len(plan["params"]["names"])
    return [_one(plan, j) for j in range(d)] + [_all(plan)]


def domain(plan: Mapping[str, Any]) -> Domain:
    """The records explored: all zeros, each attribute set to 1 alone, all ones (claim: the record's epsilon)."""
    d, claim = len(plan["params"]["names"]), float(plan["guarantee"]["epsilon"])
    rows = [np.zeros(d, dtype=np.int64)] + [np.eye(d, dtype=np.int64)[j] for j in range(d)]
    rows += [np.ones(d, dtype=np.int64)] if d > 1 else []
    table = np.stack(rows)
    labels = ["".join(str(int(v)) for v in r) for r in rows]
    return Domain(labels, lambda idx: table[np.asarray(idx, dtype=np.int64)], lambda i, j: claim, cost=float(d))

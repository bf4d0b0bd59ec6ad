"""The audit's lifetime pair: a history whose value changes against one that never changes.

Each trial is a fresh user reporting over ``T = min(rounds, LIFETIME_ROUNDS)`` rounds through one memo:
the first input holds value 0 for ``m = T // 2`` rounds, then value 1 (two permanent responses); the second
holds value 0 throughout (one permanent response). The event ``E``: "value 0 is reported more often than
value 1 in the first m rounds, and value 1 more often than value 0 in the last T - m" (L-GRR: counts of the
reported value; unary encodings: counts of bits 0 and 1). The reports of one permanent response are
correlated, so ``E`` reveals the change; ``ln(Pr[E | change] / Pr[E | no change])`` is bounded by the plan's
sound ``epsilon_lifetime`` (:mod:`._lifetime`), never by ``max_values x epsilon_perm`` (which it exceeds
for many plans: the audit measures the leak the earlier claim denied). Honest probabilities are exact
(:func:`lifetime_probabilities`): given the permanent responses the halves are independent.

References
----------
Erlingsson et al. (CCS 2014), Sec. 3; Ding, Kulkarni, Yekhanin (NeurIPS 2017), Sec. 3 (memoization leaks
the change); Naor and Vexler (FORC 2020).
"""
from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from ..auditing.events import InputPair, Test, item_label, repeat
from ...mechanisms import Reports

__all__ = ["lifetime_pair", "lifetime_probabilities", "LIFETIME_ROUNDS"]

#: Most rounds a simulated user reports in the lifetime pair.
LIFETIME_ROUNDS = 32
_SOURCE = ("longitudinal-LDP over a history: a change of value against none, Pr[E|x] <= e^epsilon_lifetime Pr[E|x'] "
           "with epsilon_lifetime = min(T epsilon_2, V epsilon_perm + floor(T (V-1)/V) epsilon_2) (ldpplan, from Erlingsson et al. 2014 "
           "and Ding et al. 2017)")


def _binom(n: int, p: float) -> np.ndarray:
    """The Binomial(n, p) pmf, shape ``(n + 1,)`` (``p`` in [0, 1])."""
    if p <= 0.0 or p >= 1.0:
        out = np.zeros(n + 1)
        out[0 if p <= 0.0 else n] = 1.0
        return out
    c = np.arange(n + 1)
    logs = np.array([math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) for i in c])
    with np.errstate(divide="ignore"):
        return np.exp(logs + c * np.log(p) + (n - c) * np.log1p(-p))


def _more(n: int, pa: float, pb: float, joint: bool) -> float:
    """``Pr[N_a > N_b]`` over ``n`` reports: a report counts for a with ``pa``, for b with ``pb``; jointly
    exclusive (one reported value, L-GRR) or independent (two bits, unary)."""
    if not joint:
        fa, fb = _binom(n, pa), _binom(n, pb)
        return float(np.sum(fa * np.concatenate([[0.0], np.cumsum(fb)[:-1]])))
    total = 0.0
    for a in range(n + 1):  # N_a = a, then N_b ~ Bin(n - a, pb / (1 - pa)), need N_b < a
        if a == 0:
            continue
        head = math.exp(math.lgamma(n + 1) - math.lgamma(a + 1) - math.lgamma(n - a + 1)
                        + a * math.log(pa) + (n - a) * math.log1p(-pa))
        rest = _binom(n - a, pb / (1 - pa))
        total += head * float(np.sum(rest[:a]))
    return total


def lifetime_probabilities(plan: Mapping[str, Any], rounds: int, change: int) -> tuple[float, float]:
    """Exact honest ``(Pr[E | 0^m 1^(T-m)], Pr[E | 0^T])`` for ``T = rounds``, ``m = change``.

    L-GRR: the permanent response ``z`` is the value w.p. ``p1``, each other value w.p. ``q1``; a report is
    ``z`` w.p. ``p2``, each other w.p. ``q2``. Unary: bits of the permanent vector are independent
    (``p1`` on the value's bit, ``q1`` elsewhere), report bits likewise (``p2`` / ``q2``).
    """
    p, k = plan["params"], int(plan["domain"]["size"])
    grr = plan["mechanism"] == "l-grr"
    if grr:
        p1, p2 = float(p["p1"]), float(p["p2"])
        q1, q2 = (1 - p1) / (k - 1), (1 - p2) / (k - 1)
        # z = value held (a), the other value of the pair (b), or one of the k - 2 others: (weight, pa, pb)
        cases_a = [(p1, p2, q2), (q1, q2, p2), ((k - 2) * q1, q2, q2)]
    else:
        p1, q1, p2, q2 = (float(p[key]) for key in ("p1", "q1", "p2", "q2"))
        cases_a = [(wa * wb, p2 if za else q2, p2 if zb else q2)
                   for za, wa in ((1, p1), (0, 1 - p1)) for zb, wb in ((1, q1), (0, 1 - q1))]
    cases_b = [(w, pb, pa) for w, pa, pb in cases_a]  # value b held: swap the roles
    n1, n2 = change, rounds - change
    first_half = sum(w * _more(n1, pa, pb, grr) for w, pa, pb in cases_a if w)
    second_half = sum(w * _more(n2, pb, pa, grr) for w, pa, pb in cases_b if w)
    one = sum(w * _more(n1, pa, pb, grr) * _more(n2, pb, pa, grr) for w, pa, pb in cases_a if w)
    return first_half * second_half, one


def _runner(plan: Mapping[str, Any], rounds: int, change: int):
    k, grr = int(plan["domain"]["size"]), plan["mechanism"] == "l-grr"

    def run(mechanism, which: int, n: int, rng: np.random.Generator):
        memo, ids = mechanism.new_memo(), np.arange(n, dtype=np.int64)
        counts = np.zeros((2, n, 2), dtype=np.int64)  # half, user, value 0 / 1
        for t in range(rounds):
            value = 1 if (which == 0 and t >= change) else 0
            rep = mechanism.perturb(np.full(n, value, dtype=np.int64), rng=rng, memo=memo, users=ids, round=t)
            if grr:
                y = np.asarray(rep["y"])
                hit = np.stack([y == 0, y == 1], axis=1)
            else:
                hit = np.unpackbits(np.asarray(rep["bits"]), axis=1, count=k, bitorder="little")[:, :2].astype(bool)
            counts[int(t >= change)] += hit
        event = (counts[0, :, 0] > counts[0, :, 1]) & (counts[1, :, 1] > counts[1, :, 0])
        return Reports("lifetime", {"changed": event})

    return run


def lifetime_pair(plan: Mapping[str, Any]) -> InputPair | None:
    """The change-against-none pair (claim ``epsilon_lifetime``), or None when ``max_values = 1`` or one round."""
    gu = plan["guarantee"]
    rounds = min(int(gu["rounds"]), LIFETIME_ROUNDS)
    if int(gu.get("max_values", 1)) < 2 or rounds < 2:
        return None
    change = rounds // 2
    x0, x1 = item_label(plan, 0), item_label(plan, 1)
    p_first, p_second = lifetime_probabilities(plan, rounds, change)
    test = Test(f"{x0} then {x1} most reported in {change} + {rounds - change} rounds", lambda r: np.asarray(r["changed"]),
                float(gu["epsilon_lifetime"]), p_first, p_second, source=_SOURCE)
    width = 1.0 if plan["mechanism"] == "l-grr" else float(plan["domain"]["size"])
    return InputPair(f"{x0}^{change} {x1}^{rounds - change}", f"{x0}^{rounds}", lambda which, n: repeat(which, n),
                     (test,), cost=width * rounds, run=_runner(plan, rounds, change))

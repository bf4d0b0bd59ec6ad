"""Audit pairs of the longitudinal family: one report (epsilon_1) and many reports of one value (epsilon_perm).

A memoized runtime is audited through the client state: each simulated user gets its own id in
one :class:`~ldpplan.mechanisms.Memo`, so every trial of a pair is a fresh user (a fresh
permanent response), as the definition of epsilon_1 requires.

* **epsilon_1 (one report).** L-GRR: inputs 0 and 1, event ``y = 0``: ``P`` vs ``Q``, ratio
  ``e^epsilon_1`` exactly. Unary encodings: event ``bit0 = 1 and bit1 = 0``: ``P (1 - Q)`` vs
  ``Q (1 - P)``.
* **epsilon_perm (many reports of one value):** :func:`many_reports` runs ``reports`` rounds of
  one user holding one value and tests the event "value 0 is the most reported value" (L-GRR;
  unary: bit 0 is the bit most often 1; ties go to the lowest index). With memoization its probability under
  either input is at most what the permanent response allows (the event is post-processing
  of it), so the ratio stays below ``e^epsilon_perm``; a runtime that re-draws the permanent
  response each round has a ratio growing with ``reports`` (the averaging attack), flagged.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping

import numpy as np

from ..audit.events import Domain, InputPair, Test, item_label, repeat

__all__ = ["pairs", "domain", "many_reports", "ManyReports"]

_SOURCE = "longitudinal-LDP: one report of the composed channel, Q(y|x) <= e^epsilon_1 Q(y|x')"


def _supports(plan: Mapping[str, Any]) -> tuple[float, float]:
    from .claims import exact_ratios

    r = exact_ratios(plan["mechanism"], plan["params"])
    return float(r["P"]), float(r["Q"])


def _test(plan: Mapping[str, Any], i: int, j: int) -> Test:
    claim = float(plan["guarantee"]["epsilon_1"])
    big_p, big_q = _supports(plan)
    xi, xj = item_label(plan, i), item_label(plan, j)
    if plan["mechanism"] == "l-grr":
        return Test(f"y = {xi}", lambda r: np.asarray(r["y"]) == i, claim, big_p, big_q, source=_SOURCE)

    def occurs(r) -> np.ndarray:
        bits = np.asarray(r["bits"])
        return (((bits[:, i // 8] >> (i % 8)) & 1) == 1) & (((bits[:, j // 8] >> (j % 8)) & 1) == 0)

    return Test(f"bit {xi} = 1 and bit {xj} = 0", occurs, claim, big_p * (1 - big_q), big_q * (1 - big_p),
                source=_SOURCE)


def pairs(plan: Mapping[str, Any]) -> list[InputPair]:
    """One pair (values 0 and 1) with the event that attains ``e^epsilon_1`` for one report."""
    width = 1.0 if plan["mechanism"] == "l-grr" else float(plan["domain"]["size"])
    return [InputPair(item_label(plan, 0), item_label(plan, 1), lambda which, n: repeat(which, n), (_test(plan, 0, 1),),
                      cost=width)]


def domain(plan: Mapping[str, Any]) -> Domain:
    """Every value; the round column carries no information (claim 0)."""
    size, claim = int(plan["domain"]["size"]), float(plan["guarantee"]["epsilon_1"])
    labels = [item_label(plan, i) for i in range(size)]

    def tight(i: int, j: int) -> InputPair:
        return InputPair(labels[i], labels[j], lambda which, n: repeat((i, j)[which], n), (_test(plan, i, j),))

    return Domain(labels, lambda idx: np.asarray(idx, dtype=np.int64), lambda i, j: claim, fixed_columns=("round",),
                  cost=1.0 if plan["mechanism"] == "l-grr" else float(size), tight=tight)


@dataclasses.dataclass(frozen=True)
class ManyReports:
    """Many reports of one unchanged value: the plurality-vote event under two inputs.

    Attributes
    ----------
    reports : int
        Reports per simulated user (rounds).
    users : int
        Simulated users per input.
    hits : tuple of int
        Users whose most reported value (bit) is 0, holding value 0 and value 1.
    epsilon_lower : float
        A Clopper-Pearson-style lower bound on ``ln(Pr[E | 0] / Pr[E | 1])`` at ``confidence``
        (nats; 0 when the data support no positive bound).
    epsilon_perm : float
        The plan's claim.
    flagged : bool
        ``epsilon_lower > epsilon_perm``: the runtime leaks more over many reports than its
        permanent response allows (it does not memoize).
    confidence : float
    """

    reports: int
    users: int
    hits: tuple[int, int]
    epsilon_lower: float
    epsilon_perm: float
    flagged: bool
    confidence: float


def _beta_bounds(k: int, n: int, alpha: float) -> tuple[float, float]:
    from scipy.stats import beta

    low = 0.0 if k == 0 else float(beta.ppf(alpha, k, n - k + 1))
    high = 1.0 if k == n else float(beta.ppf(1 - alpha, k + 1, n - k))
    return low, high


def many_reports(plan: Mapping[str, Any], *, mechanism=None, reports: int = 200, users: int = 400, seed: int = 0,
                 confidence: float = 0.99) -> ManyReports:
    """Measure epsilon on ``reports`` rounds of one unchanged value (the averaging attack).

    Parameters
    ----------
    plan : mapping
        A verified longitudinal plan.
    mechanism : runtime, optional
        The runtime under test (default ``ldpplan.mechanisms.load(plan)``); its ``perturb`` is
        called with ``memo=``, ``users=`` and ``round=`` (rounds cycle when ``reports`` exceeds
        the plan's rounds: the same user keeps reporting its value).
    reports, users, seed, confidence
        Rounds per user, users per input, root seed, one-sided confidence of the bound.

    Returns
    -------
    ManyReports
    """
    from ...mechanisms import load

    mech = load(plan) if mechanism is None else mechanism
    rounds = int(plan["guarantee"]["rounds"])
    rng = np.random.default_rng(seed)
    memo = mech.new_memo()
    hits = []
    k = int(plan["domain"]["size"])
    for which in (0, 1):
        ids = np.arange(users, dtype=np.int64) + which * users
        values = np.full(users, which, dtype=np.int64)
        tally = np.zeros((users, k))
        for t in range(reports):
            rep = mech.perturb(values, rng=rng, memo=memo, users=ids, round=t % rounds)
            if plan["mechanism"] == "l-grr":
                tally[np.arange(users), np.asarray(rep["y"])] += 1
            else:
                tally += np.unpackbits(np.asarray(rep["bits"]), axis=1, count=k, bitorder="little")
        hits.append(int(np.sum(tally.argmax(axis=1) == 0)))
    alpha = (1 - confidence) / 2
    low0, _ = _beta_bounds(hits[0], users, alpha)
    _, high1 = _beta_bounds(hits[1], users, alpha)
    bound = max(0.0, math.log(low0 / high1)) if low0 > 0 else 0.0
    claim = float(plan["guarantee"]["epsilon_perm"])
    return ManyReports(reports, users, (hits[0], hits[1]), bound, claim, bound > claim, confidence)

"""Audit pairs of the longitudinal family: one report (epsilon_1) and many reports of one value (epsilon_perm).

A memoized runtime is audited through the client state: each simulated user gets its own id in
one :class:`~ldpplan.mechanisms.Memo`, so every trial of a pair is a fresh user (a fresh
permanent response), as the definition of epsilon_1 requires.

* **epsilon_1 (one report).** L-GRR: inputs 0 and 1, event ``y = 0``: ``P`` vs ``Q``, ratio
  ``e^epsilon_1`` exactly. Unary encodings: event ``bit0 = 1 and bit1 = 0``: ``P (1 - Q)`` vs
  ``Q (1 - P)``.
* **epsilon_perm (many reports of one value):** a second pair runs each trial as one user
  reporting one unchanged value over :data:`MANY` rounds (the pair's ``run``) and tests the event
  "value 0 is reported strictly more often than any other value" (unary: bit 0 is 1 strictly more
  often than any other bit), with its exact honest probabilities (:func:`plurality_probabilities`).
  :func:`many_reports` runs the same event standalone with a chosen number of reports. With memoization its probability under
  either input is at most what the permanent response allows (the event is post-processing
  of it), so the ratio stays below ``e^epsilon_perm``; a runtime that re-draws the permanent
  response each round has a ratio growing with ``reports`` (the averaging attack), flagged.
* **epsilon_lifetime (a value that changes):** with ``max_values >= 2``, a third pair runs each trial
  as one user over the plan's rounds (at most 32) whose value changes halfway, against one whose value
  never changes (:mod:`._audit_lifetime`), bounded by the plan's sound ``epsilon_lifetime``.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping

import numpy as np

from ..auditing.events import Domain, InputPair, Test, item_label, repeat
from ._audit_lifetime import lifetime_pair
from ...mechanisms import Reports, load
from .claims import exact_ratios

__all__ = ["pairs", "domain", "many_reports", "ManyReports", "plurality_probabilities", "MANY"]

#: Rounds each simulated user reports in the many-reports test (64: the exact probabilities'
#: factorials stay within float64).
MANY = 64
_MANY_SOURCE = ("longitudinal-LDP: any number of reports of one value are post-processing of its permanent "
                "response, Pr[E|x] <= e^epsilon_perm Pr[E|x'] (Erlingsson et al. 2014)")

_SOURCE = "longitudinal-LDP: one report of the composed channel, Q(y|x) <= e^epsilon_1 Q(y|x')"


def _supports(plan: Mapping[str, Any]) -> tuple[float, float]:
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
    """Values 0 and 1: one report (the event attaining ``e^epsilon_1``), :data:`MANY` reports of
    one unchanged value per user (the plurality event, bounded by ``e^epsilon_perm``: flags a runtime
    that drops or ignores its memo), and, with ``max_values >= 2``, a history that changes value
    against one that does not (bounded by ``epsilon_lifetime``, :mod:`._audit_lifetime`)."""
    width = 1.0 if plan["mechanism"] == "l-grr" else float(plan["domain"]["size"])
    x0, x1 = item_label(plan, 0), item_label(plan, 1)
    p_first, p_second = plurality_probabilities(plan, MANY)
    many = Test(f"{x0} most reported in {MANY} reports", lambda r: np.asarray(r["zero_wins"]),
                float(plan["guarantee"]["epsilon_perm"]), p_first, p_second, source=_MANY_SOURCE)
    out = [InputPair(x0, x1, lambda which, n: repeat(which, n), (_test(plan, 0, 1),), cost=width),
           InputPair(x0, x1, lambda which, n: repeat(which, n), (many,), cost=width * MANY,
                     run=_many_runner(plan, MANY))]
    life = lifetime_pair(plan)
    return out + ([life] if life is not None else [])


def _many_runner(plan: Mapping[str, Any], reports: int):
    """``run(mechanism, which, n, rng)``: ``n`` fresh users hold value ``which`` and report it
    ``reports`` times through one memo; column ``zero_wins``: value 0 strictly most reported."""
    k, rounds, grr = int(plan["domain"]["size"]), int(plan["guarantee"]["rounds"]), plan["mechanism"] == "l-grr"

    def run(mechanism, which: int, n: int, rng: np.random.Generator):
        memo, ids, values = mechanism.new_memo(), np.arange(n, dtype=np.int64), np.full(n, which, dtype=np.int64)
        tally = np.zeros((n, k), dtype=np.int64)
        for t in range(reports):
            if t and t % rounds == 0 and hasattr(memo, "replayed"):  # past the plan's rounds: same responses
                memo = memo.replayed()
            rep = mechanism.perturb(values, rng=rng, memo=memo, users=ids, round=t % rounds)
            if grr:
                tally[ids, np.asarray(rep["y"])] += 1
            else:
                tally += np.unpackbits(np.asarray(rep["bits"]), axis=1, count=k, bitorder="little")
        return Reports("many-reports", {"zero_wins": tally[:, 0] > tally[:, 1:].max(axis=1)})

    return run


def _binomial(reports: int, p: float) -> np.ndarray:
    c = np.arange(reports + 1)
    logs = [math.lgamma(reports + 1) - math.lgamma(i + 1) - math.lgamma(reports - i + 1) for i in c]
    with np.errstate(divide="ignore"):
        return np.exp(np.array(logs) + c * np.log(p) + (reports - c) * np.log1p(-p))


def _all_below(c: int, total: int, probs: list[tuple[float, int]]) -> float:
    """``Pr[every count < c]`` of a multinomial of ``total`` draws over categories with the given
    probabilities (``(probability, multiplicity)``, summing to 1): ``total! [x^total] prod e_c(p x)``
    with ``e_c(y) = sum_{a<c} y^a / a!`` (exponential generating functions)."""
    if c <= 0:
        return 0.0
    out = np.zeros(total + 1)
    out[0] = 1.0
    a = np.arange(min(c, total + 1))
    fact = np.array([math.lgamma(i + 1) for i in a])
    for p, times in probs:
        with np.errstate(divide="ignore"):
            base = np.zeros(total + 1)
            base[: a.size] = np.exp(a * np.log(p) - fact) if p > 0 else (a == 0).astype(float)
        while times:  # out *= base ** times, truncated at degree total
            if times & 1:
                out = np.convolve(out, base)[: total + 1]
            times >>= 1
            if times:
                base = np.convolve(base, base)[: total + 1]
    return float(out[total] * math.exp(math.lgamma(total + 1)))


def _grr_win(reports: int, own: float, others: list[tuple[float, int]]) -> float:
    """``Pr[N_0 > N_j for every j >= 1]``, ``N`` multinomial(reports) with ``Pr[0] = own``."""
    pmf, rest = _binomial(reports, own), 1.0 - own
    scaled = [(p / rest, m) for p, m in others]
    return float(sum(pmf[c] * _all_below(c, reports - c, scaled) for c in range(1, reports + 1)))


def plurality_probabilities(plan: Mapping[str, Any], reports: int = MANY) -> tuple[float, float]:
    """Exact honest ``(Pr[E | value 0], Pr[E | value 1])`` of "value 0 strictly most reported in
    ``reports`` reports of one memoized value".

    L-GRR: the permanent response ``z`` (``Pr[z = x] = p1``), then a multinomial of the reports
    with ``p2`` on ``z`` and ``q2`` elsewhere (:func:`_grr_win`, by symmetry two cases: ``z = 0`` or
    not). Unary encodings: bit ``j``'s count is a mixture of ``Bin(reports, p2)`` and
    ``Bin(reports, q2)`` with weight ``Pr[z_j = 1]`` (``p1`` on the value's bit, ``q1`` elsewhere),
    independent across bits, so ``Pr[E] = sum_c r_0(c) prod_{j>=1} F_j(c - 1)``.
    """
    p, k = plan["params"], int(plan["domain"]["size"])
    if plan["mechanism"] == "l-grr":
        p1, p2 = float(p["p1"]), float(p["p2"])
        q1, q2 = (1 - p1) / (k - 1), (1 - p2) / (k - 1)
        win_self = _grr_win(reports, p2, [(q2, k - 1)])
        win_other = _grr_win(reports, q2, [(p2, 1), (q2, k - 2)]) if k > 2 else _grr_win(reports, q2, [(p2, 1)])
        return p1 * win_self + (1 - p1) * win_other, q1 * win_self + (1 - q1) * win_other
    p1, q1, p2, q2 = (float(p[key]) for key in ("p1", "q1", "p2", "q2"))
    hi, lo = _binomial(reports, p2), _binomial(reports, q2)

    def mix(weight: float) -> tuple[np.ndarray, np.ndarray]:
        pmf = weight * hi + (1 - weight) * lo
        below = np.concatenate([[0.0], np.cumsum(pmf)[:-1]])  # F(c - 1)
        return pmf, below

    (own_v, _), (_, cdf_v), (own_o, _), (_, cdf_o) = mix(p1), mix(p1), mix(q1), mix(q1)
    first = float(np.sum(own_v * cdf_o ** (k - 1)))
    second = float(np.sum(own_o * cdf_v * cdf_o ** (k - 2)))
    return first, second


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
        Users whose value (bit) 0 is strictly the most reported, holding value 0 and value 1.
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
    from scipy.stats import beta  # deferred: scipy

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
    mech = load(plan) if mechanism is None else mechanism
    run = _many_runner(plan, reports)
    rng = np.random.default_rng(seed)
    hits = [int(np.count_nonzero(run(mech, which, users, rng)["zero_wins"])) for which in (0, 1)]
    alpha = (1 - confidence) / 2
    low0, _ = _beta_bounds(hits[0], users, alpha)
    _, high1 = _beta_bounds(hits[1], users, alpha)
    bound = max(0.0, math.log(low0 / high1)) if low0 > 0 else 0.0
    claim = float(plan["guarantee"]["epsilon_perm"])
    return ManyReports(reports, users, (hits[0], hits[1]), bound, claim, bound > claim, confidence)

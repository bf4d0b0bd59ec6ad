"""Audit a mixed record's SMP runtime: records differing in one attribute, and in all of them.

The first record holds every categorical attribute at 0 and every numeric one at ``low``; the second
at 1 and ``high`` (the range's ends are the channel's extreme grid points, reached without rounding).
Events, with honest probabilities from the runtime's own numbers (:mod:`.audit` for the categorical
ones):

* one attribute ``j`` changed, claim its exact epsilon: ``attribute = j`` and ``a_j`` in its worst
  event (categorical: the oracle's worst output; numeric: the likelihood-ratio event
  ``{y : Q(y|low) > Q(y|high)}`` of the channel);
* every attribute changed, claim the record's epsilon: every column in its worst event or, when not
  sampled, the filler 0 (``Pr = sum_j pi_j Pr_j[E_j]``): a runtime that reports a second attribute
  multiplies the ratio and is flagged.

References
----------
Gu et al., USENIX Security 2020 (auditing LDP by likelihood-ratio events); Wang et al., ICDE 2019, Sec. IV.
"""
from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from ..auditing import AuditResult, _result
from ..auditing.events import InputPair, Test
from ..auditing.run import count_events
from ._mixed import MixedPlan
from .audit import _filler, _oracle_probabilities, _worst

__all__ = ["mixed_pairs", "audit_mixed"]

_SOURCE = "LDP of the whole record under SMP: Pr[E|x] <= e^epsilon Pr[E|x'] (Wang et al., ICDE 2019, Sec. IV)"


def _event(plan: MixedPlan, j: int) -> tuple[Callable[[Any], np.ndarray], float, float]:
    """``(in_event(reports), Pr[E | first], Pr[E | second])`` of attribute ``j``'s own report (not sampled: False)."""
    part = plan.runtime.parts[j]
    if plan.runtime.is_numeric(j):
        q = part.channel_matrix()
        event = np.flatnonzero(q[0] > q[-1])
        return (lambda r: np.isin(np.asarray(r[f"a{j}"]), event)), float(q[0, event].sum()), float(q[-1, event].sum())
    p1, p2 = _oracle_probabilities(part.oracle, part.number, part.domain_size)
    return (lambda r: _worst(r, j, part.oracle)), p1, p2


def mixed_pairs(plan: MixedPlan) -> list[InputPair]:
    """One pair per attribute (that attribute changed) and the pair differing in every attribute.

    References
    ----------
    Gu et al., USENIX Security 2020 (likelihood-ratio events).
    """
    rt = plan.runtime
    d = len(rt.names)
    first = np.array([p.low if rt.is_numeric(j) else 0.0 for j, p in enumerate(rt.parts)])
    second = np.array([p.high if rt.is_numeric(j) else 1.0 for j, p in enumerate(rt.parts)])
    levels = list(rt.privacy_map()["levels"].values())
    events = [_event(plan, j) for j in range(d)]
    out = []
    for j, (inside, p1, p2) in enumerate(events):
        x2 = first.copy()
        x2[j] = second[j]
        pi = rt.sampling[j]
        test = Test(f"attribute = {j}, a{j} in its likelihood-ratio event", _sampled_and(j, inside), levels[j],
                    pi * p1, pi * p2, source=_SOURCE)
        out.append(InputPair("x", f"x with {rt.names[j]} changed", _make(first, x2), (test,)))
    p1 = float(sum(pi * e[1] for pi, e in zip(rt.sampling, events)))
    p2 = float(sum(pi * e[2] for pi, e in zip(rt.sampling, events)))

    def every(r: Any) -> np.ndarray:
        sampled = np.asarray(r["attribute"])
        return np.all([np.where(sampled == i, events[i][0](r), _filler(r, i)) for i in range(d)], axis=0)

    test = Test("every a_i in its event, or 0 when not sampled", every, rt.epsilon, p1, p2, source=_SOURCE)
    return out + [InputPair("x", "x with every attribute changed", _make(first, second), (test,), cost=float(d))]


def _sampled_and(j: int, inside: Callable[[Any], np.ndarray]) -> Callable[[Any], np.ndarray]:
    """Reports of users who sampled attribute ``j`` and whose report is in its event."""
    return lambda r: (np.asarray(r["attribute"]) == j) & inside(r)


def _make(first: np.ndarray, second: np.ndarray) -> Callable[[int, int], np.ndarray]:
    return lambda which, n: np.tile((first, second)[which], (int(n), 1))


def audit_mixed(plan: MixedPlan, *, mechanism: Any = None, trials: int = 20000, confidence: float = 0.95,
                rng: np.random.Generator) -> AuditResult:
    """Clopper-Pearson lower bounds on each pair's epsilon from the runtime's outputs (``consistent``: none above
    its claim).

    Parameters
    ----------
    plan : MixedPlan
    mechanism : object, optional
        Anything with ``perturb(data, rng) -> Reports`` of the runtime's columns (default: ``plan.runtime``).
    trials : int
        Runs on each input.
    confidence : float
        Joint confidence (Bonferroni over the tests).
    rng : numpy.random.Generator

    References
    ----------
    Clopper & Pearson (1934); Gu et al., USENIX Security 2020.
    """
    start = time.perf_counter()
    pairs = mixed_pairs(plan)
    counts = count_events(plan.runtime if mechanism is None else mechanism, pairs, int(trials), rng)
    return _result("smp", pairs, counts, int(trials), float(confidence), time.perf_counter() - start)

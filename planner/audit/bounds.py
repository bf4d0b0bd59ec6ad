"""Clopper-Pearson bounds, the audited lower bound on a log-ratio, and the default number of trials.

An audit test is an output event ``E`` and two inputs ``x``, ``x'``; the mechanism claims
``Pr[E | x] <= e^epsilon Pr[E | x']``. With ``k`` of ``T`` runs on ``x`` and ``k'`` of ``T`` runs
on ``x'`` in ``E``, a one-sided lower confidence bound on ``ln(Pr[E|x] / Pr[E|x'])`` is
``ln(p_lower(k) / p_upper(k'))`` with Clopper-Pearson bounds, each at level ``alpha / 2``
(union bound), and the audit applies Bonferroni over its ``m`` tests: ``alpha / (2 m)`` each.
"""
from __future__ import annotations

import math
from typing import Sequence


__all__ = ["cp_lower", "cp_upper", "log_ratio_bound", "per_bound_alpha", "expected_bound", "default_trials",
           "TARGET_FRACTION", "MIN_TRIALS", "MAX_TRIALS", "WORK_LIMIT"]

#: Default trials aim for a lower bound of this fraction of the claim (at the expected counts).
TARGET_FRACTION = 0.8
#: Bounds of the default number of trials per input.
MIN_TRIALS, MAX_TRIALS = 10_000, 4_000_000
#: Largest ``trials * sum(cost of a report)`` the default picks (report cost: ~ one unit per output bit).
WORK_LIMIT = 6e9


def cp_lower(k: int, n: int, alpha: float) -> float:
    """One-sided Clopper-Pearson lower bound on a binomial probability.

    Parameters
    ----------
    k, n : int
        Successes and trials (counts), ``0 <= k <= n``, ``n >= 1``.
    alpha : float
        ``Pr[p < bound] <= alpha``.

    Returns
    -------
    float
        ``Beta(alpha; k, n - k + 1)`` quantile, 0 when ``k = 0``.

    References
    ----------
    Clopper & Pearson, Biometrika 26 (1934).
    """
    if k <= 0:
        return 0.0
    from scipy import stats  # lazily: `ldpplan --help` must not pay for scipy

    return float(stats.beta.ppf(alpha, k, n - k + 1))


def cp_upper(k: int, n: int, alpha: float) -> float:
    """One-sided Clopper-Pearson upper bound (``Beta(1 - alpha; k + 1, n - k)``, 1 when ``k = n``)."""
    if k >= n:
        return 1.0
    from scipy import stats

    return float(stats.beta.ppf(1.0 - alpha, k + 1, n - k))


def per_bound_alpha(confidence: float, tests: int) -> float:
    """Level of each Clopper-Pearson bound: ``(1 - confidence) / (2 tests)`` (Bonferroni, two bounds a test)."""
    return (1.0 - float(confidence)) / (2.0 * max(1, int(tests)))


def log_ratio_bound(k_num: int, k_den: int, trials: int, alpha: float) -> float:
    """Lower confidence bound (nats) on ``ln(p_num / p_den)`` from event counts out of ``trials`` each.

    Returns ``-inf`` when ``k_num = 0`` (nothing learned); the caller reports ``max(0, .)``.
    """
    lo = cp_lower(int(k_num), int(trials), alpha)
    hi = cp_upper(int(k_den), int(trials), alpha)
    if lo <= 0.0:
        return -math.inf
    return math.log(lo) - math.log(hi)


def expected_bound(p_num: float, p_den: float, trials: int, alpha: float) -> float:
    """:func:`log_ratio_bound` at the expected counts ``round(trials p)`` (the median bound, roughly)."""
    return log_ratio_bound(round(trials * p_num), round(trials * p_den), trials, alpha)


def default_trials(tests: Sequence[tuple[float, float, float]], confidence: float, work_per_trial: float,
                   target: float = TARGET_FRACTION) -> int:
    """Trials per input such that the most binding test's bound reaches ``target`` of its claim.

    The formula: with ``alpha' = (1 - confidence) / (2 m)`` over the ``m`` tests and the honest
    event probabilities ``(p, p')`` of each test (from the plan's numbers),

    ``T = min_tests min { T on the grid MIN_TRIALS * 1.25^j : ln(CP_lower(T p; T, alpha') /
    CP_upper(T p'; T, alpha')) >= target * claim }``,

    i.e. the Clopper-Pearson bound evaluated at the expected counts, clipped to
    ``[MIN_TRIALS, MAX_TRIALS]`` and to ``WORK_LIMIT / work_per_trial`` (the cost of one trial of
    every input: about one unit per output bit).

    Parameters
    ----------
    tests : sequence of (p_num, p_den, claim)
        Honest probabilities of each test's event (counts per trial) and its claim (nats).
    confidence : float
    work_per_trial : float
    target : float

    Returns
    -------
    int
    """
    alpha = per_bound_alpha(confidence, len(tests))
    cap = int(min(MAX_TRIALS, max(MIN_TRIALS, WORK_LIMIT / max(work_per_trial, 1e-9))))
    best = cap
    for p_num, p_den, claim in tests:
        if not (p_num > 0 and claim > 0 and math.isfinite(claim)):
            continue
        goal = target * claim
        if p_den > 0 and math.log(p_num / p_den) <= goal:
            continue
        t = float(MIN_TRIALS)
        while t <= best:
            if expected_bound(p_num, p_den, int(t), alpha) >= goal:
                best = int(t)
                break
            t *= 1.25
    return int(max(MIN_TRIALS, min(best, cap)))

"""Clopper-Pearson bounds, the audited lower bound on a log-ratio, and the default number of trials.

An audit test is an output event ``E`` and two inputs ``x``, ``x'``; the mechanism claims
``Pr[E | x] <= e^epsilon Pr[E | x']``. With ``k`` of ``T`` runs on ``x`` and ``k'`` of ``T`` runs
on ``x'`` in ``E``, a one-sided lower confidence bound on ``ln(Pr[E|x] / Pr[E|x'])`` is
``ln(p_lower(k) / p_upper(k'))`` with Clopper-Pearson bounds, each at level ``alpha / 2``
(union bound), and the audit applies Bonferroni over its ``m`` tests: ``alpha / (2 m)`` each.
"""
from __future__ import annotations

import functools
import math
from typing import Sequence

import numpy as np


__all__ = ["cp_lower", "cp_upper", "log_ratio_bound", "per_bound_alpha", "expected_bound", "default_trials",
           "DETECT_FACTOR", "POWER", "power", "reaches", "min_detectable_epsilon", "MIN_TRIALS", "MAX_TRIALS", "WORK_LIMIT"]

#: Default trials aim for ``min_detectable_epsilon <= DETECT_FACTOR * claim`` (power ``POWER``).
DETECT_FACTOR, POWER = 1.08, 0.95
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
    from scipy import stats  # deferred: scipy (`ldpplan --help` must not pay for scipy)

    return float(stats.beta.ppf(alpha, k, n - k + 1))


def cp_upper(k: int, n: int, alpha: float) -> float:
    """One-sided Clopper-Pearson upper bound (``Beta(1 - alpha; k + 1, n - k)``, 1 when ``k = n``)."""
    if k >= n:
        return 1.0
    from scipy import stats  # deferred: scipy

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


@functools.lru_cache(maxsize=64)
def _cached_default_trials(tests: tuple, alpha: float, work_per_trial: float, factor: float, level: float) -> int:
    return _default_trials(tests, alpha, work_per_trial, factor, level)


def default_trials(tests: Sequence[tuple[float, ...]], alpha: float, work_per_trial: float,
                   factor: float | None = None, level: float | None = None) -> int:
    """:func:`_default_trials` (cached: the same design gives the same number)."""
    return _cached_default_trials(tuple(map(tuple, tests)), float(alpha), float(work_per_trial),
                                  DETECT_FACTOR if factor is None else float(factor),
                                  POWER if level is None else float(level))


def _default_trials(tests: Sequence[tuple[float, ...]], alpha: float, work_per_trial: float,
                   factor: float = DETECT_FACTOR, level: float = POWER) -> int:
    """Trials per input such that the most sensitive test flags a leak to ``factor x claim``.

    The formula: over the grid ``T_j = MIN_TRIALS * 1.25^j`` (clipped to ``[MIN_TRIALS,
    MAX_TRIALS]`` and to ``WORK_LIMIT / work_per_trial``, the cost of one trial of every input:
    about one unit per output bit),

    ``T = min_tests min { T_j : power(factor * claim; p_den, T_j, alpha, claim) >= level }``,

    i.e. the fewest trials for which :func:`min_detectable_epsilon` of some test is at most
    ``factor * claim`` (binary search over the grid; :func:`power` is increasing in ``T``).

    Parameters
    ----------
    tests : sequence of (p_den, claim) or (p_den, claim, offset)
        Honest probability of each test's event on its denominator input, and its claim (nats);
        ``offset = ln(s)`` for a pooled test (:class:`..events.Test`), whose bounded log-ratio is
        ``offset + ln(p_num / p_den)``: its frequencies' ratio is held to ``claim - offset``, and
        the leak aimed at is at most halfway to the largest ratio the event can show
        (:func:`_target`; e.g. ``1.025 x claim`` for the PIE location RR).
    alpha : float
        Level of each Clopper-Pearson bound (:func:`per_bound_alpha` over every test of the run).
    work_per_trial : float
    factor, level : float

    Returns
    -------
    int
    """
    cap = int(min(MAX_TRIALS, max(MIN_TRIALS, WORK_LIMIT / max(work_per_trial, 1e-9))))
    grid = []
    t = float(MIN_TRIALS)
    while t < cap:
        grid.append(int(t))
        t *= 1.25
    grid.append(cap)
    best = cap
    for test in tests:
        p_den, claim = test[0], test[1]
        offset = test[2] if len(test) > 2 else 0.0  # a pooled test: ln(s) added to the frequencies' ratio
        if not (0.0 < p_den < 1.0 and 0.0 < claim and math.isfinite(claim)):
            continue
        target, raw = _target(p_den, claim, offset, factor), claim - offset
        if p_den * math.exp(target) > 1.0:
            continue
        lo, hi = 0, len(grid) - 1
        if grid[hi] >= best and power(target, p_den, best, alpha, raw) < level:
            continue
        while lo < hi:
            mid = (lo + hi) // 2
            if power(target, p_den, grid[mid], alpha, raw) >= level:
                hi = mid
            else:
                lo = mid + 1
        best = min(best, grid[lo])
    return int(max(MIN_TRIALS, min(best, cap)))


def _target(p_den: float, claim: float, offset: float, factor: float) -> float:
    """The leak (on the frequencies' log-ratio) the default trials aim to flag: ``factor x claim``;
    for a pooled test (``offset > 0``) at most halfway from the claim to the largest ratio its
    event can show, ``offset + ln(1 / p_den)`` (the mean numerator probability is at most 1)."""
    if offset > 0.0:
        return min(factor * claim, 0.5 * (claim + offset - math.log(p_den))) - offset
    return factor * claim - offset


def reaches(tests: Sequence[tuple[float, ...]], trials: int, alpha: float, factor: float | None = None,
            level: float | None = None) -> bool:
    """Some test of ``tests`` (as in :func:`default_trials`) flags a leak to ``factor x claim`` with
    probability ``>= level`` at ``trials`` (cached)."""
    return _cached_reaches(tuple(map(tuple, tests)), int(trials), float(alpha),
                           DETECT_FACTOR if factor is None else float(factor), POWER if level is None else float(level))


@functools.lru_cache(maxsize=64)
def _cached_reaches(tests: tuple, trials: int, alpha: float, factor: float, level: float) -> bool:
    for test in tests:
        p_den, claim = test[0], test[1]
        offset = test[2] if len(test) > 2 else 0.0
        if 0.0 < p_den < 1.0 and 0.0 < claim and math.isfinite(claim) and \
                power(_target(p_den, claim, offset, factor), p_den, trials, alpha, claim - offset) >= level:
            return True
    return False


class _Design:
    """A test's flagging region at ``trials``, ``alpha``, ``claim``, for the counts ``K'`` of ``p_den``.

    For every ``K'`` in the support of ``Bin(T, p_den)`` (mass outside ``1e-12`` dropped), the
    smallest numerator count ``k*(K')`` whose bound exceeds the claim: ``cp_lower(k) > e^claim
    cp_upper(K')``, i.e. (Clopper-Pearson duality) ``Pr[Bin(T, v) >= k] < alpha`` with ``v =
    e^claim cp_upper(K')`` (``T + 1``: none).
    """

    def __init__(self, p_den: float, trials: int, alpha: float, claim: float) -> None:
        from scipy import stats  # deferred: scipy

        lo, hi = np.asarray(stats.binom.ppf([1e-12, 1.0 - 1e-12], trials, p_den), dtype=float)
        k_den = np.arange(int(lo), int(hi) + 1)
        self.trials = trials
        self.weights = stats.binom.pmf(k_den, trials, p_den)
        upper = np.where(k_den >= trials, 1.0,
                         stats.beta.ppf(1.0 - alpha, k_den + 1, np.maximum(trials - k_den, 1)))
        level = np.exp(claim) * upper
        need = np.full(k_den.shape, trials + 1, dtype=np.int64)
        ok = level < 1.0
        if np.any(ok):
            v = level[ok]
            k = np.minimum(np.maximum(1, stats.binom.isf(alpha, trials, v).astype(np.int64) - 1), trials)
            # settle the edge exactly: the smallest k >= start with sf(k - 1) < alpha
            for _ in range(4):
                bad = (stats.binom.sf(k - 1, trials, v) >= alpha) & (k <= trials)
                if not np.any(bad):
                    break
                k = np.where(bad, k + 1, k)
            need[ok] = k
        self.need = need

    def power(self, p_num: float) -> float:
        from scipy import stats  # deferred: scipy

        return float(np.sum(self.weights * stats.binom.sf(self.need - 1, self.trials, p_num)))


def power(epsilon: float, p_den: float, trials: int, alpha: float, claim: float) -> float:
    """Probability that a test flags (bound > ``claim``) when its true log-ratio is ``epsilon``.

    The alternative keeps the denominator's event probability ``p_den`` (the honest one, from the
    plan's numbers) and raises the numerator's to ``p_den e^epsilon``: counts ``K ~ Bin(T, p_den
    e^epsilon)`` and ``K' ~ Bin(T, p_den)``, independent. Computed exactly: for every ``K'`` in
    the support (mass outside ``1e-12`` dropped) the smallest flagging ``K`` from the
    Clopper-Pearson bounds at level ``alpha`` each, then ``sum Pr[K'] Pr[K >= k*(K')]``.

    Parameters
    ----------
    epsilon : float
        True log-ratio of the test's event (nats).
    p_den : float
        Denominator probability of the event, in (0, 1).
    trials : int
        Runs on each input.
    alpha : float
        Level of each Clopper-Pearson bound (:func:`per_bound_alpha`).
    claim : float
        The test's claim (nats).

    Returns
    -------
    float
        Power in [0, 1] (0 when ``p_den e^epsilon > 1``).

    References
    ----------
    Clopper & Pearson, Biometrika 26 (1934).
    """
    p_num = p_den * math.exp(epsilon)
    if not 0.0 < p_den < 1.0 or p_num > 1.0 + 1e-9:
        return 0.0
    return _Design(p_den, int(trials), alpha, claim).power(min(p_num, 1.0))


@functools.lru_cache(maxsize=256)
def min_detectable_epsilon(p_den: float, trials: int, alpha: float, claim: float, level: float = 0.95,
                           tolerance: float = 1e-3) -> float:
    """Smallest true log-ratio that the test flags with probability ``>= level`` (:func:`power`).

    Bisection on ``epsilon`` over ``[claim, ln(1 / p_den)]`` (the power increases with epsilon)
    to ``tolerance`` nats, rounded up. ``inf`` when even ``p_num = 1`` is flagged less often.
    """
    if not 0.0 < p_den < 1.0 or not math.isfinite(claim):
        return math.inf
    top = -math.log(p_den)
    if top <= claim:
        return math.inf
    design = _Design(p_den, int(trials), alpha, claim)
    if design.power(1.0) < level:
        return math.inf
    lo, hi = claim, top
    while hi - lo > tolerance:
        mid = 0.5 * (lo + hi)
        if design.power(min(1.0, p_den * math.exp(mid))) >= level:
            hi = mid
        else:
            lo = mid
    return hi

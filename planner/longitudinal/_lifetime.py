"""What a memoized collection guarantees over a user's whole history: a sound bound and a lower bound.

**The model.** A history ``x = (x_1 .. x_T)`` holds at most ``V`` (``max_values``) distinct values.
Each distinct value ``u_j`` gets one permanent response ``s_j ~ P1(. | u_j)``; round ``t`` reports
``y_t ~ P2(. | s_{pi(t)})`` afresh, ``pi(t)`` the slot of the value held at ``t``. So

    P(y | x) = sum_s prod_j P1(s_j | u_j) prod_t P2(y_t | s_{pi(t)}).

**One value** (``V = 1``): the reports are post-processing of one permanent response, so any number of
rounds is ``epsilon_perm``-LDP (Erlingsson et al. 2014, Sec. 3, epsilon-infinity).

**Values that change are NOT covered by ``V x epsilon_perm``**: composition over the permanent responses
needs the map ``pi`` from rounds to permanent responses to be the same in both histories; the reports of
one permanent response are correlated and reveal whether and when the value changed (Ding, Kulkarni,
Yekhanin 2017, Sec. 3; Naor & Vexler 2020). The sound bound (:func:`lifetime_upper_exact`):

    epsilon_lifetime = min(T x epsilon_2, V x epsilon_perm + floor(T (V - 1) / V) x epsilon_2)   (V >= 2),

``epsilon_2`` the second round's own epsilon with respect to its input, the permanent response:
``ln(p2/q2)`` for L-GRR; ``k x ln max(p2/q2, (1-q2)/(1-p2))`` for the unary encodings (k bits). Proof
(a coupling over the sum above, term by term): pad both histories to ``V`` slots (an empty slot takes
any value at no cost). Match the slots of ``x`` to those of ``x'`` by a permutation ``sigma``. In each
term ``s``, the ratio of the two products is at most ``e^epsilon_perm`` per matched pair of non-empty
slots whose values differ (the ``P1`` factors) times ``e^epsilon_2`` per round ``t`` with
``sigma(pi(t)) != pi'(t)`` (the ``P2`` factors); a bound that holds term by term holds for the sums.
Among the ``V`` cyclic matchings each round is matched correctly by exactly one, so one of them misroutes
at most ``floor(T (V-1)/V)`` rounds; it changes at most ``V`` values. Matching the slots by value instead (a
value only one history holds gets a fresh, empty slot in the other) changes no value and misroutes exactly
the rounds whose values differ, at most ``T``: hence the ``T x epsilon_2`` term. ``V = 1`` gives
``epsilon_perm``.
Fewer rounds than ``T`` only lower the loss (marginalize the missing reports), so the bound covers every
history of at most ``rounds`` rounds and ``max_values`` values, changes at any rounds.

**Lower bound** (:func:`lifetime_lower`): the exact loss of concrete pairs (one history against one
whose value changes once, at every change round, and both with two values at one change round, over
the first ``min(T, LOWER_ROUNDS)`` rounds) at outputs constant on each stretch; computed in float64
log-space and lowered by a relative 1e-9 and 1e-10 nats per round, so it is a lower bound of the worst case. The enumeration in
``tests/_longitudinal_exact.py`` computes the exact worst case over every pair for small cases.

References
----------
.. [1] U. Erlingsson, V. Pihur, A. Korolova, "RAPPOR", ACM CCS 2014, Sec. 3 (longitudinal privacy).
.. [2] B. Ding, J. Kulkarni, S. Yekhanin, "Collecting telemetry data privately", NeurIPS 2017, Sec. 3
   (memoization leaks the change times; output perturbation).
.. [3] M. Joseph, A. Roth, J. Ullman, B. Waggoner, "Local differential privacy for evolving data",
   NeurIPS 2018 (privacy that degrades with the number of changes).
.. [4] M. Naor, N. Vexler, "Can two walk together: privacy enhancing methods and preventing tracking
   of users", FORC 2020 (RAPPOR's changes are detectable).
"""
from __future__ import annotations

import functools
import itertools
import math
from fractions import Fraction
from typing import Any

from .._exact import ceil_log, exact, float_up, to_decimal

__all__ = ["second_round_ratio", "epsilon_2_of", "lifetime_upper_exact", "lifetime_lower", "moved_rounds",
           "LOWER_ROUNDS", "LIFETIME_SOURCE"]

#: Rounds over which the lower bound's pairs are evaluated (a lower bound for any T >= this).
LOWER_ROUNDS = 24
LIFETIME_SOURCE = ("epsilon_lifetime: min(T x epsilon_2, V x epsilon_perm + floor(T (V-1)/V) x epsilon_2) (coupling of the permanent "
                   "responses over slot matchings; epsilon_2 the second round's epsilon on the permanent response; "
                   "ldpplan.planner.longitudinal._lifetime); one value: epsilon_perm (Erlingsson et al. 2014, Sec. 3); "
                   "changes are leaked (Ding, Kulkarni, Yekhanin 2017, Sec. 3)")


def second_round_ratio(mechanism: str, p2: Fraction, q2: Fraction) -> Fraction:
    """``e^(epsilon_2 / m)`` of one report's second round on its input (``m`` = k bits for unary, 1 for L-GRR)."""
    if mechanism == "l-grr":
        return p2 / q2
    return max(p2 / q2, (1 - q2) / (1 - p2))


def epsilon_2_of(mechanism: str, p2: Fraction, q2: Fraction, k: int) -> float:
    """The smallest float ``>=`` the second round's epsilon w.r.t. the permanent response (exact, 50 digits)."""
    per = ceil_log(second_round_ratio(mechanism, p2, q2))
    return per if mechanism == "l-grr" else float_up(to_decimal(k * exact(per)))


def moved_rounds(rounds: int, max_values: int) -> int:
    """``floor(T (V - 1) / V)``: rounds the best cyclic slot matching misroutes at most."""
    return (int(rounds) * (int(max_values) - 1)) // int(max_values)


def lifetime_upper_exact(max_values: int, rounds: int, epsilon_perm: float, epsilon_2: float) -> float:
    """The smallest float ``>= min(T epsilon_2, V epsilon_perm + floor(T (V-1)/V) epsilon_2)`` of the (rounded-up)
    claims; ``epsilon_perm`` for ``V = 1``."""
    value = int(max_values) * exact(epsilon_perm) + moved_rounds(rounds, max_values) * exact(epsilon_2)
    if int(max_values) >= 2:
        value = min(value, int(rounds) * exact(epsilon_2))
    return float_up(to_decimal(value))


def _log_slot(counts: dict, n: int, value: int, k: int, first: tuple[float, float], second: tuple[float, float],
              unary: bool) -> float:
    """``ln f(y_S; u)`` of one slot of ``n`` rounds; ``counts`` of each reported symbol (GRR) / ones (unary)."""
    p1, q1 = first
    p2, q2 = second
    if unary:  # one bit position; value = the slot's label (1: the position is the slot's value)
        c = counts.get(1, 0)
        pi = p1 if value else q1
        a = math.log(pi) + c * math.log(p2) + (n - c) * math.log1p(-p2)
        b = math.log1p(-pi) + c * math.log(q2) + (n - c) * math.log1p(-q2)
        return max(a, b) + math.log1p(math.exp(-abs(a - b)))
    # GRR: f = q2^n [ (p1 - q1) r^c_u + q1 sum_s r^c_s ], r = p2/q2; symbols without reports give r^0 = 1
    lr = math.log(p2) - math.log(q2)
    terms = [c * lr for c in counts.values()] + [math.log(p1 - q1) - math.log(q1) + counts.get(value, 0) * lr]
    top = max(terms)
    rest = sum(math.exp(t - top) for t in terms) + (k - len(counts)) * math.exp(-top)
    return n * math.log(q2) + math.log(q1) + top + math.log(rest)


def _log_history(hist, cells, out, k, first, second, unary: bool, pos: int = 0) -> float:
    """``ln P(y | hist)``, ``hist`` the value of each cell, ``y`` constant ``out[c]`` on cell ``c``."""
    total = 0.0
    for g in set(hist):
        members = [c for c in range(len(cells)) if hist[c] == g and cells[c]]
        n = sum(cells[c] for c in members)
        if not n:
            continue
        counts: dict[Any, Any]
        if unary:
            counts = {1: sum(cells[c] for c in members if out[c])}
            total += _log_slot(counts, n, int(g == pos), 2, first, second, True)
        else:
            counts = {}
            for c in members:
                counts[out[c]] = counts.get(out[c], 0) + cells[c]
            total += _log_slot(counts, n, g, k, first, second, False)
    return total


def _pair(log_history, outs, x, x2, k, unary: bool) -> float:
    """Loss of the pair at outputs constant per cell (both directions; unary: summed over bit positions);
    ``log_history(hist, out, pos)`` is :func:`_log_history` at the cells of the pair."""
    if not unary:
        return max(abs(log_history(x, o, 0) - log_history(x2, o, 0)) for o in outs)
    positions = [(pos, 1) for pos in range(min(k, 4))] + ([(-1, k - 4)] if k > 4 else [])
    best = 0.0
    for sign in (1.0, -1.0):
        total = 0.0
        for pos, mult in positions:
            total += mult * max(sign * (log_history(x, o, pos) - log_history(x2, o, pos)) for o in outs)
        best = max(best, total)
    return best


@functools.lru_cache(maxsize=64)  # pure in hashable arguments; verify calls it for every plan it reads
def lifetime_lower(mechanism: str, k: int, rounds: int, max_values: int,
                   first: tuple[float, float], second: tuple[float, float]) -> float:
    """A lower bound of the worst-case lifetime loss: exact losses of concrete pairs (see the module doc).

    Parameters
    ----------
    mechanism : str
        Plan mechanism (``"l-grr"`` or a unary encoding).
    k, rounds, max_values : int
    first, second : (float, float)
        ``(p1, q1)`` and ``(p2, q2)`` (for L-GRR, ``q = (1 - p)/(k - 1)``).

    Returns
    -------
    float
        Nats; ``0 <`` value ``<=`` the worst case over the spec's pairs of histories.
    """
    unary = mechanism != "l-grr"
    t = min(int(rounds), LOWER_ROUNDS)
    values = range(min(k, 4))
    hists = [h for h in itertools.product(values, repeat=2) if len(set(h)) <= max_values]
    xs = [h for h in hists if h[0] == 0 and h[1] in (0, 1)]
    outs = list(itertools.product((0, 1) if unary else range(min(k, 5)), repeat=2))
    best = 0.0
    for m in range(0, t + 1):
        cells = (t - m, m)
        memo: dict[tuple, float] = {}  # every pair shares the histories' log-likelihoods at these cells

        def log_history(hist, out, pos, cells=cells, memo=memo):
            key = (hist, out, pos)
            if key not in memo:
                memo[key] = _log_history(hist, cells, out, k, first, second, unary, pos)
            return memo[key]

        for x in xs:
            for x2 in hists:
                best = max(best, _pair(log_history, outs, x, x2, k, unary))
    # float64 log-likelihoods of at most ~10^3 nats: absolute error well below 10^-10 per round
    return max(0.0, best * (1.0 - 1e-9) - 1e-10 * t)

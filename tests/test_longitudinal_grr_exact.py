"""The exact L-GRR worst case (tests/_grr_exact_worstcase.py) against brute force, and the plans' lifetime claims.

The method reduces the maximum over ``k^T`` outputs to outputs constant on the (at most four) cells of a pair
(a proof in the helper's module doc); here it is checked against the brute force over every output and every
pair (small T, k in {2, 3, 10}), against the count enumeration of binary channels (k = 2, larger T), against
random non-constant outputs, and its maximizer is re-evaluated by literal enumeration of the permanent responses.
Then the plans' ``epsilon_lifetime`` (sound bound) and ``epsilon_lifetime_lower`` must bracket it for the daily
example and an L-GRR k = 10 sweep up to 30 rounds.
"""
from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest

import ldpplan
from ldpplan.planner.longitudinal import EXAMPLES

from _grr_exact_worstcase import grr_exact_worst, grr_pair_loss_exact
from _longitudinal_exact import _literal_prob, binary_worst, grr_worst_bruteforce

SWEEP = [(4.0, 1.0), (2.0, 0.5), (1.0, 0.9), (6.0, 2.0)]  # (epsilon_perm, epsilon_1)


def _ln(ratio: Fraction) -> float:
    return float(mpmath.log(mpmath.mpf(ratio.numerator)) - mpmath.log(mpmath.mpf(ratio.denominator)))


def _literal_ratio(x, x2, y, k, p1, p2) -> Fraction:
    """``P(y|x)/P(y|x2)`` by enumerating the permanent responses (the helper of _longitudinal_exact)."""
    p1, p2 = Fraction(p1), Fraction(p2)
    q1, q2 = (1 - p1) / (k - 1), (1 - p2) / (k - 1)
    first = lambda s, u: p1 if s == u else q1  # noqa: E731
    second = lambda yt, s: p2 if yt == s else q2  # noqa: E731
    return _literal_prob(x, y, first, second, range(k)) / _literal_prob(x2, y, first, second, range(k))


@pytest.mark.parametrize("k", [2, 3, 10])
@pytest.mark.parametrize("rounds", [1, 2, 3, pytest.param(4, marks=pytest.mark.slow)])
@pytest.mark.parametrize("values", [1, 2])
@pytest.mark.parametrize("p1, p2", [(0.7, 0.6), (0.9, 0.55), (0.45, 0.95)])
def test_reduction_equals_brute_force_over_every_output(k, rounds, values, p1, p2):
    exact = grr_exact_worst(rounds, k, p1, p2, max_values=values)
    assert exact.loss == pytest.approx(grr_worst_bruteforce(rounds, k, p1, p2, max_values=values), rel=1e-12)


@pytest.mark.parametrize("k, rounds", [(3, 6), (4, 5)])  # k = 4: two new values in x' are possible
@pytest.mark.parametrize("p1, p2", [(0.7, 0.6), (0.9, 0.55), (0.45, 0.95)])
def test_reduction_equals_brute_force_more_rounds(k, rounds, p1, p2):
    exact = grr_exact_worst(rounds, k, p1, p2)
    assert exact.loss == pytest.approx(grr_worst_bruteforce(rounds, k, p1, p2), rel=1e-12)


@pytest.mark.parametrize("rounds", [6, pytest.param(12, marks=pytest.mark.slow)])
@pytest.mark.parametrize("values", [1, 2])
def test_reduction_equals_binary_count_enumeration(rounds, values):
    p1, p2 = 0.8, 0.7  # k = 2: L-GRR is a binary memoized channel, enumerated by ones per cell
    exact = grr_exact_worst(rounds, 2, p1, p2, max_values=values)
    counts = binary_worst(rounds, 2, p1, 1 - p1, p2, 1 - p2, unary=False, max_values=values)
    assert exact.loss == pytest.approx(counts.loss, rel=1e-12)


def test_no_random_output_beats_the_constant_per_cell_maximum():
    rng = np.random.default_rng(26)
    k, rounds, p1, p2 = 10, 8, 0.6, 0.5
    exact = grr_exact_worst(rounds, k, p1, p2)
    worst = 0.0
    for _ in range(300):
        x = tuple(rng.integers(0, 2, rounds))
        x2 = tuple(rng.choice([0, 1, 2, 3], 2, replace=False)[rng.integers(0, 2, rounds)])
        y = tuple(rng.choice(rng.choice(k, 3, replace=False), rounds))
        worst = max(worst, abs(_ln(grr_pair_loss_exact(x, x2, y, k, p1, p2))))
    assert 0 < worst <= exact.loss
    # the maximizer itself, re-evaluated by summing over the permanent responses literally
    assert _ln(_literal_ratio(exact.x, exact.x2, exact.y, k, p1, p2)) == pytest.approx(exact.loss, rel=1e-12)


def _lgrr_plan(epsilon_perm, epsilon_1, rounds, values):
    return ldpplan.planner.make_plan({"mechanism": "l-grr", "domain": 10, "users": 1000, "epsilon_perm": epsilon_perm,
                                      "epsilon_1": epsilon_1, "rounds": rounds, "max_values": values})


def _bracket(plan):
    gu, p = plan["guarantee"], plan["params"]
    exact = grr_exact_worst(gu["rounds"], p["domain_size"], p["p1"], p["p2"], max_values=gu["max_values"])
    assert gu["epsilon_lifetime_lower"] <= exact.loss <= gu["epsilon_lifetime"]
    return exact


@pytest.mark.slow
def test_daily_example_exact_worst_case_is_within_the_claims():
    plan = ldpplan.planner.make_plan(EXAMPLES["longitudinal-daily"])
    p1, p2 = plan["params"]["p1"], plan["params"]["p2"]
    exact = _bracket(plan)
    # 17.746 nats: x = a^10 b^10 against x' = c^5 d^5 c^5 d^5 at y = x (bound 19.33, lower 14.49)
    assert exact.loss == pytest.approx(17.745980, abs=1e-5)
    assert _ln(_literal_ratio(exact.x, exact.x2, exact.y, 10, p1, p2)) == pytest.approx(exact.loss, rel=1e-12)
    issue_pair = (0,) * 8 + (1,) * 12, (0,) * 19 + (1,)  # the issue's pair, y = the first history
    assert _ln(grr_pair_loss_exact(*issue_pair, issue_pair[0], 10, p1, p2)) == pytest.approx(11.9788, abs=1e-4)


def _sweep_cases():
    """Fast tier: every one-value case at 10 rounds and one two-value spec; the rest (2-7 s each) are slow."""
    for rounds in (10, 20, 30):
        for values in (1, 2):
            for spec in SWEEP:
                fast = rounds == 10 and (values == 1 or spec == SWEEP[0])
                yield pytest.param(*spec, rounds, values, marks=() if fast else pytest.mark.slow)


@pytest.mark.parametrize("epsilon_perm, epsilon_1, rounds, values", list(_sweep_cases()))
def test_l_grr_k10_sweep_claims_bracket_the_exact_worst_case(epsilon_perm, epsilon_1, rounds, values):
    plan = _lgrr_plan(epsilon_perm, epsilon_1, rounds, values)
    exact = _bracket(plan)
    if values == 1:  # one value: the reports are post-processing of one permanent response
        assert exact.loss <= plan["guarantee"]["epsilon_perm"]

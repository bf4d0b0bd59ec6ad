"""Speed of the ULDP runtime (uRR, uRAP) and of the EM reconstruction.

Usage: python benchmarks/bench_uldp.py [--n 1000000] [--repeat 5]

Reports medians over ``--repeat`` runs (wall clock, seconds) for
* perturbing n users (|X| = 400, |X_S| = 76, epsilon = 1: the paper's US Census setting),
* the empirical estimate and emp+thr from the reports,
* EM reconstruction (uRR: counts only; uRAP: grouped likelihood) with its iteration count,
and compares with the target of the landscape note (perturb + estimate of 10^6 users in
well under a second for RR-type mechanisms).
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from ldpplan.mechanisms.uldp import UtilityOptimizedRAPPOR, UtilityOptimizedRR
from ldpplan.planner.uldp import grid_urap, grid_urr


def _median(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--n-urap", type=int, default=100_000, help="users for uRAP (reports are n x |X| bits)")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    k, ks, eps = 400, 76, 1.0
    sens = np.arange(ks)
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(k))
    urr = UtilityOptimizedRR(k, sens, **grid_urr(eps, ks))
    urap = UtilityOptimizedRAPPOR(k, sens, **grid_urap(eps))
    rows = []
    x = rng.choice(k, size=args.n, p=p)
    t, y = _median(lambda: urr.perturb(x, rng), args.repeat)
    rows.append(("uRR perturb", args.n, t))
    t, _ = _median(lambda: urr.estimate(y, "empirical"), args.repeat)
    rows.append(("uRR estimate emp", args.n, t))
    t, _ = _median(lambda: urr.estimate(y, "threshold"), args.repeat)
    rows.append(("uRR estimate emp+thr", args.n, t))
    t, res = _median(lambda: urr.estimate_em(y, tol=1e-8), max(1, args.repeat // 2))
    rows.append((f"uRR EM (tol 1e-8, {res.iterations} it, conv={res.converged})", args.n, t))
    xr = x[: args.n_urap]
    t, yr = _median(lambda: urap.perturb(xr, rng), args.repeat)
    rows.append(("uRAP perturb", xr.size, t))
    t, _ = _median(lambda: urap.estimate(yr, "threshold"), args.repeat)
    rows.append(("uRAP estimate emp+thr", xr.size, t))
    t, res = _median(lambda: urap.estimate_em(yr, tol=1e-6, max_iter=2000), 1)
    rows.append((f"uRAP EM (tol 1e-6, {res.iterations} it, conv={res.converged})", xr.size, t))
    print(f"|X| = {k}, |X_S| = {ks}, epsilon = {eps}; medians of {args.repeat} runs")
    print(f"{'step':58s} {'users':>9s} {'seconds':>9s} {'users/s':>12s}")
    for name, n, t in rows:
        print(f"{name:58s} {n:9d} {t:9.4f} {n / t:12.3g}")
    target = 1.0
    total = rows[0][2] + rows[1][2]
    print(f"uRR perturb + estimate of {args.n} users: {total:.3f} s (target < {target} s): "
          f"{'OK' if total < target else 'MISSED'}")


if __name__ == "__main__":
    main()

"""Speed of the ULDP runtime (uRR, uRAP) and of the EM reconstruction.

Usage: python benchmarks/bench_uldp.py [--n 1000000] [--repeat 5]

Reports medians over ``--repeat`` runs (wall clock, seconds) for
* perturbing n users (|X| = 400, |X_S| = 76, epsilon = 1: the paper's US Census setting),
* the empirical estimate and emp+thr from the reports,
* EM reconstruction (uRR: the exact water-filling MLE from the counts; uRAP: the full-report
  MLE from the reports with its EM evaluations, and the exact per-bit composite MLE "em-bits"
  from the aggregate),
* one trial of ``ldpplan simulate`` of the GSS uRR example in aggregate mode (``--gss PATH``),
and compares with the targets (perturb + estimate of 10^6 users in well under a second for
RR-type mechanisms; about 2 s per simulate trial).
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from ldpplan.mechanisms.uldp import UtilityOptimizedRAPPOR, UtilityOptimizedRR
from ldpplan.planner.uldp._numbers import grid_urap, grid_urr


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
    ap.add_argument("--gss", default=None, help="gss_vocab.csv: also time one simulate trial (target about 2 s)")
    args = ap.parse_args()
    k, ks, eps = 400, 76, 1.0
    sens = np.arange(ks)
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(k))
    urr = UtilityOptimizedRR(domain=k, sensitive=sens, **grid_urr(eps, ks))
    urap = UtilityOptimizedRAPPOR(domain=k, sensitive=sens, **grid_urap(eps, ks, k - ks))
    rows = []
    x = rng.choice(k, size=args.n, p=p)
    t, y = _median(lambda: urr.perturb(x, rng), args.repeat)
    rows.append(("uRR perturb", args.n, t))
    t, agg = _median(lambda: urr.aggregate(y), args.repeat)
    rows.append(("uRR aggregate", args.n, t))
    t, _ = _median(lambda: urr.estimate(agg, "empirical"), args.repeat)
    rows.append(("uRR estimate emp", args.n, t))
    t, _ = _median(lambda: urr.estimate(agg, "threshold"), args.repeat)
    rows.append(("uRR estimate emp+thr", args.n, t))
    t, res = _median(lambda: urr.estimate(agg, "em"), args.repeat)
    rows.append(("uRR MLE (\"em\", water-filling, exact)", args.n, t))
    xr = x[: args.n_urap]
    t, yr = _median(lambda: urap.perturb(xr, rng), args.repeat)
    rows.append(("uRAP perturb", xr.size, t))
    t, _ = _median(lambda: urap.estimate(yr, "threshold"), args.repeat)
    rows.append(("uRAP estimate emp+thr", xr.size, t))
    t, res = _median(lambda: urap.estimate(yr, "em"), 1)
    rows.append((f"uRAP full-report MLE (\"em\", Newton, {res.iterations} it., gap {res.optimality_gap:.0e} nats)", xr.size, t))
    t, res = _median(lambda: urap.estimate(urap.aggregate(yr), "em-bits"), args.repeat)
    rows.append(("uRAP per-bit composite MLE from the aggregate (\"em-bits\", exact)", xr.size, t))
    if args.gss:
        from ldpplan.planner.uldp import FAMILY, EXAMPLES
        from ldpplan.planner._report import SimulateOptions

        plan = FAMILY.plan(EXAMPLES["uldp-urr"])
        t, _ = _median(lambda: FAMILY.simulate(plan, SimulateOptions(data=args.gss, trials=1, seed=0)), 1)
        rows.append(("simulate GSS uRR example, 1 trial (target ~2 s)", 28629, t))
    print(f"|X| = {k}, |X_S| = {ks}, epsilon = {eps}; medians of {args.repeat} runs")
    print(f"{'step':58s} {'users':>9s} {'seconds':>9s} {'users/s':>12s}")
    for name, n, t in rows:
        print(f"{name:58s} {n:9d} {t:9.4f} {n / t:12.3g}")
    target = 1.0
    total = rows[0][2] + rows[1][2] + rows[2][2]
    print(f"uRR perturb + estimate of {args.n} users: {total:.3f} s (target < {target} s): "
          f"{'OK' if total < target else 'MISSED'}")


if __name__ == "__main__":
    main()

"""PCKV runtime and planner timings (medians of repeated runs, sizes stated).

Run: ``python benchmarks/bench_pckv.py [--repeats 5]``. Targets (issue 3 / landscape note):

* PCKV-UE perturb + estimate, n = 10^6 users, d = 100, L = 1: <= 2 s
  (the author's MATLAB code and the Python libraries loop over users in Python);
* aggregate simulation of the same setting: well under 1 s per trial;
* planning (closed form, numeric allocation, L = "auto") in about a second;
* PCKV-UE perturb + estimate at d = 10^4, L = 4: peak RSS under 3 GB at n = 10^6 (issue 11;
  reports packed 2 bits per position). ``--rss`` measures it in a fresh subprocess per size
  (``resource.getrusage(RUSAGE_SELF).ru_maxrss`` at the end of the child), next to the
  packed reports' own size.

Run only the memory table: ``python benchmarks/bench_pckv.py --rss 100000 200000 1000000``.
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

from ldpplan import mechanisms
from ldpplan.mechanisms.pckv import KeyValueUsers
from ldpplan.planner.pckv._baselines import KVUE, PrivKVM
from ldpplan.planner import api
from ldpplan.planner.pckv.simulate import aggregate_counts


def median_time(fn, repeats):
    runs = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t)
    return statistics.median(runs), runs


RSS_TARGET_GB = 3.0  # issue 11: n = 1e6, d = 1e4, L = 4


def rss_child(n: int, d: int = 10_000, L: int = 4) -> dict:
    """Perturb + estimate ``n`` users holding 4 pairs each; report time and peak RSS (this process)."""
    rng = np.random.default_rng(0)
    indptr = np.arange(0, 4 * n + 1, 4, dtype=np.int64)
    keys = (np.repeat(rng.integers(0, d, n), 4) + np.tile(np.arange(4), n)) % d
    users = KeyValueUsers(indptr, keys, rng.uniform(-1, 1, 4 * n))
    plan = api.make_plan({"mechanism": "pckv-ue", "epsilon": 1.0, "domain": d, "padding_length": L})
    mech = mechanisms.load(plan)
    t0 = time.perf_counter()
    reports = mech.perturb(users, rng=rng)
    t1 = time.perf_counter()
    est = mech.estimate(reports)
    t2 = time.perf_counter()
    assert est.frequency.shape == (d,)
    return {"n": n, "d": d, "L": L, "perturb_s": t1 - t0, "estimate_s": t2 - t1,
            "report_bytes": int(sum(v.nbytes for v in reports.columns.values())),
            "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}


def rss_table(sizes: list[int]) -> None:
    """One subprocess per size (peak RSS is per process); prints Markdown rows."""
    print("| workload | ldpplan peak RSS | packed reports | perturb + estimate | target | met |")
    print("|---|---|---|---|---|---|")
    for n in sizes:
        out = subprocess.run([sys.executable, __file__, "--rss-child", str(n)], capture_output=True, text=True)
        if out.returncode:
            print(f"| PCKV-UE n={n:,} | failed: {out.stderr.strip().splitlines()[-1:]} | | | | |")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        gb = r["peak_rss_bytes"] / 1e9
        target = f"< {RSS_TARGET_GB:g} GB at n = 1e6" if n == 1_000_000 else "(scaling)"
        met = ("met" if gb < RSS_TARGET_GB else "missed") if n == 1_000_000 else ""
        print(f"| PCKV-UE n={n:,}, d={r['d']:,}, L={r['L']} | {gb:.2f} GB | {r['report_bytes'] / 1e9:.2f} GB | "
              f"{r['perturb_s'] + r['estimate_s']:.1f} s ({r['perturb_s']:.1f} + {r['estimate_s']:.1f}) | "
              f"{target} | {met} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--users", type=int, default=1_000_000)
    ap.add_argument("--rss", type=int, nargs="*", help="only the peak-RSS table at these n (d = 1e4, L = 4)")
    ap.add_argument("--rss-child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.rss_child:
        print(json.dumps(rss_child(args.rss_child)))
        return
    if args.rss is not None:
        rss_table(args.rss or [100_000, 200_000, 1_000_000])
        return
    n, d, L, R = args.users, 100, 1, args.repeats
    rng = np.random.default_rng(0)
    keys = rng.integers(0, d, size=n)
    users = KeyValueUsers(np.arange(n + 1, dtype=np.int64), keys, rng.uniform(-1, 1, size=n))
    rows = []
    for mech_name in ("pckv-ue", "pckv-grr"):
        plan = api.make_plan({"mechanism": mech_name, "epsilon": 1.0, "domain": d, "padding_length": L})
        mech = mechanisms.load(plan)
        holder = {}
        t_p, _ = median_time(lambda: holder.__setitem__("r", mech.perturb(users, rng=rng)), R)
        t_e, _ = median_time(lambda: mech.estimate(holder["r"]), R)
        t_a, _ = median_time(lambda: aggregate_counts(mech, users, rng), R)
        rows.append((mech_name, t_p, t_e, t_p + t_e, t_a))
    print(f"PCKV runtime, n={n:,} users, d={d}, L={L}, epsilon=1 (median of {R} runs, seconds)")
    print(f"{'mechanism':<10} {'perturb':>9} {'estimate':>9} {'total':>9} {'aggregate-sim':>14}   target total <= 2 s")
    for m, tp, te, tt, ta in rows:
        print(f"{m:<10} {tp:9.3f} {te:9.3f} {tt:9.3f} {ta:14.3f}   {'OK' if tt <= 2.0 else 'MISSED'}")
    # sequence-of-pairs input path (includes building the CSR arrays from Python objects)
    small = [(np.array([k]), np.array([0.5])) for k in keys[:100_000]]
    plan = api.make_plan({"mechanism": "pckv-ue", "epsilon": 1.0, "domain": d, "padding_length": L})
    mech = mechanisms.load(plan)
    t_seq, _ = median_time(lambda: mech.perturb(small, rng=rng), R)
    print(f"pckv-ue perturb from a Python list of 100,000 (keys, values) pairs: {t_seq:.3f} s")
    print()
    print("Comparison baselines (ldpplan.planner.pckv._baselines), same users (median seconds):")
    for name, base in (("PrivKVM (c=1)", PrivKVM(1.0, d)), ("PrivKVM (c=3, collect)", PrivKVM(1.0, d, rounds=3)),
                       ("KVUE", KVUE(1.0, d))):
        run = ((lambda b=base: b.collect(users, rng)) if getattr(base, "rounds", 1) > 1
               else (lambda b=base: b.estimate(b.aggregate(b.perturb(users, rng)))))
        t, _ = median_time(run, R)
        print(f"  {name:<24} perturb + aggregate + estimate {t:.3f}")
    print()
    print("Planning (median seconds):")
    specs = {
        "closed form (Lemma 2), d=100": {"mechanism": "pckv-ue", "epsilon": 1.0, "domain": 100},
        "numeric allocation, d=100": {"mechanism": "pckv", "epsilon": 1.0, "domain": 100, "allocation": "numeric"},
        "L=auto, set-size distribution, d=1000": {"mechanism": "pckv", "epsilon": 2.0, "domain": 1000, "padding_length": "auto",
                                                  "set_size_distribution": {"1": 0.3, "2": 0.3, "5": 0.2, "20": 0.2}},
        "private L (phase-1 counts, max=64), d=1000": {
            "mechanism": "pckv", "epsilon": 2.0, "domain": 1000, "users": 100_000,
            "padding_length": {"private": {"epsilon": 1.0, "user_share": 0.1, "max": 64,
                                           "counts": [150] * 65}}},
    }
    for name, spec in specs.items():
        t, _ = median_time(lambda: api.make_plan(spec), R)
        print(f"  {name:<42} {t:.3f}")


if __name__ == "__main__":
    main()

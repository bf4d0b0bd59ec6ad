"""Audit at default trials on every example (issue 17's table): bound / claim, power, seconds.

Usage: ``python benchmarks/bench_audit.py [--seed S] [--markdown]``, or
``python benchmarks/bench_audit.py --sweep 20 [--examples a,b]``: how many of 20 seeded audits at
default trials find each honest example consistent (issue 17's "20 of 20"), with seconds per audit. Examples that need a data
file are run when ``LDPPLAN_DATA_DIR`` (or the default data folder) has it, else listed as skipped.
One extra row, ``pckv-ue-L2``, audits a PCKV-UE plan with padding length 2 (the embedded PCKV-UE
example has L = 1; ``pckv-movielens`` is PCKV-GRR): the set-input events of Theorem 2.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np


#: PCKV-UE with L = 2 (also in tests/test_audit_search.py).
PCKV_UE_L2 = {"mechanism": "pckv-ue", "epsilon": 1.0, "domain": 100, "padding_length": 2, "allocation": "optimized",
              "users": 1000000}


def rows(seed: int, only: set[str] | None = None) -> list[list[str]]:
    from ldpplan.planner import audit
    from ldpplan.planner.auditing import planned_trials

    out = []
    for name, build in _cases(only):
        try:
            plan = build()
        except Exception as exc:  # noqa: BLE001 - a missing data file: say so, keep going
            out.append([name, "-", "-", "-", "-", "-", f"skipped ({type(exc).__name__})"])
            continue
        planned_trials(plan)  # warm the (cached) design: the seconds are the runs
        start = time.perf_counter()
        result = audit(plan, rng=np.random.default_rng(seed))
        seconds = time.perf_counter() - start
        print(name, f"{seconds:.1f} s", flush=True, file=sys.stderr)
        out.append([name, plan["mechanism"], f"{result.trials:,}", f"{result.explored:,} x {result.explore_trials:,}",
                    f"{result.epsilon_lower_bound / result.epsilon_claimed:.3f}",
                    f"{result.min_detectable_epsilon / result.epsilon_claimed:.3f}",
                    f"{seconds:.2f}" + ("" if result.consistent else " LEAK")])
    return out


def _cases(only: set[str] | None):
    from ldpplan.planner import make_plan
    from ldpplan.planner.families import all_examples

    cases = [(name, lambda family=family, spec=spec: family.plan(spec)) for name, (family, spec) in all_examples().items()]
    cases.append(("pckv-ue-L2", lambda: make_plan(PCKV_UE_L2)))
    return [(name, build) for name, build in cases if only is None or name in only]


def sweep(seeds: int, only: set[str] | None) -> list[list[str]]:
    """Each example audited at default trials under ``seeds`` seeds: consistent count, median seconds."""
    from ldpplan.planner import audit

    out = []
    for name, build in _cases(only):
        try:
            plan = build()
        except Exception as exc:  # noqa: BLE001 - a missing data file: say so, keep going
            out.append([name, "-", f"skipped ({type(exc).__name__})", "-"])
            continue
        consistent, seconds = 0, []
        for seed in range(seeds):
            start = time.perf_counter()
            consistent += bool(audit(plan, rng=np.random.default_rng(seed)).consistent)
            seconds.append(time.perf_counter() - start)
        print(name, f"{consistent}/{seeds}", flush=True, file=sys.stderr)
        out.append([name, plan["mechanism"], f"{consistent}/{seeds}", f"{float(np.median(seconds)):.2f}"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--sweep", type=int, default=0, help="audit each example under this many seeds")
    parser.add_argument("--examples", default="", help="comma-separated example names (default: all)")
    args = parser.parse_args()
    only = set(args.examples.split(",")) if args.examples else None
    if args.sweep:
        head, table = ["example", "mechanism", "consistent", "median seconds"], sweep(args.sweep, only)
    else:
        head = ["example", "mechanism", "trials", "screened", "bound/claim", "min_detectable/claim", "seconds"]
        table = rows(args.seed, only)
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for row in table:
            print("| " + " | ".join(row) + " |")
    else:
        widths = [max(len(r[i]) for r in table + [head]) for i in range(len(head))]
        for row in [head] + table:
            print("  ".join(c.rjust(w) for c, w in zip(row, widths)))


if __name__ == "__main__":
    main()

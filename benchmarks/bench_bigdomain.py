"""Peak memory of big-domain PIE plans (issue 27, point 2): plan, verify, load and perturb 10^6 users.

Run::

    python benchmarks/bench_bigdomain.py              # k-RR |X| = 10^8 and GLH |X| = 2^40, 10^6 users
    python benchmarks/bench_bigdomain.py --users 100000

Each case runs in a fresh child process (``python -c``) that builds the plan from its spec
(:func:`ldpplan.planner.pie.plan.build_plan`), verifies it exactly, loads it with the runtime
(``ldpplan.mechanisms.load``, which re-checks every claim) and perturbs ``--users`` items drawn
over the whole domain; the figure is the child's peak resident set size
(the child's ``resource.getrusage(RUSAGE_SELF).ru_maxrss``, KiB on Linux), with the wall time of each step.
The same child then checks that ``--max-memory`` refuses the full-domain estimate before it
allocates, and estimates 3 items from the reports (``estimate_items``) in memory independent of |X|.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CASES = {
    "k-RR, \\|X\\| = 10^8": {"mechanism": "rr", "domain": 10**8, "target": {"epsilon": 20.0}},
    "GLH, \\|X\\| = 2^40": {"mechanism": "glh", "domain": 2**40, "target": {"bayes_error": 0.5}},
}

CHILD = r"""
import json, resource, time
import numpy as np
from ldpplan import mechanisms
from ldpplan.planner.families import family_of_plan
from ldpplan.planner.pie.plan import build_plan
from ldpplan.planner._memory import check_budget, DEFAULT_MAX_MEMORY, needed_bytes
from ldpplan.planner.errors import SpecError
raw = json.loads({raw!r})
t = {{}}
t0 = time.perf_counter(); plan = build_plan(raw); t["plan"] = time.perf_counter() - t0
t0 = time.perf_counter(); v = family_of_plan(plan).verify(plan); t["verify"] = time.perf_counter() - t0
assert v.holds, v.message
plan["verification"] = {{"holds": True, "message": v.message}}
t0 = time.perf_counter(); mech = mechanisms.load(plan); t["load"] = time.perf_counter() - t0
rng = np.random.default_rng(1)
x = rng.integers(0, plan["domain"]["size"], size=raw["users"], dtype=np.int64)
t0 = time.perf_counter(); reports = mech.perturb(x, rng=rng); t["perturb"] = time.perf_counter() - t0
try:
    check_budget(plan, "estimate", DEFAULT_MAX_MEMORY)
    refused = False
except SpecError:
    refused = True
t0 = time.perf_counter(); est = mech.estimate_items([reports], x[:3]); t["estimate_items(3)"] = time.perf_counter() - t0
print(json.dumps({{"times": t, "refused_full_estimate": refused, "full_estimate_bytes": needed_bytes(plan, "estimate"),
                  "mechanism": plan["mechanism"], "g": plan["params"].get("g"),
                  "peak_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}}))
"""


def run_case(raw: dict) -> dict:
    """Run one case in a child process; return its timings and peak RSS (MiB)."""
    out = subprocess.run([sys.executable, "-c", CHILD.format(raw=json.dumps(raw))], check=True, capture_output=True,
                         text=True, cwd=ROOT)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["peak_rss_mib"] = result["peak_rss_kib"] / 1024.0  # the child's own peak (Linux: KiB)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=10**6)
    args = parser.parse_args()
    print(f"| case | mechanism | users | plan s | verify s | load s | perturb s | estimate_items(3) s | peak RSS MiB | "
          f"full estimate (1 GiB budget) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for name, spec in CASES.items():
        res = run_case({**spec, "users": args.users})
        t = res["times"]
        refusal = (f"refused before allocating (needs {res['full_estimate_bytes'] / 2**30:.3g} GiB)"
                   if res["refused_full_estimate"] else "fits")
        print(f"| {name} | {res['mechanism']}{'' if res['g'] is None else ' g=' + str(res['g'])} | {args.users:,} | "
              f"{t['plan']:.2f} | {t['verify']:.2f} | {t['load']:.3f} | {t['perturb']:.2f} | "
              f"{t['estimate_items(3)']:.2f} | {res['peak_rss_mib']:.0f} | {refusal} |")


if __name__ == "__main__":
    main()

"""Benchmark of printing plans (issue 27 point 1): ``ldpplan plan SPEC`` against ``ldpplan plan SPEC --json``.

Run::

    python benchmarks/bench_print.py                       # 10, 100, 1,000 and 10,000 levels, 3 runs
    python benchmarks/bench_print.py --sizes 10 100 1000   # skip the 10,000-level spec (minutes)

Each size is an IDUE spec (MinID, opt0) with that many levels of one item each, budgets evenly
spaced in [0.5, 2.5] nats: the looser levels collapse onto a stricter level's (a, b), so the
plan has a table of active constraints (eq. 6) with about a quarter of the t^2 level pairs
(225,228 at t = 1,000), the worst case for the summary tables. Both commands run as separate
processes (start-up included, stdout to a file) interleaved run by run; the table gives the
medians of the wall clock and of the process's CPU time, and the ratio plan / plan --json (the
issue's target: at most 2 at 1,000 levels), plus the lines printed. Timings only: no test times anything.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ldpplan.planner.idue._binding import ActiveRows


def write_spec(folder: Path, levels: int) -> Path:
    """An IDUE spec with ``levels`` one-item levels, budgets evenly spaced in [0.5, 2.5] nats."""
    lines = ['mechanism = "idue"', 'model = "opt0"', 'notion = "minid"']
    for i in range(levels):
        lines += ["[[levels]]", f'name = "L{i}"', f"epsilon = {0.5 + 2.0 * i / max(levels - 1, 1)!r}", "items = 1"]
    path = folder / f"idue-{levels}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def run(args: list[str], out: Path) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of the child, lines printed) of ``ldpplan ARGS > out``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    env = dict(os.environ)
    env.pop("COLUMNS", None)
    with out.open("w") as stream:
        proc = subprocess.run([sys.executable, "-m", "ldpplan", *args], stdout=stream, stderr=subprocess.PIPE,
                              env=env, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"ldpplan {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, sum(1 for _ in out.open())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1_000, 10_000])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    print(f"# ldpplan plan vs plan --json (python {platform.python_version()}, {platform.machine()}, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, medians of {args.runs} runs)\n")
    print("| levels | active pairs | plan --json wall (cpu) | plan wall (cpu) | ratio wall (cpu) | lines printed |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="bench-print-") as tmp:
        folder = Path(tmp)
        for levels in args.sizes:
            spec = write_spec(folder, levels)
            json_runs, text_runs = [], []
            for _ in range(args.runs):
                json_runs.append(run(["plan", str(spec), "--json"], folder / "plan.json"))
                text_runs.append(run(["plan", str(spec)], folder / "plan.txt"))
            jw, jc = (statistics.median(r[k] for r in json_runs) for k in (0, 1))
            tw, tc = (statistics.median(r[k] for r in text_runs) for k in (0, 1))
            pairs = len(ActiveRows(json.loads((folder / "plan.json").read_text())))
            print(f"| {levels:,} | {pairs:,} | {jw:.2f} s ({jc:.2f} s) | {tw:.2f} s ({tc:.2f} s) | "
                  f"{tw / jw:.2f} ({tc / jc:.2f}) | {text_runs[-1][2]} |", flush=True)


if __name__ == "__main__":
    main()

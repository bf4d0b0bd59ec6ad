"""Benchmark of printing plans (issue 27 point 1): ``ldpplan plan SPEC`` against ``ldpplan plan SPEC --json``.

Run::

    python benchmarks/bench_print.py                       # 10, 100, 1,000 and 10,000 levels, 3 runs
    python benchmarks/bench_print.py --sizes 10 100 1000   # skip the 10,000-level spec (minutes)
    python benchmarks/bench_print.py --in-process          # solve each spec once, time only the output

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


def in_process(sizes: list[int], runs: int) -> None:
    """Plan each size once in this process, then time printing it: ``--json`` against the tables.

    What the two commands share (reading the spec, solving, verifying) is timed once; the rows
    then compare only what differs (serialising the plan vs summarizing and drawing the tables),
    medians of ``runs`` (CPU time of this process, ``time.process_time``).
    """
    import io

    from ldpplan.planner import api
    from ldpplan.planner._console import console, print_tables

    print("| levels | active pairs | plan (solve + verify) cpu | --json output cpu | tables cpu | "
          "plan --json total | plan total | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="bench-print-") as tmp:
        for levels in sizes:
            spec = write_spec(Path(tmp), levels)
            start = time.process_time()
            plan = api.make_plan(str(spec))
            solve = time.process_time() - start
            as_json, tables = [], []
            for _ in range(runs):
                start = time.process_time()
                io.StringIO().write(json.dumps(plan, indent=2))
                as_json.append(time.process_time() - start)
                start = time.process_time()
                con = console()
                con.file = io.StringIO()
                print_tables(api.summarize(plan), con)
                tables.append(time.process_time() - start)
            j, t = statistics.median(as_json), statistics.median(tables)
            print(f"| {levels:,} | {len(ActiveRows(plan)):,} | {solve:.2f} s | {j:.3f} s | {t:.3f} s | "
                  f"{solve + j:.2f} s | {solve + t:.2f} s | {(solve + t) / (solve + j):.2f} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1_000, 10_000])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--in-process", action="store_true",
                    help="plan once per size in this process and time only the output (json vs tables)")
    args = ap.parse_args()
    if args.in_process:
        print(f"# printing a plan in process (python {platform.python_version()}, load {os.getloadavg()[0]:.1f}, "
              f"medians of {args.runs} runs)\n")
        in_process(args.sizes, args.runs)
        return
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

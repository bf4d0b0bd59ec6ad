"""Peak memory of ``ldpplan perturb`` on large input files (issue 20 point 2): bounded, not per row.

    python benchmarks/bench_input_stream.py                 # 10^7 rows, the issue's size
    python benchmarks/bench_input_stream.py --rows 1000000  # quicker

Each case runs ``ldpplan perturb`` (the ``health`` example plan, IDUE over 5 labels, seeded) in
its own process under ``/usr/bin/time`` and reports the process's peak resident set size and
wall time. Cases: the ``item`` CSV; the ``user,item`` CSV (the repeated-user check keeps 8 bytes
per user); the same rows as Parquet; item sets (``health-itemsets``, IDUE-PS) and key-value
pairs (``pckv-synthetic``, PCKV-UE) with 4 rows per user scattered over the file (grouped by user
through temporary buckets); ``ldpplan verify`` alone (the start-up floor: Python,
numpy, pyarrow, the planner); and, for comparison, the pre-streaming whole-file reader
(``read_csv_table``, one Python list per row) at a tenth of the rows. Target: under 500 MB peak
RSS at 10^7 rows. Prints a Markdown table (``benchmarks/RESULTS.md`` keeps one run).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

LABELS = np.array(["hiv", "anemia", "headache", "stomachache", "toothache"])
TARGET_MB = 500


def _write_csv(path: Path, rows: int, with_user: bool, rng: np.random.Generator) -> None:
    with path.open("w", encoding="utf-8") as fh:
        fh.write("user,item\n" if with_user else "item\n")
        for start in range(0, rows, 1_000_000):
            x = LABELS[rng.integers(0, LABELS.size, size=min(1_000_000, rows - start))]
            if with_user:
                ids = np.char.add("u", np.arange(start, start + x.size).astype(str))
                lines = np.char.add(np.char.add(ids, ","), x)
            else:
                lines = x
            fh.write("\n".join(lines.tolist()) + "\n")


def _write_sets(path: Path, rows: int, key_value: bool, rng: np.random.Generator) -> None:
    """Rows ``user,item`` (or ``user,key,value``), 4 rows per user, in a random order (users scattered)."""
    order = rng.permutation(rows)
    with path.open("w", encoding="utf-8") as fh:
        fh.write("user,key,value\n" if key_value else "user,item\n")
        for start in range(0, rows, 1_000_000):
            r = order[start:start + 1_000_000]
            user, j = r // 4, r % 4
            users = np.char.add("u", user.astype(str))
            if key_value:  # a user's 4 keys are distinct
                keys = ((user + 25 * j) % 100).astype(str)
                values = np.round(rng.uniform(-1, 1, size=r.size), 3).astype(str)
                lines = np.char.add(np.char.add(np.char.add(np.char.add(users, ","), keys), ","), values)
            else:
                lines = np.char.add(np.char.add(users, ","), LABELS[rng.integers(0, LABELS.size, size=r.size)])
            fh.write("\n".join(lines.tolist()) + "\n")


def _write_parquet(csv: Path, out: Path) -> None:
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    reader = pacsv.open_csv(csv, convert_options=pacsv.ConvertOptions(column_types={"item": pa.string()}))
    with pq.ParquetWriter(out, reader.schema) as writer:
        for batch in reader:
            writer.write_batch(batch)


def _measure(cmd: list[str]) -> tuple[float, float, str]:
    """(peak RSS in MB, wall seconds, stdout) of one process under /usr/bin/time."""
    time_bin = shutil.which("time") or "/usr/bin/time"
    proc = subprocess.run([time_bin, "-f", "%M %e", *cmd], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{proc.stderr[-2000:]}")
    kb, seconds = proc.stderr.strip().splitlines()[-1].split()
    return int(kb) / 1024, float(seconds), proc.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args(argv)
    ldpplan = str(Path(sys.executable).with_name("ldpplan"))
    tmp = Path(tempfile.mkdtemp(prefix="ldpplan-bench-input-"))
    rng = np.random.default_rng(2026)
    try:
        plan = tmp / "health.json"
        subprocess.run([ldpplan, "plan", "--example", "health", "-o", str(plan)], check=True, capture_output=True)
        items, users = tmp / "items.csv", tmp / "users.csv"
        _write_csv(items, args.rows, False, rng)
        _write_csv(users, args.rows, True, rng)
        parquet = tmp / "items.parquet"
        _write_parquet(items, parquet)
        sets_plan, kv_plan = tmp / "sets.json", tmp / "kv.json"
        for name, out in (("health-itemsets", sets_plan), ("pckv-synthetic", kv_plan)):
            subprocess.run([ldpplan, "plan", "--example", name, "-o", str(out)], check=True, capture_output=True)
        sets, pairs = tmp / "sets.csv", tmp / "pairs.csv"
        _write_sets(sets, args.rows, False, rng)
        _write_sets(pairs, args.rows, True, rng)
        small = tmp / "small.csv"
        _write_csv(small, args.rows // 10, False, rng)
        rows = []
        floor = _measure([ldpplan, "verify", str(plan)])
        rows.append(("`ldpplan verify` (start-up floor)", "-", floor))
        for name, path in (("`perturb`, `item` CSV", items), ("`perturb`, `user,item` CSV", users),
                           ("`perturb`, `item` Parquet", parquet)):
            rows.append((name, f"{args.rows:.0e} rows, {path.stat().st_size / 2**20:.0f} MiB",
                         _measure([ldpplan, "perturb", str(plan), "--input", str(path), "-o",
                                   str(tmp / "r.parquet"), "--seed", "1"])))
        for name, plan_path, path in (("`perturb`, item sets (IDUE-PS), `user,item` CSV, users scattered",
                                       sets_plan, sets),
                                      ("`perturb`, key-value (PCKV-UE), `user,key,value` CSV, users scattered",
                                       kv_plan, pairs)):
            rows.append((name, f"{args.rows:.0e} rows, {path.stat().st_size / 2**20:.0f} MiB",
                         _measure([ldpplan, "perturb", str(plan_path), "--input", str(path), "-o",
                                   str(tmp / "r.parquet"), "--seed", "1"])))
        old = ("from ldpplan.planner.data import read_csv_table; import sys; "
               "t = read_csv_table(sys.argv[1], ['item']); print(len(t.rows))")
        rows.append(("whole-file reader before streaming (`read_csv_table`, read only)",
                     f"{args.rows // 10:.0e} rows, {small.stat().st_size / 2**20:.0f} MiB",
                     _measure([sys.executable, "-c", old, str(small)])))
        print("| case | input | peak RSS | wall | target |")
        print("|---|---|---|---|---|")
        for name, size, (mb, seconds, _) in rows:
            target = f"< {TARGET_MB} MB: {'met' if mb < TARGET_MB else 'MISSED'}" if name.startswith("`perturb`") \
                else ""
            print(f"| {name} | {size} | {mb:.0f} MB | {seconds:.1f} s | {target} |")
    finally:
        if args.keep:
            print(f"kept {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())

"""Benchmark of server-side aggregation of Parquet report files (issue 12).

Run::

    python benchmarks/bench_aggregate.py                 # n = 10^7 reports per mechanism
    python benchmarks/bench_aggregate.py --n 1000000     # smaller

For RR (|X| = 10^4, column ``y`` int64) and IDUE (m = 10^3 report bits, column ``bits`` of
125 bytes), n reports are written as 10 Parquet shards (``ldpplan perturb``'s writer: zstd,
bounded row groups) and aggregated with

* the local engine (one process, one core: ``ldpplan aggregate --engine local``);
* the Dask engine on a 2-worker ``distributed.LocalCluster`` (processes, one thread each;
  cluster start-up timed separately);
* the physical bound on one core: Parquet read (decode to numpy) alone, and read + bit
  unpacking (``np.unpackbits``) for IDUE.

The reports are synthetic but valid (uniform values / random bits): aggregation cost does not
depend on the values. Figures are medians over ``--runs`` runs (wall clock). The last table
projects the wall time of 10^9 IDUE reports on a 100-worker cluster from the measured
per-worker throughput (paper calculation: perfect scaling of the map phase, plus the tree
reduction of the partial aggregates). Prints Markdown tables.
"""
from __future__ import annotations

import argparse
import copy
import logging
import math
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SHARDS = 10
CHUNK = 1_000_000


def _plans():
    import ldpplan
    from ldpplan.planner.families import all_families

    rr = ldpplan.planner.make_plan({"mechanism": "rr", "domain_size": 10_000, "n": 10_000_000,
                                    "target": {"bayes_error": 0.5}})
    idue_spec = copy.deepcopy({f.name: f for f in all_families()}["idue"].examples["three-levels"])
    idue_spec["domain"] = 1000
    idue = ldpplan.planner.make_plan(idue_spec)
    return {"RR |X| = 10^4": rr, "IDUE m = 10^3 bits": idue}


def _columns(plan, rows: int, rng: np.random.Generator) -> dict:
    if plan["mechanism"] == "rr":
        return {"y": rng.integers(0, plan["domain"]["size"], rows, dtype=np.int64)}
    width = int(plan["domain"]["size"])
    bits = rng.integers(0, 256, (rows, (width + 7) // 8), dtype=np.uint8)
    if width % 8:
        bits[:, -1] &= np.uint8((1 << (width % 8)) - 1)
    return {"bits": bits}


def _write_shards(plan, n: int, folder: Path) -> list[str]:
    from ldpplan.planner._plan_format import plan_fingerprint
    from ldpplan.planner._reports_file import ReportsWriter

    rng = np.random.default_rng(0)
    paths = []
    per_shard = n // SHARDS
    for s in range(SHARDS):
        path = folder / f"{plan['mechanism']}-{s:02d}.parquet"
        with ReportsWriter(path, mechanism=plan["mechanism"], plan_fingerprint=plan_fingerprint(plan),
                           ldpplan_version="bench", seed=0) as writer:
            for start in range(0, per_shard, CHUNK):
                writer.write(_columns(plan, min(CHUNK, per_shard - start), rng))
        paths.append(str(path))
    return paths


def _median(func, runs: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        out = func()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def _read_bound(paths: list[str], unpack: bool) -> int:
    import pyarrow.parquet as pq

    from ldpplan.planner._parquet_columns import table_to_arrays

    rows = 0
    for path in paths:
        with pq.ParquetFile(path) as pf:
            for batch in pf.iter_batches(batch_size=1 << 16):
                arrays = table_to_arrays(batch, path)
                if unpack and "bits" in arrays:
                    np.unpackbits(arrays["bits"], axis=1, bitorder="little")
                rows += batch.num_rows
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=10_000_000, help="reports per mechanism (default 10^7)")
    parser.add_argument("--runs", type=int, default=3, help="repetitions (median)")
    parser.add_argument("--workers", type=int, default=2, help="LocalCluster workers")
    args = parser.parse_args()

    import distributed

    from ldpplan.planner._dask_engine import aggregate_dask
    from ldpplan.planner.aggregate import aggregate_files

    print(f"# Aggregation of Parquet report files: n = {args.n:,} reports per mechanism, {SHARDS} shards, "
          f"median of {args.runs} runs\n")
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"numpy {np.__version__}\n")
    rows_out, per_worker = [], {}
    plans = _plans()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        cluster = distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                           dashboard_address=":0", silence_logs=logging.ERROR)
        client = distributed.Client(cluster)
        startup = time.perf_counter() - t0
        try:
            for name, plan in plans.items():
                paths = _write_shards(plan, args.n, Path(tmp))
                megabytes = sum(os.path.getsize(p) for p in paths) / 1e6
                local_t, local = _median(lambda: aggregate_files(plan, paths, engine="local").aggregate, args.runs)
                dask_t, on_cluster = _median(lambda: aggregate_dask(plan, paths, client=client), args.runs)
                counts = type(local)(local.mechanism, local.n, local.counts)   # without the files' batches
                assert on_cluster == counts and local.n == args.n, "the engines disagree"
                read_t, _ = _median(lambda: _read_bound(paths, unpack=False), args.runs)
                unpack_t, _ = _median(lambda: _read_bound(paths, unpack=True), args.runs)
                from ldpplan.planner._parquet_columns import merge_aggregate_dicts

                part = (local.to_dict(), local.n)
                merge_t, _ = _median(lambda: merge_aggregate_dicts(part, part, part, part), 5)
                per_worker[name] = (args.n / dask_t / args.workers, megabytes, args.n / local_t, merge_t)
                for engine, t in (("local (1 process)", local_t), (f"dask, {args.workers}-worker LocalCluster", dask_t),
                                  ("bound: Parquet read, 1 core", read_t),
                                  ("bound: read + bit unpacking, 1 core", unpack_t)):
                    if "unpacking" in engine and plan["mechanism"] == "rr":
                        continue
                    rows_out.append(f"| {name} | {engine} | {t:.2f} | {args.n / t / 1e6:.2f} | {megabytes / t:.0f} |")
                for p in paths:
                    os.unlink(p)
        finally:
            client.close()
            cluster.close()
    print("Parquet size on disk: " + ", ".join(f"{k}: {v[1]:.0f} MB" for k, v in per_worker.items())
          + f"; LocalCluster start-up {startup:.1f} s (not included)\n")
    print("| mechanism | engine | wall time (s) | M reports/s | MB/s of Parquet |")
    print("|---|---|---|---|---|")
    print("\n".join(rows_out))
    name = "IDUE m = 10^3 bits"
    if name in per_worker:
        dask_rate, megabytes, core_rate, merge_t = per_worker[name]
        total, workers = 1e9, 100
        bytes_per_report = megabytes * 1e6 / args.n
        tasks = total * bytes_per_report / 32e6            # row groups of ~32 MB decoded (about as many on disk)
        reduce_t = math.ceil(math.log(tasks, 4)) * (merge_t + 0.01)   # FAN_IN = 4 per merge; + ~10 ms transfer
        overhead = tasks * 1e-3 / workers                   # scheduler: ~1 ms per task, spread over the workers
        print(f"\n## Projection: 10^9 IDUE reports (m = 10^3) on {workers} workers\n")
        print(f"{total * bytes_per_report / 1e9:.0f} GB of Parquet in {tasks:,.0f} row-group tasks; tree reduction "
              f"{reduce_t:.1f} s (log_4 levels, measured merge of 4 aggregates {merge_t * 1e3:.1f} ms + ~10 ms "
              f"transfer); scheduler overhead {overhead:.0f} s (~1 ms per task); perfect scaling of the map phase "
              "assumed.\n")
        print("| per-worker throughput used | map phase 10^9 / (100 x rate) | total wall time "
              "| storage bandwidth needed |")
        print("|---|---|---|---|")
        for label, rate in ((f"dask run above, per worker ({dask_rate / 1e6:.2f} M reports/s)", dask_rate),
                            (f"local engine, one core ({core_rate / 1e6:.2f} M reports/s)", core_rate)):
            map_t = total / (workers * rate)
            print(f"| {label} | {map_t:.0f} s | {map_t + reduce_t + overhead:.0f} s | "
                  f"{workers * rate * bytes_per_report / 1e9:.1f} GB/s |")


if __name__ == "__main__":
    sys.exit(main())

"""Aggregating a report file larger than the batch size keeps memory bounded (numpy and Arrow allocations)."""
from __future__ import annotations

import json
import tracemalloc

import numpy as np
import pyarrow as pa
import pytest
from click.testing import CliRunner

from ldpplan.planner import _reports_file
from ldpplan.planner.aggregate import aggregate_files
from ldpplan.planner.cli import main

N = 4_000_000          # decoded size: N bytes (uint8 column)
BATCH = 1 << 15


def _peaks(func):
    """(tracemalloc peak, Arrow pool peak) in bytes while ``func()`` runs; returns them and its result."""
    old = pa.default_memory_pool()
    pool = pa.proxy_memory_pool(old)
    pa.set_memory_pool(pool)
    tracemalloc.start()
    try:
        result = func()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        pa.set_memory_pool(old)
    return peak, pool.max_memory(), result


def test_aggregating_a_large_file_uses_bounded_memory(toy_family, tmp_path):
    from ldpplan.planner._plan_format import plan_fingerprint

    spec = tmp_path / "toy.toml"
    spec.write_text('mechanism = "toy"\nepsilon = 1.0\nusers = 100\n')
    assert CliRunner().invoke(main, ["plan", str(spec), "-o", str(tmp_path / "plan.json")]).exit_code == 0
    plan = json.loads((tmp_path / "plan.json").read_text())
    y = np.random.default_rng(0).integers(0, 2, N).astype(np.uint8)
    path = tmp_path / "big.parquet"
    _reports_file.write_reports(path, {"y": y}, mechanism=plan["mechanism"], plan_fingerprint=plan_fingerprint(plan),
                                ldpplan_version="0", seed=None)
    ones = int(y.sum())
    del y
    numpy_peak, arrow_peak, result = _peaks(lambda: aggregate_files(plan, [path], batch_rows=BATCH))
    assert result.n == N and result.aggregate["counts"].tolist() == [N - ones, ones]
    # a batch decodes BATCH bytes (x 8 as int64 in the runtime's bincount): far below the file's N bytes
    assert numpy_peak < N / 8, numpy_peak
    assert arrow_peak < N / 8, arrow_peak
    # the control: reading the whole file does hold it all (so the measurement sees the allocations)
    whole_numpy, whole_arrow, _ = _peaks(lambda: _reports_file.read_reports(path))
    assert max(whole_numpy, whole_arrow) >= N


def _toy_plan(tmp_path):
    spec = tmp_path / "toy.toml"
    spec.write_text('mechanism = "toy"\nepsilon = 1.0\nusers = 100\n')
    assert CliRunner().invoke(main, ["plan", str(spec), "-o", str(tmp_path / "plan.json")]).exit_code == 0
    return tmp_path / "plan.json", json.loads((tmp_path / "plan.json").read_text())


@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
def test_estimating_a_large_file_uses_bounded_memory(toy_family, tmp_path):
    """Issue 16 finding 5: ``estimate`` reads reports through the aggregate path, a batch at a time."""
    from ldpplan.planner._plan_format import plan_fingerprint
    from ldpplan.planner._runtime_io import estimate_file

    n = 4 * N
    plan_path, plan = _toy_plan(tmp_path)
    y = np.random.default_rng(1).integers(0, 2, n).astype(np.uint8)
    path = tmp_path / "big.parquet"
    _reports_file.write_reports(path, {"y": y}, mechanism=plan["mechanism"], plan_fingerprint=plan_fingerprint(plan),
                                ldpplan_version="0", seed=None)
    ones = int(y.sum())
    del y
    numpy_peak, arrow_peak, result = _peaks(lambda: estimate_file(plan_path, [path], method="empirical"))
    assert result.estimate.n == n
    direct = toy_family.ToyRR.from_plan(plan).estimate(
        __import__("ldpplan").mechanisms.Aggregate(plan["mechanism"], n, {"counts": np.array([n - ones, ones])}))
    np.testing.assert_array_equal(result.estimate.frequency, direct.frequency)
    # a batch (2^16 rows, x 8 as int64) and a row group of uint8 (2^20 bytes): far below the file's n bytes
    assert numpy_peak < n / 8, numpy_peak
    assert arrow_peak < n / 8, arrow_peak


_RSS = ("import resource, subprocess, sys\n"
        "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)\n")


def _peak_rss(*command) -> int:
    """Peak resident set size (bytes) of ``command``, run as the only child of a fresh process."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _RSS, *map(str, command)], capture_output=True, text=True,
                         timeout=600, check=True)
    return int(out.stdout.split()[-1])


@pytest.mark.slow
def test_cli_estimate_of_a_small_file_that_decodes_to_a_large_one_stays_bounded(tmp_path):
    """The shape of the finding: few MB of Parquet, row groups of compressible rows (here 8 x 8 Mi rows of
    int64 zeros: 512 MiB decoded in a 2 MB file). Peak RSS of ``ldpplan estimate`` grows by less than
    an eighth of that over the same command on a 1,000-row file; reading the file whole (the control,
    what ``estimate`` did before) holds it all."""
    import shutil
    import sys

    import pyarrow.parquet as pq

    from ldpplan.mechanisms import plan_fingerprint
    from ldpplan.planner._parquet_columns import arrays_to_table

    spec = tmp_path / "urr.json"
    spec.write_text(json.dumps({"mechanism": "urr", "epsilon": 1.0, "domain": 4, "sensitive": 1}))
    plan_path = tmp_path / "plan.json"
    assert CliRunner().invoke(main, ["plan", str(spec), "-o", str(plan_path)]).exit_code == 0
    plan = json.loads(plan_path.read_text())

    def write(path, groups, rows):
        meta = _reports_file.ReportsWriter(path, mechanism="urr", plan_fingerprint=plan_fingerprint(plan),
                                           ldpplan_version="0", seed=None).meta
        table = arrays_to_table({"y": np.zeros(rows, dtype=np.int64)}, meta)
        with pq.ParquetWriter(path, table.schema, compression="zstd") as writer:
            for _ in range(groups):
                writer.write_table(table, row_group_size=rows)

    groups, rows = 8, 8 << 20
    decoded = groups * rows * 8
    write(tmp_path / "small.parquet", 1, 1000)
    write(tmp_path / "big.parquet", groups, rows)
    assert (tmp_path / "big.parquet").stat().st_size < decoded / 100
    cli = [shutil.which("ldpplan") or sys.executable, "estimate", plan_path]
    if not shutil.which("ldpplan"):
        cli[1:1] = ["-m", "ldpplan.planner.cli"]
    base = _peak_rss(*cli, tmp_path / "small.parquet", "--json")
    big = _peak_rss(*cli, tmp_path / "big.parquet", "--json")
    assert big - base < decoded / 8, (base, big, decoded)
    control = _peak_rss(sys.executable, "-c", "import sys; from ldpplan.planner._reports_file import read_reports; "
                        "read_reports(sys.argv[1])", tmp_path / "big.parquet")
    assert control - base > decoded / 2, (base, control, decoded)

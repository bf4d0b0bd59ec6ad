"""Aggregating a report file larger than the batch size keeps memory bounded (numpy and Arrow allocations)."""
from __future__ import annotations

import json
import tracemalloc

import numpy as np
import pyarrow as pa
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

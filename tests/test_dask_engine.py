"""The Dask engine on a real ``distributed.LocalCluster`` (2 worker processes): Parquet shards of every
runtime aggregated per row group on the workers, tree-reduced with ``+``, bit-identical to the local
engine; workers never import the planner, cvxpy or scipy."""
from __future__ import annotations

import json
import logging
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from _family_helpers import example_runtime, perturb, read_inputs, small_example_per_family
from ldpplan.planner import _reports_file
from ldpplan.planner.cli import main

SMALL = small_example_per_family()
USERS = 1500


@pytest.fixture(scope="module")
def distributed():
    """The ``distributed`` package (imported by the tests that run, not at collection: every test here is slow)."""
    return pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client(distributed):
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=logging.ERROR) as cluster, distributed.Client(cluster) as c:
        yield c


def _shards(fam, name, request, tmp_path, monkeypatch):
    from ldpplan.planner._io import write_json_atomic
    from ldpplan.planner._plan_format import plan_fingerprint

    plan, mech = example_runtime(fam, name, request)
    write_json_atomic(tmp_path / "plan.json", plan)
    monkeypatch.setattr(_reports_file, "ROW_GROUP_ROWS", 200)   # many row groups: many tasks
    paths = []
    for i in range(3):
        data = read_inputs(fam, plan, tmp_path, USERS // 3, np.random.default_rng(10 + i))
        reports = perturb(mech, data, np.random.default_rng(20 + i))
        path = tmp_path / f"shard{i}.parquet"
        _reports_file.write_reports(path, reports.to_arrays(), mechanism=plan["mechanism"],
                                    plan_fingerprint=plan_fingerprint(plan), ldpplan_version="0", seed=20 + i)
        paths.append(path)
    assert _reports_file.open_reports(paths[0]).num_row_groups >= 2
    return plan, paths


def _planner_modules():
    """(runs on a worker, shipped by value) the planner/solver modules the worker has imported."""
    return sorted(m for m in sys.modules if m.split(".")[0] in ("cvxpy", "scipy") or m.startswith("ldpplan.planner")
                  or m.startswith("ldpplan.solvers"))


@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
@pytest.mark.parametrize("fam, name", SMALL)
def test_dask_engine_is_bit_identical_to_local(fam, name, request, tmp_path, monkeypatch, client):
    from ldpplan.planner._dask_engine import aggregate_dask
    from ldpplan.planner.aggregate import aggregate_files

    plan, paths = _shards(fam, name, request, tmp_path, monkeypatch)
    from ldpplan.mechanisms import Aggregate

    identified = aggregate_files(plan, paths, engine="local").aggregate   # with the plan's fingerprint and batches
    local = Aggregate(identified.mechanism, identified.n, identified.counts)   # the counts (the engine's part)
    on_cluster = aggregate_dask(plan, [str(p) for p in paths], client=client, batch_rows=64)
    again = aggregate_dask(plan, [str(p) for p in paths], client=client)   # same plan scattered again
    assert on_cluster == local == again
    assert json.dumps(on_cluster.to_dict()) == json.dumps(local.to_dict())
    assert local.n == sum(_reports_file.open_reports(p).num_rows for p in paths)
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    assert client.run(_planner_modules) == {w: [] for w in client.scheduler_info()["workers"]}


@pytest.mark.slow  # its LocalCluster (the module's ``client``: 2 worker processes) takes 2-3 s to start
def test_cli_dask_engine_on_a_scheduler_writes_the_same_file(tmp_path, monkeypatch, client, request):
    fam, name = SMALL[0].values
    plan, paths = _shards(fam, name, request, tmp_path, monkeypatch)
    plan_path = tmp_path / "plan.json"
    runner = CliRunner()
    local, dask = tmp_path / "local.json", tmp_path / "dask.json"
    assert runner.invoke(main, ["aggregate", str(plan_path), str(tmp_path / "shard*.parquet"), "-o",
                                str(local)]).exit_code == 0
    result = runner.invoke(main, ["aggregate", str(plan_path), str(tmp_path / "shard*.parquet"), "-o", str(dask),
                                  "--engine", "dask", "--scheduler", client.scheduler.address])
    assert result.exit_code == 0, result.output
    assert "(dask engine)" in result.output and dask.read_bytes() == local.read_bytes()
    # a damaged shard fails on the worker: exit 2, nothing written
    paths[1].write_bytes(paths[1].read_bytes()[:8] + b"\x00" * (paths[1].stat().st_size - 16)
                         + paths[1].read_bytes()[-8:])
    bad = tmp_path / "bad.json"
    result = runner.invoke(main, ["aggregate", str(plan_path), *map(str, paths), "-o", str(bad), "--engine", "dask",
                                  "--scheduler", client.scheduler.address])
    assert result.exit_code == 2 and not bad.exists(), result.output
    assert str(paths[1].resolve()) in result.stderr and "Traceback" not in result.output


@pytest.mark.slow
def test_cli_dask_engine_without_scheduler_starts_a_local_cluster(tmp_path, monkeypatch, request, distributed):
    dist = distributed
    started = []
    real = dist.LocalCluster

    def spy(*args, **kwargs):
        started.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(dist, "LocalCluster", spy)
    fam, name = SMALL[-1].values
    plan, paths = _shards(fam, name, request, tmp_path, monkeypatch)
    runner = CliRunner()
    local, dask = tmp_path / "local.json", tmp_path / "dask.json"
    args = ["aggregate", str(tmp_path / "plan.json"), *map(str, paths), "-o"]
    assert runner.invoke(main, [*args, str(local)]).exit_code == 0
    result = runner.invoke(main, [*args, str(dask), "--engine", "dask"])
    assert result.exit_code == 0, result.output
    assert dask.read_bytes() == local.read_bytes()
    assert len(started) == 1 and started[0]["processes"] is True


def _damage_pages(path):
    """Zero the middle of the first column chunk: the footer (metadata, schema) stays valid, the pages do not."""
    import pyarrow.parquet as pq

    chunk = pq.read_metadata(path).row_group(0).column(0)
    start = chunk.dictionary_page_offset or chunk.data_page_offset
    data = bytearray(path.read_bytes())
    data[start + 8:start + chunk.total_compressed_size - 8] = bytes(chunk.total_compressed_size - 16)
    path.write_bytes(bytes(data))
    pq.read_metadata(path)   # still readable: the error comes from a worker decoding the pages


@pytest.mark.slow  # the module's LocalCluster: 2-3 s to start
def test_a_worker_error_comes_back_as_one_line_without_a_worker_traceback(tmp_path, monkeypatch, client, request):
    # finding 8 of issue 16: the task returns its error; the worker logs no "Compute Failed" block
    from ldpplan.planner._dask_engine import aggregate_dask
    from ldpplan.planner.errors import InputDataError

    fam, name = SMALL[0].values
    plan, paths = _shards(fam, name, request, tmp_path, monkeypatch)
    _damage_pages(paths[1])
    with pytest.raises(InputDataError) as info:
        aggregate_dask(plan, [str(p) for p in paths], client=client)
    message = str(info.value)
    assert "\n" not in message and message.startswith(str(paths[1].resolve()) + ": unreadable Parquet data"), message
    logs = json.dumps(client.get_worker_logs())
    assert "Compute Failed" not in logs and "Traceback" not in logs


@pytest.mark.slow
def test_cli_dask_engine_error_is_exactly_one_line_on_stderr(tmp_path, monkeypatch, request, distributed):
    """The CLI in a subprocess with its own LocalCluster (worker processes share its stderr)."""
    import subprocess

    fam, name = SMALL[0].values
    plan, paths = _shards(fam, name, request, tmp_path, monkeypatch)
    _damage_pages(paths[1])
    out = tmp_path / "agg.json"
    code = "import sys; from ldpplan.planner.cli import main; sys.argv[0] = 'ldpplan'; main()"
    proc = subprocess.run([sys.executable, "-c", code, "aggregate", str(tmp_path / "plan.json"), *map(str, paths),
                           "-o", str(out), "--engine", "dask"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and not out.exists(), proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and str(paths[1].resolve()) in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr and "Compute Failed" not in proc.stderr

"""Parquet report files (docs/REPORTS.md): schema of every runtime's columns, metadata, row groups,
atomic and chunked writing, and a file written by another client from the documented schema."""
from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from _family_helpers import example_runtime, perturb, read_inputs, small_example_per_family
from ldpplan.planner import _reports_file, _runtime_io
from ldpplan.planner.cli import main
from ldpplan.planner.errors import InputDataError

SMALL = small_example_per_family()


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.mark.parametrize("fam, name", SMALL)
def test_every_runtime_roundtrips_through_parquet(fam, name, request, tmp_path):
    plan, mech = example_runtime(fam, name, request)
    reports = perturb(mech, read_inputs(fam, plan, tmp_path, 200, np.random.default_rng(3)),
                      np.random.default_rng(4))
    path = tmp_path / "r.parquet"
    _reports_file.write_reports(path, reports.to_arrays(), mechanism=plan["mechanism"], plan_fingerprint="f" * 64,
                                ldpplan_version="0", seed=4)
    content = _reports_file.read_reports(path)
    assert content.meta["mechanism"] == plan["mechanism"] and content.meta["n"] == len(reports)
    assert content.meta["seeded"] is True and content.meta["seed"] == 4
    schema = pq.read_schema(path)
    for column, arr in reports.to_arrays().items():
        got = content.arrays[column]
        assert got.dtype == arr.dtype and got.shape == arr.shape and np.array_equal(got, arr), column
        field = schema.field(column)
        if arr.ndim == 2:   # packed bits / ternary rows: fixed-size binary of the row's bytes
            assert field.type == pa.binary(arr.shape[1] * arr.dtype.itemsize)
            assert field.metadata[b"ldpplan.dtype"] == arr.dtype.name.encode()
            assert field.metadata[b"ldpplan.width"] == str(arr.shape[1]).encode()
        else:
            assert field.type == pa.from_numpy_dtype(arr.dtype)
    again = type(reports).from_arrays(plan["mechanism"], content.arrays)
    assert mech.aggregate(again) == mech.aggregate(reports)


def test_row_groups_are_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(_reports_file, "ROW_GROUP_ROWS", 1000)
    path = tmp_path / "r.parquet"
    _reports_file.write_reports(path, {"y": np.arange(4500, dtype=np.int32)}, mechanism="rr", plan_fingerprint="x",
                                ldpplan_version="0", seed=None)
    md = pq.read_metadata(path)
    assert [md.row_group(i).num_rows for i in range(md.num_row_groups)] == [1000] * 4 + [500]
    # wide rows: fewer rows per group (bytes bound)
    monkeypatch.setattr(_reports_file, "ROW_GROUP_BYTES", 125 * 100)
    assert _reports_file.rows_per_group({"bits": np.zeros((5, 125), np.uint8)}) == 100
    assert _reports_file.rows_per_group({"y": np.zeros(5, np.int64)}) == 1000


def test_writer_leaves_nothing_on_error_and_refuses_changing_columns(tmp_path):
    path = tmp_path / "r.parquet"
    path.write_bytes(b"old")
    with pytest.raises(ValueError, match="same columns"):
        with _reports_file.ReportsWriter(path, mechanism="rr", plan_fingerprint="x", ldpplan_version="0",
                                         seed=None) as writer:
            writer.write({"y": np.zeros(3, np.int32)})
            writer.write({"y": np.zeros(3, np.int64)})
    assert path.read_bytes() == b"old" and sorted(p.name for p in tmp_path.iterdir()) == ["r.parquet"]
    with pytest.raises(ValueError, match="1-D or 2-D integer"):
        _reports_file.write_reports(path, {"y": np.zeros(3)}, mechanism="rr", plan_fingerprint="x",
                                    ldpplan_version="0", seed=None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.parquet"]


def test_a_file_written_from_the_documented_schema_is_accepted(tmp_path, toy_family):
    """What a client in another language does: plain Parquet, the columns and the metadata of docs/REPORTS.md."""
    from ldpplan.planner._plan_format import plan_fingerprint

    spec = tmp_path / "toy.toml"
    spec.write_text('mechanism = "toy"\nepsilon = 1.0\nusers = 100\n')
    plan_path = tmp_path / "plan.json"
    assert run("plan", spec, "-o", plan_path).exit_code == 0
    plan = json.loads(plan_path.read_text())
    y = np.array([1] * 600 + [0] * 400, dtype=np.int64)   # any integer width is accepted
    meta = {"format": "ldpplan-reports", "format_version": "2.0", "mechanism": "toy-rr",
            "plan_fingerprint": plan_fingerprint(plan), "ldpplan_version": "client-1.0", "seeded": "false"}
    path = tmp_path / "client.parquet"
    pq.write_table(pa.table({"y": y}).replace_schema_metadata(meta), path, row_group_size=300)
    out = json.loads(run("estimate", plan_path, path, "--json").stdout)
    p = plan["params"]["p"]
    assert out["n"] == 1000 and out["frequency"][1] == pytest.approx((0.6 - (1 - p)) / (2 * p - 1), rel=1e-12)


def test_perturb_streams_in_chunks(tmp_path, toy_family, monkeypatch):
    spec = tmp_path / "toy.toml"
    spec.write_text('mechanism = "toy"\nepsilon = 1.0\nusers = 100\n')
    plan_path = tmp_path / "plan.json"
    assert run("plan", spec, "-o", plan_path).exit_code == 0
    users = tmp_path / "users.csv"
    users.write_text("item\n" + "\n".join(["yes"] * 2500 + ["no"] * 2500) + "\n")
    calls = []
    real = toy_family.ToyRR.perturb

    def spy(self, data, rng):
        calls.append(len(data))
        return real(self, data, rng)

    monkeypatch.setattr(toy_family.ToyRR, "perturb", spy)
    result = _runtime_io.perturb_file(plan_path, users, tmp_path / "r.parquet", seed=1, chunk_rows=1000)
    assert calls == [1000] * 5 and result.n == 5000
    info = _reports_file.open_reports(tmp_path / "r.parquet")
    assert info.num_rows == 5000 and info.num_row_groups == 5


def test_open_reports_names_the_rule(tmp_path):
    path = tmp_path / "r.parquet"
    with pytest.raises(InputDataError, match="must exist"):
        _reports_file.open_reports(path)
    path.write_bytes(b"")
    with pytest.raises(InputDataError, match="empty"):
        _reports_file.open_reports(path)
    pq.write_table(pa.table({"y": np.zeros(2, np.uint8)}), path)
    with pytest.raises(InputDataError, match=r"must record \['format', 'format_version'"):
        _reports_file.open_reports(path)
    table = pa.table({"y": pa.array([b"ab", b"cd"], pa.binary(2))})
    meta = {"format": "ldpplan-reports", "format_version": "2.0", "mechanism": "rr", "plan_fingerprint": "x",
            "ldpplan_version": "0", "seeded": "false"}
    schema = pa.schema([pa.field("y", pa.binary(2), metadata={"ldpplan.dtype": "float64"})], metadata=meta)
    pq.write_table(table.cast(schema), path)
    with pytest.raises(InputDataError, match="ldpplan.dtype must be one of"):
        _reports_file.open_reports(path)
    schema = pa.schema([pa.field("y", pa.binary(2), metadata={"ldpplan.width": "3"})], metadata=meta)
    pq.write_table(table.cast(schema), path)
    with pytest.raises(InputDataError, match="ldpplan.width x itemsize must equal"):
        _reports_file.open_reports(path)

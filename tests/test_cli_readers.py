"""Generic input readers (planner.data, CLI section), atomic writes and the reports file module."""
from __future__ import annotations

import os
import stat

import numpy as np
import pytest

from ldpplan.planner import _io, _reports_file
from ldpplan.planner.data import read_csv_table, read_item_column, read_item_sets
from ldpplan.planner.errors import InputDataError


def write(tmp_path, text, name="in.csv", encoding="utf-8"):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


def test_read_item_column_labels_and_indices(tmp_path):
    path = write(tmp_path, "\ufeffuser, item \n1,yes\n\n2, no \n3,yes\n")
    assert read_item_column(path, ["no", "yes"], 2).tolist() == [1, 0, 1]
    path = write(tmp_path, "item\n0\n4\n2\n")
    assert read_item_column(path, None, 5).tolist() == [0, 4, 2]


@pytest.mark.parametrize("text, labels, needle", [
    ("item\nyes\nmaybe\n", ["no", "yes"], "line 3: item: must be one of domain.labels ['no', 'yes'] (got 'maybe')"),
    ("item\n0\n5\n", None, "line 3: item: must be a 0-based index in [0, 5) (got 5)"),
    ("item\n0\nx\n", None, "line 3: item: must be a 0-based index"),
    ("value\n1\n", None, "line 1: columns ['item'] are required"),
    ("", None, "file is empty"),
    ("item,user\n1\n", None, "line 2: must have 2 fields like the header (got 1)"),
])
def test_read_item_column_errors_name_line_rule_value(tmp_path, text, labels, needle):
    with pytest.raises(InputDataError) as info:
        read_item_column(write(tmp_path, text), labels, 5)
    assert needle in str(info.value) and "\n" not in str(info.value)


def test_read_csv_table_rejects_non_utf8_and_missing(tmp_path):
    with pytest.raises(InputDataError, match="must be UTF-8"):
        read_csv_table(write(tmp_path, "item\n\xe9\n", encoding="latin-1"), ["item"])
    with pytest.raises(InputDataError, match="--input: file must exist"):
        read_csv_table(tmp_path / "nope.csv", ["item"])


def test_read_item_sets_csr(tmp_path):
    path = write(tmp_path, "user,item\nb,x\na,y\nb,z\nb,x\na,x\n")
    users, indptr, indices = read_item_sets(path, ["x", "y", "z"], 3)
    assert users == ["b", "a"]
    assert indptr.tolist() == [0, 2, 4] and indices.tolist() == [0, 2, 0, 1]


def test_write_bytes_atomic_failure_leaves_target_and_no_temp(tmp_path, monkeypatch):
    target = tmp_path / "plan.json"
    target.write_text("old")

    def broken_fsync(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError):
        _io.write_bytes_atomic(target, b"new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["plan.json"]


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_write_bytes_atomic_respects_umask(tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        _io.write_bytes_atomic(tmp_path / "f", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "f").stat().st_mode) == mode


def test_reports_file_roundtrip_and_meta(tmp_path):
    arrays = {"y": np.array([0, 1, 1], dtype=np.uint8), "bits": np.arange(6, dtype=np.uint8).reshape(3, 2)}
    meta = _reports_file.write_reports(tmp_path / "r.parquet", arrays, mechanism="rr", plan_fingerprint="ab" * 32,
                                       ldpplan_version="0.2.0", seed=None)
    assert meta["seeded"] == "false" and "seed" not in meta and meta["n"] == 3
    content = _reports_file.read_reports(tmp_path / "r.parquet")
    assert content.meta == {**meta, "seeded": False}
    assert set(content.arrays) == {"y", "bits"} and np.array_equal(content.arrays["bits"], arrays["bits"])
    assert content.arrays["y"].dtype == np.uint8 and content.arrays["bits"].shape == (3, 2)
    seeded = _reports_file.write_reports(tmp_path / "s.parquet", arrays, mechanism="rr", plan_fingerprint="x",
                                         ldpplan_version="0.2.0", seed=5)
    assert seeded["seeded"] == "true" and _reports_file.read_reports(tmp_path / "s.parquet").meta["seed"] == 5


def test_reports_file_refuses_bad_meta(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "r.parquet"
    meta = {"format": "ldpplan-reports", "format_version": "2.0", "mechanism": "rr", "plan_fingerprint": "x",
            "ldpplan_version": "0", "seeded": "false"}
    for key, value, needle in [("format", "other", "metadata.format"), ("seeded", "no", "metadata.seeded"),
                               ("format_version", "1.0", "metadata.format_version")]:
        table = pa.table({"y": np.zeros(2, np.uint8)}).replace_schema_metadata(dict(meta, **{key: value}))
        pq.write_table(table, path)
        with pytest.raises(InputDataError, match=needle):
            _reports_file.read_reports(path)


def test_reports_file_bounds_declared_row_group_sizes_before_decoding(tmp_path, monkeypatch):
    path = tmp_path / "r.parquet"   # a small compressed file declaring 10^6 decoded bytes (a decompression bomb)
    _reports_file.write_reports(path, {"y": np.zeros(10**6, np.uint8)}, mechanism="rr", plan_fingerprint="x",
                                ldpplan_version="0", seed=None)
    assert path.stat().st_size < 10_000
    monkeypatch.setattr(_reports_file, "MAX_ROW_GROUP_BYTES", 10_000)
    with pytest.raises(InputDataError, match="row group 0: must decode to at most 10000 bytes"):
        _reports_file.read_reports(path)

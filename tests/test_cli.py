"""The command line, driven through click's CliRunner with the test-only toy family."""
from __future__ import annotations

import json
import math
import os
import stat

import numpy as np
import pyarrow as pa
import pytest
from click.testing import CliRunner

from ldpplan.planner.cli import main

SPEC = 'mechanism = "toy"\nepsilon = 1.0\nusers = 100\n'


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


def one_error_line(result) -> str:
    """The run failed with exactly one stderr line and no traceback; return it."""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.output
    assert lines[0].startswith("error: ")
    return lines[0]


@pytest.fixture
def plan_file(toy_family, tmp_path):
    spec = tmp_path / "toy.toml"
    spec.write_text(SPEC)
    out = tmp_path / "plan.json"
    result = run("plan", spec, "-o", out)
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture
def users_csv(tmp_path):
    path = tmp_path / "users.csv"
    rows = ["yes"] * 300 + ["no"] * 700
    path.write_text("item\n" + "\n".join(rows) + "\n")
    return path


def test_plan_writes_verified_plan_and_prints_table(plan_file):
    plan = json.loads(plan_file.read_text())
    assert plan["format_version"] == "2.0" and plan["mechanism"] == "toy-rr"
    assert plan["verification"]["holds"] is True
    p = plan["params"]["p"]
    assert p / (1 - p) <= math.e and p / (1 - p) > math.e * (1 - 1e-9)


def test_plan_output_has_users_umask(toy_family, tmp_path):
    spec = tmp_path / "toy.toml"
    spec.write_text(SPEC)
    old = os.umask(0o027)
    try:
        assert run("plan", spec, "-o", tmp_path / "a.json").exit_code == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.json").stat().st_mode) == 0o640
    old = os.umask(0o002)
    try:
        assert run("plan", spec, "-o", tmp_path / "b.json").exit_code == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "b.json").stat().st_mode) == 0o664


def test_plan_warns_about_public_planning_inputs(toy_family, tmp_path):
    spec = tmp_path / "toy.toml"
    spec.write_text(SPEC + 'prior_csv = "prior.csv"\n')
    result = run("plan", spec)
    assert result.exit_code == 0
    warnings = [ln for ln in result.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warnings) == 1
    assert "outside the stated epsilon" in warnings[0] and "prior.csv" in warnings[0]
    spec.write_text(SPEC)
    assert "warning" not in run("plan", spec).stderr


def test_plan_refuses_to_write_failing_plan(toy_family, tmp_path, monkeypatch):
    from ldpplan.planner._report import Verification

    spec = tmp_path / "toy.toml"
    spec.write_text(SPEC)
    monkeypatch.setattr(toy_family.ToyFamily, "verify", lambda self, plan: Verification(False, "p too large"))
    result = run("plan", spec, "-o", tmp_path / "out.json")
    assert result.exit_code == 1
    assert "p too large" in one_error_line(result)
    assert not (tmp_path / "out.json").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["toy.toml"]


def test_plan_example_and_list(toy_family):
    assert run("plan", "--list-examples").output.split() == ["toy-example"]
    result = run("plan", "--example", "toy-example", "--json")
    assert json.loads(result.output)["spec"]["epsilon"] == 1.0
    assert run("plan").exit_code == 2


def test_verify_holds_and_violated(plan_file):
    result = run("verify", plan_file)
    assert result.exit_code == 0 and result.output.startswith("holds: p/(1-p) <= e^1.0")
    plan = json.loads(plan_file.read_text())
    plan["guarantee"]["epsilon"] = 0.5
    plan["spec"]["epsilon"] = 0.5
    plan_file.write_text(json.dumps(plan))
    result = run("verify", plan_file)
    assert result.exit_code == 1
    assert result.stderr.startswith("violated: params.p: p/(1-p) must be <= e^epsilon; exceeds by 0.5")
    as_json = json.loads(run("verify", plan_file, "--json").stdout)
    assert as_json["holds"] is False


def test_old_format_plan_is_one_line_naming_the_version(plan_file):
    plan = json.loads(plan_file.read_text())
    plan["format_version"] = "1.0"
    plan_file.write_text(json.dumps(plan))
    for args in (["verify", plan_file], ["simulate", plan_file], ["estimate", plan_file, plan_file]):
        result = run(*args)
        assert result.exit_code == 2
        line = one_error_line(result)
        assert "format_version" in line and "'1.0'" in line and "2.0" in line


def _parquet(path):
    """(key-value metadata as str -> str, columns as numpy) of a reports file, read with plain pyarrow."""
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    meta = {k.decode(): v.decode() for k, v in table.schema.metadata.items() if not k.startswith(b"ARROW")}
    return meta, {name: table.column(name).to_numpy() for name in table.column_names}


def test_perturb_estimate_roundtrip(plan_file, users_csv, tmp_path):
    reports = tmp_path / "r.parquet"
    result = run("perturb", plan_file, "--input", users_csv, "-o", reports, "--seed", 7)
    assert result.exit_code == 0, result.output
    assert "wrote 1,000 reports" in result.output and "seed=7" in result.output
    meta, columns = _parquet(reports)
    y = columns["y"]
    from ldpplan.planner._plan_format import plan_fingerprint

    assert meta["seeded"] == "true" and meta["seed"] == "7" and len(y) == 1000
    assert meta["plan_fingerprint"] == plan_fingerprint(json.loads(plan_file.read_text()))
    assert meta["mechanism"] == "toy-rr" and meta["format_version"] == "2.0" and meta["format"] == "ldpplan-reports"
    # reproducible: the same seed gives the same reports
    again = tmp_path / "r2.parquet"
    assert run("perturb", plan_file, "--input", users_csv, "-o", again, "--seed", 7).exit_code == 0
    assert np.array_equal(_parquet(again)[1]["y"], y)
    out = json.loads(run("estimate", plan_file, reports, "--json").stdout)
    assert set(out) >= {"frequency", "mean", "n", "method", "std_error", "labels"}
    assert out["labels"] == ["no", "yes"] and out["n"] == 1000 and out["method"] == "empirical"
    assert out["mean"] is None
    p = json.loads(plan_file.read_text())["params"]["p"]
    expected = (y.mean() - (1 - p)) / (2 * p - 1)
    assert out["frequency"][1] == pytest.approx(expected, rel=1e-12)
    # 4 standard errors around the true share 0.3
    assert abs(out["frequency"][1] - 0.3) < 4 * out["std_error"][1]


def test_perturb_without_seed_uses_secure_rng(plan_file, users_csv, tmp_path, monkeypatch):
    from ldpplan import mechanisms

    calls = []
    real = mechanisms.secure_rng

    def spy(*a, **k):
        calls.append(a)
        return real(*a, **k)

    monkeypatch.setattr(mechanisms, "secure_rng", spy)
    reports = tmp_path / "r.parquet"
    result = run("perturb", plan_file, "--input", users_csv, "-o", reports)
    assert result.exit_code == 0 and calls == [()]
    meta, _ = _parquet(reports)
    assert meta["seeded"] == "false" and "seed" not in meta


def test_perturb_refuses_failing_plan_and_writes_nothing(plan_file, users_csv, tmp_path):
    plan = json.loads(plan_file.read_text())
    plan["guarantee"]["epsilon"] = plan["spec"]["epsilon"] = 0.5
    plan_file.write_text(json.dumps(plan))
    out = tmp_path / "r.parquet"
    result = run("perturb", plan_file, "--input", users_csv, "-o", out)
    assert result.exit_code == 1
    assert "plan fails verification" in one_error_line(result)
    assert not out.exists()
    plan_file.write_text("{")
    result = run("perturb", plan_file, "--input", users_csv, "-o", out)
    assert result.exit_code == 2 and not out.exists()


def test_perturb_bad_input_csv(plan_file, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("item\nyes\nmaybe\n")
    out = tmp_path / "r.parquet"
    result = run("perturb", plan_file, "--input", bad, "-o", out)
    assert result.exit_code == 2
    assert "line 3" in one_error_line(result) and "'maybe'" in result.stderr
    assert not out.exists()


@pytest.fixture
def reports_file(plan_file, users_csv, tmp_path):
    out = tmp_path / "reports.parquet"
    assert run("perturb", plan_file, "--input", users_csv, "-o", out, "--seed", 1).exit_code == 0
    return out


def test_estimate_methods_table_and_csv(plan_file, reports_file, tmp_path):
    result = run("estimate", plan_file, reports_file, "--method", "bogus")
    assert result.exit_code == 2
    line = one_error_line(result)
    assert "--method" in line and "'empirical', 'clipped'" in line and "'bogus'" in line
    clipped = json.loads(run("estimate", plan_file, reports_file, "--method", "clipped", "--json").stdout)
    assert clipped["method"] == "clipped" and 0 <= clipped["frequency"][1] <= 1
    table = run("estimate", plan_file, reports_file)
    assert table.exit_code == 0
    assert "…" not in table.output and "yes" in table.output and "no" in table.output
    csv_path = tmp_path / "est.csv"
    assert run("estimate", plan_file, reports_file, "-o", csv_path).exit_code == 0
    lines = csv_path.read_text().splitlines()
    assert lines[0] == "label,frequency,count,std_error"
    full = json.loads(run("estimate", plan_file, reports_file, "--json").stdout)
    assert float(lines[2].split(",")[1]) == full["frequency"][1]   # full precision in the CSV


def test_estimate_refuses_reports_of_another_plan(plan_file, reports_file, tmp_path, toy_family):
    spec = tmp_path / "other.toml"
    spec.write_text(SPEC.replace("1.0", "2.0"))
    other = tmp_path / "other.json"
    assert run("plan", spec, "-o", other).exit_code == 0
    result = run("estimate", other, reports_file)
    assert result.exit_code == 2
    line = one_error_line(result)
    assert str(reports_file) in line and "another plan" in line


def _rewrite(path, columns=None, meta=None, drop=()):
    """Rewrite a reports file with some columns / metadata replaced (a tampering client)."""
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    old = dict(table.schema.metadata)
    cols = {name: table.column(name) for name in table.column_names}
    cols.update(columns or {})
    new = {k: v for k, v in old.items() if k.decode() not in drop}
    new.update({k.encode(): v.encode() for k, v in (meta or {}).items()})
    pq.write_table(pa.table(cols).replace_schema_metadata(new), path)


@pytest.mark.parametrize("columns, meta, drop, needle", [
    ({"y": np.full(1000, 7, dtype=np.uint8)}, None, (), "reports.y"),
    ({"y": np.full(1000, 0.5)}, None, (), "column 'y' must be an integer or fixed_size_binary column"),
    ({"y": pa.array([None] * 999 + [1], pa.uint8())}, None, (), "column 'y' must not hold nulls"),
    (None, {"mechanism": "rr"}, (), "reports of mechanism 'rr'"),
    (None, {"format_version": "9.0"}, (), "metadata.format_version"),
    (None, {"seeded": "maybe"}, (), "metadata.seeded"),
    (None, {"seed": "-3"}, (), "metadata.seed"),
    (None, {"seeded": "false"}, (), "metadata.seed"),
    (None, None, ("plan_fingerprint",), "must record ['plan_fingerprint']"),
    ({"y": np.zeros(0, np.uint8)}, None, (), "at least one report"),
])
def test_estimate_tampered_reports_exit_2(plan_file, reports_file, columns, meta, drop, needle):
    _rewrite(reports_file, columns, meta, drop)
    out = reports_file.parent / "est.csv"
    result = run("estimate", plan_file, reports_file, "-o", out)
    assert result.exit_code == 2
    assert needle in one_error_line(result) and str(reports_file) in one_error_line(result)
    assert not out.exists()


def test_estimate_garbage_reports_file(plan_file, tmp_path, reports_file):
    junk = tmp_path / "junk.parquet"
    for data in (b"PK\x03\x04 not really a zip", b"", b"PAR1" + b"\x00" * 20 + b"PAR1",
                 reports_file.read_bytes()[:-100]):
        junk.write_bytes(data)
        result = run("estimate", plan_file, junk)
        assert result.exit_code == 2 and str(junk) in one_error_line(result)


def test_estimate_passes_the_reports_to_the_runtime(plan_file, reports_file, monkeypatch, toy_family):
    """The CLI estimates from the aggregate (read a batch at a time); a method the aggregate cannot
    serve (a ValueError, as uRAP's em) gets the Reports, read whole."""
    from ldpplan.mechanisms import Aggregate, Reports

    seen = []
    real = toy_family.ToyRR.estimate
    refuse = []

    def spy(self, reports_or_aggregate, method=None):
        seen.append(type(reports_or_aggregate))
        if refuse and isinstance(reports_or_aggregate, Aggregate):
            raise ValueError("this method needs each report")
        return real(self, reports_or_aggregate, method)

    monkeypatch.setattr(toy_family.ToyRR, "estimate", spy)
    assert run("estimate", plan_file, reports_file).exit_code == 0
    assert seen == [Aggregate]
    refuse.append(True)
    seen.clear()
    assert run("estimate", plan_file, reports_file).exit_code == 0
    assert seen == [Aggregate, Reports]

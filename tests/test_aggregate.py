"""``ldpplan aggregate`` (local engine) and ``ldpplan estimate`` on several inputs and on aggregate files:
merging, incremental aggregates, and every bad input refused with exit 2 naming the file, nothing written."""
from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _family_helpers import example_runtime, perturb, read_inputs, small_example_per_family, subset, sum_aggregates
from ldpplan.planner.cli import main

SPEC = 'mechanism = "toy"\nepsilon = {epsilon}\nusers = 100\n'
SMALL = small_example_per_family()


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def error_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    return lines[0]


def make_plan(tmp_path, epsilon=1.0, name="plan.json"):
    spec = tmp_path / f"{name}.toml"
    spec.write_text(SPEC.format(epsilon=epsilon))
    out = tmp_path / name
    assert run("plan", spec, "-o", out).exit_code == 0
    return out


@pytest.fixture
def shards(toy_family, tmp_path):
    """A toy plan and three report files of 300, 500 and 200 users (30 % "yes")."""
    plan = make_plan(tmp_path)
    paths = []
    for i, n in enumerate((300, 500, 200)):
        users = tmp_path / f"users{i}.csv"
        users.write_text("item\n" + "\n".join(["yes"] * (3 * n // 10) + ["no"] * (7 * n // 10)) + "\n")
        path = tmp_path / "reports" / f"day{i}.parquet"
        assert run("perturb", plan, "--input", users, "-o", path, "--seed", i).exit_code == 0
        paths.append(path)
    return plan, paths


def _yes_count(paths):
    return int(sum(pq.read_table(p).column("y").to_numpy().sum() for p in paths))


def test_aggregate_globs_and_records_sources(shards, tmp_path):
    plan, paths = shards
    out = tmp_path / "agg.json"
    result = run("aggregate", plan, tmp_path / "reports" / "*.parquet", "-o", out)
    assert result.exit_code == 0, result.output
    assert "1,000 reports from 3 files" in result.output
    record = json.loads(out.read_text())
    from ldpplan.planner._plan_format import plan_fingerprint

    assert record["format"] == "ldpplan-aggregate-file/1" and record["mechanism"] == "toy-rr"
    assert record["plan_fingerprint"] == plan_fingerprint(json.loads(plan.read_text()))
    assert [(s["file"], s["kind"], s["rows"]) for s in record["sources"]] == \
        [(str(p), "reports", n) for p, n in zip(paths, (300, 500, 200))]
    assert record["n"] == 1000 and record["aggregate"]["n"] == 1000
    yes = _yes_count(paths)
    assert record["aggregate"]["counts"]["counts"] == [1000 - yes, yes]


def test_aggregates_merge_incrementally_and_estimate_like_the_reports(shards, tmp_path):
    plan, paths = shards
    day01, day2, total, direct = (tmp_path / f"{n}.json" for n in ("day01", "day2", "total", "direct"))
    assert run("aggregate", plan, paths[0], paths[1], "-o", day01).exit_code == 0
    assert run("aggregate", plan, paths[2], "-o", day2).exit_code == 0
    assert run("aggregate", plan, day01, day2, "-o", total).exit_code == 0
    assert run("aggregate", plan, *paths, "-o", direct).exit_code == 0
    merged, once = json.loads(total.read_text()), json.loads(direct.read_text())
    assert merged["aggregate"] == once["aggregate"]
    assert [s["kind"] for s in merged["sources"]] == ["aggregate", "aggregate"]
    assert [s["file"] for s in merged["sources"][0]["sources"]] == [str(paths[0]), str(paths[1])]
    from_agg = json.loads(run("estimate", plan, total, "--json").stdout)
    from_reports = json.loads(run("estimate", plan, *paths, "--json").stdout)
    assert from_agg == from_reports and from_agg["n"] == 1000 and from_agg["labels"] == ["no", "yes"]
    mixed = json.loads(run("estimate", plan, day01, paths[2], "--json").stdout)
    assert mixed == from_reports


def _check_refused(args, out, needle, name):
    result = run(*args)
    assert result.exit_code == 2
    line = error_line(result)
    assert needle in line and str(name) in line, line
    assert not out.exists()


def test_fingerprint_mismatch_is_exit_2_naming_the_file(shards, tmp_path):
    plan, paths = shards
    other = make_plan(tmp_path, epsilon=2.0, name="other.json")
    out = tmp_path / "agg.json"
    _check_refused(["aggregate", other, *paths, "-o", out], out, "plan_fingerprint", paths[0])
    good = tmp_path / "good.json"
    assert run("aggregate", plan, *paths, "-o", good).exit_code == 0
    _check_refused(["aggregate", other, good, "-o", out], out, "another plan", good)
    _check_refused(["estimate", other, good, "-o", out], out, "another plan", good)


@pytest.mark.parametrize("damage, needle", [
    (lambda b: b[: len(b) // 2], "must be a Parquet reports file"),       # truncated
    (lambda b: b[:-12] + b"\xff" * 8 + b[-4:], "must be a Parquet reports file"),  # corrupt footer
    (lambda b: b"", "empty (0 bytes"),
    (lambda b: b[:8] + b"\x00" * (len(b) - 16) + b[-8:], "Parquet"),      # corrupt pages, intact footer
])
def test_damaged_report_file_is_exit_2_nothing_written(shards, tmp_path, damage, needle):
    plan, paths = shards
    paths[1].write_bytes(damage(paths[1].read_bytes()))
    out = tmp_path / "agg.json"
    result = run("aggregate", plan, *paths, "-o", out)
    assert result.exit_code == 2 and not out.exists()
    line = error_line(result)
    assert str(paths[1]) in line and (needle in line or "unreadable Parquet data" in line), line


def test_other_mechanism_and_empty_files_are_exit_2(shards, tmp_path):
    plan, paths = shards
    out = tmp_path / "agg.json"
    table = pq.read_table(paths[0])
    meta = dict(table.schema.metadata)
    pq.write_table(table.replace_schema_metadata({**meta, b"mechanism": b"rr"}), paths[0])
    _check_refused(["aggregate", plan, *paths, "-o", out], out, "reports of mechanism 'rr'", paths[0])
    pq.write_table(table.slice(0, 0), paths[0])
    _check_refused(["aggregate", plan, *paths, "-o", out], out, "at least one report", paths[0])
    agg = tmp_path / "not-an-aggregate.json"
    agg.write_text('{"format": "something else"}')
    _check_refused(["aggregate", plan, agg, "-o", out], out, "format: must be 'ldpplan-aggregate-file/1'", agg)


def test_tampered_values_and_aggregates_are_exit_2(shards, tmp_path):
    plan, paths = shards
    out = tmp_path / "agg.json"
    table = pq.read_table(paths[2])
    bad = table.set_column(0, table.schema.field(0), pa.array(np.full(200, 9, np.uint8)))
    pq.write_table(bad.replace_schema_metadata(table.schema.metadata), paths[2])
    _check_refused(["aggregate", plan, *paths, "-o", out], out, "reports.y", paths[2])
    good = tmp_path / "good.json"
    assert run("aggregate", plan, paths[0], "-o", good).exit_code == 0
    record = json.loads(good.read_text())
    record["aggregate"]["counts"]["counts"] = [-1, 301]
    good.write_text(json.dumps(record))
    _check_refused(["aggregate", plan, good, "-o", out], out, "aggregate.counts.counts: counts must be >= 0", good)
    record["aggregate"]["counts"]["counts"] = [100, 100, 100]
    good.write_text(json.dumps(record))
    _check_refused(["aggregate", plan, paths[1], good, "-o", out], out, "shapes differ", good)
    record["n"] = 7
    good.write_text(json.dumps(record))
    _check_refused(["aggregate", plan, good, "-o", out], out, "must match the file's record", good)


def test_counting_a_file_twice_is_refused(shards, tmp_path):
    plan, paths = shards
    out = tmp_path / "agg.json"
    _check_refused(["aggregate", plan, paths[0], paths[0], "-o", out], out, "given twice", paths[0])
    day = tmp_path / "day.json"
    assert run("aggregate", plan, paths[0], paths[1], "-o", day).exit_code == 0
    _check_refused(["aggregate", plan, day, paths[1], "-o", out], out, "is counted twice", paths[1])
    _check_refused(["aggregate", plan, tmp_path / "none*.parquet", "-o", out], out, "matches no file", "none*")
    result = run("aggregate", plan, *paths, "-o", out, "--scheduler", "tcp://127.0.0.1:1")
    assert result.exit_code == 2 and "--scheduler" in error_line(result) and not out.exists()


@pytest.mark.parametrize("fam, name", SMALL)
def test_estimate_from_an_aggregate_file_matches_the_reports(fam, name, request, tmp_path):
    """Every runtime through files: aggregate -> estimate equals estimate on the reports (empirical);
    a method that needs the reports (e.g. uRAP em) on an aggregate is a clean exit 2."""
    from ldpplan.planner._io import write_json_atomic
    from ldpplan.planner._plan_format import plan_fingerprint, tool_version
    from ldpplan.planner._reports_file import write_reports

    plan, mech = example_runtime(fam, name, request)
    plan_path = tmp_path / "plan.json"
    write_json_atomic(plan_path, plan)
    reports = perturb(mech, read_inputs(fam, plan, tmp_path, 300, np.random.default_rng(5)),
                      np.random.default_rng(6))
    path = tmp_path / "r.parquet"
    write_reports(path, reports.to_arrays(), mechanism=plan["mechanism"], plan_fingerprint=plan_fingerprint(plan),
                  ldpplan_version=tool_version(), seed=6)
    agg = tmp_path / "agg.json"
    assert run("aggregate", plan_path, path, "-o", agg).exit_code == 0
    record, direct = json.loads(agg.read_text())["aggregate"], mech.aggregate(reports).to_dict()
    assert {k: record[k] for k in direct} == direct   # plus the plan's fingerprint and the file's batch
    assert record["plan_fingerprint"] == plan_fingerprint(plan) and [b["rows"] for b in record["batches"]] == [300]
    on_agg = json.loads(run("estimate", plan_path, agg, "--json", "--method", "empirical").stdout)
    on_reports = json.loads(run("estimate", plan_path, path, "--json", "--method", "empirical").stdout)
    assert on_agg == on_reports
    assert on_agg.pop("round", None) == (0 if getattr(mech, "memoized", False) else None)  # the round estimated
    assert on_agg == mech.estimate(reports, method="empirical").to_dict(labels=on_agg["labels"])
    for method in [m for m in mech.methods if m == "em"]:   # (em-bits is slow and works on aggregates)
        try:
            mech.estimate(mech.aggregate(reports), method=method)
        except ValueError as exc:
            result = run("estimate", plan_path, agg, "--method", method)
            assert result.exit_code == 2 and str(exc).split(":")[0] in error_line(result)
            assert run("estimate", plan_path, path, "--method", method).exit_code == 0   # the reports have it


@pytest.mark.parametrize("fam, name", SMALL)
@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_merge_is_associative_over_random_splits_of_users(fam, name, request, tmp_path_factory, data):
    plan, mech = example_runtime(fam, name, request)
    reports = _reports_of(fam, name, plan, mech, tmp_path_factory)
    n = len(reports)
    labels = data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n), label="part of each user")
    parts = [mech.aggregate(subset(reports, np.flatnonzero(np.array(labels) == k))) for k in range(4)]
    order = data.draw(st.permutations(range(4)), label="merge order")
    left = ((parts[order[0]] + parts[order[1]]) + parts[order[2]]) + parts[order[3]]
    right = parts[order[0]] + (parts[order[1]] + (parts[order[2]] + parts[order[3]]))
    whole = mech.aggregate(reports)
    assert left == right == whole == sum_aggregates(parts)
    assert type(whole).from_dict(json.loads(json.dumps(left.to_dict()))) == whole


_REPORTS: dict = {}


def _reports_of(fam, name, plan, mech, tmp_path_factory):
    if (fam.name, name) not in _REPORTS:
        data = read_inputs(fam, plan, tmp_path_factory.mktemp("in"), 60, np.random.default_rng(8))
        _REPORTS[(fam.name, name)] = perturb(mech, data, np.random.default_rng(9))
    return _REPORTS[(fam.name, name)]

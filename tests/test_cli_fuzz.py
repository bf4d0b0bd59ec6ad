"""Fuzzing the command line with malformed specs, plan files and reports files.

Whatever the bytes, every command ends with exit 0, 1 or 2, never prints a traceback, and
never leaves a partial (or temporary) output file behind. Derandomized on CI (conftest profile).
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

import hypothesis.strategies as st
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings

import _toy_family
from ldpplan.planner.cli import main

SPEC = {"mechanism": "toy", "epsilon": 1.0, "users": 100}
FUZZ = settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow], deadline=None)


def _valid_plan() -> dict:
    with _toy_family.registered():
        return _toy_family.FAMILY.plan(SPEC)


VALID_PLAN = _valid_plan()
VALID_TEXT = json.dumps(VALID_PLAN)

# JSON fragments a hostile file may hold where a value is expected
_BAD_VALUES = st.sampled_from([
    "NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1" + "0" * 5000, "null", "true", '"0.7"', "[]", "{}",
    "[" * 5000 + "]" * 5000, "-0.0", "4.9e-324", '"\\ud800"', "0.9999999999999999999999",
])


def _leaf_paths(node, prefix=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaf_paths(v, prefix + (k,))
    elif isinstance(node, list) and node:
        for i, v in enumerate(node):
            yield from _leaf_paths(v, prefix + (i,))
    yield prefix


_PATHS = [p for p in _leaf_paths(VALID_PLAN) if p]


def _set_raw(plan: dict, path: tuple, raw: str) -> str:
    """The plan's JSON text with the value at ``path`` replaced by the raw JSON fragment ``raw``."""
    marker = "__FUZZ_MARKER__"
    copy = json.loads(json.dumps(plan))
    node = copy
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = marker
    return json.dumps(copy).replace(json.dumps(marker), raw, 1)


def _delete(plan: dict, path: tuple) -> str:
    copy = json.loads(json.dumps(plan))
    node = copy
    for part in path[:-1]:
        node = node[part]
    del node[path[-1]]
    return json.dumps(copy)


@st.composite
def plan_texts(draw) -> bytes:
    kind = draw(st.sampled_from(["bytes", "truncate", "replace", "delete", "version", "deep", "valid"]))
    if kind == "bytes":
        return draw(st.binary(max_size=300))
    if kind == "truncate":
        return VALID_TEXT[: draw(st.integers(0, len(VALID_TEXT) - 1))].encode()
    if kind == "replace":
        return _set_raw(VALID_PLAN, draw(st.sampled_from(_PATHS)), draw(_BAD_VALUES)).encode()
    if kind == "delete":
        return _delete(VALID_PLAN, draw(st.sampled_from([p for p in _PATHS if isinstance(p[-1], str)]))).encode()
    if kind == "version":
        version = draw(st.sampled_from(['"1.0"', '"2.1"', '"3.0"', "2", "null", '""']))
        return _set_raw(VALID_PLAN, ("format_version",), version).encode()
    if kind == "deep":
        return ('{"a": ' + "[" * 5000 + "]" * 5000 + "}").encode()
    return VALID_TEXT.encode()


@st.composite
def spec_files(draw) -> tuple[str, bytes]:
    suffix = draw(st.sampled_from([".toml", ".json"]))
    kind = draw(st.sampled_from(["bytes", "truncate", "replace", "delete", "deep", "valid"]))
    text = json.dumps(SPEC)
    if kind == "bytes":
        return suffix, draw(st.binary(max_size=200))
    if kind == "truncate":
        return ".json", text[: draw(st.integers(0, len(text) - 1))].encode()
    if kind == "replace":
        return ".json", _set_raw(SPEC, (draw(st.sampled_from(list(SPEC))),), draw(_BAD_VALUES)).encode()
    if kind == "delete":
        return ".json", _delete(SPEC, (draw(st.sampled_from(list(SPEC))),)).encode()
    if kind == "deep":
        return ".toml", ("a = " + "[" * 5000 + "]" * 5000 + "\n").encode()
    toml = "".join(f"{k} = {json.dumps(v)}\n" for k, v in SPEC.items())
    return (".json", text.encode()) if suffix == ".json" else (".toml", toml.encode())


def _check(result, out: Path, folder: Path, before: set[str]) -> None:
    assert result.exit_code in (0, 1, 2), (result.exit_code, result.output)
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    if result.exit_code != 0:
        assert not out.exists()
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert {p.name for p in folder.iterdir()} - before <= {out.name}   # no temporary files left


def _invoke(args):
    return CliRunner().invoke(main, [str(a) for a in args])


@FUZZ
@given(spec=spec_files())
def test_fuzz_plan(spec):
    suffix, data = spec
    with _toy_family.registered(), tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = folder / f"spec{suffix}"
        path.write_bytes(data)
        out = folder / "plan.json"
        before = {p.name for p in folder.iterdir()}
        _check(_invoke(["plan", path, "-o", out]), out, folder, before)


@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
@FUZZ
@given(text=plan_texts(), command=st.sampled_from(["verify", "perturb", "estimate", "simulate"]))
def test_fuzz_plan_files(text, command):
    _fuzz_plan_file(text, command)


@pytest.mark.slow
@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(text=plan_texts(), command=st.sampled_from(["verify", "perturb", "estimate", "simulate"]))
def test_fuzz_plan_files_long(text, command):
    _fuzz_plan_file(text, command)


def _fuzz_plan_file(text: bytes, command: str) -> None:
    with _toy_family.registered(), tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        good = folder / "good.json"
        good.write_text(VALID_TEXT)
        users = folder / "users.csv"
        users.write_text("item\nyes\nno\nno\n")
        reports = folder / "reports.parquet"
        assert _invoke(["perturb", good, "--input", users, "-o", reports, "--seed", 1]).exit_code == 0
        plan = folder / "plan.json"
        plan.write_bytes(text)
        out = folder / "out.file"
        args = {"verify": ["verify", plan], "perturb": ["perturb", plan, "--input", users, "-o", out],
                "estimate": ["estimate", plan, reports, "-o", out],
                "simulate": ["simulate", plan, "--trials", 1, "--seed", 0, "-O", "users=5"]}[command]
        before = {p.name for p in folder.iterdir()}
        _check(_invoke(args), out, folder, before)


@FUZZ
@given(data=st.one_of(st.binary(max_size=300), st.just(b"PK\x05\x06" + b"\x00" * 18)))
def test_fuzz_reports_files(data):
    with _toy_family.registered(), tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        plan = folder / "plan.json"
        plan.write_text(VALID_TEXT)
        reports = folder / "reports.parquet"
        reports.write_bytes(data)
        out = folder / "est.csv"
        before = {p.name for p in folder.iterdir()}
        result = _invoke(["estimate", plan, reports, "-o", out])
        _check(result, out, folder, before)
        assert result.exit_code == 2


@pytest.mark.parametrize("version", ["1.0", "1.1", "3.0"])
def test_plan_of_another_format_version_is_one_line(version, tmp_path):
    with _toy_family.registered():
        path = tmp_path / "old.json"
        path.write_text(_set_raw(VALID_PLAN, ("format_version",), json.dumps(version)))
        result = _invoke(["verify", path])
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert f"format_version: this ldpplan reads plan format 2.0 (got '{version}')" in line


@pytest.mark.parametrize("path, raw, needle", [
    (("guarantee", "epsilon"), "1e400", "the number 1e400 is out of the float range"),
    (("params", "p"), "1" + "0" * 5000, "has more than 100 digits"),
    (("params", "p"), "NaN", "NaN is not allowed"),
    (("params", "p"), "[" * 5000 + "]" * 5000, "nest at most"),
])
def test_hostile_numbers_and_nesting_are_one_line_exit_2(path, raw, needle, tmp_path):
    with _toy_family.registered():
        plan = tmp_path / "plan.json"
        plan.write_text(_set_raw(VALID_PLAN, path, raw))
        result = _invoke(["verify", plan])
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert needle in line and str(plan) in line

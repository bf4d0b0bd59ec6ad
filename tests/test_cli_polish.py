"""Issue 19 point 7: the small rough edges of the command line, each pinned."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ldpplan.planner.cli import main


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_error_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.output and "Usage:" not in result.output
    assert lines[0].startswith("error: ")
    return lines[0]


@pytest.fixture(scope="module")
def health_plan(tmp_path_factory):
    out = tmp_path_factory.mktemp("health") / "health.json"
    result = run("plan", "--example", "health", "-o", out)
    assert result.exit_code == 0, result.output
    return out


@pytest.mark.parametrize("args, expected", [
    (["audit", "{plan}", "--trials", "0"], "Invalid value for '--trials': 0 is not in the range x>=1."),
    (["plan", "--example", "health", "-o", "{dir}"], "is a directory"),
    (["estimate", "{plan}"], "Missing argument 'INPUTS...'"),
    (["no-such-command"], "No such command 'no-such-command'"),
    (["--no-such-option"], "No such option '--no-such-option'"),
])
def test_usage_errors_are_one_line_with_exit_2(health_plan, tmp_path, args, expected):
    args = [a.format(plan=health_plan, dir=tmp_path) for a in args]
    result = run(*args)
    assert result.exit_code == 2
    line = one_error_line(result)
    assert expected in line and "--help" in line, line

"""options, schema, simulate and --help of the command line; the exception -> exit code mapping."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from ldpplan.planner import _cli_errors
from ldpplan.planner.cli import main
from ldpplan.planner.errors import InputDataError, PlanFormatError, PrivacyViolation, SpecError

SPEC = 'mechanism = "toy"\nepsilon = 1.0\nusers = 100\n'


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def plan_file(toy_family, tmp_path):
    spec = tmp_path / "toy.toml"
    spec.write_text(SPEC)
    out = tmp_path / "plan.json"
    assert run("plan", spec, "-o", out).exit_code == 0
    return out


def test_options_lists_keys_defaults_descriptions_and_input_doc(toy_family):
    for name in ("toy", "toy-rr"):
        result = run("options", name)
        assert result.exit_code == 0, result.output
        assert "users" in result.output and "200" in result.output and "synthetic users per trial" in result.output
        assert "share_yes" in result.output and "0.3" in result.output
        assert "perturb --input (toy): a CSV with a column `item`" in result.output
    data = json.loads(run("options", "toy", "--json").stdout)
    assert data["options"][0] == {"key": "users", "default": 200, "required": False,
                                  "description": "synthetic users per trial"}  # JSON values, not reprs
    assert data["input_doc"].startswith("a CSV")
    bad = run("options", "nope")
    assert bad.exit_code == 2 and "MECHANISM" in bad.stderr and "toy-rr" in bad.stderr


def test_simulate_passes_options_untouched_and_rejects_unknown_keys(plan_file):
    result = run("simulate", plan_file, "--trials", 3, "--seed", 1, "-O", "users=50", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["seed"] == 1 and data["trials"] == 3 and data["mse"] > 0
    bad = run("simulate", plan_file, "-O", "bogus=1")
    assert bad.exit_code == 2
    line = bad.stderr.strip()
    assert "\n" not in line and "-O bogus" in line and "share_yes" in line and "users" in line
    assert run("simulate", plan_file, "-O", "users=1", "-O", "users=2").exit_code == 2
    assert "KEY=VALUE" in run("simulate", plan_file, "-O", "users").stderr
    value = run("simulate", plan_file, "-O", "users= 5")  # passed through as ' 5': pydantic's rule decides
    assert value.exit_code in (0, 2) and "Traceback" not in value.output


def test_simulate_help_points_to_options():
    text = run("simulate", "--help").output
    assert "ldpplan options MECHANISM" in text


@pytest.mark.parametrize("command", ["plan", "verify", "simulate", "perturb", "estimate", "options", "schema"])
def test_every_help_has_an_example(command):
    text = run(command, "--help").output
    assert "Examples:" in text
    example_lines = [ln.strip() for ln in text.splitlines() if ln.strip().startswith(f"ldpplan {command}")]
    assert example_lines, text


def test_perturb_input_help_says_where_columns_are_documented():
    text = " ".join(run("perturb", "--help").output.split())
    assert "ldpplan options MECHANISM" in text and "`user,key,value`" in text


def test_schema_composed_and_one_family(toy_family):
    composed = json.loads(run("schema").stdout)
    assert composed["properties"]["mechanism"]["enum"] == ["toy-rr"]
    result = run("schema", "--mechanism", "toy")
    assert result.exit_code == 2 and "without a schema part" in result.stderr


def test_schema_family_and_mechanism_names_agree():
    by_family = json.loads(run("schema", "--mechanism", "uldp").stdout)
    by_mechanism = json.loads(run("schema", "--mechanism", "urr").stdout)
    assert by_family == by_mechanism and by_family["$schema"].startswith("https://json-schema.org")
    assert run("schema", "--mechanism", "nope").exit_code == 2


@pytest.mark.parametrize("exc, code, text", [
    (PrivacyViolation("pair (a, b) exceeds by 0.1 nats"), 1, "pair (a, b) exceeds by 0.1 nats"),
    (SpecError("levels[0].epsilon", "must be > 0", np.float64(-1.5)), 2, "levels[0].epsilon: must be > 0 (got -1.5)"),
    (PlanFormatError("params.p: bad"), 2, "params.p: bad"),
    (InputDataError("x.csv: line 3: bad"), 2, "x.csv: line 3: bad"),
    (ValueError("method: must be one of ['empirical'] (got np.float64(1.5))"), 2,
     "method: must be one of ['empirical'] (got 1.5)"),
    (OverflowError("math range error"), 2, "OverflowError: math range error"),
    (ZeroDivisionError("division by zero"), 2, "ZeroDivisionError: division by zero"),
    (RecursionError(), 2, "input is nested too deeply to process (RecursionError)"),
    (FileNotFoundError(2, "No such file or directory"), 2, "FileNotFoundError: [Errno 2] No such file or directory"),
    (KeyError("levels"), 2, "internal error (please report): KeyError: 'levels'"),
    (AttributeError("x"), 2, "internal error (please report): AttributeError: x"),
    (ModuleNotFoundError("No module named 'randomgen'", name="randomgen"), 2,
     "a dependency is not installed: No module named 'randomgen' (pip install 'ldpplan[secure]')"),
    (ModuleNotFoundError("No module named 'matplotlib.pyplot'", name="matplotlib.pyplot"), 2,
     "a dependency is not installed: No module named 'matplotlib.pyplot' (pip install 'ldpplan[planner]')"),
    (ImportError("secure_rng needs the package 'randomgen': pip install 'ldpplan[secure]'"), 2,
     "a dependency is not installed: secure_rng needs the package 'randomgen': pip install 'ldpplan[secure]'"),
    (ImportError("cannot import name 'FAMILY' from 'ldpplan.planner.idue'", name="ldpplan.planner.idue"), 2,
     "internal error (please report): ImportError: cannot import name 'FAMILY' from 'ldpplan.planner.idue'"),
])
def test_classify(exc, code, text):
    assert _cli_errors.classify(exc) == (code, text)


@pytest.mark.parametrize("exc, code, needle", [
    (KeyError("levels"), 2, "internal error (please report): KeyError: 'levels'"),
    (ImportError("secure_rng needs the package 'randomgen': pip install 'ldpplan[secure]'"), 2,
     "pip install 'ldpplan[secure]'"),
    (ValueError("first line\nsecond line"), 2, "first line second line"),
    (PrivacyViolation("violated"), 1, "violated"),
])
def test_cli_maps_every_exception_to_one_line(plan_file, monkeypatch, toy_family, exc, code, needle):
    def boom(self, plan):
        raise exc

    monkeypatch.setattr(toy_family.ToyFamily, "verify", boom)
    result = run("verify", plan_file)
    assert result.exit_code == code
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0]
    assert "Traceback" not in result.output


def test_no_ellipsis_in_piped_tables(monkeypatch):
    from rich.console import Console

    monkeypatch.delenv("COLUMNS", raising=False)  # piped output is unbounded only without COLUMNS (issue 27)

    from ldpplan.planner import _console
    from ldpplan.planner._report import Table

    long_number = 1.2345678901234567e-300
    tables = [Table("t", ["mechanism", "value"], [["a" * 300, long_number], ["b", "x" * 500]])]
    con = _console.console()
    assert con.width == _console.PLAIN_WIDTH and con.color_system is None
    import io

    buf = io.StringIO()
    narrow = Console(file=buf, width=40, color_system=None)
    _console.print_tables(tables, narrow)          # even a narrow terminal folds, never cuts
    text = buf.getvalue()
    assert "…" not in text
    assert "".join(ch for ch in text if ch == "x") == "x" * 500


def test_ldpplan_debug_shows_the_real_exception(plan_file, monkeypatch, toy_family):
    def boom(self, plan):
        raise KeyError("levels")

    monkeypatch.setattr(toy_family.ToyFamily, "verify", boom)
    monkeypatch.setenv("LDPPLAN_DEBUG", "1")
    result = run("verify", plan_file)
    assert isinstance(result.exception, KeyError)
    monkeypatch.delenv("LDPPLAN_DEBUG")
    assert run("verify", plan_file).exit_code == 2


def test_simulate_progress_only_on_a_terminal(plan_file, monkeypatch, toy_family):
    piped = run("simulate", plan_file, "--trials", 2, "--seed", 1)
    assert piped.exit_code == 0 and piped.stderr == "" and "seed=1 trials=2 mode=aggregate" in piped.stdout
    from ldpplan.planner import _console

    seen = []
    real = toy_family.ToyFamily.simulate

    def spy(self, plan, options, progress=None):
        def wrapped(advance, total):
            seen.append((advance, total))
            progress(advance, total)
        return real(self, plan, options, wrapped)

    monkeypatch.setattr(_console, "interactive", lambda stderr=False: True)
    monkeypatch.setattr(toy_family.ToyFamily, "simulate", spy)
    result = run("simulate", plan_file, "--trials", 3, "--seed", 1)
    assert result.exit_code == 0 and seen == [(1, 3)] * 3

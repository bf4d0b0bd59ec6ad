"""Issue 19 point 3: every figure of every command's tables is shown in full at 80 and 120 columns.

Each command's tables are rendered piped (the wide plain console the README shows) and on a
terminal of 80 and 120 columns (CLI with ``COLUMNS`` on a terminal, or rich ``Console(width=...)``
on the same table objects where a run is not reproducible, e.g. the solver time of ``plan``).
Every number of the wide output must appear intact, at least as often, in the narrow output, and
no narrow line may be wider than the terminal.
"""
from __future__ import annotations

import io
import re
from collections import Counter

import pytest
from click.testing import CliRunner
from rich.console import Console

from ldpplan import planner
from ldpplan.planner import _console, api
from ldpplan.planner._console import PLAIN_WIDTH, print_tables
from ldpplan.planner._report import Table
from ldpplan.planner.cli import main

#: a figure as printed (1.5, -2.1e-05, 28,629, 12%); wall times ("0.4 s") vary between runs and are left out
NUMBER = re.compile(r"(?<![\w.])(?>-?\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?%?)(?!\w)(?!\.\w)")
WALL_TIME = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s+s\b")
WIDTHS = (80, 120)


def numbers(text: str) -> Counter:
    return Counter(NUMBER.findall(WALL_TIME.sub(" ", text)))


def render(tables, width: int) -> str:
    con = Console(file=io.StringIO(), width=width, color_system=None, highlight=False)
    print_tables(tables, con)
    return con.file.getvalue()


def assert_every_figure_shown(wide: str, narrow: str, width: int) -> None:
    missing = numbers(wide) - numbers(narrow)
    assert not missing, f"at {width} columns these figures are cut, wrapped or dropped: {dict(missing)}"
    assert "…" not in narrow
    too_wide = [line for line in narrow.splitlines() if len(line) > width]
    assert not too_wide, too_wide[:3]


def cli(args, width: int | None, monkeypatch):
    """Run the CLI piped (width None) or on a terminal of ``width`` columns."""
    with monkeypatch.context() as m:
        if width is not None:
            m.setattr(_console, "_is_tty", lambda stream: True)
            m.setenv("COLUMNS", str(width))
        result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def check_cli(args, monkeypatch):
    """The command piped, then on terminals of 80 and 120 columns: the same figures, cut by none.

    A simulation runs once: the three renderings take the first run's report (``api.simulate``
    answers from a one-entry memo), so only the drawing differs between them (the CLI path is the
    real one; a refactored CLI that bypasses ``api.simulate`` only makes this slower)."""
    real, memo = api.simulate, []

    def simulate_once(*a, **k):
        if not memo:
            memo.append(real(*a, **k))
        return memo[0]

    with monkeypatch.context() as m:
        m.setattr(api, "simulate", simulate_once)
        wide = cli(args, None, monkeypatch)
        assert max(len(line) for line in wide.splitlines()) > 0
        for width in WIDTHS:
            assert_every_figure_shown(wide, cli(args, width, monkeypatch), width)


# ---------------------------------------------------------------------------------------------
def test_layout_stacks_wide_tables_and_transposes_when_one_column_does_not_fit():
    from ldpplan.planner._layout import layout

    headers = ["method"] + [f"column {k}" for k in range(12)]
    rows = [["IDUE opt0"] + [f"{1234.5678 * k:.6g}" for k in range(12)], ["RAPPOR"] + ["2147483647"] * 12]
    wide = render([Table("wide", headers, rows, note="a note")], PLAIN_WIDTH)
    narrow = render([Table("wide", headers, rows, note="a note")], 80)
    assert "(columns 1/" in narrow and narrow.count("IDUE opt0") >= 2  # stacked, key column repeated
    assert_every_figure_shown(wide, narrow, 80)
    assert narrow.count("a note") == 1
    blocks = layout(headers, rows, 80)
    assert all(b.columns[0].index == 0 for b in blocks) and sorted(
        c.index for b in blocks for c in b.columns[1:]) == list(range(1, 13))
    # a single cell too wide for key + itself: one column | value table per row
    long = [["k" * 25, "1" * 30, "a long text " * 8], ["y", "2" * 30, "short"]]
    out = render([Table("t", ["key", "digits", "text"], long)], 50)
    assert "(row 1/2)" in out and "(row 2/2)" in out
    assert_every_figure_shown(render([Table("t", ["key", "digits", "text"], long)], PLAIN_WIDTH), out, 50)


def test_piped_tables_are_drawn_whole():
    headers = ["method"] + [f"column {k}" for k in range(12)]
    rows = [["IDUE opt0"] + [f"{1234.5678 * k:.6g}" for k in range(12)]]
    wide = render([Table("wide", headers, rows)], PLAIN_WIDTH)
    assert "(columns" not in wide and len(wide.splitlines()[1]) > 120


@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
@pytest.mark.parametrize("example", planner.list_examples())
def test_plan_summaries_fit(example):
    tables = planner.summarize(planner.make_plan(planner.example_spec(example)))
    wide = render(tables, PLAIN_WIDTH)
    for width in WIDTHS:
        assert_every_figure_shown(wide, render(tables, width), width)


def test_collapsed_idue_binding_table_fits():
    levels = [{"name": n, "epsilon": e, "items": s} for n, e, s in (("low", 0.7, 50), ("mid", 1.0, 3), ("high", 2.0, 2))]
    tables = planner.summarize(planner.make_plan({"mechanism": "idue", "levels": levels}))
    wide = render(tables, PLAIN_WIDTH)
    for width in WIDTHS:
        assert_every_figure_shown(wide, render(tables, width), width)


@pytest.fixture(scope="module")
def plans(tmp_path_factory):
    d = tmp_path_factory.mktemp("plans")
    out = {}
    for name in ("health", "health-itemsets", "pckv-synthetic", "uldp-urap"):
        out[name] = d / f"{name}.json"
        planner.write_plan(planner.make_plan(planner.example_spec(name)), out[name])
    return out


@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
@pytest.mark.parametrize("name", ["health", "uldp-urap"])
def test_simulate_tables_fit(plans, name, monkeypatch):
    """At a small n (-O n=2000); the examples' own settings are test_simulate_every_example_fits's."""
    check_cli(["simulate", plans[name], "--trials", 2, "--seed", 1, "-O", "n=2000"], monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("example", planner.list_examples())
def test_simulate_every_example_fits(example, tmp_path, monkeypatch):
    path = tmp_path / "plan.json"
    planner.write_plan(planner.make_plan(planner.example_spec(example)), path)
    check_cli(["simulate", path, "--trials", 2, "--seed", 1], monkeypatch)


@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
@pytest.mark.parametrize("name", ["health", "pckv-synthetic"])
def test_audit_tables_fit(plans, name, monkeypatch):
    check_cli(["audit", plans[name], "--trials", 2000, "--seed", 1], monkeypatch)


def test_estimate_and_explain_tables_fit(plans, tmp_path, monkeypatch):
    (tmp_path / "users.csv").write_text("item\n" + "\n".join(["hiv", "anemia", "headache"] * 50) + "\n")
    reports = tmp_path / "r.parquet"
    assert CliRunner().invoke(main, ["perturb", str(plans["health"]), "--input", str(tmp_path / "users.csv"),
                                     "-o", str(reports), "--seed", 3]).exit_code == 0
    check_cli(["estimate", plans["health"], reports], monkeypatch)
    check_cli(["explain", plans["health-itemsets"], "--items", "hiv,anemia,headache"], monkeypatch)
    check_cli(["options", "uldp"], monkeypatch)

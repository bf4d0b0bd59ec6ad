"""Issue 27 point 7: screens at 80 columns and on pipes.

Every example's ``plan`` / ``verify`` / ``audit`` output at ``COLUMNS=80`` (through the CLI, piped:
click's CliRunner) has no line longer than 80, no figure broken across lines (every number and
every ``a / b`` count of the wide rendering appears whole), and no table cell taller than two
lines (longer text goes to a footnote ``[k]`` under the table); piped output honours ``COLUMNS``.
Progress bars show a count only once they have a total (never ``0/None``).
"""
from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from ldpplan.planner import api
from ldpplan.planner._layout import MAX_CELL_LINES, breakable, footnote_tall_cells
from ldpplan.planner.cli import main

#: Figures as the tables print them: counts "8408 / 2040" and numbers (1.5, 2.168e+04, 10,000).
_FIGURE = re.compile(r"\d+ / \d+|[-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?")
FAST = ["health"]


def _run(args, columns):
    """stdout of the command (stderr's warnings and errors are one line whatever the width: the exit-code contract)."""
    result = CliRunner().invoke(main, args, env={"COLUMNS": None if columns is None else str(columns)})
    assert result.exit_code == 0, result.output
    return result.stdout


def _body(text: str) -> list[str]:
    return [ln for ln in text.split("\n") if ln.startswith("│")]


def _tallest_row(text: str) -> int:
    """Lines of the tallest table row: a body line whose first cell is blank continues the row above."""
    tallest = run = 1
    for ln in text.split("\n"):
        if not ln.startswith("│"):
            run = 1
            continue
        first = ln.split("│")[1]
        run = run + 1 if not first.strip() else 1
        tallest = max(tallest, run)
    return tallest


def _check_narrow(wide: str, narrow: str, width: int) -> None:
    too_long = [ln for ln in narrow.split("\n") if len(ln) > width]
    assert not too_long, too_long[:3]
    assert _tallest_row(wide) == 1                      # the measure means something: wide rows are one line
    assert _tallest_row(narrow) <= MAX_CELL_LINES, narrow
    others = " ".join(ln.strip() for ln in narrow.split("\n") if not ln.startswith("│"))  # notes may wrap
    whole = "\n".join(_body(narrow)) + "\n" + others
    figures = {m.group() for ln in _body(wide) for m in _FIGURE.finditer(ln)}
    broken = sorted(f for f in figures if f not in whole)
    assert not broken, broken


def _commands(example: str, tmp_path) -> list[list[str]]:
    plan = str(tmp_path / f"{example}.json")
    _run(["plan", "--example", example, "-o", plan], None)
    return [["plan", "--example", example], ["verify", plan], ["audit", plan, "--seed", "1", "--trials", "1000"]]


def _check_example(example: str, tmp_path) -> None:
    for args in _commands(example, tmp_path):
        _check_narrow(_run(args, None), _run(args, 80), 80)


@pytest.mark.parametrize("example", FAST)
def test_tables_fit_80_columns_without_tall_cells_or_broken_figures(example, tmp_path):
    _check_example(example, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("example", [e for e in api.list_examples() if e not in FAST])
def test_every_example_fits_80_columns(example, tmp_path):
    _check_example(example, tmp_path)


def test_piped_output_honours_columns_and_is_whole_without_it(tmp_path):
    wide = _run(["plan", "--example", "pckv-synthetic"], None)
    assert max(len(ln) for ln in wide.split("\n")) > 100   # the notes are long lines on an unbounded pipe
    narrow = _run(["plan", "--example", "pckv-synthetic"], 100)
    assert max(len(ln) for ln in narrow.split("\n")) <= 100
    assert "fingerprint:" in narrow and re.search(r"sha256:[0-9a-f]{64}", narrow)  # the hash is never cut


def test_audit_counts_never_wrap():
    # "8408 / 2040" has spaces but no words: it is a figure, never broken between its numbers
    assert not breakable("8408 / 2040") and not breakable("[0.12, 0.34]") and not breakable("1.5e+04 +- 3")
    assert breakable("y(hiv) = 1, y(anemia) = 0") and not breakable("anemia")
    headers = ["inputs", "event", "counts"]
    rows = [["hiv vs anemia", "y(hiv) = 1, y(anemia) = 0", "8408 / 2040"]]
    from ldpplan.planner._layout import layout

    (block,) = layout(headers, rows, 40)
    assert block.columns[2].width >= len("8408 / 2040") and not block.columns[2].wraps
    cells, notes = footnote_tall_cells(headers, rows, 40)
    assert cells[0][2] == "8408 / 2040" and notes == ["y(hiv) = 1, y(anemia) = 0"]   # the text, not the counts


def test_tall_text_cells_become_footnotes():
    long = "value^2 (values in [-1, 1]) per key, averaged over the objective keys of the spec"
    rows = [["mse_mean", "0.176", long, "eq. 8"], ["approx", "0.166", long, "eq. 18"], ["g", "6.5", "1", "eq. 16"]]
    cells, notes = footnote_tall_cells(["metric", "value", "unit", "source"], rows, 60)
    assert notes == [long, long] and [r[2] for r in cells] == ["[1]", "[2]", "1"]
    assert [r[3] for r in cells] == ["eq. 8", "eq. 18", "eq. 16"]          # short text stays in its cell
    assert footnote_tall_cells(["metric", "value", "unit", "source"], rows, 10_000) == ([list(r) for r in rows], [])


def test_progress_bar_shows_a_count_only_with_a_total():
    from ldpplan.planner._console import progress_bar

    bar = progress_bar("auditing")
    with bar as progress:
        task = bar.bar.tasks[0]
        assert task.fields["count"] == "" and task.total is None
        progress(0, 2_000)
        assert task.fields["count"] == "0/2,000"
        progress(500, 2_000)
        assert task.fields["count"] == "500/2,000" and task.completed == 500


def test_audit_and_simulate_report_their_total_before_working(tmp_path):
    from ldpplan.planner import audit
    from ldpplan.planner._report import SimulateOptions

    plan = api.make_plan(api.example_spec("health"))
    for run in (lambda p: audit(plan, trials=200, progress=p, rng=__import__("numpy").random.default_rng(1)),
                lambda p: api.simulate(plan, SimulateOptions(trials=1, seed=1), progress=p)):
        calls = []
        run(lambda advance, total: calls.append((advance, total)))
        assert calls[0][0] == 0 and calls[0][1] > 0           # the first call states the total
        assert sum(a for a, _ in calls) == calls[0][1]        # and the advances reach it


def test_errors_stay_one_line_when_columns_is_set(tmp_path):
    spec = tmp_path / "bad.json"
    spec.write_text('{"mechanism": "pie", "domain": [" a very long label that starts with a space", "b"], '
                    '"n": 1000, "target": {"bayes_error": 0.5}}')
    result = CliRunner().invoke(main, ["plan", str(spec)], env={"COLUMNS": "40"})
    assert result.exit_code == 2
    lines = result.output.strip().split("\n")
    assert len(lines) == 1 and len(lines[0]) > 40 and "domain[0]: a label must not start" in lines[0]

"""Issue 27 point 1: output that scales with the spec.

A plan with t levels has t^2 level pairs; its tables are summarized on the screen (the binding
rows, each column's extremes, the first and last rows, a count of the rest) with ``--full`` for
every row. The number of rows shown is bounded whatever t is (a count, not a timing: timings are
in ``benchmarks/bench_print.py``); the active constraints are computed on demand, equal to the
plain scan, and the collapse note stays a paragraph.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from ldpplan import planner
from ldpplan.planner._report import Table
from ldpplan.planner._summary import ROW_LIMIT, summary_table
from ldpplan.planner.cli import main
from ldpplan.planner.idue._binding import ActiveRows, binding_constraints, collapse_note, collapsed_levels
from ldpplan.planner.idue.tables import summarize


def _spec(levels: int, notion: str = "minid") -> dict:
    return {"mechanism": "idue", "model": "opt0", "notion": notion,
            "levels": [{"name": f"L{i}", "epsilon": 0.5 + 2.0 * i / (levels - 1), "items": 1} for i in range(levels)]}


def _bound(table: Table) -> int:
    """Rows a summary may show: first/last, the binding ones, 2 per column, and a gap line between each."""
    chosen = 2 + ROW_LIMIT // 2 + 2 * len(table.columns)
    return 2 * chosen + 1


def _check_summaries(plan, levels: int) -> None:
    tables = summarize(plan)
    by_title = {t.title.split(" (")[0]: t for t in tables}
    assert len(by_title["IDUE opt0"].rows) == levels
    active = by_title["Active privacy constraints"]
    assert len(active.rows) > levels                      # quadratic: many more pairs than levels
    for t in tables:
        shown = summary_table(t)
        assert len(shown.rows) <= min(len(t.rows), _bound(t)), t.title
        if len(t.rows) > ROW_LIMIT:
            assert shown.note.startswith(f"{len(shown.rows) - sum(str(r[0]).startswith('... ') for r in shown.rows)}"
                                         f" of {len(t.rows):,} rows shown")
            gaps = [int(str(r[0]).split()[1].replace(",", "")) for r in shown.rows if str(r[0]).startswith("... ")]
            assert sum(gaps) + len(shown.rows) - len(gaps) == len(t.rows)   # every row is shown or counted
    guarantee = summary_table(by_title["Guarantee"])
    assert any(str(r[0]).startswith("plain LDP") for r in guarantee.rows)   # the binding rows are kept
    assert len(collapse_note(plan)) < 3_000


@pytest.mark.slow
def test_the_summary_of_a_1000_level_plan_has_a_bounded_number_of_rows():
    plan = planner.make_plan(_spec(1_000))
    _check_summaries(plan, 1_000)
    assert len(ActiveRows(plan)) > 200_000


def test_the_summary_of_a_60_level_plan_has_a_bounded_number_of_rows():
    _check_summaries(planner.make_plan(_spec(60)), 60)


def test_plan_prints_a_summary_and_full_prints_every_row(tmp_path):
    spec = tmp_path / "levels.toml"
    spec.write_text("\n".join(['mechanism = "idue"'] + [f'[[levels]]\nname = "L{i}"\nepsilon = {0.5 + 2.0 * i / 39!r}\n'
                                                         f'items = 1' for i in range(40)]) + "\n")
    out = tmp_path / "plan.json"
    short = CliRunner().invoke(main, ["plan", str(spec), "-o", str(out)], env={"COLUMNS": None})
    full = CliRunner().invoke(main, ["plan", str(spec), "--full"], env={"COLUMNS": None})
    assert short.exit_code == 0 and full.exit_code == 0, short.output + full.output
    plan = json.loads(out.read_text())
    pairs = len(ActiveRows(plan))
    assert pairs > ROW_LIMIT
    assert f"of {pairs:,} rows shown" in short.output and "--full prints every row" in short.output
    assert short.output.count("\n│ L") < 4 * _bound(Table("", ["a"] * 8, []))
    assert full.output.count("\n│") >= 40 + pairs and "rows shown" not in full.output
    assert "verified:" in short.output and "fingerprint: sha256:" in short.output


@pytest.mark.parametrize("notion", ["minid", "avgid"])
def test_active_rows_equal_the_plain_scan(notion):
    plan = planner.make_plan(_spec(40, notion))
    listed = binding_constraints(plan)
    rows = ActiveRows(plan)
    assert len(rows) == len(listed) > 0
    as_rows = [[c.level_i, c.level_j, c.r, c.log_ratio, f"{c.slack:.1e}"] for c in listed]
    assert list(rows) == as_rows
    for k in (0, 1, len(rows) // 2, len(rows) - 1, -1):
        assert rows[k] == as_rows[k]
    # the plain definition, level by level: active when r - (u_i + w_j) <= 2e-3 max(1, r), (i, i) excluded
    lv = plan["params"]["levels"]
    u = [math.log(x["a"] / x["b"]) for x in lv]
    w = [math.log((1 - x["b"]) / (1 - x["a"])) for x in lv]
    r = (lambda e, f: min(e, f)) if notion == "minid" else (lambda e, f: (e + f) / 2)
    expected = [(lv[i]["name"], lv[j]["name"]) for i in range(len(lv)) for j in range(len(lv)) if i != j
                and r(lv[i]["epsilon"], lv[j]["epsilon"]) - (u[i] + w[j])
                <= 2e-3 * max(1.0, r(lv[i]["epsilon"], lv[j]["epsilon"]))]
    assert [(c.level_i, c.level_j) for c in listed] == expected
    # extremes and tightest: the rows holding min / max r and ln ratio, and the smallest slacks
    values = np.array([[c.r, c.log_ratio] for c in listed])
    for col in range(2):
        assert {int(np.argmin(values[:, col])), int(np.argmax(values[:, col]))} <= set(rows.extremes())
    slacks = [c.slack for c in listed]
    assert [slacks[k] for k in rows.tightest()] == sorted(slacks)[: len(rows.tightest())]


def test_collapsed_levels_match_the_pairwise_definition():
    plan = planner.make_plan(_spec(50))
    lv = plan["params"]["levels"]
    expected = {}
    for j, x in enumerate(lv):
        same = [k for k, y in enumerate(lv) if y["epsilon"] < x["epsilon"]
                and math.isclose(y["a"], x["a"], rel_tol=1e-9) and math.isclose(y["b"], x["b"], rel_tol=1e-9)]
        if same:
            expected[x["name"]] = lv[min(same, key=lambda k: lv[k]["epsilon"])]["name"]
    assert collapsed_levels(plan) == expected and len(expected) > 10
    note = collapse_note(plan)
    assert f"and {len(expected) - 6:,} more levels likewise" in note and note.count(" has the (a, b) of ") == 6


def test_short_tables_are_shown_whole_and_long_ones_keep_binding_rows():
    short = Table("t", ["name", "x"], [[f"r{k}", float(k)] for k in range(ROW_LIMIT)])
    assert summary_table(short) is short
    rows = [[f"r{k}", float((k * 37) % 101)] for k in range(1_000)]
    long = Table("t", ["name", "x"], rows, keep=[500, 501])
    shown = summary_table(long)
    names = [r[0] for r in shown.rows if not str(r[0]).startswith("...")]
    xs = [r[1] for r in rows]
    assert {"r0", "r999", "r500", "r501", f"r{xs.index(min(xs))}", f"r{xs.index(max(xs))}"} == set(names)
    assert shown.note.startswith(f"{len(names)} of 1,000 rows shown") and len(names) == len(set(names))


def test_an_audit_summary_never_hides_a_pair_that_does_not_hold():
    from ldpplan.planner.auditing import AuditPair, AuditResult

    pairs = [AuditPair((f"{k}", f"{k + 1}"), f"y = {k}", (900, 100), 1000, 1.5 if k % 2 else 2.0, 1.0 + (k % 5) / 10)
             for k in range(300)]
    pairs[150] = AuditPair(("150", "151"), "y = 150", (990, 10), 1000, 2.0, 2.5)     # the largest bound
    pairs[201] = AuditPair(("201", "202"), "y = 201", (950, 50), 1000, 1.5, 1.55)    # no column's extreme
    result = AuditResult("m", 2.0, 2.5, 0.95, 1000, False, tuple(pairs), 1.0)
    shown = summary_table(result.table())
    assert len(shown.rows) <= _bound(shown) and len(result.table().rows) == 300
    assert [r[0] for r in shown.rows if r[-1] == "NO"] == ["150 vs 151", "201 vs 202"]

"""Issue 19 points 5 and 7: IDUE plans say which constraint (6) binds when looser levels collapse;
AvgID plans print no "Lemma 1 bound nan"; IDUE-PS labels its plain-LDP epsilon an upper bound."""
from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from ldpplan import planner
from ldpplan.planner.cli import main
from ldpplan.planner.idue._binding import binding_constraints, collapse_note, collapsed_levels
from ldpplan.planner.idue.tables import summarize


def _plan(sizes, notion="minid", epsilons=(0.7, 1.0, 2.0)):
    levels = [{"name": n, "epsilon": e, "items": s} for n, e, s in zip(("low", "mid", "high"), epsilons, sizes)]
    return planner.make_plan({"mechanism": "idue", "notion": notion, "levels": levels})


def _uw(level):
    a, b = level["a"], level["b"]
    return math.log(a / b), math.log((1 - b) / (1 - a))


def test_levels_that_buy_nothing_name_the_min_constraint_with_the_strictest_level():
    # 0.7 / 1.0 / 2.0 with most items at 0.7: every level gets the 0.7 level's (a, b), i.e. plain 0.7-LDP
    plan = _plan((50, 3, 2))
    lv = {x["name"]: x for x in plan["params"]["levels"]}
    assert (lv["mid"]["a"], lv["mid"]["b"]) == (lv["low"]["a"], lv["low"]["b"]) == (lv["high"]["a"], lv["high"]["b"])
    assert collapsed_levels(plan) == {"mid": "low", "high": "low"}
    # the active constraints, recomputed here from (a, b): u_i + w_j = min(eps_i, eps_j) = 0.7 in both directions
    active = {(c.level_i, c.level_j) for c in binding_constraints(plan)}
    assert {("low", "mid"), ("mid", "low"), ("low", "high"), ("high", "low")} <= active
    for i, j in [("low", "mid"), ("mid", "low"), ("low", "high"), ("high", "low")]:
        assert _uw(lv[i])[0] + _uw(lv[j])[1] == pytest.approx(0.7, abs=1e-6)
    # ... and not the looser pairs: (mid, high) has r = 1.0 and slack 0.3
    assert ("mid", "high") not in active
    note = collapse_note(plan)
    assert "plain 0.7-LDP" in note
    assert "MinID constraint (eq. 6) r(eps_i, eps_j) = min(eps_i, eps_j) with the 0.7 level 'low'" in note
    assert "(low, mid)" in note and "(high, low)" in note


def test_partial_collapse_names_the_level_that_holds_the_others_down():
    plan = _plan((3, 3, 4))
    assert collapsed_levels(plan) == {"high": "mid"}
    note = collapse_note(plan)
    assert "'high' (2) has the (a, b) of 'mid' (1)" in note and "plain" not in note
    assert "with the 0.7 level 'low'" in note
    tables = summarize(plan)
    (binding,) = [t for t in tables if t.title.startswith("Active privacy constraints")]
    assert binding.note == note
    assert {(r[0], r[1]) for r in binding.rows} >= {("low", "mid"), ("mid", "low"), ("low", "high"), ("high", "low")}
    for row in binding.rows:
        assert row[3] == pytest.approx(row[2], abs=2e-3 * max(1, row[2]))  # ln ratio reaches r


def test_no_binding_table_when_every_level_uses_its_budget():
    plan = planner.make_plan(planner.example_spec("health"))
    assert collapsed_levels(plan) == {} and collapse_note(plan) == ""
    assert not any(t.title.startswith("Active privacy constraints") for t in summarize(plan))


def test_the_cli_summary_shows_the_binding_constraint(tmp_path):
    spec = tmp_path / "collapse.toml"
    spec.write_text('mechanism = "idue"\n' + "".join(
        f'[[levels]]\nname = "{n}"\nepsilon = {e}\nitems = {s}\n' for n, e, s in
        [("low", 0.7, 50), ("mid", 1.0, 3), ("high", 2.0, 2)]))
    out = CliRunner().invoke(main, ["plan", str(spec)])
    assert out.exit_code == 0, out.output
    text = " ".join(out.output.split())
    assert "the plan is plain 0.7-LDP" in text and "MinID constraint (eq. 6)" in text


def test_avgid_plans_print_no_nan_lemma1_bound():
    plan = _plan((3, 3, 4), notion="avgid")
    assert "ldp_epsilon_lemma1" not in plan["guarantee"]
    text = " ".join(t.note + " " + " ".join(map(str, t.rows)) for t in summarize(plan))
    assert "nan" not in text.lower()
    assert "Lemma 1 is for MinID-LDP, not AvgID-LDP; by definition r <= max E = 2.0000" in text
    minid = " ".join(t.note for t in summarize(_plan((3, 3, 4))))
    assert "Lemma 1 bound 1.4000" in minid  # min(max E, 2 min E) = min(2, 1.4)


def test_idue_ps_labels_its_plain_ldp_epsilon_an_upper_bound(tmp_path):
    ps = planner.make_plan(planner.example_spec("health-itemsets"))
    single = planner.make_plan(planner.example_spec("health"))
    assert ps["guarantee"]["ldp_epsilon_kind"] == "upper_bound"
    assert single["guarantee"]["ldp_epsilon_kind"] == "exact"
    rows = [r for t in summarize(ps) for r in t.rows if str(r[0]).startswith("plain LDP")]
    assert rows == [["plain LDP (Lemma 1, upper bound)", ps["guarantee"]["ldp_epsilon"],
                     "every item set against every other: at most max u_i + w_j over distinct (dummy) items"]]
    assert "(Lemma 1, exact)" not in " ".join(t.note for t in summarize(ps))
    # verify agrees: the label is checked, both ways
    for plan, wrong in ((ps, "exact"), (single, "upper_bound")):
        assert planner.verify_plan(plan).holds
        bad = json.loads(json.dumps(plan))
        bad["guarantee"]["ldp_epsilon_kind"] = wrong
        check = planner.verify_plan(bad)
        assert not check.holds and check.message.startswith("guarantee.ldp_epsilon_kind:"), check.message

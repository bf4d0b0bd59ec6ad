"""IDUE planner: spec validation, plan contents, independent verification, CLI contracts."""
from __future__ import annotations

import copy
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ldpplan import planner
from ldpplan.mechanisms._sampling import on_grid
from ldpplan.planner.cli import main
from ldpplan.planner.errors import PlanFormatError, PrivacyViolation, SpecError

HEALTH_TOML = """
mechanism = "idue"          # "idue" (single item) or "idue-ps"
model = "opt0"
notion = "minid"
[[levels]]
name = "hiv"
epsilon = 1.3862943611198906   # ln 4
items = 1
[[levels]]
name = "other"
epsilon = 1.791759469228055    # ln 6
items = ["anemia", "headache", "stomachache", "toothache"]
"""


@pytest.fixture()
def health_spec(tmp_path) -> Path:
    p = tmp_path / "health.toml"
    p.write_text(HEALTH_TOML)
    return p


def test_issue_spec_plans_with_required_fields(health_spec):
    plan = planner.make_plan(health_spec)
    for key in ("format_version", "mechanism", "model", "notion", "params", "worst_case_mse_per_user",
                "solver", "verification", "spec"):
        assert key in plan
    lv = plan["params"]["levels"]
    assert [x["name"] for x in lv] == ["hiv", "other"]
    assert lv[0]["items"] == ["hiv"] and lv[1]["size"] == 4
    assert plan["items"] == ["hiv", "anemia", "headache", "stomachache", "toothache"]
    assert plan["params"]["padding_length"] is None
    for x in lv:
        assert on_grid([x["a"], x["b"]])
    a = np.array([x["a"] for x in lv]); b = np.array([x["b"] for x in lv]); m = np.array([1, 4])
    expected = np.sum(m * b * (1 - b) / (a - b) ** 2) + np.max((1 - a - b) / (a - b))
    assert plan["worst_case_mse_per_user"] == pytest.approx(expected, rel=1e-15)
    assert plan["worst_case_mse_per_user"] == pytest.approx(8.5674954649, rel=1e-8)
    assert plan["solver"]["status"] == "optimal"
    assert plan["solver"]["certificate"]["gap"] < 1e-8
    assert plan["verification"]["holds"] is True
    assert plan["verification"]["max_log_ratio_slack"] <= 0
    json.dumps(plan, allow_nan=False)


@pytest.mark.parametrize("model", ["opt0", "opt1", "opt2"])
@pytest.mark.parametrize("notion", ["minid", "avgid"])
def test_worst_case_mse_reported_for_every_model(model, notion):
    spec = planner.example_spec("health") | {"model": model, "notion": notion}
    plan = planner.make_plan(spec)
    assert plan["verification"]["holds"]
    lv = plan["params"]["levels"]
    a = np.array([x["a"] for x in lv]); b = np.array([x["b"] for x in lv])
    expected = np.sum(np.array([1, 4]) * b * (1 - b) / (a - b) ** 2) + np.max((1 - a - b) / (a - b))
    assert plan["worst_case_mse_per_user"] == pytest.approx(expected, rel=1e-15)


def test_verify_detects_violation_and_names_pair():
    plan = planner.make_plan(planner.example_spec("health"))
    bad = copy.deepcopy(plan)
    bad["params"]["levels"][1]["a"] = 0.9  # ln(a/b) grows: (other, hiv) breaks min(ln4, ln6)
    res = planner.verify_plan(bad)
    assert not res.holds
    assert "violated" in res.message and "other" in res.message
    assert res.details["max_log_ratio_slack"] > 0
    # a violation by a hair (1e-13 nats) is still caught by the exact re-check
    hair = copy.deepcopy(plan)
    lv = hair["params"]["levels"]
    a0, b0 = lv[0]["a"], lv[0]["b"]
    a1, b1 = lv[1]["a"], lv[1]["b"]
    lv[0]["epsilon"] = math.log(a0 * (1 - b1) / (b0 * (1 - a1))) - 1e-13
    lv[1]["epsilon"] = max(lv[1]["epsilon"], lv[0]["epsilon"])
    assert not planner.verify_plan(hair).holds
    with pytest.raises(PrivacyViolation):
        planner.write_plan(bad, "/tmp/never-written.json")
    assert not Path("/tmp/never-written.json").exists()


def test_verify_rejects_malformed_plans():
    plan = planner.make_plan(planner.example_spec("health"))
    broken = copy.deepcopy(plan)
    del broken["params"]["levels"][0]["b"]
    with pytest.raises(PlanFormatError, match="b"):
        planner.verify_plan(broken)
    dup = copy.deepcopy(plan)
    dup["params"]["levels"][1]["items"][0] = "hiv"
    with pytest.raises(PlanFormatError, match="partition"):
        planner.verify_plan(dup)


def test_idue_ps_plan_has_dummy_level_at_min_epsilon():
    plan = planner.make_plan(planner.example_spec("three-levels-itemsets"))
    d = plan["params"]["dummy"]
    assert d["epsilon"] == pytest.approx(min(x["epsilon"] for x in plan["params"]["levels"]))
    assert plan["params"]["padding_length"] == 2
    assert plan["verification"]["pairs_checked"] == 16  # 3 levels + the dummy level, all ordered pairs


def test_share_assignment_matches_paper_setting():
    plan = planner.make_plan(planner.example_spec("three-levels"))
    sizes = [x["size"] for x in plan["params"]["levels"]]
    assert sizes == [5, 5, 90]
    # seeded: the same spec gives the same assignment
    again = planner.make_plan(planner.example_spec("three-levels"))
    assert plan["params"]["levels"][0]["items"] == again["params"]["levels"][0]["items"]


def test_csv_mapping(tmp_path):
    (tmp_path / "map.csv").write_text("item,level\nx1,low\nx2,high\nx3,high\n")
    (tmp_path / "s.toml").write_text('mechanism = "idue"\nitem_levels_csv = "map.csv"\n'
                                    '[[levels]]\nname = "low"\nepsilon = 0.5\n[[levels]]\nname = "high"\nepsilon = 2.0\n')
    plan = planner.make_plan(tmp_path / "s.toml")
    assert plan["items"] == ["x1", "x2", "x3"]
    assert plan["params"]["levels"][1]["items"] == ["x2", "x3"]


@pytest.mark.parametrize("mutate, field, rule", [
    (lambda s: s["levels"][0].update(epsilon=-1.0), "levels[0].epsilon", "greater than 0"),
    (lambda s: s["levels"][0].update(epsilon=float("nan")), "levels[0].epsilon", "finite"),
    (lambda s: s["levels"][1].update(items=["hiv", "x"]), "levels[1].items", "already in level"),
    (lambda s: s["levels"][1].update(items=[]), "levels[1].items", "empty"),
    (lambda s: s.update(model="opt7"), "model", "opt0"),
    (lambda s: s.update(notion="max"), "notion", "minid"),
    (lambda s: s.update(mechanism="idue-ps"), "padding_length", "required"),
    (lambda s: s["levels"][1].update(name="hiv"), "levels[1].name", "unique"),
    (lambda s: s.update(colour="red"), "colour", "Extra inputs"),
])
def test_spec_errors_name_field_rule_value(mutate, field, rule):
    spec = planner.example_spec("health")
    mutate(spec)
    with pytest.raises(SpecError) as info:
        planner.make_plan(spec)
    assert info.value.field == field
    assert rule in info.value.rule


# ----------------------------------------------------------------------------- CLI
def run(args, **kw):
    return CliRunner().invoke(main, args, catch_exceptions=False, **kw)


def test_cli_plan_verify_roundtrip(health_spec, tmp_path):
    out = tmp_path / "plan.json"
    r = run(["plan", str(health_spec), "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "hiv" in r.output and "verified" in r.output
    assert run(["verify", str(out)]).exit_code == 0
    plan = json.loads(out.read_text())
    plan["params"]["levels"][1]["a"] = 0.9
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(plan))
    r = run(["verify", str(bad)])
    assert r.exit_code == 1 and "violated" in r.output
    (tmp_path / "junk.json").write_text("{not json")
    assert run(["verify", str(tmp_path / "junk.json")]).exit_code == 2
    assert run(["verify", str(tmp_path / "missing.json")]).exit_code == 2


@pytest.mark.parametrize("text, needle", [
    ('mechanism = "idue"\n[[levels]]\nname = "a"\nepsilon = 0\nitems = 1\n', "levels[0].epsilon"),
    ('mechanism = "idue"\nmodel = "opt5"\n[[levels]]\nname = "a"\nepsilon = 1\nitems = 1\n', "model"),
    ('mechanism = "idue"\n[[levels]\nname = ', "TOML"),
    ('mechanism = "idue"\n[[levels]]\nname = "a"\nepsilon = 1\nitems = ["x"]\n'
     '[[levels]]\nname = "b"\nepsilon = 2\nitems = ["x"]\n', "already in level"),
])
def test_cli_bad_spec_exit_2_one_line_no_output(tmp_path, text, needle):
    spec = tmp_path / "bad.toml"
    spec.write_text(text)
    out = tmp_path / "plan.json"
    proc = subprocess.run([sys.executable, "-m", "ldpplan.planner.cli", "plan", str(spec), "-o", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert needle in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) <= 2
    assert not out.exists() and not list(tmp_path.glob(".plan.json*"))


def test_cli_missing_spec_file(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "ldpplan.planner.cli", "plan", str(tmp_path / "nope.toml")],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "must exist" in proc.stderr and "Traceback" not in proc.stderr


def test_cli_schema_and_examples():
    r = run(["schema", "--mechanism", "idue"])
    schema = json.loads(r.output)
    assert "worst_case_mse_per_user" in schema["required"]
    r = run(["plan", "--list-examples"])
    assert "health" in r.output.split()
    r = run(["plan", "--example", "health", "--json"])
    assert json.loads(r.output)["mechanism"] == "idue"

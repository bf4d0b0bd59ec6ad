"""IDUE planner: spec validation, plan format 2.0 contents, guarantee, baselines, CLI contracts."""
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

from ldpplan import mechanisms, planner
from ldpplan.mechanisms.idue import to_grid
from ldpplan.planner.cli import main
from ldpplan.planner.errors import PrivacyViolation, SpecError
from ldpplan.planner.idue import FAMILY

LN4, LN6 = math.log(4), math.log(6)
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



def example(name: str) -> dict:
    return copy.deepcopy(FAMILY.examples[name])


@pytest.fixture()
def health_spec(tmp_path) -> Path:
    p = tmp_path / "health.toml"
    p.write_text(HEALTH_TOML)
    return p


def eq9(plan, L=1):
    lv = plan["params"]["levels"]
    a = np.array([x["a"] for x in lv]); b = np.array([x["b"] for x in lv]); m = np.array([x["size"] for x in lv])
    return L * L * (np.sum(m * b * (1 - b) / (a - b) ** 2) + np.max((1 - a - b) / (a - b)))


def test_table2_plan_format_2(health_spec):
    plan = planner.make_plan(health_spec)
    for key in ("format_version", "mechanism", "domain", "params", "guarantee", "predicted", "baselines",
                "planning_inputs", "solver", "verification", "spec", "provenance"):
        assert key in plan
    assert plan["format_version"] == "2.0" and plan["planning_inputs"] == []
    assert plan["domain"] == {"size": 5, "labels": ["hiv", "anemia", "headache", "stomachache", "toothache"]}
    lv = plan["params"]["levels"]
    assert [x["name"] for x in lv] == ["hiv", "other"]
    assert lv[0]["items"] == ["hiv"] and lv[1]["size"] == 4 and plan["params"]["padding_length"] is None
    for x in lv:
        assert to_grid(x["a"], "down") == x["a"] and to_grid(x["b"], "up") == x["b"]
    # ID-LDP Table II: 1-a = 0.41 / 0.33 and b = 0.33 / 0.28 (two decimals)
    assert [round(1 - x["a"], 2) for x in lv] == [0.41, 0.33] and [round(x["b"], 2) for x in lv] == [0.33, 0.28]
    wc = plan["predicted"]["worst_case_mse_per_user"]
    assert wc["value"] == pytest.approx(eq9(plan), rel=1e-15)
    assert wc["value"] == pytest.approx(8.5674954649, rel=1e-8)  # exact optimum of eq. (9)
    assert wc["unit"].startswith("counts^2 per user") and "eq. (9)" in wc["source"]
    assert plan["solver"]["status"] == "optimal" and plan["solver"]["certificate"]["gap"] < 1e-8
    assert plan["verification"]["holds"] is True and plan["verification"]["max_log_ratio_slack"] <= 0
    json.dumps(plan, allow_nan=False)


def test_table2_guarantee_and_lemma1():
    plan = planner.make_plan(example("health"))
    g = plan["guarantee"]
    assert g["notion"] == "MinID-LDP" and g["epsilon"] == LN4 and g["levels"] == {"hiv": LN4, "other": LN6}
    assert g["ldp_epsilon_lemma1"] == pytest.approx(min(LN6, 2 * LN4))  # Lemma 1: 1.792
    # exact plain-LDP budget: max of u_i + w_j over DISTINCT items (hiv has no distinct partner in its level)
    lv = plan["params"]["levels"]
    u = [math.log(x["a"] / x["b"]) for x in lv]
    w = [math.log((1 - x["b"]) / (1 - x["a"])) for x in lv]
    want = max(u[0] + w[1], u[1] + w[0], u[1] + w[1])
    assert g["ldp_epsilon"] == pytest.approx(want, rel=1e-11) and g["ldp_epsilon"] >= want  # rounded up
    assert g["ldp_epsilon"] == pytest.approx(1.678, abs=5e-4)
    assert mechanisms.load(plan).privacy_map()["ldp_epsilon"] == pytest.approx(want, rel=1e-12)


def test_baselines_table2():
    plan = planner.make_plan(example("health"))
    names = [b["name"] for b in plan["baselines"]]
    assert names == ["RAPPOR", "OUE"]
    rappor, oue = plan["baselines"]
    # Table II: RAPPOR 10n, OUE 9.9n at epsilon = ln 4 on 5 items
    assert rappor["predicted"]["worst_case_mse_per_user"]["value"] == pytest.approx(10.0, rel=1e-12)
    assert oue["predicted"]["worst_case_mse_per_user"]["value"] == pytest.approx(9.888888889, rel=1e-9)
    assert rappor["guarantee"] == {"notion": "LDP", "epsilon": LN4}
    assert oue["params"]["a"] == 0.5


@pytest.mark.parametrize("model", ["opt0", "opt1", "opt2"])
@pytest.mark.parametrize("notion", ["minid", "avgid"])
def test_worst_case_mse_reported_for_every_model(model, notion):
    plan = planner.make_plan(example("health") | {"model": model, "notion": notion})
    assert plan["verification"]["holds"]
    assert plan["guarantee"]["notion"] == {"minid": "MinID-LDP", "avgid": "AvgID-LDP"}[notion]
    assert plan["predicted"]["worst_case_mse_per_user"]["value"] == pytest.approx(eq9(plan), rel=1e-15)
    mechanisms.load(plan)


def test_idue_ps_plan_units_and_dummy_level():
    plan = planner.make_plan(example("three-levels-itemsets"))
    d = plan["params"]["dummy"]
    assert d["epsilon"] == min(x["epsilon"] for x in plan["params"]["levels"]) == plan["guarantee"]["epsilon"]
    assert plan["params"]["padding_length"] == 2
    assert plan["verification"]["pairs_checked"] == 16  # 3 levels + the dummy level, all ordered pairs
    # the predicted MSE is in the units of the runtime's estimator: L^2 times eq. (9), plus the sampling
    # variance L (L - 1) of users holding L items of the top level (tests/test_predicted_vs_simulated.py)
    assert plan["predicted"]["worst_case_mse_per_user"]["value"] == pytest.approx(eq9(plan, L=2) + 2, rel=1e-15)
    assert "L^2 = 4" in plan["predicted"]["worst_case_mse_per_user"]["source"]


def test_share_assignment_count_domain():
    plan = planner.make_plan(example("three-levels"))
    assert [x["size"] for x in plan["params"]["levels"]] == [5, 5, 90]
    assert plan["domain"] == {"size": 100, "labels": None}
    items = sorted(i for x in plan["params"]["levels"] for i in x["items"])
    assert items == list(range(100))  # 0-based indices when labels are null
    again = planner.make_plan(example("three-levels"))
    assert plan["params"]["levels"][0]["items"] == again["params"]["levels"][0]["items"]
    mech = mechanisms.load(plan)
    assert mech.labels is None and mech.domain_size == 100


def test_csv_mapping_is_inlined_and_verifies_without_the_file(tmp_path):
    (tmp_path / "map.csv").write_text("item,level\nx1,low\nx2,high\nx3,high\n")
    (tmp_path / "s.toml").write_text('mechanism = "idue"\nitem_levels_csv = "map.csv"\n'
                                    '[[levels]]\nname = "low"\nepsilon = 0.5\n[[levels]]\nname = "high"\nepsilon = 2.0\n')
    plan = planner.make_plan(tmp_path / "s.toml")
    assert plan["domain"]["labels"] == ["x1", "x2", "x3"]
    assert plan["params"]["levels"][1]["items"] == ["x2", "x3"]
    assert "item_levels_csv" not in plan["spec"] and plan["spec"]["levels"][1]["items"] == ["x2", "x3"]
    assert plan["planning_inputs"][0]["source"].endswith("map.csv")
    (tmp_path / "map.csv").unlink()
    assert FAMILY.verify(plan).holds


@pytest.mark.parametrize("mutate, field, rule", [
    (lambda s: s["levels"][0].update(epsilon=-1.0), "levels[0].epsilon", "greater than 0"),
    (lambda s: s["levels"][0].update(epsilon=float("nan")), "levels[0].epsilon", "finite"),
    (lambda s: s["levels"][1].update(items=["hiv", "x"]), "levels[1].items", "already in level"),
    (lambda s: s["levels"][1].update(items=[]), "levels[1].items", "empty"),
    (lambda s: s.update(model="opt7"), "model", "opt0"),
    (lambda s: s.update(notion="max"), "notion", "minid"),
    (lambda s: s.update(mechanism="idue-ps"), "padding_length", "required"),
    (lambda s: s["levels"][1].update(name="hiv"), "levels[1].name", "unique"),
    (lambda s: s.update(colour="red"), "colour", "valid keys"),
    (lambda s: s.update(users=0), "users", "greater than or equal to 1"),
])
def test_spec_errors_name_field_rule_value(mutate, field, rule):
    spec = example("health")
    mutate(spec)
    with pytest.raises(SpecError) as info:
        planner.make_plan(spec)
    assert info.value.field == field
    assert rule in info.value.rule


def test_users_adds_frequency_prediction():
    plan = planner.make_plan(example("health") | {"users": 1000})
    p = plan["predicted"]
    assert p["worst_case_total_mse_frequency"]["value"] == pytest.approx(p["worst_case_mse_per_user"]["value"] / 1000)
    assert FAMILY.verify(plan).holds


def test_summary_tables():
    tables = FAMILY.summarize(planner.make_plan(example("health")))
    assert [r[0] for r in tables[1].rows] == ["IDUE opt0", "RAPPOR", "OUE"]
    assert tables[1].rows[1][4] == pytest.approx(10.0)
    assert "Lemma 1" in tables[0].note


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
    plan["params"]["levels"][1]["a"] = round(0.9 * 2**48) / 2**48  # on the grid: a violation, not a format error
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(plan))
    r = run(["verify", str(bad)])
    assert r.exit_code == 1 and "violated" in r.output
    (tmp_path / "junk.json").write_text("{not json")
    assert run(["verify", str(tmp_path / "junk.json")]).exit_code == 2
    assert run(["verify", str(tmp_path / "missing.json")]).exit_code == 2
    with pytest.raises(PrivacyViolation):
        planner.write_plan(plan, tmp_path / "never.json")
    assert not (tmp_path / "never.json").exists()


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
    result = CliRunner().invoke(main, ["plan", str(spec), "-o", str(out)])
    assert result.exit_code == 2, (result.exception, result.stderr)  # an escaping exception would give 1
    assert needle in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) <= 2
    assert not out.exists() and not list(tmp_path.glob(".plan.json*"))


def test_cli_bad_spec_exit_2_one_line_no_output_in_a_real_process(tmp_path):
    """The same contract through ``python -m ldpplan.planner.cli`` (the process's own stderr and exit code);
    one bad spec suffices here: which spec field is wrong is decided in-process, tested above for each."""
    spec = tmp_path / "bad.toml"
    spec.write_text('mechanism = "idue"\n[[levels]]\nname = "a"\nepsilon = 0\nitems = 1\n')
    out = tmp_path / "plan.json"
    proc = subprocess.run([sys.executable, "-m", "ldpplan.planner.cli", "plan", str(spec), "-o", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "levels[0].epsilon" in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) <= 2
    assert not out.exists() and not list(tmp_path.glob(".plan.json*"))


def test_cli_schema_and_examples():
    schema = json.loads(run(["schema", "--mechanism", "idue"]).output)
    assert "worst_case_mse_per_user" in schema["properties"]["predicted"]["required"]
    assert schema["properties"]["guarantee"]["properties"]["notion"]["enum"] == ["MinID-LDP", "AvgID-LDP"]
    assert "health" in run(["plan", "--list-examples"]).output.split()
    r = run(["plan", "--example", "health", "--json"])
    assert json.loads(r.output)["mechanism"] == "idue"


def test_example_files_plan(shared_data_dir, monkeypatch):
    repo = Path(__file__).resolve().parents[1]
    health = planner.make_plan(repo / "examples" / "health.toml")
    assert health["params"]["levels"] == planner.make_plan(example("health"))["params"]["levels"]
    monkeypatch.setenv("LDPPLAN_DATA_DIR", str(shared_data_dir))
    ml = planner.make_plan(repo / "examples" / "movielens-idue.toml")
    assert ml["domain"]["size"] == 9066 and [x["size"] for x in ml["params"]["levels"]] == [453, 453, 8160]
    assert FAMILY.verify(ml).holds

"""Issue 19 point 7: the small rough edges of the command line, each pinned."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from _family_helpers import conformance
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


# ---------------------------------------------------------------------------------------------
# Specs: numbers are numbers (strict), one epsilon range for every family, nested valid keys

def _families() -> list[str]:
    from ldpplan.planner.families import REGISTRY

    return list(REGISTRY)


def _spec(family: str, epsilon):
    """A spec of the family whose one epsilon is ``epsilon`` (its conformance module's ``epsilon_spec``)."""
    from ldpplan.planner.families import family_for

    return conformance(family_for(family)).epsilon_spec(epsilon)


def _field(family: str) -> str:
    from ldpplan.planner.families import family_for

    return conformance(family_for(family)).EPSILON_FIELD


def _upper(family: str) -> float:
    """The spec's upper end: the common ``EPSILON_MAX`` unless the family's grid stops lower (its ``EPSILON_MAX``)."""
    from ldpplan.planner._common import EPSILON_MAX
    from ldpplan.planner.families import family_for

    return getattr(conformance(family_for(family)), "EPSILON_MAX", EPSILON_MAX)


@pytest.mark.parametrize("family", _families())
@pytest.mark.parametrize("value", ["1.0", True, [1.0]])
def test_an_epsilon_that_is_not_a_number_is_refused_in_every_family(family, value):
    from ldpplan import planner
    from ldpplan.planner.errors import SpecError

    with pytest.raises(SpecError) as info:
        planner.make_plan(_spec(family, value))
    assert info.value.field == _field(family) and info.value.value == value


@pytest.mark.parametrize("family", _families())
def test_one_epsilon_range_for_every_family(family):
    from ldpplan import planner
    from ldpplan.planner._common import EPSILON_MAX
    from ldpplan.planner.errors import SpecError

    assert EPSILON_MAX == 100.0  # the README's range is 1e-6 to 100 nats
    upper = _upper(family)
    for bad in (101, 100.000001, 1000, 0, -1.0):
        with pytest.raises(SpecError) as info:
            planner.make_plan(_spec(family, bad))
        assert info.value.field == _field(family), info.value
        assert (f"less than or equal to {upper:g}" if bad > 0 else "greater than 0") in info.value.rule
    plan = planner.make_plan(_spec(family, 1e-6))  # the README's lower end plans everywhere
    assert plan["verification"]["holds"] is True
    # the upper end plans (PCKV stops at 20 nats, its 2^-48 grid, and refuses beyond)
    assert planner.make_plan(_spec(family, upper))["verification"]["holds"] is True
    if upper < EPSILON_MAX:
        with pytest.raises(SpecError, match=f"less than or equal to {upper:g}"):
            planner.make_plan(_spec(family, upper + 0.5))


def test_a_misspelled_nested_key_lists_the_nested_keys():
    from ldpplan import planner
    from ldpplan.planner.errors import SpecError

    with pytest.raises(SpecError) as info:
        planner.make_plan({"mechanism": "rr", "domain": 10, "users": 100, "target": {"epsilom": 1.0}})
    assert info.value.field == "target.epsilom"
    assert "valid keys: alpha_bits, bayes_error, central_epsilon, epsilon, max_prior)" in str(info.value)
    with pytest.raises(SpecError, match=r"valid keys: frequency, mean\)"):
        planner.make_plan({"mechanism": "pckv-ue", "epsilon": 1.0, "domain": 10, "padding_length": 1,
                           "weights": {"frequncy": 1.0}})
    with pytest.raises(SpecError, match=r"valid keys: description, domain, domain_size, epsilon_max"):
        planner.make_plan({"mechanism": "rr", "domain": 10, "users": 100, "target": {"epsilon": 1.0}, "typo": 1})


# ---------------------------------------------------------------------------------------------
# Files: an aggregate is named as one; plurals; options --json; PCKV's user column

@pytest.fixture(scope="module")
def one_report(health_plan, tmp_path_factory):
    """One user's report and its aggregate (the n = 1 case the plurals are about)."""
    d = tmp_path_factory.mktemp("one")
    (d / "users.csv").write_text("item\nhiv\n")
    perturb = run("perturb", health_plan, "--input", d / "users.csv", "-o", d / "r.parquet", "--seed", 1)
    assert perturb.exit_code == 0, perturb.output
    aggregate = run("aggregate", health_plan, d / "r.parquet", "-o", d / "agg.json")
    assert aggregate.exit_code == 0, aggregate.output
    return d, perturb.stdout, aggregate.stdout


def test_singular_counts_are_singular(one_report, health_plan):
    d, perturb, aggregate = one_report
    assert perturb.startswith(f"wrote 1 report of idue to {d / 'r.parquet'} (")
    assert aggregate.startswith("wrote the aggregate of 1 report from 1 file (local engine)")
    est = run("estimate", health_plan, d / "agg.json", "-o", d / "est.csv")
    assert est.exit_code == 0 and "estimates of 5 entries written" in est.stdout
    from ldpplan.planner._report import counted
    assert [counted(1, "pair is", "pairs are"), counted(2, "pair is", "pairs are"), counted(1, "entry", "entries"),
            counted(1200, "report")] == ["1 pair is", "2 pairs are", "1 entry", "1,200 reports"]


def test_verify_on_an_aggregate_file_says_it_is_an_aggregate(one_report):
    d, _, _ = one_report
    result = run("verify", d / "agg.json")
    assert result.exit_code == 2
    line = one_error_line(result)
    assert "is an aggregate file (written by `ldpplan aggregate`), not a plan" in line
    assert "None" not in line and "re-plan" not in line


def test_a_missing_aggregate_input_is_named_an_aggregate_file(health_plan, tmp_path):
    result = run("estimate", health_plan, tmp_path / "agg.json")
    assert result.exit_code == 2
    line = one_error_line(result)
    assert "the aggregate file (JSON, written by `ldpplan aggregate`) must exist" in line
    assert "reports file" not in line
    line = one_error_line(run("estimate", health_plan, tmp_path / "day1.parquet"))
    assert "the input (a Parquet reports file of `ldpplan perturb` or an aggregate file" in line
    (tmp_path / "broken.json").write_text('{"a":')
    line = one_error_line(run("estimate", health_plan, tmp_path / "broken.json"))
    assert "an aggregate must be valid JSON" in line and "a aggregate" not in line


def test_options_json_prints_json_values_not_reprs():
    from ldpplan.planner import api

    for name in _families():  # every registered family
        result = run("options", name, "--json")
        assert result.exit_code == 0
        options = json.loads(result.stdout)["options"]
        model = api.family(name).options_model
        assert [o["key"] for o in options] == list(model.model_fields)
        for o in options:
            f = model.model_fields[o["key"]]
            if not o["required"]:
                default = f.get_default(call_default_factory=True)
                assert o["default"] == (list(default) if isinstance(default, tuple) else default), o
            assert not (isinstance(o["default"], str) and o["default"][:1] in "'[(" ), o  # never a Python repr
    idue = {o["key"]: o["default"] for o in json.loads(run("options", "idue", "--json").stdout)["options"]}
    assert idue["top_k"] == 20 and idue["sweep"] is None and idue["synthetic"] == "powerlaw"


@pytest.mark.parametrize("header", ["user", "user_id"])
def test_pckv_takes_the_documented_user_column_and_user_id(tmp_path, header):
    plan = tmp_path / "pckv.json"
    assert run("plan", "--example", "pckv-synthetic", "-o", plan).exit_code == 0
    (tmp_path / "kv.csv").write_text(f"{header},key,value\nu1,1,0.5\nu1,2,-0.5\nu2,1,1\n")
    result = run("perturb", plan, "--input", tmp_path / "kv.csv", "-o", tmp_path / "r.parquet", "--seed", 1)
    assert result.exit_code == 0, result.output
    assert "wrote 2 reports of pckv-ue" in result.stdout


def test_pckv_without_a_user_column_asks_for_user(tmp_path):
    from ldpplan.planner.pckv.inputs import INPUT_DOC

    plan = tmp_path / "pckv.json"
    assert run("plan", "--example", "pckv-synthetic", "-o", plan).exit_code == 0
    (tmp_path / "kv.csv").write_text("uid,key,value\nu1,1,0.5\n")
    result = run("perturb", plan, "--input", tmp_path / "kv.csv", "-o", tmp_path / "r.parquet", "--seed", 1)
    assert result.exit_code == 2
    line = one_error_line(result)
    assert "columns ['user'] are required: user,key,value (user_id is accepted for user" in line
    assert "columns user,key,value" in INPUT_DOC  # the documented name
    (tmp_path / "kv.csv").write_text("user,key,value\nu1,zz,0.5\n")
    line = one_error_line(run("perturb", plan, "--input", tmp_path / "kv.csv", "-o", tmp_path / "r.parquet"))
    assert "(1 pair is not, in rows 1..1)" in line

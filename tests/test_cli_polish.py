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


# ---------------------------------------------------------------------------------------------
# Specs: numbers are numbers (strict), one epsilon range for every family, nested valid keys

def _spec(family: str, epsilon):
    return {
        "idue": {"mechanism": "idue", "levels": [{"name": "a", "epsilon": epsilon, "items": 2},
                                                 {"name": "b", "epsilon": 2.0, "items": 3}]},
        "pckv": {"mechanism": "pckv-ue", "epsilon": epsilon, "domain": 10, "padding_length": 1},
        "pie": {"mechanism": "rr", "domain": 10, "users": 100, "target": {"epsilon": epsilon}},
        "uldp": {"mechanism": "urr", "epsilon": epsilon, "domain": 10, "sensitive": 3},
    }[family]


_FIELD = {"idue": "levels[0].epsilon", "pckv": "epsilon", "pie": "target.epsilon", "uldp": "epsilon"}


@pytest.mark.parametrize("family", sorted(_FIELD))
@pytest.mark.parametrize("value", ["1.0", True, [1.0]])
def test_an_epsilon_that_is_not_a_number_is_refused_in_every_family(family, value):
    from ldpplan import planner
    from ldpplan.planner.errors import SpecError

    with pytest.raises(SpecError) as info:
        planner.make_plan(_spec(family, value))
    assert info.value.field == _FIELD[family] and info.value.value == value


@pytest.mark.parametrize("family", sorted(_FIELD))
def test_one_epsilon_range_for_every_family(family):
    from ldpplan import planner
    from ldpplan.planner._common import EPSILON_MAX
    from ldpplan.planner.errors import SpecError

    assert EPSILON_MAX == 100.0  # the README's range is 1e-6 to 100 nats
    for bad in (101, 100.000001, 1000, 0, -1.0):
        with pytest.raises(SpecError) as info:
            planner.make_plan(_spec(family, bad))
        assert info.value.field == _FIELD[family], info.value
        upper = 20 if family == "pckv" else 100
        assert (f"less than or equal to {upper}" if bad > 0 else "greater than 0") in info.value.rule
    plan = planner.make_plan(_spec(family, 1e-6))  # the README's lower end plans everywhere
    assert plan["verification"]["holds"] is True
    if family != "pckv":  # PCKV stops at 20 nats (its 2^-48 grid); the others plan the upper end
        assert planner.make_plan(_spec(family, EPSILON_MAX))["verification"]["holds"] is True
    else:
        with pytest.raises(SpecError, match="less than or equal to 20"):
            planner.make_plan(_spec(family, 20.5))


def test_a_misspelled_nested_key_lists_the_nested_keys():
    from ldpplan import planner
    from ldpplan.planner.errors import SpecError

    with pytest.raises(SpecError) as info:
        planner.make_plan({"mechanism": "rr", "domain": 10, "users": 100, "target": {"epsilom": 1.0}})
    assert info.value.field == "target.epsilom"
    assert "valid keys: alpha_bits, bayes_error, epsilon, max_prior)" in str(info.value)
    with pytest.raises(SpecError, match=r"valid keys: frequency, mean\)"):
        planner.make_plan({"mechanism": "pckv-ue", "epsilon": 1.0, "domain": 10, "padding_length": 1,
                           "weights": {"frequncy": 1.0}})
    with pytest.raises(SpecError, match=r"valid keys: description, domain, domain_size, epsilon_max"):
        planner.make_plan({"mechanism": "rr", "domain": 10, "users": 100, "target": {"epsilon": 1.0}, "typo": 1})

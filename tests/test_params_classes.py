"""Each runtime class declares its plans' ``params`` once (issue 28): ``cls.Params``, checked here.

For every class in ``ldpplan.mechanisms.RUNTIMES``: ``Params`` is a frozen slotted dataclass whose
fields are the family's JSON Schema part's ``params`` properties for that mechanism (the ones the
schema requires for it are required fields; the field types are the schema's JSON types), and the
``params`` of every embedded example's plan carry exactly fields of it (every required one).
Nothing here names a family's fields: a new family is checked by declaring its ``Params``.
"""
from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Mapping

import jsonschema
import pytest

from _family_helpers import example_plan, family_cases
from ldpplan.mechanisms._params import PlanParams

CASES = family_cases()


def _runtimes():
    from ldpplan.mechanisms import RUNTIMES

    return dict(RUNTIMES)


def _family_part(mechanism: str) -> dict:
    from ldpplan.planner.api import plan_schema

    return plan_schema(mechanism)


def _schema_required(mechanism: str) -> set[str]:
    """The ``params`` fields the family part requires of every plan of ``mechanism`` (whatever its values)."""
    validator = jsonschema.Draft202012Validator(_family_part(mechanism))
    missing = set()
    for error in validator.iter_errors({"mechanism": mechanism, "params": {}}):
        if error.validator == "required" and list(error.absolute_path) == ["params"]:
            missing |= set(error.validator_value)
    return missing


def _json_types(tp) -> set[str]:
    """The JSON types a ``Params`` annotation admits (``Literal[...]`` -> string)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return set().union(*(_json_types(a) for a in args))
    if origin is typing.Literal:
        return {"string"}
    if origin is tuple:
        return {"array"}
    if origin in (dict, Mapping) or tp in (dict, Mapping):
        return {"object"}
    return {{float: "number", int: "integer", str: "string", type(None): "null"}[tp]}


def _schema_types(prop: dict) -> set[str]:
    if "type" in prop:
        return {prop["type"]} if isinstance(prop["type"], str) else set(prop["type"])
    values = prop["enum"] if "enum" in prop else [prop["const"]]
    return {"string" if isinstance(v, str) else "null" if v is None else "number" for v in values}


def _literal_values(tp) -> set | None:
    if typing.get_origin(tp) is typing.Literal:
        return set(typing.get_args(tp))
    return None


def test_every_runtime_class_declares_its_params_as_the_schema_does():
    covered: dict[str, set[str]] = {}
    for mechanism, cls in _runtimes().items():
        params = cls.Params
        assert issubclass(params, PlanParams) and dataclasses.is_dataclass(params), cls.__name__
        assert params.__dataclass_params__.frozen and "__slots__" in vars(params), params.__name__
        part = _family_part(mechanism)
        props = part["properties"]["params"]["properties"]
        fields = params.field_types()
        assert set(fields) <= set(props), (mechanism, sorted(set(fields) - set(props)))
        required = _schema_required(mechanism)
        assert required <= params.required(), (mechanism, sorted(required - params.required()))
        for name, tp in fields.items():
            admits = _json_types(tp) - ({"null"} if name not in params.required() else set())
            assert admits and admits <= _schema_types(props[name]), (mechanism, name, admits, props[name])
            literal = _literal_values(tp)
            if literal is not None:
                allowed = set(props[name]["enum"]) if "enum" in props[name] else {props[name]["const"]}
                assert literal == allowed, (mechanism, name, literal, allowed)
            item = typing.get_args(tp)[0] if typing.get_origin(tp) is tuple else None
            if item is not None:
                assert _json_types(item) == {props[name]["items"]["type"]}, (mechanism, name)
        covered.setdefault(part["$id"], set()).update(fields)
    for family_id, fields in covered.items():  # every schema property is some class's field
        part = next(_family_part(m) for m in _runtimes() if _family_part(m)["$id"] == family_id)
        assert set(part["properties"]["params"]["properties"]) == fields, (family_id, fields)


def _thawed(value):
    """A typed params value as JSON gives it (read-only mappings and tuples back to dicts and lists)."""
    if isinstance(value, Mapping):
        return {k: _thawed(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thawed(v) for v in value]
    return value


@pytest.mark.parametrize("fam,name", CASES)
def test_example_plans_carry_exactly_params_fields(fam, name, request):
    from ldpplan.mechanisms import runtime_class

    plan = example_plan(fam, name, request)
    params_cls = runtime_class(plan["mechanism"]).Params
    keys = set(plan["params"])
    assert params_cls.required() <= keys <= set(params_cls.field_types()), (name, sorted(keys))
    typed = params_cls.from_mapping(plan["params"])
    for key, value in plan["params"].items():
        got = getattr(typed, key)
        assert _thawed(got) == value, (name, key)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(typed, next(iter(keys)), None)


@dataclasses.dataclass(frozen=True, slots=True)
class _Params(PlanParams):
    """Every kind of field a family's ``Params`` uses."""

    epsilon: float
    domain_size: int
    model: typing.Literal["a", "b"]
    items: tuple[int, ...]
    table: Mapping[str, typing.Any]
    padding_length: int | None
    weight: float | None = None


def test_from_mapping_names_the_field_and_the_rule():
    from ldpplan.mechanisms import PlanError

    good = {"epsilon": 1, "domain_size": 5, "model": "a", "items": [0, 2], "table": {"P": 7}, "padding_length": None}
    typed = _Params.from_mapping(good)
    assert typed == _Params(epsilon=1.0, domain_size=5, model="a", items=(0, 2), table={"P": 7}, padding_length=None)
    assert type(typed.epsilon) is float and typed.weight is None and _Params.required() == set(good)
    with pytest.raises(TypeError):  # frozen all the way down: a JSON object becomes a read-only mapping
        typed.table["P"] = 8  # type: ignore[index]
    nested = _Params.from_mapping({**good, "table": {"P": {"q": [1, 2]}}}).table
    assert isinstance(nested["P"], types.MappingProxyType) and nested["P"]["q"] == (1, 2)
    assert _Params.from_mapping({**good, "weight": None, "padding_length": 3}).padding_length == 3
    bad = [({**good, "extra": 1}, "params.extra: unknown field"),
           ({k: v for k, v in good.items() if k != "items"}, "params.items: required field is missing"),
           ({**good, "domain_size": True}, "params.domain_size: must be an integer"),
           ({**good, "domain_size": 5.0}, "params.domain_size: must be an integer"),
           ({**good, "epsilon": "1"}, "params.epsilon: must be a finite number"),
           ({**good, "epsilon": math.nan}, "params.epsilon: must be a finite number"),
           ({**good, "epsilon": None}, "params.epsilon: must be a finite number"),
           ({**good, "model": "c"}, r"params.model: must be one of \['a', 'b'\]"),
           ({**good, "items": [0, "1"]}, r"params.items\[1\]: must be an integer"),
           ({**good, "items": 0}, "params.items: must be a list of integers"),
           ({**good, "table": [7]}, "params.table: must be an object"),
           ({**good, "padding_length": 1.5}, "params.padding_length: must be an integer or null"),
           ({**good, "weight": "w"}, "params.weight: must be a finite number or null")]
    for params, message in bad:
        with pytest.raises(PlanError, match=message):
            _Params.from_mapping(params)
    with pytest.raises(PlanError, match="params: must be an object"):
        _Params.from_mapping([1, 2])

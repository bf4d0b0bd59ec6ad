"""A plan's ``params`` as one typed, frozen record per runtime class (stdlib only).

Each runtime class declares ``Params`` (a ``ClassVar``): a frozen slotted dataclass deriving from
:class:`PlanParams` that lists exactly the fields its plans carry in ``params``, typed in the
papers' symbols (``float`` a JSON number, ``int`` a JSON integer, ``str`` or ``Literal[...]`` a
string, ``tuple[T, ...]`` an array, ``Mapping[str, Any]`` an object; ``X | None`` admits null). A
field without a default is required; one with a default (None) may be absent. The family lives
in its own package (``<family>/_params.py``); ``tests/test_params_classes.py`` checks every
class's ``Params`` against the family's JSON Schema part (``planner/schemas/<family>.schema.json``)
and the ``params`` of every embedded example's plan.
"""
from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, TypeVar, Union

from ._plan import PlanError

__all__ = ["PlanParams"]

_P = TypeVar("_P", bound="PlanParams")


class PlanParams:
    """Base of the ``<Name>Params`` records: :meth:`from_mapping` reads and type-checks a plan's ``params``."""

    __slots__ = ()

    @classmethod
    def field_types(cls) -> dict[str, Any]:
        """Field name -> its resolved annotation, in declaration order."""
        hints = typing.get_type_hints(cls)
        fields = cls.__dataclass_fields__  # type: ignore[attr-defined]  # every subclass is a dataclass
        return {f: hints[f] for f in fields}

    @classmethod
    def required(cls) -> frozenset[str]:
        """The fields a plan must carry (those without a default)."""
        return frozenset(f.name for f in dataclasses.fields(cls)  # type: ignore[arg-type]  # a dataclass subclass
                         if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)

    @classmethod
    def from_mapping(cls: type[_P], params: Any, where: str = "params") -> _P:
        """The typed record of a plan's ``params`` object.

        Checks the keys (no unknown field, every required one present) and the JSON type of each
        value; converts integers given for ``float`` fields to float and arrays to tuples. Ranges,
        the 2^-48 grid and the numbers' consistency stay the runtime's ``from_plan`` checks.

        Raises
        ------
        PlanError
            ``params.<field>: ...`` naming the field, the rule and the value.
        """
        if not isinstance(params, Mapping):
            raise PlanError(f"{where}: must be an object (got {type(params).__name__})")
        types_ = cls.field_types()
        unknown = sorted(str(k) for k in params if k not in types_)
        if unknown:
            raise PlanError(f"{where}.{unknown[0][:40]}: unknown field (known: {list(types_)})")
        missing = [f for f in types_ if f in cls.required() and f not in params]
        if missing:
            raise PlanError(f"{where}.{missing[0]}: required field is missing from the plan")  # as require()
        values = {f: _convert(params[f], tp, f"{where}.{f}") for f, tp in types_.items() if f in params}
        return cls(**values)


def _describe(tp: Any) -> str:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (Union, types.UnionType):
        return " or ".join(_describe(a) for a in args)
    if origin is Literal:
        return f"one of {list(args)}"
    if origin is tuple:
        items = {float: "finite numbers", int: "integers", str: "strings"}
        return f"a list of {items.get(args[0], 'objects')}"
    names = {float: "a finite number", int: "an integer", str: "a string", type(None): "null"}
    return names.get(tp, "an object")


def _convert(value: Any, tp: Any, field: str) -> Any:
    """``value`` as the annotation ``tp`` says (see the module docstring), or PlanError naming ``field``."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (Union, types.UnionType):
        for arg in args:
            try:
                return _convert(value, arg, field)
            except PlanError:
                continue
    elif tp is Any:
        return value
    elif tp is type(None):
        if value is None:
            return None
    elif tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            return float(value)
    elif tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif tp is str:
        if isinstance(value, str):
            return value
    elif origin is Literal:
        if isinstance(value, str) and value in args:
            return value
    elif origin is tuple:
        if isinstance(value, (list, tuple)):
            return tuple(_convert(v, args[0], f"{field}[{i}]") for i, v in enumerate(value))
    elif origin in (dict, Mapping) or tp in (dict, Mapping):
        if isinstance(value, Mapping):
            return dict(value)
    else:  # pragma: no cover - a Params annotation this reader does not know
        raise TypeError(f"{field}: unsupported annotation {tp!r}")
    raise PlanError(f"{field}: must be {_describe(tp)} (got {repr(value)[:40]})")  # as integer()/number()

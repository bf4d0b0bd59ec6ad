"""Pieces shared by the family packages: the spec base model, spec parsing, verification attachment."""
from __future__ import annotations

from typing import Annotated, Any, Iterable, Iterator, Mapping, Sequence, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from ._report import Verification
from .errors import PrivacyViolation, SpecError

#: a pydantic model class (spec and options models): the parsers return an instance of the class given
ModelT = TypeVar("ModelT", bound=BaseModel)

__all__ = ["SpecBase", "ShuffleSpec", "Epsilon", "epsilon_at_most", "EPSILON_MAX", "spec_from_pydantic", "attach_verification", "parse_options", "options_help", "split_list", "check_labels"]


#: The range of every privacy budget a spec states, in nats, in every family: ``0 < epsilon <= 100``
#: (the README's tested range is 1e-6 to 100; smaller budgets plan where the 2^-48 grid allows,
#: and are refused naming the grid where it does not). A family may refuse more where its numbers
#: need it (PCKV: at most 20 nats), never accept more.
EPSILON_MAX = 100.0
#: A spec's privacy budget (nats): a number (never a string: specs are validated strictly), finite,
#: ``0 < epsilon <= EPSILON_MAX``.
Epsilon = Annotated[float, Field(gt=0, le=EPSILON_MAX, allow_inf_nan=False)]


def epsilon_at_most(upper: float) -> Any:
    """:data:`Epsilon` with a tighter upper end (``0 < upper <= EPSILON_MAX``) for a family whose numbers need it."""
    assert 0 < upper <= EPSILON_MAX
    return Annotated[float, Field(gt=0, le=upper, allow_inf_nan=False)]


class ShuffleSpec(BaseModel):
    """The ``[shuffle]`` spec block: ``n`` users (one report each) go through a shuffler; ``delta`` of the central claim."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    n: int = Field(ge=2, strict=True)
    delta: float = Field(gt=0.0, lt=1.0, strict=True, allow_inf_nan=False)


class SpecBase(BaseModel):
    """Base of every family's spec model: unknown keys are errors, ``description`` is free text.

    Every family accepts the same names for the same things: ``mechanism``, ``description``,
    ``domain`` (an int size or a list of labels) and ``users`` (the number of users n);
    keys pinned by earlier releases stay accepted as aliases.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    mechanism: str
    description: str = ""
    #: ``[shuffle] n, delta``: the plan also states the central guarantee of n shuffled reports
    #: (``guarantee.shuffled``; :mod:`planner.shuffle`), for every family with a plain local epsilon
    shuffle: ShuffleSpec | None = None



def _model_at(model_cls: type[BaseModel], loc: Sequence[Any]) -> type[BaseModel]:
    """The (nested) model class at ``loc`` (``("target",)`` -> the target model), for its valid keys.

    Falls back to the outermost model it reached when the path leaves the models (a list
    index, a union member pydantic names by type).
    """
    import typing

    def models(annotation: Any) -> Iterator[type[BaseModel]]:
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            yield annotation
        for arg in typing.get_args(annotation):
            yield from models(arg)

    current = model_cls
    for part in loc:
        if isinstance(part, int):
            continue
        field = current.model_fields.get(part)
        found = next(models(field.annotation), None) if field is not None else None
        if found is None:
            break
        current = found
    return current


def spec_from_pydantic(model_cls: type[ModelT], raw: Mapping[str, Any]) -> ModelT:
    """Validate ``raw`` with a pydantic model, turning the first error into a SpecError.

    The field is the dotted location (``levels[1].epsilon``), the rule is
    pydantic's message and the value is the offending input. Validation is strict:
    ``epsilon = "1.0"`` (a string where a number belongs) is refused, never converted.
    """
    import pydantic

    if not isinstance(raw, Mapping):
        raise SpecError("<spec>", "must be a table/object", type(raw).__name__)
    try:
        return model_cls.model_validate(dict(raw), strict=True)
    except pydantic.ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        field = ""
        for part in err.get("loc", ()):
            field += f"[{part}]" if isinstance(part, int) else (f".{part}" if field else str(part))
        rule = err.get("msg", "is invalid")
        if rule.startswith("Value error, "):
            rule = rule[len("Value error, "):]
        if err.get("type") == "extra_forbidden":
            allowed = sorted(_model_at(model_cls, err.get("loc", ())[:-1]).model_fields)
            rule = f"is not a key of this spec (valid keys: {', '.join(allowed)})"
        raise SpecError(field or "<spec>", rule, err.get("input")) from None


def attach_verification(plan: dict[str, Any], check: Verification) -> dict[str, Any]:
    """Record an independent re-check in ``plan["verification"]``, or refuse the plan.

    Parameters
    ----------
    plan : dict
        A freshly solved plan 2.0 dict (without ``verification``).
    check : Verification
        The family's verification of the plan (numbers and spec).

    Raises
    ------
    PrivacyViolation
        If the check failed: a solved plan that fails its guarantee is never returned.
    """
    if not check.holds:
        raise PrivacyViolation(f"solved {plan.get('mechanism')} plan failed verification: {check.message}", check.details)
    plan["verification"] = {"holds": True, "message": check.message, **check.details}
    return plan


def parse_options(model_cls: type[ModelT], extra: Mapping[str, str]) -> ModelT:
    """Parse ``-O KEY=VALUE`` strings into a family's typed simulate-options model.

    Parameters
    ----------
    model_cls : pydantic model class
        The family's ``options_model`` (``extra="forbid"``; fields with defaults and
        descriptions). Values arrive as strings; pydantic converts them (lax mode).
    extra : mapping of str to str

    Raises
    ------
    SpecError
        ``-O KEY``: an unknown key (the message lists the valid keys) or a bad value.
    """
    import pydantic

    valid = sorted(model_cls.model_fields)
    for key in extra:
        if key not in model_cls.model_fields:
            raise SpecError(f"-O {key}", f"is not an option of this mechanism (valid: {', '.join(valid) or 'none'})", key)
    try:
        return model_cls.model_validate(dict(extra))
    except pydantic.ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        key = ".".join(str(p) for p in err.get("loc", ())) or "<options>"
        rule = err.get("msg", "is invalid").removeprefix("Value error, ")
        raise SpecError(f"-O {key}", rule, err.get("input")) from None


def options_help(model_cls: type[BaseModel]) -> list[tuple[str, str, str]]:
    """``(key, default, description)`` rows of an options model (for ``ldpplan options``)."""
    rows = []
    for name, f in model_cls.model_fields.items():
        default = "required" if f.is_required() else repr(f.get_default(call_default_factory=True))
        rows.append((name, default, f.description or ""))
    return rows


def split_list(value: Any) -> Any:
    """A ``-O KEY=a,b,c`` value as a tuple of its stripped, non-empty parts (other values unchanged).

    Used as a pydantic ``mode="before"`` validator of the simulate options' list fields.
    """
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    return value


def check_labels(field: str, labels: Iterable[Any]) -> list[str]:
    """A spec's item labels as strings, refused when one starts or ends with whitespace.

    Every CSV reader strips its cells of surrounding spaces (``planner/data``), so a label such as
    ``" a"`` could never be read from a user's input, and ``" a"`` and ``"a"`` would be two items
    that every input file maps to one. The choice (issue 27): refuse such a label in the spec
    rather than strip it silently (a plan's labels are exactly the spec's). The runtime refuses
    them too (:func:`ldpplan.mechanisms._api.domain_labels`).

    Raises
    ------
    SpecError
        ``FIELD[k]: must not start or end with whitespace ...`` naming the first such label.
    """
    out = [str(x) for x in labels]
    for k, label in enumerate(out):
        if label != label.strip():
            raise SpecError(f"{field}[{k}]", "a label must not start or end with whitespace (input cells are read "
                            "stripped, so it could never be reported)", label)
    return out

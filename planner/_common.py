"""Pieces shared by the family packages: the spec base model, spec parsing, verification attachment."""
from __future__ import annotations

from typing import Any, Mapping

from pydantic import BaseModel, ConfigDict, Field

from .errors import PrivacyViolation, SpecError

__all__ = ["SpecBase", "ShuffleSpec", "spec_from_pydantic", "attach_verification", "parse_options", "options_help", "plan_header",
           "load_schema",
           "validate_plan_schema"]


class ShuffleSpec(BaseModel):
    """The ``[shuffle]`` spec block: ``n`` users (one report each) go through a shuffler; ``delta`` of the central claim."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    n: int = Field(ge=2, strict=True)
    delta: float = Field(gt=0.0, lt=1.0)


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



def spec_from_pydantic(model_cls, raw: Mapping[str, Any]):
    """Validate ``raw`` with a pydantic model, turning the first error into a SpecError.

    The field is the dotted location (``levels[1].epsilon``), the rule is
    pydantic's message and the value is the offending input.
    """
    import pydantic

    if not isinstance(raw, Mapping):
        raise SpecError("<spec>", "must be a table/object", type(raw).__name__)
    try:
        return model_cls.model_validate(dict(raw))
    except pydantic.ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        field = ""
        for part in err.get("loc", ()):
            field += f"[{part}]" if isinstance(part, int) else (f".{part}" if field else str(part))
        rule = err.get("msg", "is invalid")
        if rule.startswith("Value error, "):
            rule = rule[len("Value error, "):]
        if err.get("type") == "extra_forbidden":
            allowed = sorted(model_cls.model_fields)
            rule = f"is not a key of this spec (valid keys: {', '.join(allowed)})"
        raise SpecError(field or "<spec>", rule, err.get("input")) from None


def attach_verification(plan: dict[str, Any], check) -> dict[str, Any]:
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


# ----------------------------------------------------------------------------------------------
# Transitional (format 1.0) helpers, removed once every family writes plan format 2.0.
def plan_header(mechanism: str) -> dict[str, Any]:  # pragma: no cover - transitional
    from ._plan_format import tool_version

    return {"format_version": "1.0", "mechanism": mechanism, "created_by": {"tool": "ldpplan", "version": tool_version()}}


def load_schema(family: str) -> dict[str, Any]:  # pragma: no cover - transitional
    from ._plan_format import load_schema as _load

    return _load(family)


def validate_plan_schema(plan: Mapping[str, Any], family: str) -> None:  # pragma: no cover - transitional
    import jsonschema

    from .errors import PlanFormatError

    errors = sorted(jsonschema.Draft202012Validator(load_schema(family)).iter_errors(plan),
                    key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        raise PlanFormatError(f"{'.'.join(str(p) for p in err.absolute_path) or '<plan>'}: {err.message}")


def parse_options(model_cls, extra: Mapping[str, str]):
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


def options_help(model_cls) -> list[tuple[str, str, str]]:
    """``(key, default, description)`` rows of an options model (for ``ldpplan options``)."""
    rows = []
    for name, f in model_cls.model_fields.items():
        default = "required" if f.is_required() else repr(f.get_default(call_default_factory=True))
        rows.append((name, default, f.description or ""))
    return rows

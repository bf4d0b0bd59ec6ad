"""Pieces shared by the family modules: plan header, schema checks, spec parsing."""
from __future__ import annotations

import json
from importlib import resources
from typing import Any, Mapping

from .errors import PlanFormatError, PrivacyViolation, SpecError

__all__ = ["FORMAT_VERSION", "plan_header", "load_schema", "validate_plan_schema", "spec_from_pydantic",
           "attach_verification"]

#: Version of the plan file format written by this planner.
FORMAT_VERSION = "1.0"


def tool_version() -> str:
    """Installed ldpplan version (``"0+unknown"`` when running from a source tree)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ldpplan")
    except PackageNotFoundError:  # pragma: no cover - source checkout without install
        return "0+unknown"


def plan_header(mechanism: str) -> dict[str, Any]:
    """The fields every plan starts with."""
    return {
        "format_version": FORMAT_VERSION,
        "mechanism": mechanism,
        "created_by": {"tool": "ldpplan", "version": tool_version()},
    }


def load_schema(family: str) -> dict[str, Any]:
    """Load ``planner/schemas/<family>.schema.json`` shipped in the package."""
    text = resources.files("planner").joinpath("schemas", f"{family}.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


def validate_plan_schema(plan: Mapping[str, Any], family: str) -> None:
    """Validate a plan dict against its family's JSON Schema.

    Raises
    ------
    PlanFormatError
        Naming the first failing field (JSON path), the rule and the value.
    """
    import jsonschema

    schema = load_schema(family)
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(plan), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        path = ".".join(str(p) for p in err.absolute_path) or "<plan>"
        raise PlanFormatError(f"{path}: {err.message}")


def spec_from_pydantic(model_cls, raw: Mapping[str, Any]):
    """Validate ``raw`` with a pydantic model, turning the first error into a SpecError.

    The field is the dotted location (``levels[1].epsilon``), the rule is
    pydantic's message and the value is the offending input.
    """
    import pydantic

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
        raise SpecError(field or "<spec>", rule, err.get("input")) from None


def attach_verification(plan: dict[str, Any], check) -> dict[str, Any]:
    """Record an independent re-check in ``plan["verification"]``, or refuse the plan.

    Parameters
    ----------
    plan : dict
        A freshly solved plan.
    check : Verification
        The family's ``verify_plan(plan)`` result.

    Raises
    ------
    PrivacyViolation
        If the check failed: a solved plan that fails its guarantee is never returned.
    """
    if not check.holds:
        raise PrivacyViolation(f"solved {plan.get('mechanism')} plan failed verification: {check.message}", check.details)
    plan["verification"] = {"holds": True, "message": check.message, **check.details}
    return plan

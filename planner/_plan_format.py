"""Plan format 2.0: one envelope for every mechanism.

A plan is a JSON object with these top-level fields (the contract other runtimes
implement; fields are added in minor versions, never renamed):

``format_version``  exactly the string "2.0"
``mechanism``       the runtime that runs it (a key of ``ldpplan.mechanisms.RUNTIMES``)
``domain``          ``{"size": int, "labels": [str] * size | null}`` (null: a count domain 0..size-1);
                    ``1 <= size <=`` the runtime class's ``PLAN_FIELDS.max_domain`` (default 2**24,
                    ``ldpplan.mechanisms.MAX_DOMAIN_SIZE``; k-RR 2**62, GLH 2**61 - 1), labels distinct
``params``          the mechanism's numbers (family-specific; see each family's schema)
``guarantee``       ``{"notion": str, "epsilon": float, ...}``: what the numbers give; the
                    runtime's privacy map recomputes it and refuses a plan that claims more
``predicted``       metric name -> ``{"value": float, "unit": str, "source": str}``
``baselines``       list of ``{"name": str, "predicted": {...}, ...}``: the papers' comparisons
``planning_inputs`` list of ``{"what", "source", "private"}``: data read to plan (empty: none)
``solver``          name, status, time_seconds, certificate
``verification``    ``{"holds": true, "message": str, ...}``, written after an independent re-check
``spec``            the spec the plan was solved from (``verify`` compares the plan with it)
``provenance``      ``{"ldpplan_version": str, "created_at": UTC ISO-8601}``

Readers (``verify`` and the runtime's ``load``, one envelope reader:
:func:`ldpplan.mechanisms.read_envelope`) refuse non-standard JSON (NaN, Infinity, duplicate
keys), any other ``format_version``, unknown top-level fields, ``guarantee`` claims the
mechanism's runtime does not declare, a larger ``domain.size`` (checked before anything is
allocated) and non-finite numbers. A plan's fingerprint is ``sha256`` of its canonical JSON
(``plan_fingerprint``); clients pin it with ``load(plan, fingerprint="sha256:...")``.
"""
from __future__ import annotations

import copy
import datetime as _dt
import functools
import json
from importlib import resources
from typing import Any, Mapping, Sequence

from .errors import PlanFormatError
from .. import mechanisms
from ..mechanisms import PlanError
from ..mechanisms import plan_fingerprint as _runtime_plan_fingerprint
from ..mechanisms._plan_object import checked_dict

__all__ = ["FORMAT_VERSION", "envelope", "predicted", "provenance", "tool_version", "load_schema",
           "validate_plan", "check_envelope", "plan_fingerprint"]

#: Version of the plan file format written by this planner.
FORMAT_VERSION = "2.0"


def tool_version() -> str:
    """Installed ldpplan version (``"0+unknown"`` when running from a source tree)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ldpplan")
    except PackageNotFoundError:  # pragma: no cover - source checkout without install
        return "0+unknown"


def provenance() -> dict[str, str]:
    """``{"ldpplan_version", "created_at"}`` (UTC, ISO-8601, seconds)."""
    now = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0)
    return {"ldpplan_version": tool_version(), "created_at": now.isoformat().replace("+00:00", "Z")}


def predicted(value: float, unit: str, source: str, **extra: Any) -> dict[str, Any]:
    """One ``predicted`` entry: ``{"value", "unit", "source"}`` (plus optional extra fields)."""
    return {"value": float(value), "unit": str(unit), "source": str(source), **extra}


def envelope(*, mechanism: str, domain_size: int, labels: Sequence[str] | None, params: Mapping[str, Any],
             guarantee: Mapping[str, Any], predicted: Mapping[str, Any], baselines: Sequence[Mapping[str, Any]],
             solver: Mapping[str, Any], spec: Mapping[str, Any],
             planning_inputs: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """Assemble a plan 2.0 dict (``verification`` says "not verified yet" until the family re-checks it).

    Raises
    ------
    ValueError
        When ``labels`` is given with a length other than ``domain_size`` or the
        guarantee lacks ``notion``/``epsilon`` (a programming error, not user input).
    """
    if labels is not None and len(labels) != int(domain_size):
        raise ValueError(f"domain.labels has {len(labels)} entries for domain.size {domain_size}")
    if "notion" not in guarantee or "epsilon" not in guarantee:
        raise ValueError("guarantee needs 'notion' and 'epsilon'")
    return {
        "format_version": FORMAT_VERSION,
        "mechanism": mechanism,
        "domain": {"size": int(domain_size), "labels": None if labels is None else [str(x) for x in labels]},
        "params": dict(params),
        "guarantee": dict(guarantee),
        "predicted": dict(predicted),
        "baselines": [dict(b) for b in baselines],
        "planning_inputs": [dict(p) for p in planning_inputs],
        "solver": dict(solver),
        # replaced by attach_verification() after the family's independent re-check
        "verification": {"holds": False, "message": "not verified yet"},
        "spec": dict(spec),
        "provenance": provenance(),
    }


def load_schema(name: str = "plan-2.0") -> dict[str, Any]:
    """The JSON Schema of plan files (``"plan-2.0"``, composed) or one family's part.

    ``plan-2.0`` is the envelope (``schemas/plan-2.0.schema.json``) plus, for each
    registered runtime package (``ldpplan.mechanisms.RUNTIME_PACKAGES``, the planner registry's
    order), ``if mechanism in its classes' plan mechanisms then <family schema>``,
    where ``schemas/<family>.schema.json`` constrains ``params``, ``guarantee`` and
    ``predicted`` of that family's mechanisms. The composition is done once per process
    (:func:`_composed_schema`); each call returns a copy the caller may change.
    """
    if name != "plan-2.0":
        return _read_schema(name)
    return copy.deepcopy(_composed_schema(_registry_key()))


def _read_schema(stem: str) -> dict[str, Any]:
    text = resources.files("ldpplan.planner").joinpath("schemas", f"{stem}.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


_RegistryKey = tuple[tuple[tuple[str, tuple[str, ...]], ...], tuple[str, ...]]


def _registry_key() -> _RegistryKey:
    """What the composed schema depends on: each registered runtime package's name and plan mechanisms,
    and every plan mechanism a runtime class runs (``ldpplan.mechanisms.RUNTIMES``)."""
    packages = tuple((package.__name__.rpartition(".")[2],
                      tuple(m for cls in package.RUNTIME_CLASSES for m in cls.PLAN_FIELDS.mechanisms))
                     for package in mechanisms.RUNTIME_PACKAGES)
    return packages, tuple(sorted(mechanisms.RUNTIMES))



@functools.cache
def _composed_schema(registry: _RegistryKey) -> dict[str, Any]:
    """The composed ``plan-2.0`` schema of a registry (:func:`_registry_key`), built once per process and
    registry (never changed: callers get copies)."""
    schema = _read_schema("plan-2.0")
    parts = []
    packages, runtimes = registry
    for name, names in packages:
        try:
            part = _read_schema(name)
        except FileNotFoundError:  # pragma: no cover - a family without its own rules
            continue
        part.pop("$schema", None)
        parts.append({"if": {"properties": {"mechanism": {"enum": list(names)}}, "required": ["mechanism"]},
                      "then": part})
    schema["allOf"] = parts
    schema["properties"]["mechanism"]["enum"] = list(runtimes)
    return schema


@functools.cache
def _plan_validator(registry: tuple[tuple[str, tuple[str, ...]], ...]) -> Any:
    """The strict validator of the composed schema (built once per process and registry)."""
    return _strict_validator()(_composed_schema(registry))


def check_envelope(plan: Mapping[str, Any]) -> Mapping[str, Any]:
    """The runtime's one envelope reader (:meth:`ldpplan.mechanisms.Plan.read`), as a PlanFormatError.

    Strict version ``"2.0"``, known fields and claims, ``domain.size`` bounded and checked
    against the labels before anything is allocated, finite numbers, the verification block:
    ``verify`` refuses what ``load()`` refuses, with the same one line. A :class:`~ldpplan.mechanisms.Plan`
    was checked when it was read: it is returned as it is; a dict (a plan being built) is checked
    without being frozen or hashed.

    Raises
    ------
    PlanFormatError
        The runtime's message (field, rule, value).
    """
    if not isinstance(plan, Mapping):
        raise PlanFormatError("<plan>: a plan must be a JSON object")
    try:
        return checked_dict(plan)
    except PlanError as exc:
        raise PlanFormatError(str(exc)) from None


def validate_plan(plan: Mapping[str, Any], schema: str = "plan-2.0") -> None:
    """Validate a plan dict: the runtime's envelope reader (:func:`check_envelope`), then the JSON Schema.

    Raises
    ------
    PlanFormatError
        Naming the first failing field (JSON path), the rule and the value; a plan of
        another format version gets a one-line error naming the version.
    """
    check_envelope(plan)
    validator = _plan_validator(_registry_key()) if schema == "plan-2.0" else _strict_validator()(load_schema(schema))
    instance = plan if isinstance(plan, dict) else dict(plan)  # a Plan: its read-only blocks are dicts and lists
    errors = sorted(validator.iter_errors(instance),
                    key=lambda e: (len(list(e.absolute_path)), list(map(str, e.absolute_path))))
    if errors:
        err = min(errors, key=lambda e: len(e.message))
        path = ".".join(str(p) for p in err.absolute_path) or "<plan>"
        raise PlanFormatError(f"{path}: {err.message}")


def _strict_validator():
    """Draft 2020-12 where "integer" means a JSON integer literal (``1e308`` or ``2.0`` is not one)."""
    import jsonschema

    def is_int(checker, instance) -> bool:
        return isinstance(instance, int) and not isinstance(instance, bool)

    checker = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer", is_int)
    return jsonschema.validators.extend(jsonschema.Draft202012Validator, type_checker=checker)


plan_fingerprint = _runtime_plan_fingerprint


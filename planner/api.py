"""The planner's Python API: spec -> plan -> verify -> simulate, for every family.

Examples
--------
>>> from ldpplan import planner
>>> plan = planner.make_plan(planner.example_spec("health"))
>>> planner.verify_plan(plan).holds
True
"""
from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from . import _io
from ._report import SimulateOptions, SimulationReport, Table, Verification
from .errors import PrivacyViolation, SpecError, needs_planner_extra
from . import families as _families
from .families import Family, all_examples, family_for, family_of_plan, spec_mechanisms
from ..mechanisms import Plan, plan_fingerprint
from ._plan_format import load_schema
from .shuffle import central_guarantee

__all__ = [
    "load_spec", "make_plan", "verify_plan", "fingerprint", "write_plan", "read_plan", "summarize", "simulate",
    "example_spec", "list_examples", "plan_schema", "family", "options_help", "options_json", "explain_items",
    "explain_shuffled",
]


@needs_planner_extra
def load_spec(path: str | os.PathLike) -> dict[str, Any]:
    """Read a spec file (TOML or JSON) into a dict; see :func:`ldpplan.planner._io.read_spec_file`."""
    return _io.read_spec_file(path)


@needs_planner_extra
def make_plan(spec: Mapping[str, Any] | str | os.PathLike, *, base_dir: str | os.PathLike | None = None) -> dict:
    """Solve a spec and return a verified plan (format 2.0) dict.

    Parameters
    ----------
    spec : mapping or path-like
        The spec (parsed) or a path to a TOML/JSON spec file.
    base_dir : path-like, optional
        Folder against which relative paths inside the spec (e.g. an item->level
        CSV) are resolved. Defaults to the spec file's folder, or the working
        directory for a mapping.

    Returns
    -------
    dict
        The plan (JSON-serialisable), already re-verified against its numbers and its spec.

    Raises
    ------
    SpecError
        Invalid spec (names field, rule, value).
    PrivacyViolation
        The solved parameters failed the independent re-check (never returned).
    """
    source = None
    if not isinstance(spec, Mapping):
        source = str(spec)
        base_dir = base_dir if base_dir is not None else Path(spec).parent
        spec = _io.read_spec_file(spec)
    try:
        family = family_for(spec.get("mechanism"))
        return family.plan(spec, base_dir=Path(base_dir) if base_dir is not None else None)
    except SpecError as exc:
        if source and not exc.source:
            raise exc.with_source(source) from None
        raise


@needs_planner_extra
def read_plan(path: str | os.PathLike | Mapping[str, Any]) -> dict[str, Any]:
    """Read a plan JSON file strictly into a plain dict (raises PlanFormatError).

    The dict is the caller's own mutable copy (``json.dumps`` and edits work, as they always did).
    The typed, read-only object that the CLI and the other functions pass along without reading
    it again is :meth:`ldpplan.mechanisms.Plan.read` (its fingerprint computed once); every function
    here accepts either.
    """
    return _io.read_plan_file(path).to_dict()


def fingerprint(plan: Mapping[str, Any]) -> str:
    """The plan's fingerprint as clients pin it: ``"sha256:<64 hex digits>"``.

    The sha256 of the canonical JSON of the plan as written to a file (sorted keys, no
    spaces; the clock readings ``provenance.created_at`` and ``solver.time_seconds`` excluded; :func:`ldpplan.mechanisms.plan_fingerprint`): ``ldpplan.load(path,
    fingerprint=...)`` refuses any other plan. A :class:`~ldpplan.mechanisms.Plan` gives the one it
    computed when it was read.
    """
    if isinstance(plan, Plan):
        return "sha256:" + plan.fingerprint
    return "sha256:" + plan_fingerprint(_io.to_jsonable(plan))


@needs_planner_extra
def verify_plan(plan: Mapping[str, Any] | str | os.PathLike) -> Verification:
    """Independently re-check a plan: its numbers, exactly, and that they are what its spec asked for.

    Returns
    -------
    Verification
        ``holds`` is False when a privacy constraint fails or the plan does not match its
        embedded spec (the message names the field, the rule and the amount).

    Raises
    ------
    PlanFormatError
        Unreadable, non-strict JSON, of another format version, or schema-invalid plan.
    """
    if not isinstance(plan, Mapping):
        plan = _io.read_plan_file(plan)
    return family_of_plan(plan).verify(plan)


@needs_planner_extra
def write_plan(plan: Mapping[str, Any], path: str | os.PathLike) -> Verification:
    """Re-verify ``plan`` and write it atomically to ``path``.

    Raises
    ------
    PrivacyViolation
        If the re-check fails; nothing is written.
    """
    result = verify_plan(plan)
    if not result.holds:
        raise PrivacyViolation(f"refusing to write a plan that fails verification: {result.message}", result.details)
    _io.write_json_atomic(path, plan)
    return result


@needs_planner_extra
def summarize(plan: Mapping[str, Any]) -> list[Table]:
    """Tables describing a plan (what ``ldpplan plan`` prints)."""
    return family_of_plan(plan).summarize(plan)


@needs_planner_extra
def simulate(plan: Mapping[str, Any] | str | os.PathLike, options: SimulateOptions | None = None,
             progress: Callable[[int, int], None] | None = None) -> SimulationReport:
    """Run a plan's simulation (see the family's ``options_model`` for its ``-O`` options)."""
    if not isinstance(plan, Mapping):
        plan = _io.read_plan_file(plan)
    return family_of_plan(plan).simulate(plan, options or SimulateOptions(), progress=progress)


def list_examples() -> list[str]:
    """Names of the embedded example specs."""
    return sorted(all_examples())


def example_spec(name: str) -> dict[str, Any]:
    """Return a copy of an embedded example spec.

    Raises
    ------
    SpecError
        If no example has that name.
    """
    examples = all_examples()
    if name not in examples:
        raise SpecError("--example", f"must be one of {sorted(examples)}", name)
    return copy.deepcopy(examples[name][1])


def _family_name(name: Any, field: str) -> str:
    """Family name of a family name (``uldp``) or of a spec/plan mechanism name (``urr``), without importing it."""
    registry = _families.family_names()
    if isinstance(name, str) and name in registry:
        return name
    names = spec_mechanisms()
    if isinstance(name, str) and name in names:
        return names[name]
    raise SpecError(field, f"must be a family ({', '.join(registry)}) or a mechanism ({', '.join(sorted(names))})",
                    name)


def family(name: str, *, field: str = "mechanism") -> Family:
    """The family object (``FAMILY``) of a family name or a mechanism name.

    Raises
    ------
    SpecError
        If the name is neither (the message lists the valid names).
    """
    return family_for(_family_name(name, field), field=field)


def options_help(fam: Family) -> list[tuple[str, str, str]]:
    """``(key, default, description)`` of a family's simulate options (``-O KEY=VALUE``), defaults as text."""
    from ._common import options_help as _help  # deferred: pydantic

    return _help(fam.options_model)


def options_json(fam: Family) -> list[dict[str, Any]]:
    """A family's simulate options as JSON values: ``{"key", "default", "required", "description"}``.

    ``default`` is the JSON value of the default (a number, a string, ``null``, a list), never
    Python's ``repr`` of it; ``required`` is True when the option has no default (then ``default`` is null).
    """
    from pydantic_core import to_jsonable_python

    out = []
    for name, f in fam.options_model.model_fields.items():
        required = f.is_required()
        default = None if required else to_jsonable_python(f.get_default(call_default_factory=True))
        out.append({"key": name, "default": default, "required": required, "description": f.description or ""})
    return out


def plan_schema(mechanism: str | None = None) -> dict[str, Any]:
    """The JSON Schema of plan format 2.0 (composed), or one family's part.

    Parameters
    ----------
    mechanism : str, optional
        A family name (``"uldp"``) or a mechanism name (``"urr"``).

    Raises
    ------
    SpecError
        Unknown name, or a family without a schema part of its own.
    """
    if mechanism is None:
        return load_schema("plan-2.0")
    name = _family_name(mechanism, "--mechanism")
    try:
        return load_schema(name)
    except FileNotFoundError:
        raise SpecError("--mechanism", "names a family without a schema part of its own", mechanism) from None


def explain_items(plan: Mapping[str, Any] | str | os.PathLike, items: str | Iterable[str]) -> dict[str, Any]:
    """The privacy budget a verified IDUE-PS plan gives one user's item set (ID-LDP eq. 16).

    Goes through the family protocol (``Family.explain_items``, the room's ``claims.explain_items``):
    only families whose users hold item sets have it (today IDUE); another family's plan is refused
    in one line naming the plan mechanisms that have item-set budgets.

    Parameters
    ----------
    plan : mapping or path-like
        An ``idue-ps`` plan (an ``idue`` plan answers for a single item: its level's budget).
    items : sequence or str
        Item labels (``domain.labels``) or 0-based indices when the plan has no labels; a
        string is split on commas.

    Returns
    -------
    dict
        ``{"epsilon": nats, "items": [...], "eta": |x| / max(|x|, L), "source": "ID-LDP eq. 16",
        "mechanism", "padding_length", "dummy_epsilon", "item_epsilons"}``.

    Raises
    ------
    SpecError
        Unknown, repeated or no items, several items on an ``idue`` plan, or a plan of another family.
    PlanFormatError
        Unreadable or malformed plan.
    PrivacyViolation
        The plan fails its re-check (no budget is explained for it).

    References
    ----------
    Gu, Li, Xiong & Cao, ICDE 2020, eq. (16) and Theorem 4.

    Examples
    --------
    >>> from ldpplan import planner
    >>> plan = planner.make_plan(planner.example_spec("health-itemsets"))
    >>> round(planner.explain_items(plan, ["hiv", "anemia", "headache"])["epsilon"], 3)
    1.674
    """
    if not isinstance(plan, Mapping):
        plan = _io.read_plan_file(plan)
    if isinstance(items, str):
        items = [x for x in items.split(",") if x.strip()]
    return _families.explain_items(plan, list(items))


def explain_shuffled(plan: Mapping[str, Any], n: int, delta: float) -> dict[str, Any]:
    """The central guarantee a verified plan's reports would get from a shuffler of ``n`` users.

    Parameters
    ----------
    plan : mapping
        A plan of any family with a plain local epsilon (not ULDP).
    n : int
        Users in the shuffled batch (>= 2).
    delta : float
        ``delta`` of the central claim, in (0, 1).

    Returns
    -------
    dict
        ``{"mechanism", "local_epsilon", "n", "delta", "epsilon", "epsilon_lower", "source"}``.

    Raises
    ------
    SpecError
        ``--shuffle-n`` / ``--delta`` out of range, or a ULDP plan.
    PrivacyViolation
        The plan fails its re-check (no central guarantee is stated for it).

    References
    ----------
    See :mod:`ldpplan.solvers.shuffle`.
    """
    out = central_guarantee(plan, n, delta, family_of_plan(plan).shuffle_randomizer(plan))
    result = verify_plan(plan)
    if not result.holds:
        raise PrivacyViolation(f"the plan fails its re-check: {result.message}", result.details)
    return out

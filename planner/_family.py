"""The family protocol and the family object every planner room declares (no registry here).

A *family* is one paper's mechanisms. Its planner room ``planner/<family>/`` declares, in its
``__init__``, ``FAMILY``: a :class:`ModuleFamily` whose operations are direct references to the
room's public functions (``plan.build_plan``, ``verify.verify``, ...), imported at the top of that
``__init__``, and whose runtime classes are its runtime package's ``RUNTIME_CLASSES``
(``mechanisms/<family>/__init__.py``). The registry of families is :mod:`.families`, which imports
the rooms; this module sits below both so a room can build its ``FAMILY`` without importing the
registry (``docs/ARCHITECTURE.md``, "A new family").

Import weight: the runtime registry (``ldpplan.mechanisms``) and ``planner.data`` are imported at the top
(``import ldpplan.planner`` is lazy, so ``ldpplan --help`` imports neither); pydantic (the planner
extra, ``_common``) is imported where it is used.
"""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol, runtime_checkable

from ._report import default_report_facts
from ._solve_once import plan_scope
from .errors import PrivacyViolation, SpecError
from .shuffle import attach_shuffled, verify_shuffled
from ..mechanisms._amplification import PLAN_KINDS, randomizer_of_plan
from .data.stream import DEFAULT_CHUNK_ROWS
from ..mechanisms import PlanError, runtime_class

if TYPE_CHECKING:  # pydantic is imported with a family's spec module, not by `ldpplan --help`
    from pydantic import BaseModel

__all__ = ["Family", "ModuleFamily", "Room"]


@runtime_checkable
class Family(Protocol):
    """What every mechanism family implements.

    Attributes
    ----------
    name : str
        Family name (``"idue"``, ``"pckv"``, ``"pie"``, ``"uldp"``); also accepted by
        ``ldpplan schema --mechanism`` and ``ldpplan options``.
    spec_mechanisms : tuple of str
        Values of the spec's ``mechanism`` key this family plans (e.g. ``"pckv"``
        chooses between ``"pckv-ue"`` and ``"pckv-grr"``).
    plan_mechanisms : tuple of str
        Values of a plan's ``mechanism`` it writes: keys of ``ldpplan.mechanisms.RUNTIMES`` (the
        ``PLAN_FIELDS`` of the family's runtime classes; a subset of ``spec_mechanisms``).
    examples : Mapping[str, dict]
        Embedded example specs (``ldpplan plan --example NAME``).
    options_model : type
        Pydantic model of the simulate options (``-O KEY=VALUE``), ``extra="forbid"``;
        field descriptions and defaults are what ``ldpplan options`` prints.
    input_doc : str
        The CSV columns ``ldpplan perturb --input`` reads for this family (one paragraph).
    """

    # read-only members (a frozen dataclass's fields, properties or class attributes all implement them)
    @property
    def name(self) -> str: ...

    @property
    def spec_mechanisms(self) -> tuple[str, ...]: ...

    @property
    def plan_mechanisms(self) -> tuple[str, ...]: ...

    @property
    def examples(self) -> Mapping[str, dict]: ...

    @property
    def options_model(self) -> type[BaseModel]: ...

    @property
    def input_doc(self) -> str: ...

    def plan(self, raw: Mapping[str, Any], *, base_dir: Path | None = None) -> dict[str, Any]:
        """Validate the raw spec (SpecError), solve, build a plan 2.0 dict, verify it, attach
        ``verification`` (PrivacyViolation instead of returning a failing plan)."""

    def verify(self, plan: Mapping[str, Any]) -> Any:
        """Independent exact re-check of the numbers **and** of the plan against its embedded
        spec; derived claims are recomputed. Returns ``Verification`` (PlanFormatError if malformed)."""

    def summarize(self, plan: Mapping[str, Any]) -> list:
        """Tables that ``ldpplan plan`` prints (list of ``Table``)."""

    def simulate(self, plan: Mapping[str, Any], options: Any, progress: Any = None) -> Any:
        """Run the plan over real or synthetic data (``SimulationReport``)."""

    def read_inputs(self, plan: Mapping[str, Any], path: str | Path) -> Any:
        """Read a CSV of users' true inputs into what the runtime's ``perturb`` accepts (whole; the
        chunks of :meth:`iter_inputs` joined)."""

    def iter_inputs(self, plan: Mapping[str, Any], path: str | os.PathLike, *, skip_empty: bool = False,
                    chunk_rows: int | None = None) -> Any:
        """The users' inputs of a CSV or Parquet file, streamed: an ``ldpplan.planner.data.InputStream``
        whose chunks are what the runtime's ``perturb`` accepts (peak memory set by ``chunk_rows``,
        not by the file; ``bytes_read``/``total_bytes`` for progress). Rows with an empty item raise
        ``InputDataError`` (count, first lines) unless ``skip_empty`` (then counted in ``skipped_empty``)."""

    def shuffle_randomizer(self, plan: Mapping[str, Any]) -> dict[str, Any]:
        """Keyword arguments of the plan's randomizer-specific shuffle bound (``{}``: the generic bounds)."""

    def report_facts(self, plan: Mapping[str, Any]) -> Any:
        """What ``ldpplan report`` says about the plan: notion, unit of privacy, bounds (``ReportFacts``)."""

    def report_spec(self, plan: Mapping[str, Any], *, budget: float = 1.0, users: int | None = None) -> Any:
        """The plan's spec with its budget scaled and ``users`` users (None: not expressible), for the what-ifs."""

    def audit_pairs(self, plan: Mapping[str, Any]) -> list:
        """The input pairs and output events that attain the plan's privacy map (the room's ``audit.pairs``)."""

    def audit_domain(self, plan: Mapping[str, Any]) -> Any:
        """Every input of the plan, for the audit's exploration stage (the room's ``audit.domain``)."""

    def explain_items(self, plan: Mapping[str, Any], items: list) -> dict[str, Any]:
        """The budget a verified plan gives one user's item set; a family without item-set budgets
        raises SpecError in one line (``ldpplan explain --items``)."""


@dataclasses.dataclass(frozen=True)
class Room:
    """The public functions of one planner room, referenced directly (go-to-definition lands in the room).

    Every room has the same public modules (``docs/ARCHITECTURE.md``); its ``__init__`` imports them
    and fills this record once. The optional ``claims`` hooks are None where the room has none.

    Attributes
    ----------
    build_plan : callable
        ``plan.build_plan(raw, *, base_dir=None) -> dict``: spec -> plan 2.0.
    verify : callable
        ``verify.verify(plan) -> Verification``: the exact re-check.
    summarize : callable
        ``tables.summarize(plan) -> list[Table]``.
    simulate : callable
        ``simulate.simulate(plan, options, progress) -> SimulationReport``.
    options_model : type
        ``simulate.SimulateOptions`` (pydantic, ``extra="forbid"``).
    read_inputs, iter_inputs : callable
        ``inputs.read_inputs(plan, path)``, ``inputs.iter_inputs(plan, path, *, skip_empty, chunk_rows)``.
    input_doc : str
        ``inputs.INPUT_DOC``.
    audit_pairs, audit_domain : callable
        ``audit.pairs(plan)``, ``audit.domain(plan)``.
    explain_items, shuffle_randomizer, report_facts, report_spec : callable or None
        ``claims.explain_items(plan, items)`` (item-set budgets), ``claims.shuffle_randomizer(plan)``,
        ``claims.report_facts(plan)``, ``claims.report_spec(plan, *, budget, users)``; None: absent
        (the defaults of :class:`ModuleFamily` apply).
    """

    build_plan: Callable[..., dict[str, Any]]
    verify: Callable[[Mapping[str, Any]], Any]
    summarize: Callable[[Mapping[str, Any]], list]
    simulate: Callable[..., Any]
    options_model: type[BaseModel]
    read_inputs: Callable[..., Any]
    iter_inputs: Callable[..., Any]
    input_doc: str
    audit_pairs: Callable[[Mapping[str, Any]], list]
    audit_domain: Callable[[Mapping[str, Any]], Any]
    explain_items: Callable[..., dict[str, Any]] | None = None
    shuffle_randomizer: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None
    report_facts: Callable[[Mapping[str, Any]], Any] | None = None
    report_spec: Callable[..., Any] | None = None


@dataclasses.dataclass(frozen=True)
class ModuleFamily:
    """A :class:`Family` whose operations are its room's public functions (a :class:`Room`).

    A family declares what is its own: its name, the spec ``mechanism`` values it plans, its
    examples, its room's functions and its runtime classes (``RUNTIME_CLASSES`` of
    ``mechanisms/<runtime>/``, whose ``PLAN_FIELDS`` name the plan mechanisms). The generic steps
    every family shares (the ``[shuffle]`` block's central guarantee, the verification record,
    the default report facts) are here, once.

    Attributes
    ----------
    name, spec_mechanisms, examples
        As in :class:`Family`.
    package : str
        The family package, e.g. ``"ldpplan.planner.pie"`` (``__name__`` of its ``__init__``); informative.
    room : Room
        The room's public functions.
    runtime_classes : tuple of type
        The runtime package's ``RUNTIME_CLASSES``.
    runtime : str, optional
        The runtime package's name under ``ldpplan.mechanisms`` (default: ``name``).
    """

    name: str
    spec_mechanisms: tuple[str, ...]
    examples: Mapping[str, dict]
    package: str
    room: Room
    runtime_classes: tuple[type[Any], ...]
    runtime: str | None = None

    @property
    def plan_mechanisms(self) -> tuple[str, ...]:
        """Plan ``mechanism`` values: the ``PLAN_FIELDS`` names of the family's runtime classes, in order."""
        return tuple(m for cls in self.runtime_classes for m in cls.PLAN_FIELDS.mechanisms)

    @property
    def options_model(self) -> type[BaseModel]:
        """The typed simulate options (pydantic, ``extra="forbid"``): ``simulate.SimulateOptions``."""
        return self.room.options_model

    @property
    def input_doc(self) -> str:
        """The CSV columns ``ldpplan perturb --input`` reads (``inputs.INPUT_DOC``)."""
        return self.room.input_doc

    def plan(self, raw: Mapping[str, Any], *, base_dir: Path | None = None) -> dict[str, Any]:
        """Spec -> verified plan 2.0 (SpecError; PrivacyViolation instead of a failing plan).

        ``plan.build_plan(raw, base_dir=...)`` builds it; when its ``verification.holds`` is not
        yet true, or a ``[shuffle]`` block asks for ``guarantee.shuffled``, it is verified here.
        The spec is parsed and solved once: build and verify share one :func:`._solve_once.plan_scope`
        (verify re-derives only what differs from what build derived; run on its own, it re-derives all).
        """
        from ._common import attach_verification  # deferred: pydantic (see the module's note)

        block = raw.get("shuffle") if isinstance(raw, Mapping) else None
        with plan_scope():
            plan = self.room.build_plan(raw, base_dir=base_dir)
            if block is not None:  # the central guarantee of n shuffled reports, for every family at once
                plan = attach_shuffled(plan, plan["spec"]["shuffle"], self.shuffle_randomizer(plan))
                plan = attach_verification(plan, self.verify(plan))  # replaces the family's own record
            elif (plan.get("verification") or {}).get("holds") is not True:
                plan = attach_verification(plan, self.verify(plan))
        return plan

    def verify(self, plan: Mapping[str, Any]) -> Any:
        """Exact re-check of the numbers and of the plan against its spec (``Verification``).

        ``guarantee.shuffled`` (the ``[shuffle]`` block) is recomputed here for every family.
        """
        check = self.room.verify(plan)
        if not check.holds:
            return check
        failure = verify_shuffled(plan, self.shuffle_randomizer(plan))
        if failure is None:
            return check
        return type(check)(holds=False, message=failure, details={**check.details, "field": "guarantee.shuffled"})

    def summarize(self, plan: Mapping[str, Any]) -> list:
        """Tables that ``ldpplan plan`` prints."""
        return self.room.summarize(plan)

    def simulate(self, plan: Mapping[str, Any], options: Any, progress: Any = None) -> Any:
        """The family's simulation (``SimulationReport``)."""
        return self.room.simulate(plan, options, progress)

    def read_inputs(self, plan: Mapping[str, Any], path: str | Path) -> Any:
        """Users' true inputs from a CSV, in the form the runtime's ``perturb`` takes."""
        return self.room.read_inputs(plan, path)

    def iter_inputs(self, plan: Mapping[str, Any], path: str | os.PathLike, *, skip_empty: bool = False,
                    chunk_rows: int | None = None) -> Any:
        """Users' inputs streamed a chunk at a time (``InputStream``); see :meth:`Family.iter_inputs`."""
        return self.room.iter_inputs(plan, path, skip_empty=skip_empty,
                                     chunk_rows=DEFAULT_CHUNK_ROWS if chunk_rows is None else int(chunk_rows))

    def shuffle_randomizer(self, plan: Mapping[str, Any]) -> dict[str, Any]:
        """Keyword arguments of ``plan``'s randomizer-specific shuffle bound (the room's
        ``claims.shuffle_randomizer``; ``{}``: the generic bounds for epsilon0-LDP randomizers)."""
        if self.room.shuffle_randomizer is not None:
            return dict(self.room.shuffle_randomizer(plan))
        return _runtime_randomizer(plan)

    def report_facts(self, plan: Mapping[str, Any]) -> Any:
        """What ``ldpplan report`` says about ``plan`` (the room's ``claims.report_facts``, a ``ReportFacts``;
        without one: the notion's name, ``guarantee.epsilon`` and the first prediction)."""
        if self.room.report_facts is not None:
            return self.room.report_facts(plan)
        return default_report_facts(plan)

    def report_spec(self, plan: Mapping[str, Any], *, budget: float = 1.0, users: int | None = None) -> Any:
        """``plan``'s spec with its budget times ``budget`` and ``users`` users, re-planned by the report's what-ifs
        (the room's ``claims.report_spec``; None: the family cannot say it)."""
        hook = self.room.report_spec
        return None if hook is None else hook(plan, budget=budget, users=users)

    def audit_pairs(self, plan: Mapping[str, Any]) -> list:
        """The input pairs and events of ``plan``'s audit (``ldpplan.planner.auditing.events.InputPair``)."""
        return self.room.audit_pairs(plan)

    def audit_domain(self, plan: Mapping[str, Any]) -> Any:
        """Every input of ``plan`` for the audit's exploration (``ldpplan.planner.auditing.events.Domain``)."""
        return self.room.audit_domain(plan)

    @property
    def has_item_sets(self) -> bool:
        """The family explains item-set budgets (its ``claims`` has ``explain_items``)."""
        return self.room.explain_items is not None

    def explain_items(self, plan: Mapping[str, Any], items: list) -> dict[str, Any]:
        """The budget a verified plan gives one user's item set (the room's ``claims.explain_items``).

        Raises
        ------
        SpecError
            In one line, for a family without item-set budgets (its ``claims`` has no ``explain_items``);
            :func:`ldpplan.planner.families.explain_items` names the plan mechanisms that have them.
        PrivacyViolation
            The plan fails its re-check (no budget is explained for it).
        """
        if self.room.explain_items is None:
            raise SpecError("PLAN", f"item-set budgets: the {self.name} family has none", plan.get("mechanism"))
        result = self.verify(plan)
        if not result.holds:
            raise PrivacyViolation(f"the plan fails its re-check: {result.message}", result.details)
        return self.room.explain_items(plan, items)

    def __repr__(self) -> str:
        return f"<family {self.name}: {', '.join(self.plan_mechanisms)}>"


def _runtime_randomizer(plan: Mapping[str, Any]) -> dict[str, Any]:
    """``{"blanket": ...}``: the two-level description ``load()`` reads for the plan's runtime class
    (``PlanFields.shuffle``; :func:`ldpplan.mechanisms._amplification.randomizer_of_plan`); the solver's
    k-RR keywords for ``"krr"``; ``{}`` (the generic bounds) otherwise."""
    try:
        kind = runtime_class(plan.get("mechanism")).PLAN_FIELDS.shuffle
        if kind == "krr":  # k-ary RR (one round of L-GRR): the solver's k-RR bounds, as the runtime confirms them
            return {"mechanism": "krr", "domain_size": int(randomizer_of_plan(plan, kind)["domain_size"])}
        return {"blanket": randomizer_of_plan(plan, kind)} if kind in PLAN_KINDS else {}
    except (PlanError, ValueError, KeyError, TypeError, AttributeError):
        return {}  # a plan without the numbers: verification fails elsewhere

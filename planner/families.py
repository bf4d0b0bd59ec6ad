"""The family protocol and the one registry of mechanism families.

A *family* is one paper's mechanisms (IDUE, PCKV, PIE, ULDP). Each is a planner room
``ldpplan.planner.<family>`` with the same public modules (``spec``, ``plan``, ``verify``,
``claims``, ``inputs``, ``simulate``, ``tables``, ``audit``) whose ``__init__`` declares ``FAMILY``
(a :class:`ModuleFamily`: name, spec mechanism names, examples), and a runtime package
``ldpplan.mechanisms.<family>`` whose ``__init__`` declares ``RUNTIME_CLASSES`` (their
``PLAN_FIELDS`` name the plan mechanisms). A new family is those two rooms, a schema part and
**one name** in :data:`REGISTRY` (``docs/ARCHITECTURE.md``, "A new family"); the conformance
test (``tests/test_conformance.py``) then runs it through spec -> plan -> verify -> load ->
perturb -> aggregate -> merge -> estimate -> simulate.

Family packages are imported lazily (their ``__init__`` is light) so that ``ldpplan --help``
stays fast.
"""
from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path
from typing import Any, Mapping, Protocol, runtime_checkable

from .errors import PlanFormatError, SpecError

__all__ = ["Family", "ModuleFamily", "REGISTRY", "family_names", "spec_mechanisms", "family_for", "family_of_plan",
           "all_families", "all_examples"]


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

    name: str
    spec_mechanisms: tuple[str, ...]
    plan_mechanisms: tuple[str, ...]
    examples: Mapping[str, dict]
    options_model: type
    input_doc: str

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

    def iter_inputs(self, plan: Mapping[str, Any], path: str | Path, *, skip_empty: bool = False,
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
class ModuleFamily:
    """A :class:`Family` whose operations are the fixed public functions of its room, imported on first use.

    Every family room has the same modules (``docs/ARCHITECTURE.md``), so a family declares only
    what is its own: its name, the spec ``mechanism`` values it plans, its examples and its
    package. The operations are always ``plan.build_plan``, ``verify.verify``,
    ``tables.summarize``, ``simulate.simulate`` (options ``simulate.SimulateOptions``),
    ``inputs.read_inputs`` / ``inputs.iter_inputs`` / ``inputs.INPUT_DOC``, ``audit.pairs`` /
    ``audit.domain`` and, where the family has item-set budgets, ``claims.explain_items``. The
    plan mechanism names are not declared here: they are the ``PLAN_FIELDS`` of the runtime
    classes the runtime package ``mechanisms/<runtime>/`` declares (``RUNTIME_CLASSES``).

    Attributes
    ----------
    name, spec_mechanisms, examples
        As in :class:`Family`.
    package : str
        The family package, e.g. ``"ldpplan.planner.pie"`` (``__name__`` of its ``__init__``).
    runtime : str, optional
        The runtime package's name under ``ldpplan.mechanisms`` (default: ``name``).
    """

    name: str
    spec_mechanisms: tuple[str, ...]
    examples: Mapping[str, dict]
    package: str
    runtime: str | None = None

    def _fn(self, module: str, attr: str):
        return getattr(importlib.import_module(f"{self.package}.{module}"), attr)

    @property
    def plan_mechanisms(self) -> tuple[str, ...]:
        """Plan ``mechanism`` values: the ``PLAN_FIELDS`` names of the family's runtime classes."""
        from .. import mechanisms

        return tuple(m for cls in mechanisms.family_runtimes(self.runtime or self.name)
                     for m in cls.PLAN_FIELDS.mechanisms)

    @property
    def options_model(self) -> type:
        """The typed simulate options (pydantic, ``extra="forbid"``): ``simulate.SimulateOptions``."""
        return self._fn("simulate", "SimulateOptions")

    @property
    def input_doc(self) -> str:
        """The CSV columns ``ldpplan perturb --input`` reads (``inputs.INPUT_DOC``)."""
        return self._fn("inputs", "INPUT_DOC")

    def plan(self, raw: Mapping[str, Any], *, base_dir: Path | None = None) -> dict[str, Any]:
        """Spec -> verified plan 2.0 (SpecError; PrivacyViolation instead of a failing plan).

        ``plan.build_plan(raw, base_dir=...)`` builds it; when its ``verification.holds`` is not
        yet true, or a ``[shuffle]`` block asks for ``guarantee.shuffled``, it is verified here.
        """
        from ._common import attach_verification

        block = raw.get("shuffle") if isinstance(raw, Mapping) else None
        plan = self._fn("plan", "build_plan")(raw, base_dir=base_dir)
        if block is not None:  # the central guarantee of n shuffled reports, for every family at once
            from .shuffle import attach_shuffled

            plan = attach_shuffled(plan, plan["spec"]["shuffle"], self.shuffle_randomizer(plan))
            plan = attach_verification(plan, self.verify(plan))  # replaces the family's own record
        elif (plan.get("verification") or {}).get("holds") is not True:
            plan = attach_verification(plan, self.verify(plan))
        return plan

    def verify(self, plan: Mapping[str, Any]) -> Any:
        """Exact re-check of the numbers and of the plan against its spec (``Verification``).

        ``guarantee.shuffled`` (the ``[shuffle]`` block) is recomputed here for every family.
        """
        check = self._fn("verify", "verify")(plan)
        if not check.holds:
            return check
        from .shuffle import verify_shuffled

        failure = verify_shuffled(plan, self.shuffle_randomizer(plan))
        if failure is None:
            return check
        return type(check)(holds=False, message=failure, details={**check.details, "field": "guarantee.shuffled"})

    def summarize(self, plan: Mapping[str, Any]) -> list:
        """Tables that ``ldpplan plan`` prints."""
        return self._fn("tables", "summarize")(plan)

    def simulate(self, plan: Mapping[str, Any], options: Any, progress: Any = None) -> Any:
        """The family's simulation (``SimulationReport``)."""
        return self._fn("simulate", "simulate")(plan, options, progress)

    def read_inputs(self, plan: Mapping[str, Any], path: str | Path) -> Any:
        """Users' true inputs from a CSV, in the form the runtime's ``perturb`` takes."""
        return self._fn("inputs", "read_inputs")(plan, path)

    def iter_inputs(self, plan: Mapping[str, Any], path: str | Path, *, skip_empty: bool = False,
                    chunk_rows: int | None = None) -> Any:
        """Users' inputs streamed a chunk at a time (``InputStream``); see :meth:`Family.iter_inputs`."""
        from .data.stream import DEFAULT_CHUNK_ROWS

        return self._fn("inputs", "iter_inputs")(plan, path, skip_empty=skip_empty,
                                                 chunk_rows=DEFAULT_CHUNK_ROWS if chunk_rows is None
                                                 else int(chunk_rows))

    def shuffle_randomizer(self, plan: Mapping[str, Any]) -> dict[str, Any]:
        """Keyword arguments of ``plan``'s randomizer-specific shuffle bound (the room's
        ``claims.shuffle_randomizer``; ``{}``: the generic bounds for epsilon0-LDP randomizers)."""
        hook = getattr(importlib.import_module(f"{self.package}.claims"), "shuffle_randomizer", None)
        if hook is not None:
            return dict(hook(plan))
        return _runtime_randomizer(plan)

    def report_facts(self, plan: Mapping[str, Any]) -> Any:
        """What ``ldpplan report`` says about ``plan`` (the room's ``claims.report_facts``, a ``ReportFacts``;
        without one: the notion's name, ``guarantee.epsilon`` and the first prediction)."""
        hook = getattr(importlib.import_module(f"{self.package}.claims"), "report_facts", None)
        if hook is not None:
            return hook(plan)
        from ._report import default_report_facts

        return default_report_facts(plan)

    def report_spec(self, plan: Mapping[str, Any], *, budget: float = 1.0, users: int | None = None) -> Any:
        """``plan``'s spec with its budget times ``budget`` and ``users`` users, re-planned by the report's what-ifs
        (the room's ``claims.report_spec``; None: the family cannot say it)."""
        hook = getattr(importlib.import_module(f"{self.package}.claims"), "report_spec", None)
        return None if hook is None else hook(plan, budget=budget, users=users)

    def audit_pairs(self, plan: Mapping[str, Any]) -> list:
        """The input pairs and events of ``plan``'s audit (``ldpplan.planner.auditing.events.InputPair``)."""
        return self._fn("audit", "pairs")(plan)

    def audit_domain(self, plan: Mapping[str, Any]) -> Any:
        """Every input of ``plan`` for the audit's exploration (``ldpplan.planner.auditing.events.Domain``)."""
        return self._fn("audit", "domain")(plan)

    def explain_items(self, plan: Mapping[str, Any], items: list) -> dict[str, Any]:
        """The budget a verified plan gives one user's item set (the room's ``claims.explain_items``).

        Raises
        ------
        SpecError
            In one line, for a family without item-set budgets (its ``claims`` has no ``explain_items``),
            naming the plan mechanisms that have them.
        PrivacyViolation
            The plan fails its re-check (no budget is explained for it).
        """
        explain = getattr(importlib.import_module(f"{self.package}.claims"), "explain_items", None)
        if explain is None:
            raise SpecError("PLAN", f"item-set budgets exist for {_item_set_mechanisms()} plans only (the {self.name} "
                            "family has none)", plan.get("mechanism"))
        result = self.verify(plan)
        if not result.holds:
            from .errors import PrivacyViolation

            raise PrivacyViolation(f"the plan fails its re-check: {result.message}", result.details)
        return explain(plan, items)

    def __repr__(self) -> str:
        return f"<family {self.name}: {', '.join(self.plan_mechanisms)}>"


def _item_set_mechanisms() -> str:
    """The plan mechanisms whose family explains item-set budgets, as ``'a', 'b'`` (for messages)."""
    names = []
    for fam in all_families():
        package = getattr(fam, "package", None)
        if package and hasattr(importlib.import_module(f"{package}.claims"), "explain_items"):
            names.extend(fam.plan_mechanisms)
    return ", ".join(repr(n) for n in names) or "no"


#: The registry line: the registered families, in order. Family ``name`` is the planner room
#: ``planner/<name>/`` (its ``FAMILY``: spec mechanism names, examples) and the runtime package
#: ``mechanisms/<name>/`` (its ``RUNTIME_CLASSES``, whose ``PLAN_FIELDS`` name the plan mechanisms).
#: Nothing else lists families or mechanism names: CLI, API, audit, schema composition and the
#: conformance tests read the declarations.
REGISTRY: tuple[str, ...] = ("idue", "pckv", "pie", "uldp", "hadamard", "longitudinal")


def family_names() -> list[str]:
    """The registered family names."""
    return list(REGISTRY)


def spec_mechanisms() -> dict[str, str]:
    """Spec ``mechanism`` value -> family name (as each family declares them; its plan mechanisms map to it too)."""
    out: dict[str, str] = {}
    for fam in all_families():
        for n in (*fam.spec_mechanisms, *fam.plan_mechanisms):
            out[n] = fam.name
    return out


def _load(name: str) -> Family:
    return importlib.import_module(f"{__package__}.{name}").FAMILY


def family_for(mechanism: Any, *, field: str = "mechanism") -> Family:
    """The family of a spec ``mechanism`` value or of a family name.

    Raises
    ------
    SpecError
        If the name is neither (the message lists the valid names).
    """
    if isinstance(mechanism, str) and mechanism in REGISTRY:
        return _load(mechanism)
    names = spec_mechanisms()
    if not isinstance(mechanism, str) or mechanism not in names:
        raise SpecError(field, f"must be one of {sorted(names)}", mechanism)
    return _load(names[mechanism])


def family_of_plan(plan: Mapping[str, Any]) -> Family:
    """Family of a plan dict: the family whose runtime runs its ``mechanism`` (PlanFormatError otherwise)."""
    mech = plan.get("mechanism") if isinstance(plan, Mapping) else None
    owners = {m: fam for fam in all_families() for m in fam.plan_mechanisms}
    if not isinstance(mech, str) or mech not in owners:
        raise PlanFormatError(f"mechanism: must be one of {sorted(owners)} (got {mech!r})")
    return owners[mech]


def all_families() -> list[Family]:
    """Every registered family object (imports them)."""
    return [_load(n) for n in REGISTRY]


def all_examples() -> dict[str, tuple[Family, dict]]:
    """Every embedded example: name -> (family, raw spec)."""
    out: dict[str, tuple[Family, dict]] = {}
    for fam in all_families():
        for name, spec in fam.examples.items():
            out[name] = (fam, spec)
    return out


def _runtime_randomizer(plan: Mapping[str, Any]) -> dict[str, Any]:
    """``{"blanket": ...}``: the two-level description ``load()`` reads for the plan's runtime class
    (``PlanFields.shuffle``; :func:`ldpplan.mechanisms._amplification.randomizer_of_plan`); the solver's
    k-RR keywords for ``"krr"``; ``{}`` (the generic bounds) otherwise."""
    from ..mechanisms import PlanError, runtime_class
    from ..mechanisms._amplification import PLAN_KINDS, randomizer_of_plan

    try:
        kind = runtime_class(plan.get("mechanism")).PLAN_FIELDS.shuffle
        if kind == "krr":  # k-ary RR (one round of L-GRR): the solver's k-RR bounds, as the runtime confirms them
            return {"mechanism": "krr", "domain_size": int(randomizer_of_plan(plan, kind)["domain_size"])}
        return {"blanket": randomizer_of_plan(plan, kind)} if kind in PLAN_KINDS else {}
    except (PlanError, ValueError, KeyError, TypeError, AttributeError):
        return {}  # a plan without the numbers: verification fails elsewhere

"""The family protocol and the one registry of mechanism families.

A *family* is one paper's mechanisms (IDUE, PCKV, PIE, ULDP). Each is a package
``ldpplan.planner.<family>`` (one module per concern: ``spec``, ``plan``, ``verify``,
``tables``, ``simulate``) whose ``__init__`` exposes ``FAMILY``, an object implementing
:class:`Family`. A new family is one solver module, one runtime module, one planner
package and **one line** in :data:`REGISTRY`; the conformance test
(``tests/test_conformance.py``) then runs it through spec -> plan -> verify -> load ->
perturb -> aggregate -> merge -> estimate -> simulate.

Family packages are imported lazily so that ``ldpplan --help`` stays fast.
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
        Values of a plan's ``mechanism`` it writes: keys of ``ldpplan.mechanisms.RUNTIMES``.
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

    def audit_pairs(self, plan: Mapping[str, Any]) -> list:
        """The input pairs and output events that attain the plan's privacy map (the room's ``audit.pairs``)."""

    def audit_domain(self, plan: Mapping[str, Any]) -> Any:
        """Every input of the plan, for the audit's exploration stage (the room's ``audit.domain``)."""


@dataclasses.dataclass(frozen=True)
class ModuleFamily:
    """A :class:`Family` whose operations are functions of its package's modules, imported on first use.

    Each operation is named ``"module:function"`` relative to ``package``; a family package
    builds its ``FAMILY`` as one ``ModuleFamily(...)`` instead of writing the delegation again.

    Attributes
    ----------
    name, spec_mechanisms, plan_mechanisms, examples, input_doc
        As in :class:`Family`.
    package : str
        The family package, e.g. ``"ldpplan.planner.pie"``.
    options : str
        ``"module:Model"`` of the simulate options model.
    build : str
        ``"module:function(raw, *, base_dir)"`` returning a plan 2.0 dict; when its
        ``verification.holds`` is not yet true, :meth:`plan` verifies and attaches it.
    check, tables, simulator, reader, chunks : str
        The functions behind :meth:`verify`, :meth:`summarize`, :meth:`simulate`, :meth:`read_inputs`,
        :meth:`iter_inputs`.
    """

    name: str
    spec_mechanisms: tuple[str, ...]
    plan_mechanisms: tuple[str, ...]
    examples: Mapping[str, dict]
    input_doc: str
    package: str
    options: str
    build: str = "plan:plan_from_spec"
    check: str = "verify:verify"
    tables: str = "tables:summarize"
    simulator: str = "simulate:simulate"
    reader: str = "inputs:read_inputs"
    chunks: str = "inputs:iter_inputs"
    auditor: str = "audit"

    def _fn(self, ref: str):
        module, attr = ref.split(":")
        return getattr(importlib.import_module(f"{self.package}.{module}"), attr)

    @property
    def options_model(self) -> type:
        """The typed simulate options (pydantic, ``extra="forbid"``)."""
        return self._fn(self.options)

    def plan(self, raw: Mapping[str, Any], *, base_dir: Path | None = None) -> dict[str, Any]:
        """Spec -> verified plan 2.0 (SpecError; PrivacyViolation instead of a failing plan)."""
        block = raw.get("shuffle") if isinstance(raw, Mapping) else None
        if block is not None and self.name == "uldp":
            from .errors import SpecError

            raise SpecError("shuffle", "is not available for ULDP plans (non-sensitive outputs are released as they "
                            "are, so the amplification theorems for epsilon0-LDP randomizers do not apply)", block)
        plan = self._fn(self.build)(raw, base_dir=base_dir)
        if block is not None:  # the central guarantee of n shuffled reports, for every family at once
            from ._common import attach_verification
            from .shuffle import attach_shuffled

            plan = attach_shuffled(plan, plan["spec"]["shuffle"])
            plan = attach_verification(plan, self.verify(plan))  # replaces the family's own record
        elif (plan.get("verification") or {}).get("holds") is not True:
            from ._common import attach_verification

            plan = attach_verification(plan, self.verify(plan))
        return plan

    def verify(self, plan: Mapping[str, Any]) -> Any:
        """Exact re-check of the numbers and of the plan against its spec (``Verification``).

        ``guarantee.shuffled`` (the ``[shuffle]`` block) is recomputed here for every family.
        """
        check = self._fn(self.check)(plan)
        if not check.holds:
            return check
        from .shuffle import verify_shuffled

        failure = verify_shuffled(plan)
        if failure is None:
            return check
        return type(check)(holds=False, message=failure, details={**check.details, "field": "guarantee.shuffled"})

    def summarize(self, plan: Mapping[str, Any]) -> list:
        """Tables that ``ldpplan plan`` prints."""
        return self._fn(self.tables)(plan)

    def simulate(self, plan: Mapping[str, Any], options: Any, progress: Any = None) -> Any:
        """The family's simulation (``SimulationReport``)."""
        return self._fn(self.simulator)(plan, options, progress)

    def read_inputs(self, plan: Mapping[str, Any], path: str | Path) -> Any:
        """Users' true inputs from a CSV, in the form the runtime's ``perturb`` takes."""
        return self._fn(self.reader)(plan, path)

    def iter_inputs(self, plan: Mapping[str, Any], path: str | Path, *, skip_empty: bool = False,
                    chunk_rows: int | None = None) -> Any:
        """Users' inputs streamed a chunk at a time (``InputStream``); see :meth:`Family.iter_inputs`."""
        from .data.stream import DEFAULT_CHUNK_ROWS

        return self._fn(self.chunks)(plan, path, skip_empty=skip_empty,
                                     chunk_rows=DEFAULT_CHUNK_ROWS if chunk_rows is None else int(chunk_rows))

    def audit_pairs(self, plan: Mapping[str, Any]) -> list:
        """The input pairs and events of ``plan``'s audit (``ldpplan.planner.audit.events.InputPair``)."""
        return self._fn(f"{self.auditor}:pairs")(plan)

    def audit_domain(self, plan: Mapping[str, Any]) -> Any:
        """Every input of ``plan`` for the audit's exploration (``ldpplan.planner.audit.events.Domain``)."""
        return self._fn(f"{self.auditor}:domain")(plan)

    def __repr__(self) -> str:
        return f"<family {self.name}: {', '.join(self.plan_mechanisms)}>"


#: family name -> (package, spec mechanisms). The single source of mechanism names:
#: plan mechanism names are each family's ``plan_mechanisms`` (checked against the runtime's
#: ``RUNTIMES`` by the conformance test).
REGISTRY: dict[str, tuple[str, tuple[str, ...]]] = {
    "idue": ("ldpplan.planner.idue", ("idue", "idue-ps")),
    "pckv": ("ldpplan.planner.pckv", ("pckv", "pckv-ue", "pckv-grr")),
    "pie": ("ldpplan.planner.pie", ("pie", "rr", "glh")),
    "uldp": ("ldpplan.planner.uldp", ("urr", "urap", "pum")),
    "hadamard": ("ldpplan.planner.hadamard", ("hr",)),
}


def family_names() -> list[str]:
    """The registered family names."""
    return list(REGISTRY)


def spec_mechanisms() -> dict[str, str]:
    """Spec ``mechanism`` value -> family name (plan mechanisms map to their family too)."""
    out: dict[str, str] = {}
    for fam, (_, names) in REGISTRY.items():
        for n in names:
            out[n] = fam
    return out


def _load(name: str) -> Family:
    return importlib.import_module(REGISTRY[name][0]).FAMILY


def family_for(mechanism: Any, *, field: str = "mechanism") -> Family:
    """The family of a spec ``mechanism`` value or of a family name.

    Raises
    ------
    SpecError
        If the name is neither (the message lists the valid names).
    """
    names = spec_mechanisms()
    if isinstance(mechanism, str) and mechanism in REGISTRY:
        return _load(mechanism)
    if not isinstance(mechanism, str) or mechanism not in names:
        raise SpecError(field, f"must be one of {sorted(names)}", mechanism)
    return _load(names[mechanism])


def family_of_plan(plan: Mapping[str, Any]) -> Family:
    """Family of a plan dict (PlanFormatError for unknown mechanisms)."""
    mech = plan.get("mechanism") if isinstance(plan, Mapping) else None
    names = spec_mechanisms()
    if not isinstance(mech, str) or mech not in names:
        raise PlanFormatError(f"mechanism: must be one of {sorted(names)} (got {mech!r})")
    return _load(names[mech])


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

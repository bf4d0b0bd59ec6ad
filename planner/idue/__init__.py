"""IDUE / IDUE-PS family (ID-LDP, Gu, Li, Xiong & Cao, ICDE 2020): spec -> plan -> verify -> simulate.

Modules: :mod:`.spec` (spec model), :mod:`.plan` (solve, plan format 2.0), :mod:`.verify` and
:mod:`.checks` (exact re-check, plan vs spec, derived claims), :mod:`.tables` (summaries),
:mod:`.simulate` (simulation and its options), :mod:`.files` (input and report files).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

__all__ = ["FAMILY", "IDUEFamily"]


class IDUEFamily:
    """The IDUE / IDUE-PS implementation of :class:`ldpplan.planner.families.Family`."""

    name = "idue"
    spec_mechanisms = ("idue", "idue-ps")
    plan_mechanisms = ("idue", "idue-ps")

    @property
    def examples(self) -> Mapping[str, dict]:
        """Embedded example specs (copies): ``health`` (Table II), ``three-levels``, ``three-levels-itemsets``."""
        import copy

        from .plan import EXAMPLES

        return copy.deepcopy(EXAMPLES)

    @property
    def options_model(self) -> type:
        """:class:`.simulate.IDUESimulateOptions`."""
        from .simulate import IDUESimulateOptions

        return IDUESimulateOptions

    @property
    def input_doc(self) -> str:
        """The CSV columns ``ldpplan perturb --input`` reads."""
        from .files import INPUT_DOC

        return INPUT_DOC

    def plan(self, raw: Mapping[str, Any], *, base_dir: Path | None = None) -> dict[str, Any]:
        """See :func:`.plan.plan_from_spec`."""
        from .plan import plan_from_spec

        return plan_from_spec(raw, base_dir=base_dir)

    def verify(self, plan: Mapping[str, Any]):
        """See :func:`.verify.verify_plan`."""
        from .verify import verify_plan

        return verify_plan(plan)

    def summarize(self, plan: Mapping[str, Any]) -> list:
        """See :func:`.tables.summarize`."""
        from .tables import summarize

        return summarize(plan)

    def simulate(self, plan: Mapping[str, Any], options: Any, progress: Any = None):
        """See :func:`.simulate.simulate`."""
        from .simulate import simulate

        return simulate(plan, options, progress)

    def read_inputs(self, plan: Mapping[str, Any], path):
        """See :func:`.files.read_inputs`."""
        from .files import read_inputs

        return read_inputs(plan, path)

    def __repr__(self) -> str:
        return "<family idue: idue, idue-ps>"


FAMILY = IDUEFamily()

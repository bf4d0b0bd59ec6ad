"""IDUE / IDUE-PS family (ID-LDP, Gu, Li, Xiong & Cao, ICDE 2020): spec -> plan -> verify -> simulate.

Modules: :mod:`.spec` (spec model), :mod:`.plan` (solve, plan format 2.0), :mod:`.verify` and
:mod:`.checks` (exact re-check, plan vs spec, derived claims), :mod:`.tables` (summaries),
:mod:`.simulate` (simulation and its options), :mod:`.files` (input and report files).
"""
from __future__ import annotations

from ..families import ModuleFamily
from .inputs import INPUT_DOC
from .plan import EXAMPLES

__all__ = ["FAMILY", "EXAMPLES"]


#: The IDUE / IDUE-PS implementation of :class:`ldpplan.planner.families.Family`.
FAMILY = ModuleFamily(
    name="idue", spec_mechanisms=("idue", "idue-ps"), plan_mechanisms=("idue", "idue-ps"),
    examples=EXAMPLES, input_doc=INPUT_DOC, package=__name__,
    options="simulate:IDUESimulateOptions", build="plan:plan_from_spec", check="verify:verify_plan",
    tables="tables:summarize", simulator="simulate:simulate", reader="inputs:read_inputs",
    chunks="inputs:iter_inputs")

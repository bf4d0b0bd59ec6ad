"""Hadamard response family: epsilon and a domain -> plan -> exact verification -> runtime, audit, simulation.

Source: J. Acharya, Z. Sun, H. Zhang, "Hadamard Response: Estimating Distributions Privately,
Efficiently, and with Little Communication", AISTATS 2019 (arXiv:1802.04705). The math is in
:mod:`ldpplan.solvers.hadamard` (which version and why), the runtime in
:mod:`ldpplan.mechanisms.hadamard`.

Modules: :mod:`.spec`, :mod:`.plan` (``build_plan``), :mod:`.verify`, :mod:`.claims`, :mod:`.inputs`,
:mod:`.simulate` (``SimulateOptions``), :mod:`.tables`, :mod:`.audit`.
"""
from __future__ import annotations

from ...mechanisms import hadamard as _runtime
from .._family import ModuleFamily, Room
from . import audit, claims, inputs, plan, simulate, tables, verify
from .._gss import gss_labels

__all__ = ["FAMILY", "EXAMPLES"]

EXAMPLES: dict[str, dict] = {
    "hadamard-gss": {
        "mechanism": "hr", "epsilon": 1.0, "domain": gss_labels(), "users": 28629,
        "description": "GSS vocabulary (28,629 respondents), X = ageGroup x educGroup x gender x nativeBorn "
                       "(100 categories): Hadamard response at epsilon = 1 (K = 128 outputs, 7-bit reports)",
    },
    "hadamard-synthetic": {
        "mechanism": "hr", "epsilon": 2.0, "domain": 10000, "users": 100000,
        "description": "k = 10,000 items (the paper's large-domain setting), n = 100,000, epsilon = 2: "
                       "14-bit reports",
    },
}

#: The Hadamard-response implementation of :class:`ldpplan.planner._family.Family`.
_ROOM = Room(build_plan=plan.build_plan, verify=verify.verify, summarize=tables.summarize,
             simulate=simulate.simulate, options_model=simulate.SimulateOptions,
             read_inputs=inputs.read_inputs, iter_inputs=inputs.iter_inputs, input_doc=inputs.INPUT_DOC,
             audit_pairs=audit.pairs, audit_domain=audit.domain,
             report_facts=claims.report_facts,
             report_spec=claims.report_spec)
FAMILY = ModuleFamily(name="hadamard", spec_mechanisms=("hr",), examples=EXAMPLES, package=__name__,
                      runtime_classes=_runtime.RUNTIME_CLASSES, room=_ROOM)

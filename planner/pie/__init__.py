"""PIE family: re-identification targets -> k-ary RR / GLH plans, verification, simulation.

Murakami & Takahashi, "Toward Evaluating Re-identification Risks in the Local Privacy
Model" (TDP 2021): PIE privacy (Def. 3.1, bits), Bayes error (Cor. 3.9), alpha of RR/GLH
(Prop. 4.1, Thm. 4.2-4.5), l2 loss (Prop. 4.6-4.7), optimal g (Thm. 4.8).

The room's public modules are those of every family (``docs/ARCHITECTURE.md``): :mod:`.spec`,
:mod:`.plan` (``build_plan``), :mod:`.verify`, :mod:`.claims` (guarantee, predicted, baselines),
:mod:`.inputs`, :mod:`.simulate` (``SimulateOptions``), :mod:`.tables`, :mod:`.audit`; private
helpers: ``_solve`` (the RR and GLH candidates), ``_exact`` (the exact guarantee).
:data:`FAMILY` implements :class:`ldpplan.planner._family.Family`.
"""
from __future__ import annotations

from .._gss import GSS_FIELDS, gss_labels
from ...mechanisms import pie as _runtime
from .._family import ModuleFamily, Room
from . import audit, claims, inputs, plan, simulate, tables, verify

__all__ = ["FAMILY", "EXAMPLES", "gss_labels", "GSS_FIELDS"]

EXAMPLES: dict[str, dict] = {
    "pie-rr": {
        "mechanism": "rr", "domain_size": 10500393, "n": 1370637, "target": {"bayes_error": 0.5},
        "description": "PIE Sec. 5.3 location data (|X| = 10500393, n = 1370637): k-ary RR with Bayes error >= 0.5",
    },
    "pie-glh": {
        "mechanism": "glh", "domain_size": 10500393, "n": 1370637, "target": {"bayes_error": 0.5},
        "g_max": 100000000,
        "description": "PIE Sec. 5.3 location data: GLH with g <= 10^8 (Fig. 12), Bayes error >= 0.5",
    },
    "pie-gss": {
        "mechanism": "pie", "domain": gss_labels(), "users": 28629, "target": {"bayes_error": 0.8},
        "g_max": 65536,
        "description": "GSS vocabulary (28,629 respondents), X = ageGroup x educGroup x gender x nativeBorn "
                       "(100 categories): RR or GLH (g <= 2^16), Bayes error >= 0.8",
    },
}

#: The PIE implementation of :class:`ldpplan.planner._family.Family`.
_ROOM = Room(build_plan=plan.build_plan, verify=verify.verify, summarize=tables.summarize,
             simulate=simulate.simulate, options_model=simulate.SimulateOptions,
             read_inputs=inputs.read_inputs, iter_inputs=inputs.iter_inputs, input_doc=inputs.INPUT_DOC,
             audit_pairs=audit.pairs, audit_domain=audit.domain,
             shuffle_randomizer=claims.shuffle_randomizer,
             report_facts=claims.report_facts,
             report_spec=claims.report_spec)
FAMILY = ModuleFamily(name="pie", spec_mechanisms=("pie", "rr", "glh"), examples=EXAMPLES, package=__name__,
                      runtime_classes=_runtime.RUNTIME_CLASSES, room=_ROOM)

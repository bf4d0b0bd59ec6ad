"""ULDP family (uRR, uRAP, PUM): spec -> plan -> exact verification -> tables -> simulation.

Source: Murakami & Kawamoto, "Utility-Optimized Local Differential Privacy Mechanisms for
Distribution Estimation", USENIX Security 2019 (full version): Def. 2 (ULDP), Def. 3 (uRR),
Def. 4 (uRAP), Props. 4-8 (l1 loss), App. E Props. 15-19 (l2 loss), Sec. 5 (PUM, eq. 21),
Sec. 2.5 (estimators), Sec. 6 (Fig. 5, Fig. 8).

The room's public modules are those of every family (``docs/ARCHITECTURE.md``): :mod:`.spec`,
:mod:`.plan` (``build_plan``), :mod:`.verify`, :mod:`.claims`, :mod:`.inputs`, :mod:`.simulate`
(``SimulateOptions``), :mod:`.tables`, :mod:`.audit`; private helpers: ``_numbers`` (grid numbers,
exact ratios, losses), ``_options`` (option parsers), ``_simulate_pum``, ``_counts`` (aggregate-mode
sampling). This ``__init__`` is the family's one declaration and stays light.
"""
from __future__ import annotations

from ...mechanisms import uldp as _runtime
from .._family import ModuleFamily, Room
from . import audit, claims, inputs, plan, simulate, tables, verify

__all__ = ["FAMILY", "EXAMPLES"]

EXAMPLES: dict[str, dict] = {
    "uldp-urr": {
        "mechanism": "urr", "epsilon": 1.0, "domain": 400, "sensitive": 76,
        "description": "ULDP Sec. 6 US Census setting: |X| = 400, |X_S| = 76, epsilon = 1 (uRR, Def. 3)",
    },
    "uldp-urap": {
        "mechanism": "urap", "epsilon": 1.0, "domain": 400, "sensitive": 76,
        "description": "ULDP Sec. 6 US Census setting: |X| = 400, |X_S| = 76, epsilon = 1 (uRAP, Def. 4)",
    },
    "uldp-pum": {
        "mechanism": "pum", "epsilon": 1.0, "domain": 625, "sensitive": 15, "common": "urr",
        "tags": ["home", "workplace"],
        "description": "ULDP Sec. 6 Foursquare setting: 25x25 regions, 15 hospital regions, PUM with tags home/workplace",
    },
}



#: The ULDP implementation of :class:`ldpplan.planner._family.Family`.
_ROOM = Room(build_plan=plan.build_plan, verify=verify.verify, summarize=tables.summarize,
             simulate=simulate.simulate, options_model=simulate.SimulateOptions,
             read_inputs=inputs.read_inputs, iter_inputs=inputs.iter_inputs, input_doc=inputs.INPUT_DOC,
             audit_pairs=audit.pairs, audit_domain=audit.domain,
             report_facts=claims.report_facts,
             report_spec=claims.report_spec)
FAMILY = ModuleFamily(name="uldp", spec_mechanisms=("urr", "urap", "pum"), examples=EXAMPLES, package=__name__,
                      runtime_classes=_runtime.RUNTIME_CLASSES, room=_ROOM)

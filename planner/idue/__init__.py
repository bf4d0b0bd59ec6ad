"""IDUE / IDUE-PS family (ID-LDP, Gu, Li, Xiong & Cao, ICDE 2020): spec -> plan -> verify -> simulate.

The room's public modules are those of every family (``docs/ARCHITECTURE.md``): :mod:`.spec`,
:mod:`.plan` (``build_plan``), :mod:`.verify` (``verify``), :mod:`.claims` (guarantee, predicted,
baselines; item-set budgets, ``explain_items``), :mod:`.inputs`, :mod:`.simulate`
(``SimulateOptions``), :mod:`.tables`, :mod:`.audit`; the rest are private ``_*.py`` helpers.
This ``__init__`` is the family's one declaration and stays light (imported by the registry).
"""
from __future__ import annotations

import math

from ...mechanisms import idue as _runtime
from .._family import ModuleFamily, Room
from . import audit, claims, inputs, plan, simulate, tables, verify

__all__ = ["FAMILY", "EXAMPLES"]

_LN4, _LN6 = math.log(4.0), math.log(6.0)
EXAMPLES: dict[str, dict] = {
    # ID-LDP Sec. IV-A example / Table II: HIV at ln 4, four common conditions at ln 6.
    "health": {
        "mechanism": "idue", "model": "opt0", "notion": "minid",
        "description": "ID-LDP Table II: HIV (epsilon = ln 4) vs anemia, headache, stomachache, toothache (ln 6)",
        "levels": [
            {"name": "hiv", "epsilon": _LN4, "items": 1},
            {"name": "other", "epsilon": _LN6, "items": ["anemia", "headache", "stomachache", "toothache"]},
        ],
    },
    # ID-LDP Sec. VII default: budgets {eps, 1.2 eps, 2 eps} on {5%, 5%, 90%} of m = 100 items.
    # The same health levels for item sets (IDUE-PS, L = 3): ID-LDP eq. (16) gives {hiv} ln 4 but
    # {hiv, anemia, headache} ln((4 + 6 + 6) / 3) (`ldpplan explain PLAN --items hiv,anemia,headache`).
    "health-itemsets": {
        "mechanism": "idue-ps", "model": "opt0", "notion": "minid", "padding_length": 3,
        "description": "ID-LDP Table II levels on item sets (IDUE-PS, L = 3): HIV ln 4, common conditions ln 6",
        "levels": [
            {"name": "hiv", "epsilon": _LN4, "items": 1},
            {"name": "other", "epsilon": _LN6, "items": ["anemia", "headache", "stomachache", "toothache"]},
        ],
    },
    "three-levels": {
        "mechanism": "idue", "model": "opt0", "notion": "minid", "domain": 100, "assignment_seed": 0,
        "description": "ID-LDP Sec. VII default: {eps, 1.2 eps, 2 eps} on {5%, 5%, 90%} of 100 items, eps = 1",
        "levels": [
            {"name": "eps", "epsilon": 1.0, "share": 0.05},
            {"name": "1.2eps", "epsilon": 1.2, "share": 0.05},
            {"name": "2eps", "epsilon": 2.0, "share": 0.90},
        ],
    },
    "three-levels-itemsets": {
        "mechanism": "idue-ps", "model": "opt0", "notion": "minid", "padding_length": 2, "domain": 1000,
        "assignment_seed": 0,
        "description": "IDUE-PS with L = 2 on 1,000 items, {eps, 1.2 eps, 2 eps} on {5%, 5%, 90%}, eps = 2",
        "levels": [
            {"name": "eps", "epsilon": 2.0, "share": 0.05},
            {"name": "1.2eps", "epsilon": 2.4, "share": 0.05},
            {"name": "2eps", "epsilon": 4.0, "share": 0.90},
        ],
    },
}


#: The IDUE / IDUE-PS implementation of :class:`ldpplan.planner._family.Family`.
_ROOM = Room(build_plan=plan.build_plan, verify=verify.verify, summarize=tables.summarize,
             simulate=simulate.simulate, options_model=simulate.SimulateOptions,
             read_inputs=inputs.read_inputs, iter_inputs=inputs.iter_inputs, input_doc=inputs.INPUT_DOC,
             audit_pairs=audit.pairs, audit_domain=audit.domain,
             explain_items=claims.explain_items,
             report_facts=claims.report_facts,
             report_spec=claims.report_spec)
FAMILY = ModuleFamily(name="idue", spec_mechanisms=("idue", "idue-ps"), examples=EXAMPLES, package=__name__,
                      runtime_classes=_runtime.RUNTIME_CLASSES, room=_ROOM)

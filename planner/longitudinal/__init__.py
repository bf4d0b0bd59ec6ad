"""Longitudinal family: memoized frequency oracles planned with two budgets over repeated collections.

Erlingsson et al., "RAPPOR" (CCS 2014): permanent + instantaneous randomized response;
Arcolezi et al., "Improving the utility of locally differentially private protocols for
longitudinal and multidimensional frequency estimates" (2022, arXiv:2111.04636): L-GRR, L-SUE,
L-OUE, L-OSUE, L-SOUE. One module per concern (:mod:`.spec`, :mod:`.plan`, :mod:`.claims`,
:mod:`.verify`, :mod:`.inputs`, :mod:`.simulate`, :mod:`.tables`, :mod:`.audit`);
:data:`FAMILY` implements :class:`ldpplan.planner._family.Family`.
"""
from __future__ import annotations

from ...mechanisms import longitudinal as _runtime
from .._family import ModuleFamily, Room
from . import audit, claims, inputs, plan, simulate, tables, verify

__all__ = ["FAMILY", "EXAMPLES"]

EXAMPLES: dict[str, dict] = {
    "longitudinal-daily": {
        "mechanism": "auto", "domain": 10, "users": 200000, "epsilon_perm": 4.0, "epsilon_1": 1.0, "rounds": 20,
        "max_values": 2,
        "description": "20 daily reports of one of 10 values by 200,000 users, each value memoized (epsilon_perm = 4) "
                       "and every report 1-LDP; users hold at most two values (an unchanging value: 4 nats; "
                       "values that change: the plan's sound epsilon_lifetime)",
    },
    "longitudinal-rappor": {
        "mechanism": "l-sue", "domain": ["a", "b", "c", "d", "e", "f", "g", "h"], "users": 10000,
        "epsilon_perm": 2.0, "epsilon_1": 0.5, "rounds": 30, "max_values": 1,
        "description": "basic one-time RAPPOR (L-SUE) over 8 labels, 30 weekly reports of an unchanging value",
    },
}

#: The longitudinal implementation of :class:`ldpplan.planner._family.Family`.
_ROOM = Room(build_plan=plan.build_plan, verify=verify.verify, summarize=tables.summarize,
             simulate=simulate.simulate, options_model=simulate.SimulateOptions,
             read_inputs=inputs.read_inputs, iter_inputs=inputs.iter_inputs, input_doc=inputs.INPUT_DOC,
             audit_pairs=audit.pairs, audit_domain=audit.domain,
             report_facts=claims.report_facts,
             report_spec=claims.report_spec)
FAMILY = ModuleFamily(name="longitudinal", spec_mechanisms=("auto", "l-grr", "l-sue", "l-oue", "l-osue", "l-soue"),
                      examples=EXAMPLES, package=__name__,
                      runtime_classes=_runtime.RUNTIME_CLASSES, room=_ROOM)

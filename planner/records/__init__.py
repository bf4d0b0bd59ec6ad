"""Records family: several categorical attributes per user under one budget (issue 30).

Sources: H. H. Arcolezi, J.-F. Couchot, B. Al Bouna, X. Xiao, "Random Sampling Plus Fake Data:
Multidimensional Frequency Estimates With Local Differential Privacy", CIKM 2021 (SPL, SMP, RS+FD);
T. Wang, J. Blocki, N. Li, S. Jha, USENIX Security 2017 (GRR, OUE); N. Wang et al., ICDE 2019 (sampling
one attribute). The math is in :mod:`ldpplan.solvers.records`, the runtime in
:mod:`ldpplan.mechanisms.records`.

Modules: :mod:`.spec`, :mod:`.plan` (``build_plan``), :mod:`.verify`, :mod:`.claims`, :mod:`.inputs`,
:mod:`.simulate` (``SimulateOptions``), :mod:`.tables`, :mod:`.audit`.
"""
from __future__ import annotations

from ...mechanisms import records as _runtime
from .._family import ModuleFamily, Room
from . import audit, claims, inputs, plan, simulate, tables, verify

__all__ = ["FAMILY", "EXAMPLES"]

EXAMPLES: dict[str, dict] = {
    "records-flights": {
        "mechanism": "records", "epsilon": 2.0, "users": 336776,
        "attributes": [{"name": "carrier", "domain": 16, "weight": 2.0}, {"name": "origin", "domain": 3},
                       {"name": "dest", "domain": 105, "weight": 0.5}, {"name": "month", "domain": 12},
                       {"name": "hour", "domain": 20}],
        "description": "NYC flights 2013 (336,776 flights): carrier (weight 2), origin, destination (weight 0.5), "
                       "month and hour under one budget epsilon = 2 per flight; the planner compares SPL, SMP "
                       "and RS+FD on their certified optima",
    },
    "records-synthetic": {
        "mechanism": "records", "epsilon": 1.0, "users": 10000,
        "attributes": [{"name": "a", "domain": 3}, {"name": "b", "domain": ["x", "y", "z", "w"], "weight": 2.0},
                       {"name": "c", "domain": 5, "weight": 0.5}],
        "description": "three small attributes (3, 4 and 5 values) with weights 1, 2, 0.5 at epsilon = 1",
    },
}

_ROOM = Room(build_plan=plan.build_plan, verify=verify.verify, summarize=tables.summarize,
             simulate=simulate.simulate, options_model=simulate.SimulateOptions,
             read_inputs=inputs.read_inputs, iter_inputs=inputs.iter_inputs, input_doc=inputs.INPUT_DOC,
             audit_pairs=audit.pairs, audit_domain=audit.domain,
             report_facts=claims.report_facts, report_spec=claims.report_spec)
FAMILY = ModuleFamily(name="records", spec_mechanisms=("records", "spl", "smp", "rsfd"), examples=EXAMPLES,
                      package=__name__, runtime_classes=_runtime.RUNTIME_CLASSES, room=_ROOM)

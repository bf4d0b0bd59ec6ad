r"""PCKV family: key-value data (key frequencies and per-key value means).

Source: Gu, Li, Cheng, Xiong, Cao, *PCKV: Locally Differentially Private Correlated
Key-Value Data Collection with Optimized Utility*, USENIX Security 2020 (Sec. 4-6,
App. A-F). Math in :mod:`ldpplan.solvers.pckv`; runtime in :mod:`ldpplan.mechanisms.pckv`.

The room's public modules are those of every family (``docs/ARCHITECTURE.md``): :mod:`.spec`,
:mod:`.plan` (``build_plan``), :mod:`.verify`, :mod:`.claims` (guarantee, predictions, baselines,
the auto-chooser), :mod:`.inputs`, :mod:`.simulate` (``SimulateOptions``), :mod:`.tables`,
:mod:`.audit`; private helpers: ``_model`` (data model for predictions), ``_allocation`` (grid
rounding, exact ratios, repair), ``_private_length`` and the ``_simulate_*`` modules.
"""
from __future__ import annotations

from typing import Any

from ...mechanisms import pckv as _runtime
from .._family import ModuleFamily, Room
from . import audit, claims, inputs, plan, simulate, tables, verify

__all__ = ["FAMILY", "EXAMPLES"]

EXAMPLES: dict[str, dict[str, Any]] = {
    # Sec. 6.1: n = 10^6 users, d = 100 keys, one pair per user (L = 1).
    "pckv-synthetic": {
        "mechanism": "pckv-ue", "epsilon": 1.0, "domain": 100, "padding_length": 1,
        "allocation": "optimized", "users": 1_000_000,
        "description": "PCKV-UE on the synthetic setting of Sec. 6.1 (d = 100, L = 1)",
    },
    # MovieLens ratings: key = movieId, value = rating mapped to [-1, 1]; L chosen from the data's
    # set sizes (the folder is $LDPPLAN_DATA_DIR, else ../shared/data: planner.data.default_data_dir).
    "pckv-movielens": {
        "mechanism": "pckv", "epsilon": 4.0, "domain": "data", "padding_length": "auto",
        "allocation": "optimized", "objective_keys": 50, "max_padding_length": 200,
        "data": "${LDPPLAN_DATA_DIR}/movielens_ratings.csv",
        "description": "PCKV on MovieLens: mechanism and L chosen from the data (Sec. 5.4, truncation)",
    },
}


#: The PCKV implementation of :class:`ldpplan.planner._family.Family`.
_ROOM = Room(build_plan=plan.build_plan, verify=verify.verify, summarize=tables.summarize,
             simulate=simulate.simulate, options_model=simulate.SimulateOptions,
             read_inputs=inputs.read_inputs, iter_inputs=inputs.iter_inputs, input_doc=inputs.INPUT_DOC,
             audit_pairs=audit.pairs, audit_domain=audit.domain,
             report_facts=claims.report_facts,
             report_spec=claims.report_spec)
FAMILY = ModuleFamily(name="pckv", spec_mechanisms=("pckv", "pckv-ue", "pckv-grr"), examples=EXAMPLES,
                      package=__name__,
                      runtime_classes=_runtime.RUNTIME_CLASSES, room=_ROOM)

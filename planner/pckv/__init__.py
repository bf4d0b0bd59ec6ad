r"""PCKV family: key-value data (key frequencies and per-key value means).

Source: Gu, Li, Cheng, Xiong, Cao, *PCKV: Locally Differentially Private Correlated
Key-Value Data Collection with Optimized Utility*, USENIX Security 2020 (Sec. 4-6,
App. A-F). Math in :mod:`ldpplan.solvers.pckv`; runtime in :mod:`ldpplan.mechanisms.pckv`.

Modules: :mod:`.spec` (the spec model), :mod:`.model` (data model for predictions),
:mod:`.allocation` (grid rounding, exact ratios, repair), :mod:`.plan` (spec -> plan 2.0),
:mod:`.verify`, :mod:`.tables`, :mod:`.simulate` (+ options), :mod:`.inputs` (CSV inputs
and report files).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from .._common import attach_verification
from .inputs import INPUT_DOC, read_inputs
from .plan import build_plan
from .simulate import PCKVSimulateOptions, simulate
from .spec import PCKVSpec
from .tables import summarize
from .verify import verify

__all__ = ["FAMILY", "PCKVFamily", "EXAMPLES", "PCKVSpec"]

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


class PCKVFamily:
    """The PCKV family (see :class:`ldpplan.planner.families.Family`)."""

    name = "pckv"
    spec_mechanisms = ("pckv", "pckv-ue", "pckv-grr")
    plan_mechanisms = ("pckv-ue", "pckv-grr")
    examples = EXAMPLES
    options_model = PCKVSimulateOptions
    input_doc = INPUT_DOC

    def plan(self, raw: Mapping[str, Any], *, base_dir: Path | None = None) -> dict[str, Any]:
        """Validate, solve, verify: a plan 2.0 dict (SpecError / PrivacyViolation)."""
        plan = build_plan(raw, base_dir=base_dir)
        return attach_verification(plan, verify(plan))

    def verify(self, plan: Mapping[str, Any]):
        """See :func:`ldpplan.planner.pckv.verify.verify`."""
        return verify(plan)

    def summarize(self, plan: Mapping[str, Any]) -> list:
        """See :func:`ldpplan.planner.pckv.tables.summarize`."""
        return summarize(plan)

    def simulate(self, plan: Mapping[str, Any], options: Any, progress: Any = None):
        """See :func:`ldpplan.planner.pckv.simulate.simulate`."""
        return simulate(plan, options, progress)

    def read_inputs(self, plan: Mapping[str, Any], path):
        """See :func:`ldpplan.planner.pckv.inputs.read_inputs`."""
        return read_inputs(plan, path)


FAMILY = PCKVFamily()

"""ULDP family (uRR, uRAP, PUM): spec -> plan -> exact verification -> tables -> simulation.

Source: Murakami & Kawamoto, "Utility-Optimized Local Differential Privacy Mechanisms for
Distribution Estimation", USENIX Security 2019 (full version): Def. 2 (ULDP), Def. 3 (uRR),
Def. 4 (uRAP), Props. 4-8 (l1 loss), App. E Props. 15-19 (l2 loss), Sec. 5 (PUM, eq. 21),
Sec. 2.5 (estimators), Sec. 6 (Fig. 5, Fig. 8).

Modules: :mod:`.spec` (the spec model), :mod:`.numbers` (grid numbers, exact ratios, losses),
:mod:`.plan`, :mod:`.verify`, :mod:`.tables`, :mod:`.options`, :mod:`.simulate`,
:mod:`.simulate_pum`, :mod:`.counts` (aggregate-mode sampling).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from .numbers import grid_rappor, grid_urap, grid_urr
from .options import ULDPSimOptions
from .plan import plan_from_spec
from .simulate import simulate as _simulate
from .spec import EXAMPLES, ULDPSpec
from .tables import summarize as _summarize
from .verify import verify as _verify

__all__ = ["FAMILY", "ULDPFamily", "EXAMPLES", "ULDPSpec", "ULDPSimOptions", "plan_from_spec", "grid_urr", "grid_urap",
           "grid_rappor"]

INPUT_DOC = ("CSV with a header and column `item`: a label of the plan's domain.labels, or a 0-based index "
             "when labels is null (one row per user). PUM plans also read an optional column `tag`: the name "
             "of one of params.tags when the item is one of the user's own private items under that tag "
             "(her pre-processor, eq. 19), empty otherwise.")


class ULDPFamily:
    """The ULDP family object (:class:`ldpplan.planner.families.Family`)."""

    name = "uldp"
    spec_mechanisms = ("urr", "urap", "pum")
    plan_mechanisms = ("urr", "urap", "pum")
    examples: Mapping[str, dict] = EXAMPLES
    options_model = ULDPSimOptions
    input_doc = INPUT_DOC

    def plan(self, raw: Mapping[str, Any], *, base_dir: Path | None = None) -> dict[str, Any]:
        """Spec -> verified plan (see :func:`.plan.plan_from_spec`)."""
        return plan_from_spec(raw, base_dir=base_dir)

    def verify(self, plan: Mapping[str, Any]):
        """Exact re-check of Def. 2 and of the plan against its spec (see :func:`.verify.verify`)."""
        return _verify(plan)

    def summarize(self, plan: Mapping[str, Any]) -> list:
        """Tables of the plan (see :func:`.tables.summarize`)."""
        return _summarize(plan)

    def simulate(self, plan: Mapping[str, Any], options: Any, progress: Any = None):
        """Simulation report (see :func:`.simulate.simulate`)."""
        return _simulate(plan, options, progress)

    def read_inputs(self, plan: Mapping[str, Any], path: str | Path):
        """Users' items from a CSV (see :func:`ldpplan.planner.uldp.inputs.read_inputs`)."""
        from .inputs import read_inputs

        return read_inputs(plan, path)

    def __repr__(self) -> str:
        return "ULDPFamily(urr, urap, pum)"


FAMILY = ULDPFamily()

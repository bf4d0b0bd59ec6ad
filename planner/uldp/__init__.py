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

from ..families import ModuleFamily
from ._numbers import grid_rappor, grid_urap, grid_urr
from ._options import ULDPSimOptions
from .plan import plan_from_spec
from .spec import EXAMPLES, ULDPSpec

__all__ = ["FAMILY", "EXAMPLES", "ULDPSpec", "ULDPSimOptions", "plan_from_spec", "grid_urr", "grid_urap",
           "grid_rappor"]

INPUT_DOC = ("CSV with a header and column `item`: a label of the plan's domain.labels, or a 0-based index "
             "when labels is null (one row per user). PUM plans also read an optional column `tag`: the name "
             "of one of params.tags when the item is one of the user's own private items under that tag "
             "(her pre-processor, eq. 19), empty otherwise.")


#: The ULDP implementation of :class:`ldpplan.planner.families.Family`.
FAMILY = ModuleFamily(
    name="uldp", spec_mechanisms=("urr", "urap", "pum"), plan_mechanisms=("urr", "urap", "pum"),
    examples=EXAMPLES, input_doc=INPUT_DOC, package=__name__,
    options="_options:ULDPSimOptions", build="plan:plan_from_spec", check="verify:verify",
    tables="tables:summarize", simulator="simulate:simulate", reader="inputs:read_inputs",
    chunks="inputs:iter_inputs")

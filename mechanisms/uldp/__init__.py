"""Client/server runtime of utility-optimized LDP mechanisms (numpy only).

Murakami & Kawamoto, "Utility-Optimized Local Differential Privacy Mechanisms for
Distribution Estimation" (USENIX Security 2019, full version):

* :class:`UtilityOptimizedRR` (``urr``): the (X_S, epsilon)-uRR of Def. 3; reports ``y``.
* :class:`UtilityOptimizedRAPPOR` (``urap``): the (X_S, theta, epsilon)-uRAP of Def. 4;
  reports ``bits`` (packed little-endian per row).
* :class:`PersonalizedULDP` (``pum``): the PUM of Sec. 5 (pre-processor + common uRR/uRAP
  over ``Z = X + bots``; estimate eq. 21).
* :class:`BasicRAPPOR`: the basic one-time RAPPOR baseline (the uRAP with X_S = X).

Every class follows the runtime protocol (:mod:`ldpplan.mechanisms._protocol`):
``from_plan``, ``perturb -> Reports``, ``aggregate -> Aggregate``, ``estimate(...,
method=...) -> Estimate`` with methods ``"empirical"`` (eq. 3), ``"threshold"`` (emp +
Bonferroni significance threshold) and ``"em"`` (the fixed point of EM reconstruction, the
MLE: exact water-filling for the uRR, the full-report MLE from Reports for the uRAP, by
projected Newton with a certified optimality gap in ``Estimate.optimality_gap``; the uRAP
adds ``"em-bits"``, the exact per-bit composite MLE from an Aggregate), ``privacy_map()`` and
``channel_matrix()``.
All probabilities are multiples of 2^-48 and are sampled exactly.
"""
from __future__ import annotations

from .runtime import (BasicRAPPOR, PersonalizedULDP, PreProcessor, UtilityOptimizedRAPPOR, UtilityOptimizedRR,
                      pack_bits, unpack_bits, urap_epsilon, urr_epsilon)

#: The family's runtime classes: their ``PLAN_FIELDS`` name the plan mechanisms they run (read by
#: ``ldpplan.mechanisms.RUNTIMES`` and the planner's family declaration). ``BasicRAPPOR`` is a
#: simulation baseline without a plan of its own.
RUNTIME_CLASSES = (UtilityOptimizedRR, UtilityOptimizedRAPPOR, PersonalizedULDP)

__all__ = ["RUNTIME_CLASSES", "UtilityOptimizedRR", "UtilityOptimizedRAPPOR", "BasicRAPPOR", "PersonalizedULDP", "PreProcessor",
           "urr_epsilon", "urap_epsilon", "pack_bits", "unpack_bits"]

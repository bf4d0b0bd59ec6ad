"""PCKV runtimes (Gu et al. USENIX Security 2020): key-value padding-and-sampling with UE or GRR.

The runtime classes and their privacy maps are in :mod:`.runtime`; the family's private helpers
are the underscore modules beside it."""
from __future__ import annotations

from .runtime import *  # noqa: F401,F403
from .runtime import PCKVUE, PCKVGRR
from .runtime import __all__ as _names
from .runtime import _random_signs  # noqa: F401  (tests reach it)

#: The family's runtime classes: their ``PLAN_FIELDS`` name the plan mechanisms they run (read by
#: ``ldpplan.mechanisms.RUNTIMES`` and the planner's family declaration).
RUNTIME_CLASSES = (PCKVUE, PCKVGRR)

__all__ = [*_names, "RUNTIME_CLASSES"]

"""PIE runtimes (Murakami & Takahashi TDP 2021): k-ary randomized response and GLH.

The runtime classes and their privacy maps are in :mod:`.runtime`; the family's private helpers
are the underscore modules beside it."""
from __future__ import annotations

from .runtime import *  # noqa: F401,F403
from .runtime import RandomizedResponse, GeneralizedLocalHashing
from .runtime import __all__ as _names

#: The family's runtime classes: their ``PLAN_FIELDS`` name the plan mechanisms they run (read by
#: ``ldpplan.mechanisms.RUNTIMES`` and the planner's family declaration).
RUNTIME_CLASSES = (RandomizedResponse, GeneralizedLocalHashing)

__all__ = [*_names, "RUNTIME_CLASSES"]

"""Longitudinal (memoized) runtimes: L-GRR and the unary encodings L-SUE, L-OUE, L-OSUE, L-SOUE.

The runtime classes and their privacy maps are in :mod:`.runtime` (the shared part in
:mod:`._base`); the client state (the append-only :class:`Memo` of permanent responses) in
:mod:`._memo`; the family's other private helpers are the underscore modules beside them."""
from __future__ import annotations

from ._memo import Memo  # noqa: F401
from .runtime import *  # noqa: F401,F403
from .runtime import LongitudinalGRR, LongitudinalUE
from .runtime import __all__ as _names

#: The family's runtime classes: their ``PLAN_FIELDS`` name the plan mechanisms they run (read by
#: ``ldpplan.mechanisms.RUNTIMES`` and the planner's family declaration).
RUNTIME_CLASSES = (LongitudinalGRR, LongitudinalUE)

__all__ = [*_names, "RUNTIME_CLASSES"]

"""Longitudinal (memoized) runtimes: L-GRR and the unary encodings L-SUE, L-OUE, L-OSUE, L-SOUE.

The runtime classes and their privacy maps are in :mod:`.runtime`; the client state (the
append-only :class:`Memo` of permanent responses) in :mod:`._memo`; the family's other private
helpers are the underscore modules beside them."""
from __future__ import annotations

from ._memo import Memo  # noqa: F401
from .runtime import *  # noqa: F401,F403
from .runtime import __all__  # noqa: F401

"""IDUE and IDUE-PS runtimes (ID-LDP, Gu et al. ICDE 2020): input-discriminative unary encoding.

The runtime classes and their privacy maps are in :mod:`.runtime`; the family's private helpers
are the underscore modules beside it."""
from __future__ import annotations

from .runtime import *  # noqa: F401,F403
from .runtime import __all__  # noqa: F401

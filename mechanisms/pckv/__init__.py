"""PCKV runtimes (Gu et al. USENIX Security 2020): key-value padding-and-sampling with UE or GRR.

The runtime classes and their privacy maps are in :mod:`.runtime`; the family's private helpers
are the underscore modules beside it."""
from __future__ import annotations

from .runtime import *  # noqa: F401,F403
from .runtime import __all__  # noqa: F401
from .runtime import _random_signs  # noqa: F401  (tests reach it)

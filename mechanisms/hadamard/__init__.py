"""Hadamard response runtime (Acharya, Sun & Zhang, AISTATS 2019): one runtime class, ``HadamardResponse``.

The runtime class and its privacy map are in :mod:`.runtime`; the family's private helpers are the
underscore modules beside it (:mod:`._channel`: the numbers; :mod:`._promises`: the embedded spec)."""
from __future__ import annotations

from .runtime import *  # noqa: F401,F403
from .runtime import __all__  # noqa: F401

#: The family's runtime classes (their ``PLAN_FIELDS`` name the plan mechanisms).
RUNTIME_CLASSES = (HadamardResponse,)  # noqa: F405

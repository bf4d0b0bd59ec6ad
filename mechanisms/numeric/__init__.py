"""Numeric values under LDP (Duchi et al. JASA 2018; Wang et al. ICDE 2019; Li et al. SIGMOD 2020): one
runtime class, ``NumericChannel``, for the four plan mechanisms on finite grids.

The class and its privacy map are in :mod:`.runtime`; the numbers (exact sampling, epsilon from the
numerators) in :mod:`._channel`; the embedded spec's promises in :mod:`._promises`."""
from __future__ import annotations

from .runtime import *  # noqa: F401,F403
from .runtime import __all__  # noqa: F401

#: The family's runtime classes (their ``PLAN_FIELDS`` name the plan mechanisms).
RUNTIME_CLASSES = (NumericChannel,)  # noqa: F405

"""Records runtime: several categorical attributes per user under one budget (issue 30).

Three runtime classes, one per plan mechanism, sharing :class:`._record.RecordRuntime`:
``SplitRecord`` (``spl``), ``SampledRecord`` (``smp``), ``RSFDRecord`` (``rsfd``). Private helpers:
:mod:`._oracles` (GRR/OUE on the grid), :mod:`._privacy` (the record's epsilon),
:mod:`._promises` (the embedded spec), :mod:`._params`.
"""
from __future__ import annotations

from .runtime import *  # noqa: F401,F403
from .runtime import __all__  # noqa: F401

#: The family's runtime classes (their ``PLAN_FIELDS`` name the plan mechanisms).
RUNTIME_CLASSES = (SplitRecord, SampledRecord, RSFDRecord)  # noqa: F405

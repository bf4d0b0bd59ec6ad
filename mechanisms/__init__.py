"""The ldpplan runtime: perturb on clients, aggregate and estimate on the server.

This package imports numpy only (never cvxpy, scipy or the planner), so a client
can load a plan file anywhere::

    import numpy as np, mechanisms
    mech = mechanisms.load("plan.json")
    reports = mech.perturb(items, rng=np.random.default_rng(0))
    freq = mech.estimate(reports)          # frequencies; counts are n * freq

Every sampling method takes ``rng: numpy.random.Generator``; there is no global RNG.
"""
from __future__ import annotations

import importlib
import os
from typing import Any, Mapping

from ._plan import PlanError, read_plan

__all__ = ["load", "PlanError", "RUNTIMES"]

#: plan ``mechanism`` -> "module:Class" implementing ``from_plan(plan)``
RUNTIMES: dict[str, str] = {
    "idue": "mechanisms.idue:IDUE",
    "idue-ps": "mechanisms.idue:IDUEPS",
    "pckv-ue": "mechanisms.pckv:PCKVUE",
    "pckv-grr": "mechanisms.pckv:PCKVGRR",
    "rr": "mechanisms.pie:RandomizedResponse",
    "glh": "mechanisms.pie:GeneralizedLocalHashing",
    "urr": "mechanisms.uldp:UtilityOptimizedRR",
    "urap": "mechanisms.uldp:UtilityOptimizedRAPPOR",
    "pum": "mechanisms.uldp:PersonalizedULDP",
}


def load(plan: str | os.PathLike | Mapping[str, Any]):
    """Build the runtime mechanism described by a plan.

    Parameters
    ----------
    plan : path-like or mapping
        A plan JSON file written by ``ldpplan plan`` (or its parsed dict).

    Returns
    -------
    object
        The mechanism (e.g. :class:`mechanisms.idue.IDUE`), exposing
        ``perturb(items, rng=...)`` and ``estimate(reports)``.

    Raises
    ------
    PlanError
        If the plan is unreadable, of an unsupported version, or names an
        unknown mechanism.
    """
    data = read_plan(plan)
    mech = data.get("mechanism")
    if mech not in RUNTIMES:
        raise PlanError(f"mechanism: must be one of {sorted(RUNTIMES)} (got {mech!r})")
    modname, clsname = RUNTIMES[mech].split(":")
    cls = getattr(importlib.import_module(modname), clsname)
    return cls.from_plan(data)

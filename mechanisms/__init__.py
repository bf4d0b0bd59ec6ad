"""The ldpplan runtime: perturb on clients; aggregate, merge and estimate on servers.

This package imports numpy only (never cvxpy, scipy or the planner), so a client
can load a plan file anywhere::

    import numpy as np
    from ldpplan import mechanisms
    mech = mechanisms.load("plan.json")                    # refuses plans that do not hold
    reports = mech.perturb(items, rng=mechanisms.secure_rng())
    agg = mech.aggregate(reports)                          # mergeable with +
    est = mech.estimate(agg)                               # Estimate(frequency, mean, method, n, ...)

Every sampling method takes ``rng: numpy.random.Generator`` (there is no global RNG)
and samples exactly under every bit generator; production clients use
:func:`secure_rng`. The runtime protocol is documented in :mod:`ldpplan.mechanisms._protocol`.
"""
from __future__ import annotations

import importlib
import os
from typing import Any, Mapping

from ._plan import PlanError, check_verified, loads_strict, plan_fingerprint, read_plan
from ._protocol import Aggregate, Batch, CountRule, Estimate, Reports, Runtime
from ._secure import secure_rng

__all__ = ["load", "runtime_class", "read_plan", "loads_strict", "PlanError", "RUNTIMES", "Estimate", "Aggregate",
           "Reports", "Runtime", "secure_rng", "plan_fingerprint", "Batch", "CountRule"]

#: plan ``mechanism`` -> "module:Class" implementing the runtime protocol. The planner's
#: family registry (``ldpplan.planner.families``) names, per family, which of these it writes.
RUNTIMES: dict[str, str] = {
    "idue": "ldpplan.mechanisms.idue:IDUE",
    "idue-ps": "ldpplan.mechanisms.idue:IDUEPS",
    "pckv-ue": "ldpplan.mechanisms.pckv:PCKVUE",
    "pckv-grr": "ldpplan.mechanisms.pckv:PCKVGRR",
    "rr": "ldpplan.mechanisms.pie:RandomizedResponse",
    "glh": "ldpplan.mechanisms.pie:GeneralizedLocalHashing",
    "urr": "ldpplan.mechanisms.uldp:UtilityOptimizedRR",
    "urap": "ldpplan.mechanisms.uldp:UtilityOptimizedRAPPOR",
    "pum": "ldpplan.mechanisms.uldp:PersonalizedULDP",
}


def runtime_class(mechanism: Any) -> type:
    """The runtime class of a plan ``mechanism`` name.

    Raises
    ------
    PlanError
        For a name not in :data:`RUNTIMES`.
    """
    if not isinstance(mechanism, str) or mechanism not in RUNTIMES:
        raise PlanError(f"mechanism: must be one of {sorted(RUNTIMES)} (got {mechanism!r})")
    modname, clsname = RUNTIMES[mechanism].split(":")
    return getattr(importlib.import_module(modname), clsname)


def load(plan: str | os.PathLike | Mapping[str, Any]):
    """Build the runtime mechanism of a verified plan, re-checking its guarantee.

    Parameters
    ----------
    plan : path-like or mapping
        A plan JSON file written by ``ldpplan plan`` (or its parsed dict).

    Returns
    -------
    Runtime
        The mechanism (e.g. :class:`ldpplan.mechanisms.idue.IDUE`).

    Raises
    ------
    PlanError
        If the plan is unreadable or not strict JSON, of another format version, names an
        unknown mechanism, has a non-finite or inconsistent number, did not verify
        (``verification.holds`` not true), or claims more privacy than its numbers give
        (the class's ``privacy_map()``). The message names the field, the rule and the value.
    """
    data = read_plan(plan)
    check_verified(data)
    return runtime_class(data.get("mechanism")).from_plan(data)

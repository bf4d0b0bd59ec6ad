"""The ldpplan runtime: perturb on clients; aggregate, merge and estimate on servers.

This package imports numpy only (never cvxpy, scipy or the planner), so a client
can load a plan file anywhere::

    import numpy as np
    from ldpplan import mechanisms
    mech = mechanisms.load("plan.json", fingerprint="sha256:...")   # the pinned plan; refuses any other
                                                           # and plans that do not hold
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

from ._envelope import MAX_DOMAIN_SIZE, PlanFields
from ._envelope import read_envelope as _read_envelope
from ._plan import PlanError, check_fingerprint, loads_strict, plan_fingerprint, read_plan
from ._protocol import Aggregate, Batch, CountRule, Estimate, Reports, Runtime
from ._secure import secure_rng

__all__ = ["load", "runtime_class", "read_plan", "loads_strict", "PlanError", "RUNTIMES", "Estimate", "Aggregate",
           "Reports", "Runtime", "secure_rng", "plan_fingerprint", "read_envelope", "MAX_DOMAIN_SIZE", "PlanFields",
           "Batch", "CountRule"]

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
    "hr": "ldpplan.mechanisms.hadamard:HadamardResponse",
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


def read_envelope(plan: str | os.PathLike | Mapping[str, Any], *, fingerprint: str | None = None,
                  verified: bool = False) -> dict[str, Any]:
    """Read a plan and check its envelope: the one reader ``load()`` and the planner's ``verify`` share.

    Strict JSON (no NaN/Infinity, no duplicate keys, bounded size and depth), ``format_version``
    exactly ``"2.0"``, the pinned ``fingerprint`` (if given), known top-level fields, a known
    ``mechanism`` and only the ``guarantee`` claims its runtime class declares (``PLAN_FIELDS``),
    ``domain.size <= MAX_DOMAIN_SIZE`` checked before the labels (distinct strings), finite
    numbers, and the ``verification`` block (``holds`` true when ``verified``).

    Returns
    -------
    dict
        The plan.

    Raises
    ------
    PlanError
        One line naming the field, the rule and the value.
    """
    data = read_plan(plan)
    check_fingerprint(data, fingerprint)
    fields = runtime_class(data.get("mechanism")).PLAN_FIELDS
    return _read_envelope(data, fields, verified=verified)


def load(plan: str | os.PathLike | Mapping[str, Any], *, fingerprint: str | None = None):
    """Build the runtime mechanism of a verified plan, re-checking its guarantee and its spec.

    Parameters
    ----------
    plan : path-like or mapping
        A plan JSON file written by ``ldpplan plan`` (or its parsed dict).
    fingerprint : str, optional
        The plan's pinned fingerprint, ``"sha256:<64 hex digits>"`` as ``ldpplan plan`` and
        ``ldpplan verify`` print it (the bare hex digits of :func:`plan_fingerprint` are accepted
        too). A client should pin it: the spec inside a plan proves nothing against someone who
        rewrites the whole file.

    Returns
    -------
    Runtime
        The mechanism (e.g. :class:`ldpplan.mechanisms.idue.IDUE`).

    Raises
    ------
    PlanError
        If the plan is unreadable or not strict JSON (NaN, Infinity, a duplicate key), not
        exactly format ``"2.0"``, has another fingerprint than the pinned one, an unknown field
        or claim, a ``domain.size`` above :data:`MAX_DOMAIN_SIZE`, a non-finite or inconsistent
        number, did not verify (``verification.holds`` not true), differs from the spec it
        embeds (levels, sensitive items, domain, n, releases, prior, budgets), or claims more
        privacy than its numbers give (the class's ``privacy_map()`` rounded toward the safe
        side, exact near the bound). The message names the field, the rule and the value.
    """
    data = read_envelope(plan, fingerprint=fingerprint, verified=True)
    return runtime_class(data.get("mechanism")).from_plan(data)

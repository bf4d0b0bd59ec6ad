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

import os
from types import MappingProxyType, ModuleType
from typing import Any, Mapping

from ._envelope import MAX_DOMAIN_SIZE, PlanFields
from ._envelope import read_envelope as _read_envelope
from ._plan import PlanError, check_verified, loads_strict, plan_fingerprint, read_plan
from ._plan_object import Domain, Plan, use_registry
from ._protocol import Aggregate, Batch, CountRule, Estimate, Reports, Runtime
from ._secure import secure_rng
from ._protocol import Frozen, check_method, set_runtime_lookup
from . import hadamard, idue, longitudinal, pckv, pie, records, uldp
from .longitudinal import Memo  # client state of memoized runtimes (issue 22)
from ._sampling import GRID_BITS, bernoulli, bernoulli_iid, check_rng, on_grid, to_grid

__all__ = ["load", "runtime_class", "read_plan", "loads_strict", "PlanError", "RUNTIMES", "Estimate", "Aggregate",
           "Reports", "Runtime", "secure_rng", "plan_fingerprint", "read_envelope", "MAX_DOMAIN_SIZE", "PlanFields",
           "Batch", "CountRule", "runtime_families", "family_runtimes", "Memo", "RUNTIME_PACKAGES", "Plan", "Domain"]
# the 2^-48 probability grid (the planner rounds onto it) and exact sampling on it, and the pieces of a
# runtime class (the planner's simulation-only baselines are built from them)
__all__ += ["GRID_BITS", "to_grid", "on_grid", "bernoulli", "bernoulli_iid", "check_rng", "Frozen", "check_method"]


#: The runtime's registry line: every family's runtime package, in the planner's registry order
#: (``ldpplan.planner.families.FAMILIES``; the runtime imports nothing of the planner, so it keeps its
#: own line). Each package declares its classes in its ``__init__`` as ``RUNTIME_CLASSES``.
RUNTIME_PACKAGES: tuple[ModuleType, ...] = (idue, pckv, pie, uldp, hadamard, longitudinal, records)

#: runtime family name (the package's last name) -> its runtime classes, in registry order
_FAMILY_RUNTIMES: Mapping[str, tuple[type[Any], ...]] = MappingProxyType(
    {package.__name__.rpartition(".")[2]: tuple(package.RUNTIME_CLASSES) for package in RUNTIME_PACKAGES})


def runtime_families() -> tuple[str, ...]:
    """The runtime family packages of :data:`RUNTIME_PACKAGES` (their names, sorted)."""
    return tuple(sorted(_FAMILY_RUNTIMES))


def family_runtimes(family: str) -> tuple[type[Any], ...]:
    """The runtime classes the family package ``ldpplan.mechanisms.<family>`` declares (``RUNTIME_CLASSES``).

    Raises
    ------
    PlanError
        For a name that is not a runtime family package.
    """
    if family not in _FAMILY_RUNTIMES:
        raise PlanError(f"family: must be one of {list(runtime_families())} (got {family!r})")
    return _FAMILY_RUNTIMES[family]


def _runtime_table() -> Mapping[str, type[Any]]:
    """Plan ``mechanism`` -> runtime class, from the registered packages' classes.

    A class names its plan mechanism(s) once, in ``PLAN_FIELDS.mechanisms``; a name claimed by
    two classes is an error here (the registry would be ambiguous).
    """
    table: dict[str, type[Any]] = {}
    for classes in _FAMILY_RUNTIMES.values():
        for cls in classes:
            for name in cls.PLAN_FIELDS.mechanisms:
                if name in table:
                    raise RuntimeError(f"plan mechanism {name!r} is declared by {table[name].__name__} "
                                       f"and {cls.__name__}")
                table[name] = cls
    return MappingProxyType(table)


#: plan ``mechanism`` -> runtime class (implementing the runtime protocol), read from each
#: registered package's ``RUNTIME_CLASSES`` and their ``PLAN_FIELDS``. The planner's family rooms
#: (``ldpplan.planner.families``) read the same declarations.
RUNTIMES: Mapping[str, type[Any]] = _runtime_table()


def runtime_class(mechanism: Any) -> type[Any]:
    """The runtime class of a plan ``mechanism`` name.

    Raises
    ------
    PlanError
        For a name not in :data:`RUNTIMES`.
    """
    if not isinstance(mechanism, str) or mechanism not in RUNTIMES:
        raise PlanError(f"mechanism: must be one of {sorted(RUNTIMES)} (got {mechanism!r})")
    return RUNTIMES[mechanism]


# ``Aggregate.from_dict`` checks counts by the runtime class's ``count_rule`` and ``Plan.read`` checks a plan
# with its mechanism's runtime class: _protocol and _plan_object sit below the runtime classes (they build
# on their types), so the registry is handed to them here instead of imported there.
set_runtime_lookup(runtime_class)
use_registry(runtime_class)


def read_envelope(plan: str | os.PathLike | Mapping[str, Any], *, fingerprint: str | None = None,
                  verified: bool = False) -> Plan | dict[str, Any]:
    """Read a plan and check its envelope: the one reader ``load()`` and the planner's ``verify`` share.

    Strict JSON (no NaN/Infinity, no duplicate keys, bounded size and depth), ``format_version``
    exactly ``"2.0"``, the pinned ``fingerprint`` (if given), known top-level fields, a known
    ``mechanism`` and only the ``guarantee`` claims its runtime class declares (``PLAN_FIELDS``),
    ``domain.size <= PLAN_FIELDS.max_domain`` (:data:`MAX_DOMAIN_SIZE` unless the class declares more:
    k-RR 2**62, GLH 2**61 - 1) checked before the labels (distinct strings), finite
    numbers, and the ``verification`` block (``holds`` true when ``verified``).

    Returns
    -------
    dict or Plan
        The plan as a plain dict, the caller's own mutable copy (as this function always returned);
        given a :class:`Plan` (read once by :meth:`Plan.read`, read-only), that Plan, neither parsed
        nor hashed again.

    Raises
    ------
    PlanError
        One line naming the field, the rule and the value.
    """
    data = Plan.read(plan, fingerprint=fingerprint)
    if verified:
        _read_envelope(data, runtime_class(data.mechanism).PLAN_FIELDS, verified=True)
    return data if isinstance(plan, Plan) else data.to_dict()


def load(plan: str | os.PathLike | Mapping[str, Any], *, fingerprint: str | None = None) -> Any:  # a Runtime (see Returns)
    """Build the runtime mechanism of a verified plan, re-checking its guarantee and its spec.

    Parameters
    ----------
    plan : path-like, mapping or Plan
        A plan JSON file written by ``ldpplan plan`` (or its parsed dict, or a :class:`Plan`: then
        it is not parsed nor hashed again).
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
        or claim, a ``domain.size`` above the class's cap (``PLAN_FIELDS.max_domain``), a non-finite or inconsistent
        number, did not verify (``verification.holds`` not true), differs from the spec it
        embeds (levels, sensitive items, domain, n, releases, prior, budgets), or claims more
        privacy than its numbers give (the class's ``privacy_map()`` rounded toward the safe
        side, exact near the bound). The message names the field, the rule and the value.
    """
    data = Plan.read(plan, fingerprint=fingerprint)  # read once; from_plan re-checks its class's part (no re-read)
    check_verified(data)  # (every from_plan checks it too: a safety net for a class that would forget)
    return runtime_class(data.mechanism).from_plan(data)

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
import pkgutil
from typing import Any, Mapping

from ._envelope import MAX_DOMAIN_SIZE, PlanFields
from ._envelope import read_envelope as _read_envelope
from ._plan import PlanError, check_verified, loads_strict, plan_fingerprint, read_plan
from ._plan_object import Domain, Plan, use_registry
from ._protocol import Aggregate, Batch, CountRule, Estimate, Reports, Runtime
from ._secure import secure_rng
from .longitudinal._memo import Memo  # client state of memoized runtimes (issue 22)
from ._protocol import Frozen, check_method
from ._sampling import GRID_BITS, bernoulli, bernoulli_iid, check_rng, on_grid, to_grid

__all__ = ["load", "runtime_class", "read_plan", "loads_strict", "PlanError", "RUNTIMES", "Estimate", "Aggregate",
           "Reports", "Runtime", "secure_rng", "plan_fingerprint", "read_envelope", "MAX_DOMAIN_SIZE", "PlanFields",
           "Batch", "CountRule", "runtime_families", "family_runtimes", "Memo", "Plan", "Domain"]
# the 2^-48 probability grid (the planner rounds onto it) and exact sampling on it, and the pieces of a
# runtime class (the planner's simulation-only baselines are built from them)
__all__ += ["GRID_BITS", "to_grid", "on_grid", "bernoulli", "bernoulli_iid", "check_rng", "Frozen", "check_method"]


def runtime_families() -> tuple[str, ...]:
    """The runtime family packages: every subpackage of ``ldpplan.mechanisms`` (found on disk, sorted).

    Each declares its runtime classes in its ``__init__`` as ``RUNTIME_CLASSES``; nothing else
    lists them (a new family's runtime is found by adding its folder).
    """
    return tuple(sorted(m.name for m in pkgutil.iter_modules(__path__) if m.ispkg and not m.name.startswith("_")))


def family_runtimes(family: str) -> tuple[type, ...]:
    """The runtime classes the family package ``ldpplan.mechanisms.<family>`` declares (``RUNTIME_CLASSES``).

    Raises
    ------
    PlanError
        For a name that is not a runtime family package.
    """
    if family not in runtime_families():
        raise PlanError(f"family: must be one of {list(runtime_families())} (got {family!r})")
    return tuple(importlib.import_module(f"{__name__}.{family}").RUNTIME_CLASSES)


class _Runtimes(Mapping[str, type]):
    """Plan ``mechanism`` -> runtime class, derived on first use from the family packages.

    A class names its plan mechanism(s) once, in ``PLAN_FIELDS.mechanisms``; a name claimed by
    two classes is an error here (the registry would be ambiguous).
    """

    def __init__(self) -> None:
        self._table: dict[str, type] | None = None

    def _build(self) -> dict[str, type]:
        if self._table is None:
            table: dict[str, type] = {}
            for family in runtime_families():
                for cls in family_runtimes(family):
                    for name in cls.PLAN_FIELDS.mechanisms:
                        if name in table:
                            raise RuntimeError(f"plan mechanism {name!r} is declared by {table[name].__name__} "
                                               f"and {cls.__name__}")
                        table[name] = cls
            self._table = table
        return self._table

    def __getitem__(self, name: str) -> type:
        return self._build()[name]

    def __iter__(self):
        return iter(self._build())

    def __len__(self) -> int:
        return len(self._build())

    def __repr__(self) -> str:
        return f"RUNTIMES({ {k: v.__name__ for k, v in self._build().items()} })"


#: plan ``mechanism`` -> runtime class (implementing the runtime protocol), read from each
#: family package's ``RUNTIME_CLASSES`` and their ``PLAN_FIELDS``. The planner's family rooms
#: (``ldpplan.planner.families``) read the same declarations.
RUNTIMES: Mapping[str, type] = _Runtimes()


def runtime_class(mechanism: Any) -> type:
    """The runtime class of a plan ``mechanism`` name.

    Raises
    ------
    PlanError
        For a name not in :data:`RUNTIMES`.
    """
    if not isinstance(mechanism, str) or mechanism not in RUNTIMES:
        raise PlanError(f"mechanism: must be one of {sorted(RUNTIMES)} (got {mechanism!r})")
    return RUNTIMES[mechanism]


use_registry(runtime_class)  # Plan.read checks a plan with its mechanism's runtime class


def read_envelope(plan: str | os.PathLike | Mapping[str, Any], *, fingerprint: str | None = None,
                  verified: bool = False) -> Plan:
    """Read a plan and check its envelope: the one reader ``load()`` and the planner's ``verify`` share.

    Strict JSON (no NaN/Infinity, no duplicate keys, bounded size and depth), ``format_version``
    exactly ``"2.0"``, the pinned ``fingerprint`` (if given), known top-level fields, a known
    ``mechanism`` and only the ``guarantee`` claims its runtime class declares (``PLAN_FIELDS``),
    ``domain.size <= PLAN_FIELDS.max_domain`` (:data:`MAX_DOMAIN_SIZE` unless the class declares more:
    k-RR 2**62, GLH 2**61 - 1) checked before the labels (distinct strings), finite
    numbers, and the ``verification`` block (``holds`` true when ``verified``).

    Returns
    -------
    Plan
        The plan read once (:meth:`Plan.read`; a read-only ``Mapping[str, Any]``). Given a Plan, it
        is neither parsed nor hashed again.

    Raises
    ------
    PlanError
        One line naming the field, the rule and the value.
    """
    data = Plan.read(plan, fingerprint=fingerprint)
    if verified:
        _read_envelope(data, runtime_class(data.mechanism).PLAN_FIELDS, verified=True)
    return data


def load(plan: str | os.PathLike | Mapping[str, Any], *, fingerprint: str | None = None):
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

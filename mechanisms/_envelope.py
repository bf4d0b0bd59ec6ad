"""The one reader of the plan 2.0 envelope (numpy + stdlib only).

Every runtime's ``from_plan`` and the planner's ``verify`` read a plan through
:func:`read_envelope` before looking at any family number:

* strict JSON (:func:`ldpplan.mechanisms._plan.loads_strict`): no NaN/Infinity, no
  duplicate keys, bounded size and depth; ``format_version`` exactly ``"2.0"``;
* the pinned fingerprint, when one is given (:func:`ldpplan.mechanisms._plan.check_fingerprint`);
* known fields only: the top-level fields of :data:`TOP_LEVEL_FIELDS`, and in ``guarantee``
  the claims :data:`COMMON_GUARANTEE_FIELDS` plus those the mechanism's runtime class
  declares in its ``PLAN_FIELDS`` (:class:`PlanFields`); an unknown claim is refused, since
  no check could back it;
* ``domain.size`` an integer in ``1 .. PlanFields.max_domain`` (the runtime class's cap: what
  its operations allocate per item; :data:`MAX_DOMAIN_SIZE` unless the class declares more),
  checked before anything of that size is allocated, then ``domain.labels`` null or exactly
  ``size`` distinct strings (a labelled domain is bounded by its labels list, hence by the plan
  file's size);
* every number finite (a dict given in memory bypasses the JSON parser);
* ``guarantee.shuffled`` (when a runtime class loads the plan, ``verified=True``): confirmed from the numbers by
  :func:`ldpplan.mechanisms._shuffle_gate.check_plan_shuffled`, or refused;
* the ``verification`` block: an object with a boolean ``holds`` and a string ``message``
  (the runtime additionally requires ``holds`` to be true: :func:`check_verified`).

A new optional field is one entry in a declaration: :data:`TOP_LEVEL_FIELDS`,
:data:`COMMON_GUARANTEE_FIELDS` (claims every mechanism may carry) or a class's
``PLAN_FIELDS.guarantee``.
"""
from __future__ import annotations

import dataclasses
import math
import os
from typing import Any, Mapping, cast

import numpy as np

from ._plan import PlanError, ReadOnce, check_fingerprint, check_verified, read_plan, require
from ._shuffle_gate import check_plan_shuffled

__all__ = ["PlanFields", "read_envelope", "check_envelope_data", "read_domain", "MAX_DOMAIN_SIZE", "MAX_COUNT_DOMAIN", "TOP_LEVEL_FIELDS",
           "COMMON_GUARANTEE_FIELDS"]

#: Default largest ``domain.size`` (2**24 = 16,777,216 items, keys or symbols): the cap of every
#: runtime class whose reading or running allocates per item (its ``PlanFields.max_domain``). It is
#: checked before anything is allocated, so a plan claiming 10**30 items costs nothing; a larger
#: domain is refused by ``verify`` and ``load`` with one line naming ``domain.size``.
MAX_DOMAIN_SIZE = 2**24
#: Largest ``domain.size`` any runtime class may declare (2**62): classes whose plan reading,
#: verification and perturbation take O(1) memory in ``|X|`` (k-RR; GLH up to its hash prime)
#: declare their own cap up to this; their aggregate and estimate are bounded by a memory budget.
MAX_COUNT_DOMAIN = 2**62
#: Top-level fields of a plan 2.0 (all required; no others).
TOP_LEVEL_FIELDS = ("format_version", "mechanism", "domain", "params", "guarantee", "predicted", "baselines",
                    "planning_inputs", "solver", "verification", "spec", "provenance")
#: ``guarantee`` claims every mechanism may carry (a cross-family claim is added here once).
#: ``shuffled`` is the central (epsilon, delta) of n shuffled reports (a ``[shuffle]`` spec block);
#: ``load()`` recomputes it (:mod:`ldpplan.mechanisms._shuffle_gate`) and refuses what it cannot confirm.
#: ``shuffled_lifetime``: plans with ``epsilon_lifetime`` (several reports per user), the central claim over all rounds.
COMMON_GUARANTEE_FIELDS = ("notion", "epsilon", "shuffled", "shuffled_lifetime")


@dataclasses.dataclass(frozen=True)
class PlanFields:
    """What a runtime class reads from a plan: its ``mechanism`` names and its ``guarantee`` claims.

    Attributes
    ----------
    mechanisms : tuple of str
        Values of the plan's ``mechanism`` the class runs.
    guarantee : tuple of str
        Claims of ``guarantee`` besides :data:`COMMON_GUARANTEE_FIELDS`.
    shuffle : str
        The randomizer kind of the central bound that confirms ``guarantee.shuffled``.
    """

    mechanisms: tuple[str, ...]
    guarantee: tuple[str, ...] = ()
    #: Largest ``domain.size`` the class reads (what its operations allocate per item decides it).
    max_domain: int = MAX_DOMAIN_SIZE
    #: the randomizer ``load()`` confirms a ``guarantee.shuffled`` claim for
    #: (:func:`ldpplan.mechanisms._shuffle_gate.check_plan_shuffled`): ``"generic"`` (any
    #: epsilon0-LDP randomizer), ``"krr"`` (k-ary randomized response, ``k = domain.size``), or a two-level
    #: randomizer of :mod:`ldpplan.mechanisms._amplification` (``"hash"``, ``"sylvester"``, ``"unary"``)
    shuffle: str = "generic"

    @property
    def guarantee_fields(self) -> frozenset[str]:
        """Every claim allowed in ``guarantee``."""
        return frozenset(COMMON_GUARANTEE_FIELDS) | frozenset(self.guarantee)


def _non_finite(node: Any) -> str | None:
    """Dotted path of the first non-finite float (iterative: no recursion limit), or None."""
    stack: list[tuple[str, Any]] = [("", node)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, (str, int)) or value is None:  # most leaves: skip typing.Mapping's slow check
            continue
        if isinstance(value, (float, np.floating)):
            if not math.isfinite(float(value)):
                return where or "<plan>"
        elif isinstance(value, Mapping):
            stack.extend((f"{where}.{k}" if where else str(k), v) for k, v in value.items())
        elif isinstance(value, (list, tuple)):
            if value and isinstance(value[0], str) and all(isinstance(v, str) for v in value):
                continue  # a list of labels
            stack.extend((f"{where}[{i}]", v) for i, v in enumerate(value))
    return None


def read_domain(plan: Mapping[str, Any], *, low: int = 1, high: int = MAX_DOMAIN_SIZE) -> tuple[int, list[str] | None]:
    """``(domain.size, domain.labels)`` checked: the size first (bounded), then the labels against it.

    Parameters
    ----------
    plan : mapping
    low, high : int
        The family's bounds on the size (``high`` never above :data:`MAX_COUNT_DOMAIN`).

    Raises
    ------
    PlanError
        ``domain: ...`` not an object of ``size`` and ``labels``; ``domain.size`` not an integer
        in ``low .. high``; ``domain.labels`` not null or ``size`` distinct strings.
    """
    domain = require(plan, "domain")
    if not isinstance(domain, Mapping):
        raise PlanError(f"domain: must be an object with 'size' and 'labels' (got {type(domain).__name__})")
    for key in ("size", "labels"):
        if key not in domain:
            raise PlanError(f"domain.{key}: required field is missing from the plan")
    extra = sorted(str(k) for k in domain if k not in ("size", "labels"))
    if extra:
        raise PlanError(f"domain.{extra[0][:40]}: unknown field (a domain has exactly 'size' and 'labels')")
    size = domain["size"]
    high = min(int(high), MAX_COUNT_DOMAIN)
    if isinstance(size, (bool, np.bool_)) or not isinstance(size, (int, np.integer)) or not low <= size <= high:
        shown = str(size)[:40] if isinstance(size, (int, np.integer)) else f"{size!r:.40}"
        raise PlanError(f"domain.size: must be an integer in {low}..{high} (the runtime reads domains of at most "
                        f"{high} items for this mechanism) (got {shown})")
    size = int(size)
    labels = domain["labels"]
    if labels is None:
        return size, None
    if not isinstance(labels, list) or len(labels) != size:
        got = len(labels) if isinstance(labels, list) else type(labels).__name__
        raise PlanError(f"domain.labels: must be null or a list of domain.size = {size} labels (got {got})")
    seen: set[str] = set()
    for k, label in enumerate(labels):
        if not isinstance(label, str):
            raise PlanError(f"domain.labels[{k}]: must be a string (got {label!r:.40})")
        if label in seen:
            raise PlanError(f"domain.labels[{k}]: label {label[:40]!r} appears twice (labels must be distinct)")
        seen.add(label)
    return size, list(labels)


def read_envelope(plan: str | os.PathLike | Mapping[str, Any], fields: PlanFields | None = None, *,
                  fingerprint: str | None = None, verified: bool = False) -> dict[str, Any]:
    """Read a plan and check its envelope (see the module docstring); return the plan dict.

    Given a :class:`ldpplan.mechanisms.Plan` (already parsed, checked and fingerprinted once), it
    neither parses nor hashes again: it runs the checks that depend on ``fields`` (mechanism,
    ``domain.size`` cap, claims) and ``verified``, and returns the Plan itself (a read-only mapping).

    Parameters
    ----------
    plan : path-like or mapping
    fields : PlanFields, optional
        The runtime class's declaration (``cls.PLAN_FIELDS``); ``None`` checks only the parts
        common to every mechanism (the mechanism name and the guarantee claims are then not
        checked).
    fingerprint : str, optional
        The pinned ``"sha256:<hex>"``; a plan with another fingerprint is refused.
    verified : bool
        Also require ``verification.holds`` to be true (the runtime's ``load``).

    Returns
    -------
    dict
        The plan.

    Raises
    ------
    PlanError
        One line naming the field, the rule and the value.
    """
    if isinstance(plan, ReadOnce):  # a Plan: parsed, checked and fingerprinted once, when it was read
        data = cast(Mapping[str, Any], plan)
        check_fingerprint(data, fingerprint)  # its cached fingerprint
        if fields is not None:  # only what depends on the class (same order, same messages)
            _check_mechanism_domain(data, fields)
            _check_claims(data, fields)
    else:
        data = read_plan(plan)
        check_fingerprint(data, fingerprint)
        check_envelope_data(data, fields)
    if verified:
        check_verified(data)
        if fields is not None:  # the runtime's load(): the central claim, recomputed (verify has its own check)
            failure = check_plan_shuffled(data, fields.shuffle)
            if failure is not None:
                raise PlanError(failure)
    return data  # type: ignore[return-value]  # a dict, or the Plan given (a read-only Mapping)


def check_envelope_data(data: Mapping[str, Any], fields: PlanFields | None) -> None:
    """The envelope checks of :func:`read_envelope` on a parsed plan (without the fingerprint and ``verified``).

    Raises
    ------
    PlanError
        One line naming the field, the rule and the value.
    """
    unknown = [k for k in data if k not in TOP_LEVEL_FIELDS]
    if unknown:
        raise PlanError(f"{str(unknown[0])[:40]}: unknown top-level field (a plan 2.0 has exactly "
                        f"{', '.join(TOP_LEVEL_FIELDS)})")
    missing = [k for k in TOP_LEVEL_FIELDS if k not in data]
    if missing:
        raise PlanError(f"{missing[0]}: required field is missing from the plan")
    _check_mechanism_domain(data, fields)
    where = _non_finite(data)
    if where is not None:
        raise PlanError(f"{where}: must be a finite number (NaN and infinity are not allowed in a plan)")
    for key in ("params", "guarantee", "verification", "spec"):
        if not isinstance(data[key], Mapping):
            raise PlanError(f"{key}: must be an object (got {type(data[key]).__name__})")
    if fields is not None:
        _check_claims(data, fields)
    block = data["verification"]
    if not isinstance(block.get("holds"), bool) or not isinstance(block.get("message"), str):
        raise PlanError("verification: must be an object with a boolean 'holds' and a string 'message'")


def _check_mechanism_domain(data: Mapping[str, Any], fields: PlanFields | None) -> None:
    mechanism = data["mechanism"]
    if fields is not None and mechanism not in fields.mechanisms:
        raise PlanError(f"mechanism: this runtime class runs {list(fields.mechanisms)} plans (got {mechanism!r:.40})")
    read_domain(data, high=MAX_DOMAIN_SIZE if fields is None else fields.max_domain)


def _check_claims(data: Mapping[str, Any], fields: PlanFields) -> None:
    allowed = fields.guarantee_fields
    extra = sorted(str(k) for k in data["guarantee"] if k not in allowed)
    if extra:
        raise PlanError(f"guarantee.{extra[0][:40]}: unknown claim for a {data['mechanism']!r} plan (known: "
                        f"{', '.join(sorted(allowed))}); the runtime refuses claims it cannot check")

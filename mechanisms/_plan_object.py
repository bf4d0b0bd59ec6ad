"""The typed plan: one frozen :class:`Plan`, read once and passed between the layers (numpy + stdlib only).

A plan file used to be an untyped nested dict re-read and re-checked at every door (one
``ldpplan estimate`` parsed its envelope six times and hashed it three times). :meth:`Plan.read`
reads it once: strict JSON (:func:`~ldpplan.mechanisms._plan.read_plan`), the envelope checks of
its mechanism's runtime class (:func:`~ldpplan.mechanisms._envelope.check_envelope_data`), the
pinned fingerprint, then the fingerprint of its content computed once and kept. The envelope
fields are typed attributes (``plan.mechanism``, ``plan.domain.size``, ``plan.verification.holds``).

For the code written against dicts, a :class:`Plan` is also a read-only ``Mapping[str, Any]``:
``plan["params"]["mu"]`` works and returns read-only views (dict and list subclasses whose mutating
methods raise ``TypeError``: ``isinstance(x, dict)`` and :func:`json.dumps` keep working; a
:func:`copy.deepcopy` of one is a plain mutable copy). :func:`~ldpplan.mechanisms._plan.read_plan`,
:func:`~ldpplan.mechanisms.read_envelope` and :func:`~ldpplan.mechanisms._plan.plan_fingerprint`
given a Plan neither parse nor hash again. :meth:`Plan.to_dict` gives a plain mutable copy.

References
----------
The frozen, self-validating results of SciPy's ``OptimizeResult`` and Tumult Analytics' budget
classes (docs/ARCHITECTURE.md); the plan format: ``schemas/plan-2.0.schema.json``.
"""
from __future__ import annotations

import copy
import dataclasses
import os
from typing import Any, Callable, Iterator, Mapping, NoReturn, Sequence

import numpy as np

from ._envelope import check_envelope_data
from ._plan import PlanError, ReadOnce, check_pinned, content_fingerprint, loads_strict, read_plan

__all__ = ["Plan", "Domain", "VerificationRecord", "freeze", "checked_dict", "typed_params"]


def _read_only(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError(f"a plan read with ldpplan.mechanisms.Plan is read-only ({type(self).__name__}); "
                    "use plan.to_dict() (or copy.deepcopy) for a mutable copy")


class FrozenDict(dict):
    """A read-only ``dict`` (a view of a :class:`Plan`'s object): mutating methods raise ``TypeError``."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = _read_only
    clear = pop = popitem = setdefault = update = _read_only

    def __copy__(self) -> dict:
        return dict(self)

    def __deepcopy__(self, memo: dict) -> dict:
        return {k: copy.deepcopy(v, memo) for k, v in self.items()}

    def __reduce__(self) -> tuple:
        return dict, (dict(self),)


class FrozenList(list):
    """A read-only ``list`` (a view of a :class:`Plan`'s array): mutating methods raise ``TypeError``."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _read_only
    append = extend = insert = pop = remove = clear = sort = reverse = _read_only

    def __copy__(self) -> list:
        return list(self)

    def __deepcopy__(self, memo: dict) -> list:
        return [copy.deepcopy(v, memo) for v in self]

    def __reduce__(self) -> tuple:
        return list, (list(self),)


def freeze(node: Any) -> Any:
    """A read-only deep copy of parsed JSON: objects as :class:`FrozenDict`, arrays as :class:`FrozenList`."""
    if isinstance(node, (str, int, float)) or node is None:  # the leaves, before typing.Mapping's slow check
        return node
    if isinstance(node, Mapping):
        return FrozenDict((k, freeze(v)) for k, v in node.items())
    if isinstance(node, (list, tuple)):
        return FrozenList(freeze(v) for v in node)
    return node


def _thaw(node: Any) -> Any:
    """A plain mutable deep copy (dicts and lists) of a frozen node."""
    if isinstance(node, Mapping):
        return {k: _thaw(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_thaw(v) for v in node]
    return node


def _json_default(value: Any) -> Any:
    """``json.dumps`` hook for an in-memory plan holding numpy scalars (as the planner's ``to_jsonable``)."""
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


@dataclasses.dataclass(frozen=True, slots=True)
class Domain:
    """A plan's ``domain``: ``size`` items, named by ``labels`` (``size`` distinct strings) or unnamed (None)."""

    size: int
    labels: tuple[str, ...] | None


@dataclasses.dataclass(frozen=True, slots=True)
class VerificationRecord:
    """A plan's ``verification`` block as written: whether its re-check ``holds``, and its ``message``."""

    holds: bool
    message: str


@dataclasses.dataclass(frozen=True, slots=True, eq=False, repr=False)
class Plan(ReadOnce, Mapping[str, Any]):
    """A plan (format 2.0) read once: typed envelope fields, read-only blocks, its fingerprint.

    Build it with :meth:`Plan.read` (the one reader); it is immutable, and as a read-only
    ``Mapping[str, Any]`` ``plan["params"]`` gives the block's read-only view. Two Plans (or a
    Plan and a dict) are equal when their contents are.

    Attributes
    ----------
    format_version : str
        Exactly ``"2.0"``.
    mechanism : str
        The plan's mechanism (a runtime class declares it in ``PLAN_FIELDS.mechanisms``).
    domain : Domain
        ``domain.size`` (int, at most the class's ``PLAN_FIELDS.max_domain``) and ``domain.labels``.
    params, guarantee, predicted, solver, spec, provenance : Mapping[str, Any]
        The blocks, read-only (unchecked numbers: each runtime class's ``from_plan`` and the
        family's ``verify`` read them with their rules).
    baselines, planning_inputs : Sequence[Mapping[str, Any]]
        Read-only lists.
    verification : VerificationRecord
        The recorded ``holds`` and ``message`` (a record, not a proof: ``verify`` recomputes).
    fingerprint : str
        :func:`~ldpplan.mechanisms.plan_fingerprint` of the content: 64 lowercase hex digits,
        computed once when the plan was read.
    typed_params : PlanParams
        ``params`` as the runtime class's frozen ``Params`` record (property; read on first use, then kept).
    """

    format_version: str
    mechanism: str
    domain: Domain
    params: Mapping[str, Any]
    guarantee: Mapping[str, Any]
    predicted: Mapping[str, Any]
    baselines: Sequence[Mapping[str, Any]]
    planning_inputs: Sequence[Mapping[str, Any]]
    solver: Mapping[str, Any]
    verification: VerificationRecord
    spec: Mapping[str, Any]
    provenance: Mapping[str, Any]
    fingerprint: str
    _data: Mapping[str, Any] = dataclasses.field(compare=False)
    _typed_params: Any = dataclasses.field(default=None, init=False, compare=False, repr=False)

    @property
    def typed_params(self) -> Any:
        """``params`` as a frozen, typed record: ``runtime_class(mechanism).Params.from_mapping(params)``.

        Computed on first use and kept in this Plan (a slot; the Plan and the record are immutable, so
        the cache cannot go stale). The record's fields are the papers' symbols, typed (``float``,
        ``int``, tuples for arrays); ranges, the 2^-48 grid and the numbers' consistency remain the
        runtime class's ``from_plan`` checks (:class:`ldpplan.mechanisms._params.PlanParams`).

        Raises
        ------
        PlanError
            ``params.<field>: ...``: an unknown or missing field, or a value of another JSON type.
        """
        typed = self._typed_params
        if typed is None:
            typed = _REGISTRY[0](self.mechanism).Params.from_mapping(self.params)
            object.__setattr__(self, "_typed_params", typed)
        return typed

    @classmethod
    def read(cls, source: "str | os.PathLike | Mapping[str, Any] | Plan", *, fingerprint: str | None = None) -> "Plan":
        """Read a plan once: strict JSON, its runtime class's envelope checks, the pin, the fingerprint.

        Parameters
        ----------
        source : path-like, str, mapping or Plan
            A plan file's path (a ``str`` is always a path, as ``read_plan`` has always read it: a file
            named ``{x}.json`` is a file; JSON text goes through :meth:`loads`), a parsed plan
            (mapping; deep-copied, read-only) or a Plan (returned as it is, after the pin).
        fingerprint : str, optional
            The pinned ``"sha256:<64 hex digits>"`` (or the bare digits); another plan is refused.

        Returns
        -------
        Plan

        Raises
        ------
        PlanError
            Exactly what :func:`ldpplan.mechanisms.read_envelope` refuses, with the same one line
            naming the field, the rule and the value (unreadable or non-strict JSON, another format
            version, another fingerprint than the pinned one, an unknown mechanism, field or claim,
            a domain above the class's cap, a non-finite number, a malformed verification block).
        """
        if isinstance(source, Plan):
            check_pinned(source.fingerprint, fingerprint)
            return source
        data = read_plan(source)
        fields = _fields_of(data)
        if fingerprint is not None:  # the pin first, as read_envelope (a pinned plan is hashed before any check)
            digest = content_fingerprint(data, _json_default)
            check_pinned(digest, fingerprint)
        check_envelope_data(data, fields)
        if fingerprint is None:
            digest = content_fingerprint(data, _json_default)
        return cls._of(freeze(data), digest)

    @classmethod
    def loads(cls, text: str | bytes, *, fingerprint: str | None = None) -> "Plan":
        """Read a plan from its JSON text (strict JSON), then as :meth:`read` reads a mapping.

        Parameters
        ----------
        text : str or bytes
            The plan file's content (UTF-8 when bytes).
        fingerprint : str, optional
            As in :meth:`read`.

        Raises
        ------
        PlanError
            Text that is not strict JSON or not a JSON object (``<plan>: ...``), and whatever :meth:`read` refuses.
        """
        if isinstance(text, (bytes, bytearray)):
            try:
                text = bytes(text).decode("utf-8")
            except UnicodeDecodeError as exc:
                raise PlanError(f"<plan>: plan text must be UTF-8 ({exc})") from None
        data = loads_strict(text)
        if not isinstance(data, Mapping):
            raise PlanError("<plan>: a plan must be a JSON object")
        return cls.read(data, fingerprint=fingerprint)

    @classmethod
    def _of(cls, data: Mapping[str, Any], digest: str) -> "Plan":
        """The Plan of an already checked, frozen plan dict and its fingerprint."""
        domain, block = data["domain"], data["verification"]
        labels = domain["labels"]
        return cls(format_version=data["format_version"], mechanism=data["mechanism"],
                   domain=Domain(int(domain["size"]), None if labels is None else tuple(labels)),
                   params=data["params"], guarantee=data["guarantee"], predicted=data["predicted"],
                   baselines=data["baselines"], planning_inputs=data["planning_inputs"], solver=data["solver"],
                   verification=VerificationRecord(bool(block["holds"]), str(block["message"])),
                   spec=data["spec"], provenance=data["provenance"], fingerprint=digest, _data=data)

    def to_dict(self) -> dict[str, Any]:
        """The plan as a plain, mutable dict (a deep copy; what the plan file holds)."""
        return _thaw(self._data)

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Plan):
            return self.fingerprint == other.fingerprint and self._data == other._data
        return self._data == other if isinstance(other, Mapping) else NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a Mapping: unhashable, as a dict

    def __repr__(self) -> str:
        return (f"Plan(mechanism={self.mechanism!r}, domain.size={self.domain.size}, "
                f"fingerprint='sha256:{self.fingerprint[:12]}...')")

    def __reduce__(self) -> tuple:
        return _rebuild, (self.to_dict(), self.fingerprint)


def typed_params(data: Mapping[str, Any], runtime: Any) -> Any:
    """``params`` of a plan read by ``runtime``'s ``from_plan`` as ``runtime.Params`` (frozen, typed).

    A :class:`Plan` gives its kept :attr:`Plan.typed_params` (read once per Plan); a plan dict is read
    now (``runtime.Params.from_mapping(data["params"])``).

    Raises
    ------
    PlanError
        As :meth:`ldpplan.mechanisms._params.PlanParams.from_mapping`.
    """
    if isinstance(data, Plan):
        typed = data.typed_params
        if type(typed) is runtime.Params:
            return typed
    return runtime.Params.from_mapping(data.get("params"))


#: ``runtime_class(mechanism)`` of the registry; :mod:`ldpplan.mechanisms` registers it when imported
#: (:func:`use_registry`), so that this module does not import its own package back.
_REGISTRY: list[Callable[[Any], Any]] = []


def use_registry(runtime_class: Callable[[Any], Any]) -> None:
    """Register the registry's ``runtime_class`` (plan mechanism -> runtime class; PlanError if unknown)."""
    _REGISTRY[:] = [runtime_class]


def _fields_of(data: Mapping[str, Any]) -> Any:
    """``PLAN_FIELDS`` of the runtime class of the plan's ``mechanism`` (PlanError for an unknown one)."""
    return _REGISTRY[0](data.get("mechanism")).PLAN_FIELDS


def checked_dict(plan: Mapping[str, Any]) -> Mapping[str, Any]:
    """The envelope checks of :meth:`Plan.read` on a plan built in memory, without freezing nor hashing it.

    For a plan the planner is still building (verified before its ``verification`` block is attached).
    A :class:`Plan` is returned as it is.

    Raises
    ------
    PlanError
        As :meth:`Plan.read` (without a pin).
    """
    data = read_plan(plan)
    if not isinstance(data, Plan):
        check_envelope_data(data, _fields_of(data))
    return data


def _rebuild(data: dict[str, Any], digest: str) -> Plan:
    """Unpickle a :class:`Plan` (its content was checked when it was read)."""
    return Plan._of(freeze(data), digest)

"""The runtime protocol shared by every mechanism family (numpy only).

Every runtime class (``ldpplan.mechanisms.load(plan)`` returns one) offers:

* ``domain_size`` (int) and ``labels`` (list of str, or None for a count domain);
* ``perturb(data, rng=...) -> Reports`` with ``len(reports) == n`` (one report per user);
* ``aggregate(reports) -> Aggregate``: sufficient statistics with ``.n``, merged with ``+``
  (disjoint sets of users) and round-tripped through ``to_dict()`` / ``from_dict()``;
* ``estimate(reports_or_aggregate, method=...) -> Estimate``; ``methods`` lists the
  supported ``method`` names, the first being the default; ``"empirical"`` (the
  paper's unbiased linear estimator) is always one of them;
* ``privacy_map() -> dict``: the guarantee its own numbers give, recomputed with numpy
  (``notion``, ``epsilon`` and the notion's own fields), compared by ``load()``
  against the plan's ``guarantee`` claims;
* ``channel_matrix()`` where defined: ``Q[x, y] = Pr(Y = y | X = x)`` (rows are inputs).

Runtime objects are immutable (:class:`Frozen`) and have a useful ``repr``.
"""
from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Mapping, Protocol, runtime_checkable

import numpy as np

__all__ = ["Estimate", "Reports", "Aggregate", "Runtime", "Frozen", "check_method", "readonly",
           "AGGREGATE_FORMAT"]

#: ``format`` tag of :meth:`Aggregate.to_dict` documents.
AGGREGATE_FORMAT = "ldpplan-aggregate/1"


def readonly(x) -> np.ndarray:
    """A read-only view of ``x`` as an ndarray (numbers inside runtime objects never change)."""
    arr = np.asarray(x)
    view = arr.view()
    view.flags.writeable = False
    return view


def check_method(method: str | None, methods: tuple[str, ...]) -> str:
    """Return ``method`` (default: ``methods[0]``) or raise ValueError listing the supported ones."""
    if method is None:
        return methods[0]
    if method not in methods:
        raise ValueError(f"method: must be one of {list(methods)} for this mechanism (got {method!r})")
    return method


class Frozen:
    """Mixin: attributes can be set only inside ``__init__`` (via ``object.__setattr__``)."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable (cannot set {name!r})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable (cannot delete {name!r})")

    def _set(self, **values: Any) -> None:
        for k, v in values.items():
            object.__setattr__(self, k, v)


@dataclasses.dataclass(frozen=True)
class Estimate:
    """What every runtime's ``estimate`` returns.

    Attributes
    ----------
    frequency : ndarray of float64, shape (domain_size,)
        Estimated frequencies (fractions of users; for IDUE-PS, of sampled items scaled
        as the paper's estimator does). Counts are ``n * frequency``.
    mean : ndarray of float64, shape (domain_size,), or None
        Key-value mechanisms (PCKV): the estimated mean value of each key; else None.
    method : str
        The estimator used.
    n : int
        Number of users (reports) behind the estimate.
    std_error : ndarray of float64, shape (domain_size,), or None
        Standard error of each frequency (same unit), where the paper gives one.
    log_likelihood : float or None
        Iterative/maximum-likelihood estimators: the final log-likelihood (nats).
    iterations : int or None
        Iterative estimators: iterations run.
    """

    frequency: np.ndarray
    mean: np.ndarray | None
    method: str
    n: int
    std_error: np.ndarray | None = None
    log_likelihood: float | None = None
    iterations: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "frequency", readonly(np.asarray(self.frequency, dtype=np.float64)))
        for name in ("mean", "std_error"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, readonly(np.asarray(value, dtype=np.float64)))

    def to_dict(self, labels: list[str] | None = None) -> dict[str, Any]:
        """JSON-ready dict in domain order (``labels`` included when given)."""
        out: dict[str, Any] = {
            "frequency": self.frequency.tolist(),
            "mean": None if self.mean is None else self.mean.tolist(),
            "n": int(self.n),
            "method": self.method,
            "std_error": None if self.std_error is None else self.std_error.tolist(),
        }
        if labels is not None:
            out["labels"] = list(labels)
        if self.log_likelihood is not None:
            out["log_likelihood"] = float(self.log_likelihood)
        if self.iterations is not None:
            out["iterations"] = int(self.iterations)
        return out


class Reports(Frozen):
    """One report per user: named columns of equal length (numpy arrays).

    Each family documents its columns (e.g. RR ``y``; GLH ``a``, ``b``, ``y``; unary
    encodings ``bits``, the report bits packed little-endian per row). ``len(reports)``
    is the number of users; ``to_arrays()`` / ``from_arrays()`` give the columns for files.
    """

    __slots__ = ("mechanism", "columns", "_n")

    def __init__(self, mechanism: str, columns: Mapping[str, Any]) -> None:
        cols = {str(k): readonly(v) for k, v in columns.items()}
        lengths = {k: (v.shape[0] if v.ndim else -1) for k, v in cols.items()}
        if not cols or len(set(lengths.values())) != 1 or -1 in lengths.values():
            raise ValueError(f"reports: every column must be an array with one row per user (got lengths {lengths})")
        self._set(mechanism=str(mechanism), columns=cols, _n=next(iter(lengths.values())))

    def __len__(self) -> int:
        return int(self._n)

    def __getitem__(self, name: str) -> np.ndarray:
        return self.columns[name]

    def __repr__(self) -> str:
        cols = ", ".join(f"{k}: {v.dtype}{list(v.shape[1:]) or ''}" for k, v in self.columns.items())
        return f"{type(self).__name__}(mechanism={self.mechanism!r}, n={len(self)}, columns={{{cols}}})"

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The columns (read-only arrays), for writing to a file."""
        return dict(self.columns)

    @classmethod
    def from_arrays(cls, mechanism: str, arrays: Mapping[str, Any]) -> "Reports":
        """Rebuild reports from :meth:`to_arrays` output (the mechanism validates the values)."""
        return cls(mechanism, arrays)


class Aggregate(Frozen):
    """Sufficient statistics of a set of reports: ``n`` and named count arrays.

    ``a + b`` merges two aggregates of disjoint users of the same plan: counts add,
    ``n`` adds. ``to_dict()`` / ``from_dict()`` round-trip exactly (integers as JSON ints).
    """

    __slots__ = ("mechanism", "n", "counts")
    format: ClassVar[str] = AGGREGATE_FORMAT

    def __init__(self, mechanism: str, n: int, counts: Mapping[str, Any]) -> None:
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or int(n) < 0:
            raise ValueError(f"aggregate.n: must be an integer >= 0 (got {n!r})")
        cols = {}
        for k, v in counts.items():
            arr = np.asarray(v)
            if arr.dtype.kind not in "iu":
                raise ValueError(f"aggregate.counts.{k}: must be integer counts (got dtype {arr.dtype})")
            if arr.size and arr.min() < 0:
                raise ValueError(f"aggregate.counts.{k}: counts must be >= 0")
            cols[str(k)] = readonly(arr.astype(np.int64))
        self._set(mechanism=str(mechanism), n=int(n), counts=cols)

    def __getitem__(self, name: str) -> np.ndarray:
        return self.counts[name]

    def __add__(self, other: "Aggregate") -> "Aggregate":
        if not isinstance(other, Aggregate):
            return NotImplemented
        if other.mechanism != self.mechanism or set(other.counts) != set(self.counts):
            raise ValueError(f"aggregates of different mechanisms cannot merge ({self.mechanism!r} + {other.mechanism!r})")
        for k, v in self.counts.items():
            if v.shape != other.counts[k].shape:
                raise ValueError(f"aggregate.counts.{k}: shapes differ ({v.shape} vs {other.counts[k].shape})")
        return type(self)(self.mechanism, self.n + other.n, {k: v + other.counts[k] for k, v in self.counts.items()})

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Aggregate) and other.mechanism == self.mechanism and other.n == self.n
                and set(other.counts) == set(self.counts)
                and all(np.array_equal(v, other.counts[k]) for k, v in self.counts.items()))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shapes = ", ".join(f"{k}: {list(v.shape)}" for k, v in self.counts.items())
        return f"Aggregate(mechanism={self.mechanism!r}, n={self.n}, counts={{{shapes}}})"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: ``{"format", "mechanism", "n", "counts": {name: nested lists}}``."""
        return {"format": self.format, "mechanism": self.mechanism, "n": self.n,
                "counts": {k: v.tolist() for k, v in self.counts.items()}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Aggregate":
        """Inverse of :meth:`to_dict`.

        Raises
        ------
        ValueError
            Wrong ``format``, missing fields, non-integer or negative counts.
        """
        if not isinstance(data, Mapping) or data.get("format") != AGGREGATE_FORMAT:
            raise ValueError(f"aggregate.format: must be {AGGREGATE_FORMAT!r}")
        counts = data.get("counts")
        if not isinstance(counts, Mapping):
            raise ValueError("aggregate.counts: must be an object of count arrays")
        arrays = {}
        for k, v in counts.items():
            arr = np.asarray(v)
            if arr.dtype.kind not in "iu":
                raise ValueError(f"aggregate.counts.{k}: must be integer counts")
            arrays[k] = arr
        return cls(str(data.get("mechanism")), data.get("n"), arrays)


@runtime_checkable
class Runtime(Protocol):
    """What every runtime class implements (see the module docstring)."""

    mechanism: str
    domain_size: int
    labels: list[str] | None
    methods: tuple[str, ...]
    #: ``PlanFields``: the plan ``mechanism`` names and ``guarantee`` claims the class reads
    #: (the envelope reader refuses any other claim).
    PLAN_FIELDS: Any

    @classmethod
    def from_plan(cls, plan: Any) -> "Runtime": ...

    def perturb(self, data: Any, rng: np.random.Generator) -> Reports: ...

    def aggregate(self, reports: Reports) -> Aggregate: ...

    def estimate(self, reports_or_aggregate: Any, method: str | None = None) -> Estimate: ...

    def privacy_map(self) -> dict[str, Any]: ...

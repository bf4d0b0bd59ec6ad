"""The runtime protocol shared by every mechanism family (numpy only).

Every runtime class (``ldpplan.mechanisms.load(plan)`` returns one) offers:

* ``domain_size`` (int) and ``labels`` (list of str, or None for a count domain);
* ``perturb(data, rng=...) -> Reports`` with ``len(reports) == n`` (one report per user);
* ``aggregate(reports) -> Aggregate``: sufficient statistics with ``.n``, merged with ``+``
  (disjoint sets of users) and round-tripped through ``to_dict()`` / ``from_dict()``;
* ``count_rule`` (class attribute, a :class:`CountRule`): what the family's counts imply
  about ``n``, checked by ``Aggregate.from_dict`` on every aggregate read;
* ``estimate(reports_or_aggregate, method=..., *, tol=..., max_iter=...) -> Estimate``; ``methods`` lists the
  supported ``method`` names, the first being the default; ``"empirical"`` (the
  paper's unbiased linear estimator) is always one of them;
* ``privacy_map() -> dict``: the guarantee its own numbers give, recomputed with numpy
  (``notion``, ``epsilon`` and the notion's own fields), compared by ``load()``
  against the plan's ``guarantee`` claims;
* ``channel_matrix()`` where defined: ``Q[x, y] = Pr(Y = y | X = x)`` (rows are inputs).

Runtime objects are immutable frozen slotted dataclasses (:class:`Frozen`) and have a useful ``repr``.

The one runtime API (issue 18; ``docs/ARCHITECTURE.md`` lists every constructor), which
``tests/test_runtime_api.py`` checks for every class in ``RUNTIMES``:

* ``from_plan(plan)`` builds every class; the constructor is keyword-only, in the papers'
  symbols spelled out, and says the domain one way: ``domain`` = an int size or a sequence
  of distinct labels (:func:`domain_labels`);
* estimators that iterate take ``tol`` and ``max_iter`` (exact ones accept and ignore them)
  and stop by one rule: at the first iterate ``f`` whose certified optimality gap
  ``W log(max_x g_x(f) / W)`` (nats, an upper bound on ``L(MLE) - L(f)``) is
  ``<= tol * |L(f)|``, else after ``max_iter`` iterations
  (``converged = False``); every EM/MLE solver returns one :class:`SimplexFit`;
* ``privacy_map()`` uses the keys of :class:`PrivacyMap` with the one type per key of
  :data:`PRIVACY_MAP_TYPES` (checked by :func:`check_privacy_map`).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, ClassVar, Mapping, Protocol, Sequence, runtime_checkable

import numpy as np

from ._api import PRIVACY_MAP_TYPES, PrivacyMap, check_privacy_map, domain_labels
from ._fit import SimplexFit
from ._batches import FINGERPRINT, MAX_COUNT, Batch, CountRule, check_int, count_array, duplicate_message
from ._intervals import SCORE_METHOD, WALD_MEAN_METHOD, FrequencyVariance, MeanVariance, two_sided_z

__all__ = ["Estimate", "Reports", "Aggregate", "Batch", "CountRule", "Runtime", "Frozen", "set_fields", "check_method",
           "readonly", "duplicate_message", "AGGREGATE_FORMAT", "MAX_COUNT", "PrivacyMap", "PRIVACY_MAP_TYPES",
           "check_privacy_map", "domain_labels", "SimplexFit"]

#: ``format`` tag of :meth:`Aggregate.to_dict` documents.
AGGREGATE_FORMAT = "ldpplan-aggregate/1"
_AGGREGATE_KEYS = {"format", "mechanism", "n", "counts", "plan_fingerprint", "batches"}


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
    """Base of the runtime objects: no attribute can be set or deleted after ``__init__``.

    A thin base, kept for its public name. Every runtime class (and :class:`Reports`,
    :class:`Aggregate`) is also declared a frozen slotted dataclass,
    ``@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)``: its
    annotated fields are every instance attribute (type checkers see them), its class constants
    are ``ClassVar``; its hand-written ``__init__`` validates and sets the fields once with
    :func:`set_fields`, and its ``__repr__`` is hand-written too (``eq=False``: fields hold
    ndarrays; no ``__dict__``). Such a class calls ``super(Cls, self)``: the zero-argument
    ``super()`` fails in slotted dataclasses before CPython 3.14.

    Setting or deleting any attribute raises :class:`dataclasses.FrozenInstanceError` (an
    ``AttributeError``), by this base's methods: they replace the ones ``dataclass`` generates
    for a slotted subclass (on CPython 3.11 those refer to the class before slots were added and
    raise TypeError for a name that is not a field), and they hold for a subclass that is not
    itself a dataclass.
    """

    __slots__ = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__dataclass_fields__" in cls.__dict__:  # the class dataclass(slots=True) builds: keep our methods
            setattr(cls, "__setattr__", Frozen.__setattr__)
            setattr(cls, "__delattr__", Frozen.__delattr__)

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"{type(self).__name__} is immutable (cannot set {name!r})")

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"{type(self).__name__} is immutable (cannot delete {name!r})")


def set_fields(obj: object, **values: Any) -> None:
    """Set fields of a frozen dataclass ``obj`` from its ``__init__`` (``object.__setattr__``, as dataclasses do).

    The one place runtime objects are written; each name must be a declared field (slots: any
    other name raises AttributeError).
    """
    for name, value in values.items():
        object.__setattr__(obj, name, value)


@dataclasses.dataclass(frozen=True, slots=True)
class Estimate(Frozen):
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
    variance : FrequencyVariance or None
        The exact variance of the family's unbiased linear estimator as a function of the true
        frequency (``n Var = c0 + c1 f + c2 f^2``), behind :meth:`confidence_interval`.
    mean_variance : MeanVariance or None
        Key-value mechanisms: the means' delta-method standard errors (PCKV eq. (11)).
    optimality_gap : float or None
        Maximum-likelihood estimators solved numerically (uRAP/RAPPOR ``"em"``): a certified
        upper bound (nats) on ``L(MLE) - log_likelihood``; None where no certificate is computed.

    Notes
    -----
    ``std_error`` is the plug-in standard error (the variance at the estimate clipped to
    [0, 1]). Near 0 it can be far too small when the variance at ``f = 0`` is tiny (GLH with a
    large ``g``: a cell estimated at 0 that 7 of 5,000 users hold has ``std_error ~ 4e-7``);
    use :meth:`confidence_interval`, which evaluates the variance at every tested frequency.
    """

    frequency: np.ndarray
    mean: np.ndarray | None
    method: str
    n: int
    std_error: np.ndarray | None = None
    log_likelihood: float | None = None
    iterations: int | None = None
    variance: FrequencyVariance | None = dataclasses.field(default=None, repr=False, compare=False)
    mean_variance: MeanVariance | None = dataclasses.field(default=None, repr=False, compare=False)
    optimality_gap: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "frequency", readonly(np.asarray(self.frequency, dtype=np.float64)))
        for name in ("mean", "std_error"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, readonly(np.asarray(value, dtype=np.float64)))

    @property
    def interval_method(self) -> str | None:
        """How :meth:`confidence_interval` computes frequency intervals (None: it cannot)."""
        return SCORE_METHOD if self.variance is not None else None

    def confidence_interval(self, level: float = 0.95, which: str = "frequency") -> tuple[np.ndarray, np.ndarray]:
        """Two-sided confidence intervals per item, from the estimator's exact or asymptotic variance.

        Parameters
        ----------
        level : float, default 0.95
            Confidence level in (0, 1); the critical value is ``Phi^{-1}((1 + level)/2)``
            (``statistics.NormalDist``).
        which : {"frequency", "mean"}
            ``"frequency"``: intervals for the true frequencies (fractions of users) by the
            score method (:attr:`interval_method`): every ``f`` in [0, 1] that the z-test with the
            exact variance at ``f`` does not reject, for the family's unbiased estimator (also
            for the other methods: a confidence set for the same frequencies). ``"mean"``
            (key-value mechanisms): Wald intervals ``mean +- z se`` with the delta-method
            variance of PCKV eq. (11) at the estimates, clipped to [-1, 1].

        Returns
        -------
        low, high : ndarray of float64, shape (domain_size,)
            Frequency units (or value units for ``which="mean"``); ``low <= high``.

        Raises
        ------
        ValueError
            ``level`` not in (0, 1), an unknown ``which``, ``"mean"`` for an estimate without
            means, or an estimate that carries no variance model.

        Notes
        -----
        Asymptotic (normal) intervals: coverage is close to ``level`` when each item's count of
        supporting reports, and of the others, is large (>= ~10 expected); it fails for cells held
        by a handful of users under a channel that rarely reports them (``n mu f`` small) and for
        means of keys held by few users (``n f / L`` below ~100). See docs/REPORTS.md, "Confidence intervals".

        References
        ----------
        Wilson (JASA 1927); ID-LDP eq. (8); PIE eq. (22)-(23); ULDP eqs. (35), (41); PCKV eq. (9)-(12).
        """
        z = two_sided_z(level)
        if which == "frequency":
            if self.variance is None:
                raise ValueError(f"confidence_interval: this {self.method!r} estimate carries no variance model")
            low, high = self.variance.interval(z)
            return readonly(low), readonly(high)
        if which == "mean":
            if self.mean is None or self.mean_variance is None:
                raise ValueError("which: 'mean' needs a key-value estimate with means (PCKV)")
            low, high = self.mean_variance.interval(self.mean, z)
            return readonly(low), readonly(high)
        raise ValueError(f"which: must be one of ['frequency', 'mean'] (got {which!r})")

    def to_dict(self, labels: list[str] | None = None, confidence: float | None = None) -> dict[str, Any]:
        """JSON-ready dict in domain order (``labels`` included when given).

        With ``confidence`` (a level in (0, 1)): ``confidence``, ``interval_method``, ``ci_low`` and
        ``ci_high`` (frequency intervals) and, for key-value estimates, ``mean_ci_low``,
        ``mean_ci_high`` and ``mean_interval_method``.
        """
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
        if confidence is not None:
            low, high = self.confidence_interval(confidence)
            out.update({"confidence": float(confidence), "interval_method": self.interval_method,
                        "ci_low": low.tolist(), "ci_high": high.tolist()})
            if self.mean is not None and self.mean_variance is not None:
                mlow, mhigh = self.confidence_interval(confidence, which="mean")
                out.update({"mean_ci_low": mlow.tolist(), "mean_ci_high": mhigh.tolist(),
                            "mean_interval_method": WALD_MEAN_METHOD})
        if self.optimality_gap is not None:
            out["optimality_gap"] = float(self.optimality_gap)
        return out


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class Reports(Frozen):
    """One report per user: named columns of equal length (numpy arrays).

    Each family documents its columns (e.g. RR ``y``; GLH ``a``, ``b``, ``y``; unary
    encodings ``bits``, the report bits packed little-endian per row). ``len(reports)``
    is the number of users; ``to_arrays()`` / ``from_arrays()`` give the columns for files.
    """

    mechanism: str
    columns: dict[str, np.ndarray]
    _n: int

    def __init__(self, mechanism: str, columns: Mapping[str, Any]) -> None:
        cols = {str(k): readonly(v) for k, v in columns.items()}
        lengths = {k: (v.shape[0] if v.ndim else -1) for k, v in cols.items()}
        if not cols or len(set(lengths.values())) != 1 or -1 in lengths.values():
            raise ValueError(f"reports: every column must be an array with one row per user (got lengths {lengths})")
        set_fields(self, mechanism=str(mechanism), columns=cols, _n=next(iter(lengths.values())))

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


#: The runtime registry's ``runtime_class`` (plan mechanism -> class), handed over by ``ldpplan.mechanisms``
#: once its registry line is built (:func:`set_runtime_lookup`): the runtime classes import this module,
#: so it cannot import their registry.
_runtime_lookup: Callable[[Any], type[Any]] | None = None


def set_runtime_lookup(lookup: Callable[[Any], type[Any]]) -> None:
    """Install the registry's ``runtime_class`` for :func:`_count_rule` (``ldpplan.mechanisms`` does, once)."""
    global _runtime_lookup
    _runtime_lookup = lookup


def _count_rule(mechanism: str) -> CountRule | None:
    """The ``count_rule`` of the runtime class of ``mechanism`` (None: unknown mechanism or none declared)."""
    if _runtime_lookup is None:  # pragma: no cover - ldpplan.mechanisms installs it before any use
        return None
    try:
        cls = _runtime_lookup(mechanism)
    except ValueError:
        return None
    return getattr(cls, "count_rule", None)


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class Aggregate(Frozen):
    """Sufficient statistics of a set of reports: ``n`` and named count arrays, with their provenance.

    ``a + b`` merges two aggregates of disjoint users of the same plan: counts add, ``n``
    adds, batches are listed together. ``to_dict()`` / ``from_dict()`` round-trip exactly
    (integers as JSON ints); ``from_dict`` checks the counts against ``n`` with the
    mechanism's :class:`CountRule` (its runtime class's ``count_rule``).

    Provenance. An aggregate read from files (``ldpplan aggregate``) is *identified*: it
    carries the ``plan_fingerprint`` of its plan and the :class:`Batch` of every reports file
    it counts (their rows sum to ``n``). ``mech.aggregate(reports)`` of in-memory reports is
    *unidentified* (no fingerprint, no batches): it cannot be checked for double counting;
    give it an identity with :meth:`identified`. ``+`` refuses aggregates of different plans
    (fingerprints), an identified with an unidentified one, and a batch counted twice
    (a shared ``batch_id`` or digest), naming the batch and both sources.

    Parameters
    ----------
    mechanism : str
    n : int
        Reports counted, in ``[0, 2**62)``.
    counts : mapping of str to array_like of int
        Non-negative integer counts (below ``2**62``).
    plan_fingerprint : str, optional
        64 lowercase hex digits (:func:`ldpplan.mechanisms.plan_fingerprint`); required with ``batches``.
    batches : sequence of Batch, optional
        The batches counted; when given, their rows sum to ``n`` and no two share a key.

    Raises
    ------
    ValueError
        Naming the field and the rule.
    """

    mechanism: str
    n: int
    counts: dict[str, np.ndarray]
    plan_fingerprint: str | None
    batches: tuple[Batch, ...]
    format: ClassVar[str] = AGGREGATE_FORMAT

    def __init__(self, mechanism: str, n: int, counts: Mapping[str, Any], *, plan_fingerprint: str | None = None,
                 batches: Sequence[Batch] = ()) -> None:
        n = check_int(n, "aggregate.n")
        cols = {}
        for k, v in counts.items():
            arr = np.asarray(v)
            if arr.dtype.kind not in "iu":
                raise ValueError(f"aggregate.counts.{k}: must be integer counts (got dtype {arr.dtype})")
            if arr.size and arr.min() < 0:
                raise ValueError(f"aggregate.counts.{k}: counts must be >= 0")
            if arr.size and arr.max() > MAX_COUNT:
                raise ValueError(f"aggregate.counts.{k}: counts must be at most {MAX_COUNT} (2**62 - 1)")
            cols[str(k)] = readonly(arr.astype(np.int64))
        if plan_fingerprint is not None and not (isinstance(plan_fingerprint, str)
                                                 and FINGERPRINT.fullmatch(plan_fingerprint)):
            raise ValueError(f"aggregate.plan_fingerprint: must be 64 lowercase hex digits "
                             f"(got {str(plan_fingerprint)[:40]!r})")
        batches = tuple(batches)
        if batches:
            if not all(isinstance(b, Batch) for b in batches):
                raise ValueError("aggregate.batches: must be Batch objects")
            if plan_fingerprint is None:
                raise ValueError("aggregate.batches: an aggregate with batches must carry its plan_fingerprint")
            duplicate = Batch.find_duplicate(batches)
            if duplicate is not None:
                raise ValueError(f"aggregate.batches: {duplicate_message(*duplicate)}")
            if sum(b.rows for b in batches) != n:
                raise ValueError(f"aggregate.batches: rows must sum to n = {n} "
                                 f"(got {sum(b.rows for b in batches)})")
        set_fields(self, mechanism=str(mechanism), n=n, counts=cols, plan_fingerprint=plan_fingerprint,
                   batches=batches)

    def __getitem__(self, name: str) -> np.ndarray:
        return self.counts[name]

    @property
    def identified(self) -> bool:
        """True when the aggregate carries its plan fingerprint and batches."""
        return bool(self.batches)

    def with_batches(self, plan_fingerprint: str, batches: Sequence[Batch]) -> "Aggregate":
        """This (unidentified) aggregate with its plan's fingerprint and the batches it counts.

        Raises
        ------
        ValueError
            The aggregate already has batches, or the batches' rows do not sum to ``n``.
        """
        if self.batches:
            raise ValueError("aggregate.batches: this aggregate already lists its batches")
        return type(self)(self.mechanism, self.n, self.counts, plan_fingerprint=plan_fingerprint, batches=batches)

    def __add__(self, other: "Aggregate") -> "Aggregate":
        if not isinstance(other, Aggregate):
            return NotImplemented
        if other.mechanism != self.mechanism or set(other.counts) != set(self.counts):
            raise ValueError(f"aggregates of different mechanisms cannot merge ({self.mechanism!r} + {other.mechanism!r})")
        for k, v in self.counts.items():
            if v.shape != other.counts[k].shape:
                raise ValueError(f"aggregate.counts.{k}: shapes differ ({v.shape} vs {other.counts[k].shape})")
        if bool(self.batches) != bool(other.batches):
            raise ValueError("aggregate.batches: an aggregate of unidentified reports (no batches) cannot merge with "
                             "one that lists its batches: double counting could not be checked (use with_batches)")
        if self.plan_fingerprint != other.plan_fingerprint:
            raise ValueError(f"aggregate.plan_fingerprint: aggregates of different plans cannot merge "
                             f"({str(self.plan_fingerprint)[:16]}... != {str(other.plan_fingerprint)[:16]}...)")
        duplicate = Batch.find_duplicate((*self.batches, *other.batches))
        if duplicate is not None:
            raise ValueError(duplicate_message(*duplicate))
        return type(self)(self.mechanism, self.n + other.n, {k: v + other.counts[k] for k, v in self.counts.items()},
                          plan_fingerprint=self.plan_fingerprint, batches=(*self.batches, *other.batches))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Aggregate) and other.mechanism == self.mechanism and other.n == self.n
                and set(other.counts) == set(self.counts)
                and all(np.array_equal(v, other.counts[k]) for k, v in self.counts.items())
                and other.plan_fingerprint == self.plan_fingerprint and other.batches == self.batches)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shapes = ", ".join(f"{k}: {list(v.shape)}" for k, v in self.counts.items())
        extra = f", plan_fingerprint={self.plan_fingerprint[:12]!r}..., batches={len(self.batches)}" \
            if self.plan_fingerprint else ""
        return f"Aggregate(mechanism={self.mechanism!r}, n={self.n}, counts={{{shapes}}}{extra})"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: ``{"format", "mechanism", "n", "counts": {name: nested lists}}``, plus
        ``plan_fingerprint`` and ``batches`` (list of :meth:`Batch.to_dict`) when identified."""
        out: dict[str, Any] = {"format": self.format, "mechanism": self.mechanism, "n": self.n,
                               "counts": {k: v.tolist() for k, v in self.counts.items()}}
        if self.plan_fingerprint is not None:
            out["plan_fingerprint"] = self.plan_fingerprint
        if self.batches:
            out["batches"] = [b.to_dict() for b in self.batches]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Aggregate":
        """Inverse of :meth:`to_dict`, validating what an untrusted file may hold.

        Counts must be JSON integers (not booleans or floats), non-negative, and consistent
        with ``n`` by the mechanism's :class:`CountRule` (e.g. k-ary RR counts sum to ``n``;
        unary-encoding bit counts are at most ``n``); the batches' rows sum to ``n``.

        Raises
        ------
        ValueError
            Naming the field, the rule and the value: wrong ``format``, unknown or missing
            fields, non-integer, boolean or negative counts, counts inconsistent with ``n``,
            a malformed fingerprint or batch list, a batch listed twice.
        """
        if not isinstance(data, Mapping) or data.get("format") != AGGREGATE_FORMAT:
            raise ValueError(f"aggregate.format: must be {AGGREGATE_FORMAT!r}")
        unknown = sorted(set(data) - _AGGREGATE_KEYS)
        if unknown:
            raise ValueError(f"aggregate: unknown field {str(unknown[0])[:40]!r} (known: {sorted(_AGGREGATE_KEYS)})")
        mechanism = data.get("mechanism")
        if not isinstance(mechanism, str) or not mechanism:
            raise ValueError(f"aggregate.mechanism: must be a non-empty string (got {str(mechanism)[:40]!r})")
        n = check_int(data.get("n"), "aggregate.n")
        counts = data.get("counts")
        if not isinstance(counts, Mapping):
            raise ValueError("aggregate.counts: must be an object of count arrays")
        arrays = {k: count_array(v, f"aggregate.counts.{k}") for k, v in counts.items()}
        batches = data.get("batches", [])
        if not isinstance(batches, list) or ("batches" in data and not batches):
            raise ValueError("aggregate.batches: must be a non-empty list of batches")
        parsed = []
        for i, b in enumerate(batches):
            try:
                parsed.append(Batch.from_dict(b))
            except ValueError as exc:
                raise ValueError(f"aggregate.batches[{i}]: {exc}") from None
        agg = cls(mechanism, n, arrays, plan_fingerprint=data.get("plan_fingerprint"), batches=parsed)
        rule = _count_rule(mechanism)
        if rule is not None:
            rule.check(agg.n, agg.counts)
        return agg


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

    def estimate(self, reports_or_aggregate: Any, method: str | None = None, *, tol: float = ...,
                 max_iter: int = ...) -> Estimate: ...

    def privacy_map(self) -> dict[str, Any]: ...

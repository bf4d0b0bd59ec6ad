"""Client/server runtimes of records: several categorical attributes per user under one budget.

Three classes share :class:`~._record.RecordRuntime` (one per plan mechanism, so each names its
scheme once in ``PLAN_FIELDS`` with its own privacy map and count rule):

* :class:`SplitRecord` (``spl``): every attribute reported through its oracle at ``epsilon_j``;
* :class:`SampledRecord` (``smp``): one attribute ``j`` drawn with probability ``pi_j`` (on the
  2^-48 grid, exact), reported with its index at the whole budget;
* :class:`RSFDRecord` (``rsfd``): RS+FD[GRR]: one attribute drawn uniformly and reported through
  GRR, uniform fake values for the others; no index is reported (the fake data hide it).

Reports: column ``a<j>`` per attribute (GRR: int64 values; OUE: packed bits, uint8 ``(n, ceil(k_j/8))``,
little-endian) and, for SMP, ``attribute`` (int64, the sampled index; the other attributes' columns
are 0). Aggregates: support counts ``g<j>`` (GRR) / ``u<j>`` (OUE) of shape ``(k_j,)`` and, for SMP,
``m`` (reports per attribute, shape ``(d,)``). Estimates: every attribute's frequencies concatenated
in the plan's domain order (``name=value`` labels); ``estimate_attribute(..., attribute=j)`` cuts one.

References
----------
.. [1] T. Wang, J. Blocki, N. Li, S. Jha, USENIX Security 2017, Sec. 4 (GRR, OUE, their variances).
.. [2] H. H. Arcolezi, J.-F. Couchot, B. Al Bouna, X. Xiao, CIKM 2021, Sec. 2.3 (SPL, SMP) and
   Sec. 3 (RS+FD[GRR], its estimator and variance).
.. [3] N. Wang et al., ICDE 2019, Sec. IV (one sampled attribute at the whole budget).
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, ClassVar, Sequence

import numpy as np

from .._envelope import PlanFields, read_domain, read_envelope
from .._fit import MAX_ITER, TOL
from .._plan import PlanError, check_claim, number, require
from .._plan_object import typed_params
from .._protocol import Aggregate, CountRule, Estimate, Reports, set_fields
from .._sampling import GRID, on_grid, uniform_below
from ._params import RecordParams
from ._privacy import exact_attribute_ratios, exact_epsilon, exact_record_ratio, record_epsilons
from ._promises import record_promises
from ._record import MAX_ATTRIBUTES, NOTION, RecordRuntime, column, count_key

__all__ = ["SplitRecord", "SampledRecord", "RSFDRecord", "NOTION", "MAX_ATTRIBUTES"]

_CLAIMS = ("attribute_epsilons", "sources")
_GRR = tuple((f"g{j}",) for j in range(MAX_ATTRIBUTES))
_OUE = tuple((f"u{j}",) for j in range(MAX_ATTRIBUTES))
_SOURCE = "Wang et al. 2017 Eq. (2): n Var = c0 + c1 f per attribute; "


def _from_plan(cls: Any, plan: Any) -> Any:
    """Build a record runtime from a verified plan, re-checking its numbers, spec and claims."""
    data = read_envelope(plan, cls.PLAN_FIELDS, verified=True)
    read_domain(data, low=2)
    params = typed_params(data, cls)
    budget = record_promises(data, params)
    kwargs: dict[str, Any] = {}
    if cls.mechanism == "smp":
        if params.sampling is None:
            raise PlanError("params.sampling: required for an smp plan (pi_j per attribute)")
        kwargs["sampling"] = params.sampling
    elif params.sampling is not None:
        raise PlanError(f"params.sampling: only an smp plan samples with pi_j (this is {cls.mechanism!r})")
    for j, e in enumerate(params.epsilons):
        number(e, f"params.epsilons[{j}]", low=0.0, low_open=True)
        if number(params.numbers[j], f"params.numbers[{j}]", low=0.0, high=1.0) and not on_grid(params.numbers[j]):
            raise PlanError(f"params.numbers[{j}]: must be a multiple of 2^-48 (got {params.numbers[j]!r})")
    if require(data, "guarantee.notion") != NOTION:
        raise PlanError(f"guarantee.notion: must be {NOTION!r}")
    try:
        mech = cls(domain=data["domain"]["labels"], names=params.names, domain_sizes=params.domain_sizes,
                   oracles=params.oracles, epsilons=params.epsilons, numbers=params.numbers, **kwargs)
    except ValueError as exc:
        raise PlanError(f"params: {exc}") from None
    whole, each = record_epsilons(cls.mechanism, mech.oracles, mech.numbers, mech.domain_sizes)
    claim = require(data, "guarantee.epsilon")
    check_claim(whole, claim, "guarantee.epsilon", "the record's numbers give", exact=lambda: exact_epsilon(
        exact_record_ratio(cls.mechanism, mech.oracles, mech.numbers, mech.domain_sizes)))
    if number(claim, "guarantee.epsilon", low=0.0) > budget:
        raise PlanError(f"guarantee.epsilon: {claim!r} exceeds the embedded spec.epsilon = {budget!r}")
    claims = require(data, "guarantee.attribute_epsilons")
    if not isinstance(claims, (list, tuple)) or len(claims) != len(each):
        raise PlanError(f"guarantee.attribute_epsilons: must list {len(each)} numbers, one per attribute")
    exact = exact_attribute_ratios(cls.mechanism, mech.oracles, mech.numbers, mech.domain_sizes)
    for j, (actual, claimed) in enumerate(zip(each, claims)):
        check_claim(actual, claimed, f"guarantee.attribute_epsilons[{j}]", exact=functools.partial(exact_epsilon, exact[j]))
    return mech


def _privacy_map(mech: RecordRuntime) -> dict[str, Any]:
    whole, each = record_epsilons(mech.mechanism, mech.oracles, mech.numbers, mech.domain_sizes)
    return {"notion": NOTION, "epsilon": float(whole), "levels": {n: float(e) for n, e in zip(mech.names, each)}}


def _sample_attribute(rng: np.random.Generator, cumulative: np.ndarray, n: int) -> np.ndarray:
    """Attribute indices drawn with probabilities ``diff(cumulative)/2^48``, exactly (48-bit uniforms)."""
    u = uniform_below(rng, int(GRID), n)
    return np.searchsorted(cumulative, u, side="right").astype(np.int64)


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class SplitRecord(RecordRuntime):
    """SPL: every attribute ``j`` reported through its oracle at ``epsilon_j`` (``sum_j epsilon_j <= epsilon``).

    Parameters
    ----------
    domain : list of str
        The concatenated labels ``name=value`` (``sum_j k_j``).
    names : sequence of str
        The ``d`` attribute names.
    domain_sizes : sequence of int
        ``k_j`` (each >= 2).
    oracles : sequence of {"grr", "oue"}
    epsilons : sequence of float
        ``epsilon_j`` (nats) each oracle is tuned to.
    numbers : sequence of float, optional
        From a plan: must equal the grid numbers of ``epsilons`` (GRR ``P`` down, OUE ``q`` up).

    Raises
    ------
    ValueError
        Inconsistent attributes, a bad oracle, or numbers that are not the grid numbers.

    References
    ----------
    Arcolezi et al., CIKM 2021, Sec. 2.3 (SPL); Wang et al., USENIX Security 2017, Sec. 4.
    """

    mechanism: ClassVar[str] = "spl"
    count_rule: ClassVar[CountRule] = CountRule(sums_to_n=_GRR, at_most_n=_OUE)
    Params: ClassVar[type[RecordParams]] = RecordParams
    PLAN_FIELDS: ClassVar[PlanFields] = PlanFields(("spl",), _CLAIMS)

    def __init__(self, *, domain: Sequence[str], names: Sequence[str], domain_sizes: Sequence[int],
                 oracles: Sequence[str], epsilons: Sequence[float], numbers: Sequence[float] | None = None) -> None:
        self._init_record(domain, names, domain_sizes, oracles, epsilons, numbers)

    def __repr__(self) -> str:
        return f"SplitRecord({self._repr_fields()})"

    from_plan = classmethod(_from_plan)

    def privacy_map(self) -> dict[str, Any]:
        """``notion`` LDP, ``epsilon`` = ``sum_j epsilon_j`` of the grid numbers (rounded up), ``levels``: name -> ``epsilon_j``."""
        return _privacy_map(self)

    def perturb(self, data: Any, rng: np.random.Generator) -> Reports:
        """Every attribute's report (columns ``a<j>``) of records ``data`` (int codes, shape ``(n, d)``)."""
        x = self._records(data)
        return Reports(self.mechanism, {column(j): self._attribute_reports(j, x[:, j], rng)
                                        for j in range(len(self.names))})

    def aggregate(self, reports: Any) -> Aggregate:
        """Support counts per attribute (``g<j>`` / ``u<j>``, shape ``(k_j,)``)."""
        cols = [self._column(reports, j) for j in range(len(self.names))]
        return Aggregate(self.mechanism, len(reports), {count_key(o, j): self._support(j, y)
                                                        for j, (o, y) in enumerate(zip(self.oracles, cols))})

    def _expected_coefficients(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        c0, c1 = zip(*(self._oracle_coefficients(j) for j in range(len(self.names))))
        return np.concatenate(c0), np.concatenate(c1), np.zeros(self.domain_size)

    def estimate(self, reports_or_aggregate: Any, method: str | None = None, *, tol: float = TOL,
                 max_iter: int = MAX_ITER) -> Estimate:
        """Every attribute's frequencies, concatenated: ``(c/n - nu)/(mu - nu)`` (``"projected"``: each on its simplex).

        Returns
        -------
        Estimate
            ``frequency`` shape ``(sum_j k_j,)``; ``variance``: ``n Var = c0 + c1 f`` per entry (exact, fixed data).

        Raises
        ------
        ValueError
            Unsupported method, bad options, malformed reports or aggregate, no users.
        """
        agg = self._aggregate_of(reports_or_aggregate)
        parts = []
        for j, o in enumerate(self.oracles):
            mu, nu = self._linear(j)
            parts.append((agg.counts[count_key(o, j)] / agg.n - nu) / (mu - nu))
        c0, c1, c2 = self._expected_coefficients()
        return self._finish(np.concatenate(parts), c0, c1, c2, agg.n, method, tol, max_iter, _SOURCE + "SPL")


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class SampledRecord(RecordRuntime):
    """SMP: a user reports attribute ``j`` (drawn with probability ``pi_j``) and its index, at the whole budget.

    Parameters
    ----------
    domain, names, domain_sizes, oracles, epsilons, numbers
        As :class:`SplitRecord` (``epsilons``: the whole budget for every attribute).
    sampling : sequence of float
        ``pi_j``: multiples of 2^-48 in (0, 1] summing to exactly 1.

    References
    ----------
    Arcolezi et al., CIKM 2021, Sec. 2.3 (SMP); N. Wang et al., ICDE 2019, Sec. IV.
    """

    mechanism: ClassVar[str] = "smp"
    count_rule: ClassVar[CountRule] = CountRule(sums_to_n=(("m",),), total_at_most_n=_GRR, at_most_n=_OUE)
    Params: ClassVar[type[RecordParams]] = RecordParams
    PLAN_FIELDS: ClassVar[PlanFields] = PlanFields(("smp",), _CLAIMS)

    sampling: tuple[float, ...]
    cumulative: np.ndarray

    def __init__(self, *, domain: Sequence[str], names: Sequence[str], domain_sizes: Sequence[int],
                 oracles: Sequence[str], epsilons: Sequence[float], sampling: Sequence[float],
                 numbers: Sequence[float] | None = None) -> None:
        self._init_record(domain, names, domain_sizes, oracles, epsilons, numbers)
        pi = np.asarray(sampling, dtype=np.float64)
        if pi.shape != (len(self.names),) or not np.all((pi > 0) & (pi <= 1)) or not on_grid(pi):
            raise ValueError(f"sampling: must be {len(self.names)} multiples of 2^-48 in (0, 1] (got {list(sampling)!r})")
        ints = (pi * GRID).astype(np.int64)
        if int(ints.sum()) != int(GRID):
            raise ValueError(f"sampling: must sum to exactly 1 (got {float(pi.sum())!r})")
        set_fields(self, sampling=tuple(float(x) for x in pi), cumulative=np.cumsum(ints)[:-1])
        self.cumulative.flags.writeable = False

    def __repr__(self) -> str:
        return f"SampledRecord({self._repr_fields()}, sampling={self.sampling!r})"

    from_plan = classmethod(_from_plan)

    def privacy_map(self) -> dict[str, Any]:
        """``notion`` LDP, ``epsilon`` = ``max_j epsilon_j`` of the grid numbers (rounded up), ``levels`` per attribute."""
        return _privacy_map(self)

    def perturb(self, data: Any, rng: np.random.Generator) -> Reports:
        """Column ``attribute`` (the sampled ``j``) and ``a<j>`` (its report; 0 for the others)."""
        x = self._records(data)
        n = x.shape[0]
        sampled = _sample_attribute(rng, self.cumulative, n)
        cols: dict[str, np.ndarray] = {"attribute": sampled}
        for j in range(len(self.names)):
            out = self._empty_column(j, n)
            rows = np.flatnonzero(sampled == j)
            out[rows] = self._attribute_reports(j, x[rows, j], rng)
            cols[column(j)] = out
        return Reports(self.mechanism, cols)

    def aggregate(self, reports: Any) -> Aggregate:
        """``m`` (reports per attribute) and the support counts of each attribute's own reports."""
        cols = [self._column(reports, j) for j in range(len(self.names))]
        sampled = np.asarray(reports.columns.get("attribute", np.zeros(0)))
        d = len(self.names)
        if "attribute" not in reports.columns or sampled.ndim != 1 or (sampled.size and sampled.dtype.kind not in "iu"):
            raise ValueError("reports.attribute: must be a 1-D integer array (the sampled attribute)")
        if sampled.size and (int(sampled.min()) < 0 or int(sampled.max()) >= d):
            raise ValueError(f"reports.attribute: must be indices in [0, {d})")
        counts = {"m": np.bincount(sampled, minlength=d).astype(np.int64)}
        for j, (o, y) in enumerate(zip(self.oracles, cols)):
            counts[count_key(o, j)] = self._support(j, y[sampled == j])
        return Aggregate(self.mechanism, len(reports), counts)

    def _count_shapes(self) -> dict[str, tuple[int, ...]]:
        return {"m": (len(self.names),), **super(SampledRecord, self)._count_shapes()}

    def _expected_coefficients(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        parts = []
        for j, pi in enumerate(self.sampling):
            c0, c1 = self._oracle_coefficients(j)
            parts.append((c0 / pi, (c1 + 1 - pi) / pi, np.full_like(c0, -(1 - pi) / pi)))
        return tuple(np.concatenate(p) for p in zip(*parts))  # type: ignore[return-value]

    def estimate(self, reports_or_aggregate: Any, method: str | None = None, *, tol: float = TOL,
                 max_iter: int = MAX_ITER) -> Estimate:
        """Attribute ``j`` from its ``m_j`` reports: ``(c/m_j - nu)/(mu - nu)``, concatenated.

        The variance given ``m_j`` adds the sampling term of a simple random sample of ``m_j`` of ``n``:
        ``n Var = (n/m_j) [c0 + (c1 + r) f - r f^2]``, ``r = (n - m_j)/(n - 1)``.

        An attribute with no reports (``m_j = 0``) gets the uniform frequency ``1/k_j`` with a standard
        error of 1 (nothing is known: its intervals are ``[0, 1]``).

        Raises
        ------
        ValueError
            As :meth:`SplitRecord.estimate`.
        """
        agg = self._aggregate_of(reports_or_aggregate)
        n, m = agg.n, agg.counts["m"]
        parts, coefficients = [], []
        for j, o in enumerate(self.oracles):
            counts = agg.counts[count_key(o, j)]
            if m[j] < 1:  # nothing is known: the uniform frequency, a variance of 1 (the interval [0, 1])
                k = self.domain_sizes[j]
                parts.append(np.full(k, 1.0 / k))
                coefficients.append((np.full(k, float(n)), np.zeros(k), np.zeros(k)))
                continue
            if o == "grr" and int(counts.sum()) != int(m[j]):
                raise ValueError(f"aggregate.counts.{count_key(o, j)}: must sum to m[{j}] = {int(m[j])}")
            mu, nu = self._linear(j)
            parts.append((counts / m[j] - nu) / (mu - nu))
            c0, c1 = self._oracle_coefficients(j)
            r = (n - m[j]) / (n - 1) if n > 1 else 0.0
            coefficients.append((c0 * n / m[j], (c1 + r) * n / m[j], np.full_like(c0, -r * n / m[j])))
        c0, c1, c2 = (np.concatenate(c) for c in zip(*coefficients))
        return self._finish(np.concatenate(parts), c0, c1, c2, n, method, tol, max_iter,
                            _SOURCE + "SMP: over the m_j reports of attribute j, plus the sampling term")


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class RSFDRecord(RecordRuntime):
    """RS+FD[GRR]: one attribute drawn uniformly and reported by GRR, uniform fake values for the others.

    Parameters
    ----------
    domain, names, domain_sizes, oracles, epsilons, numbers
        As :class:`SplitRecord`; ``oracles`` must all be ``"grr"`` and ``epsilons`` are ``epsilon'``.

    Notes
    -----
    The whole record's epsilon is ``ln(sum_j k_j P_j / sum_j k_j q_j)`` (:mod:`._privacy`): about
    ``epsilon'``, not the paper's amplified bound, so plans use ``epsilon'`` = the record's budget.

    References
    ----------
    Arcolezi, Couchot, Al Bouna, Xiao, CIKM 2021, Sec. 3.1 (RS+FD[GRR]: the estimator
    ``f = (d c/n - (d-1)/k - q)/(p - q)`` and its variance).
    """

    mechanism: ClassVar[str] = "rsfd"
    count_rule: ClassVar[CountRule] = CountRule(sums_to_n=_GRR)
    Params: ClassVar[type[RecordParams]] = RecordParams
    PLAN_FIELDS: ClassVar[PlanFields] = PlanFields(("rsfd",), _CLAIMS)

    def __init__(self, *, domain: Sequence[str], names: Sequence[str], domain_sizes: Sequence[int],
                 oracles: Sequence[str], epsilons: Sequence[float], numbers: Sequence[float] | None = None) -> None:
        if any(o != "grr" for o in oracles):
            raise ValueError(f"oracles: RS+FD runs GRR on every attribute (got {list(oracles)!r})")
        self._init_record(domain, names, domain_sizes, oracles, epsilons, numbers)

    def __repr__(self) -> str:
        return f"RSFDRecord({self._repr_fields()})"

    from_plan = classmethod(_from_plan)

    def privacy_map(self) -> dict[str, Any]:
        """``notion`` LDP, ``epsilon`` = ``ln(sum k_j P_j / sum k_j q_j)`` (rounded up), ``levels``: one attribute changed."""
        return _privacy_map(self)

    def perturb(self, data: Any, rng: np.random.Generator) -> Reports:
        """Columns ``a<j>`` (int64): GRR of ``x_j`` for the sampled attribute, a uniform value for the others."""
        x = self._records(data)
        n, d = x.shape[0], len(self.names)
        sampled = uniform_below(rng, d, n)
        cols = {}
        for j, k in enumerate(self.domain_sizes):
            real = self._attribute_reports(j, x[:, j], rng)
            cols[column(j)] = np.where(sampled == j, real, uniform_below(rng, k, n)).astype(np.int64)
        return Reports(self.mechanism, cols)

    def aggregate(self, reports: Any) -> Aggregate:
        """Value counts per attribute (``g<j>``, shape ``(k_j,)``, each summing to ``n``)."""
        cols = [self._column(reports, j) for j in range(len(self.names))]
        return Aggregate(self.mechanism, len(reports), {count_key("grr", j): self._support(j, y)
                                                        for j, y in enumerate(cols)})

    def _expected_coefficients(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        d, parts = len(self.names), []
        for j, k in enumerate(self.domain_sizes):
            p, q = self._linear(j)
            s0, s1 = (q + (d - 1) / k) / d, (p + (d - 1) / k) / d
            scale = d * d / (p - q) ** 2
            parts.append((np.full(k, scale * s0 * (1 - s0)), np.full(k, scale * (s1 * (1 - s1) - s0 * (1 - s0))),
                          np.zeros(k)))
        return tuple(np.concatenate(p) for p in zip(*parts))  # type: ignore[return-value]

    def estimate(self, reports_or_aggregate: Any, method: str | None = None, *, tol: float = TOL,
                 max_iter: int = MAX_ITER) -> Estimate:
        """``f = (d c/n - (d - 1)/k - q)/(p - q)`` per attribute, concatenated (Arcolezi et al. 2021, Sec. 3.1).

        Raises
        ------
        ValueError
            As :meth:`SplitRecord.estimate`.
        """
        agg = self._aggregate_of(reports_or_aggregate)
        d, parts = len(self.names), []
        for j, k in enumerate(self.domain_sizes):
            p, q = self._linear(j)
            parts.append((d * agg.counts[count_key("grr", j)] / agg.n - (d - 1) / k - q) / (p - q))
        c0, c1, c2 = self._expected_coefficients()
        return self._finish(np.concatenate(parts), c0, c1, c2, agg.n, method, tol, max_iter,
                            "Arcolezi et al. 2021 Sec. 3.1, fixed data: n Var = d^2 [f s1(1-s1) + (1-f) s0(1-s0)]/(p-q)^2")

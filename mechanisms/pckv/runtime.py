r"""PCKV-UE and PCKV-GRR runtimes for key-value data (numpy only).

Source: Gu, Li, Cheng, Xiong, Cao, *PCKV: Locally Differentially Private Correlated
Key-Value Data Collection with Optimized Utility*, USENIX Security 2020:
Algorithm 1 (padding-and-sampling for key-value data with value discretisation),
Algorithm 2 (PCKV-UE), Algorithm 3 (PCKV-GRR), the unbiased estimators (7)-(8)
(``method="empirical"``) and the corrected estimation of Algorithm 4 with Lemma 1,
eq. (13)-(14) (``method="corrected"``, the default).

Inputs
------
A user holds a set of pairs ``(key, value)``: keys are 0-based indices into the plan's
``d`` keys (distinct within a user), values are in [-1, 1]. ``perturb`` accepts either a
sequence of ``(keys, values)`` per user or a :class:`KeyValueUsers` (CSR arrays, the
fast path: no per-user Python work at all).

Out-of-contract input is never silently wrong:

* values outside [-1, 1]: ``values="reject"`` (default) raises ``ValueError``;
  ``values="clip"`` clips them. NaN values are always rejected.
* keys outside ``0..d-1``: ``out_of_domain_keys="reject"`` (default) raises;
  ``"drop"`` removes those pairs (the number is in ``reports.dropped_pairs``).
* repeated keys within one user: rejected (a user holds a *set* of pairs).
* users with more than ``L`` pairs are legal: Algorithm 1 samples one of their pairs
  with probability ``1/|S|``, so privacy holds, but estimator (7) then under-estimates
  the frequencies of keys such users hold (truncation bias; the planner accounts for it).

Reports
-------
PCKV-UE: :class:`PCKVUEReports`, the report vectors ``y`` in {1, -1, 0}^(d + L) (the last
``L`` positions are dummy keys) packed 2 bits per position in two uint8 bit planes
``nonzero`` and ``negative``, each of shape ``(n, ceil((d + L) / 8))``, little bit order
(:mod:`ldpplan.mechanisms.pckv._packed`; ``reports.unpack()`` gives the int8 matrix;
``aggregate`` also accepts the int8 column ``y`` of earlier releases). PCKV-GRR: columns ``key`` (int64, ``0..d+L-1``) and ``value`` (int8, +-1).
Aggregates hold ``n1[k]``, ``n2[k]`` (reports supporting ``<k, 1>`` / ``<k, -1>``), shape (d,).

Randomness is exact where privacy depends on it: the coins ``a``, ``b``, ``p`` are
multiples of ``2^-48`` drawn exactly; fair signs and uniform choices use exact integer
sampling under every bit generator.
"""
from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Sequence

import numpy as np

from ._core import (ESTIMATORS, KeyValueUsers, as_users, check_users, composed_ratio, estimate_from_counts,
                         exact_ratios, exceeds_exactly, key_budget, random_signs, sample_pairs, value_budget)
from ._packed import (PACKED_COLUMNS, PCKVReports, PCKVUEReports, int8_counts, pack_ternary,
                           packed_counts, perturb_packed)
from .._envelope import PlanFields, read_domain, read_envelope
from .._plan import PlanError, integer, number, require
from ._params import PCKVParams
from ._promises import pckv_promises
from .._api import domain_labels
from .._fit import MAX_ITER, TOL, check_options
from .._protocol import CountRule, Aggregate, Estimate, Frozen, Reports, check_method, set_fields
from .._sampling import bernoulli_iid, check_rng, on_grid, to_grid, uniform_below

__all__ = ["KeyValueUsers", "PCKVUE", "PCKVGRR", "PCKVReports", "PCKVUEReports", "PACKED_COLUMNS", "pack_ternary", "sample_pairs", "estimate_from_counts",
           "composed_ratio", "key_budget", "value_budget", "to_grid", "on_grid", "VALUE_MODES", "KEY_MODES",
           "MAX_PADDING_LENGTH"]

_random_signs = random_signs
#: ``values`` handling of out-of-range values, ``out_of_domain_keys`` handling of unknown keys.
VALUE_MODES = ("reject", "clip")
KEY_MODES = ("reject", "drop")
#: Largest padding length a runtime accepts.
MAX_PADDING_LENGTH = 100_000


#: The claims of a PCKV plan besides notion and epsilon.
_GUARANTEE_FIELDS = ("epsilon1", "epsilon2", "units", "composition")


def _int_column(reports: Reports, name: str, ndim: int) -> np.ndarray:
    if name not in reports.columns:
        raise ValueError(f"reports.{name}: required column is missing (columns: {sorted(reports.columns)})")
    col = reports[name]
    if col.dtype.kind not in "iu" or col.ndim != ndim:
        raise ValueError(f"reports.{name}: must be an integer array with {ndim} dimension(s) "
                         f"(got dtype {col.dtype}, shape {col.shape})")
    return col


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class _PCKV(Frozen):
    """Shared runtime of PCKV-UE and PCKV-GRR (immutable)."""

    mechanism: ClassVar[str] = ""
    methods: ClassVar[tuple[str, ...]] = ESTIMATORS
    PLAN_FIELDS: ClassVar[PlanFields] = PlanFields((), _GUARANTEE_FIELDS)
    #: both mechanisms' plans carry the same params
    Params: ClassVar[type[PCKVParams]] = PCKVParams

    a: float
    b: float
    p: float
    domain_size: int
    padding_length: int
    labels: list[str] | None
    values: str
    out_of_domain_keys: str

    def __init__(self, *, domain: int | Sequence[str], a: float, b: float, p: float, padding_length: int,
                 values: str = "reject", out_of_domain_keys: str = "reject") -> None:
        try:
            d, labels = domain_labels(domain)
        except ValueError as exc:
            raise PlanError(str(exc)) from None
        L = int(padding_length)
        if d < 2 or not 1 <= L <= MAX_PADDING_LENGTH:
            raise PlanError(f"params: need domain_size >= 2 and 1 <= padding_length <= {MAX_PADDING_LENGTH} "
                            f"(got {d}, {L})")
        if values not in VALUE_MODES:
            raise PlanError(f"params.values: must be one of {list(VALUE_MODES)} (got {values!r})")
        if out_of_domain_keys not in KEY_MODES:
            raise PlanError(f"params.out_of_domain_keys: must be one of {list(KEY_MODES)} (got {out_of_domain_keys!r})")
        set_fields(self, a=float(a), b=float(b), p=float(p), domain_size=d, padding_length=L,
                   labels=None if labels is None else list(labels), values=values,
                   out_of_domain_keys=out_of_domain_keys)

    def _check_probabilities(self, grid_values: list[float], names: str) -> None:
        if not all(np.isfinite(grid_values)) or not on_grid(grid_values):
            raise PlanError(f"params: {names} must be multiples of 2**-48 in [0, 1] (got {grid_values})")
        if not (0 < self.b < self.a < 1 and 0.5 <= self.p < 1):
            raise PlanError(f"params: need 0 < b < a < 1 and 1/2 <= p < 1 (got a={self.a!r}, b={self.b!r}, p={self.p!r})")

    @property
    def output_size(self) -> int:
        """``d' = d + L`` (keys plus dummy keys)."""
        return self.domain_size + self.padding_length

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(a={self.a!r}, b={self.b!r}, p={self.p!r}, domain_size={self.domain_size}, "
                f"padding_length={self.padding_length}, epsilon={self.privacy_map()['epsilon']:.6g})")

    # ---------------------------------------------------------------- plan
    @classmethod
    def from_plan(cls, plan: Any) -> "_PCKV":
        """Build from a verified plan (path or dict) written by ``ldpplan plan``.

        Reads the envelope (:func:`ldpplan.mechanisms.read_envelope`), requires
        ``verification.holds == true``, checks every number (finite, in range, on the 2^-48
        grid), ``domain.size == params.domain_size``, the plan against its embedded spec
        (mechanism, domain, padding length, ``spec.epsilon``:
        :func:`ldpplan.mechanisms.pckv._promises.pckv_promises`), then decides every claim exactly
        against the numbers (no tolerance) and refuses smaller claims.

        Raises
        ------
        PlanError
            Naming the field, the rule and the value.
        """
        data = read_envelope(plan, cls.PLAN_FIELDS, verified=True)
        d = integer(require(data, "params.domain_size"), "params.domain_size", low=2)
        L = integer(require(data, "params.padding_length"), "params.padding_length", low=1, high=MAX_PADDING_LENGTH)
        size, labels = read_domain(data, low=2)
        if size != d:
            raise PlanError(f"domain.size: must equal params.domain_size = {d} (got {size})")
        spec_epsilon = pckv_promises(data, d, L)
        q = {k: number(require(data, f"params.{k}"), f"params.{k}", low=0.0, high=1.0, low_open=True, high_open=True)
             for k in ("a", "b", "p")}
        params = require(data, "params")
        mech = cls(domain=labels if labels is not None else d, a=q["a"], b=q["b"], p=q["p"], padding_length=L,
                   values=params.get("values", "reject"), out_of_domain_keys=params.get("out_of_domain_keys", "reject"))
        if require(data, "guarantee.notion") != "LDP":
            raise PlanError(f"guarantee.notion: must be 'LDP' (got {data['guarantee']['notion']!r})")
        pm = mech.privacy_map()
        claims = [("epsilon", "guarantee.epsilon", require(data, "guarantee.epsilon")),
                  ("epsilon", "spec.epsilon", spec_epsilon)]
        for k in ("epsilon1", "epsilon2"):
            claims += [(k, f"guarantee.{k}", require(data, f"guarantee.{k}")),
                       (k, f"params.{k}", require(data, f"params.{k}"))]
        ratios = exact_ratios(mech.mechanism, mech.a, mech.b, mech.p, d, L)
        for k, field, claim in claims:
            number(claim, field, low=0.0)
            if exceeds_exactly(ratios[k], claim):  # exact: no tolerance, no float rounding
                raise PlanError(f"{field}: claims {claim!r} but a, b, p, L, d give more (exactly; {pm[k]!r} in "
                                "float64); the runtime refuses a plan that claims more privacy than its numbers give")
        return mech

    def privacy_map(self) -> dict[str, Any]:
        """The guarantee of the numbers (float64): ``{"notion": "LDP", "epsilon", "epsilon1", "epsilon2"}``.

        ``epsilon`` is the composed budget (nats): ``ln`` of the worst-case ratio of
        Theorem 2 (PCKV-UE) / Theorem 3 (PCKV-GRR) from ``a, b, p, L, d``.

        References
        ----------
        PCKV, Theorem 2 eq. (3), Theorem 3 eq. (6), App. A-B; budgets eq. (2), (5).
        """
        ratio = composed_ratio(self.mechanism, self.a, self.b, self.p, self.domain_size, self.padding_length)
        return {"notion": "LDP", "epsilon": float(np.log(ratio)),
                "epsilon1": key_budget(self.mechanism, self.a, self.b), "epsilon2": value_budget(self.p)}

    # -------------------------------------------------------------- server
    def _counts(self, reports: Reports) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def aggregate(self, reports: Reports) -> Aggregate:
        """Counts ``n1[k]`` / ``n2[k]`` of reports supporting ``<k, 1>`` / ``<k, -1>``, ``k < d``.

        Returns
        -------
        Aggregate
            ``n`` users; counts ``n1``, ``n2`` (int64, shape (d,)).

        Raises
        ------
        ValueError
            Reports of another mechanism or with a column of the wrong dtype, shape or range.
        """
        if not isinstance(reports, Reports):
            raise ValueError(f"reports: must be the Reports returned by perturb (got {type(reports).__name__})")
        if reports.mechanism != self.mechanism:
            raise ValueError(f"reports.mechanism: must be {self.mechanism!r} (got {reports.mechanism!r})")
        n1, n2 = self._counts(reports)
        return Aggregate(self.mechanism, len(reports), {"n1": n1, "n2": n2})

    def _check_aggregate(self, agg: Aggregate) -> tuple[np.ndarray, np.ndarray]:
        if agg.mechanism != self.mechanism:
            raise ValueError(f"aggregate.mechanism: must be {self.mechanism!r} (got {agg.mechanism!r})")
        if set(agg.counts) != {"n1", "n2"}:
            raise ValueError(f"aggregate.counts: must hold n1 and n2 (got {sorted(agg.counts)})")
        n1, n2 = agg["n1"], agg["n2"]
        if n1.shape != (self.domain_size,) or n2.shape != (self.domain_size,):
            raise ValueError(f"aggregate.counts.n1: must have shape ({self.domain_size},) (got {n1.shape}, {n2.shape})")
        if agg.n < 1:
            raise ValueError("aggregate.n: at least one report is needed to estimate")
        if np.any(n1 + n2 > agg.n):
            raise ValueError(f"aggregate.counts: n1 + n2 must be <= n = {agg.n} for every key")
        return n1, n2

    def estimate(self, reports_or_aggregate: Reports | Aggregate, method: str | None = None, *, tol: float = TOL,
                 max_iter: int = MAX_ITER) -> Estimate:
        """Frequencies and means of the ``d`` keys.

        Parameters
        ----------
        reports_or_aggregate : Reports or Aggregate
        method : {"corrected", "empirical"}, optional
            ``"corrected"`` (default): Algorithm 4; ``"empirical"``: eq. (7)-(8).
        tol, max_iter : float, int
            The runtime's estimator options (``docs/ARCHITECTURE.md``), checked and unused: both
            estimators are closed forms.

        Returns
        -------
        Estimate
            ``frequency`` (fractions of users; counts are ``n * frequency``), ``mean``
            (value units), ``std_error`` of the frequency (eq. 9), shapes (d,).

        Raises
        ------
        ValueError
            Unsupported method, malformed reports/aggregate, no reports.

        References
        ----------
        PCKV, eq. (7)-(9), Algorithm 4, eq. (13)-(14).
        """
        method = check_method(method, self.methods)
        check_options(tol, max_iter)
        agg = reports_or_aggregate if isinstance(reports_or_aggregate, Aggregate) else self.aggregate(reports_or_aggregate)
        n1, n2 = self._check_aggregate(agg)
        return estimate_from_counts(agg.n, n1, n2, self.a, self.b, self.p, self.padding_length, method=method)

    def _prepare(self, users: Any) -> tuple[KeyValueUsers, int]:
        return check_users(as_users(users), self.domain_size, self.values, self.out_of_domain_keys)


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class PCKVUE(_PCKV):
    """PCKV-UE (Algorithm 2): each user sends a vector in {1, -1, 0}^(d+L).

    Position ``k`` of the sampled pair ``<k, v>``: ``v`` w.p. ``a p``, ``-v`` w.p.
    ``a (1-p)``, ``0`` w.p. ``1 - a``; every other position: ``+1`` / ``-1`` w.p.
    ``b/2`` each, ``0`` w.p. ``1 - b``. Guarantee: Theorem 2, eq. (3).

    Parameters (keyword-only)
    ----------
    domain : int or sequence of str
        ``d`` (keys ``0 .. d-1``), or the ``d`` distinct key labels (``domain.labels`` of the plan).
    a, b, p : float
        Multiples of ``2^-48`` (as in plan files).
    padding_length : int
        ``L``.
    values : {"reject", "clip"}
    out_of_domain_keys : {"reject", "drop"}

    Raises
    ------
    PlanError
        A probability off the 2^-48 grid, ``not 0 < b < a < 1`` or ``not 1/2 <= p < 1``.

    References
    ----------
    PCKV, Algorithms 1-2, Theorem 2.
    """

    mechanism: ClassVar[str] = "pckv-ue"
    #: a report is +1, -1 or 0 at each key: n1 + n2 <= n key by key
    count_rule: ClassVar[CountRule] = CountRule(at_most_n=(("n1", "n2"),))
    PLAN_FIELDS: ClassVar[PlanFields] = PlanFields(("pckv-ue",), _GUARANTEE_FIELDS)

    def __init__(self, *, domain: int | Sequence[str], a: float, b: float, p: float, padding_length: int,
                 values: str = "reject",
                 out_of_domain_keys: str = "reject") -> None:
        super(PCKVUE, self).__init__(domain=domain, a=a, b=b, p=p, padding_length=padding_length, values=values,
                                     out_of_domain_keys=out_of_domain_keys)
        self._check_probabilities([self.a, self.b, self.p], "a, b and p")

    def perturb(self, data: Any, rng: np.random.Generator) -> PCKVReports:
        """Perturb every user's key-value set (Algorithms 1 and 2).

        Parameters
        ----------
        data : sequence of (keys, values) or KeyValueUsers
            ``n`` users; keys 0-based into the plan's keys, values in [-1, 1].
        rng : numpy.random.Generator

        Returns
        -------
        PCKVUEReports
            Columns ``nonzero`` and ``negative``: uint8, shape (n, ceil((d + L) / 8)), the
            bit planes of ``y != 0`` and ``y == -1`` (little bit order, padding bits zero).

        Raises
        ------
        ValueError
            Out-of-contract input (see the module docstring).
        """
        check_rng(rng)
        users, dropped = self._prepare(data)
        k, v = sample_pairs(users, self.domain_size, self.padding_length, rng)
        nonzero, negative = perturb_packed(rng, k, v, self.a, self.b, self.p, self.output_size)
        return PCKVUEReports(self.mechanism, {"nonzero": nonzero, "negative": negative}, dropped,
                             width=self.output_size)

    def _counts(self, reports: Reports) -> tuple[np.ndarray, np.ndarray]:
        if set(reports.columns) == {"y"}:
            return int8_counts(_int_column(reports, "y", 2), self.domain_size, self.output_size)
        if set(reports.columns) != set(PACKED_COLUMNS):
            raise ValueError(f"reports: must have exactly the columns {list(PACKED_COLUMNS)} "
                             f"(or the int8 column 'y'; got {sorted(reports.columns)})")
        return packed_counts(reports, self.domain_size, self.output_size)


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class PCKVGRR(_PCKV):
    """PCKV-GRR (Algorithm 3): each user sends one pair ``<k', v'>``.

    ``<k, v>`` w.p. ``a p``, ``<k, -v>`` w.p. ``a (1-p)``, and each ``<i, +-1>`` with
    ``i != k`` (of the ``d + L`` keys) w.p. ``b/2`` with ``b = (1 - a)/(d + L - 1)``.
    Guarantee: Theorem 3, eq. (6).

    Parameters
    ----------
    a, p : float
        Multiples of ``2^-48``.
    b : float
        The plan's ``b``; must equal ``(1-a)/(d+L-1)`` to 1e-12 relative (the runtime
        uses the exact derived value: other keys are drawn uniformly).
    domain, padding_length, values, out_of_domain_keys
        As :class:`PCKVUE` (keyword-only).

    References
    ----------
    PCKV, Algorithms 1 and 3, Theorem 3.
    """

    mechanism: ClassVar[str] = "pckv-grr"
    #: one pair per report (pairs of padding keys are not counted): sum of n1 + n2 <= n
    count_rule: ClassVar[CountRule] = CountRule(total_at_most_n=(("n1", "n2"),))
    PLAN_FIELDS: ClassVar[PlanFields] = PlanFields(("pckv-grr",), _GUARANTEE_FIELDS)

    def __init__(self, *, domain: int | Sequence[str], a: float, b: float, p: float, padding_length: int,
                 values: str = "reject",
                 out_of_domain_keys: str = "reject") -> None:
        super(PCKVGRR, self).__init__(domain=domain, a=a, b=b, p=p, padding_length=padding_length, values=values,
                                      out_of_domain_keys=out_of_domain_keys)
        exact_b = (1.0 - self.a) / (self.output_size - 1)
        if not (abs(self.b - exact_b) <= 1e-12 * exact_b):
            raise PlanError(f"params.b: must equal (1-a)/(d+L-1) = {exact_b!r} (got {self.b!r})")
        set_fields(self, b=exact_b)
        self._check_probabilities([self.a, self.p], "a and p")

    def perturb(self, data: Any, rng: np.random.Generator) -> PCKVReports:
        """Perturb every user's key-value set (Algorithms 1 and 3).

        Parameters
        ----------
        data : sequence of (keys, values) or KeyValueUsers
        rng : numpy.random.Generator

        Returns
        -------
        PCKVReports
            Columns ``key`` (int64, shape (n,), ``>= d`` is a dummy key) and
            ``value`` (int8, shape (n,), in {-1, 1}).
        """
        check_rng(rng)
        users, dropped = self._prepare(data)
        n = users.n_users
        k, v = sample_pairs(users, self.domain_size, self.padding_length, rng)
        keep = bernoulli_iid(rng, self.a, n)
        same = bernoulli_iid(rng, self.p, n)
        other = uniform_below(rng, self.output_size - 1, n)
        other += other >= k
        key = np.where(keep, k, other)
        value = np.where(keep, np.where(same, v, -v), random_signs(rng, n)).astype(np.int8)
        return PCKVReports(self.mechanism, {"key": key, "value": value}, dropped)

    def _counts(self, reports: Reports) -> tuple[np.ndarray, np.ndarray]:
        key = _int_column(reports, "key", 1)
        value = _int_column(reports, "value", 1)
        if key.size and (int(key.min()) < 0 or int(key.max()) >= self.output_size):
            raise ValueError(f"reports.key: must be in 0..{self.output_size - 1}")
        if value.size and not np.all((value == 1) | (value == -1)):
            raise ValueError("reports.value: must be -1 or 1")
        counts = np.bincount(key.astype(np.int64) * 2 + (value < 0), minlength=2 * self.output_size)
        return counts[0:2 * self.domain_size:2].astype(np.int64), counts[1:2 * self.domain_size:2].astype(np.int64)


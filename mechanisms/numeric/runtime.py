"""Client/server runtime of the numeric mechanisms on finite grids (Duchi, Piecewise, Hybrid, Square Wave).

One class, :class:`NumericChannel`, runs the four plan mechanisms: each plan is a finite channel
(input grid on ``[-1, 1]``, outputs with report values, integer numerators over ``2^48``), so one
sampler, one privacy map and one estimator serve all four (the mechanism decides only the numbers,
which the planner builds and verifies). Hybrid is the exact mixture: PM's outputs and Duchi's two as
disjoint blocks, component weights ``alpha``, ``1 - alpha`` on the ``2^-48`` grid.

**Domain** (the one runtime API): the ``k`` points of the input grid (``domain = k``, labels None);
``channel_matrix()`` is ``(k, m)``; ``estimate().frequency`` is the unbiased (linear, may be
negative) estimate of the users' distribution over the grid after rounding. The mean is on the
estimate as ``value_mean`` (user units) with ``value_std_error`` and :meth:`NumericEstimate.mean_interval`.

Client: clip to ``[low, high]``, map onto ``[-1, 1]``, round at random to one of the two neighbouring
grid points (unbiased; a mixture of epsilon-LDP rows is epsilon-LDP), pick the component and the
output exactly (one 48-bit uniform integer each, bytes through ``Generator.integers``).

References
----------
.. [1] J. C. Duchi, M. I. Jordan, M. J. Wainwright, JASA 113(521), 2018, Sec. 4.2.3.
.. [2] N. Wang et al., ICDE 2019, Sec. III (PM, Algorithm 2; HM).
.. [3] Z. Li et al., SIGMOD 2020, Sec. 4 (Square Wave).
.. [4] I. Mironov, CCS 2012 (why outputs are finite and probabilities on a grid).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar, Sequence

import numpy as np

from .._envelope import PlanFields, read_domain, read_envelope
from .._intervals import FrequencyVariance, two_sided_z
from .._plan import PlanError, check_claim, number, require
from .._plan_object import typed_params
from .._protocol import Aggregate, CountRule, Estimate, Frozen, Reports, check_method, readonly, set_fields
from .._api import domain_labels, report_columns
from .._ems import ems
from .._fit import TOL, MAX_ITER, check_options
from ._channel import (SCALE, check_numerators, exact_log_epsilon, float_epsilon, round_to_grid, sample_rows,
                       to_unit)
from ._formulas import expected_layout
from ._params import NumericParams
from ._promises import numeric_promises

__all__ = ["NumericChannel", "NumericEstimate", "NOTION", "MAX_ENTRIES"]

#: ``guarantee.notion`` of numeric plans.
NOTION = "LDP"
#: Largest channel (k m entries) a plan may carry.
MAX_ENTRIES = 1 << 20
_SOURCE = "exact multinomial variance of the linear (pseudo-inverse) estimate at the plug-in distribution"


@dataclasses.dataclass(frozen=True, slots=True)
class NumericEstimate(Estimate):
    """An :class:`~ldpplan.mechanisms.Estimate` with the mean of the values.

    Attributes
    ----------
    value_mean : float
        The unbiased estimate of the mean of the (clipped) values, user units (not clipped to the range).
    value_std_error : float
        Its standard error: the sample standard deviation of the reports' values over ``sqrt(n)``.
    low, high : float
        The declared range (intervals are clipped to it).
    """

    value_mean: float = math.nan
    value_std_error: float = math.nan
    low: float = -1.0
    high: float = 1.0

    def mean_interval(self, level: float = 0.95) -> tuple[float, float]:
        """Wald interval ``value_mean +- z value_std_error`` clipped to ``[low, high]`` (user units)."""
        z = two_sided_z(level)
        return (float(np.clip(self.value_mean - z * self.value_std_error, self.low, self.high)),
                float(np.clip(self.value_mean + z * self.value_std_error, self.low, self.high)))

    def to_dict(self, labels: list[str] | None = None, confidence: float | None = None) -> dict[str, Any]:
        """:meth:`Estimate.to_dict` plus ``value_mean``, ``value_std_error`` (and ``value_ci`` with ``confidence``)."""
        out = Estimate.to_dict(self, labels, confidence)
        out.update({"value_mean": float(self.value_mean), "value_std_error": float(self.value_std_error)})
        if confidence is not None:
            out["value_ci"] = list(self.mean_interval(confidence))
        return out


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class NumericChannel(Frozen):
    """A numeric mechanism as a finite channel on declared grids (plan mechanisms ``duchi``,
    ``piecewise``, ``hybrid``, ``square-wave``).

    Parameters
    ----------
    domain : int
        ``k``, the input grid's size (2 .. 2^16).
    mechanism : str
        The plan mechanism.
    epsilon : float
        The budget (nats) the numbers were built for.
    low, high : float
        The declared range; values are clipped to it.
    input_grid : sequence of float, shape (k,)
        Increasing, from -1 to 1.
    output_values : sequence of float, shape (m,)
    numerators : sequence of int, shape (k m,)
        Row-major integers over ``2^48``; each component's part of a row sums to ``2^48``.
    component_weights : sequence of int, default (2^48,)
    component_sizes : sequence of int, default (m,)

    Raises
    ------
    ValueError
        Bad grids, numerators or weights (a ``PlanError``, which is a ``ValueError``).

    References
    ----------
    Duchi et al., JASA 2018; Wang et al., ICDE 2019, Sec. III; Li et al., SIGMOD 2020, Sec. 4.
    """

    methods: ClassVar[tuple[str, ...]] = ("empirical", "ems")
    count_rule: ClassVar[CountRule] = CountRule(sums_to_n=(("y",),))
    Params: ClassVar[type[NumericParams]] = NumericParams
    PLAN_FIELDS: ClassVar[PlanFields] = PlanFields(("duchi", "piecewise", "hybrid", "square-wave"), ("sources",),
                                                   max_domain=1 << 16)

    mechanism: str
    epsilon: float
    domain_size: int
    labels: list[str] | None
    low: float
    high: float
    input_grid: tuple[float, ...]
    output_values: tuple[float, ...]
    numerators: tuple[int, ...]
    component_weights: tuple[int, ...]
    component_sizes: tuple[int, ...]
    epsilon_realized: float
    _table: np.ndarray
    _cumulative: np.ndarray
    _probabilities: np.ndarray
    _inverse: np.ndarray

    def __init__(self, *, domain: int | Sequence[str], mechanism: str, epsilon: float, low: float, high: float,
                 input_grid: Sequence[float], output_values: Sequence[float], numerators: Sequence[int],
                 component_weights: Sequence[int] = (SCALE,), component_sizes: Sequence[int] | None = None) -> None:
        k, labels = domain_labels(domain, low=2)
        if labels is not None:
            raise ValueError("domain: a numeric runtime's domain is the input grid's size (no labels)")
        if mechanism not in self.PLAN_FIELDS.mechanisms:
            raise ValueError(f"mechanism: must be one of {list(self.PLAN_FIELDS.mechanisms)} (got {mechanism!r})")
        grid = np.asarray(input_grid, dtype=np.float64)
        if grid.shape != (k,) or grid[0] != -1.0 or grid[-1] != 1.0 or np.any(np.diff(grid) <= 0):
            raise ValueError(f"input_grid: must be {k} increasing numbers from -1 to 1")
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise ValueError(f"low, high: must be finite with low < high (got {low!r}, {high!r})")
        values = np.asarray(output_values, dtype=np.float64)
        sizes = tuple(int(s) for s in (component_sizes if component_sizes is not None else (values.size,)))
        weights = tuple(int(w) for w in component_weights)
        if len(sizes) != len(weights) or sum(sizes) != values.size or min(sizes) < 1 or sum(weights) != SCALE \
                or min(weights) < 0 or not np.all(np.isfinite(values)) or k * values.size > MAX_ENTRIES:
            raise ValueError("component_weights, component_sizes, output_values: weights >= 0 summing to 2^48, "
                             f"sizes >= 1 summing to the {values.size} outputs, finite values, k m <= {MAX_ENTRIES}")
        flat = [int(v) for v in numerators]
        if len(flat) != k * values.size:
            raise ValueError(f"numerators: must hold k m = {k * values.size} integers (got {len(flat)})")
        table = check_numerators([flat[i * values.size:(i + 1) * values.size] for i in range(k)], k, sizes)
        epsilon_realized = float_epsilon(table, weights, sizes)
        probabilities = self._matrix(table, weights, sizes)
        set_fields(self, mechanism=str(mechanism), epsilon=float(epsilon), domain_size=k, labels=None,
                   low=float(low), high=float(high), input_grid=tuple(grid.tolist()),
                   output_values=tuple(values.tolist()), numerators=tuple(flat), component_weights=weights,
                   component_sizes=sizes, epsilon_realized=epsilon_realized, _table=readonly(table),
                   _cumulative=readonly(np.cumsum(table, axis=1)), _probabilities=readonly(probabilities),
                   _inverse=readonly(np.linalg.pinv(probabilities)))

    @staticmethod
    def _matrix(table: np.ndarray, weights: Sequence[int], sizes: Sequence[int]) -> np.ndarray:
        factor = np.repeat(np.asarray(weights, dtype=np.float64) / SCALE, np.asarray(sizes))
        return table.astype(np.float64) / SCALE * factor[None, :]

    def __repr__(self) -> str:
        return (f"NumericChannel(mechanism={self.mechanism!r}, epsilon={self.epsilon!r}, range=[{self.low!r}, "
                f"{self.high!r}], k={self.domain_size}, outputs={len(self.output_values)}, "
                f"components={len(self.component_sizes)})")

    # ------------------------------------------------------------------ plan
    @classmethod
    def from_plan(cls, plan: Any) -> "NumericChannel":
        """Build the runtime from a verified plan 2.0 (dict or path), re-checking its numbers, spec and claims.

        Raises
        ------
        PlanError
            Unreadable or unverified plan, ``domain.labels`` not null, numerators that are not integers or whose rows do not sum
            to ``2^48``, an output reachable from one input and not another, a plan that differs
            from its embedded spec, or a ``guarantee.epsilon`` below what the numerators give (decided
            exactly near the claim) or above the spec's budget, report values or component weights that
            are not the mechanism's at ``params.epsilon``.
        """
        data = read_envelope(plan, cls.PLAN_FIELDS, verified=True)
        size, labels = read_domain(data, low=2, high=cls.PLAN_FIELDS.max_domain)
        if labels is not None:  # verify refuses them (the plan is re-derived from its spec), so load() does too
            raise PlanError("domain.labels: must be null for a numeric plan (the domain is the input grid's size)")
        params = typed_params(data, cls)
        if len(params.input_grid) != size:
            raise PlanError(f"params.input_grid: must hold domain.size = {size} points (got {len(params.input_grid)})")
        notion = require(data, "guarantee.notion")
        if notion != NOTION:
            raise PlanError(f"guarantee.notion: must be {NOTION!r} (got {notion!r:.40})")
        budget = numeric_promises(data)
        epsilon = number(params.epsilon, "params.epsilon", low=0.0, low_open=True)
        try:
            mech = cls(domain=size, mechanism=data["mechanism"], epsilon=epsilon, low=params.low, high=params.high,
                       input_grid=params.input_grid, output_values=params.output_values,
                       numerators=params.numerators, component_weights=params.component_weights,
                       component_sizes=params.component_sizes)
        except PlanError:
            raise
        except ValueError as exc:
            raise PlanError(f"params: {exc}") from None
        values, weights = expected_layout(mech.mechanism, epsilon, mech.component_sizes)
        if mech.component_weights != weights:
            raise PlanError(f"params.component_weights: must be {list(weights)} for {mech.mechanism} at params.epsilon")
        if values.shape != (len(mech.output_values),) or mech.output_values != tuple(values.tolist()):
            raise PlanError(f"params.output_values: must be {mech.mechanism}'s report values at params.epsilon "
                            f"for component_sizes {list(mech.component_sizes)}")
        claim = require(data, "guarantee.epsilon")
        check_claim(mech.epsilon_realized, claim, "guarantee.epsilon", "ln(max/min) of a column of the numerators is",
                    exact=lambda: exact_log_epsilon(mech._table, mech.component_weights, mech.component_sizes))
        if number(claim, "guarantee.epsilon", low=0.0) > budget:
            raise PlanError(f"guarantee.epsilon: {claim!r} exceeds the embedded spec's budget {budget!r}")
        return mech

    def privacy_map(self) -> dict[str, Any]:
        """``{"notion": "LDP", "epsilon": max over outputs of ln(max/min) of its column}`` (float, rounded up)."""
        return {"notion": NOTION, "epsilon": float(self.epsilon_realized)}

    def channel_matrix(self) -> np.ndarray:
        """``Q[x, y]``, shape ``(k, m)``: component weight times numerator over ``2^96``, as floats."""
        return np.array(self._probabilities)

    # ------------------------------------------------------------------ client
    def perturb(self, data: Any, rng: np.random.Generator) -> Reports:
        """Each user's report: an output index (column ``y``, int64 in ``[0, m)``).

        Parameters
        ----------
        data : array_like of float, shape (n,)
            Values in user units (clipped to ``[low, high]``).
        rng : numpy.random.Generator
        """
        x = to_unit(data, self.low, self.high)
        rows = round_to_grid(x, np.asarray(self.input_grid), rng)
        sizes = np.asarray(self.component_sizes, dtype=np.int64)
        if sizes.size == 1:
            return Reports(self.mechanism, {"y": sample_rows(self._cumulative, rows, rng)})
        weights = np.cumsum(np.asarray(self.component_weights, dtype=np.int64))[None, :]
        component = sample_rows(np.repeat(weights, 1, axis=0), np.zeros(x.size, dtype=np.int64), rng)
        starts = np.concatenate([[0], np.cumsum(sizes)])
        y = np.empty(x.size, dtype=np.int64)
        for c in range(sizes.size):
            mask = component == c
            block = self._table[:, starts[c]:starts[c + 1]]
            y[mask] = starts[c] + sample_rows(np.cumsum(block, axis=1), rows[mask], rng)
        return Reports(self.mechanism, {"y": y})

    def report_variance(self, values: Any) -> np.ndarray:
        """Each user's exact report variance (user units squared, shape (n,)) under randomized rounding.

        Between grid neighbours ``a < b`` (``t`` the chance of going to ``b``):
        ``(1-t) V_a + t V_b + t (1-t) (m_b - m_a)^2``, ``V``, ``m`` the grid points' report variance and mean.
        """
        x = to_unit(values, self.low, self.high)
        grid, v = np.asarray(self.input_grid), np.asarray(self.output_values)
        mean = self._probabilities @ v
        var = np.maximum(self._probabilities @ v ** 2 - mean ** 2, 0.0)
        upper = np.clip(np.searchsorted(grid, x, side="left"), 1, grid.size - 1)
        lower = upper - 1
        t = np.clip((x - grid[lower]) / (grid[upper] - grid[lower]), 0.0, 1.0)
        total = (1 - t) * var[lower] + t * var[upper] + t * (1 - t) * (mean[upper] - mean[lower]) ** 2
        return total * ((self.high - self.low) / 2.0) ** 2

    # ------------------------------------------------------------------ server
    def aggregate(self, reports: Any) -> Aggregate:
        """Counts per output (counts key ``y``, shape ``(m,)``; they sum to ``n``; merge with ``+``)."""
        y = report_columns(reports, self.mechanism, ("y",))["y"].astype(np.int64)
        m = len(self.output_values)
        if y.size and (y.min() < 0 or y.max() >= m):
            raise ValueError(f"reports.y: must be output indices in [0, {m})")
        return Aggregate(self.mechanism, int(y.size), {"y": np.bincount(y, minlength=m)})

    def _counts(self, source: Any) -> tuple[np.ndarray, int]:
        agg = source if isinstance(source, Aggregate) else self.aggregate(source)
        if agg.mechanism != self.mechanism:
            raise ValueError(f"aggregate.mechanism: must be {self.mechanism!r} (got {agg.mechanism!r})")
        y = agg.counts.get("y")
        if set(agg.counts) != {"y"} or y is None or y.shape != (len(self.output_values),):
            raise ValueError(f"aggregate.counts: one count array 'y' of shape ({len(self.output_values)},)")
        if int(y.sum()) != agg.n or agg.n < 1:
            raise ValueError(f"aggregate.counts.y: must sum to aggregate.n = {agg.n} >= 1 (got {int(y.sum())})")
        return y, agg.n

    def estimate(self, reports_or_aggregate: Any, method: str | None = None, *, tol: float | None = None,
                 max_iter: int = MAX_ITER) -> NumericEstimate:
        """The mean of the values and the distribution over the input grid.

        Parameters
        ----------
        reports_or_aggregate : Reports or Aggregate
        method : {"empirical", "ems"}
            ``value_mean = low + (high - low)/2 (1 + sum_y c_y v_y / n)`` (the reports' values
            averaged: unbiased up to the plan's stated discretization bias) for both methods.
            ``"empirical"``: ``frequency = (c/n) Q^+`` (``Q^+`` the pseudo-inverse: unbiased when
            ``Q`` has rank ``k``, noisy on fine grids). ``"ems"``: the distribution over the input
            grid by EM with smoothing over the plan's channel (:func:`ldpplan.mechanisms._ems.ems`;
            Li et al. 2020, Sec. 5), the distribution estimator of Square Wave plans (any plan's
            channel works); biased toward smoothness, so ``std_error`` is None for it, and so is
            ``optimality_gap`` (EMS is not a maximum-likelihood method: no certificate applies); its
            ``confidence_interval`` is the unbiased linear estimator's score interval (as uRAP's
            ``"em"``), which covers at its level whatever the point estimate.
        tol, max_iter : float or None, int
            The runtime API's options: ``"empirical"`` checks them (the method is exact; default
            ``tol`` the runtime's ``TOL``); ``"ems"`` stops at a relative change of the
            log-likelihood of ``tol`` (default ``EMS_TOL`` = 1e-9) or after ``max_iter``.

        Returns
        -------
        NumericEstimate
            ``std_error`` per grid point: the exact multinomial variance of the linear estimate at
            the plug-in distribution (clipped, normalized); ``value_std_error``: the reports'
            sample standard deviation over ``sqrt(n)``, user units.

        Raises
        ------
        ValueError
            Unsupported method (``"ems"`` included), bad options, malformed reports or aggregate.
        """
        method = check_method(method, self.methods)
        check_options(TOL if tol is None else tol, max_iter)
        counts, n = self._counts(reports_or_aggregate)
        share = counts.astype(np.float64) / n
        values = np.asarray(self.output_values)
        mean_unit = float(share @ values)
        second = float(share @ values ** 2)
        sample_var = max(second - mean_unit ** 2, 0.0) * (n / (n - 1) if n > 1 else 1.0)
        half = (self.high - self.low) / 2.0
        freq = share @ self._inverse
        plug = np.clip(freq, 0.0, None)
        plug = plug / plug.sum() if plug.sum() > 0 else np.full(self.domain_size, 1.0 / self.domain_size)
        p = plug @ self._probabilities
        var_n = np.maximum((self._inverse ** 2).T @ p - (self._inverse.T @ p) ** 2, 0.0)
        std = np.sqrt(var_n / n)
        variance = FrequencyVariance(freq, var_n, 0.0, 0.0, n, source=_SOURCE)
        value_mean, value_std_error = self.low + half * (1.0 + mean_unit), half * math.sqrt(sample_var / n)
        if method == "ems":
            fit = ems(counts, self._probabilities, tol=tol, max_iter=max_iter)
            return NumericEstimate(readonly(fit.frequency), None, method, n, log_likelihood=fit.log_likelihood,
                                   iterations=fit.iterations, variance=variance,
                                   value_mean=value_mean, value_std_error=value_std_error, low=self.low,
                                   high=self.high)
        return NumericEstimate(readonly(freq), None, method, n, std_error=std, variance=variance,
                               value_mean=value_mean, value_std_error=value_std_error, low=self.low, high=self.high)

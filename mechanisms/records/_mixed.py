"""SMP over a record of categorical and numeric attributes (numpy only).

Each user samples one attribute ``j`` with probability ``pi_j`` (2^-48 grid, exact) and reports it
with its index at the whole budget: a categorical attribute through its frequency oracle
(:mod:`._oracles`, GRR or OUE), a numeric attribute through the ``numeric`` family's exact channel
(:class:`ldpplan.mechanisms.numeric.NumericChannel`: randomized rounding to the input grid, then an
output cell drawn from integer numerators over ``2^48``). One copy of every kernel: this module
only routes the sampled users to them.

Reports: ``attribute`` (int64, the sampled index) and ``a<j>`` per attribute (categorical as in
:mod:`.runtime`; numeric: int64 output cell, 0 for users who sampled another attribute).
Aggregates: ``m`` (reports per attribute, shape ``(d,)``), the support counts ``g<j>`` / ``u<j>``
of a categorical attribute and the output-cell counts ``y<j>`` of a numeric one.

Privacy: ``Pr[(j, y) | x] = pi_j Q_j(y | x_j)``, so the record's worst ratio is the largest
attribute's: GRR ``P (k-1)/(1-P)``, OUE ``(1-q)/q``, a numeric channel's ``max_y max_i N / min_i N``,
all exact rationals of the grid numbers.

References
----------
.. [1] N. Wang et al., "Collecting and Analyzing Multidimensional Data with Local Differential
   Privacy", ICDE 2019, Sec. III (PM, HM) and Sec. IV (sampling attributes).
.. [2] H. H. Arcolezi, J.-F. Couchot, B. Al Bouna, X. Xiao, CIKM 2021, Sec. 2.3 (SMP).
.. [3] T. Wang, J. Blocki, N. Li, S. Jha, USENIX Security 2017, Sec. 4 (GRR, OUE).
"""
from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from typing import Any, Sequence

import numpy as np

from .._plan import PlanError, check_claim
from .._protocol import Aggregate, Frozen, Reports, set_fields
from .._sampling import GRID, check_rng, on_grid, uniform_below
from ..numeric._channel import check_numerators, decisive_column
from ..numeric.runtime import NumericChannel
from ._oracles import exact_ratio, grid_number, perturb_attribute, support, support_counts, width
from ._privacy import exact_epsilon

__all__ = ["CategoricalPart", "MixedSampledRecord", "MeanEstimate", "MIXED_MECHANISM"]

#: the plan mechanism of SMP over a record with numeric attributes (API plans; not registered yet)
MIXED_MECHANISM = "smp-mixed"


@dataclasses.dataclass(frozen=True)
class CategoricalPart:
    """A categorical attribute of a mixed record: ``k`` values, an oracle and its budget (nats)."""

    domain_size: int
    oracle: str
    epsilon: float

    @property
    def number(self) -> float:
        """The oracle's grid number (GRR ``P`` down, OUE ``q`` up)."""
        return grid_number(self.oracle, self.epsilon, self.domain_size)


@dataclasses.dataclass(frozen=True)
class MeanEstimate:
    """A numeric attribute's mean from its ``m`` reports (user units).

    Attributes
    ----------
    mean : float
    std_error : float
        The reports' sample standard deviation over ``sqrt(m)`` (holds the users' spread too).
    m : int
        Reports of this attribute.
    interval : tuple of float
        The ``level`` normal interval ``mean -+ z std_error``.
    """

    mean: float
    std_error: float
    m: int
    interval: tuple[float, float]


def _channel_ratio(channel: NumericChannel) -> Fraction:
    table = check_numerators([list(channel.numerators[i * len(channel.output_values):(i + 1) * len(channel.output_values)])
                              for i in range(channel.domain_size)], channel.domain_size, channel.component_sizes)
    _, high, low = decisive_column(table, channel.component_weights, channel.component_sizes)
    return Fraction(high, low)


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class MixedSampledRecord(Frozen):
    """SMP over categorical and numeric attributes (module docstring).

    Parameters
    ----------
    names : sequence of str
        The ``d`` attribute names (distinct).
    parts : sequence of CategoricalPart or NumericChannel
        One per attribute.
    sampling : sequence of float
        ``pi_j``: multiples of 2^-48 in (0, 1] summing to exactly 1.
    epsilon : float
        The record's claimed epsilon (nats): refused if the exact worst ratio of the numbers exceeds it.

    Raises
    ------
    ValueError
        Inconsistent attributes or sampling; ``PlanError`` (a ``ValueError``) for a claim below what the
        numbers give (one float step included).

    References
    ----------
    Wang et al., ICDE 2019, Sec. IV; Arcolezi et al., CIKM 2021, Sec. 2.3.
    """

    mechanism = "smp"
    names: tuple[str, ...]
    parts: tuple[Any, ...]
    sampling: tuple[float, ...]
    epsilon: float
    cumulative: np.ndarray

    def __init__(self, *, names: Sequence[str], parts: Sequence[Any], sampling: Sequence[float], epsilon: float) -> None:
        d = len(names)
        if d < 1 or len(parts) != d or len(set(names)) != d:
            raise ValueError(f"names, parts: one part per attribute, distinct names (got {d} names, {len(parts)} parts)")
        for j, part in enumerate(parts):
            if not isinstance(part, (CategoricalPart, NumericChannel)):
                raise ValueError(f"parts[{j}]: must be a CategoricalPart or a NumericChannel")
            if isinstance(part, NumericChannel) and part.mechanism == "square-wave":
                raise ValueError(f"parts[{j}]: a numeric attribute estimates a mean (duchi, piecewise or hybrid)")
        pi = np.asarray(sampling, dtype=np.float64)
        if pi.shape != (d,) or not np.all((pi > 0) & (pi <= 1)) or not on_grid(pi):
            raise ValueError(f"sampling: must be {d} multiples of 2^-48 in (0, 1] (got {list(sampling)!r})")
        ints = (pi * GRID).astype(np.int64)
        if int(ints.sum()) != int(GRID):
            raise ValueError(f"sampling: must sum to exactly 1 (got {float(pi.sum())!r})")
        set_fields(self, names=tuple(str(x) for x in names), parts=tuple(parts), sampling=tuple(float(x) for x in pi),
                   epsilon=float(epsilon), cumulative=np.cumsum(ints)[:-1])
        self.cumulative.flags.writeable = False
        ratio = self.exact_ratio()
        check_claim(float(exact_epsilon(ratio)), epsilon, "guarantee.epsilon", "the record's numbers give",
                    exact=lambda: exact_epsilon(ratio))

    @classmethod
    def from_plan(cls, plan: Any) -> "MixedSampledRecord":
        """The runtime of an ``smp-mixed`` plan dict (its constructor decides the claim exactly, conservatively).

        Not a registered plan mechanism yet: ``ldpplan.load`` does not read these plans, and the plan's envelope
        and its spec are checked by the planner's ``verify_mixed`` (``planner/records/_mixed_plan.py``).

        Raises
        ------
        PlanError
            Wrong mechanism, malformed params, a categorical grid number that is not its oracle's at its
            epsilon, or numbers whose worst ratio exceeds ``guarantee.epsilon``.

        References
        ----------
        Arcolezi et al., CIKM 2021, Sec. 2.3 (SMP); Wang et al., ICDE 2019, Sec. III (the numeric channels).
        """
        if plan.get("mechanism") != MIXED_MECHANISM:
            raise PlanError(f"mechanism: must be {MIXED_MECHANISM!r} (got {plan.get('mechanism')!r})")
        p = plan["params"]
        try:
            parts: list[Any] = []
            for kind, size, oracle, number, channel, eps in zip(p["kinds"], p["domain_sizes"], p["oracles"],
                                                                p["numbers"], p["channels"], p["epsilons"], strict=True):
                if kind not in ("categorical", "numeric"):
                    raise PlanError(f"params.kinds: must be 'categorical' or 'numeric' (got {kind!r})")
                if kind == "numeric":
                    parts.append(NumericChannel(domain=int(size), mechanism=oracle, epsilon=float(eps), **channel))
                    continue
                part = CategoricalPart(int(size), oracle, float(eps))
                if part.number != number:
                    raise PlanError(f"params.numbers: must be the grid number of {oracle} at epsilon {eps!r} "
                                    f"({part.number!r}) (got {number!r})")
                parts.append(part)
            return cls(names=p["names"], parts=parts, sampling=p["sampling"], epsilon=float(plan["guarantee"]["epsilon"]))
        except (KeyError, TypeError) as exc:
            raise PlanError(f"params: malformed smp-mixed params ({exc})") from None

    def __repr__(self) -> str:
        return f"MixedSampledRecord(names={self.names!r}, sampling={self.sampling!r}, epsilon={self.epsilon!r})"

    def is_numeric(self, j: int) -> bool:
        """True when attribute ``j`` is numeric."""
        return isinstance(self.parts[j], NumericChannel)

    # ------------------------------------------------------------------ privacy
    def attribute_ratios(self) -> list[Fraction]:
        """Each attribute's worst likelihood ratio, exactly (grid numbers; numeric: the decisive column)."""
        return [_channel_ratio(p) if isinstance(p, NumericChannel) else exact_ratio(p.oracle, p.number, p.domain_size)
                for p in self.parts]

    def exact_ratio(self) -> Fraction:
        """The record's worst likelihood ratio over every pair of records: the largest attribute's."""
        return max(self.attribute_ratios())

    def privacy_map(self) -> dict[str, Any]:
        """``notion`` LDP, ``epsilon`` (the claim, checked), ``levels``: name -> the attribute's exact epsilon (up)."""
        levels = {}
        for name, ratio in zip(self.names, self.attribute_ratios()):
            value = exact_epsilon(ratio)
            out = float(value)
            levels[name] = math.nextafter(out, math.inf) if out < value else out
        return {"notion": "LDP", "epsilon": self.epsilon, "levels": levels}

    # ------------------------------------------------------------------ client
    def perturb(self, data: Any, rng: np.random.Generator) -> Reports:
        """Column ``attribute`` and ``a<j>`` per attribute.

        Parameters
        ----------
        data : array_like, shape (n, d)
            One column per attribute: integer codes in ``[0, k_j)`` (categorical) or values in user
            units (numeric, clipped to the range).
        rng : numpy.random.Generator
        """
        check_rng(rng)
        x = np.asarray(data)
        d = len(self.names)
        if x.ndim != 2 or x.shape[1] != d or (x.size and x.dtype.kind not in "iuf"):
            raise ValueError(f"data: must be numbers of shape (n, {d}), one column per attribute (got shape {x.shape})")
        n = x.shape[0]
        sampled = np.searchsorted(self.cumulative, uniform_below(rng, int(GRID), n), side="right").astype(np.int64)
        cols: dict[str, np.ndarray] = {"attribute": sampled}
        for j, part in enumerate(self.parts):
            rows = np.flatnonzero(sampled == j)
            if isinstance(part, NumericChannel):
                out = np.zeros(n, dtype=np.int64)
                out[rows] = part.perturb(x[rows, j].astype(np.float64), rng).columns["y"]
            else:
                values = x[:, j]
                if n and (not np.all(values == np.floor(values)) or values.min() < 0 or values.max() >= part.domain_size):
                    raise ValueError(f"data[:, {j}]: attribute {self.names[j]!r} needs codes in [0, {part.domain_size})")
                w = width(part.oracle, part.domain_size)
                out = np.zeros((n, w), dtype=np.uint8) if w else np.zeros(n, dtype=np.int64)
                out[rows] = perturb_attribute(part.oracle, part.number, part.domain_size,
                                              values[rows].astype(np.int64), rng)
            cols[f"a{j}"] = out
        return Reports(self.mechanism, cols)

    # ------------------------------------------------------------------ server
    def aggregate(self, reports: Reports) -> Aggregate:
        """``m`` and, per attribute, the counts of its own reports (``g<j>`` / ``u<j>`` / ``y<j>``)."""
        if not isinstance(reports, Reports) or reports.mechanism != self.mechanism or "attribute" not in reports.columns:
            raise ValueError("reports: must be Reports of mechanism 'smp' with the column 'attribute'")
        d = len(self.names)
        sampled = np.asarray(reports.columns["attribute"])
        if sampled.ndim != 1 or (sampled.size and (sampled.dtype.kind not in "iu" or sampled.min() < 0
                                                   or sampled.max() >= d)):
            raise ValueError(f"reports.attribute: must be a 1-D array of indices in [0, {d})")
        counts = {"m": np.bincount(sampled, minlength=d).astype(np.int64)}
        for j, part in enumerate(self.parts):
            y = np.asarray(reports.columns[f"a{j}"])[sampled == j]
            if isinstance(part, NumericChannel):
                counts[f"y{j}"] = part.aggregate(Reports(part.mechanism, {"y": y.astype(np.int64)})).counts["y"]
            else:
                key = f"{'g' if part.oracle == 'grr' else 'u'}{j}"
                counts[key] = support_counts(part.oracle, part.domain_size, y)
        return Aggregate(self.mechanism, int(sampled.size), counts)

    def estimate_mean(self, source: Reports | Aggregate, attribute: int | str, level: float = 0.95) -> MeanEstimate:
        """A numeric attribute's mean from its ``m_j`` reports, through its channel's estimator (user units).

        Raises
        ------
        ValueError
            Not a numeric attribute, or no report of it.
        """
        j = self.names.index(attribute) if isinstance(attribute, str) else int(attribute)
        part = self.parts[j]
        if not isinstance(part, NumericChannel):
            raise ValueError(f"attribute: {self.names[j]!r} is categorical (use estimate_frequency)")
        agg = source if isinstance(source, Aggregate) else self.aggregate(source)
        m = int(agg.counts["m"][j])
        if m < 1:
            raise ValueError(f"attribute: no user reported {self.names[j]!r}")
        est = part.estimate(Aggregate(part.mechanism, m, {"y": agg.counts[f"y{j}"]}))
        return MeanEstimate(float(est.value_mean), float(est.value_std_error), m, est.mean_interval(level))

    def estimate_frequency(self, source: Reports | Aggregate, attribute: int | str) -> np.ndarray:
        """A categorical attribute's frequencies from its ``m_j`` reports: ``(c/m_j - nu)/(mu - nu)``, shape ``(k_j,)``."""
        j = self.names.index(attribute) if isinstance(attribute, str) else int(attribute)
        part = self.parts[j]
        if isinstance(part, NumericChannel):
            raise ValueError(f"attribute: {self.names[j]!r} is numeric (use estimate_mean)")
        agg = source if isinstance(source, Aggregate) else self.aggregate(source)
        m = int(agg.counts["m"][j])
        if m < 1:
            raise ValueError(f"attribute: no user reported {self.names[j]!r}")
        mu, nu = support(part.oracle, part.number, part.domain_size)
        counts = agg.counts[f"{'g' if part.oracle == 'grr' else 'u'}{j}"]
        return (counts / m - nu) / (mu - nu)

    def mean_variance_per_user(self, attribute: int | str, values: Any) -> float:
        """``n Var(mean_j)`` (user units^2) at the data ``values`` of all ``n`` users, for large ``n``:
        ``(mean_u V(x_u) + S)/pi_j - S``, ``S`` the values' population variance after clipping (module
        :mod:`ldpplan.solvers._records_numeric`)."""
        j = self.names.index(attribute) if isinstance(attribute, str) else int(attribute)
        part = self.parts[j]
        if not isinstance(part, NumericChannel):
            raise PlanError(f"attribute: {self.names[j]!r} is categorical")
        x = np.clip(np.asarray(values, dtype=np.float64), part.low, part.high)
        noise, spread = float(np.mean(part.report_variance(x))), float(np.var(x))
        return (noise + spread) / self.sampling[j] - spread

"""The shared body of the record runtimes: attributes, checks, reports, counts, estimates (numpy only).

A record has ``d`` categorical attributes; attribute ``j`` has ``k_j`` values, an oracle
(:mod:`._oracles`) and its grid number. The runtime's ``domain`` is the concatenation of the
attributes' domains: ``sum_j k_j`` labels ``"name=value"`` (attribute ``j`` occupies
``offsets[j] .. offsets[j] + k_j``), so one :class:`~.._protocol.Estimate` holds every
attribute's frequencies, concatenated in that order (use :meth:`RecordRuntime.attribute_slice`).
"""
from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Sequence

import numpy as np
import numpy.typing as npt

from .._api import domain_labels
from .._estimators import project_simplex
from .._fit import MAX_ITER, TOL, check_options
from .._intervals import FrequencyVariance, affine_variance
from .._protocol import Aggregate, Estimate, Frozen, Reports, check_method, readonly, set_fields
from .._sampling import check_rng, on_grid
from ._oracles import ORACLES, grid_number, perturb_attribute, support, support_counts, width

__all__ = ["RecordRuntime", "MAX_ATTRIBUTES", "NOTION", "column", "count_key"]

#: ``guarantee.notion`` of record plans
NOTION = "LDP"
#: the most attributes a record may have
MAX_ATTRIBUTES = 64


def column(j: int) -> str:
    """Report column of attribute ``j``: ``a<j>`` (GRR: int64 values; OUE: packed bits, uint8 (n, ceil(k/8)))."""
    return f"a{j}"


def count_key(oracle: str, j: int) -> str:
    """Aggregate count key of attribute ``j``: ``g<j>`` (GRR) or ``u<j>`` (OUE), support counts (k_j,)."""
    return f"{'g' if oracle == 'grr' else 'u'}{j}"


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class RecordRuntime(Frozen):
    """Base of :class:`SplitRecord`, :class:`SampledRecord` and :class:`RSFDRecord` (not a runtime itself)."""

    mechanism: ClassVar[str] = ""
    methods: ClassVar[tuple[str, ...]] = ("empirical", "projected")

    domain_size: int
    labels: list[str]
    names: tuple[str, ...]
    domain_sizes: tuple[int, ...]
    oracles: tuple[str, ...]
    epsilons: tuple[float, ...]
    numbers: tuple[float, ...]
    offsets: tuple[int, ...]

    def _init_record(self, domain: Sequence[str], names: Sequence[str], domain_sizes: Sequence[int],
                     oracles: Sequence[str], epsilons: Sequence[float], numbers: Sequence[float] | None) -> None:
        size, labels = domain_labels(domain, low=2)
        d = len(names)
        if labels is None:
            raise ValueError("domain: must be the labels 'name=value' of every attribute's values, concatenated")
        if not 1 <= d <= MAX_ATTRIBUTES or not (len(domain_sizes) == len(oracles) == len(epsilons) == d):
            raise ValueError(f"names: 1 .. {MAX_ATTRIBUTES} attributes, one domain size, oracle and epsilon each "
                             f"(got {d} names)")
        sizes = tuple(int(k) for k in domain_sizes)
        if any(k < 2 for k in sizes) or sum(sizes) != size or len(set(names)) != d:
            raise ValueError(f"domain_sizes: must be >= 2 each, distinct names, summing to the {size} labels "
                             f"(got {list(domain_sizes)!r})")
        offsets = tuple(int(x) for x in np.concatenate([[0], np.cumsum(sizes)[:-1]]))
        for j, (name, off, k) in enumerate(zip(names, offsets, sizes)):
            if not all(label.startswith(f"{name}=") for label in labels[off:off + k]):
                raise ValueError(f"domain: labels {off} .. {off + k - 1} must start with '{name}=' (attribute {j})")
        if any(o not in ORACLES for o in oracles):
            raise ValueError(f"oracles: must be one of {list(ORACLES)} each (got {list(oracles)!r})")
        if not all(np.isfinite(e) and e > 0 for e in epsilons):
            raise ValueError(f"epsilons: must be finite numbers > 0 (got {list(epsilons)!r})")
        expected = tuple(grid_number(o, float(e), k) for o, e, k in zip(oracles, epsilons, sizes))
        if numbers is not None and tuple(float(x) for x in numbers) != expected:
            raise ValueError(f"numbers: must be the 2^-48 grid rounding of each oracle's probability at its epsilon "
                             f"(GRR P down, OUE q up): {list(expected)!r} (got {list(numbers)!r})")
        for o, x, k, name in zip(oracles, expected, sizes, names):
            mu, nu = support(o, x, k)
            if not (on_grid(x) and 0 < x < 1 and mu > nu):
                raise ValueError(f"epsilons: too small for the 2^-48 grid at attribute {name!r}")
        set_fields(self, domain_size=size, labels=labels, names=tuple(str(x) for x in names), domain_sizes=sizes,
                   oracles=tuple(oracles), epsilons=tuple(float(e) for e in epsilons), numbers=expected,
                   offsets=offsets)

    def attribute_slice(self, j: int) -> slice:
        """The entries of attribute ``j`` in the concatenated domain (estimates, labels)."""
        return slice(self.offsets[j], self.offsets[j] + self.domain_sizes[j])

    def attribute_labels(self, j: int) -> list[str]:
        """Attribute ``j``'s value labels (the domain's labels without the ``name=`` prefix)."""
        cut = len(self.names[j]) + 1
        return [label[cut:] for label in self.labels[self.attribute_slice(j)]]

    def _repr_fields(self) -> str:
        return (f"names={self.names!r}, domain_sizes={self.domain_sizes!r}, oracles={self.oracles!r}, "
                f"epsilons={self.epsilons!r}")

    # ------------------------------------------------------------------ client
    def _records(self, data: Any) -> np.ndarray:
        """``data`` as int64 codes of shape ``(n, d)``, every column in ``[0, k_j)``."""
        x = np.asarray(data)
        d = len(self.names)
        if x.ndim != 2 or x.shape[1] != d or (x.size and x.dtype.kind not in "iu"):
            raise ValueError(f"data: must be integer codes of shape (n, {d}), one column per attribute "
                             f"(got {x.dtype}, shape {x.shape})")
        x = x.astype(np.int64, copy=False)
        for j, k in enumerate(self.domain_sizes):
            if x.shape[0] and (int(x[:, j].min()) < 0 or int(x[:, j].max()) >= k):
                raise ValueError(f"data[:, {j}]: attribute {self.names[j]!r} needs codes in [0, {k})")
        return x

    def _attribute_reports(self, j: int, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        check_rng(rng)
        return perturb_attribute(self.oracles[j], self.numbers[j], self.domain_sizes[j], x, rng)

    def _empty_column(self, j: int, n: int) -> np.ndarray:
        w = width(self.oracles[j], self.domain_sizes[j])
        return np.zeros((n, w), dtype=np.uint8) if w else np.zeros(n, dtype=np.int64)

    # ------------------------------------------------------------------ server
    def _column(self, reports: Any, j: int) -> np.ndarray:
        """Attribute ``j``'s report column, checked (dtype, shape, range)."""
        if not isinstance(reports, Reports) or reports.mechanism != self.mechanism:
            got = reports.mechanism if isinstance(reports, Reports) else type(reports).__name__
            raise ValueError(f"reports: must be Reports of mechanism {self.mechanism!r} (got {got!r})")
        name = column(j)
        if name not in reports.columns:
            raise ValueError(f"reports.{name}: required column is missing (columns: {sorted(reports.columns)})")
        y = np.asarray(reports.columns[name])
        k, w = self.domain_sizes[j], width(self.oracles[j], self.domain_sizes[j])
        if w:
            if y.dtype != np.uint8 or y.ndim != 2 or y.shape[1] != w:
                raise ValueError(f"reports.{name}: must be packed bits, uint8 of shape (n, {w}) "
                                 f"(got {y.dtype}, shape {y.shape})")
            if k % 8 and y.size and np.any(y[:, -1] >> (k % 8)):
                raise ValueError(f"reports.{name}: padding bits past the {k} values must be 0")
            return y
        if y.ndim != 1 or (y.size and y.dtype.kind not in "iu"):
            raise ValueError(f"reports.{name}: must be a 1-D integer array (got {y.dtype}, shape {y.shape})")
        y = y.astype(np.int64, copy=False)
        if y.size and (int(y.min()) < 0 or int(y.max()) >= k):
            raise ValueError(f"reports.{name}: must be values in [0, {k})")
        return y

    def _support(self, j: int, y: np.ndarray) -> np.ndarray:
        return support_counts(self.oracles[j], self.domain_sizes[j], y)

    def _aggregate_of(self, source: Any) -> Aggregate:
        if isinstance(source, Aggregate):
            if source.mechanism != self.mechanism:
                raise ValueError(f"aggregate.mechanism: must be {self.mechanism!r} (got {source.mechanism!r})")
            want = set(self._count_shapes())
            if set(source.counts) != want:
                raise ValueError(f"aggregate.counts: must have the keys {sorted(want)} (got {sorted(source.counts)})")
            for key, shape in self._count_shapes().items():
                if source.counts[key].shape != shape:
                    raise ValueError(f"aggregate.counts.{key}: must have shape {shape}")
            agg = source
        else:
            agg = self.aggregate(source)
        if agg.n < 1:
            raise ValueError("aggregate.n: needs at least one report to estimate")
        return agg

    def aggregate(self, reports: Any) -> Aggregate:
        """The reports' sufficient statistics (each scheme's class)."""
        raise NotImplementedError

    def _count_shapes(self) -> dict[str, tuple[int, ...]]:
        return {count_key(o, j): (k,) for j, (o, k) in enumerate(zip(self.oracles, self.domain_sizes))}

    def _linear(self, j: int) -> tuple[float, float]:
        """``(mu, nu)`` of attribute ``j``'s report supporting a value (holder, non-holder)."""
        return support(self.oracles[j], self.numbers[j], self.domain_sizes[j])

    def _finish(self, unbiased: np.ndarray, c0: np.ndarray, c1: np.ndarray, c2: np.ndarray, n: int,
                method: str | None, tol: float, max_iter: int, source: str) -> Estimate:
        """The :class:`Estimate` of the concatenated unbiased estimate and its variance ``n Var = c0 + c1 f + c2 f^2``."""
        method = check_method(method, self.methods)
        check_options(tol, max_iter)  # the runtime API's options; the estimators here are exact
        clipped = np.clip(unbiased, 0.0, 1.0)
        std = np.sqrt(np.maximum(c0 + c1 * clipped + c2 * clipped * clipped, 0.0) / n)
        freq = unbiased
        if method == "projected":
            freq = np.concatenate([project_simplex(unbiased[self.attribute_slice(j)])
                                   for j in range(len(self.names))])
        var = FrequencyVariance(unbiased, c0, c1, c2, n, source=source)
        return Estimate(readonly(freq), None, method, n, std_error=std, variance=var)

    def _oracle_coefficients(self, j: int) -> tuple[np.ndarray, np.ndarray]:
        """``(c0, c1)`` of one oracle's ``m Var = c0 + c1 f`` over ``m`` reports (Wang et al. 2017, Eq. (2))."""
        mu, nu = self._linear(j)
        c0, c1 = affine_variance(nu, mu)
        k = self.domain_sizes[j]
        return np.full(k, float(c0)), np.full(k, float(c1))

    def estimate_attribute(self, reports_or_aggregate: Any, attribute: int | str, method: str | None = None, *,
                           tol: float = TOL, max_iter: int = MAX_ITER) -> Estimate:
        """One attribute's estimate (shape ``(k_j,)``), cut from :meth:`estimate` (``attribute``: index or name)."""
        j = self.names.index(attribute) if isinstance(attribute, str) else int(attribute)
        est = self.estimate(reports_or_aggregate, method, tol=tol, max_iter=max_iter)  # type: ignore[attr-defined]
        cut = self.attribute_slice(j)
        var = est.variance
        part = FrequencyVariance(var.unbiased[cut], var.c0[cut], var.c1[cut], var.c2[cut], var.n, source=var.source)
        return Estimate(est.frequency[cut], None, est.method, est.n, std_error=est.std_error[cut], variance=part)

    def variance_per_user(self, frequency: npt.ArrayLike) -> np.ndarray:
        """``n Var f_hat`` of every entry at the true concatenated frequencies (shape ``(sum_j k_j,)``)."""
        f = np.asarray(frequency, dtype=np.float64)
        c0, c1, c2 = self._expected_coefficients()
        return c0 + c1 * f + c2 * f * f

    def _expected_coefficients(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        raise NotImplementedError

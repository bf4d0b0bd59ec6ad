"""Unary-encoding machinery shared by IDUE and IDUE-PS (numpy only).

A report is ``width`` bits; bit ``k`` is 1 with probability ``a[k]`` when ``k`` is the
user's (sampled) item and ``b[k]`` otherwise (Gu et al. ICDE 2020, Sec. V-B). Reports
are packed with :func:`numpy.packbits` in **little** bit order (bit ``k`` of a row is
bit ``k % 8`` of byte ``k // 8``; padding bits are zero), one row per user, in a
:class:`UnaryReports` (column ``bits``, shape ``(n, ceil(width / 8))``, uint8). The
aggregate is an :class:`~ldpplan.mechanisms._protocol.Aggregate` with one count
array ``bit_counts`` (shape ``(width,)``): eq. (7)'s ``c_k``, the number of ones.
"""
from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Iterator, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from . import _sampling
from ._api import domain_labels
from ._fit import MAX_ITER, TOL, check_options
from ._bitkernels import bernoulli_entries, bernoulli_rows, column_sums, count_bits, grid_split, hi_tile
from ._intervals import FrequencyVariance, affine_variance
from ._protocol import (CountRule, Aggregate, Estimate, Frozen, Reports, check_method, readonly,
                        set_fields)

__all__ = ["UnaryReports", "UnaryEncoding", "COUNTS", "CHUNK_BITS", "WORKERS"]

#: Report bits (users x width) processed per chunk (~1 Mbit keeps blocks cache-friendly).
CHUNK_BITS = 1 << 20
#: Threads used to perturb (one: on the 2-core reference machine two threads were 7-8% slower, issue 11).
WORKERS = 1
#: Name of the aggregate's count array.
COUNTS = "bit_counts"


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class UnaryReports(Reports):
    """Bit-packed unary-encoding reports: one column ``bits``.

    Attributes
    ----------
    bits : ndarray of uint8, shape (n, ceil(width / 8))
        ``np.packbits(y, axis=1, bitorder="little")`` of the report vectors ``y``
        (shape ``(n, width)``), padding bits zero. Read-only.
    """

    @property
    def bits(self) -> np.ndarray:
        """The packed bits, shape (n, ceil(width / 8)), uint8."""
        return self.columns["bits"]

    @property
    def n(self) -> int:
        """Number of users (reports)."""
        return len(self)

    def unpack(self, width: int) -> np.ndarray:
        """The reports as a bool array of shape ``(n, width)``."""
        return np.unpackbits(self.bits, axis=1, count=int(width), bitorder="little").astype(bool)

    @classmethod
    def from_bool(cls, mechanism: str, y: npt.ArrayLike) -> "UnaryReports":
        """Pack a bool / 0-1 array of shape ``(n, width)``.

        Raises
        ------
        ValueError
            If ``y`` is not 2-D or holds values other than 0 and 1.
        """
        arr = np.asarray(y)
        if arr.ndim != 2 or arr.shape[1] < 1:
            raise ValueError(f"reports: must be a 2-D (n, width) array (got shape {arr.shape})")
        if arr.dtype != bool:
            if arr.dtype.kind not in "iuf":
                raise ValueError(f"reports: must hold 0/1 values (got dtype {arr.dtype})")
            bad = (arr != 0) & (arr != 1)
            if bad.any():
                raise ValueError(f"reports: must hold only 0 and 1 (got {arr[bad].flat[0]!r})")
            arr = arr != 0
        return cls(mechanism, {"bits": np.packbits(arr, axis=1, bitorder="little")})


def _n_users(n: Any, allow_zero: bool = False) -> int:
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < (0 if allow_zero else 1):
        raise ValueError(f"n: must be an integer >= {0 if allow_zero else 1} (got {n!r})")
    return int(n)


def histogram(x: npt.ArrayLike, width: int, name: str) -> np.ndarray:
    """Validate a count vector of shape ``(width,)`` (integers >= 0) and return it as int64."""
    c = np.asarray(x)
    if c.shape != (width,):
        raise ValueError(f"{name}: must have shape ({width},) (got {c.shape})")
    if c.dtype == bool or not (c.dtype.kind in "iu" or (c.dtype.kind == "f" and np.all(np.floor(c) == c))):
        raise ValueError(f"{name}: must hold integer counts (got dtype {c.dtype})")
    c = c.astype(np.int64)
    if c.size and c.min() < 0:
        raise ValueError(f"{name}: must be >= 0 (got {int(c.min())})")
    return c


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class UnaryEncoding(Frozen):
    """Perturbation, aggregation and the eq. (7)/(8) estimator shared by IDUE and IDUE-PS.

    Attributes
    ----------
    mechanism : str
    domain_size : int
        ``m``, the number of real items.
    labels : list of str or None
    width : int
        Report length in bits (``m``, or ``m + L`` for IDUE-PS).
    a, b, epsilon : ndarray of float64, shape (width,)
        Per-bit probabilities (multiples of 2^-48) and budgets (nats). Read-only.
    padding_length : int or None
    methods : tuple of str
        ``("empirical",)``: eq. (7), the paper's unbiased estimator.

    Parameters
    ----------
    domain : int or sequence of str
        The ``m`` real items: their number, or their distinct labels (keyword-only, like every
        parameter: the one runtime API, ``docs/ARCHITECTURE.md``).
    a, b, epsilon : array_like, shape (width,)
        Per-bit probabilities (multiples of 2^-48, ``0 < b < a < 1``) and budgets (nats).
    padding_length : int or None
    level_names : sequence of str
    privacy : mapping, optional
        The privacy map (``from_plan`` computes it from the numbers; direct construction is
        for trusted code such as baselines in simulations).

    Raises
    ------
    ValueError
        A malformed ``domain``, shapes differ, or probabilities off the grid or not ``0 < b < a < 1``.
    """

    MECHANISM: ClassVar[str] = ""
    methods: ClassVar[tuple[str, ...]] = ("empirical",)
    #: each report sets each bit at most once
    count_rule: ClassVar[CountRule] = CountRule(at_most_n=((COUNTS,),))

    mechanism: str
    labels: list[str] | None
    domain_size: int
    m: int
    width: int
    a: np.ndarray
    b: np.ndarray
    epsilon: np.ndarray
    padding_length: int | None
    level_names: tuple[str, ...]
    _privacy: dict[str, Any]
    _nbytes: int

    def __init__(self, *, domain: int | Sequence[str], a: npt.ArrayLike, b: npt.ArrayLike, epsilon: npt.ArrayLike,
                 padding_length: int | None = None,
                 level_names: Sequence[str] = (), privacy: Mapping[str, Any] | None = None) -> None:
        domain_size, labels = domain_labels(domain)
        a = readonly(np.array(a, dtype=np.float64))
        b = readonly(np.array(b, dtype=np.float64))
        eps = readonly(np.array(epsilon, dtype=np.float64))
        width = int(a.shape[0])
        if b.shape != (width,) or eps.shape != (width,):
            raise ValueError("a, b and epsilon must have the same length")
        if not (_sampling.on_grid(a) and _sampling.on_grid(b) and np.all((0 < b) & (b < a) & (a < 1))):
            raise ValueError("a and b must be multiples of 2**-48 with 0 < b < a < 1")
        set_fields(self, mechanism=self.MECHANISM, labels=None if labels is None else list(labels),
                   domain_size=int(domain_size), m=int(domain_size), width=width, a=a, b=b, epsilon=eps,
                   padding_length=padding_length, level_names=tuple(level_names),
                   _privacy=dict(privacy or {}), _nbytes=(width + 7) // 8)

    def __repr__(self) -> str:
        extra = f", padding_length={self.padding_length}" if self.padding_length is not None else ""
        return (f"{type(self).__name__}(domain_size={self.domain_size}, width={self.width}, "
                f"levels={list(self.level_names)}{extra})")

    @property
    def items(self) -> list:
        """Item names in index order: the labels, or ``0 .. m-1`` for a count domain."""
        return list(self.labels) if self.labels is not None else list(range(self.m))

    def privacy_map(self) -> dict[str, Any]:
        """The guarantee this object's numbers give (computed at load; see ``privacy_map`` in the module)."""
        return dict(self._privacy)

    # ---------------------------------------------------------------- validation helpers

    def _chunk_rows(self, chunk_size: int | None) -> int:
        if chunk_size is None:
            return max(1, CHUNK_BITS // self.width)
        if isinstance(chunk_size, (bool, np.bool_)) or not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1:
            raise ValueError(f"chunk_size: must be an integer >= 1 (got {chunk_size!r})")
        return int(chunk_size)

    @staticmethod
    def _indices(x: npt.ArrayLike, name: str, high: int) -> np.ndarray:
        arr = np.asarray(x)
        if arr.ndim != 1:
            raise ValueError(f"{name}: must be a 1-D array of item indices (got shape {arr.shape})")
        if arr.size == 0:
            return np.zeros(0, dtype=np.int64)
        if arr.dtype == bool or arr.dtype.kind not in "iu":
            raise TypeError(f"{name}: must hold integer item indices (got dtype {arr.dtype})")
        arr = arr.astype(np.int64, copy=False)
        bad = (arr < 0) | (arr >= high)
        if bad.any():
            pos = int(np.argmax(bad))
            raise ValueError(f"{name}[{pos}] = {int(arr[pos])} is outside [0, {high})")
        return arr

    # ---------------------------------------------------------------- perturbation core

    def _perturbed_chunks(self, sampled: np.ndarray, rng: np.random.Generator,
                          rows: int) -> Iterator[tuple[int, np.ndarray]]:
        """Yield ``(start, y)``: bool reports (rows, width) of users ``start:start+rows``.

        One thread, one stream (threads were slower than one on the 2-core reference
        machine, issue 11). Per chunk, in this order: the non-holder bits
        (:func:`bernoulli_rows`: ``rows * width`` uniform bytes, then one 40-bit
        refinement per tie in row-major order), then the holder bits
        (:func:`bernoulli_entries` with ``a[item]``), which replace column ``item`` of
        each row. Exact on the 2^-48 grid; the output is a deterministic function of
        ``rng``'s state and the chunk size.
        """
        hi_b, lo_b = grid_split(self.b)
        hi_a, lo_a = grid_split(self.a)
        scratch = np.empty(min(rows, sampled.shape[0]) * hi_b.shape[0], dtype=bool)
        tile = hi_tile(hi_b, min(rows, sampled.shape[0]))
        for start in range(0, sampled.shape[0], rows):
            idx = sampled[start:start + rows]
            y = bernoulli_rows(rng, hi_b, lo_b, idx.shape[0], tile, scratch)
            y[np.arange(idx.shape[0]), idx] = bernoulli_entries(rng, hi_a[idx], lo_a[idx])
            yield start, y

    def _perturb_indices(self, sampled: np.ndarray, rng: np.random.Generator, chunk_size: int | None) -> UnaryReports:
        rows = self._chunk_rows(chunk_size)
        out = np.empty((sampled.shape[0], self._nbytes), dtype=np.uint8)
        for start, y in self._perturbed_chunks(sampled, rng, rows):
            out[start:start + y.shape[0]] = np.packbits(y, axis=1, bitorder="little")
        return UnaryReports(self.mechanism, {"bits": out})

    def _collect_indices(self, sampled: np.ndarray, rng: np.random.Generator, chunk_size: int | None) -> Aggregate:
        rows = self._chunk_rows(chunk_size)
        counts = np.zeros(self.width, dtype=np.int64)
        for _, y in self._perturbed_chunks(sampled, rng, rows):
            counts += column_sums(y.view(np.uint8))
        return Aggregate(self.mechanism, int(sampled.shape[0]), {COUNTS: counts})

    def _binomial_counts(self, c: np.ndarray, n: int, rng: np.random.Generator) -> Aggregate:
        counts = rng.binomial(c, self.a) + rng.binomial(n - c, self.b)
        return Aggregate(self.mechanism, n, {COUNTS: counts.astype(np.int64)})

    # ---------------------------------------------------------------- server side

    def aggregate(self, reports: Any) -> Aggregate:
        """Count the ones per bit (eq. 7's ``c_k``) over all reports.

        Parameters
        ----------
        reports : UnaryReports (or any Reports with a ``bits`` column), or array_like of
            bool / 0-1 of shape (n, width)

        Returns
        -------
        Aggregate
            ``counts["bit_counts"]``: shape (width,) int64 counts of users; ``n``.

        Raises
        ------
        ValueError
            Naming the column: ``bits`` not uint8 of shape (n, ceil(width/8)), padding bits
            set, another mechanism's reports, or a plain array that is not 0/1 of width ``width``.
        """
        if not isinstance(reports, Reports):
            arr = np.asarray(reports)
            if arr.ndim == 2 and arr.shape[1] != self.width:
                raise ValueError(f"reports: width {arr.shape[1]} does not match the plan's report width {self.width}")
            reports = UnaryReports.from_bool(self.mechanism, arr)
        if reports.mechanism != self.mechanism:
            raise ValueError(f"reports.mechanism: must be {self.mechanism!r} (got {reports.mechanism!r})")
        if set(reports.columns) != {"bits"}:
            raise ValueError(f"reports: must have exactly the column 'bits' (got {sorted(reports.columns)})")
        bits = reports["bits"]
        if bits.dtype != np.uint8 or bits.ndim != 2 or bits.shape[1] != self._nbytes:
            raise ValueError(f"reports.bits: must be uint8 of shape (n, {self._nbytes}) for {self.width} report bits "
                             f"(got {bits.dtype} {bits.shape})")
        if self.width % 8 and bits.shape[0]:
            pad = np.uint8((0xFF << (self.width % 8)) & 0xFF)
            if np.any(bits[:, -1] & pad):
                raise ValueError(f"reports.bits: padding bits beyond bit {self.width - 1} must be zero")
        counts = count_bits(bits, self.width)
        return Aggregate(self.mechanism, int(bits.shape[0]), {COUNTS: counts})

    def _as_aggregate(self, reports_or_aggregate: Any) -> Aggregate:
        if not isinstance(reports_or_aggregate, Aggregate):
            return self.aggregate(reports_or_aggregate)
        agg = reports_or_aggregate
        if agg.mechanism != self.mechanism:
            raise ValueError(f"aggregate.mechanism: must be {self.mechanism!r} (got {agg.mechanism!r})")
        if set(agg.counts) != {COUNTS}:
            raise ValueError(f"aggregate.counts: must have exactly {COUNTS!r} (got {sorted(agg.counts)})")
        c = agg[COUNTS]
        if c.shape != (self.width,):
            raise ValueError(f"aggregate.counts.{COUNTS}: must have shape ({self.width},) (got {c.shape})")
        if c.size and c.max() > agg.n:
            raise ValueError(f"aggregate.counts.{COUNTS}: counts must be <= n = {agg.n} (got {int(c.max())})")
        return agg

    def _coefficients(self) -> tuple[np.ndarray, np.ndarray]:
        """eq. (8) per real item: ``Var[c_hat_k] = n coef_n + c_k coef_c``."""
        a, b = self.a[: self.m], self.b[: self.m]
        return b * (1 - b) / (a - b) ** 2, (1 - a - b) / (a - b)

    def _scale(self) -> float:
        return float(self.padding_length or 1)

    def variance(self, freq: npt.ArrayLike, n: int) -> np.ndarray:
        """Variance of each frequency estimate: ``s^2`` times eq. (8) over ``n^2`` (``s`` = L or 1).

        ``s^2 (b_k (1-b_k)/(a_k-b_k)^2 + f_k (1-a_k-b_k)/(a_k-b_k)) / n`` where ``f_k`` is
        the frequency of the (sampled) item ``k``.

        Parameters
        ----------
        freq : array_like of float, shape (m,)
            True (IDUE) or sampled-item (IDUE-PS) frequencies in [0, 1].
        n : int
            Number of users (>= 1).

        Returns
        -------
        ndarray of float64, shape (m,)
            Frequency^2 units.

        Raises
        ------
        ValueError
            Wrong shape, a frequency outside [0, 1] or NaN, or ``n < 1``.

        References
        ----------
        Gu et al., ICDE 2020, eq. (8).
        """
        f = np.asarray(freq, dtype=np.float64)
        if f.shape != (self.m,):
            raise ValueError(f"freq: must have shape ({self.m},) (got {f.shape})")
        if not np.all((f >= 0) & (f <= 1)):
            raise ValueError("freq: must hold frequencies in [0, 1]")
        n = _n_users(n)
        coef_n, coef_c = self._coefficients()
        s = self._scale()
        return s * s * (coef_n + f * coef_c) / n

    def estimate(self, reports_or_aggregate: Any, method: str | None = None, *, tol: float = TOL,
                 max_iter: int = MAX_ITER) -> Estimate:
        """Item frequencies by eq. (7): ``s (c_k / n - b_k) / (a_k - b_k)`` (``s`` = L for IDUE-PS, else 1).

        Parameters
        ----------
        reports_or_aggregate : UnaryReports, Aggregate, or array_like (n, width) of 0/1
        method : {"empirical"} or None
        tol, max_iter : float, int
            The runtime's estimator options (``docs/ARCHITECTURE.md``), checked and unused: eq. (7)
            is a closed form.

        Returns
        -------
        Estimate
            ``frequency`` (m,) fractions of users (unbiased, not clipped; counts are
            ``n * frequency``); ``std_error`` (m,) the square root of eq. (8) at the
            estimate clipped to [0, 1] (IDUE-PS: at the implied sampled-item frequency
            ``frequency / L``), same unit.

        Raises
        ------
        ValueError
            Unknown method, malformed reports/aggregate (naming the column), or ``n == 0``.

        References
        ----------
        Gu et al., ICDE 2020, eq. (7) and (8); Sec. VI-B (IDUE-PS scaling by L).
        """
        method = check_method(method, self.methods)
        check_options(tol, max_iter)
        agg = self._as_aggregate(reports_or_aggregate)
        if agg.n < 1:
            raise ValueError("reports: at least one user's report is needed to estimate frequencies")
        a, b = self.a[: self.m], self.b[: self.m]
        c = agg[COUNTS][: self.m].astype(np.float64)
        s = self._scale()
        freq = s * (c / agg.n - b) / (a - b)
        se = np.sqrt(self.variance(np.clip(freq / s, 0.0, 1.0), agg.n))
        sampling = self.padding_length is not None
        c0, c1 = affine_variance(b, a, s, sampling=sampling)
        var = FrequencyVariance(freq, c0, c1, 0.0, agg.n, source="ID-LDP eq. (8)" + (
            " plus the item-sampling variance (Sec. VI-B; sets of at most L items)" if sampling else ""))
        return Estimate(frequency=freq, mean=None, method=method, n=agg.n, std_error=se, variance=var)

"""Client/server runtime of IDUE and IDUE-PS (numpy only).

Gu, Li, Xiong & Cao, "Providing Input-Discriminative Protection for Local
Differential Privacy", ICDE 2020:

* **IDUE** (Sec. V-B): input-discriminative unary encoding. A user holding item
  ``x`` sends ``m`` bits; bit ``x`` is 1 with probability ``a[x]``, every other
  bit ``k`` is 1 with probability ``b[k]``. The server counts the ones per bit,
  ``c_k``, and uses the unbiased estimator of eq. (7),
  ``c_hat_k = (c_k - n b_k) / (a_k - b_k)``, whose variance is eq. (8).
* **IDUE-PS** (Sec. VI, Algorithms 1-2): for item *sets*. Each user pads her set
  with dummy items (or truncates it) to the padding length ``L`` and samples one
  item of the padded set (padding-and-sampling, Algorithm 1); the sampled item,
  in the extended domain of ``m + L`` items (the last ``L`` are the dummies, with
  privacy budget ``epsilon* = min(E)`` and probabilities ``a*``, ``b*``), is then
  perturbed as in IDUE (Algorithm 2). The estimator is ``L`` times eq. (7).

Every estimate is a **frequency** (a fraction of the ``n`` users); counts are
``n * freq``. All probabilities in a plan are multiples of ``2**-48`` and are
sampled exactly (:mod:`mechanisms._sampling`), so the realised output
distribution is exactly the one the planner verified.

Reports are bit-packed (:func:`numpy.packbits`, big bit order, one row per user)
in a :class:`UnaryReports`; aggregated reports are :class:`UnaryCounts`.
"""
from __future__ import annotations

import dataclasses
import math
import os
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from . import _sampling
from ._plan import PlanError, read_plan, require

__all__ = ["IDUE", "IDUEPS", "UnaryReports", "UnaryCounts"]

#: Default number of report bits (users x width) processed per chunk; ~1 Mbit keeps
#: the working set (uniforms + comparisons) in cache-friendly blocks of a few MB.
CHUNK_BITS = 1 << 20
#: Threads used to perturb chunks of users (numpy releases the GIL while sampling).
WORKERS = min(2, os.cpu_count() or 1)

# bit k (big order) of each byte value: row v is np.unpackbits(uint8(v)), shape (256, 8)
_BYTE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).astype(np.int64)


# --------------------------------------------------------------------------- reports


@dataclasses.dataclass(frozen=True)
class UnaryReports:
    """Bit-packed unary-encoding reports, one row per user.

    Attributes
    ----------
    bits : ndarray of uint8, shape (n, ceil(width / 8))
        ``np.packbits(y, axis=1)`` of the users' report vectors ``y`` (shape
        ``(n, width)``, big bit order, padding bits zero). Read-only.
    width : int
        Report length in bits: ``m`` for IDUE, ``m + L`` for IDUE-PS.

    Raises
    ------
    ValueError
        If ``bits`` is not a 2-D uint8 array with ``ceil(width / 8)`` columns.
    """

    bits: np.ndarray
    width: int

    def __post_init__(self) -> None:
        width = int(self.width)
        if width < 1:
            raise ValueError(f"width must be >= 1 (got {self.width})")
        bits = np.asarray(self.bits)
        if bits.dtype != np.uint8 or bits.ndim != 2 or bits.shape[1] != (width + 7) // 8:
            raise ValueError(
                f"bits must be a uint8 array of shape (n, {(width + 7) // 8}) for width {width} "
                f"(got {bits.dtype} {bits.shape})"
            )
        bits = bits.view()  # read-only view; the caller's array keeps its flags
        bits.setflags(write=False)
        object.__setattr__(self, "bits", bits)
        object.__setattr__(self, "width", width)

    @property
    def n(self) -> int:
        """Number of users (reports)."""
        return int(self.bits.shape[0])

    def unpack(self) -> np.ndarray:
        """The reports as a bool array of shape ``(n, width)``."""
        return np.unpackbits(self.bits, axis=1, count=self.width).astype(bool)

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Arrays for ``np.savez``: ``{"bits": (n, ceil(width/8)) uint8, "width": int64 scalar}``."""
        return {"bits": np.ascontiguousarray(self.bits), "width": np.int64(self.width)}

    @classmethod
    def from_arrays(cls, arrays) -> "UnaryReports":
        """Inverse of :meth:`to_arrays` (e.g. an ``np.load``-ed ``.npz``).

        Raises
        ------
        ValueError
            If ``bits`` or ``width`` is missing or they do not fit together.
        """
        try:
            bits, width = arrays["bits"], arrays["width"]
        except KeyError as exc:
            raise ValueError(f"reports: array {exc.args[0]!r} is missing (need 'bits' and 'width')") from None
        width = np.asarray(width)
        if width.shape != () or not np.issubdtype(width.dtype, np.integer):
            raise ValueError(f"reports: 'width' must be an integer scalar (got {width!r})")
        return cls(np.asarray(bits), int(width))

    @classmethod
    def from_bool(cls, y) -> "UnaryReports":
        """Pack a bool / 0-1 array of shape ``(n, width)``.

        Raises
        ------
        ValueError
            If ``y`` is not 2-D or holds values other than 0 and 1.
        """
        arr = np.asarray(y)
        if arr.ndim != 2 or arr.shape[1] < 1:
            raise ValueError(f"reports must be a 2-D (n, width) array (got shape {arr.shape})")
        if arr.dtype != bool:
            if not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
                raise ValueError(f"reports must hold 0/1 values (got dtype {arr.dtype})")
            bad = (arr != 0) & (arr != 1)
            if bad.any():
                raise ValueError(f"reports must hold only 0 and 1 (got {arr[bad].flat[0]!r})")
            arr = arr != 0
        return cls(np.packbits(arr, axis=1), arr.shape[1])


@dataclasses.dataclass(frozen=True)
class UnaryCounts:
    """Aggregated unary-encoding reports: the number of ones per bit.

    Attributes
    ----------
    counts : ndarray of int64, shape (width,)
        ``c_k = sum_u y_u[k]`` (eq. 7's ``c_i``), a count of users. Read-only.
    n : int
        Number of users aggregated.

    Raises
    ------
    ValueError
        If ``counts`` is not 1-D, not integral, or outside ``[0, n]``.
    """

    counts: np.ndarray
    n: int

    def __post_init__(self) -> None:
        raw = np.asarray(self.counts)
        if raw.ndim != 1 or raw.size < 1:
            raise ValueError(f"counts must be a non-empty 1-D array (got shape {raw.shape})")
        if not np.issubdtype(raw.dtype, np.integer):
            if not (np.issubdtype(raw.dtype, np.floating) and np.all(np.floor(raw) == raw)):
                raise ValueError(f"counts must be integers (got dtype {raw.dtype})")
        counts = raw.astype(np.int64)
        n = int(self.n)
        if n < 0 or counts.min() < 0 or counts.max() > n:
            raise ValueError(f"counts must lie in [0, n] with n = {n} >= 0 (got range [{counts.min()}, {counts.max()}])")
        counts.setflags(write=False)
        object.__setattr__(self, "counts", counts)
        object.__setattr__(self, "n", n)

    @property
    def width(self) -> int:
        """Report length in bits."""
        return int(self.counts.shape[0])

    def __add__(self, other: "UnaryCounts") -> "UnaryCounts":
        """Merge the aggregates of two disjoint groups of users (same width)."""
        if not isinstance(other, UnaryCounts):
            return NotImplemented
        if other.width != self.width:
            raise ValueError(f"cannot add counts of width {self.width} and {other.width}")
        return UnaryCounts(self.counts + other.counts, self.n + other.n)


# --------------------------------------------------------------------------- plan parsing


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _probability_pair(node: Mapping[str, Any], where: str) -> tuple[float, float]:
    """Read ``a`` and ``b`` of a level (or the dummy items) and check 0 < b < a < 1 on the grid."""
    vals = []
    for key in ("a", "b"):
        field = f"{where}.{key}"
        if key not in node:
            raise PlanError(f"{field}: required field is missing from the plan")
        v = node[key]
        if not _is_number(v) or not math.isfinite(v):
            raise PlanError(f"{field}: must be a finite number (got {v!r})")
        if not _sampling.on_grid(float(v)):
            raise PlanError(f"{field}: must be a probability that is a multiple of 2**-48 (got {v!r})")
        vals.append(float(v))
    a, b = vals
    if not (0.0 < b < a < 1.0):
        raise PlanError(f"{where}: unary encoding needs 0 < b < a < 1 (got a={a!r}, b={b!r})")
    return a, b


def _epsilon(node: Mapping[str, Any], where: str) -> float:
    field = f"{where}.epsilon"
    if "epsilon" not in node:
        raise PlanError(f"{field}: required field is missing from the plan")
    v = node["epsilon"]
    if not _is_number(v) or not math.isfinite(v) or v <= 0:
        raise PlanError(f"{field}: must be a finite number > 0 (got {v!r})")
    return float(v)


def _parse_levels(plan: Mapping[str, Any]) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """Item labels and per-item ``a``, ``b``, ``epsilon`` (index order of ``plan["items"]``)."""
    items = require(plan, "items")
    if not isinstance(items, list) or not items:
        raise PlanError(f"items: must be a non-empty list of item labels (got {type(items).__name__})")
    index: dict[str, int] = {}
    for k, label in enumerate(items):
        if not isinstance(label, str):
            raise PlanError(f"items[{k}]: item labels must be strings (got {label!r})")
        if label in index:
            raise PlanError(f"items[{k}]: item label {label!r} appears twice")
        index[label] = k
    levels = require(plan, "params.levels")
    if not isinstance(levels, list) or not levels:
        raise PlanError("params.levels: must be a non-empty list of levels")
    m = len(items)
    a = np.full(m, np.nan)
    b = np.full(m, np.nan)
    eps = np.full(m, np.nan)
    owner: dict[int, int] = {}
    for j, level in enumerate(levels):
        where = f"params.levels[{j}]"
        if not isinstance(level, Mapping):
            raise PlanError(f"{where}: must be an object")
        e = _epsilon(level, where)
        aj, bj = _probability_pair(level, where)
        labels = level.get("items")
        if not isinstance(labels, list) or not labels:
            raise PlanError(f"{where}.items: must be a non-empty list of item labels (got {labels!r})")
        size = level.get("size")
        if not isinstance(size, int) or isinstance(size, bool) or size != len(labels):
            raise PlanError(f"{where}.size: must equal the number of the level's items, {len(labels)} (got {size!r})")
        for label in labels:
            if not isinstance(label, str) or label not in index:
                raise PlanError(f"{where}.items: {label!r} is not one of the plan's items")
            k = index[label]
            if k in owner:
                raise PlanError(f"{where}.items: item {label!r} is already in params.levels[{owner[k]}]")
            owner[k] = j
            a[k], b[k], eps[k] = aj, bj, e
    if len(owner) != m:
        missing = next(label for k, label in enumerate(items) if k not in owner)
        raise PlanError(f"params.levels: item {missing!r} is in no level (every item needs exactly one)")
    return list(items), a, b, eps


def _readonly(x: np.ndarray) -> np.ndarray:
    x = np.array(x, dtype=np.float64)
    x.setflags(write=False)
    return x


# --------------------------------------------------------------------------- shared machinery


class _UnaryEncoding:
    """Perturbation, aggregation and estimation shared by IDUE and IDUE-PS."""

    MECHANISM = ""

    def __init__(self, items: Sequence[str], a, b, epsilon, padding_length: int | None) -> None:
        self.items: list[str] = list(items)
        self.m: int = len(self.items)
        self.a: np.ndarray = _readonly(a)
        self.b: np.ndarray = _readonly(b)
        self.epsilon: np.ndarray = _readonly(epsilon)
        self.padding_length: int | None = padding_length
        self.width: int = int(self.a.shape[0])
        if self.b.shape != (self.width,) or self.epsilon.shape != (self.width,):
            raise ValueError("a, b and epsilon must have the same length")
        if not (_sampling.on_grid(self.a) and _sampling.on_grid(self.b) and np.all(self.b < self.a)):
            raise ValueError("a and b must be multiples of 2**-48 with b < a")
        self._nbytes = (self.width + 7) // 8

    def __repr__(self) -> str:
        extra = f", padding_length={self.padding_length}" if self.padding_length is not None else ""
        return f"{type(self).__name__}(m={self.m}, width={self.width}{extra})"

    # ---------------------------------------------------------------- validation helpers

    def _chunk_rows(self, chunk_size: int | None) -> int:
        if chunk_size is None:
            return max(1, CHUNK_BITS // self.width)
        if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1:
            raise ValueError(f"chunk_size must be an integer >= 1 (got {chunk_size!r})")
        return int(chunk_size)

    @staticmethod
    def _indices(x, name: str, high: int) -> np.ndarray:
        arr = np.asarray(x)
        if arr.ndim != 1:
            raise ValueError(f"{name} must be a 1-D array of item indices (got shape {arr.shape})")
        if arr.size == 0:
            return np.zeros(0, dtype=np.int64)
        if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
            raise TypeError(f"{name} must hold integer item indices (got dtype {arr.dtype})")
        arr = arr.astype(np.int64, copy=False)
        bad = (arr < 0) | (arr >= high)
        if bad.any():
            pos = int(np.argmax(bad))
            raise ValueError(f"{name}[{pos}] = {int(arr[pos])} is outside [0, {high})")
        return arr

    # ---------------------------------------------------------------- perturbation core

    def _perturbed_chunks(self, sampled: np.ndarray, rng: np.random.Generator,
                          rows: int) -> Iterator[tuple[int, np.ndarray]]:
        """Yield ``(start, y)`` with ``y`` the bool reports (rows, width) of users ``start:start+rows``.

        Non-holder bits are Bernoulli(``b[k]``) per column; the holder bit ``sampled[u]`` is
        then redrawn as Bernoulli(``a[sampled[u]]``), both exactly on the 2^-48 grid.
        Each chunk draws from its own child generator (``rng.spawn``), so chunks are
        perturbed on up to :data:`WORKERS` threads (numpy releases the GIL while sampling)
        and the result is still a deterministic function of ``rng``'s state.
        """
        n = sampled.shape[0]
        starts = list(range(0, n, rows))
        children = rng.spawn(len(starts)) if len(starts) > 1 else [rng]

        def one(k: int) -> tuple[int, np.ndarray]:
            start, g = starts[k], children[k]
            idx = sampled[start:start + rows]
            y = _sampling.bernoulli_columns(g, self.b, idx.shape[0])
            y[np.arange(idx.shape[0]), idx] = _sampling.bernoulli(g, self.a[idx])
            return start, y

        if len(starts) < 2 or WORKERS < 2:
            for k in range(len(starts)):
                yield one(k)
            return
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            # a bounded window of chunks in flight keeps memory bounded
            window = 2 * WORKERS
            futures = [pool.submit(one, k) for k in range(min(window, len(starts)))]
            for k in range(len(starts)):
                yield futures[k].result()
                futures[k] = None
                nxt = k + window
                if nxt < len(starts):
                    futures.append(pool.submit(one, nxt))

    def _perturb_indices(self, sampled: np.ndarray, rng: np.random.Generator,
                         chunk_size: int | None) -> UnaryReports:
        rows = self._chunk_rows(chunk_size)
        out = np.empty((sampled.shape[0], self._nbytes), dtype=np.uint8)
        for start, y in self._perturbed_chunks(sampled, rng, rows):
            out[start:start + y.shape[0]] = np.packbits(y, axis=1)
        return UnaryReports(out, self.width)

    def _collect_indices(self, sampled: np.ndarray, rng: np.random.Generator,
                         chunk_size: int | None) -> UnaryCounts:
        rows = self._chunk_rows(chunk_size)
        counts = np.zeros(self.width, dtype=np.int64)
        for _, y in self._perturbed_chunks(sampled, rng, rows):
            counts += np.add.reduce(y.view(np.uint8), axis=0, dtype=np.int64)
        return UnaryCounts(counts, int(sampled.shape[0]))

    # ---------------------------------------------------------------- server side

    def aggregate(self, reports) -> UnaryCounts:
        """Count the ones per bit (eq. 7's ``c_k``) over all reports.

        Parameters
        ----------
        reports : UnaryReports, UnaryCounts, or array_like of bool / 0-1, shape (n, width)

        Returns
        -------
        UnaryCounts
            ``counts`` (width,) int64 and ``n``.

        Raises
        ------
        ValueError
            If the report width differs from :attr:`width` or a plain array holds
            values other than 0/1.
        """
        if isinstance(reports, UnaryCounts):
            if reports.width != self.width:
                raise ValueError(f"reports: counts have width {reports.width}, the plan's reports have width {self.width}")
            return reports
        if not isinstance(reports, UnaryReports):
            reports = UnaryReports.from_bool(reports)
        if reports.width != self.width:
            raise ValueError(f"reports: width {reports.width} does not match the plan's report width {self.width}")
        bits = reports.bits
        nb = bits.shape[1]
        hist = np.zeros((nb, 256), dtype=np.int64)
        offsets = np.arange(nb, dtype=np.intp) * 256
        rows = max(1, (1 << 20) // nb)
        for start in range(0, bits.shape[0], rows):
            block = bits[start:start + rows] + offsets  # intp, (rows, nb)
            hist += np.bincount(block.ravel(), minlength=nb * 256).reshape(nb, 256)
        counts = (hist @ _BYTE_BITS).reshape(-1)[: self.width]
        return UnaryCounts(counts, reports.n)

    @classmethod
    def _own_levels(cls, plan):
        """Read ``plan``, check its mechanism is ``cls.MECHANISM`` and parse its levels."""
        plan = read_plan(plan)
        mech = require(plan, "mechanism")
        if mech != cls.MECHANISM:
            raise PlanError(f"mechanism: {cls.__name__} runs {cls.MECHANISM!r} plans (got {mech!r})")
        return (plan, *_parse_levels(plan))

    def _scaled_eq8(self, freq, n: int) -> np.ndarray:
        """``s**2 (b(1-b)/(a-b)**2 + f (1-a-b)/(a-b)) / n`` over the real items, ``s`` = L or 1."""
        f = _frequencies(freq, self.m)
        n = _positive_n(n)
        a, b = self.a[: self.m], self.b[: self.m]
        s = float(self.padding_length or 1)
        return s * s * (b * (1 - b) / (a - b) ** 2 + f * (1 - a - b) / (a - b)) / n

    def _eq7(self, reports) -> tuple[np.ndarray, int]:
        agg = self.aggregate(reports)
        if agg.n < 1:
            raise ValueError("reports: at least one user's report is needed to estimate frequencies")
        a, b = self.a[: self.m], self.b[: self.m]
        c = agg.counts[: self.m].astype(np.float64)
        return (c - agg.n * b) / (a - b), agg.n


class IDUE(_UnaryEncoding):
    """IDUE runtime for single-item input (Gu et al. ICDE 2020, Sec. V-B/V-C).

    Build it from a plan with :meth:`from_plan` (or :func:`mechanisms.load`).

    Attributes
    ----------
    items : list of str, length m
        Item labels; item ``k`` is ``items[k]``.
    m, width : int
        Number of items; report length in bits (``width == m``).
    a, b : ndarray of float64, shape (m,)
        Per-item probabilities (read-only): ``Pr[y[k] = 1 | x = k] = a[k]`` and
        ``Pr[y[k] = 1 | x != k] = b[k]``; multiples of 2^-48.
    epsilon : ndarray of float64, shape (m,)
        Privacy budget of each item's level, in nats.
    padding_length : None
    """

    MECHANISM = "idue"

    @classmethod
    def from_plan(cls, plan) -> "IDUE":
        """Build the runtime from a plan (path or dict) with ``mechanism == "idue"``.

        Raises
        ------
        PlanError
            Naming the field: wrong mechanism, missing or malformed ``items`` or
            ``params.levels`` (an item in no level or in two, ``size`` mismatch, a
            probability off the 2^-48 grid or not ``0 < b < a < 1``), or a non-null
            ``params.padding_length``.
        """
        plan, items, a, b, eps = cls._own_levels(plan)
        padding = require(plan, "params").get("padding_length")
        if padding is not None:
            raise PlanError(f"params.padding_length: must be null for an 'idue' plan (got {padding!r})")
        return cls(items, a, b, eps, None)

    def perturb(self, items, rng: np.random.Generator, *, chunk_size: int | None = None) -> UnaryReports:
        """Perturb each user's item with IDUE (client side, Sec. V-B).

        Bit ``k`` of user ``u``'s report is 1 with probability ``a[k]`` if
        ``items[u] == k`` and ``b[k]`` otherwise, sampled exactly.

        Parameters
        ----------
        items : array_like of int, shape (n,)
            Each user's item, an index into :attr:`items`.
        rng : numpy.random.Generator
        chunk_size : int, optional
            Users per chunk (default: about 2^20 bits per chunk). The output for a
            given ``rng`` state depends on it.

        Returns
        -------
        UnaryReports
            ``bits`` of shape (n, ceil(m / 8)).

        Raises
        ------
        TypeError
            If ``rng`` is not a Generator or ``items`` is not integral.
        ValueError
            If an item is outside ``[0, m)`` (the message names ``items[u]`` and the value).
        """
        _sampling.check_rng(rng)
        idx = self._indices(items, "items", self.m)
        return self._perturb_indices(idx, rng, chunk_size)

    def collect(self, items, rng: np.random.Generator, *, chunk_size: int | None = None) -> UnaryCounts:
        """Perturb and aggregate in one streaming pass (bounded memory).

        Never holds more than one chunk of reports: extra memory is
        ``O(chunk_size * m)`` bytes. With the same ``rng`` state and ``chunk_size``
        the result equals ``aggregate(perturb(items, rng, chunk_size=...))`` exactly.

        Parameters
        ----------
        items : array_like of int, shape (n,)
        rng : numpy.random.Generator
        chunk_size : int, optional

        Returns
        -------
        UnaryCounts

        Raises
        ------
        TypeError, ValueError
            As :meth:`perturb`.
        """
        _sampling.check_rng(rng)
        idx = self._indices(items, "items", self.m)
        return self._collect_indices(idx, rng, chunk_size)

    def estimate(self, reports) -> np.ndarray:
        """Estimated item frequencies: eq. (7) divided by ``n``.

        Parameters
        ----------
        reports : UnaryReports, UnaryCounts, or array_like of bool / 0-1, shape (n, m)

        Returns
        -------
        ndarray of float64, shape (m,)
            Unbiased frequency estimates ``(c_k / n - b_k) / (a_k - b_k)`` (may be
            negative or exceed 1; no post-processing). Counts are ``n * freq``.

        Raises
        ------
        ValueError
            Width mismatch, non 0/1 values, or ``n == 0``.
        """
        c_hat, n = self._eq7(reports)
        return c_hat / n

    def variance(self, freq, n: int) -> np.ndarray:
        """Theoretical variance of each frequency estimate: eq. (8) divided by ``n**2``.

        ``Var[freq_hat_k] = (b_k (1 - b_k) / (a_k - b_k)**2 + f_k (1 - a_k - b_k) / (a_k - b_k)) / n``.

        Parameters
        ----------
        freq : array_like of float, shape (m,)
            True item frequencies ``f_k = c*_k / n`` in [0, 1].
        n : int
            Number of users (>= 1).

        Returns
        -------
        ndarray of float64, shape (m,)
            Variances in frequency^2 units (equal to the MSE, the estimator being unbiased).

        Raises
        ------
        ValueError
            Wrong shape, a frequency outside [0, 1], or ``n < 1``.
        """
        return self._scaled_eq8(freq, n)

    def simulate_counts(self, true_counts, n: int, rng: np.random.Generator) -> UnaryCounts:
        """Sample the aggregated counts directly (exact in distribution, O(m)).

        ``counts_k ~ Binomial(c_k, a_k) + Binomial(n - c_k, b_k)``, independent over
        ``k``: the distribution of :meth:`collect`'s counts for users whose items
        have the histogram ``true_counts``.

        Parameters
        ----------
        true_counts : array_like of int, shape (m,)
            ``c_k``: number of users holding item ``k`` (sums to ``n``).
        n : int
            Number of users.
        rng : numpy.random.Generator

        Returns
        -------
        UnaryCounts

        Raises
        ------
        TypeError
            If ``rng`` is not a Generator.
        ValueError
            Wrong shape, negative or non-integral counts, or ``sum(true_counts) != n``.
        """
        _sampling.check_rng(rng)
        c = _histogram(true_counts, self.m, "true_counts")
        n = _positive_n(n, allow_zero=True)
        if int(c.sum()) != n:
            raise ValueError(f"true_counts must sum to n = {n} (each user holds one item; got {int(c.sum())})")
        counts = rng.binomial(c, self.a) + rng.binomial(n - c, self.b)
        return UnaryCounts(counts.astype(np.int64), n)


class IDUEPS(_UnaryEncoding):
    """IDUE-PS runtime for item-set input (Gu et al. ICDE 2020, Sec. VI, Algorithms 1-2).

    Reports have ``width = m + L`` bits; bits ``m .. m+L-1`` belong to the ``L``
    dummy items, whose probabilities ``a*``, ``b*`` come from ``params.dummy`` (the
    planner sets their budget to ``epsilon* = min(E)``).

    Item sets are given either as a **list** of int arrays (one per user) or as a
    CSR-like **tuple** ``(indptr, indices)``: user ``u``'s items are
    ``indices[indptr[u]:indptr[u + 1]]``; objects with ``indptr`` and ``indices``
    attributes (e.g. a scipy CSR matrix) are read the same way. A set must not
    contain an item twice; empty sets are allowed (the user reports a dummy).

    Attributes
    ----------
    items : list of str, length m
    m : int
        Number of real items.
    width : int
        ``m + L``.
    padding_length : int
        ``L >= 1``.
    a, b, epsilon : ndarray of float64, shape (m + L,)
        Per-bit probabilities and budgets (nats), dummies last. Read-only.
    """

    MECHANISM = "idue-ps"

    @classmethod
    def from_plan(cls, plan) -> "IDUEPS":
        """Build the runtime from a plan (path or dict) with ``mechanism == "idue-ps"``.

        Raises
        ------
        PlanError
            As :meth:`IDUE.from_plan`, plus a missing or invalid
            ``params.padding_length`` (integer >= 1) or ``params.dummy``
            (``epsilon``, ``a``, ``b`` with ``0 < b < a < 1`` on the grid).
        """
        plan, items, a, b, eps = cls._own_levels(plan)
        padding = require(plan, "params.padding_length")
        if isinstance(padding, bool) or not isinstance(padding, int) or padding < 1:
            raise PlanError(f"params.padding_length: must be an integer >= 1 for an 'idue-ps' plan (got {padding!r})")
        dummy = require(plan, "params.dummy")
        if not isinstance(dummy, Mapping):
            raise PlanError("params.dummy: must be an object with epsilon, a and b")
        e_star = _epsilon(dummy, "params.dummy")
        a_star, b_star = _probability_pair(dummy, "params.dummy")
        L = int(padding)
        return cls(
            items,
            np.concatenate([a, np.full(L, a_star)]),
            np.concatenate([b, np.full(L, b_star)]),
            np.concatenate([eps, np.full(L, e_star)]),
            L,
        )

    # ---------------------------------------------------------------- item sets

    def _item_sets(self, item_sets, name: str = "item_sets") -> tuple[np.ndarray, np.ndarray]:
        """Normalise item sets to a validated CSR pair ``(indptr, indices)``."""
        if hasattr(item_sets, "indptr") and hasattr(item_sets, "indices"):
            indptr, indices = item_sets.indptr, item_sets.indices
        elif isinstance(item_sets, tuple):
            if len(item_sets) != 2:
                raise ValueError(f"{name}: a tuple must be the CSR pair (indptr, indices) (got length {len(item_sets)})")
            indptr, indices = item_sets
        elif isinstance(item_sets, (list, np.ndarray)) or hasattr(item_sets, "__iter__"):
            sets = [np.asarray(s) for s in item_sets]
            for u, s in enumerate(sets):
                if s.ndim != 1:
                    raise ValueError(f"{name}[{u}] must be a 1-D array of item indices (got shape {s.shape})")
                if s.size and (s.dtype == bool or not np.issubdtype(s.dtype, np.integer)):
                    raise TypeError(f"{name}[{u}] must hold integer item indices (got dtype {s.dtype})")
            sizes = np.fromiter((s.size for s in sets), dtype=np.int64, count=len(sets))
            indptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
            indices = (np.concatenate([s.astype(np.int64) for s in sets]) if sets and indptr[-1]
                       else np.zeros(0, np.int64))
        else:
            raise TypeError(f"{name} must be a list of int arrays or a CSR pair (indptr, indices)")
        indptr = np.asarray(indptr)
        if indptr.ndim != 1 or indptr.size < 1 or (indptr.size and not np.issubdtype(indptr.dtype, np.integer)):
            raise ValueError(f"{name}: indptr must be a 1-D integer array of length n + 1 (got {indptr.dtype} {indptr.shape})")
        indptr = indptr.astype(np.int64, copy=False)
        indices = self._indices(indices, f"{name} indices", self.m)
        if indptr[0] != 0 or indptr[-1] != indices.size or np.any(np.diff(indptr) < 0):
            raise ValueError(f"{name}: indptr must start at 0, be non-decreasing and end at len(indices) = {indices.size}")
        if indices.size > 1:
            # pairs (i, i+1) inside one user's set; O(N) when sets are sorted (CSR usually is)
            same_row = np.ones(indices.size - 1, dtype=bool)
            inner = indptr[1:-1]
            same_row[inner[(inner >= 1) & (inner < indices.size)] - 1] = False
            if not np.all((indices[1:] > indices[:-1]) | ~same_row):
                rows = np.repeat(np.arange(indptr.size - 1, dtype=np.int64), np.diff(indptr))
                keys = np.sort(rows * self.m + indices)
                dup = keys[1:] == keys[:-1]
                if dup.any():
                    k = int(keys[int(np.argmax(dup))])
                    raise ValueError(f"{name}: user {k // self.m}'s set contains item {k % self.m} twice "
                                     "(item sets have no repeats)")
        return indptr, indices

    def sample_items(self, item_sets, rng: np.random.Generator) -> np.ndarray:
        """Padding-and-sampling (Algorithm 1), vectorised over users.

        User ``u`` with set ``x`` of size ``s`` draws ``j`` uniformly from
        ``{0, ..., max(s, L) - 1}``: if ``j < s`` the sampled item is ``x[j]``, else a
        uniform dummy ``m + U{0..L-1}``. Hence with ``s < L`` a real item with
        probability ``s / L`` (uniform over ``x``) and a dummy otherwise; with
        ``s >= L`` uniform over ``x`` (truncation to ``L`` items then uniform
        sampling gives each item ``1 / s``). Uniform integers are exact
        (:meth:`numpy.random.Generator.integers`).

        Parameters
        ----------
        item_sets : list of int arrays, or CSR pair (indptr (n+1,), indices)
        rng : numpy.random.Generator

        Returns
        -------
        ndarray of int64, shape (n,)
            Each user's sampled item, an index into ``[0, m + L)``.

        Raises
        ------
        TypeError
            If ``rng`` is not a Generator or indices are not integral.
        ValueError
            An index outside ``[0, m)``, a repeated item in a set, or a malformed CSR pair.
        """
        _sampling.check_rng(rng)
        indptr, indices = self._item_sets(item_sets)
        return self._sample(indptr, indices, rng)

    def _sample(self, indptr: np.ndarray, indices: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        L = self.padding_length
        sizes = np.diff(indptr)
        n = sizes.size
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        j = rng.integers(0, np.maximum(sizes, L), dtype=np.int64)
        real = j < sizes
        out = np.empty(n, dtype=np.int64)
        out[real] = indices[indptr[:-1][real] + j[real]]
        n_dummy = int(n - np.count_nonzero(real))
        out[~real] = self.m + rng.integers(0, L, size=n_dummy, dtype=np.int64)
        return out

    def sampling_probabilities(self, item_sets) -> tuple[np.ndarray, np.ndarray]:
        """Per-item sampling probabilities of Algorithm 1 summed over users.

        For user ``u`` with set ``x_u``, ``pi_uk = 1 / max(|x_u|, L)`` if ``k`` is in
        ``x_u`` and 0 otherwise (real items).

        Parameters
        ----------
        item_sets : list of int arrays, or CSR pair

        Returns
        -------
        expected : ndarray of float64, shape (m,)
            ``sum_u pi_uk / n``: the expected sampled-item frequency ``f^s_k``. The
            IDUE-PS estimate has mean ``L * f^s_k``, which equals the true set
            frequency of ``k`` when no set holding ``k`` is longer than ``L``.
        spread : ndarray of float64, shape (m,)
            ``sum_u pi_uk (1 - pi_uk) / n``: per-user variance of the sampled-item
            indicator (frequency units times ``n``).

        Raises
        ------
        ValueError
            As :meth:`sample_items`, or no users.
        """
        indptr, indices = self._item_sets(item_sets)
        n = indptr.size - 1
        if n < 1:
            raise ValueError("item_sets: at least one user is needed")
        sizes = np.diff(indptr)
        pi = 1.0 / np.maximum(sizes, self.padding_length).astype(np.float64)
        pi_each = np.repeat(pi, sizes)
        expected = np.bincount(indices, weights=pi_each, minlength=self.m) / n
        spread = np.bincount(indices, weights=pi_each * (1 - pi_each), minlength=self.m) / n
        return expected, spread

    # ---------------------------------------------------------------- client side

    def perturb(self, item_sets, rng: np.random.Generator, *, chunk_size: int | None = None) -> UnaryReports:
        """Perturb each user's item set with IDUE-PS (Algorithm 2).

        First :meth:`sample_items` (Algorithm 1), then unary encoding of the
        sampled item over ``m + L`` bits with per-bit ``a``, ``b`` (dummies use
        ``a*``, ``b*``), sampled exactly.

        Parameters
        ----------
        item_sets : list of int arrays, or CSR pair (indptr (n+1,), indices)
            Item indices in ``[0, m)``.
        rng : numpy.random.Generator
        chunk_size : int, optional
            Users per chunk.

        Returns
        -------
        UnaryReports
            ``bits`` of shape (n, ceil((m + L) / 8)).

        Raises
        ------
        TypeError, ValueError
            As :meth:`sample_items`.
        """
        _sampling.check_rng(rng)
        indptr, indices = self._item_sets(item_sets)
        return self._perturb_indices(self._sample(indptr, indices, rng), rng, chunk_size)

    def perturb_sampled(self, sampled, rng: np.random.Generator, *, chunk_size: int | None = None) -> UnaryReports:
        """Unary-encode and perturb already sampled items (Algorithm 2, steps 3-9).

        Parameters
        ----------
        sampled : array_like of int, shape (n,)
            Sampled items in ``[0, m + L)`` (e.g. from :meth:`sample_items`).
        rng : numpy.random.Generator
        chunk_size : int, optional

        Returns
        -------
        UnaryReports

        Raises
        ------
        TypeError, ValueError
            Bad ``rng``, non-integral or out-of-range ``sampled``.
        """
        _sampling.check_rng(rng)
        idx = self._indices(sampled, "sampled", self.width)
        return self._perturb_indices(idx, rng, chunk_size)

    def collect(self, item_sets, rng: np.random.Generator, *, chunk_size: int | None = None) -> UnaryCounts:
        """Sample, perturb and aggregate in one streaming pass (bounded memory).

        Extra memory is ``O(n)`` for the sampled items plus one chunk of reports.
        With the same ``rng`` state and ``chunk_size`` the result equals
        ``aggregate(perturb(item_sets, rng, chunk_size=...))`` exactly.

        Returns
        -------
        UnaryCounts
            Counts over ``m + L`` bits.

        Raises
        ------
        TypeError, ValueError
            As :meth:`perturb`.
        """
        _sampling.check_rng(rng)
        indptr, indices = self._item_sets(item_sets)
        return self._collect_indices(self._sample(indptr, indices, rng), rng, chunk_size)

    # ---------------------------------------------------------------- server side

    def estimate(self, reports) -> np.ndarray:
        """Estimated item frequencies: ``L`` times eq. (7), divided by ``n`` (Sec. VI-B).

        Parameters
        ----------
        reports : UnaryReports, UnaryCounts, or array_like of bool / 0-1, shape (n, m + L)

        Returns
        -------
        ndarray of float64, shape (m,)
            ``L * (c_k / n - b_k) / (a_k - b_k)`` for the real items (dummies are not
            estimated). Unbiased for ``L * f^s_k`` (see :meth:`sampling_probabilities`),
            i.e. for the fraction of users whose set holds ``k`` when sets are no
            longer than ``L``.

        Raises
        ------
        ValueError
            Width mismatch, non 0/1 values, or ``n == 0``.
        """
        c_hat, n = self._eq7(reports)
        return self.padding_length * c_hat / n

    def variance(self, freq, n: int) -> np.ndarray:
        """Perturbation variance of each frequency estimate: ``L**2`` times eq. (8) over ``n**2``.

        ``L**2 (b_k (1 - b_k) / (a_k - b_k)**2 + f^s_k (1 - a_k - b_k) / (a_k - b_k)) / n``,
        where ``f^s_k`` is the *sampled-item* frequency (fraction of users whose
        sampled item is ``k``). This is the exact variance given the sampled items
        (the :meth:`simulate_counts` path). The variance over both the sampling of
        Algorithm 1 and the perturbation adds ``L**2 * spread_k / n`` with
        ``spread`` from :meth:`sampling_probabilities` (and uses ``f^s = expected``).

        Parameters
        ----------
        freq : array_like of float, shape (m,)
            Sampled-item frequencies ``f^s_k`` in [0, 1].
        n : int
            Number of users (>= 1).

        Returns
        -------
        ndarray of float64, shape (m,)
            Variances in frequency^2 units.

        Raises
        ------
        ValueError
            Wrong shape, a frequency outside [0, 1], or ``n < 1``.
        """
        return self._scaled_eq8(freq, n)

    def simulate_counts(self, sampled_counts, n: int, rng: np.random.Generator) -> UnaryCounts:
        """Sample the aggregated counts directly (exact in distribution, O(m + L)).

        ``counts_k ~ Binomial(c_k, a_k) + Binomial(n - c_k, b_k)`` over the ``m + L``
        bits, where ``c_k`` is the number of users whose *sampled* item (Algorithm 1)
        is ``k``. Given only the real items' sampled counts (shape (m,)), the
        remaining ``n - sum`` users sampled a dummy, each uniformly over the ``L``
        dummies (Algorithm 1), so their split is drawn as Multinomial(n - sum, 1/L).

        Parameters
        ----------
        sampled_counts : array_like of int, shape (m + L,) or (m,)
            e.g. ``np.bincount(sample_items(sets, rng), minlength=m + L)``.
        n : int
            Number of users.
        rng : numpy.random.Generator

        Returns
        -------
        UnaryCounts
            Counts over ``m + L`` bits.

        Raises
        ------
        TypeError
            If ``rng`` is not a Generator.
        ValueError
            Wrong shape, negative or non-integral counts, or counts not summing to
            ``n`` (shape (m + L,)) / exceeding ``n`` (shape (m,)).
        """
        _sampling.check_rng(rng)
        n = _positive_n(n, allow_zero=True)
        raw = np.asarray(sampled_counts)
        if raw.ndim == 1 and raw.shape[0] == self.m:
            c = _histogram(raw, self.m, "sampled_counts")
            rest = n - int(c.sum())
            if rest < 0:
                raise ValueError(f"sampled_counts must sum to at most n = {n} (got {int(c.sum())})")
            c = np.concatenate([c, rng.multinomial(rest, np.full(self.padding_length, 1.0 / self.padding_length))])
        else:
            c = _histogram(raw, self.width, "sampled_counts")
            if int(c.sum()) != n:
                raise ValueError(f"sampled_counts must sum to n = {n} (each user samples one item; got {int(c.sum())})")
        counts = rng.binomial(c, self.a) + rng.binomial(n - c, self.b)
        return UnaryCounts(counts.astype(np.int64), n)


# --------------------------------------------------------------------------- helpers


def _frequencies(freq, m: int) -> np.ndarray:
    f = np.asarray(freq, dtype=np.float64)
    if f.shape != (m,):
        raise ValueError(f"freq must have shape ({m},) (got {f.shape})")
    if not np.all((f >= 0) & (f <= 1)):
        raise ValueError("freq must hold frequencies in [0, 1]")
    return f


def _positive_n(n, allow_zero: bool = False) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < (0 if allow_zero else 1):
        raise ValueError(f"n must be an integer >= {0 if allow_zero else 1} (got {n!r})")
    return int(n)


def _histogram(x, width: int, name: str) -> np.ndarray:
    c = np.asarray(x)
    if c.shape != (width,):
        raise ValueError(f"{name} must have shape ({width},) (got {c.shape})")
    if c.dtype == bool or not (np.issubdtype(c.dtype, np.integer)
                               or (np.issubdtype(c.dtype, np.floating) and np.all(np.floor(c) == c))):
        raise ValueError(f"{name} must hold integer counts (got dtype {c.dtype})")
    c = c.astype(np.int64)
    if c.size and c.min() < 0:
        raise ValueError(f"{name} must be >= 0 (got {int(c.min())})")
    return c

r"""PCKV report containers and the packed PCKV-UE kernels (numpy only).

A PCKV-UE report is a vector ``y`` in ``{-1, 0, +1}^(d')`` (``d' = d + L``, PCKV
Algorithm 2). It is stored packed, **2 bits per position** in two bit planes, each
packed with ``numpy.packbits(..., axis=1, bitorder="little")`` (bit ``k`` of a row is
bit ``k % 8`` of byte ``k // 8``; padding bits zero):

* column ``nonzero``: uint8 ``(n, ceil(d'/8))``, bit ``k`` set iff ``y[k] != 0``;
* column ``negative``: uint8 ``(n, ceil(d'/8))``, bit ``k`` set iff ``y[k] == -1``
  (a subset of ``nonzero``).

At ``n = 10^6``, ``d' = 10^4`` that is 2.5 GB instead of 10 GB of int8. Perturbation
and counting run over blocks of rows, so temporaries stay a few MB. The legacy int8
column ``y`` (``(n, d')``, entries in {-1, 0, 1}) is still accepted by ``aggregate``.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Iterable, Mapping

import numpy as np

from .._bitkernels import LANE_ROWS, bernoulli_entries, bernoulli_rows, count_bits, grid_split, hi_tile
from .._protocol import Reports, set_fields
from .._sampling import uniform_bytes

__all__ = ["PCKVReports", "PCKVUEReports", "PACKED_COLUMNS", "perturb_packed", "packed_counts", "int8_counts",
           "pack_ternary"]

#: Column names of packed PCKV-UE reports.
PACKED_COLUMNS = ("nonzero", "negative")
#: Report positions (rows x d') generated or counted per block (bounded temporaries).
_BLOCK_POSITIONS = 1 << 20
#: Packed rows validated and counted per block (a multiple of the 255-row uint8 lanes).
_COUNT_ROWS = 4 * LANE_ROWS


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class PCKVReports(Reports):
    """PCKV reports plus ``dropped_pairs`` (pairs removed by ``out_of_domain_keys="drop"``)."""

    dropped_pairs: int

    def __init__(self, mechanism: str, columns: Mapping[str, Any], dropped_pairs: int = 0) -> None:
        super(PCKVReports, self).__init__(mechanism, columns)
        set_fields(self, dropped_pairs=int(dropped_pairs))


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class PCKVUEReports(PCKVReports):
    """Packed PCKV-UE reports: columns ``nonzero`` and ``negative`` (see the module docstring).

    Attributes
    ----------
    width : int
        ``d' = d + L`` positions per report (``perturb`` sets it; rebuilt with the pinned
        ``from_arrays(mechanism, arrays)`` it is ``8 * ceil(d'/8)``, the padding positions
        reading as 0).
    """

    width: int

    def __init__(self, mechanism: str, columns: Mapping[str, Any], dropped_pairs: int = 0, *,
                 width: int | None = None) -> None:
        super(PCKVUEReports, self).__init__(mechanism, columns, dropped_pairs)
        if width is None:
            plane = self.columns.get("nonzero")
            width = 8 * plane.shape[1] if plane is not None and plane.ndim == 2 else 0
        set_fields(self, width=int(width))

    def unpack(self, positions: Iterable[int] | None = None) -> np.ndarray:
        """The reports as int8 values in {-1, 0, 1}.

        Parameters
        ----------
        positions : iterable of int, optional
            Positions (0-based, ``< width``) to return; all ``width`` by default (n x d' bytes:
            use a few positions for large ``n``).

        Returns
        -------
        ndarray of int8, shape (n, len(positions)) or (n, width)
        """
        nz, neg = self.columns["nonzero"], self.columns["negative"]
        if positions is None:
            nzb = np.unpackbits(nz, axis=1, count=self.width, bitorder="little").view(np.int8)
            ngb = np.unpackbits(neg, axis=1, count=self.width, bitorder="little").view(np.int8)
            return nzb - 2 * ngb
        pos = np.asarray(list(positions), dtype=np.int64)
        if pos.size and (pos.min() < 0 or pos.max() >= self.width):
            raise ValueError(f"positions: must be in 0..{self.width - 1}")
        shift = (pos & 7).astype(np.uint8)
        bit_nz = (nz[:, pos >> 3] >> shift) & 1
        bit_neg = (neg[:, pos >> 3] >> shift) & 1
        return (bit_nz.astype(np.int8) - 2 * bit_neg.astype(np.int8))


def pack_ternary(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(nonzero, negative)`` bit planes of an int8 ``(n, d')`` matrix in {-1, 0, 1}."""
    y = np.asarray(y)
    return (np.packbits(y != 0, axis=1, bitorder="little"), np.packbits(y < 0, axis=1, bitorder="little"))


def perturb_packed(rng: np.random.Generator, keys: np.ndarray, values: np.ndarray, a: float, b: float, p: float,
                   width: int) -> tuple[np.ndarray, np.ndarray]:
    """PCKV-UE perturbation (Algorithm 2) of sampled pairs, written packed block by block.

    Per block of rows, in this stream order: the Bernoulli(``b``) non-zero bits of every
    position (:func:`~ldpplan.mechanisms._bitkernels.bernoulli_rows`), one uniform byte
    of fair signs per 8 positions (``y = -1`` where the sign bit is set), then the holder
    position ``k``: kept w.p. ``a`` and, if kept, ``v`` w.p. ``p`` else ``-v``
    (:func:`~ldpplan.mechanisms._bitkernels.bernoulli_entries`). Exact on the 2^-48 grid.

    Parameters
    ----------
    rng : numpy.random.Generator
    keys : ndarray of int64, shape (n,)
        Sampled keys in ``0..width-1``.
    values : ndarray of int8, shape (n,)
        Discretised values in {-1, +1}.
    a, b, p : float
        Grid probabilities.
    width : int
        ``d' = d + L``.

    Returns
    -------
    nonzero, negative : ndarray of uint8, shape (n, ceil(width / 8))

    References
    ----------
    PCKV, Algorithm 2.
    """
    n, nbytes = keys.shape[0], (width + 7) // 8
    nonzero = np.empty((n, nbytes), dtype=np.uint8)
    negative = np.empty((n, nbytes), dtype=np.uint8)
    hi_b, lo_b = grid_split(np.full(width, b))
    (hi_a,), (lo_a,) = grid_split([a])
    (hi_p,), (lo_p,) = grid_split([p])
    rows = max(1, _BLOCK_POSITIONS // width)
    scratch = np.empty(min(rows, n) * hi_b.shape[0], dtype=bool)
    tile = hi_tile(hi_b, min(rows, n))
    for start in range(0, n, rows):
        k, v = keys[start:start + rows], values[start:start + rows]
        r = k.shape[0]
        nz = bernoulli_rows(rng, hi_b, lo_b, r, tile, scratch)
        signs = uniform_bytes(rng, r * nbytes).reshape(r, nbytes)
        keep = bernoulli_entries(rng, np.full(r, hi_a), np.full(r, lo_a))
        same = bernoulli_entries(rng, np.full(r, hi_p), np.full(r, lo_p))
        nz[np.arange(r), k] = keep
        packed = np.packbits(nz, axis=1, bitorder="little")
        neg = packed & signs
        byte, mask = k >> 3, (np.uint8(1) << (k & 7).astype(np.uint8))
        holder_negative = keep & ((v < 0) == same)  # value v if same else -v; negative iff that is -1
        rows_idx = np.arange(r)
        neg[rows_idx, byte] = (neg[rows_idx, byte] & ~mask) | np.where(holder_negative, mask, np.uint8(0))
        nonzero[start:start + r] = packed
        negative[start:start + r] = neg
    return nonzero, negative


def _check_plane(col: Any, name: str, n: int, width: int) -> np.ndarray:
    nbytes = (width + 7) // 8
    if not isinstance(col, np.ndarray) or col.dtype != np.uint8 or col.ndim != 2 or col.shape != (n, nbytes):
        raise ValueError(f"reports.{name}: must be uint8 of shape (n, {nbytes}) for {width} positions "
                         f"(got {getattr(col, 'dtype', type(col).__name__)} {getattr(col, 'shape', '')})")
    if width % 8 and n and np.any(col[:, -1] & np.uint8((0xFF << (width % 8)) & 0xFF)):
        raise ValueError(f"reports.{name}: padding bits beyond position {width - 1} must be zero")
    return col


def packed_counts(reports: Reports, d: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """``n1``, ``n2`` (shape (d,)) of packed reports, validated and counted block by block.

    Raises
    ------
    ValueError
        Naming the column: wrong dtype/shape, padding bits set, or a ``negative`` bit
        where ``nonzero`` is clear.
    """
    n = len(reports)
    nz = _check_plane(reports["nonzero"], "nonzero", n, width)
    neg = _check_plane(reports["negative"], "negative", n, width)
    rows = _COUNT_ROWS
    ones = np.zeros(d, dtype=np.int64)
    minus = np.zeros(d, dtype=np.int64)
    for start in range(0, n, rows):
        a, b = nz[start:start + rows], neg[start:start + rows]
        if np.any(b & ~a):
            raise ValueError("reports.negative: a bit is set where reports.nonzero is clear (not a value in {-1, 0, 1})")
        ones += count_bits(a, d)
        minus += count_bits(b, d)
    return ones - minus, minus


def int8_counts(y: np.ndarray, d: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """``n1``, ``n2`` of the legacy int8 column ``y`` (n, width), block by block.

    Raises
    ------
    ValueError
        Wrong shape or an entry outside {-1, 0, 1}.
    """
    if y.shape[1] != width:
        raise ValueError(f"reports.y: must have shape (n, {width}) (got {y.shape})")
    n1 = np.zeros(d, dtype=np.int64)
    n2 = np.zeros(d, dtype=np.int64)
    rows = max(1, _BLOCK_POSITIONS // width)
    for start in range(0, y.shape[0], rows):
        head = y[start:start + rows]
        if head.size and (int(head.min()) < -1 or int(head.max()) > 1):
            raise ValueError("reports.y: entries must be -1, 0 or 1")
        head = head[:, :d]
        n1 += np.count_nonzero(head == 1, axis=0)
        n2 += np.count_nonzero(head == -1, axis=0)
    return n1, n2

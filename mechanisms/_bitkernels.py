"""Single-thread byte-stream kernels for bit-matrix reports (numpy only).

Shared by the unary encodings (:mod:`ldpplan.mechanisms._unary`: IDUE, IDUE-PS) and the
packed PCKV-UE reports (:mod:`ldpplan.mechanisms.pckv`).

Sampling is the rule of :mod:`ldpplan.mechanisms._sampling`, exact on the 2^-48 grid under
every bit generator: for ``p = k / 2**48`` (``k < 2**48``) split ``k = hi * 2**40 + lo``;
a uniform byte ``r`` (:func:`~ldpplan.mechanisms._sampling.uniform_bytes`) gives the bit
``r < hi`` unless ``r == hi`` (probability 2^-8), in which case a uniform 40-bit ``s``
(:func:`~ldpplan.mechanisms._sampling.refine40`: a word's top 40 bits, exact) gives ``s < lo``. So ``Pr[1] = hi / 2**8 + lo / 2**48
= p``. The kernels below only find the ties more cheaply (a word-level pre-scan: about
3% of the 8-byte words hold a tie) and draw the refinements for a whole block at once,
in row-major order of the ties.

Counting the set bits per column of a packed matrix unpacks at most 255 rows at a time
and adds them in ``uint8`` lanes (no overflow below 256 rows), so memory stays bounded
and the adds are vectorised.
"""
from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ._sampling import on_grid, refine40, uniform_bytes

__all__ = ["grid_split", "true_positions", "hi_tile", "bernoulli_rows", "bernoulli_entries", "column_sums", "count_bits",
           "LANE_ROWS"]

_HI_SHIFT = 40
_LO_MASK = (1 << _HI_SHIFT) - 1
#: Rows added per ``uint8`` lane reduction (255 ones at most: no overflow).
LANE_ROWS = 255
#: Packed rows unpacked per block when counting (bounded temporaries).
_COUNT_ROWS = 4 * LANE_ROWS


def grid_split(p: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """``(hi, lo)`` of grid probabilities ``p = (hi * 2**40 + lo) / 2**48``, ``0 <= p < 1``.

    Returns
    -------
    hi : ndarray of uint8, same shape as ``p``
    lo : ndarray of uint64, same shape as ``p``

    Raises
    ------
    ValueError
        A probability off the 2^-48 grid, or equal to 1 (callers use ``p < 1``).
    """
    x = np.asarray(p, dtype=np.float64)
    if not on_grid(x) or np.any(x >= 1.0):
        raise ValueError("probabilities must be multiples of 2**-48 in [0, 1) (plan files written by ldpplan are)")
    k = (x * 2.0**48).astype(np.int64)
    return (k >> _HI_SHIFT).astype(np.uint8), (k & _LO_MASK).astype(np.uint64)


def true_positions(mask: np.ndarray) -> np.ndarray:
    """Flat indices of the True entries of a contiguous bool array, for sparse masks.

    Same result as ``np.flatnonzero(mask)``; scans 8-byte words first, then only the
    words holding a True entry.
    """
    flat = mask.reshape(-1)
    whole = flat.size - flat.size % 8
    words = flat[:whole].view(np.uint64)
    w = np.flatnonzero(words != 0)
    j = np.flatnonzero(words[w].view(np.bool_))
    idx = w[j >> 3] * 8 + (j & 7)
    if whole < flat.size:
        idx = np.concatenate([idx, whole + np.flatnonzero(flat[whole:])])
    return idx


def hi_tile(hi: np.ndarray, n_rows: int) -> np.ndarray:
    """``hi`` repeated on ``n_rows`` rows (C-contiguous): comparing same-shape arrays is ~1.6x
    faster than broadcasting a row (numpy 2.x), so callers build it once per call."""
    return np.ascontiguousarray(np.broadcast_to(hi, (int(n_rows), hi.shape[0])))


def bernoulli_rows(rng: np.random.Generator, hi: np.ndarray, lo: np.ndarray, n_rows: int,
                   tile: np.ndarray | None = None, scratch: np.ndarray | None = None) -> np.ndarray:
    """A ``(n_rows, m)`` bool matrix whose column ``k`` is Bernoulli(``(hi[k] * 2**40 + lo[k]) / 2**48``).

    Stream: ``n_rows * m`` uniform bytes (row-major), then one 40-bit uniform per tie
    ``r == hi`` in row-major order.

    Parameters
    ----------
    rng : numpy.random.Generator
    hi, lo : ndarray, shape (m,)
        From :func:`grid_split`.
    n_rows : int
    tile : ndarray of uint8, shape (>= n_rows, m), optional
        :func:`hi_tile` of ``hi`` (speed only; same result).
    scratch : ndarray of bool, shape (>= n_rows * m,), optional
        Reused buffer for the tie mask (speed only: avoids a fresh allocation per block).

    Returns
    -------
    ndarray of bool, shape (n_rows, m)
    """
    m = hi.shape[0]
    r = uniform_bytes(rng, n_rows * m).reshape(n_rows, m)
    h = hi if tile is None else tile[:n_rows]
    out = r < h
    eq = np.empty((n_rows, m), dtype=bool) if scratch is None else scratch[: n_rows * m].reshape(n_rows, m)
    ties = true_positions(np.equal(r, h, out=eq))
    if ties.size:
        refine = refine40(rng, ties.size)
        out.reshape(-1)[ties] = refine < lo[ties % m]
    return out


def bernoulli_entries(rng: np.random.Generator, hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """One Bernoulli draw per entry (probabilities given as :func:`grid_split` pairs, 1-D).

    Stream: ``hi.size`` uniform bytes, then one 40-bit uniform per tie in index order.

    Returns
    -------
    ndarray of bool, shape (hi.size,)
    """
    r = uniform_bytes(rng, hi.size)
    out = r < hi
    ties = np.flatnonzero(r == hi)
    if ties.size:
        out[ties] = refine40(rng, ties.size) < lo[ties]
    return out


def column_sums(y: np.ndarray) -> np.ndarray:
    """Column sums of a 0/1 ``uint8`` matrix ``(n, m)`` as int64, via ``uint8`` lanes of 255 rows."""
    total = np.zeros(y.shape[1], dtype=np.int64)
    for start in range(0, y.shape[0], LANE_ROWS):
        total += np.add.reduce(y[start:start + LANE_ROWS], axis=0, dtype=np.uint8)
    return total


def count_bits(bits: np.ndarray, width: int) -> np.ndarray:
    """Ones per bit column of little-endian packed rows (``np.packbits(..., bitorder="little")``).

    Parameters
    ----------
    bits : ndarray of uint8, shape (n, nbytes)
    width : int
        Number of bit columns counted (``<= 8 * nbytes``).

    Returns
    -------
    ndarray of int64, shape (width,)
        Counts of rows (users) with each bit set.
    """
    total = np.zeros(8 * bits.shape[1], dtype=np.int64)
    for start in range(0, bits.shape[0], _COUNT_ROWS):
        block = np.unpackbits(bits[start:start + _COUNT_ROWS], axis=1, bitorder="little")
        total += column_sums(block)
    return total[: int(width)]

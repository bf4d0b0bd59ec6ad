"""Exact Bernoulli sampling on the 2^-48 probability grid (numpy only).

Every probability that ldpplan writes into a plan file is a multiple of
``2**-48`` (rounded toward the safe side by the planner). For such a
probability ``p = k / 2**48`` the sampler below draws a Bernoulli(p) bit
*exactly*: an 8-bit uniform ``r`` decides when ``r != k >> 40`` (the bit is
``r < k >> 40``) and a further 40-bit uniform ``s`` breaks the tie (probability
``2**-8``) as ``s < k mod 2**40``, so ``Pr[1] = (k >> 40)/2**8 + 2**-8 (k mod 2**40)/2**40
= k / 2**48``. The realised output distribution is therefore exactly the one the
verifier checked, and the common case costs one byte of randomness per bit.
"""
from __future__ import annotations

import numpy as np

__all__ = ["GRID_BITS", "GRID_DENOMINATOR", "GRID", "to_grid", "on_grid", "bernoulli", "bernoulli_columns", "bernoulli_iid", "check_rng",
           "uniform_bytes", "uniform_bits"]

GRID_BITS = 48
#: Probabilities in plans are multiples of ``1 / GRID_DENOMINATOR`` (the one grid of the runtime).
GRID_DENOMINATOR = 2**GRID_BITS
GRID = float(GRID_DENOMINATOR)
_HI_SHIFT = 40
_LO_MASK = np.int64(2**_HI_SHIFT - 1)
_U64_MAX = np.uint64(2**64 - 1)


def check_rng(rng) -> np.random.Generator:
    """Return ``rng`` if it is a :class:`numpy.random.Generator`.

    Raises
    ------
    TypeError
        For anything else: the runtime never falls back to a global RNG.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"rng must be a numpy.random.Generator (e.g. np.random.default_rng(seed)); got {type(rng).__name__}"
        )
    return rng


def to_grid(p, rounding: str = "nearest"):
    """Round probabilities to multiples of ``2**-48``.

    Parameters
    ----------
    p : float or array_like
        Probabilities in [0, 1].
    rounding : {"down", "up", "nearest"}
        Direction. The planner uses the direction that keeps the privacy
        constraints satisfied (e.g. ``a`` down and ``b`` up for unary encoding).

    Returns
    -------
    float or ndarray
        Grid values (exactly representable as float64), clipped to [0, 1].
    """
    x = np.asarray(p, dtype=np.float64) * GRID  # exact: scaling by a power of two
    if rounding == "down":
        x = np.floor(x)
    elif rounding == "up":
        x = np.ceil(x)
    elif rounding == "nearest":
        x = np.rint(x)
    else:
        raise ValueError(f"rounding must be 'down', 'up' or 'nearest' (got {rounding!r})")
    out = np.clip(x, 0.0, GRID) / GRID
    return float(out) if np.ndim(out) == 0 else out


def on_grid(p) -> bool:
    """True when every entry of ``p`` is a multiple of ``2**-48`` in [0, 1]."""
    x = np.asarray(p, dtype=np.float64)
    return bool(np.all((x >= 0) & (x <= 1) & (np.floor(x * GRID) == x * GRID)))


def _grid_ints(p) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = np.asarray(p, dtype=np.float64)
    if not on_grid(x):
        raise ValueError("probabilities must be multiples of 2**-48 in [0, 1] (plan files written by ldpplan are)")
    k = (x * GRID).astype(np.int64)
    hi = k >> _HI_SHIFT  # 0 .. 256
    lo = (k & _LO_MASK).astype(np.uint64)
    full = hi >= 256
    return np.minimum(hi, 255).astype(np.uint8), lo, full


def uniform_bytes(rng: np.random.Generator, size: int) -> np.ndarray:
    """``size`` independent uniform bytes, whatever the width of the bit generator's words.

    The bytes come from :meth:`numpy.random.Generator.integers` over the full
    64-bit range, which numpy builds from ``next_uint64``: two 32-bit outputs for
    32-bit generators such as MT19937, one 64-bit output for PCG64, Philox or SFC64.
    (Reading ``bit_generator.random_raw()`` instead gives bytes that are always 0 in
    the upper half of every word of a 32-bit generator; that broke epsilon-LDP
    before release 0.2.)

    Parameters
    ----------
    rng : numpy.random.Generator
    size : int
        Number of bytes.

    Returns
    -------
    ndarray of uint8, shape (size,)

    Raises
    ------
    TypeError
        If ``rng`` is not a :class:`numpy.random.Generator`.
    """
    check_rng(rng)
    words = (int(size) + 7) // 8
    draws = rng.integers(0, _U64_MAX, size=words, dtype=np.uint64, endpoint=True)
    return draws.view(np.uint8)[:size]


def uniform_bits(rng: np.random.Generator, size: int) -> np.ndarray:
    """``size`` independent fair bits (uint8 0/1), eight per uniform byte."""
    return np.unpackbits(uniform_bytes(rng, (int(size) + 7) // 8))[:size]


def _uniform8(rng: np.random.Generator, size: int) -> np.ndarray:
    return uniform_bytes(rng, size)


def _refine(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` uniform 40-bit integers (exact for every bit generator)."""
    return rng.integers(0, 1 << _HI_SHIFT, size=count, dtype=np.uint64)


def bernoulli(rng: np.random.Generator, p) -> np.ndarray:
    """Independent Bernoulli draws, one per entry of ``p``.

    Parameters
    ----------
    rng : numpy.random.Generator
    p : array_like of float
        Grid probabilities (multiples of ``2**-48``), any shape.

    Returns
    -------
    ndarray of bool, same shape as ``p``.

    Raises
    ------
    ValueError
        If a probability is not on the grid.
    """
    check_rng(rng)
    hi, lo, full = _grid_ints(p)
    shape = hi.shape
    r = _uniform8(rng, hi.size).reshape(shape)
    out = r < hi
    ties = (r == hi) & ~full
    if np.any(ties):
        idx = np.nonzero(ties)
        out[idx] = _refine(rng, len(idx[0])) < lo[idx]
    out |= full
    return out


def bernoulli_columns(rng: np.random.Generator, p_columns, n_rows: int) -> np.ndarray:
    """A ``(n_rows, m)`` boolean matrix whose column ``k`` is Bernoulli(``p_columns[k]``).

    Parameters
    ----------
    rng : numpy.random.Generator
    p_columns : array_like of float, shape (m,)
        Grid probabilities, one per column.
    n_rows : int

    Returns
    -------
    ndarray of bool, shape (n_rows, m)
    """
    check_rng(rng)
    hi, lo, full = _grid_ints(p_columns)
    m = hi.shape[0]
    r = _uniform8(rng, n_rows * m).reshape(n_rows, m)
    out = r < hi
    if full.any():
        out[:, full] = True
    flat = np.flatnonzero(r == hi)  # a 1-D search: 2-D np.nonzero dominated the cost
    if flat.size:
        cols = flat % m
        keep = ~full[cols]
        flat, cols = flat[keep], cols[keep]
        out.reshape(-1)[flat] = _refine(rng, flat.size) < lo[cols]
    return out


def bernoulli_iid(rng: np.random.Generator, p: float, size: int) -> np.ndarray:
    """``size`` independent Bernoulli(``p``) draws for one grid probability ``p``.

    Parameters
    ----------
    rng : numpy.random.Generator
    p : float
        A multiple of ``2**-48`` in [0, 1].
    size : int

    Returns
    -------
    ndarray of bool, shape (size,)
    """
    return bernoulli_columns(rng, np.array([p], dtype=np.float64), int(size))[:, 0]

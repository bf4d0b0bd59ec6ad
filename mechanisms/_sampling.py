"""Exact Bernoulli sampling on the 2^-48 probability grid (numpy only).

Every probability that ldpplan writes into a plan file is a multiple of
``2**-48`` (rounded toward the safe side by the planner). For such a
probability ``p = k / 2**48`` the sampler below draws a Bernoulli(p) bit
*exactly*: an 8-bit uniform ``r`` decides when ``r != k >> 40`` (the bit is
``r < k >> 40``) and a further 40-bit uniform ``s`` breaks the tie (probability
``2**-8``) as ``s < k mod 2**40``, so ``Pr[1] = (k >> 40)/2**8 + 2**-8 (k mod 2**40)/2**40
= k / 2**48``. The realised output distribution is therefore exactly the one the
verifier checked, and the common case costs one byte of randomness per bit.

Every draw of the runtime goes through :func:`uniform_words` (whole 64-bit words, read
little-endian): bytes (:func:`uniform_bytes`), the 40-bit tie-break (:func:`refine40`), uniform
integers by modulo rejection (:func:`uniform_below`) and 53-bit uniforms (:func:`uniform_unit`).
So a report is a documented function of the plan, the input and a byte stream, which a client in
another language reproduces bit for bit (docs/REPORTS.md, "Sampling procedure"; the vectors in
``vectors/``).
"""
from __future__ import annotations

import sys
from typing import overload

import numpy as np
import numpy.typing as npt

__all__ = ["GRID_BITS", "GRID_DENOMINATOR", "GRID", "to_grid", "on_grid", "bernoulli", "bernoulli_columns", "bernoulli_iid", "check_rng",
           "uniform_bytes", "uniform_bits", "uniform_words", "uniform_below", "uniform_unit", "refine40"]

GRID_BITS = 48
#: Probabilities in plans are multiples of ``1 / GRID_DENOMINATOR`` (the one grid of the runtime).
GRID_DENOMINATOR = 2**GRID_BITS
GRID = float(GRID_DENOMINATOR)
_HI_SHIFT = 40
_LO_MASK = np.int64(2**_HI_SHIFT - 1)
_U64_MAX = np.uint64(2**64 - 1)


def check_rng(rng: object) -> np.random.Generator:
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


@overload
def to_grid(p: float, rounding: str = "nearest") -> float: ...
@overload
def to_grid(p: npt.ArrayLike, rounding: str = "nearest") -> float | np.ndarray: ...
def to_grid(p: npt.ArrayLike, rounding: str = "nearest") -> float | np.ndarray:
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


def on_grid(p: npt.ArrayLike) -> bool:
    """True when every entry of ``p`` is a multiple of ``2**-48`` in [0, 1]."""
    x = np.asarray(p, dtype=np.float64)
    return bool(np.all((x >= 0) & (x <= 1) & (np.floor(x * GRID) == x * GRID)))


def _grid_ints(p: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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

    The byte stream of the runtime (docs/REPORTS.md, "Sampling procedure"): a call takes
    ``ceil(size / 8)`` 64-bit words from the generator and returns the first ``size`` bytes of
    their little-endian encodings (the unused bytes of the last word are discarded). The words
    come from :meth:`numpy.random.Generator.integers` over the full 64-bit range, which numpy
    returns as ``next_uint64`` unchanged: two 32-bit outputs for 32-bit generators such as
    MT19937, one 64-bit output for PCG64, Philox or SFC64.
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
    draws = uniform_words(rng, (int(size) + 7) // 8)
    if sys.byteorder != "little":  # pragma: no cover - the stream is specified little-endian
        draws = draws.byteswap()
    return draws.view(np.uint8)[:size]


def uniform_words(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` uniform 64-bit words (uint64): the next ``8 * count`` bytes of the stream,
    each word read little-endian (numpy's ``next_uint64``)."""
    check_rng(rng)
    return rng.integers(0, _U64_MAX, size=int(count), dtype=np.uint64, endpoint=True)


def uniform_bits(rng: np.random.Generator, size: int) -> np.ndarray:
    """``size`` independent fair bits (uint8 0/1), eight per uniform byte, most significant bit
    of each byte first (``numpy.unpackbits``)."""
    return np.unpackbits(uniform_bytes(rng, (int(size) + 7) // 8))[:size]


def refine40(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` uniform 40-bit integers (uint64): one word ``w`` each, ``w >> 24`` (its top 40 bits).

    Identical to ``rng.integers(0, 2**40, dtype=np.uint64)`` (numpy's Lemire multiply by a power
    of two never rejects and keeps the top bits), written on the byte stream."""
    return uniform_words(rng, count) >> np.uint64(64 - _HI_SHIFT)


def _accepted(w: np.ndarray, bound: np.ndarray) -> np.ndarray:
    rem = (_U64_MAX % bound + np.uint64(1)) % bound  # 2**64 mod bound
    return (rem == 0) | (w < (np.uint64(0) - rem))  # w < 2**64 - rem (wraps to 0 only when rem == 0)


def uniform_below(rng: np.random.Generator, bound: npt.ArrayLike, size: int | None = None) -> np.ndarray:
    """Uniform integers in ``[0, bound)``, exact, by rejection on 64-bit words.

    For entry ``i`` with bound ``m = bound[i]`` (1 <= m < 2**63): take a word ``w``; with
    ``r = 2**64 mod m``, accept when ``w < 2**64 - r`` and return ``w mod m`` (each residue is
    then hit by exactly ``floor(2**64 / m)`` words). Stream order: one word per entry in index
    order; then, while some entries are rejected, one new word per rejected entry in index
    order (a rejection has probability ``r / 2**64 < m / 2**64``).

    Parameters
    ----------
    rng : numpy.random.Generator
    bound : int or array_like of int
        ``m`` (scalar, with ``size``) or one bound per entry (1-D).
    size : int, optional
        Number of draws for a scalar ``bound``.

    Returns
    -------
    ndarray of int64, shape (size,) or bound's shape

    Raises
    ------
    ValueError
        A bound below 1 or at least ``2**63``.

    References
    ----------
    D. Lemire, "Fast random integer generation in an interval", ACM TOMACS 29(1), 2019, Sec. 2
    (the modulo-rejection method, here on 64-bit words).
    """
    m = np.asarray(bound, dtype=np.int64)
    if m.ndim == 0 and size is not None:
        return _uniform_below_scalar(rng, int(m), int(size))
    if size is not None:
        m = np.broadcast_to(m, (int(size),))
    m = m.reshape(-1)
    if m.size and (int(m.min()) < 1):
        raise ValueError(f"bound: must be at least 1 (got {int(m.min())})")
    m = m.astype(np.uint64)
    w = uniform_words(rng, m.size)
    out = w % m if m.size else w
    bad = np.flatnonzero(~_accepted(w, m))
    while bad.size:
        w = uniform_words(rng, bad.size)
        ok = _accepted(w, m[bad])
        out[bad[ok]] = w[ok] % m[bad[ok]]
        bad = bad[~ok]
    return out.astype(np.int64)


def _uniform_below_scalar(rng: np.random.Generator, m: int, size: int) -> np.ndarray:
    """:func:`uniform_below` with one bound for every entry (the same words, the same values)."""
    if m < 1:
        raise ValueError(f"bound: must be at least 1 (got {m})")
    limit = 2**64 - 2**64 % m  # accept w < limit
    w = uniform_words(rng, size)
    bad = np.flatnonzero(w >= np.uint64(limit)) if limit < 2**64 else np.zeros(0, dtype=np.intp)
    while bad.size:
        w2 = uniform_words(rng, bad.size)
        ok = w2 < np.uint64(limit)
        w[bad[ok]] = w2[ok]
        bad = bad[~ok]
    return (w % np.uint64(m)).astype(np.int64)


def uniform_unit(rng: np.random.Generator, size: int) -> np.ndarray:
    """``size`` uniform doubles on the ``2**-53`` grid of [0, 1): one word ``w`` each, ``(w >> 11) * 2**-53``
    (what ``rng.random`` returns for 64-bit generators such as PCG64)."""
    return (uniform_words(rng, size) >> np.uint64(11)).astype(np.float64) * 2.0**-53


def _uniform8(rng: np.random.Generator, size: int) -> np.ndarray:
    return uniform_bytes(rng, size)


def _refine(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` uniform 40-bit integers (exact for every bit generator): :func:`refine40`."""
    return refine40(rng, count)


def bernoulli(rng: np.random.Generator, p: npt.ArrayLike) -> np.ndarray:
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


def bernoulli_columns(rng: np.random.Generator, p_columns: npt.ArrayLike, n_rows: int) -> np.ndarray:
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

"""uRAP reports (packed bits) to the sufficient data of the full likelihood, numpy only.

The full-report likelihood of uRAP (ULDP eq. 8) depends on a report only through (i) the item
it reveals, if it has a set X_N bit (eq. 10: only that input can produce it), and otherwise
(ii) its pattern of X_S bits. :func:`sensitive_patterns` extracts both from the packed report
bytes: the X_N bits are checked and located with per-byte tables (popcount, lowest set bit),
and only the bytes that hold X_S bits are unpacked, so no ``n x |X|`` boolean matrix is built.
"""
from __future__ import annotations

import numpy as np

__all__ = ["sensitive_patterns"]

#: Set bits of each byte value, and the index of its lowest set bit (little-endian; 0 for 0).
_POPCOUNT = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).sum(axis=1).astype(np.uint8)
#: ``_LITTLE_BITS[v, i]`` = bit ``i`` (little-endian) of ``v``; ``_REVERSE[v]``: ``v`` with its bit order reversed.
_LITTLE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little").astype(np.int64)
_REVERSE = np.packbits(_LITTLE_BITS.astype(np.uint8), axis=1).reshape(-1)
_LOWBIT = np.array([(v & -v).bit_length() - 1 if v else 0 for v in range(256)], dtype=np.int64)


def sensitive_patterns(packed: np.ndarray, sensitive_mask: np.ndarray, chunk_rows: int = 1 << 16
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split packed uRAP reports into X_S patterns and revealed items, validating them.

    Parameters
    ----------
    packed : ndarray of uint8, shape (n, ceil(|X| / 8))
        Report bits packed little-endian per row (the ``bits`` column of uRAP Reports).
    sensitive_mask : ndarray of bool, shape (|X|,)
        Membership of X_S.
    chunk_rows : int
        Rows per chunk (bounds the temporary memory).

    Returns
    -------
    patterns : ndarray of uint8, shape (n_p, ceil(|X_S| / 8))
        ``np.packbits`` (big-endian) of the X_S bits, in the order of X_S, of the ``n_p``
        reports with no X_N bit set.
    revealed : ndarray of int64, shape (|X|,)
        How many reports have each X_N bit set (0 on X_S).
    ones : ndarray of int64, shape (|X|,)
        Per-bit counts over all ``n`` reports.

    Raises
    ------
    ValueError
        Wrong dtype/shape, non-zero padding bits, or a report with two X_N bits set.

    References
    ----------
    Murakami & Kawamoto 2019, eqs. (8)-(10).
    """
    mask = np.asarray(sensitive_mask, dtype=bool)
    k, width = mask.size, -(-mask.size // 8)
    if packed.dtype != np.uint8 or packed.ndim != 2 or packed.shape[1] != width:
        raise ValueError(f"reports.bits: must be uint8 of shape (n, {width}) (got {packed.dtype} {packed.shape})")
    sens = np.flatnonzero(mask)
    nonsens_bytes = np.packbits(~mask, bitorder="little")
    nbytes = np.flatnonzero(nonsens_bytes)  # the bytes that hold X_N bits
    nmask = nonsens_bytes[nbytes]
    sbytes = np.unique(sens // 8)  # the bytes that hold X_S bits
    where = np.searchsorted(sbytes, sens // 8) * 8 + sens % 8  # column of each X_S bit in the unpacked bytes
    prefix = bool(np.array_equal(where, np.arange(sens.size)))
    revealed = np.zeros(k, dtype=np.int64)
    ones = np.zeros(k, dtype=np.int64)
    chunks = []
    for start in range(0, packed.shape[0], chunk_rows):
        chunk = packed[start:start + chunk_rows]
        if k % 8 and np.any(chunk[:, -1] >> (k % 8)):
            raise ValueError("reports.bits: padding bits beyond |X| must be 0")
        nb = chunk[:, nbytes] & nmask
        count = _POPCOUNT[nb].sum(axis=1, dtype=np.int64)
        if np.any(count > 1):
            raise ValueError("reports.bits: a report has two non-sensitive bits set (impossible under the uRAP)")
        inv = count == 1
        if inv.any():
            rows = nb[inv]
            byte = np.argmax(rows != 0, axis=1)
            item = 8 * nbytes[byte] + _LOWBIT[rows[np.arange(rows.shape[0]), byte]]
            revealed += np.bincount(item, minlength=k)
        if prefix:  # X_S bits fill the first bytes in order: reverse the bit order per byte, no unpacking
            raw = chunk[:, sbytes]
            if sens.size % 8:
                raw = raw.copy()
                raw[:, -1] &= (1 << (sens.size % 8)) - 1
            hist = np.stack([np.bincount(raw[:, j], minlength=256) for j in range(raw.shape[1])])
            ones[sens] += (hist @ _LITTLE_BITS).reshape(-1)[:sens.size]
            chunks.append(_REVERSE[raw[~inv] if inv.any() else raw])
            continue
        bits = np.unpackbits(chunk[:, sbytes], axis=1, bitorder="little").view(bool)[:, where]
        ones[sens] += bits.sum(axis=0, dtype=np.int64)
        chunks.append(np.packbits(bits[~inv], axis=1))
    ones += revealed
    pat = np.concatenate(chunks) if chunks else np.zeros((0, -(-sens.size // 8)), dtype=np.uint8)
    return pat, revealed, ones


"""Test-only leaking runtimes for the audit tests (never shipped; the audit must catch each one).

* :class:`RevealingRR`: an RR client that sends the true item 30 % of the time;
* :func:`ignoring_level`: an IDUE runtime that gives every item the least private level's (a, b);
* :class:`SharedUniformUnary`: a unary encoding that reuses one uniform draw for bits 2k and 2k+1;
* :class:`OldSamplerRR`: the pre-0.2 exact sampler, which read bytes from
  ``rng.bit_generator.random_raw(words).view(np.uint8)``: under a 32-bit generator (MT19937)
  bytes 4..7 of every word are 0, so the keep coin of users 4..7 mod 8 always says "keep".
"""
from __future__ import annotations

import math

import numpy as np

from ldpplan.mechanisms import Reports
from ldpplan.mechanisms.idue import IDUE

GRID = 2.0**48


class RevealingRR:
    """Wraps an RR runtime; with probability ``leak`` a report is the true item."""

    def __init__(self, inner, leak: float = 0.3) -> None:
        self.inner, self.leak = inner, leak

    def perturb(self, data, rng):
        x = np.asarray(data, dtype=np.int64)
        y = np.array(self.inner.perturb(x, rng=rng)["y"])
        reveal = rng.random(x.size) < self.leak
        y[reveal] = x[reveal]
        return Reports(self.inner.mechanism, {"y": y})


def ignoring_level(mech: IDUE, level_of: int) -> IDUE:
    """An IDUE runtime in which every item uses the (a, b) of item ``level_of``'s level."""
    a = np.full(mech.domain_size, mech.a[level_of])
    b = np.full(mech.domain_size, mech.b[level_of])
    return IDUE(domain=mech.labels if mech.labels is not None else mech.domain_size, a=a, b=b, epsilon=mech.epsilon)


class SharedUniformUnary:
    """Unary encoding with the plan's per-bit (a, b), but bit 2k+1 reuses bit 2k's uniform draw."""

    def __init__(self, mech) -> None:
        self.mech = mech

    def perturb(self, data, rng):
        x = np.asarray(data, dtype=np.int64)
        m = self.mech.domain_size
        u = rng.random((x.size, m))
        u[:, 1::2] = u[:, 0:m - 1:2][:, : u[:, 1::2].shape[1]]
        p = np.broadcast_to(self.mech.b, (x.size, m)).copy()
        p[np.arange(x.size), x] = self.mech.a[x]
        bits = np.packbits(u < p, axis=1, bitorder="little")
        return Reports(self.mech.mechanism, {"bits": bits})


def old_bytes(rng: np.random.Generator, size: int) -> np.ndarray:
    """The pre-0.2 byte source (the bug): raw words viewed as bytes."""
    words = (int(size) + 7) // 8
    return rng.bit_generator.random_raw(words).view(np.uint8)[:size]


def old_bernoulli_iid(rng: np.random.Generator, p: float, size: int) -> np.ndarray:
    """The pre-0.2 exact grid sampler: byte ``r`` vs ``k >> 40``, ties broken by 40 more bits."""
    k = int(p * GRID)
    hi, lo = k >> 40, k & ((1 << 40) - 1)
    r = old_bytes(rng, size)
    out = r < hi
    ties = np.flatnonzero(r == hi)
    if ties.size:
        out[ties] = rng.integers(0, 1 << 40, size=ties.size, dtype=np.uint64) < lo
    return out


class OldSamplerRR:
    """The RR runtime with the old keep coin."""

    def __init__(self, inner) -> None:
        self.inner = inner

    def perturb(self, data, rng):
        x = np.asarray(data, dtype=np.int64)
        k = self.inner.domain_size
        keep = old_bernoulli_iid(rng, self.inner.mu, x.size)
        other = rng.integers(0, k - 1, size=x.size, dtype=np.int64)
        other += other >= x
        return Reports(self.inner.mechanism, {"y": np.where(keep, x, other)})


class InvertibleLeakURR:
    """A uRR client that sometimes sends a sensitive user's report as a non-sensitive (invertible) item."""

    def __init__(self, inner, leak: float = 0.01) -> None:
        self.inner, self.leak = inner, leak
        self.invertible = int(np.flatnonzero(~np.asarray(inner.sensitive_mask))[0])

    def perturb(self, data, rng):
        y = np.array(self.inner.perturb(data, rng=rng)["y"])
        y[rng.random(y.size) < self.leak] = self.invertible
        return Reports(self.inner.mechanism, {"y": y})


class OneItemRR:
    """An RR client that, when the input is item ``item``, sends it with extra probability ``leak``."""

    def __init__(self, inner, item: int = 5, leak: float = 0.3) -> None:
        self.inner, self.item, self.leak = inner, item, leak

    def perturb(self, data, rng):
        x = np.asarray(data, dtype=np.int64)
        y = np.array(self.inner.perturb(x, rng=rng)["y"])
        reveal = (x == self.item) & (rng.random(x.size) < self.leak)
        y[reveal] = x[reveal]
        return Reports(self.inner.mechanism, {"y": y})


class SeedLeakGLH:
    """A GLH client whose hash seed ``b`` carries the input's low 8 bits (the server reads x mod 256)."""

    def __init__(self, inner) -> None:
        self.inner = inner

    def perturb(self, data, rng):
        x = np.asarray(data, dtype=np.int64)
        r = self.inner.perturb(x, rng=rng)
        b = (np.asarray(r["b"]) & ~np.int64(0xFF)) | (x & 0xFF)
        from ldpplan.mechanisms.pie import hash_values

        a = np.asarray(r["a"])
        # keep the report consistent: y is the RR of the hash under the published seed
        h_old = hash_values(a, np.asarray(r["b"]), x, self.inner.g)
        h_new = hash_values(a, b, x, self.inner.g)
        y = np.asarray(r["y"]).copy()
        kept = y == h_old
        y[kept] = h_new[kept]
        return Reports(self.inner.mechanism, {"a": a, "b": b, "y": y})


class ExtraColumn:
    """Any runtime whose reports carry an extra column ``debug``: a deterministic function of the input."""

    def __init__(self, inner, modulus: int = 3) -> None:
        self.inner, self.modulus = inner, modulus

    def perturb(self, data, rng):
        x = np.asarray(data, dtype=np.int64)
        r = self.inner.perturb(x, rng=rng)
        return Reports(r.mechanism, dict(r.columns, debug=x % self.modulus))


def raised_level(mech: IDUE, item: int, other: int, factor: float) -> IDUE:
    """IDUE with the ``a`` of ``item``'s level raised so the ``(item, other)`` ratio is ``e^(factor claim)``.

    The ratio of constraint (6) for ``(item, other)`` is ``a_i (1 - b_j) / (b_i (1 - a_j))``; ``claim``
    is the plan's claim for that pair (passed as ``factor * claim`` already multiplied in ``factor``).
    """
    a, b = np.array(mech.a, dtype=float), np.array(mech.b, dtype=float)
    target = np.exp(factor)
    new_a = math.ceil(target * b[item] * (1 - a[other]) / (1 - b[other]) * 2.0**48) / 2.0**48
    assert new_a < 1.0
    a[a == a[item]] = new_a
    return IDUE(domain=mech.labels if mech.labels is not None else mech.domain_size, a=a, b=b, epsilon=mech.epsilon)


class ValueLeakPCKV:
    """PCKV-UE client that, for users of key ``key``, reports the true value sign with extra probability."""

    def __init__(self, inner, key: int = 7, leak: float = 0.3) -> None:
        self.inner, self.key, self.leak = inner, key, leak

    def perturb(self, data, rng):
        r = self.inner.perturb(data, rng=rng)
        nonzero, negative = np.array(r["nonzero"]), np.array(r["negative"])
        keys, values = np.asarray(data.keys), np.asarray(data.values)
        users = np.flatnonzero((keys == self.key) & (rng.random(keys.size) < self.leak))
        byte, bit = self.key // 8, np.uint8(1 << (self.key % 8))
        nonzero[users, byte] |= bit
        neg = values[users] < 0
        negative[users[neg], byte] |= bit
        negative[users[~neg], byte] &= ~bit
        return Reports(r.mechanism, {"nonzero": nonzero, "negative": negative})

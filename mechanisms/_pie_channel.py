"""Numbers shared by the k-ary RR and the GLH runtimes (numpy + stdlib only).

* :func:`keep_probability`: the keep probability ``mu = e^eps/(k + e^eps - 1)`` (eq. 19-20)
  rounded **down** to the ``2**-48`` grid, computed exactly (60-digit decimal ``exp``), so
  the planner and every runtime derive the same grid value from ``params.epsilon`` on any
  platform; the runtime refuses a plan whose ``mu`` is not that value.
* :func:`realized_epsilon`: ``log(mu/nu)`` of a grid channel (numpy float64).
* :func:`pie_alpha_bits`: the (U, alpha)-PIE guarantee in bits (Thm. 4.2/4.4 composed by
  Thm. 4.3/4.5, capped by Prop. 4.1), float64.
* The Carter-Wegman hash family of the GLH (:func:`hash_values`, :func:`collision_probability`).
* :func:`split_streams`: independent generators for the GLH hash seeds and the coins.
"""
from __future__ import annotations

import math
from decimal import ROUND_FLOOR, Decimal, localcontext
from fractions import Fraction
from typing import Any, Sequence

import numpy as np

__all__ = ["HASH_PRIME", "GRID_STEPS", "keep_probability", "realized_epsilon", "pie_alpha_bits",
           "collision_probability", "hash_values", "support_counts", "split_streams", "domain_labels", "check_items"]

#: Mersenne prime of the Carter-Wegman hash family (``|X|`` and ``g`` must not exceed it).
HASH_PRIME = 2**31 - 1
#: Number of steps of the probability grid (probabilities are multiples of ``1/GRID_STEPS``).
GRID_STEPS = 2**48


def keep_probability(epsilon: float, k: int) -> float:
    """``e^eps/(k + e^eps - 1)`` rounded down to the ``2**-48`` grid, at most ``1 - 2**-48``.

    Parameters
    ----------
    epsilon : float
        LDP budget in nats, finite and > 0.
    k : int
        Number of symbols of the randomized response (``|X|`` for the RR, ``g`` for the GLH), >= 2.

    Returns
    -------
    float
        ``mu``, a multiple of ``2**-48``. The grid channel's epsilon ``log(mu (k-1)/(1-mu))``
        is <= ``epsilon`` (rounding down lowers ``mu/nu``). Computed with 60 significant
        decimal digits (exact for every practical purpose: a tie would need the exact value
        to lie within 10^-45 of a grid point), so the result is the same on every platform.

    Raises
    ------
    ValueError
        For a non-finite or non-positive epsilon or ``k < 2``.

    References
    ----------
    Murakami & Takahashi (TDP 2021), eq. 2-3 and eq. 19-20 (``mu_RR``, ``mu_GLH``).
    """
    eps = float(epsilon)
    if not (math.isfinite(eps) and eps > 0.0):
        raise ValueError(f"epsilon: must be finite and > 0 (got {epsilon!r})")
    if isinstance(k, bool) or int(k) != k or int(k) < 2:
        raise ValueError(f"k: must be an integer >= 2 (got {k!r})")
    # beyond 100 + ln k nats the value is 1 - 2**-48 already: (k-1)/(k + e^eps - 1) < e^-100
    eps = min(eps, 100.0 + math.log(int(k)))
    with localcontext() as ctx:
        ctx.prec = 60
        e = Decimal(eps).exp()
        frac = e / (Decimal(int(k)) + e - 1)
        steps = int((frac * GRID_STEPS).to_integral_value(rounding=ROUND_FLOOR))
    return min(steps, GRID_STEPS - 1) / GRID_STEPS


def realized_epsilon(mu: float, k: int) -> float:
    """``log(mu/nu)`` with ``nu = (1 - mu)/(k - 1)``: the epsilon of the grid channel (nats, float64).

    Returns ``-inf``/``nan`` never: callers check ``1/k < mu < 1`` first.
    """
    mu = np.float64(mu)
    return float(np.log(mu) + np.log(np.float64(k - 1)) - np.log1p(-mu))


def pie_alpha_bits(epsilon: float, theta: float, n: int, domain_size: int, releases: int) -> dict[str, float]:
    """(U, alpha)-PIE guarantee in bits from a mechanism's epsilon and MI loss parameter.

    ``alpha = min(t theta min(log2 n, log2 |X|), min(t eps log2 e, (t eps)^2 log2 e, log2 n, t log2 |X|))``.

    Parameters
    ----------
    epsilon : float
        Realised LDP epsilon per release (nats).
    theta : float
        MI loss parameter ``(k mu - 1)/(k - 1)`` (dimensionless).
    n, domain_size, releases : int
        Users, ``|X|``, releases per user ``t``.

    Returns
    -------
    dict
        ``alpha_bits``, ``mechanism_bits``, ``ldp_bits`` (float64, bits).

    References
    ----------
    Murakami & Takahashi (TDP 2021): Def. 3.1 (bits), Prop. 4.1 (eq. 14), Thm. 4.2 (eq. 16),
    Thm. 4.3, Thm. 4.4 (eq. 18), Thm. 4.5.
    """
    log2e = 1.0 / np.log(2.0)
    te = releases * float(epsilon)
    log2n, log2k = float(np.log2(float(n))), float(np.log2(float(domain_size)))
    mech = releases * float(theta) * min(log2n, log2k)
    ldp = min(te * log2e, te * te * log2e, log2n, releases * log2k)
    return {"alpha_bits": min(mech, ldp), "mechanism_bits": mech, "ldp_bits": ldp}


def collision_probability(g: int, prime: int = HASH_PRIME) -> float:
    """Exact ``Pr[h(x) = h(x')]`` for ``x != x'`` in the family ``((a x + b) mod P) mod g``.

    ``(r, s) = (a x + b, a x' + b) mod P`` is uniform over the ``P (P-1)`` ordered pairs
    with ``r != s``; with ``P = q g + rem``, ``rem`` residues mod ``g`` have ``q + 1``
    members and ``g - rem`` have ``q``, so the number of colliding pairs is
    ``rem (q+1) q + (g - rem) q (q-1)``.

    Returns
    -------
    float
        ``kappa <= 1/g``.

    References
    ----------
    Carter & Wegman (1979); Cormen et al., Introduction to Algorithms, Thm. 11.5.
    """
    g = int(g)
    if not (2 <= g <= prime):
        raise ValueError(f"g: must be in [2, {prime}] (got {g})")
    q, rem = divmod(prime, g)
    pairs = rem * (q + 1) * q + (g - rem) * q * (q - 1)
    return float(Fraction(pairs, prime * (prime - 1)))


def hash_values(a, b, x, g: int) -> np.ndarray:
    """``((a x + b) mod P) mod g`` elementwise (broadcasting), int64.

    Parameters
    ----------
    a, b : array_like of int
        Hash seeds, ``1 <= a < P``, ``0 <= b < P``.
    x : array_like of int
        Inputs in ``[0, P)``.
    g : int
        Hash range.

    Returns
    -------
    ndarray of int64
        Broadcast shape of the inputs; int64 arithmetic never overflows since ``a, x < 2**31``.
    """
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    x = np.asarray(x, dtype=np.int64)
    return ((a * x + b) % HASH_PRIME) % np.int64(g)


def _inverse_mod_prime(a: np.ndarray) -> np.ndarray:
    """``a^(P-2) mod P`` elementwise (Fermat), int64; products stay below ``2**62``."""
    result = np.ones_like(a)
    base = a % HASH_PRIME
    e = HASH_PRIME - 2
    while e:
        if e & 1:
            result = result * base % HASH_PRIME
        base = base * base % HASH_PRIME
        e >>= 1
    return result


def support_counts(a, b, y, domain_size: int, g: int, chunk_entries: int = 4_000_000) -> np.ndarray:
    """``c(x) = #{users i : h_{a_i, b_i}(x) = y_i}`` for every ``x`` in ``[0, |X|)`` (int64, shape ``(|X|,)``).

    Two exact methods, the cheaper one is used:

    * direct: evaluate every user's hash on every ``x`` (``n |X|`` evaluations);
    * inversion: ``h(x) = y`` iff ``(a x + b) mod P = v`` for some ``v = y + j g < P``, and each
      such ``v`` has the one preimage ``x = a^{-1} (v - b) mod P``; counting the preimages below
      ``|X|`` costs ``n ceil(P/g)`` operations (e.g. 22 per user instead of 10^7 for
      ``g = 10^8``, ``|X| = 10^7``).

    Parameters
    ----------
    a, b, y : ndarray of int64, shape (n,)
        Validated reports (``1 <= a < P``, ``0 <= b < P``, ``0 <= y < g``).
    domain_size, g : int
    chunk_entries : int
        Work per vectorised chunk (memory ~ 16 bytes each).
    """
    k, g = int(domain_size), int(g)
    n = int(y.size)
    per_user = -(-HASH_PRIME // g)  # ceil(P / g): candidates v per user
    out = np.zeros(k, dtype=np.int64)
    if n == 0:
        return out
    if 4 * per_user < k:
        users = max(1, int(chunk_entries) // per_user)
        steps = np.arange(per_user, dtype=np.int64) * g
        hits = []
        for s in range(0, n, users):
            ainv = _inverse_mod_prime(a[s:s + users])[:, None]
            v = y[s:s + users, None] + steps[None, :]
            x = ainv * ((v - b[s:s + users, None]) % HASH_PRIME) % HASH_PRIME
            hits.append(x[(v < HASH_PRIME) & (x < k)])
        return np.bincount(np.concatenate(hits), minlength=k).astype(np.int64)
    xs = np.arange(k, dtype=np.int64)
    users = max(1, int(chunk_entries) // k)
    xchunk = max(1, min(k, int(chunk_entries)))
    for s in range(0, n, users):
        aa, bb, yy = a[s:s + users, None], b[s:s + users, None], y[s:s + users, None]
        for t in range(0, k, xchunk):
            out[t:t + xchunk] += (hash_values(aa, bb, xs[None, t:t + xchunk], g) == yy).sum(axis=0)
    return out


def split_streams(rng: np.random.Generator) -> tuple[np.random.Generator, np.random.Generator]:
    """Two independent generators (hash seeds, coins) from ``rng``.

    GLH reports publish each user's hash seed ``(a, b)``; if the seed and the perturbation
    coins came from one stream, a reader who reconstructs the stream from the seeds (easy
    for non-cryptographic generators) would learn the coins. ``rng.spawn(2)`` derives two
    children through the generator's ``SeedSequence``. For bit generators without one, the
    fallback keys a fresh ``SeedSequence`` with 512 bits drawn from ``rng`` and builds two
    children of the same bit-generator type.

    Returns
    -------
    (seed_rng, coin_rng) : tuple of numpy.random.Generator
    """
    try:
        first, second = rng.spawn(2)
        return first, second
    except (AttributeError, TypeError, ValueError):
        pass
    key = [int(v) for v in rng.integers(0, 2**63, size=8, dtype=np.int64)]
    kids = np.random.SeedSequence(key).spawn(2)
    bit_type = type(rng.bit_generator)
    try:
        return np.random.Generator(bit_type(kids[0])), np.random.Generator(bit_type(kids[1]))
    except (TypeError, ValueError):
        return np.random.Generator(np.random.PCG64(kids[0])), np.random.Generator(np.random.PCG64(kids[1]))


def domain_labels(domain: Any) -> tuple[int, list[str] | None]:
    """``(|X|, labels or None)`` from an int size or a sequence of distinct labels.

    Raises
    ------
    ValueError
        For anything else or repeated labels.
    """
    if isinstance(domain, (int, np.integer)) and not isinstance(domain, (bool, np.bool_)):
        return int(domain), None
    if isinstance(domain, (str, bytes)) or not isinstance(domain, Sequence):
        raise ValueError(f"domain: must be a size (int) or a list of labels (got {type(domain).__name__})")
    labels = [str(v) for v in domain]
    if len(set(labels)) != len(labels):
        raise ValueError("domain: labels must be distinct")
    return len(labels), labels


def check_items(items: Any, k: int, what: str = "items") -> np.ndarray:
    """``items`` as a 1-D int64 array of indices in ``[0, k)``.

    Raises
    ------
    ValueError
        Naming ``what``: wrong shape, non-integer dtype, or an index out of range.
    """
    x = np.asarray(items)
    if x.ndim != 1:
        raise ValueError(f"{what}: must be a 1-D integer array (got shape {x.shape})")
    if x.size and (x.dtype.kind not in "iu"):
        raise ValueError(f"{what}: must be integers (got dtype {x.dtype})")
    if x.dtype.kind == "u" and x.size and int(x.max()) > np.iinfo(np.int64).max:
        raise ValueError(f"{what}: must be indices in [0, {k})")
    x = x.astype(np.int64, copy=False)
    if x.size and (int(x.min()) < 0 or int(x.max()) >= k):
        raise ValueError(f"{what}: must be indices in [0, {k}) (got range [{int(x.min())}, {int(x.max())}])")
    return x

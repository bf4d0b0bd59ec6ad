"""Numbers shared by the k-ary RR and the GLH runtimes (numpy + stdlib only).

* :func:`keep_probability`: the keep probability ``mu = e^eps/(k + e^eps - 1)`` (eq. 19-20)
  rounded **down** to the ``2**-48`` grid, computed exactly (60-digit decimal ``exp``), so
  the planner and every runtime derive the same grid value from ``params.epsilon`` on any
  platform; the runtime refuses a plan whose ``mu`` is not that value.
* :func:`realized_epsilon`: ``log(mu/nu)`` of a grid channel (numpy float64).
* :func:`pie_alpha_bits`: the (U, alpha)-PIE guarantee in bits (Thm. 4.2/4.4 composed by
  Thm. 4.3/4.5, capped by Prop. 4.1), float64.
* The Carter-Wegman hash family of the GLH (:func:`hash_values`, :func:`collision_probability`)
  over the Mersenne prime :data:`HASH_PRIME` (``2**31 - 1``) or, when ``|X|`` or ``g`` exceeds
  it, :data:`HASH_PRIME_LARGE` (``2**61 - 1``; :func:`hash_prime`).
* :func:`split_streams`: independent generators for the GLH hash seeds and the coins.
"""
from __future__ import annotations

import math
from decimal import ROUND_FLOOR, Decimal, localcontext

import numpy as np
import numpy.typing as npt

from .._hashing import HASH_PRIME, HASH_PRIME_LARGE, collision_probability, hash_prime
from .._sampling import GRID_DENOMINATOR

from .._api import check_items  # the one check of item indices (re-exported)

__all__ = ["HASH_PRIME", "HASH_PRIME_LARGE", "hash_prime", "GRID_STEPS", "keep_probability", "realized_epsilon",
           "pie_alpha_bits",
           "collision_probability", "hash_values", "support_counts", "split_streams", "check_items",
           "inverse_mod_prime"]

_MASK31 = np.uint64(2**31 - 1)
_MASK30 = np.uint64(2**30 - 1)
_P61 = np.uint64(HASH_PRIME_LARGE)


def _fold61(v: np.ndarray) -> np.ndarray:
    """``v mod (2**61 - 1)`` for uint64 ``v`` (two Mersenne folds and one conditional subtraction)."""
    v = (v & _P61) + (v >> np.uint64(61))
    v = (v & _P61) + (v >> np.uint64(61))
    return np.where(v >= _P61, v - _P61, v)


def _mulmod61(a: npt.ArrayLike, x: npt.ArrayLike) -> np.ndarray:
    """``(a x) mod (2**61 - 1)`` elementwise for ``0 <= a, x < 2**61`` (uint64, no overflow).

    With ``a = a1 2^31 + a0``, ``x = x1 2^31 + x0`` (``a1, x1 < 2^30``) and ``2^61 = 1 (mod P)``:
    ``a x = 2 a1 x1 + m 2^31 + a0 x0`` with ``m = a1 x0 + a0 x1 = m1 2^30 + m0``, and
    ``m 2^31 = m1 + m0 2^31 (mod P)``; the four terms sum below ``2^64``.
    """
    a = np.asarray(a).astype(np.uint64)
    x = np.asarray(x).astype(np.uint64)
    a1, a0 = a >> np.uint64(31), a & _MASK31
    x1, x0 = x >> np.uint64(31), x & _MASK31
    m = a1 * x0 + a0 * x1
    total = np.uint64(2) * (a1 * x1) + (m >> np.uint64(30)) + ((m & _MASK30) << np.uint64(31)) + a0 * x0
    return _fold61(total)
#: Number of steps of the probability grid (probabilities are multiples of ``1/GRID_STEPS``).
GRID_STEPS = GRID_DENOMINATOR


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


def hash_values(a: npt.ArrayLike, b: npt.ArrayLike, x: npt.ArrayLike, g: int, prime: int = HASH_PRIME) -> np.ndarray:
    """``((a x + b) mod P) mod g`` elementwise (broadcasting), int64.

    Parameters
    ----------
    a, b : array_like of int
        Hash seeds, ``1 <= a < P``, ``0 <= b < P``.
    x : array_like of int
        Inputs in ``[0, P)``.
    g : int
        Hash range.
    prime : int, default :data:`HASH_PRIME`
        ``P``: :data:`HASH_PRIME` (int64 arithmetic never overflows since ``a, x < 2**31``) or
        :data:`HASH_PRIME_LARGE` (exact 61-bit modular products in uint64, :func:`_mulmod61`).

    Returns
    -------
    ndarray of int64
        Broadcast shape of the inputs.
    """
    if prime == HASH_PRIME_LARGE:
        v = _fold61(_mulmod61(a, x) + np.asarray(b).astype(np.uint64))
        return (v % np.uint64(g)).astype(np.int64)
    if prime != HASH_PRIME:
        raise ValueError(f"prime: must be {HASH_PRIME} or {HASH_PRIME_LARGE} (got {prime})")
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    x = np.asarray(x, dtype=np.int64)
    return ((a * x + b) % HASH_PRIME) % np.int64(g)


def inverse_mod_prime(a: np.ndarray) -> np.ndarray:
    """``a^(P-2) mod P`` elementwise (Fermat), ``P`` = :data:`HASH_PRIME`: the inverse of each hash
    multiplier ``a`` (int64 array of any shape, entries in ``[1, P)``; products stay below ``2**62``).

    Used to invert ``h_{a,b}(x) = ((a x + b) mod P) mod g`` (GLH support counts; the audit's
    preimages). References: Carter & Wegman (1979) universal hashing; Fermat's little theorem.
    """
    result = np.ones_like(a)
    base = a % HASH_PRIME
    e = HASH_PRIME - 2
    while e:
        if e & 1:
            result = result * base % HASH_PRIME
        base = base * base % HASH_PRIME
        e >>= 1
    return result


#: Entries per block of the direct support count: two int64 work arrays of 512 KiB stay in L2.
SUPPORT_BLOCK = 65536


def _division_magic(g: int) -> tuple[int, int]:
    """``(M, s)`` with ``floor(r / g) = (r M) >> s`` for every ``0 <= r < 2**31`` (int64 products).

    Granlund & Montgomery (PLDI 1994), Thm. 4.2: with ``l = ceil(log2 g)``, ``s = 31 + l`` and
    ``M = ceil(2**s / g)``, ``0 <= M g - 2**s < g <= 2**l``; ``M <= 2**32`` so ``r M < 2**63``.
    """
    s = 31 + int(g - 1).bit_length()
    return -(-(1 << s) // g), s


def _direct_counts(a: np.ndarray, b: np.ndarray, y: np.ndarray, k: int, g: int, block: int) -> np.ndarray:
    """``c(x)`` by hashing every ``x`` for every user, in cache-sized blocks, in place.

    ``v = a x + b + 1 < 2**63`` is reduced mod ``P = 2**31 - 1`` by three folds
    ``(v & P) + (v >> 31)`` (each keeps the residue; a positive value stays positive), which
    leave ``w`` in ``[1, P]`` with ``w - 1 = (a x + b) mod P``; then ``h(x) = y`` iff
    ``w mod g = (y + 1) mod g``, with the remainder by a multiply-shift (:func:`_division_magic`).
    No integer division: about 17 vectorised in-place operations per (user, item) pair.
    """
    magic, shift = _division_magic(g)
    xs = np.arange(k, dtype=np.int64)
    out = np.zeros(k, dtype=np.int64)
    width = min(k, max(1, block))
    users = max(1, block // width)
    work = np.empty((users, width), dtype=np.int64)
    tmp = np.empty_like(work)
    hit = np.empty(work.shape, dtype=bool)
    b1 = b + 1
    y1 = (y + 1) % g
    prime = np.int64(HASH_PRIME)
    for s in range(0, y.size, users):
        aa, bb, yy = a[s:s + users, None], b1[s:s + users, None], y1[s:s + users, None]
        for t in range(0, k, width):
            xx = xs[None, t:t + width]
            w, v, e = work[:aa.shape[0], :xx.shape[1]], tmp[:aa.shape[0], :xx.shape[1]], hit[:aa.shape[0], :xx.shape[1]]
            np.multiply(aa, xx, out=w)
            w += bb
            for _ in range(3):
                np.right_shift(w, 31, out=v)
                np.bitwise_and(w, prime, out=w)
                w += v
            np.multiply(w, magic, out=v)
            np.right_shift(v, shift, out=v)
            v *= g
            w -= v
            np.equal(w, yy, out=e)
            out[t:t + xx.shape[1]] += np.count_nonzero(e, axis=0)
    return out


def _inverted_counts(a: np.ndarray, b: np.ndarray, y: np.ndarray, k: int, g: int,
                     chunk_entries: int) -> np.ndarray:
    """``c(x)`` by inverting the hash: the ``ceil(P/g)`` preimages of ``y`` per user."""
    per_user = -(-HASH_PRIME // g)
    users = max(1, int(chunk_entries) // per_user)
    steps = np.arange(per_user, dtype=np.int64) * g
    hits = []
    for s in range(0, y.size, users):
        ainv = inverse_mod_prime(a[s:s + users])[:, None]
        v = y[s:s + users, None] + steps[None, :]
        x = ainv * ((v - b[s:s + users, None]) % HASH_PRIME) % HASH_PRIME
        hits.append(x[(v < HASH_PRIME) & (x < k)])
    return np.bincount(np.concatenate(hits), minlength=k).astype(np.int64)


def _generic_counts(a: np.ndarray, b: np.ndarray, y: np.ndarray, k: int, g: int, prime: int,
                    block: int) -> np.ndarray:
    """``c(x)`` with :func:`hash_values` (any prime) over blocks of about ``block`` (user, item) pairs."""
    out = np.zeros(k, dtype=np.int64)
    width = min(k, max(1, block))
    users = max(1, block // width)
    for s in range(0, y.size, users):
        aa, bb, yy = a[s:s + users, None], b[s:s + users, None], y[s:s + users, None]
        for t in range(0, k, width):
            xx = np.arange(t, min(k, t + width), dtype=np.int64)[None, :]
            out[t:t + xx.shape[1]] += np.count_nonzero(hash_values(aa, bb, xx, g, prime) == yy, axis=0)
    return out


def support_counts(a: npt.ArrayLike, b: npt.ArrayLike, y: npt.ArrayLike, domain_size: int, g: int,
                   chunk_entries: int | None = None,
                   method: str = "auto", *, prime: int = HASH_PRIME) -> np.ndarray:
    """``c(x) = #{users i : h_{a_i, b_i}(x) = y_i}`` for every ``x`` in ``[0, |X|)`` (int64, shape ``(|X|,)``).

    Two exact methods; ``method="auto"`` picks the cheaper one by cost:

    * ``"direct"``: evaluate every user's hash on every ``x`` (``n |X|`` pairs, about 3-6 ns
      each on one core: blocks of ``chunk_entries`` pairs, in place, no integer division;
      :func:`_direct_counts`);
    * ``"inversion"``: ``h(x) = y`` iff ``(a x + b) mod P = v`` for some ``v = y + j g < P``,
      and each such ``v`` has the one preimage ``x = a^{-1} (v - b) mod P``; counting the
      preimages below ``|X|`` costs ``n ceil(P/g)`` candidates (about 4x a direct pair each)
      plus a modular inverse per user (e.g. 22 candidates per user instead of 10^7 pairs for
      ``g = 10^8``, ``|X| = 10^7``). Chosen when ``4 ceil(P/g) + 64 < |X|``.

    Parameters
    ----------
    a, b, y : ndarray of int64, shape (n,)
        Validated reports (``1 <= a < P``, ``0 <= b < P``, ``0 <= y < g``).
    domain_size, g : int
    chunk_entries : int, optional
        Pairs (direct; default :data:`SUPPORT_BLOCK`) or candidates (inversion; default 4e6)
        per vectorised block.
    method : {"auto", "direct", "inversion"}
    prime : int, default :data:`HASH_PRIME`
        The family's prime; with :data:`HASH_PRIME_LARGE` the counts are computed directly
        with :func:`hash_values` in blocks of ``chunk_entries`` pairs (``method`` is ignored).

    Returns
    -------
    ndarray of int64, shape (|X|,)

    References
    ----------
    Murakami & Takahashi (TDP 2021), eq. 20 (``c_GLH``); Wang et al. (USENIX Security 2017).
    """
    k, g = int(domain_size), int(g)
    if method not in ("auto", "direct", "inversion"):
        raise ValueError(f"method: must be one of ['auto', 'direct', 'inversion'] (got {method!r})")
    a, b, y = (np.asarray(v, dtype=np.int64) for v in (a, b, y))
    if y.size == 0:
        return np.zeros(k, dtype=np.int64)
    if prime != HASH_PRIME:
        return _generic_counts(a, b, y, k, g, prime, SUPPORT_BLOCK if chunk_entries is None else int(chunk_entries))
    per_user = -(-HASH_PRIME // g)  # ceil(P / g): candidates v per user
    if method == "inversion" or (method == "auto" and 4 * per_user + 64 < k):
        return _inverted_counts(a, b, y, k, g, 4_000_000 if chunk_entries is None else chunk_entries)
    return _direct_counts(a, b, y, k, g, SUPPORT_BLOCK if chunk_entries is None else int(chunk_entries))


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



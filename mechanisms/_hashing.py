"""The Carter-Wegman hash family's primes and collision probability (stdlib only).

The GLH runtime (:mod:`.pie`) hashes with ``((a x + b) mod P) mod g``; the shuffle gate's blanket
bound (:mod:`._amplification`) needs the family's exact collision probability. Both read them here,
below the family packages, so that the shared runtime modules import nothing of a family package.
"""
from __future__ import annotations

from fractions import Fraction

__all__ = ["HASH_PRIME", "HASH_PRIME_LARGE", "hash_prime", "collision_probability"]

#: Mersenne prime of the Carter-Wegman hash family when ``|X|`` and ``g`` do not exceed it.
HASH_PRIME = 2**31 - 1
#: Mersenne prime of the family for larger domains or hash ranges (``|X|``, ``g`` up to it).
HASH_PRIME_LARGE = 2**61 - 1


def hash_prime(domain_size: int, g: int) -> int:
    """The GLH's hash prime: :data:`HASH_PRIME` when ``|X|, g <= 2**31 - 1``, else :data:`HASH_PRIME_LARGE`.

    A universal family ``((a x + b) mod P) mod g`` needs ``|X| <= P`` (distinct inputs stay
    distinct mod ``P``) and ``g <= P``; the small prime keeps int64 products exact and the
    support counts fast, the large one (Mersenne, ``2**61 - 1``) serves domains up to ``2**61 - 1``.

    Raises
    ------
    ValueError
        ``|X|`` or ``g`` above :data:`HASH_PRIME_LARGE`.

    References
    ----------
    Carter & Wegman (1979), universal hashing; Cormen et al., Introduction to Algorithms, Thm. 11.5
    (the family is universal for inputs below ``P``).
    """
    k, g = int(domain_size), int(g)
    if max(k, g) <= HASH_PRIME:
        return HASH_PRIME
    if max(k, g) <= HASH_PRIME_LARGE:
        return HASH_PRIME_LARGE
    raise ValueError(f"domain: the GLH hashes at most {HASH_PRIME_LARGE} items into at most that many values "
                     f"(got |X| = {k}, g = {g})")


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

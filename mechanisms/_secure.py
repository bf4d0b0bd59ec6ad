"""Cryptographically secure randomness for production clients.

``numpy``'s bit generators (PCG64, Philox, SFC64, MT19937) are fast and statistically
sound, but *predictable*: whoever sees a few outputs (GLH reports publish a hash
seed drawn by the client) can reconstruct the state and the coins that perturbed
the user's value. Production clients should draw from a cryptographically secure
generator; :func:`secure_rng` wraps randomgen's ChaCha (20 rounds) keyed from the
operating system's entropy in a :class:`numpy.random.Generator`, which every
sampling function of the runtime accepts and samples from exactly.

The 256-bit secret is the ChaCha key itself (randomgen's ``key=``), not a ``seed=``:
a seed goes through numpy's ``SeedSequence``, whose pool holds 128 bits, so a seeded
ChaCha has at most 128 bits of entropy whatever the seed's width.
"""
from __future__ import annotations

import secrets

import numpy as np

__all__ = ["secure_rng", "is_secure", "KEY_BITS"]

#: Width of the ChaCha key drawn from the operating system's CSPRNG.
KEY_BITS = 256

_MISSING = ("secure_rng needs the package 'randomgen' (a cryptographically secure ChaCha bit generator): "
            "pip install 'ldpplan[secure]'")


def secure_rng(seed: int | None = None) -> np.random.Generator:
    """A :class:`numpy.random.Generator` over a cryptographically secure bit generator.

    Parameters
    ----------
    seed : int, optional
        ``None`` (production): a fresh 256-bit key from :func:`secrets.randbits`
        (the operating system's CSPRNG), used as the ChaCha key whole (all 256 bits;
        counter 0). An int in ``[0, 2**256)`` is used as the key the same way and gives a
        reproducible stream, for tests only: a known key makes the stream predictable.

    Returns
    -------
    numpy.random.Generator
        Over ``randomgen.ChaCha(key=..., counter=0, rounds=20)``; its
        ``bit_generator.state["state"]["keysetup"]`` holds the key as 8 little-endian
        32-bit words.

    Raises
    ------
    ImportError
        One line naming the extra to install when randomgen is missing.
    ValueError
        ``seed`` is not an integer in ``[0, 2**256)``.

    References
    ----------
    D. J. Bernstein, "ChaCha, a variant of Salsa20" (2008); randomgen's ChaCha bit generator.
    """
    try:
        from randomgen import ChaCha  # deferred: randomgen
    except ImportError:  # pragma: no cover - exercised via a monkeypatched import in tests
        raise ImportError(_MISSING) from None
    if seed is None:
        key = secrets.randbits(KEY_BITS)
    elif isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) \
            or not 0 <= int(seed) < 1 << KEY_BITS:
        raise ValueError(f"seed: must be an integer in [0, 2**{KEY_BITS}) or None (got {seed!r})")
    else:
        key = int(seed)
    return np.random.Generator(ChaCha(key=key, counter=0, rounds=20))


def is_secure(rng: np.random.Generator) -> bool:
    """True when ``rng`` draws from a bit generator this module considers cryptographically secure."""
    name = type(rng.bit_generator).__name__
    return name in {"ChaCha", "AESCounter", "SPECK128"}

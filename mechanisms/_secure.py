"""Cryptographically secure randomness for production clients.

``numpy``'s bit generators (PCG64, Philox, SFC64, MT19937) are fast and statistically
sound, but *predictable*: whoever sees a few outputs (GLH reports publish a hash
seed drawn by the client) can reconstruct the state and the coins that perturbed
the user's value. Production clients should draw from a cryptographically secure
generator; :func:`secure_rng` wraps randomgen's ChaCha (20 rounds) keyed from the
operating system's entropy in a :class:`numpy.random.Generator`, which every
sampling function of the runtime accepts and samples from exactly.
"""
from __future__ import annotations

import secrets

import numpy as np

__all__ = ["secure_rng", "is_secure"]

_MISSING = ("secure_rng needs the package 'randomgen' (a cryptographically secure ChaCha bit generator): "
            "pip install 'ldpplan[secure]'")


def secure_rng(seed: int | None = None) -> np.random.Generator:
    """A :class:`numpy.random.Generator` over a cryptographically secure bit generator.

    Parameters
    ----------
    seed : int, optional
        ``None`` (production): a fresh 256-bit key from :func:`secrets.randbits`
        (the operating system's CSPRNG). An int gives a reproducible stream, for
        tests only: a known seed makes the stream predictable.

    Returns
    -------
    numpy.random.Generator
        Over ``randomgen.ChaCha(rounds=20)``.

    Raises
    ------
    ImportError
        One line naming the extra to install when randomgen is missing.

    References
    ----------
    D. J. Bernstein, "ChaCha, a variant of Salsa20" (2008); randomgen's ChaCha bit generator.
    """
    try:
        from randomgen import ChaCha
    except ImportError:  # pragma: no cover - exercised via a monkeypatched import in tests
        raise ImportError(_MISSING) from None
    key = secrets.randbits(256) if seed is None else int(seed)
    return np.random.Generator(ChaCha(seed=key, rounds=20))


def is_secure(rng: np.random.Generator) -> bool:
    """True when ``rng`` draws from a bit generator this module considers cryptographically secure."""
    name = type(rng.bit_generator).__name__
    return name in {"ChaCha", "AESCounter", "SPECK128"}

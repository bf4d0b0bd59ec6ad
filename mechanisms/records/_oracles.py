"""Per-attribute frequency oracles of a record (numpy only): GRR and OUE on the 2^-48 grid.

Each attribute ``j`` of a record has ``k_j`` values and one oracle with one grid number:

* ``"grr"``: ``P`` (keep probability, rounded *down* on the grid); the other ``k - 1`` values get
  ``q = (1 - P)/(k - 1)`` each; worst ratio ``P (k - 1)/(1 - P)``;
* ``"oue"``: the held bit is 1 with probability 1/2, every other bit with ``q`` (rounded *up*);
  worst ratio ``(1 - q)/q`` (two bits differ).

References
----------
T. Wang, J. Blocki, N. Li, S. Jha, USENIX Security 2017, Sec. 4 (GRR, OUE).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._sampling import GRID, bernoulli_columns, bernoulli_iid, to_grid, uniform_bits, uniform_below

__all__ = ["ORACLES", "grid_number", "support", "exact_ratio", "perturb_attribute",
           "support_counts", "width"]

#: the frequency oracles a record's attribute may use
ORACLES = ("grr", "oue")


def grid_number(oracle: str, epsilon: float, k: int) -> float:
    """The grid number of an attribute at budget ``epsilon``: GRR's ``P`` (down) or OUE's ``q`` (up).

    Kept inside ``[2^-48, 1 - 2^-48]`` (a large ``epsilon`` would round ``P`` to 1 or ``q`` to 0: an
    infinite ratio); that only lowers the attribute's epsilon.
    """
    x = math.exp(min(float(epsilon), 700.0))  # beyond, P and q are at the grid's ends anyway
    step = 1.0 / GRID
    if oracle == "grr":
        return min(float(to_grid(x / (x + k - 1), "down")), 1.0 - step)
    return max(float(to_grid(1.0 / (x + 1.0), "up")), step)


def support(oracle: str, number: float, k: int) -> tuple[float, float]:
    """``(mu, nu)``: the probability a holder's / a non-holder's report supports an item."""
    if oracle == "grr":
        return number, (1.0 - number) / (k - 1)
    return 0.5, number


def exact_ratio(oracle: str, number: float, k: int) -> Fraction:
    """The attribute's worst likelihood ratio, exactly (GRR ``P (k-1)/(1-P)``, OUE ``(1-q)/q``)."""
    p = Fraction(number)
    return p * (k - 1) / (1 - p) if oracle == "grr" else (1 - p) / p


def width(oracle: str, k: int) -> int:
    """Bytes of one packed OUE report (``ceil(k/8)``); 0 for GRR (an int64 value)."""
    return (k + 7) // 8 if oracle == "oue" else 0


def perturb_attribute(oracle: str, number: float, k: int, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Reports of values ``x`` (int64, shape (n,)): GRR values (int64, (n,)) or OUE bits packed (uint8, (n, ceil(k/8)))."""
    n = x.size
    if oracle == "grr":
        keep = bernoulli_iid(rng, number, n)
        other = uniform_below(rng, k - 1, n)
        return np.where(keep, x, other + (other >= x)).astype(np.int64)
    bits = bernoulli_columns(rng, np.full(k, number), n)
    bits[np.arange(n), x] = uniform_bits(rng, n).astype(bool)
    return np.packbits(bits, axis=1, bitorder="little")


def support_counts(oracle: str, k: int, column: np.ndarray) -> np.ndarray:
    """Per value, the number of reports in ``column`` that support it (int64, shape (k,))."""
    if oracle == "grr":
        return np.bincount(column, minlength=k).astype(np.int64)
    bits = np.unpackbits(column, axis=1, count=k, bitorder="little")
    return bits.sum(axis=0, dtype=np.int64)

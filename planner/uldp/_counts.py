"""Aggregate-mode simulation: sample a uRR / uRAP aggregate directly from the true counts.

Given how many users hold each item, the report counts of the uRR (a sum of independent
multinomials, eq. 6) and the per-bit counts of the uRAP (independent binomials, eqs. 9-10)
are drawn in O(|X_S|^2 + |X|) and O(|X|) instead of perturbing every user. The result has
exactly the distribution of ``mech.aggregate(mech.perturb(x))`` (up to numpy's binomial and
multinomial samplers, which are not restricted to the 2^-48 grid).
"""
from __future__ import annotations

import numpy as np

from ...mechanisms import Aggregate

__all__ = ["sample_aggregate"]


def _urr_counts(mech, true_counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    s = np.asarray(mech.sensitive_mask)
    sens = np.asarray(mech.sensitive)
    ks = sens.size
    stay = rng.binomial(true_counts, np.where(s, mech.c1, mech.c3))
    out = stay.astype(np.int64)
    moved = true_counts - stay
    moved_n = int(moved[~s].sum())
    if moved_n:
        out[sens] += rng.multinomial(moved_n, np.full(ks, 1.0 / ks))  # X_N -> each of X_S with c2
    if ks > 1:
        uniform = np.full(ks - 1, 1.0 / (ks - 1))
        for pos, item in enumerate(sens):
            m = int(moved[item])
            if m:
                draw = rng.multinomial(m, uniform)  # X_S minus {item}, each with c2
                out[sens[:pos]] += draw[:pos]
                out[sens[pos + 1:]] += draw[pos:]
    return out


def _urap_counts(mech, true_counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    s = np.asarray(mech.sensitive_mask)
    n = int(true_counts.sum())
    own = rng.binomial(true_counts, np.where(s, mech.theta, 1.0 - mech.d2))
    other = np.where(s, rng.binomial(n - true_counts, mech.d1), 0)
    return (own + other).astype(np.int64)


def sample_aggregate(mech, true_counts, rng: np.random.Generator, mechanism: str | None = None) -> Aggregate:
    """An aggregate of ``sum(true_counts)`` users of a uRR or uRAP runtime, sampled from the counts.

    Parameters
    ----------
    mech : UtilityOptimizedRR or UtilityOptimizedRAPPOR (or BasicRAPPOR)
    true_counts : int array, shape (|X|,)
        Users per item.
    rng : numpy.random.Generator
    mechanism : str, optional
        Name recorded in the aggregate (default ``mech.mechanism``; ``"pum"`` for a PUM's common).

    Returns
    -------
    Aggregate
        ``counts["y"]`` (uRR) or ``counts["bits"]`` (uRAP), ``n = sum(true_counts)``.

    References
    ----------
    Murakami & Kawamoto 2019, eq. (6) (uRR) and eqs. (9)-(10) (uRAP).
    """
    c = np.asarray(true_counts, dtype=np.int64)
    name = mechanism or mech.mechanism
    if hasattr(mech, "c1"):
        return Aggregate(name, int(c.sum()), {"y": _urr_counts(mech, c, rng)})
    return Aggregate(name, int(c.sum()), {"bits": _urap_counts(mech, c, rng)})

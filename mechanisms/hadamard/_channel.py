"""Numbers of the Hadamard response runtime (numpy + stdlib only).

The runtime derives these itself (it imports nothing of the planner or the solvers), so a plan's
numbers are re-derived independently of the planner that wrote them:

* :func:`output_size`: ``K = 2^ceil(log2(k + 1))``;
* :func:`keep_probability`: ``p = e^eps/(1 + e^eps)`` rounded **down** to the ``2^-48`` grid
  (60-digit decimal ``exp``: the same value on every platform);
* :func:`in_set`: ``y in C_x`` by the parity of ``(x + 1) & y`` (row ``x + 1`` of the Sylvester
  matrix ``H_K``; no ``K x K`` matrix);
* :func:`set_counts`: the reports in each ``C_x`` from the ``K`` output counts by the fast
  Walsh-Hadamard transform (int64, exact).

References
----------
Acharya, Sun & Zhang, "Hadamard Response: Estimating Distributions Privately, Efficiently, and with
Little Communication", AISTATS 2019 (arXiv:1802.04705).
"""
from __future__ import annotations

import math
from decimal import ROUND_FLOOR, Decimal, localcontext
from fractions import Fraction
from typing import Any, Sequence

import numpy as np

__all__ = ["GRID_STEPS", "output_size", "keep_probability", "realized_epsilon", "exact_epsilon", "in_set",
           "set_counts", "domain_labels", "check_items"]

#: Number of steps of the probability grid.
GRID_STEPS = 2**48


def output_size(k: int) -> int:
    """``K``: the smallest power of two above ``k`` (``2^ceil(log2(k + 1))``)."""
    return 1 << int(k).bit_length()


def keep_probability(epsilon: float) -> float:
    """``e^eps/(1 + e^eps)`` rounded down to the ``2^-48`` grid, at most ``1 - 2^-48``.

    Raises
    ------
    ValueError
        For a non-finite or non-positive epsilon.
    """
    eps = float(epsilon)
    if not (math.isfinite(eps) and eps > 0.0):
        raise ValueError(f"epsilon: must be finite and > 0 (got {epsilon!r})")
    eps = min(eps, 100.0)
    with localcontext() as ctx:
        ctx.prec = 60
        e = Decimal(eps).exp()
        steps = int((e / (1 + e) * GRID_STEPS).to_integral_value(rounding=ROUND_FLOOR))
    return min(steps, GRID_STEPS - 1) / GRID_STEPS


def realized_epsilon(p: float) -> float:
    """``log(p/(1 - p))`` in float64 (nats); callers check ``1/2 < p < 1``."""
    p = np.float64(p)
    return float(np.log(p) - np.log1p(-p))


def exact_epsilon(p: float) -> Decimal:
    """``ln(p/(1 - p))`` of the exact rational ``p`` (60 digits)."""
    r = Fraction(p) / (1 - Fraction(p))
    with localcontext() as ctx:
        ctx.prec = 60
        return Decimal(r.numerator).ln() - Decimal(r.denominator).ln()


def in_set(x, y) -> np.ndarray:
    """``y in C_x`` (``popcount((x + 1) & y)`` even), broadcasting ``x`` and ``y``."""
    z = np.bitwise_and(np.asarray(x, dtype=np.int64) + 1, np.asarray(y, dtype=np.int64))
    return (np.bitwise_count(z) & 1) == 0


def set_counts(counts: np.ndarray, k: int) -> np.ndarray:
    """``c(x) = sum_{y in C_x} counts[y]`` for ``x < k`` (int64, exact), by the fast Walsh-Hadamard transform.

    ``T = H_K counts`` has ``T[x + 1] = c(x) - (n - c(x))``, so ``c(x) = (n + T[x + 1]) / 2``.
    ``O(K log K)`` time, ``K`` entries of memory.
    """
    v = np.array(counts, dtype=np.int64, copy=True)
    K = v.shape[0]
    h = 1
    while h < K:
        w = v.reshape(-1, 2, h)
        a = w[:, 0, :].copy()
        w[:, 0, :] += w[:, 1, :]
        w[:, 1, :] = a - w[:, 1, :]
        h *= 2
    return (int(counts.sum()) + v[1:k + 1]) // 2


def domain_labels(domain: Any) -> tuple[int, list[str] | None]:
    """``(k, labels or None)`` from an int size or a sequence of distinct labels.

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
    """``items`` as a 1-D int64 array of indices in ``[0, k)`` (ValueError naming ``what``)."""
    x = np.asarray(items)
    if x.ndim != 1:
        raise ValueError(f"{what}: must be a 1-D integer array (got shape {x.shape})")
    if x.size and x.dtype.kind not in "iu":
        raise ValueError(f"{what}: must be integers (got dtype {x.dtype})")
    if x.dtype.kind == "u" and x.size and int(x.max()) > np.iinfo(np.int64).max:
        raise ValueError(f"{what}: must be indices in [0, {k})")
    x = x.astype(np.int64, copy=False)
    if x.size and (int(x.min()) < 0 or int(x.max()) >= k):
        raise ValueError(f"{what}: must be indices in [0, {k}) (got range [{int(x.min())}, {int(x.max())}])")
    return x

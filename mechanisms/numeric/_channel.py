"""The numbers of a numeric channel: integer numerators over ``2^48``, exact sampling, epsilon (numpy only).

One copy of what the runtime and the planner both need (:mod:`ldpplan.solvers._numeric_channel`
imports :func:`sample_rows` back): the value map onto ``[-1, 1]``, the randomized rounding to the
input grid, exact sampling of an output from integer numerators, and the channel's epsilon from
its numerators in float64 rounded toward the safe side and exactly (``Fraction`` / 50-digit log).

A channel is ``C`` components with weights ``w_c`` (integers over ``2^48``, summing to ``2^48``);
component ``c`` owns a block of ``m_c`` outputs, and its numerators ``N_c[i, j]`` (one row per
input of the grid) sum to ``2^48`` per row. ``Pr[output j of block c | input i] = w_c N_c[i, j] /
2^96``. Outputs of different blocks are disjoint, so the ratio of a column is the ratio of its
component's numerators: ``epsilon = max over columns of ln(max_i N / min_i N)``.

References
----------
.. [1] I. Mironov, "On significance of the least significant bits for differential privacy", CCS 2012
   (finite output grids and probabilities on a declared grid).
.. [2] N. Wang et al., "Collecting and analyzing multidimensional data with local differential
   privacy", ICDE 2019, Sec. III (the Hybrid Mechanism: PM with probability alpha, Duchi's otherwise).
"""
from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any, Sequence

import numpy as np

from .._plan import PlanError, log_fraction, round_up
from .._sampling import bernoulli, check_rng, to_grid, uniform_words

__all__ = ["SCALE", "to_unit", "round_to_grid", "sample_rows", "check_numerators", "float_epsilon",
           "exact_log_epsilon", "decisive_column"]

#: every numerator is over ``2^48`` (``mechanisms._sampling.GRID``)
SCALE = 1 << 48


def to_unit(values: Any, low: float, high: float) -> np.ndarray:
    """Clip floats to ``[low, high]`` and map them affinely onto ``[-1, 1]`` (shape (n,)).

    Raises
    ------
    ValueError
        Values that are not a 1-D array of finite numbers.
    """
    x = np.asarray(values)
    if x.ndim != 1 or (x.size and x.dtype.kind not in "iuf") or x.dtype == bool:
        raise ValueError(f"values: must be a 1-D array of numbers (got {x.dtype}, shape {x.shape})")
    x = x.astype(np.float64)
    if x.size and not np.all(np.isfinite(x)):
        raise ValueError("values: must be finite numbers (NaN or infinity found)")
    clipped = np.clip(x, low, high)
    return np.clip(2.0 * (clipped - low) / (high - low) - 1.0, -1.0, 1.0)


def round_to_grid(x: np.ndarray, grid: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Randomized rounding of ``x`` (in ``[-1, 1]``) to its two neighbours on ``grid`` (indices, int64).

    ``x`` between ``g_a < g_b`` goes up with probability ``(x - g_a)/(g_b - g_a)`` rounded to the
    ``2^-48`` grid (an exact Bernoulli draw), so ``E[g] = x`` up to ``2^-49 (g_b - g_a)``. Every
    user's report is then a mixture of two epsilon-LDP rows, hence epsilon-LDP with the same
    epsilon (a column's mixture lies between its smallest and largest entries).
    """
    upper = np.clip(np.searchsorted(grid, x, side="left"), 1, grid.size - 1)
    lower = upper - 1
    span = grid[upper] - grid[lower]
    t = np.clip((x - grid[lower]) / span, 0.0, 1.0)
    up = bernoulli(rng, to_grid(t, "nearest")) if x.size else np.zeros(0, dtype=bool)
    return np.where(up, upper, lower).astype(np.int64)


def sample_rows(cumulative: np.ndarray, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Exact sampling: column ``j`` of row ``rows[u]`` with probability ``N[rows[u], j] / 2^48``.

    Parameters
    ----------
    cumulative : ndarray of int64, shape (k, m)
        Row-wise cumulative sums of integer numerators (each row ends at ``2^48``).
    rows : ndarray of int64, shape (n,)
    rng : numpy.random.Generator
        One uniform 64-bit word per draw (``Generator.integers``), its top 48 bits used: exact for
        every bit generator.

    Returns
    -------
    ndarray of int64, shape (n,)
    """
    check_rng(rng)
    rows = np.asarray(rows, dtype=np.int64).ravel()
    draws = (uniform_words(rng, rows.size) >> np.uint64(16)).astype(np.int64)
    out = np.empty(rows.size, dtype=np.int64)
    for i in np.unique(rows):
        mask = rows == i
        out[mask] = np.searchsorted(cumulative[i], draws[mask], side="right")
    return out


def check_numerators(numerators: Any, k: int, sizes: Sequence[int], field: str = "params.numerators") -> np.ndarray:
    """The plan's numerators as an int64 array of shape (k, sum(sizes)), each block's rows summing to ``2^48``.

    Raises
    ------
    PlanError
        Not a (k, m) table of integers in ``[0, 2^48]``, or a block row that does not sum to ``2^48``.
    """
    rows = list(numerators) if isinstance(numerators, (list, tuple)) else None
    width = int(sum(sizes))
    if rows is None or len(rows) != k:
        raise PlanError(f"{field}: must hold one row per input grid point ({k})")
    for i, row in enumerate(rows):
        if not isinstance(row, (list, tuple)) or len(row) != width or \
                any(isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= SCALE for v in row):
            raise PlanError(f"{field}[{i}]: must be {width} integers in [0, 2^48]")
    table = np.array(rows, dtype=np.int64).reshape(k, width)
    start = 0
    for c, size in enumerate(sizes):
        sums = table[:, start:start + size].sum(axis=1)
        bad = np.nonzero(sums != SCALE)[0]
        if bad.size:
            raise PlanError(f"{field}[{int(bad[0])}]: component {c} sums to {int(sums[bad[0]])}, not 2^48")
        start += size
    return table


def decisive_column(table: np.ndarray, weights: Sequence[int], sizes: Sequence[int]) -> tuple[int, int, int]:
    """``(column, high, low)`` of the largest ratio ``max/min`` over reachable columns (exact integers).

    Raises
    ------
    PlanError
        An output reachable from one input and not from another (infinite epsilon).
    """
    live = np.repeat(np.asarray(weights, dtype=np.int64) > 0, np.asarray(sizes, dtype=np.int64))
    high, low = table.max(axis=0), table.min(axis=0)
    reach = live & (high > 0)
    zero = np.nonzero(reach & (low == 0))[0]
    if zero.size:
        raise PlanError(f"params.numerators: output {int(zero[0])} is reachable from one input and not from "
                        "another (infinite epsilon)")
    best = (-1, 1, 1)
    for j in np.nonzero(reach)[0]:
        if int(high[j]) * best[2] > best[1] * int(low[j]):
            best = (int(j), int(high[j]), int(low[j]))
    return best


def float_epsilon(table: np.ndarray, weights: Sequence[int], sizes: Sequence[int]) -> float:
    """``max ln(max/min)`` of the columns in float64, rounded up (a few ulps, ``_plan.round_up``).

    ``log1p((max - min)/min)``: the integer difference is exact and the division correctly rounded,
    so the result is within about one ulp of the exact logarithm before the rounding up.
    """
    _, high, low = decisive_column(table, weights, sizes)
    return round_up(math.log1p((high - low) / low)) if high != low else 0.0


def exact_log_epsilon(table: np.ndarray, weights: Sequence[int], sizes: Sequence[int]) -> Decimal:
    """``ln(max/min)`` of the decisive column to 50 digits (the exact path of ``check_claim``)."""
    _, high, low = decisive_column(table, weights, sizes)
    with localcontext() as context:
        context.prec = 60
        return +log_fraction(Fraction(high, low))

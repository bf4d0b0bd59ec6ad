"""The numbers of a numeric plan: a mechanism's exact channel on grids, its exact epsilon, bias and variance.

:func:`planned_channel` builds a plan mechanism's channel (``duchi``, ``piecewise``, ``hybrid``,
``square-wave``) as components of :mod:`._numeric_channel` channels on one input grid. Hybrid is the
exact mixture: PM's cells and Duchi's two outputs as disjoint output blocks, weights ``alpha`` and
``1 - alpha`` (``alpha = 1 - e^(-eps/2)`` above ``eps*``, rounded to the ``2^-48`` grid; 0 below, when
HM is Duchi on the grid). Its epsilon is the largest of its components' (disjoint outputs: the weight
cancels in each column's ratio), decided exactly by :func:`._numeric_channel.exact_epsilon`.

:func:`mixture_worst_variance` is the exact worst case over *every* real input of the report's
variance under the runtime's randomized rounding: between neighbours ``a < b`` the input goes to
``b`` with probability ``t``, so ``Var = (1-t) V_a + t V_b + t (1-t) (m_b - m_a)^2`` (``V``, ``m``: a
grid point's report variance and mean), a concave quadratic in ``t`` maximised in closed form.

References
----------
.. [1] N. Wang et al., ICDE 2019, Sec. III (HM: PM with probability alpha, Duchi's otherwise).
.. [2] J. C. Duchi, M. I. Jordan, M. J. Wainwright, JASA 2018, Sec. 4.2.3.
.. [3] Z. Li et al., SIGMOD 2020, Sec. 4 (Square Wave's bandwidth).
"""
from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from typing import Sequence

import numpy as np

from ..mechanisms.numeric._channel import SCALE
from ..mechanisms.numeric._promises import default_input_points, equal_grid
from ._numeric_channel import (DiscreteChannel, ExactEpsilon, duchi_channel, exact_epsilon, piecewise_channel,
                               square_wave_channel)
from ._numeric_params import hybrid_alpha, piecewise_bound, square_wave_bandwidth

__all__ = ["PLAN_MECHANISMS", "PlannedChannel", "planned_channel", "default_cells", "components_of",
           "mixture_worst_variance", "mixture_mean_bias", "solver_name"]

#: the plan mechanisms, in the order the tables list them
PLAN_MECHANISMS = ("duchi", "piecewise", "hybrid", "square-wave")
#: fewest output cells the planner picks (PM, SW)
MIN_CELLS = 256
#: most output cells (PM, SW): a plan's channel stays below 2^20 entries with 65 input points
MAX_CELLS = 16384


def solver_name(mechanism: str) -> str:
    """The closed forms' name of a plan mechanism (``square-wave`` -> ``square_wave``)."""
    return mechanism.replace("-", "_")


@dataclasses.dataclass(frozen=True)
class PlannedChannel:
    """A plan's channel: components on one input grid (see the module docstring).

    Attributes
    ----------
    mechanism : str
    epsilon : float
    input_grid : tuple of float, shape (k,)
    output_values : tuple of float, shape (m,)
    component_weights, component_sizes : tuple of int
    numerators : tuple of int, shape (k m,)
        Row-major.
    components : tuple of DiscreteChannel
    """

    mechanism: str
    epsilon: float
    input_grid: tuple[float, ...]
    output_values: tuple[float, ...]
    component_weights: tuple[int, ...]
    component_sizes: tuple[int, ...]
    numerators: tuple[int, ...]
    components: tuple[DiscreteChannel, ...]

    def exact(self) -> ExactEpsilon:
        """The exact epsilon: the largest over components with a positive weight (disjoint outputs)."""
        live = [exact_epsilon(c) for c, w in zip(self.components, self.component_weights) if w > 0]
        return max(live, key=lambda e: e.ratio)


def default_cells(mechanism: str, epsilon: float) -> int:
    """Output cells: at least 256 and at least twice the cells that one band's width needs."""
    if mechanism in ("piecewise", "hybrid"):
        bound = piecewise_bound(epsilon)
        needed = 2 * bound / (bound - 1)
    elif mechanism == "square-wave":
        b = square_wave_bandwidth(epsilon)
        needed = (1 + 2 * b) / (2 * b)
    else:
        return 2
    return max(MIN_CELLS, 2 * math.ceil(needed))


def planned_channel(mechanism: str, epsilon: float, input_points: int | None = None,
                    output_cells: int | None = None, task: str = "mean") -> PlannedChannel:
    """Build a plan mechanism's exact channel.

    Parameters
    ----------
    mechanism : {"duchi", "piecewise", "hybrid", "square-wave"}
    epsilon : float
        Nats.
    input_points : int, optional
        Input grid size (default ``default_input_points(mechanism, task)``: 2 for Duchi's mean, 65
        for the others' mean, 1025 for a distribution).
    output_cells : int, optional
        PM / SW cells (default :func:`default_cells`).
    task : {"mean", "distribution"}
        What the plan estimates (sets the default input grid).

    Raises
    ------
    ValueError
        An unknown mechanism, or a grid the channel builders refuse (naming the least ``cells``).
    """
    if mechanism not in PLAN_MECHANISMS:
        raise ValueError(f"mechanism: must be one of {list(PLAN_MECHANISMS)} (got {mechanism!r})")
    points = default_input_points(mechanism, task) if input_points is None else int(input_points)
    grid = tuple(equal_grid(points).tolist())
    cells = default_cells(mechanism, epsilon) if output_cells is None else int(output_cells)
    if cells > MAX_CELLS or points * (cells + 2) > 1 << 20:
        raise ValueError(f"cells: {cells} output cells on {points} input points exceed the planner's bounds "
                         f"({MAX_CELLS} cells, 2^20 channel entries); lower epsilon or input_points")
    if mechanism == "duchi":
        parts, weights = [duchi_channel(epsilon, grid)], [SCALE]
    elif mechanism == "piecewise":
        parts, weights = [piecewise_channel(epsilon, grid, cells)], [SCALE]
    elif mechanism == "square-wave":
        parts, weights = [square_wave_channel(epsilon, grid, cells)], [SCALE]
    else:
        alpha = int(round(hybrid_alpha(epsilon) * SCALE))
        if alpha == 0:
            parts, weights = [duchi_channel(epsilon, grid)], [SCALE]
        else:
            parts, weights = [piecewise_channel(epsilon, grid, cells), duchi_channel(epsilon, grid)], \
                [alpha, SCALE - alpha]
    values = tuple(v for c in parts for v in c.output_values)
    flat = tuple(int(v) for i in range(points) for c in parts for v in c.numerators[i])
    return PlannedChannel(mechanism, float(epsilon), grid, values, tuple(weights),
                          tuple(len(c.output_values) for c in parts), flat, tuple(parts))


def components_of(mechanism: str, epsilon: float, input_grid: Sequence[float], output_values: Sequence[float],
                  weights: Sequence[int], sizes: Sequence[int], numerators: Sequence[int]) -> PlannedChannel:
    """A :class:`PlannedChannel` read back from a plan's numbers (for the exact verifier)."""
    k, m = len(input_grid), len(output_values)
    rows = [list(numerators[i * m:(i + 1) * m]) for i in range(k)]
    parts, start = [], 0
    for size in sizes:
        parts.append(DiscreteChannel(mechanism, float(epsilon), tuple(input_grid),
                                     tuple(output_values[start:start + size]), (),
                                     tuple(tuple(int(v) for v in row[start:start + size]) for row in rows)))
        start += size
    return PlannedChannel(mechanism, float(epsilon), tuple(input_grid), tuple(output_values), tuple(weights),
                          tuple(sizes), tuple(numerators), tuple(parts))


def _moments(channel: PlannedChannel) -> tuple[np.ndarray, np.ndarray]:
    """Per grid point, the report's mean and variance (floats from the exact probabilities)."""
    k, m = len(channel.input_grid), len(channel.output_values)
    table = np.array(channel.numerators, dtype=np.float64).reshape(k, m) / SCALE
    factor = np.repeat(np.asarray(channel.component_weights, dtype=np.float64) / SCALE, channel.component_sizes)
    q = table * factor[None, :]
    v = np.asarray(channel.output_values)
    mean = q @ v
    return mean, np.maximum(q @ v ** 2 - mean ** 2, 0.0)


def mixture_worst_variance(channel: PlannedChannel) -> float:
    """``max over x in [-1, 1]`` of the report's variance under randomized rounding (``[-1, 1]`` units)."""
    mean, var = _moments(channel)
    worst = float(var.max())
    for a in range(len(mean) - 1):
        d2 = (mean[a + 1] - mean[a]) ** 2
        slope = var[a + 1] - var[a] + d2
        t = min(1.0, max(0.0, slope / (2 * d2))) if d2 > 0 else (1.0 if slope > 0 else 0.0)
        worst = max(worst, float(var[a] + t * slope - t * t * d2))
    return worst


def mixture_mean_bias(channel: PlannedChannel) -> float:
    """A bound on ``|E[report] - x|`` over ``x in [-1, 1]``: the grid points' exact bias (rationals)
    plus ``2^-48`` for the rounding probability's own grid (rounded up to a float)."""
    k, m = len(channel.input_grid), len(channel.output_values)
    values = [Fraction(v) for v in channel.output_values]
    factor = [Fraction(w) for w, s in zip(channel.component_weights, channel.component_sizes) for _ in range(s)]
    worst = Fraction(0)
    for i, x in enumerate(channel.input_grid):
        row = channel.numerators[i * m:(i + 1) * m]
        total = sum((f * n * v for f, n, v in zip(factor, row, values) if n), Fraction(0)) / (SCALE * SCALE)
        worst = max(worst, abs(total - Fraction(x)))
    bound = worst + Fraction(1, SCALE)
    out = float(bound)
    return math.nextafter(out, math.inf) if Fraction(out) < bound else out

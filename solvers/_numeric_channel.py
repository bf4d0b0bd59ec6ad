"""Exact discretized channels of the numeric mechanisms and their exact verifier.

A :class:`DiscreteChannel` maps a declared finite input grid (values in ``[-1, 1]``) to a finite
list of outputs; every probability is an integer numerator over ``2^48`` and every row sums to
exactly ``2^48``. Construction (round toward the safe side, then repair):

* **Duchi** (2 outputs ``+C_D``, ``-C_D``): ``Pr[+C_D]`` ranges over ``[L, H]/2^48`` with
  ``H = floor(L e^eps)`` (column 0 tight: ``H + 1 > L e^eps``) and ``L`` the largest numerator with
  ``(2^48 - L)/(2^48 - H) <= H/L`` (column 1 never above column 0, so column 0 decides;
  ``L ~ 2^48/(e^eps + 1)``), decided in integers and 60-digit decimals; input ``x`` gets the
  numerator nearest to ``L + (H - L)(x + 1)/2`` (affine in ``x``, as the ideal ``Pr[+C_D]`` is).
* **Piecewise / Square Wave** (``cells`` equal cells over ``[-C, C]`` resp. ``[-b, 1 + b]``): a
  *low* numerator ``L`` per cell (the ideal ``2^48 q w``, ``w`` the cell width) and a *high*
  ``H = floor(L e^eps)``; a cell holds ``L`` plus the band's share of the remaining
  ``E = 2^48 - cells L`` in proportion to its overlap with the input's band (largest-remainder
  rounding, each cell capped at ``H``). ``L`` is the smallest numerator whose fully covered cells
  fit under ``H``. Every entry lies in ``[L, H]``: ratio ``<= H/L <= e^eps``. A last repair moves
  the largest entry up to ``H`` (taking the units from other entries of its row, none below ``L``),
  so a channel whose input grid holds ``-1`` and ``1`` reaches ``H/L`` exactly: raising that entry
  by one ``2^-48`` step breaks ``e^eps``. A grid whose cells are wider than the band (SW at large
  epsilon: ``2b ~ 0.0024`` at ``eps = 8``) is refused (``ValueError`` naming the least ``cells``):
  the band could not spend the budget there.

Each cell's report value is its midpoint (PM) or the debiased midpoint ``2 (mid - A)/B - 1``
(SW); Duchi reports ``+-C_D``. :func:`channel_mean_bias` gives the channel's bias of the mean
exactly (the difference between the discretized and the continuous mechanism).

:func:`exact_epsilon` decides ``max over outputs y and input pairs (x, x') of P[x, y]/P[x', y]``
from the integer numerators (a rational, exact) and its logarithm to 50 digits; it refuses a channel
whose rows do not sum to ``2^48`` or where an output is reachable from one input and not from
another (infinite epsilon).

References
----------
.. [1] I. Mironov, "On significance of the least significant bits for differential privacy", CCS
   2012 (why outputs live on a declared grid and probabilities on the ``2^-48`` grid).
.. [2] See :mod:`ldpplan.solvers.numeric` for the mechanisms (Duchi et al. 2018; Wang et al. ICDE
   2019 Sec. III; Li et al. SIGMOD 2020 Sec. 4).
"""
from __future__ import annotations

import dataclasses
import math
from decimal import ROUND_FLOOR, Decimal, localcontext
from fractions import Fraction
from typing import Sequence

import numpy as np

from ..mechanisms.numeric._channel import sample_rows
from ._checks import check_epsilon
from ._numeric_params import band_values, duchi_bound, piecewise_bound, piecewise_densities, square_wave_moments

__all__ = ["GRID_BITS", "DiscreteChannel", "ExactEpsilon", "MeanBias", "duchi_channel", "piecewise_channel",
           "square_wave_channel", "exact_epsilon", "channel_mean_bias", "sample_channel"]

#: every probability is a multiple of ``2^-GRID_BITS``
GRID_BITS = 48
_SCALE = 1 << GRID_BITS
_DIGITS = 50  # the verifier's logarithms
_MARGIN = Decimal(10) ** -40  # a comparison closer than this is refused as undecided


@dataclasses.dataclass(frozen=True)
class DiscreteChannel:
    """A numeric mechanism on finite grids, probabilities on the ``2^-48`` grid.

    Attributes
    ----------
    mechanism : str
        ``duchi``, ``piecewise`` or ``square_wave``.
    epsilon : float
        The budget it was built for (nats); :func:`exact_epsilon` decides it.
    input_grid : tuple of float, shape (k,)
        Increasing inputs in ``[-1, 1]``.
    output_values : tuple of float, shape (m,)
        The unbiased report value of each output (``[-1, 1]`` scale).
    output_edges : tuple of float, shape (m + 1,) or ()
        The cells' edges in the mechanism's own output range (``()`` for Duchi).
    numerators : tuple of tuple of int, shape (k, m)
        ``Pr[output j | input i] = numerators[i][j] / 2^48``; rows sum to ``2^48``.
    """

    mechanism: str
    epsilon: float
    input_grid: tuple[float, ...]
    output_values: tuple[float, ...]
    output_edges: tuple[float, ...]
    numerators: tuple[tuple[int, ...], ...]

    def probabilities(self) -> np.ndarray:
        """The channel matrix as floats, shape (k, m) (exact: numerators are below ``2^53``)."""
        return np.array(self.numerators, dtype=float) / _SCALE


@dataclasses.dataclass(frozen=True)
class ExactEpsilon:
    """The exact epsilon of a :class:`DiscreteChannel`.

    Attributes
    ----------
    ratio : fractions.Fraction
        ``max over outputs and input pairs of P[x, y]/P[x', y]`` (exact).
    log_ratio : decimal.Decimal
        ``ln(ratio)`` to 50 significant digits.
    epsilon_upper : float
        A float ``>= ln(ratio)`` (rounded up).
    claimed_epsilon : float
        The channel's ``epsilon``.
    holds : bool
        ``ln(ratio) <= claimed_epsilon``, decided with the 50-digit logarithm.
    output, high_input, low_input : int
        A decisive output and the input indices of its largest and smallest entries.
    """

    ratio: Fraction
    log_ratio: Decimal
    epsilon_upper: float
    claimed_epsilon: float
    holds: bool
    output: int
    high_input: int
    low_input: int


@dataclasses.dataclass(frozen=True)
class MeanBias:
    """The discretization error of the mean.

    Attributes
    ----------
    channel_bias : float
        ``max over grid inputs x of |E[report | x] - x|``, computed exactly and rounded up.
    input_rounding : float
        Half the largest gap of the input grid: the most an input moves when rounded to the nearest
        grid point (0 contribution to the bias when inputs are rounded at random to a neighbour
        with the unbiased probabilities instead).
    total : float
        ``channel_bias + input_rounding`` (rounded up): a bound on the bias of the mean for any
        inputs in ``[-1, 1]`` rounded to the nearest grid point.
    """

    channel_bias: float
    input_rounding: float
    total: float


def _floor_times_exp(n: int, epsilon: float) -> int:
    """The largest integer ``c <= n e^eps`` (60-digit decimals; refuses a near tie)."""
    with localcontext() as context:
        context.prec = 60
        value = Decimal(n) * Decimal(epsilon).exp()
        floor = int(value.to_integral_value(rounding=ROUND_FLOOR))
        fraction = value - floor
        if fraction < _MARGIN * value or 1 - fraction < _MARGIN * value:
            raise ArithmeticError(f"n e^epsilon too close to an integer to decide (n={n}, epsilon={epsilon!r})")
    return floor


def _input_grid(input_grid: Sequence[float]) -> tuple[float, ...]:
    grid = tuple(float(v) for v in input_grid)
    if not grid or any(not math.isfinite(v) or abs(v) > 1 for v in grid):
        raise ValueError("input_grid: must be a non-empty sequence of numbers in [-1, 1]")
    if any(b <= a for a, b in zip(grid, grid[1:])):
        raise ValueError("input_grid: must be strictly increasing")
    return grid


def _cells(cells: int) -> int:
    if not isinstance(cells, (int, np.integer)) or isinstance(cells, bool) or cells < 2:
        raise ValueError(f"cells: must be an integer >= 2 (got {cells!r})")
    return int(cells)


def duchi_channel(epsilon: float, input_grid: Sequence[float]) -> DiscreteChannel:
    """Duchi et al.'s mechanism on an input grid (outputs ``+C_D``, ``-C_D``).

    Parameters
    ----------
    epsilon : float
        Nats (> 0).
    input_grid : sequence of float, shape (k,)
        Strictly increasing inputs in ``[-1, 1]``.

    Returns
    -------
    DiscreteChannel
        Shape (k, 2); output 0 reports ``+C_D``.

    References
    ----------
    Duchi, Jordan & Wainwright (2018), Sec. 4.2.3; Wang et al. (2019), Alg. 1.
    """
    epsilon = check_epsilon(epsilon)
    grid = _input_grid(input_grid)
    e = math.exp(epsilon)

    def fits(bottom: int) -> bool:  # column 1's ratio (2^48 - L)/(2^48 - H) stays at most column 0's H/L
        top = _floor_times_exp(bottom, epsilon)
        return (_SCALE - bottom) * bottom <= top * (_SCALE - top)

    bottom = max(1, int(_SCALE / (e + 1)))
    while bottom > 1 and not fits(bottom):
        bottom -= 1
    while fits(bottom + 1):
        bottom += 1
    top = _floor_times_exp(bottom, epsilon)
    rows = []
    for x in grid:
        n = min(top, max(bottom, bottom + round((top - bottom) * (x + 1) / 2)))  # affine: -1 -> L, 1 -> H
        rows.append((n, _SCALE - n))
    bound = duchi_bound(epsilon)
    return DiscreteChannel("duchi", epsilon, grid, (bound, -bound), (), tuple(rows))


def _low_numerator(epsilon: float, ideal_low: float, cells: int, cover: float) -> int:
    """The smallest ``L`` whose fully covered cell fits under ``floor(L e^eps)``: ``E/cover <= H - L``."""
    def fits(low: int) -> bool:
        excess = _SCALE - cells * low
        return excess >= 0 and excess <= (_floor_times_exp(low, epsilon) - low) * cover * (1 - 1e-12)

    limit = _SCALE // cells
    low = high = min(max(1, int(ideal_low)), limit)  # fits() is monotone in L: bracket, then bisect
    step = 64
    if fits(high):
        while low > 1 and fits(low):
            high, low, step = low, max(1, low - step), step * 2
        if fits(low):
            return low
    else:
        while not fits(high):
            if high == limit:
                raise ArithmeticError("no low numerator fits: too many cells for the 2^-48 grid")
            low, high, step = high, min(limit, high + step), step * 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if fits(middle) else (middle, high)
    return high


def _band_row(edges: np.ndarray, left: float, right: float, low: int, high: int) -> list[int]:
    """One row: ``low`` per cell plus the excess spread by overlap with ``[left, right]``, capped at ``high``."""
    cells = edges.size - 1
    overlap = np.clip(np.minimum(edges[1:], right) - np.maximum(edges[:-1], left), 0.0, None)
    excess = _SCALE - cells * low
    ideal = excess * overlap / overlap.sum()
    extra = np.minimum(np.floor(ideal).astype(np.int64), high - low)
    leftover = excess - int(extra.sum())
    order = np.argsort(-(ideal - np.floor(ideal)), kind="stable")
    while leftover > 0:
        moved = 0
        for j in order:
            if leftover == 0:
                break
            if overlap[j] > 0 and extra[j] < high - low:
                extra[j] += 1
                leftover -= 1
                moved += 1
        if moved == 0:
            raise ArithmeticError("a row cannot reach 2^48 within [L, H]")
    return [low + int(v) for v in extra]


def _tighten(rows: list[list[int]], low: int, high: int) -> None:
    """Raise the largest entry to ``high``, taking the units from its row's other entries (none below ``low``)."""
    best_row = max(range(len(rows)), key=lambda i: max(rows[i]))
    row = rows[best_row]
    column = max(range(len(row)), key=lambda j: row[j])
    need = high - row[column]
    for j in sorted(range(len(row)), key=lambda j: -row[j]):
        if need == 0:
            break
        if j == column:
            continue
        take = min(need, row[j] - low)
        row[j] -= take
        need -= take
    row[column] = high - need


def _band_channel(mechanism: str, epsilon: float, grid: tuple[float, ...], cells: int, domain: tuple[float, float],
                  bands: list[tuple[float, float]], ideal_low_density: float, values) -> DiscreteChannel:
    edges = np.linspace(domain[0], domain[1], cells + 1)
    width = (domain[1] - domain[0]) / cells
    cover = (bands[0][1] - bands[0][0]) / width  # the band's length in cells (the same for every input)
    if cover < 1:  # a band inside one cell cannot spend the budget (ratio below e^eps): refuse the grid
        needed = math.ceil((domain[1] - domain[0]) / (bands[0][1] - bands[0][0]))
        raise ValueError(f"cells: must be at least {needed} so the band covers one cell (got {cells})")
    low = _low_numerator(epsilon, _SCALE * ideal_low_density * width, cells, cover)
    high = _floor_times_exp(low, epsilon)
    rows = [_band_row(edges, left, right, low, high) for left, right in bands]
    _tighten(rows, low, high)
    middles = (edges[:-1] + edges[1:]) / 2
    return DiscreteChannel(mechanism, epsilon, grid, tuple(float(v) for v in values(middles)),
                           tuple(float(v) for v in edges), tuple(tuple(r) for r in rows))


def piecewise_channel(epsilon: float, input_grid: Sequence[float], cells: int) -> DiscreteChannel:
    """The Piecewise Mechanism on an input grid and ``cells`` equal output cells over ``[-C, C]``.

    Parameters
    ----------
    epsilon : float
    input_grid : sequence of float, shape (k,)
    cells : int
        Number of output cells (>= 2); each reports its midpoint.

    Returns
    -------
    DiscreteChannel
        Shape (k, cells).

    References
    ----------
    Wang et al. (2019), Alg. 2 (``l(x)``, ``r(x)``, densities ``p`` and ``p/e^eps``).
    """
    epsilon = check_epsilon(epsilon)
    grid = _input_grid(input_grid)
    bound = piecewise_bound(epsilon)
    bands = [((bound + 1) / 2 * x - (bound - 1) / 2, (bound + 1) / 2 * x + (bound - 1) / 2) for x in grid]
    low_density = piecewise_densities(epsilon)[1]
    return _band_channel("piecewise", epsilon, grid, _cells(cells), (-bound, bound), bands, low_density,
                         lambda middles: band_values("piecewise", epsilon, middles.size))


def square_wave_channel(epsilon: float, input_grid: Sequence[float], cells: int) -> DiscreteChannel:
    """Square Wave on an input grid and ``cells`` equal cells over ``[-b, 1 + b]`` (inputs ``v = (x + 1)/2``).

    Each cell reports the debiased midpoint ``2 (mid - A)/B - 1`` (``A = q (1 + 2b)/2``,
    ``B = 2 b (p - q)``), so the mean is estimated on the ``[-1, 1]`` scale; the cell counts are
    also what EMS needs for the distribution.

    References
    ----------
    Li et al. (2020), Sec. 4 (``b``, ``p``, ``q``).
    """
    epsilon = check_epsilon(epsilon)
    grid = _input_grid(input_grid)
    b, _, q, _ = square_wave_moments(epsilon)
    bands = [((x + 1) / 2 - b, (x + 1) / 2 + b) for x in grid]
    return _band_channel("square_wave", epsilon, grid, _cells(cells), (-b, 1 + b), bands, q,
                         lambda middles: band_values("square-wave", epsilon, middles.size))


def _checked_rows(channel: DiscreteChannel) -> list[tuple[int, ...]]:
    rows = [tuple(int(v) for v in row) for row in channel.numerators]
    if not rows or len(rows) != len(channel.input_grid):
        raise ValueError("numerators: one row per input of input_grid is needed")
    width = len(channel.output_values)
    for i, row in enumerate(rows):
        if len(row) != width or any(v < 0 for v in row):
            raise ValueError(f"numerators: row {i} must hold {width} integers >= 0")
        if sum(row) != _SCALE:
            raise ValueError(f"numerators: row {i} sums to {sum(row)}, not 2^{GRID_BITS}")
    return rows


def _log_ratio(high: int, low: int) -> Decimal:
    with localcontext() as context:
        context.prec = _DIGITS + 10
        value = Decimal(high).ln() - Decimal(low).ln()
        context.prec = _DIGITS
        return +value


def exact_epsilon(channel: DiscreteChannel) -> ExactEpsilon:
    """Decide the epsilon of a discretized channel exactly.

    Parameters
    ----------
    channel : DiscreteChannel

    Returns
    -------
    ExactEpsilon

    Raises
    ------
    ValueError
        A row does not sum to ``2^48`` or has a negative entry, the shapes disagree, or an output
        is reachable from one input and not from another (no finite epsilon).
    ArithmeticError
        ``ln(ratio)`` is within ``1e-40`` of the claimed epsilon (undecided at 50 digits).

    References
    ----------
    The definition of epsilon-LDP: ``P[x, y] <= e^eps P[x', y]`` for all outputs and input pairs.
    """
    rows = _checked_rows(channel)
    best = (1, 1, 0, 0, 0)  # high, low, output, high input, low input
    for j in range(len(channel.output_values)):
        column = [row[j] for row in rows]
        high, low = max(column), min(column)
        if high == 0:
            continue
        if low == 0:
            raise ValueError(f"numerators: output {j} is reachable from input {column.index(high)} "
                             f"but not from input {column.index(0)} (infinite epsilon)")
        if high * best[1] > best[0] * low:
            best = (high, low, j, column.index(high), column.index(low))
    log_ratio = _log_ratio(best[0], best[1])
    upper = float(log_ratio)
    if Decimal(upper) < log_ratio:
        upper = math.nextafter(upper, math.inf)
    gap = log_ratio - Decimal(channel.epsilon)
    if abs(gap) < _MARGIN:
        raise ArithmeticError("exact_epsilon: ln(ratio) and epsilon agree to 40 digits (undecided)")
    return ExactEpsilon(Fraction(best[0], best[1]), log_ratio, upper, channel.epsilon, gap < 0, best[2], best[3],
                        best[4])


def channel_mean_bias(channel: DiscreteChannel) -> MeanBias:
    """The discretization error of the mean of a channel (exact, rounded up).

    ``channel_bias = max over grid inputs x of |sum_y P[x, y] value_y - x|``, in exact rationals from
    the integer numerators and the float values and inputs.

    Returns
    -------
    MeanBias
    """
    rows = _checked_rows(channel)
    values = [Fraction(v) for v in channel.output_values]
    worst = Fraction(0)
    for x, row in zip(channel.input_grid, rows):
        mean = sum((n * v for n, v in zip(row, values)), Fraction(0)) / _SCALE
        worst = max(worst, abs(mean - Fraction(x)))
    grid = channel.input_grid
    half_gap = max((Fraction(b) - Fraction(a) for a, b in zip(grid, grid[1:])), default=Fraction(0)) / 2
    return MeanBias(_float_up(worst), _float_up(half_gap), _float_up(worst + half_gap))


def _float_up(value: Fraction) -> float:
    result = float(value)
    return math.nextafter(result, math.inf) if Fraction(result) < value else result


def sample_channel(channel: DiscreteChannel, input_indices, rng: np.random.Generator) -> np.ndarray:
    """Exact sampling: output ``j`` for input ``i`` with probability ``numerators[i][j] / 2^48``.

    Parameters
    ----------
    channel : DiscreteChannel
    input_indices : array_like of int, shape (n,)
        Indices into ``channel.input_grid``.
    rng : numpy.random.Generator
        One uniform 48-bit integer per report (the runtime's exact sampler,
        :func:`ldpplan.mechanisms.numeric._channel.sample_rows`: one copy).

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
        Output indices.
    """
    indices = np.asarray(input_indices, dtype=np.int64).ravel()
    if indices.size and (indices.min() < 0 or indices.max() >= len(channel.input_grid)):
        raise ValueError("input_indices: must index input_grid")
    cumulative = np.cumsum(np.array(channel.numerators, dtype=np.int64), axis=1)
    return sample_rows(cumulative, indices, rng)

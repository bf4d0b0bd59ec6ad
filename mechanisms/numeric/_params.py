"""``params`` of numeric plans (see :mod:`.._params`)."""
from __future__ import annotations

import dataclasses
from typing import Literal

from .._params import PlanParams

__all__ = ["NumericParams"]


@dataclasses.dataclass(frozen=True, slots=True)
class NumericParams(PlanParams):
    """``params`` of a ``duchi``, ``piecewise``, ``hybrid`` or ``square-wave`` plan.

    Attributes
    ----------
    epsilon : float
        The budget the channel is built for (nats): the spec's ``epsilon``, or the one planned for
        a ``[target] mean_halfwidth``.
    low, high : float
        The declared range (user units); values outside are clipped to it (``clipping = "clip"``).
    clipping : {"clip"}
        The rule for values outside ``[low, high]``.
    task : {"mean", "distribution"}
        What the plan was chosen for.
    input_grid : tuple of float, shape (k,)
        Increasing inputs on the ``[-1, 1]`` scale, from ``-1`` to ``1``.
    output_values : tuple of float, shape (m,)
        Each output's report value on the ``[-1, 1]`` scale (components' outputs concatenated).
    component_weights : tuple of int, shape (C,)
        Integers over ``2^48`` summing to ``2^48`` (the hybrid's ``alpha`` and ``1 - alpha``).
    component_sizes : tuple of int, shape (C,)
        Outputs of each component (they sum to ``m``).
    numerators : tuple of int, shape (k m,)
        Row-major ``N[i, j]`` over ``2^48``; each component's part of a row sums to ``2^48``.

    References
    ----------
    Duchi et al., JASA 2018; Wang et al., ICDE 2019, Sec. III; Li et al., SIGMOD 2020, Sec. 4.
    """

    epsilon: float
    low: float
    high: float
    clipping: Literal["clip"]
    task: Literal["mean", "distribution"]
    input_grid: tuple[float, ...]
    output_values: tuple[float, ...]
    component_weights: tuple[int, ...]
    component_sizes: tuple[int, ...]
    numerators: tuple[int, ...]

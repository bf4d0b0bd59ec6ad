r"""The one grid step: round a family's numbers onto the 2^-48 grid toward the safe side, check, repair.

Plans hold probabilities that are multiples of ``2^-48`` (the runtime samples them exactly,
:mod:`ldpplan.mechanisms`). Every family puts its solver's float numbers on that grid the same
way:

1. **aim** below the budget: the solver runs at a *setting* (the budget shrunk by
   :data:`~ldpplan.planner._exact.SAFETY_MARGIN`, relative, at first);
2. **round** each probability in the direction that can only lower the privacy loss
   (:func:`round_safe`: e.g. a unary encoding's keep probability ``a`` down and its flip
   probability ``b`` up);
3. **check** the family's exact constraint on the rounded numbers (rationals, 50-digit logs:
   :mod:`ldpplan.planner._exact`); :func:`exact_check` reports the overshoot in nats;
4. **repair**: if the check fails, move to the next setting (a larger margin, a lower aimed
   budget, or one grid step toward privacy) and try again, a bounded number of times
   (:func:`round_and_repair`). The result (:class:`OnGrid`) is frozen and says which setting
   passed and how many repairs it took.

A family's *attempt* (solve at a setting, round, check) may raise its own ``SpecError`` for numbers
that no further margin can fix (e.g. ``0 < b < a < 1`` impossible on the grid); a failed check
returns an :class:`Attempt` with ``holds = False`` and the step tries the next setting.

Families: PCKV (:mod:`.pckv._allocation`: aimed budget lowered by twice the overshoot),
IDUE (:mod:`.idue.plan`: the ladder :data:`MARGINS` of relative margins), ULDP
(:mod:`.uldp._numbers`: grid numerators nudged one step toward privacy).

References
----------
OpenDP's rounding toward the safe side (``inf_ln``, ``inf_div``); Mironov, "On significance of
the least significant bits for differential privacy", CCS 2012 (floating point breaks DP unless
the implemented numbers are the analysed ones).
"""
from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any, Callable, Generic, Mapping, Sequence, TypeVar

import numpy as np

from ..mechanisms import GRID_BITS, on_grid, to_grid
from ._exact import SAFETY_MARGIN, log_exact, ratio_within

__all__ = ["GRID_DENOMINATOR", "MARGINS", "Attempt", "OnGrid", "round_safe", "exact_check", "ladder",
           "round_and_repair"]

#: Probabilities in plans are multiples of ``1 / GRID_DENOMINATOR`` (= ``2**48``).
GRID_DENOMINATOR = 2**GRID_BITS
#: Relative budget shrinks tried in turn by families that re-solve at a larger margin (IDUE): the
#: tiny :data:`SAFETY_MARGIN` almost always passes; larger ones only where float64 cannot resolve
#: ``1 - a`` near 1 (budgets of tens of nats).
MARGINS = (SAFETY_MARGIN, 1e-8, 1e-6, 1e-4, 1e-3)

S = TypeVar("S")


def round_safe(values: Mapping[str, Any], directions: Mapping[str, str]) -> dict[str, Any]:
    """Round each value onto the 2^-48 grid in its safe direction.

    Parameters
    ----------
    values : mapping of str to float or array_like
        Unrounded probabilities in [0, 1] (scalars or arrays, e.g. one per level).
    directions : mapping of str to {"down", "up", "nearest"}
        For each name in ``values``, the direction that cannot raise the privacy loss (the
        family's constraint decreases in it), e.g. ``{"a": "down", "b": "up"}``.

    Returns
    -------
    dict
        The same names: a float for a scalar, an ndarray of float64 for an array; every entry
        a multiple of ``2^-48`` in [0, 1] (checked with :func:`ldpplan.mechanisms.on_grid`).

    Raises
    ------
    KeyError
        A value without a direction.
    ValueError
        A value that does not round onto the grid (NaN).
    """
    out = {}
    for name, value in values.items():
        rounded = to_grid(value, directions[name])
        if not on_grid(rounded):
            raise ValueError(f"{name}: must be probabilities in [0, 1] (got {value!r})")
        out[name] = float(rounded) if np.ndim(rounded) == 0 else np.asarray(rounded, dtype=float)
    return out


@dataclasses.dataclass(frozen=True)
class Attempt:
    """One try of the grid step: the rounded numbers and the verdict of the exact check.

    Attributes
    ----------
    params : dict
        The numbers on the grid (names as the plan writes them).
    holds : bool
        The family's exact constraint holds for ``params``.
    overshoot : float or None
        ``ln(ratio) - epsilon`` in nats when the check failed and measured it (:func:`exact_check`);
        ``None`` otherwise.
    solution : object
        The unrounded solver result the numbers came from (``None`` for closed forms).
    """

    params: dict
    holds: bool
    overshoot: float | None = None
    solution: Any = None


@dataclasses.dataclass(frozen=True)
class OnGrid(Generic[S]):
    """Numbers on the grid that passed the family's exact check.

    Attributes
    ----------
    params : dict
        The grid numbers.
    setting : object
        The margin used, in the family's unit: a relative budget shrink (IDUE), the aimed
        budget in nats (PCKV), the grid numerators after nudges (ULDP).
    repairs : int
        Failed attempts before this one (0: the first setting passed).
    solution : object
        The unrounded solver result at ``setting`` (``None`` for closed forms).
    """

    params: dict
    setting: S
    repairs: int
    solution: Any = None


def exact_check(ratio: Fraction | None, epsilon: float | Fraction) -> tuple[bool, float | None]:
    """``(holds, overshoot)`` of ``ratio <= e^epsilon`` decided exactly (:func:`~._exact.ratio_within`).

    ``overshoot`` is ``ln(ratio) - epsilon`` in nats (float) when the check fails, ``None`` when it
    holds or when ``ratio`` is ``None`` (infinite: a probability is 0 or 1).
    """
    if ratio is None:
        return False, None
    if ratio_within(ratio, epsilon):
        return True, None
    return False, float(log_exact(ratio)) - float(epsilon)


def ladder(margins: Sequence[float] = MARGINS) -> Callable[[float, Attempt], float | None]:
    """A repair rule: the next margin of ``margins`` after the current one (``None`` past the last)."""
    def next_margin(margin: float, _attempt: Attempt) -> float | None:
        k = list(margins).index(margin) + 1
        return margins[k] if k < len(margins) else None

    return next_margin


def round_and_repair(attempt: Callable[[S], Attempt], *, start: S, repair: Callable[[S, Attempt], S | None],
                     max_attempts: int, failure: Callable[[Attempt | None], Exception]) -> OnGrid[S]:
    """Try ``attempt`` at ``start``, then at each ``repair`` setting, until the exact check holds.

    Parameters
    ----------
    attempt : callable ``setting -> Attempt``
        Solve at the setting, round with :func:`round_safe`, check exactly. May raise the
        family's own error for numbers no setting can fix.
    start : setting
        The first setting (the budget shrunk by :data:`SAFETY_MARGIN`).
    repair : callable ``(setting, failed Attempt) -> setting or None``
        The next, safer setting (``None``: give up).
    max_attempts : int
        Attempts allowed in all (>= 1).
    failure : callable ``last Attempt or None -> Exception``
        The error raised when no attempt holds (one line naming the field and the rule).

    Returns
    -------
    OnGrid
        The first attempt that holds, with its setting and the number of repairs.

    Raises
    ------
    Exception
        ``failure(last)`` when every attempt failed, or what ``attempt`` raises.
    """
    setting: S = start
    last: Attempt | None = None
    for repairs in range(int(max_attempts)):
        last = attempt(setting)
        if last.holds:
            return OnGrid(last.params, setting, repairs, last.solution)
        following = repair(setting, last)
        if following is None:
            break
        setting = following
    raise failure(last)

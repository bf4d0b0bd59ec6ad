"""The one check of a privacy budget given to a solver (and to the simulation baselines).

Every solver entry point validates ``epsilon`` with :func:`check_epsilon`, so the rule and the
message ("epsilon: must be a finite number > 0 (got -1.0)") are the same everywhere.
"""
from __future__ import annotations

import math

__all__ = ["check_epsilon"]


def check_epsilon(epsilon, *, name: str = "epsilon", allow_infinite: bool = False, maximum: float | None = None,
                  error: type[Exception] = ValueError) -> float:
    """``epsilon`` as a float after checking it is a usable budget in nats.

    Parameters
    ----------
    epsilon : float
        The budget (nats).
    name : str
        The field named in the message.
    allow_infinite : bool
        Accept ``inf`` (bounds that have a limit there, e.g. the PIE MI loss parameter).
    maximum : float, optional
        Largest budget accepted (inclusive).
    error : exception type
        Raised on a bad value (``ValueError``; solvers whose callers expect ``SolverError`` pass it).

    Returns
    -------
    float

    Raises
    ------
    error
        One line naming the field, the rule and the value: NaN, ``<= 0``, infinite (unless
        allowed), or above ``maximum``.
    """
    try:
        value = float(epsilon)
    except (TypeError, ValueError):
        value = math.nan
    finite = "" if allow_infinite else "finite "
    rule = f"a {finite}number > 0" if maximum is None else f"a {finite}number in (0, {maximum:g}]"
    if not (value > 0) or (math.isinf(value) and not allow_infinite) or (maximum is not None and value > maximum):
        raise error(f"{name}: must be {rule} nats (got {epsilon!r})")
    return value

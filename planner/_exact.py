"""The one safety margin and the one set of exact-arithmetic helpers every planner and verifier uses.

Solvers work in float64; plans must never promise more than their numbers give,
not by one floating-point step. So (1) every family solves with its budgets shrunk
by the relative :data:`SAFETY_MARGIN` and rounds probabilities on the 2^-48 grid
toward the safe side; (2) verifiers decide the binding constraints exactly: the
numbers in a plan are dyadic rationals (floats), so ratios of them are exact
:class:`fractions.Fraction` objects, and ``ratio <= e^epsilon`` is decided with
:func:`ratio_within` in high-precision decimal arithmetic with an error bound; (3) claims computed
in decimals are written as floats rounded to the safe side (:func:`float_up`, :func:`float_down`).
The grid rounding itself is :mod:`ldpplan.planner._grid`.
"""
from __future__ import annotations

import functools
import math
from decimal import Decimal, localcontext
from fractions import Fraction

__all__ = ["SAFETY_MARGIN", "DIGITS", "exact", "to_decimal", "log_exact", "ratio_within", "log_ratio_slack", "shrink",
           "float_up", "float_down", "ceil_log"]

#: Relative shrink of every budget before solving (e.g. epsilon -> epsilon (1 - 1e-10)).
SAFETY_MARGIN = 1e-10
#: Decimal digits of the exact checks (logs are correct to about 10^-45 nats).
DIGITS = 50


def shrink(epsilon: float) -> float:
    """``epsilon (1 - SAFETY_MARGIN)``: the budget solvers aim at."""
    return float(epsilon) * (1.0 - SAFETY_MARGIN)


def exact(x: float | int | Fraction) -> Fraction:
    """The exact rational value of a float (floats are dyadic rationals).

    Raises
    ------
    ValueError
        For NaN or infinity.
    """
    if isinstance(x, Fraction):
        return x
    if isinstance(x, float) and not math.isfinite(x):
        raise ValueError(f"exact: must be finite (got {x!r})")
    return Fraction(x)


def to_decimal(x: float | int | Fraction) -> Decimal:
    """A number as a :class:`~decimal.Decimal`: a float or int exactly, a Fraction to ``DIGITS + 10`` digits.

    Raises
    ------
    ValueError
        For NaN or infinity (:func:`exact`).
    """
    if isinstance(x, Fraction):
        with localcontext() as ctx:
            ctx.prec = DIGITS + 10
            return Decimal(x.numerator) / Decimal(x.denominator)
    exact(x)  # refuses NaN and infinity
    return Decimal(x)  # exact: floats are dyadic rationals


def float_up(d: Decimal) -> float:
    """The smallest float ``>= d`` (a claimed budget never below the exact value)."""
    f = float(d)
    return f if Decimal(f) >= d else math.nextafter(f, math.inf)


def float_down(d: Decimal) -> float:
    """The largest float ``<= d`` (a claimed lower bound never above the exact value)."""
    f = float(d)
    return f if Decimal(f) <= d else math.nextafter(f, -math.inf)


@functools.lru_cache(maxsize=8192)
def _ln_int(n: int) -> Decimal:
    """``ln n`` of a positive integer to ``DIGITS + 10`` digits. ``Decimal.ln`` is correctly rounded
    (half-even, whatever the context's rounding), so the value depends on ``n`` alone and is cached: the
    verifiers take the logs of the same numerators and power-of-two denominators again and again."""
    with localcontext() as ctx:
        ctx.prec = DIGITS + 10
        return Decimal(n).ln()


def log_exact(r: Fraction) -> Decimal:
    """``ln r`` to :data:`DIGITS` significant digits (``r > 0``)."""
    if r <= 0:
        raise ValueError(f"log_exact: must be > 0 (got {r})")
    with localcontext() as ctx:
        ctx.prec = DIGITS + 10
        return _ln_int(r.numerator) - _ln_int(r.denominator)


def log_ratio_slack(ratio: Fraction, epsilon: float | Fraction) -> Decimal:
    """``epsilon - ln(ratio)`` in nats, exact to about 10^-45 (positive: the constraint holds)."""
    with localcontext() as ctx:
        ctx.prec = DIGITS + 10
        e = exact(epsilon)
        return Decimal(e.numerator) / Decimal(e.denominator) - log_exact(ratio)


def ratio_within(ratio: Fraction, epsilon: float | Fraction) -> bool:
    """Decide ``ratio <= e^epsilon`` exactly for a rational ``ratio`` and float ``epsilon``.

    Ties within 10^-40 nats count as violations (a plan must hold with slack >= 0;
    the safety margin leaves about 10^-10 relative).
    """
    if ratio <= 0:
        return True
    return log_ratio_slack(ratio, epsilon) > Decimal("1e-40")


def ceil_log(ratio: Fraction) -> float:
    """The smallest float ``e`` with ``ratio <= e^e`` decided exactly (:func:`ratio_within`); 0 for ``ratio <= 1``."""
    if ratio <= 1:
        return 0.0
    e = float(log_exact(ratio))
    while not ratio_within(ratio, e):
        e = math.nextafter(e, math.inf)
    while e > 0 and ratio_within(ratio, math.nextafter(e, -math.inf)):
        e = math.nextafter(e, -math.inf)
    return e

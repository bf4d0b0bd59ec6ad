"""Exact (60-digit) guarantee of a PIE grid channel, and safe float rounding of claims.

Used by :mod:`.plan` to write the claims and by :mod:`.verify` to recompute them.
"""
from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any

from .._exact import DIGITS, exact, log_exact

__all__ = ["NOTION", "exact_guarantee", "float_up", "float_down", "to_decimal"]

NOTION = "LDP+PIE"


def to_decimal(x: Fraction | float) -> Decimal:
    """Exact Decimal of a float; a Fraction to 60 significant digits."""
    if isinstance(x, float):
        return Decimal(x)  # exact: floats are dyadic rationals
    with localcontext() as ctx:
        ctx.prec = DIGITS + 10
        return Decimal(x.numerator) / Decimal(x.denominator)


def exact_guarantee(mu: float, symbols: int, domain_size: int, n: int, releases: int,
                    max_prior: float) -> dict[str, Any]:
    """The guarantee of a grid channel, exactly (60 significant digits).

    Parameters
    ----------
    mu : float
        Keep probability (exact dyadic rational), ``1/symbols < mu < 1``.
    symbols : int
        ``|X|`` (RR) or ``g`` (GLH).
    domain_size, n, releases : int
    max_prior : float
        ``max_u Pr(U = u)`` (``1/n`` for the uniform prior).

    Returns
    -------
    dict
        ``ratio`` (Fraction, ``e^eps``), ``epsilon`` (nats), ``theta``, ``mechanism_bits``,
        ``ldp_bits``, ``alpha_bits``, ``alpha_nats``, ``prior_bits`` and ``bayes`` (Cor. 3.9,
        raw, ``None`` when ``max_prior = 1``), all Decimal except ``ratio``.

    References
    ----------
    Murakami & Takahashi (TDP 2021): Prop. 4.1, Thm. 4.2-4.5, Cor. 3.9.
    """
    m = exact(mu)
    ratio = m * (symbols - 1) / (1 - m)
    theta = (symbols * m - 1) / (symbols - 1)
    eps = log_exact(ratio)
    with localcontext() as ctx:
        ctx.prec = DIGITS + 10
        ln2 = Decimal(2).ln()
        log2n = Decimal(n).ln() / ln2
        log2k = Decimal(domain_size).ln() / ln2
        th = to_decimal(theta)
        te = releases * eps
        mech = releases * th * min(log2n, log2k)
        ldp = min(te / ln2, te * te / ln2, log2n, releases * log2k)
        alpha = min(mech, ldp)
        prior_bits = -log_exact(exact(max_prior)) / ln2 if max_prior < 1 else Decimal(0)
        bayes = 1 - (alpha + 1) / prior_bits if prior_bits > 0 else None
        return {"ratio": ratio, "epsilon": eps, "theta": th, "mechanism_bits": mech, "ldp_bits": ldp,
                "alpha_bits": alpha, "alpha_nats": alpha * ln2, "prior_bits": prior_bits, "bayes": bayes}


def float_up(d: Decimal) -> float:
    """The smallest float >= ``d``."""
    f = float(d)
    return f if Decimal(f) >= d else math.nextafter(f, math.inf)


def float_down(d: Decimal) -> float:
    """The largest float <= ``d``."""
    f = float(d)
    return f if Decimal(f) <= d else math.nextafter(f, -math.inf)

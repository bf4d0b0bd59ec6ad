"""Exact (60-digit) guarantee of a PIE grid channel for the runtime's claim checks (stdlib only).

The runtime's float64 privacy map (:meth:`ldpplan.mechanisms.pie._base.KaryRRBase.privacy_map`)
accepts a claim that is clearly on the safe side; a claim within a few ulps of the float value
is decided here, exactly, so that a claim one float step below the numbers is refused and the
planner's claims (the exact values rounded toward the safe side) load.

This is the one copy of the exact guarantee: the planner (``ldpplan.planner.pie._exact``) writes its
claims from it and its verifier recomputes them with it. The independent second path is not a
copy but a different arithmetic: the float64 maps (:func:`._channel.pie_alpha_bits` in the runtime,
:mod:`ldpplan.solvers.pie` in the planner's solver) against these rationals and 60-digit decimals.
"""
from __future__ import annotations

from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any

from .._plan import log_fraction

__all__ = ["exact_pie_guarantee", "DIGITS"]

#: Significant decimal digits of the exact values.
DIGITS = 60


def exact_pie_guarantee(mu: float | Fraction, symbols: int, domain_size: int, n: int, releases: int,
                        max_prior: float | Fraction) -> dict[str, Any]:
    """The guarantee of a grid channel, exactly: rationals, then :data:`DIGITS`-digit decimal logarithms.

    Parameters
    ----------
    mu : float or Fraction
        Keep probability (a dyadic rational), ``1/symbols < mu < 1``.
    symbols : int
        ``|X|`` (RR) or ``g`` (GLH).
    domain_size, n, releases : int
    max_prior : float or Fraction
        ``max_u Pr(U = u)``, in ``(0, 1]`` (exact).

    Returns
    -------
    dict
        ``ratio`` (Fraction, ``e^eps = mu (k - 1)/(1 - mu)``), ``epsilon`` (nats), ``theta``
        (``(k mu - 1)/(k - 1)``), ``mechanism_bits``, ``ldp_bits``, ``alpha_bits``, ``alpha_nats``,
        ``prior_bits`` and ``bayes`` (Cor. 3.9, raw; ``None`` when ``max_prior = 1``), all Decimal
        except ``ratio``.

    References
    ----------
    Murakami & Takahashi (TDP 2021): Prop. 4.1, Thm. 4.2-4.5, Cor. 3.9.
    """
    m = Fraction(mu)
    ratio = m * (symbols - 1) / (1 - m)
    theta = (symbols * m - 1) / (symbols - 1)
    with localcontext() as ctx:
        ctx.prec = DIGITS
        eps = log_fraction(ratio)
        ln2 = Decimal(2).ln()
        log2n = Decimal(n).ln() / ln2
        log2k = Decimal(domain_size).ln() / ln2
        th = Decimal(theta.numerator) / Decimal(theta.denominator)
        te = releases * eps
        mech = releases * th * min(log2n, log2k)
        ldp = min(te / ln2, te * te / ln2, log2n, releases * log2k)
        alpha = min(mech, ldp)
        prior = Fraction(max_prior)
        prior_bits = -log_fraction(prior) / ln2 if prior < 1 else Decimal(0)
        bayes = 1 - (alpha + 1) / prior_bits if prior_bits > 0 else None
        return {"ratio": ratio, "epsilon": eps, "theta": th, "mechanism_bits": mech, "ldp_bits": ldp,
                "alpha_bits": alpha, "alpha_nats": alpha * ln2, "prior_bits": prior_bits, "bayes": bayes}

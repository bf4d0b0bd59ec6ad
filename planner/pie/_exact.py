"""Exact (60-digit) guarantee of a PIE grid channel, and safe float rounding of claims.

Used by :mod:`.plan` to write the claims and by :mod:`.verify` to recompute them.
"""
from __future__ import annotations

from decimal import Decimal
from typing import Any

from ...mechanisms.pie import HASH_PRIME, hash_prime
from ...mechanisms.pie._base import NOTION  # ``guarantee.notion`` of PIE plans (the runtime checks it)
from ...mechanisms.pie._exact import exact_pie_guarantee
from .._exact import exact, float_down, float_up

__all__ = ["NOTION", "HASH_PARAMS", "hash_params", "exact_guarantee", "claimed_numbers"]

#: ``params.hash`` of GLH plans: the runtime's Carter-Wegman family (informational, checked verbatim).
HASH_PARAMS = {"family": "carter-wegman", "formula": "((a*x + b) mod P) mod g", "prime": HASH_PRIME,
               "seed_per_user": "a in [1, P-1], b in [0, P-1]"}


def hash_params(domain_size: int, g: int) -> dict[str, Any]:
    """``params.hash`` of a GLH plan over ``|X| = domain_size`` items and ``g`` values: :data:`HASH_PARAMS`
    with the runtime's prime (``2**31 - 1`` when ``|X|, g`` fit, else ``2**61 - 1``;
    :func:`ldpplan.mechanisms.pie.hash_prime`)."""
    return {**HASH_PARAMS, "prime": hash_prime(domain_size, g)}


def exact_guarantee(mu: float, symbols: int, domain_size: int, n: int, releases: int,
                    max_prior: float) -> dict[str, Any]:
    """The guarantee of a grid channel, exactly (60 significant digits): the runtime's one copy.

    :func:`ldpplan.mechanisms.pie._exact.exact_pie_guarantee` (rationals, then 60-digit decimal
    logarithms), after refusing a NaN or infinite ``mu`` or ``max_prior``.

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

    Raises
    ------
    ValueError
        ``mu`` or ``max_prior`` NaN or infinite.

    References
    ----------
    Murakami & Takahashi (TDP 2021): Prop. 4.1, Thm. 4.2-4.5, Cor. 3.9.
    """
    return exact_pie_guarantee(exact(mu), symbols, domain_size, n, releases, exact(max_prior))


def claimed_numbers(ex: dict[str, Any], target: Any) -> dict[str, Any]:
    """The ``guarantee`` numbers a plan states for the exact guarantee ``ex``: rounded to the safe side.

    ``epsilon``, ``alpha_bits`` and ``alpha_nats`` are rounded up, the Bayes-error bound down (0
    when vacuous); a target met exactly is itself stated (never lost to the last-bit rounding);
    ``theta`` and the two alpha ingredients are the nearest floats. The planner writes these
    and the verifier requires them verbatim: every claim is recomputed, never read.

    Parameters
    ----------
    ex : dict
        :func:`exact_guarantee` output.
    target : Target
        The spec's target (``alpha_bits`` / ``bayes_error`` may be set).
    """
    alpha = float_up(ex["alpha_bits"])
    if target.alpha_bits is not None and ex["alpha_bits"] <= Decimal(target.alpha_bits):
        alpha = min(alpha, float(target.alpha_bits))
    bayes = ex["bayes"]
    bayes_claim = max(0.0, float_down(bayes)) if bayes is not None else 0.0
    if target.bayes_error is not None and bayes is not None and bayes >= Decimal(target.bayes_error):
        bayes_claim = max(bayes_claim, float(target.bayes_error))
    return {"epsilon": float_up(ex["epsilon"] + Decimal("1e-35")), "alpha_bits": alpha,
            "alpha_nats": float_up(ex["alpha_nats"]), "bayes_error_lower_bound": bayes_claim,
            "theta": float(ex["theta"]), "alpha_mechanism_bits": float(ex["mechanism_bits"]),
            "alpha_ldp_bits": float(ex["ldp_bits"]),
            "alpha_binding": "mechanism" if ex["mechanism_bits"] <= ex["ldp_bits"] else "ldp"}

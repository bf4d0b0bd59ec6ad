"""The numbers of a two-round memoized channel: support probabilities, epsilons (float and exact).

Stdlib + numpy only. Notation of Arcolezi et al. (2022): a report supports a value ``v`` with
probability ``P = p1 p2 + (1 - p1) q2`` when the user's value is ``v`` and
``Q = q1 p2 + (1 - q1) q2`` otherwise. For L-GRR, ``q = (1 - p)/(k - 1)`` exactly (the runtime
draws the replacement uniformly among the ``k - 1`` other values), and ``P``, ``Q`` are the
diagonal and off-diagonal of the composed GRR matrix ``P1 @ P2`` (products of GRR matrices are
GRR matrices), so one report's epsilon is ``ln(P/Q)``. For unary encodings two bits differ
between two inputs and one report's epsilon is ``ln(P(1-Q) / ((1-P) Q))``; the first round's
(``epsilon_perm``, which bounds any number of reports of one value, since they are
post-processing of the one permanent response) is ``ln(p1/q1)`` (GRR) or
``ln(p1 (1-q1) / ((1-p1) q1))`` (unary encoding).

Over a history of at most ``T`` rounds and ``V`` distinct values the plan claims (the planner's
``ldpplan.planner.longitudinal._lifetime`` has the proof; this is the runtime's own recomputation)
``epsilon_lifetime = min(T epsilon_2, V epsilon_perm + floor(T (V-1)/V) epsilon_2)`` (``V >= 2``;
``epsilon_perm`` for ``V = 1``), with ``epsilon_2`` the second
round's epsilon on its input, the permanent response: ``ln(p2/q2)`` (GRR) or
``k ln max(p2/q2, (1-q2)/(1-p2))`` (unary encoding, k bits). ``V x epsilon_perm`` alone is false once
values change (the reports of one permanent response reveal when it changed).
"""
from __future__ import annotations

import dataclasses
import math
from decimal import Decimal, localcontext
from fractions import Fraction

__all__ = ["Rounds", "exact_ln", "lifetime_upper"]

#: Decimal digits of the exact logarithms.
DIGITS = 60


def exact_ln(r: Fraction) -> Decimal:
    """``ln r`` to :data:`DIGITS` digits (``r > 0``)."""
    with localcontext() as ctx:
        ctx.prec = DIGITS + 10
        return Decimal(r.numerator).ln() - Decimal(r.denominator).ln()


def lifetime_upper(max_values: int, rounds: int, epsilon_perm: float, epsilon_2: float) -> float:
    """The smallest float ``>= min(T epsilon_2, V epsilon_perm + floor(T (V-1)/V) epsilon_2)`` (``V >= 2``;
    ``epsilon_perm`` for ``V = 1``), exact, of the float claims."""
    v, t = int(max_values), int(rounds)
    want = v * Fraction(float(epsilon_perm)) + (t * (v - 1) // v) * Fraction(float(epsilon_2))
    if v >= 2:
        want = min(want, t * Fraction(float(epsilon_2)))
    value = float(want)
    while Fraction(value) < want:
        value = math.nextafter(value, math.inf)
    return value


@dataclasses.dataclass(frozen=True)
class Rounds:
    """Both rounds of a memoized channel, as exact rationals.

    Attributes
    ----------
    kind : {"grr", "unary"}
    k : int
    p1, q1, p2, q2 : Fraction
    """

    kind: str
    k: int
    p1: Fraction
    q1: Fraction
    p2: Fraction
    q2: Fraction

    @classmethod
    def grr(cls, p1: float, p2: float, k: int) -> "Rounds":
        """L-GRR rounds from the keep probabilities (``q = (1 - p)/(k - 1)``, exact)."""
        a, b = Fraction(p1), Fraction(p2)
        return cls("grr", int(k), a, (1 - a) / (k - 1), b, (1 - b) / (k - 1))

    @classmethod
    def unary(cls, p1: float, q1: float, p2: float, q2: float, k: int) -> "Rounds":
        """Unary-encoding rounds (per-bit probabilities of a one and of a zero turning one)."""
        return cls("unary", int(k), Fraction(p1), Fraction(q1), Fraction(p2), Fraction(q2))

    @property
    def support_true(self) -> Fraction:
        """``P = p1 p2 + (1 - p1) q2``."""
        return self.p1 * self.p2 + (1 - self.p1) * self.q2

    @property
    def support_other(self) -> Fraction:
        """``Q = q1 p2 + (1 - q1) q2``."""
        return self.q1 * self.p2 + (1 - self.q1) * self.q2

    @property
    def ratio_perm(self) -> Fraction:
        """``e^epsilon_perm`` of the first round, exactly."""
        if self.kind == "grr":
            return self.p1 / self.q1
        return self.p1 * (1 - self.q1) / ((1 - self.p1) * self.q1)

    @property
    def ratio_1(self) -> Fraction:
        """``e^epsilon_1`` of one report (the composed channel), exactly."""
        big_p, big_q = self.support_true, self.support_other
        if self.kind == "grr":
            return big_p / big_q
        return big_p * (1 - big_q) / ((1 - big_p) * big_q)

    @property
    def ratio_2(self) -> Fraction:
        """``e^epsilon_2`` of the second round on its input per position (GRR: one; unary: each of k bits)."""
        if self.kind == "grr":
            return self.p2 / self.q2
        return max(self.p2 / self.q2, (1 - self.q2) / (1 - self.p2))

    @property
    def positions(self) -> int:
        """Positions the second round randomizes independently: 1 (GRR) or k (unary bits)."""
        return 1 if self.kind == "grr" else self.k

    def exact(self) -> dict[str, Decimal]:
        """``epsilon_perm``, ``epsilon_1`` and ``epsilon_2`` in nats, exact to about 10^-55."""
        return {"epsilon_perm": exact_ln(self.ratio_perm), "epsilon_1": exact_ln(self.ratio_1),
                "epsilon_2": self.positions * exact_ln(self.ratio_2)}

    def floats(self) -> dict[str, float]:
        """``epsilon_perm``, ``epsilon_1``, ``epsilon_2`` (float64, a few ulps from the exact values)."""
        return {"epsilon_perm": float(math.log(self.ratio_perm)), "epsilon_1": float(math.log(self.ratio_1)),
                "epsilon_2": self.positions * float(math.log(self.ratio_2))}

    def variance_line(self) -> tuple[float, float]:
        """``n Var(f_hat) = c0 + c1 f`` of the unbiased estimator (frequency^2 x users).

        ``c0 = Q(1-Q)/s``, ``c1 = (P(1-P) - Q(1-Q))/s`` with ``s = (p1-q1)^2 (p2-q2)^2``: the count
        of reports supporting ``v`` is a sum of ``n f`` Bernoulli(P) and ``n (1-f)`` Bernoulli(Q).
        ``c0/n`` is the papers' approximate variance (Arcolezi et al. 2022).
        """
        big_p, big_q = float(self.support_true), float(self.support_other)
        s = float(((self.p1 - self.q1) * (self.p2 - self.q2)) ** 2)
        return big_q * (1 - big_q) / s, (big_p * (1 - big_p) - big_q * (1 - big_q)) / s

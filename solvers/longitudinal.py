"""Two-round memoized (longitudinal) frequency oracles: closed forms and the exact L-GRR.

A longitudinal mechanism randomizes a value twice (Erlingsson et al. 2014, "permanent" and
"instantaneous" randomized response). The first round (p1, q1) is computed once per value and
memoized: any number of reports of that value reveal at most ``epsilon_perm`` (epsilon-infinity),
the epsilon of the first round alone. The second round (p2, q2) is drawn afresh for every report;
one report reveals ``epsilon_1``, the epsilon of the composed channel ``Q = P1 @ P2``.

Notation (Arcolezi et al. 2022): for both value-level (GRR) and bit-level (unary
encoding) mechanisms, a report "supports" a value ``v`` with probability

* ``P = p1 p2 + (1 - p1) q2`` when the user's value is ``v`` (for GRR: the diagonal of ``Q``);
* ``Q = q1 p2 + (1 - q1) q2`` otherwise (the paper's gamma; for GRR: the off-diagonal of ``Q``).

The frequency estimator ``(C(v)/n - Q) / ((p1 - q1)(p2 - q2))`` is unbiased with variance
``[f P(1-P) + (1-f) Q(1-Q)] / (n (p1-q1)^2 (p2-q2)^2)``; the papers' approximate variance is its
value at ``f = 0``: ``Q(1-Q) / (n (p1-q1)^2 (p2-q2)^2)``.

The L-GRR second round of the papers (and of multi-freq-ldpy) is solved from the two-path ratio
``(p1 p2 + q1 q2) / (q1 p2 + p1 q2) = exp(epsilon_1)``, which is the composed channel for
``k = 2`` only. For ``k > 2`` the composed k-ary channel is again a GRR matrix with diagonal
``p1 p2 + (k-1) q1 q2`` and off-diagonal ``p1 q2 + q1 p2 + (k-2) q1 q2`` (see
:func:`l_grr_composed_epsilon`), whose epsilon is strictly below the target: the papers' form is
conservative. :func:`l_grr_exact` solves the second round on the exact composed channel.

No printing and no file I/O happen here.

References
----------
.. [1] H. H. Arcolezi, J.-F. Couchot, B. Al Bouna, X. Xiao, "Improving the utility of locally
   differentially private protocols for longitudinal and multidimensional frequency
   estimates", Digital Communications and Networks, 2022 (arXiv:2111.04636): the protocols
   L-GRR, L-SUE, L-OUE, L-OSUE, L-SOUE, their second-round closed forms and the approximate
   variance. The paper's equation numbers could not be checked in this session (only excerpts
   of the text were reachable); every closed form here is instead pinned by tests against
   brute-force channel composition and against multi-freq-ldpy (the authors' implementation,
   ``multi_freq_ldpy.long_freq_est``), so cite the protocol names, not numbers.
.. [2] U. Erlingsson, V. Pihur, A. Korolova, "RAPPOR: Randomized aggregatable
   privacy-preserving ordinal response", ACM CCS 2014 (permanent + instantaneous randomized
   response; epsilon-infinity and epsilon_1 of the basic one-time RAPPOR).
"""
from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

from ._exact_channel import ComposedChannel, composed_channel_epsilon, exp_lower, l_grr_composed_epsilon, log_upper
from ._result import SolverError

__all__ = [
    "MECHANISMS", "LongitudinalParameters", "ComposedChannel", "ExactLGRR",
    "l_grr", "l_sue", "l_oue", "l_osue", "l_soue", "longitudinal_parameters",
    "composed_channel_epsilon", "l_grr_composed_epsilon", "l_grr_exact", "first_round", "second_round",
]

#: Mechanism names as in Arcolezi et al. (2022).
MECHANISMS = ("L-GRR", "L-SUE", "L-OUE", "L-OSUE", "L-SOUE")


@dataclasses.dataclass(frozen=True)
class LongitudinalParameters:
    """Both rounds of a memoized frequency oracle.

    Attributes
    ----------
    mechanism : str
        One of :data:`MECHANISMS` (or ``"L-GRR-exact"`` from :func:`l_grr_exact`).
    epsilon_perm, epsilon_1 : float
        Targets: epsilon of the first round (any number of reports of one value) and of one
        report (composed channel).
    k : int
        Domain size.
    p1, q1, p2, q2 : float
        First- and second-round probabilities. For GRR, ``p`` is the probability of keeping the
        value and ``q`` of each other value; for unary encoding, ``p = Pr[1 | 1]`` and
        ``q = Pr[1 | 0]`` per bit.
    """

    mechanism: str
    epsilon_perm: float
    epsilon_1: float
    k: int
    p1: float
    q1: float
    p2: float
    q2: float

    @property
    def support_true(self) -> float:
        """``P = p1 p2 + (1 - p1) q2``: a report supports the user's own value."""
        return self.p1 * self.p2 + (1.0 - self.p1) * self.q2

    @property
    def support_other(self) -> float:
        """``Q = q1 p2 + (1 - q1) q2`` (the paper's gamma): a report supports another value."""
        return self.q1 * self.p2 + (1.0 - self.q1) * self.q2

    @property
    def recovered_epsilon_perm(self) -> float:
        """Epsilon of the first round from the numbers: ``ln(p1/q1)`` (GRR) or
        ``ln(p1 (1-q1) / ((1-p1) q1))`` (unary encoding)."""
        if self.mechanism.startswith("L-GRR"):
            return math.log(self.p1 / self.q1)
        return math.log(self.p1 * (1.0 - self.q1) / ((1.0 - self.p1) * self.q1))

    @property
    def recovered_epsilon_1(self) -> float:
        """Epsilon of one report from the numbers, on the exact composed channel (floats).

        GRR: ``ln(diag / offdiag)`` of ``P1 @ P2``; unary encoding: ``ln(P(1-Q) / ((1-P) Q))``.
        """
        if self.mechanism.startswith("L-GRR"):
            return float(l_grr_composed_epsilon(self.p1, self.q1, self.p2, self.q2, self.k).epsilon)
        big_p, big_q = self.support_true, self.support_other
        return math.log(big_p * (1.0 - big_q) / ((1.0 - big_p) * big_q))

    def approximate_variance(self, n: int = 1) -> float:
        """The papers' approximate variance ``Q(1-Q) / (n (p1-q1)^2 (p2-q2)^2)`` per value and round.

        Parameters
        ----------
        n : int
            Number of users reporting in the round.

        Returns
        -------
        float
            Variance of the estimated frequency (a fraction in [0, 1]) at ``f = 0``.

        References
        ----------
        Arcolezi et al. (2022), approximate variance of the longitudinal protocols (the
        same form for L-GRR and the unary-encoding protocols).
        """
        return self.variance(n, 0.0)

    def variance(self, n: int, frequency: float) -> float:
        """Exact variance of the frequency estimator at true frequency ``frequency``.

        ``[f P(1-P) + (1-f) Q(1-Q)] / (n (p1-q1)^2 (p2-q2)^2)``: the reported count of a value
        is a sum of ``n f`` Bernoulli(P) and ``n (1-f)`` Bernoulli(Q) indicators.
        """
        big_p, big_q = self.support_true, self.support_other
        spread = ((self.p1 - self.q1) * (self.p2 - self.q2)) ** 2
        return (frequency * big_p * (1 - big_p) + (1 - frequency) * big_q * (1 - big_q)) / (n * spread)


@dataclasses.dataclass(frozen=True)
class ExactLGRR:
    """L-GRR with the second round solved on the exact composed channel.

    Attributes
    ----------
    parameters : LongitudinalParameters
        The rounds (``mechanism == "L-GRR-exact"``).
    epsilon_perm_achieved, epsilon_1_achieved : float
        Exact epsilons of the first round and of the composed channel of the returned floats,
        rounded up; never above the targets.
    tolerance : float
        ``epsilon_1 - epsilon_1_achieved`` (>= 0): budget left unused by the bisection.
    p2_closed_form : float
        The exact-channel second round from the linear closed form (for cross-checking).
    iterations : int
        Bisection steps.
    """

    parameters: LongitudinalParameters
    epsilon_perm_achieved: float
    epsilon_1_achieved: float
    tolerance: float
    p2_closed_form: float
    iterations: int


# ----------------------------------------------------------------------------- validation

def _check(epsilon_perm: float, epsilon_1: float, k: int) -> None:
    for name, value in (("epsilon_perm", epsilon_perm), ("epsilon_1", epsilon_1)):
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
            raise ValueError(f"{name}: must be a finite number > 0, got {value!r}")
    if not epsilon_1 < epsilon_perm:
        raise ValueError(f"epsilon_1: must be below epsilon_perm={epsilon_perm!r}, got {epsilon_1!r}")
    if isinstance(k, bool) or not isinstance(k, int) or k < 2:
        raise ValueError(f"k: must be an integer >= 2, got {k!r}")


# ----------------------------------------------------------------------------- rounds

def _grr_round(epsilon: float, k: int) -> tuple[float, float]:
    """GRR: ``p = e^eps / (e^eps + k - 1)``, ``q = (1 - p)/(k - 1)`` (Wang et al. 2017)."""
    p = math.exp(epsilon) / (math.exp(epsilon) + k - 1)
    return p, (1.0 - p) / (k - 1)


def _sue_round(epsilon: float) -> tuple[float, float]:
    """SUE (basic RAPPOR): ``p = e^(eps/2) / (e^(eps/2) + 1)``, ``q = 1 - p``."""
    h = math.exp(epsilon / 2)
    return h / (h + 1), 1 / (h + 1)


def _oue_round(epsilon: float) -> tuple[float, float]:
    """OUE: ``p = 1/2``, ``q = 1 / (e^eps + 1)``."""
    return 0.5, 1 / (math.exp(epsilon) + 1)


def _solve_unary_second(p1: float, q1: float, epsilon_1: float, symmetric: bool) -> tuple[float, float]:
    """Second round of a unary-encoding protocol from ``P(1-Q) / ((1-P)Q) = e^epsilon_1``.

    ``symmetric``: SUE-shaped second round (``q2 = 1 - p2``, unknown ``t = p2`` in (1/2, 1));
    otherwise OUE-shaped (``p2 = 1/2``, unknown ``t = q2`` in (0, 1/2)). ``P`` and ``Q`` are
    affine in ``t``, so the condition is a quadratic; its unique root in the interval is the
    papers' closed form (Arcolezi et al. 2022).
    """
    if symmetric:  # P = (1-p1) + (2p1-1) t, Q = (1-q1) + (2q1-1) t
        a0, a1, b0, b1, lo, hi = 1 - p1, 2 * p1 - 1, 1 - q1, 2 * q1 - 1, 0.5, 1.0
    else:  # P = p1/2 + (1-p1) t, Q = q1/2 + (1-q1) t
        a0, a1, b0, b1, lo, hi = p1 / 2, 1 - p1, q1 / 2, 1 - q1, 0.0, 0.5
    e = math.exp(epsilon_1)
    # g(t) = P(1-Q) - e (1-P) Q with P = a0 + a1 t, Q = b0 + b1 t
    c2 = -a1 * b1 + e * a1 * b1
    c1 = a1 * (1 - b0) - a0 * b1 - e * ((1 - a0) * b1 - a1 * b0)
    c0 = a0 * (1 - b0) - e * (1 - a0) * b0
    roots = _quadratic_roots(c2, c1, c0)
    inside = [t for t in roots if lo < t < hi]
    if len(inside) != 1:
        shape = "SUE" if symmetric else "OUE"
        raise SolverError(f"epsilon_1={epsilon_1!r}: no {shape}-shaped second round reaches it "
                          f"after a first round (p1={p1!r}, q1={q1!r}); lower epsilon_1")
    t = inside[0]
    return (t, 1.0 - t) if symmetric else (0.5, t)


def _quadratic_roots(c2: float, c1: float, c0: float) -> list[float]:
    """Real roots of ``c2 t^2 + c1 t + c0`` (numerically stable form)."""
    if c2 == 0:
        return [] if c1 == 0 else [-c0 / c1]
    disc = c1 * c1 - 4 * c2 * c0
    if disc < 0:
        return []
    s = -0.5 * (c1 + math.copysign(math.sqrt(disc), c1))
    return [s / c2, c0 / s] if s != 0 else [0.0]


def l_grr(epsilon_perm: float, epsilon_1: float, k: int) -> LongitudinalParameters:
    """L-GRR of the papers: GRR(epsilon_perm), then GRR solved from the two-path ratio.

    ``p1 = e^epsilon_perm / (e^epsilon_perm + k - 1)``, ``q1 = (1 - p1)/(k - 1)``;
    ``p2 = (q1 - e^epsilon_1 p1) / (-p1 e^epsilon_1 + k q1 e^epsilon_1 - q1 e^epsilon_1 - p1 (k-1) + q1)``,
    ``q2 = (1 - p2)/(k - 1)``: the solution of
    ``(p1 p2 + q1 q2) / (q1 p2 + p1 q2) = e^epsilon_1``.

    This is the reference form; it is exact for ``k = 2`` and conservative for ``k > 2`` (the
    composed channel's epsilon is below ``epsilon_1``; see :func:`l_grr_exact`).

    Parameters
    ----------
    epsilon_perm : float
        Epsilon-infinity (> epsilon_1).
    epsilon_1 : float
        Epsilon of one report (> 0).
    k : int
        Domain size (>= 2).

    Returns
    -------
    LongitudinalParameters

    Raises
    ------
    ValueError
        Non-positive or non-finite budgets, ``epsilon_1 >= epsilon_perm``, ``k < 2``.
    SolverError
        The closed form leaves ``(1/k, 1)`` (not observed for valid inputs).

    References
    ----------
    Arcolezi et al. (2022), L-GRR (second-round closed form); multi-freq-ldpy
    ``long_freq_est/L_GRR.py`` implements the same expression.
    """
    _check(epsilon_perm, epsilon_1, k)
    p1, q1 = _grr_round(epsilon_perm, k)
    e = math.exp(epsilon_1)
    p2 = (q1 - e * p1) / (-p1 * e + k * q1 * e - q1 * e - p1 * (k - 1) + q1)
    if not 1.0 / k < p2 <= 1.0:
        raise SolverError(f"epsilon_1={epsilon_1!r}: the L-GRR closed form gives p2={p2!r} outside (1/k, 1]")
    return LongitudinalParameters("L-GRR", epsilon_perm, epsilon_1, k, p1, q1, p2, (1.0 - p2) / (k - 1))


def _unary(name: str, first, symmetric_second: bool, epsilon_perm: float, epsilon_1: float,
           k: int) -> LongitudinalParameters:
    _check(epsilon_perm, epsilon_1, k)
    p1, q1 = first(epsilon_perm)
    p2, q2 = _solve_unary_second(p1, q1, epsilon_1, symmetric_second)
    return LongitudinalParameters(name, epsilon_perm, epsilon_1, k, p1, q1, p2, q2)


def l_sue(epsilon_perm: float, epsilon_1: float, k: int) -> LongitudinalParameters:
    """L-SUE (basic one-time RAPPOR): SUE(epsilon_perm), then a symmetric second round.

    ``p1 = e^(epsilon_perm/2) / (e^(epsilon_perm/2) + 1)``, ``q1 = 1 - p1``; ``q2 = 1 - p2`` with
    ``p2`` the root in (1/2, 1) of ``P(1-Q) = e^epsilon_1 (1-P) Q``. Parameters, returns and
    raises as :func:`l_grr` (``SolverError`` when no second round reaches ``epsilon_1``).

    References
    ----------
    Erlingsson et al. (2014) (PRR with ``f``: ``p1 = 1 - f/2``; IRR with ``p = p2``,
    ``q = q2 = 1 - p2`` in the basic one-time setting); Arcolezi et al. (2022), L-SUE.
    """
    return _unary("L-SUE", _sue_round, True, epsilon_perm, epsilon_1, k)


def l_oue(epsilon_perm: float, epsilon_1: float, k: int) -> LongitudinalParameters:
    """L-OUE: OUE(epsilon_perm), then an OUE-shaped second round (``p2 = 1/2``, ``q2`` solved).

    Only ``epsilon_1 < ln(p1 (2 - q1) / ((2 - p1) q1))`` is reachable (``q2 -> 0``); above it
    ``SolverError``. Otherwise as :func:`l_sue`.

    References
    ----------
    Arcolezi et al. (2022), L-OUE.
    """
    return _unary("L-OUE", _oue_round, False, epsilon_perm, epsilon_1, k)


def l_osue(epsilon_perm: float, epsilon_1: float, k: int) -> LongitudinalParameters:
    """L-OSUE: OUE(epsilon_perm), then a symmetric (SUE-shaped) second round.

    Closed form: ``p2 = (1 - e^(epsilon_1 + epsilon_perm)) /
    (e^epsilon_1 - e^epsilon_perm - e^(epsilon_1 + epsilon_perm) + 1)``, ``q2 = 1 - p2``
    (the root of the quadratic of :func:`l_sue` for ``p1 = 1/2``). As :func:`l_sue` otherwise.

    References
    ----------
    Arcolezi et al. (2022), L-OSUE (their recommended unary-encoding protocol).
    """
    _check(epsilon_perm, epsilon_1, k)
    p1, q1 = _oue_round(epsilon_perm)
    a, b = math.exp(epsilon_1), math.exp(epsilon_perm)
    p2 = (1 - a * b) / (a - b - a * b + 1)
    return LongitudinalParameters("L-OSUE", epsilon_perm, epsilon_1, k, p1, q1, p2, 1.0 - p2)


def l_soue(epsilon_perm: float, epsilon_1: float, k: int) -> LongitudinalParameters:
    """L-SOUE: SUE(epsilon_perm), then an OUE-shaped second round. As :func:`l_oue`.

    References
    ----------
    Arcolezi et al. (2022), L-SOUE.
    """
    return _unary("L-SOUE", _sue_round, False, epsilon_perm, epsilon_1, k)


def first_round(mechanism: str, epsilon_perm: float) -> tuple[float, float]:
    """``(p1, q1)`` of a unary-encoding protocol's first round: SUE for L-SUE / L-SOUE, OUE for L-OUE / L-OSUE.

    Raises
    ------
    ValueError
        ``mechanism`` not a unary encoding of :data:`MECHANISMS`.

    References
    ----------
    Arcolezi et al. (2022), the four unary-encoding protocols.
    """
    if mechanism in ("L-SUE", "L-SOUE"):
        return _sue_round(epsilon_perm)
    if mechanism in ("L-OUE", "L-OSUE"):
        return _oue_round(epsilon_perm)
    raise ValueError(f"mechanism: must be a unary encoding (L-SUE, L-OUE, L-OSUE, L-SOUE), got {mechanism!r}")


def second_round(mechanism: str, p1: float, q1: float, epsilon_1: float) -> tuple[float, float]:
    """``(p2, q2)`` of a unary-encoding protocol's second round after the given first round.

    SUE-shaped (``q2 = 1 - p2``) for L-SUE / L-OSUE, OUE-shaped (``p2 = 1/2``) for L-OUE / L-SOUE: the root of
    ``P(1-Q) = e^epsilon_1 (1-P) Q`` (see :func:`l_sue`). Solving on the first round as it will be used (e.g.
    rounded to a grid) keeps the composed channel at ``epsilon_1`` up to float error.

    Raises
    ------
    SolverError
        No second round of that shape reaches ``epsilon_1``.

    References
    ----------
    Arcolezi et al. (2022), the second-round closed forms.
    """
    first_round(mechanism, 1.0)  # validates the name
    return _solve_unary_second(p1, q1, epsilon_1, mechanism in ("L-SUE", "L-OSUE"))


_BY_NAME = {"L-GRR": l_grr, "L-SUE": l_sue, "L-OUE": l_oue, "L-OSUE": l_osue, "L-SOUE": l_soue}


def longitudinal_parameters(mechanism: str, epsilon_perm: float, epsilon_1: float,
                            k: int) -> LongitudinalParameters:
    """Dispatch on a name of :data:`MECHANISMS` (``"L-GRR-exact"`` gives :func:`l_grr_exact`'s rounds)."""
    if mechanism == "L-GRR-exact":
        return l_grr_exact(epsilon_perm, epsilon_1, k).parameters
    if mechanism not in _BY_NAME:
        raise ValueError(f"mechanism: must be one of {', '.join(MECHANISMS)} or L-GRR-exact, got {mechanism!r}")
    return _BY_NAME[mechanism](epsilon_perm, epsilon_1, k)


def _conservative_first_round(epsilon_perm: float, k: int) -> tuple[float, float]:
    p1, q1 = _grr_round(epsilon_perm, k)
    bound = exp_lower(epsilon_perm)
    while Fraction(p1) / Fraction(q1) > bound:
        p1 = math.nextafter(p1, 0.0)
        q1 = (1.0 - p1) / (k - 1)
    return p1, q1


def l_grr_exact(epsilon_perm: float, epsilon_1: float, k: int, *,
                tolerance: float = 1e-13) -> ExactLGRR:
    """L-GRR whose second round is solved on the exact composed k-ary channel.

    First round: GRR(epsilon_perm), ``p1`` stepped down by ulps until ``p1/q1 <= e^epsilon_perm``
    holds exactly. Second round: bisection on ``p2`` in ``[1/k, 1]`` of the monotone quantity
    ``d(p2)/o(p2)`` of :func:`l_grr_composed_epsilon` (``q2 = (1 - p2)/(k-1)``; the ratio
    ``(q1 + (p1-q1) p2) / (q1 p2 + (1-q1) q2)`` is increasing in ``p2``), keeping the largest
    ``p2`` whose exact ratio is at most a rigorous rational lower bound of ``e^epsilon_1``. The
    predicate is evaluated in rationals, so the returned channel never exceeds ``epsilon_1``; the
    unused budget is reported as ``tolerance`` (bisection stops when the bracket in ``p2`` is
    below ``tolerance``). Since ``d = P`` and ``o = Q`` are the quantities of the variance, the
    exact channel allows a larger ``p2`` and a lower variance than :func:`l_grr` for ``k > 2``.
    Since products of GRR matrices are GRR matrices, the solved composed channel is exactly
    GRR(epsilon_1): one report costs no utility against a one-shot GRR at ``epsilon_1`` (the
    per-round variance does not depend on ``epsilon_perm``); memoization only constrains
    ``epsilon_1 < epsilon_perm``.
    The linear closed form ``p2 = (e c - q1) / (p1 - q1 - e q1 + e c)`` with ``e = e^epsilon_1`` and
    ``c = (1 - q1)/(k - 1)`` (the solution of ``P = e Q``) is reported as ``p2_closed_form`` for
    cross-checking.

    Parameters
    ----------
    epsilon_perm, epsilon_1 : float
        Targets (``0 < epsilon_1 < epsilon_perm``).
    k : int
        Domain size (>= 2).
    tolerance : float, keyword-only
        Width of the final bisection bracket in ``p2`` (> 0).

    Returns
    -------
    ExactLGRR

    Raises
    ------
    ValueError
        Invalid budgets, domain or tolerance.

    References
    ----------
    Arcolezi et al. (2022) (L-GRR, whose second round this replaces for k > 2);
    Erlingsson et al. (2014) (epsilon_1 is the composed channel's).
    """
    _check(epsilon_perm, epsilon_1, k)
    if not (isinstance(tolerance, float) and 0 < tolerance < 1e-3):
        raise ValueError(f"tolerance: must be a float in (0, 1e-3), got {tolerance!r}")
    p1, q1 = _conservative_first_round(epsilon_perm, k)
    bound = exp_lower(epsilon_1)

    def ratio(p2: float) -> Fraction:
        return l_grr_composed_epsilon(p1, q1, p2, (1.0 - p2) / (k - 1), k).ratio

    lo, hi, iterations = 1.0 / k, 1.0, 0
    while hi - lo > tolerance and iterations < 200:
        mid = 0.5 * (lo + hi)
        if ratio(mid) <= bound:
            lo = mid
        else:
            hi = mid
        iterations += 1
    while ratio(lo) > bound:  # guard: 1/k in floats may already overshoot by rounding
        lo = math.nextafter(lo, 0.0)
    # ratio <= exp_lower(epsilon_1) <= e^epsilon_1, so ln(ratio) <= epsilon_1 even where the
    # rounded-up float log lands one ulp above the target (same for the first round)
    achieved = min(epsilon_1, l_grr_composed_epsilon(p1, q1, lo, (1.0 - lo) / (k - 1), k).epsilon)
    e = math.exp(epsilon_1)
    # P = e Q with P = q1 + (p1-q1) p2, Q = q1 p2 + (1-q1)(1-p2)/(k-1), solved for p2:
    closed = (e * (1 - q1) / (k - 1) - q1) / ((p1 - q1) - e * q1 + e * (1 - q1) / (k - 1))
    params = LongitudinalParameters("L-GRR-exact", epsilon_perm, epsilon_1, k, p1, q1, lo, (1.0 - lo) / (k - 1))
    perm = min(epsilon_perm, log_upper(Fraction(p1) / Fraction(q1)))
    return ExactLGRR(params, perm, achieved, max(0.0, epsilon_1 - achieved), closed, iterations)

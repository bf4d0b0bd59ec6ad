"""Closed forms and worst-case utility for utility-optimized LDP (ULDP).

Murakami & Kawamoto, "Utility-Optimized Local Differential Privacy Mechanisms for
Distribution Estimation", USENIX Security 2019 (full version; equation numbers refer
to ``shared/papers/uldp-murakami-kawamoto-2019-full.txt``).

* :func:`urr_parameters` -- ``c1, c2, c3`` of the (X_S, epsilon)-utility-optimized RR
  (Def. 3, eq. 6).
* :func:`urap_parameters` -- ``theta, d1, d2`` of the (X_S, theta, epsilon)-utility-
  optimized RAPPOR (Def. 4, eqs. 8-10); ``theta = e^(eps/2)/(e^(eps/2)+1)`` by default.
* :class:`LinearMarginals` -- every mechanism here (RR, RAPPOR, uRR, uRAP) has
  "marginals" ``m_j = alpha_j + beta_j p(x_j)`` (eqs. 34, 40; for RR/RAPPOR Sec. 2.4),
  the empirical estimate ``p_hat_j = (m_hat_j - alpha_j) / beta_j`` (eqs. 3, 35, 41) and
  binomial counts, hence the expected l1 loss (eq. 37, Props. 4 and 7; asymptotic in n)
  and the exact expected squared l2 loss (eqs. 46, 48; Props. 15 and 18).
* :func:`worst_case_losses` -- the maximum over the simplex of those losses (Props. 5, 6,
  8 for l1 and 16, 17, 19 for l2) by a symmetry reduction to a one-dimensional concave
  maximisation; the paper's closed forms (:func:`prop5_l1` ...) are used in the tests.

Losses are in frequency units (l1 = sum of absolute errors, i.e. twice the total
variation; l2 = sum of squared errors). No printing, no file I/O.
"""
from __future__ import annotations

import dataclasses
import math
import time

import numpy as np

from ._checks import check_epsilon
from ._result import STATUS_CLOSED_FORM, STATUS_OPTIMAL, Certificate, SolveResult, SolverError

__all__ = [
    "urr_parameters", "urap_parameters", "rr_parameters", "rappor_parameters",
    "LinearMarginals", "worst_case_losses",
    "prop5_l1", "prop6_l1", "prop8_l1", "prop16_l2", "prop17_l2", "prop19_l2",
    "prop6_distribution",
]


def urr_parameters(epsilon: float, n_sensitive: int) -> SolveResult:
    """Parameters of the (X_S, epsilon)-uRR (Def. 3).

    ``c1 = e^eps / (|X_S| + e^eps - 1)``, ``c2 = 1 / (|X_S| + e^eps - 1)``,
    ``c3 = 1 - |X_S| c2 = (e^eps - 1) / (|X_S| + e^eps - 1)``.

    Parameters
    ----------
    epsilon : float
        Privacy budget in nats (> 0).
    n_sensitive : int
        ``|X_S|`` (>= 1).

    Returns
    -------
    SolveResult
        ``parameters`` has ``c1, c2, c3`` (probabilities, exact reals, not yet on the
        2^-48 grid); ``objective`` is 0 (nothing is optimised).

    Raises
    ------
    SolverError
        For ``epsilon <= 0`` or ``n_sensitive < 1``.
    """
    t0 = time.perf_counter()
    epsilon = check_epsilon(epsilon, error=SolverError)
    k = int(n_sensitive)
    if k < 1:
        raise SolverError(f"|X_S| must be >= 1 (got {n_sensitive})")
    em1 = math.expm1(epsilon)
    u = k + em1
    params = {"c1": (em1 + 1.0) / u, "c2": 1.0 / u, "c3": em1 / u}
    return SolveResult(
        status=STATUS_CLOSED_FORM, objective=0.0, parameters=params,
        certificate=Certificate("closed form", 0.0, 0.0, {"source": "ULDP Def. 3, eq. (6)"}),
        solver="closed form (Murakami & Kawamoto 2019, Def. 3)", time_seconds=time.perf_counter() - t0,
    )


def urap_parameters(epsilon: float, theta: float | None = None) -> SolveResult:
    """Parameters of the (X_S, theta, epsilon)-uRAP (Def. 4).

    ``d1 = theta / ((1 - theta) e^eps + theta)``, ``d2 = ((1 - theta) e^eps + theta) / e^eps``.
    With the default ``theta = e^(eps/2) / (e^(eps/2) + 1)`` (the paper's choice, as the
    basic one-time RAPPOR) ``d1 = 1 / (e^(eps/2) + 1)`` and ``d2 = e^(-eps/2)``.

    Parameters
    ----------
    epsilon : float
        Privacy budget in nats (> 0).
    theta : float, optional
        Probability of keeping the true sensitive bit 1, in (0, 1].

    Returns
    -------
    SolveResult
        ``parameters``: ``theta, d1, d2`` (exact reals).

    Raises
    ------
    SolverError
        For ``epsilon <= 0`` or ``theta`` outside (0, 1].
    """
    t0 = time.perf_counter()
    epsilon = check_epsilon(epsilon, error=SolverError)
    h = math.exp(epsilon / 2.0)
    if theta is None:
        theta = h / (h + 1.0)
    theta = float(theta)
    if not (0.0 < theta <= 1.0):
        raise SolverError(f"theta must be in (0, 1] (got {theta})")
    e = math.exp(epsilon)
    denom = (1.0 - theta) * e + theta
    params = {"theta": theta, "d1": theta / denom, "d2": denom / e}
    return SolveResult(
        status=STATUS_CLOSED_FORM, objective=0.0, parameters=params,
        certificate=Certificate("closed form", 0.0, 0.0, {"source": "ULDP Def. 4, eqs. (8)-(10)"}),
        solver="closed form (Murakami & Kawamoto 2019, Def. 4)", time_seconds=time.perf_counter() - t0,
    )


def rr_parameters(epsilon: float, domain_size: int) -> SolveResult:
    """k-ary RR (ULDP eq. 2): ``p = e^eps/(|X|+e^eps-1)`` keeps, ``q = 1/(|X|+e^eps-1)`` each other.

    The epsilon-RR is the uRR with ``X_S = X`` (``p = c1``, ``q = c2``).
    """
    res = urr_parameters(epsilon, domain_size)
    return dataclasses.replace(res, parameters={"p": res.parameters["c1"], "q": res.parameters["c2"]},
                               solver="closed form (ULDP paper eq. 2)")


def rappor_parameters(epsilon: float) -> SolveResult:
    """Basic one-time RAPPOR (symmetric unary encoding; ULDP Sec. 2.4).

    Each bit is kept with ``theta = e^(eps/2)/(e^(eps/2)+1)`` and flipped with
    ``1 - theta`` (the generalized RAPPOR with ``psi = 1 - theta``; the uRAP with X_S = X).
    """
    res = urap_parameters(epsilon)
    theta = res.parameters["theta"]
    return dataclasses.replace(res, parameters={"theta": theta, "psi": 1.0 - theta},
                               solver="closed form (basic one-time RAPPOR)")


# --------------------------------------------------------------------------- utility
@dataclasses.dataclass(frozen=True)
class LinearMarginals:
    """Mechanisms whose per-symbol report marginal is ``m_j = alpha_j + beta_j p(x_j)``.

    ``m_j`` is the probability that a report "counts for" ``x_j`` (for RR/uRR: ``y = x_j``,
    eq. 34; for RAPPOR/uRAP: bit ``j`` is 1, eq. 40). Symbols form two groups (sensitive
    S and non-sensitive N) with common ``alpha, beta`` inside each group.

    Attributes
    ----------
    n_sensitive, n_nonsensitive : int
        ``|X_S|`` and ``|X_N|``.
    alpha_s, beta_s, alpha_n, beta_n : float
        Offsets and slopes of the two groups (probabilities; ``beta > 0``).
    """

    n_sensitive: int
    n_nonsensitive: int
    alpha_s: float
    beta_s: float
    alpha_n: float
    beta_n: float

    @classmethod
    def urr(cls, n_sensitive: int, n_nonsensitive: int, c1: float, c2: float, c3: float) -> "LinearMarginals":
        """uRR (eq. 34): S: ``m = c2 + (c1 - c2) p``; N: ``m = c3 p``."""
        return cls(int(n_sensitive), int(n_nonsensitive), c2, c1 - c2, 0.0, c3)

    @classmethod
    def urap(cls, n_sensitive: int, n_nonsensitive: int, theta: float, d1: float, d2: float) -> "LinearMarginals":
        """uRAP (eqs. 9-10, 40): S bits: ``m = d1 + (theta - d1) p``; N bits: ``m = (1 - d2) p``."""
        return cls(int(n_sensitive), int(n_nonsensitive), d1, theta - d1, 0.0, 1.0 - d2)

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``alpha, beta`` as (K,) arrays, sensitive symbols first."""
        k_s, k_n = self.n_sensitive, self.n_nonsensitive
        alpha = np.concatenate([np.full(k_s, self.alpha_s), np.full(k_n, self.alpha_n)])
        beta = np.concatenate([np.full(k_s, self.beta_s), np.full(k_n, self.beta_n)])
        return alpha, beta

    def variance_per_user(self, p) -> np.ndarray:
        """``n Var(p_hat_j) = m_j (1 - m_j) / beta_j^2`` (frequency^2), shape (K,), sensitive first."""
        alpha, beta = self.arrays()
        m = alpha + beta * np.asarray(p, dtype=np.float64)
        return m * (1.0 - m) / beta**2

    def expected_l1(self, p, n: int) -> float:
        """Expected l1 loss of the empirical estimate, eq. (37) / Props. 4, 7 (n -> infinity).

        ``E[l1] ~ sqrt(2 / (n pi)) * sum_j sqrt(m_j (1 - m_j)) / beta_j``; ``p`` is (K,),
        sensitive symbols first.
        """
        return float(math.sqrt(2.0 / (int(n) * math.pi)) * np.sum(np.sqrt(np.maximum(self.variance_per_user(p), 0.0))))

    def expected_l2(self, p, n: int) -> float:
        """Exact expected squared l2 loss of the empirical estimate, eqs. (46), (48) / Props. 15, 18."""
        return float(np.sum(self.variance_per_user(p)) / int(n))

    def _group_terms(self, s: float, kind: str) -> float:
        k_s, k_n = self.n_sensitive, self.n_nonsensitive
        total = 0.0
        for k, a, b, mass in ((k_s, self.alpha_s, self.beta_s, s), (k_n, self.alpha_n, self.beta_n, 1.0 - s)):
            if k == 0:
                continue
            m = a + b * mass / k
            v = max(m * (1.0 - m), 0.0) / b**2
            total += k * (math.sqrt(v) if kind == "l1" else v)
        return total


def _maximise_concave(h, lo: float, hi: float) -> tuple[float, float]:
    """Golden-section maximisation of a concave function on [lo, hi] (plus both ends)."""
    if hi <= lo:
        return lo, h(lo)
    g = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = lo, hi
    c, d = b - g * (b - a), a + g * (b - a)
    hc, hd = h(c), h(d)
    for _ in range(200):
        if b - a < 1e-15:
            break
        if hc >= hd:
            b, d, hd = d, c, hc
            c = b - g * (b - a)
            hc = h(c)
        else:
            a, c, hc = c, d, hd
            d = a + g * (b - a)
            hd = h(d)
    best = max([(h(lo), lo), (h(hi), hi), (hc, c), (hd, d)])
    return best[1], best[0]


def worst_case_losses(model: LinearMarginals, n: int) -> SolveResult:
    """Maximum expected l1 and l2 losses over all input distributions p.

    Both losses are sums over symbols of concave functions of ``p(x_j)`` with common
    parameters inside the sensitive and the non-sensitive group, so (concavity +
    symmetry) a maximiser puts equal mass on the symbols of each group; with ``s`` the
    total sensitive mass the problem becomes a concave maximisation over ``s`` in [0, 1],
    solved by golden section (Props. 5, 6, 8, 16, 17, 19 are the closed-form cases).

    Parameters
    ----------
    model : LinearMarginals
    n : int
        Number of users.

    Returns
    -------
    SolveResult
        ``objective``: worst expected l1 loss; ``parameters``: ``l1, l2`` (worst
        values), ``sensitive_mass_l1`` and ``sensitive_mass_l2`` (the ``s`` of the
        maximisers; 0 means the uniform distribution over X_N, Prop. 5/8/16/19).
        ``certificate.upper_bound`` is a proven bound for l1 via the tangent of the
        concave objective at the returned point.
    """
    t0 = time.perf_counter()
    n = int(n)
    if n < 1:
        raise SolverError(f"n must be >= 1 (got {n})")
    lo = 0.0 if model.n_nonsensitive > 0 else 1.0
    hi = 1.0 if model.n_sensitive > 0 else 0.0
    scale1 = math.sqrt(2.0 / (n * math.pi))
    s1, v1 = _maximise_concave(lambda s: model._group_terms(s, "l1"), lo, hi)
    s2, v2 = _maximise_concave(lambda s: model._group_terms(s, "l2"), lo, hi)
    # tangent bound for the concave l1 objective: max h <= h(s) + max(h'(s)(hi - s), h'(s)(lo - s))
    step = 1e-7
    left, right = max(lo, s1 - step), min(hi, s1 + step)
    slope = 0.0 if right <= left else (model._group_terms(right, "l1") - model._group_terms(left, "l1")) / (right - left)
    bound = v1 + max(slope * (hi - s1), slope * (lo - s1), 0.0)
    params = {"l1": scale1 * v1, "l2": v2 / n, "sensitive_mass_l1": s1, "sensitive_mass_l2": s2}
    return SolveResult(
        status=STATUS_OPTIMAL, objective=scale1 * v1, parameters=params,
        certificate=Certificate("concave 1-D maximisation (symmetry reduction), tangent bound", scale1 * v1,
                                scale1 * bound, {"sensitive_mass": s1}),
        solver="golden section on the sensitive mass", time_seconds=time.perf_counter() - t0,
    )


# --------------------------------------------------------------------------- the paper's closed forms
def prop5_l1(epsilon: float, n_sensitive: int, n_nonsensitive: int, n: int) -> float:
    """Eq. (12): worst-case l1 of the uRR for ``0 < eps < ln(|X_N| + 1)`` (at p_UN)."""
    e = math.expm1(epsilon)
    ks, kn = n_sensitive, n_nonsensitive
    return math.sqrt(2 / (n * math.pi)) * (ks * math.sqrt(ks + e - 1) / e + math.sqrt(ks * kn / e + kn - 1))


def prop6_l1(epsilon: float, n_sensitive: int, n_nonsensitive: int, n: int) -> float:
    """Eq. (14): worst-case l1 of the uRR for ``eps >= ln(|X_N| + 1)`` (at p* of eq. 13)."""
    e = math.expm1(epsilon)
    k = n_sensitive + n_nonsensitive
    return math.sqrt(2 * (k - 1) / (n * math.pi)) * (n_sensitive + e) / e


def prop6_distribution(epsilon: float, n_sensitive: int, n_nonsensitive: int) -> tuple[float, float]:
    """Eq. (13): per-symbol probabilities ``(p*(x in X_S), p*(x in X_N))``."""
    e = math.expm1(epsilon)
    k = n_sensitive + n_nonsensitive
    return (1 - n_nonsensitive / e) / k, (1 + n_sensitive / e) / k


def prop8_l1(epsilon: float, n_sensitive: int, n_nonsensitive: int, n: int) -> float:
    """Eq. (17): worst-case l1 of the uRAP for ``0 < eps < 2 ln(|X_N|/2 + 1)`` (at p_UN)."""
    h = math.exp(epsilon / 2)
    return math.sqrt(2 / (n * math.pi)) * (math.exp(epsilon / 4) * n_sensitive / (h - 1)
                                           + math.sqrt(h * n_nonsensitive / (h - 1) - 1))


def prop16_l2(epsilon: float, n_sensitive: int, n_nonsensitive: int, n: int) -> float:
    """Eq. (45) at p_UN (Prop. 16): worst-case l2 of the uRR for ``eps < ln(|X_N| + 1)``."""
    e = math.expm1(epsilon)
    ks = n_sensitive
    return (2 * e * ks + ks * (ks - 1)) / (n * e**2) + (1 - 1 / n_nonsensitive) / n


def prop17_l2(epsilon: float, n_sensitive: int, n_nonsensitive: int, n: int) -> float:
    """Prop. 17: worst-case l2 of the uRR for ``eps >= ln(|X_N| + 1)`` (at p*)."""
    e = math.expm1(epsilon)
    k = n_sensitive + n_nonsensitive
    return (n_sensitive + e) ** 2 / (n * e**2) * (1 - 1 / k)


def prop19_l2(epsilon: float, n_sensitive: int, n_nonsensitive: int, n: int) -> float:
    """Prop. 19: worst-case l2 of the uRAP for ``eps < 2 ln(|X_N|/2 + 1)`` (at p_UN)."""
    h = math.exp(epsilon / 2)
    return (1 + ((n_sensitive + 1) * h - 1) / (h - 1) ** 2 - 1 / n_nonsensitive) / n

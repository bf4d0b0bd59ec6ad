"""PIE privacy calculators: MI loss, alpha (bits), Bayes error, l2 loss (Murakami & Takahashi, TDP 2021).

The closed forms behind :mod:`ldpplan.solvers.pie` (which re-exports every public name here and
adds the targeting solvers). Units: alpha in bits, epsilon in nats, losses in squared frequencies.
"""
from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

from ._checks import check_epsilon

__all__ = [
    "LOG2_E", "EPSILON_CEILING", "bits_to_nats", "nats_to_bits", "mi_loss_rr", "mi_loss_glh",
    "mi_loss_from_keep_probability", "alpha_ldp_bound", "alpha_rr", "alpha_glh", "PIEBound", "prior_bits",
    "bayes_error_lower_bound", "alpha_for_bayes_error", "l2_loss_rr", "l2_loss_glh", "l2_loss_glh_limit",
    "total_l2_loss_rr", "total_l2_loss_glh",
]

#: log2(e): one nat in bits.
LOG2_E = 1.0 / math.log(2.0)
#: Largest epsilon (nats) the solvers return. The runtime's keep probability is capped at
#: ``1 - 2**-48``, reached for every ``k <= 2**31`` once ``epsilon >= log(2**48 * 2**31) = 54.8``,
#: so larger budgets cannot be realised and are capped here without loss.
EPSILON_CEILING = 60.0


def _inv_expm1(epsilon: float) -> float:
    """``1/(e^eps - 1)`` without overflow for any ``eps > 0`` (``e^-eps/(1 - e^-eps)``)."""
    return math.exp(-epsilon) / -math.expm1(-epsilon)


def bits_to_nats(alpha_bits: float) -> float:
    """Convert an information quantity from bits to nats (multiply by ln 2)."""
    return float(alpha_bits) * math.log(2.0)


def nats_to_bits(alpha_nats: float) -> float:
    """Convert an information quantity from nats to bits (divide by ln 2)."""
    return float(alpha_nats) / math.log(2.0)


def _check_int(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or int(value) != value or int(value) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum} (got {value!r})")
    return int(value)


# ------------------------------------------------------------------ MI loss parameter
def mi_loss_rr(epsilon: float, domain_size: int) -> float:
    """MI loss parameter of the epsilon-RR, ``theta_RR = (e^eps - 1)/(|X| + e^eps - 1)`` (Thm. 4.2).

    Parameters
    ----------
    epsilon : float
        LDP budget (nats), > 0; ``inf`` gives 1.
    domain_size : int
        ``|X|`` >= 2.

    Returns
    -------
    float in (0, 1]
    """
    epsilon = check_epsilon(epsilon, allow_infinite=True)
    k = _check_int("domain_size", domain_size, 2)
    if math.isinf(epsilon):
        return 1.0
    return 1.0 / (1.0 + k * _inv_expm1(epsilon))


def mi_loss_glh(epsilon: float, g: int) -> float:
    """MI loss parameter of the (g, epsilon)-GLH, ``theta_GLH = (e^eps - 1)/(g + e^eps - 1)`` (Thm. 4.4).

    Parameters
    ----------
    epsilon : float
        LDP budget (nats), > 0.
    g : int
        Hash range size >= 2.

    Returns
    -------
    float in (0, 1]
    """
    return mi_loss_rr(epsilon, _check_int("g", g, 2))


def mi_loss_from_keep_probability(mu: float, k: int) -> Fraction:
    """Exact MI loss parameter from the keep probability of a k-ary RR.

    For the RR over ``k`` symbols that reports the true symbol with probability
    ``mu`` and each other symbol with ``nu = (1 - mu)/(k - 1)``, ``e^eps = mu/nu`` and
    ``theta = (e^eps - 1)/(k + e^eps - 1) = mu - nu = (k mu - 1)/(k - 1)``
    (Thm. 4.2 with eq. 2; the GLH is the RR over ``[g]``, Thm. 4.4 with eq. 3).

    Parameters
    ----------
    mu : float
        Keep probability (a float is converted exactly to a rational).
    k : int
        ``|X|`` for the RR, ``g`` for the GLH.

    Returns
    -------
    fractions.Fraction
        The exact rational ``theta`` (may be <= 0 when ``mu <= 1/k``).
    """
    k = _check_int("k", k, 2)
    m = Fraction(float(mu))
    return (k * m - 1) / (k - 1)


# ------------------------------------------------------------------ alpha (bits)
def alpha_ldp_bound(epsilon: float, n: int, domain_size: int, releases: int = 1) -> float:
    """alpha (bits) of any epsilon-LDP mechanism, Prop. 4.1 (eq. 14).

    ``alpha = min{eps log2 e, eps^2 log2 e, log2 n, log2 |X|}``. For ``t`` releases the
    joint release is ``t eps``-LDP on ``(X^(1)..X^(t))`` and ``I(U; X^(1..t)) <=
    min{log2 n, t log2 |X|}``, so ``eps -> t eps`` and ``log2|X| -> t log2|X|``.

    Parameters
    ----------
    epsilon : float
        LDP budget per release (nats).
    n : int
        Number of users (>= 2).
    domain_size : int
        ``|X|`` (>= 2).
    releases : int, default 1
        ``t``, releases per user.

    Returns
    -------
    float
        alpha in bits.
    """
    epsilon = check_epsilon(epsilon, allow_infinite=True)
    n = _check_int("n", n, 2)
    k = _check_int("domain_size", domain_size, 2)
    t = _check_int("releases", releases, 1)
    te = t * epsilon
    return min(te * LOG2_E, te * te * LOG2_E, math.log2(n), t * math.log2(k))


def _alpha_mech(theta: float, n: int, k: int, t: int) -> float:
    return t * theta * min(math.log2(n), math.log2(k))


@dataclasses.dataclass(frozen=True)
class PIEBound:
    """alpha of a mechanism in bits, with its two ingredients.

    Attributes
    ----------
    alpha_bits : float
        ``min(mechanism_bits, ldp_bits)``: the (U, alpha)-PIE guarantee (Def. 3.1).
    mechanism_bits : float
        ``t * theta * min(log2 n, log2 |X|)`` (Thm. 4.2/4.4, composed by Thm. 4.3/4.5).
    ldp_bits : float
        Prop. 4.1 for the joint ``t epsilon``-LDP release.
    theta : float
        MI loss parameter.
    """

    alpha_bits: float
    mechanism_bits: float
    ldp_bits: float
    theta: float

    @property
    def alpha_nats(self) -> float:
        """The same guarantee in nats."""
        return bits_to_nats(self.alpha_bits)

    @property
    def binding(self) -> str:
        """Which bound is the smaller: ``"mechanism"`` or ``"ldp"``."""
        return "mechanism" if self.mechanism_bits <= self.ldp_bits else "ldp"


def alpha_rr(epsilon: float, n: int, domain_size: int, releases: int = 1) -> PIEBound:
    """PIE guarantee of the epsilon-RR: Thm. 4.2 (eq. 16), Thm. 4.3 for ``t`` releases, capped by Prop. 4.1.

    Parameters
    ----------
    epsilon : float
        LDP budget (nats).
    n : int
        Number of users.
    domain_size : int
        ``|X|``.
    releases : int, default 1

    Returns
    -------
    PIEBound
        alpha in bits (``.alpha_nats`` for nats).
    """
    theta = mi_loss_rr(epsilon, domain_size)
    t = _check_int("releases", releases, 1)
    mech = _alpha_mech(theta, _check_int("n", n, 2), int(domain_size), t)
    ldp = alpha_ldp_bound(epsilon, n, domain_size, t)
    return PIEBound(min(mech, ldp), mech, ldp, theta)


def alpha_glh(epsilon: float, g: int, n: int, domain_size: int, releases: int = 1) -> PIEBound:
    """PIE guarantee of the (g, epsilon)-GLH: Thm. 4.4 (eq. 18), Thm. 4.5, capped by Prop. 4.1.

    Parameters
    ----------
    epsilon : float
        LDP budget (nats).
    g : int
        Hash range size.
    n : int
        Number of users.
    domain_size : int
        ``|X|`` (enters only through ``min(log2 n, log2 |X|)``).
    releases : int, default 1

    Returns
    -------
    PIEBound
    """
    theta = mi_loss_glh(epsilon, g)
    t = _check_int("releases", releases, 1)
    mech = _alpha_mech(theta, _check_int("n", n, 2), _check_int("domain_size", domain_size, 2), t)
    ldp = alpha_ldp_bound(epsilon, n, domain_size, t)
    return PIEBound(min(mech, ldp), mech, ldp, theta)


# ------------------------------------------------------------------ Bayes error
def prior_bits(n: int | None = None, max_prior: float | None = None) -> float:
    """``-log2(1 - beta_U) = -log2 max_u Pr(U = u)`` in bits (``log2 n`` for a uniform prior).

    Parameters
    ----------
    n : int, optional
        Number of users (uniform prior) when ``max_prior`` is not given.
    max_prior : float, optional
        The adversary's largest prior probability of a single user, in (0, 1].

    Raises
    ------
    ValueError
        If neither is given or a value is out of range.
    """
    if max_prior is not None:
        m = float(max_prior)
        if not (0.0 < m <= 1.0):
            raise ValueError(f"max_prior must be in (0, 1] (got {max_prior!r})")
        return -math.log2(m)
    if n is None:
        raise ValueError("give n (uniform prior) or max_prior")
    return math.log2(_check_int("n", n, 1))


def bayes_error_lower_bound(alpha_bits: float, n: int | None = None, max_prior: float | None = None) -> float:
    """Lower bound on the adversary's Bayes error, Cor. 3.9.

    ``beta_{U|S} >= 1 - (alpha + 1) / log2(1 / max_prior)`` (eq. 11); with a uniform
    prior ``max_prior = 1/n`` this is eq. 12, ``1 - (alpha + 1)/log2 n``. alpha and the
    ``+1`` (Fano) are in bits.

    Parameters
    ----------
    alpha_bits : float
        PIE privacy alpha in bits (>= 0).
    n : int, optional
        Number of users (uniform prior).
    max_prior : float, optional
        Largest prior probability of one user (non-uniform prior).

    Returns
    -------
    float
        The raw bound (may be <= 0, i.e. vacuous; ``-inf`` when ``max_prior = 1``).
    """
    a = float(alpha_bits)
    if not (a >= 0.0):
        raise ValueError(f"alpha_bits must be >= 0 (got {alpha_bits!r})")
    lp = prior_bits(n, max_prior)
    if lp <= 0.0:
        return -math.inf
    return 1.0 - (a + 1.0) / lp


def alpha_for_bayes_error(bayes_error: float, n: int | None = None, max_prior: float | None = None) -> float:
    """Largest alpha (bits) whose Cor. 3.9 bound is >= ``bayes_error``.

    Inverse of :func:`bayes_error_lower_bound`: ``alpha = (1 - beta) log2(1/max_prior) - 1``.
    Example after Cor. 3.9: ``n = 10^6`` gives 2.99 bits (2.07 nats) for 0.8 and 8.97
    bits (6.21 nats) for 0.5.

    Returns
    -------
    float
        alpha in bits; negative when the target cannot be certified by Fano's bound.
    """
    beta = float(bayes_error)
    if not (0.0 <= beta < 1.0):
        raise ValueError(f"bayes_error must be in [0, 1) (got {bayes_error!r})")
    return (1.0 - beta) * prior_bits(n, max_prior) - 1.0


# ------------------------------------------------------------------ l2 loss
def l2_loss_rr(epsilon: float, domain_size: int, n: int, p=0.0):
    """Expected l2 loss of the RR empirical estimate (eq. 19) for one symbol, Prop. 4.6 (eq. 22).

    ``E[(p(x) - p_hat(x))^2] = (|X| + e^eps - 2)/(n (e^eps - 1)^2) + p(x)(|X| - 2)/(n (e^eps - 1))``.

    Parameters
    ----------
    epsilon : float
    domain_size : int
    n : int
    p : float or ndarray
        True frequency ``p(x)`` (any shape).

    Returns
    -------
    float or ndarray
        Squared frequency (same shape as ``p``).
    """
    epsilon = check_epsilon(epsilon, allow_infinite=True)
    k = _check_int("domain_size", domain_size, 2)
    n = _check_int("n", n, 1)
    inv = _inv_expm1(epsilon)  # 1/(e^eps - 1): overflow-free for every epsilon
    return (inv + (k - 1.0) * inv * inv) / n + p * (k - 2.0) * inv / n


def l2_loss_glh(epsilon: float, g: int, n: int, p=0.0):
    """Expected l2 loss of the GLH empirical estimate (eq. 20) for one symbol, Prop. 4.7 (eq. 23).

    ``(g + e^eps - 1)^2/(n (e^eps-1)^2 (g-1)) + p(x)(g^2 - 2g - e^eps + 1)/(n (e^eps-1)(g-1))``
    (assumes a universal family with collision probability exactly ``1/g``).

    Returns
    -------
    float or ndarray
        Squared frequency.
    """
    epsilon = check_epsilon(epsilon, allow_infinite=True)
    g = _check_int("g", g, 2)
    n = _check_int("n", n, 1)
    inv = _inv_expm1(epsilon)  # 1/(e^eps - 1); (e - 1)/(e^eps - 1) = 1 in the p term
    return (1.0 + g * inv) ** 2 / (n * (g - 1.0)) + p * ((g * g - 2.0 * g) * inv - 1.0) / (n * (g - 1.0))


def l2_loss_glh_limit(theta: float, n: int, p=0.0):
    """Limit of the GLH l2 loss as ``g -> inf`` at fixed ``theta_GLH``, Thm. 4.8 (eq. 24): ``p (1-theta)/(n theta)``."""
    theta = float(theta)
    if not (0.0 < theta <= 1.0):
        raise ValueError(f"theta must be in (0, 1] (got {theta!r})")
    return p * (1.0 - theta) / (_check_int("n", n, 1) * theta)


def total_l2_loss_rr(epsilon: float, domain_size: int, n: int) -> float:
    """``sum_x E[(p(x) - p_hat(x))^2]`` for the RR: eq. 22 summed with ``sum_x p(x) = 1``.

    Exact for every input distribution (eq. 22 is affine in ``p(x)``).
    """
    k = _check_int("domain_size", domain_size, 2)
    return k * l2_loss_rr(epsilon, k, n, 0.0) + (l2_loss_rr(epsilon, k, n, 1.0) - l2_loss_rr(epsilon, k, n, 0.0))


def total_l2_loss_glh(epsilon: float, g: int, n: int, domain_size: int) -> float:
    """``sum_x E[(p(x) - p_hat(x))^2]`` for the GLH: eq. 23 summed over ``|X|`` symbols with ``sum p = 1``."""
    k = _check_int("domain_size", domain_size, 2)
    a0 = l2_loss_glh(epsilon, g, n, 0.0)
    return k * a0 + (l2_loss_glh(epsilon, g, n, 1.0) - a0)

"""Records: several categorical attributes per user under one budget (issue 30, the solver layer).

Three schemes spend one budget ``epsilon`` on a record of ``d`` attributes with domain sizes ``k_j``
and weights ``w_j``; each minimises (or is evaluated on) the weighted sum of per-attribute
variances ``sum_j w_j n Var(f_hat_j)`` (per user, at a true frequency ``f_j``; ``f = 0`` is the
usual approximate variance of Wang et al. 2017):

* **SPL**: every attribute reported at ``epsilon_j`` with ``sum_j epsilon_j = epsilon`` (sequential
  composition); the optimal split is the water-filling of :mod:`solvers._records_waterfill` with a
  Lagrangian dual certificate, over every useful GRR/OUE choice per attribute;
* **SMP**: a user reports attribute ``j`` with probability ``pi_j`` at the whole ``epsilon``; the
  aggregator divides by the number ``m_j`` of users who reported ``j``. Given ``m_j = m`` of ``n``
  (a simple random sample) the estimate's variance is
  ``(1/m) [V_j(epsilon) + f (1 - f) (n - m)/(n - 1)]`` (oracle noise plus the finite-population
  sampling term), so for large ``n`` (``m / n -> pi_j``)::

      n Var(f_hat_j) = (V_j(epsilon) + f_j (1 - f_j)) / pi_j - f_j (1 - f_j);

  ``sum_j A_j / pi_j`` with ``A_j = w_j (V_j + f_j (1 - f_j))`` is minimised over the simplex by
  ``pi_j = sqrt(A_j) / sum_i sqrt(A_i)`` with value ``(sum_j sqrt(A_j))^2``, which is also the dual
  bound (Cauchy-Schwarz), so the certificate is exact;
* **RS+FD** (Arcolezi et al., CIKM 2021): one attribute sampled uniformly at ``epsilon'``, fake data
  on the others; its per-attribute variances are the paper's. Its privacy is only ``epsilon'`` for
  the whole record (:mod:`solvers._records_rsfd`), so it is evaluated at :func:`rsfd_epsilon_for`.

References
----------
.. [1] T. Wang, J. Blocki, N. Li, S. Jha, "Locally Differentially Private Protocols for Frequency
   Estimation", USENIX Security 2017, Sec. 4 (GRR, OUE, OLH; the variances, Eq. (2) and Thm. 2).
.. [2] H. H. Arcolezi, J.-F. Couchot, B. Al Bouna, X. Xiao, "Random Sampling Plus Fake Data:
   Multidimensional Frequency Estimates With Local Differential Privacy", CIKM 2021, Sec. 2.3
   (SPL, SMP) and Sec. 3 (RS+FD[GRR], RS+FD[OUE-z], RS+FD[OUE-r] and their variances).
.. [3] N. Wang et al., "Collecting and Analyzing Multidimensional Data with Local Differential
   Privacy", ICDE 2019, Sec. IV (sampling one attribute at the whole budget).
"""
from __future__ import annotations

import functools
import itertools
import math
from typing import Sequence

import numpy as np

from ..mechanisms._intervals import affine_variance
from ._checks import check_epsilon
from ._records_rsfd import (RSFD_PROTOCOLS, RecordPrivacy, paper_amplified_epsilon, rsfd_privacy_brute_force,
                            rsfd_record_privacy)
from ._records_results import ORACLES, RecordAttributes, RSFDAllocation, SamplingAllocation, SplitAllocation
from ._records_waterfill import sampling_optimum, water_fill
from ._result import Certificate

__all__ = ["ORACLES", "RSFD_PROTOCOLS", "RecordAttributes", "SplitAllocation", "SamplingAllocation", "RSFDAllocation",
           "RecordPrivacy", "frequency_oracle_variance", "rsfd_variance", "spl_optimal", "spl_uniform", "smp_optimal",
           "smp_uniform", "rsfd_allocation", "rsfd_epsilon_for", "rsfd_record_privacy", "rsfd_privacy_brute_force",
           "paper_amplified_epsilon"]

def _probabilities(protocol: str, epsilon: float, domain_size: int, hash_range: int | None = None) -> tuple[float, float]:
    """``(mu, nu)``: the probability a holder's / a non-holder's report supports the item."""
    x = math.exp(epsilon)
    if protocol == "grr":
        return x / (x + domain_size - 1), 1.0 / (x + domain_size - 1)
    if protocol == "oue":
        return 0.5, 1.0 / (x + 1.0)
    if protocol == "olh":
        g = hash_range if hash_range is not None else int(round(x)) + 1
        return x / (x + g - 1), 1.0 / g
    raise ValueError(f"protocol: must be one of 'grr', 'oue', 'olh' (got {protocol!r})")


def frequency_oracle_variance(protocol: str, epsilon: float, domain_size: int, frequency: float = 0.0,
                              hash_range: int | None = None) -> float:
    """``n Var(f_hat)`` of one frequency oracle: ``c0 + c1 f`` (per user).

    Parameters
    ----------
    protocol : {"grr", "oue", "olh"}
    epsilon : float, > 0 (nats)
    domain_size : int, >= 2
    frequency : float in [0, 1]
        The item's true frequency ``f``.
    hash_range : int, optional
        OLH's ``g`` (default ``round(e^epsilon) + 1``, Wang et al. 2017 Sec. 4.4).

    Returns
    -------
    float
        Frequency^2 times users; e.g. GRR at ``f = 0``: ``(e^epsilon + k - 2)/(e^epsilon - 1)^2``.

    Raises
    ------
    ValueError
        On an unknown protocol or a bad ``epsilon``.

    References
    ----------
    .. [1] Wang et al., USENIX Security 2017, Eq. (2) and Sec. 4 (GRR, OUE, OLH).
    """
    epsilon = check_epsilon(epsilon)
    mu, nu = _probabilities(protocol, epsilon, domain_size, hash_range)
    c0, c1 = affine_variance(nu, mu)  # the runtime's one copy of the linear estimator's variance
    return float(c0 + c1 * frequency)


def _coefficients(protocol: str, domain_size: int, frequency: float) -> tuple[float, float, float]:
    """``(a, b, c)`` of ``V = a t + b t^2 + c``, ``t = 1/(e^epsilon - 1)`` (module ``_records_waterfill``)."""
    if protocol == "grr":
        return 1.0 + (domain_size - 2) * frequency, float(domain_size - 1), 0.0
    return 4.0, 4.0, frequency


def _variance(protocol: str, epsilon: float, domain_size: int, frequency: float) -> float:
    a, b, c = _coefficients(protocol, domain_size, frequency)
    t = 1.0 / math.expm1(epsilon)
    return (a + b * t) * t + c


def _best_protocol(epsilon: float, domain_size: int, frequency: float) -> str:
    return min(ORACLES, key=lambda p: _variance(p, epsilon, domain_size, frequency))


def _useful_protocols(epsilon: float, domain_size: int, frequency: float) -> tuple[str, ...]:
    """The oracles that are best at some ``epsilon_j`` in ``(0, epsilon]`` (exact: a quadratic in ``t``)."""
    a_g, b_g, c_g = _coefficients("grr", domain_size, frequency)
    a_o, b_o, c_o = _coefficients("oue", domain_size, frequency)
    alpha, beta, gamma = b_g - b_o, a_g - a_o, c_g - c_o  # V_grr - V_oue = alpha t^2 + beta t + gamma
    t_min = 1.0 / math.expm1(epsilon)
    points = [t_min] + ([-beta / (2 * alpha)] if alpha != 0 and -beta / (2 * alpha) > t_min else [])
    values = [(alpha * t + beta) * t + gamma for t in points]
    if alpha != 0:
        values.append(math.copysign(math.inf, alpha))
    else:
        values.append(math.copysign(math.inf, beta) if beta != 0 else gamma)
    useful = tuple(p for p, ok in (("grr", min(values) < 0), ("oue", max(values) > 0)) if ok)
    return useful or ("grr",)


def spl_optimal(epsilon: float, attributes: RecordAttributes, protocols: Sequence[str] | None = None) -> SplitAllocation:
    """The certified optimal budget split (SPL) of a record.

    Minimises ``sum_j w_j V_j(epsilon_j)`` s.t. ``sum_j epsilon_j = epsilon``, ``epsilon_j > 0``
    by water-filling on the KKT multiplier, for every assignment of GRR/OUE to the attributes that
    could be optimal (``protocols=None``; an oracle never best on ``(0, epsilon]`` is dropped), or
    for the given ``protocols``. The certificate's lower bound is the smallest Lagrangian dual bound
    over the assignments tried, its upper bound the returned value.

    Parameters
    ----------
    epsilon : float, > 0 (nats)
    attributes : RecordAttributes
    protocols : sequence of str, optional
        One of :data:`ORACLES` per attribute (fixes the choice).

    Returns
    -------
    SplitAllocation

    Raises
    ------
    ValueError
        On a bad ``epsilon`` or protocol list.

    References
    ----------
    .. [1] Boyd & Vandenberghe, Convex Optimization, Sec. 5.5.3 (KKT) and Example 5.2 (water-filling).
    .. [2] Arcolezi et al., CIKM 2021, Sec. 2.3 (SPL with ``epsilon / d`` each, the baseline).
    """
    epsilon = check_epsilon(epsilon)
    if protocols is not None:
        if len(protocols) != len(attributes.domain_sizes) or any(p not in ORACLES for p in protocols):
            raise ValueError(f"protocols: must be one of {ORACLES} per attribute (got {protocols!r})")
        protocols = tuple(protocols)
    return _spl_optimal(epsilon, attributes, protocols)


@functools.lru_cache(maxsize=512)
def _spl_optimal(epsilon: float, attributes: RecordAttributes, protocols: tuple[str, ...] | None) -> SplitAllocation:
    """:func:`spl_optimal` on checked arguments; a pure function of them, so its frozen results are cached
    (a verify re-derives the split of the plan's spec: tampered copies of one plan share it; bounded)."""
    k, w, f = attributes.domain_sizes, np.array(attributes.weights), attributes.frequencies
    if protocols is not None:
        choices: Sequence[tuple[str, ...]] = [protocols]
    else:
        choices = list(itertools.product(*(_useful_protocols(epsilon, kj, fj) for kj, fj in zip(k, f))))
    best, best_choice, lower = None, None, math.inf
    for choice in choices:
        a, b, c = (np.array(column) for column in zip(*(_coefficients(p, kj, fj) for p, kj, fj in zip(choice, k, f))))
        solution = water_fill(epsilon, w, a, b, c)
        lower = min(lower, solution.lower_bound)
        if best is None or solution.objective < best.objective:
            best, best_choice = solution, choice
    assert best is not None and best_choice is not None
    variances = tuple(_variance(p, float(e), kj, fj) for p, e, kj, fj in zip(best_choice, best.epsilons, k, f))
    certificate = Certificate("Lagrangian dual bound (water-filling, min over protocol choices)", lower,
                              best.objective, {"multiplier": best.multiplier, "assignments": len(choices)})
    return SplitAllocation("spl", tuple(float(e) for e in best.epsilons), best_choice, variances, best.objective,
                           certificate)


def spl_uniform(epsilon: float, attributes: RecordAttributes) -> SplitAllocation:
    """The SPL baseline: ``epsilon / d`` per attribute, the better of GRR/OUE for each.

    Returns
    -------
    SplitAllocation
        ``certificate`` holds the value itself as both bounds (no optimisation claimed).

    References
    ----------
    .. [1] Arcolezi et al., CIKM 2021, Sec. 2.3 (SPL).
    """
    epsilon = check_epsilon(epsilon)
    d = len(attributes.domain_sizes)
    share = epsilon / d
    protocols = tuple(_best_protocol(share, kj, fj) for kj, fj in zip(attributes.domain_sizes, attributes.frequencies))
    variances = tuple(_variance(p, share, kj, fj)
                      for p, kj, fj in zip(protocols, attributes.domain_sizes, attributes.frequencies))
    total = float(np.dot(attributes.weights, variances))
    return SplitAllocation("spl-uniform", (share,) * d, protocols, variances, total,
                           Certificate("baseline (not optimised)", total, total))


def _sampling(scheme: str, epsilon: float, attributes: RecordAttributes, probabilities: np.ndarray | None,
              protocols: Sequence[str | None] | None = None) -> SamplingAllocation:
    epsilon = check_epsilon(epsilon)
    k, f = attributes.domain_sizes, np.array(attributes.frequencies)
    w = np.array(attributes.weights)
    fixed = list(protocols) if protocols is not None else [None] * len(k)
    if len(fixed) != len(k) or any(p is not None and p not in ORACLES for p in fixed):
        raise ValueError(f"protocols: must be one of {ORACLES} or None per attribute (got {protocols!r})")
    protocols = tuple(p if p is not None else _best_protocol(epsilon, kj, fj) for p, kj, fj in zip(fixed, k, f))
    single = np.array([_variance(p, epsilon, kj, fj) for p, kj, fj in zip(protocols, k, f)])
    best = sampling_optimum(w, single, f * (1.0 - f), probabilities)
    certificate = Certificate("Cauchy-Schwarz (exact dual bound)", best.lower_bound, best.value)
    return SamplingAllocation(scheme, tuple(float(x) for x in best.probabilities), protocols,
                              tuple(float(v) for v in best.variances), best.value, certificate)


def smp_optimal(epsilon: float, attributes: RecordAttributes,
                protocols: Sequence[str | None] | None = None) -> SamplingAllocation:
    """SMP with the optimal sampling probabilities ``pi_j = sqrt(A_j) / sum_i sqrt(A_i)``.

    ``A_j = w_j (V_j(epsilon) + f_j (1 - f_j))`` (module docstring); the value
    ``(sum_j sqrt(A_j))^2 - sum_j w_j f_j (1 - f_j)`` is the optimum (Cauchy-Schwarz), so the
    certificate's gap is rounding only.

    Parameters
    ----------
    epsilon : float, > 0 (nats)
        The whole budget, spent on the one sampled attribute.
    attributes : RecordAttributes
    protocols : sequence of str or None, optional
        Fixes an attribute's oracle (one of :data:`ORACLES`); None (default): the better at ``epsilon``.

    Returns
    -------
    SamplingAllocation

    Raises
    ------
    ValueError
        On a bad ``epsilon``.

    References
    ----------
    .. [1] Arcolezi et al., CIKM 2021, Sec. 2.3 (SMP with ``pi_j = 1/d``); N. Wang et al., ICDE 2019.
    """
    return _sampling("smp", epsilon, attributes, None, protocols)


def smp_uniform(epsilon: float, attributes: RecordAttributes,
                protocols: Sequence[str | None] | None = None) -> SamplingAllocation:
    """The SMP baseline: ``pi_j = 1/d`` (Arcolezi et al., CIKM 2021, Sec. 2.3); ``protocols`` as :func:`smp_optimal`.

    Returns
    -------
    SamplingAllocation
        ``certificate.lower_bound`` is the optimal SMP value (a bound, not this allocation's value).
    """
    d = len(attributes.domain_sizes)
    return _sampling("smp-uniform", epsilon, attributes, np.full(d, 1.0 / d), protocols)


def rsfd_variance(protocol: str, amplified_epsilon: float, domain_size: int, attributes: int,
                  frequency: float = 0.0) -> float:
    """``n Var(f_hat)`` of one attribute under RS+FD: ``d^2 sigma (1 - sigma) / (p - q)^2``.

    ``sigma`` is the probability that a report supports the item: GRR
    ``(q + f (p - q) + (d - 1)/k)/d``; OUE-z ``(d q + f (p - q))/d``; OUE-r
    ``(q + f (p - q) + (d - 1)(p/k + (k - 1) q/k))/d``, with the oracle's ``p, q`` at ``epsilon'``.

    Parameters
    ----------
    protocol : {"grr", "oue-z", "oue-r"}
    amplified_epsilon : float, > 0 (nats)
    domain_size : int, >= 2
    attributes : int, >= 1 (``d``)
    frequency : float in [0, 1]

    Returns
    -------
    float
        The paper's variance: users' values drawn i.i.d. with frequency ``f``. For fixed data (a
        fraction ``f`` of the users hold the item, as SPL's and SMP's variances here) it is
        ``f (1 - f)`` less: ``sigma_1 - sigma_0 = (p - q)/d`` between holders and non-holders, and
        ``f s1 (1 - s1) + (1 - f) s0 (1 - s0) = sigma (1 - sigma) - f (1 - f) (s1 - s0)^2``.

    Raises
    ------
    ValueError
        On an unknown protocol.

    References
    ----------
    .. [1] Arcolezi et al., CIKM 2021, Sec. 3 (the variance of each RS+FD estimator).
    """
    if protocol not in RSFD_PROTOCOLS:
        raise ValueError(f"protocol: must be one of {RSFD_PROTOCOLS} (got {protocol!r})")
    p, q = _probabilities("grr" if protocol == "grr" else "oue", check_epsilon(amplified_epsilon), domain_size)
    d, k = attributes, domain_size
    if protocol == "grr":
        sigma = (q + frequency * (p - q) + (d - 1) / k) / d
    elif protocol == "oue-z":
        sigma = (d * q + frequency * (p - q)) / d
    else:
        sigma = (q + frequency * (p - q) + (d - 1) * (p / k + (k - 1) * q / k)) / d
    return d * d * sigma * (1 - sigma) / (p - q) ** 2


def rsfd_epsilon_for(target_epsilon: float, domain_sizes: Sequence[int],
                     protocols: str | Sequence[str] = "grr") -> float:
    """The largest ``epsilon'`` at which an RS+FD record is provably ``target_epsilon``-LDP.

    Two records differing in every attribute have likelihood ratio exactly ``e^{epsilon'}`` on the
    report equal to the first (any protocol, any domain sizes; :mod:`solvers._records_rsfd`), and no
    pair exceeds it, so the whole record is exactly ``epsilon'``-LDP: ``epsilon' = target_epsilon``.
    The paper's amplification ``ln(d (e^epsilon - 1) + 1)`` does not hold for the record.

    Parameters
    ----------
    target_epsilon : float, > 0 (nats)
    domain_sizes : sequence of int
    protocols : str or sequence of str, in :data:`RSFD_PROTOCOLS`

    Returns
    -------
    float
        ``epsilon'`` (nats), checked against :func:`rsfd_record_privacy`.

    Raises
    ------
    ValueError
        On a bad budget, domain or protocol.
    """
    target = check_epsilon(target_epsilon, name="target_epsilon")
    amplified = target
    while rsfd_record_privacy(amplified, domain_sizes, protocols).whole_record_epsilon > target:
        amplified = math.nextafter(amplified, 0.0)
    return amplified


def rsfd_allocation(epsilon: float, attributes: RecordAttributes) -> RSFDAllocation:
    """RS+FD at the budget the whole record provably gets (:func:`rsfd_epsilon_for`), best protocol each.

    Returns
    -------
    RSFDAllocation

    References
    ----------
    .. [1] Arcolezi et al., CIKM 2021, Sec. 3 (RS+FD and its adaptive per-attribute choice).
    """
    epsilon = check_epsilon(epsilon)
    k, d = attributes.domain_sizes, len(attributes.domain_sizes)
    amplified = rsfd_epsilon_for(epsilon, k, "grr")
    protocols = tuple(min(RSFD_PROTOCOLS, key=lambda p: rsfd_variance(p, amplified, kj, d, fj))
                      for kj, fj in zip(k, attributes.frequencies))
    variances = tuple(rsfd_variance(p, amplified, kj, d, fj) - fj * (1 - fj)  # fixed data, as SPL and SMP
                      for p, kj, fj in zip(protocols, k, attributes.frequencies))
    privacy = rsfd_record_privacy(amplified, k, protocols)
    return RSFDAllocation(amplified, paper_amplified_epsilon(epsilon, d), protocols, variances,
                          float(np.dot(attributes.weights, variances)), privacy)


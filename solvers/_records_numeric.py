"""Records with numeric attributes: SMP (one sampled attribute at the whole budget) over a mixed record.

A numeric attribute holds a value in ``[low, high]`` and is reported through the ``numeric``
family's exact channel (:func:`._numeric_plan.planned_channel`: Duchi, Piecewise or Hybrid on a
finite input grid, integer numerators over ``2^48``). Its error is the variance of its **mean**,
stated on the ``[-1, 1]`` scale of the channel, ``u = 2 (x - low)/(high - low) - 1``; the user-unit
variance is ``((high - low)/2)^2`` times it. The scale is a choice (written down here and in
``docs/families/records.md``): a weight ``w_j`` compares a frequency's variance (squared
frequency, per item at ``f = 0``) with the variance of a mean on ``[-1, 1]``, both of order one per
user, so equal weights are a sensible start; a user-unit objective would make a delay in minutes
outweigh every frequency by ``(high - low)^2/4``.

SMP's estimate of attribute ``j``'s mean averages the ``m_j`` reports of the users who sampled
``j``. Given ``m_j = m`` of ``n`` (a simple random sample), its variance is
``(1/m) [E V(u) + S (n - m)/(n - 1)]``, ``V(u)`` the report's variance at ``u`` (randomized
rounding included) and ``S`` the population variance of ``u``; with ``m/n -> pi_j``::

    n Var(mean_j) = (V_j + S_j)/pi_j - S_j.

``S_j`` plays the role of the categorical ``f (1 - f)``. The planner takes the worst case of both
terms (each is attained by some data, not necessarily the same data, so their sum is an upper
bound): ``V_j = max_u V(u)`` of the plan's exact channel (:func:`._numeric_plan.mixture_worst_variance`)
and ``S_j = 1`` (half the users at each end of ``[-1, 1]``). Then ``A_j = w_j (V_j + S_j)`` for a
numeric attribute and ``A_j = w_j (V_j(epsilon) + f_j (1 - f_j))`` for a categorical one, and the
optimal ``pi_j = sqrt(A_j)/sum_i sqrt(A_i)`` (Cauchy-Schwarz: the certificate is exact).

The record's epsilon under SMP is the largest attribute's (the attribute is sampled independently
of the data and reported with its index): for a numeric attribute its channel's exact epsilon
(:func:`._numeric_channel.exact_epsilon`).

SPL with numeric attributes (:func:`spl_mixed_optimal`, the solver only: no plan or runtime yet)
splits the budget by the water-filling of :mod:`._records_waterfill`, whose variance form
``a t + b t^2 + c``, ``t = 1/(e^{s epsilon} - 1)``, holds the worst cases of Duchi
(``C_D^2 = (1 + 2t)^2``: ``(4, 4, 1)``, ``s = 1``) and of the Piecewise Mechanism (at ``|x| = 1``:
``(4/3)(u + u^2)``, ``u = 1/(e^{epsilon/2} - 1)``: ``(4/3, 4/3, 0)``, ``s = 1/2``), closed forms of
the continuous mechanisms (Wang et al. 2019, Lemma 1; the exact channels are within 2% of them).
Hybrid's worst case is not of that form (its weight ``alpha`` moves with ``epsilon``), so SPL offers
Duchi and PM. The record's epsilon under SPL is the sum of the attributes' (sequential composition).
RS+FD refuses numeric attributes: Arcolezi et al. define fake data for categorical values only.

References
----------
.. [1] N. Wang, X. Xiao, Y. Yang, J. Zhao, S. C. Hui, H. Shin, J. Shin, G. Yu, "Collecting and
   Analyzing Multidimensional Data with Local Differential Privacy", ICDE 2019, Sec. III (PM, HM)
   and Sec. IV (sampling attributes; here one attribute per user at the whole budget).
.. [2] H. H. Arcolezi, J.-F. Couchot, B. Al Bouna, X. Xiao, CIKM 2021, Sec. 2.3 (SMP).
.. [3] J. C. Duchi, M. I. Jordan, M. J. Wainwright, JASA 2018, Sec. 4.2.3.
"""
from __future__ import annotations

import dataclasses
import itertools
import math
from typing import Sequence

import numpy as np

from ._checks import check_epsilon
from ._records_waterfill import sampling_optimum, water_fill
from ._numeric_plan import PLAN_MECHANISMS, PlannedChannel, mixture_worst_variance, planned_channel
from ._result import Certificate
from .numeric import best_mean_mechanism  # the numeric family's choice, one copy
from .records import _coefficients, frequency_oracle_variance  # the frequency oracles' forms, one copy

__all__ = ["MEAN_MECHANISMS", "SPREAD", "SPL_FORMS", "NumericReport", "MixedSampling", "MixedSplit",
           "KOfD", "numeric_report", "smp_mixed_optimal", "smp_mixed_uniform", "spl_mixed_optimal", "wang_k",
           "k_of_d"]

#: the worst population variance of a value on ``[-1, 1]`` (half the users at each end)
SPREAD = 1.0
#: the plan mechanisms that estimate a mean (the numeric family's, Square Wave aside: it is for distributions)
MEAN_MECHANISMS = PLAN_MECHANISMS[:3]
#: SPL's numeric forms: mechanism -> (a, b, c, s) of the worst-case variance ``a t + b t^2 + c``,
#: ``t = 1/(e^{s epsilon} - 1)`` (module docstring): Duchi and the Piecewise Mechanism
SPL_FORMS = {PLAN_MECHANISMS[0]: (4.0, 4.0, 1.0, 1.0), PLAN_MECHANISMS[1]: (4.0 / 3.0, 4.0 / 3.0, 0.0, 0.5)}


@dataclasses.dataclass(frozen=True)
class NumericReport:
    """A numeric attribute's channel at one budget and its exact figures.

    Attributes
    ----------
    mechanism : str
        The plan mechanism (``duchi``, ``piecewise``, ``hybrid``).
    channel : PlannedChannel
        The exact channel (numerators over ``2^48``).
    worst_variance : float
        ``max_u V(u)`` of one report on the ``[-1, 1]`` scale (randomized rounding included).
    epsilon_upper : float
        The channel's exact epsilon, rounded up (nats).
    """

    mechanism: str
    channel: PlannedChannel
    worst_variance: float
    epsilon_upper: float


def numeric_report(mechanism: str | None, epsilon: float) -> NumericReport:
    """The exact channel of a numeric attribute at ``epsilon``.

    Parameters
    ----------
    mechanism : str or None
        One of :data:`MEAN_MECHANISMS`; None: the numeric family's choice at ``epsilon``
        (:func:`solvers.numeric.best_mean_mechanism`: Duchi below ``eps*``, Hybrid above).
    epsilon : float
        Nats.

    Raises
    ------
    ValueError
        A bad ``epsilon`` or mechanism, or an exact epsilon above ``epsilon``.

    References
    ----------
    Wang et al., ICDE 2019, Sec. III-C (the choice of HM above ``eps*``, Duchi below).
    """
    epsilon = check_epsilon(epsilon)
    if mechanism is not None and mechanism not in MEAN_MECHANISMS:
        raise ValueError(f"mechanism: must be one of {list(MEAN_MECHANISMS)} (got {mechanism!r})")
    name = best_mean_mechanism(epsilon).mechanism if mechanism is None else mechanism
    channel = planned_channel(name, epsilon)
    exact = channel.exact()
    if not exact.holds:
        raise ValueError(f"epsilon: the {name} channel's exact epsilon {exact.epsilon_upper!r} exceeds {epsilon!r}")
    return NumericReport(name, channel, mixture_worst_variance(channel), float(exact.epsilon_upper))


@dataclasses.dataclass(frozen=True)
class MixedSampling:
    """SMP over a record of categorical and numeric attributes (see the module docstring).

    Attributes
    ----------
    scheme : str
        ``"smp"`` or ``"smp-uniform"``.
    kinds : tuple of str
        ``"frequency"`` (categorical) or ``"mean"`` (numeric) per attribute, in the record's order.
    probabilities : tuple of float
        ``pi_j`` (summing to 1).
    noise : tuple of float
        ``V_j`` of one report: a frequency oracle's ``n Var`` per item, or a numeric channel's worst
        report variance (``[-1, 1]`` scale).
    spread : tuple of float
        ``f_j (1 - f_j)`` or :data:`SPREAD`.
    variances : tuple of float
        ``n Var_j = (V_j + S_j)/pi_j - S_j``.
    weighted_variance : float
    certificate : Certificate
        Cauchy-Schwarz: ``(sum sqrt(A_j))^2 - sum w_j S_j`` is the optimum.
    """

    scheme: str
    kinds: tuple[str, ...]
    probabilities: tuple[float, ...]
    noise: tuple[float, ...]
    spread: tuple[float, ...]
    variances: tuple[float, ...]
    weighted_variance: float
    certificate: Certificate


def _mixed(scheme: str, weights: Sequence[float], noise: Sequence[float], spread: Sequence[float],
           kinds: Sequence[str], probabilities: np.ndarray | None) -> MixedSampling:
    w, v, s = (np.asarray(x, dtype=np.float64) for x in (weights, noise, spread))
    if not (w.shape == v.shape == s.shape == (len(kinds),)) or not np.all(w > 0) or not np.all(v > 0):
        raise ValueError("weights, noise, spread: one each per attribute, weights and noise > 0")
    best = sampling_optimum(w, v, s, probabilities)
    return MixedSampling(scheme, tuple(kinds), tuple(float(x) for x in best.probabilities), tuple(float(x) for x in v),
                         tuple(float(x) for x in s), tuple(float(x) for x in best.variances), best.value,
                         Certificate("Cauchy-Schwarz (exact dual bound)", best.lower_bound, best.value))


def smp_mixed_optimal(weights: Sequence[float], noise: Sequence[float], spread: Sequence[float],
                      kinds: Sequence[str]) -> MixedSampling:
    """The optimal sampling probabilities of SMP over a mixed record.

    Parameters
    ----------
    weights : sequence of float, each > 0
    noise : sequence of float, each > 0
        ``V_j`` per attribute: a frequency oracle's ``n Var`` (per item) at the whole budget, or a
        numeric attribute's :attr:`NumericReport.worst_variance`.
    spread : sequence of float, each >= 0
        ``f_j (1 - f_j)`` (categorical) or :data:`SPREAD` (numeric, the worst case on ``[-1, 1]``).
    kinds : sequence of {"frequency", "mean"}

    Returns
    -------
    MixedSampling
        ``pi_j = sqrt(A_j)/sum_i sqrt(A_i)``, ``A_j = w_j (V_j + S_j)``; the value
        ``(sum_j sqrt(A_j))^2 - sum_j w_j S_j`` is the optimum (Cauchy-Schwarz).

    Raises
    ------
    ValueError
        Lengths that differ, a weight or noise that is not positive.

    References
    ----------
    .. [1] Arcolezi et al., CIKM 2021, Sec. 2.3 (SMP, uniform ``pi``); Wang et al., ICDE 2019, Sec. IV.
    """
    return _mixed("smp", weights, noise, spread, kinds, None)


def smp_mixed_uniform(weights: Sequence[float], noise: Sequence[float], spread: Sequence[float],
                      kinds: Sequence[str]) -> MixedSampling:
    """The published baseline ``pi_j = 1/d`` over a mixed record (arguments as :func:`smp_mixed_optimal`).

    References
    ----------
    Arcolezi et al., CIKM 2021, Sec. 2.3 (SMP).
    """
    return _mixed("smp-uniform", weights, noise, spread, kinds, np.full(len(kinds), 1.0 / len(kinds)))


@dataclasses.dataclass(frozen=True)
class MixedSplit:
    """SPL over a mixed record: attribute ``j`` reported through ``mechanisms[j]`` at ``epsilons[j]``.

    Attributes
    ----------
    epsilons : tuple of float
        Nats, summing to at most the budget.
    mechanisms : tuple of str
        ``grr`` / ``oue`` (categorical) or a key of :data:`SPL_FORMS` (numeric).
    variances : tuple of float
        ``n Var_j``: per item at ``f = 0``, or the mean's worst case on ``[-1, 1]``.
    weighted_variance : float
    certificate : Certificate
        The smallest Lagrangian dual bound over the assignments tried, and the value.
    """

    epsilons: tuple[float, ...]
    mechanisms: tuple[str, ...]
    variances: tuple[float, ...]
    weighted_variance: float
    certificate: Certificate


def spl_mixed_optimal(epsilon: float, weights: Sequence[float], domains: Sequence[int | None]) -> MixedSplit:
    """The certified optimal budget split (SPL) of a record of categorical and numeric attributes.

    Parameters
    ----------
    epsilon : float, > 0 (nats)
    weights : sequence of float, each > 0
    domains : sequence of (int or None)
        ``k_j`` of a categorical attribute, None for a numeric one.

    Returns
    -------
    MixedSplit
        The best over every assignment of GRR/OUE (categorical) and Duchi/PM (numeric) of the
        water-filling optimum; the certificate's lower bound is the smallest dual bound.

    Raises
    ------
    ValueError
        A bad budget or weight, or more than 12 attributes (``2^d`` assignments).

    References
    ----------
    .. [1] Boyd & Vandenberghe, Convex Optimization, Sec. 5.5.3 (KKT), Example 5.2 (water-filling).
    .. [2] Wang et al., ICDE 2019, Lemma 1 (PM's variance); Duchi et al., JASA 2018, Sec. 4.2.3.
    """
    epsilon = check_epsilon(epsilon)
    w = np.asarray(weights, dtype=np.float64)
    if len(domains) != w.size or not 1 <= w.size <= 12 or not np.all(w > 0):
        raise ValueError(f"weights, domains: 1 .. 12 attributes, one positive weight each (got {len(domains)})")
    options = [tuple((name, (*_coefficients(name, k, 0.0), 1.0)) for name in ("grr", "oue")) if k is not None
               else tuple(SPL_FORMS.items()) for k in domains]
    best, lower, tried = None, math.inf, 0
    for choice in itertools.product(*options):
        a, b, c, scale = (np.array(column) for column in zip(*(form for _, form in choice)))
        solution = water_fill(epsilon, w, a, b, c, scale)
        lower, tried = min(lower, solution.lower_bound), tried + 1
        if best is None or solution.objective < best[0].objective:
            best = (solution, choice, a, b, c, scale)
    assert best is not None
    solution, choice, a, b, c, scale = best
    t = 1.0 / np.expm1(scale * solution.epsilons)
    variances = tuple(float(v) for v in (a + b * t) * t + c)
    certificate = Certificate("Lagrangian dual bound (water-filling, min over mechanism choices)", lower,
                              solution.objective, {"multiplier": solution.multiplier, "assignments": tried})
    return MixedSplit(tuple(float(e) for e in solution.epsilons), tuple(name for name, _ in choice), variances,
                      solution.objective, certificate)


def wang_k(epsilon: float, attributes: int) -> int:
    """Wang et al.'s number of attributes a user reports: ``k = max(1, min(d, floor(epsilon / 2.5)))``.

    References
    ----------
    N. Wang et al., ICDE 2019, Sec. IV (Eq. (12): each attribute at ``epsilon / k``).
    """
    epsilon = check_epsilon(epsilon)
    return max(1, min(int(attributes), int(math.floor(epsilon / 2.5))))


@dataclasses.dataclass(frozen=True)
class KOfD:
    """Wang et al.'s k-of-d sampling, evaluated (a baseline: uniform sampling of ``k`` attributes).

    Attributes
    ----------
    k : int
    mechanisms : tuple of str
        Per attribute, the better oracle (categorical) or mean mechanism (numeric) at ``epsilon / k``.
    variances : tuple of float
        ``n Var_j = (d/k) (V_j(epsilon/k) + S_j) - S_j`` (worst cases as :func:`smp_mixed_optimal`).
    weighted_variance : float
    """

    k: int
    mechanisms: tuple[str, ...]
    variances: tuple[float, ...]
    weighted_variance: float


def k_of_d(epsilon: float, weights: Sequence[float], domains: Sequence[int | None], k: int | None = None) -> KOfD:
    """Each user reports ``k`` of the ``d`` attributes, drawn uniformly, each at ``epsilon / k``.

    A user's report is ``k`` independent reports at ``epsilon / k`` (sequential composition:
    ``epsilon``); attribute ``j`` is reported by a fraction ``k/d`` of the users, so its mean (or
    frequency) has ``n Var = (d/k) (V_j + S_j) - S_j`` as SMP with ``pi_j = k/d``. Numeric ``V_j``:
    the numeric family's best closed-form worst case (Duchi / PM / HM) at ``epsilon/k``; ``S_j`` =
    :data:`SPREAD` (numeric) or 0 (categorical, per item at ``f = 0``).

    Parameters
    ----------
    epsilon : float, > 0 (nats)
    weights : sequence of float
    domains : sequence of (int or None)
        ``k_j``, None for a numeric attribute.
    k : int, optional
        Default :func:`wang_k`.

    Returns
    -------
    KOfD

    Raises
    ------
    ValueError
        A bad budget, or ``k`` outside ``[1, d]``.

    References
    ----------
    N. Wang et al., ICDE 2019, Sec. IV (Algorithm 4 and Eq. (12)).
    """

    epsilon = check_epsilon(epsilon)
    d = len(domains)
    k = wang_k(epsilon, d) if k is None else int(k)
    if not 1 <= k <= d or len(weights) != d:
        raise ValueError(f"k: must be in [1, {d}] with one weight per attribute (got k = {k})")
    share, names, variances = epsilon / k, [], []
    for size in domains:
        if size is None:
            choice = best_mean_mechanism(share)
            names.append(choice.mechanism)
            variances.append((d / k) * (choice.worst_case_variance + SPREAD) - SPREAD)
        else:
            oracle = min(("grr", "oue"), key=lambda o: frequency_oracle_variance(o, share, size))
            names.append(oracle)
            variances.append((d / k) * frequency_oracle_variance(oracle, share, size))
    return KOfD(k, tuple(names), tuple(variances), float(np.dot(weights, variances)))

"""Records under per-attribute error targets: the least record epsilon at which a scheme meets them.

Attribute ``j`` asks that the standard error of every one of its frequency estimates be at most
``s_j`` at ``n`` users, per item at ``f = 0`` (the variances of Wang et al. 2017 and of the rest of
the family); in variance per user that is ``n Var(f_hat_j) <= t_j = n s_j^2``. Per scheme, with
``V_j(epsilon)`` the better oracle's variance (GRR or OUE, or the one the spec fixes):

* **SPL**: attribute ``j`` at its own ``epsilon_j`` needs ``V_j(epsilon_j) <= t_j``; ``V`` is
  ``(a + b u) u`` in ``u = 1/(e^epsilon - 1)``, so the least ``epsilon_j`` is closed form,
  ``u_j = (sqrt(a^2 + 4 b t_j) - a)/(2 b)``, ``epsilon_j = ln(1 + 1/u_j)``, and the least record
  budget is ``sum_j epsilon_j`` (sequential composition; the attributes do not interact);
* **SMP**: some ``pi`` on the simplex with ``V_j(epsilon)/pi_j <= t_j`` exists iff
  ``g(epsilon) = sum_j V_j(epsilon)/t_j <= 1`` (then ``pi_j = (V_j/t_j)/g``), and ``g`` decreases
  in ``epsilon``: the least budget is the root of ``g = 1``, found by bisection to a relative
  ``1e-14`` and returned on the feasible side;
* **RS+FD[GRR]** at the budget it provably gives the whole record (``epsilon' = epsilon``,
  :func:`solvers.records.rsfd_epsilon_for`): each attribute's variance decreases in ``epsilon``
  towards ``d^2 s (1 - s)``, ``s = (d - 1)/(d k_j)``, so targets below that are out of reach
  (``None``); else bisection as for SMP.

References
----------
.. [1] T. Wang, J. Blocki, N. Li, S. Jha, USENIX Security 2017, Eq. (2) and Sec. 4 (GRR, OUE).
.. [2] H. H. Arcolezi, J.-F. Couchot, B. Al Bouna, X. Xiao, CIKM 2021, Sec. 2.3 (SPL, SMP), Sec. 3.1
   (RS+FD[GRR] and its variance).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Callable, Sequence

from ._records_results import ORACLES
from .records import _coefficients, _variance, rsfd_variance

__all__ = ["TargetEpsilon", "variance_targets", "spl_attribute_epsilon", "spl_least_epsilon", "smp_feasibility",
           "smp_least_epsilon", "rsfd_least_epsilon", "best_protocols", "EPSILON_CEILING"]

#: the largest record budget searched (nats; the spec's range)
EPSILON_CEILING = 100.0


@dataclasses.dataclass(frozen=True)
class TargetEpsilon:
    """The least budget of one scheme meeting every attribute's target.

    Attributes
    ----------
    scheme : str
        ``"spl"``, ``"smp"`` or ``"rsfd"``.
    epsilon : float
        The least record budget (nats; SMP, RS+FD: the feasible end of the bisection).
    epsilons : tuple of float
        SPL: each attribute's least ``epsilon_j``; else the record budget per attribute.
    protocols : tuple of str
        The oracle of each attribute.
    """

    scheme: str
    epsilon: float
    epsilons: tuple[float, ...]
    protocols: tuple[str, ...]


def variance_targets(std_errors: Sequence[float], users: int) -> tuple[float, ...]:
    """``t_j = n s_j^2``: the per-user variance targets of standard errors ``s_j`` at ``n`` users."""
    return tuple(float(users) * float(s) * float(s) for s in std_errors)


def _choices(fixed: str | None) -> tuple[str, ...]:
    return ORACLES if fixed is None else (fixed,)


def spl_attribute_epsilon(target: float, domain_size: int, protocol: str) -> float:
    """The least ``epsilon_j`` with ``V(epsilon_j) <= target`` (closed form, f = 0).

    Parameters
    ----------
    target : float, > 0
        ``n Var`` allowed (per user).
    domain_size : int, >= 2
    protocol : {"grr", "oue"}

    Returns
    -------
    float
        Nats (``inf`` never: ``V -> 0`` as ``epsilon -> inf``).

    References
    ----------
    .. [1] Wang et al., USENIX Security 2017, Eq. (2): GRR ``(e^e + k - 2)/(e^e - 1)^2``, OUE ``4 e^e/(e^e - 1)^2``.
    """
    a, b, _ = _coefficients(protocol, domain_size, 0.0)
    u = 2.0 * target / (math.sqrt(a * a + 4.0 * b * target) + a)  # the positive root of b u^2 + a u = t, stably
    return math.log1p(1.0 / u)


def spl_least_epsilon(targets: Sequence[float], domain_sizes: Sequence[int],
                      fixed: Sequence[str | None]) -> TargetEpsilon:
    """SPL's least record budget: ``sum_j`` of each attribute's least ``epsilon_j`` (better oracle each).

    References
    ----------
    .. [1] Arcolezi et al., CIKM 2021, Sec. 2.3 (SPL: sequential composition).
    """
    best = [min((spl_attribute_epsilon(t, k, p), p) for p in _choices(o)) for t, k, o in zip(targets, domain_sizes, fixed)]
    epsilons = tuple(e for e, _ in best)
    return TargetEpsilon("spl", math.fsum(epsilons), epsilons, tuple(p for _, p in best))


def best_protocols(epsilon: float, domain_sizes: Sequence[int], fixed: Sequence[str | None]) -> tuple[str, ...]:
    """Per attribute the oracle (GRR or OUE, or the fixed one) of the least variance at ``epsilon`` (f = 0)."""
    return tuple(min(_choices(o), key=lambda p: _variance(p, epsilon, k, 0.0)) for k, o in zip(domain_sizes, fixed))


def smp_feasibility(epsilon: float, targets: Sequence[float], domain_sizes: Sequence[int],
                    fixed: Sequence[str | None]) -> float:
    """``g(epsilon) = sum_j V_j(epsilon)/t_j``: SMP meets every target at ``epsilon`` iff ``g <= 1``.

    References
    ----------
    .. [1] Arcolezi et al., CIKM 2021, Sec. 2.3 (SMP); the per-attribute variance ``V_j/pi_j`` at f = 0.
    """
    protocols = best_protocols(epsilon, domain_sizes, fixed)
    return math.fsum(_variance(p, epsilon, k, 0.0) / t for p, k, t in zip(protocols, domain_sizes, targets))


def _bisect(feasible: Callable[[float], bool]) -> float | None:
    """The least ``epsilon`` in ``(0, EPSILON_CEILING]`` with ``feasible`` (monotone), feasible side; None: never."""
    if not feasible(EPSILON_CEILING):
        return None
    lo, hi = 0.0, EPSILON_CEILING
    while hi - lo > 1e-14 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if feasible(mid) else (mid, hi)
    return hi


def smp_least_epsilon(targets: Sequence[float], domain_sizes: Sequence[int],
                      fixed: Sequence[str | None]) -> TargetEpsilon | None:
    """SMP's least record budget: the root of ``g(epsilon) = 1`` (:func:`smp_feasibility`), or None above 100 nats."""
    root = _bisect(lambda e: smp_feasibility(e, targets, domain_sizes, fixed) <= 1.0)
    if root is None:
        return None
    return TargetEpsilon("smp", root, (root,) * len(targets), best_protocols(root, domain_sizes, fixed))


def rsfd_least_epsilon(targets: Sequence[float], domain_sizes: Sequence[int]) -> TargetEpsilon | None:
    """RS+FD[GRR]'s least record budget meeting every target (f = 0, fixed data), or None when out of reach.

    References
    ----------
    .. [1] Arcolezi et al., CIKM 2021, Sec. 3.1 (the variance of RS+FD[GRR]).
    """
    d = len(domain_sizes)
    root = _bisect(lambda e: all(rsfd_variance("grr", e, k, d) <= t for k, t in zip(domain_sizes, targets)))
    if root is None:
        return None
    return TargetEpsilon("rsfd", root, (root,) * d, ("grr",) * d)

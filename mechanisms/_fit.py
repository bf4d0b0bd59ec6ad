"""The one result type of the iterative and exact simplex estimators, and their one stopping rule.

Every EM / maximum-likelihood solver of the runtime (:mod:`._estimators`, :mod:`._mle`,
:mod:`._unary_em`, :mod:`._unary_mle`) maximises a mixture log-likelihood

.. math::  L(f) = \\sum_r w_r \\log \\sum_x \\mathrm{lik}[r, x] f_x

on the probability simplex and returns a :class:`SimplexFit`. The iterative ones take the
options ``tol`` and ``max_iter`` and stop by **one rule** (:func:`stop`): at the first iterate
``f`` whose certified optimality gap ``W log(max_x g_x(f) / W)`` (nats; ``g`` the gradient of
``L``, ``W = sum_r w_r``; by Jensen's inequality an upper bound on ``L(MLE) - L(f)``) is at most
``tol * |L(f)|`` -- what is provably left, relative to the log-likelihood -- else after
``max_iter`` iterations with ``converged = False``. The projected Newton solver also gives up
(``converged = False``, keeping the point with the smallest gap) when two steps in a row do not
lower the gap: float64 resolves no more progress.

Why this rule (and not the former per-solver ones: the l1 change of one EM step, the relative
log-likelihood gain). Near the maximum ``L`` is flat to second order, so a gain of ``1e-15 |L|``
still leaves the frequencies ~1e-6 off when EM contracts slowly, and float64 cannot measure
smaller gains; a small step of a slowly contracting EM says nothing about the distance left.
The certificate bounds what is left whatever the speed, and it is what ``Estimate.optimality_gap``
reports.

References
----------
Murakami & Kawamoto (USENIX Security 2019) Sec. 2.5 (EM reconstruction); Böhning,
*Computer-assisted analysis of mixtures* (1999) (the gradient bound); Varadhan & Roland,
Scand. J. Stat. 35 (2008) (SQUAREM).
"""
from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

__all__ = ["SimplexFit", "check_options", "stop", "certified_gap", "run_em", "METHODS", "TOL", "MAX_ITER"]

#: Default ``tol`` and ``max_iter`` of the EM solvers and of the ``estimate`` methods of families whose
#: estimators are all exact (they check the options and ignore them). The projected-Newton MLE of
#: the uRAP/RAPPOR (and the ULDP runtimes' ``estimate``) defaults to ``tol = 1e-15``.
TOL = 1e-12
MAX_ITER = 10000

#: ``SimplexFit.method`` values: exact closed forms ("water-filling": separable likelihoods;
#: "root": the per-bit composite likelihood's monotone root) and iterations ("em": plain EM,
#: "squarem": EM with SQUAREM extrapolation, "newton": projected Newton, "ems": EM with smoothing,
#: :mod:`._ems`, not a maximum-likelihood method).
METHODS = ("water-filling", "root", "em", "squarem", "newton", "ems")

#: An extrapolated SQUAREM point keeps at least this fraction of each coordinate of the cycle's
#: start: EM multiplies coordinates, so one that an extrapolation sets to ~0 (a plain floor such as
#: 1e-300) would need thousands of steps to come back and the rule would stop below the maximum.
_SHRINK = 1e-2


@dataclasses.dataclass(frozen=True)
class SimplexFit:
    """Outcome of every EM / maximum-likelihood solver on the probability simplex.

    Attributes
    ----------
    frequency : ndarray of float64, shape (K,)
        The estimate (read-only), non-negative, sums to 1.
    log_likelihood : float
        ``L(frequency)`` in nats, on counts (not per report), with the constants the solver
        documents (``likelihood`` says which likelihood).
    iterations : int
        Iterations run (EM-map evaluations; Newton steps); 0 for the exact closed forms.
    converged : bool
        True when the stopping rule fired (always True for the exact closed forms).
    optimality_gap : float
        Certified upper bound (nats) on ``L(MLE) - log_likelihood``: ``W log(max_x g_x / W)``;
        0.0 for the exact closed forms (their KKT conditions hold by construction).
    method : str
        One of :data:`METHODS`.
    n : float
        ``W``, the total weight of the observations (number of reports for counts).
    likelihood : str
        ``"full"`` (the true likelihood of the reports) or ``"composite"`` (the per-bit
        pseudo-likelihood of unary encodings).
    lagrange_multiplier : float or None
        Exact separable maximisers: the common value of ``dL/df_x`` on the support (nats per
        unit frequency; ``<=`` it off the support, KKT); None for the others.
    """

    frequency: np.ndarray
    log_likelihood: float
    iterations: int
    converged: bool
    optimality_gap: float
    method: str
    n: float
    likelihood: str = "full"
    lagrange_multiplier: float | None = None

    def __post_init__(self) -> None:
        f = np.array(self.frequency, dtype=np.float64)
        f.setflags(write=False)
        object.__setattr__(self, "frequency", f)
        if self.method not in METHODS:
            raise ValueError(f"method: must be one of {list(METHODS)} (got {self.method!r})")

    @property
    def support_size(self) -> int:
        """Number of strictly positive entries of ``frequency``."""
        return int(np.count_nonzero(self.frequency > 0))


def check_options(tol: float, max_iter: int) -> tuple[float, int]:
    """``(tol, max_iter)`` validated: ``tol`` a finite float >= 0, ``max_iter`` an int >= 1.

    Raises
    ------
    ValueError
        ``tol: ...`` or ``max_iter: ...`` naming the rule and the value.
    """
    if isinstance(tol, bool) or not isinstance(tol, (int, float, np.floating, np.integer)) or not 0 <= tol < np.inf:
        raise ValueError(f"tol: must be a finite number >= 0 (got {tol!r})")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"max_iter: must be an integer >= 1 (got {max_iter!r})")
    return float(tol), int(max_iter)


def certified_gap(g: np.ndarray, total: float) -> float:
    """``W log(max_x g_x / W)`` (nats, >= 0): Jensen's bound on ``L(MLE) - L(f)`` for a mixture likelihood."""
    return float(max(0.0, total * np.log(float(np.max(g)) / total)))


def stop(gap: float, log_likelihood: float, tol: float) -> bool:
    """The one stopping rule: the certified gap ``<= tol |L|`` (nats)."""
    return gap <= tol * abs(log_likelihood)


def run_em(step: Callable[[np.ndarray], tuple[float, float, np.ndarray]], p: np.ndarray, tol: float, max_iter: int,
           accelerate: bool) -> tuple[np.ndarray, float, float, int, bool]:
    """EM iterations under the one rule, SQUAREM-accelerated with a monotonicity guard.

    ``step(q)`` returns ``(L(q), certified_gap(q), EM(q))``. A SQUAREM cycle (Varadhan & Roland
    2008, scheme S3) from ``p`` evaluates ``p1 = EM(p)``, ``p2 = EM(p1)``, the extrapolation
    ``cand`` (floored at ``_SHRINK * p``) and ``EM(cand)``; the next point is ``EM(cand)`` if
    ``L(cand) >= L(p1)`` and ``p2`` otherwise, so the log-likelihood never decreases. Returns
    ``(f, L(f), gap(f), iterations, converged)`` for the last point whose likelihood was
    evaluated; ``iterations`` counts EM-map evaluations.
    """
    tol, max_iter = check_options(tol, max_iter)
    ll, gap, p1 = step(p)
    it, converged = 1, stop(gap, ll, tol)
    while not converged and it < max_iter:
        if accelerate and it + 3 <= max_iter:
            ll1, _, p2 = step(p1)
            r = p1 - p
            v = p2 - p1 - r
            nv = float(np.sqrt(v @ v))
            alpha = min(-float(np.sqrt(r @ r)) / nv, -1.0) if nv > 0 else -1.0
            cand = np.maximum(p - 2.0 * alpha * r + alpha * alpha * v, _SHRINK * p)
            llc, _, pc = step(cand / cand.sum())
            it += 2
            p1 = pc if llc >= ll1 else p2
        ll_new, gap_new, p2 = step(p1)
        it += 1
        converged = stop(gap_new, ll_new, tol)
        p, ll, gap, p1 = p1, ll_new, gap_new, p2
    return p, ll, gap, it, converged

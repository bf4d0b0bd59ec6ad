"""Server-side distribution estimators shared by the runtimes (numpy only).

Murakami & Kawamoto, "Utility-Optimized Local Differential Privacy Mechanisms for
Distribution Estimation" (USENIX Security 2019), Sec. 2.5 describes three ways to
turn obfuscated reports into an estimate of the input distribution ``p``:

* the **empirical estimation method** (eq. 3, ``m_hat = p_hat Q``), implemented in
  each runtime because it has a closed form per mechanism;
* the empirical estimate with a **significance threshold** (Bonferroni correction,
  as in Wang et al. / Kairouz et al. [23, 50]): :func:`significance_threshold`;
* the **EM reconstruction method** (iterative Bayesian technique [1, 2]), whose
  fixed point is the maximum-likelihood estimate on the probability simplex:
  :func:`em_simplex`.

Everything here works on **frequencies** (fractions of users), never counts.
"""
from __future__ import annotations

import dataclasses
from typing import Any
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from ._fit import SimplexFit, run_em

__all__ = ["em_warm_start", "RRChannel", "significance_threshold", "em_simplex", "project_simplex", "bonferroni_z"]


def bonferroni_z(alpha: float, k: int) -> float:
    """One-sided standard-normal quantile ``z = Phi^{-1}(1 - alpha / k)``.

    Parameters
    ----------
    alpha : float
        Family-wise significance level in (0, 1).
    k : int
        Number of simultaneous tests (the domain size ``|X|``).

    Returns
    -------
    float
        The Bonferroni-corrected critical value (dimensionless).

    Raises
    ------
    ValueError
        If ``alpha`` is not in (0, 1) or ``k < 1``.
    """
    alpha = float(alpha)
    if not (0.0 < alpha < 1.0):
        raise ValueError(f"alpha must be in (0, 1) (got {alpha})")
    if int(k) < 1:
        raise ValueError(f"the number of tests must be >= 1 (got {k})")
    return float(NormalDist().inv_cdf(1.0 - alpha / int(k)))


def significance_threshold(freq_hat: npt.ArrayLike, n: int, variance_per_user: npt.ArrayLike, alpha: float = 0.05
                           ) -> np.ndarray:
    """Empirical estimate with the Bonferroni significance threshold ("emp+thr").

    The threshold for each of the ``K = |X|`` estimates is
    ``T_k = Phi^{-1}(1 - alpha / K) * sqrt(variance_per_user[k] / n)`` (one-sided
    z-test of ``p(x) = 0`` with Bonferroni correction over the ``K`` tests; Murakami &
    Kawamoto 2019, Sec. 2.5, following [23, 50]). Estimates ``<= T_k`` are deemed not
    significant. As in the paper's experiments (Sec. 6.1, "in the same way as [50]"),
    the remaining probability ``1 - sum(significant estimates)`` is then assigned
    **uniformly** to the non-significant entries, so the result sums to one.

    Edge cases (where the paper is silent): if the significant estimates already sum
    to ``>= 1``, the non-significant entries are set to 0 and the significant ones are
    divided by their sum; if nothing is significant the uniform distribution is
    returned.

    Parameters
    ----------
    freq_hat : array_like of float, shape (K,)
        Empirical (unbiased) estimate of the input distribution, in frequencies.
    n : int
        Number of users (reports) behind ``freq_hat``.
    variance_per_user : float or array_like, shape (K,)
        ``n * Var(freq_hat[k])``, i.e. the variance of a single user's contribution
        to the frequency estimate (frequency^2 units). A scalar applies to all ``k``;
        use the value at ``p(x) = 0`` (the null hypothesis) or an upper bound.
    alpha : float, default 0.05
        Family-wise significance level.

    Returns
    -------
    ndarray of float, shape (K,)
        Non-negative estimate summing to 1.

    Raises
    ------
    ValueError
        If ``n < 1``, a variance is negative or not finite, shapes disagree, or
        ``alpha`` is not in (0, 1).
    """
    est = np.asarray(freq_hat, dtype=np.float64)
    if est.ndim != 1 or est.size == 0:
        raise ValueError(f"freq_hat must be a non-empty 1-D array (got shape {est.shape})")
    if int(n) < 1:
        raise ValueError(f"n must be >= 1 (got {n})")
    var = np.broadcast_to(np.asarray(variance_per_user, dtype=np.float64), est.shape)
    if not np.all(np.isfinite(var)) or np.any(var < 0):
        raise ValueError("variance_per_user must be finite and >= 0")
    k = est.size
    threshold = bonferroni_z(alpha, k) * np.sqrt(var / int(n))
    significant = est > threshold
    out = np.zeros(k)
    kept = est[significant]
    total = float(kept.sum())
    if not significant.any():
        return np.full(k, 1.0 / k)
    if total >= 1.0:
        out[significant] = kept / total
        return out
    out[significant] = kept
    rest = ~significant
    if rest.any():
        out[rest] = (1.0 - total) / int(rest.sum())
    else:
        out /= total
    return out


def project_simplex(v: npt.ArrayLike) -> np.ndarray:
    """Euclidean projection of a vector onto the probability simplex.

    Sort-based algorithm of Duchi, Shalev-Shwartz, Singer & Chandra (ICML 2008,
    Fig. 1): ``argmin_{p in C} ||p - v||_2`` with ``C = {p >= 0, sum p = 1}``.

    Parameters
    ----------
    v : array_like of float, shape (K,)

    Returns
    -------
    ndarray of float, shape (K,)
        Non-negative, sums to 1 (up to rounding).
    """
    v = np.asarray(v, dtype=np.float64)
    if v.ndim != 1 or v.size == 0:
        raise ValueError(f"v must be a non-empty 1-D array (got shape {v.shape})")
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - 1.0
    idx = np.arange(1, v.size + 1)
    rho = np.nonzero(u - css / idx > 0)[0][-1]
    tau = css[rho] / (rho + 1.0)
    return np.maximum(v - tau, 0.0)


@dataclasses.dataclass(frozen=True)
class RRChannel:
    """The k-ary randomized-response channel without its dense matrix.

    ``likelihood[y, x] = mu`` if ``y == x`` else ``nu`` (shape (k, k)), i.e.
    ``nu * ones + (mu - nu) * I``. Passing it to :func:`em_simplex` makes each EM step
    O(k) instead of O(k^2).
    """

    mu: float
    nu: float
    k: int

    @property
    def shape(self) -> tuple[int, int]:
        """``(k, k)``."""
        return (self.k, self.k)

    def __matmul__(self, p: np.ndarray) -> np.ndarray:
        return self.nu * float(np.sum(p)) + (self.mu - self.nu) * p

    def rmatvec(self, r: np.ndarray) -> np.ndarray:
        """``likelihood.T @ r``."""
        return self.nu * float(np.sum(r)) + (self.mu - self.nu) * r


def em_simplex(likelihood: Any, weights: npt.ArrayLike, tol: float = 1e-12, max_iter: int = 100000,
               init: npt.ArrayLike | None = None, accelerate: bool = False) -> SimplexFit:
    """EM reconstruction: the maximum-likelihood distribution on the simplex.

    Maximises ``L(p) = sum_g w_g log(sum_k likelihood[g, k] p_k)`` over the
    probability simplex with the EM (iterative Bayesian) update of Agrawal & Aggarwal
    (PODS 2001) used in Murakami & Kawamoto 2019, Sec. 2.5::

        p_k <- p_k * sum_g (w_g / W) * likelihood[g, k] / (likelihood[g] @ p)

    (``W = sum_g w_g``). Each step never decreases ``L`` and keeps ``p`` on the
    simplex; the objective is concave, so the limit is the MLE on the simplex.
    Scaling a row of ``likelihood`` by a positive constant changes neither the
    iterates nor the maximiser (only ``log_likelihood`` by a constant), so callers
    may pass likelihood ratios (e.g. for unary-encoding reports).

    Parameters
    ----------
    likelihood : array_like of float, shape (G, K)
        ``likelihood[g, k] = Pr(report g | input k)`` for the ``G`` distinct reports.
    weights : array_like of float, shape (G,)
        How many users sent report ``g`` (counts, or any non-negative weights).
    tol : float, default 1e-12
        The one stopping rule (:mod:`._fit`): stop when the certified optimality gap
        ``W log(max_x g_x / W)`` is ``<= tol |L|`` (``L`` as the given rows make it: pass probabilities, not ratios,
        for the tolerance to be relative to the true log-likelihood).
    max_iter : int, default 100000
        Cap on the number of EM-map evaluations; ``converged`` is False if it is reached.
    init : array_like, shape (K,), optional
        Starting point (strictly positive entries are needed for an entry to be able
        to move; zeros stay zero). Default: uniform.
    accelerate : bool, default False
        Use the SQUAREM extrapolation with a monotonicity guard (:func:`._fit.run_em`, the
        one EM loop of the runtime).

    Returns
    -------
    SimplexFit
        ``method`` ``"em"`` or ``"squarem"``; ``log_likelihood`` ``sum_g w_g log(likelihood[g] @
        frequency)`` (nats, up to the per-row constants if the caller scaled the rows).

    Raises
    ------
    ValueError
        Bad shapes, negative or non-finite entries, all weights zero, or a report with
        positive weight that has likelihood 0 under every input.
    """
    structured = isinstance(likelihood, RRChannel)
    if structured:
        if not (0 <= likelihood.nu and 0 < likelihood.mu and likelihood.k >= 1):
            raise ValueError("RRChannel needs mu > 0, nu >= 0 and k >= 1")
        return _em_loop(likelihood, likelihood.rmatvec, np.asarray(weights, dtype=np.float64),
                        tol, max_iter, init, accelerate)
    lik = np.asarray(likelihood, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    if lik.ndim != 2 or lik.shape[1] == 0:
        raise ValueError(f"likelihood must be a (G, K) array (got shape {lik.shape})")
    if w.shape != (lik.shape[0],):
        raise ValueError(f"weights must have shape ({lik.shape[0]},) (got {w.shape})")
    if not (np.all(np.isfinite(lik)) and np.all(lik >= 0)):
        raise ValueError("likelihood entries must be finite and >= 0")
    if not (np.all(np.isfinite(w)) and np.all(w >= 0)) or w.sum() <= 0:
        raise ValueError("weights must be finite, >= 0 and not all zero")
    keep = w > 0
    lik, w = lik[keep], w[keep]
    if np.any(lik.max(axis=1) <= 0):
        raise ValueError("a report with positive weight has likelihood 0 under every input")
    lik_t = np.ascontiguousarray(lik.T)
    return _em_loop(lik, lambda r: lik_t @ r, w, tol, max_iter, init, accelerate)


def _em_loop(lik, backward, w: np.ndarray, tol, max_iter, init, accelerate) -> SimplexFit:
    """EM / SQUAREM under the one rule, given ``lik @ p`` and ``backward(r) = lik.T @ r``."""
    if w.shape != (lik.shape[0],) or not (np.all(np.isfinite(w)) and np.all(w >= 0)) or w.sum() <= 0:
        raise ValueError(f"weights must be finite, >= 0, not all zero, shape ({lik.shape[0]},)")
    k = lik.shape[1]
    if init is None:
        p = np.full(k, 1.0 / k)
    else:
        p = np.asarray(init, dtype=np.float64).copy()
        if p.shape != (k,) or np.any(p < 0) or not np.all(np.isfinite(p)) or p.sum() <= 0:
            raise ValueError(f"init must be a non-negative ({k},) array with a positive sum")
        p /= p.sum()
        if np.any(lik @ p <= 0):
            raise ValueError("init gives zero probability to an observed report")
    total = float(w.sum())
    wn = w / total
    pos = w > 0

    def step(q: np.ndarray):
        mix = lik @ q
        ratio = np.divide(wn, mix, out=np.zeros_like(wn), where=pos)
        g = backward(ratio)  # the gradient of L / W: the EM map is q g, and g . q = 1
        with np.errstate(divide="ignore"):
            ll = float(np.sum(w[pos] * np.log(mix[pos])))
        new = q * g
        return ll, float(max(0.0, total * np.log(float(np.max(g))))), new / new.sum()

    f, ll, gap, it, converged = run_em(step, p, tol, max_iter, accelerate)
    return SimplexFit(frequency=f, log_likelihood=ll, iterations=it, converged=converged, optimality_gap=gap,
                      method="squarem" if accelerate else "em", n=total)


def em_warm_start(freq_threshold: npt.ArrayLike) -> np.ndarray:
    """Strictly positive EM starting point from an emp+thr estimate (ULDP Sec. 6.2).

    ``max(freq, 0) + 1e-3/K``, renormalised: close to the thresholded estimate, with no
    zero entries (EM cannot move an entry that starts at zero).
    """
    f = np.asarray(freq_threshold, dtype=np.float64)
    init = np.maximum(f, 0.0) + 1e-3 / f.size
    return init / init.sum()


def em_structured(likelihood: Any, weights: npt.ArrayLike, tol: float = 1e-12, max_iter: int = 100000,
                  init: npt.ArrayLike | None = None, accelerate: bool = False) -> SimplexFit:
    """:func:`em_simplex` for a likelihood given by its products instead of a dense matrix.

    Parameters
    ----------
    likelihood : object
        Has ``shape == (G, K)``, ``likelihood @ p`` (shape (G,)) and ``likelihood.rmatvec(r)``
        (``likelihood.T @ r``, shape (K,)), e.g. a channel with O(K) structure
        (:class:`RRChannel` is one); entries must be >= 0.
    weights, tol, max_iter, init, accelerate
        As in :func:`em_simplex`.

    Returns
    -------
    SimplexFit

    Raises
    ------
    ValueError
        Bad weights or an ``init`` that gives zero probability to an observed report.

    References
    ----------
    Murakami & Kawamoto 2019, Sec. 2.5 (EM reconstruction); Agrawal & Aggarwal, PODS 2001.
    """
    return _em_loop(likelihood, likelihood.rmatvec, np.asarray(weights, dtype=np.float64), tol, max_iter, init,
                    accelerate)


__all__.append("em_structured")

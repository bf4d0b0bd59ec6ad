"""Expectation-Maximization with Smoothing (EMS): a distribution on an input grid from channel counts.

Li, Wang, Lopuhaä-Zwakenberg, Li & Škorić (SIGMOD 2020, Sec. 5) estimate a numerical distribution
from Square Wave reports by EM over the channel matrix with a *smoothing step* after each M step:
the iterate is convolved with the binomial kernel ``[1, 2, 1]/4`` (the second row of Pascal's
triangle, normalised), which pulls mass towards neighbouring grid points, and renormalised. The
smoothing trades a small bias for a large drop in variance on fine grids, where the plain MLE
(the fixed point of EM without smoothing) is spiky.

Conventions of this module (where the paper is silent, what its authors' code does):

* **Initialisation**: the uniform distribution over the ``k`` grid points.
* **Borders**: the kernel is cut at the ends and each cut row renormalised, so the first and last
  rows are ``[2, 1]/3`` and ``[1, 2]/3`` (symmetric; the authors' code leaves the last row
  ``[.., 0, 1]``, an asymmetry we do not copy). The smoothed iterate is renormalised to sum 1.
* **Stopping rule**. EMS is not a maximum-likelihood method: its fixed point is not the MLE, so the
  runtime's certified-gap rule (:func:`._fit.stop`) would never fire. EMS stops, as in the
  authors' code, when the log-likelihood of the smoothed iterate stops moving: at the first
  iteration ``t >= 2`` with ``|L_t - L_{t-1}| <= tol |L_t|`` (``tol`` relative, the runtime's
  convention; :data:`EMS_TOL` ``= 1e-9`` is about the authors' absolute ``1e-3`` nats at ``2e5``
  to ``10^6`` reports over ``~10^3`` cells, ``|L| ~ n ln m``), or when one iteration moves the
  estimate by at most ``1/n`` in l1 (the authors' second rule, ``n`` the number of reports),
  else after ``max_iter`` iterations with ``converged = False``.
* **Result**: a :class:`._fit.SimplexFit` with ``method = "ems"``, ``log_likelihood`` the
  *unsmoothed* log-likelihood ``sum_j c_j log (f P)_j`` of the estimate, and ``optimality_gap`` the
  certified bound ``W log max_x g_x(f)`` on ``L(MLE) - L(f)`` (Jensen; it stays positive at the EMS
  fixed point: what the smoothing gives up in likelihood, an upper bound).

``smoothing=False`` is plain EM, the maximum-likelihood estimate: it is delegated to the runtime's
one EM loop (:func:`._estimators.em_simplex`, method ``"em"``) under the certified-gap rule.

References
----------
.. [1] Z. Li, T. Wang, M. Lopuhaä-Zwakenberg, N. Li, B. Škorić, "Estimating numerical distributions
   under local differential privacy", SIGMOD 2020 (arXiv:1912.01051), Sec. 5 (EM, EMS: the
   smoothing step with binomial coefficients, the stopping on the log-likelihood).
.. [2] B. W. Silverman, M. C. Jones, J. D. Wilson, D. W. Nychka, "A smoothed EM approach to
   indirect estimation problems", JRSS B 52(2), 1990 (the EMS algorithm).
"""
from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from ._estimators import em_simplex
from ._fit import MAX_ITER, TOL, SimplexFit, certified_gap, check_options

__all__ = ["EMS_TOL", "ems", "smoothing_matrix", "smooth"]

#: default relative tolerance of EMS on the change of the log-likelihood (see the module docstring)
EMS_TOL = 1e-9


def smoothing_matrix(k: int) -> np.ndarray:
    """The ``(k, k)`` row-stochastic smoothing matrix of EMS: rows ``[1, 2, 1]/4``, ``[2, 1]/3`` at the ends.

    Parameters
    ----------
    k : int
        Number of grid points (>= 1; ``k = 1`` gives ``[[1]]``).

    Returns
    -------
    numpy.ndarray, shape (k, k)
        ``S`` with ``smooth(f) = S f / sum(S f)``.

    References
    ----------
    [1]_ Sec. 5 (the binomial smoothing kernel).
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k: must be an integer >= 1 (got {k!r})")
    s = 2.0 * np.eye(k)
    index = np.arange(k - 1)
    s[index, index + 1] = 1.0
    s[index + 1, index] = 1.0
    return s / s.sum(axis=1, keepdims=True)


def smooth(frequency: npt.ArrayLike) -> np.ndarray:
    """One smoothing step: ``S f`` renormalised, computed without the matrix (``O(k)``).

    Parameters
    ----------
    frequency : array_like, shape (k,)

    Returns
    -------
    numpy.ndarray, shape (k,)
    """
    f = np.asarray(frequency, dtype=np.float64)
    if f.size == 1:
        return f / f.sum()
    out = 2.0 * f
    out[1:] += f[:-1]
    out[:-1] += f[1:]
    out[1:-1] /= 4.0
    out[[0, -1]] /= 3.0
    return out / out.sum()


def _checked(counts: npt.ArrayLike, channel: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    c = np.asarray(counts, dtype=np.float64)
    p = np.asarray(channel, dtype=np.float64)
    if p.ndim != 2 or p.shape[0] < 1 or p.shape[1] < 1:
        raise ValueError(f"channel: must be a (k, m) matrix (got shape {p.shape})")
    if c.shape != (p.shape[1],):
        raise ValueError(f"counts: must have shape ({p.shape[1]},) (got {c.shape})")
    if not (np.all(np.isfinite(p)) and np.all(p >= 0)) or not np.allclose(p.sum(axis=1), 1.0, rtol=0, atol=1e-9):
        raise ValueError("channel: entries must be finite, >= 0, and each row (input) must sum to 1")
    if not (np.all(np.isfinite(c)) and np.all(c >= 0)) or c.sum() <= 0:
        raise ValueError("counts: must be finite, >= 0 and not all zero")
    if np.any(p.max(axis=0)[c > 0] <= 0):
        raise ValueError("counts: an observed output has probability 0 under every input")
    return c, p


def ems(counts: npt.ArrayLike, channel: npt.ArrayLike, *, smoothing: bool = True, tol: float | None = None,
        max_iter: int = MAX_ITER) -> SimplexFit:
    """EMS (or plain EM) estimate of the input distribution on a grid from output counts.

    Parameters
    ----------
    counts : array_like of float, shape (m,)
        How many reports fell in each output cell (>= 0, not all zero).
    channel : array_like of float, shape (k, m)
        ``channel[i, j] = Pr[output j | input grid point i]``; rows sum to 1.
    smoothing : bool, default True
        True: EMS ([1]_ Sec. 5). False: plain EM, the maximum-likelihood estimate
        (:func:`._estimators.em_simplex`).
    tol : float, optional
        EMS: the relative change of the log-likelihood at which to stop (default :data:`EMS_TOL`).
        EM: the runtime's certified-gap tolerance (default :data:`._fit.TOL`).
    max_iter : int, default :data:`._fit.MAX_ITER`
        Cap on the iterations (``converged = False`` when reached).

    Returns
    -------
    SimplexFit
        ``frequency`` shape (k,) over the grid points; ``method`` ``"ems"`` (or ``"em"``);
        ``log_likelihood`` ``sum_j counts_j log (frequency @ channel)_j`` (nats);
        ``optimality_gap`` the certified bound on ``L(MLE) - log_likelihood``; ``n`` the number of
        reports.

    Raises
    ------
    ValueError
        Bad shapes, a channel row not summing to 1, negative or all-zero counts, an observed
        output impossible under every input, or a bad ``tol`` / ``max_iter``.

    References
    ----------
    [1]_ Sec. 5; [2]_.
    """
    c, p = _checked(counts, channel)
    if not smoothing:
        return em_simplex(p.T, c, tol=TOL if tol is None else tol, max_iter=max_iter)
    tol, max_iter = check_options(EMS_TOL if tol is None else tol, max_iter)
    total = float(c.sum())
    observed = c > 0
    c_obs, p_obs = c[observed], np.ascontiguousarray(p[:, observed])
    f = np.full(p.shape[0], 1.0 / p.shape[0])
    mix = f @ p_obs
    previous, converged, iterations = math.nan, False, 0
    while iterations < max_iter and not converged:
        f_new = smooth(f * (p_obs @ (c_obs / mix)) / total)  # E and M steps (the EM map), then smoothing
        mix = f_new @ p_obs
        iterations += 1
        ll = float(c_obs @ np.log(mix))
        moved = float(np.abs(f_new - f).sum())
        converged = moved <= 1.0 / total or (iterations >= 2 and abs(ll - previous) <= tol * abs(ll))
        f, previous = f_new, ll
    gradient = p_obs @ (c_obs / mix)
    return SimplexFit(frequency=f, log_likelihood=previous, iterations=iterations, converged=converged,
                      optimality_gap=certified_gap(gradient, total), method="ems", n=total)

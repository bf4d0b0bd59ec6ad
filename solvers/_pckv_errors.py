r"""PCKV error analysis (part of :mod:`ldpplan.solvers.pckv`, which re-exports it).

Source: Gu, Li, Cheng, Xiong, Cao, *PCKV*, USENIX Security 2020: Theorem 4 eq. (9)-(12),
eq. (16)-(18); the truncation model of users holding more than ``L`` pairs.
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Callable, Sequence

import numpy as np
import numpy.typing as npt

from ..mechanisms.pckv._core import corrected_mean, theorem4_mean_terms

__all__ = ["truncation_factor", "theorem4_mse", "approximate_mse", "worst_case_mean_mse", "corrected_mean_mse",
           "WorstKey", "worst_case_corrected_mean_mse", "KeyModel"]


# ------------------------------------------------------------------ errors
def truncation_factor(set_sizes: Sequence[int] | np.ndarray, weights: Sequence[float] | np.ndarray, padding_length: int) -> float:
    r"""``rho(L) = E[min(s, L)] / E[s]`` under a set-size distribution.

    Model (the truncation the paper leaves to future work, Sec. 5.1): a user with ``s``
    pairs reports one of them with probability ``1/max(s, L)``; if key ``k`` is held by a
    user with probability proportional to her set size (each pair equally likely to be
    any key), then ``E[f_hat_k] = rho(L) f_k`` with eq. (7), a bias of ``-(1 - rho) f_k``.

    Parameters
    ----------
    set_sizes : array of int
        Support of the distribution (number of pairs per user).
    weights : array of float
        Probabilities or counts of each size (normalised here).
    padding_length : int

    Returns
    -------
    float in (0, 1]
    """
    s = np.asarray(set_sizes, dtype=float)
    w = np.asarray(weights, dtype=float)
    w = w / w.sum()
    mean = float(np.dot(w, s))
    if mean <= 0:
        return 1.0
    return float(np.dot(w, np.minimum(s, padding_length)) / mean)


def theorem4_mse(a: float, b: float, p: float, padding_length: int, n: float, frequencies: npt.ArrayLike,
                 means: npt.ArrayLike, sampled_frequencies: npt.ArrayLike | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    r"""Per-key MSE of the baseline estimators (7) and (8), Theorem 4.

    ``MSE_f = Var (9) + (f_s - f)^2`` and ``MSE_m = Var (11) + bias (10)^2`` with
    ``delta = (a-b) f_s / L`` and ``gamma = a (2p-1) f_s / L`` (eq. (12)). ``f_s`` is the
    frequency the sampling actually sees (``sampled_frequencies``: ``f_k`` when no user
    holds more than ``L`` pairs, as Theorem 4 assumes; smaller with truncation, see
    :func:`truncation_factor`). Keys with ``f_s = 0`` get ``inf`` mean error.

    Parameters
    ----------
    a, b, p : float
        Perturbation probabilities (PCKV-UE or PCKV-GRR; the theorem covers both).
    padding_length : int
    n : float
        Number of users.
    frequencies, means : array_like, shape (d,)
        True frequencies (fraction of users holding the key) and value means in [-1, 1].
    sampled_frequencies : array_like, shape (d,), optional
        ``L * E[#users sampling key k] / n``; defaults to ``frequencies``.

    Returns
    -------
    mse_frequency, mse_mean : ndarray, shape (d,)
        Squared frequency (fraction) units and squared value units.
    """
    L = float(padding_length)
    f = np.asarray(frequencies, dtype=float)
    m = np.asarray(means, dtype=float)
    fs = f if sampled_frequencies is None else np.asarray(sampled_frequencies, dtype=float)
    var_f = L * L * b * (1 - b) / (n * (a - b) ** 2) + L * fs * (1 - a - b) / (n * (a - b))
    mse_f = var_f + (fs - f) ** 2
    var_m, bias = theorem4_mean_terms(fs, m, a, b, p, L, n)  # the runtime's one copy of (10)-(12)
    with np.errstate(invalid="ignore", over="ignore"):
        mse_m = np.where(fs > 0, var_m + bias ** 2, np.inf)
    return mse_f, mse_m


def approximate_mse(a: float, b: float, p: float, padding_length: int, n: float, frequencies: npt.ArrayLike,
                    means: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    r"""Approximations (17)-(18): ``MSE_f ~ L^2 h / n``, ``MSE_m ~ mu (g + h m^2)``.

    With ``mu = L^2/(n f^2)``, ``g = b/(a^2 (2p-1)^2)``, ``h = (1-b) b/(a-b)^2`` (eq. (16)).

    Returns
    -------
    mse_frequency, mse_mean : ndarray, shape (d,)
    """
    L = float(padding_length)
    f = np.asarray(frequencies, dtype=float)
    m = np.asarray(means, dtype=float)
    g = b / (a * a * (2 * p - 1) ** 2)
    h = (1 - b) * b / (a - b) ** 2
    with np.errstate(divide="ignore"):
        mu = L * L / (n * f * f)
    return np.full_like(f, L * L * h / n), mu * (g + h * m * m)


def worst_case_mean_mse(a: float, b: float, p: float, padding_length: int, n: float, min_frequency: float,
                        max_abs_mean: float = 1.0, truncation: float = 1.0, grid: int = 2048) -> float:
    r"""The largest per-key Theorem 4 mean MSE over key frequencies ``f >= min_frequency`` and means ``|m| <= M``.

    ``sup_{f in [f_min, 1], m^2 in [0, M^2]} MSE_m(f, m)`` with ``MSE_m = Var (11) + bias (10)^2`` at
    ``f_s = truncation * f`` (:func:`theorem4_mse`). ``MSE_m`` is affine in ``m^2``, so the sup over
    ``m`` is at ``m = 0`` or ``|m| = M``; over ``f`` it is taken on a geometric grid of ``grid`` points
    plus both ends (the ``1/(n f^2)`` terms make it decrease in ``f`` except where ``delta`` is large;
    the grid covers both). Without a floor the sup is infinite: a key's mean error grows like
    ``L^2 (g + h m^2) / (n f^2)`` (eq. (18)) as its frequency ``f -> 0``.

    Parameters
    ----------
    a, b, p : float
    padding_length : int
    n : float
        Users.
    min_frequency : float
        The smallest key frequency covered, in (0, 1].
    max_abs_mean : float, default 1
        ``M``: the means' bound (values lie in [-1, 1]).
    truncation : float, default 1
        ``f_s / f`` (:func:`truncation_factor`; 1 when no user holds more than ``L`` pairs).
    grid : int

    Returns
    -------
    float
        Squared value units: an upper bound on the mean MSE of every key with ``f >= min_frequency``,
        hence on any average over such keys (to Theorem 4's first-order accuracy).

    Raises
    ------
    ValueError
        ``min_frequency`` not in (0, 1].

    References
    ----------
    PCKV, Theorem 4, eq. (10)-(12); eq. (18).
    """
    if not 0.0 < float(min_frequency) <= 1.0:
        raise ValueError(f"min_frequency: must be in (0, 1] (got {min_frequency!r})")
    f = np.unique(np.concatenate([[float(min_frequency), 1.0], np.geomspace(float(min_frequency), 1.0, int(grid))]))
    fs = truncation * f
    worst = 0.0
    for m in (0.0, float(max_abs_mean)):
        _, mse_m = theorem4_mse(a, b, p, padding_length, n, f, np.full_like(f, m), fs)
        worst = max(worst, float(np.max(mse_m)))
    return worst


#: Standard deviations each axis of :func:`corrected_mean_mse`'s grid spans (the mass beyond is < 1e-11).
_SPAN = 7.0


def _corrected_mean(n1, n2, n: float, a: float, b: float, p: float, L: float) -> np.ndarray:
    """Algorithm 4's mean estimate (the runtime's default ``"corrected"``: its one copy) from real-valued counts."""
    return corrected_mean(n1, n2, n, a, b, p, L)[1]


def corrected_mean_mse(a: float, b: float, p: float, padding_length: int, n: float, frequencies: npt.ArrayLike,
                       means: npt.ArrayLike, sampled_frequencies: npt.ArrayLike | None = None,
                       nodes: int = 401) -> np.ndarray:
    r"""Per-key MSE of the *corrected* mean estimator (Algorithm 4, eq. (13)-(14)), by integration.

    Theorem 4's mean MSE (:func:`theorem4_mse`) is a first-order (delta-method) expansion of the
    plain ratio estimator (8); at low epsilon or for rare keys its denominator ``n1 + n2 - n b``
    is often near zero, and neither estimator follows it: (8) is far worse, Algorithm 4 (which
    clips ``f`` to ``[1/n, 1]`` and the calibrated counts to ``[0, n f / L]``, so its mean lies in
    ``[-1, 1]``) far better. This function integrates Algorithm 4's squared error exactly over a
    normal model of the key's counts: a user reports ``<k, +1>`` with probability
    ``P1 = (f_s/L) a (p (1+m)/2 + (1-p)(1-m)/2) + (1 - f_s/L) b/2`` and ``<k, -1>`` with ``P2`` (``m``
    negated), so ``(n1, n2)`` has mean ``n (P1, P2)`` and the multinomial covariance
    ``n (diag(P) - P P^T)``; the expectation is a ``nodes x nodes`` Gauss-Hermite rule
    (probabilists') after a Cholesky factor. Both PCKV-UE and PCKV-GRR (``b = (1-a)/(d'-1)``, a
    perturbed key's value uniform in ``{+1, -1}``) have this form.

    Parameters
    ----------
    a, b, p : float
    padding_length : int
    n : float
        Users.
    frequencies, means : array_like, shape (d,)
        ``f_k`` and ``m_k`` in [-1, 1].
    sampled_frequencies : array_like, shape (d,), optional
        ``f_s`` (default ``frequencies``; see :func:`theorem4_mse`).
    nodes : int
        Gauss-Hermite nodes per axis.

    Returns
    -------
    ndarray, shape (d,)
        Squared value units, at most ``(1 + |m|)^2``.

    References
    ----------
    PCKV (Gu et al., USENIX Security 2020), Algorithm 4, Lemma 1 eq. (13), eq. (14); Theorem 4 for
    the count model.
    """
    L = float(padding_length)
    f = np.atleast_1d(np.asarray(frequencies, dtype=float))
    m = np.atleast_1d(np.asarray(means, dtype=float))
    fs = f if sampled_frequencies is None else np.atleast_1d(np.asarray(sampled_frequencies, dtype=float))
    x = np.linspace(-_SPAN, _SPAN, int(nodes))  # midpoint rule: the estimator is clipped, not smooth
    w = np.exp(-x * x / 2)
    w = w / w.sum()
    z1, z2 = (v.ravel() for v in np.meshgrid(x, x, indexing="ij"))
    ww = np.outer(w, w).ravel()
    hold = fs / L * a
    p1 = hold * (p * (1 + m) / 2 + (1 - p) * (1 - m) / 2) + (1 - fs / L) * b / 2
    p2 = hold * (p * (1 - m) / 2 + (1 - p) * (1 + m) / 2) + (1 - fs / L) * b / 2
    v11, v22, v12 = n * p1 * (1 - p1), n * p2 * (1 - p2), -n * p1 * p2
    c11 = np.sqrt(v11)
    c21 = v12 / c11
    c22 = np.sqrt(np.maximum(v22 - c21 * c21, 0.0))
    out = np.empty(f.shape)
    for k in range(f.size):  # (nodes^2,) per key
        n1 = n * p1[k] + c11[k] * z1
        n2 = n * p2[k] + c21[k] * z1 + c22[k] * z2
        est = _corrected_mean(n1, n2, float(n), a, b, p, L)
        # numpy's pairwise sum, not BLAS's dot: the same bits whatever the thread count (np.dot split this
        # 10^4-term sum across OpenBLAS threads, so the plan's last bits depended on the machine)
        out[k] = float(np.sum(ww * (est - m[k]) ** 2))
    return out


@dataclasses.dataclass(frozen=True)
class WorstKey:
    """The worst case of :func:`worst_case_corrected_mean_mse`.

    Attributes
    ----------
    mse : float
        Squared value units: the largest per-key mean MSE of the corrected estimator found.
    frequency : float
        ``f`` of the key attaining it (fraction of users).
    mean : float
        ``|m|`` of that key, in [0, 1].
    """

    mse: float
    frequency: float
    mean: float


#: Coarse search of :func:`worst_case_corrected_mean_mse`: geometric f points, |m| points, rule nodes.
_COARSE_F, _COARSE_M, _COARSE_NODES = 25, 5, 101
#: Refinement around the coarse maximiser: f and |m| points between its neighbours, rule nodes; the
#: maximiser is re-evaluated with ``_FINAL_NODES`` (the rule converges from below where the estimator's
#: clipping is sharp: 1.459, 1.493, 1.498, 1.501 at 101, 401, 801, 1601 nodes for f = 1/n, |m| = 1).
_FINE_F, _FINE_M, _FINE_NODES, _FINAL_NODES = 7, 5, 201, 801


def worst_case_corrected_mean_mse(a: float, b: float, p: float, padding_length: int, n: float,
                                  min_frequency: float, max_abs_mean: float = 1.0,
                                  truncation: float = 1.0) -> WorstKey:
    r"""The largest per-key MSE of the corrected mean estimator (Algorithm 4) over ``f in [f_min, 1]``, ``|m| <= M``.

    :func:`corrected_mean_mse` (the runtime's default estimator, whose mean lies in [-1, 1], so the
    sup is finite down to ``f_min = 1/n``, a key held by one user) at ``f_s = truncation * f``.
    Search (the MSE is even in ``m``; in ``f`` it is flat or decreasing below the detection
    threshold and decreasing like ``1/(n f^2)`` above it, eq. (18), but not monotone everywhere):
    a coarse grid of 25 geometric ``f`` points from ``f_min`` to 1 times 5 equispaced ``|m|`` in
    ``[0, M]`` with a 101-node rule, then, around the coarse maximiser, 7 geometric ``f`` points and
    5 ``|m|`` points between its two neighbours with a 201-node rule; the refinement's maximiser is
    re-evaluated with an 801-node rule (the rules converge from below where the clipping is sharp:
    0.7 % short at 401 nodes for ``f = 1/n``) and the larger value is returned, the MSE of a
    concrete key (``frequency``, ``mean``). About 0.4 s; deterministic; cached on its arguments.

    Parameters
    ----------
    a, b, p : float
        Perturbation probabilities (PCKV-UE or PCKV-GRR).
    padding_length : int
    n : float
        Users.
    min_frequency : float
        Smallest key frequency covered, in (0, 1] (``1/n``: every key some user holds).
    max_abs_mean : float, default 1
        ``M`` in [0, 1].
    truncation : float, default 1
        ``f_s / f`` (:func:`truncation_factor`).

    Returns
    -------
    WorstKey

    Raises
    ------
    ValueError
        ``min_frequency`` not in (0, 1] or ``max_abs_mean`` not in [0, 1].

    References
    ----------
    PCKV (Gu et al., USENIX Security 2020), Algorithm 4, eq. (13)-(14); Theorem 4's count model.
    """
    if not 0.0 < float(min_frequency) <= 1.0:
        raise ValueError(f"min_frequency: must be in (0, 1] (got {min_frequency!r})")
    if not 0.0 <= float(max_abs_mean) <= 1.0:
        raise ValueError(f"max_abs_mean: must be in [0, 1] (got {max_abs_mean!r})")
    return _worst_corrected(float(a), float(b), float(p), int(padding_length), float(n), float(min_frequency),
                            float(max_abs_mean), float(truncation))


@functools.lru_cache(maxsize=64)
def _worst_corrected(a: float, b: float, p: float, L: int, n: float, f_min: float, M: float,
                     truncation: float) -> WorstKey:
    fc = np.geomspace(f_min, 1.0, _COARSE_F) if f_min < 1.0 else np.array([1.0])
    mc = np.linspace(0.0, M, _COARSE_M)
    ff, mm = (v.ravel() for v in np.meshgrid(fc, mc, indexing="ij"))
    coarse = corrected_mean_mse(a, b, p, L, n, ff, mm, truncation * ff, nodes=_COARSE_NODES)
    i, j = (int(v) for v in np.unravel_index(int(np.argmax(coarse)), (fc.size, mc.size)))
    f_lo, f_hi = fc[max(i - 1, 0)], fc[min(i + 1, fc.size - 1)]
    fr = np.unique(np.concatenate([np.geomspace(f_lo, f_hi, _FINE_F), [fc[i]]]))
    mr = np.unique(np.linspace(mc[max(j - 1, 0)], mc[min(j + 1, mc.size - 1)], _FINE_M))
    ff, mm = (v.ravel() for v in np.meshgrid(fr, mr, indexing="ij"))
    fine = corrected_mean_mse(a, b, p, L, n, ff, mm, truncation * ff, nodes=_FINE_NODES)
    k = int(np.argmax(fine))
    final = corrected_mean_mse(a, b, p, L, n, ff[k:k + 1], mm[k:k + 1], truncation * ff[k:k + 1],
                               nodes=_FINAL_NODES)[0]
    return WorstKey(float(max(fine[k], final)), float(ff[k]), float(mm[k]))


class KeyModel:
    """What the planner assumes about the data when predicting errors.

    Parameters
    ----------
    frequencies : array, shape (d,)
        ``f_k`` (fraction of users holding key k).
    means : array, shape (d,)
        ``m_k`` in [-1, 1].
    n : int
        Number of users.
    set_sizes, set_size_weights : arrays, optional
        Set-size distribution (for the truncation model). ``None``: every user holds
        at most one pair (no truncation for any ``L >= 1``).
    sampled_frequencies : callable ``L -> array (d,)``, optional
        Exact per-key ``f_s(L)`` computed from real data (overrides the
        proportional model of :func:`truncation_factor`).
    objective_keys : array of int, optional
        Indices of the keys the objective averages over (default all keys with f > 0).
    min_key_frequency : float, optional
        Set when the key frequencies are an assumption (no data, no prior frequencies): the
        smallest key frequency the worst-case predictions cover (:func:`worst_case_mean_mse`).
        None: the frequencies are known (data or priors) and predictions are at them.
    allowed_min_frequency : float, optional
        With ``min_key_frequency``: the smallest key frequency the spec allows, over which the
        corrected estimator's worst case runs (:func:`worst_case_corrected_mean_mse`); the spec's
        ``min_key_frequency`` when it gives one, else ``1/n`` (a key some user holds).
    max_abs_mean : float, default 1
        Bound on ``|m_k|`` for the worst case (1 when the means are left open).
    basis : str, default "priors"
        Where ``frequencies`` and ``means`` come from: ``"data"``, ``"priors"`` or ``"assumption"``.
    """

    def __init__(self, frequencies: npt.ArrayLike, means: npt.ArrayLike, n: float,
                 set_sizes: npt.ArrayLike | None = None, set_size_weights: npt.ArrayLike | None = None,
                 sampled_frequencies: Callable[[int], npt.ArrayLike] | None = None,
                 objective_keys: npt.ArrayLike | None = None, min_key_frequency: float | None = None,
                 max_abs_mean: float = 1.0, basis: str = "priors", allowed_min_frequency: float | None = None
                 ) -> None:
        self.min_key_frequency = None if min_key_frequency is None else float(min_key_frequency)
        self.allowed_min_frequency = None if min_key_frequency is None else float(
            min(1.0, 1.0 / float(n)) if allowed_min_frequency is None else allowed_min_frequency)
        self.max_abs_mean = float(max_abs_mean)
        self.basis = str(basis)
        self.frequencies = np.asarray(frequencies, dtype=float)
        self.means = np.asarray(means, dtype=float)
        self.n = float(n)
        self.set_sizes = None if set_sizes is None else np.asarray(set_sizes, dtype=float)
        self.set_size_weights = None if set_size_weights is None else np.asarray(set_size_weights, dtype=float)
        self._sampled = sampled_frequencies
        keys = np.nonzero(self.frequencies > 0)[0] if objective_keys is None else np.asarray(objective_keys)
        self.objective_keys = keys

    def sampled(self, padding_length: int) -> np.ndarray:
        """``f_s(L)`` per key (equals ``f`` without truncation)."""
        if self._sampled is not None:
            return np.asarray(self._sampled(int(padding_length)), dtype=float)
        if self.set_sizes is None:
            return self.frequencies
        if self.set_size_weights is None:
            raise ValueError("set_size_weights: required with set_sizes (the set-size distribution)")
        return self.frequencies * truncation_factor(self.set_sizes, self.set_size_weights, padding_length)

    def objective(self, a: float, b: float, p: float, padding_length: int,
                  weights: tuple[float, float] = (1.0, 1.0)) -> tuple[float, float, float]:
        """``(w_f MSE_f + w_m MSE_m, MSE_f, MSE_m)`` averaged over :attr:`objective_keys`."""
        keys = self.objective_keys
        fs = self.sampled(padding_length)
        mf, mm = theorem4_mse(a, b, p, padding_length, self.n, self.frequencies[keys], self.means[keys], fs[keys])
        ef, em = float(np.mean(mf)), float(np.mean(mm))
        return weights[0] * ef + weights[1] * em, ef, em

"""Confidence intervals of the runtimes' estimates (numpy + the standard library only).

Every linear LDP frequency estimator in this package is ``f_hat = (c / n - nu) / (mu - nu)`` (times a
scale ``s``: ``L`` for padding-and-sampling) of a count ``c`` that is a sum of independent Bernoulli
reports, so its exact variance is a polynomial in the true frequency ``f``::

    n Var(f_hat_k) = c0_k + c1_k f_k + c2_k f_k^2          (c2 = 0 for fixed users' data)

(ID-LDP eq. (8), PIE eq. (22)/(23), ULDP eqs. (35)/(41), PCKV eq. (9)). :class:`FrequencyVariance`
carries these coefficients; :func:`score_interval` inverts the two-sided z-test of ``f`` with the
variance *at the tested f* (the Wilson score interval generalised to these estimators), i.e. the set
of ``f`` in ``[0, upper]`` with ``(f_hat - f)^2 <= z^2 (c0 + c1 f + c2 f^2) / n``. Unlike the Wald
interval ``f_hat +- z se(f_hat)``, it does not collapse where the variance at ``f_hat`` is ~0: a GLH
cell with ``g = 10^8`` estimated at 0 has ``se ~ 4e-7``, while its score interval reaches
``z^2 c1 / n``, the frequency at which the holders' own reports would likely have shown.

The normal approximation behind any z-interval fails when few reports carry the signal: the
expected number of reports supporting an item (``n (nu + (mu - nu) f)``) or not supporting it is
below ~10, or (PCKV means) a key is held by few users (``n f / L`` below ~100): the delta method of
PCKV eq. (10)-(11) then no longer holds and the interval is clipped to ``[-1, 1]``.

References
----------
Wilson, "Probable inference, the law of succession, and statistical inference", JASA 22 (1927);
Gu et al., ICDE 2020, eq. (8); Murakami & Takahashi, TDP 2021, eq. (22)-(23); Murakami & Kawamoto,
USENIX Security 2019, eqs. (35), (41); Gu et al., USENIX Security 2020 (PCKV), eq. (9)-(12).
"""
from __future__ import annotations

import dataclasses
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

__all__ = ["FrequencyVariance", "MeanVariance", "score_interval", "wald_interval", "two_sided_z", "affine_variance",
           "SCORE_METHOD", "WALD_MEAN_METHOD"]

#: ``interval_method`` of the frequency intervals.
SCORE_METHOD = "score (Wilson-type inversion of the z-test with the estimator's exact variance at the tested f)"
#: ``interval_method`` of the PCKV mean intervals.
WALD_MEAN_METHOD = "Wald (delta-method variance of PCKV eq. (11) at the estimates, clipped to [-1, 1])"


def two_sided_z(level: float) -> float:
    """``Phi^{-1}((1 + level) / 2)``: the two-sided standard-normal critical value (stdlib NormalDist).

    Raises
    ------
    ValueError
        If ``level`` is not a number in (0, 1).
    """
    if isinstance(level, bool) or not isinstance(level, (int, float, np.floating, np.integer)):
        raise ValueError(f"level: must be a number in (0, 1) (got {level!r})")
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level: must be in (0, 1) (got {level!r})")
    return float(NormalDist().inv_cdf(0.5 + level / 2.0))


def _frozen_array(x: npt.ArrayLike) -> np.ndarray:
    """A read-only float64 view (no copy: paper-scale domains hold 10^7 items)."""
    view = np.asarray(x, dtype=np.float64).view()
    view.flags.writeable = False
    return view


def affine_variance(nu: npt.ArrayLike, mu: npt.ArrayLike, scale: float = 1.0, sampling: bool = False
                    ) -> tuple[np.ndarray, np.ndarray]:
    """``(c0, c1)`` of ``n Var(f_hat) = c0 + c1 f`` for ``f_hat = s (c/n - nu)/(mu - nu)``.

    A holder's report supports her item with probability ``mu``, a non-holder's with ``nu``
    (independent users, fixed data): ``n Var(c / n) = nu (1 - nu) + f (mu (1 - mu) - nu (1 - nu))``.
    With padding and sampling (``sampling=True``, ``s = L``) a holder samples her item with
    probability ``pi`` and ``n Var(c/n) = nu(1-nu) + (mu-nu)(1-2 nu) f_s - (mu-nu)^2 sum_u pi_u^2 / n``
    (``f_s = sum_u pi_u / n``); when no holder's set exceeds ``L`` (the condition under which
    ``s c``-estimates are unbiased), ``pi = 1/L`` and ``f_s = f / s``:
    ``c1 = s (1 - 2 nu)/(mu - nu) - 1`` (eq. (8)/(9) plus the sampling variance ``(s - 1) f``).

    Parameters
    ----------
    nu, mu : float or ndarray
        Support probabilities of a non-holder's and a holder's report, ``mu > nu``.
    scale : float
        ``s`` (``L`` for padding-and-sampling estimators, else 1).
    sampling : bool
        Include the item-sampling variance of padding-and-sampling.

    Returns
    -------
    c0, c1 : ndarray
        Frequency^2 units times ``n``.
    """
    nu = np.asarray(nu, dtype=np.float64)
    mu = np.asarray(mu, dtype=np.float64)
    d = mu - nu
    c0 = scale * scale * nu * (1 - nu) / (d * d)
    if sampling:
        c1 = scale * (1 - 2 * nu) / d - 1.0
    else:
        c1 = scale * (mu * (1 - mu) - nu * (1 - nu)) / (d * d)
    return c0, c1


def score_interval(estimate: npt.ArrayLike, n: int, c0: npt.ArrayLike, c1: npt.ArrayLike, c2: npt.ArrayLike = 0.0, *,
                   z: float, upper: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """``{f in [0, upper] : (f_hat - f)^2 <= z^2 (c0 + c1 f + c2 f^2) / n}`` as ``(low, high)``.

    The roots of ``(1 - z^2 c2/n) f^2 - (2 f_hat + z^2 c1/n) f + f_hat^2 - z^2 c0/n = 0``, intersected
    with ``[0, upper]``. Where no ``f`` in ``[0, upper]`` passes the test (an estimate far outside the
    range), the interval is the single nearest end point (``low == high``).

    Parameters
    ----------
    estimate : array_like, shape (K,)
        The unbiased (unclipped) estimate ``f_hat``.
    n : int
        Number of users (>= 1).
    c0, c1, c2 : array_like, shape (K,) or scalars
        ``n Var(f_hat) = c0 + c1 f + c2 f^2`` at the true ``f``.
    z : float
        Two-sided critical value (:func:`two_sided_z`).
    upper : float
        Largest possible frequency (1 for fractions of users).

    Returns
    -------
    low, high : ndarray of float64, shape (K,)
    """
    f = np.asarray(estimate, dtype=np.float64)
    c0 = np.broadcast_to(np.asarray(c0, dtype=np.float64), f.shape)
    c1 = np.broadcast_to(np.asarray(c1, dtype=np.float64), f.shape)
    c2 = np.broadcast_to(np.asarray(c2, dtype=np.float64), f.shape)
    t = z * z / float(n)
    qa = 1.0 - t * c2
    qb = -(2.0 * f + t * c1)
    qc = f * f - t * c0
    disc = qb * qb - 4.0 * qa * qc
    ok = (disc >= 0) & (qa > 0)
    root = np.sqrt(np.where(ok, disc, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        low = np.where(ok, (-qb - root) / (2.0 * qa), -np.inf)
        high = np.where(ok, (-qb + root) / (2.0 * qa), np.inf)
    # qa <= 0 (tiny n): the test accepts everything; no real root: nothing passes -> nearest end point
    low = np.where(qa <= 0, 0.0, low)
    high = np.where(qa <= 0, upper, high)
    empty = (qa > 0) & (disc < 0)
    nearest = np.clip(f, 0.0, upper)
    low = np.where(empty, nearest, low)
    high = np.where(empty, nearest, high)
    low = np.clip(low, 0.0, upper)
    high = np.clip(high, 0.0, upper)
    return low, np.maximum(high, low)


def wald_interval(estimate: npt.ArrayLike, std_error: npt.ArrayLike, *, z: float, lower: float, upper: float
                  ) -> tuple[np.ndarray, np.ndarray]:
    """``estimate +- z std_error`` clipped to ``[lower, upper]`` (NaN estimates give the whole range)."""
    est = np.asarray(estimate, dtype=np.float64)
    se = np.asarray(std_error, dtype=np.float64)
    bad = ~np.isfinite(est) | ~np.isfinite(se)
    low = np.where(bad, lower, np.clip(est - z * np.where(bad, 0.0, se), lower, upper))
    high = np.where(bad, upper, np.clip(est + z * np.where(bad, 0.0, se), lower, upper))
    return low, high


@dataclasses.dataclass(frozen=True)
class FrequencyVariance:
    """What an :class:`~ldpplan.mechanisms.Estimate` needs for frequency confidence intervals.

    Attributes
    ----------
    unbiased : ndarray, shape (K,)
        The unbiased linear estimate the interval inverts (the paper's empirical estimator; for
        other methods the interval is the empirical estimator's, a confidence set for the same
        true frequencies).
    c0, c1, c2 : ndarray, shape (K,) or ()
        ``n Var(unbiased) = c0 + c1 f + c2 f^2`` at the true frequency ``f`` (frequency^2 x users).
    n : int
        Users behind the estimate.
    upper : float
        Largest possible frequency (1).
    mixing : ndarray, shape (domain_size, K - domain_size), or None
        Non-negative matrix ``B`` of a domain estimate ``p = r[:domain_size] + B @ r[domain_size:]``
        (PUM eq. (21): ``p = r_X + sum_k r(bot_k) pi_k``); intervals are then ``low[:d] + B @ low[d:]``
        and likewise ``high`` (the Minkowski sum: by Cauchy-Schwarz at least as wide as the interval
        of the sum, so asymptotically conservative). None: ``p = r``.
    source : str
        The paper's equation of the variance.
    """

    unbiased: np.ndarray
    c0: np.ndarray | float  # a float (a coefficient shared by all K) is stored as a 0-d array
    c1: np.ndarray | float
    c2: np.ndarray | float
    n: int
    upper: float = 1.0
    mixing: np.ndarray | None = None
    source: str = ""

    def __post_init__(self) -> None:
        for name in ("unbiased", "c0", "c1", "c2"):
            object.__setattr__(self, name, _frozen_array(getattr(self, name)))
        if self.mixing is not None:
            object.__setattr__(self, "mixing", _frozen_array(self.mixing))

    def interval(self, z: float) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)`` at critical value ``z`` (shape (domain_size,))."""
        low, high = score_interval(self.unbiased, self.n, self.c0, self.c1, self.c2, z=z, upper=self.upper)
        if self.mixing is not None:
            d = self.mixing.shape[0]
            low = low[:d] + self.mixing @ low[d:]
            high = np.minimum(high[:d] + self.mixing @ high[d:], self.upper)
        return low, high

    def with_mixing(self, mixing: npt.ArrayLike) -> "FrequencyVariance":
        """The same variance model mapped to a domain by ``mixing`` (see the attribute)."""
        return dataclasses.replace(self, mixing=np.asarray(mixing, dtype=np.float64))


@dataclasses.dataclass(frozen=True)
class MeanVariance:
    """Standard errors of key-value means (PCKV eq. (11) by the delta method, at the estimates).

    Attributes
    ----------
    std_error : ndarray, shape (d,)
        Value units; ``inf`` where the key's estimated frequency gives no information.
    source : str
    """

    std_error: np.ndarray
    source: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "std_error", _frozen_array(self.std_error))

    def interval(self, mean: npt.ArrayLike, z: float) -> tuple[np.ndarray, np.ndarray]:
        """Wald interval of ``mean`` clipped to [-1, 1]."""
        return wald_interval(mean, self.std_error, z=z, lower=-1.0, upper=1.0)

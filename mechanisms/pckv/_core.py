r"""PCKV client-side pieces and estimators (numpy only): users' key-value sets,
Algorithm 1 (padding-and-sampling), the composed privacy ratio and the estimators.

Source: Gu, Li, Cheng, Xiong, Cao, *PCKV: Locally Differentially Private Correlated
Key-Value Data Collection with Optimized Utility*, USENIX Security 2020: Algorithm 1,
Theorems 2-3 (App. A-B), estimators (7)-(8), Algorithm 4 with Lemma 1, eq. (13)-(14).
The public names are re-exported by :mod:`ldpplan.mechanisms.pckv`.
"""
from __future__ import annotations

import dataclasses
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any, Sequence

import numpy as np
import numpy.typing as npt

from .._intervals import FrequencyVariance, MeanVariance, affine_variance
from .._plan import log_fraction
from .._protocol import Estimate
from .._sampling import check_rng, uniform_below, uniform_bits, uniform_unit

__all__ = ["KeyValueUsers", "sample_pairs", "estimate_from_counts", "corrected_mean", "theorem4_mean_terms",
           "mean_variance", "composed_ratio", "key_budget",
           "value_budget", "ESTIMATORS", "exact_ratios", "exceeds_exactly"]

#: Estimators of :func:`estimate_from_counts` (first = default).
ESTIMATORS = ("corrected", "empirical")


@dataclasses.dataclass(frozen=True)
class KeyValueUsers:
    """Users' key-value sets in CSR form.

    Attributes
    ----------
    indptr : ndarray of int64, shape (n + 1,)
        User ``u`` holds pairs ``indptr[u]:indptr[u+1]``.
    keys : ndarray of int64, shape (total_pairs,)
        0-based key indices.
    values : ndarray of float64, shape (total_pairs,)
        Values (expected in [-1, 1]).
    """

    indptr: np.ndarray
    keys: np.ndarray
    values: np.ndarray

    @property
    def n_users(self) -> int:
        """Number of users ``n``."""
        return int(self.indptr.shape[0] - 1)

    def __len__(self) -> int:
        return self.n_users

    @classmethod
    def from_pairs(cls, users: Sequence[tuple[Any, Any]]) -> "KeyValueUsers":
        """Build from a sequence of ``(keys, values)`` per user.

        Raises
        ------
        ValueError
            If a user's keys and values have different lengths.
        """
        ks = [np.asarray(k, dtype=np.int64).reshape(-1) for k, _ in users]
        vs = [np.asarray(v, dtype=np.float64).reshape(-1) for _, v in users]
        lens = np.fromiter((k.shape[0] for k in ks), dtype=np.int64, count=len(ks))
        vlens = np.fromiter((v.shape[0] for v in vs), dtype=np.int64, count=len(vs))
        if not np.array_equal(lens, vlens):
            bad = int(np.nonzero(lens != vlens)[0][0])
            raise ValueError(f"user {bad}: keys and values must have the same length")
        indptr = np.zeros(len(ks) + 1, dtype=np.int64)
        np.cumsum(lens, out=indptr[1:])
        keys = np.concatenate(ks) if ks else np.zeros(0, np.int64)
        values = np.concatenate(vs) if vs else np.zeros(0, np.float64)
        return cls(indptr, keys, values)


def as_users(users: Any) -> KeyValueUsers:
    """``users`` as :class:`KeyValueUsers` (a sequence of ``(keys, values)`` is converted)."""
    if isinstance(users, KeyValueUsers):
        return users
    return KeyValueUsers.from_pairs(users)


def check_users(users: KeyValueUsers, d: int, values_mode: str, keys_mode: str) -> tuple[KeyValueUsers, int]:
    """Validate users against a ``d``-key domain; returns (clean users, pairs dropped).

    Raises
    ------
    ValueError
        Malformed CSR arrays, NaN values, keys outside ``0..d-1`` (``keys_mode="reject"``),
        values outside [-1, 1] (``values_mode="reject"``), a key twice for one user.
    """
    indptr = np.asarray(users.indptr, dtype=np.int64)
    keys = np.asarray(users.keys, dtype=np.int64)
    vals = np.asarray(users.values, dtype=np.float64)
    if indptr.ndim != 1 or indptr.shape[0] < 1 or indptr[0] != 0 or indptr[-1] != keys.shape[0] \
            or keys.shape != vals.shape or np.any(np.diff(indptr) < 0):
        raise ValueError("users: malformed CSR arrays (indptr must start at 0, be non-decreasing and end at len(keys))")
    if np.isnan(vals).any():
        raise ValueError("values: NaN is not a value in [-1, 1]")
    dropped = 0
    bad_key = (keys < 0) | (keys >= d)
    if bad_key.any():
        if keys_mode != "drop":
            i = int(np.nonzero(bad_key)[0][0])
            raise ValueError(f"keys: must be 0-based indices in 0..{d - 1} (got {int(keys[i])}); "
                             "plan with out_of_domain_keys = \"drop\" to drop such pairs")
        keep = ~bad_key
        dropped = int(bad_key.sum())
        owner = np.repeat(np.arange(indptr.shape[0] - 1), np.diff(indptr))[keep]
        counts = np.bincount(owner, minlength=indptr.shape[0] - 1)
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        keys, vals = keys[keep], vals[keep]
    out_of_range = (vals < -1.0) | (vals > 1.0)
    if out_of_range.any():
        if values_mode != "clip":
            i = int(np.nonzero(out_of_range)[0][0])
            raise ValueError(f"values: must be in [-1, 1] (got {vals[i]!r}); plan with values = \"clip\" to clip them")
        vals = np.clip(vals, -1.0, 1.0)
    if keys.size > 1:
        owner = np.repeat(np.arange(indptr.shape[0] - 1, dtype=np.int64), np.diff(indptr))
        combo = owner * d + keys
        combo.sort()
        if (np.diff(combo) == 0).any():
            u = int(combo[np.nonzero(np.diff(combo) == 0)[0][0]] // d)
            raise ValueError(f"user {u}: keys must be distinct within a user (a user holds a set of pairs)")
    return KeyValueUsers(indptr, keys, vals), dropped


def sample_pairs(users: KeyValueUsers, domain_size: int, padding_length: int,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Padding-and-sampling for key-value data with value discretisation (PCKV Algorithm 1).

    Each user draws ``B ~ Bernoulli(|S|/max(|S|, L))``; if ``B = 1`` one of her pairs
    uniformly, else a dummy key uniformly from ``d..d+L-1`` (0-based) with value 0;
    the value is then discretised to ``+1`` w.p. ``(1+v)/2`` and ``-1`` otherwise.
    Implemented exactly with one uniform integer in ``0..max(|S|, L)-1`` per user.

    Parameters
    ----------
    users : KeyValueUsers
        Already validated (keys in ``0..d-1``, values in [-1, 1]).
    domain_size, padding_length : int
        ``d`` and ``L``.
    rng : numpy.random.Generator

    Returns
    -------
    keys : ndarray of int64, shape (n,)
        Sampled key in ``0..d+L-1`` (``>= d`` is a dummy key).
    values : ndarray of int8, shape (n,)
        Discretised value in {-1, +1}.

    References
    ----------
    PCKV, Algorithm 1.
    """
    check_rng(rng)
    d, L = int(domain_size), int(padding_length)
    sizes = np.diff(users.indptr)
    n = sizes.shape[0]
    j = uniform_below(rng, np.maximum(sizes, L))
    real = j < sizes
    pos = np.where(real, users.indptr[:-1] + j, 0)
    if users.keys.size:
        k_real = users.keys[np.minimum(pos, users.keys.size - 1)]
        v_real = users.values[np.minimum(pos, users.keys.size - 1)]
    else:
        k_real = np.zeros(n, np.int64)
        v_real = np.zeros(n, np.float64)
    dummy = d + uniform_below(rng, L, n)
    keys = np.where(real, k_real, dummy)
    vstar = np.where(real, v_real, 0.0)
    up = uniform_unit(rng, n) < (1.0 + vstar) / 2.0
    values = np.where(up, 1, -1).astype(np.int8)
    return keys, values


def random_signs(rng: np.random.Generator, size: int) -> np.ndarray:
    """``size`` independent fair signs in {-1, +1} (int8), one uniform bit each
    (:func:`mechanisms._sampling.uniform_bits`: exact under every bit generator)."""
    bits = uniform_bits(rng, size)
    return (bits.astype(np.int8) << 1) - 1


def key_budget(mechanism: str, a: float, b: float) -> float:
    """``epsilon1`` in nats: PCKV-UE ``ln(a(1-b)/(b(1-a)))`` (eq. 2), PCKV-GRR ``ln(a/b)`` (eq. 5)."""
    if mechanism == "pckv-grr":
        return float(np.log(a) - np.log(b))
    return float(np.log(a) + np.log1p(-b) - np.log(b) - np.log1p(-a))


def value_budget(p: float) -> float:
    """``epsilon2 = ln(p/(1-p))`` in nats (eq. 2 / eq. 5)."""
    return float(np.log(p) - np.log1p(-p))


def composed_ratio(mechanism: str, a: float, b: float, p: float, domain_size: int, padding_length: int) -> float:
    r"""``e^epsilon``: the worst-case output-probability ratio of the numbers (float64).

    * PCKV-UE (App. A): ``(2pa/b) / min{(1-a)/(1-b), 2(1-p)a/b}``;
    * PCKV-GRR (App. B, ``b = (1-a)/(d+L-1)``):
      ``(ap/L + (1-1/L) b/2) / min{a(1-p)/L + (1-1/L) b/2, b/2}``.

    References
    ----------
    PCKV, Theorem 2 eq. (3), Theorem 3 eq. (6).
    """
    L = float(padding_length)
    if mechanism == "pckv-ue":
        upper = 2.0 * p * a / b
        lower = min((1.0 - a) / (1.0 - b), 2.0 * (1.0 - p) * a / b)
        return upper / lower
    b = (1.0 - a) / (int(domain_size) + int(padding_length) - 1)
    upper = a * p / L + (1.0 - 1.0 / L) * b / 2.0
    lower = min(a * (1.0 - p) / L + (1.0 - 1.0 / L) * b / 2.0, b / 2.0)
    return upper / lower


def exact_ratios(mechanism: str, a: float, b: float, p: float, domain_size: int,
                 padding_length: int) -> dict[str, Fraction]:
    """``e^epsilon``, ``e^{epsilon1}``, ``e^{epsilon2}`` of the numbers as exact rationals (floats are dyadic).

    Same formulas as :func:`composed_ratio`, :func:`key_budget`, :func:`value_budget`; PCKV-GRR
    uses ``b = (1-a)/(d+L-1)`` exactly.

    References
    ----------
    PCKV, Theorems 2-3 (App. A-B), eq. (2), (5).
    """
    A, P, L = Fraction(a), Fraction(p), Fraction(int(padding_length))
    if mechanism == "pckv-ue":
        B = Fraction(b)
        composed = (2 * P * A / B) / min((1 - A) / (1 - B), 2 * (1 - P) * A / B)
        key = A * (1 - B) / (B * (1 - A))
    else:
        B = (1 - A) / (int(domain_size) + int(padding_length) - 1)
        composed = (A * P / L + (1 - 1 / L) * B / 2) / min(A * (1 - P) / L + (1 - 1 / L) * B / 2, B / 2)
        key = A / B
    return {"epsilon": composed, "epsilon1": key, "epsilon2": P / (1 - P)}


def exceeds_exactly(ratio: Fraction, claim: float) -> bool:
    """True when ``ln(ratio) > claim``, decided with 60-digit decimal logarithms (no tolerance).

    A claim one float step below the exact value is refused; a 60-digit logarithm is off by
    about 1e-59, so a claim within 1e-50 nats above the value is refused too (the safe side).
    """
    if ratio <= 1:
        return False
    with localcontext() as ctx:
        ctx.prec = 60
        log_ratio = log_fraction(ratio)
        return log_ratio - Decimal(float(claim)) > Decimal("-1e-50")


def estimate_from_counts(n: int, n1: npt.ArrayLike, n2: npt.ArrayLike, a: float, b: float, p: float,
                         padding_length: int,
                         method: str = "corrected") -> Estimate:
    r"""Frequency and mean estimates from the per-key counts (PCKV Sec. 5.3).

    Parameters
    ----------
    n : int
        Number of users (reports), >= 1.
    n1, n2 : array_like of int, shape (d,)
        Counts of reports supporting ``<k, 1>`` and ``<k, -1>``.
    a, b, p : float
        The plan's probabilities (for PCKV-GRR ``b = (1-a)/(d'-1)``).
    padding_length : int
    method : {"corrected", "empirical"}
        ``"empirical"``: estimators (7)-(8), unbiased/consistent but possibly outside
        [0, 1] / [-1, 1] (``nan``/``inf`` where (8) divides by zero). ``"corrected"``
        (default): Algorithm 4 - ``f`` clipped to ``[1/n, 1]``, Lemma 1 eq. (13) counts
        clipped to ``[0, n f / L]``, mean by eq. (14).

    Returns
    -------
    Estimate
        ``frequency`` (fractions of users, shape (d,)), ``mean`` (value units, shape (d,)),
        ``std_error`` of the frequency from eq. (9) at the clipped estimate.

    References
    ----------
    PCKV, eq. (7)-(9), Lemma 1 eq. (13), Algorithm 4, eq. (14).
    """
    if method not in ESTIMATORS:
        raise ValueError(f"method: must be one of {list(ESTIMATORS)} for this mechanism (got {method!r})")
    L = float(padding_length)
    n1 = np.asarray(n1, dtype=np.float64)
    n2 = np.asarray(n2, dtype=np.float64)
    nf = float(n)
    f = ((n1 + n2) / nf - b) / (a - b) * L                                  # (7)
    f_clip = np.clip(f, 0.0, 1.0)
    var = L * L * b * (1 - b) / (nf * (a - b) ** 2) + L * f_clip * (1 - a - b) / (nf * (a - b))   # (9)
    std = np.sqrt(np.maximum(var, 0.0))
    c0, c1 = affine_variance(b, a, L, sampling=True)
    fvar = FrequencyVariance(f, c0, c1, 0.0, int(n), source="PCKV eq. (9) plus the key-sampling variance "
                             "(Algorithm 1; sets of at most L pairs)")
    if method == "empirical":
        with np.errstate(divide="ignore", invalid="ignore"):
            m = (n1 - n2) * (a - b) / (a * (2 * p - 1) * (n1 + n2 - nf * b))  # (8)
        return Estimate(frequency=f, mean=m, method=method, n=int(n), std_error=std, variance=fvar,
                        mean_variance=mean_variance(f, m, a, b, p, L, nf))
    f, m = corrected_mean(n1, n2, nf, a, b, p, L)
    return Estimate(frequency=f, mean=m, method=method, n=int(n), std_error=std, variance=fvar,
                    mean_variance=mean_variance(f, m, a, b, p, L, nf))


def corrected_mean(n1: np.ndarray, n2: np.ndarray, n: float, a: float, b: float, p: float, padding_length: float
                   ) -> tuple[np.ndarray, np.ndarray]:
    r"""Algorithm 4's frequency and mean estimates from (real-valued) counts: the one copy.

    ``f`` by eq. (7) clipped to ``[1/n, 1]``; the calibrated counts of Lemma 1 eq. (13) clipped to
    ``[0, n f / L]``; the mean by eq. (14), in ``[-1, 1]``. The runtime's ``"corrected"`` estimate
    (:func:`estimate_from_counts`) and the planner's prediction of its error
    (``ldpplan.solvers.pckv.corrected_mean_mse``, which integrates it over a normal model of the
    counts) both call this.

    Parameters
    ----------
    n1, n2 : array_like of float, same shape
        Counts of reports supporting ``<k, 1>`` and ``<k, -1>``.
    n : float
        Users.
    a, b, p : float
        The perturbation probabilities.
    padding_length : float
        ``L``.

    Returns
    -------
    (f, m) : tuple of ndarray
        Frequencies (fractions of users) and means (value units), the shape of ``n1``.

    References
    ----------
    PCKV (Gu et al., USENIX Security 2020), eq. (7), Lemma 1 eq. (13), Algorithm 4, eq. (14).
    """
    L = float(padding_length)
    f = np.clip(((n1 + n2) / n - b) / (a - b) * L, 1.0 / n, 1.0)           # (7), clipped
    alpha, beta = a * p - b / 2.0, a * (1 - p) - b / 2.0                    # A of (13)
    det = alpha * alpha - beta * beta
    r1, r2 = n1 - n * b / 2.0, n2 - n * b / 2.0
    cap = n * f / L
    hat1 = np.clip((alpha * r1 - beta * r2) / det, 0.0, cap)
    hat2 = np.clip((alpha * r2 - beta * r1) / det, 0.0, cap)
    return f, L * (hat1 - hat2) / (n * f)                                    # (14)


def theorem4_mean_terms(sampled_frequencies: npt.ArrayLike, means: npt.ArrayLike, a: float, b: float, p: float,
                        padding_length: float,
                        n: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Theorem 4's variance (11) and bias (10) of the mean estimate (8): the one copy.

    With ``delta = (a-b) f_s / L`` and ``gamma = a (2p-1) f_s / L`` (eq. (12)):
    ``Var = (b + delta)/(n gamma^2) + (b (1-b) - delta)/(n delta^2) m^2`` and
    ``bias = m (1 - b - delta) b/(n delta^2)``. The runtime's standard errors (:func:`mean_variance`)
    and the planner's predictions (``ldpplan.solvers.pckv.theorem4_mse``) both take them here.

    Parameters: as :func:`mean_variance`'s, unclipped: ``sampled_frequencies`` are ``f_s`` (``0``
    gives ``inf``/``nan``), ``means`` the ``m`` in [-1, 1] (shape ``(d,)`` both).

    Returns
    -------
    (var, bias) : tuple of ndarray, shape (d,)
        Squared value units and value units.

    References
    ----------
    PCKV (Gu et al., USENIX Security 2020), Theorem 4, eq. (10)-(12).
    """
    L = float(padding_length)
    fs = np.asarray(sampled_frequencies, dtype=np.float64)
    m = np.asarray(means, dtype=np.float64)
    delta = (a - b) * fs / L
    gamma = a * (2 * p - 1) * fs / L
    with np.errstate(divide="ignore", invalid="ignore"):
        var = (b + delta) / (n * gamma ** 2) + (b * (1 - b) - delta) / (n * delta ** 2) * m ** 2
        bias = m * (1 - b - delta) * b / (n * delta ** 2)
    return var, bias


def mean_variance(f: npt.ArrayLike, m: npt.ArrayLike, a: float, b: float, p: float, padding_length: float,
                  n: float) -> MeanVariance:
    r"""Root-MSE of the mean estimates by Theorem 4 at the estimates (delta method, eq. (10)-(12)).

    ``se_k = sqrt(Var (11) + bias (10)^2)`` with ``delta = (a-b) f_k / L``, ``gamma = a (2p-1) f_k / L``
    at ``f_k`` clipped to ``[1/n, 1]`` and ``m_k`` clipped to ``[-1, 1]`` (``m_k = 0`` where not finite).
    Keys whose estimated frequency is near 0 get a huge ``se`` (their intervals are all of [-1, 1]).

    Parameters
    ----------
    f, m : array_like, shape (d,)
        Estimated frequencies and means.
    a, b, p : float
    padding_length : float
    n : float
        Users.

    Returns
    -------
    MeanVariance

    References
    ----------
    PCKV, Theorem 4, eq. (10)-(12).
    """
    L = float(padding_length)
    fs = np.clip(np.asarray(f, dtype=np.float64), 1.0 / n, 1.0)
    mm = np.asarray(m, dtype=np.float64)
    mm = np.clip(np.where(np.isfinite(mm), mm, 0.0), -1.0, 1.0)
    var, bias = theorem4_mean_terms(fs, mm, a, b, p, L, n)
    return MeanVariance(np.sqrt(np.maximum(var, 0.0) + bias * bias), source="PCKV Theorem 4, eq. (10)-(12)")

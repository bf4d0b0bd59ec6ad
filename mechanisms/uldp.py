"""Client/server runtime of utility-optimized LDP mechanisms (numpy only).

Murakami & Kawamoto, "Utility-Optimized Local Differential Privacy Mechanisms for
Distribution Estimation" (USENIX Security 2019, full version):

* :class:`UtilityOptimizedRR` -- the (X_S, epsilon)-uRR of Def. 3 (eq. 6). Output
  alphabet ``Y = X``; protected outputs ``Y_P = X_S``, invertible outputs ``Y_I = X_N``.
* :class:`UtilityOptimizedRAPPOR` -- the (X_S, theta, epsilon)-uRAP of Def. 4 (eqs. 8-10).
  Reports are bit vectors of length ``|X|``; a report with a non-sensitive bit set is
  invertible (it reveals that x), all others are protected (eq. 7).
* :class:`BasicRAPPOR` -- the basic one-time RAPPOR (symmetric unary encoding, Sec. 2.4),
  the baseline of the paper's experiments; it is the uRAP with ``X_S = X``.
* :class:`PersonalizedULDP` -- the PUM of Sec. 5: a per-user pre-processor (kept on the
  client) maps the user's own sensitive items to one of ``kappa`` semantic-tag bots, then a
  common uRR/uRAP over ``Z = X + bots`` (with ``Z_S = X_S + bots``) perturbs; the server
  uses eq. (21).

Estimators (all return **frequencies** on ``X``): ``"empirical"`` (eq. 3, closed forms
35 and 41), ``"threshold"`` (empirical + Bonferroni significance threshold,
:func:`mechanisms._estimators.significance_threshold`) and ``"em"`` (EM reconstruction,
the MLE on the simplex, :func:`mechanisms._estimators.em_simplex`, SQUAREM-accelerated
with a monotonicity guard and warm-started from emp+thr as in the paper's Sec. 6.2).

All probabilities come from the plan as multiples of ``2**-48`` and are sampled exactly:
a Bernoulli with :func:`mechanisms._sampling.bernoulli` and, for "another sensitive
symbol uniformly", :meth:`numpy.random.Generator.integers` (exactly uniform), so every
output has exactly the probability the verifier checked.
"""
from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from . import _sampling
from ._estimators import EMResult, em_simplex, em_warm_start, significance_threshold
from ._plan import PlanError, read_plan, require

__all__ = [
    "UtilityOptimizedRR", "UtilityOptimizedRAPPOR", "BasicRAPPOR", "PersonalizedULDP", "PreProcessor",
    "ESTIMATION_METHODS",
]

#: Names accepted by ``estimate(..., method=...)``.
ESTIMATION_METHODS = ("empirical", "threshold", "em")

#: Default EM stopping rule (l1 change between iterations) and iteration cap.
EM_TOL = 1e-10
EM_MAX_ITER = 100000


def _labels(domain) -> list[str]:
    if isinstance(domain, (int, np.integer)):
        if int(domain) < 1:
            raise ValueError(f"domain size must be >= 1 (got {domain})")
        return [str(i) for i in range(int(domain))]
    labels = [str(v) for v in domain]
    if not labels or len(set(labels)) != len(labels):
        raise ValueError("domain labels must be non-empty and distinct")
    return labels


def _sensitive_mask(sensitive, k: int) -> np.ndarray:
    idx = np.asarray(sensitive, dtype=np.int64).reshape(-1)
    if idx.size == 0 or idx.min() < 0 or idx.max() >= k or np.unique(idx).size != idx.size:
        raise ValueError(f"sensitive must be distinct indices in [0, {k}) with at least one entry")
    mask = np.zeros(k, dtype=bool)
    mask[idx] = True
    return mask


def _grid_prob(value, name: str) -> float:
    v = float(value)
    if not _sampling.on_grid(v):
        raise ValueError(f"{name} must be a probability on the 2^-48 grid (got {value!r})")
    return v


def _items(items, k: int) -> np.ndarray:
    x = np.asarray(items)
    if x.ndim != 1 or (x.size and not np.issubdtype(x.dtype, np.integer)):
        raise ValueError("items must be a 1-D integer array of indices into the domain")
    x = x.astype(np.int64, copy=False)
    if x.size and (x.min() < 0 or x.max() >= k):
        raise ValueError(f"items must be indices in [0, {k})")
    return x


def _method(method: str) -> str:
    if method not in ESTIMATION_METHODS:
        raise ValueError(f"method must be one of {ESTIMATION_METHODS} (got {method!r})")
    return method


# --------------------------------------------------------------------------- uRR
class UtilityOptimizedRR:
    """The (X_S, epsilon)-utility-optimized randomized response (ULDP Def. 3).

    ``Q(y|x) = c1`` (x in X_S, y = x), ``c2`` (x in X_S, y in X_S minus x), ``c2``
    (x in X_N, y in X_S), ``c3`` (x in X_N, y = x), 0 otherwise (eq. 6).

    Parameters
    ----------
    domain : int or sequence of str
        ``|X|`` or the labels of X.
    sensitive : sequence of int
        Indices of X_S in the domain.
    c1, c2, c3 : float
        Grid probabilities (multiples of 2^-48) with ``c1 + (|X_S| - 1) c2 = 1`` and
        ``|X_S| c2 + c3 = 1``.
    epsilon : float, optional
        The budget (nats) the plan guarantees; informational.

    Raises
    ------
    ValueError
        Off-grid probabilities, rows that do not sum to one, bad indices.
    """

    mechanism = "urr"

    def __init__(self, domain, sensitive, c1: float, c2: float, c3: float, epsilon: float | None = None) -> None:
        self.domain = _labels(domain)
        k = len(self.domain)
        self.sensitive_mask = _sensitive_mask(sensitive, k)
        self.sensitive = np.flatnonzero(self.sensitive_mask)
        self.c1, self.c2, self.c3 = (_grid_prob(c1, "c1"), _grid_prob(c2, "c2"), _grid_prob(c3, "c3"))
        ks = self.sensitive.size
        if self.c1 + (ks - 1) * self.c2 != 1.0 or (ks < k and ks * self.c2 + self.c3 != 1.0):
            raise ValueError("uRR rows must sum to one: c1 + (|X_S|-1) c2 = 1 and |X_S| c2 + c3 = 1")
        if self.c1 <= self.c2 or (ks < k and self.c3 <= 0):
            raise ValueError("uRR needs c1 > c2 and c3 > 0 (epsilon > 0)")
        self.epsilon = None if epsilon is None else float(epsilon)

    def __repr__(self) -> str:
        return (f"UtilityOptimizedRR(|X|={len(self.domain)}, |X_S|={self.sensitive.size}, "
                f"c1={self.c1:.6g}, c2={self.c2:.6g}, c3={self.c3:.6g})")

    @property
    def domain_size(self) -> int:
        """``|X|``."""
        return len(self.domain)

    @classmethod
    def from_plan(cls, plan) -> "UtilityOptimizedRR":
        """Build from a ``urr`` plan (``params.c1..c3``, ``params.sensitive``, ``params.labels``)."""
        data = read_plan(plan)
        params = require(data, "params")
        try:
            return cls(require(data, "params.labels"), require(data, "params.sensitive"), params.get("c1"),
                       params.get("c2"), params.get("c3"), params.get("epsilon"))
        except (TypeError, ValueError) as exc:
            raise PlanError(f"params: {exc}") from None

    def channel_matrix(self) -> np.ndarray:
        """``Q[x, y]``, shape (|X|, |X|) (eq. 6)."""
        k = self.domain_size
        s = self.sensitive_mask
        q = np.zeros((k, k))
        q[np.ix_(s, s)] = self.c2
        q[np.ix_(~s, s)] = self.c2
        diag = np.where(s, self.c1, self.c3)
        q[np.arange(k), np.arange(k)] = diag
        return q

    def perturb(self, items, rng: np.random.Generator) -> np.ndarray:
        """Perturb each user's item.

        Parameters
        ----------
        items : int array, shape (n,)
            Indices into ``domain``.
        rng : numpy.random.Generator

        Returns
        -------
        ndarray of int64, shape (n,)
            Reported indices (``Y = X``).
        """
        _sampling.check_rng(rng)
        x = _items(items, self.domain_size)
        sens = self.sensitive_mask[x]
        keep = _sampling.bernoulli(rng, np.where(sens, self.c1, self.c3))
        out = x.copy()
        move = ~keep
        ks = self.sensitive.size
        # position of x inside X_S (for sensitive inputs)
        pos = np.cumsum(self.sensitive_mask) - 1
        ms = move & sens
        if ks > 1 and ms.any():
            r = rng.integers(0, ks - 1, size=int(ms.sum()))
            r = r + (r >= pos[x[ms]])  # uniform over X_S minus {x}: each with (1 - c1)/(ks - 1) = c2
            out[ms] = self.sensitive[r]
        mn = move & ~sens
        if mn.any():
            out[mn] = self.sensitive[rng.integers(0, ks, size=int(mn.sum()))]  # each with (1-c3)/ks = c2
        return out

    def aggregate(self, reports) -> np.ndarray:
        """Counts of each reported value, shape (|X|,), int64."""
        y = _items(reports, self.domain_size)
        return np.bincount(y, minlength=self.domain_size)

    def _alpha_beta(self) -> tuple[np.ndarray, np.ndarray]:
        s = self.sensitive_mask
        alpha = np.where(s, self.c2, 0.0)
        beta = np.where(s, self.c1 - self.c2, self.c3)
        return alpha, beta

    def variance_per_user(self, freq=None) -> np.ndarray:
        """``n Var(p_hat)`` of the empirical estimate at ``freq`` (default: 0, the null), shape (|X|,)."""
        alpha, beta = self._alpha_beta()
        p = np.zeros(self.domain_size) if freq is None else np.asarray(freq, dtype=np.float64)
        m = alpha + beta * p
        return m * (1 - m) / beta**2

    def estimate_from_counts(self, counts, method: str = "empirical", *, alpha: float = 0.05,
                             tol: float = EM_TOL, max_iter: int = EM_MAX_ITER) -> np.ndarray:
        """Estimate p from the report counts (see :meth:`estimate`)."""
        return self._estimate(np.asarray(counts, dtype=np.float64), _method(method), alpha, tol, max_iter)[0]

    def _estimate(self, counts: np.ndarray, method: str, alpha: float, tol: float, max_iter: int):
        if counts.shape != (self.domain_size,) or np.any(counts < 0):
            raise ValueError(f"counts must be a non-negative ({self.domain_size},) array")
        n = float(counts.sum())
        if n <= 0:
            raise ValueError("no reports")
        a, b = self._alpha_beta()
        emp = (counts / n - a) / b  # eq. (35)
        if method == "empirical":
            return emp, None
        thr = significance_threshold(emp, int(round(n)), self.variance_per_user(), alpha)
        if method == "threshold":
            return thr, None
        res = em_simplex(self.channel_matrix().T, counts, tol=tol, max_iter=max_iter, init=em_warm_start(thr),
                         accelerate=True)
        return res.freq.copy(), res

    def estimate(self, reports, method: str = "empirical", *, alpha: float = 0.05,
                 tol: float = EM_TOL, max_iter: int = EM_MAX_ITER) -> np.ndarray:
        """Estimate the input distribution.

        Parameters
        ----------
        reports : int array, shape (n,)
            Output of :meth:`perturb`.
        method : {"empirical", "threshold", "em"}
            Empirical estimate (eq. 35, may be negative), empirical + Bonferroni
            significance threshold at level ``alpha``, or EM reconstruction (MLE on the
            simplex, stopped when the l1 change is ``<= tol``).

        Returns
        -------
        ndarray of float, shape (|X|,)
            Frequencies.
        """
        return self.estimate_from_counts(self.aggregate(reports), method, alpha=alpha, tol=tol, max_iter=max_iter)

    def estimate_em(self, reports, *, tol: float = EM_TOL, max_iter: int = EM_MAX_ITER,
                    counts=None) -> EMResult:
        """EM reconstruction with its diagnostics (iterations, convergence, log-likelihood)."""
        c = self.aggregate(reports) if counts is None else np.asarray(counts, dtype=np.float64)
        return self._estimate(np.asarray(c, dtype=np.float64), "em", 0.05, tol, max_iter)[1]


# --------------------------------------------------------------------------- uRAP
class UtilityOptimizedRAPPOR:
    """The (X_S, theta, epsilon)-utility-optimized RAPPOR (ULDP Def. 4).

    Bit ``j`` of the report for input ``x_i`` is 1 with probability ``theta`` (j = i in
    X_S), ``d1`` (j in X_S, j != i), ``1 - d2`` (j = i in X_N) and 0 (j in X_N, j != i)
    (eqs. 9-10).

    Parameters
    ----------
    domain : int or sequence of str
    sensitive : sequence of int
        Indices of X_S.
    theta, d1, d2 : float
        Grid probabilities.
    epsilon : float, optional
        Informational.

    Raises
    ------
    ValueError
        Off-grid probabilities, ``theta <= d1`` or ``d2 >= 1`` with X_N non-empty.
    """

    mechanism = "urap"

    def __init__(self, domain, sensitive, theta: float, d1: float, d2: float, epsilon: float | None = None) -> None:
        self.domain = _labels(domain)
        k = len(self.domain)
        self.sensitive_mask = _sensitive_mask(sensitive, k)
        self.sensitive = np.flatnonzero(self.sensitive_mask)
        self.nonsensitive = np.flatnonzero(~self.sensitive_mask)
        self.theta, self.d1, self.d2 = (_grid_prob(theta, "theta"), _grid_prob(d1, "d1"), _grid_prob(d2, "d2"))
        if self.theta <= self.d1 or (self.nonsensitive.size and self.d2 >= 1.0):
            raise ValueError("uRAP needs theta > d1 and d2 < 1 (epsilon > 0)")
        self.epsilon = None if epsilon is None else float(epsilon)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(|X|={len(self.domain)}, |X_S|={self.sensitive.size}, "
                f"theta={self.theta:.6g}, d1={self.d1:.6g}, d2={self.d2:.6g})")

    @property
    def domain_size(self) -> int:
        """``|X|``."""
        return len(self.domain)

    @classmethod
    def from_plan(cls, plan) -> "UtilityOptimizedRAPPOR":
        """Build from a ``urap`` plan (``params.theta, d1, d2``, ``params.sensitive``, ``params.labels``)."""
        data = read_plan(plan)
        params = require(data, "params")
        try:
            return cls(require(data, "params.labels"), require(data, "params.sensitive"), params.get("theta"),
                       params.get("d1"), params.get("d2"), params.get("epsilon"))
        except (TypeError, ValueError) as exc:
            raise PlanError(f"params: {exc}") from None

    def bit_probabilities(self) -> np.ndarray:
        """``P[i, j] = Pr(y_j = 1 | x_i)``, shape (|X|, |X|) (eqs. 9-10)."""
        k = self.domain_size
        s = self.sensitive_mask
        p = np.zeros((k, k))
        p[:, s] = self.d1
        diag = np.where(s, self.theta, 1.0 - self.d2)
        p[np.arange(k), np.arange(k)] = diag
        return p

    def perturb(self, items, rng: np.random.Generator) -> np.ndarray:
        """Perturb each user's item.

        Parameters
        ----------
        items : int array, shape (n,)
        rng : numpy.random.Generator

        Returns
        -------
        ndarray of bool, shape (n, |X|)
            The report bit vectors.
        """
        _sampling.check_rng(rng)
        x = _items(items, self.domain_size)
        n = x.size
        y = np.zeros((n, self.domain_size), dtype=bool)
        if self.sensitive.size:
            y[:, self.sensitive] = _sampling.bernoulli_columns(rng, np.full(self.sensitive.size, self.d1), n)
        own = _sampling.bernoulli(rng, np.where(self.sensitive_mask[x], self.theta, 1.0 - self.d2))
        y[np.arange(n), x] = own
        return y

    def _reports(self, reports) -> np.ndarray:
        y = np.asarray(reports)
        if y.ndim != 2 or y.shape[1] != self.domain_size:
            raise ValueError(f"reports must be an (n, {self.domain_size}) 0/1 array")
        return y.astype(bool, copy=False)

    def aggregate(self, reports) -> np.ndarray:
        """Number of reports with bit j set, shape (|X|,), int64."""
        return self._reports(reports).sum(axis=0, dtype=np.int64)

    def _alpha_beta(self) -> tuple[np.ndarray, np.ndarray]:
        s = self.sensitive_mask
        return np.where(s, self.d1, 0.0), np.where(s, self.theta - self.d1, 1.0 - self.d2)

    def variance_per_user(self, freq=None) -> np.ndarray:
        """``n Var(p_hat)`` of the empirical estimate at ``freq`` (default 0, the null), shape (|X|,)."""
        alpha, beta = self._alpha_beta()
        p = np.zeros(self.domain_size) if freq is None else np.asarray(freq, dtype=np.float64)
        m = alpha + beta * p
        return m * (1 - m) / beta**2

    def empirical_from_counts(self, bit_counts, n: int) -> np.ndarray:
        """Eq. (41) for the actual parameters: ``p_hat_j = (m_hat_j - alpha_j) / beta_j``."""
        a, b = self._alpha_beta()
        return (np.asarray(bit_counts, dtype=np.float64) / int(n) - a) / b

    def likelihood(self, reports) -> tuple[np.ndarray, np.ndarray]:
        """Grouped likelihood for EM: distinct reports (up to a per-row constant) and counts.

        Invertible reports (a non-sensitive bit set) are grouped by the input they reveal
        (row = unit vector); protected reports are grouped by their sensitive-bit pattern,
        with ``L[g, k] = theta/d1`` or ``(1-theta)/(1-d1)`` (k in X_S, bit set or not) and
        ``d2`` (k in X_N), the common factor ``prod_j Pr(y_j | j != x)`` dropped.

        Returns
        -------
        likelihood : ndarray, shape (G, |X|)
        weights : ndarray, shape (G,)
        """
        y = self._reports(reports)
        k = self.domain_size
        rows, weights = [], []
        if self.nonsensitive.size:
            ybits_n = y[:, self.nonsensitive]
            inv = ybits_n.any(axis=1)
            if inv.any():
                which = self.nonsensitive[np.argmax(ybits_n[inv], axis=1)]
                cnt = np.bincount(which, minlength=k)
                hit = np.flatnonzero(cnt)
                unit = np.zeros((hit.size, k))
                unit[np.arange(hit.size), hit] = 1.0
                rows.append(unit)
                weights.append(cnt[hit].astype(np.float64))
            prot = y[~inv]
        else:
            prot = y
        if prot.shape[0]:
            pattern = prot[:, self.sensitive]
            uniq, cnt = np.unique(np.packbits(pattern, axis=1), axis=0, return_counts=True)
            bits = np.unpackbits(uniq, axis=1, count=self.sensitive.size).astype(bool)
            lik = np.empty((uniq.shape[0], k))
            lik[:, self.nonsensitive] = self.d2
            one = self.theta / self.d1 if self.d1 > 0 else 1.0
            zero = (1.0 - self.theta) / (1.0 - self.d1)
            lik[:, self.sensitive] = np.where(bits, one, zero)
            if self.d1 == 0:  # then a set sensitive bit can only come from that input
                lik[:, self.sensitive] = np.where(bits, 1.0, zero)
            rows.append(lik)
            weights.append(cnt.astype(np.float64))
        return np.vstack(rows), np.concatenate(weights)

    def estimate(self, reports, method: str = "empirical", *, alpha: float = 0.05,
                 tol: float = EM_TOL, max_iter: int = EM_MAX_ITER) -> np.ndarray:
        """Estimate the input distribution (frequencies, shape (|X|,)).

        ``method``: ``"empirical"`` (eq. 41), ``"threshold"`` (+ Bonferroni significance
        threshold at level ``alpha``), ``"em"`` (EM reconstruction, l1 tolerance ``tol``).
        """
        _method(method)
        y = self._reports(reports)
        n = y.shape[0]
        if n == 0:
            raise ValueError("no reports")
        emp = self.empirical_from_counts(y.sum(axis=0), n)
        if method == "empirical":
            return emp
        thr = significance_threshold(emp, n, self.variance_per_user(), alpha)
        if method == "threshold":
            return thr
        return self.estimate_em(y, tol=tol, max_iter=max_iter, init=thr).freq.copy()

    def estimate_em(self, reports, *, tol: float = EM_TOL, max_iter: int = EM_MAX_ITER, init=None) -> EMResult:
        """EM reconstruction with diagnostics (warm start from emp+thr by default)."""
        y = self._reports(reports)
        if init is None:
            emp = self.empirical_from_counts(y.sum(axis=0), y.shape[0])
            init = significance_threshold(emp, y.shape[0], self.variance_per_user())
        lik, w = self.likelihood(y)
        return em_simplex(lik, w, tol=tol, max_iter=max_iter, init=em_warm_start(np.asarray(init)), accelerate=True)


class BasicRAPPOR(UtilityOptimizedRAPPOR):
    """Basic one-time RAPPOR (symmetric unary encoding; ULDP paper Sec. 2.4).

    Every bit is kept with probability ``theta`` and flipped with ``psi = 1 - theta``;
    with ``theta = e^(eps/2) / (e^(eps/2) + 1)`` it is epsilon-LDP. It equals the uRAP
    with ``X_S = X`` (``d1 = psi``).

    Parameters
    ----------
    domain : int or sequence of str
    theta, psi : float
        Grid probabilities, ``theta > psi``.
    epsilon : float, optional
    """

    mechanism = "rappor"

    def __init__(self, domain, theta: float, psi: float, epsilon: float | None = None) -> None:
        labels = _labels(domain)
        super().__init__(labels, np.arange(len(labels)), theta, psi, 0.0, epsilon)
        self.psi = self.d1


# --------------------------------------------------------------------------- PUM
class PreProcessor:
    """One user's private pre-processor ``f_pre`` (ULDP eq. 19), kept on the client.

    Parameters
    ----------
    mapping : mapping of int -> int
        The user's own sensitive items ``X_{S,k}`` -> tag index ``k`` (0-based).
    """

    def __init__(self, mapping: Mapping[int, int]) -> None:
        self.mapping = {int(x): int(t) for x, t in dict(mapping).items()}

    def tag_of(self, item: int) -> int:
        """Tag index of ``item`` for this user, or -1 if it is not one of her sensitive items."""
        return self.mapping.get(int(item), -1)


class PersonalizedULDP:
    """PUM with kappa semantic tags (ULDP Sec. 5): ``Q^(i) = Q_cmn o f_pre^(i)``.

    The intermediate alphabet is ``Z = X + (bot_1..bot_kappa)`` (indices ``|X| ..
    |X| + kappa - 1``) with ``Z_S = X_S + bots``; ``Q_cmn`` is a uRR or uRAP over Z.

    Parameters
    ----------
    common : UtilityOptimizedRR or UtilityOptimizedRAPPOR
        The common mechanism over Z (its domain is ``|X| + kappa`` long and its
        sensitive set contains every bot).
    tags : sequence of str
        The kappa semantic tags, in bot order.
    background : mapping of str -> array (|X|,), optional
        Background distributions ``pi_hat_k`` per tag for eq. (21); tags without one use
        the proportional fallback (Sec. 5.3).
    """

    mechanism = "pum"

    def __init__(self, common, tags: Sequence[str], background: Mapping[str, Any] | None = None) -> None:
        self.common = common
        self.tags = [str(t) for t in tags]
        kappa = len(self.tags)
        if kappa < 1:
            raise ValueError("PUM needs at least one semantic tag")
        self.domain_size = common.domain_size - kappa
        if self.domain_size < 1 or not common.sensitive_mask[self.domain_size:].all():
            raise ValueError("the common mechanism must cover X + bots with every bot sensitive")
        self.domain = common.domain[: self.domain_size]
        self.background = self._background(background or {})

    def _background(self, background: Mapping[str, Any]) -> dict[str, np.ndarray]:
        out = {}
        for tag, dist in background.items():
            if dist is None:
                continue
            if tag not in self.tags:
                raise ValueError(f"background: unknown tag {tag!r}")
            d = np.asarray(dist, dtype=np.float64)
            if d.shape != (self.domain_size,) or np.any(d < 0) or not math.isclose(d.sum(), 1.0, abs_tol=1e-9):
                raise ValueError(f"background[{tag!r}] must be a distribution over the {self.domain_size} items")
            out[tag] = d
        return out

    @classmethod
    def from_plan(cls, plan) -> "PersonalizedULDP":
        """Build from a ``pum`` plan (``params.common``, the common mechanism's parameters over Z)."""
        data = read_plan(plan)
        params = require(data, "params")
        kind = params.get("common")
        try:
            z_labels = list(require(data, "params.labels")) + [f"bot:{t}" for t in require(data, "params.tags")]
            z_sensitive = list(require(data, "params.intermediate_sensitive"))
            if kind == "urr":
                common = UtilityOptimizedRR(z_labels, z_sensitive, params.get("c1"), params.get("c2"),
                                            params.get("c3"), params.get("epsilon"))
            elif kind == "urap":
                common = UtilityOptimizedRAPPOR(z_labels, z_sensitive, params.get("theta"), params.get("d1"),
                                                params.get("d2"), params.get("epsilon"))
            else:
                raise PlanError(f"params.common: must be 'urr' or 'urap' (got {kind!r})")
            return cls(common, params["tags"], params.get("background"))
        except (TypeError, ValueError, KeyError) as exc:
            if isinstance(exc, PlanError):
                raise
            raise PlanError(f"params: {exc}") from None

    def preprocess(self, items, private_tags=None) -> np.ndarray:
        """Apply the users' pre-processors (eq. 19) on the client.

        Parameters
        ----------
        items : int array, shape (n,)
        private_tags : int array, shape (n,), optional
            ``f_pre^(i)`` evaluated at the user's own item: tag index ``k`` if the item is
            one of her sensitive items with tag k, -1 otherwise. ``None``: nobody.

        Returns
        -------
        int array, shape (n,): intermediate symbols in Z.
        """
        x = _items(items, self.domain_size)
        if private_tags is None:
            return x
        t = np.asarray(private_tags)
        if t.shape != x.shape or (t.size and not np.issubdtype(t.dtype, np.integer)):
            raise ValueError("private_tags must be an int array with the shape of items")
        if t.size and (t.min() < -1 or t.max() >= len(self.tags)):
            raise ValueError(f"private_tags must be in [-1, {len(self.tags)})")
        return np.where(t >= 0, self.domain_size + t, x)

    @staticmethod
    def tags_from_preprocessors(items, preprocessors: Sequence[PreProcessor]) -> np.ndarray:
        """Evaluate a list of per-user :class:`PreProcessor` on the users' items (client side)."""
        return np.array([f.tag_of(x) for f, x in zip(preprocessors, np.asarray(items).tolist())], dtype=np.int64)

    def perturb(self, items, rng: np.random.Generator, private_tags=None):
        """``Q_cmn(f_pre(x))``: only the obfuscated report leaves the client.

        Returns the common mechanism's reports (int array for uRR, bool matrix for uRAP).
        """
        return self.common.perturb(self.preprocess(items, private_tags), rng)

    def estimate_intermediate(self, reports, method: str = "empirical", **kwargs) -> np.ndarray:
        """``r_hat`` over Z = X + bots (frequencies, shape (|X| + kappa,))."""
        return self.common.estimate(reports, method, **kwargs)

    def combine(self, r_hat, background: Mapping[str, Any] | None = None) -> np.ndarray:
        """Eq. (21): ``p_hat(x) = r_hat(x) + sum_k r_hat(bot_k) pi_hat_k(x)``.

        Tags without a background distribution use ``pi_hat_k`` proportional to
        ``max(r_hat, 0)`` over X_N (Sec. 5.3; the clipping at 0 is ours, so the fallback
        is a distribution even for empirical estimates with negative entries).
        """
        r = np.asarray(r_hat, dtype=np.float64)
        k = self.domain_size
        bg = dict(self.background)
        if background:
            bg.update(self._background(background))
        p = r[:k].copy()
        nonsens = ~self.common.sensitive_mask[:k]
        fallback = np.where(nonsens, np.maximum(r[:k], 0.0), 0.0)
        total = fallback.sum()
        fallback = fallback / total if total > 0 else np.where(nonsens, 1.0, 0.0) / max(1, nonsens.sum())
        for j, tag in enumerate(self.tags):
            p += r[k + j] * bg.get(tag, fallback)
        return p

    def estimate(self, reports, method: str = "empirical", *, background=None, **kwargs) -> np.ndarray:
        """Estimate p over X with eq. (21) (frequencies, shape (|X|,))."""
        return self.combine(self.estimate_intermediate(reports, method, **kwargs), background)

"""Client/server runtime of the k-ary randomized response and generalized local hashing.

Murakami & Takahashi (TDP 2021), Sec. 2.2: the epsilon-RR (eq. 2) and the
(g, epsilon)-GLH (eq. 3), with the empirical estimators eq. 19-20, the empirical
estimate with a Bonferroni significance threshold, and EM reconstruction (the last
two from :mod:`mechanisms._estimators`, ULDP paper Sec. 2.5).

Exact sampling
    The only probability is the keep probability ``mu`` (``mu_RR`` / ``mu_GLH`` of
    eq. 19-20), a multiple of ``2**-48`` drawn exactly with
    :func:`mechanisms._sampling.bernoulli`; the replacement symbol is uniform over the
    ``k - 1`` others, drawn with ``Generator.integers`` (exact). The channel the
    verifier checks is therefore the channel that runs.

Hash family (GLH)
    Carter-Wegman universal hashing ``h_{a,b}(x) = ((a x + b) mod P) mod g`` with the
    Mersenne prime ``P = 2**31 - 1``, ``a`` uniform in ``[1, P-1]``, ``b`` uniform in
    ``[0, P-1]``, drawn per user from ``rng`` (CLRS Thm. 11.5: collision probability
    ``<= 1/g``). It is implemented in numpy (int64 arithmetic never overflows since
    ``a, x < 2**31``) so that hashing a million users is one vectorised expression; a
    hashing library such as ``mmh3`` would need one Python call per user and seed.
    Each report carries its seed ``(a, b)``. Because ``(a x + b, a x' + b) mod P`` is
    uniform over distinct pairs, the collision probability ``kappa`` of any two inputs
    is known exactly (:func:`collision_probability`) and the GLH estimator uses the
    exact support probability ``nu = kappa mu + (1 - kappa)(1 - mu)/(g - 1)``
    (``= 1/g`` of eq. 20 when ``kappa = 1/g``), so it stays unbiased.
    Requires ``|X| <= P`` and ``g <= P``.

This module imports numpy only.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Mapping, Sequence

import numpy as np

from ._estimators import EMResult, RRChannel, em_simplex, em_warm_start, significance_threshold
from ._plan import PlanError, read_plan, require
from ._sampling import bernoulli, check_rng, on_grid, to_grid

__all__ = ["RandomizedResponse", "GeneralizedLocalHashing", "HASH_PRIME", "REPORT_DTYPE",
           "collision_probability", "hash_values"]

#: Mersenne prime of the Carter-Wegman hash family.
HASH_PRIME = 2**31 - 1
#: GLH report: hash seed ``(a, b)`` and the perturbed hash value ``y`` in ``[0, g)``.
REPORT_DTYPE = np.dtype([("a", np.int64), ("b", np.int64), ("y", np.int64)])
#: Largest number of likelihood entries EM builds (8 bytes each).
EM_MAX_ENTRIES = 50_000_000
#: Largest channel matrix built (entries).
CHANNEL_MAX_ENTRIES = 50_000_000

_METHODS = ("empirical", "threshold", "em")


def collision_probability(g: int, prime: int = HASH_PRIME) -> float:
    """Exact ``Pr[h(x) = h(x')]`` for ``x != x'`` in the family ``((a x + b) mod P) mod g``.

    ``(r, s) = (a x + b, a x' + b) mod P`` is uniform over the ``P (P-1)`` ordered pairs
    with ``r != s``; with ``P = q g + rem``, ``rem`` residues mod ``g`` have ``q + 1``
    members and ``g - rem`` have ``q``, so the number of colliding pairs is
    ``rem (q+1) q + (g - rem) q (q-1)``.

    Returns
    -------
    float
        ``kappa <= 1/g``.
    """
    g = int(g)
    if not (2 <= g <= prime):
        raise ValueError(f"g must be in [2, {prime}] (got {g})")
    q, rem = divmod(prime, g)
    pairs = rem * (q + 1) * q + (g - rem) * q * (q - 1)
    return float(Fraction(pairs, prime * (prime - 1)))


def hash_values(a, b, x, g: int) -> np.ndarray:
    """``((a x + b) mod P) mod g`` elementwise (broadcasting), int64.

    Parameters
    ----------
    a, b : array_like of int
        Hash seeds, ``1 <= a < P``, ``0 <= b < P``.
    x : array_like of int
        Inputs in ``[0, P)``.
    g : int
        Hash range.
    """
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    x = np.asarray(x, dtype=np.int64)
    return ((a * x + b) % HASH_PRIME) % np.int64(g)


def _labels(domain) -> tuple[int, list[str] | None]:
    if isinstance(domain, (int, np.integer)) and not isinstance(domain, bool):
        return int(domain), None
    if isinstance(domain, (str, bytes)) or not isinstance(domain, Sequence):
        raise ValueError(f"domain must be a size (int) or a list of labels (got {type(domain).__name__})")
    labels = [str(v) for v in domain]
    if len(set(labels)) != len(labels):
        raise ValueError("domain labels must be distinct")
    return len(labels), labels


def _keep_probability(epsilon: float, k: int) -> float:
    """``e^eps/(k + e^eps - 1)`` rounded DOWN to the 2^-48 grid (smaller epsilon: safe side)."""
    em1 = math.expm1(epsilon)
    if math.isinf(em1):
        return to_grid(1.0 - 2.0**-48, "down")
    return to_grid((em1 + 1.0) / (k + em1), "down")


def _realized_epsilon(mu: float, k: int) -> float:
    """``log(mu/nu)`` with ``nu = (1-mu)/(k-1)``: ``log1p((k mu - 1)/(1 - mu))`` from exact rationals."""
    m = Fraction(float(mu))
    return math.log1p(float((k * m - 1) / (1 - m)))


class _KaryRR:
    """Shared pieces: a k-ary RR over ``size`` symbols with keep probability ``mu``."""

    @classmethod
    def _from_plan_params(cls, plan, mechanism: str, *extra_int: str):
        """``cls(epsilon, domain, *extra, mu=mu)`` from a plan of ``mechanism`` (raises PlanError)."""
        data = read_plan(plan)
        if data.get("mechanism") != mechanism:
            raise PlanError(f"mechanism: expected {mechanism!r} (got {data.get('mechanism')!r})")
        labels = require(data, "params").get("domain")
        k = int(require(data, "params.domain_size"))
        try:
            extra = [int(require(data, f"params.{name}")) for name in extra_int]
            return cls(float(require(data, "params.epsilon")), labels if labels else k, *extra,
                       mu=float(require(data, "params.mu")))
        except ValueError as exc:
            raise PlanError(f"params: {exc}") from None

    def _init_channel(self, epsilon, size: int, mu) -> None:
        if mu is None:
            if epsilon is None or not (float(epsilon) > 0.0):
                raise ValueError(f"epsilon must be > 0 (got {epsilon!r})")
            mu = _keep_probability(float(epsilon), size)
        mu = float(mu)
        if not on_grid(mu):
            raise ValueError(f"mu must be a multiple of 2**-48 in [0, 1] (got {mu!r})")
        if not (1.0 / size < mu < 1.0):
            raise ValueError(f"mu must be in (1/{size}, 1) for 0 < epsilon < inf (got {mu!r}); "
                             "epsilon is too small or too large for the 2^-48 grid")
        self.mu = mu
        #: probability of each specific other symbol
        self.nu_other = (1.0 - mu) / (size - 1)
        self.epsilon_realized = _realized_epsilon(mu, size)
        self.epsilon = float(epsilon) if epsilon is not None else self.epsilon_realized

    def _rr(self, values: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        n = values.shape[0]
        keep = bernoulli(rng, np.full(n, self.mu))
        other = rng.integers(0, size - 1, size=n, dtype=np.int64)
        other += other >= values
        return np.where(keep, values, other)


class RandomizedResponse(_KaryRR):
    """The epsilon-RR for ``|X|``-ary alphabets (eq. 2).

    ``Q(y|x) = e^eps/(|X| + e^eps - 1)`` if ``y = x``, else ``1/(|X| + e^eps - 1)``.

    Parameters
    ----------
    epsilon : float
        LDP budget (nats), > 0. The keep probability is rounded **down** to the
        ``2**-48`` grid, so the realised epsilon (:attr:`epsilon_realized`) is <= epsilon.
    domain : int or list of str
        ``|X|`` or the labels of ``X`` (item ``i`` is ``domain[i]``).
    mu : float, optional
        Keep probability on the grid (from a plan); overrides the rounding of epsilon.

    Raises
    ------
    ValueError
        Bad epsilon/domain, or ``mu`` off the grid or outside ``(1/|X|, 1)``.
    """

    mechanism = "rr"

    def __init__(self, epsilon: float, domain: list[str] | int, *, mu: float | None = None):
        k, labels = _labels(domain)
        if k < 2:
            raise ValueError(f"the domain needs >= 2 items (got {k})")
        self.domain_size = k
        self.labels = labels
        self._init_channel(epsilon, k, mu)

    @property
    def domain(self):
        """Labels of ``X`` (or ``range(|X|)`` when the plan has none)."""
        return self.labels if self.labels is not None else range(self.domain_size)

    @classmethod
    def from_plan(cls, plan: Mapping[str, Any]) -> "RandomizedResponse":
        """Build from a plan dict or path written by ``ldpplan plan`` (mechanism ``"rr"``).

        Raises
        ------
        PlanError
            Missing fields or unusable numbers.
        """
        return cls._from_plan_params(plan, "rr")

    # -------------------------------------------------------------- client
    def perturb(self, items, rng: np.random.Generator) -> np.ndarray:
        """Perturb each user's item with the epsilon-RR.

        Parameters
        ----------
        items : array_like of int, shape (n,)
            Indices into :attr:`domain`.
        rng : numpy.random.Generator

        Returns
        -------
        ndarray of int64, shape (n,)
            Reported indices into :attr:`domain`.
        """
        check_rng(rng)
        x = _check_items(items, self.domain_size)
        return self._rr(x, self.domain_size, rng)

    # -------------------------------------------------------------- server
    @property
    def nu(self) -> float:
        """``nu_RR`` of eq. 19: probability that a report equals a given symbol other than the input."""
        return self.nu_other

    def channel_matrix(self) -> np.ndarray:
        """``Q[y, x] = Pr(Y = y | X = x)``, shape ``(|Y|, |X|) = (|X|, |X|)``.

        Raises
        ------
        ValueError
            If ``|X|^2`` exceeds ``CHANNEL_MAX_ENTRIES``.
        """
        k = self.domain_size
        if k * k > CHANNEL_MAX_ENTRIES:
            raise ValueError(f"|X|^2 = {k * k} entries is too large for a dense channel matrix")
        q = np.full((k, k), self.nu_other)
        np.fill_diagonal(q, self.mu)
        return q

    def counts(self, reports) -> np.ndarray:
        """``c_RR(x)``: number of reports equal to each symbol, shape (|X|,)."""
        y = _check_items(reports, self.domain_size, what="reports")
        return np.bincount(y, minlength=self.domain_size).astype(np.float64)

    def variance_per_user(self, p=0.0):
        """``n Var(p_hat(x))`` of the empirical estimate (eq. 22 times n), frequency^2.

        The users' data are fixed (Sec. 4.4): ``n p(x)`` users report ``x`` with
        probability ``mu`` and the others with ``nu``, so ``n Var = (p mu (1-mu) +
        (1-p) nu (1-nu))/(mu - nu)^2``, which is eq. 22 times ``n``.
        """
        p = np.asarray(p, dtype=np.float64)
        mu, nu = self.mu, self.nu_other
        return (p * mu * (1 - mu) + (1 - p) * nu * (1 - nu)) / (mu - nu) ** 2

    def estimate(self, reports, method: str = "empirical", *, alpha: float = 0.05) -> np.ndarray:
        """Estimate the input distribution (frequencies, shape (|X|,)).

        Parameters
        ----------
        reports : array_like of int, shape (n,)
        method : {"empirical", "threshold", "em"}
            ``"empirical"``: eq. 19 (unbiased, may be negative); ``"threshold"``: the
            empirical estimate with the Bonferroni significance threshold at level
            ``alpha``; ``"em"``: EM reconstruction (MLE on the simplex).
        alpha : float, default 0.05
            Significance level for ``"threshold"``.

        Raises
        ------
        ValueError
            Unknown method, bad reports, or EM on a domain too large for the dense channel.
        """
        if method == "em":
            return self.estimate_em(reports).freq
        c = self.counts(reports)
        n = c.sum()
        if n < 1:
            raise ValueError("reports must not be empty")
        emp = (c / n - self.nu_other) / (self.mu - self.nu_other)
        if method == "empirical":
            return emp
        if method == "threshold":
            return significance_threshold(emp, int(n), self.variance_per_user(0.0), alpha=alpha)
        raise ValueError(f"method must be one of {_METHODS} (got {method!r})")

    def estimate_em(self, reports, tol: float = 1e-10, max_iter: int = 100000) -> EMResult:
        """EM reconstruction (ULDP paper Sec. 2.5) with the RR channel; returns iterations and convergence.

        Warm-started from the emp+thr estimate and SQUAREM-accelerated, like the ULDP runtimes.
        """
        c = self.counts(reports)
        init = em_warm_start(self.estimate(reports, "threshold"))
        channel = RRChannel(mu=float(self.mu), nu=float(self.nu_other), k=self.domain_size)
        return em_simplex(channel, c, tol=tol, max_iter=max_iter, init=init, accelerate=True)


class GeneralizedLocalHashing(_KaryRR):
    """The (g, epsilon)-GLH (eq. 3): hash with a per-user universal hash, then g-ary RR.

    ``Q((h, y)|x) = Pr(h) e^eps/(g + e^eps - 1)`` if ``y = h(x)``, else ``Pr(h)/(g + e^eps - 1)``.

    Parameters
    ----------
    epsilon : float
        LDP budget (nats), > 0 (keep probability rounded down to the grid).
    domain : int or list of str
        ``|X|`` (<= ``2**31 - 1``) or labels.
    g : int
        Hash range, ``2 <= g <= 2**31 - 1``.
    mu : float, optional
        Keep probability on the grid (from a plan).
    """

    mechanism = "glh"

    def __init__(self, epsilon: float, domain: list[str] | int, g: int, *, mu: float | None = None):
        k, labels = _labels(domain)
        if not (2 <= k <= HASH_PRIME):
            raise ValueError(f"the domain needs 2 .. {HASH_PRIME} items (got {k})")
        g = int(g)
        if not (2 <= g <= HASH_PRIME):
            raise ValueError(f"g must be in [2, {HASH_PRIME}] (got {g})")
        self.domain_size, self.labels, self.g = k, labels, g
        self._init_channel(epsilon, g, mu)
        #: exact collision probability of the hash family
        self.kappa = collision_probability(g)

    @property
    def domain(self):
        """Labels of ``X`` (or ``range(|X|)``)."""
        return self.labels if self.labels is not None else range(self.domain_size)

    @classmethod
    def from_plan(cls, plan: Mapping[str, Any]) -> "GeneralizedLocalHashing":
        """Build from a plan (mechanism ``"glh"``); raises :class:`PlanError`."""
        return cls._from_plan_params(plan, "glh", "g")

    # -------------------------------------------------------------- client
    def perturb(self, items, rng: np.random.Generator) -> np.ndarray:
        """Hash each item with a fresh per-user hash and perturb the hash value.

        Parameters
        ----------
        items : array_like of int, shape (n,)
        rng : numpy.random.Generator

        Returns
        -------
        ndarray of :data:`REPORT_DTYPE`, shape (n,)
            Fields ``a``, ``b`` (the user's hash seed) and ``y`` in ``[0, g)``.
        """
        check_rng(rng)
        x = _check_items(items, self.domain_size)
        n = x.shape[0]
        out = np.empty(n, dtype=REPORT_DTYPE)
        out["a"] = rng.integers(1, HASH_PRIME, size=n, dtype=np.int64)
        out["b"] = rng.integers(0, HASH_PRIME, size=n, dtype=np.int64)
        out["y"] = self._rr(hash_values(out["a"], out["b"], x, self.g), self.g, rng)
        return out

    # -------------------------------------------------------------- server
    @property
    def nu(self) -> float:
        """Support probability of an input the user does not hold: ``kappa mu + (1-kappa)(1-mu)/(g-1)`` (``1/g`` in eq. 20)."""
        return self.kappa * self.mu + (1.0 - self.kappa) * self.nu_other

    def _check_reports(self, reports) -> np.ndarray:
        r = np.asarray(reports)
        if r.dtype.names is None or not {"a", "b", "y"} <= set(r.dtype.names) or r.ndim != 1:
            raise ValueError("GLH reports must be a 1-D structured array with fields a, b, y")
        a, b, y = (r[f].astype(np.int64) for f in ("a", "b", "y"))
        if r.size == 0:
            raise ValueError("reports must not be empty")
        if (a.min() < 1 or a.max() >= HASH_PRIME or b.min() < 0 or b.max() >= HASH_PRIME
                or y.min() < 0 or y.max() >= self.g):
            raise ValueError(f"reports out of range (need 1 <= a < P, 0 <= b < P, 0 <= y < {self.g})")
        return r

    def counts(self, reports, chunk_entries: int = 4_000_000) -> np.ndarray:
        """``c_GLH(x)``: number of reports supporting each ``x`` (``y = h(x)``), shape (|X|,).

        Costs ``n |X|`` hash evaluations, vectorised in chunks of about
        ``chunk_entries`` (memory ~ 16 bytes each).
        """
        r = self._check_reports(reports)
        k = self.domain_size
        xs = np.arange(k, dtype=np.int64)
        out = np.zeros(k, dtype=np.int64)
        users = max(1, chunk_entries // k)
        xchunk = max(1, min(k, chunk_entries))
        for s in range(0, r.size, users):
            part = r[s:s + users]
            a = part["a"][:, None]
            b = part["b"][:, None]
            y = part["y"][:, None]
            for t in range(0, k, xchunk):
                out[t:t + xchunk] += (hash_values(a, b, xs[None, t:t + xchunk], self.g) == y).sum(axis=0)
        return out.astype(np.float64)

    def variance_per_user(self, p=0.0):
        """``n Var(p_hat(x))``: ``(p mu(1-mu) + (1-p) nu(1-nu))/(mu - nu)^2`` (eq. 23 times n when kappa = 1/g)."""
        p = np.asarray(p, dtype=np.float64)
        nu = self.nu
        return (p * self.mu * (1 - self.mu) + (1 - p) * nu * (1 - nu)) / (self.mu - nu) ** 2

    def estimate(self, reports, method: str = "empirical", *, alpha: float = 0.05) -> np.ndarray:
        """Estimate the input distribution (frequencies, shape (|X|,)); eq. 20 with the exact ``nu``.

        See :meth:`RandomizedResponse.estimate` for ``method`` and ``alpha``.
        """
        if method == "em":
            return self.estimate_em(reports).freq
        c = self.counts(reports)
        n = int(np.asarray(reports).shape[0])
        emp = (c / n - self.nu) / (self.mu - self.nu)
        if method == "empirical":
            return emp
        if method == "threshold":
            return significance_threshold(emp, n, self.variance_per_user(0.0), alpha=alpha)
        raise ValueError(f"method must be one of {_METHODS} (got {method!r})")

    def estimate_em(self, reports, tol: float = 1e-10, max_iter: int = 100000) -> EMResult:
        """EM reconstruction with the per-report likelihood ``mu`` / ``(1-mu)/(g-1)`` (shape (n, |X|)).

        Raises
        ------
        ValueError
            If ``n |X|`` exceeds ``EM_MAX_ENTRIES``.
        """
        r = self._check_reports(reports)
        k = self.domain_size
        if r.size * k > EM_MAX_ENTRIES:
            raise ValueError(f"EM needs n*|X| = {r.size * k} likelihood entries (limit {EM_MAX_ENTRIES})")
        hit = hash_values(r["a"][:, None], r["b"][:, None], np.arange(k)[None, :], self.g) == r["y"][:, None]
        lik = np.where(hit, self.mu, self.nu_other)
        init = em_warm_start(self.estimate(reports, "threshold"))
        return em_simplex(lik, np.ones(r.size), tol=tol, max_iter=max_iter, init=init, accelerate=True)


def _check_items(items, k: int, what: str = "items") -> np.ndarray:
    x = np.asarray(items)
    if x.ndim != 1:
        raise ValueError(f"{what} must be a 1-D integer array (got shape {x.shape})")
    if x.size and not np.issubdtype(x.dtype, np.integer):
        raise ValueError(f"{what} must be integers (got dtype {x.dtype})")
    x = x.astype(np.int64, copy=False)
    if x.size and (x.min() < 0 or x.max() >= k):
        raise ValueError(f"{what} must be indices in [0, {k}) (got range [{x.min()}, {x.max()}])")
    return x

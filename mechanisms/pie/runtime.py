"""Client/server runtime of the k-ary randomized response and generalized local hashing.

Murakami & Takahashi (TDP 2021), Sec. 2.2: the epsilon-RR (eq. 2) and the
(g, epsilon)-GLH (eq. 3), with the empirical estimators (eq. 19-20), the empirical
estimate with a Bonferroni significance threshold (Sec. 5.3, "emp+thr") and EM
reconstruction (Murakami & Kawamoto 2019, Sec. 2.5).

Runtime protocol (:mod:`ldpplan.mechanisms._protocol`)
    ``perturb(items, rng) -> Reports`` with columns RR ``y`` (int64 report index);
    GLH ``a``, ``b`` (each user's hash seed) and ``y`` (perturbed hash value in ``[0, g)``).
    ``aggregate(reports) -> Aggregate`` with counts RR ``y`` (output counts, shape ``(|X|,)``)
    and GLH ``support`` (``c_GLH(x)``: reports with ``y = h(x)``, shape ``(|X|,)``), computed
    at aggregation so that aggregates of disjoint users merge with ``+``.
    ``estimate(..., method)`` with ``methods = ("empirical", "threshold", "em")``, all from the
    counts (so they work on merged aggregates; ``"em"`` is the exact water-filling maximiser,
    ``iterations = 0``); ``threshold`` zeroes the estimates below the
    Bonferroni threshold (PIE Sec. 5.3; ``threshold_fill="uniform"`` is the ULDP convention);
    the GLH's exact per-report MLE is ``GeneralizedLocalHashing.estimate_em_reports``.
    GLH support counts invert the hash when ``g`` is large (``n ceil(P/g)`` operations instead
    of ``n |X|``: the paper's ``|X| = 10^7``, ``g = 10^8`` aggregates in seconds).

Exact sampling
    The only probability is the keep probability ``mu`` (a multiple of ``2**-48``, drawn
    exactly with :func:`_sampling.bernoulli_iid`); the replacement symbol is uniform over
    the ``k - 1`` others (``Generator.integers``, exact). The channel the verifier checks
    is the channel that runs. ``mu`` is always :func:`keep_probability` of
    ``params.epsilon`` (exact decimal arithmetic), and :meth:`from_plan` refuses any other.

Hash family (GLH)
    Carter-Wegman ``h_{a,b}(x) = ((a x + b) mod P) mod g``, ``P = 2**31 - 1``, ``a`` uniform
    in ``[1, P-1]``, ``b`` in ``[0, P-1]``, drawn per user from a stream independent of the
    coins (:func:`split_streams`): reports publish the seed, which must reveal nothing about
    the coins. The exact collision probability ``kappa <= 1/g`` gives the support
    probability ``nu = kappa mu + (1 - kappa)(1 - mu)/(g - 1)`` (``1/g`` in eq. 20), so the
    estimator stays unbiased.

This module imports numpy only (plus the standard library).
"""
from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Sequence

import numpy as np

from .._envelope import PlanFields
from ._base import GUARANTEE_FIELDS, KaryRRBase
from .._envelope import MAX_COUNT_DOMAIN
from ._channel import (HASH_PRIME, HASH_PRIME_LARGE, hash_prime, inverse_mod_prime, check_items,
                       collision_probability, hash_values, keep_probability,
                       pie_alpha_bits, realized_epsilon, split_streams, support_counts)
from ._params import GeneralizedLocalHashingParams, RandomizedResponseParams
from .._protocol import CountRule, Aggregate, Estimate, Reports, set_fields
from .._sampling import bernoulli_iid, check_rng, uniform_below
from .._estimators import em_simplex, em_warm_start

__all__ = ["RandomizedResponse", "GeneralizedLocalHashing", "HASH_PRIME", "HASH_PRIME_LARGE", "hash_prime",
           "inverse_mod_prime", "keep_probability", "realized_epsilon",
           "pie_alpha_bits", "collision_probability", "hash_values", "support_counts", "split_streams",
           "THRESHOLD_FILLS"]

#: Threshold estimator conventions: "zero" (PIE paper, Sec. 5.3, the default) or "uniform" (ULDP paper).
THRESHOLD_FILLS = ("zero", "uniform")
#: Largest number of likelihood entries the GLH EM builds (8 bytes each).
EM_MAX_ENTRIES = 50_000_000
#: Largest dense channel matrix built (entries).
CHANNEL_MAX_ENTRIES = 50_000_000


def _rr_symbols(values: np.ndarray, size: int, mu: float, rng: np.random.Generator) -> np.ndarray:
    """Keep each value with probability ``mu``, else a uniform other symbol of ``[0, size)``."""
    n = values.shape[0]
    keep = bernoulli_iid(rng, mu, n)
    other = uniform_below(rng, size - 1, n)
    other += other >= values
    return np.where(keep, values, other)


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class RandomizedResponse(KaryRRBase):
    """The epsilon-RR over ``|X|`` symbols (eq. 2).

    ``Q[x, y] = mu`` if ``y = x`` else ``nu = (1 - mu)/(|X| - 1)``, with
    ``mu = e^eps/(|X| + e^eps - 1)`` rounded down to the ``2**-48`` grid.

    Parameters (keyword-only)
    ----------
    domain : int or list of str
        ``|X|`` (2 .. 2**62) or the labels of ``X`` (item ``i`` is ``labels[i]``). Perturbing
        takes O(1) memory per user in ``|X|``; the dense counts of :meth:`aggregate` take ``8 |X|``
        bytes (:meth:`estimate_items` counts chosen items only).
    epsilon : float
        LDP budget (nats), finite and > 0; ``epsilon_realized <= epsilon``.
    mu : float, optional
        Keep probability from a plan; must equal ``keep_probability(epsilon, |X|)``.
    n, releases, max_prior : optional
        Users, releases per user and the adversary's largest prior ``max_u Pr(U = u)``
        (default ``1/n``): with ``n`` the privacy map includes the PIE guarantee.

    Raises
    ------
    ValueError
        Bad epsilon/domain, ``mu`` not the grid rounding of epsilon, or an epsilon too small
        for the grid (``mu <= 1/|X|``).

    References
    ----------
    Murakami & Takahashi, "Toward Evaluating Re-identification Risks in the Local Privacy
    Model", TDP 2021: eq. 2, eq. 19, Prop. 4.6 (eq. 22), Thm. 4.2.
    """

    mechanism: ClassVar[str] = "rr"
    #: one reported item per report
    count_rule: ClassVar[CountRule] = CountRule(sums_to_n=(("y",),))
    Params: ClassVar[type[RandomizedResponseParams]] = RandomizedResponseParams
    PLAN_FIELDS: ClassVar[PlanFields] = PlanFields(("rr",), GUARANTEE_FIELDS, max_domain=MAX_COUNT_DOMAIN, shuffle="krr")

    def __init__(self, *, domain: int | Sequence[str], epsilon: float, mu: float | None = None, n: int | None = None,
                 releases: int = 1, max_prior: float | None = None) -> None:
        self._init_common(epsilon, domain, None, mu, n, releases, max_prior)

    @property
    def symbols(self) -> int:
        """Number of symbols of the randomized response (``|X|``)."""
        return self.domain_size

    # -------------------------------------------------------------- client
    def perturb(self, data: Any, rng: np.random.Generator) -> Reports:
        """Perturb each user's item with the epsilon-RR (eq. 2).

        Parameters
        ----------
        data : array_like of int, shape (n,)
            Indices into the domain.
        rng : numpy.random.Generator

        Returns
        -------
        Reports
            Column ``y``: int64, shape (n,), reported indices.
        """
        check_rng(rng)
        x = check_items(data, self.domain_size)
        return Reports(self.mechanism, {"y": _rr_symbols(x, self.domain_size, self.mu, rng)})

    # -------------------------------------------------------------- server
    def channel_matrix(self) -> np.ndarray:
        """``Q[x, y] = Pr(Y = y | X = x)``, shape ``(|X|, |X|)`` (rows are inputs).

        Raises
        ------
        ValueError
            If ``|X|^2`` exceeds ``CHANNEL_MAX_ENTRIES``.
        """
        k = self.domain_size
        if k * k > CHANNEL_MAX_ENTRIES:
            raise ValueError(f"channel_matrix: |X|^2 = {k * k} entries is too large for a dense matrix")
        q = np.full((k, k), self.nu_other)
        np.fill_diagonal(q, self.mu)
        return q

    @property
    def nu(self) -> float:
        """``nu_RR`` of eq. 19: probability of reporting a given symbol other than the input."""
        return self.nu_other

    def aggregate(self, reports: Any) -> Aggregate:
        """Output counts ``c_RR(y)`` (counts key ``y``, int64, shape ``(|X|,)``).

        Raises
        ------
        ValueError
            Reports of another mechanism, a missing or malformed column ``y`` (not 1-D
            integers in ``[0, |X|)``).
        """
        cols = self._columns(reports, ("y",))
        y = check_items(cols["y"], self.domain_size, what="reports.y")
        return Aggregate(self.mechanism, int(y.size), {"y": np.bincount(y, minlength=self.domain_size)})

    def _item_support(self, reports: Any, items: np.ndarray) -> np.ndarray:
        """Reports ``y = x`` for each ``x`` of ``items`` (sorted search: O((n + m) log m))."""
        y = check_items(self._columns(reports, ("y",))["y"], self.domain_size, what="reports.y")
        order = np.argsort(items, kind="stable")
        keys = items[order]
        pos = np.searchsorted(keys, y)
        hit = pos < keys.size
        hit[hit] = keys[pos[hit]] == y[hit]
        unique_counts = np.bincount(pos[hit], minlength=keys.size)
        first = np.searchsorted(keys, keys)  # repeated items share the count of their first copy
        out = np.empty(items.size, dtype=np.int64)
        out[order] = unique_counts[first]
        return out

    def _support(self, agg: Aggregate) -> np.ndarray:
        y = agg.counts.get("y")
        if set(agg.counts) != {"y"} or y is None or y.shape != (self.domain_size,):
            raise ValueError(f"aggregate.counts: an RR aggregate has one count array 'y' of shape ({self.domain_size},)")
        if int(y.sum()) != agg.n:
            raise ValueError(f"aggregate.counts.y: must sum to aggregate.n = {agg.n} (got {int(y.sum())})")
        return y.astype(np.float64)


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class GeneralizedLocalHashing(KaryRRBase):
    """The (g, epsilon)-GLH (eq. 3): a per-user universal hash, then the g-ary RR on the hash value.

    ``Q((h, y) | x) = Pr(h) mu`` if ``y = h(x)``, else ``Pr(h) (1 - mu)/(g - 1)``.

    Parameters
    ----------
    epsilon : float
        LDP budget (nats), finite and > 0.
    domain : int or list of str
        ``|X|`` (2 .. 2**61 - 1) or labels.
    g : int
        Hash range, ``2 <= g <= 2**61 - 1``. The hash prime ``P`` is :func:`hash_prime` of
        ``(|X|, g)``: ``2**31 - 1`` when both fit, else ``2**61 - 1`` (attribute ``hash_prime``).
    mu, n, releases, max_prior : optional
        As for :class:`RandomizedResponse` (``mu`` is rounded for ``g`` symbols).

    References
    ----------
    Murakami & Takahashi (TDP 2021): eq. 3, eq. 20, Prop. 4.7 (eq. 23), Thm. 4.4; Wang et al.
    (USENIX Security 2017), local hashing.

    Notes
    -----
    There is no ``channel_matrix``: the channel from ``X`` depends on each user's hash (given
    the hash it is the g-ary RR with ``mu`` on ``h(x)``); marginally over the hash family it
    carries no information about ``x``.
    """

    mechanism: ClassVar[str] = "glh"
    #: each report supports each item at most once
    count_rule: ClassVar[CountRule] = CountRule(at_most_n=(("support",),))
    Params: ClassVar[type[GeneralizedLocalHashingParams]] = GeneralizedLocalHashingParams
    PLAN_FIELDS: ClassVar[PlanFields] = PlanFields(("glh",), GUARANTEE_FIELDS, max_domain=HASH_PRIME_LARGE,
                                                   shuffle="hash")

    g: int
    hash_prime: int
    kappa: float

    def __init__(self, *, domain: int | Sequence[str], epsilon: float, g: int, mu: float | None = None,
                 n: int | None = None,
                 releases: int = 1, max_prior: float | None = None) -> None:
        if isinstance(g, bool) or not isinstance(g, (int, np.integer)) or not (2 <= int(g) <= HASH_PRIME_LARGE):
            raise ValueError(f"g: must be an integer in [2, {HASH_PRIME_LARGE}] (got {g!r})")
        self._init_common(epsilon, domain, int(g), mu, n, releases, max_prior)
        prime = hash_prime(self.domain_size, self.g)
        set_fields(self, hash_prime=prime, kappa=collision_probability(self.g, prime))

    @property
    def symbols(self) -> int:
        """Number of symbols of the randomized response (``g``)."""
        return self.g

    @property
    def nu(self) -> float:
        """Support probability of an input the user does not hold: ``kappa mu + (1-kappa)(1-mu)/(g-1)``.

        Equals ``1/g`` of eq. 20 when ``kappa = 1/g``.
        """
        return self.kappa * self.mu + (1.0 - self.kappa) * self.nu_other

    # -------------------------------------------------------------- client
    def perturb(self, data: Any, rng: np.random.Generator) -> Reports:
        """Hash each item with a fresh per-user hash and perturb the hash value.

        The seeds and the coins come from independent streams (:func:`split_streams`).

        Parameters
        ----------
        data : array_like of int, shape (n,)
        rng : numpy.random.Generator

        Returns
        -------
        Reports
            Columns ``a``, ``b`` (int64, the user's hash seed) and ``y`` (int64 in ``[0, g)``).
        """
        check_rng(rng)
        seed_rng, coin_rng = split_streams(rng)
        return self.perturb_streams(data, seed_rng=seed_rng, coin_rng=coin_rng)

    def perturb_streams(self, data: Any, *, seed_rng: np.random.Generator, coin_rng: np.random.Generator) -> Reports:
        """:meth:`perturb` with caller-chosen streams: seeds from ``seed_rng``, coins from ``coin_rng``.

        The published seed columns ``a``, ``b`` depend on ``seed_rng`` only.
        """
        check_rng(seed_rng)
        check_rng(coin_rng)
        x = check_items(data, self.domain_size)
        n = x.shape[0]
        a = 1 + uniform_below(seed_rng, self.hash_prime - 1, n)
        b = uniform_below(seed_rng, self.hash_prime, n)
        y = _rr_symbols(hash_values(a, b, x, self.g, self.hash_prime), self.g, self.mu, coin_rng)
        return Reports(self.mechanism, {"a": a, "b": b, "y": y})

    # -------------------------------------------------------------- server
    def _checked(self, reports: Any) -> dict[str, np.ndarray]:
        cols = self._columns(reports, ("a", "b", "y"))
        a = check_items(cols["a"], self.hash_prime, what="reports.a")
        b = check_items(cols["b"], self.hash_prime, what="reports.b")
        y = check_items(cols["y"], self.g, what="reports.y")
        if not (a.shape == b.shape == y.shape):
            raise ValueError("reports: columns a, b, y must have the same length")
        if a.size and int(a.min()) < 1:
            raise ValueError(f"reports.a: must be in [1, {self.hash_prime}) (got {int(a.min())})")
        return {"a": a, "b": b, "y": y}

    def aggregate(self, reports: Any, chunk_entries: int | None = None) -> Aggregate:
        """Support counts ``c_GLH(x)``: reports with ``y = h_{a,b}(x)`` (counts key ``support``, shape ``(|X|,)``).

        Exact; costs about ``n min(|X|, 4 ceil(P/g))`` pair evaluations (:func:`support_counts`:
        hashing every ``x`` in cache-sized blocks, or inverting the hash when ``g`` is large),
        ``chunk_entries`` per block (default: the function's).

        Raises
        ------
        ValueError
            Reports of another mechanism or a malformed column (``a`` in ``[1, P)``, ``b`` in
            ``[0, P)``, ``y`` in ``[0, g)``, 1-D integers of one length).
        """
        r = self._checked(reports)
        counts = support_counts(r["a"], r["b"], r["y"], self.domain_size, self.g, chunk_entries,
                                prime=self.hash_prime)
        return Aggregate(self.mechanism, int(r["y"].size), {"support": counts})

    def _item_support(self, reports: Any, items: np.ndarray) -> np.ndarray:
        """``#{i : h_{a_i,b_i}(x) = y_i}`` for each ``x`` of ``items``: one hash of every report per item (O(n m))."""
        r = self._checked(reports)
        return np.array([np.count_nonzero(hash_values(r["a"], r["b"], int(x), self.g, self.hash_prime) == r["y"])
                         for x in items], dtype=np.int64)

    def _support(self, agg: Aggregate) -> np.ndarray:
        c = agg.counts.get("support")
        if set(agg.counts) != {"support"} or c is None or c.shape != (self.domain_size,):
            raise ValueError(f"aggregate.counts: a GLH aggregate has one count array 'support' of shape "
                             f"({self.domain_size},)")
        if c.size and int(c.max()) > agg.n:
            raise ValueError(f"aggregate.counts.support: a support count cannot exceed aggregate.n = {agg.n}")
        return c.astype(np.float64)

    def estimate_em_reports(self, reports: Any, *, alpha: float = 0.05, tol: float = 1e-12,
                            max_iter: int = 100000) -> Estimate:
        """Exact EM (the maximum-likelihood estimate on the simplex) from the individual reports.

        Each report's likelihood is ``mu`` for the inputs its hash maps to ``y`` and
        ``(1 - mu)/(g - 1)`` for the others (shape ``(n, |X|)``). ``estimate(..., "em")`` uses
        the support counts instead (so that it works on merged aggregates). SQUAREM-accelerated EM
        from the thresholded estimate (ULDP Sec. 6.2), stopped by the runtime's one rule: the
        certified optimality gap ``<= tol |L|``, at most
        ``max_iter`` EM-map evaluations (``Estimate.optimality_gap`` reports the certificate).

        Raises
        ------
        ValueError
            Malformed reports, or ``n |X|`` above ``EM_MAX_ENTRIES``.

        References
        ----------
        Murakami & Kawamoto (USENIX Security 2019), Sec. 2.5 (EM reconstruction).
        """
        r = self._checked(reports)
        k, n = self.domain_size, r["y"].size
        if n * k > EM_MAX_ENTRIES:
            raise ValueError(f"reports: EM needs n*|X| = {n * k} likelihood entries (limit {EM_MAX_ENTRIES})")
        hit = hash_values(r["a"][:, None], r["b"][:, None], np.arange(k)[None, :], self.g,
                          self.hash_prime) == r["y"][:, None]
        lik = np.where(hit, self.mu, self.nu_other)
        init = em_warm_start(self.estimate(Reports(self.mechanism, r), "threshold", alpha=alpha,
                                           threshold_fill="uniform").frequency)
        res = em_simplex(lik, np.ones(n), tol=tol, max_iter=max_iter, init=init, accelerate=True)
        return Estimate(res.frequency, None, "em", n, log_likelihood=res.log_likelihood, iterations=res.iterations,
                        optimality_gap=res.optimality_gap)

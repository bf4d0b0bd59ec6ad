"""Client/server runtime of the Hadamard response (Acharya, Sun & Zhang, AISTATS 2019).

Channel (one block, every epsilon): input ``x`` in ``[0, k)``, output ``y`` in ``[0, K)`` with
``K = 2^ceil(log2(k + 1))``; ``C_x = {y : popcount((x + 1) & y) even}`` (row ``x + 1`` of the
Sylvester Hadamard matrix, ``|C_x| = K/2``); ``Q(y|x) = 2p/K`` on ``C_x``, ``2(1-p)/K`` elsewhere,
``p = e^eps/(1+e^eps)`` rounded down to the ``2^-48`` grid.

Runtime protocol (:mod:`ldpplan.mechanisms._protocol`)
    ``perturb(items, rng) -> Reports`` with column ``y`` (int64 in ``[0, K)``: ``log2 K`` bits);
    ``aggregate(reports) -> Aggregate`` with counts ``y`` (output counts, shape ``(K,)``: they sum to
    ``n``, and merge with ``+``); ``estimate(..., method)`` with ``methods = ("empirical",
    "projected")``: the unbiased estimate ``(c(x)/n - 1/2)/(p - 1/2)`` and its Euclidean projection
    on the probability simplex (the authors' ``project_probability_simplex`` option).

Exact sampling
    A keep bit ``b ~ Bernoulli(p)`` on the grid (:func:`_sampling.bernoulli_iid`, exact for every
    ``numpy.random.Generator``), a uniform ``u`` in ``[0, K)`` (``Generator.integers``, exact); if
    ``[u in C_x] != b`` the lowest set bit of ``x + 1`` is flipped in ``u``. That flip toggles the
    parity of ``(x + 1) & u``, so it maps the complement of ``C_x`` one-to-one onto ``C_x`` (and back):
    ``y`` is uniform on ``C_x`` when ``b = 1`` and uniform on its complement when ``b = 0``, exactly
    the channel above (the authors' coupling, ``k2k_hadamard.encode_symbol``).

This module imports numpy only (plus the standard library).
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from .._envelope import MAX_DOMAIN_SIZE, PlanFields, read_domain, read_envelope
from .._estimators import project_simplex
from .._intervals import FrequencyVariance
from .._plan import PlanError, check_claim, integer, number, require
from .._protocol import Aggregate, CountRule, Estimate, Frozen, Reports, check_method, readonly
from .._sampling import bernoulli_iid, check_rng, on_grid
from ._channel import (check_items, domain_labels, exact_epsilon, in_set, keep_probability, output_size,
                       realized_epsilon, set_counts)
from ._promises import hadamard_promises

__all__ = ["HadamardResponse", "CHANNEL_MAX_ENTRIES", "NOTION"]

#: ``guarantee.notion`` of Hadamard-response plans.
NOTION = "LDP"
#: Largest dense channel matrix built (entries).
CHANNEL_MAX_ENTRIES = 50_000_000
_SOURCE = "Hadamard response, Acharya-Sun-Zhang AISTATS 2019: n Var = (f p(1-p) + (1-f)/4)/(p-1/2)^2"


class HadamardResponse(Frozen):
    """The Hadamard response over ``k`` items (one block; every epsilon).

    Parameters
    ----------
    domain : int or list of str
        ``k`` (2 .. 2^24) or the labels of the items (item ``i`` is ``labels[i]``).
    epsilon : float
        LDP budget (nats), finite and > 0; the channel's epsilon ``ln(p/(1-p))`` is at most it.
    keep_probability : float, optional
        ``p`` from a plan; must equal the grid rounding (down) of ``e^eps/(1+e^eps)``.

    Attributes
    ----------
    output_size : int
        ``K = 2^ceil(log2(k + 1))`` (reports are ``log2 K`` bits).
    keep_probability : float
        ``p``, a multiple of ``2^-48`` in ``(1/2, 1)``.

    Raises
    ------
    ValueError
        Bad epsilon or domain, ``keep_probability`` not the grid rounding of epsilon, or an epsilon
        too small for the grid (``p`` rounds to ``1/2``).

    References
    ----------
    Acharya, Sun & Zhang, "Hadamard Response: Estimating Distributions Privately, Efficiently, and
    with Little Communication", AISTATS 2019 (arXiv:1802.04705).
    """

    mechanism = "hr"
    methods: tuple[str, ...] = ("empirical", "projected")
    #: one output per report: the counts of ``y`` sum to ``n``
    count_rule = CountRule(sums_to_n=(("y",),))
    PLAN_FIELDS = PlanFields(("hr",), ("sources",))

    def __init__(self, *, domain, epsilon: float, keep_probability: float | None = None) -> None:
        from . import _channel

        k, labels = domain_labels(domain)
        if not 2 <= k <= MAX_DOMAIN_SIZE:
            raise ValueError(f"domain: needs 2 .. {MAX_DOMAIN_SIZE} items (got {k})")
        expected = _channel.keep_probability(epsilon)
        if keep_probability is not None and float(keep_probability) != expected:
            raise ValueError(f"keep_probability: must be the 2^-48 grid rounding (down) of e^eps/(1+e^eps), "
                             f"{expected!r} (got {keep_probability!r})")
        if not expected > 0.5:
            raise ValueError(f"epsilon: {float(epsilon)!r} is too small for the 2^-48 probability grid "
                             "(e^eps/(1+e^eps) rounds down to 1/2)")
        self._set(epsilon=float(epsilon), domain_size=k, labels=labels, output_size=output_size(k),
                  keep_probability=expected, epsilon_realized=realized_epsilon(expected))

    def __repr__(self) -> str:
        return (f"HadamardResponse(epsilon={self.epsilon!r}, domain_size={self.domain_size}, "
                f"output_size={self.output_size}, keep_probability={self.keep_probability!r})")

    # ------------------------------------------------------------------ plan
    @classmethod
    def from_plan(cls, plan: Any) -> "HadamardResponse":
        """Build the runtime from a verified plan 2.0 (dict or path), re-checking its numbers, spec and claims.

        Raises
        ------
        PlanError
            Unreadable or unverified plan, another mechanism, ``params.domain_size`` or
            ``params.output_size`` not the domain's, ``params.keep_probability`` off the grid or not
            the grid rounding of ``params.epsilon``, a plan that differs from its embedded spec, or
            a ``guarantee.epsilon`` below what the numbers give.
        """
        data = read_envelope(plan, cls.PLAN_FIELDS, verified=True)
        size, labels = read_domain(data, low=2)
        k = integer(require(data, "params.domain_size"), "params.domain_size", low=2, high=MAX_DOMAIN_SIZE)
        if k != size:
            raise PlanError(f"params.domain_size: must equal domain.size = {size} (got {k})")
        big_k = integer(require(data, "params.output_size"), "params.output_size", low=4)
        if big_k != output_size(k):
            raise PlanError(f"params.output_size: must be the smallest power of two above domain.size, "
                            f"{output_size(k)} (got {big_k})")
        epsilon = number(require(data, "params.epsilon"), "params.epsilon", low=0.0, low_open=True)
        p = number(require(data, "params.keep_probability"), "params.keep_probability", low=0.5, high=1.0,
                   low_open=True, high_open=True)
        if not on_grid(p):
            raise PlanError(f"params.keep_probability: must be a multiple of 2^-48 (got {p!r})")
        if p != keep_probability(epsilon):
            raise PlanError(f"params.keep_probability: must be the 2^-48 grid rounding (down) of e^eps/(1+e^eps) "
                            f"for params.epsilon, {keep_probability(epsilon)!r} (got {p!r})")
        notion = require(data, "guarantee.notion")
        if notion != NOTION:
            raise PlanError(f"guarantee.notion: must be {NOTION!r} (got {notion!r:.40})")
        budget = hadamard_promises(data)
        mech = cls(domain=labels if labels is not None else k, epsilon=epsilon, keep_probability=p)
        claim = require(data, "guarantee.epsilon")
        check_claim(mech.epsilon_realized, claim, "guarantee.epsilon", exact=lambda: exact_epsilon(p))
        if number(claim, "guarantee.epsilon", low=0.0) > budget:
            raise PlanError(f"guarantee.epsilon: {claim!r} exceeds the embedded spec.epsilon = {budget!r}")
        return mech

    def privacy_map(self) -> dict[str, Any]:
        """The guarantee of this object's numbers, recomputed with numpy.

        Returns
        -------
        dict
            ``notion`` (``"LDP"``) and ``epsilon`` (float, nats: ``ln(p/(1-p))``, the largest ratio
            ``Q(y|x)/Q(y|x')`` of the grid channel; ``p`` and ``K`` are the attributes
            ``keep_probability`` and ``output_size``).
        """
        return {"notion": NOTION, "epsilon": float(self.epsilon_realized)}

    def channel_matrix(self) -> np.ndarray:
        """``Q[x, y] = Pr(Y = y | X = x)``, shape ``(k, K)``: ``2p/K`` on ``C_x``, ``2(1-p)/K`` elsewhere.

        Raises
        ------
        ValueError
            If ``k K`` exceeds ``CHANNEL_MAX_ENTRIES``.
        """
        k, big_k, p = self.domain_size, self.output_size, self.keep_probability
        if k * big_k > CHANNEL_MAX_ENTRIES:
            raise ValueError(f"channel_matrix: k K = {k * big_k} entries is too large for a dense matrix")
        inside = in_set(np.arange(k)[:, None], np.arange(big_k)[None, :])
        return np.where(inside, 2.0 * p / big_k, 2.0 * (1.0 - p) / big_k)

    # ------------------------------------------------------------------ client
    def perturb(self, data, rng: np.random.Generator) -> Reports:
        """Each user's report: uniform on ``C_x`` with probability ``p``, else uniform on its complement.

        Parameters
        ----------
        data : array_like of int, shape (n,)
            Item indices in ``[0, k)``.
        rng : numpy.random.Generator

        Returns
        -------
        Reports
            Column ``y``: int64, shape (n,), in ``[0, K)``.
        """
        check_rng(rng)
        x = check_items(data, self.domain_size)
        keep = bernoulli_iid(rng, self.keep_probability, x.size)
        u = rng.integers(0, self.output_size, size=x.size, dtype=np.int64)
        row = x + 1
        flip = in_set(x, u) != keep
        u[flip] ^= (row & -row)[flip]  # the lowest set bit of x + 1
        return Reports(self.mechanism, {"y": u})

    # ------------------------------------------------------------------ server
    def aggregate(self, reports) -> Aggregate:
        """Output counts (counts key ``y``, int64, shape ``(K,)``; they sum to ``n``).

        Raises
        ------
        ValueError
            Reports of another mechanism, a missing column ``y`` or one that is not 1-D integers in
            ``[0, K)``.
        """
        if isinstance(reports, Reports):
            if reports.mechanism != self.mechanism:
                raise ValueError(f"reports: of mechanism {reports.mechanism!r}, this runtime is {self.mechanism!r}")
            cols = reports.columns
        elif isinstance(reports, Mapping):
            cols = reports
        else:
            raise ValueError(f"reports: must be a Reports object (got {type(reports).__name__})")
        if "y" not in cols:
            raise ValueError(f"reports.y: required column is missing (columns: {sorted(cols)})")
        y = np.asarray(cols["y"])
        if y.ndim != 1 or (y.size and y.dtype.kind not in "iu"):
            raise ValueError(f"reports.y: must be a 1-D integer array (got {y.dtype}, shape {y.shape})")
        y = check_items(y, self.output_size, what="reports.y")
        return Aggregate(self.mechanism, int(y.size), {"y": np.bincount(y, minlength=self.output_size)})

    def _counts(self, source) -> tuple[np.ndarray, int]:
        if isinstance(source, Aggregate):
            if source.mechanism != self.mechanism:
                raise ValueError(f"aggregate.mechanism: must be {self.mechanism!r} (got {source.mechanism!r})")
            agg = source
        else:
            agg = self.aggregate(source)
        y = agg.counts.get("y")
        if set(agg.counts) != {"y"} or y is None or y.shape != (self.output_size,):
            raise ValueError(f"aggregate.counts: a Hadamard-response aggregate has one count array 'y' of shape "
                             f"({self.output_size},)")
        if int(y.sum()) != agg.n:
            raise ValueError(f"aggregate.counts.y: must sum to aggregate.n = {agg.n} (got {int(y.sum())})")
        if agg.n < 1:
            raise ValueError("aggregate.n: needs at least one report to estimate")
        return y, agg.n

    def variance_coefficients(self) -> tuple[float, float]:
        """``(c0, c1)`` of ``n Var f_hat(x) = c0 + c1 f(x)`` (squared frequency x users)."""
        d2 = (self.keep_probability - 0.5) ** 2
        return 0.25 / d2, (self.keep_probability * (1.0 - self.keep_probability) - 0.25) / d2

    def estimate(self, reports_or_aggregate, method: str | None = None, *, tol: float = 1e-12,
                 max_iter: int = 10000) -> Estimate:
        """Estimate the item frequencies (shape ``(k,)``).

        Parameters
        ----------
        reports_or_aggregate : Reports or Aggregate
        method : {"empirical", "projected"}, default "empirical"
            ``"empirical"``: ``f_hat(x) = (c(x)/n - 1/2)/(p - 1/2)`` with ``c(x)`` the reports in
            ``C_x`` (unbiased; may be negative). ``"projected"``: its Euclidean projection onto
            the probability simplex.
        tol, max_iter : float, int
            The runtime API's estimator options; both methods are exact (no iterations), so they
            are accepted and unused.

        Returns
        -------
        Estimate
            ``std_error``: the empirical estimate's standard error at the estimate clipped to
            [0, 1]; ``variance``: the exact ``n Var = c0 + c1 f`` behind ``confidence_interval``.

        Raises
        ------
        ValueError
            Unsupported method, malformed reports or aggregate, no users.
        """
        method = check_method(method, self.methods)
        counts, n = self._counts(reports_or_aggregate)
        c = set_counts(counts, self.domain_size).astype(np.float64)
        emp = (c / n - 0.5) / (self.keep_probability - 0.5)
        c0, c1 = self.variance_coefficients()
        std = np.sqrt((c0 + c1 * np.clip(emp, 0.0, 1.0)) / n)
        var = FrequencyVariance(emp, c0, c1, 0.0, n, source=_SOURCE)
        freq = emp if method == "empirical" else project_simplex(emp)
        return Estimate(readonly(freq), None, method, n, std_error=std, variance=var)

"""Client/server runtime of the Hadamard response (Acharya, Sun & Zhang, AISTATS 2019), with ``B`` blocks.

Channel: item ``x`` in ``[0, k)`` is at position ``t = x mod (b - 1) + 1`` of block ``j = x // (b - 1)``
(``b`` the smallest power of two with ``B (b - 1) >= k``); outputs ``y = j' b + u`` in ``[0, K)``,
``K = B b``; ``C_x = {j b + u : popcount(t & u) even}`` (row ``t`` of the Sylvester Hadamard matrix
``H_b`` in ``x``'s block, ``s = |C_x| = b/2``); ``Q(y|x) = P/s`` on ``C_x``, ``(1-P)/(K-s)`` elsewhere,
``P = e^eps/(e^eps + 2B - 1)`` rounded down to the ``2^-48`` grid (``B = 1``: ``e^eps/(1 + e^eps)``,
``K = 2^ceil(log2(k + 1))``). The math and the choice of ``B``: :mod:`ldpplan.solvers.hadamard`.

Runtime protocol (:mod:`ldpplan.mechanisms._protocol`)
    ``perturb(items, rng) -> Reports`` with column ``y`` (int64 in ``[0, K)``: ``log2 K`` bits);
    ``aggregate(reports) -> Aggregate`` with counts ``y`` (output counts, shape ``(K,)``: they sum to
    ``n``, and merge with ``+``); ``estimate(..., method)`` with ``methods = ("empirical",
    "projected")``: the unbiased estimate ``T_j[t]/(n (P - q))`` (``T_j`` the Walsh-Hadamard transform
    of block ``j``'s counts, ``q = (1 - P)/(2B - 1)``) and its Euclidean projection on the probability
    simplex (the authors' ``project_probability_simplex`` option).

Exact sampling
    A keep bit ``~ Bernoulli(P)`` on the grid (:func:`_sampling.bernoulli_iid`, exact for every
    ``numpy.random.Generator``), a uniform ``u`` in ``[0, b)`` and, for ``B > 1``, a uniform ``r`` in
    ``[0, 2B - 1)`` (``Generator.integers``, exact). Kept: ``y = j b + u`` with the lowest set bit of
    ``t`` flipped in ``u`` when ``u`` is not in ``C_x`` (the flip toggles the parity of ``t & u``: a
    one-to-one map of the block's other half onto ``C_x``), uniform on ``C_x``. Not kept: ``r = 0``
    (probability ``1/(2B - 1) = s/(K - s)``) gives the block's other half the same way; ``r >= 1``
    gives block ``(r - 1) // 2`` of the ``B - 1`` others with ``u`` as it is. So every output off
    ``C_x`` has probability ``(1 - P)/(K - s)`` exactly (the authors' coupling,
    ``k2k_hadamard.encode_symbol``).

This module imports numpy only (plus the standard library).
"""
from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import numpy as np

from .._envelope import MAX_DOMAIN_SIZE, PlanFields, read_domain, read_envelope
from .._estimators import project_simplex
from .._intervals import FrequencyVariance
from .._plan import PlanError, check_claim, integer, number, require
from .._plan_object import typed_params
from .._protocol import (Aggregate, CountRule, Estimate, Frozen, Reports, check_method, readonly,
                         set_fields)
from .._sampling import bernoulli_iid, check_rng, on_grid, uniform_below
from .._api import domain_labels, report_columns
from .._fit import TOL, MAX_ITER, check_options
from ._channel import (block_size, check_items, exact_epsilon, in_set, keep_probability,
                       realized_epsilon, supports)
from ._params import HadamardResponseParams
from ._promises import hadamard_promises
from . import _channel

__all__ = ["HadamardResponse", "CHANNEL_MAX_ENTRIES", "NOTION"]

#: ``guarantee.notion`` of Hadamard-response plans.
NOTION = "LDP"
#: Largest dense channel matrix built (entries).
CHANNEL_MAX_ENTRIES = 50_000_000
_SOURCE = ("Hadamard response, Acharya-Sun-Zhang AISTATS 2019: n Var = (2q + (P-q) F_j)/(P-q)^2 - f "
           "(F_j: the block's mass, plugged in from its estimate when B > 1)")


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class HadamardResponse(Frozen):
    """The Hadamard response over ``k`` items with ``B`` blocks (``B = 1``: the basic scheme).

    Parameters
    ----------
    domain : int or list of str
        ``k`` (2 .. 2^24) or the labels of the items (item ``i`` is ``labels[i]``).
    epsilon : float
        LDP budget (nats), finite and > 0; the channel's epsilon ``ln(P (2B-1)/(1-P))`` is at most it.
    blocks : int, default 1
        ``B``, a power of two.
    keep_probability : float, optional
        ``P`` from a plan; must equal the grid rounding (down) of ``e^eps/(e^eps + 2B - 1)``.

    Attributes
    ----------
    block_size, output_size : int
        ``b`` and ``K = B b`` (reports are ``log2 K`` bits).
    keep_probability : float
        ``P = Pr(y in C_x)``, a multiple of ``2^-48``.

    Raises
    ------
    ValueError
        Bad epsilon, domain or blocks, ``keep_probability`` not the grid rounding of epsilon, or an
        epsilon too small for the grid (``P <= (1 - P)/(2B - 1)``).

    References
    ----------
    Acharya, Sun & Zhang, "Hadamard Response: Estimating Distributions Privately, Efficiently, and
    with Little Communication", AISTATS 2019 (arXiv:1802.04705).
    """

    mechanism: ClassVar[str] = "hr"
    methods: ClassVar[tuple[str, ...]] = ("empirical", "projected")
    #: one output per report: the counts of ``y`` sum to ``n``
    count_rule: ClassVar[CountRule] = CountRule(sums_to_n=(("y",),))
    Params: ClassVar[type[HadamardResponseParams]] = HadamardResponseParams
    PLAN_FIELDS: ClassVar[PlanFields] = PlanFields(("hr",), ("sources",), shuffle="sylvester")

    epsilon: float
    domain_size: int
    labels: list[str] | None
    blocks: int
    block_size: int
    output_size: int
    keep_probability: float
    epsilon_realized: float

    def __init__(self, *, domain, epsilon: float, blocks: int = 1, keep_probability: float | None = None) -> None:
        k, labels = domain_labels(domain)
        if not 2 <= k <= MAX_DOMAIN_SIZE:
            raise ValueError(f"domain: needs 2 .. {MAX_DOMAIN_SIZE} items (got {k})")
        if isinstance(blocks, bool) or not isinstance(blocks, (int, np.integer)) or blocks < 1 or blocks & (blocks - 1) \
                or blocks > 2 * k:
            raise ValueError(f"blocks: must be a power of two in [1, 2k] (got {blocks!r})")
        B = int(blocks)
        expected = _channel.keep_probability(epsilon, B)
        if keep_probability is not None and float(keep_probability) != expected:
            raise ValueError(f"keep_probability: must be the 2^-48 grid rounding (down) of e^eps/(e^eps + 2B - 1), "
                             f"{expected!r} (got {keep_probability!r})")
        if not expected * (2 * B - 1) > 1.0 - expected:
            raise ValueError(f"epsilon: {float(epsilon)!r} is too small for the 2^-48 probability grid with {B} "
                             "blocks (P rounds down to (1 - P)/(2B - 1))")
        b = block_size(k, B)
        set_fields(self, epsilon=float(epsilon), domain_size=k, labels=labels, blocks=B, block_size=b,
                   output_size=B * b, keep_probability=expected, epsilon_realized=realized_epsilon(expected, B))

    def __repr__(self) -> str:
        return (f"HadamardResponse(epsilon={self.epsilon!r}, domain_size={self.domain_size}, blocks={self.blocks}, "
                f"output_size={self.output_size}, keep_probability={self.keep_probability!r})")

    @property
    def q(self) -> float:
        """``(1 - P)/(2B - 1)``: a report of a user outside ``x``'s block lands in ``C_x`` with this probability."""
        return (1.0 - self.keep_probability) / (2 * self.blocks - 1)

    # ------------------------------------------------------------------ plan
    @classmethod
    def from_plan(cls, plan: Any) -> "HadamardResponse":
        """Build the runtime from a verified plan 2.0 (dict or path), re-checking its numbers, spec and claims.

        Raises
        ------
        PlanError
            Unreadable or unverified plan, another mechanism, ``params.domain_size``,
            ``params.block_size`` or ``params.output_size`` not the domain's and ``params.blocks``',
            ``params.keep_probability`` off the grid or not the grid rounding of ``params.epsilon``,
            a plan that differs from its embedded spec, or a ``guarantee.epsilon`` below what the
            numbers give.
        """
        data = read_envelope(plan, cls.PLAN_FIELDS, verified=True)
        size, labels = read_domain(data, low=2)
        params = typed_params(data, cls)  # HadamardResponseParams: the fields and their JSON types, read once
        k = integer(params.domain_size, "params.domain_size", low=2, high=MAX_DOMAIN_SIZE)
        if k != size:
            raise PlanError(f"params.domain_size: must equal domain.size = {size} (got {k})")
        B = integer(params.blocks, "params.blocks", low=1, high=2 * k)
        if B & (B - 1):
            raise PlanError(f"params.blocks: must be a power of two (got {B})")
        b = integer(params.block_size, "params.block_size", low=2)
        if b != block_size(k, B):
            raise PlanError(f"params.block_size: must be the smallest power of two with blocks (b - 1) >= k, "
                            f"{block_size(k, B)} (got {b})")
        if integer(params.output_size, "params.output_size", low=2) != B * b:
            raise PlanError(f"params.output_size: must be blocks x block_size = {B * b} "
                            f"(got {params.output_size!r})")
        epsilon = number(params.epsilon, "params.epsilon", low=0.0, low_open=True)
        p = number(params.keep_probability, "params.keep_probability", low=0.0, high=1.0,
                   low_open=True, high_open=True)
        if not on_grid(p):
            raise PlanError(f"params.keep_probability: must be a multiple of 2^-48 (got {p!r})")
        if p != keep_probability(epsilon, B):
            raise PlanError(f"params.keep_probability: must be the 2^-48 grid rounding (down) of "
                            f"e^eps/(e^eps + 2B - 1) for params.epsilon and params.blocks, "
                            f"{keep_probability(epsilon, B)!r} (got {p!r})")
        notion = require(data, "guarantee.notion")
        if notion != NOTION:
            raise PlanError(f"guarantee.notion: must be {NOTION!r} (got {notion!r:.40})")
        budget = hadamard_promises(data)
        try:
            mech = cls(domain=labels if labels is not None else k, epsilon=epsilon, blocks=B, keep_probability=p)
        except ValueError as exc:
            raise PlanError(f"params: {exc}") from None
        claim = require(data, "guarantee.epsilon")
        check_claim(mech.epsilon_realized, claim, "guarantee.epsilon", exact=lambda: exact_epsilon(p, B))
        if number(claim, "guarantee.epsilon", low=0.0) > budget:
            raise PlanError(f"guarantee.epsilon: {claim!r} exceeds the embedded spec.epsilon = {budget!r}")
        return mech

    def privacy_map(self) -> dict[str, Any]:
        """The guarantee of this object's numbers, recomputed with numpy.

        Returns
        -------
        dict
            ``notion`` (``"LDP"``) and ``epsilon`` (float, nats: ``ln(P (2B-1)/(1-P))``, the largest
            ratio ``Q(y|x)/Q(y|x')`` of the grid channel, attained by ``y`` in ``C_x`` outside ``C_x'``).
        """
        return {"notion": NOTION, "epsilon": float(self.epsilon_realized)}

    def channel_matrix(self) -> np.ndarray:
        """``Q[x, y] = Pr(Y = y | X = x)``, shape ``(k, K)``: ``P/s`` on ``C_x``, ``(1-P)/(K-s)`` elsewhere.

        Raises
        ------
        ValueError
            If ``k K`` exceeds ``CHANNEL_MAX_ENTRIES``.
        """
        k, big_k, b, p = self.domain_size, self.output_size, self.block_size, self.keep_probability
        if k * big_k > CHANNEL_MAX_ENTRIES:
            raise ValueError(f"channel_matrix: k K = {k * big_k} entries is too large for a dense matrix")
        inside = in_set(np.arange(k)[:, None], np.arange(big_k)[None, :], b)
        return np.where(inside, p / (b // 2), (1.0 - p) / (big_k - b // 2))

    # ------------------------------------------------------------------ client
    def perturb(self, data, rng: np.random.Generator) -> Reports:
        """Each user's report: uniform on ``C_x`` with probability ``P``, else uniform on the other ``K - s`` outputs.

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
        b, B = self.block_size, self.blocks
        keep = bernoulli_iid(rng, self.keep_probability, x.size)
        u = uniform_below(rng, b, x.size)
        block, t = np.divmod(x, b - 1)
        t += 1
        r = uniform_below(rng, 2 * B - 1, x.size) if B > 1 else np.zeros(x.size, dtype=np.int64)
        in_block = keep | (r == 0)
        flip = in_block & (((np.bitwise_count(t & u) & 1) == 0) != keep)
        u[flip] ^= (t & -t)[flip]  # the lowest set bit of t
        other = (r - 1) // 2
        out_block = np.where(in_block, block, other + (other >= block))
        return Reports(self.mechanism, {"y": out_block * b + u})

    # ------------------------------------------------------------------ server
    def aggregate(self, reports) -> Aggregate:
        """Output counts (counts key ``y``, int64, shape ``(K,)``; they sum to ``n``).

        Raises
        ------
        ValueError
            Reports of another mechanism, a missing column ``y`` or one that is not 1-D integers in
            ``[0, K)``.
        """
        y = report_columns(reports, self.mechanism, ("y",))["y"]
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

    def variance_coefficients(self) -> tuple[float, float, float]:
        """``(c0, c_block, c1)`` of ``n Var f_hat(x) = c0 + c_block F_j + c1 f(x)`` (squared frequency x users).

        ``c0 = 2q/(P-q)^2``, ``c_block = 1/(P-q)``, ``c1 = -1``; ``F_j`` is the mass of ``x``'s block
        (``1`` when ``B = 1``). Exact for fixed users' data.
        """
        d = self.keep_probability - self.q
        return 2.0 * self.q / (d * d), 1.0 / d, -1.0

    def variance_per_user(self, frequency) -> np.ndarray:
        """``n Var f_hat(x)`` at the true frequencies ``frequency`` (shape ``(k,)``), exact."""
        f = np.asarray(frequency, dtype=np.float64)
        c0, cb, c1 = self.variance_coefficients()
        mass = np.bincount(np.arange(self.domain_size) // (self.block_size - 1), weights=f, minlength=self.blocks)
        return c0 + cb * mass[np.arange(self.domain_size) // (self.block_size - 1)] + c1 * f

    def estimate(self, reports_or_aggregate, method: str | None = None, *, tol: float = TOL,
                 max_iter: int = MAX_ITER) -> Estimate:
        """Estimate the item frequencies (shape ``(k,)``).

        Parameters
        ----------
        reports_or_aggregate : Reports or Aggregate
        method : {"empirical", "projected"}, default "empirical"
            ``"empirical"``: ``f_hat(x) = T_j[t]/(n (P - q))``: reports in ``C_x`` minus reports
            in ``x``'s block outside ``C_x``, scaled (unbiased; may be negative; ``B = 1``:
            ``(c(x)/n - 1/2)/(P - 1/2)``). ``"projected"``: its Euclidean projection onto
            the probability simplex.
        tol, max_iter : float, int
            The runtime API's estimator options (``tol`` finite >= 0, ``max_iter`` >= 1, checked);
            both methods are exact (no iterations), so they are otherwise unused.

        Returns
        -------
        Estimate
            ``std_error``: the empirical estimate's standard error at the estimate clipped to
            [0, 1]; ``variance``: ``n Var = c0 + c_block F_j + c1 f`` behind ``confidence_interval``
            (exact for ``B = 1``; with blocks the block mass ``F_j`` is its estimate clipped to [0, 1]).

        Raises
        ------
        ValueError
            Unsupported method, a bad ``tol`` or ``max_iter``, malformed reports or aggregate, no users.
        """
        method = check_method(method, self.methods)
        check_options(tol, max_iter)  # the runtime API's options; the methods here are exact
        counts, n = self._counts(reports_or_aggregate)
        b, B, d = self.block_size, self.blocks, self.keep_probability - self.q
        emp = supports(counts, self.domain_size, B, b).astype(np.float64) / (n * d)
        block_of = np.arange(self.domain_size) // (b - 1)
        if B == 1:
            mass = np.ones(self.domain_size)
        else:  # F_j estimated from block j's report count: E[m_j/n] = 2q + (P - q) F_j
            mass = np.clip((counts.reshape(B, b).sum(axis=1) / n - 2.0 * self.q) / d, 0.0, 1.0)[block_of]
        c0, cb, c1 = self.variance_coefficients()
        intercept = c0 + cb * mass
        std = np.sqrt(np.maximum(intercept + c1 * np.clip(emp, 0.0, 1.0), 0.0) / n)
        var = FrequencyVariance(emp, intercept, c1, 0.0, n, source=_SOURCE)
        freq = emp if method == "empirical" else project_simplex(emp)
        return Estimate(readonly(freq), None, method, n, std_error=std, variance=var)

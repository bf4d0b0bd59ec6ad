"""The (X_S, theta, epsilon)-utility-optimized RAPPOR (uRAP; ULDP Def. 4), numpy only.

Reports: one column ``bits`` (uint8, shape (n, ceil(|X|/8))): each user's |X| report bits
packed little-endian per row (``np.packbits(..., axis=1, bitorder="little")``; bit ``j`` of
the report is bit ``j % 8`` of byte ``j // 8``; padding bits are 0).

Aggregate: ``counts["bits"]`` (shape (|X|,)): how many reports have bit ``j`` set. It serves
``"empirical"``, ``"threshold"`` and ``"em-bits"`` (the exact maximiser of the *per-bit*
likelihood ``prod_j Binomial(counts_j; n, Pr(bit j = 1))``, a composite likelihood that treats
the bits as independent: :func:`ldpplan.mechanisms._mle.unary_composite_mle`, no iterations).
The MLE (``"em"``, the paper's EM reconstruction on the likelihood of eq. 8 of every report,
:func:`ldpplan.mechanisms._unary_mle.unary_mle_full`, projected Newton with a certified
optimality gap) depends on each report's pattern of
sensitive bits, which per-bit counts do not keep: it needs the :class:`Reports` and refuses
an aggregate with a ValueError.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar, Iterator, Sequence

import numpy as np

from .. import _sampling
from .._fit import check_options
from .._mle import unary_composite_mle
from .._unary_mle import unary_mle_patterns
from ._urap_data import sensitive_patterns
from .._plan import PlanError
from ._params import UtilityOptimizedRAPPORParams
from .._protocol import (CountRule, Aggregate, Estimate, Frozen, Reports, check_method, readonly,
                         set_fields)
from .._envelope import PlanFields
from ._base import (GUARANTEE_FIELDS, bernoulli_two, check_items, domain_labels, from_plan_numbers, linear_estimate,
                    linear_variance, sensitive_mask)

__all__ = ["UtilityOptimizedRAPPOR", "BasicRAPPOR", "urap_epsilon", "pack_bits", "unpack_bits"]

_CHUNK = 1 << 16
#: ``privacy_map()["protected_outputs"]``: Def. 2's Y_P of the uRAP, in words (eq. 7).
PROTECTED_OUTPUTS = "bit vectors whose non-sensitive bits are all 0 (eq. 7)"
#: ``privacy_map()["invertible_outputs"]``: Def. 2's Y_I of the uRAP.
INVERTIBLE_OUTPUTS = "reports with a non-sensitive bit set: reveal that item"


def urap_epsilon(theta: float, d1: float, d2: float, n_sensitive: int, n_nonsensitive: int) -> float:
    """ULDP epsilon of a uRAP (nats), from Def. 2 (5) over the protected outputs Y_P (eq. 7).

    For ``y`` in Y_P, ``Q(y | x) / prod_j Pr(y_j | j != x)`` is ``a1 = theta/d1`` or
    ``a0 = (1-theta)/(1-d1)`` (x in X_S, its own bit set or not) or ``d2`` (x in X_N). The
    worst ratio over y is therefore ``max/min`` of ``{a1, a0, d2}`` when |X_S| >= 2 (some y
    has set and unset sensitive bits), and of ``{a1, d2}`` or ``{a0, d2}`` when |X_S| = 1
    (``d2`` only when X_N is not empty). ``inf`` when theta or d1 is 0 or 1 or d2 = 0 (a
    protected output then reveals or excludes an input).

    References
    ----------
    Murakami & Kawamoto 2019, Def. 2 eq. (5), Def. 4 eqs. (7)-(10), Prop. 3.
    """
    values = [theta, d1] + ([d2] if n_nonsensitive else [])
    if not all(math.isfinite(v) for v in values) or not (0 < theta < 1 and 0 < d1 < 1) or (
            n_nonsensitive and not d2 > 0):
        return math.inf
    log_a1 = float(np.log(theta) - np.log(d1))
    log_a0 = float(np.log1p(-theta) - np.log1p(-d1))
    extra = [float(np.log(d2))] if n_nonsensitive else []
    classes = [[log_a1] + extra, [log_a0] + extra]
    if n_sensitive >= 2:
        classes.append([log_a1, log_a0] + extra)
    return max(max(c) - min(c) for c in classes)


def pack_bits(bits: np.ndarray) -> np.ndarray:
    """Bool matrix (n, K) -> uint8 (n, ceil(K/8)), little-endian per row."""
    return np.packbits(np.asarray(bits, dtype=bool), axis=1, bitorder="little")


def unpack_bits(packed: np.ndarray, size: int) -> np.ndarray:
    """Inverse of :func:`pack_bits`: bool matrix (n, size)."""
    return np.unpackbits(packed, axis=1, count=size, bitorder="little").astype(bool)


class BitwiseChannel:
    """Per-bit likelihood of uRAP reports: rows ``(bit j = 1)`` then ``(bit j = 0)``, shape (2K, K).

    ``Pr(bit j = 1 | x) = d1 + (theta - d1) [x = j]`` (j in X_S) or ``(1 - d2) [x = j]`` (j in X_N)
    (eqs. 9-10); products cost O(K).
    """

    def __init__(self, mask: np.ndarray, theta: float, d1: float, d2: float) -> None:
        self.mask = mask
        self.base = np.where(mask, d1, 0.0)            # Pr(bit j = 1 | x != j)
        self.own = np.where(mask, theta - d1, 1.0 - d2)  # extra when x = j
        self.shape = (2 * mask.size, mask.size)

    def __matmul__(self, p: np.ndarray) -> np.ndarray:
        ones = self.base * float(np.sum(p)) + self.own * p
        return np.concatenate([ones, float(np.sum(p)) - ones])

    def rmatvec(self, r: np.ndarray) -> np.ndarray:
        """``L.T @ r``, shape (K,)."""
        k = self.mask.size
        diff = r[:k] - r[k:]
        return float(np.sum(r[k:])) + float(diff @ self.base) + self.own * diff


#: ``_BYTE_BITS[v, i]`` = bit ``i`` (big-endian, as ``np.packbits``) of the byte value ``v``, shape (256, 8).
_BYTE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).astype(np.float64)


class PatternChannel:
    """Exact grouped likelihood of uRAP reports (eq. 8), up to a positive factor per report.

    Rows: invertible reports grouped by the non-sensitive item they reveal (a unit vector),
    then protected reports grouped by their sensitive-bit pattern ``B`` (``a1`` where the
    bit is set, ``a0`` where not, on X_S; ``d2`` on X_N). The patterns stay packed (one byte
    per 8 sensitive bits); ``B @ p_S`` and ``r @ B`` go through per-byte tables of 256 sums,
    so a product costs O(G |X_S| / 8 + 256 |X_S|) instead of O(G |X_S|).
    """

    def __init__(self, mask: np.ndarray, revealed: np.ndarray, packed: np.ndarray, theta: float, d1: float,
                 d2: float) -> None:
        self.mask, self.revealed, self.packed = mask, revealed, np.asfortranarray(packed)  # byte columns contiguous
        self.a1, self.a0, self.d2 = theta / d1, (1.0 - theta) / (1.0 - d1), d2
        self.n_bytes = packed.shape[1]
        self.shape = (revealed.size + packed.shape[0], mask.size)

    def _padded(self, ps: np.ndarray) -> np.ndarray:
        out = np.zeros(self.n_bytes * 8)
        out[:ps.size] = ps
        return out.reshape(self.n_bytes, 8)

    def pattern_products(self, ps: np.ndarray) -> np.ndarray:
        """``B @ ps``, shape (G,)."""
        tables = self._padded(ps) @ _BYTE_BITS.T  # (n_bytes, 256): sum of ps over the bits of each byte value
        out = np.zeros(self.packed.shape[0])
        for b in range(self.n_bytes):
            out += tables[b].take(self.packed[:, b])
        return out

    def __matmul__(self, p: np.ndarray) -> np.ndarray:
        ps = p[self.mask]
        prot = self.a0 * float(ps.sum()) + self.d2 * float(p[~self.mask].sum()) + (self.a1 - self.a0) * (
            self.pattern_products(ps))
        return np.concatenate([p[self.revealed], prot])

    def rmatvec(self, r: np.ndarray) -> np.ndarray:
        """``L.T @ r``, shape (K,)."""
        h = self.revealed.size
        out = np.zeros(self.mask.size)
        out[self.revealed] += r[:h]
        rp = r[h:]
        total = float(rp.sum())
        hist = np.stack([np.bincount(self.packed[:, b], weights=rp, minlength=256) for b in range(self.n_bytes)])
        back = (hist @ _BYTE_BITS).reshape(-1)[: int(self.mask.sum())]  # r @ B
        out[self.mask] += self.a0 * total + (self.a1 - self.a0) * back
        out[~self.mask] += self.d2 * total
        return out


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class UtilityOptimizedRAPPOR(Frozen):
    """The (X_S, theta, epsilon)-uRAP of ULDP Def. 4.

    Bit ``j`` of the report for input ``x_i`` is 1 with probability ``theta`` (j = i in X_S),
    ``d1`` (j in X_S, j != i), ``1 - d2`` (j = i in X_N) and 0 (j in X_N, j != i) (eqs. 9-10).

    Parameters (keyword-only)
    ----------
    domain : int or sequence of str
        ``|X|`` or the labels of X.
    sensitive : sequence of int
        Indices of X_S.
    theta, d1, d2 : float
        Probabilities on the 2^-48 grid with ``0 < d1 < theta < 1`` and ``0 < d2 < 1`` when
        X_N is not empty.

    Raises
    ------
    ValueError
        Off-grid or out-of-range probabilities, bad indices.

    References
    ----------
    Murakami & Kawamoto 2019, Def. 4, eqs. (7)-(10), Prop. 3, eq. (41).
    """

    mechanism: ClassVar[str] = "urap"
    #: each report sets each bit at most once
    count_rule: ClassVar[CountRule] = CountRule(at_most_n=(("bits",),))
    Params: ClassVar[type[UtilityOptimizedRAPPORParams]] = UtilityOptimizedRAPPORParams
    PLAN_FIELDS: ClassVar[PlanFields] = PlanFields(("urap",), GUARANTEE_FIELDS["urap"])
    methods: ClassVar[tuple[str, ...]] = ("empirical", "threshold", "em", "em-bits")

    domain_size: int
    labels: list[str] | None
    sensitive: np.ndarray
    sensitive_mask: np.ndarray
    theta: float
    d1: float
    d2: float

    def __init__(self, *, domain: int | Sequence[str], sensitive: Any, theta: float, d1: float, d2: float) -> None:
        size, labels = domain_labels(domain)
        mask = sensitive_mask(size, sensitive)
        probs = [float(theta), float(d1), float(d2)]
        if not all(math.isfinite(v) for v in probs) or not _sampling.on_grid(probs):
            raise ValueError(f"theta, d1, d2: must be probabilities on the 2^-48 grid (got {probs})")
        if not (0 < probs[1] < probs[0] < 1):
            raise ValueError(f"theta, d1: the uRAP needs 0 < d1 < theta < 1 (got theta={probs[0]!r}, d1={probs[1]!r})")
        if not mask.all() and not (0 < probs[2] < 1):
            raise ValueError(f"d2: must be in (0, 1) so that non-sensitive items are estimable (got {probs[2]!r})")
        set_fields(self, domain_size=size, labels=labels, sensitive=readonly(np.flatnonzero(mask)),
                   sensitive_mask=readonly(mask), theta=probs[0], d1=probs[1], d2=probs[2])

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(|X|={self.domain_size}, |X_S|={self.sensitive.size}, theta={self.theta:.6g}, "
                f"d1={self.d1:.6g}, d2={self.d2:.6g}, epsilon={self.privacy_map()['epsilon']:.6g})")

    @classmethod
    def from_plan(cls, plan: Any) -> "UtilityOptimizedRAPPOR":
        """Build from a verified ``urap`` plan (format 2.0), refusing claims its numbers do not give.

        Raises
        ------
        PlanError
            Unverified plan, a missing/non-finite/off-grid number (theta = 1, d1 = 1 ...),
            inconsistent sizes, or a ``guarantee`` stronger than ``privacy_map()``.
        """
        return from_plan_numbers(cls, plan, ("theta", "d1", "d2"))

    def privacy_map(self) -> dict[str, Any]:
        """``{"notion": "ULDP", "epsilon", "sensitive", "protected_outputs"}`` recomputed from theta, d1, d2.

        ``epsilon`` is :func:`urap_epsilon` (nats); ``protected_outputs`` and ``invertible_outputs``
        describe Def. 2's Y_P (eq. 7) and Y_I in words.
        """
        ks = int(self.sensitive.size)
        return {"notion": "ULDP",
                "epsilon": float(urap_epsilon(self.theta, self.d1, self.d2, ks, self.domain_size - ks)),
                "sensitive": self.sensitive.tolist(),
                "protected_outputs": PROTECTED_OUTPUTS, "invertible_outputs": INVERTIBLE_OUTPUTS}

    def bit_probabilities(self) -> np.ndarray:
        """``P[x, j] = Pr(y_j = 1 | x)``, shape (|X|, |X|) (eqs. 9-10)."""
        k, s = self.domain_size, self.sensitive_mask
        p = np.zeros((k, k))
        p[:, s] = self.d1
        p[np.arange(k), np.arange(k)] = np.where(s, self.theta, 1.0 - self.d2)
        return p

    def channel_matrix(self) -> np.ndarray:
        """``Q[x, y]`` over all ``2^|X|`` outputs ``y`` (bit j of y's index = bit j), for |X| <= 16.

        Raises
        ------
        ValueError
            For |X| > 16 (the matrix would have more than 2^16 columns).
        """
        k = self.domain_size
        if k > 16:
            raise ValueError(f"channel_matrix: the uRAP output space has 2^{k} reports; defined here for |X| <= 16")
        ys = ((np.arange(2**k)[:, None] >> np.arange(k)[None, :]) & 1).astype(bool)  # (2^k, k)
        bp = self.bit_probabilities()
        return np.prod(np.where(ys[None, :, :], bp[:, None, :], 1.0 - bp[:, None, :]), axis=2)

    # ------------------------------------------------------------------ client
    def perturb(self, data: Any, rng: np.random.Generator) -> Reports:
        """Perturb each user's item (eqs. 8-10), sampled exactly on the 2^-48 grid.

        Parameters
        ----------
        data : int array, shape (n,)
        rng : numpy.random.Generator

        Returns
        -------
        Reports
            Column ``bits`` (uint8, shape (n, ceil(|X|/8)), little-endian per row).
        """
        _sampling.check_rng(rng)
        x = check_items(data, self.domain_size)
        n = x.size
        y = np.zeros((n, self.domain_size), dtype=bool)
        if self.sensitive.size:
            y[:, self.sensitive] = _sampling.bernoulli_columns(rng, np.full(self.sensitive.size, self.d1), n)
        y[np.arange(n), x] = bernoulli_two(rng, self.sensitive_mask[x], self.theta, 1.0 - self.d2)
        return Reports(self.mechanism, {"bits": pack_bits(y)})

    # ------------------------------------------------------------------ server
    def _unpacked(self, reports: Reports) -> Iterator[np.ndarray]:
        """Yield validated bool chunks (rows, |X|) of foreign reports."""
        if not isinstance(reports, Reports) or reports.mechanism != self.mechanism:
            raise ValueError(f"reports: must be {self.mechanism} Reports (got {reports!r:.80})")
        packed = reports["bits"]
        width = -(-self.domain_size // 8)
        if packed.dtype != np.uint8 or packed.ndim != 2 or packed.shape[1] != width:
            raise ValueError(f"reports.bits: must be uint8 of shape (n, {width}) (got {packed.dtype} {packed.shape})")
        nonsens = ~self.sensitive_mask
        for start in range(0, packed.shape[0], _CHUNK):
            chunk = packed[start:start + _CHUNK]
            if self.domain_size % 8 and np.any(chunk[:, -1] >> (self.domain_size % 8)):
                raise ValueError("reports.bits: padding bits beyond |X| must be 0")
            y = unpack_bits(chunk, self.domain_size)
            if nonsens.any() and np.any(y[:, nonsens].sum(axis=1) > 1):
                raise ValueError("reports.bits: a report has two non-sensitive bits set (impossible under the uRAP)")
            yield y

    def sensitive_patterns(self, reports: Reports) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Sufficient data of the full likelihood (eq. 8): :func:`._urap_data.sensitive_patterns`.

        Returns ``(patterns, revealed, ones)``: the packed X_S bits of the reports that reveal
        no item, how many reports reveal each item, and the per-bit counts of all reports.

        Raises
        ------
        ValueError
            As :meth:`aggregate` (foreign reports, wrong dtype/shape, padding, impossible reports).
        """
        if not isinstance(reports, Reports) or reports.mechanism != self.mechanism:
            raise ValueError(f"reports: must be {self.mechanism} Reports (got {reports!r:.80})")
        return sensitive_patterns(reports["bits"], self.sensitive_mask, _CHUNK)

    def aggregate(self, reports: Reports) -> Aggregate:
        """Per-bit counts ``bits`` (shape (|X|,)) of validated reports.

        Raises
        ------
        ValueError
            Foreign reports, wrong dtype/shape, non-zero padding, impossible reports.
        """
        counts = np.zeros(self.domain_size, dtype=np.int64)
        for y in self._unpacked(reports):
            counts += y.sum(axis=0, dtype=np.int64)
        return Aggregate(self.mechanism, len(reports), {"bits": counts})

    def _counts(self, source: Any) -> tuple[np.ndarray, int]:
        agg = source if isinstance(source, Aggregate) else self.aggregate(source)
        if agg.mechanism != self.mechanism or set(agg.counts) != {"bits"} or agg["bits"].shape != (self.domain_size,):
            raise ValueError(f"aggregate: must be a {self.mechanism} aggregate with counts.bits of shape "
                             f"({self.domain_size},) (got {agg!r})")
        if np.any(agg["bits"] > agg.n) or int(agg["bits"][~self.sensitive_mask].sum()) > agg.n:
            raise ValueError(f"aggregate.counts.bits: a bit is set more often than n = {agg.n}, or more than n "
                             "invertible reports")
        return agg["bits"], agg.n

    def marginals(self) -> tuple[np.ndarray, np.ndarray]:
        """``(alpha, beta)`` with ``Pr(bit j = 1) = alpha_j + beta_j p_j`` (eq. 40), shape (|X|,) each."""
        s = self.sensitive_mask
        return np.where(s, self.d1, 0.0), np.where(s, self.theta - self.d1, 1.0 - self.d2)

    def pattern_channel(self, reports: Reports) -> tuple[PatternChannel, np.ndarray]:
        """The exact grouped likelihood of ``reports`` and the group weights (counts)."""
        nonsens = np.flatnonzero(~self.sensitive_mask)
        revealed = np.zeros(self.domain_size, dtype=np.int64)
        chunks = []
        for y in self._unpacked(reports):
            inv = y[:, nonsens].any(axis=1) if nonsens.size else np.zeros(y.shape[0], dtype=bool)
            if inv.any():
                revealed += np.bincount(nonsens[np.argmax(y[inv][:, nonsens], axis=1)], minlength=self.domain_size)
            chunks.append(np.packbits(y[~inv][:, self.sensitive], axis=1))
        width = -(-self.sensitive.size // 8)
        packed = np.concatenate(chunks) if chunks else np.zeros((0, width), dtype=np.uint8)
        uniq, cnt = np.unique(packed, axis=0, return_counts=True) if packed.shape[0] else (packed, np.zeros(0, int))
        hit = np.flatnonzero(revealed)
        channel = PatternChannel(self.sensitive_mask, hit, uniq, self.theta, self.d1, self.d2)
        return channel, np.concatenate([revealed[hit], cnt]).astype(np.float64)

    def unary_parameters(self) -> tuple[np.ndarray, np.ndarray]:
        """``(a, b)``: ``Pr(bit j = 1 | x = j) = a_j`` and ``Pr(bit j = 1 | x != j) = b_j`` (eqs. 9-10), shape (|X|,).

        ``a = theta`` and ``b = d1`` on X_S; ``a = 1 - d2`` and ``b = 0`` on X_N (a set bit of X_N
        reveals the input: the EM treats such a report as pinned).
        """
        s = self.sensitive_mask
        return np.where(s, self.theta, 1.0 - self.d2), np.where(s, self.d1, 0.0)

    def estimate(self, reports_or_aggregate: Any, method: str | None = None, *, alpha: float = 0.05,
                 tol: float = 1e-15, max_iter: int = 10000) -> Estimate:
        """Estimate the input distribution (frequencies over X).

        Parameters
        ----------
        reports_or_aggregate : Reports or Aggregate
        method : {"empirical", "threshold", "em", "em-bits"}, default "empirical"
            ``"empirical"``: eq. 41, with plug-in standard errors. ``"threshold"``: emp +
            Bonferroni threshold at level ``alpha``. ``"em"``: the maximum-likelihood estimate
            that EM reconstruction (Sec. 2.5) converges to, with the full likelihood of eq. (8)
            of every report (needs Reports), computed by projected Newton with a certificate
            (:func:`ldpplan.mechanisms._unary_mle.unary_mle_full`: from the per-bit MLE, a few
            Newton steps, each one Gram matrix over the sensitive bits in play). ``"em-bits"``:
            the exact maximiser of the per-bit (composite) likelihood of the per-bit counts
            (works on an Aggregate; ``iterations = 0``); a consistent estimator, not the MLE.
        tol : float, default 1e-15
            ``"em"``: the runtime's one stopping rule: stop when the certified bound on
            ``L(MLE) - L(estimate)`` is ``<= tol |L|`` (a relative tolerance on the log-likelihood). Checked and unused by
            the other methods.
        max_iter : int, default 10000
            ``"em"``: cap on Newton iterations (the iterations reported in the Estimate).

        Returns
        -------
        Estimate
            ``log_likelihood`` (nats: the exact eq. (8) log-likelihood of the reports for
            ``"em"``, the composite one for ``"em-bits"``) and ``iterations`` for both;
            ``optimality_gap`` (nats, ``"em"``): the certified bound on ``L(MLE) - log_likelihood``
            (Jensen's inequality, ``W log(max_x g_x / W)`` with ``g`` the gradient and ``W = n``).

        Raises
        ------
        ValueError
            Unsupported method; ``"em"`` given an Aggregate (it needs each report's
            sensitive-bit pattern); foreign or malformed reports; no reports.

        References
        ----------
        Murakami & Kawamoto 2019, eqs. (8)-(10), (41), Sec. 2.5.
        """
        method = check_method(method, self.methods)
        check_options(tol, max_iter)
        if method == "em" and isinstance(reports_or_aggregate, Aggregate):
            raise ValueError("method 'em': the exact uRAP likelihood (eq. 8) needs each report's pattern of "
                             "sensitive bits, which an Aggregate (per-bit counts) does not keep; pass the Reports, "
                             "or use method='em-bits' (the per-bit composite MLE)")
        if method == "em":
            patterns, revealed, ones = self.sensitive_patterns(reports_or_aggregate)
            n = len(reports_or_aggregate)
            if n == 0:
                raise ValueError("reports: an estimate needs at least one report (n = 0)")
            a, b = self.unary_parameters()
            res = unary_mle_patterns(patterns, self.sensitive, revealed, ones, n, a, b, tol=tol, max_iter=max_iter)
            return Estimate(res.frequency, None, method, n, log_likelihood=res.log_likelihood,
                            iterations=res.iterations, optimality_gap=res.optimality_gap,
                            variance=linear_variance(*self._counts(reports_or_aggregate), *self.marginals()))
        counts, n = self._counts(reports_or_aggregate)
        a, b = self.marginals()
        if method in ("empirical", "threshold"):
            freq, std = linear_estimate(counts, n, a, b, method, alpha)
            return Estimate(freq, None, method, n, std_error=std, variance=linear_variance(counts, n, a, b))
        if n <= 0:
            raise ValueError("reports: an estimate needs at least one report (n = 0)")
        var = linear_variance(counts, n, a, b)
        a, b = self.unary_parameters()
        res = unary_composite_mle(counts, n, a, b)
        return Estimate(res.frequency, None, method, n, log_likelihood=res.log_likelihood, iterations=res.iterations,
                        variance=var)


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class BasicRAPPOR(UtilityOptimizedRAPPOR):
    """Basic one-time RAPPOR (symmetric unary encoding; ULDP Sec. 2.4): the uRAP with ``X_S = X``.

    Every bit is kept with probability ``theta`` and flipped with ``psi = 1 - theta``; with
    ``theta = e^(eps/2) / (e^(eps/2) + 1)`` it is epsilon-LDP. A baseline for simulations
    (no plan mechanism of its own).

    Parameters
    ----------
    domain : int or sequence of str
    theta, psi : float
        Grid probabilities, ``theta > psi``.
    """

    mechanism: ClassVar[str] = "rappor"

    def __init__(self, *, domain: int | Sequence[str], theta: float, psi: float) -> None:
        size, labels = domain_labels(domain)
        super(BasicRAPPOR, self).__init__(domain=labels if labels is not None else size, sensitive=np.arange(size),
                                          theta=theta, d1=psi, d2=0.5)

    @classmethod
    def from_plan(cls, plan: Any) -> "BasicRAPPOR":
        """A ``urap`` plan whose X_S is all of X, as the basic RAPPOR (``psi = d1``).

        Raises
        ------
        PlanError
            Anything :meth:`UtilityOptimizedRAPPOR.from_plan` refuses, or X_S smaller than X.
        """
        urap = UtilityOptimizedRAPPOR.from_plan(plan)
        if urap.sensitive.size != urap.domain_size:
            raise PlanError(f"params.sensitive: the basic RAPPOR protects every item (|X_S| = |X| = "
                            f"{urap.domain_size}; got {urap.sensitive.size})")
        return cls(domain=urap.labels if urap.labels is not None else urap.domain_size, theta=urap.theta, psi=urap.d1)

    def privacy_map(self) -> dict[str, Any]:
        """``{"notion": "LDP", "epsilon"}``: ``ln(theta (1 - psi) / (psi (1 - theta))) = 2 ln(theta / psi)``."""
        out = super(BasicRAPPOR, self).privacy_map()
        return {"notion": "LDP", "epsilon": out["epsilon"]}

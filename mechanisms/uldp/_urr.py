"""The (X_S, epsilon)-utility-optimized randomized response (uRR; ULDP Def. 3), numpy only.

Reports: one column ``y`` (int64, shape (n,)): the reported item index (``Y = X``).
Aggregate: ``counts["y"]`` (shape (|X|,)): how many reports equal each item; it is a
sufficient statistic of the uRR likelihood, so every method (including ``"em"``) works
from an aggregate.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar, Sequence

import numpy as np

from .. import _sampling
from .._fit import check_options
from .._mle import urr_mle
from ._params import UtilityOptimizedRRParams
from .._protocol import (CountRule, Aggregate, Estimate, Frozen, Reports, check_method, readonly,
                         set_fields)
from .._envelope import PlanFields
from ._base import (GUARANTEE_FIELDS, GRID_DENOMINATOR, bernoulli_two, check_items, domain_labels,
                    from_plan_numbers, linear_estimate, linear_variance, sensitive_mask)

__all__ = ["UtilityOptimizedRR", "URRChannel", "urr_epsilon"]


def urr_epsilon(c1: float, c2: float) -> float:
    """ULDP epsilon of a uRR (nats): ``|ln c1 - ln c2|``, the only ratio of Def. 2 (5) on Y_P = X_S.

    Every column ``y`` in X_S holds ``c1`` (x = y) and ``c2`` (every other x), so the worst
    ratio of eq. (5) is ``max(c1, c2) / min(c1, c2)``; ``inf`` when one of them is 0.

    References
    ----------
    Murakami & Kawamoto 2019, Def. 2 eq. (5), Def. 3 eq. (6), Prop. 2.
    """
    if c1 <= 0 or c2 <= 0:
        return math.inf
    return float(abs(np.log(c1) - np.log(c2)))


#: ``privacy_map()["protected_outputs"]``: Def. 2's Y_P of the uRR, in words (a str in every family).
PROTECTED_OUTPUTS = "reports equal to a sensitive item (Y_P = X_S, eq. 6)"
#: ``privacy_map()["invertible_outputs"]``: Def. 2's Y_I of the uRR.
INVERTIBLE_OUTPUTS = "reports equal to a non-sensitive item: reveal it (Y_I = X_N)"


class URRChannel:
    """The uRR likelihood ``L[y, x] = Q(y | x)`` (shape (|X|, |X|)) without the dense matrix.

    ``L @ p`` and ``L.rmatvec(r)`` cost O(|X|) (eq. 6: ``c2`` on every column of X_S, plus
    ``c1 - c2`` on its diagonal; ``c3`` on the diagonal of X_N).
    """

    def __init__(self, mask: np.ndarray, c1: float, c2: float, c3: float) -> None:
        self.mask, self.c1, self.c2, self.c3 = mask, c1, c2, c3
        self.shape = (mask.size, mask.size)

    def __matmul__(self, p: np.ndarray) -> np.ndarray:
        total = float(np.sum(p))
        return np.where(self.mask, self.c2 * total + (self.c1 - self.c2) * p, self.c3 * p)

    def rmatvec(self, r: np.ndarray) -> np.ndarray:
        """``L.T @ r``, shape (|X|,)."""
        on_sensitive = float(np.sum(r[self.mask]))
        return self.c2 * on_sensitive + np.where(self.mask, (self.c1 - self.c2) * r, self.c3 * r)


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class UtilityOptimizedRR(Frozen):
    """The (X_S, epsilon)-uRR of ULDP Def. 3.

    ``Q(y|x) = c1`` (x in X_S, y = x), ``c2`` (y in X_S, y != x), ``c3`` (x in X_N, y = x),
    0 otherwise (eq. 6). Protected outputs ``Y_P = X_S``, invertible outputs ``Y_I = X_N``.

    Parameters (keyword-only)
    ----------
    domain : int or sequence of str
        ``|X|`` (a count domain, labels None) or the labels of X.
    sensitive : sequence of int
        Indices of X_S (at least one).
    c1, c2, c3 : float
        Probabilities on the 2^-48 grid with ``c1 + (|X_S| - 1) c2 = 1`` and
        ``|X_S| c2 + c3 = 1`` exactly, ``c1 > c2`` and ``c3 > 0``.

    Raises
    ------
    ValueError
        Off-grid probabilities, rows that do not sum to one, bad indices.

    References
    ----------
    Murakami & Kawamoto, "Utility-Optimized Local Differential Privacy Mechanisms for
    Distribution Estimation", USENIX Security 2019, Def. 3, eq. (6), Prop. 2, eq. (35).
    """

    mechanism: ClassVar[str] = "urr"
    #: one reported item per report
    count_rule: ClassVar[CountRule] = CountRule(sums_to_n=(("y",),))
    Params: ClassVar[type[UtilityOptimizedRRParams]] = UtilityOptimizedRRParams
    PLAN_FIELDS: ClassVar[PlanFields] = PlanFields(("urr",), GUARANTEE_FIELDS["urr"])
    methods: ClassVar[tuple[str, ...]] = ("empirical", "threshold", "em")

    domain_size: int
    labels: list[str] | None
    sensitive: np.ndarray
    sensitive_mask: np.ndarray
    c1: float
    c2: float
    c3: float

    def __init__(self, *, domain: int | Sequence[str], sensitive: Any, c1: float, c2: float, c3: float) -> None:
        size, labels = domain_labels(domain)
        mask = sensitive_mask(size, sensitive)
        probs = [float(c1), float(c2), float(c3)]
        if not all(math.isfinite(v) for v in probs) or not _sampling.on_grid(probs):
            raise ValueError(f"c1, c2, c3: must be probabilities on the 2^-48 grid (got {probs})")
        k1, k2, k3 = (int(v * GRID_DENOMINATOR) for v in probs)  # exact integers on the grid
        ks = int(mask.sum())
        if k1 + (ks - 1) * k2 != GRID_DENOMINATOR or ks * k2 + k3 != GRID_DENOMINATOR:
            raise ValueError("c1, c2, c3: rows of Q must sum to one exactly: c1 + (|X_S|-1) c2 = 1 and "
                             f"|X_S| c2 + c3 = 1 (got {probs} with |X_S| = {ks})")
        if not (k1 > k2 and k3 > 0):
            raise ValueError(f"c1, c2, c3: the uRR needs c1 > c2 and c3 > 0 (got {probs})")
        set_fields(self, domain_size=size, labels=labels, sensitive=readonly(np.flatnonzero(mask)),
                   sensitive_mask=readonly(mask), c1=probs[0], c2=probs[1], c3=probs[2])

    def __repr__(self) -> str:
        return (f"UtilityOptimizedRR(|X|={self.domain_size}, |X_S|={self.sensitive.size}, c1={self.c1:.6g}, "
                f"c2={self.c2:.6g}, c3={self.c3:.6g}, epsilon={self.privacy_map()['epsilon']:.6g})")

    # ------------------------------------------------------------------ plan
    @classmethod
    def from_plan(cls, plan: Any) -> "UtilityOptimizedRR":
        """Build from a verified ``urr`` plan (format 2.0), refusing claims its numbers do not give.

        Raises
        ------
        PlanError
            Unverified plan, a missing/non-finite/off-grid number, inconsistent sizes, or a
            ``guarantee`` (epsilon, sensitive items) stronger than ``privacy_map()``.
        """
        return from_plan_numbers(cls, plan, ("c1", "c2", "c3"))

    def privacy_map(self) -> dict[str, Any]:
        """The guarantee of these numbers: ``{"notion": "ULDP", "epsilon", "sensitive", "protected_outputs"}``.

        ``epsilon`` (nats) is :func:`urr_epsilon` recomputed from ``c1, c2`` with numpy;
        ``sensitive`` lists X_S (indices); ``protected_outputs`` and ``invertible_outputs`` describe
        Def. 2's Y_P (= X_S) and Y_I (= X_N) in words (one type per key in every family:
        :data:`ldpplan.mechanisms._protocol.PRIVACY_MAP_TYPES`).
        """
        return {"notion": "ULDP", "epsilon": float(urr_epsilon(self.c1, self.c2)), "sensitive": self.sensitive.tolist(),
                "protected_outputs": PROTECTED_OUTPUTS, "invertible_outputs": INVERTIBLE_OUTPUTS}

    def channel_matrix(self) -> np.ndarray:
        """``Q[x, y] = Pr(Y = y | X = x)``, shape (|X|, |X|) (eq. 6)."""
        k, s = self.domain_size, self.sensitive_mask
        q = np.zeros((k, k))
        q[:, s] = self.c2
        q[np.arange(k), np.arange(k)] = np.where(s, self.c1, self.c3)
        return q

    # ------------------------------------------------------------------ client
    def perturb(self, data: Any, rng: np.random.Generator) -> Reports:
        """Perturb each user's item (eq. 6), sampled exactly on the 2^-48 grid.

        Parameters
        ----------
        data : int array, shape (n,)
            Item indices in ``[0, |X|)``.
        rng : numpy.random.Generator

        Returns
        -------
        Reports
            Column ``y`` (int64, shape (n,)).
        """
        _sampling.check_rng(rng)
        x = check_items(data, self.domain_size)
        sens = self.sensitive_mask[x]
        keep = bernoulli_two(rng, sens, self.c1, self.c3)
        out = x.copy()
        ks = self.sensitive.size
        pos = np.cumsum(self.sensitive_mask) - 1  # position of an item inside X_S
        moved_s = ~keep & sens
        if ks > 1 and moved_s.any():
            r = _sampling.uniform_below(rng, ks - 1, int(moved_s.sum()))
            r = r + (r >= pos[x[moved_s]])  # uniform over X_S minus {x}: each (1 - c1)/(ks - 1) = c2
            out[moved_s] = self.sensitive[r]
        moved_n = ~keep & ~sens
        if moved_n.any():
            out[moved_n] = self.sensitive[_sampling.uniform_below(rng, ks, int(moved_n.sum()))]  # each (1 - c3)/ks = c2
        return Reports(self.mechanism, {"y": out})

    # ------------------------------------------------------------------ server
    def aggregate(self, reports: Reports) -> Aggregate:
        """Counts of each reported item.

        Raises
        ------
        ValueError
            Reports of another mechanism, or a column ``y`` that is not int, 1-D, in range.
        """
        if not isinstance(reports, Reports) or reports.mechanism != self.mechanism:
            raise ValueError(f"reports: must be {self.mechanism} Reports (got {reports!r:.80})")
        y = check_items(reports["y"], self.domain_size, field="reports.y")
        return Aggregate(self.mechanism, int(y.size), {"y": np.bincount(y, minlength=self.domain_size)})

    def _counts(self, source: Any) -> tuple[np.ndarray, int]:
        agg = source if isinstance(source, Aggregate) else self.aggregate(source)
        if agg.mechanism != self.mechanism or set(agg.counts) != {"y"} or agg["y"].shape != (self.domain_size,):
            raise ValueError(f"aggregate: must be a {self.mechanism} aggregate with counts.y of shape "
                             f"({self.domain_size},) (got {agg!r})")
        if int(agg["y"].sum()) != agg.n:
            raise ValueError(f"aggregate.counts.y: must sum to n = {agg.n} (got {int(agg['y'].sum())})")
        return agg["y"], agg.n

    def marginals(self) -> tuple[np.ndarray, np.ndarray]:
        """``(alpha, beta)`` with ``Pr(y = j) = alpha_j + beta_j p_j`` (eq. 34), shape (|X|,) each."""
        s = self.sensitive_mask
        return np.where(s, self.c2, 0.0), np.where(s, self.c1 - self.c2, self.c3)

    def estimate(self, reports_or_aggregate: Any, method: str | None = None, *, alpha: float = 0.05,
                 tol: float = 1e-15, max_iter: int = 10000) -> Estimate:
        """Estimate the input distribution (frequencies over X).

        Parameters
        ----------
        reports_or_aggregate : Reports or Aggregate
        method : {"empirical", "threshold", "em"}, default "empirical"
            Empirical estimate (eq. 35, may be negative, with plug-in standard errors),
            empirical + Bonferroni significance threshold at level ``alpha``, or the fixed
            point of EM reconstruction (Sec. 2.5: the MLE on the simplex) computed exactly
            by water-filling (:func:`ldpplan.mechanisms._mle.urr_mle`, ``O(|X| log |X|)``,
            ``iterations = 0``; works on an Aggregate).
        tol, max_iter : float, int
            The runtime's estimator options (``docs/ARCHITECTURE.md``), checked and unused here
            (``"em"`` is exact); the same defaults as the uRAP's.

        Returns
        -------
        Estimate
            ``frequency`` shape (|X|,).

        Raises
        ------
        ValueError
            Unsupported method (listing the supported ones), foreign or malformed reports,
            no reports.
        """
        method = check_method(method, self.methods)
        check_options(tol, max_iter)
        counts, n = self._counts(reports_or_aggregate)
        a, b = self.marginals()
        if method != "em":
            freq, std = linear_estimate(counts, n, a, b, method, alpha)
            return Estimate(freq, None, method, n, std_error=std, variance=linear_variance(counts, n, a, b))
        if n <= 0:
            raise ValueError("reports: an estimate needs at least one report (n = 0)")
        res = urr_mle(counts, np.asarray(self.sensitive_mask), self.c1, self.c2, self.c3)
        return Estimate(res.frequency, None, method, n, log_likelihood=res.log_likelihood, iterations=res.iterations,
                        variance=linear_variance(counts, n, a, b))


"""Client/server runtime of the memoized (longitudinal) frequency oracles, with client state.

Two rounds (Erlingsson et al. 2014, RAPPOR's permanent and instantaneous randomized response;
Arcolezi et al. 2022, L-GRR / L-SUE / L-OUE / L-OSUE / L-SOUE): a permanent response of each
(user, value) is drawn once and kept in a :class:`Memo`; every report re-randomizes it afresh.
Any number of reports of one value reveal at most ``epsilon_perm`` (they are post-processing
of one permanent response); one report reveals ``epsilon_1`` (the composed channel); a user
holding at most ``max_values`` distinct values over ``T`` rounds spends at most
``min(T epsilon_2, max_values x epsilon_perm + floor(T (max_values-1)/max_values) x epsilon_2)`` (``epsilon_2``: the
second round on the permanent response). ``max_values x epsilon_perm`` alone is false once values
change: the reports reveal when the permanent response changed (Ding, Kulkarni, Yekhanin 2017, Sec. 3).

Classes (one per report shape; the choice is written down here): :class:`LongitudinalGRR`
(plan mechanism ``"l-grr"``, reports a value) and :class:`LongitudinalUE` (``"l-sue"``,
``"l-oue"``, ``"l-osue"``, ``"l-soue"``: the four unary-encoding variants differ only in their
numbers, so one class reads them, ``variant`` naming which).

Runtime protocol (:mod:`ldpplan.mechanisms._protocol`) with client state:
``perturb(data, rng=..., memo=..., users=..., round=...) -> Reports`` refuses without a memo;
the memo is an append-only store the call extends (see :mod:`._memo`). Reports carry their
round (column ``round``) beside ``y`` (L-GRR, int64) or ``bits`` (unary, packed little-endian).
``aggregate`` counts per round (counts ``reports``, shape ``(rounds,)``, and ``support``,
shape ``(rounds, k)``), so aggregates of several rounds merge with ``+``; ``estimate(...,
round=r)`` estimates one round (the last one present when ``round`` is omitted).
"""
from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np

from .._bitkernels import bernoulli_rows, grid_split
from .._envelope import PlanFields
from .._plan import PlanError
from .._protocol import Aggregate, Reports, set_fields
from .._sampling import bernoulli_iid, uniform_below
from ._base import GUARANTEE_FIELDS, NOTION, _Longitudinal, _probability, _values
from ._memo import MAX_MEMO_DOMAIN, Memo
from ._params import LongitudinalGRRParams, LongitudinalUEParams
from ._numbers import Rounds

__all__ = ["LongitudinalGRR", "LongitudinalUE", "Memo", "NOTION", "GUARANTEE_FIELDS", "UNARY_VARIANTS",
           "CHANNEL_MAX_ENTRIES"]

#: Plan mechanisms of :class:`LongitudinalUE`.
UNARY_VARIANTS = ("l-sue", "l-oue", "l-osue", "l-soue")
#: Largest dense channel matrix built (entries).
CHANNEL_MAX_ENTRIES = 1 << 22


def _grr_step(values: np.ndarray, k: int, keep: float, rng: np.random.Generator) -> np.ndarray:
    """Keep each value with probability ``keep`` (grid), else a uniform other value of ``[0, k)``."""
    kept = bernoulli_iid(rng, keep, values.shape[0])
    other = uniform_below(rng, k - 1, values.shape[0])
    other += other >= values
    return np.where(kept, values, other)


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class LongitudinalGRR(_Longitudinal):
    """L-GRR: GRR(p1) drawn once per (user, value), then GRR(p2) at every report.

    Parameters (keyword-only)
    ----------
    domain : int or list of str
        ``k`` (>= 2) or the labels.
    p1, p2 : float
        Keep probabilities of the permanent and the instantaneous round (multiples of 2^-48 in
        ``(1/k, 1)``); the others are ``q = (1 - p)/(k - 1)``.
    rounds, max_values : int
        Planned collections and distinct values a user may hold (``max_values <= rounds``).
    max_changes : int, optional
        Deprecated spelling of ``max_values``.
    plan_fingerprint : str, optional
        The plan's fingerprint (``from_plan`` sets it; memos are bound to it).

    References
    ----------
    Arcolezi et al. (2022), L-GRR; the second round is the plan's (solved on the exact composed
    channel, ``ldpplan.solvers.longitudinal.l_grr_exact``).
    """

    Params: ClassVar[type[LongitudinalGRRParams]] = LongitudinalGRRParams
    PLAN_FIELDS: ClassVar[PlanFields] = PlanFields(("l-grr",), GUARANTEE_FIELDS, shuffle="krr")  # one round: k-RR
    _memo_kind: ClassVar[str] = "value"

    p1: float
    p2: float

    def __init__(self, *, domain: int | Sequence[str], p1: float, p2: float, rounds: int = 1,
                 max_values: int | None = None,
                 max_changes: int | None = None, plan_fingerprint: str | None = None) -> None:
        k = len(domain) if isinstance(domain, (list, tuple)) else domain
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 2 <= k <= MAX_MEMO_DOMAIN:
            raise ValueError(f"domain: must be a size in 2..2^16 or a list of labels (got {domain!r:.40})")
        p1, p2 = _probability(p1, "p1"), _probability(p2, "p2")
        set_fields(self, mechanism="l-grr", variant="l-grr")
        self._init(Rounds.grr(p1, p2, int(k)), domain, rounds, _values(max_values, max_changes), plan_fingerprint)
        set_fields(self, p1=p1, p2=p2)

    @classmethod
    def _from_params(cls, data: Any, params: Mapping[str, Any], domain: int | Sequence[str], rounds: int,
                     changes: int, fingerprint: str | None) -> "LongitudinalGRR":
        if set(params) != {"domain_size", "p1", "p2", "second_round"}:
            raise PlanError(f"params: must hold exactly domain_size, p1, p2, second_round (got {sorted(params)})")
        return cls(domain=domain, p1=params["p1"], p2=params["p2"], rounds=rounds, max_values=changes,
                   plan_fingerprint=fingerprint)

    def _permanent(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return _grr_step(values, self.domain_size, self.p1, rng)

    def _instantaneous(self, permanent: np.ndarray, round: int, rng: np.random.Generator) -> Reports:
        y = _grr_step(permanent, self.domain_size, self.p2, rng)
        return Reports(self.mechanism, {"round": np.full(y.shape, round, dtype=np.int64), "y": y})

    def aggregate(self, reports: Any) -> Aggregate:
        """Counts per round: ``reports`` (shape ``(rounds,)``) and ``support`` (``(rounds, k)``)."""
        rnd, y = self._columns(reports, "y")
        if y.ndim != 1 or y.shape != rnd.shape or (y.size and (y.dtype.kind not in "iu" or y.min() < 0
                                                              or y.max() >= self.domain_size)):
            raise ValueError(f"reports.y: must be 1-D integers in [0, {self.domain_size}), one per report")
        return self._per_round(rnd, None, y.astype(np.int64))

    def channel_matrix(self) -> np.ndarray:
        """The composed channel ``Q = P1 @ P2`` of one report, ``Q[x, y]``, shape ``(k, k)``."""
        k = self.domain_size
        if k * k > CHANNEL_MAX_ENTRIES:
            raise ValueError(f"channel_matrix: k^2 = {k * k} entries is too large for a dense matrix")
        q = np.full((k, k), float(self.numbers.support_other))
        np.fill_diagonal(q, float(self.numbers.support_true))
        return q


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class LongitudinalUE(_Longitudinal):
    """Memoized unary encoding: per-bit (p1, q1) drawn once per (user, value), then (p2, q2) per report.

    Parameters (keyword-only)
    ----------
    variant : {"l-sue", "l-oue", "l-osue", "l-soue"}
        The plan mechanism (the variants differ only in their numbers).
    domain : int or list of str
    p1, q1, p2, q2 : float
        Multiples of 2^-48 in (0, 1) with ``p > q`` in each round.
    rounds, max_values, max_changes, plan_fingerprint
        As :class:`LongitudinalGRR`.

    References
    ----------
    Erlingsson et al. (2014) (L-SUE is basic one-time RAPPOR); Arcolezi et al. (2022),
    L-SUE, L-OUE, L-OSUE, L-SOUE.
    """

    Params: ClassVar[type[LongitudinalUEParams]] = LongitudinalUEParams
    PLAN_FIELDS: ClassVar[PlanFields] = PlanFields(UNARY_VARIANTS, GUARANTEE_FIELDS, shuffle="unary-rounds")
    _memo_kind: ClassVar[str] = "bits"

    p1: float
    q1: float
    p2: float
    q2: float

    def __init__(self, *, variant: str, domain: int | Sequence[str], p1: float, q1: float, p2: float, q2: float,
                 rounds: int = 1,
                 max_values: int | None = None, max_changes: int | None = None,
                 plan_fingerprint: str | None = None) -> None:
        if variant not in UNARY_VARIANTS:
            raise ValueError(f"variant: must be one of {list(UNARY_VARIANTS)} (got {variant!r:.40})")
        k = len(domain) if isinstance(domain, (list, tuple)) else domain
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 2 <= k <= MAX_MEMO_DOMAIN:
            raise ValueError(f"domain: must be a size in 2..2^16 or a list of labels (got {domain!r:.40})")
        probs = {name: _probability(v, name) for name, v in (("p1", p1), ("q1", q1), ("p2", p2), ("q2", q2))}
        set_fields(self, mechanism=variant, variant=variant)
        self._init(Rounds.unary(probs["p1"], probs["q1"], probs["p2"], probs["q2"], int(k)), domain, rounds,
                   _values(max_values, max_changes), plan_fingerprint)
        set_fields(self, **probs)

    @classmethod
    def _from_params(cls, data: Any, params: Mapping[str, Any], domain: int | Sequence[str], rounds: int,
                     changes: int, fingerprint: str | None) -> "LongitudinalUE":
        if set(params) != {"domain_size", "p1", "q1", "p2", "q2"}:
            raise PlanError(f"params: must hold exactly domain_size, p1, q1, p2, q2 (got {sorted(params)})")
        return cls(variant=data["mechanism"], domain=domain, p1=params["p1"], q1=params["q1"], p2=params["p2"],
                   q2=params["q2"], rounds=rounds, max_values=changes, plan_fingerprint=fingerprint)

    def _bits(self, ones: np.ndarray, p: float, q: float, rng: np.random.Generator) -> np.ndarray:
        """Bit ``j`` of row ``i`` is Bernoulli(p) where ``ones[i, j]`` else Bernoulli(q) (exact on the grid;
        two vectorized draws, faster than one draw with per-entry probabilities)."""
        n, k = ones.shape
        hp, lp = grid_split(np.full(k, p))
        hq, lq = grid_split(np.full(k, q))
        return np.where(ones, bernoulli_rows(rng, hp, lp, n), bernoulli_rows(rng, hq, lq, n))

    def _permanent(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        ones = np.zeros((values.size, self.domain_size), dtype=bool)
        ones[np.arange(values.size), values] = True
        return np.packbits(self._bits(ones, self.p1, self.q1, rng), axis=1, bitorder="little")

    def _instantaneous(self, permanent: np.ndarray, round: int, rng: np.random.Generator) -> Reports:
        ones = np.unpackbits(permanent, axis=1, count=self.domain_size, bitorder="little").astype(bool)
        bits = np.packbits(self._bits(ones, self.p2, self.q2, rng), axis=1, bitorder="little")
        return Reports(self.mechanism, {"round": np.full(bits.shape[0], round, dtype=np.int64), "bits": bits})

    def aggregate(self, reports: Any) -> Aggregate:
        """Counts per round: ``reports`` (shape ``(rounds,)``) and ones per bit ``support`` (``(rounds, k)``)."""
        rnd, bits = self._columns(reports, "bits")
        width = (self.domain_size + 7) // 8
        if bits.dtype != np.uint8 or bits.ndim != 2 or bits.shape != (rnd.size, width):
            raise ValueError(f"reports.bits: must be uint8 of shape (n, {width}) (got {bits.dtype}, {bits.shape})")
        pad = width * 8 - self.domain_size
        if pad and bits.size and np.any(bits[:, -1] >> (8 - pad)):
            raise ValueError("reports.bits: padding bits must be zero")
        return self._per_round(rnd, bits, None)

    def channel_matrix(self) -> np.ndarray:
        """The composed channel of one report, ``Q[x, y]`` over the ``2^k`` bit vectors ``y``.

        Column ``y`` is the integer whose bit ``j`` is report bit ``j``. Small domains only.

        Raises
        ------
        ValueError
            ``k 2^k`` above ``CHANNEL_MAX_ENTRIES``.
        """
        k = self.domain_size
        if k * (1 << min(k, 40)) > CHANNEL_MAX_ENTRIES:
            raise ValueError(f"channel_matrix: k 2^k entries for k = {k} is too large for a dense matrix")
        big_p, big_q = float(self.numbers.support_true), float(self.numbers.support_other)
        ys = (np.arange(1 << k)[:, None] >> np.arange(k)[None, :]) & 1  # (2^k, k)
        prob_other = np.where(ys == 1, big_q, 1 - big_q)
        out = np.empty((k, 1 << k))
        for x in range(k):
            col = prob_other.copy()
            col[:, x] = np.where(ys[:, x] == 1, big_p, 1 - big_p)
            out[x] = col.prod(axis=1)
        return out

"""The part of the longitudinal runtimes both report shapes share (numpy + stdlib only).

Plan reading (:meth:`_Longitudinal.from_plan`), the privacy map, the client's memo handling
(``perturb``: lookups, fresh permanent responses, the ``max_values`` rule) and the per-round
aggregate and estimator of :class:`ldpplan.mechanisms.longitudinal.LongitudinalGRR` and
:class:`ldpplan.mechanisms.longitudinal.LongitudinalUE`. See :mod:`.runtime` for the protocol.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from typing import Any, ClassVar, Mapping, Self, Sequence

import numpy as np
import numpy.typing as npt

from .._bitkernels import count_bits
from .._envelope import read_domain, read_envelope
from .._api import report_columns
from .._fit import MAX_ITER, TOL, check_options
from .._intervals import FrequencyVariance
from .._plan import PlanError, check_claim, integer, number, plan_fingerprint, require
from .._envelope import PlanFields
from .._protocol import Aggregate, CountRule, Estimate, Frozen, Reports, check_method, set_fields
from .._sampling import check_rng, on_grid
from ._memo import MAX_MEMO_DOMAIN, MAX_USER, Memo
from ._numbers import Rounds, lifetime_upper
from ._promises import longitudinal_promises

__all__ = ["NOTION", "GUARANTEE_FIELDS", "MAX_ROUNDS"]

#: ``guarantee.notion`` of longitudinal plans.
NOTION = "longitudinal-LDP"
#: The claims of a longitudinal plan besides notion and epsilon (= epsilon_1).
GUARANTEE_FIELDS = ("epsilon_perm", "epsilon_1", "rounds", "max_values", "epsilon_2", "epsilon_lifetime",
                    "epsilon_lifetime_lower", "epsilon_lifetime_one_value", "sources",
                    "max_changes")  # read only to refuse plans of the earlier format in one line
#: Most rounds (and changes) a plan covers.
MAX_ROUNDS = 1 << 20
_MAX_ROUNDS = MAX_ROUNDS


def _probability(value: Any, field: str) -> float:
    p = number(value, field, low=0.0, high=1.0, low_open=True, high_open=True)
    if not on_grid(p):
        raise ValueError(f"{field}: must be a multiple of 2^-48 in (0, 1) (got {p!r})")
    return p


def _values(max_values: Any, max_changes: Any) -> Any:
    """``max_values``, or its deprecated keyword ``max_changes`` (both only when equal); default 1."""
    if max_values is not None and max_changes is not None and max_values != max_changes:
        raise ValueError(f"max_changes: deprecated spelling of max_values; got max_values = {max_values!r} and "
                         f"max_changes = {max_changes!r}: give only max_values")
    return max_values if max_values is not None else (1 if max_changes is None else max_changes)


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class _Longitudinal(Frozen):
    """State and methods shared by both classes (subclasses draw and count).

    ``mechanism`` (the plan mechanism, = ``variant``) is a field: :class:`LongitudinalUE` runs four.
    """

    methods: ClassVar[tuple[str, ...]] = ("empirical",)
    #: this runtime keeps client state: ``perturb`` needs ``memo=``, ``users=`` and ``round=``
    memoized: ClassVar[bool] = True
    count_rule: ClassVar[CountRule] = CountRule(sums_to_n=(("reports",),), at_most_n=(("support",),))
    PLAN_FIELDS: ClassVar[PlanFields]
    #: what a :class:`Memo` stores per (user, value): ``"value"`` (L-GRR) or ``"bits"`` (unary)
    _memo_kind: ClassVar[str]

    mechanism: str
    variant: str
    numbers: Rounds
    domain_size: int
    labels: list[str] | None
    rounds: int
    max_changes: int
    max_values: int
    plan_fingerprint: str
    _variance: tuple[float, float]

    def _init(self, rounds_numbers: Rounds, domain: int | Sequence[str], rounds: int, max_changes: int,
              plan_fingerprint: str | None) -> None:
        # ``max_changes`` here is the number of distinct values (``max_values``; both attributes are set)
        if isinstance(domain, (list, tuple)):
            labels = [str(x) for x in domain]
            if len(set(labels)) != len(labels):
                raise ValueError("domain: labels must be distinct")
        else:
            labels = None
        for name, value, high in (("rounds", rounds, _MAX_ROUNDS), ("max_values", max_changes, _MAX_ROUNDS)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= high:
                raise ValueError(f"{name}: must be an integer in 1..{high} (got {value!r})")
        if max_changes > rounds:
            raise ValueError(f"max_values: at most rounds = {rounds} distinct values fit in the rounds "
                             f"(got {max_changes})")
        if rounds_numbers.ratio_perm <= 1 or rounds_numbers.ratio_1 <= 1:
            raise ValueError("p1, p2: each round must favour the true value (p > q), else the estimator is undefined")
        if plan_fingerprint is None:  # a runtime built from numbers: bound to a digest of its numbers
            doc = {"mechanism": self.mechanism, "k": rounds_numbers.k, "rounds": int(rounds),
                   "p": [str(rounds_numbers.p1), str(rounds_numbers.q1), str(rounds_numbers.p2),
                         str(rounds_numbers.q2)]}
            plan_fingerprint = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()
        set_fields(self, numbers=rounds_numbers, domain_size=rounds_numbers.k, labels=labels, rounds=int(rounds),
                   max_changes=int(max_changes), max_values=int(max_changes), plan_fingerprint=str(plan_fingerprint),
                   _variance=rounds_numbers.variance_line())

    # ------------------------------------------------------------------ privacy
    def privacy_map(self) -> dict[str, Any]:
        """The guarantee of this object's numbers (float64, a few ulps from the exact values).

        Returns
        -------
        dict
            ``notion`` (``"longitudinal-LDP"``), ``epsilon`` (= ``epsilon_1``), ``epsilon_perm``
            (any number of reports of one value; also ``epsilon_lifetime_one_value``), ``epsilon_1``
            (one report), ``rounds``, ``max_values``, ``epsilon_2`` (the second round on the permanent
            response), ``epsilon_lifetime = min(T epsilon_2, V epsilon_perm + floor(T (V-1)/V) epsilon_2)`` (nats; sound
            over every pair of histories of at most ``T`` rounds and ``V`` distinct values).

        References
        ----------
        Erlingsson et al. (CCS 2014), Sec. 3: epsilon-infinity and epsilon_1 of memoized RAPPOR;
        Arcolezi et al. (2022); Ding, Kulkarni, Yekhanin (NeurIPS 2017), Sec. 3: memoization leaks
        value changes (why ``V x epsilon_perm`` is false); the bound's proof in
        ``ldpplan.planner.longitudinal._lifetime``.
        """
        f = self.numbers.floats()
        return {"notion": NOTION, "epsilon": f["epsilon_1"], "epsilon_perm": f["epsilon_perm"],
                "epsilon_1": f["epsilon_1"], "rounds": self.rounds, "max_values": self.max_values,
                "epsilon_2": f["epsilon_2"], "epsilon_lifetime_one_value": f["epsilon_perm"],
                "epsilon_lifetime": lifetime_upper(self.max_values, self.rounds, f["epsilon_perm"], f["epsilon_2"])}

    @classmethod
    def from_plan(cls, plan: Any) -> Self:
        """Build the runtime from a verified plan 2.0 (dict or path), re-checking its guarantee.

        Raises
        ------
        PlanError
            Unreadable or unverified plan, another mechanism, a number off the 2^-48 grid or out
            of range, a plan that contradicts its embedded spec, a claim (``epsilon``,
            ``epsilon_perm``, ``epsilon_1``, ``epsilon_2``, ``epsilon_lifetime``,
            ``epsilon_lifetime_one_value``) below what the numbers give, or a plan of the earlier
            format (``guarantee.max_changes``: its lifetime claim ``max_changes x epsilon_perm`` was false).
        """
        data = read_envelope(plan, cls.PLAN_FIELDS, verified=True)
        if "max_changes" in (data.get("guarantee") or {}):
            raise PlanError("guarantee.max_changes: a plan of the earlier format claims max_changes x epsilon_perm "
                            "over a lifetime, which is false once values change; re-plan the spec")
        size, labels = read_domain(data, low=2, high=MAX_MEMO_DOMAIN)  # the family's cap, as verify
        k = integer(require(data, "params.domain_size"), "params.domain_size", low=2)
        if k != size:
            raise PlanError(f"params.domain_size: must equal domain.size = {size} (got {k})")
        gu = require(data, "guarantee")
        if gu.get("notion") != NOTION:
            raise PlanError(f"guarantee.notion: must be {NOTION!r} (got {gu.get('notion')!r:.40})")
        rounds = integer(require(data, "guarantee.rounds"), "guarantee.rounds", low=1, high=_MAX_ROUNDS)
        changes = integer(require(data, "guarantee.max_values"), "guarantee.max_values", low=1, high=rounds)
        longitudinal_promises(data)
        try:
            mech = cls._from_params(data, require(data, "params"), labels if labels is not None else k, rounds,
                                    changes, plan_fingerprint(data))
        except ValueError as exc:
            if isinstance(exc, PlanError):
                raise
            raise PlanError(f"params: {exc}") from None
        pm, ex = mech.privacy_map(), mech.numbers.exact()
        exact_of = {"epsilon": "epsilon_1", "epsilon_lifetime_one_value": "epsilon_perm"}
        for key in ("epsilon", "epsilon_perm", "epsilon_1", "epsilon_2", "epsilon_lifetime_one_value"):
            exact_key = exact_of.get(key, key)
            check_claim(pm[key], gu.get(key), f"guarantee.{key}", exact=functools.partial(ex.__getitem__, exact_key))
        # the claims above bound the exact values; the bound of the claims is then at least the exact bound
        lifetime = lifetime_upper(changes, rounds, number(gu["epsilon_perm"], "guarantee.epsilon_perm", low=0.0),
                                  number(gu["epsilon_2"], "guarantee.epsilon_2", low=0.0))
        claimed = number(gu.get("epsilon_lifetime"), "guarantee.epsilon_lifetime", low=0.0)
        if claimed < lifetime:
            raise PlanError(f"guarantee.epsilon_lifetime: claims {gu.get('epsilon_lifetime')!r} but the sound bound "
                            f"min(rounds x epsilon_2, max_values x epsilon_perm + floor(rounds (max_values-1)/max_values) "
                            f"x epsilon_2) = {lifetime!r}; the runtime refuses a plan that claims more privacy than its "
                            "numbers give")
        if number(gu.get("epsilon_lifetime_lower"), "guarantee.epsilon_lifetime_lower", low=0.0) > claimed:
            raise PlanError("guarantee.epsilon_lifetime_lower: a lower bound above the plan's epsilon_lifetime")
        return mech

    # ------------------------------------------------------------------ client
    def new_memo(self) -> Memo:
        """An empty memo bound to this runtime's plan (its fingerprint)."""
        return Memo(self.plan_fingerprint, self.mechanism, self.domain_size, self._memo_kind, self.max_changes)

    def _check_call(self, data: Any, memo: Memo | None, users: npt.ArrayLike | None,
                    round: int | None) -> tuple[np.ndarray, np.ndarray, int]:
        if memo is None:
            raise ValueError(f"memo: {self.mechanism} perturbs only with a Memo (mech.new_memo() or Memo.from_bytes); "
                             "a fresh permanent response per report would void epsilon_perm")
        if not isinstance(memo, Memo):
            raise ValueError(f"memo: must be a Memo (got {type(memo).__name__})")
        if memo.binding != self.plan_fingerprint or memo.mechanism != self.mechanism \
                or memo.domain_size != self.domain_size or memo.max_values != self.max_changes:
            raise ValueError(f"memo: belongs to another plan ({memo.mechanism}, {memo.binding[:16]}...), not to this "
                             f"{self.mechanism} plan ({self.plan_fingerprint[:16]}...)")
        if isinstance(round, bool) or not isinstance(round, (int, np.integer)) or not 0 <= round < self.rounds:
            raise ValueError(f"round: must be an integer in 0..{self.rounds - 1} (got {round!r})")
        x = np.asarray(data)
        if x.ndim != 1 or (x.size and x.dtype.kind not in "iu"):
            raise ValueError(f"data: must be a 1-D array of value indices (got dtype {x.dtype}, shape {x.shape})")
        x = x.astype(np.int64)
        if x.size and (x.min() < 0 or x.max() >= self.domain_size):
            raise ValueError(f"data: values must be in [0, {self.domain_size})")
        if users is None:
            raise ValueError("users: perturb needs each report's user id (the memo is keyed by user and value)")
        u = np.asarray(users)
        if u.shape != x.shape or (u.size and u.dtype.kind not in "iu"):
            raise ValueError(f"users: must be integer ids, one per value (got shape {u.shape}, data {x.shape})")
        u = u.astype(np.int64)
        if u.size and (u.min() < 0 or u.max() > MAX_USER):
            raise ValueError(f"users: ids must be in [0, {MAX_USER}]")
        return x, u, int(round)

    def perturb(self, data: Any, rng: np.random.Generator, *, memo: Memo | None = None,
                users: npt.ArrayLike | None = None,
                round: int | None = None) -> Reports:
        """One report per row: re-randomize the row's memoized permanent response afresh.

        Parameters
        ----------
        data : array_like of int, shape (n,)
            Value indices in ``[0, k)``.
        rng : numpy.random.Generator
        memo : Memo
            Required (``ValueError`` without). Pairs (user, value) not yet in it get a permanent
            response drawn now and added (append-only), and each user's round is recorded;
            nothing changes when the call refuses.
        users : array_like of int, shape (n,)
            User ids in ``[0, 2^40)``, distinct (one report per user and round).
        round : int
            The collection round, ``0 .. rounds - 1`` (reports carry it); never before the memo's
            ``last_round`` (rounds go forward only), and never a round a user already reported in.

        Returns
        -------
        Reports
            Columns ``round`` (int64) and ``y`` (L-GRR, int64) or ``bits`` (unary encodings).

        Raises
        ------
        ValueError
            No memo, another plan's memo, bad data, users or round, a round before the memo's
            last round, a user twice in the call or already reported in this round, or a user
            whose distinct values would exceed ``max_values`` (the lifetime guarantee would
            not hold).
        """
        check_rng(rng)
        x, u, r = self._check_call(data, memo, users, round)
        assert memo is not None  # _check_call refuses a missing memo
        memo.check_round(u, r)
        keys = memo.keys_of(u, x)
        fresh, over = self._over_limit(memo, keys)
        if over.size:
            raise ValueError(f"users: user {int(over[0])} would hold more than max_values = {self.max_changes} "
                             "distinct values; the plan's lifetime guarantee does not cover it (nothing was reported)")
        memo._add(fresh, self._permanent(fresh % self.domain_size, rng))
        memo._served(u, r)
        _, index = memo.lookup(keys)
        return self._instantaneous(memo.responses_at(index), r, rng)

    def _over_limit(self, memo: Memo, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The fresh keys (sorted, distinct) and the users they would take over ``max_values`` (sorted)."""
        found, _ = memo.lookup(keys)
        fresh = np.unique(keys[~found])
        fresh_users = fresh // self.domain_size
        if not fresh.size:
            return fresh, fresh_users
        starts = np.flatnonzero(np.r_[True, fresh_users[1:] != fresh_users[:-1]])  # fresh is sorted
        cand, extra = fresh_users[starts], np.diff(np.r_[starts, fresh_users.size])
        return fresh, cand[memo.values_per_user(cand) + extra > self.max_changes]

    def over_limit(self, data: Any, *, memo: Memo, users: npt.ArrayLike | None) -> np.ndarray:
        """Which rows' users a ``perturb`` with ``memo`` would refuse for holding over ``max_values`` values.

        For dropping such users (``ldpplan perturb --skip-over-limit``) instead of refusing the
        whole batch: ``keep = ~mech.over_limit(x, memo=memo, users=u)``. Changes nothing.

        Parameters
        ----------
        data, users : array_like of int, shape (n,)
            As :meth:`perturb`.
        memo : Memo

        Returns
        -------
        numpy.ndarray of bool, shape (n,)

        Raises
        ------
        ValueError
            What :meth:`perturb` refuses about the memo, data and users.
        """
        x, u, _ = self._check_call(data, memo, users, 0)
        _, over = self._over_limit(memo, memo.keys_of(u, x))
        return np.isin(u, over)

    # ------------------------------------------------------------------ each subclass defines these
    @classmethod
    def _from_params(cls, data: Any, params: Mapping[str, Any], domain: int | Sequence[str], rounds: int,
                     changes: int, fingerprint: str | None) -> Self:
        raise NotImplementedError

    def _permanent(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError

    def _instantaneous(self, permanent: np.ndarray, round: int, rng: np.random.Generator) -> Reports:
        raise NotImplementedError

    def aggregate(self, reports: Any) -> Aggregate:
        """Counts per round (each subclass its report column)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ server
    def _columns(self, reports: Any, data_column: str) -> tuple[np.ndarray, np.ndarray]:
        rnd = report_columns(reports, self.mechanism, ("round",), mappings=False)["round"]
        if data_column not in reports.columns:
            raise ValueError(f"reports.{data_column}: required column is missing (columns: {sorted(reports.columns)})")
        if rnd.size and (rnd.min() < 0 or rnd.max() >= self.rounds):
            raise ValueError(f"reports.round: must be in [0, {self.rounds})")
        return rnd.astype(np.int64), np.asarray(reports.columns[data_column])

    def _per_round(self, rnd: np.ndarray, support_rows: np.ndarray | None, values: np.ndarray | None) -> Aggregate:
        reports = np.bincount(rnd, minlength=self.rounds)
        support = np.zeros((self.rounds, self.domain_size), dtype=np.int64)
        if values is not None:  # L-GRR: counts of each reported value per round
            np.add.at(support, (rnd, values), 1)
        else:
            assert support_rows is not None  # the callers pass one of values, support_rows
            for t in np.flatnonzero(reports):
                support[t] = count_bits(support_rows[rnd == t], self.domain_size)
        return Aggregate(self.mechanism, int(rnd.size), {"reports": reports, "support": support})

    def _as_aggregate(self, source: Any) -> Aggregate:
        if isinstance(source, Aggregate):
            if source.mechanism != self.mechanism:
                raise ValueError(f"aggregate.mechanism: must be {self.mechanism!r} (got {source.mechanism!r})")
            counts = source.counts
            if set(counts) != {"reports", "support"} or counts["reports"].shape != (self.rounds,) \
                    or counts["support"].shape != (self.rounds, self.domain_size):
                raise ValueError(f"aggregate.counts: a {self.mechanism} aggregate has 'reports' ({self.rounds},) and "
                                 f"'support' ({self.rounds}, {self.domain_size})")
            reports, support = counts["reports"], counts["support"]
            if int(reports.sum()) != source.n or np.any(support > reports[:, None]):
                raise ValueError("aggregate.counts: support counts must be at most the round's reports, which sum to n")
            return source
        return self.aggregate(source)

    def estimate(self, reports_or_aggregate: Any, method: str | None = None, *, round: int | None = None,
                 tol: float = TOL, max_iter: int = MAX_ITER) -> Estimate:
        """Unbiased frequencies of one round: ``(C(v)/n_t - Q) / ((p1 - q1)(p2 - q2))``.

        Parameters
        ----------
        reports_or_aggregate : Reports or Aggregate
        method : {"empirical"}
        round : int, optional
            The round to estimate; default: the last round with reports (the latest collection),
            so that merged aggregates of several rounds estimate like any other aggregate.
        tol, max_iter : float, int
            The runtime API's estimator options (``tol >= 0``, ``max_iter >= 1``), checked and unused:
            the only method is exact (no iterations).

        Returns
        -------
        Estimate
            ``frequency`` shape ``(k,)``, ``n`` the round's reports, ``std_error`` the plug-in
            standard error, ``variance`` the exact ``n Var = c0 + c1 f`` (the papers'
            approximate variance is ``c0 / n``).

        References
        ----------
        Arcolezi et al. (2022), the longitudinal estimator and its approximate variance;
        Erlingsson et al. (2014).
        """
        method = check_method(method, self.methods)
        check_options(tol, max_iter)  # the runtime API's options; the estimator is exact
        agg = self._as_aggregate(reports_or_aggregate)
        present = [int(t) for t in np.flatnonzero(agg.counts["reports"])]
        if not present:
            raise ValueError("aggregate.n: needs at least one report to estimate")
        if round is None:
            round = present[-1]
        if isinstance(round, bool) or not isinstance(round, (int, np.integer)) or round not in present:
            raise ValueError(f"round: must be a round with reports, one of {present[:20]} (got {round!r})")
        n = int(agg.counts["reports"][round])
        nb = self.numbers
        big_q = float(nb.support_other)
        spread = float((nb.p1 - nb.q1) * (nb.p2 - nb.q2))
        emp = (agg.counts["support"][round].astype(np.float64) / n - big_q) / spread
        c0, c1 = self._variance
        std = np.sqrt((c0 + c1 * np.clip(emp, 0.0, 1.0)) / n)
        var = FrequencyVariance(emp, np.asarray(c0), np.asarray(c1), np.asarray(0.0), n,
                                source="Arcolezi et al. (2022), longitudinal estimator variance")
        return Estimate(emp, None, method, n, std_error=std, variance=var)

    def predicted_variance(self, n: int, frequency: float = 0.0) -> float:
        """Variance of one round's estimate with ``n`` reports at true frequency ``frequency``."""
        c0, c1 = self._variance
        return (c0 + c1 * float(frequency)) / int(n)

    def __repr__(self) -> str:
        nb = self.numbers
        return (f"{type(self).__name__}(mechanism={self.mechanism!r}, domain_size={self.domain_size}, "
                f"p1={float(nb.p1)!r}, q1={float(nb.q1)!r}, p2={float(nb.p2)!r}, q2={float(nb.q2)!r}, "
                f"rounds={self.rounds}, max_values={self.max_values})")

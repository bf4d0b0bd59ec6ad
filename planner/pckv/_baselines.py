r"""PCKV's comparison baselines: PrivKV / PrivKVM (Ye et al., S&P 2019) and KVUE (Sun et al., 2019).

Simulation-only comparison mechanisms (no plan format, no ``from_plan``, not in
``mechanisms.RUNTIMES``): they live with the PCKV simulation (:mod:`._simulate_baselines`), not in
the client runtime, and are built from the runtime's public pieces (reports, aggregates, exact
grid sampling). Both
use the *naive sampling* protocol: each user draws one key index ``j`` uniformly from the
``d`` keys (public, independent of the data) and reports about that key only: ``<1, v>`` if
she holds ``j`` with value ``v``, else ``<0, 0>``. Values are discretised to ``+-1`` with
``Pr(+1) = (1 + v)/2`` (values outside [-1, 1] are clipped).

PrivKVM (PCKV Sec. 4.2, the description the PCKV paper gives of [25])
    Round 1: the key bit is kept with ``p1 = e^{epsilon/2}/(1 + e^{epsilon/2})``; a reported
    ``1`` carries the discretised true value (holder) or a fake value ``v~ = 0`` (non-holder),
    each kept with ``p2 = e^{epsilon/(2c)}/(1 + e^{epsilon/(2c)})``. Rounds 2..c (``rounds = c``):
    the key report of round 1 is re-used (no key budget) and the value is re-perturbed with
    ``epsilon/(2c)``; a non-holder's fake value is the server's previous mean estimate of key
    ``j``. Sequential composition: ``epsilon/2 + c epsilon/(2c) = epsilon``. Estimator (the
    PrivKV one): ``f = (K/N + p1 - 1)/(2 p1 - 1)`` with ``N`` the users who sampled the key and
    ``K`` its reported 1s; mean ``(n1* - n2*)/K`` with the value-calibrated counts
    ``n1* = ((p2 - 1) K + n1)/(2 p2 - 1)`` (``corrected`` clips them to ``[0, K]``, the
    PrivKV outlier correction). ``virtual_rounds = v`` (PCKV's "1r5v"): after one real round
    the server predicts ``v`` further rounds, ``m_{r+1} = m_1 + beta m_r`` with the estimated
    fake share ``beta`` of the reported 1s (our reconstruction: the expected outcome of a real
    round whose fakes carry ``m_r``; the PrivKVM paper is not in the corpus).

KVUE (PCKV Sec. 6: "uses the same sampling protocol as in PrivKVM", UE-based, with
PrivKVM's correction)
    Reconstructed here (Sun et al. are not in the corpus) as the unary encoding of the
    sampled key's state: two bits ``(s+, s-)``: ``(1, 0)`` for ``<1, +1>``, ``(0, 1)`` for
    ``<1, -1>``, ``(0, 0)`` for ``<0, 0>``, each perturbed with the optimised UE
    probabilities (keep a 1 with ``p = 1/2``, raise a 0 with ``q = 1/(e^epsilon + 1)``): one
    ``epsilon``, no key/value split (worst ratio ``p(1-q)/(q(1-p)) = e^epsilon`` between
    ``<1, +1>`` and ``<1, -1>``). Estimator: ``n+- * = (c+- - q N)/(p - q)``, ``f = (n+* + n-*)/N``,
    ``m = (n+* - n-*)/(n+* + n-*)`` (``corrected``: counts clipped to ``[0, N]``).

Probabilities are on the 2^-48 grid, rounded toward privacy (``p1``, ``p2`` down; ``q`` up).
"""
from __future__ import annotations

import dataclasses
import itertools
from typing import Any, ClassVar

import numpy as np

from ...mechanisms import (Aggregate, CountRule, Estimate, Frozen, Reports, bernoulli, bernoulli_iid, check_method,
                           check_rng, to_grid)
from ...mechanisms._protocol import set_fields
from ...mechanisms.pckv import KeyValueUsers
from ...solvers._checks import check_epsilon

__all__ = ["PrivKVM", "KVUE", "keep_probability"]


def keep_probability(epsilon: float) -> float:
    """``e^epsilon/(1 + e^epsilon)`` rounded down to the 2^-48 grid (binary RR at ``epsilon`` nats)."""
    return to_grid(1.0 / (1.0 + np.exp(-float(epsilon))), "down")


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class _NaiveSampling(Frozen):
    """Shared: the naive sampling, discretisation, report checks and aggregation."""

    mechanism: ClassVar[str] = ""
    methods: ClassVar[tuple[str, ...]] = ("corrected", "empirical")
    _columns: ClassVar[tuple[str, ...]] = ("j", "k", "v")
    #: attributes shown by ``repr`` besides epsilon and domain_size
    _repr_fields: ClassVar[tuple[str, ...]] = ()

    epsilon: float
    domain_size: int
    labels: None

    def _init(self, epsilon: float, domain_size: int) -> None:
        if isinstance(domain_size, bool) or int(domain_size) != domain_size or int(domain_size) < 2:
            raise ValueError(f"domain_size: must be an integer >= 2 (got {domain_size!r})")
        set_fields(self, epsilon=check_epsilon(epsilon, maximum=50), domain_size=int(domain_size), labels=None)

    def _sample(self, users, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(j, holder, value)`` per user: the sampled index, whether she holds it, its value (else 0)."""
        check_rng(rng)
        users = users if isinstance(users, KeyValueUsers) else KeyValueUsers.from_pairs(users)
        n, d = users.n_users, self.domain_size
        if users.keys.size and (users.keys.min() < 0 or users.keys.max() >= d):
            raise ValueError(f"users.keys: must be in [0, {d})")
        j = rng.integers(0, d, size=n, dtype=np.int64)
        owner = np.repeat(np.arange(n), np.diff(users.indptr))
        hit = users.keys == j[owner]
        holder = np.zeros(n, dtype=bool)
        holder[owner[hit]] = True
        value = np.zeros(n)
        value[owner[hit]] = np.clip(users.values[hit], -1.0, 1.0)
        return j, holder, value

    @staticmethod
    def _discretize(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``+1`` with probability ``(1 + v)/2`` (on the grid), else ``-1`` (int8)."""
        up = bernoulli(rng, to_grid((1.0 + np.clip(values, -1.0, 1.0)) / 2.0, "nearest"))
        return np.where(up, 1, -1).astype(np.int8)

    def _read(self, reports) -> dict[str, np.ndarray]:
        if not isinstance(reports, Reports) or reports.mechanism != self.mechanism:
            raise ValueError(f"reports: must be {self.mechanism!r} Reports")
        cols = {}
        for c in self._columns:
            if c not in reports.columns:
                raise ValueError(f"reports.{c}: required column is missing")
            x = np.asarray(reports.columns[c])
            if x.dtype.kind not in "iu" or x.ndim != 1 or x.shape[0] != len(reports):
                raise ValueError(f"reports.{c}: must be a 1-D integer array of length {len(reports)}")
            cols[c] = x.astype(np.int64)
        if cols["j"].size and (cols["j"].min() < 0 or cols["j"].max() >= self.domain_size):
            raise ValueError(f"reports.j: must be in [0, {self.domain_size})")
        return cols

    def _as_aggregate(self, source) -> Aggregate:
        if isinstance(source, Aggregate):
            if source.mechanism != self.mechanism or set(source.counts) != {"sampled", "n1", "n2"}:
                raise ValueError(f"aggregate: must be a {self.mechanism!r} aggregate with counts sampled, n1, n2")
            return source
        return self.aggregate(source)

    def aggregate(self, reports) -> Aggregate:
        """Count the reports (each subclass its own columns)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        extra = "".join(f", {k}={getattr(self, k)!r}" for k in self._repr_fields)
        return f"{type(self).__name__}(epsilon={self.epsilon!r}, domain_size={self.domain_size}{extra})"


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class PrivKVM(_NaiveSampling):
    """PrivKV (``rounds=1``), PrivKVM (``rounds=c``) and PrivKVM with virtual rounds (see the module docstring).

    Parameters
    ----------
    epsilon : float
        Total budget (nats): key ``epsilon/2``, value ``epsilon/(2c)`` per round.
    domain_size : int
        ``d``.
    rounds : int, default 1
        ``c`` real rounds (users online in every round).
    virtual_rounds : int, default 0
        Rounds predicted by the server after the last real round (PCKV's "1r5v": 1 and 5).

    References
    ----------
    Gu et al., PCKV (USENIX Security 2020), Sec. 4.2, Sec. 5.2 ("No tight budget composition for
    PrivKVM"), Sec. 6 ("Mechanisms for comparison"); Ye et al., PrivKV (S&P 2019).
    """

    mechanism: ClassVar[str] = "privkvm"
    #: one sampled key per report; a report is <1, +-1> (n1 or n2) for its key only when kept
    count_rule: ClassVar[CountRule] = CountRule(sums_to_n=(("sampled",),), at_most_column=((("n1", "n2"), "sampled"),))
    _repr_fields: ClassVar[tuple[str, ...]] = ("rounds", "virtual_rounds")

    rounds: int
    virtual_rounds: int
    p1: float
    p2: float

    def __init__(self, epsilon: float, domain_size: int, *, rounds: int = 1, virtual_rounds: int = 0) -> None:
        self._init(epsilon, domain_size)
        for name, v, low in (("rounds", rounds, 1), ("virtual_rounds", virtual_rounds, 0)):
            if isinstance(v, bool) or int(v) != v or not low <= int(v) <= 1000:
                raise ValueError(f"{name}: must be an integer in [{low}, 1000] (got {v!r})")
        c = int(rounds)
        set_fields(self, rounds=c, virtual_rounds=int(virtual_rounds), p1=keep_probability(self.epsilon / 2),
                   p2=keep_probability(self.epsilon / (2 * c)))

    def privacy_map(self) -> dict[str, Any]:
        """Budgets of this object's numbers (nats).

        ``epsilon1 = ln(p1/(1-p1))`` (key, round 1), ``epsilon2 = ln(p2/(1-p2))`` (value, per
        round), ``epsilon = epsilon1 + c epsilon2`` (sequential composition, the paper's
        statement) and ``epsilon_channel``: the exact worst case of the whole channel when the
        server's fake means of rounds 2..c are +-1, ``epsilon1 + ln(2 p2) + (c-1) epsilon2``
        (round 1's fake value 0 gives a non-holder ``+-1`` with probability 1/2 each).
        """
        e1 = float(np.log(self.p1 / (1 - self.p1)))
        e2 = float(np.log(self.p2 / (1 - self.p2)))
        return {"notion": "LDP", "epsilon": e1 + self.rounds * e2, "epsilon1": e1, "epsilon2": e2,
                "rounds": self.rounds, "composition": "sequential: epsilon/2 + c * epsilon/(2c) (PCKV Sec. 4.2)",
                "epsilon_channel": e1 + float(np.log(2 * self.p2)) + (self.rounds - 1) * e2}

    def channel_row(self, state: int, fake_means=None) -> dict[tuple, float]:
        """Output distribution for one sampled key: ``{(k, v_1, ..., v_c): probability}``.

        ``state``: 0 (key not held), +1 or -1 (held with that discretised value).
        ``fake_means``: the non-holder's fake value per round (default 0 in round 1 and 0 later).
        """
        c = self.rounds
        fakes = [0.0] * c if fake_means is None else [float(x) for x in fake_means]
        out = {(0,) + (0,) * c: (1 - self.p1) if state else self.p1}
        for signs in itertools.product((1, -1), repeat=c):
            pr = self.p1 if state else 1 - self.p1
            for r, s in enumerate(signs):
                up = (1.0 + state) / 2 if state else (1.0 + fakes[r]) / 2
                p_plus = up * self.p2 + (1 - up) * (1 - self.p2)
                pr *= p_plus if s == 1 else 1 - p_plus
            out[(1,) + signs] = pr
        return out

    def perturb(self, users, rng: np.random.Generator) -> Reports:
        """Round 1. Columns ``j`` (sampled key), ``k`` (0/1), ``v`` (+-1 when ``k = 1``, else 0)."""
        return self._round1(users, rng)[0]

    def _round1(self, users, rng) -> tuple[Reports, np.ndarray, np.ndarray]:
        j, holder, value = self._sample(users, rng)
        keep = bernoulli_iid(rng, self.p1, j.size)
        k = np.where(keep, holder, ~holder)
        v = self._value(np.where(holder, value, 0.0), k, rng)
        return Reports(self.mechanism, {"j": j, "k": k.astype(np.int8), "v": v}), holder, value

    def _value(self, base: np.ndarray, k: np.ndarray, rng) -> np.ndarray:
        star = self._discretize(base, rng)
        keep = bernoulli_iid(rng, self.p2, base.size)
        return np.where(k.astype(bool), np.where(keep, star, -star), 0).astype(np.int8)

    def aggregate(self, reports) -> Aggregate:
        """Per key: ``sampled`` (users with ``j = k``), ``n1`` / ``n2`` (reports ``<1, +1>`` / ``<1, -1>``)."""
        r = self._read(reports)
        if not np.isin(r["k"], (0, 1)).all() or not np.isin(r["v"], (-1, 0, 1)).all() \
                or not np.array_equal(r["v"] != 0, r["k"] == 1):
            raise ValueError("reports.k/v: k must be 0/1 and v must be +-1 exactly when k = 1 (0 otherwise)")
        d, j, one = self.domain_size, r["j"], r["k"] == 1
        return Aggregate(self.mechanism, int(j.size), {
            "sampled": np.bincount(j, minlength=d), "n1": np.bincount(j[one & (r["v"] == 1)], minlength=d),
            "n2": np.bincount(j[one & (r["v"] == -1)], minlength=d)})

    def _round(self, agg: Aggregate, corrected: bool) -> tuple[np.ndarray, np.ndarray]:
        N, n1, n2 = (agg.counts[c].astype(float) for c in ("sampled", "n1", "n2"))
        K = n1 + n2
        with np.errstate(divide="ignore", invalid="ignore"):
            f = np.where(N > 0, (K / N + self.p1 - 1) / (2 * self.p1 - 1), 0.0)
            c1 = ((self.p2 - 1) * K + n1) / (2 * self.p2 - 1)
            c2 = ((self.p2 - 1) * K + n2) / (2 * self.p2 - 1)
            if corrected:
                f, c1, c2 = np.clip(f, 0.0, 1.0), np.clip(c1, 0, K), np.clip(c2, 0, K)
            m = np.where(K > 0, (c1 - c2) / K, 0.0)
        return f, m

    def _virtual(self, f: np.ndarray, m1: np.ndarray) -> np.ndarray:
        fc = np.clip(f, 0.0, 1.0)
        share = fc * self.p1 + (1 - fc) * (1 - self.p1)
        beta = (1 - fc) * (1 - self.p1) / share
        m = m1
        for _ in range(self.virtual_rounds):
            m = np.clip(m1 + beta * m, -1.0, 1.0)
        return m

    def estimate(self, reports_or_aggregate, method: str | None = None) -> Estimate:
        """Frequency and mean of one round (plus the virtual rounds); method ``corrected`` (default) or ``empirical``."""
        method = check_method(method, self.methods)
        agg = self._as_aggregate(reports_or_aggregate)
        f, m = self._round(agg, method == "corrected")
        if self.virtual_rounds:
            m = self._virtual(f, m)
        return Estimate(f, m, method, agg.n)

    def collect(self, users, rng: np.random.Generator, method: str | None = None) -> Estimate:
        """All ``c`` real rounds (the interactive protocol), then the virtual rounds.

        Frequencies come from round 1; the mean from the last round, whose non-holders' fake
        values are the previous round's (corrected) mean estimates.
        """
        method = check_method(method, self.methods)
        first, holder, value = self._round1(users, rng)
        agg = self.aggregate(first)
        f, m = self._round(agg, method == "corrected")
        k, j = first.columns["k"], first.columns["j"]
        for _ in range(self.rounds - 1):
            prev = self._round(agg, True)[1]
            v = self._value(np.where(holder, value, prev[j]), k, rng)
            agg = self.aggregate(Reports(self.mechanism, {"j": j, "k": k, "v": v}))
            m = self._round(agg, method == "corrected")[1]
        if self.virtual_rounds:
            m = self._virtual(f, m)
        return Estimate(f, m, method, agg.n)

    def predicted_mse(self, frequencies, means, n: int) -> tuple[np.ndarray, np.ndarray]:
        """First-order MSE of the one-round (``rounds=1``, no virtual rounds) empirical estimator, per key.

        Frequency: ``(d/n) [f(1-f)(1-1/d) + p1(1-p1)/(2p1-1)^2]``. Mean: the bias of the fake
        zeros, ``m_b - m`` with ``m_b = f p1 m / q`` (``q = f p1 + (1-f)(1-p1)``), squared, plus
        ``(1 - (2p2-1)^2 m_b^2) d / ((2p2-1)^2 n q)``. Derived here from the mechanism (PCKV
        Sec. 4.2), first order in ``d/n`` (``E[1/N] ~ d/n``).

        Raises
        ------
        ValueError
            For ``rounds > 1`` or virtual rounds (no closed form).
        """
        if self.rounds != 1 or self.virtual_rounds:
            raise ValueError("predicted_mse: only for rounds = 1 without virtual rounds")
        f, m = np.asarray(frequencies, float), np.asarray(means, float)
        d, p1, p2 = self.domain_size, self.p1, self.p2
        mse_f = d / n * (f * (1 - f) * (1 - 1 / d) + p1 * (1 - p1) / (2 * p1 - 1) ** 2)
        q = f * p1 + (1 - f) * (1 - p1)
        mb = f * p1 * m / q
        mse_m = (mb - m) ** 2 + (1 - (2 * p2 - 1) ** 2 * mb ** 2) * d / ((2 * p2 - 1) ** 2 * n * q)
        return mse_f, mse_m


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class KVUE(_NaiveSampling):
    """KVUE as reconstructed in the module docstring: naive sampling + OUE on the pair's two state bits.

    Parameters
    ----------
    epsilon : float
        Budget (nats) of the whole report.
    domain_size : int

    References
    ----------
    Gu et al., PCKV (USENIX Security 2020), Sec. 6; Sun et al., "Conditional analysis for
    key-value data with local differential privacy", arXiv:1907.05014 (2019); Wang et al.
    (USENIX Security 2017), OUE.
    """

    mechanism: ClassVar[str] = "kvue"
    #: one sampled key per report; its s+ and s- bits at most once each
    count_rule: ClassVar[CountRule] = CountRule(sums_to_n=(("sampled",),),
                                                at_most_column=((("n1",), "sampled"), (("n2",), "sampled")))
    _columns: ClassVar[tuple[str, ...]] = ("j", "plus", "minus")

    p: float
    q: float

    def __init__(self, epsilon: float, domain_size: int) -> None:
        self._init(epsilon, domain_size)
        set_fields(self, p=0.5, q=to_grid(1.0 / (np.exp(self.epsilon) + 1.0), "up"))

    def privacy_map(self) -> dict[str, Any]:
        """``epsilon = ln(p(1-q)/(q(1-p)))`` (nats), the exact worst case over the three states."""
        p, q = self.p, self.q
        return {"notion": "LDP", "epsilon": float(np.log(p * (1 - q) / (q * (1 - p)))), "p": p, "q": q}

    def channel_row(self, state: int) -> dict[tuple, float]:
        """``{(s+, s-): probability}`` for one sampled key in ``state`` 0, +1 or -1."""
        bits = {0: (0, 0), 1: (1, 0), -1: (0, 1)}[int(state)]
        out = {}
        for a in (0, 1):
            for b in (0, 1):
                pr = 1.0
                for true, o in zip(bits, (a, b)):
                    one = self.p if true else self.q
                    pr *= one if o else 1 - one
                out[(a, b)] = pr
        return out

    def perturb(self, users, rng: np.random.Generator) -> Reports:
        """Columns ``j``, ``plus``, ``minus`` (the perturbed state bits, int8)."""
        j, holder, value = self._sample(users, rng)
        star = self._discretize(value, rng)
        n = j.size
        plus = np.where(holder & (star == 1), bernoulli_iid(rng, self.p, n), bernoulli_iid(rng, self.q, n))
        minus = np.where(holder & (star == -1), bernoulli_iid(rng, self.p, n), bernoulli_iid(rng, self.q, n))
        return Reports(self.mechanism, {"j": j, "plus": plus.astype(np.int8), "minus": minus.astype(np.int8)})

    def aggregate(self, reports) -> Aggregate:
        """Per key: ``sampled``, ``n1`` (``s+`` bits set), ``n2`` (``s-`` bits set)."""
        r = self._read(reports)
        if not (np.isin(r["plus"], (0, 1)).all() and np.isin(r["minus"], (0, 1)).all()):
            raise ValueError("reports.plus/minus: must be 0/1 bits")
        d, j = self.domain_size, r["j"]
        return Aggregate(self.mechanism, int(j.size), {"sampled": np.bincount(j, minlength=d),
                                                       "n1": np.bincount(j[r["plus"] == 1], minlength=d),
                                                       "n2": np.bincount(j[r["minus"] == 1], minlength=d)})

    def estimate(self, reports_or_aggregate, method: str | None = None) -> Estimate:
        """Frequency and mean; method ``corrected`` (default, counts clipped to [0, N]) or ``empirical``."""
        method = check_method(method, self.methods)
        agg = self._as_aggregate(reports_or_aggregate)
        N, c1, c2 = (agg.counts[c].astype(float) for c in ("sampled", "n1", "n2"))
        t1, t2 = (c1 - self.q * N) / (self.p - self.q), (c2 - self.q * N) / (self.p - self.q)
        if method == "corrected":
            t1, t2 = np.clip(t1, 0, N), np.clip(t2, 0, N)
        with np.errstate(divide="ignore", invalid="ignore"):
            f = np.where(N > 0, (t1 + t2) / N, 0.0)
            m = np.where(t1 + t2 != 0, (t1 - t2) / (t1 + t2), 0.0)
        if method == "corrected":
            f = np.clip(f, 0.0, 1.0)
        return Estimate(f, m, method, agg.n)

    def predicted_mse(self, frequencies, means, n: int) -> tuple[np.ndarray, np.ndarray]:
        """First-order MSE per key (derived here; ``E[1/N] ~ d/n``, delta method for the mean ratio).

        Frequency: ``(d/n)[f(1-f)(1-1/d) + (f(p(1-p) + q(1-q)) + 2(1-f) q(1-q))/(p-q)^2]``.
        Mean: ``d/(n f^2) [f((1+m)/2 A+ + (1-m)/2 A-) + (1-f) A0 + f(1-m^2)]`` with
        ``A+ = ((1-m)^2 p(1-p) + (1+m)^2 q(1-q))/(p-q)^2``, ``A-`` with ``p, q`` swapped,
        ``A0 = ((1-m)^2 + (1+m)^2) q(1-q)/(p-q)^2``.
        """
        f, m = np.asarray(frequencies, float), np.asarray(means, float)
        d, p, q = self.domain_size, self.p, self.q
        vp, vq, g = p * (1 - p), q * (1 - q), (p - q) ** 2
        mse_f = d / n * (f * (1 - f) * (1 - 1 / d) + (f * (vp + vq) + 2 * (1 - f) * vq) / g)
        a_plus = ((1 - m) ** 2 * vp + (1 + m) ** 2 * vq) / g
        a_minus = ((1 - m) ** 2 * vq + (1 + m) ** 2 * vp) / g
        a0 = ((1 - m) ** 2 + (1 + m) ** 2) * vq / g
        with np.errstate(divide="ignore", invalid="ignore"):
            mse_m = d / (n * f ** 2) * (f * ((1 + m) / 2 * a_plus + (1 - m) / 2 * a_minus) + (1 - f) * a0
                                         + f * (1 - m ** 2))
        return mse_f, mse_m

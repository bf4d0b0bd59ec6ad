r"""PCKV-UE and PCKV-GRR runtimes for key-value data (numpy only).

Source: Gu, Li, Cheng, Xiong, Cao, *PCKV: Locally Differentially Private Correlated
Key-Value Data Collection with Optimized Utility*, USENIX Security 2020:
Algorithm 1 (padding-and-sampling for key-value data with value discretisation),
Algorithm 2 (PCKV-UE), Algorithm 3 (PCKV-GRR), the baseline estimators (7)-(8) and
the corrected estimation of Algorithm 4 with Lemma 1, eq. (13)-(14).

Inputs
------
A user holds a set of pairs ``(key, value)``: keys are 0-based indices into the plan's
``d`` keys (distinct within a user), values are in [-1, 1]. ``perturb`` accepts either a
sequence of ``(keys, values)`` per user or a :class:`KeyValueUsers` (CSR arrays, the
fast path: no per-user Python work at all).

Handling of out-of-contract input (never silently wrong):

* values outside [-1, 1]: ``values="reject"`` (default) raises ``ValueError``;
  ``values="clip"`` clips them to [-1, 1]. NaN values are always rejected.
* keys outside ``0..d-1``: ``keys="reject"`` (default) raises; ``keys="drop"``
  removes those pairs (the user keeps her other pairs; the number dropped is in
  :attr:`last_dropped`).
* repeated keys within one user: rejected (a user holds a *set* of pairs).
* users with more than ``L`` pairs are legal: Algorithm 1 samples one of their pairs
  uniformly (probability ``1/|S|``), so privacy holds, but estimator (7) then
  under-estimates the frequencies of keys such users hold (truncation bias; the
  planner's padding-length selection accounts for it).

Randomness is exact where privacy depends on it: every privacy-relevant coin (``a``,
``b``, ``p``) is a multiple of ``2^-48`` drawn with :mod:`mechanisms._sampling`; fair
coins and uniform choices use exact integer sampling.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

import numpy as np

from ._plan import PlanError, require
from ._sampling import bernoulli, bernoulli_iid, check_rng, on_grid, uniform_bits

__all__ = ["KeyValueUsers", "PCKVUE", "PCKVGRR", "sample_pairs", "estimate_from_counts"]


@dataclasses.dataclass(frozen=True)
class KeyValueUsers:
    """Users' key-value sets in CSR form.

    Attributes
    ----------
    indptr : ndarray of int64, shape (n + 1,)
        User ``u`` holds pairs ``indptr[u]:indptr[u+1]``.
    keys : ndarray of int64, shape (total_pairs,)
        0-based key indices.
    values : ndarray of float64, shape (total_pairs,)
        Values (expected in [-1, 1]).
    """

    indptr: np.ndarray
    keys: np.ndarray
    values: np.ndarray

    @property
    def n_users(self) -> int:
        """Number of users ``n``."""
        return int(self.indptr.shape[0] - 1)

    @classmethod
    def from_pairs(cls, users: Sequence[tuple[Any, Any]]) -> "KeyValueUsers":
        """Build from a sequence of ``(keys, values)`` per user.

        Raises
        ------
        ValueError
            If a user's keys and values have different lengths.
        """
        ks = [np.asarray(k, dtype=np.int64).reshape(-1) for k, _ in users]
        vs = [np.asarray(v, dtype=np.float64).reshape(-1) for _, v in users]
        lens = np.fromiter((k.shape[0] for k in ks), dtype=np.int64, count=len(ks))
        vlens = np.fromiter((v.shape[0] for v in vs), dtype=np.int64, count=len(vs))
        if not np.array_equal(lens, vlens):
            bad = int(np.nonzero(lens != vlens)[0][0])
            raise ValueError(f"user {bad}: keys and values must have the same length")
        indptr = np.zeros(len(ks) + 1, dtype=np.int64)
        np.cumsum(lens, out=indptr[1:])
        keys = np.concatenate(ks) if ks else np.zeros(0, np.int64)
        values = np.concatenate(vs) if vs else np.zeros(0, np.float64)
        return cls(indptr, keys, values)


def _as_users(users) -> KeyValueUsers:
    if isinstance(users, KeyValueUsers):
        return users
    return KeyValueUsers.from_pairs(users)


def _check_users(users: KeyValueUsers, d: int, values_mode: str, keys_mode: str) -> tuple[KeyValueUsers, int]:
    indptr = np.asarray(users.indptr, dtype=np.int64)
    keys = np.asarray(users.keys, dtype=np.int64)
    vals = np.asarray(users.values, dtype=np.float64)
    if indptr.ndim != 1 or indptr.shape[0] < 1 or indptr[0] != 0 or indptr[-1] != keys.shape[0] \
            or keys.shape != vals.shape or np.any(np.diff(indptr) < 0):
        raise ValueError("users: malformed CSR arrays (indptr must start at 0, be non-decreasing and end at len(keys))")
    if np.isnan(vals).any():
        raise ValueError("values: NaN is not a value in [-1, 1]")
    dropped = 0
    bad_key = (keys < 0) | (keys >= d)
    if bad_key.any():
        if keys_mode != "drop":
            i = int(np.nonzero(bad_key)[0][0])
            raise ValueError(f"keys: must be 0-based indices in 0..{d - 1} (got {int(keys[i])}); "
                             "pass keys='drop' to drop such pairs")
        keep = ~bad_key
        dropped = int(bad_key.sum())
        owner = np.repeat(np.arange(indptr.shape[0] - 1), np.diff(indptr))[keep]
        counts = np.bincount(owner, minlength=indptr.shape[0] - 1)
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        keys, vals = keys[keep], vals[keep]
    out_of_range = (vals < -1.0) | (vals > 1.0)
    if out_of_range.any():
        if values_mode != "clip":
            i = int(np.nonzero(out_of_range)[0][0])
            raise ValueError(f"values: must be in [-1, 1] (got {vals[i]!r}); pass values='clip' to clip them")
        vals = np.clip(vals, -1.0, 1.0)
    if keys.size > 1:
        owner = np.repeat(np.arange(indptr.shape[0] - 1, dtype=np.int64), np.diff(indptr))
        combo = owner * d + keys
        combo.sort()
        if (np.diff(combo) == 0).any():
            u = int(combo[np.nonzero(np.diff(combo) == 0)[0][0]] // d)
            raise ValueError(f"user {u}: keys must be distinct within a user (a user holds a set of pairs)")
    return KeyValueUsers(indptr, keys, vals), dropped


def sample_pairs(users: KeyValueUsers, domain_size: int, padding_length: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Padding-and-sampling for key-value data with value discretisation (PCKV Algorithm 1).

    Each user draws ``B ~ Bernoulli(|S|/max(|S|, L))``; if ``B = 1`` one of her pairs
    uniformly, else a dummy key uniformly from ``d..d+L-1`` (0-based) with value 0;
    the value is then discretised to ``+1`` w.p. ``(1+v)/2`` and ``-1`` otherwise.
    Implemented exactly with one uniform integer in ``0..max(|S|, L)-1`` per user.

    Parameters
    ----------
    users : KeyValueUsers
        Already validated (keys in ``0..d-1``, values in [-1, 1]).
    domain_size, padding_length : int
        ``d`` and ``L``.
    rng : numpy.random.Generator

    Returns
    -------
    keys : ndarray of int64, shape (n,)
        Sampled key in ``0..d+L-1`` (``>= d`` is a dummy key).
    values : ndarray of int8, shape (n,)
        Discretised value in {-1, +1}.
    """
    check_rng(rng)
    d, L = int(domain_size), int(padding_length)
    sizes = np.diff(users.indptr)
    n = sizes.shape[0]
    j = rng.integers(0, np.maximum(sizes, L), size=n, dtype=np.int64)
    real = j < sizes
    pos = np.where(real, users.indptr[:-1] + j, 0)
    if users.keys.size:
        k_real = users.keys[np.minimum(pos, users.keys.size - 1)]
        v_real = users.values[np.minimum(pos, users.keys.size - 1)]
    else:
        k_real = np.zeros(n, np.int64)
        v_real = np.zeros(n, np.float64)
    dummy = d + rng.integers(0, L, size=n, dtype=np.int64)
    keys = np.where(real, k_real, dummy)
    vstar = np.where(real, v_real, 0.0)
    up = rng.random(n) < (1.0 + vstar) / 2.0
    values = np.where(up, 1, -1).astype(np.int8)
    return keys, values


def _random_signs(rng: np.random.Generator, size: int) -> np.ndarray:
    """``size`` independent fair signs in {-1, +1} (int8), one uniform bit each."""
    bits = uniform_bits(rng, size)
    return (bits.astype(np.int8) << 1) - 1


#: Rows of the PCKV-UE output generated per block (keeps temporaries cache/allocator friendly).
_BLOCK_ROWS = 1 << 16


def _ternary_rows(rng: np.random.Generator, b: float, n: int, m: int) -> np.ndarray:
    """``(n, m)`` int8 matrix of independent entries: +1 / -1 w.p. ``b/2`` each, else 0.

    ``b`` is a multiple of ``2^-48`` and the Bernoulli(``b``) part is exact
    (:func:`mechanisms._sampling.bernoulli_iid`);
    the sign is a separate fair bit. Generated in blocks of rows.
    """
    y = np.empty((n, m), dtype=np.int8)
    for start in range(0, n, _BLOCK_ROWS):
        stop = min(n, start + _BLOCK_ROWS)
        size = (stop - start) * m
        hit = bernoulli_iid(rng, b, size)
        block = hit.view(np.int8)
        block *= _random_signs(rng, size)
        y[start:stop] = block.reshape(stop - start, m)
    return y


def estimate_from_counts(n: int, n1, n2, a: float, b: float, p: float, padding_length: int,
                         raw: bool = False) -> tuple[np.ndarray, np.ndarray]:
    r"""Frequency and mean estimates from the per-key counts (PCKV Sec. 5.3).

    Parameters
    ----------
    n : int
        Number of users (reports).
    n1, n2 : array_like, shape (d,)
        Counts of reports supporting ``<k, 1>`` and ``<k, -1>``.
    a, b, p : float
        The plan's probabilities (for PCKV-GRR ``b = (1-a)/(d'-1)``).
    padding_length : int
    raw : bool
        ``True``: baseline estimators (7)-(8), unbiased/consistent but possibly outside
        [0, 1] / [-1, 1] (``nan``/``inf`` where (8) divides by zero). ``False``
        (default): Algorithm 4 - ``f`` clipped to ``[1/n, 1]``, Lemma 1 eq. (13)
        counts clipped to ``[0, n f / L]``, mean by eq. (14).

    Returns
    -------
    freq : ndarray of float64, shape (d,)
        Frequencies (fraction of users holding the key; counts are ``n * freq``).
    mean : ndarray of float64, shape (d,)
        Value means in [-1, 1] (corrected) or unbounded (raw).
    """
    L = float(padding_length)
    n1 = np.asarray(n1, dtype=np.float64)
    n2 = np.asarray(n2, dtype=np.float64)
    n = float(n)
    f = ((n1 + n2) / n - b) / (a - b) * L                                   # (7)
    if raw:
        with np.errstate(divide="ignore", invalid="ignore"):
            m = (n1 - n2) * (a - b) / (a * (2 * p - 1) * (n1 + n2 - n * b))  # (8)
        return f, m
    f = np.clip(f, 1.0 / n, 1.0)
    alpha, beta = a * p - b / 2.0, a * (1 - p) - b / 2.0                    # A of (13)
    det = alpha * alpha - beta * beta
    r1, r2 = n1 - n * b / 2.0, n2 - n * b / 2.0
    hat1 = (alpha * r1 - beta * r2) / det
    hat2 = (alpha * r2 - beta * r1) / det
    cap = n * f / L
    hat1 = np.clip(hat1, 0.0, cap)
    hat2 = np.clip(hat2, 0.0, cap)
    m = L * (hat1 - hat2) / (n * f)                                          # (14)
    return f, m


class _PCKV:
    mechanism = ""

    def __init__(self, a: float, b: float, p: float, domain_size: int, padding_length: int, *,
                 values: str = "reject", keys: str = "reject", key_labels: Sequence[str] | None = None):
        self.a, self.b, self.p = float(a), float(b), float(p)
        self.domain_size, self.padding_length = int(domain_size), int(padding_length)
        if self.domain_size < 1 or self.padding_length < 1:
            raise PlanError("params: domain_size and padding_length must be >= 1")
        if values not in ("reject", "clip"):
            raise ValueError(f"values must be 'reject' or 'clip' (got {values!r})")
        if keys not in ("reject", "drop"):
            raise ValueError(f"keys must be 'reject' or 'drop' (got {keys!r})")
        self.values_mode, self.keys_mode = values, keys
        self.key_labels = list(key_labels) if key_labels is not None else None
        self.last_dropped = 0

    @property
    def output_size(self) -> int:
        """``d' = d + L`` (keys plus dummy keys)."""
        return self.domain_size + self.padding_length

    @classmethod
    def from_plan(cls, plan: Mapping[str, Any]):
        """Build from a plan dict written by ``ldpplan plan`` (mechanism ``cls.mechanism``).

        Raises
        ------
        PlanError
            Missing/invalid fields or probabilities (naming the field).
        """
        q = cls._params(plan)
        return cls(q["a"], q["b"], q["p"], q["domain_size"], q["padding_length"], values=q["values"],
                   keys=q["keys"], key_labels=q["key_labels"])

    @classmethod
    def _params(cls, plan: Mapping[str, Any]) -> dict[str, Any]:
        if plan.get("mechanism") != cls.mechanism:
            raise PlanError(f"mechanism: expected {cls.mechanism!r} (got {plan.get('mechanism')!r})")
        out = {k: require(plan, f"params.{k}") for k in ("a", "b", "p", "domain_size", "padding_length")}
        for k in ("a", "b", "p"):
            if not isinstance(out[k], (int, float)):
                raise PlanError(f"params.{k}: must be a number")
        runtime = plan.get("runtime", {}) or {}
        out["values"] = runtime.get("values", "reject")
        out["keys"] = runtime.get("keys", "reject")
        out["key_labels"] = plan.get("keys", {}).get("labels") if isinstance(plan.get("keys"), Mapping) else None
        return out

    def _prepare(self, users) -> KeyValueUsers:
        checked, self.last_dropped = _check_users(_as_users(users), self.domain_size, self.values_mode, self.keys_mode)
        return checked

    def estimate(self, reports, raw: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Frequencies and means of the ``d`` keys from the users' reports.

        Parameters
        ----------
        reports : ndarray
            What :meth:`perturb` returned (all users' reports).
        raw : bool
            ``True`` for the baseline estimators (7)-(8); default Algorithm 4.

        Returns
        -------
        freq, mean : ndarray of float64, shape (d,)
            Frequencies are fractions of users (counts are ``n * freq``).
        """
        n, n1, n2 = self.aggregate(reports)
        return self.estimate_counts(n, n1, n2, raw=raw)

    def estimate_counts(self, n: int, n1, n2, raw: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """:func:`estimate_from_counts` with this plan's ``a, b, p, L``."""
        if n < 1:
            raise ValueError("estimate: at least one report is needed")
        return estimate_from_counts(n, n1, n2, self.a, self.b, self.p, self.padding_length, raw=raw)


class PCKVUE(_PCKV):
    """PCKV-UE (Algorithm 2): each user sends a vector in {1, -1, 0}^(d+L).

    Position ``k`` of the sampled pair ``<k, v>``: ``v`` w.p. ``a p``, ``-v`` w.p.
    ``a (1-p)``, ``0`` w.p. ``1 - a``; every other position: ``+1`` / ``-1`` w.p.
    ``b/2`` each, ``0`` w.p. ``1 - b``. Guarantee: Theorem 2, eq. (3).

    Parameters
    ----------
    a, b, p : float
        Multiples of ``2^-48`` (as in plan files).
    domain_size, padding_length : int
        ``d`` and ``L``.
    values : {"reject", "clip"}
    keys : {"reject", "drop"}
    key_labels : list of str, optional

    Raises
    ------
    PlanError
        If a probability is not on the 2^-48 grid or ``not 0 < b < a < 1``,
        ``not 1/2 <= p < 1``.
    """

    mechanism = "pckv-ue"

    def __init__(self, a, b, p, domain_size, padding_length, **kw):
        super().__init__(a, b, p, domain_size, padding_length, **kw)
        if not on_grid([self.a, self.b, self.p]):
            raise PlanError("params: a, b and p must be multiples of 2**-48 in [0, 1]")
        if not (0 < self.b < self.a < 1 and 0.5 <= self.p < 1):
            raise PlanError("params: need 0 < b < a < 1 and 1/2 <= p < 1")

    def perturb(self, users, rng: np.random.Generator) -> np.ndarray:
        """Perturb every user's key-value set (Algorithms 1 and 2).

        Parameters
        ----------
        users : sequence of (keys, values) or KeyValueUsers
            ``n`` users; keys 0-based into the plan's keys, values in [-1, 1].
        rng : numpy.random.Generator

        Returns
        -------
        ndarray of int8, shape (n, d + L)
            Entries in {1, -1, 0}; the last ``L`` columns are the dummy keys.

        Raises
        ------
        ValueError
            Out-of-contract input (see the module docstring).
        """
        check_rng(rng)
        checked = self._prepare(users)
        n, dp = checked.n_users, self.output_size
        k, v = sample_pairs(checked, self.domain_size, self.padding_length, rng)
        y = _ternary_rows(rng, self.b, n, dp)
        keep = bernoulli(rng, np.full(n, self.a))
        same = bernoulli(rng, np.full(n, self.p))
        own = np.where(keep, np.where(same, v, -v), 0).astype(np.int8)
        y[np.arange(n), k] = own
        return y

    def aggregate(self, reports) -> tuple[int, np.ndarray, np.ndarray]:
        """Counts ``n1[k] = #(y[k] = 1)`` and ``n2[k] = #(y[k] = -1)`` for ``k < d``.

        Returns
        -------
        n : int
        n1, n2 : ndarray of int64, shape (d,)

        Raises
        ------
        ValueError
            If ``reports`` is not an ``(n, d+L)`` array with entries in {-1, 0, 1}.
        """
        y = np.asarray(reports)
        if y.ndim != 2 or y.shape[1] != self.output_size:
            raise ValueError(f"reports: expected shape (n, {self.output_size}) (got {y.shape})")
        y = y[:, : self.domain_size]
        if y.dtype != np.int8:
            if not np.isin(y, (-1, 0, 1)).all():
                raise ValueError("reports: entries must be -1, 0 or 1")
            y = y.astype(np.int8)
        total = y.sum(axis=0, dtype=np.int64)               # n1 - n2
        nonzero = (y.view(np.uint8) & 1).sum(axis=0, dtype=np.int64)  # n1 + n2 (+-1 are odd bytes)
        n1 = (nonzero + total) // 2
        return int(y.shape[0]), n1, nonzero - n1


class PCKVGRR(_PCKV):
    """PCKV-GRR (Algorithm 3): each user sends one pair ``<k', v'>``.

    ``<k, v>`` w.p. ``a p``, ``<k, -v>`` w.p. ``a (1-p)``, and each ``<i, +-1>`` with
    ``i != k`` (of the ``d + L`` keys) w.p. ``b/2`` with ``b = (1 - a)/(d + L - 1)``.
    Guarantee: Theorem 3, eq. (6).

    Parameters
    ----------
    a, p : float
        Multiples of ``2^-48``; ``b`` is derived (the value in the plan is only checked).
    b : float
        The plan's ``b`` (must equal ``(1-a)/(d+L-1)`` up to 1e-12 relative).
    domain_size, padding_length, values, keys, key_labels
        As :class:`PCKVUE`.
    """

    mechanism = "pckv-grr"

    def __init__(self, a, b, p, domain_size, padding_length, **kw):
        super().__init__(a, b, p, domain_size, padding_length, **kw)
        if not on_grid([self.a, self.p]):
            raise PlanError("params: a and p must be multiples of 2**-48 in [0, 1]")
        exact_b = (1.0 - self.a) / (self.output_size - 1)
        if abs(self.b - exact_b) > 1e-12 * exact_b:
            raise PlanError(f"params.b: must equal (1-a)/(d+L-1) = {exact_b!r} (got {self.b!r})")
        self.b = exact_b
        if not (0 < self.b < self.a < 1 and 0.5 <= self.p < 1):
            raise PlanError("params: need 0 < b < a < 1 and 1/2 <= p < 1")

    def perturb(self, users, rng: np.random.Generator) -> np.ndarray:
        """Perturb every user's key-value set (Algorithms 1 and 3).

        Parameters
        ----------
        users : sequence of (keys, values) or KeyValueUsers
        rng : numpy.random.Generator

        Returns
        -------
        ndarray of int64, shape (n, 2)
            Column 0: reported key in ``0..d+L-1`` (``>= d`` is a dummy key);
            column 1: reported value in {-1, 1}.
        """
        check_rng(rng)
        checked = self._prepare(users)
        n, dp = checked.n_users, self.output_size
        k, v = sample_pairs(checked, self.domain_size, self.padding_length, rng)
        keep = bernoulli(rng, np.full(n, self.a))
        same = bernoulli(rng, np.full(n, self.p))
        other = rng.integers(0, dp - 1, size=n, dtype=np.int64)
        other += other >= k
        out = np.empty((n, 2), dtype=np.int64)
        out[:, 0] = np.where(keep, k, other)
        out[:, 1] = np.where(keep, np.where(same, v, -v), _random_signs(rng, n))
        return out

    def aggregate(self, reports) -> tuple[int, np.ndarray, np.ndarray]:
        """Counts of reports ``<k, 1>`` (``n1``) and ``<k, -1>`` (``n2``) for ``k < d``.

        Raises
        ------
        ValueError
            If ``reports`` is not ``(n, 2)`` with keys in ``0..d+L-1`` and values +-1.
        """
        r = np.asarray(reports)
        if r.ndim != 2 or r.shape[1] != 2:
            raise ValueError(f"reports: expected shape (n, 2) (got {r.shape})")
        keys, vals = r[:, 0].astype(np.int64), r[:, 1]
        if r.size and ((keys < 0).any() or (keys >= self.output_size).any() or not np.isin(vals, (-1, 1)).all()):
            raise ValueError(f"reports: keys must be in 0..{self.output_size - 1} and values in {{-1, 1}}")
        counts = np.bincount(keys * 2 + (vals < 0), minlength=2 * self.output_size)
        n1 = counts[0: 2 * self.domain_size: 2].astype(np.int64)
        n2 = counts[1: 2 * self.domain_size: 2].astype(np.int64)
        return int(r.shape[0]), n1, n2

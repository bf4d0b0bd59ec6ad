"""Client/server runtime of IDUE and IDUE-PS (numpy only).

Gu, Li, Xiong & Cao, "Providing Input-Discriminative Protection for Local
Differential Privacy", ICDE 2020:

* **IDUE** (Sec. V-B): input-discriminative unary encoding. A user holding item ``x``
  sends ``m`` bits; bit ``x`` is 1 with probability ``a[x]``, every other bit ``k`` with
  probability ``b[k]``. The server counts the ones per bit, ``c_k``, and uses the
  unbiased estimator of eq. (7), ``c_hat_k = (c_k - n b_k) / (a_k - b_k)`` (variance eq. 8).
* **IDUE-PS** (Sec. VI, Algorithms 1-2): item *sets*. Each user pads her set with dummy
  items (or truncates it) to the padding length ``L`` and samples one item of the padded
  set; the sampled item, in the extended domain of ``m + L`` items (the last ``L`` are the
  dummies, budget ``epsilon* = min(E)``), is perturbed as in IDUE. The estimator is ``L``
  times eq. (7).

Both implement the runtime protocol (:mod:`ldpplan.mechanisms._protocol`): ``perturb``
returns :class:`UnaryReports` (column ``bits``, little bit order), ``aggregate`` an
``Aggregate`` with ``bit_counts``, ``estimate`` an ``Estimate`` (frequencies, eq. 8
standard errors). ``from_plan`` recomputes the privacy map from the numbers and refuses
a plan that claims more (:mod:`ldpplan.mechanisms.idue._plan`). All probabilities are
multiples of ``2**-48`` and are sampled exactly.
"""
from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Sequence

import numpy as np
import numpy.typing as npt

from .. import _sampling
from ._params import IDUEParams, IDUEPSParams
from ._plan import PLAN_FIELDS as _PLAN_FIELDS
from ._plan import ParsedPlan, ldp_epsilon, level_privacy, log_ratios, parse_plan, set_budget, set_budget_range
from .._envelope import PlanFields
from .._protocol import Aggregate
from .._sampling import to_grid
from .._unary import COUNTS, UnaryEncoding, UnaryReports, _n_users, histogram

__all__ = ["IDUE", "IDUEPS", "UnaryReports", "COUNTS", "level_privacy", "ldp_epsilon", "log_ratios", "to_grid",
           "set_budget", "set_budget_range"]


def _per_item(parsed: ParsedPlan) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    own = parsed.owner
    return parsed.a[own], parsed.b[own], parsed.epsilon[own]


def _ldp_map(a: npt.ArrayLike, b: npt.ArrayLike) -> dict:
    """The plain LDP map of per-bit numbers (Lemma 1 over distinct bits): a directly built runtime's guarantee."""
    a = np.asarray(a, dtype=np.float64)
    return {"notion": "LDP", "epsilon": float(ldp_epsilon(a, np.asarray(b, dtype=np.float64), np.ones(a.size)))}


def _domain(parsed: ParsedPlan) -> list[str] | int:
    """The constructor's ``domain``: the plan's labels, or its size when it has none."""
    return parsed.labels if parsed.labels is not None else parsed.size


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class IDUE(UnaryEncoding):
    """IDUE runtime for single-item input (Gu et al. ICDE 2020, Sec. V-B/V-C).

    Build it with :meth:`from_plan` (or :func:`ldpplan.mechanisms.load`); the constructor is
    ``IDUE(*, domain, a, b, epsilon, level_names=(), privacy=None)`` (arrays of shape (m,); see
    :class:`ldpplan.mechanisms._unary.UnaryEncoding`).

    Attributes
    ----------
    mechanism : str
        ``"idue"``.
    domain_size, m, width : int
        Number of items (reports have ``m`` bits).
    labels : list of str or None
        Item labels (None: items are 0-based indices).
    a, b : ndarray of float64, shape (m,)
        ``Pr[y[k] = 1 | x = k] = a[k]``, ``Pr[y[k] = 1 | x != k] = b[k]``; multiples of 2^-48.
    epsilon : ndarray of float64, shape (m,)
        Budget of each item's level (nats).
    methods : tuple of str
        ``("empirical",)``.

    References
    ----------
    Gu, Li, Xiong & Cao, ICDE 2020, Sec. V, eq. (6)-(8).
    """

    MECHANISM: ClassVar[str] = "idue"
    PLAN_FIELDS: ClassVar[PlanFields] = _PLAN_FIELDS["idue"]
    Params: ClassVar[type[IDUEParams]] = IDUEParams

    def __init__(self, *, domain: int | Sequence[str], a: npt.ArrayLike, b: npt.ArrayLike, epsilon: npt.ArrayLike,
                 level_names: Sequence[str] = (), privacy: Any = None) -> None:
        """Keyword-only: ``domain`` (size or labels of the ``m`` items), per-item ``a``, ``b`` (multiples
        of 2^-48, ``0 < b < a < 1``) and ``epsilon`` (nats), shape (m,). ``privacy``: the map
        ``from_plan`` computes from the plan's levels; without it, the plain LDP map of the numbers
        (ID-LDP Lemma 1)."""
        super(IDUE, self).__init__(domain=domain, a=a, b=b, epsilon=epsilon, level_names=level_names,
                                   privacy=privacy if privacy is not None else _ldp_map(a, b))

    @classmethod
    def from_plan(cls, plan: Any) -> "IDUE":
        """Build the runtime from a verified ``"idue"`` plan (path or dict, format 2.0).

        Raises
        ------
        PlanError
            Naming field, rule and value (see :func:`ldpplan.mechanisms.idue._plan.parse_plan`).
        """
        p = parse_plan(plan, cls.MECHANISM)
        a, b, e = _per_item(p)
        return cls(domain=_domain(p), a=a, b=b, epsilon=e, level_names=p.names, privacy=p.privacy)

    def perturb(self, data: Any, rng: np.random.Generator, *, chunk_size: int | None = None) -> UnaryReports:
        """Perturb each user's item (client side, Sec. V-B), exactly on the 2^-48 grid.

        Parameters
        ----------
        data : array_like of int, shape (n,)
            Each user's item index in ``[0, m)``.
        rng : numpy.random.Generator
        chunk_size : int, optional
            Users per chunk (default about 2^20 bits); the output for a given ``rng`` state
            depends on it.

        Returns
        -------
        UnaryReports
            ``bits`` of shape (n, ceil(m / 8)), uint8.

        Raises
        ------
        TypeError
            ``rng`` not a Generator, or non-integral items.
        ValueError
            An item outside ``[0, m)`` (naming ``items[u]`` and the value).
        """
        _sampling.check_rng(rng)
        return self._perturb_indices(self._indices(data, "items", self.m), rng, chunk_size)

    def collect(self, data: Any, rng: np.random.Generator, *, chunk_size: int | None = None) -> Aggregate:
        """Perturb and aggregate in one streaming pass (memory of one chunk).

        Equals ``aggregate(perturb(data, rng, chunk_size=...))`` for the same ``rng`` state.

        Raises
        ------
        TypeError, ValueError
            As :meth:`perturb`.
        """
        _sampling.check_rng(rng)
        return self._collect_indices(self._indices(data, "items", self.m), rng, chunk_size)

    def simulate_counts(self, true_counts: npt.ArrayLike, n: int, rng: np.random.Generator) -> Aggregate:
        """Sample the aggregate directly (exact in distribution, O(m)).

        ``counts_k ~ Binomial(c_k, a_k) + Binomial(n - c_k, b_k)``, independent over ``k``.

        Parameters
        ----------
        true_counts : array_like of int, shape (m,)
            Users holding each item (sums to ``n``).
        n : int
        rng : numpy.random.Generator

        Returns
        -------
        Aggregate

        Raises
        ------
        TypeError
            ``rng`` not a Generator.
        ValueError
            Wrong shape, negative or non-integral counts, or ``sum(true_counts) != n``.
        """
        _sampling.check_rng(rng)
        c = histogram(true_counts, self.m, "true_counts")
        n = _n_users(n, allow_zero=True)
        if int(c.sum()) != n:
            raise ValueError(f"true_counts: must sum to n = {n} (each user holds one item; got {int(c.sum())})")
        return self._binomial_counts(c, n, rng)


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class IDUEPS(UnaryEncoding):
    """IDUE-PS runtime for item-set input (Gu et al. ICDE 2020, Sec. VI, Algorithms 1-2).

    Reports have ``width = m + L`` bits; bits ``m .. m+L-1`` belong to the ``L`` dummy items
    (``params.dummy``: budget ``epsilon* = min(E)``). Item sets are a list of int arrays (one
    per user) or a CSR pair ``(indptr, indices)`` (objects with ``indptr``/``indices``
    attributes, e.g. scipy CSR, work too); a set holds an item at most once; empty sets
    are allowed (the user reports a dummy).

    Attributes
    ----------
    mechanism : str
        ``"idue-ps"``.
    domain_size, m : int
        Number of real items.
    width : int
        ``m + L``.
    padding_length : int
        ``L >= 1``.
    a, b, epsilon : ndarray of float64, shape (m + L,)
        Per-bit probabilities and budgets (nats), dummies last.

    References
    ----------
    Gu, Li, Xiong & Cao, ICDE 2020, Sec. VI, Algorithms 1-2, Theorem 4.
    """

    MECHANISM: ClassVar[str] = "idue-ps"
    PLAN_FIELDS: ClassVar[PlanFields] = _PLAN_FIELDS["idue-ps"]
    Params: ClassVar[type[IDUEPSParams]] = IDUEPSParams

    padding_length: int

    def __init__(self, *, domain: int | Sequence[str], a: npt.ArrayLike, b: npt.ArrayLike, epsilon: npt.ArrayLike,
                 padding_length: int, level_names: Sequence[str] = (), privacy: Any = None) -> None:
        """Keyword-only: as :class:`IDUE`, with ``a``, ``b``, ``epsilon`` of shape (m + L,) (the ``L``
        dummy items last) and ``padding_length`` ``L >= 1``; without ``privacy``, the plain LDP map of
        the numbers over the ``m + L`` bits (ID-LDP Lemma 1)."""
        if isinstance(padding_length, bool) or not isinstance(padding_length, (int, np.integer)) or padding_length < 1:
            raise ValueError(f"padding_length: must be an integer >= 1 (got {padding_length!r})")
        super(IDUEPS, self).__init__(domain=domain, a=a, b=b, epsilon=epsilon, padding_length=int(padding_length),
                                     level_names=level_names, privacy=privacy if privacy is not None else _ldp_map(a, b))

    @classmethod
    def from_plan(cls, plan: Any) -> "IDUEPS":
        """Build the runtime from a verified ``"idue-ps"`` plan (path or dict, format 2.0).

        Raises
        ------
        PlanError
            As :meth:`IDUE.from_plan`, plus a missing/invalid ``params.padding_length``
            (integer >= 1) or ``params.dummy`` (``epsilon <= min(E)``, ``a``, ``b`` on the grid).
        """
        p = parse_plan(plan, cls.MECHANISM)
        a, b, e = _per_item(p)
        assert p.padding_length is not None and p.dummy is not None  # parse_plan requires both of idue-ps plans
        L = int(p.padding_length)
        e_star, a_star, b_star = p.dummy
        return cls(domain=_domain(p), a=np.concatenate([a, np.full(L, a_star)]), b=np.concatenate([b, np.full(L, b_star)]),
                   epsilon=np.concatenate([e, np.full(L, e_star)]), padding_length=L, level_names=p.names,
                   privacy=p.privacy)

    # ---------------------------------------------------------------- item sets

    def _item_sets(self, item_sets: Any, name: str = "item_sets") -> tuple[np.ndarray, np.ndarray]:
        """Normalise item sets to a validated CSR pair ``(indptr, indices)``."""
        if hasattr(item_sets, "indptr") and hasattr(item_sets, "indices"):
            indptr, indices = item_sets.indptr, item_sets.indices
        elif isinstance(item_sets, tuple):
            if len(item_sets) != 2:
                raise ValueError(f"{name}: a tuple must be the CSR pair (indptr, indices) (got length {len(item_sets)})")
            indptr, indices = item_sets
        elif isinstance(item_sets, (list, np.ndarray)) or hasattr(item_sets, "__iter__"):
            sets = [np.asarray(s) for s in item_sets]
            for u, s in enumerate(sets):
                if s.ndim != 1:
                    raise ValueError(f"{name}[{u}] must be a 1-D array of item indices (got shape {s.shape})")
                if s.size and (s.dtype == bool or not np.issubdtype(s.dtype, np.integer)):
                    raise TypeError(f"{name}[{u}] must hold integer item indices (got dtype {s.dtype})")
            sizes = np.fromiter((s.size for s in sets), dtype=np.int64, count=len(sets))
            indptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
            indices = (np.concatenate([s.astype(np.int64) for s in sets]) if sets and indptr[-1]
                       else np.zeros(0, np.int64))
        else:
            raise TypeError(f"{name} must be a list of int arrays or a CSR pair (indptr, indices)")
        indptr = np.asarray(indptr)
        if indptr.ndim != 1 or indptr.size < 1 or (indptr.size and not np.issubdtype(indptr.dtype, np.integer)):
            raise ValueError(f"{name}: indptr must be a 1-D integer array of length n + 1 (got {indptr.dtype} {indptr.shape})")
        indptr = indptr.astype(np.int64, copy=False)
        indices = self._indices(indices, f"{name} indices", self.m)
        if indptr[0] != 0 or indptr[-1] != indices.size or np.any(np.diff(indptr) < 0):
            raise ValueError(f"{name}: indptr must start at 0, be non-decreasing and end at len(indices) = {indices.size}")
        if indices.size > 1:
            # pairs (i, i+1) inside one user's set; O(N) when sets are sorted (CSR usually is)
            same_row = np.ones(indices.size - 1, dtype=bool)
            inner = indptr[1:-1]
            same_row[inner[(inner >= 1) & (inner < indices.size)] - 1] = False
            unsorted = (indices[1:] <= indices[:-1]) & same_row
            if unsorted.any():
                # only the users with an unsorted pair can hold a repeat: sort just their items
                rows = np.repeat(np.arange(indptr.size - 1, dtype=np.int64), np.diff(indptr))
                suspect = np.zeros(indptr.size - 1, dtype=bool)
                suspect[rows[1:][unsorted]] = True
                pick = suspect[rows]
                keys = np.sort(rows[pick] * self.m + indices[pick])
                dup = keys[1:] == keys[:-1]
                if dup.any():
                    k = int(keys[int(np.argmax(dup))])
                    raise ValueError(f"{name}: user {k // self.m}'s set contains item {k % self.m} twice "
                                     "(item sets have no repeats)")
        return indptr, indices

    def sample_items(self, item_sets: Any, rng: np.random.Generator) -> np.ndarray:
        """Padding-and-sampling (Algorithm 1), vectorised over users.

        User ``u`` with set ``x`` of size ``s`` draws ``j`` uniformly from
        ``{0, ..., max(s, L) - 1}``: if ``j < s`` the sampled item is ``x[j]``, else a
        uniform dummy ``m + U{0..L-1}``. Hence with ``s < L`` a real item with
        probability ``s / L`` (uniform over ``x``) and a dummy otherwise; with
        ``s >= L`` uniform over ``x`` (truncation to ``L`` items then uniform
        sampling gives each item ``1 / s``). Uniform integers are exact
        (:meth:`numpy.random.Generator.integers`).

        Parameters
        ----------
        item_sets : list of int arrays, or CSR pair (indptr (n+1,), indices)
        rng : numpy.random.Generator

        Returns
        -------
        ndarray of int64, shape (n,)
            Each user's sampled item, an index into ``[0, m + L)``.

        Raises
        ------
        TypeError
            If ``rng`` is not a Generator or indices are not integral.
        ValueError
            An index outside ``[0, m)``, a repeated item in a set, or a malformed CSR pair.
        """
        _sampling.check_rng(rng)
        indptr, indices = self._item_sets(item_sets)
        return self._sample(indptr, indices, rng)

    def _sample(self, indptr: np.ndarray, indices: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        L = self.padding_length
        sizes = np.diff(indptr)
        n = sizes.size
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        j = _sampling.uniform_below(rng, np.maximum(sizes, L))
        real = j < sizes
        out = np.empty(n, dtype=np.int64)
        out[real] = indices[indptr[:-1][real] + j[real]]
        n_dummy = int(n - np.count_nonzero(real))
        out[~real] = self.m + _sampling.uniform_below(rng, L, n_dummy)
        return out

    def sampling_probabilities(self, item_sets: Any) -> tuple[np.ndarray, np.ndarray]:
        """Per-item sampling probabilities of Algorithm 1 summed over users.

        For user ``u`` with set ``x_u``, ``pi_uk = 1 / max(|x_u|, L)`` if ``k`` is in
        ``x_u`` and 0 otherwise (real items).

        Parameters
        ----------
        item_sets : list of int arrays, or CSR pair

        Returns
        -------
        expected : ndarray of float64, shape (m,)
            ``sum_u pi_uk / n``: the expected sampled-item frequency ``f^s_k``. The
            IDUE-PS estimate has mean ``L * f^s_k``, which equals the true set
            frequency of ``k`` when no set holding ``k`` is longer than ``L``.
        spread : ndarray of float64, shape (m,)
            ``sum_u pi_uk (1 - pi_uk) / n``: per-user variance of the sampled-item
            indicator (frequency units times ``n``).

        Raises
        ------
        ValueError
            As :meth:`sample_items`, or no users.
        """
        indptr, indices = self._item_sets(item_sets)
        n = indptr.size - 1
        if n < 1:
            raise ValueError("item_sets: at least one user is needed")
        sizes = np.diff(indptr)
        pi = 1.0 / np.maximum(sizes, self.padding_length).astype(np.float64)
        pi_each = np.repeat(pi, sizes)
        expected = np.bincount(indices, weights=pi_each, minlength=self.m) / n
        spread = np.bincount(indices, weights=pi_each * (1 - pi_each), minlength=self.m) / n
        return expected, spread

    # ---------------------------------------------------------------- client side

    def perturb(self, data: Any, rng: np.random.Generator, *, chunk_size: int | None = None) -> UnaryReports:
        """Perturb each user's item set (Algorithm 1 sampling, then Algorithm 2 unary encoding).

        Parameters
        ----------
        data : list of int arrays, or CSR pair (indptr (n+1,), indices)
            Item indices in ``[0, m)``.
        rng : numpy.random.Generator
        chunk_size : int, optional

        Returns
        -------
        UnaryReports
            ``bits`` of shape (n, ceil((m + L) / 8)).

        Raises
        ------
        TypeError, ValueError
            As :meth:`sample_items`.
        """
        _sampling.check_rng(rng)
        indptr, indices = self._item_sets(data)
        return self._perturb_indices(self._sample(indptr, indices, rng), rng, chunk_size)

    def perturb_sampled(self, sampled: Any, rng: np.random.Generator, *, chunk_size: int | None = None) -> UnaryReports:
        """Unary-encode and perturb already sampled items in ``[0, m + L)`` (Algorithm 2, steps 3-9).

        Raises
        ------
        TypeError, ValueError
            Bad ``rng``, non-integral or out-of-range ``sampled``.
        """
        _sampling.check_rng(rng)
        return self._perturb_indices(self._indices(sampled, "sampled", self.width), rng, chunk_size)

    def collect(self, data: Any, rng: np.random.Generator, *, chunk_size: int | None = None) -> Aggregate:
        """Sample, perturb and aggregate in one streaming pass (bounded memory).

        Equals ``aggregate(perturb(data, rng, chunk_size=...))`` for the same ``rng`` state.

        Raises
        ------
        TypeError, ValueError
            As :meth:`perturb`.
        """
        _sampling.check_rng(rng)
        indptr, indices = self._item_sets(data)
        return self._collect_indices(self._sample(indptr, indices, rng), rng, chunk_size)

    def simulate_counts(self, sampled_counts: npt.ArrayLike, n: int, rng: np.random.Generator) -> Aggregate:
        """Sample the aggregate directly (exact in distribution, O(m + L)).

        ``counts_k ~ Binomial(c_k, a_k) + Binomial(n - c_k, b_k)`` over the ``m + L`` bits,
        ``c_k`` = users whose *sampled* item is ``k``. Given only the real items' counts
        (shape (m,)), the other ``n - sum`` users sampled a dummy, uniformly over the ``L``
        dummies (Algorithm 1): their split is Multinomial(n - sum, 1/L).

        Parameters
        ----------
        sampled_counts : array_like of int, shape (m + L,) or (m,)
        n : int
        rng : numpy.random.Generator

        Returns
        -------
        Aggregate

        Raises
        ------
        TypeError
            ``rng`` not a Generator.
        ValueError
            Wrong shape, negative or non-integral counts, counts not summing to ``n``
            (shape (m + L,)) or exceeding ``n`` (shape (m,)).
        """
        _sampling.check_rng(rng)
        n = _n_users(n, allow_zero=True)
        raw = np.asarray(sampled_counts)
        if raw.ndim == 1 and raw.shape[0] == self.m:
            c = histogram(raw, self.m, "sampled_counts")
            rest = n - int(c.sum())
            if rest < 0:
                raise ValueError(f"sampled_counts: must sum to at most n = {n} (got {int(c.sum())})")
            L = self.padding_length
            c = np.concatenate([c, rng.multinomial(rest, np.full(L, 1.0 / L))])
        else:
            c = histogram(raw, self.width, "sampled_counts")
            if int(c.sum()) != n:
                raise ValueError(f"sampled_counts: must sum to n = {n} (each user samples one item; got {int(c.sum())})")
        return self._binomial_counts(c, n, rng)

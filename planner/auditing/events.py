"""The vocabulary of an audit: input pairs, their output events, and the input domain of a family.

An :class:`InputPair` holds two inputs (as the runtime's ``perturb`` takes them, repeated
``trials`` times) and the :class:`Test` events evaluated on both runs. A test claims
``Pr[E | first] <= e^claim Pr[E | second]`` (``reverse=True``: first and second swapped), or,
with ``never=True``, that ``E`` never happens on the first input (ULDP: a sensitive input never
produces an invertible output). Each test carries the honest probabilities of its event from the
plan's numbers, used only to choose the default number of trials. A *pooled* test (``pool = s``)
sums the LDP inequality over ``s`` disjoint events ``E_i`` and ``s`` inputs ``x_i`` (below), so
that a rare single output becomes a frequent union. A :class:`Domain` lists every input of a family
for the exploration stage.

Each family's room builds these in its module ``audit`` (functions ``pairs(plan)`` and
``domain(plan)``), read through the family protocol; this module depends on nothing but numpy.
"""
from __future__ import annotations

import dataclasses
from collections import abc
import math
from typing import Any, Callable, Mapping, Sequence

import numpy as np


__all__ = ["Test", "InputPair", "Domain", "ItemLabels", "item_index", "item_label", "repeat", "unpacked_bit",
           "one_report"]


@dataclasses.dataclass(frozen=True)
class Test:
    """One output event of an input pair.

    Attributes
    ----------
    event : str
        What the event is (e.g. ``"y = 3"``).
    occurs : callable
        ``Reports -> ndarray of bool, shape (n,)``: which reports are in the event.
    claim : float
        The plan's claim for this pair (nats); 0 for a ``never`` test.
    p_first, p_second : float
        Honest probability of the event on the first and second input (from the plan's numbers).
    reverse : bool
        Bound ``ln(Pr[E|second] / Pr[E|first])`` instead.
    never : bool
        The event must not occur on the first input at all (on both inputs with ``both``).
    both : bool
        A ``never`` test that also runs on the second input.
    source : str
        The paper's statement behind the claim.
    estimated : bool
        ``p_first``, ``p_second`` are estimates (an exploration candidate), not the plan's numbers:
        the run's power is then computed from the confirmation's own frequencies.
    pool : int
        0 for an ordinary event. ``s >= 1`` for a pooled test over disjoint events ``E_1 .. E_s``
        and inputs ``x_1 .. x_s`` (the pair's :attr:`InputPair.pool`): ``occurs`` returns, per
        report, the index ``i`` of the ``E_i`` it is in (``-1``: none). Summing ``Pr[E_i | x_i] <=
        e^epsilon Pr[E_i | x']`` over ``i`` gives ``s * mean_i Pr[E_i | x_i] <= e^epsilon Pr[U E_i |
        x']``: the first input's runs draw ``i`` uniformly and count ``report in E_i``
        (probability ``p_first = mean_i Pr[E_i | x_i]``), the second's count ``report in U E_i``
        (``p_second``), and the bounded log-ratio is ``ln(s) + ln(p_first / p_second)``.
    """

    event: str
    occurs: Callable[[Any], np.ndarray]
    claim: float
    p_first: float
    p_second: float
    reverse: bool = False
    never: bool = False
    both: bool = False
    source: str = ""
    estimated: bool = False
    pool: int = 0

    @property
    def offset(self) -> float:
        """``ln(pool)`` for a pooled test (added to the log-ratio of the two frequencies), else 0."""
        return math.log(self.pool) if self.pool > 1 else 0.0

    @property
    def probabilities(self) -> tuple[float, float]:
        """``(numerator, denominator)`` honest probabilities of the bounded ratio."""
        return (self.p_second, self.p_first) if self.reverse else (self.p_first, self.p_second)


@dataclasses.dataclass(frozen=True)
class InputPair:
    """Two inputs and the tests run on them.

    Attributes
    ----------
    first, second : str
        Human-readable inputs (labels).
    make : callable
        ``(input_index in {0, 1}, n) -> data`` for ``perturb``: ``n`` copies of the input.
    tests : tuple of Test
    cost : float
        Work per report (about one unit per output bit), for the default trials.
    pool : callable, optional
        For pooled tests (every test of the pair then has ``pool = s``): ``ndarray of i in [0,
        s) -> data``, the first input's runs on inputs ``x_i``; ``i`` is drawn uniformly and
        independently for each run from the audit's generator (so each run's count is a
        Bernoulli draw of mean ``mean_i Pr[E_i | x_i]`` and Clopper-Pearson applies). ``make(0,
        n)`` is then unused; ``make(1, n)`` gives the second input ``x'``.
    run : callable, optional
        ``(mechanism, input_index, n, rng) -> reports``: runs ``n`` trials itself instead of
        ``perturb(make(input_index, n), rng=rng)`` (memoized runtimes: one trial is a user reporting
        one value over many rounds, issue 22); its result is what the tests' ``occurs`` read.
    """

    first: str
    second: str
    make: Callable[[int, int], Any]
    tests: tuple[Test, ...]
    cost: float = 1.0
    pool: Callable[[np.ndarray], Any] | None = None
    run: Callable[[Any, int, int, np.random.Generator], Any] | None = None


@dataclasses.dataclass(frozen=True)
class Domain:
    """Every input of a plan's family, as the exploration runs them.

    Attributes
    ----------
    labels : sequence of str
        One label per input (``|X|`` entries; a set ``{x}`` for IDUE-PS, ``<k, v>`` for PCKV).
    make : callable
        ``ndarray of input indices, shape (n,) -> data`` for ``perturb`` (one user per index).
    claim : callable
        ``(i, j) -> float``: the plan's claim (nats) for ``Pr[E | i] <= e^claim Pr[E | j]``.
    restrict : callable, optional
        ``Reports -> bool (n,)``: only these reports count (ULDP: the protected outputs Y_P).
    fixed_columns : tuple of str
        Report columns whose distribution must not depend on the input (claim 0).
    cost : float
        Work per report (about one unit per output bit).
    tight : callable, optional
        ``(i, j) -> InputPair``: the family's tight events for the input pair ``(i, j)`` (from its
        privacy map, as in :mod:`.pairs`); the confirmation runs them beside the screened event
        (a single bit of a unary encoding is not the tight event of its pair).
    """

    labels: Sequence[str]
    make: Callable[[np.ndarray], Any]
    claim: Callable[[int, int], float]
    restrict: Callable[[Any], np.ndarray] | None = None
    fixed_columns: tuple[str, ...] = ()
    cost: float = 1.0
    tight: Callable[[int, int], InputPair] | None = None


class ItemLabels(abc.Sequence):
    """The labels of a plan's items, computed on demand (a count domain of 10^7 items is not listed)."""

    def __init__(self, plan: Mapping[str, Any], size: int | None = None) -> None:
        self._labels = plan["domain"].get("labels")
        self._size = int(plan["domain"]["size"]) if size is None else int(size)

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._size))]
        i = int(index)
        if not -self._size <= i < self._size:
            raise IndexError(index)
        i %= self._size
        return str(self._labels[i]) if self._labels is not None else str(i)


def item_index(plan: Mapping[str, Any], item: Any) -> int:
    """0-based index of an item (a label of ``domain.labels``, or an index for a count domain)."""
    labels = plan["domain"].get("labels")
    if labels is None:
        return int(item)
    return labels.index(item)


def item_label(plan: Mapping[str, Any], index: int) -> str:
    """Label of item ``index`` (its index as text for a count domain)."""
    labels = plan["domain"].get("labels")
    return str(labels[index]) if labels is not None else str(int(index))


def repeat(value: Any, n: int) -> np.ndarray:
    """``n`` copies of an item index (int64)."""
    return np.full(int(n), int(value), dtype=np.int64)


def unpacked_bit(reports: Any, k: int) -> np.ndarray:
    """Bit ``k`` of each report's packed little-endian ``bits`` column (bool, shape (n,))."""
    bits = np.asarray(reports["bits"])
    return ((bits[:, k // 8] >> np.uint8(k % 8)) & np.uint8(1)).astype(bool)


class _OneReport:
    """A memoized runtime seen as one report per fresh user (issue 22): each ``perturb`` call gets a
    fresh memo and one user id per row, so every run is a fresh permanent response (epsilon_1 is
    what one report reveals); the many-reports side is the family's own audit."""

    def __init__(self, mechanism: Any) -> None:
        self._mechanism = mechanism

    def perturb(self, data: Any, rng: np.random.Generator) -> Any:
        users = np.arange(len(data), dtype=np.int64)
        return self._mechanism.perturb(data, rng=rng, memo=self._mechanism.new_memo(), users=users, round=0)


def one_report(mechanism: Any) -> Any:
    """``mechanism`` itself, or its one-report view when it keeps client state (``memoized``)."""
    return _OneReport(mechanism) if getattr(mechanism, "memoized", False) else mechanism

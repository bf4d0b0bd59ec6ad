"""The vocabulary of an audit: input pairs, their output events, and the input domain of a family.

An :class:`InputPair` holds two inputs (as the runtime's ``perturb`` takes them, repeated
``trials`` times) and the :class:`Test` events evaluated on both runs. A test claims
``Pr[E | first] <= e^claim Pr[E | second]`` (``reverse=True``: first and second swapped), or,
with ``never=True``, that ``E`` never happens on the first input (ULDP: a sensitive input never
produces an invertible output). Each test carries the honest probabilities of its event from the
plan's numbers, used only to choose the default number of trials. A :class:`Domain` lists every
input of a family for the exploration stage.

Each family's room builds these in its module ``audit`` (functions ``pairs(plan)`` and
``domain(plan)``), read through the family protocol; this module depends on nothing but numpy.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..errors import PlanFormatError

__all__ = ["Test", "InputPair", "Domain", "item_index", "item_label", "repeat", "unpacked_bit"]


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
    """

    first: str
    second: str
    make: Callable[[int, int], Any]
    tests: tuple[Test, ...]
    cost: float = 1.0


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

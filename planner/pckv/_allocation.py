r"""PCKV numbers on the 2^-48 grid, and their exact privacy (rationals).

The solver (:mod:`ldpplan.solvers.pckv`) allocates ``(epsilon1, epsilon2)`` in float64;
here the probabilities are rounded to the 2^-48 grid toward the safe side and the
composed budget of the rounded numbers is decided exactly by the shared grid step
(:mod:`ldpplan.planner._grid`, :mod:`ldpplan.planner._exact`). When rounding costs more than the
:data:`~ldpplan.planner._exact.SAFETY_MARGIN` (large budgets: ``1 - p`` and ``b`` are
then tiny and a grid step is a large relative change), the budget the solver aims at
is lowered by twice the overshoot and the allocation is solved again, so every
``0 < epsilon <= 20`` gets a plan whose exact composed budget is ``<= epsilon``.
"""
from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any, Mapping

from .._exact import ceil_log, exact, shrink
from .._grid import Attempt, exact_check, round_and_repair, round_safe
from ..errors import SpecError
from ...solvers import SolverError, pckv as S
from ...solvers.pckv import KeyModel

__all__ = ["GridAllocation", "composed_ratio_exact", "key_ratio_exact", "value_ratio_exact", "ceil_log",
           "grid_params", "solve_on_grid", "exact_budgets", "MAX_REPAIRS", "DIRECTIONS"]

#: Re-solves allowed when grid rounding overshoots the budget.
MAX_REPAIRS = 60


def _grr_b(a: Fraction, domain_size: int, padding_length: int) -> Fraction:
    return (1 - a) / (int(domain_size) + int(padding_length) - 1)


def composed_ratio_exact(mechanism: str, a: float, b: float, p: float, domain_size: int,
                         padding_length: int) -> Fraction:
    r"""``e^epsilon`` of the numbers in a plan, exactly (rationals).

    * PCKV-UE: ``(2pa/b) / min{(1-a)/(1-b), 2(1-p)a/b}``;
    * PCKV-GRR (``b = (1-a)/(d+L-1)`` exactly): ``(ap/L + (1-1/L) b/2) / min{a(1-p)/L + (1-1/L) b/2, b/2}``.

    Valid for ``0 < b < a < 1`` and ``1/2 <= p < 1``.

    References
    ----------
    PCKV, Theorem 2 (proof in App. A), Theorem 3 (proof in App. B).
    """
    A, P, L = exact(a), exact(p), Fraction(int(padding_length))
    if mechanism == "pckv-ue":
        B = exact(b)
        return (2 * P * A / B) / min((1 - A) / (1 - B), 2 * (1 - P) * A / B)
    B = _grr_b(A, domain_size, padding_length)
    upper = A * P / L + (1 - 1 / L) * B / 2
    lower = min(A * (1 - P) / L + (1 - 1 / L) * B / 2, B / 2)
    return upper / lower


def key_ratio_exact(mechanism: str, a: float, b: float, domain_size: int, padding_length: int) -> Fraction:
    """``e^{epsilon1}``: ``a(1-b)/(b(1-a))`` (PCKV-UE, eq. 2) or ``a/b`` (PCKV-GRR, eq. 5), exactly."""
    A = exact(a)
    if mechanism == "pckv-ue":
        B = exact(b)
        return A * (1 - B) / (B * (1 - A))
    return A / _grr_b(A, domain_size, padding_length)


def value_ratio_exact(p: float) -> Fraction:
    """``e^{epsilon2} = p/(1-p)`` exactly (eq. 2 / eq. 5)."""
    P = exact(p)
    return P / (1 - P)


def exact_budgets(mechanism: str, a: float, b: float, p: float, domain_size: int,
                  padding_length: int) -> dict[str, float]:
    """``epsilon``, ``epsilon1``, ``epsilon2`` of the numbers: each the smallest float that holds exactly (nats)."""
    return {"epsilon": ceil_log(composed_ratio_exact(mechanism, a, b, p, domain_size, padding_length)),
            "epsilon1": ceil_log(key_ratio_exact(mechanism, a, b, domain_size, padding_length)),
            "epsilon2": ceil_log(value_ratio_exact(p))}


#: Safe rounding directions (:func:`~.._grid.round_safe`): every ratio of Theorems 2-3 falls with
#: ``a`` and ``p`` down (``p >= 1/2``) and the PCKV-UE ``b`` up.
DIRECTIONS = {"a": "down", "b": "up", "p": "down"}


def grid_params(mechanism: str, unrounded: Mapping[str, float], domain_size: int,
                padding_length: int) -> dict[str, float]:
    """Round ``a, b, p`` to the 2^-48 grid toward the safe side (:data:`DIRECTIONS`).

    ``a`` and ``p`` down (``p >= 1/2``), PCKV-UE ``b`` up; PCKV-GRR ``b = (1-a)/(d+L-1)`` is derived.
    """
    names = ("a", "b", "p") if mechanism == "pckv-ue" else ("a", "p")
    q = round_safe({k: unrounded[k] for k in names}, DIRECTIONS)
    q["p"] = max(q["p"], 0.5)
    if mechanism != "pckv-ue":
        q["b"] = (1.0 - q["a"]) / (int(domain_size) + int(padding_length) - 1)
    return {"a": q["a"], "b": q["b"], "p": q["p"]}


def _valid(q: Mapping[str, float]) -> bool:
    return 0 < q["b"] < q["a"] < 1 and 0.5 <= q["p"] < 1


@dataclasses.dataclass(frozen=True)
class GridAllocation:
    """An allocation rounded to the grid whose exact composed budget is within the target.

    Attributes
    ----------
    solution : SolveResult
        The solver's (unrounded) allocation at ``aimed_epsilon``.
    params : dict
        ``a``, ``b``, ``p`` on the grid (PCKV-GRR ``b`` derived).
    aimed_epsilon : float
        The budget the solver aimed at (nats, ``<= shrink(epsilon)``).
    repairs : int
        Re-solves needed because rounding overshot.
    budgets : dict
        :func:`exact_budgets` of ``params``.
    """

    solution: Any
    params: dict
    aimed_epsilon: float
    repairs: int
    budgets: dict


def solve_on_grid(mechanism: str, epsilon: float, method: str, domain_size: int, padding_length: int,
                  model: KeyModel | None = None, weights: tuple[float, float] = (1.0, 1.0)) -> GridAllocation:
    """Allocate ``epsilon`` with ``method``, round to the grid, repair until the exact check holds.

    The shared grid step (:func:`~.._grid.round_and_repair`) with the aimed budget as its setting:
    it starts at ``shrink(epsilon)`` and is lowered by twice the overshoot after a failed check.

    Raises
    ------
    SpecError
        ``epsilon``: no grid allocation holds (the reason is named).
    """
    d, L = domain_size, padding_length

    def attempt(aim: float) -> Attempt:
        try:
            sol = S.allocate(mechanism, aim, method=method, domain_size=d, padding_length=L, model=model,
                             weights=weights)
        except (SolverError, ValueError) as exc:
            raise SpecError("epsilon", f"must admit a {method} {mechanism} allocation ({exc})", epsilon) from None
        q = grid_params(mechanism, sol.parameters, d, L)
        if not _valid(q):
            raise SpecError("epsilon", f"must leave 0 < b < a < 1 on the 2^-48 grid for {mechanism} with d = "
                            f"{d}, L = {L} (got a={q['a']!r}, b={q['b']!r})", epsilon)
        holds, overshoot = exact_check(composed_ratio_exact(mechanism, q["a"], q["b"], q["p"], d, L), epsilon)
        return Attempt(q, holds, overshoot, sol)

    def lower(aim: float, failed: Attempt) -> float | None:
        step = 2.0 * failed.overshoot if failed.overshoot is not None else 0.0  # (unmeasured: the least step)
        aim = aim - max(step, aim * 1e-12)
        return aim if aim > 0 else None

    def failure(_last) -> SpecError:
        return SpecError("epsilon", f"must admit a {mechanism} allocation on the 2^-48 grid within the budget "
                         f"(rounding overshot {MAX_REPAIRS} times)", epsilon)

    res = round_and_repair(attempt, start=shrink(epsilon), repair=lower, max_attempts=MAX_REPAIRS, failure=failure)
    q = res.params
    return GridAllocation(res.solution, q, res.setting, res.repairs,
                          exact_budgets(mechanism, q["a"], q["b"], q["p"], d, L))

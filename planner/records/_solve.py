"""The records planner's numbers: every scheme solved at a safety margin, on the 2^-48 grid, checked exactly.

For a scheme and a margin ``m`` the solver runs at ``epsilon (1 - m)``: SPL's water-filling
(:func:`solvers.records.spl_optimal`; with some oracles fixed, every assignment of the others),
SMP's optimal ``pi`` (:func:`smp_optimal`), RS+FD[GRR] at the whole (shrunk) budget. The oracles'
numbers are rounded toward the safe side (GRR ``P`` down, OUE ``q`` up; :mod:`ldpplan.mechanisms.records`)
and the record's worst ratio is decided exactly against ``e^epsilon``; a failure retries at the next
margin (:func:`.._grid.round_and_repair`).
"""
from __future__ import annotations

import dataclasses
import itertools
import math
from fractions import Fraction
from typing import Any

import numpy as np

from ...mechanisms.records._oracles import grid_number
from ...mechanisms.records._privacy import exact_attribute_ratios, exact_record_ratio
from ...mechanisms._sampling import GRID
from ...solvers import records as solver
from .._grid import Attempt, MARGINS, exact_check, ladder, round_and_repair
from ..errors import SpecError
from .spec import Resolved

__all__ = ["Numbers", "solve_scheme", "solve_all", "uniform_baselines"]


@dataclasses.dataclass(frozen=True)
class Numbers:
    """One scheme's plan numbers and its certified prediction.

    Attributes
    ----------
    scheme : str
        ``"spl"``, ``"smp"``, ``"rsfd"``.
    oracles, epsilons, numbers : tuple
        Per attribute: the oracle, its budget (nats), its grid number.
    sampling : tuple of float or None
        SMP's ``pi_j`` on the grid (summing to exactly 1).
    variances : tuple of float
        ``n Var(f_hat_j)`` per item at ``f = 0`` (frequency^2 x users), the solver's.
    weighted_variance : float
        ``sum_j w_j variances[j]``.
    certificate : dict
        ``kind``, ``lower_bound``, ``upper_bound``, ``gap`` of the solver's optimum (at the planned budget).
    margin : float
        The safety margin that passed.
    ratio, attribute_ratios : Fraction
        The record's and each attribute's worst likelihood ratio, exactly.
    """

    scheme: str
    oracles: tuple[str, ...]
    epsilons: tuple[float, ...]
    numbers: tuple[float, ...]
    sampling: tuple[float, ...] | None
    variances: tuple[float, ...]
    weighted_variance: float
    certificate: dict
    margin: float
    ratio: Fraction
    attribute_ratios: tuple[Fraction, ...]


def _attributes(res: Resolved) -> solver.RecordAttributes:
    return solver.RecordAttributes.of(res.sizes, res.weights)


def _spl(epsilon: float, res: Resolved) -> solver.SplitAllocation:
    attrs = _attributes(res)
    if all(o == "auto" for o in res.oracles):
        return solver.spl_optimal(epsilon, attrs)
    choices = itertools.product(*((o,) if o != "auto" else solver.ORACLES for o in res.oracles))
    best, lower, tried = None, math.inf, 0
    for choice in choices:
        sol = solver.spl_optimal(epsilon, attrs, choice)
        lower, tried = min(lower, sol.certificate.lower_bound), tried + 1
        if best is None or sol.weighted_variance < best.weighted_variance:
            best = sol
    assert best is not None
    cert = dataclasses.replace(best.certificate, lower_bound=lower, details={**best.certificate.details,
                                                                             "assignments": tried})
    return dataclasses.replace(best, certificate=cert)


def _fixed(res: Resolved) -> list[str | None]:
    return [None if o == "auto" else o for o in res.oracles]


def grid_sampling(probabilities) -> tuple[float, ...]:
    """``pi`` on the 2^-48 grid, each >= 2^-48, summing to exactly 1 (the largest absorbs the rounding)."""
    ints = np.maximum(np.rint(np.asarray(probabilities, dtype=np.float64) * GRID), 1).astype(np.int64)
    ints[int(np.argmax(ints))] += int(GRID) - int(ints.sum())
    return tuple(float(i) / GRID for i in ints)


def _solve_at(scheme: str, epsilon: float, res: Resolved) -> tuple[Any, tuple, tuple, tuple | None]:
    """``(allocation, oracles, epsilons, sampling)`` of one scheme at the (shrunk) budget ``epsilon``."""
    d = len(res.sizes)
    if scheme == "spl":
        split = _spl(epsilon, res)
        return split, split.protocols, split.epsilons, None
    if scheme == "smp":
        sampled = solver.smp_optimal(epsilon, _attributes(res), _fixed(res))
        return sampled, sampled.protocols, (epsilon,) * d, grid_sampling(sampled.probabilities)
    variances = tuple(solver.rsfd_variance("grr", epsilon, k, d) for k in res.sizes)
    return variances, ("grr",) * d, (epsilon,) * d, None


def _numbers(scheme: str, res: Resolved, margin: float) -> Numbers:
    epsilon = res.spec.epsilon * (1.0 - margin)
    sol, oracles, epsilons, sampling = _solve_at(scheme, epsilon, res)
    numbers = tuple(grid_number(o, e, k) for o, e, k in zip(oracles, epsilons, res.sizes))
    cert: dict[str, Any]
    if scheme == "rsfd":
        variances = sol
        total = float(np.dot(res.weights, variances))
        cert = {"kind": "closed form (no optimisation: RS+FD samples uniformly)", "lower_bound": total,
                "upper_bound": total, "gap": 0.0}
    else:
        variances, total, c = sol.variances, sol.weighted_variance, sol.certificate
        cert = {"kind": c.kind, "lower_bound": float(c.lower_bound), "upper_bound": float(c.upper_bound),
                "gap": float(c.gap)}
    ratio = exact_record_ratio(scheme, oracles, numbers, res.sizes)
    attribute = tuple(exact_attribute_ratios(scheme, oracles, numbers, res.sizes))
    return Numbers(scheme, tuple(oracles), tuple(float(e) for e in epsilons), numbers, sampling,
                   tuple(float(v) for v in variances), float(total), cert, margin, ratio, attribute)


def solve_scheme(scheme: str, res: Resolved) -> Numbers:
    """One scheme's numbers at the first margin whose grid numbers pass the exact check.

    Raises
    ------
    SpecError
        ``epsilon``: too small for the grid at every margin.
    """
    def attempt(margin: float) -> Attempt:
        try:
            nums = _numbers(scheme, res, margin)
        except ValueError as exc:
            raise SpecError("epsilon", f"cannot plan {scheme}: {exc}", res.spec.epsilon) from None
        if any(n <= 0 or n >= 1 for n in nums.numbers):
            raise SpecError("epsilon", "too small for the 2^-48 probability grid", res.spec.epsilon)
        holds, overshoot = exact_check(nums.ratio, res.spec.epsilon)
        return Attempt({"numbers": nums}, holds, overshoot, nums)

    def failure(last: Attempt | None) -> Exception:
        return SpecError("epsilon", f"no margin puts {scheme}'s grid numbers within the budget", res.spec.epsilon)

    on = round_and_repair(attempt, start=MARGINS[0], repair=ladder(), max_attempts=len(MARGINS), failure=failure)
    return on.params["numbers"]


def solve_all(res: Resolved) -> dict[str, Numbers]:
    """Every scheme the spec allows, solved (``{scheme: Numbers}``, in :data:`.spec.SCHEMES` order)."""
    return {scheme: solve_scheme(scheme, res) for scheme in res.schemes}


def uniform_baselines(res: Resolved, epsilon: float) -> dict[str, Any]:
    """The published baselines at the budget ``epsilon``: SPL with ``epsilon/d`` each, SMP with ``pi_j = 1/d``."""
    attrs = _attributes(res)
    return {"spl-uniform": solver.spl_uniform(epsilon, attrs), "smp-uniform": solver.smp_uniform(epsilon, attrs)}

"""Per-attribute error targets: the least record epsilon per scheme, on a grid, checked on the grid numbers.

A target ``std_error = s_j`` asks that every frequency estimate of attribute ``j`` have standard
error at most ``s_j`` at the spec's ``users = n``, per item at ``f = 0`` (the variances the family
states everywhere, Wang et al. 2017), i.e. ``n Var_j <= n^2 s_j^2``. The std errors are recomputed
from the plan's grid numbers with the runtime's own variance (``variance_per_user`` at ``f = 0``)
and a target counts as met only when ``Var_j (1 + 2^-40) <= s_j^2`` (float rounding on the safe side).

Without ``epsilon`` (every attribute has a target) each scheme's least budget is found by
:mod:`ldpplan.solvers._records_targets`, rounded *up* to the epsilon grid ``2^-20`` nats, and the
scheme is planned at that budget ``E`` (SPL: each ``epsilon_j`` its least budget scaled by ``E / sum``;
SMP: ``pi_j`` proportional to ``V_j(E)/t_j``; RS+FD[GRR] at ``E``), shrunk by the usual safety margin;
if a target is missed on the grid numbers, ``E`` moves up one grid step. The certificate: targets met
at ``E`` (grid numbers) and missed at ``E - 2^-20`` (the scheme's best there, continuous), so ``E`` is
within one grid step of the exact least epsilon. The scheme with the least ``E`` is the plan.

References
----------
Wang et al., USENIX Security 2017, Eq. (2); Arcolezi et al., CIKM 2021, Sec. 2.3 and 3.1.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ...mechanisms.records import SampledRecord, RSFDRecord, SplitRecord
from ...mechanisms.records._oracles import grid_number
from ...mechanisms.records._privacy import exact_attribute_ratios, exact_record_ratio
from ...mechanisms.records._promises import EPSILON_GRID
from ...solvers import records as solver
from ...solvers import _records_targets as least
from .._exact import ratio_within
from .._grid import MARGINS
from .._plan_format import predicted
from ..errors import SpecError
from ._solve import Numbers, grid_sampling, solve_all
from .claims import predicted_of
from .spec import Resolved

__all__ = ["EPSILON_STEP", "solve", "solve_targets", "grid_variances", "targets_entry", "feasible_at", "plan_predicted"]

#: the grid of the least epsilon (nats): the plan's budget is a multiple of it, rounded up
EPSILON_STEP = 1.0 / EPSILON_GRID
#: relative allowance for float rounding when a target is checked (the variance must be below by this)
_ALLOWANCE = 1.0 + 2.0 ** -40
_CLASSES = {"spl": SplitRecord, "smp": SampledRecord, "rsfd": RSFDRecord}
_MAX_STEPS = 64


def grid_variances(scheme: str, res: Resolved, oracles: Sequence[str], epsilons: Sequence[float],
                   numbers: Sequence[float], sampling: Sequence[float] | None) -> tuple[float, ...]:
    """``n Var_j`` per attribute at ``f = 0`` from the grid numbers, by the runtime's own formulas."""
    kwargs: dict[str, Any] = {"sampling": list(sampling)} if scheme == "smp" and sampling is not None else {}
    mech = _CLASSES[scheme](domain=res.labels, names=res.names, domain_sizes=res.sizes, oracles=list(oracles),
                            epsilons=list(epsilons), numbers=list(numbers), **kwargs)
    per_item = mech.variance_per_user(np.zeros(len(res.labels)))
    return tuple(float(np.max(per_item[mech.attribute_slice(j)])) for j in range(len(res.sizes)))


def _met(variance_per_user: float, users: int, std_error: float) -> bool:
    return variance_per_user / users * _ALLOWANCE <= std_error * std_error


def targets_entry(res: Resolved, variances: Sequence[float]) -> dict[str, Any] | None:
    """The plan's ``predicted.std_error_targets`` (None without targets): per attribute target, std error, met."""
    users = res.spec.users
    if users is None or all(s is None for s in res.std_errors):
        return None
    rows, worst = [], 0.0
    for name, s, v in zip(res.names, res.std_errors, variances):
        se = math.sqrt(v / users)
        row: dict[str, Any] = {"name": name, "std_error": se}
        if s is not None:
            row.update(target=float(s), met=_met(v, users, s))
            worst = max(worst, se / s)
        rows.append(row)
    return predicted(worst, "ratio (largest std_error / target; met needs <= 1)",
                     f"sqrt(n Var_j / n) per item at f = 0 from the grid numbers, n = {users}", attributes=rows)


def _least(scheme: str, res: Resolved, targets: Sequence[float]) -> least.TargetEpsilon | None:
    fixed = [None if o == "auto" else o for o in res.oracles]
    if scheme == "spl":
        return least.spl_least_epsilon(targets, res.sizes, fixed)
    if scheme == "smp":
        return least.smp_least_epsilon(targets, res.sizes, fixed)
    return least.rsfd_least_epsilon(targets, res.sizes)


def feasible_at(scheme: str, res: Resolved, epsilon: float) -> bool:
    """Whether the scheme's best (continuous, f = 0) meets every target at the record budget ``epsilon``."""
    targets = least.variance_targets(res.std_errors, res.spec.users)  # type: ignore[arg-type]
    fixed = [None if o == "auto" else o for o in res.oracles]
    if scheme == "spl":
        return least.spl_least_epsilon(targets, res.sizes, fixed).epsilon <= epsilon
    if scheme == "smp":
        return least.smp_feasibility(epsilon, targets, res.sizes, fixed) <= 1.0
    d = len(res.sizes)
    return all(solver.rsfd_variance("grr", epsilon, k, d) <= t for k, t in zip(res.sizes, targets))


def _allocation(scheme: str, res: Resolved, found: least.TargetEpsilon, targets: Sequence[float],
                epsilon: float) -> tuple[tuple[str, ...], tuple[float, ...], tuple[float, ...] | None]:
    """``(oracles, epsilons, sampling)`` of the scheme at the (shrunk) budget ``epsilon``."""
    d = len(res.sizes)
    if scheme == "spl":
        scale = epsilon / found.epsilon
        return found.protocols, tuple(e * scale for e in found.epsilons), None
    if scheme == "rsfd":
        return ("grr",) * d, (epsilon,) * d, None
    fixed = [None if o == "auto" else o for o in res.oracles]
    oracles = least.best_protocols(epsilon, res.sizes, fixed)
    need = np.array([solver.frequency_oracle_variance(o, epsilon, k) / t for o, k, t in zip(oracles, res.sizes, targets)])
    return oracles, (epsilon,) * d, grid_sampling(need / need.sum())


def _numbers_at(scheme: str, res: Resolved, found: least.TargetEpsilon, targets: Sequence[float], budget: float,
                margin: float) -> Numbers:
    oracles, epsilons, sampling = _allocation(scheme, res, found, targets, budget * (1.0 - margin))
    numbers = tuple(grid_number(o, e, k) for o, e, k in zip(oracles, epsilons, res.sizes))
    variances = grid_variances(scheme, res, oracles, epsilons, numbers, sampling)
    cert = {"kind": f"least epsilon on the 2^-20 nats grid: every target met at epsilon (grid numbers), missed at "
                    f"epsilon - 2^-20 ({scheme}'s best there)", "lower_bound": budget - EPSILON_STEP,
            "upper_bound": budget, "gap": EPSILON_STEP}
    return Numbers(scheme, tuple(oracles), tuple(float(e) for e in epsilons), numbers, sampling, variances,
                   float(np.dot(res.weights, variances)), cert, margin,
                   exact_record_ratio(scheme, oracles, numbers, res.sizes),
                   tuple(exact_attribute_ratios(scheme, oracles, numbers, res.sizes)), budget)


def _plan_scheme(scheme: str, res: Resolved) -> Numbers | None:
    """The scheme at its least grid budget meeting every target on its grid numbers (None: out of reach)."""
    users = res.spec.users
    targets = least.variance_targets(res.std_errors, users)  # type: ignore[arg-type]
    found = _least(scheme, res, targets)
    if found is None:
        return None
    budget = math.ceil(found.epsilon / EPSILON_STEP) * EPSILON_STEP
    for _ in range(_MAX_STEPS):
        if budget > least.EPSILON_CEILING:
            return None
        for margin in MARGINS:
            nums = _numbers_at(scheme, res, found, targets, budget, margin)
            if all(0 < x < 1 for x in nums.numbers) and ratio_within(nums.ratio, budget):
                break
        else:
            raise SpecError("attributes.std_error", f"no margin puts {scheme}'s grid numbers within the budget", budget)
        if all(_met(v, users, s) for v, s in zip(nums.variances, res.std_errors)):  # type: ignore[arg-type]
            below = budget - EPSILON_STEP  # at 0 no scheme meets a target (infinite variance)
            if below > 0 and feasible_at(scheme, res, below):
                raise RuntimeError(f"{scheme}: the targets are met one grid step below the planned budget {budget!r}")
            return nums
        budget += EPSILON_STEP
    return None


def solve_targets(res: Resolved) -> dict[str, Numbers]:
    """Every allowed scheme at its least budget meeting the targets (``{scheme: Numbers}``; unreachable ones left out).

    Raises
    ------
    SpecError
        ``attributes.std_error``: no allowed scheme meets the targets at 100 nats or less.
    """
    out = {}
    for scheme in res.schemes:
        nums = _plan_scheme(scheme, res)
        if nums is not None:
            out[scheme] = nums
    if not out:
        raise SpecError("attributes.std_error", f"no scheme of {list(res.schemes)} meets every target at epsilon <= 100",
                        list(res.std_errors))
    return out


def solve(res: Resolved) -> dict[str, Numbers]:
    """:func:`solve_targets` for a spec without ``epsilon``, else :func:`._solve.solve_all`."""
    return solve_targets(res) if res.least_epsilon else solve_all(res)


def plan_predicted(res: Resolved, chosen: Numbers) -> dict[str, Any]:
    """The plan's ``predicted``: the weighted variance and, with targets, ``std_error_targets`` (grid numbers)."""
    out = predicted_of(chosen, res.spec.users)
    entry = targets_entry(res, grid_variances(chosen.scheme, res, chosen.oracles, chosen.epsilons, chosen.numbers,
                                              chosen.sampling))
    if entry is not None:
        out["std_error_targets"] = entry
    return out

"""The numbers of ULDP plans: exact Def. 2 ratios, grid parameters rounded toward privacy, losses.

Solvers give closed forms (``ldpplan.solvers.uldp``); here they are put on the 2^-48 grid at
the budget shrunk by :data:`ldpplan.planner._exact.SAFETY_MARGIN` and then checked **exactly**
(rational ratios, 50-digit logs), nudging a number one grid step toward privacy if float
rounding left it on the wrong side (the shared grid step, :mod:`ldpplan.planner._grid`). A budget
the grid cannot meet is a SpecError.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Mapping

from .._exact import exact, shrink
from .._grid import GRID_DENOMINATOR, Attempt, OnGrid, exact_check, round_and_repair, round_safe
from ..errors import SpecError
from ...solvers.uldp import urr_parameters, urap_parameters, LinearMarginals, worst_case_losses
from .._plan_format import predicted

__all__ = ["GRID_DENOMINATOR", "urr_ratio", "urap_ratio", "grid_urr", "grid_urap", "grid_theta", "grid_rappor",
           "urr_on_grid", "urap_on_grid", "DIRECTIONS", "predicted_losses", "marginals_model", "worst_case_kind"]

_NUDGES = 64
#: Safe rounding directions (:func:`~.._grid.round_safe`): ``c2``, ``d1``, ``psi`` up (Def. 2 (5)'s
#: ratios fall), ``theta`` (a utility choice, kept strictly inside (d1, 1)) to nearest.
DIRECTIONS = {"c2": "up", "d1": "up", "psi": "up", "theta": "nearest"}


def urr_ratio(c1: float, c2: float) -> Fraction | None:
    """Exact worst ratio of Def. 2 (5) for a uRR: ``max(c1, c2) / min(c1, c2)`` (None: infinite).

    Every column of Y_P = X_S holds ``c1`` (x = y) and ``c2`` (every other x).

    References
    ----------
    Murakami & Kawamoto 2019, Def. 2 eq. (5), Def. 3 eq. (6), Prop. 2.
    """
    a, b = exact(c1), exact(c2)
    if a <= 0 or b <= 0:
        return None
    return max(a, b) / min(a, b)


def urap_ratio(theta: float, d1: float, d2: float, n_sensitive: int, n_nonsensitive: int) -> Fraction | None:
    """Exact worst ratio of Def. 2 (5) for a uRAP over Y_P (None: infinite).

    For ``y`` in Y_P, ``Q(y|x)`` divided by the common factor ``prod_j Pr(y_j | j != x)`` is
    ``theta/d1`` or ``(1-theta)/(1-d1)`` (x in X_S, own bit set or not) or ``d2`` (x in X_N);
    with |X_S| >= 2 some y has both set and unset sensitive bits, so all three values meet.

    References
    ----------
    Murakami & Kawamoto 2019, Def. 2 eq. (5), Def. 4 eqs. (7)-(10), Prop. 3.
    """
    th, e1, e2 = exact(theta), exact(d1), exact(d2)
    if not (0 < th < 1 and 0 < e1 < 1) or (n_nonsensitive and e2 <= 0):
        return None
    a1, a0 = th / e1, (1 - th) / (1 - e1)
    extra = [e2] if n_nonsensitive else []
    classes = [[a1] + extra, [a0] + extra] + ([[a1, a0] + extra] if n_sensitive >= 2 else [])
    return max(max(c) / min(c) for c in classes)


def _too_small(epsilon: float, what: str) -> SpecError:
    return SpecError("epsilon", f"is too small for the 2^-48 probability grid ({what})", epsilon)


def grid_urr(epsilon: float, n_sensitive: int) -> dict[str, float]:
    """uRR parameters (Def. 3) on the 2^-48 grid, rounded toward privacy, exactly within epsilon.

    ``urr_on_grid(epsilon, n_sensitive).params``.
    """
    return urr_on_grid(epsilon, n_sensitive).params


def urr_on_grid(epsilon: float, n_sensitive: int) -> OnGrid[int]:
    """uRR parameters (Def. 3) on the grid, with the grid step's record (setting: ``c2``'s numerator).

    ``c2`` is rounded **up** from the closed form at the shrunk budget, then
    ``c1 = 1 - (|X_S| - 1) c2`` and ``c3 = 1 - |X_S| c2`` in integers of 2^-48, which lowers
    ``c1 / c2`` (the only ratio of Def. 2 (5)) and keeps every row summing to one exactly.
    The shared grid step (:func:`~.._grid.round_and_repair`) repairs a failed exact check by
    moving ``c2`` one more grid step up (its setting: the numerator of ``c2``).

    Raises
    ------
    SpecError
        When the grid cannot hold ``c1 > c2``, ``c3 > 0`` and ``c1/c2 <= e^epsilon``.
    """
    ks = int(n_sensitive)
    c2 = round_safe({"c2": urr_parameters(shrink(epsilon), ks).parameters["c2"]}, DIRECTIONS)["c2"]

    def attempt(k2: int) -> Attempt:
        k1, k3 = GRID_DENOMINATOR - (ks - 1) * k2, GRID_DENOMINATOR - ks * k2
        if k1 <= k2 or k3 <= 0:
            raise _too_small(epsilon, f"c1 > c2 and c3 > 0 with |X_S| = {ks}")
        holds, overshoot = exact_check(Fraction(k1, k2), epsilon)
        return Attempt({"c1": k1 / GRID_DENOMINATOR, "c2": k2 / GRID_DENOMINATOR, "c3": k3 / GRID_DENOMINATOR},
                       holds, overshoot)

    return round_and_repair(attempt, start=max(1, int(c2 * GRID_DENOMINATOR)), repair=lambda k2, _: k2 + 1,
                            max_attempts=_NUDGES, failure=lambda _: _too_small(epsilon, "c1/c2 <= e^epsilon"))


def grid_theta(theta: float) -> float:
    """``theta`` rounded to the nearest grid value in ``[2^-47, 1 - 2^-48]`` (the uRAP needs 0 < d1 < theta < 1)."""
    near = round_safe({"theta": float(theta)}, DIRECTIONS)["theta"]
    return min(max(near, 2 / GRID_DENOMINATOR), 1 - 1 / GRID_DENOMINATOR)


def grid_urap(epsilon: float, n_sensitive: int = 2, n_nonsensitive: int = 1,
              theta: float | None = None) -> dict[str, float]:
    """uRAP parameters (Def. 4) on the 2^-48 grid, rounded toward privacy, exactly within epsilon.

    ``urap_on_grid(epsilon, n_sensitive, n_nonsensitive, theta).params``.
    """
    return urap_on_grid(epsilon, n_sensitive, n_nonsensitive, theta).params


def urap_on_grid(epsilon: float, n_sensitive: int = 2, n_nonsensitive: int = 1,
                 theta: float | None = None) -> OnGrid[tuple[int, int]]:
    """uRAP parameters (Def. 4) on the grid, with the grid step's record (setting: the numerators of ``d1``, ``d2``).

    ``theta`` to nearest (kept in (0, 1)); ``d1`` **up** (lowers ``theta/d1``, raises
    ``(1-theta)/(1-d1)``); ``d2 = (theta/d1) e^(-epsilon')`` **up** (``theta/d1 <= e^eps d2``).
    If float rounding leaves a ratio of :func:`urap_ratio` above ``e^epsilon``, the shared grid
    step (:func:`~.._grid.round_and_repair`, setting: the numerators of ``d1``, ``d2``) moves the
    offending number one grid step toward privacy (at most 64 times). The defaults
    (|X_S| = 2, |X_N| = 1) check every ratio class, so those numbers hold for every |X_S|, |X_N|.

    Raises
    ------
    SpecError
        When the grid cannot meet the budget.
    """
    target = shrink(epsilon)
    th = grid_theta(urap_parameters(target, theta).parameters["theta"])
    kt = int(th * GRID_DENOMINATOR)
    d1 = round_safe({"d1": th / ((1.0 - th) * math.exp(target) + th)}, DIRECTIONS)["d1"]
    k1 = int(d1 * GRID_DENOMINATOR)
    k2 = math.ceil((th * GRID_DENOMINATOR / k1) * math.exp(-target) * GRID_DENOMINATOR)

    def attempt(ks: tuple[int, int]) -> Attempt:
        k1, k2 = ks[0], min(max(ks[1], 1), GRID_DENOMINATOR - 1)
        if not 0 < k1 < kt:
            raise _too_small(epsilon, "0 < d1 < theta")
        q = {"theta": th, "d1": k1 / GRID_DENOMINATOR, "d2": k2 / GRID_DENOMINATOR}
        holds, overshoot = exact_check(urap_ratio(th, q["d1"], q["d2"], n_sensitive, n_nonsensitive), epsilon)
        return Attempt(q, holds, overshoot)

    def nudge(ks: tuple[int, int], failed: Attempt) -> tuple[int, int]:
        k1, d2 = ks[0], exact(failed.params["d2"])
        a1, a0 = Fraction(kt, k1), Fraction(GRID_DENOMINATOR - kt, GRID_DENOMINATOR - k1)
        if n_nonsensitive and a1 / d2 > a1 / a0:
            return k1, int(d2 * GRID_DENOMINATOR) + 1
        if n_nonsensitive and d2 / a0 > a1 / a0:
            return k1, int(d2 * GRID_DENOMINATOR) - 1
        return k1 + 1, int(d2 * GRID_DENOMINATOR)

    return round_and_repair(attempt, start=(k1, k2), repair=nudge, max_attempts=_NUDGES,
                            failure=lambda _: _too_small(epsilon, "the ratios of Def. 2 (5)"))


def grid_rappor(epsilon: float) -> dict[str, float]:
    """Basic one-time RAPPOR on the grid: ``psi`` (flip) **up**, ``theta = 1 - psi`` (epsilon-LDP).

    Raises
    ------
    SpecError
        If the grid cannot hold ``theta > psi``.
    """
    h = math.exp(shrink(epsilon) / 2)
    kp = int(round_safe({"psi": 1.0 / (h + 1.0)}, DIRECTIONS)["psi"] * GRID_DENOMINATOR)
    if not 0 < kp < GRID_DENOMINATOR - kp:
        raise _too_small(epsilon, "RAPPOR theta > psi")
    return {"theta": (GRID_DENOMINATOR - kp) / GRID_DENOMINATOR, "psi": kp / GRID_DENOMINATOR}


def marginals_model(kind: str, params: Mapping[str, Any], n_sensitive: int, n_nonsensitive: int):
    """``solvers.uldp.LinearMarginals`` of uRR/uRAP numbers (eqs. 34, 40)."""
    if kind == "urr":
        return LinearMarginals.urr(n_sensitive, n_nonsensitive, params["c1"], params["c2"], params["c3"])
    return LinearMarginals.urap(n_sensitive, n_nonsensitive, params["theta"], params["d1"], params["d2"])


def worst_case_kind(kind: str, epsilon: float, n_sensitive: int, n_nonsensitive: int, mass: float) -> str:
    """Words for the worst-case input distribution of Props. 5-8 / 16-19."""
    if n_nonsensitive == 0:
        return "uniform over X (X_S = X)"
    if mass <= 1e-9:
        return "uniform over X_N (p_UN; Props. 5/8/16/19)"
    if kind == "urr" and epsilon >= math.log(n_nonsensitive + 1):
        return "p* of eq. (13) (Props. 6/17)"
    return f"mixture: {mass:.4g} on X_S uniformly, rest uniform on X_N"


def predicted_losses(kind: str, params: Mapping[str, Any], n_sensitive: int, n_nonsensitive: int,
                     users: int | None) -> dict[str, dict[str, Any]]:
    """Worst-case expected losses of the empirical estimate, as ``predicted`` entries.

    Returns
    -------
    dict
        ``l1_worst_times_sqrt_n`` (frequency l1 x sqrt(users); eq. 37, asymptotic),
        ``l2_worst_times_n`` (squared l2 x users; eqs. 46, 48, exact), and with ``users`` also
        ``l1_worst``, ``l2_worst``. Entries are ``{value, unit, source, at}``.

    References
    ----------
    Murakami & Kawamoto 2019, Props. 4-8 (l1), App. E Props. 15-19 (l2).
    """
    res = worst_case_losses(marginals_model(kind, params, n_sensitive, n_nonsensitive), 1)
    p = res.parameters
    eps = float(params.get("epsilon", 0.0))
    at1 = worst_case_kind(kind, eps, n_sensitive, n_nonsensitive, p["sensitive_mass_l1"])
    at2 = worst_case_kind(kind, eps, n_sensitive, n_nonsensitive, p["sensitive_mass_l2"])
    src1, src2 = "ULDP Props. 4-8, eq. (37) (n -> inf)", "ULDP Props. 15-19, eqs. (46), (48)"
    out = {"l1_worst_times_sqrt_n": predicted(p["l1"], "l1 (frequency) x sqrt(users)", src1, at=at1),
           "l2_worst_times_n": predicted(p["l2"], "squared l2 (frequency^2) x users", src2, at=at2)}
    if users:
        out["l1_worst"] = predicted(p["l1"] / math.sqrt(users), f"l1 (frequency) at {users} users", src1, at=at1)
        out["l2_worst"] = predicted(p["l2"] / users, f"squared l2 (frequency^2) at {users} users", src2, at=at2)
    return out

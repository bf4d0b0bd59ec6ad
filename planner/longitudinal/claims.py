"""Numbers and claims of a longitudinal plan: solved on the grid, claims derived exactly.

Used by :mod:`.plan` (to write) and :mod:`.verify` (to recompute, never read).

* **Rounds on the 2^-48 grid, safe side.** The solvers aim at budgets shrunk by
  ``SAFETY_MARGIN``; ``p`` is rounded down and ``q`` up in each round (for L-GRR, ``q`` is
  ``(1 - p)/(k - 1)`` exactly), the unary second round is solved on the rounded first round, and
  :func:`solve` decides both budgets exactly, moving the second round toward uninformative on the
  grid if float error near 0 or 1 would overshoot (the solver never overshoots a valid budget).
* **L-GRR second round.** The plan solves it on the exact composed k-ary channel
  (:func:`ldpplan.solvers.longitudinal.l_grr_exact`; ``params.second_round =
  "exact-composed"``): the papers' two-path form (Arcolezi et al. 2022, and multi-freq-ldpy) is
  exact for ``k = 2`` and conservative for ``k > 2``, so the exact channel gives a larger ``p2``
  and a lower variance at the same ``epsilon_1``. The papers' form is kept as a baseline.
* **Claims.** ``epsilon_perm``, ``epsilon_1`` (and ``epsilon`` = ``epsilon_1``): the smallest
  float whose rigorous exponential bounds the exact ratio. Over a history (:mod:`._lifetime`):
  ``epsilon_lifetime_one_value = epsilon_perm`` (one value, any number of rounds);
  ``epsilon_2`` the second round's epsilon on the permanent response; ``epsilon_lifetime =
  min(T epsilon_2, V epsilon_perm + floor(T (V-1)/V) epsilon_2)`` (sound, every pair of histories of at most ``T``
  rounds and ``V = max_values`` values), ``epsilon_lifetime_lower`` the exact loss of concrete
  pairs. ``max_values x epsilon_perm`` (sequential composition over the permanent responses),
  which earlier plans claimed, is false once values change: the map from rounds to permanent
  responses differs between the histories.
"""
from __future__ import annotations

import copy
import math
from fractions import Fraction
from typing import Any, Mapping

from ..errors import SpecError
from .._exact import shrink, ratio_within
from .._plan_format import predicted as entry
from .._report import Bound, ReportFacts
from ._lifetime import LIFETIME_SOURCE, epsilon_2_of, lifetime_lower, lifetime_upper_exact
from ...solvers._exact_channel import log_upper
from ...solvers._result import SolverError
from ...solvers.longitudinal import first_round, l_grr_exact, second_round, l_grr

__all__ = ["solve", "exact_ratios", "claims", "predictions", "baselines", "variance_line", "one_shot_variance",
           "rounds_of", "NOTION", "SOURCES", "SOLVER_NAMES", "lifetime", "sound_lifetime", "report_facts",
           "report_spec"]

NOTION = "longitudinal-LDP"
SOURCES = ("epsilon_perm: first round (Erlingsson et al. 2014, epsilon-infinity); epsilon_1: exact composed channel; "
           + LIFETIME_SOURCE)
#: plan mechanism -> solver name (Arcolezi et al. 2022)
SOLVER_NAMES = {"l-grr": "L-GRR", "l-sue": "L-SUE", "l-oue": "L-OUE", "l-osue": "L-OSUE", "l-soue": "L-SOUE"}
_GRID = 2.0**48
#: L-GRR's rounds are solved at budgets of at most this many nats: beyond it the first round's
#: ``q1 = 1/(e^epsilon_perm + k - 1)`` is below the 2^-48 grid (and underflows ``1 - p1`` in float64).
#: The plan still states the requested budgets, which the capped numbers satisfy with room to spare
#: (as IDUE's ``solvers.idue.EPSILON_CAP``); ``verify`` decides both exactly.
L_GRR_CAP = 30.0
#: Budgets below this are refused (the 2^-48 grid resolves about 10^-13 nats; the solvers divide by ~epsilon).
MIN_EPSILON = 1e-9
_UNIT = "frequency^2 per value and round (f = 0)"
_SRC = "Arcolezi et al. (2022), approximate variance Q(1-Q)/(n (p1-q1)^2 (p2-q2)^2)"
_ONE_SHOT = "one-shot GRR (e^eps + k - 2)/(n (e^eps - 1)^2) or OUE 4 e^eps/(n (e^eps - 1)^2) (Wang et al. 2017)"


def _down(p: float) -> float:
    return math.floor(p * _GRID) / _GRID


def _up(p: float) -> float:
    return math.ceil(p * _GRID) / _GRID


def solve(mechanism: str, epsilon_perm: float, epsilon_1: float, k: int) -> dict[str, Any]:
    """``params`` of ``mechanism`` on the grid (``p`` down, ``q`` up in each round), never above the budgets.

    The first round is rounded on the grid (kept strictly inside (0, 1): at large budgets the float
    closed form reaches 0 or 1), the second round is solved on the rounded first round, and
    :func:`_repair` then decides both budgets exactly and moves the second round toward the uninformative
    end on the grid (bisection) until the composed channel's exact epsilon is within the budget: float
    error of the closed forms near 0 or 1 (e.g. L-SUE at 40 / 20 nats) never makes a plan overshoot.

    Raises
    ------
    SpecError
        The mechanism cannot reach ``epsilon_1`` (L-OUE, L-SOUE) or the grid leaves no
        informative round.
    """
    if epsilon_1 < MIN_EPSILON:
        raise SpecError("epsilon_1", f"is too small for the 2^-48 probability grid (below {MIN_EPSILON:g} nats)",
                        epsilon_1)
    e_perm, e_1 = shrink(epsilon_perm), shrink(epsilon_1)
    try:
        if mechanism == "l-grr":
            r = l_grr_exact(min(e_perm, L_GRR_CAP), min(e_1, L_GRR_CAP - 1.0), k).parameters
            p1, p2 = _down(r.p1), _down(r.p2)
            if not (p1 * k > 1 and p2 * k > 1):
                raise SpecError("epsilon_1", "is too small for the 2^-48 probability grid", epsilon_1)
            return _repair(mechanism, {"domain_size": k, "p1": p1, "p2": p2, "second_round": "exact-composed"},
                           epsilon_perm, epsilon_1)
        name = SOLVER_NAMES[mechanism]
        f1, g1 = first_round(name, e_perm)
        p1, q1 = (0.5, _clamp(_up(g1))) if mechanism in ("l-oue", "l-osue") else (_clamp(_down(f1)), 0.0)
        q1 = q1 if mechanism in ("l-oue", "l-osue") else 1.0 - p1
        try:
            f2, g2 = second_round(name, p1, q1, e_1)
        except SolverError:  # beyond what the grid's first round reaches: the float round's solution, repaired below
            f2, g2 = second_round(name, f1, g1, e_1)
    except SolverError as exc:
        raise SpecError("epsilon_1", f"{SOLVER_NAMES[mechanism]} cannot reach it ({exc})", epsilon_1) from None
    p2, q2 = (0.5, _clamp(_up(g2))) if mechanism in ("l-oue", "l-soue") else (_clamp(_down(f2)), 0.0)
    q2 = q2 if mechanism in ("l-oue", "l-soue") else 1.0 - p2
    if not (p1 > q1 and p2 > q2):
        raise SpecError("epsilon_1", "is too small for the 2^-48 probability grid", epsilon_1)
    return _repair(mechanism, {"domain_size": k, "p1": p1, "q1": q1, "p2": p2, "q2": q2}, epsilon_perm, epsilon_1)


def _clamp(p: float) -> float:
    """Keep a grid probability strictly inside (0, 1) (one grid step from either end)."""
    return min(max(p, 1.0 / _GRID), 1.0 - 1.0 / _GRID)


def _repair(mechanism: str, params: dict[str, Any], epsilon_perm: float, epsilon_1: float) -> dict[str, Any]:
    """Decide both budgets exactly; bisect the second round on the grid toward uninformative if it overshoots.

    Raises
    ------
    SpecError
        The first round overshoots ``epsilon_perm`` (not observed: it is rounded toward the safe side), or
        no informative second round fits ``epsilon_1`` on the grid.
    """
    margin_1 = shrink(epsilon_1)
    # the first round aims at shrink(epsilon_perm); a float step above that target is still within the budget
    # itself, which is what verify decides exactly (issue 26 red team: L-SUE at epsilon_perm = 0.05)
    if not ratio_within(exact_ratios(mechanism, params)["perm"], float(epsilon_perm)):
        raise SpecError("epsilon_perm", "the first round overshoots it on the 2^-48 grid", epsilon_perm)
    # the second round's free number as a grid integer, and the uninformative end it moves toward
    key, sign = ("q2", 1) if mechanism in ("l-oue", "l-soue") else ("p2", -1)
    k = int(params["domain_size"])
    end = int(_GRID) // 2 if mechanism != "l-grr" else int(_GRID) // k
    mid_limit = end - sign  # the informative grid point next to the uninformative end (p2 k > 1 for L-GRR)

    def with_t(t: int) -> dict[str, Any]:
        out = dict(params, **{key: t / _GRID})
        if mechanism in ("l-sue", "l-osue"):
            out["q2"] = 1.0 - out["p2"]
        return out

    def fits(t: int) -> bool:
        return ratio_within(exact_ratios(mechanism, with_t(t))["one"], margin_1)

    bad = int(round(params[key] * _GRID))
    if fits(bad):
        return params
    good = mid_limit
    if not fits(good):
        raise SpecError("epsilon_1", "no informative second round fits it on the 2^-48 grid", epsilon_1)
    while abs(bad - good) > 1:
        mid = (bad + good) // 2
        good, bad = (mid, bad) if fits(mid) else (good, mid)
    return with_t(good)


def rounds_of(mechanism: str, params: Mapping[str, Any]) -> tuple[Fraction, Fraction, Fraction, Fraction]:
    k = int(params["domain_size"])
    p1, p2 = Fraction(params["p1"]), Fraction(params["p2"])
    if mechanism == "l-grr":
        return p1, (1 - p1) / (k - 1), p2, (1 - p2) / (k - 1)
    return p1, Fraction(params["q1"]), p2, Fraction(params["q2"])


def exact_ratios(mechanism: str, params: Mapping[str, Any]) -> dict[str, Fraction]:
    """``e^epsilon_perm`` and ``e^epsilon_1`` of the numbers, exactly (rationals), and ``P``, ``Q``."""
    p1, q1, p2, q2 = rounds_of(mechanism, params)
    big_p, big_q = p1 * p2 + (1 - p1) * q2, q1 * p2 + (1 - q1) * q2
    if mechanism == "l-grr":  # composed GRR matrix: diagonal P, off-diagonal Q
        return {"perm": p1 / q1, "one": big_p / big_q, "P": big_p, "Q": big_q}
    return {"perm": p1 * (1 - q1) / ((1 - p1) * q1), "one": big_p * (1 - big_q) / ((1 - big_p) * big_q),
            "P": big_p, "Q": big_q}


def lifetime(mechanism: str, params: Mapping[str, Any], rounds: int, max_values: int,
             epsilon_perm: float) -> dict[str, float]:
    """``epsilon_2``, ``epsilon_lifetime`` (sound), ``epsilon_lifetime_lower``, ``epsilon_lifetime_one_value``.

    ``epsilon_perm`` is the (rounded-up) claim; see :mod:`._lifetime` for the bound and its proof.
    """
    p1, q1, p2, q2 = rounds_of(mechanism, params)
    k = int(params["domain_size"])
    e2, upper = sound_lifetime(mechanism, params, rounds, max_values, epsilon_perm)
    lower = lifetime_lower(mechanism, k, rounds, max_values, (float(p1), float(q1)), (float(p2), float(q2)))
    return {"epsilon_2": e2, "epsilon_lifetime": upper, "epsilon_lifetime_lower": min(lower, upper),
            "epsilon_lifetime_one_value": float(epsilon_perm)}


def sound_lifetime(mechanism: str, params: Mapping[str, Any], rounds: int, max_values: int,
                   epsilon_perm: float | None = None) -> tuple[float, float]:
    """``(epsilon_2, epsilon_lifetime)`` of the numbers (``epsilon_perm``: the claim; default from the numbers)."""
    if epsilon_perm is None:
        epsilon_perm = log_upper(exact_ratios(mechanism, params)["perm"])
    _, _, p2, q2 = rounds_of(mechanism, params)
    e2 = epsilon_2_of(mechanism, p2, q2, int(params["domain_size"]))
    return e2, lifetime_upper_exact(max_values, rounds, epsilon_perm, e2)


def claims(mechanism: str, params: Mapping[str, Any], rounds: int, max_values: int) -> dict[str, Any]:
    """The ``guarantee`` of the numbers (every value derived, rounded toward the safe side)."""
    r = exact_ratios(mechanism, params)
    e_perm, e_1 = log_upper(r["perm"]), log_upper(r["one"])
    return {"notion": NOTION, "epsilon": e_1, "epsilon_perm": e_perm, "epsilon_1": e_1, "rounds": int(rounds),
            "max_values": int(max_values), **lifetime(mechanism, params, int(rounds), int(max_values), e_perm),
            "sources": SOURCES}


def variance_line(mechanism: str, params: Mapping[str, Any]) -> tuple[float, float]:
    """``n Var = c0 + c1 f`` per value and round; ``c0/n`` is the papers' approximate variance."""
    p1, q1, p2, q2 = rounds_of(mechanism, params)
    r = exact_ratios(mechanism, params)
    big_p, big_q = float(r["P"]), float(r["Q"])
    s = float(((p1 - q1) * (p2 - q2)) ** 2)
    return big_q * (1 - big_q) / s, (big_p * (1 - big_p) - big_q * (1 - big_q)) / s


def one_shot_variance(epsilon: float, k: int) -> tuple[str, float]:
    """``(name, n Var)`` at ``f = 0`` of the better one-shot oracle at ``epsilon``: GRR
    ``(e^eps + k - 2)/(e^eps - 1)^2`` or OUE ``4 e^eps/(e^eps - 1)^2`` (Wang et al. 2017)."""
    e = math.exp(epsilon)
    grr, oue = (e + k - 2) / (e - 1) ** 2, 4 * e / (e - 1) ** 2
    return ("GRR", grr) if grr <= oue else ("OUE", oue)


def predictions(mechanism: str, params: Mapping[str, Any], n: int) -> dict[str, Any]:
    """``predicted``: the variance per value and round (the papers' closed form) and its slope."""
    c0, c1 = variance_line(mechanism, params)
    k = int(params["domain_size"])
    src = "Arcolezi et al. (2022), approximate variance Q(1-Q)/(n (p1-q1)^2 (p2-q2)^2) of the plan's numbers"
    return {"variance_per_round": entry(c0 / n, "frequency^2 per value and round (f = 0)", src),
            "variance_slope_per_round": entry(c1 / n, "frequency^2 per unit of f", "exact variance [f P(1-P) + "
                                              "(1-f) Q(1-Q)] / (n (p1-q1)^2 (p2-q2)^2), minus the f = 0 term"),
            "mse_total_per_round": entry((k * c0 + c1) / n, "frequency^2 (sum over the k values, any f)",
                                         "sum of the exact per-value variances (sum f = 1)")}


def baselines(chosen: str, candidates: Mapping[str, Any], spec, lifetime_bound: float,
              budgets: tuple[float, float]) -> list[dict[str, Any]]:
    """The candidates of ``auto``, the papers' L-GRR second round, and two plans without memoization.

    ``candidates``: mechanism -> params (or a SpecError text when it cannot reach the budgets);
    ``lifetime_bound``: the plan's sound ``epsilon_lifetime``; ``budgets``: the planned
    ``(epsilon_perm, epsilon_1)`` (the spec's, scaled under a lifetime target).
    """
    m, n, k = spec.model, spec.model.users, spec.k
    out: list[dict[str, Any]] = []
    for name, params in candidates.items():
        if isinstance(params, str):
            out.append({"name": name, "mechanism": name, "chosen": False, "reachable": False, "reason": params,
                        "predicted": {}})
            continue
        c0, _ = variance_line(name, params)
        out.append({"name": name, "mechanism": name, "chosen": name == chosen, "reachable": True,
                    "predicted": {"variance_per_round": entry(c0 / n, _UNIT, _SRC)}})

    try:
        ref = l_grr(shrink(budgets[0]), shrink(budgets[1]), k) if k > 2 and "l-grr" in candidates else None
    except SolverError:  # the papers' closed form leaves (1/k, 1] at tiny budgets: no such baseline
        ref = None
    if ref is not None:
        out.append({"name": "l-grr-papers-second-round", "mechanism": "l-grr", "chosen": False, "reachable": True,
                    "p2": ref.p2, "predicted": {"variance_per_round": entry(ref.approximate_variance(n), _UNIT, _SRC)},
                    "reason": "two-path ratio (exact for k = 2, conservative for k > 2)"})
    per = lifetime_bound / m.rounds
    name, var = one_shot_variance(per, k)
    out.append({"name": "no-memo-same-lifetime", "mechanism": name, "chosen": False, "reachable": True,
                "epsilon_per_report": per, "epsilon_lifetime": lifetime_bound,
                "predicted": {"variance_per_round": entry(var / n, _UNIT, _ONE_SHOT)},
                "reason": "fresh reports, the plan's sound epsilon_lifetime split over the rounds (sequential "
                          "composition, Dwork & Roth 2014, Thm. 3.16)"})
    name, var = one_shot_variance(budgets[1], k)
    out.append({"name": "no-memo-same-report", "mechanism": name, "chosen": False, "reachable": True,
                "epsilon_per_report": budgets[1], "epsilon_lifetime": m.rounds * budgets[1],
                "predicted": {"variance_per_round": entry(var / n, _UNIT, _ONE_SHOT)},
                "reason": "fresh reports at epsilon_1: averaging the rounds' reports costs rounds x epsilon_1"})
    return out


def report_facts(plan: Mapping[str, Any]) -> ReportFacts:
    """What ``ldpplan report`` says about a longitudinal plan (:class:`~.._report.ReportFacts`).

    References
    ----------
    Erlingsson, Pihur & Korolova, CCS 2014 (memoization, epsilon-infinity); Arcolezi et al. 2022 (the
    variances); Dwork & Roth 2014, Thm. 3.16 (the lifetime).
    """
    one = Bound("epsilon of one report", ("guarantee", "epsilon_1"), "nats", "the exact composed channel",
                lower_field=("verification", "epsilon_1_realized"),
                lower_source="attained: the exact ratio of the plan's composed channel")
    return ReportFacts(
        notion_words="longitudinal LDP with memoization: each value a user holds gets one permanent randomized "
                     "response, kept on the device; every report re-randomizes it",
        unit_of_privacy="a user's lifetime of reports (at most the plan's rounds): any number of reports of one "
                        "value reveal at most epsilon_perm; a user holding at most max_values distinct values, at "
                        "most epsilon_lifetime, which grows with the rounds because changes are leaked",
        bounds=(one,
                Bound("epsilon of any number of reports of one value", ("guarantee", "epsilon_perm"), "nats",
                      "the permanent response (Erlingsson et al. 2014, epsilon-infinity)",
                      lower_field=("verification", "epsilon_perm_realized"),
                      lower_source="attained: the exact ratio of the plan's first round"),
                Bound("epsilon of a user's lifetime (max_values values)", ("guarantee", "epsilon_lifetime"), "nats",
                      LIFETIME_SOURCE, lower_field=("guarantee", "epsilon_lifetime_lower"),
                      lower_source="the exact loss of concrete pairs of histories")),
        ldp_epsilon=one, headline="variance_per_round", users_field=("spec", "users"))


def report_spec(plan: Mapping[str, Any], *, budget: float = 1.0, users: int | None = None) -> dict[str, Any] | None:
    """The plan's spec with its budget times ``budget`` and ``users`` users (None: as planned), for the
    report's what-ifs and figures (re-planned through this family's ``plan``); None when the spec cannot say it."""
    spec = copy.deepcopy(dict(plan["spec"]))
    for key in ("epsilon_perm", "epsilon_1"):
        if spec.get(key) is not None:
            spec[key] = spec[key] * budget
    target = spec.get("target")
    if isinstance(target, dict) and target.get("epsilon_lifetime") is not None:
        target["epsilon_lifetime"] = target["epsilon_lifetime"] * budget
    if users is not None:
        spec["users"] = int(users)
    return spec

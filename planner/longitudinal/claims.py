"""Numbers and claims of a longitudinal plan: solved on the grid, claims derived exactly.

Used by :mod:`.plan` (to write) and :mod:`.verify` (to recompute, never read).

* **Rounds on the 2^-48 grid, safe side.** The solvers aim at budgets shrunk by
  ``SAFETY_MARGIN``; then ``p`` is rounded down and ``q`` up in each round (for L-GRR, ``q`` is
  ``(1 - p)/(k - 1)`` exactly). A rounded round is a garbling of the unrounded one (its
  interval ``[q, p]`` lies inside), so neither the first round's epsilon nor the composed
  channel's grows; :func:`exact_epsilons` then decides both exactly.
* **L-GRR second round.** The plan solves it on the exact composed k-ary channel
  (:func:`ldpplan.solvers.longitudinal.l_grr_exact`; ``params.second_round =
  "exact-composed"``): the papers' two-path form (Arcolezi et al. 2022, and multi-freq-ldpy) is
  exact for ``k = 2`` and conservative for ``k > 2``, so the exact channel gives a larger ``p2``
  and a lower variance at the same ``epsilon_1``. The papers' form is kept as a baseline.
* **Claims.** ``epsilon_perm``, ``epsilon_1`` (and ``epsilon`` = ``epsilon_1``): the smallest
  float whose rigorous exponential bounds the exact ratio; ``epsilon_lifetime`` the smallest
  float ``>= max_changes x epsilon_perm``: a user's reports over the rounds are
  post-processing of the permanent responses of at most ``max_changes`` distinct values, each
  ``epsilon_perm``-LDP, so by basic sequential composition (Dwork & Roth 2014, Thm. 3.16) the
  whole history is ``max_changes x epsilon_perm``-LDP.
"""
from __future__ import annotations

import copy
import math
from fractions import Fraction
from typing import Any, Mapping

from ..errors import SpecError
from .._exact import shrink
from .._plan_format import predicted as entry
from .._report import Bound, ReportFacts

__all__ = ["solve", "exact_ratios", "claims", "predictions", "baselines", "variance_line", "one_shot_variance",
           "NOTION", "SOURCES", "SOLVER_NAMES", "lifetime_upper", "report_facts", "report_spec"]

NOTION = "longitudinal-LDP"
SOURCES = ("epsilon_perm: first round (Erlingsson et al. 2014, epsilon-infinity); epsilon_1: exact composed channel; "
           "epsilon_lifetime: max_changes x epsilon_perm (Dwork & Roth 2014, Thm. 3.16)")
#: plan mechanism -> solver name (Arcolezi et al. 2022)
SOLVER_NAMES = {"l-grr": "L-GRR", "l-sue": "L-SUE", "l-oue": "L-OUE", "l-osue": "L-OSUE", "l-soue": "L-SOUE"}
_GRID = 2.0**48
#: L-GRR's rounds are solved at budgets of at most this many nats: beyond it the first round's
#: ``q1 = 1/(e^epsilon_perm + k - 1)`` is below the 2^-48 grid (and underflows ``1 - p1`` in float64).
#: The plan still states the requested budgets, which the capped numbers satisfy with room to spare
#: (as IDUE's ``solvers.idue.EPSILON_CAP``); ``verify`` decides both exactly.
L_GRR_CAP = 30.0
_UNIT = "frequency^2 per value and round (f = 0)"
_SRC = "Arcolezi et al. (2022), approximate variance Q(1-Q)/(n (p1-q1)^2 (p2-q2)^2)"
_ONE_SHOT = "one-shot GRR (e^eps + k - 2)/(n (e^eps - 1)^2) or OUE 4 e^eps/(n (e^eps - 1)^2) (Wang et al. 2017)"


def _down(p: float) -> float:
    return math.floor(p * _GRID) / _GRID


def _up(p: float) -> float:
    return math.ceil(p * _GRID) / _GRID


def solve(mechanism: str, epsilon_perm: float, epsilon_1: float, k: int) -> dict[str, Any]:
    """``params`` of ``mechanism`` on the grid (``p`` down, ``q`` up in each round).

    Raises
    ------
    SpecError
        The mechanism cannot reach ``epsilon_1`` (L-OUE, L-SOUE) or the grid leaves no
        informative round.
    """
    from ...solvers._result import SolverError
    from ...solvers.longitudinal import l_grr_exact, longitudinal_parameters

    e_perm, e_1 = shrink(epsilon_perm), shrink(epsilon_1)
    try:
        if mechanism == "l-grr":
            r = l_grr_exact(min(e_perm, L_GRR_CAP), min(e_1, L_GRR_CAP - 1.0), k).parameters
            p1, p2 = _down(r.p1), _down(r.p2)
            if not (p1 * k > 1 and p2 * k > 1):
                raise SpecError("epsilon_1", "is too small for the 2^-48 probability grid", epsilon_1)
            return {"domain_size": k, "p1": p1, "p2": p2, "second_round": "exact-composed"}
        r = longitudinal_parameters(SOLVER_NAMES[mechanism], e_perm, e_1, k)
    except SolverError as exc:
        raise SpecError("epsilon_1", f"{SOLVER_NAMES[mechanism]} cannot reach it ({exc})", epsilon_1) from None
    p1, q1 = (0.5, _up(r.q1)) if mechanism in ("l-oue", "l-osue") else (_down(r.p1), 1.0 - _down(r.p1))
    p2, q2 = (0.5, _up(r.q2)) if mechanism in ("l-oue", "l-soue") else (_down(r.p2), 1.0 - _down(r.p2))
    if not (p1 > q1 and p2 > q2):
        raise SpecError("epsilon_1", "is too small for the 2^-48 probability grid", epsilon_1)
    return {"domain_size": k, "p1": p1, "q1": q1, "p2": p2, "q2": q2}


def _rounds(mechanism: str, params: Mapping[str, Any]) -> tuple[Fraction, Fraction, Fraction, Fraction]:
    k = int(params["domain_size"])
    p1, p2 = Fraction(params["p1"]), Fraction(params["p2"])
    if mechanism == "l-grr":
        return p1, (1 - p1) / (k - 1), p2, (1 - p2) / (k - 1)
    return p1, Fraction(params["q1"]), p2, Fraction(params["q2"])


def exact_ratios(mechanism: str, params: Mapping[str, Any]) -> dict[str, Fraction]:
    """``e^epsilon_perm`` and ``e^epsilon_1`` of the numbers, exactly (rationals), and ``P``, ``Q``."""
    p1, q1, p2, q2 = _rounds(mechanism, params)
    big_p, big_q = p1 * p2 + (1 - p1) * q2, q1 * p2 + (1 - q1) * q2
    if mechanism == "l-grr":  # composed GRR matrix: diagonal P, off-diagonal Q
        return {"perm": p1 / q1, "one": big_p / big_q, "P": big_p, "Q": big_q}
    return {"perm": p1 * (1 - q1) / ((1 - p1) * q1), "one": big_p * (1 - big_q) / ((1 - big_p) * big_q),
            "P": big_p, "Q": big_q}


def lifetime_upper(max_changes: int, epsilon_perm: float) -> float:
    """The smallest float ``>= max_changes x epsilon_perm`` (exactly)."""
    value = float(max_changes) * float(epsilon_perm)
    while Fraction(value) < int(max_changes) * Fraction(epsilon_perm):
        value = math.nextafter(value, math.inf)
    return value


def claims(mechanism: str, params: Mapping[str, Any], rounds: int, max_changes: int) -> dict[str, Any]:
    """The ``guarantee`` of the numbers (every value derived, rounded toward the safe side)."""
    from ...solvers._exact_channel import log_upper

    r = exact_ratios(mechanism, params)
    e_perm, e_1 = log_upper(r["perm"]), log_upper(r["one"])
    return {"notion": NOTION, "epsilon": e_1, "epsilon_perm": e_perm, "epsilon_1": e_1, "rounds": int(rounds),
            "max_changes": int(max_changes), "epsilon_lifetime": lifetime_upper(max_changes, e_perm),
            "sources": SOURCES}


def variance_line(mechanism: str, params: Mapping[str, Any]) -> tuple[float, float]:
    """``n Var = c0 + c1 f`` per value and round; ``c0/n`` is the papers' approximate variance."""
    p1, q1, p2, q2 = _rounds(mechanism, params)
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


def baselines(chosen: str, candidates: Mapping[str, Any], spec) -> list[dict[str, Any]]:
    """The candidates of ``auto``, the papers' L-GRR second round, and two plans without memoization.

    ``candidates``: mechanism -> params (or a SpecError text when it cannot reach the budgets).
    """
    from ...solvers.longitudinal import l_grr

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
    if k > 2 and "l-grr" in candidates:
        ref = l_grr(shrink(m.epsilon_perm), shrink(m.epsilon_1), k)
        out.append({"name": "l-grr-papers-second-round", "mechanism": "l-grr", "chosen": False, "reachable": True,
                    "p2": ref.p2, "predicted": {"variance_per_round": entry(ref.approximate_variance(n), _UNIT, _SRC)},
                    "reason": "two-path ratio (exact for k = 2, conservative for k > 2)"})
    lifetime = m.max_changes * m.epsilon_perm
    per = lifetime / m.rounds
    name, var = one_shot_variance(per, k)
    out.append({"name": "no-memo-same-lifetime", "mechanism": name, "chosen": False, "reachable": True,
                "epsilon_per_report": per, "epsilon_lifetime": lifetime,
                "predicted": {"variance_per_round": entry(var / n, _UNIT, _ONE_SHOT)},
                "reason": "fresh reports, max_changes x epsilon_perm split over the rounds (sequential composition)"})
    name, var = one_shot_variance(m.epsilon_1, k)
    out.append({"name": "no-memo-same-report", "mechanism": name, "chosen": False, "reachable": True,
                "epsilon_per_report": m.epsilon_1, "epsilon_lifetime": m.rounds * m.epsilon_1,
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
        unit_of_privacy="a user's lifetime of reports: any number of reports of one value reveal at most "
                        "epsilon_perm; a user holding at most max_changes distinct values, at most epsilon_lifetime",
        bounds=(one,
                Bound("epsilon of any number of reports of one value", ("guarantee", "epsilon_perm"), "nats",
                      "the permanent response (Erlingsson et al. 2014, epsilon-infinity)",
                      lower_field=("verification", "epsilon_perm_realized"),
                      lower_source="attained: the exact ratio of the plan's first round"),
                Bound("epsilon of a user's lifetime (max_changes values)", ("guarantee", "epsilon_lifetime"), "nats",
                      "max_changes x epsilon_perm, sequential composition (Dwork & Roth 2014, Thm. 3.16)")),
        ldp_epsilon=one, headline="variance_per_round", users_field=("spec", "users"))


def report_spec(plan: Mapping[str, Any], *, budget: float = 1.0, users: int | None = None) -> dict[str, Any] | None:
    """The plan's spec with its budget times ``budget`` and ``users`` users (None: as planned), for the
    report's what-ifs and figures (re-planned through this family's ``plan``); None when the spec cannot say it."""
    spec = copy.deepcopy(dict(plan["spec"]))
    spec["epsilon_perm"] = spec["epsilon_perm"] * budget
    spec["epsilon_1"] = spec["epsilon_1"] * budget
    if users is not None:
        spec["users"] = int(users)
    return spec

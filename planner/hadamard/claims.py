"""The claims of a Hadamard-response plan that follow from its numbers: guarantee, predictions, baselines.

The planner writes them and the verifier recomputes and compares them (never reads them).
"""
from __future__ import annotations

import copy
import math
from typing import Any, Mapping

from ...mechanisms.hadamard import NOTION  # ``guarantee.notion``: "LDP" (the runtime checks it)
from ...solvers import SolverError
from ...solvers.hadamard import HadamardNumbers, authors_blocks, randomized_response_l2, solve_hr
from .._exact import float_up
from .._plan_format import predicted
from .._report import Bound, ReportFacts
from .._solve_once import once

__all__ = ["SOURCES", "guarantee_of", "predicted_of", "baselines_of", "claimed_epsilon", "report_facts", "report_spec"]

#: ``guarantee.sources``.
SOURCES = ("Hadamard response (Acharya, Sun & Zhang, AISTATS 2019): Q(y|x) = P/s on C_x, (1-P)/(K-s) elsewhere, "
           "(K-s)/s = 2B-1; epsilon = ln(P (2B-1)/(1-P)) of the 2^-48 grid P, exactly")
_VAR = "Hadamard response: n Var f_hat(x) = (2q + (P-q) F_j)/(P-q)^2 - f(x), q = (1-P)/(2B-1) (fixed users' data)"
_UNIT = "squared frequency (sum over the k items of E[(f_hat(x) - f(x))^2])"


#: The claim of an exact epsilon: the smallest float at or above it (toward the safe side; ``planner._exact.float_up``).
claimed_epsilon = float_up


def guarantee_of(numbers: HadamardNumbers) -> dict[str, Any]:
    """``{"notion": "LDP", "epsilon": ln(P (2B-1)/(1-P)) rounded up, "sources"}``."""
    return {"notion": NOTION, "epsilon": claimed_epsilon(numbers.epsilon_exact), "sources": SOURCES}


def _worst(numbers: HadamardNumbers, users: int | None) -> dict[str, Any]:
    case = ("every distribution (B = 1)" if numbers.blocks == 1 else
            "worst case over distributions: all users in one full block")
    out = {"l2_total_times_n": predicted(numbers.worst_l2(1), f"{_UNIT} x users", f"{_VAR}, summed; {case}"),
           "report_bits": predicted(numbers.report_bits, "bits", "log2 K, K = B b")}
    if users is not None:
        out["l2_total"] = predicted(numbers.worst_l2(users), _UNIT, f"{_VAR}, summed, n = {users}; {case}")
    return out


def predicted_of(numbers: HadamardNumbers, users: int | None) -> dict[str, Any]:
    """Predicted error of the empirical estimate: the exact variance coefficients and the total l2 error."""
    c0, cb, c1 = numbers.variance_coefficients()
    return {**_worst(numbers, users),
            "variance_intercept_times_n": predicted(c0, "squared frequency x users", _VAR + ": 2q/(P-q)^2"),
            "variance_block_slope_times_n": predicted(cb, "squared frequency x users per unit of F_j",
                                                      _VAR + ": 1/(P-q)"),
            "variance_slope_times_n": predicted(c1, "squared frequency x users per unit of f", _VAR)}


def baselines_of(numbers: HadamardNumbers, users: int | None) -> list[dict[str, Any]]:
    """The k-ary RR at the same epsilon (the paper's comparison) and the other choices of ``B``."""
    k, eps = numbers.domain_size, numbers.epsilon
    rr: dict[str, Any] = {
        "l2_total_times_n": predicted(randomized_response_l2(eps, k), f"{_UNIT} x users",
                                      "k-ary RR at the spec's epsilon (every distribution)"),
        "report_bits": predicted(math.ceil(math.log2(k)), "bits", "ceil(log2 k)"),
    }
    if users is not None:
        rr["l2_total"] = predicted(randomized_response_l2(eps, k, users), _UNIT, f"k-ary RR, n = {users}")
    out = [{"name": "k-ary RR", "guarantee": f"{eps:g}-LDP", "predicted": rr}]
    for name, B in (("HR, B = 1 (basic)", 1), ("HR, authors' B = 2^floor(log2 min(e^eps, 2k))", authors_blocks(eps, k))):
        if B != numbers.blocks and all(b.get("blocks") != B for b in out):
            try:
                other = once(solve_hr, eps, k, B).extra["numbers"]  # build's, in verify within plan()
            except SolverError:  # too small an epsilon for the grid with this B
                continue
            out.append({"name": name, "guarantee": f"{eps:g}-LDP", "blocks": B, "predicted": _worst(other, users)})
    return out


def report_facts(plan: Mapping[str, Any]) -> ReportFacts:
    """What ``ldpplan report`` says about a Hadamard-response plan (:class:`~.._report.ReportFacts`).

    References
    ----------
    Acharya, Sun & Zhang, AISTATS 2019, Sec. 3 (the channel and its epsilon).
    """
    users = plan["spec"].get("users") is not None
    epsilon = Bound("epsilon of one report", ("guarantee", "epsilon"), "nats", plan["guarantee"]["sources"],
                    lower_field=("verification", "epsilon_effective"),
                    lower_source="attained: ln(P (2B-1)/(1-P)) of the plan's numbers, exactly (an output in C_x "
                                 "outside C_x')")
    return ReportFacts(
        notion_words="local differential privacy: any two values a user may hold are nearly indistinguishable "
                     "from the report",
        unit_of_privacy="one report of one user's value; several reports of a user compose (see the hazards)",
        bounds=(epsilon,), ldp_epsilon=epsilon, headline="l2_total" if users else "l2_total_times_n",
        users_field=("spec", "users") if users else None, per_user_exponent=0.0 if users else -1.0,
        per_user_unit=_UNIT, slack_field=("verification", "slack_nats"))


def report_spec(plan: Mapping[str, Any], *, budget: float = 1.0, users: int | None = None) -> dict[str, Any] | None:
    """The plan's spec with its budget times ``budget`` and ``users`` users (None: as planned), for the
    report's what-ifs and figures (re-planned through this family's ``plan``); None when the spec cannot say it."""
    spec = copy.deepcopy(dict(plan["spec"]))
    if users is not None and spec.get("users") is None:
        return None
    spec["epsilon"] = spec["epsilon"] * budget
    if users is not None:
        spec["users"] = int(users)
    return spec

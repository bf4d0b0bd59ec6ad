"""The claims of a Hadamard-response plan that follow from its numbers: guarantee, predictions, baselines.

The planner writes them and the verifier recomputes and compares them (never reads them).
"""
from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from ...solvers.hadamard import HadamardNumbers, randomized_response_l2
from .._plan_format import predicted

__all__ = ["SOURCES", "guarantee_of", "predicted_of", "baselines_of", "claimed_epsilon"]

#: ``guarantee.sources``.
SOURCES = ("Hadamard response (Acharya, Sun & Zhang, AISTATS 2019): Q(y|x) = 2p/K on C_x, 2(1-p)/K elsewhere; "
           "epsilon = ln(p/(1-p)) of the 2^-48 grid p, exactly")
_VAR = "Hadamard response: n Var f_hat(x) = (f p(1-p) + (1-f)/4)/(p-1/2)^2 (fixed users' data)"
_UNIT = "squared frequency (sum over the k items of E[(f_hat(x) - f(x))^2]; the same for every distribution)"


def claimed_epsilon(exact: Decimal) -> float:
    """The smallest float at or above the exact epsilon (the claim rounded toward the safe side)."""
    value = float(exact)
    while Decimal(value) < exact:
        value = math.nextafter(value, math.inf)
    return value


def guarantee_of(numbers: HadamardNumbers) -> dict[str, Any]:
    """``{"notion": "LDP", "epsilon": ln(p/(1-p)) rounded up, "sources"}``."""
    return {"notion": "LDP", "epsilon": claimed_epsilon(numbers.epsilon_exact), "sources": SOURCES}


def predicted_of(numbers: HadamardNumbers, users: int | None) -> dict[str, Any]:
    """Predicted error of the empirical estimate: the exact variance coefficients and total l2 error."""
    out = {
        "l2_total_times_n": predicted(numbers.total_l2(1), f"{_UNIT} x users", _VAR + ", summed (sum f = 1)"),
        "variance_at_zero_times_n": predicted(numbers.c0, "squared frequency x users", _VAR + " at f = 0"),
        "variance_slope_times_n": predicted(numbers.c1, "squared frequency x users per unit of f", _VAR),
        "report_bits": predicted(numbers.report_bits, "bits", "log2 K, K = 2^ceil(log2(k + 1))"),
    }
    if users is not None:
        out["l2_total"] = predicted(numbers.total_l2(users), _UNIT, _VAR + f", n = {users}")
    return out


def baselines_of(numbers: HadamardNumbers, users: int | None) -> list[dict[str, Any]]:
    """The k-ary randomized response at the same epsilon (the paper's comparison), same units."""
    k, eps = numbers.domain_size, numbers.epsilon
    rr: dict[str, Any] = {
        "l2_total_times_n": predicted(randomized_response_l2(eps, k), f"{_UNIT} x users",
                                      "k-ary RR at the spec's epsilon: sum_x (nu(1-nu) + f(mu(1-mu) - nu(1-nu)))/(mu-nu)^2"),
        "report_bits": predicted(math.ceil(math.log2(k)), "bits", "ceil(log2 k)"),
    }
    if users is not None:
        rr["l2_total"] = predicted(randomized_response_l2(eps, k, users), _UNIT, f"k-ary RR, n = {users}")
    return [{"name": "k-ary RR", "guarantee": f"{eps:g}-LDP", "predicted": rr}]

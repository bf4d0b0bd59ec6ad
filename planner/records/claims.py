"""The claims of a record plan that follow from its numbers: guarantee, predictions, baselines.

The planner writes them and the verifier recomputes and compares them (never reads them).
"""
from __future__ import annotations

import copy
from typing import Any, Mapping

from ...mechanisms.records import NOTION
from .._exact import float_up, log_exact
from .._plan_format import predicted
from .._report import Bound, ReportFacts
from ._solve import Numbers, uniform_baselines
from .spec import Resolved

__all__ = ["SOURCES", "guarantee_of", "predicted_of", "baselines_of", "choose", "report_facts", "report_spec"]

#: ``guarantee.sources`` per scheme
SOURCES = {
    "spl": "SPL (Arcolezi et al., CIKM 2021, Sec. 2.3): sequential composition of independent oracles; the record's "
           "worst ratio is the product of the attributes' (GRR P(k-1)/(1-P), OUE (1-q)/q of the 2^-48 grid numbers), "
           "decided exactly",
    "smp": "SMP (Arcolezi et al., CIKM 2021, Sec. 2.3; Wang et al., ICDE 2019): one attribute sampled independently "
           "of the data and reported with its index; the record's worst ratio is the largest attribute's, exactly",
    "rsfd": "RS+FD[GRR] (Arcolezi et al., CIKM 2021, Sec. 3.1) with uniform fake data: the worst ratio of the whole "
            "report is sum_j k_j P_j / sum_j k_j q_j (termwise maximum), decided exactly; the paper's amplified "
            "epsilon' is not used (two records differing in every attribute reach e^{epsilon'})",
}
_UNIT = "squared frequency x users (per item, at f = 0)"
_VAR = {"spl": "Wang et al. 2017 Eq. (2) at epsilon_j (GRR (e^e + k - 2)/(e^e - 1)^2, OUE 4 e^e/(e^e - 1)^2)",
        "smp": "V_j(epsilon)/pi_j (f = 0; the sampling term f(1-f)(1-pi)/pi vanishes)",
        "rsfd": "Arcolezi et al. 2021 Sec. 3.1: d^2 s (1 - s)/(p - q)^2, s = (q + (d-1)/k)/d (f = 0)"}


def guarantee_of(numbers: Numbers) -> dict[str, Any]:
    """``notion``, ``epsilon`` (the record's, exact, rounded up), ``attribute_epsilons`` (one changed), ``sources``."""
    return {"notion": NOTION, "epsilon": float_up(log_exact(numbers.ratio)),
            "attribute_epsilons": [float_up(log_exact(r)) for r in numbers.attribute_ratios],
            "sources": SOURCES[numbers.scheme]}


def _predicted(scheme: str, variances, weighted: float, users: int | None) -> dict[str, Any]:
    out = {"weighted_variance_times_n": predicted(weighted, _UNIT + ", weighted sum over the attributes",
                                                  f"sum_j w_j n Var(f_hat_j); {_VAR[scheme]}",
                                                  attributes=[float(v) for v in variances])}
    if users is not None:
        out["weighted_variance"] = predicted(weighted / users, "squared frequency (per item, at f = 0), weighted sum",
                                             f"the above at n = {users}")
    return out


def predicted_of(numbers: Numbers, users: int | None) -> dict[str, Any]:
    """Predicted weighted variance (per item at ``f = 0``; ``attributes``: each ``n Var``), with n when given."""
    return _predicted(numbers.scheme, numbers.variances, numbers.weighted_variance, users)


def choose(solved: Mapping[str, Numbers]) -> Numbers:
    """The scheme with the least weighted variance (ties: the first of spl, smp, rsfd)."""
    return min(solved.values(), key=lambda n: n.weighted_variance)


def baselines_of(res: Resolved, solved: Mapping[str, Numbers], chosen: Numbers) -> list[dict[str, Any]]:
    """The other schemes' optima (on their grid numbers) and the published uniform SPL / SMP, at the spec's epsilon."""
    eps, users = res.spec.epsilon, res.spec.users
    out: list[dict[str, Any]] = []
    for scheme, nums in solved.items():
        if scheme != chosen.scheme:
            out.append({"name": f"{scheme} (certified optimum)" if scheme != "rsfd" else "rsfd (RS+FD[GRR])",
                        "guarantee": f"{float_up(log_exact(nums.ratio)):.12g}-LDP",
                        "predicted": predicted_of(nums, users)})
    for name, alloc in uniform_baselines(res, eps).items():
        out.append({"name": name, "guarantee": f"{eps:g}-LDP",
                    "predicted": _predicted(name.split("-")[0], alloc.variances, alloc.weighted_variance, users)})
    return out


def report_facts(plan: Mapping[str, Any]) -> ReportFacts:
    """What ``ldpplan report`` says about a record plan (:class:`~.._report.ReportFacts`).

    References
    ----------
    Arcolezi, Couchot, Al Bouna, Xiao, CIKM 2021, Sec. 2.3 and 3.
    """
    users = plan["spec"].get("users") is not None
    epsilon = Bound("epsilon of one report of the whole record", ("guarantee", "epsilon"), "nats",
                    plan["guarantee"]["sources"], lower_field=("verification", "epsilon_effective"),
                    lower_source="attained: the record's worst ratio of the plan's numbers, exactly")
    return ReportFacts(
        notion_words="local differential privacy of the whole record: any two records a user may hold are nearly "
                     "indistinguishable from the report",
        unit_of_privacy="one report of one user's whole record; several reports of a user compose",
        bounds=(epsilon,), ldp_epsilon=epsilon,
        headline="weighted_variance" if users else "weighted_variance_times_n",
        users_field=("spec", "users") if users else None, per_user_exponent=0.0 if users else -1.0,
        per_user_unit=_UNIT, slack_field=("verification", "slack_nats"))


def report_spec(plan: Mapping[str, Any], *, budget: float = 1.0, users: int | None = None) -> dict[str, Any] | None:
    """The plan's spec with its budget times ``budget`` and ``users`` users (None: as planned)."""
    spec = copy.deepcopy(dict(plan["spec"]))
    if users is not None and spec.get("users") is None:
        return None
    spec["epsilon"] = spec["epsilon"] * budget
    if users is not None:
        spec["users"] = int(users)
    return spec

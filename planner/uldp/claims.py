"""The claims of a ULDP plan that follow from its spec: the guarantee block and the baselines.

Both the planner (to write them) and the verifier (to recompute and compare them) use these.
"""
from __future__ import annotations

import copy
from typing import Any, Mapping

from ._numbers import grid_rappor, grid_urap, grid_urr, predicted_losses
from .spec import Resolved
from .._report import Bound, ReportFacts

__all__ = ["guarantee_of", "baselines_of", "PROTECTED_URAP", "report_facts", "report_spec"]

#: ``guarantee.protected_outputs`` of a uRAP (and of a PUM with a common uRAP): eq. (7).
PROTECTED_URAP = "bit vectors whose non-sensitive bits are all 0 (eq. 7)"


def guarantee_of(res: Resolved) -> dict[str, Any]:
    """The ``guarantee`` block: ``notion`` ULDP, ``epsilon``, ``sensitive`` (X_S) and Def. 2's Y_P.

    uRR: ``protected_outputs`` lists Y_P = X_S (over Z = X + bots for a PUM); uRAP: eq. (7) in
    words. PUM adds ``intermediate_sensitive`` (Z_S), ``user_sensitive`` (Prop. 9) and
    ``user_indistinguishability_epsilon`` (Prop. 10).
    """
    eps = res.spec.epsilon
    bots = list(range(res.size, res.common_size))
    out: dict[str, Any] = {
        "notion": "ULDP", "epsilon": eps, "sensitive": list(res.sensitive),
        "protected_outputs": res.sensitive + bots if res.kind == "urr" else PROTECTED_URAP,
        "invertible_outputs": ("reports equal to a non-sensitive item: reveal it (Y_I = X_N)" if res.kind == "urr" else
                               "reports with a non-sensitive bit set: reveal that item"),
    }
    if res.spec.mechanism == "pum":
        out.update({"intermediate_sensitive": res.sensitive + bots,
                    "user_sensitive": "each user's own items mapped to a semantic tag (X_S^(i); Prop. 9)",
                    "user_indistinguishability_epsilon": eps})
    return out


def baselines_of(res: Resolved) -> list[dict[str, Any]]:
    """RR and RAPPOR (epsilon-LDP on the whole alphabet) and the other utility-optimized mechanism."""
    eps, users = res.spec.epsilon, res.spec.users
    ks, k = res.n_sensitive_common, res.common_size
    rr = grid_urr(eps, k)
    rap = grid_rappor(eps)
    out = [
        {"name": "RR", "guarantee": f"{eps:g}-LDP on all {k} symbols", "params": {"p": rr["c1"], "q": rr["c2"]},
         "predicted": predicted_losses("urr", {**rr, "epsilon": eps}, k, 0, users)},
        {"name": "RAPPOR", "guarantee": f"{eps:g}-LDP on all {k} symbols", "params": rap,
         "predicted": predicted_losses("urap", {"theta": rap["theta"], "d1": rap["psi"], "d2": 0.5, "epsilon": eps},
                                       k, 0, users)},
    ]
    other = "urap" if res.kind == "urr" else "urr"
    numbers = grid_urr(eps, ks) if other == "urr" else grid_urap(eps, ks, k - ks)
    out.append({"name": "uRR" if other == "urr" else "uRAP", "guarantee": f"ULDP, epsilon = {eps:g}",
                "params": numbers, "predicted": predicted_losses(other, {**numbers, "epsilon": eps}, ks, k - ks, users)})
    return out


def report_facts(plan: Mapping[str, Any]) -> ReportFacts:
    """What ``ldpplan report`` says about a ULDP plan (:class:`~.._report.ReportFacts`).

    References
    ----------
    Murakami & Kawamoto, USENIX Security 2019: Def. 2 (ULDP), Props. 9-10 (PUM), eqs. (37), (46), (48).
    """
    bounds = [Bound("epsilon of one report, between sensitive values", ("guarantee", "epsilon"), "nats",
                    "(X_S, Y_P, epsilon)-ULDP, Def. 2 (Murakami & Kawamoto 2019)",
                    lower_field=("verification", "epsilon_effective"),
                    lower_source="attained: ln of the worst ratio of the plan's numbers over Y_P")]
    if "user_indistinguishability_epsilon" in plan["guarantee"]:
        bounds.append(Bound("epsilon between two users' personalized sensitive sets", ("guarantee",
                            "user_indistinguishability_epsilon"), "nats", "PUM, Prop. 10"))
    return ReportFacts(
        notion_words="utility-optimized LDP (ULDP): sensitive values are protected as under LDP; a report may reveal "
                     "a non-sensitive value exactly (" + str(plan["guarantee"]["invertible_outputs"]) + ")",
        unit_of_privacy="one report of one user's value, when the value is sensitive; non-sensitive values are not "
                        "protected; several reports of a user compose (see the hazards)",
        bounds=tuple(bounds), ldp_epsilon=None, headline="l2_worst_times_n", per_user_exponent=-1.0,
        per_user_unit="squared l2 (frequency^2), worst case over distributions",
        slack_field=("verification", "slack_nats"))


def report_spec(plan: Mapping[str, Any], *, budget: float = 1.0, users: int | None = None) -> dict[str, Any] | None:
    """The plan's spec with its budget times ``budget`` and ``users`` users (None: as planned), for the
    report's what-ifs and figures (re-planned through this family's ``plan``); None when the spec cannot say it."""
    if users is not None:
        return None
    spec = copy.deepcopy(dict(plan["spec"]))
    spec["epsilon"] = spec["epsilon"] * budget
    return spec

"""What a PIE plan claims and predicts, derived from its numbers: used by :mod:`.plan` to write the
claims and by :mod:`.verify` to recompute them.

The guarantee is computed exactly from the keep probability (``exact_guarantee``, 60 digits) and
rounded to the safe float (``claimed_numbers``; both from the private ``_exact``); the predictions
are the l2 losses of Prop. 4.6 / 4.7 (Murakami & Takahashi, TDP 2021) and the report size.
"""
from __future__ import annotations

import copy
import math
from typing import Any, Mapping

from ...mechanisms.pie import HASH_PRIME, HASH_PRIME_LARGE, collision_probability, hash_prime

from .._plan_format import predicted
from ._exact import claimed_numbers, exact_guarantee
from .._report import Bound, ReportFacts
from .spec import ParsedSpec
from ...solvers.pie import l2_loss_glh, l2_loss_glh_limit, l2_loss_rr, total_l2_loss_glh, total_l2_loss_rr, solve_glh

__all__ = ["shuffle_randomizer", "krr_randomizer", "SOURCES", "exact_guarantee", "claimed_numbers", "report_bits", "predicted_of", "baseline_of",
           "unshuffled_baseline", "report_facts", "report_spec"]

SOURCES = "Def. 3.1 (bits), Thm. 4.2/4.4 x t (Thm. 4.3/4.5), Prop. 4.1, Cor. 3.9"
_UNIT_L2 = "squared frequency (sum over X of E[(p(x) - p_hat(x))^2], any p: eq. 22/23 are affine in p(x))"


def report_bits(mechanism: str, domain_size: int, g: int | None) -> int:
    """Bits of one report: ``ceil(log2 |X|)`` (RR) or the hash seed (2 x 31 bits) plus ``ceil(log2 g)`` (GLH)."""
    if mechanism == "rr":
        return int(math.ceil(math.log2(domain_size)))
    assert g is not None  # GLH plans carry g
    return 2 * 31 + int(math.ceil(math.log2(g)))


def predicted_of(mechanism: str, epsilon: float, k: int, n: int, g: int | None, theta: float) -> dict[str, Any]:
    """``predicted``: the l2 losses of Prop. 4.6 (RR) / 4.7 (GLH) at the realised epsilon, report bits, and
    for GLH the g -> infinity limit of Thm. 4.8 (``k = |X|``, ``n`` users, ``theta`` as in the guarantee)."""
    if mechanism == "rr":
        src = "Prop. 4.6 (eq. 22) at the realised epsilon"
        zero, one, total = l2_loss_rr(epsilon, k, n, 0.0), l2_loss_rr(epsilon, k, n, 1.0), total_l2_loss_rr(epsilon, k, n)
    else:
        src = "Prop. 4.7 (eq. 23) at the realised epsilon"
        assert g is not None  # GLH plans carry g
        zero, one = l2_loss_glh(epsilon, g, n, 0.0), l2_loss_glh(epsilon, g, n, 1.0)
        total = total_l2_loss_glh(epsilon, g, n, k)
    out = {
        "l2_loss_total": predicted(total, _UNIT_L2, src),
        "l2_loss_per_item_at_zero": predicted(zero, "squared frequency", src + ", p(x) = 0"),
        "l2_loss_per_unit_frequency": predicted(one - zero, "squared frequency per unit of p(x)", src),
        "report_bits": predicted(report_bits(mechanism, k, g), "bits", "Sec. 4.4 (communication cost)"),
    }
    if mechanism == "glh":
        out["l2_loss_total_limit_g_infinite"] = predicted(l2_loss_glh_limit(theta, n, 1.0), _UNIT_L2,
                                                          "Thm. 4.8 (eq. 24), g -> infinity at fixed theta")
    return out


def baseline_of(name: str, res, spec: ParsedSpec, chosen: str) -> dict[str, Any]:
    """One ``baselines`` entry: a solved candidate (RR or GLH, ``res`` a ``SolveResult``) at its design epsilon."""
    p = res.parameters
    g = int(p["g"]) if "g" in p else None
    src = "Prop. 4.6 (eq. 22)" if name == "rr" else "Prop. 4.7 (eq. 23)"
    return {"name": name, "mechanism": name, "chosen": name == chosen, "epsilon": float(p["epsilon"]), "g": g,
            "alpha_bits": float(res.extra["alpha_bits"]), "epsilon_binding": str(res.extra["binding"]),
            "predicted": {"l2_loss_total": predicted(res.objective, _UNIT_L2, src + " at the design epsilon"),
                          "report_bits": predicted(report_bits(name, spec.domain_size, g), "bits", "Sec. 4.4")}}


def unshuffled_baseline(mechanism: str, spec, shuffled_loss: float) -> dict[str, Any]:
    """The best local plan of the family spending ``target.central_epsilon`` locally (no shuffler): its loss and the gain.

    Both of the family's mechanisms are solved at ``epsilon = target.central_epsilon`` (k-RR, and
    GLH at its best ``g``); the smaller loss is the baseline, whichever mechanism the shuffled plan
    uses (issue 27: the gain is against the best local plan, not against k-RR alone).
    """
    central, k, n = spec.target.central_epsilon, spec.domain_size, spec.n
    rr_loss = total_l2_loss_rr(central, k, n)
    glh_loss = solve_glh(n=n, domain_size=k, g_max=spec.model.g_max, epsilon=central,
                         releases=spec.model.releases, epsilon_max=spec.model.epsilon_max).objective
    if rr_loss <= glh_loss:
        loss, src = rr_loss, "best local plan: rr, Prop. 4.6 (eq. 22) at epsilon = target.central_epsilon, no shuffler"
    else:
        loss, src = glh_loss, ("best local plan: glh, Prop. 4.7 (eq. 23), best g at epsilon = target.central_epsilon, "
                               "no shuffler")
    return {"l2_loss_total_without_shuffler": predicted(loss, _UNIT_L2, src),
            "shuffler_gain": predicted(loss / shuffled_loss, "ratio",
                                       "l2_loss_total_without_shuffler (the best local plan) / l2_loss_total at the "
                                       "same central epsilon")}


def krr_randomizer(domain_size: int) -> dict[str, Any]:
    """The shuffle bound's description of k-ary RR on ``domain_size`` values (binary RR when it is 2).

    References
    ----------
    See :mod:`ldpplan.solvers.shuffle` (the exact binary-RR curve; the blanket bound of k-RR).
    """
    return {"mechanism": "rr", "domain_size": None} if domain_size == 2 else {"mechanism": "krr",
                                                                               "domain_size": int(domain_size)}


def shuffle_randomizer(plan: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword arguments of the shuffle bound for a PIE plan (the family hook behind ``guarantee.shuffled``).

    k-RR gets its randomizer-specific bound (:func:`krr_randomizer`); GLH the generic upper bound
    (FMT21) with the support-count attack as its lower bound, which needs the hash range ``g`` and
    the runtime hash family's exact collision probability. A plan without the numbers gets the
    generic bound (``{}``); its verification fails elsewhere.

    References
    ----------
    See :mod:`ldpplan.solvers.shuffle` and :func:`ldpplan.solvers._shuffle_binary.support_count_pair`.
    """
    size = (plan.get("domain") or {}).get("size")
    if plan.get("mechanism") == "glh":
        g = (plan.get("params") or {}).get("g")
        if isinstance(g, bool) or not isinstance(g, int) or g < 2:
            return {}
        prime = hash_prime(size, g) if isinstance(size, int) and 2 <= size <= HASH_PRIME_LARGE else HASH_PRIME
        return {"mechanism": "glh", "hash_range": g, "collision": collision_probability(g, prime)}
    if plan.get("mechanism") == "rr" and isinstance(size, int) and not isinstance(size, bool) and size >= 2:
        return krr_randomizer(size)
    return {}


def report_facts(plan: Mapping[str, Any]) -> ReportFacts:
    """What ``ldpplan report`` says about a PIE plan (:class:`~.._report.ReportFacts`).

    References
    ----------
    Murakami & Takahashi, TDP 2021: Def. 3.1 (PIE), Prop. 4.1, Thm. 4.2-4.5, Cor. 3.9, Prop. 4.6-4.7.
    """
    epsilon = Bound("epsilon of one report", ("guarantee", "epsilon"), "nats", "k-ary RR eq. (2) / GLH eq. (3)",
                    lower_field=("verification", "epsilon_realized"),
                    lower_source="attained: the exact ratio of the plan's keep probability")
    return ReportFacts(
        notion_words="local differential privacy plus PIE privacy: an adversary who sees a user's reports "
                     "re-identifies the user no better than the stated alpha (bits) and errs at least with the "
                     "stated Bayes error",
        unit_of_privacy="the reports of one user (releases x one report) against re-identification among n users",
        bounds=(epsilon,
                Bound("PIE alpha (re-identification, the smaller of two bounds)", ("guarantee", "alpha_bits"),
                      "bits", SOURCES),
                Bound("PIE alpha from epsilon alone (looser)", ("guarantee", "alpha_ldp_bits"), "bits",
                      "Prop. 4.1: alpha <= epsilon log2(e) x releases"),
                Bound("adversary's Bayes error of re-identifying a user", ("guarantee", "bayes_error_lower_bound"),
                      "probability", "Cor. 3.9", direction="at least")),
        ldp_epsilon=epsilon, headline="l2_loss_total", users_field=("guarantee", "n"),
        slack_field=("verification", "slack_epsilon_nats"))


def report_spec(plan: Mapping[str, Any], *, budget: float = 1.0, users: int | None = None) -> dict[str, Any] | None:
    """The plan's spec with its budget times ``budget`` and ``users`` users (None: as planned), for the
    report's what-ifs and figures (re-planned through this family's ``plan``); None when the spec cannot say it."""
    spec = copy.deepcopy(dict(plan["spec"]))
    target = dict(spec["target"])
    if budget != 1.0:
        if target.get("bayes_error") is not None:  # the budget is alpha: the plan's, scaled
            del target["bayes_error"]
            target["alpha_bits"] = plan["guarantee"]["alpha_bits"] * budget
        for key in ("alpha_bits", "epsilon", "central_epsilon"):
            if target.get(key) is not None and key in spec["target"]:
                target[key] = target[key] * budget
    spec["target"] = target
    if users is not None:
        spec.pop("n", None)
        spec["users"] = int(users)
    return spec

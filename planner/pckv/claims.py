"""What a PCKV plan claims and predicts, derived from its numbers: used by :mod:`.plan` to write the plan
and by :mod:`.verify` to recompute it.

The guarantee is the composed budget of Theorem 2 (PCKV-UE) / Theorem 3 (PCKV-GRR); the predictions
are Theorem 4's MSEs at the key model (eq. (9)-(12)), their approximations (eq. (16)-(18)) and,
when the key distribution is open, the worst case over keys; the auto-chooser ``choose`` picks the
mechanism with the smaller objective. Source: Gu, Li, Cheng, Xiong, Cao, USENIX Security 2020.

Which estimator a mean figure predicts is named in its ``estimator`` field. With the key distribution
open, the headline ``mse_mean`` is the worst case of the runtime's default "corrected" mean estimator
(Algorithm 4) over every key the spec allows (frequency from the spec's ``min_key_frequency``, else
``1/n``, to 1; ``|m|`` up to the means' bound), integrated over the counts' normal model
(:func:`~ldpplan.solvers.pckv.worst_case_corrected_mean_mse`); Theorem 4 is a first-order figure of
eq. (8)'s plain estimator, which at low epsilon matches neither estimator (issue 27 point 8). Theorem 4's
worst case over ``f >= min_key_frequency`` (the headline before) is kept as ``mse_mean_theorem4``, and
Theorem 4 stays the planning objective. With the frequencies known (data, priors) ``mse_mean`` is
Theorem 4's average at them, as before (``mse_mean_theorem4`` the same figure).
"""
from __future__ import annotations

import copy
import math
from typing import Any, Mapping

import numpy as np

from .._plan_format import predicted
from .._report import Bound, ReportFacts
from ._allocation import GridAllocation
from ...solvers.pckv import (approximate_mse, theorem4_mse, truncation_factor, worst_case_mean_mse,
                             worst_case_corrected_mean_mse)

__all__ = ["COMPOSITION", "guarantee_of", "predicted_of", "baseline_of", "choose", "report_facts", "report_spec"]

COMPOSITION = {"pckv-ue": "Theorem 2, eq. (3)", "pckv-grr": "Theorem 3, eq. (6)"}
_MSE_F_UNIT = "frequency^2 (frequency = fraction of users) per key, averaged over the objective keys"
_MSE_M_UNIT = "value^2 (values in [-1, 1]) per key, averaged over the objective keys"
_MSE_M_WORST_UNIT = "value^2 (values in [-1, 1]) per key, a bound for every key it covers (see at)"
#: ``estimator`` of each mean figure: which estimator it predicts.
ESTIMATOR_THEOREM4 = "eq. (8), first order (Theorem 4's delta method; not the runtime's default)"
ESTIMATOR_CORRECTED = ("corrected mean, Algorithm 4 (the ldpplan.mechanisms runtime's default, "
                       "estimate method \"corrected\")")


def guarantee_of(mechanism: str, budgets: Mapping[str, float]) -> dict[str, Any]:
    """``guarantee``: epsilon-LDP with the composed budget of the grid numbers (``budgets`` from the exact
    ratios, rounded up) and its two parts, by Theorem 2 (PCKV-UE) or Theorem 3 (PCKV-GRR)."""
    return {"notion": "LDP", "epsilon": budgets["epsilon"], "epsilon1": budgets["epsilon1"],
            "epsilon2": budgets["epsilon2"], "units": "nats", "composition": COMPOSITION[mechanism]}


def predicted_of(q: Mapping[str, float], L: int, model, weights, *, corrected: bool = True) -> dict[str, dict[str, Any]]:
    """``predicted`` entries of a/b/p at ``L`` under ``model`` (Theorem 4 and eq. (17)-(18)).

    With the key distribution open and ``corrected`` (the plan's own figures), ``mse_mean`` is the
    corrected estimator's worst case over the keys the spec allows (:func:`_worst_corrected_mean`);
    without ``corrected`` (baselines, the objective check) it is Theorem 4's worst case, the figure
    ``mse_mean_theorem4`` always holds.

    References
    ----------
    PCKV, Theorem 4 eq. (9)-(12); approximations eq. (16)-(18); Algorithm 4 (corrected estimator).
    """
    keys = model.objective_keys
    fs = model.sampled(L)
    a, b, p = q["a"], q["b"], q["p"]
    mf, mm = theorem4_mse(a, b, p, L, model.n, model.frequencies[keys], model.means[keys], fs[keys])
    af, am = approximate_mse(a, b, p, L, model.n, model.frequencies[keys], model.means[keys])
    extra = {"users": int(model.n), "keys_averaged": int(keys.size)}
    at = _at(model)
    out = {
        "mse_frequency": predicted(np.mean(mf), _MSE_F_UNIT, "PCKV Theorem 4, eq. (9) at f_s(L), plus the truncation "
                                   "bias (f_s(L) - f)^2 of eq. (7)", **extra, **at),
        "mse_mean": predicted(np.mean(mm), _MSE_M_UNIT, "PCKV Theorem 4, eq. (10)^2 + (11)",
                              estimator=ESTIMATOR_THEOREM4, **extra, **at),
    }
    objective_unit = "w_f * mse_frequency + w_m * mse_mean"
    if model.min_key_frequency is not None:  # the key distribution is open: the headline is the worst case
        out["mse_mean_uniform"] = out["mse_mean"]
        out["mse_mean"] = _worst_mean(q, L, model)
        objective_unit = "w_f * mse_frequency + w_m * mse_mean_uniform"
    out["mse_mean_theorem4"] = out["mse_mean"]
    if model.min_key_frequency is not None and corrected:
        out["mse_mean"] = _worst_corrected_mean(q, L, model)
    out.update({
        "approx_mse_frequency": predicted(np.mean(af), _MSE_F_UNIT, "PCKV eq. (17)", **extra, **at),
        "approx_mse_mean": predicted(np.mean(am), _MSE_M_UNIT, "PCKV eq. (18)", **extra, **at),
        "objective": predicted(weights[0] * np.mean(mf) + weights[1] * np.mean(mm),
                               objective_unit, "PCKV Theorem 4 (the planner's objective)",
                               **extra, **at),
    })
    out["g"] = predicted(b / (a * a * (2 * p - 1) ** 2), "1 (dimensionless)",
                         "PCKV eq. (16): g = b / (a^2 (2p-1)^2), the value-noise factor of eq. (18)")
    out["h"] = predicted((1 - b) * b / (a - b) ** 2, "1 (dimensionless)",
                         "PCKV eq. (16): h = (1-b) b / (a-b)^2, the key-noise factor of eq. (17)-(18)")
    if model.set_sizes is not None:
        w = model.set_size_weights / model.set_size_weights.sum()
        out["users_truncated_fraction"] = predicted(float(w[model.set_sizes > L].sum()), "fraction of users",
                                                    "set sizes: users holding more than L pairs (Algorithm 1 "
                                                    "samples each with probability 1/|S|)")
    return out


def _at(model) -> dict[str, str]:
    """``case`` and ``at`` of the figures computed at the key model's frequencies and means."""
    if model.basis == "data":
        return {"case": "data", "at": "the data's key frequencies, value means and set sizes"}
    if model.basis == "assumption":
        means = "|m_k| = 1" if model.max_abs_mean == 1.0 else "the spec's prior_means"
        return {"case": "assumption", "at": f"pairs spread uniformly over the keys (f_k = E[set size]/d), {means}"}
    return {"case": "priors", "at": "the spec's prior_frequencies and prior_means"}


def _worst_mean(q: Mapping[str, float], L: int, model) -> dict[str, Any]:
    """The headline ``mse_mean`` when the key distribution is open: the worst case over keys and means."""
    rho = 1.0 if model.set_sizes is None else truncation_factor(model.set_sizes, model.set_size_weights, L)
    floor = model.min_key_frequency
    value = worst_case_mean_mse(q["a"], q["b"], q["p"], L, model.n, floor, model.max_abs_mean, rho)
    means = "any means in [-1, 1]" if model.max_abs_mean == 1.0 else f"|m| <= {model.max_abs_mean:g}"
    return predicted(value, _MSE_M_WORST_UNIT, "PCKV Theorem 4, eq. (10)^2 + (11), largest over f >= min_key_frequency "
                     f"and {means}", estimator=ESTIMATOR_THEOREM4, users=int(model.n), case="worst",
                     at=f"every key with frequency >= {floor:.6g} (min_key_frequency), {means}; a rarer key's error "
                        "grows like (min_key_frequency / f)^2", min_key_frequency=floor)


def _worst_corrected_mean(q: Mapping[str, float], L: int, model) -> dict[str, Any]:
    """The headline ``mse_mean`` when the key distribution is open: the corrected estimator's worst case over
    every key the spec allows (:func:`~ldpplan.solvers.pckv.worst_case_corrected_mean_mse`)."""
    # the least share of a key's holders that sample it: L / (largest set size), not the average rho, so that
    # the sampled frequency f_s >= rho_low f of every key (held by heavy users or not) is covered
    rho = 1.0 if model.set_sizes is None else min(float(L) / max(float(np.max(model.set_sizes[model.set_size_weights > 0])), float(L)),
                                                  truncation_factor(model.set_sizes, model.set_size_weights, L))
    floor = model.allowed_min_frequency
    worst = worst_case_corrected_mean_mse(q["a"], q["b"], q["p"], L, model.n, floor, model.max_abs_mean, rho)
    means = "any means in [-1, 1]" if model.max_abs_mean == 1.0 else f"|m| <= {model.max_abs_mean:g}"
    return predicted(worst.mse, _MSE_M_WORST_UNIT,
                     "corrected mean, Algorithm 4 / ldpplan.mechanisms default: MSE over the counts' normal model, "
                     f"largest over f >= min_key_frequency and {means}", estimator=ESTIMATOR_CORRECTED, users=int(model.n),
                     case="worst", at=f"every key with frequency >= {floor:.6g} (the smallest the spec allows: "
                     f"its min_key_frequency, else 1/n), {means}", min_key_frequency=floor,
                     worst_key={"frequency": worst.frequency, "abs_mean": worst.mean})


def _finite(x: float) -> float:
    return x if math.isfinite(x) else math.inf


def choose(objectives: Mapping[str, float]) -> str:
    """The mechanism with the smaller objective (NaN counts as infinite; a tie goes to PCKV-UE)."""
    ue, grr = _finite(objectives.get("pckv-ue", math.inf)), _finite(objectives.get("pckv-grr", math.inf))
    return "pckv-ue" if ue <= grr else "pckv-grr"


def baseline_of(mech: str, method: str, L: int, alloc: GridAllocation, model, weights, role: str) -> dict[str, Any]:
    """One ``baselines`` entry: ``mech`` with ``method``'s allocation on the grid at ``L``, its objective and
    predicted errors (Theorem 4), in the plan's ``role`` (plan, candidate or comparison)."""
    q = alloc.params
    pred = predicted_of(q, L, model, weights, corrected=False)  # Theorem 4's figures (their meaning before)
    return {"name": f"{mech} / {method}", "mechanism": mech, "allocation": method, "role": role,
            "padding_length": L, "a": q["a"], "b": q["b"], "p": q["p"], **alloc.budgets,
            "objective": pred["objective"]["value"],
            "predicted": {k: pred[k] for k in ("mse_frequency", "mse_mean")}}


def report_facts(plan: Mapping[str, Any]) -> ReportFacts:
    """What ``ldpplan report`` says about a PCKV plan (:class:`~.._report.ReportFacts`).

    References
    ----------
    Gu, Li, Cheng, Xiong, Cao, USENIX Security 2020: Theorems 2-3 (composed epsilon), Theorem 4 (MSE).
    """
    guarantee = plan["guarantee"]
    epsilon = Bound("epsilon of one report (key and value together)", ("guarantee", "epsilon"), "nats",
                    f"PCKV {guarantee['composition']}: epsilon1 (key) and epsilon2 (value) composed",
                    lower_field=("verification", "composed_epsilon"),
                    lower_source="attained: the exact composed ratio of the plan's a, b, p (App. A/B)")
    return ReportFacts(
        notion_words="local differential privacy of a key-value pair: any two key-value sets a user may hold are "
                     "nearly indistinguishable from the report",
        unit_of_privacy="one report of one user's set of key-value pairs (padded and sampled to L pairs); several "
                        "reports of a user compose (see the hazards)",
        bounds=(epsilon, Bound("epsilon1 (the key part)", ("guarantee", "epsilon1"), "nats", guarantee["composition"]),
                Bound("epsilon2 (the value part)", ("guarantee", "epsilon2"), "nats", guarantee["composition"])),
        ldp_epsilon=epsilon, headline="mse_frequency", users_field=("predicted", "mse_frequency", "users"),
        slack_field=("verification", "slack"))


def report_spec(plan: Mapping[str, Any], *, budget: float = 1.0, users: int | None = None) -> dict[str, Any] | None:
    """The plan's spec with its budget times ``budget`` and ``users`` users (None: as planned), for the
    report's what-ifs and figures (re-planned through this family's ``plan``); None when the spec cannot say it."""
    spec = copy.deepcopy(dict(plan["spec"]))
    if users is not None:
        if spec.get("data") is not None:  # n is the data's
            return None
        spec["users"] = int(users)
    spec["epsilon"] = min(spec["epsilon"] * budget, 20.0)
    return spec

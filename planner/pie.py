"""PIE family: re-identification targets -> k-ary RR / GLH plans, verification, simulation.

Source: Murakami & Takahashi, "Toward Evaluating Re-identification Risks in the Local
Privacy Model" (TDP 2021): PIE privacy (Def. 3.1, bits), Bayes error (Cor. 3.9),
alpha of RR/GLH (Prop. 4.1, Thm. 4.2-4.5), l2 loss (Prop. 4.6-4.7), optimal g (Thm. 4.8).

Spec (TOML/JSON)::

    mechanism = "rr"          # "rr" (eq. 2) | "glh" (eq. 3) | "pie" (the smaller total l2 loss)
    domain_size = 10500393    # |X|  (or domain = ["label", ...])
    n = 1370637               # number of users
    releases = 1              # t releases per user (Thm. 4.3 / 4.5), optional
    g_max = 2147483647        # GLH hash range bound (e.g. 2**report_bits), optional
    epsilon_max = 30.0        # cap when the target allows any epsilon, optional
    [target]                  # exactly one of bayes_error / alpha_bits / epsilon
    bayes_error = 0.5         # lower bound on the adversary's Bayes error (Cor. 3.9)
    # max_prior = 1e-4        # non-uniform prior: max_u Pr(U = u) (default 1/n, uniform)

Safe-side rounding: the PIE budget is shrunk by a relative 1e-11 (a Bayes-error target
is raised by 2e-12) before the closed-form inversion; the design epsilon is shrunk by a
relative 1e-12 before the keep probability ``mu`` is rounded **down** to the 2^-48
grid; the stated alpha is the larger of the design and realised alpha inflated by a
relative 1e-12, the stated Bayes bound is lowered by 1e-12. The verifier recomputes
everything from ``mu`` with exact rationals (``theta = (k mu - 1)/(k - 1)``) and checks
with a relative float margin of 1e-13.
"""
from __future__ import annotations

import csv
import itertools
import math
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal, Mapping, Optional

import numpy as np

from ._common import attach_verification, plan_header, spec_from_pydantic, validate_plan_schema
from ._report import SimulateOptions, SimulationReport, Table, Verification
from .errors import InputDataError, PlanFormatError, SpecError

__all__ = ["MECHANISMS", "EXAMPLES", "plan_from_spec", "verify_plan", "summarize", "simulate",
           "perturb_file", "estimate_file", "parse_pie_spec", "GSS_FIELDS", "gss_labels"]

MECHANISMS = ("pie", "rr", "glh")

#: hash family prime of mechanisms.pie (g and |X| must not exceed it)
HASH_PRIME = 2**31 - 1
#: relative shrink of the PIE budget / epsilon target before solving
BUDGET_SHRINK = 1e-11
#: relative shrink of the design epsilon before rounding mu
EPSILON_SHRINK = 1e-12
#: relative inflation of stated alpha; absolute decrease of stated Bayes bound
CLAIM_MARGIN = 1e-12
#: float margin of the verifier (relative)
VERIFY_MARGIN = 1e-13

#: GSS vocabulary joint category X = ageGroup x educGroup x gender x nativeBorn
GSS_FIELDS = ("ageGroup", "educGroup", "gender", "nativeBorn")
_GSS_LEVELS = (
    ("18-29", "30-39", "40-49", "50-59", "60+"),
    ("12 yrs", "13-15 yrs", "16 yrs", "<12 yrs", ">16 yrs"),
    ("female", "male"),
    ("no", "yes"),
)


def gss_labels() -> list[str]:
    """The 100 joint categories of the GSS vocabulary data, in the order of ``GSSVocab.joint_categories``."""
    return ["|".join(c) for c in itertools.product(*_GSS_LEVELS)]


EXAMPLES: dict[str, dict] = {
    "pie-rr": {
        "mechanism": "rr", "domain_size": 10500393, "n": 1370637, "target": {"bayes_error": 0.5},
        "description": "PIE Sec. 5.3 location data (|X| = 10500393, n = 1370637): k-ary RR with Bayes error >= 0.5",
    },
    "pie-glh": {
        "mechanism": "glh", "domain_size": 10500393, "n": 1370637, "target": {"bayes_error": 0.5},
        "g_max": 100000000,
        "description": "PIE Sec. 5.3 location data: GLH with g <= 10^8 (Fig. 12), Bayes error >= 0.5",
    },
    "pie-gss": {
        "mechanism": "pie", "domain": gss_labels(), "n": 28629, "target": {"bayes_error": 0.8},
        "g_max": 65536,
        "description": "GSS vocabulary (28,629 respondents), X = ageGroup x educGroup x gender x nativeBorn "
                       "(100 categories): RR or GLH (g <= 2^16), Bayes error >= 0.8",
    },
}


# ============================================================================ spec
def _spec_models():
    import pydantic
    from pydantic import BaseModel, ConfigDict, Field

    class Target(BaseModel):
        model_config = ConfigDict(extra="forbid")
        bayes_error: Optional[float] = Field(None, gt=0, lt=1, description="Cor. 3.9 lower bound on the Bayes error")
        alpha_bits: Optional[float] = Field(None, gt=0, allow_inf_nan=False, description="PIE alpha, bits (Def. 3.1)")
        epsilon: Optional[float] = Field(None, gt=0, allow_inf_nan=False, description="plain LDP epsilon, nats")
        max_prior: Optional[float] = Field(None, gt=0, le=1, description="max_u Pr(U=u); default 1/n (uniform)")

    class Spec(BaseModel):
        model_config = ConfigDict(extra="forbid")
        mechanism: Literal["pie", "rr", "glh"]
        domain_size: Optional[int] = Field(None, ge=2)
        domain: Optional[list[str]] = Field(None, min_length=2)
        n: int = Field(ge=2, description="number of users")
        target: Target
        releases: int = Field(1, ge=1, description="releases per user t (Thm. 4.3 / 4.5)")
        g_max: int = Field(HASH_PRIME, ge=2, le=HASH_PRIME, description="largest GLH hash range")
        epsilon_max: float = Field(30.0, gt=0, le=60, allow_inf_nan=False, description="epsilon cap, nats")
        description: Optional[str] = None
        name: Optional[str] = None

    return Spec, pydantic


def parse_pie_spec(raw: Mapping[str, Any]):
    """Validate a PIE spec (pydantic + cross-field rules).

    Returns
    -------
    spec model with ``domain_size`` always set.

    Raises
    ------
    SpecError
        Names the field, the rule and the value.
    """
    Spec, _ = _spec_models()
    spec = spec_from_pydantic(Spec, raw)
    if spec.domain is not None:
        if len(set(spec.domain)) != len(spec.domain):
            raise SpecError("domain", "labels must be distinct", spec.domain)
        if spec.domain_size is not None and spec.domain_size != len(spec.domain):
            raise SpecError("domain_size", f"must equal the number of labels in domain ({len(spec.domain)})",
                            spec.domain_size)
        spec = spec.model_copy(update={"domain_size": len(spec.domain)})
    elif spec.domain_size is None:
        raise SpecError("domain_size", "give domain_size (|X|) or domain (a list of labels)", None)
    t = spec.target
    given = [k for k in ("bayes_error", "alpha_bits", "epsilon") if getattr(t, k) is not None]
    if len(given) != 1:
        raise SpecError("target", "must set exactly one of bayes_error, alpha_bits, epsilon", given)
    if t.max_prior is not None and t.max_prior < 1.0 / spec.n:
        raise SpecError("target.max_prior", f"must be >= 1/n = {1.0 / spec.n:.6g} (a prior cannot be flatter than uniform)",
                        t.max_prior)
    if spec.mechanism in ("glh", "pie") and spec.domain_size > HASH_PRIME:
        raise SpecError("domain_size", f"must be <= {HASH_PRIME} for the GLH hash family", spec.domain_size)
    return spec


def _prior_bits(spec_or_guarantee_n: int, max_prior: float | None) -> float:
    if max_prior is not None:
        return -math.log2(float(max_prior))
    return math.log2(int(spec_or_guarantee_n))


# ============================================================================ planning
def _target_alpha(spec) -> tuple[float | None, float | None]:
    """(alpha budget in bits, epsilon target) after the safe-side shrink."""
    from ldpplan.solvers.pie import alpha_for_bayes_error

    t = spec.target
    if t.epsilon is not None:
        return None, float(t.epsilon) * (1.0 - BUDGET_SHRINK)
    if t.alpha_bits is not None:
        alpha = float(t.alpha_bits)
    else:
        alpha = alpha_for_bayes_error(min(t.bayes_error + 2e-12, 1 - 1e-12), spec.n, t.max_prior)
        if alpha <= 0:
            raise SpecError("target.bayes_error",
                            f"cannot be certified by Cor. 3.9 with n = {spec.n}"
                            + (f" and max_prior = {t.max_prior}" if t.max_prior else "")
                            + f": needs (1 - bayes_error) * log2(1/max_prior) > 1 bit (largest certifiable is "
                            f"{1 - 1 / _prior_bits(spec.n, t.max_prior):.6g})", t.bayes_error)
    return alpha * (1.0 - BUDGET_SHRINK), None


def _solve(spec, mechanism: str):
    from ldpplan.solvers.pie import solve_glh, solve_rr

    alpha, eps = _target_alpha(spec)
    if mechanism == "rr":
        return solve_rr(n=spec.n, domain_size=spec.domain_size, alpha_bits=alpha, epsilon=eps,
                        releases=spec.releases, epsilon_max=spec.epsilon_max)
    return solve_glh(n=spec.n, domain_size=spec.domain_size, g_max=spec.g_max, alpha_bits=alpha, epsilon=eps,
                     releases=spec.releases, epsilon_max=spec.epsilon_max)


def _report_bits(mechanism: str, k: int, g: int | None) -> int:
    if mechanism == "rr":
        return int(math.ceil(math.log2(k)))
    return 2 * 31 + int(math.ceil(math.log2(g)))


def _predictions(mechanism: str, epsilon: float, k: int, n: int, g: int | None, theta: float) -> dict[str, Any]:
    from ldpplan.solvers.pie import l2_loss_glh, l2_loss_glh_limit, l2_loss_rr, total_l2_loss_glh, total_l2_loss_rr

    if mechanism == "rr":
        zero, one = l2_loss_rr(epsilon, k, n, 0.0), l2_loss_rr(epsilon, k, n, 1.0)
        out = {"source": "Prop. 4.6 (eq. 22)", "l2_loss_total": total_l2_loss_rr(epsilon, k, n)}
    else:
        zero, one = l2_loss_glh(epsilon, g, n, 0.0), l2_loss_glh(epsilon, g, n, 1.0)
        out = {"source": "Prop. 4.7 (eq. 23); limit g -> inf: Thm. 4.8 (eq. 24)",
               "l2_loss_total": total_l2_loss_glh(epsilon, g, n, k),
               "l2_loss_total_limit_g_infinite": l2_loss_glh_limit(theta, n, 1.0)}
    out.update({
        "unit": "squared frequency; total = sum over x of E[(p(x) - p_hat(x))^2] (any p, since eq. 22/23 are affine in p(x))",
        "l2_loss_per_item_at_zero": zero,
        "l2_loss_per_unit_frequency": one - zero,
        "report_bits": _report_bits(mechanism, k, g),
    })
    return out


def _candidate_summary(mechanism: str, res, spec) -> dict[str, Any]:
    p = res.parameters
    return {"mechanism": mechanism, "epsilon": float(p["epsilon"]), "g": int(p["g"]) if "g" in p else None,
            "alpha_bits": float(res.extra["alpha_bits"]), "l2_loss_total": float(res.objective),
            "report_bits": _report_bits(mechanism, spec.domain_size, p.get("g"))}


def plan_from_spec(raw: Mapping[str, Any], *, base_dir: Path | None = None) -> dict[str, Any]:
    """Solve a PIE spec into a verified RR or GLH plan.

    Parameters
    ----------
    raw : mapping
        The spec (see the module docstring).
    base_dir : path, optional
        Unused (the PIE spec has no file references).

    Returns
    -------
    dict
        Plan with ``params.epsilon`` (nats), ``params.domain_size``, ``params.mu`` (keep
        probability, 2^-48 grid), ``params.g`` (GLH), ``guarantee.alpha_bits``,
        ``guarantee.alpha_nats``, ``guarantee.bayes_error_lower_bound`` and ``predicted``
        l2 losses; ``selection`` records why a ``"pie"`` spec became ``"rr"``/``"glh"``.

    Raises
    ------
    SpecError
        Invalid or unreachable target.
    PrivacyViolation
        The solved plan failed the independent re-check (never returned).
    """
    from ldpplan.mechanisms._sampling import to_grid
    from ldpplan.solvers import SolverError

    spec = parse_pie_spec(raw)
    k = spec.domain_size
    try:
        if spec.mechanism == "pie":
            results = {"rr": _solve(spec, "rr"), "glh": _solve(spec, "glh")}
            chosen = "rr" if results["rr"].objective <= results["glh"].objective else "glh"
            reason = (f"{chosen.upper()} has the smaller predicted total l2 loss "
                      f"({results[chosen].objective:.4g} vs {results['glh' if chosen == 'rr' else 'rr'].objective:.4g}) "
                      "under the same target; ties go to RR (shorter reports)")
        else:
            results = {spec.mechanism: _solve(spec, spec.mechanism)}
            chosen, reason = spec.mechanism, "requested in the spec"
    except SolverError as exc:
        raise SpecError("target", str(exc), dict(raw.get("target", {}))) from None
    res = results[chosen]
    eps_claim = float(res.parameters["epsilon"])
    g = int(res.parameters["g"]) if chosen == "glh" else None
    size = g if chosen == "glh" else k
    eps_design = eps_claim * (1.0 - EPSILON_SHRINK)
    em1 = math.expm1(eps_design)
    mu = to_grid((em1 + 1.0) / (size + em1), "down") if math.isfinite(em1) else to_grid(1.0 - 2.0**-48, "down")
    if not (mu > 1.0 / size and mu < 1.0):
        raise SpecError("target", f"epsilon = {eps_claim:.6g} is too small to represent on the 2^-48 probability grid "
                        f"for {size} symbols", dict(raw.get("target", {})))
    m = Fraction(mu)
    theta_exact = (size * m - 1) / (size - 1)
    eps_real = math.log1p(float((size * m - 1) / (1 - m)))
    from ldpplan.solvers.pie import alpha_glh, alpha_rr, bits_to_nats

    bound_design = alpha_rr(eps_claim, spec.n, k, spec.releases) if chosen == "rr" else \
        alpha_glh(eps_claim, g, spec.n, k, spec.releases)
    bound_real = alpha_rr(eps_real, spec.n, k, spec.releases) if chosen == "rr" else \
        alpha_glh(eps_real, g, spec.n, k, spec.releases)
    alpha_claim = max(bound_design.alpha_bits, bound_real.alpha_bits) * (1.0 + CLAIM_MARGIN)
    max_prior = spec.target.max_prior
    lp = _prior_bits(spec.n, max_prior)
    raw_bayes = 1.0 - (alpha_claim + 1.0) / lp if lp > 0 else -math.inf
    bayes_claim = max(0.0, raw_bayes - CLAIM_MARGIN)
    params: dict[str, Any] = {"epsilon": eps_claim, "epsilon_realized": eps_real, "domain_size": k, "mu": mu,
                              "nu": (1.0 - mu) / (size - 1)}
    if chosen == "glh":
        params.update({"g": g, "hash": {"family": "carter-wegman", "formula": "((a*x + b) mod P) mod g",
                                        "prime": HASH_PRIME, "seed_per_user": "a in [1, P-1], b in [0, P-1]"}})
    if spec.domain is not None:
        params["domain"] = list(spec.domain)
    plan = plan_header(chosen)
    plan.update({
        "params": params,
        "guarantee": {
            "alpha_bits": alpha_claim,
            "alpha_nats": bits_to_nats(alpha_claim),
            "bayes_error_lower_bound": bayes_claim,
            "bayes_error_bound_raw": raw_bayes if math.isfinite(raw_bayes) else None,
            "prior": "uniform" if max_prior is None else "max_prior",
            "max_prior": float(max_prior) if max_prior is not None else 1.0 / spec.n,
            "n": spec.n,
            "releases": spec.releases,
            "theta": float(theta_exact),
            "alpha_mechanism_bits": bound_real.mechanism_bits,
            "alpha_ldp_bits": bound_real.ldp_bits,
            "alpha_binding": bound_real.binding,
            "ldp_epsilon": eps_claim,
            "sources": "Def. 3.1 (bits), Thm. 4.2/4.4 x t (Thm. 4.3/4.5), Prop. 4.1, Cor. 3.9",
        },
        "predicted": _predictions(chosen, eps_real, k, spec.n, g, float(theta_exact)),
        "selection": {
            "requested": spec.mechanism, "chosen": chosen, "reason": reason,
            "epsilon_binding": res.extra["binding"],
            "candidates": [_candidate_summary(name, r, spec) for name, r in results.items()],
        },
        "solver": {"name": res.solver, "status": res.status, "time_seconds": res.time_seconds,
                   "objective": res.objective, "certificate": res.certificate.to_dict()},
        "spec": dict(raw),
    })
    return attach_verification(plan, verify_plan(plan))


# ============================================================================ verification
def verify_plan(plan: Mapping[str, Any]) -> Verification:
    """Re-check a PIE plan from its numbers (independent of the solver).

    From ``params.mu`` (exact rational) and the symbol count ``k`` (``|X|`` or ``g``):
    ``theta = (k mu - 1)/(k - 1)``, ``epsilon = log1p((k mu - 1)/(1 - mu))``; then
    ``alpha = min(t theta min(log2 n, log2|X|), Prop. 4.1(t epsilon))`` and the
    Cor. 3.9 bound ``1 - (alpha + 1)/log2(1/max_prior)``. Checks, with a relative float
    margin of 1e-13: realised epsilon <= ``params.epsilon``; alpha <=
    ``guarantee.alpha_bits``; Cor. 3.9 at the stated alpha >=
    ``guarantee.bayes_error_lower_bound``; and the stated values meet the spec's target.

    Raises
    ------
    PlanFormatError
        Schema violation or unusable numbers (mu off the grid, wrong sizes).
    """
    from ldpplan.mechanisms._sampling import on_grid

    validate_plan_schema(plan, "pie")
    mech = plan["mechanism"]
    p, gu = plan["params"], plan["guarantee"]
    k = int(p["domain_size"])
    if mech == "glh":
        if "g" not in p:
            raise PlanFormatError("params.g: required for a GLH plan")
        size = int(p["g"])
        if size > HASH_PRIME or k > HASH_PRIME:
            raise PlanFormatError(f"params: g and domain_size must be <= {HASH_PRIME} for the GLH hash family")
    else:
        size = k
    if "domain" in p and len(p["domain"]) != k:
        raise PlanFormatError(f"params.domain: has {len(p['domain'])} labels, domain_size is {k}")
    mu = float(p["mu"])
    if not on_grid(mu):
        raise PlanFormatError("params.mu: must be a multiple of 2^-48 (plans written by ldpplan are)")
    m = Fraction(mu)
    details: dict[str, Any] = {}
    failures: list[str] = []
    if not (Fraction(1, size) < m < 1):
        return Verification(False, f"params.mu = {mu!r} is not in (1/{size}, 1): epsilon would be <= 0 or infinite",
                            {"mu": mu})
    theta = float((size * m - 1) / (size - 1))
    eps = math.log1p(float((size * m - 1) / (1 - m)))
    n, t = int(gu["n"]), int(gu["releases"])
    log2e = 1.0 / math.log(2.0)
    te = t * eps
    alpha_mech = t * theta * min(math.log2(n), math.log2(k))
    alpha_ldp = min(te * log2e, te * te * log2e, math.log2(n), t * math.log2(k))
    alpha = min(alpha_mech, alpha_ldp)
    details.update({"epsilon_realized": eps, "theta": theta, "alpha_bits_recomputed": alpha,
                    "alpha_mechanism_bits": alpha_mech, "alpha_ldp_bits": alpha_ldp})
    if eps * (1 + VERIFY_MARGIN) > float(p["epsilon"]):
        failures.append(f"realised epsilon {eps!r} exceeds params.epsilon {p['epsilon']!r}")
    a_claim = float(gu["alpha_bits"])
    if alpha * (1 + VERIFY_MARGIN) > a_claim:
        failures.append(f"alpha = {alpha!r} bits exceeds guarantee.alpha_bits = {a_claim!r}")
    if abs(float(gu["alpha_nats"]) - a_claim * math.log(2.0)) > 1e-12 * max(1.0, a_claim):
        failures.append("guarantee.alpha_nats is not alpha_bits * ln 2")
    max_prior = gu.get("max_prior")
    lp = -math.log2(float(max_prior)) if max_prior is not None else math.log2(n)
    bayes = 1.0 - (a_claim + 1.0) / lp if lp > 0 else -math.inf
    b_claim = float(gu["bayes_error_lower_bound"])
    details["bayes_error_bound_recomputed"] = bayes if math.isfinite(bayes) else None
    if b_claim > 0 and bayes < b_claim:  # the stated bound must not be overstated
        failures.append(f"Cor. 3.9 gives {bayes!r} < guarantee.bayes_error_lower_bound = {b_claim!r}")
    target = (plan.get("spec") or {}).get("target") or {}
    if isinstance(target, Mapping):
        if target.get("bayes_error") is not None and b_claim < float(target["bayes_error"]):
            failures.append(f"Bayes-error bound {b_claim!r} is below the target {target['bayes_error']!r}")
        if target.get("alpha_bits") is not None and a_claim > float(target["alpha_bits"]):
            failures.append(f"alpha {a_claim!r} bits exceeds the target {target['alpha_bits']!r}")
        if target.get("epsilon") is not None and float(p["epsilon"]) > float(target["epsilon"]):
            failures.append(f"epsilon {p['epsilon']!r} exceeds the target {target['epsilon']!r}")
        if target.get("max_prior") is not None and max_prior is not None and float(max_prior) < float(target["max_prior"]):
            failures.append("guarantee.max_prior is smaller than the spec's max_prior")
    details["slack_alpha_bits"] = a_claim - alpha
    details["slack_bayes_error"] = (bayes - b_claim) if math.isfinite(bayes) else None
    if failures:
        return Verification(False, "; ".join(failures), details)
    msg = (f"{mech.upper()} with epsilon <= {float(p['epsilon']):.6g}: (U, {a_claim:.4g} bits)-PIE privacy "
           f"(theta = {theta:.4g}, {t} release{'s' if t > 1 else ''}, n = {n}); Bayes error >= {b_claim:.4g}")
    return Verification(True, msg, details)


# ============================================================================ summary
def summarize(plan: Mapping[str, Any]) -> list[Table]:
    """Tables for ``ldpplan plan``: parameters, guarantee, predicted loss, and the RR/GLH choice."""
    p, gu, pr, sel = plan["params"], plan["guarantee"], plan["predicted"], plan["selection"]
    mech = plan["mechanism"]
    rows = [["mechanism", f"{mech} ({'k-ary RR, eq. 2' if mech == 'rr' else 'GLH, eq. 3'})"],
            ["epsilon (nats)", float(p["epsilon"])], ["epsilon realised on the grid", float(p["epsilon_realized"])],
            ["domain_size |X|", int(p["domain_size"])]]
    if mech == "glh":
        rows.append(["g", int(p["g"])])
    rows += [["mu (keep probability)", float(p["mu"])], ["report bits", int(pr["report_bits"])]]
    t1 = Table("PIE plan: parameters", ["key", "value"], rows)
    t2 = Table("Guarantee (Def. 3.1, Thm. 4.2-4.5, Cor. 3.9)", ["key", "value"], [
        ["alpha (bits)", float(gu["alpha_bits"])], ["alpha (nats)", float(gu["alpha_nats"])],
        ["Bayes error lower bound", float(gu["bayes_error_lower_bound"])],
        ["MI loss theta", float(gu["theta"])], ["binding bound", str(gu["alpha_binding"])],
        ["n users", int(gu["n"])], ["releases t", int(gu["releases"])],
        ["prior", f"{gu['prior']} (max {float(gu['max_prior']):.4g})"]])
    rows3 = [["total l2 loss (sum over x)", float(pr["l2_loss_total"])],
             ["per item at p(x) = 0", float(pr["l2_loss_per_item_at_zero"])],
             ["per unit of p(x)", float(pr["l2_loss_per_unit_frequency"])]]
    if "l2_loss_total_limit_g_infinite" in pr:
        rows3.append(["total, limit g -> inf (Thm. 4.8)", float(pr["l2_loss_total_limit_g_infinite"])])
    t3 = Table(f"Predicted l2 loss of the empirical estimate ({pr['source']})", ["key", "value"], rows3)
    t4 = Table(f"Selection: requested {sel['requested']!r}, chose {sel['chosen']!r} ({sel['epsilon_binding']} binds epsilon)",
               ["mechanism", "epsilon", "g", "alpha_bits", "total l2", "report bits"],
               [[c["mechanism"], float(c["epsilon"]), "-" if c["g"] is None else int(c["g"]), float(c["alpha_bits"]),
                 float(c["l2_loss_total"]), int(c["report_bits"])] for c in sel["candidates"]],
               note=sel["reason"])
    return [t1, t2, t3, t4]


# ============================================================================ simulation
def _runtime(plan: Mapping[str, Any]):
    from ldpplan import mechanisms

    try:
        return mechanisms.load(dict(plan))
    except mechanisms.PlanError as exc:
        raise PlanFormatError(str(exc)) from None


def _data_items(plan: Mapping[str, Any], options: SimulateOptions) -> tuple[np.ndarray, str, list[str] | None]:
    """Users' items, a description, and the data's labels when its domain differs from the plan's."""
    k = int(plan["params"]["domain_size"])
    if options.data:
        from .data import load_gss_vocab

        gss = load_gss_vocab(options.data)
        labels, index = gss.joint_categories(GSS_FIELDS)
        source = f"GSS {' x '.join(GSS_FIELDS)} ({len(index)} respondents, {gss.n_dropped} dropped)"
        plan_labels = plan["params"].get("domain")
        if len(labels) != k or (plan_labels and list(plan_labels) != labels):
            # the plan's target is re-planned for the data's domain (and n) below
            return index, source + f"; the plan's target re-planned for the data's |X| = {len(labels)}", labels
        return index, source, None
    if k > 100_000:
        raise InputDataError(f"--data: needed for |X| = {k} (the synthetic default is limited to |X| <= 100000)")
    n = int(plan["guarantee"]["n"])
    rng = np.random.default_rng([int(options.seed), 7])
    w = 1.0 / np.arange(1, k + 1)
    return rng.choice(k, size=n, p=w / w.sum()), f"synthetic Zipf(1) over {k} items, n = {n}", None


def _rr_aggregate_counts(mech, true_counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Exact-in-distribution RR report counts: Binomial keeps, uniform-over-others multinomials."""
    from ldpplan.mechanisms._sampling import bernoulli

    k = true_counts.size
    out = np.zeros(k, dtype=np.int64)
    for x in np.nonzero(true_counts)[0]:
        nx = int(true_counts[x])
        kept = int(bernoulli(rng, np.full(nx, mech.mu)).sum())
        out[x] += kept
        if nx - kept:
            other = rng.multinomial(nx - kept, np.full(k - 1, 1.0 / (k - 1)))
            out[:x] += other[:x]
            out[x + 1:] += other[x:]
    return out


def _sim_plans(plan: Mapping[str, Any], n_data: int, options: SimulateOptions,
               domain: list[str] | None = None) -> list[tuple[str, dict]]:
    """The plan's RR/GLH counterparts re-planned for the data's n (and, if given, its domain
    labels) for the plan's target and any extra targets."""
    spec = dict(plan["spec"])
    if domain is not None:
        spec.pop("domain_size", None)
        spec["domain"] = list(domain)
    targets = [None]
    extra = options.extra.get("bayes_errors")
    if extra:
        try:
            targets = [float(v) for v in extra.split(",") if v.strip()]
        except ValueError:
            raise SpecError("-O bayes_errors", "must be a comma-separated list of numbers in (0, 1)", extra) from None
    out = []
    for tgt in targets:
        for mech in ("rr", "glh"):
            s = dict(spec, mechanism=mech, n=n_data)
            if tgt is not None:
                s["target"] = {"bayes_error": tgt, **({"max_prior": spec["target"]["max_prior"]}
                                                      if spec.get("target", {}).get("max_prior") else {})}
            label = (f"bayes>={tgt:g}" if tgt is not None else "plan target")
            out.append((label, plan_from_spec(s)))
    return out


def simulate(plan: Mapping[str, Any], options: SimulateOptions, progress=None) -> SimulationReport:
    """RR and GLH for the plan's target on real data: achieved Bayes-error bound and l2 loss.

    For the plan's target (or each value of ``-O bayes_errors=0.5,0.8,...``), the RR
    and the GLH are planned for the data's ``n`` and ``|X|``; each runs ``trials``
    times; the table shows alpha (bits), the Cor. 3.9 bound, the predicted total l2
    loss (Prop. 4.6/4.7) and the measured ``sum_x (p_hat(x) - p(x))^2`` for the
    empirical estimate and the significance-threshold estimate (``-O methods=`` adds
    ``em``), with the mean over the top-10 items (heavy hitters) as well.

    ``mode="aggregate"`` samples the RR report counts exactly in distribution; the GLH
    always runs the client runtime (its support counts have no simple joint law).

    When the data's domain differs from the plan's (e.g. the paper-scale spec with
    ``|X| = 10,500,393`` simulated on the 100 GSS categories), the plan's *target* is
    re-planned for the data's domain and ``n``, and the table says so.

    Raises
    ------
    InputDataError
        Unreadable data.
    """
    items, source, data_domain = _data_items(plan, options)
    n = int(items.size)
    k = len(data_domain) if data_domain is not None else int(plan["params"]["domain_size"])
    truth = np.bincount(items, minlength=k) / n
    top = np.argsort(-truth)[:10]
    methods = [m.strip() for m in options.extra.get("methods", "empirical,threshold").split(",") if m.strip()]
    for m in methods:
        if m not in ("empirical", "threshold", "em"):
            raise SpecError("-O methods", "must be a comma-separated subset of empirical,threshold,em", m)
    sims = _sim_plans(plan, n, options, data_domain)
    total_steps = len(sims) * int(options.trials)
    seeds = np.random.SeedSequence(int(options.seed)).spawn(len(sims))
    rows, results = [], []
    true_counts = np.bincount(items, minlength=k)
    for (label, sp), ss in zip(sims, seeds):
        mech = _runtime(sp)
        losses = {m: [] for m in methods}
        top_losses = {m: [] for m in methods}
        for rng in (np.random.default_rng(s) for s in ss.spawn(int(options.trials))):
            if sp["mechanism"] == "rr" and options.mode == "aggregate":
                counts = _rr_aggregate_counts(mech, true_counts, rng)
                reports = np.repeat(np.arange(k), counts)
            else:
                reports = mech.perturb(items, rng)
            for m in methods:
                est = mech.estimate(reports, m)
                losses[m].append(float(np.sum((est - truth) ** 2)))
                top_losses[m].append(float(np.sum((est[top] - truth[top]) ** 2)))
            if progress:
                progress(1, total_steps)
        pr = sp["predicted"]
        exact = float(np.sum(mech.variance_per_user(truth)) / n)
        rec = {"target": label, "mechanism": sp["mechanism"], "epsilon": sp["params"]["epsilon"],
               "g": sp["params"].get("g"), "alpha_bits": sp["guarantee"]["alpha_bits"],
               "bayes_error_lower_bound": sp["guarantee"]["bayes_error_lower_bound"],
               "predicted_l2_total": pr["l2_loss_total"], "exact_l2_total_for_runtime": exact,
               "measured": {m: {"l2_total_mean": float(np.mean(v)),
                                "l2_total_se": float(np.std(v, ddof=1) / math.sqrt(len(v))) if len(v) > 1 else None,
                                "l2_top10_mean": float(np.mean(top_losses[m]))} for m, v in losses.items()}}
        results.append(rec)
        row = [label, sp["mechanism"], float(sp["params"]["epsilon"]), "-" if rec["g"] is None else int(rec["g"]),
               float(rec["alpha_bits"]), float(rec["bayes_error_lower_bound"]), float(pr["l2_loss_total"])]
        row += [float(np.mean(losses[m])) for m in methods] + [float(np.mean(top_losses[m])) for m in methods]
        rows.append(row)
    cols = ["target", "mechanism", "epsilon", "g", "alpha_bits", "Bayes err >=", "pred. l2"]
    short = {"empirical": "emp", "threshold": "emp+thr", "em": "EM"}
    cols += [f"l2 {short[m]}" for m in methods] + [f"top10 l2 {short[m]}" for m in methods]
    table = Table(f"PIE on {source}: RR vs GLH (means over {options.trials} trials)", cols, rows,
                  note="pred. l2 = Prop. 4.6/4.7 total sum_x E[(p - p_hat)^2] for the empirical estimate; "
                       "l2 columns are measured sums over all |X| items, top10 over the 10 most frequent items.")
    data = {"source": source, "n": n, "domain_size": k, "results": results, "seed": int(options.seed),
            "trials": int(options.trials), "mode": options.mode}

    def plot(path: str) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 4))
        for mech_name, marker in (("rr", "o"), ("glh", "s")):
            for m in methods:
                pts = sorted((r["bayes_error_lower_bound"], r["measured"][m]["l2_total_mean"])
                             for r in results if r["mechanism"] == mech_name)
                if pts:
                    ax.plot(*zip(*pts), marker=marker, label=f"{mech_name.upper()} {short[m]}")
        ax.set_xlabel("Bayes error lower bound (Cor. 3.9)")
        ax.set_ylabel("sum of l2 losses over X")
        ax.set_yscale("log")
        ax.set_title("PIE: utility vs re-identification guarantee")
        ax.legend(fontsize=8)
        fig.tight_layout()
        from ._io import write_bytes_atomic
        import io

        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=120)
        plt.close(fig)
        write_bytes_atomic(path, buf.getvalue())

    return SimulationReport(tables=[table], data=data, plot=plot)


# ============================================================================ runtime from files
def _read_items(plan: Mapping[str, Any], path) -> np.ndarray:
    p = Path(path)
    if not p.is_file():
        raise InputDataError(f"--input: file must exist (got {str(p)!r})")
    k = int(plan["params"]["domain_size"])
    labels = plan["params"].get("domain")
    pos = {lab: i for i, lab in enumerate(labels)} if labels else {}
    with p.open(newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if not header or "item" not in header:
            raise InputDataError(f"{p}: needs a header with an 'item' column (an index in [0, {k}) or a domain label)")
        col = header.index("item")
        out = []
        for lineno, row in enumerate(reader, start=2):
            if not row:
                continue
            v = row[col].strip()
            if v in pos:
                out.append(pos[v])
                continue
            try:
                i = int(v)
            except ValueError:
                raise InputDataError(f"{p}:{lineno}: item {v!r} is neither a label nor an index") from None
            if not 0 <= i < k:
                raise InputDataError(f"{p}:{lineno}: item index {i} is outside [0, {k})")
            out.append(i)
    if not out:
        raise InputDataError(f"{p}: no items")
    return np.asarray(out, dtype=np.int64)


def perturb_file(plan: Mapping[str, Any], input_path, output_path, rng) -> dict:
    """Perturb the items of a CSV (column ``item``) and write the reports (``.npz``).

    RR: array ``reports`` (int64, indices). GLH: arrays ``a``, ``b`` (each user's hash
    seed) and ``y`` (perturbed hash value). Both also store ``mechanism``.
    """
    import io

    from ._io import write_bytes_atomic

    mech = _runtime(plan)
    items = _read_items(plan, input_path)
    reports = mech.perturb(items, rng)
    buf = io.BytesIO()
    if plan["mechanism"] == "glh":
        np.savez(buf, mechanism=np.array("glh"), a=reports["a"], b=reports["b"], y=reports["y"])
    else:
        np.savez(buf, mechanism=np.array("rr"), reports=reports)
    write_bytes_atomic(output_path, buf.getvalue())
    return {"n": int(items.size)}


def estimate_file(plan: Mapping[str, Any], reports_path) -> Table:
    """Estimate frequencies from a reports ``.npz`` (empirical and with significance threshold)."""
    from ldpplan.mechanisms.pie import REPORT_DTYPE

    mech = _runtime(plan)
    try:
        with np.load(reports_path) as z:
            if str(z["mechanism"]) != plan["mechanism"]:
                raise InputDataError(f"{reports_path}: reports of {str(z['mechanism'])!r}, plan is {plan['mechanism']!r}")
            if plan["mechanism"] == "glh":
                reports = np.empty(z["y"].shape[0], dtype=REPORT_DTYPE)
                for f in ("a", "b", "y"):
                    reports[f] = z[f]
            else:
                reports = z["reports"]
    except (OSError, KeyError, ValueError) as exc:
        raise InputDataError(f"{reports_path}: not a reports file of this plan ({exc})") from None
    try:
        emp = mech.estimate(reports, "empirical")
        thr = mech.estimate(reports, "threshold")
    except ValueError as exc:
        raise InputDataError(f"{reports_path}: {exc}") from None
    labels = list(mech.domain) if mech.labels is not None else [str(i) for i in range(mech.domain_size)]
    rows = [[lab, float(e), float(t)] for lab, e, t in zip(labels, emp, thr)]
    return Table(f"{plan['mechanism'].upper()} frequency estimates (n = {np.asarray(reports).shape[0]})",
                 ["item", "empirical", "threshold"], rows)

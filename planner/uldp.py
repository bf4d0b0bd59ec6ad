"""ULDP family (uRR, uRAP, PUM): spec -> plan -> independent verification -> simulation.

Source: Murakami & Kawamoto, "Utility-Optimized Local Differential Privacy Mechanisms for
Distribution Estimation", USENIX Security 2019 (full version): Def. 2 (ULDP), Def. 3 (uRR),
Def. 4 (uRAP), Props. 4-8 (l1 loss), App. E Props. 15-19 (l2 loss), Sec. 5 (PUM, eq. 21),
Sec. 2.5 (estimators), Sec. 6 (Fig. 5: TV vs epsilon).

Spec keys (TOML or JSON)::

    mechanism = "urr"      # "urr" (Def. 3) | "urap" (Def. 4) | "pum" (Sec. 5)
    epsilon = 1.0          # nats, > 0
    domain = 400           # |X| (labels x1..x400) or a list of labels
    sensitive = 76         # a count k (the first k labels) or a list of labels: X_S
    theta = 0.6            # uRAP only (optional): default e^(eps/2)/(e^(eps/2)+1)
    n = 100000             # optional: number of users for the predicted losses
    # PUM only:
    tags = ["home", "workplace"]     # kappa semantic tags (bots)
    common = "urr"                   # common mechanism over Z = X + bots: "urr" | "urap"
    [background]                     # optional pi_k per tag (|X| probabilities summing to 1)
    home = [...]
"""
from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any, Literal, Mapping, Optional, Union

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator

from ._common import attach_verification, plan_header, spec_from_pydantic, validate_plan_schema
from ._report import SimulateOptions, SimulationReport, Table, Verification
from .errors import InputDataError, PlanFormatError, SpecError

__all__ = ["MECHANISMS", "EXAMPLES", "plan_from_spec", "verify_plan", "summarize", "simulate",
           "perturb_file", "estimate_file", "ULDPSpec", "grid_urr", "grid_urap", "runtime_of"]

MECHANISMS = ("urr", "urap", "pum")

#: Budgets are shrunk by this relative amount before solving so that the grid numbers in
#: the plan satisfy the guarantee with slack >= 0 (ARCHITECTURE.md).
SHRINK = 1e-12
#: Largest domain for which verification also enumerates the full channel matrix (uRR).
ENUMERATE_MAX_DOMAIN = 2000
#: Largest |X_S| for which verification enumerates every protected uRAP output (2^|X_S|).
ENUMERATE_MAX_SENSITIVE_BITS = 12

EXAMPLES: dict[str, dict] = {
    "uldp-urr": {
        "mechanism": "urr", "epsilon": 1.0, "domain": 400, "sensitive": 76,
        "description": "ULDP Sec. 6 US Census setting: |X| = 400, |X_S| = 76, epsilon = 1 (uRR, Def. 3)",
    },
    "uldp-urap": {
        "mechanism": "urap", "epsilon": 1.0, "domain": 400, "sensitive": 76,
        "description": "ULDP Sec. 6 US Census setting: |X| = 400, |X_S| = 76, epsilon = 1 (uRAP, Def. 4)",
    },
    "uldp-pum": {
        "mechanism": "pum", "epsilon": 1.0, "domain": 625, "sensitive": 15, "common": "urr",
        "tags": ["home", "workplace"],
        "description": "ULDP Sec. 6 Foursquare setting: 25x25 regions, 15 hospital regions, PUM with tags home/workplace",
    },
}


# ============================================================================ spec
class ULDPSpec(BaseModel):
    """Validated ULDP spec (see the module docstring for the keys)."""

    model_config = ConfigDict(extra="forbid")
    mechanism: Literal["urr", "urap", "pum"]
    epsilon: float = Field(gt=0, le=30, allow_inf_nan=False)
    domain: Union[StrictInt, list[Union[str, StrictInt]]]
    sensitive: Union[StrictInt, list[Union[str, StrictInt]]]
    theta: Optional[float] = Field(default=None, gt=0, le=1, allow_inf_nan=False)
    n: Optional[StrictInt] = Field(default=None, ge=1)
    tags: Optional[list[str]] = None
    common: Optional[Literal["urr", "urap"]] = None
    background: Optional[dict[str, list[float]]] = None
    description: Optional[str] = None

    @field_validator("domain")
    @classmethod
    def _domain_ok(cls, v):
        if isinstance(v, int) and not (2 <= v <= 1_000_000):
            raise ValueError("must be a count in [2, 1000000] or a list of labels")
        if isinstance(v, list):
            labels = [str(x) for x in v]
            if len(labels) < 2 or len(set(labels)) != len(labels):
                raise ValueError("must list at least 2 distinct labels")
        return v

    @field_validator("tags")
    @classmethod
    def _tags_ok(cls, v):
        if v is not None and (len(v) < 1 or len(set(v)) != len(v) or any(not t for t in v)):
            raise ValueError("must be a non-empty list of distinct, non-empty tag names")
        return v


def _resolve(spec: ULDPSpec) -> tuple[list[str], list[int]]:
    labels = [f"x{i + 1}" for i in range(spec.domain)] if isinstance(spec.domain, int) else [str(v) for v in spec.domain]
    k = len(labels)
    if isinstance(spec.sensitive, int):
        if not (1 <= spec.sensitive <= k):
            raise SpecError("sensitive", f"must be a count in [1, |X| = {k}]", spec.sensitive)
        return labels, list(range(spec.sensitive))
    pos = {lab: i for i, lab in enumerate(labels)}
    idx = []
    for j, lab in enumerate(spec.sensitive):
        if str(lab) not in pos:
            raise SpecError(f"sensitive[{j}]", "must be a label of the domain", lab)
        idx.append(pos[str(lab)])
    if not idx or len(set(idx)) != len(idx):
        raise SpecError("sensitive", "must be a non-empty list of distinct labels", spec.sensitive)
    return labels, sorted(idx)


# ============================================================================ grid parameters
def grid_urr(epsilon: float, n_sensitive: int) -> dict[str, float]:
    """uRR parameters on the 2^-48 grid, rounded toward privacy.

    ``c2`` is rounded **up** from the closed form at ``epsilon (1 - 1e-12)``, then
    ``c1 = 1 - (|X_S| - 1) c2`` and ``c3 = 1 - |X_S| c2`` (exact in binary), which lowers
    ``c1 / c2`` (the only ratio of Def. 2 (5)) and keeps every row summing to one.

    Raises
    ------
    SpecError
        If epsilon is so small that ``c3`` would not be positive on the grid.
    """
    from ldpplan.mechanisms._sampling import to_grid
    from ldpplan.solvers.uldp import urr_parameters

    res = urr_parameters(epsilon * (1 - SHRINK), n_sensitive)
    c2 = to_grid(res.parameters["c2"], "up")
    c1 = 1.0 - (n_sensitive - 1) * c2
    c3 = 1.0 - n_sensitive * c2
    if not (c1 > c2 and c3 > 0):
        raise SpecError("epsilon", "is too small for the 2^-48 probability grid with this |X_S|", epsilon)
    return {"c1": c1, "c2": c2, "c3": c3}


def grid_urap(epsilon: float, theta: float | None = None) -> dict[str, float]:
    """uRAP parameters on the 2^-48 grid, rounded toward privacy.

    ``theta`` to nearest; ``d1`` **up** (lowers ``theta/d1`` and raises ``(1-theta)/(1-d1)``);
    ``d2 = (theta/d1) / e^(epsilon (1 - 1e-12))`` rounded **up**, so that
    ``theta/d1 <= e^eps d2`` (the binding ratio of Def. 2 (5) over Y_P).
    """
    from ldpplan.mechanisms._sampling import to_grid
    from ldpplan.solvers.uldp import urap_parameters

    eps = epsilon * (1 - SHRINK)
    res = urap_parameters(eps, theta)
    th = to_grid(res.parameters["theta"], "nearest")
    if th <= 0 or th > 1:
        raise SpecError("theta", "must round to a grid probability in (0, 1]", theta)
    d1 = to_grid(th / ((1 - th) * math.exp(eps) + th), "up")
    d2 = to_grid(min(1.0, (th / d1) / math.exp(eps)), "up")
    if not (th > d1 and d2 < 1):
        raise SpecError("epsilon", "is too small for the 2^-48 probability grid", epsilon)
    return {"theta": th, "d1": d1, "d2": d2}


def _rr_grid(epsilon: float, k: int) -> dict[str, float]:
    """k-ary RR (uRR with X_S = X) on the grid: keep probability ``p`` and other ``q``."""
    g = grid_urr(epsilon, k)
    return {"p": g["c1"], "q": g["c2"]}


def _rappor_grid(epsilon: float) -> dict[str, float]:
    """Basic one-time RAPPOR on the grid: ``psi`` (flip 0->1) up, ``theta = 1 - psi``."""
    from ldpplan.mechanisms._sampling import to_grid

    h = math.exp(epsilon * (1 - SHRINK) / 2)
    psi = to_grid(1.0 / (h + 1.0), "up")
    return {"theta": 1.0 - psi, "psi": psi}


# ============================================================================ predicted losses
def _losses(model, n: int | None) -> dict[str, Any]:
    from ldpplan.solvers.uldp import worst_case_losses

    res = worst_case_losses(model, 1)
    out = {
        "l1_worst_times_sqrt_n": res.parameters["l1"],
        "l2_worst_times_n": res.parameters["l2"],
        "worst_case_sensitive_mass_l1": res.parameters["sensitive_mass_l1"],
        "worst_case_sensitive_mass_l2": res.parameters["sensitive_mass_l2"],
    }
    if n:
        out["l1_worst"] = res.parameters["l1"] / math.sqrt(n)
        out["l2_worst"] = res.parameters["l2"] / n
    return out, res


def _worst_case_kind(mech: str, epsilon: float, ks: int, kn: int, mass: float) -> str:
    if kn == 0:
        return "uniform over X (X_S = X)"
    if mass <= 1e-9:
        return "uniform over X_N (p_UN; Prop. 5/8/16/19)"
    if mech == "urr" and epsilon >= math.log(kn + 1):
        return "p* of eq. (13) (Prop. 6/17)"
    return f"mixture: {mass:.4g} on X_S uniformly, rest uniform on X_N"


def _model(mech: str, params: Mapping[str, float], ks: int, kn: int):
    from ldpplan.solvers.uldp import LinearMarginals

    if mech == "urr":
        return LinearMarginals.urr(ks, kn, params["c1"], params["c2"], params["c3"])
    return LinearMarginals.urap(ks, kn, params["theta"], params["d1"], params["d2"])


# ============================================================================ planning
def plan_from_spec(raw: Mapping[str, Any], *, base_dir: Path | None = None) -> dict[str, Any]:
    """Solve a ULDP spec into a verified plan.

    Returns
    -------
    dict
        ``params`` (``epsilon, domain_size, labels, sensitive`` (indices of X_S),
        ``n_sensitive``, ``c1, c2, c3`` (uRR) or ``theta, d1, d2`` (uRAP); PUM adds
        ``common, tags, intermediate_sensitive, background``), ``guarantee``,
        ``predicted`` (worst-case l1 times sqrt(n) and l2 times n, Props. 5-8/16-19),
        ``comparison`` (RR and RAPPOR at the same epsilon), ``solver``, ``verification``,
        ``spec``.

    Raises
    ------
    SpecError, PrivacyViolation
    """
    from ldpplan.solvers.uldp import LinearMarginals

    t0 = time.perf_counter()
    spec = spec_from_pydantic(ULDPSpec, raw)
    labels, sens = _resolve(spec)
    k = len(labels)
    mech = spec.mechanism
    kind = mech
    if mech == "pum":
        if not spec.tags:
            raise SpecError("tags", "PUM needs a non-empty list of semantic tags", spec.tags)
        kind = spec.common or "urr"
    else:
        for key in ("tags", "common", "background"):
            if getattr(spec, key) is not None:
                raise SpecError(key, "is only allowed for mechanism = 'pum'", getattr(spec, key))
    if spec.theta is not None and kind != "urap":
        raise SpecError("theta", "is only used by the uRAP (mechanism 'urap' or common = 'urap')", spec.theta)
    kappa = len(spec.tags) if mech == "pum" else 0
    ks = len(sens) + kappa  # sensitive symbols of the alphabet the common mechanism sees
    kz = k + kappa
    params: dict[str, Any] = {"epsilon": spec.epsilon, "domain_size": k, "labels": labels,
                              "sensitive": sens, "n_sensitive": len(sens)}
    grid = grid_urr(spec.epsilon, ks) if kind == "urr" else grid_urap(spec.epsilon, spec.theta)
    params.update(grid)
    if mech == "pum":
        bg = {}
        for tag, dist in (spec.background or {}).items():
            if tag not in spec.tags:
                raise SpecError(f"background.{tag}", f"must be one of the tags {spec.tags}", tag)
            d = np.asarray(dist, dtype=np.float64)
            if d.shape != (k,) or np.any(d < 0) or not math.isclose(float(d.sum()), 1.0, abs_tol=1e-9):
                raise SpecError(f"background.{tag}", f"must be {k} non-negative probabilities summing to 1",
                                f"{d.size} values")
            bg[tag] = d.tolist()
        params.update({"common": kind, "tags": list(spec.tags), "intermediate_size": kz,
                       "intermediate_sensitive": sens + list(range(k, kz)), "background": bg})
    model = _model(kind, grid, ks, kz - ks)
    predicted, wres = _losses(model, spec.n)
    predicted["n"] = spec.n
    predicted["worst_case_distribution_l1"] = _worst_case_kind(kind, spec.epsilon, ks, kz - ks,
                                                               predicted["worst_case_sensitive_mass_l1"])
    predicted["worst_case_distribution_l2"] = _worst_case_kind(kind, spec.epsilon, ks, kz - ks,
                                                               predicted["worst_case_sensitive_mass_l2"])
    predicted["estimator"] = "empirical (eq. 3); l1 asymptotic (eq. 37), l2 exact (eqs. 46, 48)"
    if mech == "pum":
        predicted["note"] = ("losses of r_hat over Z = X + bots (first term of Thm. 1, eq. 22); the second term is "
                             "at most 2 * sum_k r_hat(bot_k)")
    comparison = []
    rr = _rr_grid(spec.epsilon, kz)
    rap = _rappor_grid(spec.epsilon)
    for name, m in (("RR", LinearMarginals(kz, 0, rr["q"], rr["p"] - rr["q"], 0.0, 1.0)),
                    ("RAPPOR", LinearMarginals(kz, 0, rap["psi"], rap["theta"] - rap["psi"], 0.0, 1.0))):
        lo, _ = _losses(m, spec.n)
        comparison.append({"mechanism": name, "guarantee": f"{spec.epsilon:g}-LDP on all of X", **lo})
    other = "urap" if kind == "urr" else "urr"
    og = grid_urr(spec.epsilon, ks) if other == "urr" else grid_urap(spec.epsilon)
    lo, _ = _losses(_model(other, og, ks, kz - ks), spec.n)
    comparison.append({"mechanism": "u" + ("RR" if other == "urr" else "RAP"),
                       "guarantee": f"ULDP, epsilon = {spec.epsilon:g}", **lo})
    plan = plan_header(mech)
    plan.update({
        "params": params,
        "guarantee": {
            "notion": "(X_S, Y_P, epsilon)-ULDP (Def. 2)" + (" for X_S + each user's own sensitive items (Prop. 9)"
                                                            if mech == "pum" else ""),
            "epsilon": spec.epsilon,
            "protected_outputs": ("Y_P = X_S (uRR: outputs equal to a sensitive symbol)" if kind == "urr"
                                  else "Y_P = reports whose non-sensitive bits are all 0 (eq. 7)"),
            "invertible_outputs": ("Y_I = X_N: reveal the input" if kind == "urr"
                                   else "Y_I = reports with one non-sensitive bit set: reveal that input"),
        },
        "predicted": predicted,
        "comparison": comparison,
        "solver": {"name": "closed form (Def. 3/4) + worst-case loss by concave 1-D maximisation",
                   "status": "closed_form", "time_seconds": time.perf_counter() - t0,
                   "certificate": wres.certificate.to_dict()},
    })
    plan["spec"] = dict(raw)
    return attach_verification(plan, verify_plan(plan))


# ============================================================================ verification
def _ratio_ok(hi: float, lo: float, epsilon: float) -> bool:
    # exp and the product carry < 1e-15 relative error: demand that much margin
    return lo > 0 and hi <= lo * math.exp(epsilon) * (1 - 1e-15)


def _verify_urr(p: Mapping[str, Any], k: int, sens: list[int], epsilon: float) -> tuple[bool, str, dict]:
    from ldpplan.mechanisms._sampling import on_grid

    c1, c2, c3 = float(p["c1"]), float(p["c2"]), float(p["c3"])
    ks = len(sens)
    details: dict[str, Any] = {}
    if not on_grid([c1, c2, c3]):
        return False, "c1, c2, c3 must be probabilities on the 2^-48 grid", details
    if c1 + (ks - 1) * c2 != 1.0 or (ks < k and ks * c2 + c3 != 1.0):
        return False, "rows of Q must sum to one (c1 + (|X_S|-1) c2 = 1, |X_S| c2 + c3 = 1)", details
    if ks < k and not c3 > 0:
        return False, "Def. 2 (4): every y in Y_I must be reachable from its x (c3 > 0)", details
    hi, lo = max(c1, c2), min(c1, c2)
    eff = math.log(hi / lo) if lo > 0 else math.inf
    details.update({"epsilon_effective": eff, "slack_nats": epsilon - eff})
    if not _ratio_ok(hi, lo, epsilon):
        return False, f"Def. 2 (5): Q(y|x)/Q(y|x') = {hi / lo if lo else math.inf:.17g} exceeds e^epsilon on Y_P", details
    if k <= ENUMERATE_MAX_DOMAIN:
        from ldpplan.mechanisms.uldp import UtilityOptimizedRR

        q = UtilityOptimizedRR(k, sens, c1, c2, c3).channel_matrix()
        s = np.zeros(k, dtype=bool)
        s[sens] = True
        if np.any(q[np.ix_(s, ~s)] != 0):
            return False, "Def. 2: a transition from X_S to Y_I", details
        col_n = q[:, ~s]
        if np.any((col_n > 0).sum(axis=0) != 1) or np.any(col_n[~s][:, :].diagonal() <= 0):
            return False, "Def. 2 (4): some y in Y_I does not reveal a unique x in X_N", details
        cols = q[:, s]
        if not all(_ratio_ok(c.max(), c.min(), epsilon) for c in cols.T):
            return False, "Def. 2 (5) fails on an enumerated column of Y_P", details
        if not np.all(q.sum(axis=1) == 1.0):
            return False, "enumerated rows of Q do not sum to one", details
        details["enumerated"] = f"full {k}x{k} channel matrix"
    return True, "", details


def _urap_ratio_values(theta: float, d1: float, d2: float, ks: int, kn: int) -> list[list[float]]:
    """Per class of protected output, the distinct values of Q(y|x) / prod_j Pr(y_j | j != x)."""
    a1 = theta / d1 if d1 > 0 else math.inf
    a0 = (1 - theta) / (1 - d1)
    extra = [d2] if kn else []
    classes = []
    if ks >= 2:
        classes.append([a1, a0] + extra)  # y with both set and unset sensitive bits
    classes.append([a1] + extra)  # all sensitive bits set
    classes.append([a0] + extra)  # no sensitive bit set
    return classes


def _verify_urap(p: Mapping[str, Any], k: int, sens: list[int], epsilon: float) -> tuple[bool, str, dict]:
    from ldpplan.mechanisms._sampling import on_grid

    theta, d1, d2 = float(p["theta"]), float(p["d1"]), float(p["d2"])
    ks, kn = len(sens), k - len(sens)
    details: dict[str, Any] = {}
    if not on_grid([theta, d1, d2]):
        return False, "theta, d1, d2 must be probabilities on the 2^-48 grid", details
    if kn and not d2 < 1:
        return False, "Def. 2 (4): invertible outputs need 1 - d2 > 0", details
    if d1 <= 0:
        return False, "d1 must be > 0 (otherwise a set sensitive bit reveals the input)", details
    eff = 0.0
    for values in _urap_ratio_values(theta, d1, d2, ks, kn):
        hi, lo = max(values), min(values)
        if not _ratio_ok(hi, lo, epsilon):
            return False, f"Def. 2 (5): closed-form ratio {hi / lo if lo else math.inf:.17g} exceeds e^epsilon on Y_P", details
        eff = max(eff, math.log(hi / lo))
    details.update({"epsilon_effective": eff, "slack_nats": epsilon - eff})
    if ks <= ENUMERATE_MAX_SENSITIVE_BITS and k <= ENUMERATE_MAX_DOMAIN:
        from ldpplan.mechanisms.uldp import UtilityOptimizedRAPPOR

        bp = UtilityOptimizedRAPPOR(k, sens, theta, d1, d2).bit_probabilities()
        s = np.zeros(k, dtype=bool)
        s[sens] = True
        # structural zeros: X_S never sets a non-sensitive bit; x in X_N sets only its own
        off = bp[:, ~s].copy()
        own = np.flatnonzero(~s)
        off[own, np.arange(own.size)] = 0.0
        if np.any(off != 0):
            return False, "Def. 2: a transition from X_S (or another input) to Y_I", details
        ys = ((np.arange(2**ks)[:, None] >> np.arange(ks)[None, :]) & 1).astype(bool)  # all protected outputs
        ps = bp[:, s]  # (k, ks)
        with np.errstate(divide="ignore"):
            logq = ys @ np.log(ps).T + (~ys) @ np.log1p(-ps).T  # (2^ks, k)
        logq += np.log(np.where(s, 1.0, d2))[None, :]
        spread = logq.max(axis=1) - logq.min(axis=1)
        if not np.all(spread <= epsilon * (1 - 1e-12) + 1e-13):
            worst = float(spread.max())
            return False, f"Def. 2 (5) fails by enumeration: ln ratio {worst:.17g} > epsilon", details
        details["enumerated"] = f"all {2**ks} protected outputs x {k} inputs"
    return True, "", details


def verify_plan(plan: Mapping[str, Any]) -> Verification:
    """Re-check the ULDP conditions of Def. 2 from the numbers in the plan.

    uRR: grid, rows sum to one, no X_S -> Y_I transition, each y in Y_I reveals its x,
    ``max(c1, c2) <= e^eps min(c1, c2)`` on Y_P (and the full channel matrix for
    ``|X| <= 2000``). uRAP: grid, the closed-form ratio bound over every class of protected
    outputs and, for ``|X_S| <= 12``, enumeration of all ``2^|X_S|`` protected outputs.
    PUM: the common mechanism over ``Z = X + bots`` with ``Z_S = X_S + bots`` (Prop. 9).

    Raises
    ------
    PlanFormatError
        Schema-invalid plan.
    """
    validate_plan_schema(plan, "uldp")
    mech = plan["mechanism"]
    p = plan["params"]
    eps = float(p["epsilon"])
    k = int(p["domain_size"])
    if len(p["labels"]) != k:
        raise PlanFormatError("params.labels: must have domain_size entries")
    sens = [int(i) for i in p["sensitive"]]
    if any(i < 0 or i >= k for i in sens) or len(set(sens)) != len(sens):
        raise PlanFormatError("params.sensitive: must be distinct indices into the domain")
    kind = mech
    if mech == "pum":
        kind = p.get("common")
        if kind not in ("urr", "urap"):
            raise PlanFormatError("params.common: must be 'urr' or 'urap'")
        kappa = len(p["tags"])
        expected = sorted(sens) + list(range(k, k + kappa))
        if sorted(int(i) for i in p["intermediate_sensitive"]) != expected:
            return Verification(False, "Prop. 9 needs Z_S = X_S + every bot", {})
        k, sens = k + kappa, expected
    try:
        ok, msg, details = (_verify_urr if kind == "urr" else _verify_urap)(p, k, sens, eps)
    except KeyError as exc:
        raise PlanFormatError(f"params.{exc.args[0]}: required for {kind}") from None
    if not ok:
        return Verification(False, msg, details)
    what = "uRR" if kind == "urr" else "uRAP"
    msg = (f"(X_S, Y_P, {eps:g})-ULDP of the {what} (Def. 2): effective epsilon "
           f"{details['epsilon_effective']:.15g} <= {eps:g}; |X| = {k}, |X_S| = {len(sens)}"
           + (f"; {details['enumerated']} enumerated" if "enumerated" in details else ""))
    return Verification(True, msg, details)


# ============================================================================ summary
def summarize(plan: Mapping[str, Any]) -> list[Table]:
    """Parameters table and the predicted worst-case losses vs RR / RAPPOR at the same epsilon."""
    p = plan["params"]
    mech = plan["mechanism"]
    kind = p.get("common", mech)
    rows = [["mechanism", mech + (f" (common {kind} over Z = X + {len(p['tags'])} bots)" if mech == "pum" else "")],
            ["epsilon (nats)", p["epsilon"]], ["|X|", p["domain_size"]], ["|X_S|", p["n_sensitive"]]]
    if kind == "urr":
        rows += [["c1  Pr(y = x | x in X_S)", p["c1"]], ["c2  Pr(y = x' in X_S)", p["c2"]],
                 ["c3  Pr(y = x | x in X_N)", p["c3"]]]
    else:
        rows += [["theta  Pr(own sensitive bit = 1)", p["theta"]], ["d1  Pr(other sensitive bit = 1)", p["d1"]],
                 ["d2  Pr(own non-sensitive bit = 0)", p["d2"]]]
    if mech == "pum":
        rows += [["semantic tags", ", ".join(p["tags"])],
                 ["background pi_k", ", ".join(p["background"]) or "none (proportional fallback, Sec. 5.3)"]]
    params = Table(f"ULDP plan ({mech})", ["parameter", "value"], rows,
                   note="All probabilities are multiples of 2^-48 rounded toward privacy. " + plan["guarantee"]["notion"])
    pr = plan["predicted"]
    n = pr.get("n")
    cols = ["mechanism", "guarantee", "worst E(l1)*sqrt(n)", "worst E(l2^2)*n"] + (
        [f"E(l1) at n={n}", f"E(l2^2) at n={n}"] if n else [])
    me = [mech if mech != "pum" else f"pum/{kind}", "ULDP", pr["l1_worst_times_sqrt_n"], pr["l2_worst_times_n"]]
    if n:
        me += [pr["l1_worst"], pr["l2_worst"]]
    cmp_rows = [me]
    for c in plan["comparison"]:
        row = [c["mechanism"], c["guarantee"], c["l1_worst_times_sqrt_n"], c["l2_worst_times_n"]]
        if n:
            row += [c["l1_worst"], c["l2_worst"]]
        cmp_rows.append(row)
    cmp = Table("Predicted worst-case loss of the empirical estimate (Props. 4-8, 15-19)", cols, cmp_rows,
                note=f"Worst case ({plan['mechanism']}): l1 at {pr['worst_case_distribution_l1']}; "
                     f"l2 at {pr['worst_case_distribution_l2']}. TV = l1 / 2.")
    return [params, cmp]


# ============================================================================ runtime helpers
def runtime_of(plan: Mapping[str, Any]):
    """The :mod:`mechanisms.uldp` runtime of a plan."""
    from ldpplan import mechanisms

    return mechanisms.load(plan)


def perturb_file(plan: Mapping[str, Any], input_path, output_path, rng: np.random.Generator) -> dict:
    """Perturb the items of a CSV (header ``item``, labels or indices; PUM also ``tag``).

    Writes an ``.npz`` with ``reports`` (uRR: int indices; uRAP: bool matrix) atomically.
    """
    import csv
    import io

    from ._io import write_bytes_atomic

    mech = runtime_of(plan)
    labels = plan["params"]["labels"]
    pos = {lab: i for i, lab in enumerate(labels)}
    tags = plan["params"].get("tags", [])
    try:
        with open(input_path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            if not reader.fieldnames or "item" not in reader.fieldnames:
                raise InputDataError(f"{input_path}: needs a header with column 'item'")
            items, utags = [], []
            for row in reader:
                v = row["item"]
                if v not in pos:
                    raise InputDataError(f"{input_path}: item {v!r} is not a label of the plan's domain")
                items.append(pos[v])
                t = (row.get("tag") or "").strip()
                if t and t not in tags:
                    raise InputDataError(f"{input_path}: tag {t!r} is not one of {tags}")
                utags.append(tags.index(t) if t else -1)
    except OSError as exc:
        raise InputDataError(f"{input_path}: {exc}") from None
    x = np.asarray(items, dtype=np.int64)
    if plan["mechanism"] == "pum":
        reports = mech.perturb(x, rng, private_tags=np.asarray(utags, dtype=np.int64))
    else:
        reports = mech.perturb(x, rng)
    buf = io.BytesIO()
    np.savez_compressed(buf, reports=reports, mechanism=np.array(plan["mechanism"]))
    write_bytes_atomic(output_path, buf.getvalue())
    return {"n": int(x.size)}


def estimate_file(plan: Mapping[str, Any], reports_path, method: str = "empirical") -> Table:
    """Estimate frequencies (empirical, eq. 3) from a reports ``.npz`` file."""
    mech = runtime_of(plan)
    try:
        with np.load(reports_path) as z:
            reports = z["reports"]
    except (OSError, KeyError, ValueError) as exc:
        raise InputDataError(f"{reports_path}: not a reports file ({exc})") from None
    try:
        freq = mech.estimate(reports, method)
    except ValueError as exc:
        raise InputDataError(f"{reports_path}: {exc}") from None
    labels = plan["params"]["labels"]
    n = int(reports.shape[0])
    return Table(f"Estimated frequencies ({method}, n = {n})", ["item", "frequency", "count"],
                 [[lab, float(f), float(f) * n] for lab, f in zip(labels, freq)])


# ============================================================================ simulation
GSS_SENSITIVE_CHOICES = {
    "lowed": ("educGroup", "<12 yrs"),
    "foreign": ("nativeBorn", "no"),
}


def _parse_epsilons(text: str, k: int) -> list[float]:
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if part in ("ln", "ln|X|"):
            out.append(math.log(k))
            continue
        try:
            v = float(part)
        except ValueError:
            raise SpecError("-O epsilons", "must be a comma-separated list of numbers > 0 (or 'ln' for ln|X|)", text) from None
        if not (v > 0 and math.isfinite(v) and v <= 30):
            raise SpecError("-O epsilons", "every epsilon must be in (0, 30]", text)
        out.append(v)
    if not out:
        raise SpecError("-O epsilons", "must list at least one epsilon", text)
    return sorted(set(out))


def _sim_data(plan, options: SimulateOptions, rng_seed) -> tuple[list[str], np.ndarray, list[int], str]:
    extra = options.extra
    if options.data:
        from .data import load_gss_vocab

        choice = extra.get("sensitive", "lowed")
        if choice not in GSS_SENSITIVE_CHOICES:
            raise SpecError("-O sensitive", f"must be one of {sorted(GSS_SENSITIVE_CHOICES)}", choice)
        field, value = GSS_SENSITIVE_CHOICES[choice]
        data = load_gss_vocab(options.data)
        fields = ("ageGroup", "educGroup", "gender", "nativeBorn")
        labels, x = data.joint_categories(fields)
        j = fields.index(field)
        sens = [i for i, lab in enumerate(labels) if lab.split("|")[j] == value]
        desc = (f"{Path(options.data).name}: X = ageGroup x educGroup x gender x nativeBorn ({len(labels)} categories), "
                f"X_S = {field} == {value!r} ({len(sens)} categories), n = {x.size}")
        return labels, x, sens, desc
    labels = plan["params"]["labels"]
    sens = list(plan["params"]["sensitive"])
    n = int(extra.get("n", 100000))
    k = len(labels)
    zipf = 1.0 / np.arange(1, k + 1)
    rng = np.random.default_rng(rng_seed)
    x = rng.choice(k, size=n, p=zipf / zipf.sum())
    return labels, x, sens, f"synthetic Zipf(1) over the plan's {k} labels, n = {n}"


def simulate(plan: Mapping[str, Any], options: SimulateOptions, progress=None) -> SimulationReport:
    """TV (l1/2) and MSE of RR, RAPPOR, uRR and uRAP with emp / emp+thr / EM vs epsilon (Fig. 5).

    With ``--data gss_vocab.csv``: X = ageGroup x educGroup x gender x nativeBorn (100 joint
    categories), the true distribution is the respondents' empirical distribution and every
    respondent is a user; X_S is chosen with ``-O sensitive=lowed`` (default: the 20
    categories with educGroup "<12 yrs", i.e. no high-school diploma) or ``foreign`` (the 50
    categories with nativeBorn "no"). Without data: a Zipf sample over the plan's domain and
    X_S (``-O n=...``). ``-O sample=iid`` (default) draws the n users of each trial i.i.d.
    from the true distribution, as the theory (eq. 37) assumes; ``sample=fixed`` perturbs
    the respondents as they are (less noise when epsilon is large). Options: ``-O epsilons=0.1,0.5,1,2,4,ln`` (``ln`` = ln|X|),
    ``-O methods=emp,thr,em``, ``-O em_tol=1e-6``, ``-O em_max_iter=300``, ``-O alpha=0.05``.
    MSE is the mean over symbols of the squared error (l2^2 / |X|), as in App. E.3.

    ``mode``: RR and uRR sample their report counts per true symbol with a multinomial in
    "aggregate" mode (same distribution); RAPPOR and uRAP always perturb every user with the
    runtime (EM needs the individual reports).
    """
    from ldpplan.mechanisms.pie import RandomizedResponse
    from ldpplan.mechanisms.uldp import BasicRAPPOR, UtilityOptimizedRAPPOR, UtilityOptimizedRR
    from ldpplan.solvers.uldp import LinearMarginals

    extra = dict(options.extra)
    root = np.random.SeedSequence(options.seed)
    data_seed, trial_seed = root.spawn(2)
    labels, x_data, sens, desc = _sim_data(plan, options, data_seed)
    x = x_data
    sample = extra.get("sample", "iid")
    if sample not in ("iid", "fixed"):
        raise SpecError("-O sample", "must be 'iid' or 'fixed'", sample)
    k = len(labels)
    n = int(x.size)
    p_true = np.bincount(x, minlength=k) / n
    eps_list = _parse_epsilons(extra.get("epsilons", "0.1,0.5,1,2,4,ln"), k)
    methods = [m.strip() for m in extra.get("methods", "emp,thr,em").split(",") if m.strip()]
    names = {"emp": "empirical", "thr": "threshold", "em": "em"}
    if not methods or any(m not in names for m in methods):
        raise SpecError("-O methods", "must be a comma-separated subset of emp,thr,em", extra.get("methods"))
    try:
        em_tol = float(extra.get("em_tol", 1e-6))
        em_max_iter = int(extra.get("em_max_iter", 300))
        alpha = float(extra.get("alpha", 0.05))
    except ValueError as exc:
        raise SpecError("-O em_tol/em_max_iter/alpha", str(exc), extra) from None
    mech_names = ["RR", "RAPPOR", "uRR", "uRAP"]
    trials = int(options.trials)
    total = trials * len(eps_list)
    tv = {(m, e, meth): [] for m in mech_names for e in eps_list for meth in methods}
    mse = {key: [] for key in tv}
    em_iters = {key: [] for key in tv if key[2] == "em"}
    em_conv = {key: [] for key in tv if key[2] == "em"}
    ks, kn = len(sens), k - len(sens)
    theory = {}
    seeds = trial_seed.spawn(total)
    t0 = time.perf_counter()
    step = 0
    for ei, eps in enumerate(eps_list):
        rr_p = _rr_grid(eps, k)
        g_urr = grid_urr(eps, ks)
        g_urap = grid_urap(eps)
        g_rap = _rappor_grid(eps)
        mechs = {
            "RR": RandomizedResponse(eps, k, mu=rr_p["p"]),
            "RAPPOR": BasicRAPPOR(k, g_rap["theta"], g_rap["psi"], eps),
            "uRR": UtilityOptimizedRR(k, sens, g_urr["c1"], g_urr["c2"], g_urr["c3"], eps),
            "uRAP": UtilityOptimizedRAPPOR(k, sens, g_urap["theta"], g_urap["d1"], g_urap["d2"], eps),
        }
        order = np.argsort(~np.isin(np.arange(k), sens), kind="stable")  # sensitive first
        p_sorted = p_true[order]
        theory[eps] = {
            "RR": LinearMarginals(k, 0, rr_p["q"], rr_p["p"] - rr_p["q"], 0, 1),
            "RAPPOR": LinearMarginals(k, 0, g_rap["psi"], g_rap["theta"] - g_rap["psi"], 0, 1),
            "uRR": LinearMarginals.urr(ks, kn, **g_urr),
            "uRAP": LinearMarginals.urap(ks, kn, **g_urap),
        }
        theory[eps] = {m: (model.expected_l1(p_sorted if m.startswith("u") else p_true, n) / 2,
                           model.expected_l2(p_sorted if m.startswith("u") else p_true, n) / k)
                       for m, model in theory[eps].items()}
        for t in range(trials):
            rng = np.random.default_rng(seeds[ei * trials + t])
            x = x_data if sample == "fixed" else rng.choice(k, size=n, p=p_true)
            for name, mech in mechs.items():
                if name in ("RR", "uRR") and options.mode == "aggregate":
                    q = mech.channel_matrix()
                    if name == "RR":
                        q = q.T  # PIE's channel is Q[y, x]
                    counts_x = np.bincount(x, minlength=k)
                    counts = np.zeros(k, dtype=np.int64)
                    for xi in np.flatnonzero(counts_x):
                        counts += rng.multinomial(counts_x[xi], q[xi])
                    reports = np.repeat(np.arange(k), counts)
                else:
                    reports = mech.perturb(x, rng)
                for meth in methods:
                    if meth == "em":
                        res = mech.estimate_em(reports, tol=em_tol, max_iter=em_max_iter)
                        est = res.freq
                        em_iters[(name, eps, meth)].append(res.iterations)
                        em_conv[(name, eps, meth)].append(res.converged)
                    else:
                        est = mech.estimate(reports, names[meth], alpha=alpha)
                    tv[(name, eps, meth)].append(0.5 * float(np.abs(est - p_true).sum()))
                    mse[(name, eps, meth)].append(float(np.mean((est - p_true) ** 2)))
            step += 1
            if progress is not None:
                progress(1, total)
    rows = []
    for eps in eps_list:
        for name in mech_names:
            row = [f"{eps:.4g}", name]
            for meth in methods:
                row += [float(np.mean(tv[(name, eps, meth)])), float(np.mean(mse[(name, eps, meth)]))]
            row += [theory[eps][name][0], theory[eps][name][1]]
            if "em" in methods:
                its = em_iters[(name, eps, "em")]
                row.append(f"{np.mean(its):.0f} ({sum(em_conv[(name, eps, 'em')])}/{len(its)})")
            rows.append(row)
    cols = ["epsilon", "mechanism"]
    for meth in methods:
        cols += [f"TV {meth}", f"MSE {meth}"]
    cols += ["TV emp theory", "MSE emp theory"] + (["EM iters (conv.)"] if "em" in methods else [])
    table = Table(f"TV and MSE vs epsilon (ULDP Fig. 5 / App. E.3): {desc}", cols, rows,
                  note=(f"Means over {trials} trials. TV = l1/2, MSE = l2^2/|X|. Theory: eq. (37) (asymptotic) and "
                        f"eqs. (46)/(48) (exact) for the empirical estimate. emp+thr: Bonferroni alpha = {alpha}. "
                        f"EM: SQUAREM-accelerated, warm start emp+thr, "
                        f"tol {em_tol:g} (l1 step), at most {em_max_iter} EM steps. Users: {sample}. "
                        f"{time.perf_counter() - t0:.1f} s."))
    data = {
        "dataset": desc, "sample": sample, "domain_size": k, "n_sensitive": ks, "n": n, "epsilons": eps_list, "methods": methods,
        "results": [{"epsilon": e, "mechanism": m, "method": meth, "tv": float(np.mean(tv[(m, e, meth)])),
                     "mse": float(np.mean(mse[(m, e, meth)])),
                     "tv_sd": float(np.std(tv[(m, e, meth)])),
                     **({"em_iterations_mean": float(np.mean(em_iters[(m, e, meth)])),
                         "em_converged": int(sum(em_conv[(m, e, meth)]))} if meth == "em" else {})}
                    for e in eps_list for m in mech_names for meth in methods],
        "theory_empirical": [{"epsilon": e, "mechanism": m, "tv": theory[e][m][0], "mse": theory[e][m][1]}
                             for e in eps_list for m in mech_names],
    }

    def plot(path: str) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, len(methods), figsize=(4.2 * len(methods), 3.6), squeeze=False)
        styles = {"RR": "o-", "RAPPOR": "s-", "uRR": "o--", "uRAP": "s--"}
        for ax, meth in zip(axes[0], methods):
            for m in mech_names:
                ax.plot(eps_list, [np.mean(tv[(m, e, meth)]) for e in eps_list], styles[m], label=m)
            ax.axvline(math.log(k), color="k", lw=2, alpha=0.4)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("epsilon")
            ax.set_ylabel("TV")
            ax.set_title({"emp": "emp", "thr": "emp+thr", "em": "EM"}[meth])
            ax.grid(True, which="both", alpha=0.3)
        axes[0][0].legend()
        fig.suptitle(f"TV vs epsilon ({k} categories, |X_S| = {ks}, n = {n})")
        fig.tight_layout()
        fig.savefig(path, dpi=120)
        plt.close(fig)

    return SimulationReport(tables=[table], data=data, plot=plot)

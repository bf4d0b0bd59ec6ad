"""ULDP planning: spec -> grid numbers (Def. 3 / Def. 4) -> plan format 2.0 -> verified plan."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Mapping

from .._common import attach_verification
from .._plan_format import envelope
from .numbers import grid_rappor, grid_urap, grid_urr, predicted_losses
from .spec import Resolved, parse_spec, resolve
from .verify import PROTECTED_URAP, verify

__all__ = ["plan_from_spec", "guarantee_of", "baselines_of", "solve_numbers"]


def solve_numbers(res: Resolved) -> dict[str, float]:
    """Grid numbers of the (common) mechanism: ``c1, c2, c3`` (uRR) or ``theta, d1, d2`` (uRAP)."""
    ks, k = res.n_sensitive_common, res.common_size
    if res.kind == "urr":
        return grid_urr(res.spec.epsilon, ks)
    return grid_urap(res.spec.epsilon, ks, k - ks, res.spec.theta)


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


def plan_from_spec(raw: Mapping[str, Any], *, base_dir: Path | None = None) -> dict[str, Any]:
    """Solve a ULDP spec into a verified plan (format 2.0).

    Returns
    -------
    dict
        ``params``: ``epsilon``, ``domain_size``, ``sensitive`` (indices of X_S), ``c1, c2, c3``
        (uRR) or ``theta, d1, d2`` (uRAP); a PUM adds ``common``, ``tags``,
        ``intermediate_size``, ``intermediate_sensitive`` (Z_S) and ``background``.
        ``guarantee`` (see :func:`guarantee_of`), ``predicted`` worst-case losses (Props. 5-8,
        16-19), ``baselines`` (RR, RAPPOR and the other utility-optimized mechanism).

    Raises
    ------
    SpecError
        Bad spec, or a budget the 2^-48 grid cannot meet.
    PrivacyViolation
        If the solved plan fails its own verification.
    """
    t0 = time.perf_counter()
    res = resolve(parse_spec(raw))
    numbers = solve_numbers(res)
    ks, k = res.n_sensitive_common, res.common_size
    params: dict[str, Any] = {"epsilon": res.spec.epsilon, "domain_size": res.size, "sensitive": list(res.sensitive),
                              **numbers}
    if res.spec.mechanism == "pum":
        params.update({"common": res.kind, "tags": list(res.tags), "intermediate_size": k,
                       "intermediate_sensitive": res.sensitive + list(range(res.size, k)),
                       "background": dict(res.background)})
    source = "ULDP Def. 3, eq. (6)" if res.kind == "urr" else "ULDP Def. 4, eqs. (8)-(10)"
    plan = envelope(
        mechanism=res.spec.mechanism, domain_size=res.size, labels=res.labels, params=params,
        guarantee=guarantee_of(res), predicted=predicted_losses(res.kind, params, ks, k - ks, res.spec.users),
        baselines=baselines_of(res),
        solver={"name": "closed form on the 2^-48 grid, exact Def. 2 check; worst-case loss by concave 1-D "
                        "maximisation", "status": "closed_form", "time_seconds": time.perf_counter() - t0,
                "certificate": {"kind": "closed form", "source": source}},
        spec=dict(raw))
    return attach_verification(plan, verify(plan))

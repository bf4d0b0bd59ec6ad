"""ULDP planning: spec -> grid numbers (Def. 3 / Def. 4) -> plan format 2.0 -> verified plan."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Mapping

from .._common import attach_verification
from .._plan_format import envelope
from .._solve_once import once
from ..errors import SpecError
from .claims import baselines_of, guarantee_of
from ._numbers import grid_urap, grid_urr, predicted_losses
from .spec import Resolved, parse_spec, resolve
from .verify import verify

#: ``grid_urr`` / ``grid_urap`` (the grid numbers of Def. 3 / Def. 4) are re-exported for notebooks and tools
__all__ = ["build_plan", "solve_numbers", "grid_urr", "grid_urap"]


def solve_numbers(res: Resolved) -> dict[str, float]:
    """Grid numbers of the (common) mechanism: ``c1, c2, c3`` (uRR) or ``theta, d1, d2`` (uRAP)."""
    ks, k = res.n_sensitive_common, res.common_size
    if res.kind == "urr":
        return grid_urr(res.spec.epsilon, ks)
    return grid_urap(res.spec.epsilon, ks, k - ks, res.spec.theta)


def build_plan(raw: Mapping[str, Any], *, base_dir: Path | None = None) -> dict[str, Any]:
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
        Bad spec, or a budget the 2^-48 grid cannot meet; a ``[shuffle]`` block (the amplification
        theorems are for epsilon0-LDP randomizers, and non-sensitive outputs are released as they are).
    PrivacyViolation
        If the solved plan fails its own verification.
    """
    block = raw.get("shuffle") if isinstance(raw, Mapping) else None
    if block is not None:
        raise SpecError("shuffle", "is not available for ULDP plans (non-sensitive outputs are released as they "
                        "are, so the amplification theorems for epsilon0-LDP randomizers do not apply)", block)
    t0 = time.perf_counter()
    res = once(resolve, once(parse_spec, raw), memo_key=raw)  # keyed by the spec's mapping
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

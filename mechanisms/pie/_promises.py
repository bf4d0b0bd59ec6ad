"""What a PIE (rr/glh) plan's embedded spec promises, read by the runtime (numpy + stdlib only).

The spec keys that determine the guarantee: mechanism, the domain, n, releases, the prior bound, ``g_max`` and the target. See :mod:`ldpplan.mechanisms._promises`.
"""
from __future__ import annotations

from typing import Any, Mapping

from .._plan import PlanError
from .._promises import spec_of, spec_domain, same, is_int, is_number, check_domain, recorded

__all__ = ["pie_promises"]


def pie_promises(plan: Mapping[str, Any]) -> dict[str, Any]:
    """Check a PIE plan's mechanism, domain, n, releases, prior bound and ``g`` against its spec.

    Returns
    -------
    dict
        The spec's ``target`` (``epsilon``, ``alpha_bits`` or ``bayes_error``, None when not
        set) and ``epsilon_max``: the caller checks the numbers against them.
    """
    spec = spec_of(plan)
    mech = spec.get("mechanism")
    if mech not in ("pie", plan["mechanism"]):
        raise PlanError(f"mechanism: must match the embedded spec ({mech!r:.40}) (got {plan['mechanism']!r})")
    value = spec.get("domain") if spec.get("domain") is not None else spec.get("domain_size")
    size, labels = spec_domain(value, "spec.domain", high=2**62)  # the k-RR's cap (O(1) memory in |X|)
    check_domain(plan, size, labels, "spec.domain")
    users = spec.get("users") if spec.get("users") is not None else spec.get("n")
    if isinstance(users, Mapping):
        users = recorded(plan, "users (n)")
    if not is_int(users):
        raise PlanError(f"spec.users: must be an integer (got {users!r:.40})")
    same("guarantee.n", plan["guarantee"].get("n"), int(users))
    same("guarantee.releases", plan["guarantee"].get("releases"), spec.get("releases", 1))
    target = spec.get("target")
    if not isinstance(target, Mapping):
        raise PlanError("spec.target: must be an object (bayes_error, alpha_bits or epsilon)")
    prior = target.get("max_prior")
    if isinstance(prior, Mapping):
        prior = recorded(plan, "target.max_prior")
    prior = 1.0 / int(users) if prior is None else prior
    same("guarantee.max_prior", plan["guarantee"].get("max_prior"), prior)
    g_max = spec.get("g_max", 2**31 - 1)
    if plan["mechanism"] == "glh" and not (is_int(g_max) and plan["params"].get("g", 0) <= g_max):
        raise PlanError(f"params.g: must be <= the spec's g_max = {g_max!r:.40} (got {plan['params'].get('g')!r})")
    out = {key: target.get(key) for key in ("epsilon", "alpha_bits", "bayes_error")}
    out["epsilon_max"] = spec.get("epsilon_max", 30.0)
    for key, v in out.items():
        if v is not None and not is_number(v):
            raise PlanError(f"spec.target.{key}: must be a number (got {v!r:.40})")
    return out

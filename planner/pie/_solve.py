"""Solve a parsed PIE spec: the RR and GLH candidates and the choice between them.

Shared by :mod:`.plan` (to build a plan) and :mod:`.verify` (to check that a plan's ``g``,
epsilon and mechanism are the spec's solution).
"""
from __future__ import annotations

from decimal import Decimal, localcontext
from typing import Any, Mapping

from .._exact import SAFETY_MARGIN, exact, float_down, log_exact, shrink
from ..errors import SpecError
from .spec import HASH_PRIME_LARGE, ParsedSpec
from ...solvers import SolverError
from ...solvers.pie import solve_glh, solve_rr
from ..shuffle import local_epsilon_for

__all__ = ["alpha_budget", "solve", "select", "shuffled_local_epsilon"]


def alpha_budget(spec: ParsedSpec) -> float:
    """The target alpha (bits), exact for a Bayes-error target (no cancellation), shrunk."""
    t = spec.target
    if t.alpha_bits is not None:
        return shrink(t.alpha_bits)
    with localcontext() as ctx:
        ctx.prec = 60
        prior = exact(t.max_prior) if t.max_prior is not None else exact(1) / spec.n
        prior_bits = -log_exact(prior) / Decimal(2).ln()
        assert t.bayes_error is not None  # the spec sets exactly one target (spec.py); not alpha_bits here
        alpha = (1 - Decimal(t.bayes_error)) * prior_bits - 1
        return float_down(alpha * (1 - Decimal(SAFETY_MARGIN)))


def solve(spec: ParsedSpec, mechanism: str):
    t, m = spec.target, spec.model
    eps: float | None
    if t.central_epsilon is not None:
        eps = shrink(shuffled_local_epsilon(spec, mechanism))
        alpha = None
    else:
        alpha = None if t.epsilon is not None else alpha_budget(spec)
        eps = shrink(t.epsilon) if t.epsilon is not None else None
    if mechanism == "rr":
        return solve_rr(n=spec.n, domain_size=spec.domain_size, alpha_bits=alpha, epsilon=eps,
                        releases=m.releases, epsilon_max=m.epsilon_max)
    return solve_glh(n=spec.n, domain_size=spec.domain_size, g_max=m.g_max, alpha_bits=alpha, epsilon=eps,
                     releases=m.releases, epsilon_max=m.epsilon_max)


def shuffled_local_epsilon(spec: ParsedSpec, mechanism: str) -> float:
    """The largest epsilon0 whose shuffled bound meets ``target.central_epsilon`` (:mod:`planner.shuffle`).

    k-RR gets the randomizer-specific bound (binary RR when ``|X| = 2``); GLH the generic
    epsilon0-LDP bounds (FMT21). Raises SpecError when the target is out of reach.
    """
    rr = mechanism == "rr"  # plan names; GLH: the generic bounds (no mechanism, no domain size)
    block, central = spec.model.shuffle, spec.target.central_epsilon
    assert block is not None and central is not None  # spec.py: central_epsilon needs a [shuffle] block
    try:
        return local_epsilon_for(central, block.delta, block.n, mechanism="rr" if rr else None,
                                 domain_size=spec.domain_size if rr else None)
    except ValueError as exc:
        raise SpecError("target.central_epsilon", str(exc), spec.target.central_epsilon) from None


def select(spec: ParsedSpec, raw: Mapping[str, Any]):
    requested = spec.model.mechanism
    results = {}
    for name in ("rr", "glh"):  # the one not requested is a baseline
        if name == "glh" and spec.domain_size > HASH_PRIME_LARGE:
            if requested == "glh":
                raise SpecError("domain", f"the GLH hashes at most {HASH_PRIME_LARGE} items (its hash prime)",
                                spec.domain_size)
            continue  # no hash family for so large a domain: not a candidate
        try:
            results[name] = solve(spec, name)
        except SolverError as exc:
            if requested == name or (requested == "pie" and name == "rr"):
                raise SpecError("target", str(exc), dict(raw.get("target", {}))) from None
    if requested == "pie":
        chosen = "rr" if "glh" not in results or results["rr"].objective <= results["glh"].objective else "glh"
        other = "glh" if chosen == "rr" else "rr"
        reason = (f"{chosen.upper()} has the smaller predicted total l2 loss ({results[chosen].objective:.4g}"
                  + (f" vs {results[other].objective:.4g}" if other in results else "")
                  + ") under the same target; ties go to RR (shorter reports)")
    else:
        chosen, reason = requested, "requested in the spec"
    return results, chosen, reason

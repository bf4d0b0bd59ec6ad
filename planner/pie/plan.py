"""Solve a PIE spec into a plan 2.0 for the k-ary RR or the GLH.

Safe side: the target budget (alpha in bits, computed exactly from a Bayes-error target,
or epsilon) is shrunk by :data:`~ldpplan.planner._exact.SAFETY_MARGIN` before the closed-form
inversion (:mod:`ldpplan.solvers.pie`); the keep probability is the runtime's
:func:`~ldpplan.mechanisms.pie.keep_probability` of the solved epsilon (rounded down to the
``2**-48`` grid, exact); every claim in ``guarantee`` is then computed exactly from ``mu``
(:func:`.verify.exact_guarantee`) and rounded to the safe float (epsilon and alpha up,
the Bayes-error bound down).
"""
from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any, Mapping

from .._plan_format import envelope
from .._solve_once import once
from ..errors import SpecError
from .claims import SOURCES, baseline_of, claimed_numbers, exact_guarantee, predicted_of, unshuffled_baseline
from .spec import parse_spec
from ._exact import NOTION, hash_params
from ._solve import select
from ...mechanisms.pie import keep_probability

__all__ = ["build_plan"]

def build_plan(raw: Mapping[str, Any], *, base_dir: Path | None = None) -> dict[str, Any]:
    """Solve a PIE spec into an (unverified) plan 2.0 dict.

    Returns
    -------
    dict
        ``params.{epsilon, domain_size, mu, g (GLH), hash (GLH)}``; ``guarantee.{notion, epsilon,
        alpha_bits, alpha_nats, bayes_error_lower_bound, n, releases, max_prior, prior, theta, ...}``;
        ``predicted`` l2 losses; ``baselines`` (the RR and GLH candidates).

    Raises
    ------
    SpecError
        Invalid spec, unreachable target, or an epsilon too small for the 2^-48 grid.
    """
    spec = once(parse_spec, raw, base_dir=base_dir)
    k, n, t = spec.domain_size, spec.n, spec.model.releases
    results, chosen, reason = once(select, spec, raw, memo_key=raw)  # keyed by the mapping spec is parsed from
    res = results[chosen]
    eps_design = float(res.parameters["epsilon"])
    g = int(res.parameters["g"]) if chosen == "glh" else None
    symbols = g if g is not None else k
    mu = keep_probability(eps_design, symbols)
    if not (mu * symbols > 1.0):
        raise SpecError("target", f"gives epsilon = {eps_design:.6g}, too small for the 2^-48 probability grid with "
                        f"{symbols} symbols (the keep probability rounds to <= 1/{symbols})", dict(raw.get("target", {})))
    max_prior = spec.max_prior if spec.max_prior is not None else 1.0 / n
    ex = exact_guarantee(mu, symbols, k, n, t, max_prior)
    bayes = ex["bayes"]
    tgt = spec.target
    if tgt.bayes_error is not None and (bayes is None or bayes < Decimal(tgt.bayes_error)):
        raise SpecError("target.bayes_error", "cannot be met on the 2^-48 probability grid", tgt.bayes_error)
    params: dict[str, Any] = {"epsilon": eps_design, "domain_size": k, "mu": mu}
    if g is not None:
        params.update({"g": g, "hash": hash_params(k, g)})
    guarantee = {"notion": NOTION, **claimed_numbers(ex, tgt),
                 "prior": "uniform" if spec.max_prior is None else "max_prior", "max_prior": max_prior,
                 "n": n, "releases": t, "sources": SOURCES}
    solver = {"name": res.solver, "status": res.status, "time_seconds": res.time_seconds, "objective": res.objective,
              "certificate": res.certificate.to_dict(),
              "selection": {"requested": spec.model.mechanism, "chosen": chosen, "reason": reason,
                            "epsilon_binding": str(res.extra["binding"])}}
    predictions = predicted_of(chosen, float(ex["epsilon"]), k, n, g, float(ex["theta"]))
    if tgt.central_epsilon is not None:
        predictions.update(unshuffled_baseline(chosen, spec, predictions["l2_loss_total"]["value"]))
    return envelope(mechanism=chosen, domain_size=k, labels=spec.labels, params=params, guarantee=guarantee,
                    predicted=predictions,
                    baselines=[baseline_of(name, r, spec, chosen) for name, r in results.items()],
                    solver=solver, spec=dict(raw), planning_inputs=spec.planning_inputs)

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

import math
from decimal import Decimal
from pathlib import Path
from typing import Any, Mapping

from .._plan_format import envelope, predicted
from ..errors import SpecError
from .spec import ParsedSpec, parse_spec
from ._exact import HASH_PARAMS, NOTION, claimed_numbers, exact_guarantee
from ._solve import select

__all__ = ["build_plan", "report_bits", "SOURCES"]

SOURCES = "Def. 3.1 (bits), Thm. 4.2/4.4 x t (Thm. 4.3/4.5), Prop. 4.1, Cor. 3.9"
_UNIT_L2 = "squared frequency (sum over X of E[(p(x) - p_hat(x))^2], any p: eq. 22/23 are affine in p(x))"


def report_bits(mechanism: str, domain_size: int, g: int | None) -> int:
    """Bits of one report: ``ceil(log2 |X|)`` (RR) or the hash seed (2 x 31 bits) plus ``ceil(log2 g)`` (GLH)."""
    if mechanism == "rr":
        return int(math.ceil(math.log2(domain_size)))
    return 2 * 31 + int(math.ceil(math.log2(g)))


def _predictions(mechanism: str, epsilon: float, k: int, n: int, g: int | None, theta: float) -> dict[str, Any]:
    from ...solvers.pie import l2_loss_glh, l2_loss_glh_limit, l2_loss_rr, total_l2_loss_glh, total_l2_loss_rr

    if mechanism == "rr":
        src = "Prop. 4.6 (eq. 22) at the realised epsilon"
        zero, one, total = l2_loss_rr(epsilon, k, n, 0.0), l2_loss_rr(epsilon, k, n, 1.0), total_l2_loss_rr(epsilon, k, n)
    else:
        src = "Prop. 4.7 (eq. 23) at the realised epsilon"
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


def _baseline(name: str, res, spec: ParsedSpec, chosen: str) -> dict[str, Any]:
    p = res.parameters
    g = int(p["g"]) if "g" in p else None
    src = "Prop. 4.6 (eq. 22)" if name == "rr" else "Prop. 4.7 (eq. 23)"
    return {"name": name, "mechanism": name, "chosen": name == chosen, "epsilon": float(p["epsilon"]), "g": g,
            "alpha_bits": float(res.extra["alpha_bits"]), "epsilon_binding": str(res.extra["binding"]),
            "predicted": {"l2_loss_total": predicted(res.objective, _UNIT_L2, src + " at the design epsilon"),
                          "report_bits": predicted(report_bits(name, spec.domain_size, g), "bits", "Sec. 4.4")}}


def _unshuffled_baseline(mechanism: str, spec, shuffled_loss: float) -> dict[str, Any]:
    """The same mechanism spending ``target.central_epsilon`` locally (no shuffler): its loss and the gain."""
    from ...solvers.pie import solve_glh, total_l2_loss_rr

    central, k, n = spec.target.central_epsilon, spec.domain_size, spec.n
    if mechanism == "rr":
        loss, src = total_l2_loss_rr(central, k, n), "Prop. 4.6 (eq. 22) at epsilon = target.central_epsilon, no shuffler"
    else:
        loss = solve_glh(n=n, domain_size=k, g_max=spec.model.g_max, epsilon=central,
                         releases=spec.model.releases, epsilon_max=spec.model.epsilon_max).objective
        src = "Prop. 4.7 (eq. 23), best g at epsilon = target.central_epsilon, no shuffler"
    return {"l2_loss_total_without_shuffler": predicted(loss, _UNIT_L2, src),
            "shuffler_gain": predicted(loss / shuffled_loss, "ratio",
                                       "l2_loss_total_without_shuffler / l2_loss_total at the same central epsilon")}


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
    from ...mechanisms.pie import keep_probability

    spec = parse_spec(raw, base_dir)
    k, n, t = spec.domain_size, spec.n, spec.model.releases
    results, chosen, reason = select(spec, raw)
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
        params.update({"g": g, "hash": dict(HASH_PARAMS)})
    guarantee = {"notion": NOTION, **claimed_numbers(ex, tgt),
                 "prior": "uniform" if spec.max_prior is None else "max_prior", "max_prior": max_prior,
                 "n": n, "releases": t, "sources": SOURCES}
    solver = {"name": res.solver, "status": res.status, "time_seconds": res.time_seconds, "objective": res.objective,
              "certificate": res.certificate.to_dict(),
              "selection": {"requested": spec.model.mechanism, "chosen": chosen, "reason": reason,
                            "epsilon_binding": str(res.extra["binding"])}}
    predictions = _predictions(chosen, float(ex["epsilon"]), k, n, g, float(ex["theta"]))
    if tgt.central_epsilon is not None:
        predictions.update(_unshuffled_baseline(chosen, spec, predictions["l2_loss_total"]["value"]))
    return envelope(mechanism=chosen, domain_size=k, labels=spec.labels, params=params, guarantee=guarantee,
                    predicted=predictions,
                    baselines=[_baseline(name, r, spec, chosen) for name, r in results.items()],
                    solver=solver, spec=dict(raw), planning_inputs=spec.planning_inputs)


def read_inputs(plan: Mapping[str, Any], path):
    """Users' items (int64 indices, shape (n,)) from a CSV with a column ``item``, one row per user
    (:func:`ldpplan.planner.data.read_item_column`)."""
    from ..data import concat_chunks

    return concat_chunks(list(iter_inputs(plan, path)))


def iter_inputs(plan: Mapping[str, Any], path, *, skip_empty: bool = False, chunk_rows: int | None = None):
    """Users' items streamed from a CSV or Parquet file with a column ``item``: an ``InputStream`` of
    int64 index chunks (:func:`ldpplan.planner.data.item_stream`; empty items refused unless ``skip_empty``)."""
    from ..data import DEFAULT_CHUNK_ROWS, item_stream

    return item_stream(path, plan["domain"]["labels"], int(plan["domain"]["size"]), skip_empty=skip_empty,
                       chunk_rows=DEFAULT_CHUNK_ROWS if chunk_rows is None else chunk_rows)

"""Plan dicts for SMP over categorical and numeric attributes: build, verify exactly, load (issue 30, numeric).

A records spec with ``mechanism = "smp"`` (or ``"records"``: SMP is the only scheme that accepts a
``range``) whose attributes hold numeric ones is planned by :func:`.._mixed.mixed_smp` and written as
a plan 2.0 dict of mechanism ``"smp-mixed"`` (:data:`MECHANISM`). ``params`` holds everything the
runtime needs: ``epsilon``, ``names``, ``kinds`` (``"categorical"``/``"numeric"``), per attribute
``domain_sizes`` (a categorical attribute's ``k``, a numeric one's input-grid size), ``oracles``
(the oracle or the numeric mechanism), ``numbers`` (a categorical oracle's grid number, None for a
numeric attribute), ``channels`` (a numeric attribute's exact channel: ``low``, ``high``,
``input_grid``, ``output_values``, integer ``numerators`` over 2^48, ``component_weights``,
``component_sizes``; None for a categorical one), ``epsilons`` and ``sampling`` (``pi_j`` on the grid).

:func:`verify_mixed` re-derives the plan from its embedded spec (the same solver, the same grid) and
requires the plan's numbers to equal them bit for bit, then decides the record's epsilon from the
plan's own numbers as an exact rational (the largest attribute's worst ratio: a numeric channel's
decisive column ``max N / min N``, GRR ``P (k-1)/(1-P)``, OUE ``(1-q)/q``) against the budget with
50-digit logarithms; the guarantee is recomputed, never read. :func:`load_mixed` rebuilds the numpy
runtime, whose constructor refuses numbers whose exact ratio exceeds the claim.

Status: these plans are not yet registered with the CLI (``ldpplan plan`` still refuses a ``range``
in one line); :data:`MECHANISM` is no registered runtime class, so the cross-family tests do not
run over it.

References
----------
N. Wang et al., ICDE 2019, Sec. III-IV; Arcolezi, Couchot, Al Bouna, Xiao, CIKM 2021, Sec. 2.3.
"""
from __future__ import annotations

import os
from typing import Any, Mapping

import numpy as np

from ...mechanisms import Aggregate, PlanError
from ...mechanisms.numeric.runtime import NumericChannel
from ...mechanisms.records._mixed import MIXED_MECHANISM, MixedSampledRecord
from .._exact import log_exact, log_ratio_slack, ratio_within
from .._plan_format import envelope
from .._report import Verification
from ..errors import SpecError
from ._mixed import MixedPlan, mixed_smp, perturb_records_file

__all__ = ["MECHANISM", "build_mixed_plan", "verify_mixed", "load_mixed", "perturb_plan_file"]

#: the plan mechanism of SMP over a record with numeric attributes
MECHANISM = MIXED_MECHANISM


def _solver_spec(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The records spec without the keys :func:`mixed_smp` does not read; SMP only."""
    if not isinstance(raw, Mapping):
        raise SpecError("spec", "must be a table of keys", type(raw).__name__)
    mechanism = raw.get("mechanism", "smp")
    if mechanism not in ("smp", "records"):
        raise SpecError("mechanism", "numeric attributes are planned under SMP only ('smp' or 'records')", mechanism)
    return {k: v for k, v in raw.items() if k not in ("mechanism", "description")}


def _channel(part: NumericChannel) -> dict[str, Any]:
    """A numeric attribute's exact channel as JSON numbers (integers stay integers)."""
    return {"low": float(part.low), "high": float(part.high),
            "input_grid": [float(x) for x in part.input_grid], "output_values": [float(x) for x in part.output_values],
            "numerators": [int(x) for x in part.numerators],
            "component_weights": [int(x) for x in part.component_weights],
            "component_sizes": [int(x) for x in part.component_sizes]}


def _params(plan: MixedPlan, epsilon: float) -> dict[str, Any]:
    rt = plan.runtime
    numeric = [isinstance(part, NumericChannel) for part in rt.parts]
    return {"epsilon": float(epsilon), "names": list(rt.names),
            "kinds": ["numeric" if n else "categorical" for n in numeric],
            "domain_sizes": [int(part.domain_size) for part in rt.parts], "oracles": list(plan.mechanisms),
            "numbers": [None if n else float(part.number) for n, part in zip(numeric, rt.parts)],
            "channels": [_channel(part) if n else None for n, part in zip(numeric, rt.parts)],
            "epsilons": [float(part.epsilon) for part in rt.parts], "sampling": list(rt.sampling)}


def _guarantee(rt: MixedSampledRecord) -> dict[str, Any]:
    levels = rt.privacy_map()["levels"]
    return {"notion": "LDP", "epsilon": rt.epsilon, "attribute_epsilons": [levels[n] for n in rt.names]}


def build_mixed_plan(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Plan a records spec with numeric attributes under SMP into an (unverified) plan 2.0 dict.

    Parameters
    ----------
    raw : mapping
        A records spec (``mechanism`` ``"smp"`` or ``"records"``, ``epsilon``, ``attributes`` with
        ``range = [low, high]`` for a numeric attribute).

    Returns
    -------
    dict
        Mechanism :data:`MECHANISM`; ``params`` as the module docstring; ``guarantee``: the record's
        realized epsilon (exact, rounded up) and each attribute's; ``predicted``: ``n Var_j`` per
        attribute and the weighted sum; ``baselines``: uniform ``pi``; ``solver``: the certificate.

    Raises
    ------
    SpecError
        A bad key (named), a scheme other than SMP, or a budget the grid cannot meet.

    References
    ----------
    Wang et al., ICDE 2019, Sec. IV; Arcolezi et al., CIKM 2021, Sec. 2.3.
    """
    spec = _solver_spec(raw)
    plan = mixed_smp(spec)
    rt = plan.runtime
    labels = [f"{name}={v}" for name, size, values in zip(rt.names, (p.domain_size for p in rt.parts), plan.labels)
              for v in (values if values is not None else range(size))]
    c = plan.optimum.certificate
    solver = {"name": "records, SMP with numeric attributes: Cauchy-Schwarz pi", "status": "optimal",
              "certificate": {"kind": c.kind, "lower_bound": float(c.lower_bound), "upper_bound": float(c.upper_bound),
                              "gap": float(c.gap)}, "safety_margin": plan.margin}
    predicted = {"variances": list(plan.variances), "weighted_variance": plan.weighted_variance}
    baselines = [{"name": "smp-uniform", "weighted_variance": float(plan.uniform.weighted_variance)}]
    return envelope(mechanism=MECHANISM, domain_size=len(labels), labels=labels,
                    params=_params(plan, float(spec["epsilon"])), guarantee=_guarantee(rt), predicted=predicted,
                    baselines=baselines, solver=solver, spec=dict(raw))


def load_mixed(plan: Mapping[str, Any]) -> MixedSampledRecord:
    """The numpy runtime of a ``smp-mixed`` plan: :meth:`MixedSampledRecord.from_plan` (its constructor decides
    the claim exactly, conservatively).

    Raises
    ------
    PlanError
        Wrong mechanism, malformed params, or numbers whose worst ratio exceeds ``guarantee.epsilon``.
    """
    return MixedSampledRecord.from_plan(plan)


def verify_mixed(plan: Mapping[str, Any]) -> Verification:
    """Re-derive the plan from its spec, decide the record's epsilon exactly, recompute the claims.

    Returns
    -------
    Verification
        ``holds`` with ``epsilon_effective``, ``slack_nats`` and ``attribute_epsilons`` in ``details``,
        or the first failure naming the field.
    """
    try:
        spec = _solver_spec(plan["spec"])
        want = build_mixed_plan(plan["spec"])
    except SpecError as exc:
        return Verification(False, f"spec: the embedded spec is invalid or cannot be planned ({exc})", {})
    if plan.get("mechanism") != MECHANISM:
        return Verification(False, f"mechanism: must be {MECHANISM!r} (got {plan.get('mechanism')!r})", {})
    for key in want["params"]:
        if plan["params"].get(key) != want["params"][key]:
            return Verification(False, f"params.{key}: must be the numbers re-derived from the embedded spec", {})
    if plan["domain"] != want["domain"]:
        return Verification(False, "domain: must be the embedded spec's attribute domains, 'name=value'", {})
    try:
        rt = load_mixed(plan)
    except (PlanError, ValueError) as exc:
        return Verification(False, str(exc), {})
    ratio = rt.exact_ratio()
    epsilon = float(spec["epsilon"])
    details = {"epsilon_effective": float(log_exact(ratio)), "slack_nats": float(log_ratio_slack(ratio, epsilon)),
               "attribute_epsilons": [float(log_exact(r)) for r in rt.attribute_ratios()]}
    if not ratio_within(ratio, epsilon):
        return Verification(False, f"LDP: the record's epsilon {details['epsilon_effective']!r} > epsilon {epsilon!r}",
                            details)
    for key in ("guarantee", "predicted", "baselines"):
        if plan[key] != want[key]:
            return Verification(False, f"{key}: must be the claims recomputed from the plan's numbers", details)
    return Verification(True, f"{epsilon:g}-LDP of the whole record (smp, {len(rt.names)} attributes, numeric "
                              f"included) holds exactly: epsilon = {details['epsilon_effective']:.15g}", details)


def perturb_plan_file(plan: Mapping[str, Any], path: str | os.PathLike, rng: np.random.Generator, *,
                      skip_empty: bool = False, chunk_rows: int | None = None) -> Aggregate:
    """Perturb a multi-column CSV (or Parquet) file through a ``smp-mixed`` plan and aggregate (mergeable).

    The plan is loaded (:func:`load_mixed`: the claim re-decided); the columns are named as the
    attributes: a categorical cell is one of the spec's labels (an index for a count domain), a
    numeric cell a number in user units (clipped to the range). As :func:`.._mixed.perturb_file`.

    Raises
    ------
    PlanError
        A plan :func:`load_mixed` refuses.
    InputDataError
        Missing file or column, a bad cell (naming the line), empty cells without ``skip_empty``.

    References
    ----------
    Wang et al., ICDE 2019, Sec. IV (one sampled attribute per user).
    """
    runtime = load_mixed(plan)
    domains = [a.get("domain") if isinstance(a, Mapping) else None for a in plan["spec"]["attributes"]]
    labels = [list(d) if isinstance(d, list) and not runtime.is_numeric(j) else None for j, d in enumerate(domains)]
    return perturb_records_file(runtime, labels, path, rng, skip_empty=skip_empty, chunk_rows=chunk_rows)

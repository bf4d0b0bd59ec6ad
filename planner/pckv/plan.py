r"""PCKV spec -> plan (format 2.0): allocate, round to the grid, choose mechanism and ``L``.

Plan fields (PCKV part; see ``planner/schemas/pckv.schema.json``):

* ``params``: ``a``, ``b``, ``p``, ``epsilon1``, ``epsilon2`` (nats, each the smallest float
  that holds exactly for ``a, b, p``), ``padding_length`` (``L``), ``domain_size`` (``d``),
  ``values``, ``out_of_domain_keys`` (runtime input handling);
* ``guarantee``: ``{"notion": "LDP", "epsilon": composed budget of Theorem 2/3, "epsilon1", "epsilon2"}``;
* ``predicted``: Theorem 4 MSEs (``mse_frequency``, ``mse_mean``) and approximations (17)-(18);
* ``baselines``: every (mechanism, allocation) candidate at the plan's ``epsilon`` and ``L``
  with its predicted errors (``role``: ``"plan"``, ``"candidate"`` for the Sec. 5.4 choice,
  ``"comparison"`` for the other allocations);
* ``solver``: allocation method and source, mechanism choice, padding-length search.
"""
from __future__ import annotations

import math
import time
from functools import partial
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from .._plan_format import envelope
from .._solve_once import once
from ..errors import SpecError, InputDataError
from ._allocation import GridAllocation, solve_on_grid
from .claims import COMPOSITION, baseline_of, choose, guarantee_of, predicted_of
from ._model import PlanningData, build_model, length_search_key, read_spec_data
from .spec import ALLOCATIONS, PCKVSpec, parse_spec, private_phase, required_private_phase
from ...solvers import SolverError, pckv as S
from .._exact import shrink
from ..data import map_key_value_data
from ._private_length import private_key_model, run_phase_one

__all__ = ["build_plan", "domain_of"]

def domain_of(spec: PCKVSpec, pdata: PlanningData) -> tuple[int, list[str] | None]:
    """``(d, labels)`` of the spec (``"data"``: the distinct keys of the data file)."""
    dv = spec.domain_value
    if dv == "data":
        if pdata.data is None:
            raise SpecError(spec.domain_field, "\"data\" needs the spec's data file (data = ...)", dv)
        labels = list(pdata.data.labels)
        if len(labels) < 2:
            raise SpecError(spec.domain_field, "the data must hold at least 2 distinct keys", len(labels))
        return len(labels), labels
    if isinstance(dv, list):
        return len(dv), spec.labels()
    return int(dv), None


def _finite_or_none(node: Any) -> Any:
    """JSON-strict copy: non-finite floats (e.g. a closed form's ``-inf`` lower bound) become None."""
    if isinstance(node, float):
        return node if math.isfinite(node) else None
    if isinstance(node, Mapping):
        return {k: _finite_or_none(v) for k, v in node.items()}
    if isinstance(node, (list, tuple)):
        return [_finite_or_none(v) for v in node]
    return node


def _padding_length(spec: PCKVSpec, mech: str, d: int, model, weights,
                    phase_one: dict | None = None, source: Path | None = None) -> tuple[int, dict | None]:
    phase = private_phase(spec)
    if isinstance(spec.padding_length, int):  # a fixed L (neither "auto" nor the private route)
        return int(spec.padding_length), None
    bound = phase.max if phase is not None else spec.max_padding_length
    try:
        key = length_search_key(spec, mech, source)  # None: the private route, not shared with verify
        search = S.choose_padding_length if key is None else partial(once, S.choose_padding_length, memo_key=key)
        sel = search(mech, shrink(spec.epsilon), domain_size=d, model=model, method=spec.allocation,
                     weights=weights, max_padding_length=bound)
    except (SolverError, ValueError) as exc:
        raise SpecError("padding_length", f"\"auto\" must find an L with a finite predicted error ({exc})",
                        "auto") from None
    L = int(sel.parameters["padding_length"])
    rows = _finite_or_none([{k: (float(v) if isinstance(v, (float, np.floating)) else v) for k, v in r.items()}
                            for r in sel.extra["candidates"]])
    out = {"chosen": L, "max_padding_length": bound, "at_search_bound": L == bound,
           "model": "minimise w_f*MSE_f + w_m*MSE_m over L = 1..max: Theorem 4 at the sampled frequency f_s(L) "
                    "plus the truncation bias (f_s(L) - f)^2 of eq. (7); f_s exact from data, else rho(L) f",
           "candidates": rows}
    if phase_one is not None:
        out["private"] = phase_one
        out["model"] += ("; private route: rho(L) from the phase-1 estimated set-size distribution, key "
                         "frequencies and means from the priors, n = phase-2 users")
    return L, out


def _planning_inputs(spec: PCKVSpec, pdata: PlanningData, phase_one: dict | None = None) -> list[dict[str, Any]]:
    src = str(pdata.path)
    if phase_one is not None:
        out = []
        if spec.domain_value == "data":
            out.append({"what": "key domain: the distinct keys of the data", "source": src, "private": False})
        out.append({"what": "set-size distribution", "source": phase_one["source"], "private": True,
                    "epsilon": phase_one["epsilon"], "user_share": phase_one["user_share"],
                    "phase1_users": phase_one["phase1_users"], "max": phase_one["max"]})
        return out
    if pdata.path is None:
        return []
    out = []
    if spec.domain_value == "data":
        out.append({"what": "key domain: the distinct keys of the data", "source": src, "private": False})
    if spec.padding_length == "auto":
        out.append({"what": "set sizes (pairs per user) for padding_length = \"auto\"", "source": src, "private": False})
    if spec.allocation == "numeric":
        out.append({"what": "key frequencies and value means for the numeric allocation", "source": src,
                    "private": False})
    out.append({"what": "key frequencies, value means and set sizes for the predicted errors and the mechanism choice",
                "source": src, "private": False})
    return out


def _private_model(spec: PCKVSpec, d: int, labels, pdata: PlanningData):
    """Phase 1 (spec counts, or simulated on the data), then the private key model at the phase-2 n."""
    phase = required_private_phase(spec)
    sizes = None
    if phase.counts is None:
        if pdata.data is None:
            raise SpecError("padding_length.private", "needs counts (a real phase 1) or data (to simulate phase 1)",
                            None)
        try:
            indptr, _, _, _ = map_key_value_data(pdata.data, labels, d, out_of_domain_keys=spec.out_of_domain_keys)
        except InputDataError as exc:
            raise SpecError("data", "keys must be in the plan's domain", str(exc)) from None
        sizes = np.diff(indptr)
        if spec.users is not None and spec.users != sizes.size:
            raise SpecError("users", f"a phase 1 simulated on the data needs users = its {sizes.size} users "
                            "(or no users)", spec.users)
    one = run_phase_one(spec, phase, sizes, None if pdata.path is None else str(pdata.path))
    record = one.to_dict(phase)
    model = private_key_model(spec, d, one.distribution, one.phase2_users)
    info = {"source": "private phase 1 + priors", "users": one.phase2_users, "users_source": "phase 2 (n - phase-1 users)",
            "users_total": one.users, "phase1_users": one.phase1_users,
            "prior_frequencies": "spec" if spec.prior_frequencies is not None
            else "pairs spread uniformly over keys (f_k = E[set size]/d, E from the phase-1 estimate)",
            "prior_means": "spec" if spec.prior_means is not None else "|m_k| = 1 (worst case of eq. 11)"}
    return model, info, record


def build_plan(raw: Mapping[str, Any], *, base_dir: Path | None = None) -> dict[str, Any]:
    """Validate a PCKV spec and solve it into an (unverified) plan 2.0 dict.

    Raises
    ------
    SpecError
        Invalid spec or no allocation on the grid (field, rule, value).
    """
    t0 = time.perf_counter()
    spec = once(parse_spec, raw)
    pdata = read_spec_data(spec, base_dir)
    d, labels = domain_of(spec, pdata)
    phase_one = None
    if private_phase(spec) is not None:
        model, info, phase_one = _private_model(spec, d, labels, pdata)
    else:
        model, info = build_model(spec, d, labels, pdata)
    weights = (spec.weights.frequency, spec.weights.mean)
    eps = float(spec.epsilon)
    candidates = ["pckv-ue", "pckv-grr"] if spec.mechanism == "pckv" else [spec.mechanism]
    solved: dict[str, tuple[int, GridAllocation, dict | None]] = {}
    for m in candidates:
        L, selection = _padding_length(spec, m, d, model, weights, phase_one, pdata.path)
        # keyed without the model: a closed-form allocation's grid numbers do not depend on it (verify reads them)
        solved[m] = (L, once(solve_on_grid, m, eps, spec.allocation, d, L, model, weights,
                             memo_key=[m, eps, spec.allocation, d, L]), selection)
    baselines = []
    for m, (L, alloc, _) in solved.items():
        for method in dict.fromkeys([spec.allocation, *[a for a in ALLOCATIONS if a != "numeric"]]):
            grid = alloc if method == spec.allocation else solve_on_grid(m, eps, method, d, L, model, weights)
            role = ("plan-candidate" if method == spec.allocation else "comparison")
            baselines.append(baseline_of(m, method, L, grid, model, weights, role))
    objectives = {b["mechanism"]: b["objective"] for b in baselines if b["role"] == "plan-candidate"}
    mech = choose(objectives)
    for b in baselines:
        if b["role"] == "plan-candidate":
            b["role"] = "plan" if b["mechanism"] == mech else "candidate"
    L, alloc, selection = solved[mech]
    q, budgets = alloc.params, alloc.budgets
    sol = alloc.solution
    solver: dict[str, Any] = {
        "name": sol.solver, "status": sol.status, "time_seconds": 0.0,
        "certificate": _finite_or_none(sol.certificate.to_dict()), "allocation": spec.allocation,
        "allocation_source": dict(sol.certificate.details).get("source", sol.certificate.kind),
        "composition": COMPOSITION[mech], "aimed_epsilon": alloc.aimed_epsilon, "grid_repairs": alloc.repairs,
        "unrounded": {k: float(sol.parameters[k]) for k in ("epsilon1", "epsilon2", "a", "b", "p")},
        "weights": {"frequency": weights[0], "mean": weights[1]}, "assumptions": info,
    }
    if spec.allocation == "numeric":
        solver["numeric"] = {"gain_over_closed_form": float(sol.extra["gain"]),
                             "closed_form_objective": float(sol.extra["closed_form_objective"])}
    if spec.mechanism == "pckv":
        cond = S.sec54_conditions(eps, d, solved["pckv-grr"][0])
        solver["mechanism_choice"] = {
            "requested": "pckv", "chosen": mech, "objectives": objectives,
            "padding_lengths": {m: v[0] for m, v in solved.items()}, "sec54_conditions": cond,
            "reason": (f"smaller predicted w_f*MSE_f + w_m*MSE_m (Theorem 4): PCKV-UE {objectives['pckv-ue']:.4g} "
                       f"(L={solved['pckv-ue'][0]}) vs PCKV-GRR {objectives['pckv-grr']:.4g} "
                       f"(L={solved['pckv-grr'][0]}); Sec. 5.4 at L={solved['pckv-grr'][0]}: frequency favours "
                       f"{'UE' if cond['frequency']['ue_better'] else 'GRR'}, mean favours "
                       f"{'UE' if cond['mean']['ue_better'] else 'GRR'}")}
    if selection is not None:
        solver["padding_length_selection"] = selection
    params = {"a": q["a"], "b": q["b"], "p": q["p"], "epsilon1": budgets["epsilon1"], "epsilon2": budgets["epsilon2"],
              "padding_length": L, "domain_size": d, "values": spec.values,
              "out_of_domain_keys": spec.out_of_domain_keys}
    guarantee = guarantee_of(mech, budgets)
    solver["time_seconds"] = time.perf_counter() - t0
    return envelope(mechanism=mech, domain_size=d, labels=labels, params=params, guarantee=guarantee,
                    predicted=predicted_of(q, L, model, weights), baselines=baselines, solver=solver,
                    spec=dict(raw), planning_inputs=_planning_inputs(spec, pdata, phase_one))

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
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from .._plan_format import envelope, predicted
from ..errors import SpecError
from ._allocation import GridAllocation, solve_on_grid
from ._model import PlanningData, build_model, read_spec_data
from .spec import ALLOCATIONS, PCKVSpec, parse_spec, private_phase

__all__ = ["build_plan", "predictions", "domain_of", "choose", "COMPOSITION"]

COMPOSITION = {"pckv-ue": "Theorem 2, eq. (3)", "pckv-grr": "Theorem 3, eq. (6)"}
_MSE_F_UNIT = "frequency^2 (frequency = fraction of users) per key, averaged over the objective keys"
_MSE_M_UNIT = "value^2 (values in [-1, 1]) per key, averaged over the objective keys"
_MSE_M_WORST_UNIT = "value^2 (values in [-1, 1]) per key, a bound for every key it covers (see at)"


def domain_of(spec: PCKVSpec, pdata: PlanningData) -> tuple[int, list[str] | None]:
    """``(d, labels)`` of the spec (``"data"``: the distinct keys of the data file)."""
    dv = spec.domain_value
    if dv == "data":
        labels = list(pdata.data.labels)
        if len(labels) < 2:
            raise SpecError(spec.domain_field, "the data must hold at least 2 distinct keys", len(labels))
        return len(labels), labels
    if isinstance(dv, list):
        return len(dv), spec.labels()
    return int(dv), None


def predictions(q: Mapping[str, float], L: int, model, weights) -> dict[str, dict[str, Any]]:
    """``predicted`` entries of a/b/p at ``L`` under ``model`` (Theorem 4 and eq. (17)-(18)).

    References
    ----------
    PCKV, Theorem 4 eq. (9)-(12); approximations eq. (16)-(18).
    """
    from ...solvers.pckv import approximate_mse, theorem4_mse

    keys = model.objective_keys
    fs = model.sampled(L)
    a, b, p = q["a"], q["b"], q["p"]
    mf, mm = theorem4_mse(a, b, p, L, model.n, model.frequencies[keys], model.means[keys], fs[keys])
    af, am = approximate_mse(a, b, p, L, model.n, model.frequencies[keys], model.means[keys])
    extra = {"users": int(model.n), "keys_averaged": int(keys.size)}
    at = _at(model)
    out = {
        "mse_frequency": predicted(np.mean(mf), _MSE_F_UNIT, "PCKV Theorem 4, eq. (9) at f_s(L), plus the truncation "
                                   "bias (f_s(L) - f)^2 of eq. (7)", **extra, **at),
        "mse_mean": predicted(np.mean(mm), _MSE_M_UNIT, "PCKV Theorem 4, eq. (10)^2 + (11)", **extra, **at),
    }
    objective_unit = "w_f * mse_frequency + w_m * mse_mean"
    if model.min_key_frequency is not None:  # the key distribution is open: the headline is the worst case
        out["mse_mean_uniform"] = out["mse_mean"]
        out["mse_mean"] = _worst_mean(q, L, model)
        objective_unit = "w_f * mse_frequency + w_m * mse_mean_uniform"
    out.update({
        "approx_mse_frequency": predicted(np.mean(af), _MSE_F_UNIT, "PCKV eq. (17)", **extra, **at),
        "approx_mse_mean": predicted(np.mean(am), _MSE_M_UNIT, "PCKV eq. (18)", **extra, **at),
        "objective": predicted(weights[0] * np.mean(mf) + weights[1] * np.mean(mm),
                               objective_unit, "PCKV Theorem 4 (the planner's objective)",
                               **extra, **at),
    })
    out["g"] = predicted(b / (a * a * (2 * p - 1) ** 2), "1 (dimensionless)",
                         "PCKV eq. (16): g = b / (a^2 (2p-1)^2), the value-noise factor of eq. (18)")
    out["h"] = predicted((1 - b) * b / (a - b) ** 2, "1 (dimensionless)",
                         "PCKV eq. (16): h = (1-b) b / (a-b)^2, the key-noise factor of eq. (17)-(18)")
    if model.set_sizes is not None:
        w = model.set_size_weights / model.set_size_weights.sum()
        out["users_truncated_fraction"] = predicted(float(w[model.set_sizes > L].sum()), "fraction of users",
                                                    "set sizes: users holding more than L pairs (Algorithm 1 "
                                                    "samples each with probability 1/|S|)")
    return out


def _at(model) -> dict[str, str]:
    """``case`` and ``at`` of the figures computed at the key model's frequencies and means."""
    if model.basis == "data":
        return {"case": "data", "at": "the data's key frequencies, value means and set sizes"}
    if model.basis == "assumption":
        means = "|m_k| = 1" if model.max_abs_mean == 1.0 else "the spec's prior_means"
        return {"case": "assumption", "at": f"pairs spread uniformly over the keys (f_k = E[set size]/d), {means}"}
    return {"case": "priors", "at": "the spec's prior_frequencies and prior_means"}


def _worst_mean(q: Mapping[str, float], L: int, model) -> dict[str, Any]:
    """The headline ``mse_mean`` when the key distribution is open: the worst case over keys and means."""
    from ...solvers.pckv import truncation_factor, worst_case_mean_mse

    rho = 1.0 if model.set_sizes is None else truncation_factor(model.set_sizes, model.set_size_weights, L)
    floor = model.min_key_frequency
    value = worst_case_mean_mse(q["a"], q["b"], q["p"], L, model.n, floor, model.max_abs_mean, rho)
    means = "any means in [-1, 1]" if model.max_abs_mean == 1.0 else f"|m| <= {model.max_abs_mean:g}"
    return predicted(value, _MSE_M_WORST_UNIT, "PCKV Theorem 4, eq. (10)^2 + (11), largest over f >= min_key_frequency "
                     f"and {means}", users=int(model.n), case="worst",
                     at=f"every key with frequency >= {floor:.6g} (min_key_frequency), {means}; a rarer key's error "
                        "grows like (min_key_frequency / f)^2", min_key_frequency=floor)


def _finite(x: float) -> float:
    return x if math.isfinite(x) else math.inf


def _finite_or_none(node: Any) -> Any:
    """JSON-strict copy: non-finite floats (e.g. a closed form's ``-inf`` lower bound) become None."""
    if isinstance(node, float):
        return node if math.isfinite(node) else None
    if isinstance(node, Mapping):
        return {k: _finite_or_none(v) for k, v in node.items()}
    if isinstance(node, (list, tuple)):
        return [_finite_or_none(v) for v in node]
    return node


def choose(objectives: Mapping[str, float]) -> str:
    """The mechanism with the smaller objective (NaN counts as infinite; a tie goes to PCKV-UE)."""
    ue, grr = _finite(objectives.get("pckv-ue", math.inf)), _finite(objectives.get("pckv-grr", math.inf))
    return "pckv-ue" if ue <= grr else "pckv-grr"


def _padding_length(spec: PCKVSpec, mech: str, d: int, model, weights,
                    phase_one: dict | None = None) -> tuple[int, dict | None]:
    from ...solvers import SolverError
    from ...solvers import pckv as S

    from .._exact import shrink

    phase = private_phase(spec)
    if phase is None and spec.padding_length != "auto":
        return int(spec.padding_length), None
    bound = phase.max if phase is not None else spec.max_padding_length
    try:
        sel = S.choose_padding_length(mech, shrink(spec.epsilon), domain_size=d, model=model, method=spec.allocation,
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


def _baseline(mech: str, method: str, L: int, alloc: GridAllocation, model, weights, role: str) -> dict[str, Any]:
    q = alloc.params
    pred = predictions(q, L, model, weights)
    return {"name": f"{mech} / {method}", "mechanism": mech, "allocation": method, "role": role,
            "padding_length": L, "a": q["a"], "b": q["b"], "p": q["p"], **alloc.budgets,
            "objective": pred["objective"]["value"],
            "predicted": {k: pred[k] for k in ("mse_frequency", "mse_mean")}}


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
    from ..data import map_key_value_data
    from ..errors import InputDataError
    from ._private_length import private_key_model, run_phase_one

    phase = private_phase(spec)
    sizes = None
    if phase.counts is None:
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
    from ...solvers import pckv as S

    t0 = time.perf_counter()
    spec = parse_spec(raw)
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
        L, selection = _padding_length(spec, m, d, model, weights, phase_one)
        solved[m] = (L, solve_on_grid(m, eps, spec.allocation, d, L, model, weights), selection)
    baselines = []
    for m, (L, alloc, _) in solved.items():
        for method in dict.fromkeys([spec.allocation, *[a for a in ALLOCATIONS if a != "numeric"]]):
            grid = alloc if method == spec.allocation else solve_on_grid(m, eps, method, d, L, model, weights)
            role = ("plan-candidate" if method == spec.allocation else "comparison")
            baselines.append(_baseline(m, method, L, grid, model, weights, role))
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
    guarantee = {"notion": "LDP", "epsilon": budgets["epsilon"], "epsilon1": budgets["epsilon1"],
                 "epsilon2": budgets["epsilon2"], "units": "nats", "composition": COMPOSITION[mech]}
    solver["time_seconds"] = time.perf_counter() - t0
    return envelope(mechanism=mech, domain_size=d, labels=labels, params=params, guarantee=guarantee,
                    predicted=predictions(q, L, model, weights), baselines=baselines, solver=solver,
                    spec=dict(raw), planning_inputs=_planning_inputs(spec, pdata, phase_one))

r"""Independent re-check of a PCKV plan: its numbers exactly, and the plan against its spec.

1. The composed JSON Schema; every number finite (PlanFormatError otherwise).
2. ``a``, ``p`` (and PCKV-UE ``b``) on the 2^-48 grid; ``0 < b < a < 1``, ``1/2 <= p < 1``;
   PCKV-GRR ``b = (1-a)/(d+L-1)``; ``domain.size = params.domain_size`` and the labels.
3. Exactly (rationals, :mod:`planner._exact`): the worst-case ratio of Theorem 2/3
   (App. A/B) is ``<= e^{guarantee.epsilon}`` and ``<= e^{spec.epsilon}``; the key and value
   ratios are within ``epsilon1`` / ``epsilon2`` (guarantee and params); every claim equals
   the value recomputed from ``a, b, p, L, d``.
4. Against the embedded spec (re-parsed): mechanism (and the Sec. 5.4 choice for
   ``"pckv"``), domain, ``padding_length`` (or the ``"auto"`` choice with its recorded
   inputs), allocation (closed forms re-solved and compared exactly; numeric: on the
   exact composition frontier), ``users``, runtime options; predictions recomputed when
   the spec's priors define them (data-based predictions name their input in
   ``planning_inputs``).
"""
from __future__ import annotations

import math
from functools import partial
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ...mechanisms import on_grid

from .._exact import ratio_within, shrink
from .._plan_format import validate_plan
from .._report import Verification
from .._solve_once import once
from ..errors import PlanFormatError, SpecError, InputDataError
from ._model import length_search_key
from ._allocation import composed_ratio_exact, exact_budgets, key_ratio_exact, solve_on_grid, value_ratio_exact
from .claims import choose, predicted_of
from .spec import PCKVSpec, parse_spec, private_phase, required_private_phase
from ...solvers import pckv as S
from ..data import load_key_value_data, map_key_value_data
from ._model import PlanningData, build_model
from ._private_length import run_phase_one, estimate_distribution, phase1_user_count, private_key_model

__all__ = ["verify"]

#: Relative tolerance of recomputed float claims (predictions; exact checks are exact).
CLAIM_RTOL = 1e-9
#: A numeric allocation must use the budget up to this relative amount (it lies on the frontier).
FRONTIER_RTOL = 1e-6


class _Fail(Exception):
    pass


def _numbers(plan: Mapping[str, Any]) -> tuple[str, float, float, float, int, int]:
    mech, pr = plan["mechanism"], plan["params"]
    a, b, p = float(pr["a"]), float(pr["b"]), float(pr["p"])
    d, L = int(pr["domain_size"]), int(pr["padding_length"])
    if plan["domain"]["size"] != d:
        raise _Fail(f"domain.size: must equal params.domain_size = {d} (got {plan['domain']['size']})")
    labels = plan["domain"]["labels"]
    if labels is not None and (len(labels) != d or len(set(labels)) != d):
        raise _Fail(f"domain.labels: must be {d} distinct labels (got {len(labels)})")
    if not on_grid([a, p] + ([b] if mech == "pckv-ue" else [])):
        raise _Fail("params: a, p" + (", b" if mech == "pckv-ue" else "") + " must be multiples of 2^-48")
    if mech == "pckv-grr":
        exact_b = (1.0 - a) / (d + L - 1)
        if not abs(b - exact_b) <= 1e-12 * exact_b:
            raise _Fail(f"params.b: must equal (1-a)/(d+L-1) = {exact_b!r} (got {b!r})")
    if not (0 < b < a < 1 and 0.5 <= p < 1):
        raise _Fail(f"params: need 0 < b < a < 1 and 1/2 <= p < 1 (got a={a!r}, b={b!r}, p={p!r})")
    return mech, a, b, p, d, L


def _check_exact(plan: Mapping[str, Any], mech: str, a: float, b: float, p: float, d: int, L: int,
                 spec_eps: float) -> dict[str, float]:
    ratios = {"epsilon": composed_ratio_exact(mech, a, b, p, d, L), "epsilon1": key_ratio_exact(mech, a, b, d, L),
              "epsilon2": value_ratio_exact(p)}
    budgets = exact_budgets(mech, a, b, p, d, L)
    if not ratio_within(ratios["epsilon"], spec_eps):
        raise _Fail(f"spec.epsilon: the composed epsilon {budgets['epsilon']!r} of a, b, p, L, d exceeds the spec's "
                    f"budget {spec_eps!r} by {budgets['epsilon'] - spec_eps:.3g} nats")
    for where in ("guarantee", "params"):
        for k in (("epsilon", "epsilon1", "epsilon2") if where == "guarantee" else ("epsilon1", "epsilon2")):
            claim = float(plan[where][k])
            if not ratio_within(ratios[k], claim):
                raise _Fail(f"{where}.{k}: {claim!r} is smaller than what a, b, p, L, d give ({budgets[k]!r}); "
                            f"exceeds by {budgets[k] - claim:.3g} nats")
            if not abs(claim - budgets[k]) <= 1e-12 * max(1.0, budgets[k]):
                raise _Fail(f"{where}.{k}: must be the recomputed value {budgets[k]!r} (got {claim!r})")
    return budgets


def _check_domain(plan: Mapping[str, Any], spec: PCKVSpec, d: int) -> None:
    dv, labels = spec.domain_value, plan["domain"]["labels"]
    if dv == "data":
        if labels is None:
            raise _Fail(f"domain.labels: a {spec.domain_field} = \"data\" plan must list the data's keys")
        if not any(x["what"].startswith("key domain") for x in plan["planning_inputs"]):
            raise _Fail("planning_inputs: must record the data file the key domain was read from")
    elif isinstance(dv, list):
        if labels != spec.labels():
            raise _Fail(f"domain.labels: must be the spec's {spec.domain_field} ({len(dv)} labels)")
    elif d != dv or labels is not None:
        raise _Fail(f"params.domain_size: must be the spec's {spec.domain_field} = {dv} with no labels (got {d})")


def _argmin(rows: list[dict], key: str) -> Any:
    best = None
    for r in rows:
        v = r.get(key)
        v = float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else math.inf
        if best is None or v < best[0]:
            best = (v, r)
    return None if best is None else best[1]


def _check_padding(plan: Mapping[str, Any], spec: PCKVSpec, L: int) -> None:
    phase = private_phase(spec)
    bound = phase.max if phase is not None else spec.max_padding_length
    if phase is None and spec.padding_length != "auto":
        if L != spec.padding_length:
            raise _Fail(f"params.padding_length: must be the spec's padding_length = {spec.padding_length} (got {L})")
        return
    sel = plan["solver"].get("padding_length_selection")
    if not isinstance(sel, Mapping) or not sel.get("candidates"):
        raise _Fail("solver.padding_length_selection: an \"auto\" plan must record its candidates")
    best = _argmin(list(sel["candidates"]), "objective")
    if L > bound or sel.get("chosen") != L or best["padding_length"] != L:
        raise _Fail(f"params.padding_length: must be the recorded \"auto\" choice (argmin L = {best['padding_length']}, "
                    f"<= max_padding_length = {bound}; got {L})")
    if phase is None and spec.data is not None and not any("set sizes" in x["what"] for x in plan["planning_inputs"]):
        raise _Fail("planning_inputs: an \"auto\" plan must record the data file its set sizes came from")


def _check_allocation(plan, spec: PCKVSpec, mech: str, a, b, p, d: int, L: int, composed: float) -> None:
    if plan["solver"].get("allocation") != spec.allocation:
        raise _Fail(f"solver.allocation: must be the spec's allocation {spec.allocation!r} "
                    f"(got {plan['solver'].get('allocation')!r})")
    if spec.allocation == "numeric":
        if not composed >= spec.epsilon * (1 - FRONTIER_RTOL):
            raise _Fail(f"guarantee.epsilon: a numeric allocation lies on the composition frontier, so it must use "
                        f"spec.epsilon = {spec.epsilon!r} (got {composed!r})")
        return
    # the grid numbers of a closed form do not depend on the model: plan() shares the one solve (_solve_once)
    expected = once(solve_on_grid, mech, spec.epsilon, spec.allocation, d, L,
                    memo_key=[mech, float(spec.epsilon), spec.allocation, d, L]).params
    got = {"a": a, "b": b, "p": p}
    for k in ("a", "b", "p"):
        if got[k] != expected[k]:
            raise _Fail(f"params.{k}: must be the {spec.allocation} allocation of spec.epsilon = {spec.epsilon!r} "
                        f"at L = {L} ({expected[k]!r}; got {got[k]!r})")


def _check_choice(plan: Mapping[str, Any], spec: PCKVSpec, mech: str, model, weights) -> None:
    if spec.mechanism != "pckv":
        if mech != spec.mechanism:
            raise _Fail(f"mechanism: must be the spec's mechanism {spec.mechanism!r} (got {mech!r})")
        return
    rows = [b for b in plan["baselines"] if b.get("role") in ("plan", "candidate")]
    objectives = {}
    for r in rows:
        obj = float(r["objective"])
        if model is not None:
            obj = predicted_of(r, int(r["padding_length"]), model, weights, corrected=False)["objective"]["value"]
            if not math.isclose(obj, float(r["objective"]), rel_tol=CLAIM_RTOL):
                raise _Fail(f"baselines[{r['name']}].objective: recomputed {obj!r} (got {r['objective']!r})")
        objectives[r["mechanism"]] = obj
    if set(objectives) != {"pckv-ue", "pckv-grr"} or choose(objectives) != mech:
        raise _Fail(f"mechanism: \"pckv\" must choose the candidate with the smaller predicted objective "
                    f"({objectives}; got {mech!r})")


def _check_predictions(plan: Mapping[str, Any], model, weights, q, L: int) -> None:
    for k, entry in predicted_of(q, L, model, weights).items():
        got = plan["predicted"].get(k, {}).get("value")
        if got is None or not math.isclose(entry["value"], float(got), rel_tol=CLAIM_RTOL, abs_tol=1e-300):
            raise _Fail(f"predicted.{k}: recomputed {entry['value']!r} from the spec's priors (got {got!r})")
        for label in ("case", "at", "min_key_frequency", "estimator"):  # what the figure is computed at is a claim too
            if label in entry and plan["predicted"][k].get(label) != entry[label]:
                raise _Fail(f"predicted.{k}.{label}: recomputed {entry[label]!r} from the spec "
                            f"(got {plan['predicted'][k].get(label)!r})")


def _model(plan: Mapping[str, Any], spec: PCKVSpec, d: int):
    """The planning model rebuilt from the spec's priors, from the recorded phase-1 counts
    (private route) or from the data file named in ``planning_inputs`` (None when that file
    is no longer readable)."""
    if private_phase(spec) is not None:
        return _private_model(plan, spec, d)
    if spec.data is None:
        return build_model(spec, d, spec.labels(), PlanningData(None, None))[0]
    sources = {x["source"] for x in plan["planning_inputs"]}
    if len(sources) != 1:
        raise _Fail(f"planning_inputs: a plan from a data file must name that one file (got {sorted(sources)})")
    path = Path(sources.pop())
    if not path.is_file():
        return None
    try:
        data = load_key_value_data(path)
        if spec.domain_value == "data" and list(data.labels) != plan["domain"]["labels"]:
            raise _Fail(f"domain.labels: must be the distinct keys of {str(path)!r} ({len(data.labels)} keys)")
        return build_model(spec, d, plan["domain"]["labels"], PlanningData(path, data))[0]
    except (InputDataError, SpecError) as exc:
        raise _Fail(f"planning_inputs: the data file {str(path)!r} no longer gives this plan's model ({exc})") from None


def _check_phase1_simulation(plan: Mapping[str, Any], spec: PCKVSpec, d: int, rec: Mapping[str, Any]) -> None:
    """A phase 1 simulated on a data file: re-run it (seeded) when the file is readable here."""
    path = rec.get("data")
    if not isinstance(path, str) or not Path(path).is_file():
        return
    try:
        data = load_key_value_data(path)
        indptr = map_key_value_data(data, plan["domain"]["labels"], d, out_of_domain_keys=spec.out_of_domain_keys)[0]
    except InputDataError as exc:
        raise _Fail(f"solver.padding_length_selection.private.data: {path!r} no longer gives this phase 1 ({exc})") \
            from None
    phase = required_private_phase(spec)
    again = run_phase_one(spec, phase, np.diff(indptr), path)
    if again.users != rec.get("users") or [int(c) for c in again.counts] != rec.get("counts"):
        raise _Fail(f"solver.padding_length_selection.private.counts: re-running phase 1 on {path!r} with seed "
                    f"{phase.seed} gives other counts (or users)")


def _private_model(plan: Mapping[str, Any], spec: PCKVSpec, d: int):
    """Check the phase-1 record against the spec, recompute the distribution from its counts."""
    phase = required_private_phase(spec)
    rec = plan["solver"].get("padding_length_selection", {}).get("private")
    if not isinstance(rec, Mapping):
        raise _Fail("solver.padding_length_selection.private: a private-L plan must record its phase 1")
    for k in ("epsilon", "user_share", "max", "seed"):
        if rec.get(k) != getattr(phase, k):
            raise _Fail(f"solver.padding_length_selection.private.{k}: must be the spec's padding_length.private.{k} "
                        f"= {getattr(phase, k)!r} (got {rec.get(k)!r})")
    entries = [x for x in plan["planning_inputs"] if x.get("what") == "set-size distribution"]
    if len(entries) != 1 or entries[0].get("private") is not True or entries[0].get("epsilon") != phase.epsilon \
            or entries[0].get("user_share") != phase.user_share:
        raise _Fail(f"planning_inputs: a private-L plan records one \"set-size distribution\" entry with private = true, "
                    f"epsilon = {phase.epsilon!r} and user_share = {phase.user_share!r} (got {entries})")
    counts, users, m, m2 = rec.get("counts"), rec.get("users"), rec.get("phase1_users"), rec.get("phase2_users")
    if not (isinstance(counts, list) and len(counts) == phase.max + 1 and all(isinstance(c, int) and c >= 0
                                                                              for c in counts)):
        raise _Fail(f"solver.padding_length_selection.private.counts: must be max + 1 = {phase.max + 1} counts >= 0")
    if phase.counts is not None and counts != list(phase.counts):
        raise _Fail("solver.padding_length_selection.private.counts: must be the spec's padding_length.private.counts")
    if not (isinstance(users, int) and isinstance(m, int) and isinstance(m2, int)) or sum(counts) != m \
            or m + m2 != users or m2 < 1:
        raise _Fail(f"solver.padding_length_selection.private: phase1_users ({m}) must equal the counts' sum "
                    f"({sum(counts)}) and phase1_users + phase2_users ({m2}) the users ({users})")
    if phase.counts is None and m != phase1_user_count(users, phase.user_share):
        raise _Fail(f"solver.padding_length_selection.private.phase1_users: must be round(user_share * users) = "
                    f"{phase1_user_count(users, phase.user_share)} (got {m})")
    if phase.counts is not None and users != spec.users:
        raise _Fail(f"solver.padding_length_selection.private.users: must be the spec's users = {spec.users}")
    if phase.counts is None:
        _check_phase1_simulation(plan, spec, d, rec)
    dist = estimate_distribution(counts, phase.epsilon, phase.max)
    got = np.asarray(rec.get("distribution"), dtype=float)
    if got.shape != dist.shape or not np.allclose(got, dist, rtol=CLAIM_RTOL, atol=1e-15):
        raise _Fail("solver.padding_length_selection.private.distribution: must be the estimate recomputed from the "
                    "recorded counts (RR empirical estimator projected onto the simplex)")
    if plan["predicted"]["mse_frequency"].get("users") != m2:
        raise _Fail(f"predicted.mse_frequency.users: must be the phase-2 users = {m2} (phase-1 users are excluded)")
    return private_key_model(spec, d, dist, m2)


def _check_auto(plan: Mapping[str, Any], spec: PCKVSpec, mech: str, d: int, model, weights) -> None:
    """Re-run the ``"auto"`` search (closed-form allocations) and compare the chosen L."""
    phase = private_phase(spec)
    bound = phase.max if phase is not None else spec.max_padding_length
    source = None if spec.data is None else next(iter({x["source"] for x in plan["planning_inputs"]}))
    key = length_search_key(spec, mech, source)  # within ldpplan plan: plan's search of the same inputs (_solve_once)
    search = S.choose_padding_length if key is None else partial(once, S.choose_padding_length, memo_key=key)
    sel = search(mech, shrink(spec.epsilon), domain_size=d, model=model, method=spec.allocation,
                 weights=weights, max_padding_length=bound)
    L = int(sel.parameters["padding_length"])
    if L != plan["params"]["padding_length"]:
        raise _Fail(f"params.padding_length: the \"auto\" search recomputed from its inputs chooses L = {L} "
                    f"(got {plan['params']['padding_length']})")


def verify(plan: Mapping[str, Any]) -> Verification:
    """Re-check a PCKV plan (see the module docstring).

    Returns
    -------
    Verification
        ``holds`` False names the field, the rule and the amount; ``details``:
        ``composed_epsilon``, ``slack`` (nats, spec budget minus composed), ``checks``.

    Raises
    ------
    PlanFormatError
        Schema-invalid plan or a non-finite number.

    References
    ----------
    PCKV, Theorems 2-3 (App. A-B), Theorem 4.
    """
    validate_plan(plan)  # the runtime's envelope reader (finite numbers, domain, fields), then the schema
    if plan["mechanism"] not in ("pckv-ue", "pckv-grr"):
        raise PlanFormatError(f"mechanism: must be 'pckv-ue' or 'pckv-grr' (got {plan['mechanism']!r})")
    checks = ["schema", "finite numbers", "2^-48 grid and ranges"]
    try:
        try:
            spec = once(parse_spec, plan["spec"])
        except SpecError as exc:
            raise _Fail(f"spec.{exc}") from None
        mech, a, b, p, d, L = _numbers(plan)
        budgets = _check_exact(plan, mech, a, b, p, d, L, float(spec.epsilon))
        checks.append("exact composed ratio (App. A/B) <= e^epsilon (guarantee and spec) and claims recomputed")
        _check_domain(plan, spec, d)
        _check_padding(plan, spec, L)
        _check_allocation(plan, spec, mech, a, b, p, d, L, budgets["epsilon"])
        weights = (spec.weights.frequency, spec.weights.mean)
        model = _model(plan, spec, d)
        _check_choice(plan, spec, mech, model, weights)
        for k, want in (("values", spec.values), ("out_of_domain_keys", spec.out_of_domain_keys)):
            if plan["params"].get(k) != want:
                raise _Fail(f"params.{k}: must be the spec's {k} {want!r} (got {plan['params'].get(k)!r})")
        if spec.users is not None and private_phase(spec) is None \
                and plan["predicted"]["mse_frequency"].get("users") != spec.users:
            raise _Fail(f"predicted.mse_frequency.users: must be the spec's users = {spec.users}")
        checks.append("plan vs spec: mechanism, domain, padding_length, allocation, users, runtime options")
        if model is not None:
            _check_predictions(plan, model, weights, {"a": a, "b": b, "p": p}, L)
            if (spec.padding_length == "auto" or private_phase(spec) is not None) and spec.allocation != "numeric":
                _check_auto(plan, spec, mech, d, model, weights)
            checks.append("predictions, mechanism choice and the \"auto\" L recomputed from the planning inputs")
        else:
            checks.append("predictions: the data file named in planning_inputs is not readable here (not re-derived)")
    except _Fail as exc:
        return Verification(False, str(exc), {"checks": checks})
    slack = float(spec.epsilon) - budgets["epsilon"]
    msg = (f"{mech}: composed epsilon {budgets['epsilon']:.12g} <= {float(spec.epsilon):g} nats "
           f"({'Theorem 2' if mech == 'pckv-ue' else 'Theorem 3'} recomputed exactly from a, b, p, L={L}, d={d}); "
           "plan matches its spec")
    return Verification(True, msg, {"composed_epsilon": budgets["epsilon"], "slack": slack, "checks": checks})

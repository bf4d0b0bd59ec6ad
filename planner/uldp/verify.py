"""Independent verification of ULDP plans: Def. 2 decided exactly, and the plan against its spec.

uRR (Def. 3): every column of Y_P = X_S holds ``c1`` and ``c2`` only, so Def. 2 (5) is the
one ratio ``max(c1, c2) / min(c1, c2) <= e^epsilon``; Def. 2 (4) needs ``c3 > 0``; the rows
sum to one exactly in integers of 2^-48. uRAP (Def. 4): over Y_P (eq. 7) the ratios are
those of ``{theta/d1, (1-theta)/(1-d1), d2}`` (see :func:`urap_ratio`). PUM (Sec. 5): the
common mechanism over ``Z = X + bots`` with ``Z_S = X_S + bots`` (Prop. 9). Ratios are exact
fractions of the plan's floats; ``ratio <= e^epsilon`` is decided by
:func:`ldpplan.planner._exact.ratio_within`.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

from .._exact import exact, log_exact, log_ratio_slack, ratio_within
from .._plan_format import validate_plan
from .._report import Verification
from .._solve_once import once
from ..errors import PlanFormatError, SpecError
from .claims import baselines_of, guarantee_of
from ._numbers import GRID_DENOMINATOR, grid_theta, predicted_losses, urap_ratio, urr_ratio
from .spec import parse_spec, resolve

__all__ = ["verify", "check_numbers", "spec_mismatch"]


def _fail(message: str, **details: Any) -> Verification:
    return Verification(False, message, details)



def _grid_ints(params: Mapping[str, Any], names: tuple[str, ...]) -> list[int] | Verification:
    out = []
    for name in names:
        v = exact(params[name])
        if not (0 <= v <= 1) or (v * GRID_DENOMINATOR).denominator != 1:
            return _fail(f"params.{name}: must be a multiple of 2^-48 in [0, 1] (got {params[name]!r})")
        out.append(int(v * GRID_DENOMINATOR))
    return out


def check_numbers(kind: str, params: Mapping[str, Any], size: int, n_sensitive: int,
                  epsilon: float) -> Verification:
    """Decide Def. 2 for the common uRR/uRAP numbers over a domain of ``size`` with ``n_sensitive``."""
    n_nonsensitive = size - n_sensitive
    if kind == "urr":
        ints = _grid_ints(params, ("c1", "c2", "c3"))
        if isinstance(ints, Verification):
            return ints
        k1, k2, k3 = ints
        if k1 + (n_sensitive - 1) * k2 != GRID_DENOMINATOR or n_sensitive * k2 + k3 != GRID_DENOMINATOR:
            return _fail("params.c1, c2, c3: rows of Q must sum to one exactly (c1 + (|X_S|-1) c2 = 1, "
                         f"|X_S| c2 + c3 = 1; got {k1 + (n_sensitive - 1) * k2 - GRID_DENOMINATOR} and "
                         f"{n_sensitive * k2 + k3 - GRID_DENOMINATOR} grid steps off)")
        if n_nonsensitive and k3 <= 0:
            return _fail("params.c3: Def. 2 (4) needs every invertible output reachable from its input (c3 > 0)")
        if k1 <= k2:
            return _fail(f"params.c1: must exceed c2 (the empirical estimate divides by c1 - c2; got {params['c1']!r})")
        ratio, pair = urr_ratio(params["c1"], params["c2"]), "c1/c2 on every column of Y_P = X_S"
    else:
        ints = _grid_ints(params, ("theta", "d1", "d2"))
        if isinstance(ints, Verification):
            return ints
        if n_nonsensitive and not 0 < ints[2] < GRID_DENOMINATOR:
            return _fail(f"params.d2: must be in (0, 1) (Def. 2 (4) and estimability; got {params['d2']!r})")
        if ints[0] <= ints[1]:
            return _fail(f"params.theta: must exceed d1 (got theta={params['theta']!r}, d1={params['d1']!r})")
        ratio = urap_ratio(params["theta"], params["d1"], params["d2"], n_sensitive, n_nonsensitive)
        pair = "theta/d1, (1-theta)/(1-d1), d2 over Y_P"
    if ratio is None:
        return _fail(f"Def. 2 (5): a ratio {pair} is infinite (a probability is 0 or 1): epsilon = inf")
    slack = log_ratio_slack(ratio, epsilon)
    effective = float(log_exact(ratio))
    details = {"epsilon_effective": effective, "slack_nats": float(slack), "decisive": pair}
    if not ratio_within(ratio, epsilon):
        return _fail(f"Def. 2 (5): ln of the worst ratio ({pair}) is {effective!r} > epsilon {epsilon!r} "
                     f"by {-float(slack):.3g} nats", **details)
    return Verification(True, "", details)


def spec_mismatch(plan: Mapping[str, Any]) -> str | None:
    """Compare the plan with its embedded spec; the first difference (field, rule, amount) or None."""
    try:
        res = once(resolve, once(parse_spec, plan["spec"]), memo_key=plan["spec"])
    except SpecError as exc:
        return f"spec: the embedded spec is invalid ({exc})"
    spec, params, guarantee = res.spec, plan["params"], plan["guarantee"]
    checks: list[tuple[str, Any, Any]] = [
        ("mechanism", plan["mechanism"], spec.mechanism),
        ("domain.size", plan["domain"]["size"], res.size),
        ("domain.labels", plan["domain"]["labels"], res.labels),
        ("params.domain_size", params.get("domain_size"), res.size),
        ("params.sensitive", params.get("sensitive"), res.sensitive),
        ("guarantee.sensitive", guarantee.get("sensitive"), res.sensitive),
        ("guarantee.epsilon", guarantee.get("epsilon"), spec.epsilon),
        ("params.epsilon", params.get("epsilon", spec.epsilon), spec.epsilon),
    ]
    if spec.theta is not None:
        checks.append(("params.theta", params.get("theta"), grid_theta(spec.theta)))
    if spec.mechanism == "pum":
        bots = list(range(res.size, res.common_size))
        checks += [("params.common", params.get("common"), res.kind), ("params.tags", params.get("tags"), res.tags),
                   ("params.intermediate_size", params.get("intermediate_size"), res.common_size),
                   ("params.intermediate_sensitive", params.get("intermediate_sensitive"), res.sensitive + bots),
                   ("params.background", params.get("background", {}), res.background)]
    want_guarantee = guarantee_of(res)
    checks += [(f"guarantee.{key}", guarantee.get(key), value) for key, value in want_guarantee.items()]
    checks += [(f"guarantee.{key}", value, None) for key, value in guarantee.items() if key not in want_guarantee]
    for field, got, want in checks:
        if got != want:
            return f"{field}: must match the embedded spec ({want!r:.80}) (got {got!r:.80})"
    return _baselines_mismatch(plan["baselines"], baselines_of(res))


def _baselines_mismatch(got: list, want: list) -> str | None:
    """Baselines recomputed from the spec: names and numbers equal, predicted values within 1e-9 relative."""
    if [b.get("name") for b in got] != [b["name"] for b in want]:
        return f"baselines: must be {[b['name'] for b in want]} (got {[b.get('name') for b in got]})"
    for i, (g, w) in enumerate(zip(got, want)):
        if g.get("params") != w["params"] or g.get("guarantee") != w["guarantee"]:
            return f"baselines[{i}].params: must equal the numbers recomputed from the spec ({w['params']!r:.80})"
        for key, entry in w["predicted"].items():
            value = g.get("predicted", {}).get(key, {}).get("value")
            if value is None or not math.isclose(value, entry["value"], rel_tol=1e-9):
                return (f"baselines[{i}].predicted.{key}.value: must equal the value recomputed from the spec "
                        f"({entry['value']!r}) (got {value!r})")
    return None


def verify(plan: Mapping[str, Any]) -> Verification:
    """Re-check a ULDP plan: numbers finite, Def. 2 exactly, the plan against its spec, derived claims.

    Returns
    -------
    Verification
        ``holds`` with ``details`` ``epsilon_effective`` (nats, from the numbers), ``slack_nats``
        (``epsilon - ln(worst ratio)``, exact to 1e-40) and the decisive ratio; or a failure
        naming the field, the rule and the amount.

    Raises
    ------
    PlanFormatError
        Schema-invalid plan or a non-finite number.

    References
    ----------
    Murakami & Kawamoto 2019, Def. 2, Props. 2, 3 and 9.
    """
    validate_plan(plan)  # the runtime's envelope reader (finite numbers, domain, fields), then the schema
    params, guarantee = plan["params"], plan["guarantee"]
    size, sens = plan["domain"]["size"], params["sensitive"]
    if any(not 0 <= i < size for i in sens) or len(set(sens)) != len(sens):
        raise PlanFormatError(f"params.sensitive: must be distinct indices in [0, {size}) (got {sens!r:.80})")
    kind, n_s, k = plan["mechanism"], len(sens), size
    if kind == "pum":
        kind, k, n_s = params["common"], size + len(params["tags"]), len(sens) + len(params["tags"])
    mismatch = spec_mismatch(plan)
    if mismatch:
        return _fail(mismatch)
    epsilon = float(guarantee["epsilon"])
    numbers = check_numbers(kind, params, k, n_s, epsilon)
    if not numbers.holds:
        return numbers
    predicted = _predicted_mismatch(plan, kind, k, n_s)
    if predicted:
        return _fail(predicted)
    d = numbers.details
    what = {"urr": "uRR (Def. 3)", "urap": "uRAP (Def. 4)"}[kind]
    where = (f"|X| = {size}, |X_S| = {len(sens)}" + (f", |Z| = {k} (with {k - size} bots), |Z_S| = {n_s}"
                                                       if plan["mechanism"] == "pum" else ""))
    common = " common to the PUM (Prop. 9)" if plan["mechanism"] == "pum" else ""
    msg = (f"(X_S, Y_P, {epsilon:g})-ULDP of the {what}{common} holds exactly: ln(worst ratio) = "
           f"{d['epsilon_effective']:.15g} <= {epsilon:g} nats (slack {d['slack_nats']:.3g}); {where}; plan matches its spec")
    return Verification(True, msg, {**d, "domain_size": size, "n_sensitive": len(sens),
                                    **({"intermediate_size": k} if plan["mechanism"] == "pum" else {})})


def _predicted_mismatch(plan: Mapping[str, Any], kind: str, k: int, n_s: int) -> str | None:
    """Recompute the predicted worst-case losses from the numbers and compare (relative 1e-9)."""
    want = predicted_losses(kind, plan["params"], n_s, k - n_s, once(parse_spec, plan["spec"]).users)
    for key, entry in want.items():
        got = plan["predicted"].get(key, {}).get("value")
        if got is None or not math.isclose(got, entry["value"], rel_tol=1e-9, abs_tol=1e-300):
            return (f"predicted.{key}.value: must equal the value recomputed from the numbers ({entry['value']!r}) "
                    f"(got {got!r})")
    return None

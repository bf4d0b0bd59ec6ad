"""Independent, exact re-check of a longitudinal plan: its numbers and its agreement with its spec.

From the grid numbers (exact dyadic rationals; for L-GRR ``q = (1 - p)/(k - 1)`` exactly):

* ``e^epsilon_perm`` of the first round and ``e^epsilon_1`` of the composed channel
  (:func:`.claims.exact_ratios`): ``guarantee.epsilon_perm``, ``guarantee.epsilon_1`` and
  ``guarantee.epsilon`` must bound them (:func:`~ldpplan.planner._exact.ratio_within`, 50 digits);
* every claim equals what the numbers give (:func:`.claims.claims`, recomputed, never read),
  ``epsilon_2``, the sound ``epsilon_lifetime`` (exact sum of the rounded-up claims, rounded up),
  ``epsilon_lifetime_lower`` and ``epsilon_lifetime_one_value`` included;
* against the spec: the claims at most the spec's budgets (and ``epsilon_lifetime`` at most a
  ``[target]``), the mechanism (``auto``: the lowest predicted variance), the domain, ``rounds``,
  ``max_values``, and ``params`` the spec's solution; ``predicted`` is recomputed.

Plans of the earlier format (``guarantee.max_changes``, claiming ``max_changes x epsilon_perm``) are
refused in one line: with ``max_changes >= 2`` that lifetime claim is false once a user's value changes
(``holds`` False: exit 1); with ``max_changes = 1`` it held but the format is outdated (``PlanFormatError``:
exit 2). Either way: re-plan the spec. The runtime's ``load()`` refuses both.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

from .._exact import ratio_within
from .._plan_format import validate_plan
from .._report import Verification
from .._solve_once import once
from ..errors import PlanFormatError, SpecError
from .claims import NOTION, claims, exact_ratios, predictions
from .plan import plan_budgets
from .spec import parse_spec

__all__ = ["verify"]

_GRID = 2.0**48


def _structure(plan: Mapping[str, Any]) -> None:
    p, mech = plan["params"], plan["mechanism"]
    keys = {"domain_size", "p1", "p2", "second_round"} if mech == "l-grr" else {"domain_size", "p1", "q1", "p2", "q2"}
    if set(p) != keys:
        raise PlanFormatError(f"params: must hold exactly {sorted(keys)} (got {sorted(p)})")
    k = p["domain_size"]
    if isinstance(k, bool) or not isinstance(k, int) or k != plan["domain"]["size"] or k < 2:
        raise PlanFormatError(f"params.domain_size: must equal domain.size = {plan['domain']['size']} (got {k!r})")
    for key in sorted(keys - {"domain_size", "second_round"}):
        v = p[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < 1 or math.floor(v * _GRID) != v * _GRID:
            raise PlanFormatError(f"params.{key}: must be a multiple of 2^-48 in (0, 1) (got {v!r})")
    if mech == "l-grr" and p["second_round"] != "exact-composed":
        raise PlanFormatError(f"params.second_round: must be 'exact-composed' (got {p['second_round']!r:.40})")
    if (p["p1"] <= (1 - p["p1"]) / (k - 1)) if mech == "l-grr" else (p["p1"] <= p["q1"] or p["p2"] <= p["q2"]):
        raise PlanFormatError("params: each round must favour the true value (p > q)")
    if mech == "l-grr" and p["p2"] * k <= 1:
        raise PlanFormatError("params.p2: must exceed 1/k")


def _spec_checks(plan: Mapping[str, Any], failures: list[str]) -> None:
    try:
        spec = once(parse_spec, plan["spec"])
    except SpecError as exc:
        raise PlanFormatError(f"spec: the embedded spec is invalid ({exc})") from None
    m, gu = spec.model, plan["guarantee"]
    for key, cap in (("epsilon_perm", m.epsilon_perm), ("epsilon_1", m.epsilon_1), ("epsilon", m.epsilon_1)):
        if float(gu[key]) > cap:
            spec_key = "epsilon_1" if key == "epsilon" else key
            failures.append(f"guarantee.{key}: {gu[key]!r} exceeds the spec's {spec_key} = {cap!r}")
    for key, want in (("rounds", m.rounds), ("max_values", m.values)):
        if gu[key] != want:
            failures.append(f"guarantee.{key}: the spec gives {want}, the plan says {gu[key]!r}")
    if plan["domain"]["size"] != spec.k or plan["domain"]["labels"] != spec.labels:
        failures.append(f"domain: differs from the spec's domain (size {spec.k})")
    if m.target is not None and float(gu["epsilon_lifetime"]) > m.target.epsilon_lifetime:
        failures.append(f"guarantee.epsilon_lifetime: {gu['epsilon_lifetime']!r} exceeds the spec's "
                        f"target.epsilon_lifetime = {m.target.epsilon_lifetime!r}")
    try:
        chosen, params, _, _ = once(plan_budgets, spec, memo_key=plan["spec"])
    except SpecError as exc:
        failures.append(f"spec: cannot be solved ({exc})")
        return
    if plan["mechanism"] != chosen:
        failures.append(f"mechanism: the spec's choice is {chosen!r}, the plan is {plan['mechanism']!r}")
        return
    for key, value in params.items():
        got = plan["params"].get(key)
        if isinstance(value, float) and not abs(float(got) - value) <= 1e-9 * value:
            failures.append(f"params.{key}: the spec's solution is {value!r} (the plan says {got!r})")
    for key, value in predictions(chosen, plan["params"], m.users).items():
        got = plan["predicted"].get(key, {}).get("value")
        if not isinstance(got, (int, float)) or not abs(got - value["value"]) <= 1e-9 * abs(value["value"]):
            failures.append(f"predicted.{key}: the numbers give {value['value']!r} (the plan says {got!r})")


def verify(plan: Mapping[str, Any]) -> Verification:
    """Re-check a longitudinal plan exactly from its numbers and against its embedded spec.

    Returns
    -------
    Verification
        ``holds`` False names the field, the rule and the amount (nats).

    Raises
    ------
    PlanFormatError
        Schema violation or unusable numbers (off the grid, ``p <= q``, sizes).
    """
    old = plan.get("guarantee") if isinstance(plan, Mapping) else None
    if isinstance(old, Mapping) and "max_changes" in old:
        reason = ("guarantee.max_changes: a plan of the earlier format claims max_changes x epsilon_perm over a "
                  "lifetime, which is false once values change; re-plan the spec")
        if old.get("max_changes") != 1:  # the lifetime claim does not hold (exit 1)
            return Verification(False, reason, {})
        raise PlanFormatError(reason)  # one value: the claim held, the format is outdated (exit 2)
    validate_plan(plan)
    _structure(plan)
    mech, p, gu = plan["mechanism"], plan["params"], plan["guarantee"]
    failures: list[str] = []
    if gu["notion"] != NOTION:
        failures.append(f"guarantee.notion: must be {NOTION!r} (got {gu['notion']!r})")
    ratios = exact_ratios(mech, p)
    for field, ratio in (("epsilon_perm", ratios["perm"]), ("epsilon_1", ratios["one"]), ("epsilon", ratios["one"])):
        if not ratio_within(ratio, float(gu[field])):
            failures.append(f"guarantee.{field}: the numbers give {math.log(ratio)!r} nats > the claim {gu[field]!r}")
    for key, value in claims(mech, p, int(gu["rounds"]), int(gu["max_values"])).items():
        if gu.get(key) != value:
            failures.append(f"guarantee.{key}: the numbers give {value!r}, the plan says {gu.get(key)!r} "
                            "(claims are recomputed, never read)")
    _spec_checks(plan, failures)
    details = {"epsilon_perm_realized": math.log(ratios["perm"]), "epsilon_1_realized": math.log(ratios["one"])}
    if failures:
        return Verification(False, "; ".join(failures), details)
    msg = (f"{mech.upper()}: one report is {float(gu['epsilon_1']):.6g}-LDP, any number of reports of one value "
           f"{float(gu['epsilon_perm']):.6g}-LDP, {gu['rounds']} rounds with at most {gu['max_values']} distinct "
           f"values {float(gu['epsilon_lifetime']):.6g}-LDP (sound bound; a concrete pair of histories loses "
           f"{float(gu['epsilon_lifetime_lower']):.6g}); checked exactly and against the spec")
    return Verification(True, msg, details)

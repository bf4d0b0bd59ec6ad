"""Independent, exact re-check of a PIE plan: its numbers and its agreement with its spec.

From ``params.mu`` (an exact dyadic rational) and the number of symbols ``k`` (``|X|`` for
the RR, ``g`` for the GLH), in 60-digit decimal arithmetic (:mod:`ldpplan.planner._exact`):

* ``e^eps = mu (k - 1)/(1 - mu)``: ``guarantee.epsilon`` and ``params.epsilon`` must bound it
  (:func:`~ldpplan.planner._exact.ratio_within`);
* ``theta = (k mu - 1)/(k - 1)`` (Thm. 4.2/4.4), ``alpha = min(t theta min(log2 n, log2|X|),
  Prop. 4.1 for t eps)`` in bits (Thm. 4.3/4.5): ``guarantee.alpha_bits`` (and ``alpha_nats``)
  must bound it;
* Cor. 3.9: ``1 - (alpha + 1)/log2(1/max_prior)`` must be >= ``guarantee.bayes_error_lower_bound``.

Derived claims are recomputed from the numbers, never read. Then the plan is compared
with its embedded spec: mechanism, domain (size and labels), n, releases, max_prior (the
spec's, or exactly ``1/n`` for the uniform prior), ``g <= g_max``, ``params.epsilon <=
epsilon_max``, the target, and ``params.mu`` must be the grid rounding of ``params.epsilon``
for ``k`` symbols (so editing ``g``, ``mu`` or the domain fails).
"""
from __future__ import annotations

import copy
import math
from decimal import Decimal
from typing import Any, Mapping

from .._exact import ratio_within
from .._plan_format import validate_plan
from .._report import Verification
from .._solve_once import once
from ..errors import PlanFormatError, SpecError
from .._exact import float_down, float_up, to_decimal
from ._exact import NOTION, claimed_numbers, exact_guarantee, hash_params
from .claims import predicted_of, unshuffled_baseline
from ._solve import select
from .spec import HASH_PRIME_LARGE, MAX_DOMAIN, parse_spec
from ...mechanisms.pie import keep_probability
from ...solvers.pie import total_l2_loss_glh

__all__ = ["verify", "exact_guarantee", "float_up", "float_down", "NOTION"]  # float_up, float_down re-exported from .._exact

def _structure(plan: Mapping[str, Any]) -> tuple[int, int, float, float]:
    """``(|X|, symbols, mu, epsilon)`` after the structural checks (PlanFormatError)."""
    p, dom = plan["params"], plan["domain"]
    k = int(p["domain_size"])
    if int(dom["size"]) != k:
        raise PlanFormatError(f"params.domain_size: must equal domain.size = {dom['size']} (got {k})")
    labels = dom["labels"]
    if labels is not None and (len(labels) != k or len(set(labels)) != k):
        raise PlanFormatError(f"domain.labels: must be {k} distinct labels (domain.size)")
    if plan["mechanism"] == "glh":
        symbols = int(p["g"])
    else:
        symbols = k
    if k > MAX_DOMAIN or (plan["mechanism"] == "glh" and max(k, symbols) > HASH_PRIME_LARGE):
        raise PlanFormatError(f"params: domain_size must be <= {MAX_DOMAIN} (GLH: g and domain_size <= "
                              f"{HASH_PRIME_LARGE}, the hash prime)")
    mu = float(p["mu"])
    if not (0.0 < mu < 1.0) or math.floor(mu * 2.0**48) != mu * 2.0**48:
        raise PlanFormatError(f"params.mu: must be a multiple of 2^-48 in (0, 1) (got {mu!r})")
    return k, symbols, mu, float(p["epsilon"])


def _spec_checks(plan: Mapping[str, Any], ex: dict[str, Any], failures: list[str]):
    """The plan against its spec (appends to ``failures``); returns the parsed spec."""
    spec, parsed_from = _spec_with_recorded_inputs(plan)
    p, gu, mech = plan["params"], plan["guarantee"], plan["mechanism"]
    model = spec.model
    allowed = ("rr", "glh") if model.mechanism == "pie" else (model.mechanism,)
    if mech not in allowed:
        failures.append(f"mechanism: the spec asks for {model.mechanism!r}, the plan is {mech!r}")
    if int(plan["domain"]["size"]) != spec.domain_size:
        failures.append(f"domain.size: the spec gives {spec.domain_size}, the plan says {plan['domain']['size']}")
    if plan["domain"]["labels"] != spec.labels:
        failures.append("domain.labels: differ from the spec's domain labels")
    if int(gu["n"]) != spec.n:
        failures.append(f"guarantee.n: the spec gives n = {spec.n}, the plan says {gu['n']}")
    if int(gu["releases"]) != model.releases:
        failures.append(f"guarantee.releases: the spec gives {model.releases}, the plan says {gu['releases']}")
    prior = spec.max_prior if spec.max_prior is not None else 1.0 / spec.n
    if float(gu["max_prior"]) != prior:
        what = "the spec's target.max_prior" if spec.max_prior is not None else "1/n (uniform prior)"
        failures.append(f"guarantee.max_prior: must be {what} = {prior!r} (got {gu['max_prior']!r})")
    if mech == "glh" and int(p["g"]) > model.g_max:
        failures.append(f"params.g: {p['g']} exceeds the spec's g_max = {model.g_max}")
    t = spec.target
    if t.epsilon is None and float(p["epsilon"]) > model.epsilon_max:
        failures.append(f"params.epsilon: {p['epsilon']!r} exceeds the spec's epsilon_max = {model.epsilon_max!r}")
    if t.epsilon is not None and float(gu["epsilon"]) > t.epsilon:
        failures.append(f"guarantee.epsilon: {gu['epsilon']!r} exceeds the target epsilon = {t.epsilon!r}")
    if t.epsilon is not None and float(p["epsilon"]) > t.epsilon:
        failures.append(f"params.epsilon: {p['epsilon']!r} exceeds the target epsilon = {t.epsilon!r}")
    if t.alpha_bits is not None and ex["alpha_bits"] > to_decimal(float(t.alpha_bits)):
        failures.append(f"alpha: the numbers give {float(ex['alpha_bits'])!r} bits > the target alpha_bits = "
                        f"{t.alpha_bits!r}")
    if t.bayes_error is not None:
        if ex["bayes"] is None or ex["bayes"] < to_decimal(float(t.bayes_error)):
            got = None if ex["bayes"] is None else float(ex["bayes"])
            failures.append(f"Cor. 3.9: the numbers give a Bayes-error bound {got!r} < the target {t.bayes_error!r}")
        if float(gu["bayes_error_lower_bound"]) < t.bayes_error:
            failures.append(f"guarantee.bayes_error_lower_bound: {gu['bayes_error_lower_bound']!r} is below the "
                            f"target {t.bayes_error!r}")
    _solution_checks(plan, spec, parsed_from, failures)
    return spec


def _claim_checks(plan: Mapping[str, Any], spec, ex: dict[str, Any], failures: list[str]) -> None:
    """Every ``guarantee`` number is the one the numbers give (:func:`.exact.claimed_numbers`), verbatim;
    ``params`` holds exactly the mechanism's numbers."""
    gu, p = plan["guarantee"], plan["params"]
    for key, value in claimed_numbers(ex, spec.target).items():
        if gu.get(key) != value:
            failures.append(f"guarantee.{key}: the numbers give {value!r}, the plan says {gu.get(key)!r} "
                            "(claims are recomputed, never read)")
    prior = "uniform" if spec.max_prior is None else "max_prior"
    if gu.get("prior") != prior:
        failures.append(f"guarantee.prior: must be {prior!r} (got {gu.get('prior')!r})")
    keys = {"epsilon", "domain_size", "mu"} | ({"g", "hash"} if plan["mechanism"] == "glh" else set())
    if set(p) != keys:
        failures.append(f"params: must hold exactly {sorted(keys)} (got {sorted(p)})")
    if plan["mechanism"] == "glh":
        want = hash_params(int(p["domain_size"]), int(p["g"]))
        if p.get("hash") != want:
            failures.append(f"params.hash: must describe the runtime's hash family {want} (got {p.get('hash')!r:.200})")


#: relative tolerance of a recomputed prediction (floats of the same formulas; libm may differ in the last bits)
PREDICTION_RTOL = 1e-9


def _prediction_checks(plan: Mapping[str, Any], spec, ex: dict[str, Any], failures: list[str]) -> None:
    """``predicted`` is recomputed from the numbers (:func:`.claims.predicted_of`, Prop. 4.6/4.7 at the
    realised epsilon; the no-shuffler comparison for a ``central_epsilon`` target), never read."""
    mech, p = plan["mechanism"], plan["params"]
    g = int(p["g"]) if mech == "glh" else None
    want = predicted_of(mech, float(ex["epsilon"]), int(p["domain_size"]), int(plan["guarantee"]["n"]), g,
                        float(ex["theta"]))
    if spec is not None and spec.target.central_epsilon is not None:
        want.update(unshuffled_baseline(mech, spec, want["l2_loss_total"]["value"]))
    got = plan["predicted"]
    if set(got) != set(want):
        failures.append(f"predicted: must hold exactly {sorted(want)} (got {sorted(got)})")
        return
    for key, entry in want.items():
        value = got[key].get("value") if isinstance(got[key], Mapping) else None
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isclose(
                float(value), float(entry["value"]), rel_tol=PREDICTION_RTOL, abs_tol=1e-300):
            failures.append(f"predicted.{key}: recomputed {entry['value']!r} from the numbers (got {value!r})")


def _solution_checks(plan: Mapping[str, Any], spec, parsed_from: Any, failures: list[str]) -> None:
    """The plan's mechanism, epsilon and g must be the spec's solution.

    Floats may differ in the last bits across platforms (libm), so epsilon is compared with
    a relative 1e-9, and another ``g`` (or, for ``"pie"``, the other mechanism) is accepted
    only at the same predicted loss (within a relative 1e-9: a near tie).
    """
    try:
        results, chosen, _ = once(select, spec, plan["spec"], memo_key=parsed_from)
    except SpecError as exc:
        failures.append(f"spec: cannot be solved ({exc})")
        return
    mech, p = plan["mechanism"], plan["params"]
    if mech not in results:
        return  # the mechanism check of _spec_checks reports it
    res = results[mech]
    eps = float(res.parameters["epsilon"])
    if abs(float(p["epsilon"]) - eps) > 1e-9 * eps:
        failures.append(f"params.epsilon: the spec's solution is {eps!r} nats (the plan says {p['epsilon']!r})")
    if mech == "glh" and int(p["g"]) != int(res.parameters["g"]):
        loss = total_l2_loss_glh(float(p["epsilon"]), int(p["g"]), spec.n, spec.domain_size)
        if not abs(loss - res.objective) <= 1e-9 * res.objective:
            failures.append(f"params.g: the spec's solution is g = {res.parameters['g']} (the plan says {p['g']})")
    if chosen != mech and not abs(results[mech].objective - results[chosen].objective) <= 1e-9 * results[chosen].objective:
        failures.append(f"mechanism: the spec's choice is {chosen!r} (smaller predicted l2 loss), the plan is {mech!r}")


def _spec_with_recorded_inputs(plan: Mapping[str, Any]):
    """``(parsed, mapping)``: the embedded spec parsed, and the mapping parsed (numbers it read from data files
    are taken from ``planning_inputs``)."""
    raw = copy.deepcopy(dict(plan["spec"])) if isinstance(plan["spec"], Mapping) else plan["spec"]
    recorded = {pi.get("what"): pi.get("value") for pi in plan["planning_inputs"]}
    refs = []
    if isinstance(raw, dict) and isinstance(raw.get("users"), Mapping):
        refs.append(("users (n)", lambda v: raw.__setitem__("users", v), int))
    target = raw.get("target") if isinstance(raw, dict) else None
    if isinstance(target, dict) and isinstance(target.get("max_prior"), Mapping):
        refs.append(("target.max_prior", lambda v: target.__setitem__("max_prior", v), float))
    for what, put, kind in refs:
        value = recorded.get(what)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (kind is int and not isinstance(value, int)):
            raise PlanFormatError(f"planning_inputs: the spec reads {what!r} from a data file; the plan must record "
                                  "its value (one entry with that 'what' and a number 'value')")
        put(value)
    try:
        return once(parse_spec, raw), raw
    except SpecError as exc:
        raise PlanFormatError(f"spec: the embedded spec is invalid ({exc})") from None


def verify(plan: Mapping[str, Any]) -> Verification:
    """Re-check a PIE plan exactly from its numbers and against its embedded spec.

    Returns
    -------
    Verification
        ``holds`` False names the field, the rule and the amount (nats or bits).

    Raises
    ------
    PlanFormatError
        Schema violation, a non-finite number, or unusable numbers (mu off the grid, sizes).
    """
    validate_plan(plan)  # the runtime's envelope reader (finite numbers, domain, fields), then the schema
    k, symbols, mu, eps_param = _structure(plan)
    gu = plan["guarantee"]
    failures: list[str] = []
    if gu["notion"] != NOTION:
        failures.append(f"guarantee.notion: must be {NOTION!r} (got {gu['notion']!r})")
    expected_mu = keep_probability(eps_param, symbols)
    if mu != expected_mu:
        failures.append(f"params.mu: {mu!r} is not the 2^-48 grid rounding (down) of the keep probability of "
                        f"params.epsilon = {eps_param!r} for {symbols} symbols ({expected_mu!r}); "
                        "g, mu, epsilon or the domain were edited")
    if not (mu * symbols > 1.0):
        return Verification(False, f"params.mu = {mu!r} is not in (1/{symbols}, 1): epsilon would be <= 0",
                            {"mu": mu})
    n, t, max_prior = int(gu["n"]), int(gu["releases"]), float(gu["max_prior"])
    ex = exact_guarantee(mu, symbols, k, n, t, max_prior)
    for field in ("guarantee.epsilon", "params.epsilon"):
        claim = float(gu["epsilon"]) if field == "guarantee.epsilon" else eps_param
        if not ratio_within(ex["ratio"], claim):
            failures.append(f"{field}: the channel's epsilon log(mu/nu) = {float(ex['epsilon'])!r} nats exceeds the "
                            f"claim {claim!r} by {float(ex['epsilon'] - to_decimal(float(claim))):.3g} nats")
    for field, key in (("guarantee.alpha_bits", "alpha_bits"), ("guarantee.alpha_nats", "alpha_nats")):
        claim = to_decimal(float((gu[key])))
        if ex[key] > claim:
            failures.append(f"{field}: the numbers give alpha = {float(ex[key])!r} > the claim {float(gu[key])!r} "
                            f"(by {float(ex[key] - claim):.3g}; Thm. 4.2/4.4, Prop. 4.1)")
    bayes_claim = float(gu["bayes_error_lower_bound"])
    bayes_true = ex["bayes"] if ex["bayes"] is not None else Decimal(0)
    if to_decimal(float(bayes_claim)) > max(bayes_true, Decimal(0)):
        failures.append(f"guarantee.bayes_error_lower_bound: claims {bayes_claim!r} but Cor. 3.9 gives "
                        f"{float(bayes_true)!r} from the numbers")
    spec = _spec_checks(plan, ex, failures)
    _claim_checks(plan, spec, ex, failures)
    _prediction_checks(plan, spec, ex, failures)
    details = {"epsilon_realized": float(ex["epsilon"]), "theta": float(ex["theta"]),
               "alpha_bits_recomputed": float(ex["alpha_bits"]),
               "bayes_error_bound_recomputed": None if ex["bayes"] is None else float(ex["bayes"]),
               "slack_epsilon_nats": float(to_decimal(float((gu["epsilon"]))) - ex["epsilon"]),
               "slack_alpha_bits": float(to_decimal(float((gu["alpha_bits"]))) - ex["alpha_bits"])}
    if failures:
        return Verification(False, "; ".join(failures), details)
    mech = plan["mechanism"]
    msg = (f"{mech.upper()} is {float(gu['epsilon']):.6g}-LDP and (U, {float(gu['alpha_bits']):.4g} bits)-PIE private "
           f"(theta = {float(ex['theta']):.4g}, {t} release{'s' if t > 1 else ''}, n = {n}); Bayes error >= "
           f"{bayes_claim:.4g} (Cor. 3.9); checked exactly and against the spec")
    return Verification(True, msg, details)

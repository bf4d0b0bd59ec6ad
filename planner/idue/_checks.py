"""Plan-vs-spec and derived-claim comparisons for IDUE / IDUE-PS verification.

Each function returns ``None`` when everything matches, else one line naming the field,
the rule and the values.
"""
from __future__ import annotations

import math
from decimal import Decimal
from typing import Any, Mapping

from .._exact import exact, to_decimal
from .._solve_once import once
from ..errors import PlanFormatError, SpecError
from .claims import USERS_SETS_WHAT, baselines_of, predicted_of
from .spec import NOTION_NAMES, parse_idue_spec
from ._itemsets import set_budget_table

__all__ = ["compare_spec", "compare_derived", "embedded_spec"]


def embedded_spec(plan: Mapping[str, Any]):
    """Re-parse ``plan["spec"]`` (files must be inlined) into ``(IDUESpec, ResolvedLevels)``.

    Raises
    ------
    PlanFormatError
        When the embedded spec names a file or does not parse.
    """
    raw = plan.get("spec")
    if not isinstance(raw, Mapping):
        raise PlanFormatError("spec: must be the object the plan was solved from")
    for key in ("domain_csv", "item_levels_csv"):
        if key in raw:
            raise PlanFormatError(f"spec.{key}: a plan embeds its spec with files inlined (domain list, level items)")
    try:
        return once(parse_idue_spec, raw, base_dir=None)
    except SpecError as exc:
        raise PlanFormatError(f"spec.{exc.field}: {exc.rule} (got {exc.value!r})") from None


def _differs(field: str, plan_value: Any, spec_value: Any) -> str | None:
    if plan_value != spec_value:
        return f"{field}: the plan says {plan_value!r} but its spec asks for {spec_value!r}"
    return None


def _levels_match(plan: Mapping[str, Any], levels) -> str | None:
    lv = plan["params"]["levels"]
    if [x["name"] for x in lv] != list(levels.names):
        return _differs("params.levels[*].name", [x["name"] for x in lv], list(levels.names))
    spec_level = {repr(x): k for k, items in enumerate(levels.items) for x in items}
    for j, x in enumerate(lv):
        if x["epsilon"] != float(levels.epsilons[j]):
            return _differs(f"params.levels[{j}].epsilon", x["epsilon"], float(levels.epsilons[j]))
    for j, x in enumerate(lv):
        for item in x["items"]:
            k = spec_level.get(repr(item))
            if k != j:
                where = "in no level" if k is None else (f"in level {levels.names[k]!r} "
                                                         f"(epsilon {float(levels.epsilons[k])!r})")
                return (f"params.levels[{j}].items: item {item!r} is in level {x['name']!r} (epsilon {x['epsilon']!r}) "
                        f"but the spec puts it {where}")
    for j, x in enumerate(lv):
        if x["size"] != len(levels.items[j]):
            return _differs(f"params.levels[{j}].size", x["size"], len(levels.items[j]))
    return None


def compare_spec(plan: Mapping[str, Any]) -> str | None:
    """The plan's mechanism, model, notion, padding length, domain and levels vs its embedded spec."""
    spec, levels = embedded_spec(plan)
    params = plan["params"]
    return (_differs("mechanism", plan["mechanism"], spec.mechanism)
            or _differs("params.model", params.get("model"), spec.model)
            or _differs("guarantee.notion", plan["guarantee"]["notion"], NOTION_NAMES[spec.notion])
            or _differs("params.padding_length", params.get("padding_length"), spec.padding_length)
            or _differs("domain.size", plan["domain"]["size"], levels.size)
            or _differs("domain.labels", plan["domain"]["labels"], levels.labels)
            or _levels_match(plan, levels))


def _close(field: str, claimed: float, actual: float, rel: float = 1e-9) -> str | None:
    if not abs(claimed - actual) <= rel * max(1.0, abs(actual)):
        return f"{field}: claims {claimed!r} but the plan's numbers give {actual!r}"
    return None


def _predicted_match(field: str, claimed: Mapping[str, Any], actual: Mapping[str, Any]) -> str | None:
    if set(claimed) != set(actual):
        return _differs(f"{field}", sorted(claimed), sorted(actual))
    for k, v in actual.items():
        c = claimed[k]
        problem = (_close(f"{field}.{k}.value", c["value"], v["value"])
                   or _differs(f"{field}.{k}.unit", c["unit"], v["unit"]))
        if problem:
            return problem
    return None


def _ldp_claims(g: Mapping[str, Any], ldp: Decimal, e: list[float], item_sets: bool) -> str | None:
    if "ldp_epsilon" not in g:
        return "guarantee.ldp_epsilon: required (Lemma 1: the plain LDP budget of the plan's numbers)"
    # exact over single items (IDUE); over item sets (IDUE-PS) only an upper bound: never claim "exact" there
    kind = "upper_bound" if item_sets else "exact"
    if "ldp_epsilon_kind" in g and g["ldp_epsilon_kind"] != kind:
        return (f"guarantee.ldp_epsilon_kind: the plan says {g['ldp_epsilon_kind']!r} but its ldp_epsilon is "
                f"{'an upper bound over item-set inputs' if item_sets else 'exact for single-item inputs'} ({kind!r})")
    if "ldp_epsilon" in g:
        value = to_decimal(exact(g["ldp_epsilon"]))
        if value < ldp - Decimal("1e-40"):
            return (f"guarantee.ldp_epsilon: claims {g['ldp_epsilon']!r} but Lemma 1 with the plan's a, b gives "
                    f"{float(ldp)!r} (exact; smaller by {float(ldp - value):.3e} nats)")
        if value - ldp > Decimal(4e-16) * max(ldp, Decimal(1)):
            return (f"guarantee.ldp_epsilon: claims {g['ldp_epsilon']!r} but Lemma 1 with the plan's a, b gives "
                    f"{float(ldp)!r} exactly (the claim must be the exact value rounded up to a float)")
    if "ldp_epsilon_lemma1" in g and g["ldp_epsilon_lemma1"] != float(min(max(e), 2 * min(e))):
        return _differs("guarantee.ldp_epsilon_lemma1", g["ldp_epsilon_lemma1"], float(min(max(e), 2 * min(e))))
    return None


def _set_claims(plan: Mapping[str, Any]) -> str | None:
    """``guarantee.set_budgets`` (IDUE-PS: required) recomputed with eq. (16) and required verbatim."""
    g, params = plan["guarantee"], plan["params"]
    if params.get("padding_length") is None:
        return None if "set_budgets" not in g else "guarantee.set_budgets: applies to 'idue-ps' plans only"
    if "set_budgets" not in g:
        return "guarantee.set_budgets: required for 'idue-ps' plans (ID-LDP eq. 16 by set size)"
    lv = params["levels"]
    want = set_budget_table([x["epsilon"] for x in lv], [x["size"] for x in lv], params["padding_length"],
                            params["dummy"]["epsilon"])
    got = g["set_budgets"]
    if not isinstance(got, Mapping) or not isinstance(got.get("by_size"), list):
        return "guarantee.set_budgets.by_size: must be a list of {size, min, max} rows"
    if len(got["by_size"]) != len(want["by_size"]):
        return _differs("guarantee.set_budgets.by_size (rows)", len(got["by_size"]), len(want["by_size"]))
    for k, (row, w) in enumerate(zip(got["by_size"], want["by_size"])):
        for key in ("size", "min", "max"):
            if not isinstance(row, Mapping) or row.get(key) != w[key]:
                return (f"guarantee.set_budgets.by_size[{k}].{key}: claims "
                        f"{row.get(key) if isinstance(row, Mapping) else row!r} but eq. (16) with the plan's level "
                        f"budgets gives {w[key]!r}")
    for key in ("padding_length", "dummy_epsilon", "source"):
        problem = _differs(f"guarantee.set_budgets.{key}", got.get(key), want[key])
        if problem:
            return problem
    return _users_claims(plan)


def _users_claims(plan: Mapping[str, Any]) -> str | None:
    """``guarantee.users_set_budgets``: recorded as a planning input; ordered quantiles within [min E, max E]."""

    dist = plan["guarantee"].get("users_set_budgets")
    if dist is None:
        return None
    if not any(isinstance(p, Mapping) and p.get("what") == USERS_SETS_WHAT for p in plan.get("planning_inputs", [])):
        return "guarantee.users_set_budgets: the users' item sets it summarises must be listed in planning_inputs"
    keys = ["min", "p05", "p25", "median", "p75", "p95", "max"]
    if not isinstance(dist, Mapping) or not all(isinstance(dist.get(k), (int, float)) for k in keys + ["mean"]):
        return f"guarantee.users_set_budgets: must hold the numbers {keys + ['mean']}"
    e = [x["epsilon"] for x in plan["params"]["levels"]]
    vals = [dist[k] for k in keys]
    lo, hi = min(e) * (1 - 1e-12), max(e) * (1 + 1e-12)
    if any(x > y for x, y in zip(vals, vals[1:])) or not (lo <= vals[0] and vals[-1] <= hi) \
            or not (vals[0] <= dist["mean"] <= vals[-1]):
        return (f"guarantee.users_set_budgets: quantiles {vals} must increase and lie in [min E, max E] = "
                f"[{min(e)!r}, {max(e)!r}] (eq. 16 budgets lie between the smallest and largest level budget)")
    return None


def compare_derived(plan: Mapping[str, Any], ldp: Decimal) -> str | None:
    """Recompute ``guarantee``, ``params.dummy``, ``predicted`` and ``baselines`` and compare."""
    spec, _ = embedded_spec(plan)
    params, g = plan["params"], plan["guarantee"]
    lv = params["levels"]
    e = [x["epsilon"] for x in lv]
    emin = min(e)
    problem = (_differs("guarantee.epsilon", g["epsilon"], emin)
               or _differs("guarantee.levels", g.get("levels"), {x["name"]: x["epsilon"] for x in lv})
               or _ldp_claims(g, ldp, e, item_sets=params.get("padding_length") is not None)
               or _set_claims(plan))
    if problem:
        return problem
    L = params.get("padding_length")
    if L is not None:
        k = min(range(len(lv)), key=lambda j: lv[j]["epsilon"])
        want = {"epsilon": emin, "a": lv[k]["a"], "b": lv[k]["b"]}
        got = {key: params["dummy"].get(key) for key in want}
        if got != want:
            return _differs("params.dummy", got, want)
    a, b, sizes = [x["a"] for x in lv], [x["b"] for x in lv], [x["size"] for x in lv]
    problem = _predicted_match("predicted", plan["predicted"], predicted_of(a, b, sizes, L, spec.users))
    if problem:
        return problem
    want_b = baselines_of(emin, plan["domain"]["size"], L)
    got_b = plan["baselines"]
    if [x.get("name") for x in got_b] != [x["name"] for x in want_b]:
        return _differs("baselines[*].name", [x.get("name") for x in got_b], [x["name"] for x in want_b])
    for k, (got, want) in enumerate(zip(got_b, want_b)):
        problem = (_differs(f"baselines[{k}].params", got.get("params"), want["params"])
                   or _differs(f"baselines[{k}].guarantee", got.get("guarantee"), want["guarantee"])
                   or _predicted_match(f"baselines[{k}].predicted", got.get("predicted", {}), want["predicted"]))
        if problem:
            return problem
    if not all(math.isfinite(x) for x in e):  # pragma: no cover - refused before
        return "params.levels[*].epsilon: must be finite"
    return None

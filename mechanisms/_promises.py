"""What a plan's embedded spec promises, read by the runtime itself (numpy + stdlib only).

``load()`` must refuse what ``verify`` refuses, and a plan whose ``params``, ``guarantee``
and ``domain`` were rewritten *consistently* still contradicts the spec it embeds. The
planner's spec models (pydantic) are not available on a client, so each family has a small
reader here of the spec keys that determine the guarantee (the planner's spec modules
document them):

* IDUE / IDUE-PS: mechanism, notion, padding length, the domain and every item's level and
  epsilon (``items`` per level, or ``share`` + ``domain`` + ``assignment_seed``);
* PCKV: mechanism, epsilon, the domain, the padding length;
* PIE (rr/glh): mechanism, the domain, n, releases, the prior bound, ``g_max`` and the target;
* ULDP (urr/urap/pum): mechanism, epsilon, the domain, the sensitive set, PUM's tags and
  common mechanism.

Each function raises :class:`PlanError` naming the plan field that differs from its spec.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ._envelope import MAX_DOMAIN_SIZE
from ._plan import PlanError

__all__ = ["spec_of", "spec_domain", "idue_levels", "pckv_promises", "pie_promises", "uldp_promises",
           "IDUE_NOTIONS"]

#: spec ``notion`` of IDUE -> ``guarantee.notion``.
IDUE_NOTIONS = {"minid": "MinID-LDP", "avgid": "AvgID-LDP"}


def _same(field: str, plan_value: Any, spec_value: Any) -> None:
    if plan_value != spec_value:
        raise PlanError(f"{field}: must match the embedded spec ({spec_value!r:.80}) (got {plan_value!r:.80})")


def spec_of(plan: Mapping[str, Any]) -> Mapping[str, Any]:
    """The embedded spec (an object), with no file references (plans embed their files inlined)."""
    spec = plan.get("spec")
    if not isinstance(spec, Mapping):
        raise PlanError("spec: must be the object the plan was solved from")
    return spec


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


def spec_domain(value: Any, field: str) -> tuple[int, list[str] | None]:
    """``(size, labels)`` of a spec domain: a count (labels None) or a list of distinct labels.

    The count is bounded by :data:`MAX_DOMAIN_SIZE` before anything is allocated.
    """
    if _is_int(value):
        if not 1 <= int(value) <= MAX_DOMAIN_SIZE:
            raise PlanError(f"{field}: must be a count in 1..{MAX_DOMAIN_SIZE} (got {value!r:.40})")
        return int(value), None
    if isinstance(value, list) and len(value) <= MAX_DOMAIN_SIZE:
        labels = [str(x) for x in value]
        if len(set(labels)) != len(labels):
            raise PlanError(f"{field}: labels must be distinct")
        return len(labels), labels
    raise PlanError(f"{field}: must be a count or a list of labels (got {type(value).__name__})")


def _check_domain(plan: Mapping[str, Any], size: int, labels: list[str] | None, field: str) -> None:
    _same("domain.size", plan["domain"]["size"], size)
    if plan["domain"]["labels"] != labels:
        raise PlanError(f"domain.labels: must be the labels of the embedded {field} "
                        f"({'none' if labels is None else len(labels)})")


# ----------------------------------------------------------------------------- IDUE
def _shares_to_counts(shares: list[float], m: int) -> list[int]:
    """Largest-remainder split of ``m`` items by ``shares`` (at least one per level): the planner's rule."""
    raw = np.array(shares) * m
    counts = np.floor(raw).astype(int)
    rest = m - counts.sum()
    order = np.argsort(-(raw - counts), kind="stable")
    counts[order[:rest]] += 1
    for i in range(len(counts)):
        if counts[i] == 0:
            j = int(np.argmax(counts))
            counts[j] -= 1
            counts[i] = 1
    return counts.tolist()


def _idue_by_items(spec: Mapping[str, Any], levels: list) -> tuple[list[list], list[str]]:
    items: list[list] = []
    for i, lv in enumerate(levels):
        given = lv.get("items")
        if _is_int(given) and 1 <= given <= MAX_DOMAIN_SIZE:
            name = str(lv.get("name"))
            items.append([name] if given == 1 else [f"{name}-{k}" for k in range(1, int(given) + 1)])
        elif isinstance(given, list) and given:
            items.append([str(x) for x in given])
        else:
            raise PlanError(f"spec.levels[{i}].items: must be a count >= 1 or a non-empty list of labels")
    order = [x for level in items for x in level]
    if "domain" in spec and spec["domain"] is not None:
        size, given_order = spec_domain(spec["domain"], "spec.domain")
        if given_order is None or sorted(given_order) != sorted(order):
            raise PlanError("spec.domain: with 'items' on every level must list exactly the levels' items")
        order = given_order
    return items, order


def _idue_by_shares(spec: Mapping[str, Any], levels: list) -> tuple[list[list], list[str] | None, int]:
    shares = [lv.get("share") for lv in levels]
    if not all(_is_number(s) and 0 < s <= 1 for s in shares) or abs(sum(shares) - 1.0) > 1e-9:
        raise PlanError(f"spec.levels[*].share: must be numbers in (0, 1] summing to 1 (got {shares!r:.80})")
    m, labels = spec_domain(spec.get("domain"), "spec.domain")
    if m < len(levels):
        raise PlanError(f"spec.domain: must have at least one item per level ({len(levels)})")
    seed = spec.get("assignment_seed", 0)
    if not _is_int(seed):
        raise PlanError(f"spec.assignment_seed: must be an integer (got {seed!r:.40})")
    counts = _shares_to_counts(shares, m)
    perm = np.random.default_rng(int(seed)).permutation(m)
    level_of = np.repeat(np.arange(len(levels)), counts)[np.argsort(perm)]
    items: list[list] = [[] for _ in levels]
    for idx, lvl in enumerate(level_of.tolist()):
        items[lvl].append(labels[idx] if labels is not None else idx)
    return items, labels, m


def idue_levels(plan: Mapping[str, Any]) -> tuple[list[str], list[float], np.ndarray]:
    """The spec's levels of an IDUE / IDUE-PS plan, checked against the plan's envelope.

    Checks ``mechanism``, ``guarantee.notion``, ``params.padding_length``, ``domain`` against
    the spec, and returns what the caller compares with the plan's levels.

    Returns
    -------
    names : list of str
        Level names in spec order.
    epsilons : list of float
        Each level's budget (nats).
    owner : ndarray of int64, shape (domain.size,)
        The spec's level of every item (domain order).

    Raises
    ------
    PlanError
        A difference, or a spec that names a file (plans embed files inlined).
    """
    spec = spec_of(plan)
    for key in ("domain_csv", "item_levels_csv"):
        if key in spec:
            raise PlanError(f"spec.{key}: a plan embeds its spec with files inlined (domain list, level items)")
    _same("mechanism", plan["mechanism"], spec.get("mechanism"))
    notion = IDUE_NOTIONS.get(spec.get("notion", "minid"))
    _same("guarantee.notion", plan["guarantee"].get("notion"), notion)
    _same("params.padding_length", plan["params"].get("padding_length"), spec.get("padding_length"))
    levels = spec.get("levels")
    if not isinstance(levels, list) or not levels or not all(isinstance(lv, Mapping) for lv in levels):
        raise PlanError("spec.levels: must be a non-empty list of levels")
    names = [lv.get("name") for lv in levels]
    epsilons = [lv.get("epsilon") for lv in levels]
    if not all(isinstance(n, str) and n for n in names) or len(set(names)) != len(names):
        raise PlanError(f"spec.levels[*].name: must be distinct non-empty strings (got {names!r:.80})")
    if not all(_is_number(e) and e > 0 for e in epsilons):
        raise PlanError(f"spec.levels[*].epsilon: must be numbers > 0 (got {epsilons!r:.80})")
    if all(lv.get("items") is not None for lv in levels):
        items, labels = _idue_by_items(spec, levels)
        size = len(labels)
    else:
        items, labels, size = _idue_by_shares(spec, levels)
    _check_domain(plan, size, labels, "spec (levels and domain)")
    index = {lab: k for k, lab in enumerate(labels)} if labels is not None else None
    owner = np.full(size, -1, dtype=np.int64)
    for j, level in enumerate(items):
        for item in level:
            k = index[item] if index is not None else int(item)
            if owner[k] >= 0:
                raise PlanError(f"spec.levels[{j}].items: item {item!r:.40} is in two levels")
            owner[k] = j
    return names, [float(e) for e in epsilons], owner


# ----------------------------------------------------------------------------- PCKV
def pckv_promises(plan: Mapping[str, Any], d: int, padding_length: int) -> float:
    """Check a PCKV plan's mechanism, domain and padding length against its spec; return ``spec.epsilon``.

    The caller checks the numbers' composed epsilon against the returned budget.
    """
    spec = spec_of(plan)
    mech = spec.get("mechanism")
    if mech not in ("pckv", plan["mechanism"]):
        raise PlanError(f"mechanism: must match the embedded spec ({mech!r:.40}) (got {plan['mechanism']!r})")
    epsilon = spec.get("epsilon")
    if not _is_number(epsilon) or not 0 < epsilon <= 20:
        raise PlanError(f"spec.epsilon: must be a number in (0, 20] (got {epsilon!r:.40})")
    field = "keys" if spec.get("domain") is None and "keys" in spec else "domain"
    value = spec.get(field)
    if value == "data":
        if plan["domain"]["labels"] is None:
            raise PlanError(f"domain.labels: a spec.{field} = \"data\" plan must list the data's keys")
    else:
        size, labels = spec_domain(value, f"spec.{field}")
        _check_domain(plan, size, labels, f"spec.{field}")
    _same("params.domain_size", d, plan["domain"]["size"])
    L = spec.get("padding_length", 1)
    if _is_int(L):
        _same("params.padding_length", padding_length, int(L))
    else:
        private = L.get("private") if isinstance(L, Mapping) else None
        bound = private.get("max") if isinstance(private, Mapping) else spec.get("max_padding_length", 64)
        if L != "auto" and private is None:
            raise PlanError(f"spec.padding_length: must be an integer, \"auto\" or {{private = ...}} (got {L!r:.40})")
        if not _is_int(bound) or padding_length > bound:
            raise PlanError(f"params.padding_length: must be <= the spec's bound {bound!r:.40} (got {padding_length})")
    return float(epsilon)


# ----------------------------------------------------------------------------- PIE
def _recorded(plan: Mapping[str, Any], what: str) -> Any:
    for entry in plan["planning_inputs"] if isinstance(plan["planning_inputs"], list) else ():
        if isinstance(entry, Mapping) and entry.get("what") == what:
            return entry.get("value")
    raise PlanError(f"planning_inputs: the spec reads {what!r} from a data file; the plan must record its value")


def pie_promises(plan: Mapping[str, Any]) -> dict[str, Any]:
    """Check a PIE plan's mechanism, domain, n, releases, prior bound and ``g`` against its spec.

    Returns
    -------
    dict
        The spec's ``target`` (``epsilon``, ``alpha_bits`` or ``bayes_error``, None when not
        set) and ``epsilon_max``: the caller checks the numbers against them.
    """
    spec = spec_of(plan)
    mech = spec.get("mechanism")
    if mech not in ("pie", plan["mechanism"]):
        raise PlanError(f"mechanism: must match the embedded spec ({mech!r:.40}) (got {plan['mechanism']!r})")
    value = spec.get("domain") if spec.get("domain") is not None else spec.get("domain_size")
    size, labels = spec_domain(value, "spec.domain")
    _check_domain(plan, size, labels, "spec.domain")
    users = spec.get("users") if spec.get("users") is not None else spec.get("n")
    if isinstance(users, Mapping):
        users = _recorded(plan, "users (n)")
    if not _is_int(users):
        raise PlanError(f"spec.users: must be an integer (got {users!r:.40})")
    _same("guarantee.n", plan["guarantee"].get("n"), int(users))
    _same("guarantee.releases", plan["guarantee"].get("releases"), spec.get("releases", 1))
    target = spec.get("target")
    if not isinstance(target, Mapping):
        raise PlanError("spec.target: must be an object (bayes_error, alpha_bits or epsilon)")
    prior = target.get("max_prior")
    if isinstance(prior, Mapping):
        prior = _recorded(plan, "target.max_prior")
    prior = 1.0 / int(users) if prior is None else prior
    _same("guarantee.max_prior", plan["guarantee"].get("max_prior"), prior)
    g_max = spec.get("g_max", 2**31 - 1)
    if plan["mechanism"] == "glh" and not (_is_int(g_max) and plan["params"].get("g", 0) <= g_max):
        raise PlanError(f"params.g: must be <= the spec's g_max = {g_max!r:.40} (got {plan['params'].get('g')!r})")
    out = {key: target.get(key) for key in ("epsilon", "alpha_bits", "bayes_error")}
    out["epsilon_max"] = spec.get("epsilon_max", 30.0)
    for key, v in out.items():
        if v is not None and not _is_number(v):
            raise PlanError(f"spec.target.{key}: must be a number (got {v!r:.40})")
    return out


# ----------------------------------------------------------------------------- ULDP
def _uldp_sensitive(value: Any, size: int, labels: list[str] | None) -> list[int]:
    if _is_int(value):
        if not 1 <= value <= size:
            raise PlanError(f"spec.sensitive: must be a count in [1, {size}] (got {value})")
        return list(range(int(value)))
    if not isinstance(value, list) or not value:
        raise PlanError("spec.sensitive: must be a count or a non-empty list of items")
    index = {lab: k for k, lab in enumerate(labels)} if labels is not None else None
    idx = []
    for j, item in enumerate(value):
        k = index.get(str(item), -1) if index is not None else (int(item) if _is_int(item) else -1)
        if not 0 <= k < size:
            raise PlanError(f"spec.sensitive[{j}]: must be an item of the spec's domain (got {item!r:.40})")
        idx.append(k)
    if len(set(idx)) != len(idx):
        raise PlanError("spec.sensitive: must list distinct items")
    return sorted(idx)


def uldp_promises(plan: Mapping[str, Any]) -> float:
    """Check a ULDP plan's mechanism, domain, sensitive set (params and guarantee) and PUM tags
    against its spec; return ``spec.epsilon`` (the caller checks the numbers against it)."""
    spec = spec_of(plan)
    _same("mechanism", plan["mechanism"], spec.get("mechanism"))
    epsilon = spec.get("epsilon")
    if not _is_number(epsilon) or not epsilon > 0:
        raise PlanError(f"spec.epsilon: must be a number > 0 (got {epsilon!r:.40})")
    size, labels = spec_domain(spec.get("domain"), "spec.domain")
    _check_domain(plan, size, labels, "spec.domain")
    sensitive = _uldp_sensitive(spec.get("sensitive"), size, labels)
    _same("params.sensitive", sorted(plan["params"].get("sensitive") or []), sensitive)
    _same("guarantee.sensitive", sorted(plan["guarantee"].get("sensitive") or []), sensitive)
    if spec.get("mechanism") == "pum":
        _same("params.tags", plan["params"].get("tags"), spec.get("tags"))
        _same("params.common", plan["params"].get("common"), spec.get("common") or "urr")
    return float(epsilon)

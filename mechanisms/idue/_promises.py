"""What an IDUE / IDUE-PS plan's embedded spec promises, read by the runtime (numpy + stdlib only).

The spec keys that determine the guarantee: mechanism, notion, padding length, the domain and every item's level and
epsilon (``items`` per level, or ``share`` + ``domain`` + ``assignment_seed``). See :mod:`ldpplan.mechanisms._promises`.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from .._envelope import MAX_DOMAIN_SIZE
from .._plan import PlanError
from .._promises import spec_of, spec_domain, same, is_int, is_number, check_domain

__all__ = ["idue_levels", "IDUE_NOTIONS", "shares_to_counts", "items_by_shares"]

#: spec ``notion`` of IDUE -> ``guarantee.notion``.
IDUE_NOTIONS = {"minid": "MinID-LDP", "avgid": "AvgID-LDP"}


def shares_to_counts(shares: list[float], m: int) -> list[int]:
    """Largest-remainder split of ``m`` items by ``shares`` (at least one per level).

    The one copy of the rule: the planner (``ldpplan.planner.idue.spec``) splits a spec's domain
    with it and the runtime re-derives the split of an embedded spec with it.

    Parameters
    ----------
    shares : list of float
        Each level's share of the domain, summing to 1.
    m : int
        Items to split, ``m >= len(shares)``.

    Returns
    -------
    list of int
        Items per level: ``floor(share m)``, the ``m - sum`` left over to the largest remainders
        (ties: the first level), then an empty level takes one item from the largest.
    """
    raw = np.array(shares) * m
    counts = np.floor(raw).astype(int)
    rest = m - counts.sum()
    order = np.argsort(-(raw - counts), kind="stable")
    counts[order[:rest]] += 1
    for i in range(len(counts)):  # at least one item per level (taken from the largest level)
        if counts[i] == 0:
            j = int(np.argmax(counts))
            counts[j] -= 1
            counts[i] = 1
    return counts.tolist()


_shares_to_counts = shares_to_counts  # the former private name


def items_by_shares(shares: list[float], m: int, seed: int, labels: list[str] | None) -> list[list]:
    """Each level's items when a spec gives shares: :func:`shares_to_counts` over a seeded permutation.

    The one copy of the assignment (planner and runtime): item ``i`` of the domain goes to the level
    of position ``argsort(perm)[i]`` in ``repeat(levels, counts)``, ``perm`` the permutation of
    ``numpy.random.default_rng(seed)``.

    Parameters
    ----------
    shares : list of float
        Each level's share, summing to 1.
    m : int
        Domain size (``>= len(shares)``).
    seed : int
        The spec's ``assignment_seed``.
    labels : list of str or None
        The domain's labels (None: items are the indices ``0 .. m-1``).

    Returns
    -------
    list of list
        Per level, its items (labels, or int indices) in domain order.
    """
    counts = shares_to_counts(shares, m)
    perm = np.random.default_rng(int(seed)).permutation(m)
    level_of = np.repeat(np.arange(len(shares)), counts)[np.argsort(perm)]
    items: list[list] = [[] for _ in shares]
    for idx, lvl in enumerate(level_of.tolist()):
        items[lvl].append(labels[idx] if labels is not None else idx)
    return items


def _idue_by_items(spec: Mapping[str, Any], levels: list) -> tuple[list[list], list[str]]:
    items: list[list] = []
    for i, lv in enumerate(levels):
        given = lv.get("items")
        if is_int(given) and 1 <= given <= MAX_DOMAIN_SIZE:
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
    if not all(is_number(s) and 0 < s <= 1 for s in shares) or abs(sum(shares) - 1.0) > 1e-9:
        raise PlanError(f"spec.levels[*].share: must be numbers in (0, 1] summing to 1 (got {shares!r:.80})")
    m, labels = spec_domain(spec.get("domain"), "spec.domain")
    if m < len(levels):
        raise PlanError(f"spec.domain: must have at least one item per level ({len(levels)})")
    seed = spec.get("assignment_seed", 0)
    if not is_int(seed):
        raise PlanError(f"spec.assignment_seed: must be an integer (got {seed!r:.40})")
    return items_by_shares(shares, m, int(seed), labels), labels, m


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
    same("mechanism", plan["mechanism"], spec.get("mechanism"))
    notion = IDUE_NOTIONS.get(spec.get("notion", "minid"))
    same("guarantee.notion", plan["guarantee"].get("notion"), notion)
    same("params.padding_length", plan["params"].get("padding_length"), spec.get("padding_length"))
    levels = spec.get("levels")
    if not isinstance(levels, list) or not levels or not all(isinstance(lv, Mapping) for lv in levels):
        raise PlanError("spec.levels: must be a non-empty list of levels")
    names = [lv.get("name") for lv in levels]
    epsilons = [lv.get("epsilon") for lv in levels]
    if not all(isinstance(n, str) and n for n in names) or len(set(names)) != len(names):
        raise PlanError(f"spec.levels[*].name: must be distinct non-empty strings (got {names!r:.80})")
    if not all(is_number(e) and e > 0 for e in epsilons):
        raise PlanError(f"spec.levels[*].epsilon: must be numbers > 0 (got {epsilons!r:.80})")
    labels: list[str] | None
    if all(lv.get("items") is not None for lv in levels):
        items, labels = _idue_by_items(spec, levels)
        size = len(labels)
    else:
        items, labels, size = _idue_by_shares(spec, levels)
    check_domain(plan, size, labels, "spec (levels and domain)")
    index = {lab: k for k, lab in enumerate(labels)} if labels is not None else None
    owner = np.full(size, -1, dtype=np.int64)
    for j, level in enumerate(items):
        for item in level:
            k = index[item] if index is not None else int(item)
            if owner[k] >= 0:
                raise PlanError(f"spec.levels[{j}].items: item {item!r:.40} is in two levels")
            owner[k] = j
    return names, [float(e) for e in epsilons], owner

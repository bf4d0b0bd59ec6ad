"""What IDUE-PS gives an item *set* (ID-LDP eq. 16): one set, the range by set size, a data set's users.

Theorem 4 of Gu et al. (ICDE 2020) proves that IDUE-PS satisfies MinID-LDP for item sets with
the set budget of eq. (16)::

    epsilon_x = ln[ eta_x sum_{i in x} e^{epsilon_i} / |x| + (1 - eta_x) e^{epsilon*} ],
    eta_x = |x| / max(|x|, L),

where ``epsilon_i`` is the budget of item ``i``'s level and ``epsilon*`` that of the dummy
items (``params.dummy.epsilon`` = min(E)). The plan's values (``guarantee.set_budgets``) are
computed here with 60-digit decimals and rounded up to the next float, so ``verify`` can
recompute them and require them verbatim.
"""
from __future__ import annotations

from decimal import Decimal, localcontext
from typing import Any, Mapping, Sequence

import numpy as np

from .._exact import DIGITS, exact, float_up, to_decimal
from ..errors import SpecError

__all__ = ["SOURCE", "set_budget_exact", "set_budget_table", "explain_items", "user_set_budgets",
           "budget_distribution"]

SOURCE = "ID-LDP eq. 16"


def set_budget_exact(item_epsilons: Sequence[float], padding_length: int, dummy_epsilon: float) -> tuple[Decimal, Decimal]:
    """Eq. (16) in 60-digit decimals.

    Parameters
    ----------
    item_epsilons : sequence of float, length |x| >= 1
        Budget of each item of the set (nats).
    padding_length : int
        ``L``.
    dummy_epsilon : float
        ``epsilon*`` (nats).

    Returns
    -------
    epsilon_x : Decimal
        Nats.
    eta : Decimal
        ``|x| / max(|x|, L)``.

    References
    ----------
    Gu et al., ICDE 2020, eq. (16).
    """
    s, L = len(item_epsilons), int(padding_length)
    with localcontext() as ctx:
        ctx.prec = DIGITS + 10
        eta = Decimal(s) / Decimal(max(s, L))
        mean = sum((to_decimal(exact(e)).exp() for e in item_epsilons), Decimal(0)) / Decimal(s)
        return (eta * mean + (1 - eta) * to_decimal(exact(dummy_epsilon)).exp()).ln(), eta


def set_budget_table(level_epsilons: Sequence[float], sizes: Sequence[int], padding_length: int,
                     dummy_epsilon: float) -> dict[str, Any]:
    """``guarantee.set_budgets``: min / max of eq. (16) over the sets of each size ``1 .. min(L, m)``.

    The largest budget of a size-``s`` set takes ``s`` items of the highest levels, the smallest
    ``s`` items of the lowest (eq. 16 increases with every item's budget).

    Returns
    -------
    dict
        ``{"source", "padding_length", "dummy_epsilon", "by_size": [{"size", "min", "max"}]}``
        (nats, rounded up to the next float).
    """
    L = int(padding_length)
    top = min(L, int(sum(sizes)))
    order = sorted(range(len(level_epsilons)), key=lambda k: level_epsilons[k])
    low = [level_epsilons[k] for k in order for _ in range(min(int(sizes[k]), top))][:top]
    high = [level_epsilons[k] for k in reversed(order) for _ in range(min(int(sizes[k]), top))][:top]
    rows = [{"size": s, "min": float_up(set_budget_exact(low[:s], L, dummy_epsilon)[0]),
             "max": float_up(set_budget_exact(high[:s], L, dummy_epsilon)[0])} for s in range(1, top + 1)]
    return {"source": f"{SOURCE} (Theorem 4): min / max over item sets of each size up to L",
            "padding_length": L, "dummy_epsilon": float(dummy_epsilon), "by_size": rows}


def _item_epsilon_map(plan: Mapping[str, Any]) -> dict[Any, float]:
    return {item: float(lv["epsilon"]) for lv in plan["params"]["levels"] for item in lv["items"]}


def _parse_items(plan: Mapping[str, Any], items: Sequence[Any]) -> list[Any]:
    """Items as the plan names them: labels, or 0-based indices (given as int or digit strings)."""
    labels = plan["domain"]["labels"]
    out: list[Any] = []
    for raw in items:
        x = raw.strip() if isinstance(raw, str) else raw
        if labels is None:
            if isinstance(x, str) and x.lstrip("-").isdigit():
                x = int(x)
            if not isinstance(x, int) or isinstance(x, bool) or not 0 <= x < plan["domain"]["size"]:
                raise SpecError("--items", f"must be item indices 0..{plan['domain']['size'] - 1} "
                                "(this plan's domain has no labels)", raw)
        elif x not in set(labels):
            raise SpecError("--items", "must be labels of the plan's domain.labels", raw)
        if x in out:
            raise SpecError("--items", "must not repeat an item (an item set holds each item once)", raw)
        out.append(x)
    if not out:
        raise SpecError("--items", "must name at least one item", "")
    return out


def explain_items(plan: Mapping[str, Any], items: Sequence[Any]) -> dict[str, Any]:
    """The budget a plan gives one user's item set.

    IDUE-PS: eq. (16) with the plan's level budgets, ``L`` and ``epsilon*``. IDUE (single
    item per user): one item gets its level's budget (Def. 3, ``eta = 1``); more than one
    item is refused (an IDUE user reports one item).

    Parameters
    ----------
    plan : mapping
        An ``idue`` or ``idue-ps`` plan (format 2.0).
    items : sequence
        Labels of ``domain.labels``, or 0-based indices when it is null (digit strings accepted).

    Returns
    -------
    dict
        ``{"epsilon": nats, "items": [...], "eta": float, "source": "ID-LDP eq. 16", "mechanism",
        "padding_length", "dummy_epsilon", "item_epsilons": [...]}``.

    Raises
    ------
    SpecError
        Unknown, repeated or no items; several items on an IDUE plan; a plan of another family.

    References
    ----------
    Gu et al., ICDE 2020, eq. (16), Theorem 4, Def. 3.
    """
    mech = plan.get("mechanism")
    if mech not in ("idue", "idue-ps"):
        raise SpecError("PLAN", "item-set budgets (ID-LDP eq. 16) exist for 'idue-ps' plans (and single items of "
                        "'idue' plans) only", mech)
    chosen = _parse_items(plan, items)
    eps = _item_epsilon_map(plan)
    item_eps = [eps[x] for x in chosen]
    if mech == "idue":
        if len(chosen) > 1:
            raise SpecError("--items", "an 'idue' plan protects one item per user; item sets need an 'idue-ps' plan "
                            "(give one item to see its level budget)", ",".join(map(str, chosen)))
        return {"epsilon": item_eps[0], "items": chosen, "eta": 1.0, "source": "ID-LDP Def. 3 (single item)",
                "mechanism": mech, "padding_length": None, "dummy_epsilon": None, "item_epsilons": item_eps}
    L, star = int(plan["params"]["padding_length"]), float(plan["params"]["dummy"]["epsilon"])
    value, eta = set_budget_exact(item_eps, L, star)
    return {"epsilon": float_up(value), "items": chosen, "eta": float(eta), "source": SOURCE, "mechanism": mech,
            "padding_length": L, "dummy_epsilon": star, "item_epsilons": item_eps}


def user_set_budgets(plan: Mapping[str, Any], indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Eq. (16) budget of every user's item set (float64, log-sum-exp).

    Parameters
    ----------
    plan : mapping
        An ``idue-ps`` plan.
    indptr : ndarray of int, shape (n + 1,)
    indices : ndarray of int, shape (nnz,)
        CSR item sets (indices into the domain); users with an empty set report a dummy
        (their budget is ``epsilon*``).

    Returns
    -------
    ndarray of float64, shape (n,)
        Nats.
    """
    m = plan["domain"]["size"]
    per_item = np.empty(m)
    labels = plan["domain"]["labels"]
    index = {lab: k for k, lab in enumerate(labels)} if labels is not None else None
    for lv in plan["params"]["levels"]:
        for item in lv["items"]:
            per_item[index[item] if index is not None else int(item)] = lv["epsilon"]
    L, star = int(plan["params"]["padding_length"]), float(plan["params"]["dummy"]["epsilon"])
    sizes = np.diff(indptr)
    n = sizes.size
    top = max(float(per_item.max()), star)
    rows = np.repeat(np.arange(n), sizes)
    sums = np.bincount(rows, weights=np.exp(per_item[indices] - top), minlength=n)
    denom = np.maximum(sizes, L).astype(np.float64)
    inner = sums / denom + (1.0 - sizes / denom) * np.exp(star - top)
    return np.log(inner) + top


def budget_distribution(values: np.ndarray, source: str) -> dict[str, Any]:
    """Summary of per-user set budgets: n, mean, min, quantiles (5, 25, 50, 75, 95 %), max (nats)."""
    v = np.asarray(values, dtype=np.float64)
    q = np.quantile(v, [0.05, 0.25, 0.5, 0.75, 0.95]) if v.size else [float("nan")] * 5
    return {"source": source, "users": int(v.size), "mean": float(v.mean()), "min": float(v.min()),
            "p05": float(q[0]), "p25": float(q[1]), "median": float(q[2]), "p75": float(q[3]), "p95": float(q[4]),
            "max": float(v.max()), "rule": SOURCE}

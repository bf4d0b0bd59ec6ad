"""Strict reading of IDUE / IDUE-PS plans and their privacy map (numpy only).

The privacy map re-derives, from the probabilities alone, the smallest budget each
level can claim under constraint (6) of Gu et al. (ICDE 2020),
``a_i (1 - b_j) / (b_i (1 - a_j)) <= e^{r(eps_i, eps_j)}`` for every ordered pair of
levels (the dummy items of IDUE-PS are one more level, Theorem 4), with
``u = ln(a/b)`` and ``w = ln((1-b)/(1-a))`` computed as ``log1p`` of exact float
differences (accurate at tiny budgets):

* MinID-LDP (``r = min``): level ``i`` needs ``max(u_i + max_j w_j, max_j u_j + w_i)``;
* AvgID-LDP (``r = average``): given the other levels' claims ``e_j``, level ``i`` needs
  ``max(2 u_i + max_{j != i}(2 w_j - e_j), 2 w_i + max_{j != i}(2 u_j - e_j), u_i + w_i)``;
* plain LDP (Lemma 1, exact): ``max`` of ``u_i + w_j`` over distinct items ``i != j``.

All of it is O(t) in the number of levels.
"""
from __future__ import annotations

from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from .. import _sampling
from .._envelope import PlanFields, read_domain, read_envelope
from .._plan import PlanError, check_claim, integer, log_fraction, number, require
from ._promises import idue_levels

__all__ = ["NOTIONS", "PLAN_FIELDS", "ParsedPlan", "parse_plan", "level_privacy", "ldp_epsilon", "privacy_map", "set_budget",
           "set_budget_range"]

#: guarantee.notion values and their pair budget ``r``.
NOTIONS = ("MinID-LDP", "AvgID-LDP")
#: The claims an IDUE / IDUE-PS plan may make (besides notion and epsilon), per mechanism.
PLAN_FIELDS = {
    "idue": PlanFields(("idue",), ("levels", "ldp_epsilon", "ldp_epsilon_lemma1", "ldp_epsilon_kind"), shuffle="unary"),
    "idue-ps": PlanFields(("idue-ps",), ("levels", "ldp_epsilon", "ldp_epsilon_lemma1", "ldp_epsilon_kind", "set_budgets",
                                         "users_set_budgets"), shuffle="unary"),
}


def _max_others(v: np.ndarray) -> np.ndarray:
    """For each ``i``, ``max_{j != i} v_j`` (``-inf`` when there is no other entry)."""
    t = v.size
    if t < 2:
        return np.full(t, -np.inf)
    order = np.argsort(v, kind="stable")
    out = np.full(t, v[order[-1]])
    out[order[-1]] = v[order[-2]]
    return out


def log_ratios(a: npt.ArrayLike, b: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """``u = ln(a/b)`` and ``w = ln((1-b)/(1-a))`` (``log1p`` of exact differences)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    d = a - b  # exact for grid values (both multiples of 2^-48 in (0, 1))
    return np.log1p(d / b), np.log1p(d / (1.0 - a))


def level_privacy(epsilon: npt.ArrayLike, a: npt.ArrayLike, b: npt.ArrayLike, notion: str) -> np.ndarray:
    """Smallest budget (nats) each level can claim under constraint (6).

    Parameters
    ----------
    epsilon : array_like, shape (t,)
        The claimed budgets (used by AvgID-LDP only, where the levels are coupled).
    a, b : array_like, shape (t,)
    notion : {"MinID-LDP", "AvgID-LDP"}

    Returns
    -------
    ndarray of float64, shape (t,)

    References
    ----------
    Gu et al., ICDE 2020, eq. (6), Def. 3 (MinID) and Sec. VIII (AvgID).
    """
    e = np.asarray(epsilon, dtype=np.float64)
    u, w = log_ratios(a, b)
    if notion == "MinID-LDP":
        return np.maximum(u + w.max(), u.max() + w)
    return np.maximum(np.maximum(2 * u + _max_others(2 * w - e), 2 * w + _max_others(2 * u - e)), u + w)


def ldp_epsilon(a: npt.ArrayLike, b: npt.ArrayLike, sizes: npt.ArrayLike) -> float:
    """Plain LDP budget of the numbers (Lemma 1, exact): max of ``u_i + w_j`` over distinct items.

    Parameters
    ----------
    a, b : array_like, shape (t,)
        Per-level probabilities.
    sizes : array_like of int, shape (t,)
        Items per level (a level of one item has no distinct pair with itself).

    Returns
    -------
    float
        Nats (0 for a domain of one item).
    """
    u, w = log_ratios(a, b)
    sizes = np.asarray(sizes)
    cross = u + _max_others(w)
    own = np.where(sizes >= 2, u + w, -np.inf)
    best = float(np.max(np.maximum(cross, own)))
    return max(best, 0.0)


def set_budget(item_epsilons: npt.ArrayLike, padding_length: int, dummy_epsilon: float) -> float:
    """Budget of an item set under IDUE-PS (ID-LDP eq. 16), nats.

    ``epsilon_x = ln[eta_x sum_{i in x} e^{epsilon_i} / |x| + (1 - eta_x) e^{epsilon*}]`` with
    ``eta_x = |x| / max(|x|, L)``, the probability that padding-and-sampling picks a real item.

    Parameters
    ----------
    item_epsilons : array_like of float, shape (|x|,)
        Budget (nats) of each item of the set, ``|x| >= 1``.
    padding_length : int
        ``L >= 1``.
    dummy_epsilon : float
        ``epsilon*`` of the dummy items (nats).

    Returns
    -------
    float
        Nats (computed as a log-sum-exp: no overflow for large budgets).

    Raises
    ------
    ValueError
        An empty set.

    References
    ----------
    Gu et al., ICDE 2020, eq. (16), Theorem 4.
    """
    e = np.asarray(item_epsilons, dtype=np.float64).ravel()
    if e.size == 0:
        raise ValueError("item_epsilons: an item set has at least one item")
    s, L, es = e.size, int(padding_length), float(dummy_epsilon)
    eta = s / max(s, L)
    top = max(float(e.max()), es)
    inner = eta * float(np.mean(np.exp(e - top))) + (1.0 - eta) * float(np.exp(es - top))
    return float(np.log(inner) + top)


def set_budget_range(level_epsilons: npt.ArrayLike, sizes: npt.ArrayLike, padding_length: int,
                     dummy_epsilon: float) -> np.ndarray:
    """Smallest and largest eq. (16) budget over the sets of each size ``1 .. min(L, m)``.

    The sum of ``e^{epsilon_i}`` grows with every item's budget, so the largest budget of a
    size-``s`` set takes the ``s`` items of the highest levels and the smallest the ``s`` items
    of the lowest levels.

    Parameters
    ----------
    level_epsilons : array_like of float, shape (t,)
    sizes : array_like of int, shape (t,)
        Items per level.
    padding_length : int
    dummy_epsilon : float

    Returns
    -------
    ndarray of float64, shape (min(L, m), 3)
        Rows ``(size, min, max)`` in nats.

    References
    ----------
    Gu et al., ICDE 2020, eq. (16).
    """
    e = np.asarray(level_epsilons, dtype=np.float64)
    n = np.asarray(sizes, dtype=np.int64)
    top = min(int(padding_length), int(n.sum()))
    order = np.argsort(e, kind="stable")
    low = np.repeat(e[order], np.minimum(n[order], top))[:top]
    high = np.repeat(e[order[::-1]], np.minimum(n[order[::-1]], top))[:top]
    rows = [(s, set_budget(low[:s], padding_length, dummy_epsilon), set_budget(high[:s], padding_length, dummy_epsilon))
            for s in range(1, top + 1)]
    return np.array(rows, dtype=np.float64).reshape(-1, 3)


class ParsedPlan:
    """The numbers of an IDUE / IDUE-PS plan, validated (see :func:`parse_plan`)."""

    labels: list[str] | None
    size: int
    names: list[str]
    epsilon: np.ndarray
    a: np.ndarray
    b: np.ndarray
    sizes: np.ndarray
    owner: np.ndarray
    padding_length: int | None
    dummy: tuple[float, float, float] | None
    notion: str
    privacy: dict[str, Any]

    def __init__(self, **kw: Any) -> None:
        self.__dict__.update(kw)


def _pair(node: Mapping[str, Any], where: str) -> tuple[float, float, float]:
    if not isinstance(node, Mapping):
        raise PlanError(f"{where}: must be an object")
    e = number(node.get("epsilon"), f"{where}.epsilon", low=0.0, low_open=True)
    a = number(node.get("a"), f"{where}.a", low=0.0, high=1.0, low_open=True, high_open=True)
    b = number(node.get("b"), f"{where}.b", low=0.0, high=1.0, low_open=True, high_open=True)
    for key, v in (("a", a), ("b", b)):
        if not _sampling.on_grid(v):
            raise PlanError(f"{where}.{key}: must be a probability that is a multiple of 2**-48 (got {v!r})")
    if not b < a:
        raise PlanError(f"{where}: unary encoding needs 0 < b < a < 1 (got a={a!r}, b={b!r})")
    return e, a, b


def _levels(plan: Mapping[str, Any], size: int, labels: list[str] | None
            ) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    levels = require(plan, "params.levels")
    if not isinstance(levels, list) or not levels:
        raise PlanError("params.levels: must be a non-empty list of levels")
    index = {lab: k for k, lab in enumerate(labels)} if labels is not None else None
    owner = np.full(size, -1, dtype=np.int64)
    names, eps, a, b, sizes = [], [], [], [], []
    for j, level in enumerate(levels):
        where = f"params.levels[{j}]"
        e, aj, bj = _pair(level, where)
        name = level.get("name")
        if not isinstance(name, str) or not name or name in names:
            raise PlanError(f"{where}.name: must be a non-empty string not used by another level (got {name!r})")
        items = level.get("items")
        if not isinstance(items, list) or not items:
            raise PlanError(f"{where}.items: must be a non-empty list of items (got {items!r})")
        count = integer(level.get("size"), f"{where}.size", low=1)
        if count != len(items):
            raise PlanError(f"{where}.size: must equal the number of the level's items, {len(items)} (got {count})")
        for item in items:
            if index is not None:
                k = index.get(item, -1) if isinstance(item, str) else -1
            else:
                ok = isinstance(item, int) and not isinstance(item, bool) and 0 <= item < size
                k = int(item) if ok else -1
            if k < 0:
                raise PlanError(f"{where}.items: {item!r} is not an item of the domain "
                                + ("(domain.labels)" if labels is not None else f"(indices 0..{size - 1})"))
            if owner[k] >= 0:
                raise PlanError(f"{where}.items: item {item!r} is already in params.levels[{owner[k]}]")
            owner[k] = j
        names.append(name)
        eps.append(e)
        a.append(aj)
        b.append(bj)
        sizes.append(count)
    if np.any(owner < 0):
        k = int(np.argmax(owner < 0))
        missing = labels[k] if labels is not None else k
        raise PlanError(f"params.levels: item {missing!r} is in no level (every item needs exactly one)")
    return names, np.array(eps), np.array(a), np.array(b), np.array(sizes), owner


def parse_plan(plan: Any, mechanism: str) -> ParsedPlan:
    """Read a plan strictly (path or dict) for ``mechanism`` ("idue" or "idue-ps").

    Returns
    -------
    ParsedPlan
        ``labels``, ``size``, ``names``, per-level ``epsilon``, ``a``, ``b``, ``sizes``,
        ``owner`` (level of each item), ``padding_length``, ``dummy`` (epsilon, a, b) or None,
        ``notion`` and the ``privacy`` map (already checked against every claim).

    Raises
    ------
    PlanError
        Naming field, rule and value: the envelope (:func:`ldpplan.mechanisms.read_envelope`),
        wrong mechanism, unverified plan, malformed or non-finite number, off-grid
        probability, inconsistent sizes, a level, epsilon or item assignment other than the
        embedded spec's (:func:`ldpplan.mechanisms.idue._promises.idue_levels`), or a claim smaller
        than what the numbers give.
    """
    plan = read_envelope(plan, PLAN_FIELDS[mechanism], verified=True)
    size, labels = read_domain(plan)
    names, eps, a, b, sizes, owner = _levels(plan, size, labels)
    notion = require(plan, "guarantee.notion")
    if notion not in NOTIONS:
        raise PlanError(f"guarantee.notion: must be one of {list(NOTIONS)} (got {notion!r})")
    padding = require(plan, "params").get("padding_length", None)
    dummy = None
    if mechanism == "idue":
        if padding is not None:
            raise PlanError(f"params.padding_length: must be null for an 'idue' plan (got {padding!r})")
    else:
        padding = integer(require(plan, "params.padding_length"), "params.padding_length", low=1)
        if notion != "MinID-LDP":
            raise PlanError(f"guarantee.notion: IDUE-PS is proved for MinID-LDP only (Theorem 4) (got {notion!r})")
        dummy = _pair(require(plan, "params.dummy"), "params.dummy")
    _check_spec(plan, names, eps, owner)
    pm = privacy_map(names, eps, a, b, sizes, notion, padding, dummy)
    _check_claims(plan, pm, names, eps, dummy)
    return ParsedPlan(labels=labels, size=size, names=names, epsilon=eps, a=a, b=b, sizes=sizes, owner=owner,
                      padding_length=padding, dummy=dummy, notion=notion, privacy=pm)


def _check_spec(plan: Mapping[str, Any], names: Sequence[str], eps: np.ndarray, owner: np.ndarray) -> None:
    """Every level's name, epsilon and items as the embedded spec promises (:func:`idue_levels`)."""
    spec_names, spec_eps, spec_owner = idue_levels(plan)
    if list(names) != spec_names:
        raise PlanError(f"params.levels[*].name: must match the embedded spec ({spec_names!r:.80}) (got {names!r:.80})")
    for j, (e, want) in enumerate(zip(eps, spec_eps)):
        if float(e) != want:
            raise PlanError(f"params.levels[{j}].epsilon: must be the spec's epsilon {want!r} (got {float(e)!r})")
    moved = np.flatnonzero(owner != spec_owner)
    if moved.size:
        k = int(moved[0])
        labels = plan["domain"]["labels"]
        item = labels[k] if labels is not None else k
        raise PlanError(f"params.levels[{int(owner[k])}].items: item {item!r:.40} is in level {names[int(owner[k])]!r} "
                        f"but the embedded spec puts it in level {spec_names[int(spec_owner[k])]!r}")


def privacy_map(names: Sequence[str], epsilon: npt.ArrayLike, a: npt.ArrayLike, b: npt.ArrayLike,
                sizes: npt.ArrayLike, notion: str, padding_length: int | None = None,
                dummy: tuple[float, float, float] | None = None) -> dict[str, Any]:
    """``{"notion", "epsilon", "levels": {name: nats}, "ldp_epsilon", ["dummy_epsilon"]}`` from the numbers.

    ``epsilon`` is the smallest recomputed level budget; the dummy items of IDUE-PS are
    included in every pair (Theorem 4) and in ``ldp_epsilon``.
    """
    e, aa, bb, ss = (np.asarray(x, dtype=np.float64) for x in (epsilon, a, b, sizes))
    if dummy is not None:
        e, aa, bb = np.append(e, dummy[0]), np.append(aa, dummy[1]), np.append(bb, dummy[2])
        assert padding_length is not None  # IDUE-PS: the dummy items and the padding length come together
        ss = np.append(ss, padding_length)
    need = level_privacy(e, aa, bb, notion)
    t = len(names)
    out: dict[str, Any] = {"notion": notion, "epsilon": float(np.min(need[:t])),
                           "levels": {n: float(x) for n, x in zip(names, need[:t])},
                           "ldp_epsilon": ldp_epsilon(aa, bb, ss)}
    if dummy is not None:
        out["dummy_epsilon"] = float(need[t])
    return out


def _check_claims(plan: Mapping[str, Any], pm: Mapping[str, Any], names: Sequence[str], eps: np.ndarray,
                  dummy: tuple[float, float, float] | None) -> None:
    rule = "constraint (6) with the plan's a, b gives"
    for j, name in enumerate(names):
        check_claim(pm["levels"][name], float(eps[j]), f"params.levels[{j}].epsilon", rule)
    if dummy is not None:
        check_claim(pm["dummy_epsilon"], dummy[0], "params.dummy.epsilon", rule)
        if dummy[0] > float(np.min(eps)):
            raise PlanError(f"params.dummy.epsilon: must be <= the smallest level epsilon {float(np.min(eps))!r} "
                            f"(Theorem 4) (got {dummy[0]!r})")
    check_claim(pm["epsilon"], require(plan, "guarantee.epsilon"), "guarantee.epsilon", rule)
    claimed = require(plan, "guarantee.levels")
    if not isinstance(claimed, Mapping) or set(claimed) != set(names):
        raise PlanError(f"guarantee.levels: must map every level name {names} to its epsilon")
    for name in names:
        check_claim(pm["levels"][name], claimed[name], f"guarantee.levels.{name}", rule)
    ldp_args = _ldp_numbers(plan, dummy)
    for key in ("ldp_epsilon", "ldp_epsilon_lemma1"):
        if key in plan["guarantee"]:
            check_claim(pm["ldp_epsilon"], plan["guarantee"][key], f"guarantee.{key}",
                        "Lemma 1 with the plan's a, b gives", exact=lambda: exact_ldp_epsilon(*ldp_args))
    claimed_sets = plan["guarantee"].get("set_budgets")
    if claimed_sets is not None and dummy is not None:
        _check_set_claims(claimed_sets, pm, names, plan)


def _ldp_numbers(plan: Mapping[str, Any], dummy: tuple[float, float, float] | None) -> tuple[list, list, list]:
    levels = plan["params"]["levels"]
    a, b, sizes = [lv["a"] for lv in levels], [lv["b"] for lv in levels], [lv["size"] for lv in levels]
    if dummy is not None:
        a, b, sizes = a + [dummy[1]], b + [dummy[2]], sizes + [plan["params"]["padding_length"]]
    return a, b, sizes


def exact_ldp_epsilon(a: Sequence[float], b: Sequence[float], sizes: Sequence[int]) -> Decimal:
    """Lemma 1 with 50-digit logarithms of the exact rationals: max ``u_i + w_j`` over distinct items.

    Used only to decide a ``guarantee.ldp_epsilon`` claim within a few ulps of the float map.
    """
    with localcontext() as ctx:
        ctx.prec = 60
        u = [log_fraction(Fraction(x) / Fraction(y)) for x, y in zip(a, b)]
        w = [log_fraction((1 - Fraction(y)) / (1 - Fraction(x))) for x, y in zip(a, b)]
        order = sorted(range(len(w)), key=lambda j: w[j], reverse=True)  # the top two w: O(t log t)
        best = Decimal(0)
        for i in range(len(u)):
            other = order[0] if order[0] != i else (order[1] if len(order) > 1 else None)
            if other is not None:
                best = max(best, u[i] + w[other])
            if sizes[i] >= 2:
                best = max(best, u[i] + w[i])
        return best


def _check_set_claims(claimed: Any, pm: Mapping[str, Any], names: Sequence[str], plan: Mapping[str, Any]) -> None:
    """Refuse ``guarantee.set_budgets.by_size`` rows smaller than eq. (16) at the recomputed level budgets."""
    rows = claimed.get("by_size") if isinstance(claimed, Mapping) else None
    if not isinstance(rows, list):
        raise PlanError("guarantee.set_budgets.by_size: must be a list of {size, min, max} rows")
    sizes = [len(lv["items"]) for lv in plan["params"]["levels"]]
    want = set_budget_range([pm["levels"][n] for n in names], sizes, plan["params"]["padding_length"],
                            pm["dummy_epsilon"])
    if len(rows) != want.shape[0]:
        raise PlanError(f"guarantee.set_budgets.by_size: must have {want.shape[0]} rows (set sizes 1..min(L, m)) "
                        f"(got {len(rows)})")
    rule = "eq. (16) with the budgets the plan's a, b give is"
    for k, row in enumerate(rows):
        if not isinstance(row, Mapping) or row.get("size") != k + 1:
            raise PlanError(f"guarantee.set_budgets.by_size[{k}].size: must be {k + 1}")
        check_claim(want[k, 1], row.get("min"), f"guarantee.set_budgets.by_size[{k}].min", rule)
        check_claim(want[k, 2], row.get("max"), f"guarantee.set_budgets.by_size[{k}].max", rule)

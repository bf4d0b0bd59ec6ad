"""Independent verification of IDUE / IDUE-PS plans: exact numbers, then the plan against its spec.

1. ``validate_plan`` (the runtime's envelope reader, then the composed schema), the levels
   partition the domain.
2. Constraint (6), ``a_i (1-b_j) / (b_i (1-a_j)) <= e^{r(eps_i, eps_j)}``, over **all ordered
   pairs** of levels (the IDUE-PS dummy level included, Theorem 4) in O(t): with
   ``u = ln(a/b)`` and ``w = ln((1-b)/(1-a))`` computed from the exact rationals to 50
   digits (:mod:`planner._exact`), MinID needs ``e_i >= max(u_i + max w, max u + w_i)`` and
   AvgID ``max_i (u_i - e_i/2) + max_j (w_j - e_j/2) <= 0``; no float comparison is
   involved (a NaN cannot win an argmin: non-finite numbers are refused first). The worst
   pair is re-decided with :func:`planner._exact.ratio_within`.
3. The plan against its embedded spec (re-parsed; files are inlined in plans): mechanism,
   model, notion, padding length, domain, every level's name, epsilon and items.
4. Derived claims recomputed, never read: ``guarantee`` (epsilon, levels, Lemma 1 budgets),
   ``params.dummy``, ``predicted``, ``baselines``.
"""
from __future__ import annotations

from decimal import Decimal, localcontext
from typing import Any, Mapping, Sequence

from ...mechanisms import on_grid

from .._exact import DIGITS, exact, ratio_within, to_decimal
from .._plan_format import validate_plan
from .._report import Verification
from ..errors import PlanFormatError
from ._exact_numbers import _uw, exact_ldp_epsilon
from ._checks import compare_derived, compare_spec

__all__ = ["verify", "check_numbers", "exact_ldp_epsilon"]

_TIE = Decimal("1e-40")


def _structure(plan: Mapping[str, Any]) -> None:
    labels = plan["domain"]["labels"]
    size = plan["domain"]["size"]  # bounded by the envelope (MAX_DOMAIN_SIZE) before this point
    listed = [x for lv in plan["params"]["levels"] for x in lv["items"]]
    if labels is not None:
        in_domain = all(isinstance(x, str) for x in listed) and set(listed) <= set(labels)
    else:
        in_domain = all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x < size for x in listed)
    if len(listed) != size or len(set(map(repr, listed))) != size or not in_domain:
        raise PlanFormatError("params.levels[*].items: the levels must partition the domain (each item in exactly one level)")
    for j, lv in enumerate(plan["params"]["levels"]):
        if lv["size"] != len(lv["items"]):
            raise PlanFormatError(f"params.levels[{j}].size: must equal the number of its items ({len(lv['items'])})")
        if not 0 < lv["b"] < lv["a"] < 1:
            raise PlanFormatError(f"params.levels[{j}]: probabilities must satisfy 0 < b < a < 1 (a={lv['a']}, b={lv['b']})")
    pairs = [(f"params.levels[{j}]", lv) for j, lv in enumerate(plan["params"]["levels"])]
    pairs += [("params.dummy", plan["params"]["dummy"])] if isinstance(plan["params"].get("dummy"), Mapping) else []
    for where, lv in pairs:  # the runtime samples exactly on the 2^-48 grid and refuses anything else
        for key in ("a", "b"):
            x = float(lv[key])
            if not on_grid(x):
                raise PlanFormatError(f"{where}.{key}: must be a probability that is a multiple of 2**-48 (got {x!r})")
    ps = plan["mechanism"] == "idue-ps"
    if ps != (plan["params"].get("padding_length") is not None) or ps != ("dummy" in plan["params"]):
        raise PlanFormatError("params.padding_length / params.dummy: required for 'idue-ps' and absent (null) for 'idue'")


def check_numbers(names: Sequence[str], epsilons: Sequence[float], a: Sequence[float], b: Sequence[float],
                  notion: str) -> tuple[bool, Decimal, tuple[int, int]]:
    """Exact check of (6) over all ordered level pairs in O(t).

    Returns
    -------
    holds : bool
    slack : Decimal
        Smallest ``r(e_i, e_j) - ln ratio_ij`` in nats (50 digits).
    pair : (int, int)
        The worst ordered pair (row level i, column level j).
    """
    with localcontext() as ctx:
        ctx.prec = DIGITS + 10
        uw = [_uw(x, y) for x, y in zip(a, b)]
        u = [p[0] for p in uw]
        w = [p[1] for p in uw]
        e = [to_decimal(exact(x)) for x in epsilons]
        t = len(e)
        if notion == "MinID-LDP":
            ju = max(range(t), key=lambda k: u[k])
            jw = max(range(t), key=lambda k: w[k])
            best: Decimal | None = None
            pair = (0, 0)
            for k in range(t):
                for s, p in ((e[k] - u[k] - w[jw], (k, jw)), (e[k] - u[ju] - w[k], (ju, k))):
                    if best is None or s < best:
                        best, pair = s, p
        else:
            half = Decimal(2)
            ip = max(range(t), key=lambda k: u[k] - e[k] / half)
            jq = max(range(t), key=lambda k: w[k] - e[k] / half)
            best, pair = -((u[ip] - e[ip] / half) + (w[jq] - e[jq] / half)), (ip, jq)
    assert best is not None  # t >= 1 levels: the loop above set it
    i, j = pair
    r = min(exact(epsilons[i]), exact(epsilons[j])) if notion == "MinID-LDP" else \
        (exact(epsilons[i]) + exact(epsilons[j])) / 2
    ratio = exact(a[i]) * (1 - exact(b[j])) / (exact(b[i]) * (1 - exact(a[j])))
    holds = bool(best > _TIE) and ratio_within(ratio, r)
    return holds, best, pair


def _levels_of(plan: Mapping[str, Any]):
    lv = plan["params"]["levels"]
    names = [x["name"] for x in lv]
    e, a, b, s = ([x[k] for x in lv] for k in ("epsilon", "a", "b", "size"))
    if plan["mechanism"] == "idue-ps":
        d = plan["params"]["dummy"]
        names, e, a, b = names + ["<dummy>"], e + [d["epsilon"]], a + [d["a"]], b + [d["b"]]
        s = s + [plan["params"]["padding_length"]]
    return names, e, a, b, s


def verify(plan: Mapping[str, Any]) -> Verification:
    """Independently re-check an IDUE / IDUE-PS plan (numbers exactly, then spec and derived claims).

    Returns
    -------
    Verification
        ``holds`` False with a message naming the field, the rule and the amount on a
        violation or a mismatch with the spec; ``details``: ``min_slack_nats``,
        ``max_log_ratio_slack`` (its negative), ``worst_pair``, ``pairs_checked``,
        ``exact_worst_slack``, ``ldp_epsilon_exact``.

    Raises
    ------
    PlanFormatError
        Schema violations, non-finite numbers, levels that do not partition the domain,
        an embedded spec that does not parse.

    References
    ----------
    Gu et al., ICDE 2020, eq. (6), Lemma 1, Theorem 4.
    """
    validate_plan(plan)
    _structure(plan)
    notion = plan["guarantee"]["notion"]
    names, e, a, b, sizes = _levels_of(plan)
    holds, slack, (i, j) = check_numbers(names, e, a, b, notion)
    t = len(names)
    details = {"min_slack_nats": float(slack), "max_log_ratio_slack": -float(slack),
               "exact_worst_slack": f"{slack:.6e}", "worst_pair": [names[i], names[j]], "pairs_checked": t * t,
               "method": "all ordered level pairs in O(t) with 50-digit logs of the exact rationals"}
    if not holds:
        return Verification(False, f"params.levels: constraint (6) violated for levels ({names[i]}, {names[j]}) by "
                                   f"{-float(slack):.3e} nats: a_i(1-b_j)/(b_i(1-a_j)) exceeds e^r ({notion})", details)

    ldp = exact_ldp_epsilon(a, b, sizes)
    details["ldp_epsilon_exact"] = float(ldp)
    problem = compare_spec(plan) or compare_derived(plan, ldp)
    if problem:
        return Verification(False, problem, details)
    return Verification(True, f"constraint (6) holds for all {t * t} ordered level pairs ({notion}); smallest slack "
                              f"{float(slack):.3e} nats at ({names[i]}, {names[j]}); plan matches its spec", details)

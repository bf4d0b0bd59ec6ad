"""IDUE / IDUE-PS claims derived from the numbers: the guarantee, the predicted error and the baselines.

``plan`` writes them and ``verify`` recomputes them (never reads them) through these functions.
``explain_items`` (eq. 16, from ``_itemsets``) is the family protocol's item-set budget
(``Family.explain_items``, ``ldpplan explain --items``).

References
----------
Gu, Li, Xiong, Cao, "Providing input-discriminative protection for local differential privacy",
ICDE 2020: Lemma 1 (MinID-LDP implies LDP), eq. (10)-(12) (worst-case error), eq. (16) (set budgets).
"""
from __future__ import annotations

import copy
from typing import Any, Mapping

import numpy as np

from .._exact import float_up
from .._grid import round_safe
from .._plan_format import predicted
from .._report import Bound, ReportFacts
from ._exact_numbers import exact_ldp_epsilon
from ._itemsets import explain_items, set_budget_table
from .spec import NOTION_NAMES
from ...solvers.idue import worst_case_mse as eq9, oue, rappor

__all__ = ["DIRECTIONS", "worst_case_mse", "guarantee_of", "predicted_of", "baselines_of", "USERS_SETS_WHAT",
           "explain_items", "report_facts", "report_spec"]


#: Safe rounding directions (:func:`~.._grid.round_safe`): ``a`` down, ``b`` up lowers every ratio of (6).
DIRECTIONS = {"a": "down", "b": "up"}


def worst_case_mse(a, b, sizes, padding_length: int | None = None) -> float:
    """Worst-case total MSE of the runtime's count estimates divided by ``n`` (counts^2 per user).

    IDUE: eq. (9), ``sum_i m_i coef_n_i + max_i coef_c_i`` with ``coef_n = b(1-b)/(a-b)^2`` and
    ``coef_c = (1-a-b)/(a-b)``. IDUE-PS (estimator ``L`` times eq. 7): a user with a set of
    ``s <= L`` items samples each with probability ``1/L``; bit ``k`` is then Bernoulli
    ``b + pi (a - b)`` whose variance exceeds the known-sample one by ``pi (1 - pi) (a-b)^2``, so
    the worst case over users holding at most ``L`` items (no truncation bias) is
    ``L^2 [sum_i m_i coef_n_i + (1/L) sum over the L items of largest coef_c of
    max(0, coef_c + 1 - 1/L)]`` (``L^2 eq. 9 + L (L - 1)`` when the top level has >= L items).

    Returns
    -------
    float
        Counts^2 per user (divide by ``n`` for the total MSE of frequencies).

    References
    ----------
    Gu et al., ICDE 2020, eq. (7)-(9), Sec. VI-B (Algorithm 1).
    """
    if not padding_length:
        return eq9(a, b, sizes)
    aa, bb = np.asarray(a, float), np.asarray(b, float)
    L = int(padding_length)
    noise = float(np.sum(np.asarray(sizes, float) * bb * (1 - bb) / (aa - bb) ** 2))
    gain = (1 - aa - bb) / (aa - bb) + 1.0 - 1.0 / L
    order = np.argsort(-gain, kind="stable")
    top = np.repeat(gain[order], np.minimum(np.asarray(sizes)[order], L))[:L]
    return float(L * L * noise + L * np.sum(np.maximum(top, 0.0)))


def guarantee_of(names, epsilons, a, b, sizes, notion: str, padding_length=None, dummy=None) -> dict[str, Any]:
    """``guarantee``: notion, epsilon = min level budget, per-level budgets, Lemma 1's LDP budgets and,
    for IDUE-PS, ``set_budgets`` (eq. 16 min / max by set size, :func:`.itemsets.set_budget_table`).

    ``ldp_epsilon`` is the exact largest ``u_i + w_j`` over distinct items (the dummy items of
    IDUE-PS included); ``ldp_epsilon_kind`` says what it is for the plan's inputs: ``"exact"``, the
    plain-LDP budget of single-item inputs (IDUE), or ``"upper_bound"`` (IDUE-PS: an item set's report
    is a mixture over the items it samples, so the plain-LDP budget between item sets is at most the
    single-item value and can be lower, e.g. 1.49 vs 1.68 nats on ``health-itemsets``);
    ``ldp_epsilon_lemma1`` is Lemma 1's bound ``min(max E, 2 min E)`` (MinID-LDP only: Lemma 1 is
    about MinID-LDP).
    """
    e = np.asarray(epsilons, dtype=float)
    aa, bb, ss = np.asarray(a, float), np.asarray(b, float), np.asarray(sizes)
    if dummy is not None:
        aa, bb, ss = np.append(aa, dummy["a"]), np.append(bb, dummy["b"]), np.append(ss, padding_length)
    out = {"notion": NOTION_NAMES[notion], "epsilon": float(e.min()),
           "levels": {n: float(x) for n, x in zip(names, e)},
           # the exact value (50-digit logs of the exact rationals) rounded up to the next float
           "ldp_epsilon": float_up(exact_ldp_epsilon([float(x) for x in aa], [float(x) for x in bb],
                                                     [int(x) for x in ss])),
           "ldp_epsilon_kind": "exact" if dummy is None else "upper_bound"}
    if notion == "minid":
        out["ldp_epsilon_lemma1"] = float(min(e.max(), 2 * e.min()))
    if dummy is not None:
        out["set_budgets"] = set_budget_table([float(x) for x in e], [int(x) for x in np.asarray(sizes)],
                                              int(padding_length), float(dummy["epsilon"]))
    return out


def predicted_of(a, b, sizes, padding_length=None, users: int | None = None) -> dict[str, Any]:
    """``predicted``: eq. (9) worst-case MSE in the units of the runtime's estimator."""
    value = worst_case_mse(a, b, sizes, padding_length)
    src = "Gu et al. ICDE 2020 eq. (9) at the plan's a, b"
    unit = "counts^2 per user (sum over items of MSE of counts / n)"
    if padding_length:
        src += (f", times L^2 = {padding_length ** 2} (the IDUE-PS estimator is L times eq. 7, Sec. VI-B), plus the "
                "padding-and-sampling variance; worst case over users holding at most L items (no truncation bias)")
        unit = "counts^2 per user (sum over items of MSE of the IDUE-PS count estimates L (c - n b)/(a - b), / n)"
    out = {"worst_case_mse_per_user": predicted(value, unit, src)}
    if users:
        out["worst_case_total_mse_frequency"] = predicted(
            value / users, "frequency^2 (sum over items)", f"worst_case_mse_per_user / n with n = {users} (spec users)")
    return out


def baselines_of(epsilon_min: float, m: int, padding_length=None) -> list[dict[str, Any]]:
    """RAPPOR and OUE at ``epsilon = min(E)`` (plain LDP) on the same ``m`` items, with eq. (9)."""
    rows = []
    for name, res in (("RAPPOR", rappor(epsilon_min)), ("OUE", oue(epsilon_min))):
        q = round_safe({"a": res.a, "b": res.b}, DIRECTIONS)
        a, b = q["a"], q["b"]
        rows.append({"name": name, "guarantee": {"notion": "LDP", "epsilon": float(epsilon_min)},
                     "params": {"a": float(a), "b": float(b)},
                     "predicted": predicted_of([float(a)], [float(b)], [m], padding_length)})
    return rows


USERS_SETS_WHAT = "users' item sets (distribution of eq. 16 budgets in guarantee.users_set_budgets)"


def report_facts(plan: Mapping[str, Any]) -> ReportFacts:
    """What ``ldpplan report`` says about an IDUE / IDUE-PS plan (:class:`~.._report.ReportFacts`).

    References
    ----------
    Gu et al., ICDE 2020: Def. 4 (MinID-LDP), constraint (6), Lemma 1 (the plain LDP epsilon), eq. (16).
    """
    guarantee = plan["guarantee"]
    sets = "set_budgets" in guarantee
    exact = guarantee.get("ldp_epsilon_kind") == "exact"
    bounds = [Bound(f"epsilon of level {name!r} (items of this level)", ("guarantee", "levels", name), "nats",
                    "MinID-LDP, constraint (6) of ID-LDP (ICDE 2020)") for name in guarantee["levels"]]
    for i, row in enumerate((guarantee.get("set_budgets") or {}).get("by_size", [])):
        bounds.append(Bound(f"largest budget of an item set of size {row['size']}",
                            ("guarantee", "set_budgets", "by_size", i, "max"), "nats", "ID-LDP eq. (16), Theorem 4"))
    ldp = Bound("plain LDP epsilon of one report (any two inputs)", ("guarantee", "ldp_epsilon"), "nats",
                "exact max over input pairs of the plan's a, b" if exact else "upper bound (ID-LDP eq. 16 / Lemma 1)",
                lower_field=("guarantee", "ldp_epsilon") if exact else None,
                lower_source="attained: the exact worst ratio of two inputs of the plan's numbers" if exact else "")
    return ReportFacts(
        notion_words=("input-discriminative LDP (MinID-LDP): each item has its own budget; a report tells any two "
                      "items apart at most by the smaller of their two budgets"),
        unit_of_privacy=("one report of one user's item set (padded and sampled to L items)" if sets else
                         "one report of one user's item") + "; several reports of a user compose (see the hazards)",
        bounds=(Bound("epsilon of the most protected level", ("guarantee", "epsilon"), "nats",
                      "the smallest level budget, MinID-LDP (ICDE 2020, Def. 4)"), *bounds),
        ldp_epsilon=ldp, headline="worst_case_mse_per_user", per_user_exponent=-1.0,
        per_user_unit="squared frequency (sum over items of the MSE of the frequency estimates)",
        slack_field=("verification", "min_slack_nats"))


def report_spec(plan: Mapping[str, Any], *, budget: float = 1.0, users: int | None = None) -> dict[str, Any] | None:
    """The plan's spec with every level budget times ``budget``; None for ``users`` (an IDUE spec has
    no number of users: its numbers hold for any ``n``)."""
    if users is not None:
        return None
    spec = copy.deepcopy(dict(plan["spec"]))
    spec["levels"] = [dict(level, epsilon=level["epsilon"] * budget) for level in spec["levels"]]
    return spec

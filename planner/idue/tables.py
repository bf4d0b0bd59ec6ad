"""Tables that ``ldpplan plan`` prints for IDUE / IDUE-PS plans."""
from __future__ import annotations

from typing import Any, Mapping

from .._report import Table
from ._binding import collapsed_levels, ActiveRows, collapse_note

__all__ = ["summarize", "guarantee_table", "set_budget_tables", "binding_table", "ldp_label", "lemma1_text"]


def ldp_label(g: Mapping[str, Any]) -> str:
    """What ``guarantee.ldp_epsilon`` is: exact (single items) or an upper bound (item sets, IDUE-PS)."""
    if g.get("ldp_epsilon_kind") == "upper_bound" or "set_budgets" in g:
        return "upper bound over item sets"
    return "exact"


def lemma1_text(g: Mapping[str, Any]) -> str:
    """Lemma 1's bound min(max E, 2 min E) for MinID-LDP; for AvgID-LDP, why there is none."""
    if "ldp_epsilon_lemma1" in g:
        return f"Lemma 1 bound {g['ldp_epsilon_lemma1']:.4f}"
    levels = sorted(g["levels"].values())
    return (f"Lemma 1 is for MinID-LDP, not {g['notion']}; by definition r <= max E = {levels[-1]:.4f}"
            if levels else f"Lemma 1 is for MinID-LDP, not {g['notion']}")


def guarantee_table(plan: Mapping[str, Any]) -> Table:
    """What the plan guarantees: each level's MinID/AvgID-LDP budget and the plain-LDP budget (Lemma 1).

    References
    ----------
    Gu et al., ICDE 2020, Def. 3 and Lemma 1.
    """
    g = plan["guarantee"]
    rows = [[f"{g['notion']} level {name!r}", eps, "the level's items, against any other input"]
            for name, eps in g["levels"].items()]
    if ldp_label(g) == "exact":
        rows.append(["plain LDP (Lemma 1, exact)", g["ldp_epsilon"],
                     "every input against every other: max u_i + w_j over distinct items"])
    else:  # IDUE-PS: an item set's report mixes its sampled items' reports, so between sets the budget can be lower
        rows.append(["plain LDP (Lemma 1, upper bound)", g["ldp_epsilon"],
                     "every item set against every other: at most max u_i + w_j over distinct (dummy) items"])
    if "ldp_epsilon_lemma1" in g:
        rows.append(["Lemma 1 bound min(max E, 2 min E)", g["ldp_epsilon_lemma1"], "what Lemma 1 promises"])
    return Table("Guarantee (nats)", ["notion", "epsilon", "protects"], rows,
                 keep=range(len(g["levels"]), len(rows)),  # a summary always shows the plain-LDP rows
                 note=f"Under the classical notion the worst case is {'at most ' if ldp_label(g) != 'exact' else ''}"
                      f"{g['ldp_epsilon']:.4f} nats: a reader comparing "
                      "with plain LDP mechanisms should use this number, not the level budgets.")


def set_budget_tables(plan: Mapping[str, Any]) -> list[Table]:
    """IDUE-PS: eq. (16) set budgets by set size, and over a data set's users when the plan read one."""
    g = plan["guarantee"]
    if "set_budgets" not in g:
        return []
    sb = g["set_budgets"]
    out = [Table(f"Item-set budgets by set size (ID-LDP eq. 16, L = {sb['padding_length']})",
                 ["set size", "min epsilon_x", "max epsilon_x"],
                 [[r["size"], r["min"], r["max"]] for r in sb["by_size"]],
                 note=f"epsilon_x = ln[eta sum e^eps_i / |x| + (1 - eta) e^eps*], eta = |x| / max(|x|, L), "
                      f"eps* = {sb['dummy_epsilon']:.4f}; min / max over sets of each size. "
                      "`ldpplan explain PLAN --items a,b,c` gives one set's budget.")]
    if "users_set_budgets" in g:
        out.append(users_budget_table(g["users_set_budgets"]))
    return out


def users_budget_table(dist: Mapping[str, Any]) -> Table:
    """A :func:`.itemsets.budget_distribution` summary as a one-row table."""
    keys = ["mean", "min", "p05", "p25", "median", "p75", "p95", "max"]
    return Table(f"Item-set budgets of the {dist['users']:,} users of {dist['source']} (ID-LDP eq. 16, nats)",
                 keys, [[dist[k] for k in keys]], note="Quantiles over users of each user's set budget epsilon_x.")


def summarize(plan: Mapping[str, Any]) -> list[Table]:
    """Per-level parameters and the worst-case MSE against RAPPOR and OUE.

    Returns
    -------
    list of Table
        (1) each level's epsilon, size, a, b, flip probability 1 - a and the eq. (8)
        coefficients (``Var[c_hat_k] = n coef_n + c_k coef_c``; times L^2 for IDUE-PS);
        (2) eq. (9) worst-case MSE per user of IDUE and of the baselines at min(E).
    """
    params, g = plan["params"], plan["guarantee"]
    L = params.get("padding_length")
    s2 = float(L or 1) ** 2
    rows = []
    for lv in params["levels"]:
        a, b = lv["a"], lv["b"]
        rows.append([lv["name"], lv["epsilon"], lv["size"], a, b, 1 - a,
                     s2 * b * (1 - b) / (a - b) ** 2, s2 * (1 - a - b) / (a - b)])
    cert = plan["solver"]["certificate"]
    title = (f"{plan['mechanism'].upper()} {params['model']} ({g['notion']})"
             + (f", padding length L = {L}" if L else ""))

    collapsed = collapsed_levels(plan)
    index = {lv["name"]: k for k, lv in enumerate(params["levels"])}
    held = [index[n] for pair in list(collapsed.items())[:3] for n in pair[::-1]]  # who holds whom down
    levels = Table(title, ["level", "epsilon", "size", "a", "b", "1-a", "coef n", "coef c"], rows, keep=held,
                   note=("Flip probabilities: 1->0 is 1-a, 0->1 is b. Var[c_hat_k] = n coef_n + c_k coef_c (eq. 8"
                         + (", times L^2" if L else "") + f"). Plain LDP budget of the numbers (Lemma 1, "
                         f"{ldp_label(g)}): {g['ldp_epsilon']:.4f} nats ({lemma1_text(g)}). "
                         f"Solver {plan['solver']['name']}, {plan['solver']['status']}, certified gap {cert['gap']:.2e}, "
                         f"{plan['solver']['time_seconds']:.3f} s."))
    wc = plan["predicted"]["worst_case_mse_per_user"]["value"]
    cmp_rows = [[f"IDUE {params['model']}", g["notion"], "per level", "per level", wc, 1.0]]
    for base in plan["baselines"]:
        v = base["predicted"]["worst_case_mse_per_user"]["value"]
        cmp_rows.append([base["name"], f"{base['guarantee']['epsilon']:.4g}-LDP", base["params"]["a"],
                         base["params"]["b"], v, v / wc])
    cmp = Table("Worst-case total MSE of counts per user (eq. 9" + (" times L^2 plus the sampling variance, sets of "
                                                                  "at most L items" if L else "") + "; multiply by n)",
                ["mechanism", "guarantee", "a", "b", "MSE / n", "vs IDUE"], cmp_rows,
                note="RAPPOR and OUE satisfy epsilon-LDP with epsilon = min(E), the strongest level.")
    binding = binding_table(plan, collapsed)
    return [levels, *([binding] if binding else []), cmp, guarantee_table(plan), *set_budget_tables(plan)]


def binding_table(plan: Mapping[str, Any], collapsed: Mapping[str, str] | None = None) -> Table | None:
    """When looser levels get a stricter level's (a, b): the active constraints (6) and why (else None).

    References
    ----------
    Gu et al., ICDE 2020, eq. (6), Def. 3; :mod:`.binding`.
    """
    note = collapse_note(plan, collapsed)
    if not note:
        return None
    rows = ActiveRows(plan)  # t^2 pairs for t levels: computed on demand, the tightest kept in a summary
    return Table("Active privacy constraints (eq. 6, slack ~ 0)",
                 ["level i", "level j", "r(eps_i, eps_j)", "ln ratio_ij", "slack"], rows, note=note,
                 keep=rows.tightest())

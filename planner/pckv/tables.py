"""Tables ``ldpplan plan`` prints for a PCKV plan: parameters, predicted errors, choices made."""
from __future__ import annotations

import math
from typing import Any, Mapping

from .._report import Table

__all__ = ["summarize"]


def _parameters(plan: Mapping[str, Any]) -> Table:
    pr, g, sol = plan["params"], plan["guarantee"], plan["solver"]
    return Table(f"PCKV plan: {plan['mechanism']}", ["item", "value"], [
        ["epsilon (composed, nats)", g["epsilon"]], ["spec epsilon (nats)", plan["spec"].get("epsilon")],
        ["composition", g.get("composition", "")], ["allocation", sol.get("allocation", "")],
        ["allocation source", sol.get("allocation_source", "")],
        ["epsilon1 (key, nats)", pr["epsilon1"]], ["epsilon2 (value, nats)", pr["epsilon2"]],
        ["a", pr["a"]], ["b", pr["b"]], ["p", pr["p"]],
        ["padding_length L", pr["padding_length"]], ["keys d", pr["domain_size"]],
        ["grid repairs (budget lowered after rounding)", sol.get("grid_repairs", 0)]])


def _predicted(plan: Mapping[str, Any]) -> Table:
    rows: list[list[Any]] = []
    cases: dict[str, Any] = {}
    for name, entry in plan["predicted"].items():
        case = entry.get("case")
        rows.append([f"{name} ({case})" if case else name, entry["value"], entry["unit"], entry["source"]])
        if case and entry.get("at"):
            cases.setdefault(case, entry["at"])
    users = plan["predicted"]["mse_frequency"].get("users")
    note = f"n = {users} users ({plan['solver'].get('assumptions', {}).get('users_source', '')})"
    if cases:
        note += "; " + "; ".join(f"{case}: {at}" for case, at in cases.items())
    if "mse_mean_uniform" in plan["predicted"]:
        note += ("; the key distribution is not given (no prior_frequencies, no data): mse_mean is the worst case, "
                 "mse_mean_uniform the figure under the assumption")
    old = plan["predicted"].get("mse_mean_theorem4")
    if old is not None and old.get("estimator") != plan["predicted"]["mse_mean"].get("estimator"):
        note += (f"; mse_mean predicts the {plan['predicted']['mse_mean'].get('estimator')}; mse_mean_theorem4 is "
                 f"Theorem 4 (eq. (8)'s first-order figure, the planning objective) at {old.get('at')}")
    return Table("Predicted error", ["metric", "value", "unit", "source"], rows, note=note)


def _baselines(plan: Mapping[str, Any]) -> Table:
    rows = [[b["name"], b["role"], b["padding_length"], b["epsilon1"], b["epsilon2"],
             b["predicted"]["mse_frequency"]["value"], b["predicted"]["mse_mean"]["value"], b["objective"]]
            for b in plan["baselines"]]
    choice = plan["solver"].get("mechanism_choice")
    worst = plan["predicted"]["mse_mean"].get("case") == "worst"
    return Table("Candidates at the plan's epsilon and L (baselines)",
                 ["mechanism / allocation", "role", "L", "epsilon1", "epsilon2", "MSE frequency",
                  "MSE mean (Thm 4, worst)" if worst else "MSE mean", "objective"], rows, note=choice["reason"] if choice else "")


def _padding(sel: Mapping[str, Any]) -> Table:
    cands = sorted(sel["candidates"], key=lambda r: math.inf if r["objective"] is None else r["objective"])[:5]
    rows = [[c["padding_length"], c["objective"], c["mse_frequency"], c["mse_mean"]] for c in cands]
    note = sel.get("model", "")
    if sel.get("at_search_bound"):
        note += (f". WARNING: the chosen L equals max_padding_length = {sel['max_padding_length']}; "
                 "the optimum may lie beyond it (raise max_padding_length)")
    how = "\"auto\""
    if sel.get("private"):
        pr = sel["private"]
        how = (f"private (phase 1: {pr['phase1_users']} of {pr['users']} users, k-ary RR over {{0..{pr['max']}}} at "
               f"epsilon = {pr['epsilon']:g}; phase 2: the other {pr['phase2_users']})")
    return Table(f"Padding length L = {how}: chose L = {sel['chosen']} (best 5 of {len(sel['candidates'])})",
                 ["L", "objective", "MSE frequency", "MSE mean"], rows, note=note)


def summarize(plan: Mapping[str, Any]) -> list[Table]:
    """Tables shown by ``ldpplan plan``.

    Returns
    -------
    list of Table
        Parameters, predicted errors (Theorem 4, units named), the baselines (mechanism and
        allocation candidates with the Sec. 5.4 choice) and, for ``L = "auto"``, the best
        padding lengths.
    """
    tables = [_parameters(plan), _predicted(plan), _baselines(plan)]
    sel = plan["solver"].get("padding_length_selection")
    if sel:
        tables.append(_padding(sel))
    if plan["planning_inputs"]:
        tables.append(Table("Planning inputs (data read to plan)", ["what", "source", "private", "epsilon", "user share"],
                            [[x["what"], x["source"], x["private"], x.get("epsilon", ""), x.get("user_share", "")]
                             for x in plan["planning_inputs"]],
                            note="private = false: raw data read outside every stated epsilon; private = true: read "
                                 "only through an LDP phase of its own (epsilon, user share), those users excluded "
                                 "from the plan's mechanism"))
    return tables

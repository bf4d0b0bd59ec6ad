"""Tables that ``ldpplan plan`` prints for IDUE / IDUE-PS plans."""
from __future__ import annotations

from typing import Any, Mapping

from .._report import Table

__all__ = ["summarize"]


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
    levels = Table(title, ["level", "epsilon", "size", "a", "b", "1-a", "coef n", "coef c"], rows,
                   note=("Flip probabilities: 1->0 is 1-a, 0->1 is b. Var[c_hat_k] = n coef_n + c_k coef_c (eq. 8"
                         + (", times L^2" if L else "") + f"). Plain LDP budget of the numbers (Lemma 1, exact): "
                         f"{g['ldp_epsilon']:.4f} nats (Lemma 1 bound {g.get('ldp_epsilon_lemma1', float('nan')):.4f}). "
                         f"Solver {plan['solver']['name']}, {plan['solver']['status']}, certified gap {cert['gap']:.2e}, "
                         f"{plan['solver']['time_seconds']:.3f} s."))
    wc = plan["predicted"]["worst_case_mse_per_user"]["value"]
    cmp_rows = [[f"IDUE {params['model']}", g["notion"], "per level", "per level", wc, 1.0]]
    for base in plan["baselines"]:
        v = base["predicted"]["worst_case_mse_per_user"]["value"]
        cmp_rows.append([base["name"], f"{base['guarantee']['epsilon']:.4g}-LDP", base["params"]["a"],
                         base["params"]["b"], v, v / wc])
    cmp = Table("Worst-case total MSE of counts per user (eq. 9" + (" times L^2" if L else "") + "; multiply by n)",
                ["mechanism", "guarantee", "a", "b", "MSE / n", "vs IDUE"], cmp_rows,
                note="RAPPOR and OUE satisfy epsilon-LDP with epsilon = min(E), the strongest level.")
    return [levels, cmp]

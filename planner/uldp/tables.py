"""Tables of a ULDP plan: its numbers and the predicted losses against RR / RAPPOR."""
from __future__ import annotations

from typing import Any, Mapping

from .._report import Table

__all__ = ["summarize", "sizes"]


def sizes(plan: Mapping[str, Any]) -> dict[str, int]:
    """``|X|``, ``|X_S|`` and, for a PUM, ``|Z|`` and ``|Z_S|`` (the same numbers verify reports)."""
    p = plan["params"]
    out = {"|X|": int(plan["domain"]["size"]), "|X_S|": len(p["sensitive"])}
    if plan["mechanism"] == "pum":
        out.update({"|Z|": out["|X|"] + len(p["tags"]), "|Z_S|": out["|X_S|"] + len(p["tags"])})
    return out


def summarize(plan: Mapping[str, Any]) -> list[Table]:
    """Parameters table and the predicted worst-case losses vs RR / RAPPOR at the same epsilon.

    Returns
    -------
    list of Table
        ``ULDP plan (<mechanism>)`` (sizes, probabilities, guarantee) and ``Predicted worst-case
        loss`` (Props. 4-8, 15-19; l1 in frequency units times sqrt(users), squared l2 times users).
    """
    p, mech = plan["params"], plan["mechanism"]
    kind = p.get("common", mech)
    rows: list[list[Any]] = [["mechanism", mech + (f" (common {kind} over Z = X + {len(p['tags'])} bots)"
                                                   if mech == "pum" else "")],
                             ["epsilon (nats)", plan["guarantee"]["epsilon"]]]
    rows += [[k, v] for k, v in sizes(plan).items()]
    if kind == "urr":
        rows += [["c1  Pr(y = x | x in X_S)", p["c1"]], ["c2  Pr(y = x' in X_S)", p["c2"]],
                 ["c3  Pr(y = x | x in X_N)", p["c3"]]]
    else:
        rows += [["theta  Pr(own sensitive bit = 1)", p["theta"]], ["d1  Pr(other sensitive bit = 1)", p["d1"]],
                 ["d2  Pr(own non-sensitive bit = 0)", p["d2"]]]
    if mech == "pum":
        rows += [["semantic tags", ", ".join(p["tags"])],
                 ["background pi_k", ", ".join(p.get("background") or {}) or "none (proportional fallback, Sec. 5.3)"]]
    pum_note = "; for a PUM, X_S plus each user's own tagged items (Prop. 9)" if mech == "pum" else ""
    params = Table(f"ULDP plan ({mech})", ["parameter", "value"], rows,
                   note="Probabilities are multiples of 2^-48 rounded toward privacy. Guarantee: "
                        f"(X_S, Y_P, epsilon)-ULDP (Def. 2){pum_note}")
    pr = plan["predicted"]
    with_n = "l1_worst" in pr
    cols = ["mechanism", "guarantee", "worst E(l1)*sqrt(n)", "worst E(l2^2)*n"] + (
        ["E(l1) at n", "E(l2^2) at n"] if with_n else [])

    def row(name: str, guarantee: str, pred: Mapping[str, Any]) -> list[Any]:
        out = [name, guarantee, pred["l1_worst_times_sqrt_n"]["value"], pred["l2_worst_times_n"]["value"]]
        if with_n:
            out += [pred["l1_worst"]["value"], pred["l2_worst"]["value"]]
        return out

    cmp_rows = [row(mech if mech != "pum" else f"pum/{kind}", "ULDP", pr)]
    cmp_rows += [row(b["name"], b["guarantee"], b["predicted"]) for b in plan["baselines"]]
    cmp = Table("Predicted worst-case loss of the empirical estimate (Props. 4-8, 15-19)", cols, cmp_rows,
                note=f"Worst case ({mech}): l1 at {pr['l1_worst_times_sqrt_n'].get('at', '?')}; "
                     f"l2 at {pr['l2_worst_times_n'].get('at', '?')}. TV = l1 / 2."
                     + (" PUM: losses of r_hat over Z (first term of Thm. 1, eq. 22)." if mech == "pum" else ""))
    return [params, cmp]

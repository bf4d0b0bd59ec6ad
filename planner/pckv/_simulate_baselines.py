r"""The PCKV paper's comparison mechanisms in ``ldpplan simulate``: PrivKVM and KVUE rows.

PCKV Sec. 6 (Fig. 6, Fig. 9, Fig. 10) compares PCKV-UE / PCKV-GRR with PrivKVM (``c = 1``),
PrivKVM with one real and five virtual rounds ("1r5v") and KVUE; we add the real
multi-round PrivKVM (``c = 3``, users online in every round). Each row runs the
mechanism's client code on every user (:mod:`._baselines`), with the same
seeds for every row, and reports the MSE of frequency and mean over all keys and the top-N
keys, with the first-order predictions where they exist (PrivKVM ``c = 1`` and KVUE).
With ``-O epsilons=...`` the same rows (plus PCKV-UE / PCKV-GRR with the optimized
allocation at the plan's ``L``) are run at each epsilon: the "MSE vs epsilon" table of
Fig. 6 / Fig. 9.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ...mechanisms.pckv import KeyValueUsers
from ._baselines import KVUE, PrivKVM

from .._report import Table

__all__ = ["baseline_mechanisms", "baseline_rows", "epsilon_sweep"]

#: Real rounds of the multi-round PrivKVM row.
MULTI_ROUNDS = 3


def baseline_mechanisms(epsilon: float, d: int) -> list[tuple[str, Any]]:
    """``(name, runtime)`` of the comparison rows at ``epsilon`` (nats)."""
    return [("PrivKVM (c=1)", PrivKVM(epsilon, d)),
            ("PrivKVM (1r5v)", PrivKVM(epsilon, d, virtual_rounds=5)),
            (f"PrivKVM (c={MULTI_ROUNDS})", PrivKVM(epsilon, d, rounds=MULTI_ROUNDS)),
            ("KVUE", KVUE(epsilon, d))]


def _estimate(rt, users, rng):
    if getattr(rt, "rounds", 1) > 1:
        return rt.collect(users, rng)
    return rt.estimate(rt.aggregate(rt.perturb(users, rng)))


def _errors(est, freq, means, sets) -> dict[str, tuple[float, float]]:
    out = {}
    for s, (fk, mk) in sets.items():
        out[s] = (float(np.mean((est.frequency[fk] - freq[fk]) ** 2)),
                  float(np.mean((est.mean[mk] - means[mk]) ** 2)) if mk.size else float("nan"))
    return out


def _predicted(rt, freq, means, n: int, sets) -> dict[str, tuple[float | None, float | None]]:
    try:
        pf, pm = rt.predicted_mse(freq, means, n)
    except ValueError:
        return {s: (None, None) for s in sets}
    return {s: (float(np.mean(pf[fk])), float(np.mean(pm[mk])) if mk.size else None) for s, (fk, mk) in sets.items()}


def baseline_rows(epsilon: float, users: KeyValueUsers, freq: np.ndarray, means: np.ndarray,
                  sets: Mapping[str, tuple[np.ndarray, np.ndarray]], trial_seqs: Sequence[np.random.SeedSequence],
                  tick: Callable[[], None]) -> list[dict[str, Any]]:
    """Trials of every comparison mechanism at ``epsilon``: mean squared errors and predictions per key set."""
    d, n = freq.shape[0], users.n_users
    rows = []
    for name, rt in baseline_mechanisms(epsilon, d):
        errs = [ _errors(_estimate(rt, users, np.random.default_rng(seq)), freq, means, sets) for seq in trial_seqs]
        pm = rt.privacy_map()
        row = {"mechanism": name, "epsilon": epsilon, "epsilon1": pm.get("epsilon1"), "epsilon2": pm.get("epsilon2"),
               "privacy": pm}
        pred = _predicted(rt, freq, means, n, sets)
        for s in sets:
            row[s] = {"mse_frequency": float(np.mean([e[s][0] for e in errs])),
                      "mse_mean": float(np.nanmean([e[s][1] for e in errs])),
                      "mse_frequency_theory": pred[s][0], "mse_mean_theory": pred[s][1]}
        rows.append(row)
        for _ in trial_seqs:
            tick()
    return rows


def baseline_table(rows: list[dict[str, Any]], set_name: str, pckv_rows: list[dict[str, Any]]) -> Table:
    """PCKV rows (optimized allocations) and the comparison rows over one key set."""
    body = [[r["mechanism"] + (f" / {r['allocation']}" if "allocation" in r else ""), r[set_name]["mse_frequency"],
             r[set_name]["mse_frequency_theory"], r[set_name]["mse_mean"], r[set_name]["mse_mean_theory"]]
            for r in pckv_rows + rows]
    return Table(f"PCKV vs the paper's baselines over {set_name} (PCKV Fig. 6 / Fig. 9 style)",
                 ["mechanism", "MSE freq", "MSE freq theory", "MSE mean", "MSE mean theory"], body,
                 note="PrivKVM: key epsilon/2, value epsilon/(2c) per round (sequential composition); KVUE: one "
                      "epsilon on the pair's two state bits (reconstructed, see ldpplan.planner.pckv._baselines); "
                      "theory: PCKV Theorem 4, baselines first order in d/n (derived; PrivKVM c=1 and KVUE only)")


def epsilon_sweep(epsilons: Sequence[float], users: KeyValueUsers, freq: np.ndarray, means: np.ndarray,
                  sets: Mapping[str, tuple[np.ndarray, np.ndarray]], set_name: str,
                  trial_seqs: Sequence[np.random.SeedSequence], pckv_row: Callable[[float], list[dict[str, Any]]],
                  tick: Callable[[], None]) -> tuple[Table, list[dict[str, Any]]]:
    """MSE vs epsilon of PCKV-UE / PCKV-GRR (``pckv_row(epsilon) -> rows``) and the baselines."""
    data: list[dict[str, Any]] = []
    for eps in epsilons:
        data.extend({"epsilon": eps, **r} for r in pckv_row(eps))
        data.extend(baseline_rows(eps, users, freq, means, sets, trial_seqs, tick))
    body = [[r["epsilon"], r["mechanism"] + (f" / {r['allocation']}" if "allocation" in r else ""),
             r[set_name]["mse_frequency"], r[set_name]["mse_mean"]] for r in data]
    table = Table(f"MSE vs epsilon over {set_name} (PCKV Fig. 6 / Fig. 9 style)",
                  ["epsilon", "mechanism", "MSE freq", "MSE mean"], body,
                  note="PCKV rows: optimized allocation at the plan's L; same users and seeds for every row")
    return table, data

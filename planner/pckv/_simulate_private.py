r"""``ldpplan simulate`` of a private-L plan: both phases end to end, against planning on raw data.

Per trial (fresh seeds): a random ``user_share`` of the users reports its capped set size
through the k-ary RR (phase 1), the planner's own rule picks ``L`` from the estimated
distribution (:mod:`.private_length`), and the other users run the plan's mechanism and
allocation at that ``L`` (phase 2). The comparison row plans ``L`` from the raw data (exact
set sizes, frequencies and means: :func:`ldpplan.solvers.pckv.choose_padding_length` with
the data model, the ``"auto"`` rule, not private) and runs on all users. Errors are against
the whole population's true frequencies and means.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ...mechanisms.pckv import KeyValueUsers

from .._report import Table
from ._allocation import solve_on_grid
from ._private_length import estimate_distribution, phase1_counts, private_key_model, split_users
from .spec import parse_spec, required_private_phase
from ...solvers import pckv as S
from ...solvers.pckv import KeyModel, theorem4_mse
from .._exact import shrink

__all__ = ["subset_users", "two_phase"]


def subset_users(users: KeyValueUsers, rows: np.ndarray) -> KeyValueUsers:
    """The users ``rows`` (sorted indices) of ``users``, pairs kept in order."""
    sizes = np.diff(users.indptr)[rows]
    indptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    starts = users.indptr[rows]
    take = np.repeat(starts - indptr[:-1], sizes) + np.arange(indptr[-1])
    return KeyValueUsers(indptr, users.keys[take], users.values[take])


def _choose(mech: str, eps: float, d: int, model, allocation: str, weights, bound: int) -> int:
    sel = S.choose_padding_length(mech, shrink(eps), domain_size=d, model=model, method=allocation, weights=weights,
                                  max_padding_length=bound)
    return int(sel.parameters["padding_length"])


def _raw_model(freq, means, sampled, sizes, n: int, objective_keys):
    sset, swt = np.unique(sizes, return_counts=True)
    order = np.argsort(-freq, kind="stable")
    keys = np.nonzero(freq > 0)[0] if objective_keys == "all" else order[: min(int(objective_keys), freq.size)]
    return KeyModel(freq, means, n, set_sizes=sset, set_size_weights=swt, sampled_frequencies=sampled,
                    objective_keys=keys[freq[keys] > 0])


def two_phase(plan: Mapping[str, Any], users: KeyValueUsers,
              truth: tuple[np.ndarray, np.ndarray, Callable[[int], np.ndarray]], top: np.ndarray,
              trial_seqs: Sequence[np.random.SeedSequence], runtime_of: Callable[..., Any],
              aggregate: Callable[..., Any], tick: Callable[[], None]) -> tuple[Table, dict[str, Any]]:
    """Run both routes ``len(trial_seqs)`` times; the comparison table and its data.

    Parameters
    ----------
    truth : tuple
        ``(freq, means, sampled)`` of all users (:func:`.model.data_model`).
    runtime_of : callable ``(mechanism, a, b, p, d, L) -> runtime``
    aggregate : callable ``(runtime, users, rng) -> Aggregate``
    """
    spec = parse_spec(plan["spec"])
    phase = required_private_phase(spec)
    freq, means, sampled = truth
    mech, alloc = plan["mechanism"], plan["solver"]["allocation"]
    eps, d, n = float(spec.epsilon), int(plan["params"]["domain_size"]), users.n_users
    weights = (spec.weights.frequency, spec.weights.mean)
    sizes = np.diff(users.indptr)
    mk = top[freq[top] > 0]
    raw_model = _raw_model(freq, means, sampled, sizes, n, spec.objective_keys)
    L_raw = _choose(mech, eps, d, raw_model, alloc, weights, phase.max)
    rows: dict[str, dict[str, list]] = {r: {"L": [], "n": [], "f": [], "m": []} for r in ("private", "raw")}

    def run(route: str, L: int, sub: KeyValueUsers, model, rng) -> None:
        q = solve_on_grid(mech, eps, alloc, d, L, model, weights).params
        rt = runtime_of(mech, q["a"], q["b"], q["p"], d, L)
        est = rt.estimate(aggregate(rt, sub, rng), "corrected")
        rec = rows[route]
        rec["L"].append(L)
        rec["n"].append(sub.n_users)
        rec["f"].append(float(np.mean((est.frequency[top] - freq[top]) ** 2)))
        rec["m"].append(float(np.mean((est.mean[mk] - means[mk]) ** 2)) if mk.size else float("nan"))

    for seq in trial_seqs:
        rng = np.random.default_rng(seq)
        first, second = split_users(n, phase.user_share, rng)
        dist = estimate_distribution(phase1_counts(sizes[first], phase.epsilon, phase.max, rng), phase.epsilon,
                                     phase.max)
        model = private_key_model(spec, d, dist, second.size)
        run("private", _choose(mech, eps, d, model, alloc, weights, phase.max), subset_users(users, second), model, rng)
        run("raw", L_raw, users, raw_model, rng)
        tick()
    out_rows, data = [], {}
    for route, label in (("private", f"private two-phase (phase 1: {phase.user_share:.0%} of users, RR epsilon = "
                                     f"{phase.epsilon:g}; excluded from phase 2)"),
                         ("raw", "raw data (L from exact set sizes; not private)")):
        rec = rows[route]
        Ls = np.array(rec["L"])
        L_med = int(np.median(Ls))
        th_f, th_m = theorem4_mse(*_abp(mech, eps, alloc, d, L_med, raw_model, weights), L_med, int(np.median(rec["n"])),
                                  freq[top], means[top], sampled(L_med)[top])
        item = {"L_median": L_med, "L_min": int(Ls.min()), "L_max": int(Ls.max()), "users_phase2": int(np.median(rec["n"])),
                "mse_frequency": float(np.mean(rec["f"])), "mse_mean": float(np.nanmean(rec["m"])),
                "mse_frequency_theory": float(np.mean(th_f)),
                "mse_mean_theory": float(np.mean(th_m[freq[top] > 0])) if mk.size else None}
        data[route] = item
        out_rows.append([label, f"{L_med} [{item['L_min']}-{item['L_max']}]", item["users_phase2"],
                         item["mse_frequency"], item["mse_frequency_theory"], item["mse_mean"], item["mse_mean_theory"]])
    table = Table(f"Padding length chosen privately vs from raw data ({mech}, {alloc}, epsilon = {eps:g}, "
                  f"top-{top.size} keys, {len(trial_seqs)} trials)",
                  ["route", "L median [min-max]", "users in PCKV", "MSE freq", "MSE freq Thm 4", "MSE mean",
                   "MSE mean Thm 4"], out_rows,
                  note="MSE against all users' true frequencies / means (squared frequency / value units); Thm 4 at "
                       "the median L with the true data model and the users in PCKV (phase-1 users excluded)")
    return table, data


def _abp(mech: str, eps: float, alloc: str, d: int, L: int, model, weights) -> tuple[float, float, float]:
    q = solve_on_grid(mech, eps, alloc, d, L, model, weights).params
    return q["a"], q["b"], q["p"]

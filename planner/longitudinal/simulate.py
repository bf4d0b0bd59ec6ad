"""Simulation over time: per-round error of a memoized plan vs its prediction and vs fresh reports.

Every round, each user reports through the client runtime with one shared :class:`Memo` (the
permanent responses persist across rounds, as on devices). Values come from a panel CSV
(``--data``: ``user,round,item``) or from a synthetic drift: round 0 draws each user's value
from a Zipf(1.1) law over the domain; each later round a user moves to a fresh draw with
probability ``drift`` while holding fewer than ``max_values`` distinct values. Reported per
round: the total squared error ``sum_v (f_hat(v) - f(v))^2`` averaged over trials, its
prediction ``sum_v Var(f_hat(v))`` (exact variance of the plan's numbers), and the same for
the baseline without memoization at the same lifetime budget (fresh one-shot GRR/OUE reports
at ``epsilon_lifetime / rounds``, counts sampled exactly in distribution); and the lifetime
budget actually spent: the sound bound (:mod:`._lifetime`) at the largest number ``V`` of distinct
values a user held (``epsilon_perm`` for ``V = 1``).
"""
from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from .._report import SimulateOptions as RunOptions
from .._report import SimulationReport, Table
from .._common import parse_options
from ..errors import InputDataError, SpecError
from ._lifetime import lifetime_upper_exact
from .claims import one_shot_variance, variance_line
from ...mechanisms import load
from ..plotting import Curve, plot_curves
from .inputs import read_panel

__all__ = ["SimulateOptions", "simulate", "synthetic_panel"]


class SimulateOptions(BaseModel):
    """``-O KEY=VALUE`` options of the longitudinal simulation."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    users: int = Field(20000, ge=10, le=10**7, description="synthetic users (ignored with --data)")
    rounds: int = Field(0, ge=0, le=1 << 20, description="rounds to simulate (0: the plan's rounds; at most those)")
    drift: float = Field(0.05, ge=0.0, le=1.0, description="synthetic: probability a user's value changes per round "
                         "(while under max_values distinct values)")


def synthetic_panel(k: int, users: int, rounds: int, drift: float, max_values: int,
                    rng: np.random.Generator) -> np.ndarray:
    """Values of ``users`` over ``rounds`` (int64, shape ``(rounds, users)``): Zipf(1.1) draws with drift."""
    weights = 1.0 / np.arange(1, k + 1) ** 1.1
    weights /= weights.sum()
    out = np.empty((rounds, users), dtype=np.int64)
    out[0] = rng.choice(k, size=users, p=weights)
    distinct = np.ones(users, dtype=np.int64)
    for t in range(1, rounds):
        out[t] = out[t - 1]
        move = (rng.random(users) < drift) & (distinct < max_values)
        fresh = rng.choice(k, size=int(move.sum()), p=weights)
        changed = fresh != out[t, move]
        idx = np.flatnonzero(move)[changed]
        out[t, idx] = fresh[changed]
        distinct[idx] += 1  # a fresh draw may revisit an earlier value: counted anyway (an upper bound)
    return out


def _panel_from_file(plan: Mapping[str, Any], path: str, rounds: int) -> tuple[np.ndarray, np.ndarray]:
    panel = read_panel(plan, path)
    keep = panel["round"] < rounds
    return panel["user"][keep], np.stack([panel["round"][keep], panel["item"][keep]])


def _baseline_error(freq: np.ndarray, n: int, epsilon: float, rng: np.random.Generator) -> float:
    """Total squared error of one fresh one-shot round (GRR or OUE, whichever has the lower variance)."""
    k = freq.size
    name, _ = one_shot_variance(epsilon, k)
    e = math.exp(epsilon)
    p, q = (e / (e + k - 1), 1 / (e + k - 1)) if name == "GRR" else (0.5, 1 / (e + 1))
    holders = np.rint(freq * n).astype(np.int64)
    counts = rng.binomial(holders, p) + rng.binomial(n - holders, q)  # exact marginals of each value's count
    est = (counts / n - q) / (p - q)
    return float(np.sum((est - holders / n) ** 2))


def simulate(plan: Mapping[str, Any], options: RunOptions, progress=None) -> SimulationReport:
    """Run the plan's runtime over the rounds (see the module docstring).

    Raises
    ------
    SpecError
        A bad ``-O`` option or more rounds than the plan covers.
    InputDataError
        A bad panel file, or a user with more distinct values than ``max_values``.
    """
    opts = parse_options(SimulateOptions, options.extra)
    mech = load(plan)
    gu, k = plan["guarantee"], int(plan["domain"]["size"])
    rounds = opts.rounds or int(gu["rounds"])
    if rounds > int(gu["rounds"]):
        raise SpecError("--rounds", f"must be at most the plan's rounds = {gu['rounds']} (its guarantee covers those)",
                        rounds)
    c0, c1 = variance_line(plan["mechanism"], plan["params"])
    lifetime, perm = float(gu["epsilon_lifetime"]), float(gu["epsilon_perm"])
    per_report = lifetime / int(gu["rounds"])
    base_name, base_var = one_shot_variance(per_report, k)
    err = np.zeros(rounds)
    pred = np.zeros(rounds)
    base = np.zeros(rounds)
    spent = 0.0
    if progress is not None:
        progress(0, options.trials * rounds)  # the bar shows its total from the start
    for trial in range(options.trials):
        rng = np.random.default_rng([options.seed, trial])
        if options.data:
            users, rv = _panel_from_file(plan, options.data, rounds)
        else:
            values = synthetic_panel(k, opts.users, rounds, opts.drift, int(gu["max_values"]), rng)
            users = np.tile(np.arange(opts.users, dtype=np.int64), rounds)
            rv = np.stack([np.repeat(np.arange(rounds), opts.users), values.reshape(-1)])
        memo = mech.new_memo()
        for t in range(rounds):
            rows = rv[0] == t
            x, u = rv[1][rows], users[rows]
            if x.size == 0:
                continue
            try:
                est = mech.estimate(mech.perturb(x, rng=rng, memo=memo, users=u, round=t))
            except ValueError as exc:
                raise InputDataError(f"--data: round {t}: {exc}") from None
            truth = np.bincount(x, minlength=k) / x.size
            err[t] += float(np.sum((est.frequency - truth) ** 2)) / options.trials
            pred[t] = float(k * c0 + c1) / x.size
            base[t] += _baseline_error(truth, x.size, per_report, rng) / options.trials
            if progress is not None:
                progress(1, options.trials * rounds)
        distinct = np.bincount(np.unique(memo.keys_of(users, rv[1])) // k) if users.size else np.zeros(1)
        held = int(distinct.max())
        spent = max(spent, float(lifetime_upper_exact(held, rounds, perm, float(gu["epsilon_2"]))))
    base_pred = k * base_var / max(1, int(np.median(np.bincount(rv[0])))) if rounds else 0.0
    rows = [[t, float(err[t]), float(pred[t]), float(base[t])] for t in range(rounds)]
    table = Table(f"Per-round total squared error ({plan['mechanism']}, {options.trials} trials)",
                  ["round", "memoized", "predicted", f"no memo ({base_name} at {per_report:.3g})"], rows,
                  note=f"no-memo prediction {base_pred:.4g}; both spend epsilon_lifetime = {lifetime:.4g} nats")
    life = Table("Lifetime budget", ["key", "value"], [
        ["planned epsilon_lifetime (sound bound, max_values values)", lifetime],
        ["spent (sound bound at the most distinct values held)", spent],
        ["no memo, same per-report epsilon_1: rounds x epsilon_1", rounds * float(gu["epsilon_1"])]])
    data = {"rounds": rounds, "error": err.tolist(), "predicted": pred.tolist(), "baseline_error": base.tolist(),
            "baseline_predicted": base_pred, "baseline_mechanism": base_name, "baseline_epsilon_per_report": per_report,
            "epsilon_lifetime_planned": lifetime, "epsilon_lifetime_spent": spent}
    return SimulationReport([table, life], data, plot=_plotter(plan, data))


def _plotter(plan: Mapping[str, Any], data: Mapping[str, Any]):
    """``plot(path)``: the per-round error, memoized and fresh reports, measured and predicted."""
    def plot(path: str) -> None:
        t = list(range(data["rounds"]))
        curves = [Curve(f"memoized {plan['mechanism']} (runtime)", t, data["error"], "empirical", 0),
                  Curve("memoized (predicted)", t, data["predicted"], "theory", 0),
                  Curve(f"fresh {data['baseline_mechanism']} reports, same lifetime (sampled)", t,
                        data["baseline_error"], "empirical", 1),
                  Curve("fresh reports (predicted)", t, [data["baseline_predicted"]] * len(t), "theory", 1)]
        plot_curves(curves, path, title=f"per-round error, epsilon_lifetime = {data['epsilon_lifetime_planned']:.3g} "
                    "nats for both", xlabel="round", ylabel="total squared error (frequency^2)")

    return plot

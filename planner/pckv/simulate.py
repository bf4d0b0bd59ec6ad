r"""PCKV simulation: empirical vs Theorem 4 MSE of frequency and mean, all keys and top-N keys.

Data: a key-value CSV (``--data``; ``user,key,value`` or MovieLens) or the synthetic
setting of Sec. 6.1 (one pair per user; keys and means uniform or Gaussian). Rows: the
plan as written, then PCKV-UE and PCKV-GRR with the optimized and the naive
(``epsilon/2`` each) allocations at the spec's ``epsilon`` and the plan's ``L``; then the
paper's comparison mechanisms PrivKVM (c = 1, 1r5v, c = 3) and KVUE
(:mod:`.simulate_baselines`; ``-O baselines=false`` drops them, ``-O epsilons=...`` adds the
MSE-vs-epsilon table of Fig. 6 / Fig. 9); for a private-L plan, both phases end to end
against planning on raw data (:mod:`.simulate_private`).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Literal, Mapping, Optional

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ...mechanisms import Aggregate
from ...mechanisms.pckv import PCKVGRR, PCKVUE, KeyValueUsers, sample_pairs

from .._common import parse_options
from .._report import SimulateOptions as RunOptions, SimulationReport, Table
from ..errors import PrivacyViolation, SpecError
from ._allocation import solve_on_grid
from ._model import data_model
from ._simulate_baselines import baseline_rows, baseline_table, epsilon_sweep
from .spec import parse_spec, private_phase
from ...solvers.pckv import theorem4_mse
from ..plotting import Curve, plot_curves
from ._simulate_private import two_phase
from .inputs import KeyValueInputs, iter_inputs
from .verify import verify

__all__ = ["SimulateOptions", "simulate", "synthetic_users", "aggregate_counts"]

_RUNTIME = {"pckv-ue": PCKVUE, "pckv-grr": PCKVGRR}


class SimulateOptions(BaseModel):
    """``-O KEY=VALUE`` options of ``ldpplan simulate`` for PCKV plans."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    top: int = Field(50, ge=1, description="size N of the top-N key set (most frequent keys)")
    users: Optional[int] = Field(None, ge=1, description="synthetic data only: number of users n "
                                 "(default: the plan's predicted n)")
    distribution: Literal["uniform", "gaussian"] = Field(
        "uniform", description="synthetic data only: keys/means uniform, or Gaussian (Sec. 6.1)")
    baselines: bool = Field(True, description="add the paper's comparison rows: PrivKVM (c=1, 1r5v, c=3) and KVUE")
    epsilons: Optional[str] = Field(None, description="comma-separated epsilons (nats): MSE vs epsilon of PCKV-UE, "
                                    "PCKV-GRR and the baselines (Fig. 6 / Fig. 9 style), e.g. 0.5,1,2,4")


def synthetic_users(d: int, n: int, distribution: str, rng: np.random.Generator) -> KeyValueUsers:
    """Sec. 6.1 data: one pair per user; keys/means uniform, or Gaussian (sigma_key = 50, sigma_mean = 1).

    Values are ``m_k + (1 - |m_k|) U(-1, 1)``: mean exactly ``m_k``, inside [-1, 1].
    """
    if distribution == "uniform":
        keys = rng.integers(0, d, size=n)
        means = rng.uniform(-1, 1, size=d)
    else:
        keys = np.empty(0, np.int64)
        while keys.size < n:
            x = np.floor(rng.normal(0.0, 50.0, size=2 * n)).astype(np.int64)
            keys = np.concatenate([keys, x[(x >= 0) & (x < d)]])
        keys = keys[:n]
        means = np.empty(0)
        while means.size < d:
            y = rng.normal(0.0, 1.0, size=2 * d)
            means = np.concatenate([means, y[np.abs(y) <= 1]])
        means = means[:d]
    m = means[keys]
    values = m + (1 - np.abs(m)) * rng.uniform(-1, 1, size=n)
    return KeyValueUsers(np.arange(n + 1, dtype=np.int64), keys.astype(np.int64), values)


def aggregate_counts(runtime, users: KeyValueUsers, rng: np.random.Generator) -> Aggregate:
    """Exact-in-distribution per-key counts ``n1``, ``n2`` without building reports (Algorithms 1-3)."""
    d, L, n = runtime.domain_size, runtime.padding_length, users.n_users
    k, v = sample_pairs(users, d, L, rng)
    a, b, p = runtime.a, runtime.b, runtime.p
    if runtime.mechanism == "pckv-ue":
        dp = d + L
        n_plus = np.bincount(k[v > 0], minlength=dp)[:d]
        n_minus = np.bincount(k[v < 0], minlength=dp)[:d]
        c1 = rng.multinomial(n_plus, [a * p, a * (1 - p), 1 - a])
        c2 = rng.multinomial(n_minus, [a * (1 - p), a * p, 1 - a])
        c3 = rng.multinomial(n - n_plus - n_minus, [b / 2, b / 2, 1 - b])
        n1, n2 = c1[:, 0] + c2[:, 0] + c3[:, 0], c1[:, 1] + c2[:, 1] + c3[:, 1]
    else:
        dp = d + L
        u = rng.random(n)
        other = rng.integers(0, dp - 1, size=n)
        other += other >= k
        kout = np.where(u < a, k, other)
        vout = np.where(u < a, np.where(u < a * p, v, -v), np.where(rng.random(n) < 0.5, 1, -1))
        counts = np.bincount(kout * 2 + (vout < 0), minlength=2 * dp)
        n1, n2 = counts[0:2 * d:2], counts[1:2 * d:2]
    return Aggregate(runtime.mechanism, n, {"n1": n1.astype(np.int64), "n2": n2.astype(np.int64)})


def _load_users(plan, options, d, labels, data_rng, opts):
    pr = plan["params"]
    if options.data:
        stream = iter_inputs(plan, options.data, skip_empty=options.skip_empty)
        data = KeyValueInputs.join(list(stream))  # values outside [-1, 1] refused unless the plan clips
        values = np.clip(data.values, -1, 1) if pr["values"] == "clip" else data.values
        skipped = f" ({stream.skipped_empty:,} rows with an empty key skipped)" if stream.skipped_empty else ""
        return (KeyValueUsers(data.indptr, data.keys, values), data.dropped_pairs, f"{options.data}{skipped}",
                stream.skipped_empty)
    n = opts.users or int(plan["predicted"]["mse_frequency"].get("users", 100_000))
    users = synthetic_users(d, n, opts.distribution, data_rng)
    return users, 0, f"synthetic Sec. 6.1 ({opts.distribution}, n={n}, one pair per user)", 0


def _runtimes(plan, eps: float, d: int, L: int):
    pr = plan["params"]
    out = [(plan["mechanism"] + " (plan)", plan["solver"]["allocation"],
            _RUNTIME[plan["mechanism"]](domain=d, a=pr["a"], b=pr["b"], p=pr["p"], padding_length=L))]
    for mech in ("pckv-ue", "pckv-grr"):
        for method in ("optimized", "naive"):
            if (mech, method) != (plan["mechanism"], plan["solver"]["allocation"]):
                q = solve_on_grid(mech, eps, method, d, L).params
                out.append((mech, method, _RUNTIME[mech](domain=d, a=q["a"], b=q["b"], p=q["p"], padding_length=L)))
    return out


def _run_row(rt, users, sets, freq, means, options, trial_seqs, tick):
    """Trials of one runtime: mean squared errors per key set, and per-key squared errors (trial means)."""
    err: dict[Any, dict[str, list[float]]] = {s: {k: [] for k in ("f", "fr", "m", "mr")} for s in sets}
    per_key_m = np.zeros(freq.shape[0])
    for t in range(options.trials):
        rng = np.random.default_rng(trial_seqs[t])
        agg = rt.aggregate(rt.perturb(users, rng)) if options.mode == "runtime" else aggregate_counts(rt, users, rng)
        c, r = rt.estimate(agg, "corrected"), rt.estimate(agg, "empirical")
        per_key_m += (c.mean - means) ** 2 / options.trials
        for s, (fk, mk) in sets.items():
            err[s]["f"].append(np.mean((c.frequency[fk] - freq[fk]) ** 2))
            err[s]["fr"].append(np.mean((r.frequency[fk] - freq[fk]) ** 2))
            err[s]["m"].append(np.mean((c.mean[mk] - means[mk]) ** 2) if mk.size else np.nan)
            with np.errstate(invalid="ignore"):
                err[s]["mr"].append(np.nanmean((r.mean[mk] - means[mk]) ** 2) if mk.size else np.nan)
        tick()
    return err, per_key_m


def _row(name, method, rt, err, sets, th_f, th_m) -> dict[str, Any]:
    pm = rt.privacy_map()
    row = {"mechanism": name, "allocation": method, "epsilon1": pm["epsilon1"], "epsilon2": pm["epsilon2"],
           "a": rt.a, "b": rt.b, "p": rt.p}
    for s, (fk, mk) in sets.items():
        row[s] = {"mse_frequency": float(np.mean(err[s]["f"])),
                  "mse_frequency_empirical": float(np.mean(err[s]["fr"])),
                  "mse_frequency_theory": float(np.mean(th_f[fk])),
                  "mse_mean": float(np.nanmean(err[s]["m"])) if mk.size else None,
                  "mse_mean_empirical": float(np.nanmean(err[s]["mr"])) if mk.size else None,
                  "mse_mean_theory": float(np.mean(th_m[mk])) if mk.size else None}
    return row


def _tables(results, sets, setting) -> list[Table]:
    tables = [Table("PCKV simulation setting", ["item", "value"], [
        ["data", setting["data"]], ["users n", setting["users"]], ["keys d", setting["keys"]],
        ["pairs", setting["pairs"]], ["padding_length L", setting["padding_length"]],
        ["epsilon (nats)", setting["epsilon"]],
        ["users with > L pairs", f"{100 * setting['users_truncated_fraction']:.1f}%"],
        ["pairs dropped (outside the plan's keys)", setting["dropped_pairs"]], ["mode", setting["mode"]],
        ["trials", setting["trials"]]])]
    cols = ["mechanism", "allocation", "epsilon1", "epsilon2", "MSE freq (Alg. 4)", "MSE freq (7)", "MSE freq Thm 4",
            "MSE mean (Alg. 4)", "MSE mean (8)", "MSE mean Thm 4"]
    for s, (fk, mk) in sets.items():
        tables.append(Table(
            f"MSE over {s} ({fk.size} keys for frequency, {mk.size} with f > 0 for mean)", cols,
            [[r["mechanism"], r["allocation"], r["epsilon1"], r["epsilon2"], r[s]["mse_frequency"],
              r[s]["mse_frequency_empirical"], r[s]["mse_frequency_theory"], r[s]["mse_mean"], r[s]["mse_mean_empirical"],
              r[s]["mse_mean_theory"]] for r in results],
            note="squared frequency / squared value units; empirical means over trials; Thm 4: eq. (9)-(11) + "
                 "bias (10)^2 + truncation bias of users with > L pairs"))
    return tables


def _epsilons(text: str | None) -> list[float]:
    if not text:
        return []
    try:
        vals = [float(x) for x in str(text).split(",") if x.strip()]
    except ValueError:
        vals = []
    if not vals or not all(0 < v <= 20 for v in vals):
        raise SpecError("epsilons", "must be comma-separated numbers in (0, 20] (nats)", text)
    return vals


def _plotter(curves_data, title):
    def plot(path: str) -> None:
        curves = []
        for i, (label, ranks, theory, empirical) in enumerate(curves_data):
            curves.append(Curve(f"{label}: Theorem 4", ranks, theory, style="theory", color=i))
            curves.append(Curve(f"{label}: simulated (Alg. 4)", ranks, empirical, style="empirical", color=i))
        plot_curves(curves, path, title=title, xlabel="key rank (1 = most frequent)",
                    ylabel="MSE of the mean estimate (value units^2)", logy=True)
    return plot


def simulate(plan: Mapping[str, Any], options: RunOptions, progress: Callable[[int, int], None] | None = None
             ) -> SimulationReport:
    """Empirical vs Theorem 4 MSE of frequency and mean (all keys and top-N keys).

    Parameters
    ----------
    plan : mapping
        A PCKV plan (re-verified first).
    options : ldpplan.planner.SimulateOptions
        ``data`` (key-value CSV, else synthetic), ``trials``, ``seed``, ``mode``
        (``aggregate``: Algorithm 1 per user then exact count distributions; ``runtime``:
        the client runtime for every user), ``extra`` parsed by :class:`SimulateOptions`.
    progress : callable, optional
        ``progress(advance, total)``.

    Returns
    -------
    SimulationReport
        Per row, empirical MSE of Algorithm 4 (``corrected``) and of eq. (7)-(8)
        (``empirical``) averaged over trials, and Theorem 4's prediction (squared
        frequency / squared value units); ``plot`` draws the per-key mean MSE over the
        top-N keys (theory vs simulation) of the optimized rows.

    Raises
    ------
    SpecError
        A bad ``-O`` option (the message lists the valid keys).
    InputDataError
        Unreadable data, keys outside the plan's domain.
    PrivacyViolation
        The plan fails verification.

    References
    ----------
    PCKV, Theorem 4, Algorithm 4, Sec. 6.1 (synthetic data), Fig. 9.
    """
    opts = parse_options(SimulateOptions, options.extra)
    check = verify(plan)
    if not check.holds:
        raise PrivacyViolation(f"refusing to simulate a plan that fails verification: {check.message}")
    d, L = int(plan["params"]["domain_size"]), int(plan["params"]["padding_length"])
    eps = float(plan["spec"]["epsilon"])
    root = np.random.SeedSequence(options.seed)
    data_seq, *trial_seqs = root.spawn(options.trials + 1)
    users, dropped, source, skipped = _load_users(plan, options, d, plan["domain"]["labels"],
                                                  np.random.default_rng(data_seq), opts)
    freq, means, sampled, sizes = data_model(users.indptr, users.keys, users.values, d)
    top = np.argsort(-freq, kind="stable")[: opts.top]
    sets = {"all keys": (np.arange(d), np.nonzero(freq > 0)[0]), f"top-{opts.top} keys": (top, top[freq[top] > 0])}
    rows = _runtimes(plan, eps, d, L)
    private = private_phase(parse_spec(plan["spec"])) is not None
    sweep = _epsilons(opts.epsilons)
    total = (len(rows) + int(private) + 4 * int(opts.baselines) + 6 * len(sweep)) * options.trials
    tick = (lambda: progress(1, total)) if progress is not None else (lambda: None)
    if progress is not None:
        progress(0, total)  # the bar shows its total from the start
    run = _Run(users, sets, freq, means, sampled, d, L, options, trial_seqs, tick, f"top-{opts.top} keys")
    results, curves = _plan_rows(run, rows, top[freq[top] > 0])
    setting = {"data": source, "users": users.n_users, "keys": d, "pairs": int(users.keys.size), "padding_length": L,
               "epsilon": eps, "users_truncated_fraction": float(np.mean(sizes > L)) if sizes.size else 0.0,
               "dropped_pairs": dropped, "top": opts.top, "mode": options.mode,
               "trials": options.trials}
    tables, data = _tables(results, sets, setting), {"setting": setting, "results": results, "skipped_empty": skipped}
    if opts.baselines:
        data["baselines"] = baseline_rows(eps, users, freq, means, sets, trial_seqs, tick)
        tables.append(baseline_table(data["baselines"], run.top_name, [r for r in results if r["allocation"] != "naive"]))
    if sweep:
        table, data["epsilon_sweep"] = epsilon_sweep(sweep, users, freq, means, sets, run.top_name, trial_seqs,
                                                     lambda e: _optimized_rows(run, e), tick)
        tables.append(table)
    if private:
        def runtime_of(m, a, b, p, d_, L_):
            return _RUNTIME[m](domain=d_, a=a, b=b, p=p, padding_length=L_)

        table, data["two_phase"] = two_phase(plan, users, (freq, means, sampled), top, trial_seqs, runtime_of,
                                             aggregate_counts, tick)
        tables.append(table)
    title = f"PCKV per-key mean MSE, top-{opts.top} keys (epsilon = {eps:g} nats, L = {L}, n = {users.n_users})"
    return SimulationReport(tables=tables, data=data,
                            plot=_plotter(curves, title) if curves else None)


@dataclasses.dataclass(frozen=True)
class _Run:
    """What every simulated row shares: the users, key sets, data model, options and trial seeds."""

    users: KeyValueUsers
    sets: dict
    freq: np.ndarray
    means: np.ndarray
    sampled: Callable[[int], np.ndarray]
    d: int
    L: int
    options: RunOptions
    trial_seqs: list
    tick: Callable[[], None]
    top_name: str

    def result(self, name: str, method: str, rt) -> tuple[dict[str, Any], np.ndarray, np.ndarray]:
        """Simulate one runtime: its table row, Theorem 4 per-key mean MSE and the simulated one."""
        err, per_key_m = _run_row(rt, self.users, self.sets, self.freq, self.means, self.options, self.trial_seqs,
                                  self.tick)
        th_f, th_m = theorem4_mse(rt.a, rt.b, rt.p, self.L, self.users.n_users, self.freq, self.means,
                                  self.sampled(self.L))
        return _row(name, method, rt, err, self.sets, th_f, th_m), th_m, per_key_m


def _plan_rows(run: _Run, rows, shown: np.ndarray) -> tuple[list[dict[str, Any]], list]:
    """The plan's row and the optimized/naive PCKV-UE/GRR rows, plus the per-key curves of the non-naive ones."""
    results, curves = [], []
    for name, method, rt in rows:
        row, th_m, per_key_m = run.result(name, method, rt)
        results.append(row)
        if method != "naive" and shown.size:
            curves.append((f"{name} / {method}", list(range(1, shown.size + 1)), th_m[shown].tolist(),
                           per_key_m[shown].tolist()))
    return results, curves


def _optimized_rows(run: _Run, epsilon: float) -> list[dict[str, Any]]:
    """PCKV-UE and PCKV-GRR with the optimized allocation at ``epsilon`` (one point of the sweep)."""
    out = []
    for mech in ("pckv-ue", "pckv-grr"):
        q = solve_on_grid(mech, epsilon, "optimized", run.d, run.L).params
        rt = _RUNTIME[mech](domain=run.d, a=q["a"], b=q["b"], p=q["p"], padding_length=run.L)
        out.append(run.result(mech, "optimized", rt)[0])
    return out

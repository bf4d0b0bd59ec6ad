"""Simulation of PIE plans: RR and GLH for the plan's target on real or synthetic data."""
from __future__ import annotations

import math
from typing import Any, Literal, Mapping

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from .._common import parse_options, split_list, attach_verification
from .._report import SimulateOptions as RunOptions, SimulationReport, Table
from . import plan as _plan_mod
from ... import mechanisms
from ..data.single import read_single_items, zipf_items
from ..plotting import Curve, plot_curves
from ..shuffle import attach_shuffled
from .claims import shuffle_randomizer
from .inputs import iter_inputs
from .verify import verify

__all__ = ["SimulateOptions", "simulate", "SYNTHETIC_MAX_ENTRIES", "SYNTHETIC_DOMAIN"]

#: Largest n |X| simulated without --data (larger plans are re-planned for a synthetic Zipf sample).
SYNTHETIC_MAX_ENTRIES = 20_000_000
#: |X| of that synthetic sample when the plan's is too large.
SYNTHETIC_DOMAIN = 1000
_SHORT = {"empirical": "emp", "threshold": "emp+thr", "em": "EM"}


class SimulateOptions(BaseModel):
    """``-O KEY=VALUE`` options of ``ldpplan simulate`` for RR/GLH plans."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    bayes_errors: tuple[float, ...] = Field(
        (), description="comma-separated Bayes-error targets in (0, 1) to plan and run instead of the plan's target")
    methods: tuple[Literal["empirical", "threshold", "em"], ...] = Field(
        ("empirical", "threshold"), description="comma-separated estimators: empirical, threshold, em")
    alpha: float = Field(0.05, gt=0, lt=1, description="significance level of the threshold estimator")
    threshold_fill: Literal["zero", "uniform"] = Field(
        "zero", description="threshold estimator: zero below the threshold (PIE Sec. 5.3) or uniform (ULDP)")

    _split_lists = field_validator("bayes_errors", "methods", mode="before")(split_list)

    @field_validator("bayes_errors")
    @classmethod
    def _in_unit_interval(cls, v: tuple[float, ...]) -> tuple[float, ...]:
        for b in v:
            if not (0.0 < b < 1.0):
                raise ValueError(f"every Bayes-error target must be in (0, 1) (got {b})")
        return v


def _data_items(plan: Mapping[str, Any], options: RunOptions) -> tuple[np.ndarray, str, list[str] | None, int,
                                                                            int]:
    """Users' items, a description, the data's labels (None: the plan's domain), |X| and the rows
    skipped for an empty item (``--skip-empty``)."""
    k = int(plan["domain"]["size"])
    if options.data:
        data = read_single_items(options.data, lambda path, **kw: iter_inputs(plan, path, **kw),
                                 skip_empty=options.skip_empty)
        if data.labels is None:
            return data.items, data.source, plan["domain"]["labels"], k, data.skipped_empty
        note = "" if data.labels == plan["domain"]["labels"] else \
            f"; the plan's target re-planned for the data's |X| = {len(data.labels)}"
        return data.items, data.source + note, data.labels, len(data.labels), 0
    n = int(plan["guarantee"]["n"])
    labels = plan["domain"]["labels"]
    note = ""
    if n * k > SYNTHETIC_MAX_ENTRIES:  # the GLH's support counts cost n |X| hash evaluations per trial
        k_syn = min(k, SYNTHETIC_DOMAIN)
        n_syn = max(2, min(n, SYNTHETIC_MAX_ENTRIES // k_syn))
        note = (f"; the plan's |X| = {k}, n = {n} is too large to simulate without --data: its target "
                f"re-planned for |X| = {k_syn}, n = {n_syn}")
        labels = labels[:k_syn] if labels is not None and k_syn < k else labels
        k, n = k_syn, n_syn
    return zipf_items(k, n, options.seed), f"synthetic Zipf(1) over {k} items, n = {n}{note}", labels, k, 0


def _sim_plans(plan: Mapping[str, Any], n: int, labels: list[str] | None, k: int,
               opts: SimulateOptions) -> list[tuple[str, dict]]:
    """The plan's RR and GLH counterparts for the data's n and domain, per target."""
    spec = {key: v for key, v in dict(plan["spec"]).items() if key not in ("domain", "domain_size", "users", "n")}
    spec["domain"] = list(labels) if labels is not None else k
    spec["users"] = n
    target = dict(spec.get("target", {}))
    targets: list[float | None] = list(opts.bayes_errors) or [None]
    out = []
    for tgt in targets:
        for mech in ("rr", "glh"):
            s = dict(spec, mechanism=mech)
            if tgt is not None:
                s["target"] = {"bayes_error": tgt, **({"max_prior": target["max_prior"]} if target.get("max_prior") else {})}
            sp = _plan_mod.build_plan(s)
            if "shuffle" in s:  # the central claim the runtime's load() checks (issue 26)
                attach_shuffled(sp, sp["spec"]["shuffle"], shuffle_randomizer(sp))
            attach_verification(sp, verify(sp))
            out.append((f"bayes>={tgt:g}" if tgt is not None else "plan target", sp))
    return out


def simulate(plan: Mapping[str, Any], options: RunOptions, progress=None) -> SimulationReport:
    """RR and GLH for the plan's target on data: guarantee, predicted and measured l2 loss.

    For the plan's target (or each of ``-O bayes_errors=0.5,0.8``) the RR and the GLH are
    planned for the data's ``n`` and domain; each runs ``trials`` times through the client
    runtime (perturb -> aggregate -> estimate; the RR's exact sampling is as fast as count
    sampling, so both ``--mode`` values run the runtime). The table shows alpha (bits), the
    Cor. 3.9 bound, the predicted total l2 loss (Prop. 4.6/4.7) and the measured
    ``sum_x (p_hat(x) - p(x))^2`` for each estimator (``-O methods=``), also over the top-10 items.

    Raises
    ------
    InputDataError
        Unreadable data; SpecError for bad ``-O`` options (listing the valid keys).
    """
    opts = parse_options(SimulateOptions, options.extra)
    items, source, labels, k, skipped = _data_items(plan, options)
    n = int(items.size)
    truth = np.bincount(items, minlength=k) / n
    top = np.argsort(-truth)[:10]
    sims = _sim_plans(plan, n, labels, k, opts)
    total_steps = len(sims) * int(options.trials)
    seeds = np.random.SeedSequence(int(options.seed)).spawn(len(sims))
    tick = (lambda: progress(1, total_steps)) if progress else (lambda: None)
    if progress:
        progress(0, total_steps)  # the bar shows its total from the start
    results = [_run_plan(label, sp, ss, items, truth, top, opts, int(options.trials), tick)
               for (label, sp), ss in zip(sims, seeds)]
    table = _table(results, source, opts, options.trials)
    data = {"source": source, "n": n, "domain_size": k, "results": results, "seed": int(options.seed),
            "trials": int(options.trials), "mode": options.mode, "options": opts.model_dump(mode="json"),
            "skipped_empty": skipped}
    return SimulationReport(tables=[table], data=data, plot=_plotter(results, opts, n, k, options.trials))


def _run_plan(label: str, sp: dict, ss: np.random.SeedSequence, items: np.ndarray, truth: np.ndarray,
              top: np.ndarray, opts: SimulateOptions, trials: int, tick) -> dict[str, Any]:
    """Trials of one simulated plan through the runtime; its result record (losses per estimator)."""
    mech = mechanisms.load(sp)
    n = int(items.size)
    losses: dict[str, list[float]] = {m: [] for m in opts.methods}
    top_losses: dict[str, list[float]] = {m: [] for m in opts.methods}
    for rng in (np.random.default_rng(s) for s in ss.spawn(trials)):
        reports = mech.perturb(items, rng=rng)
        agg = mech.aggregate(reports)
        for m in opts.methods:
            est = mech.estimate(reports if m == "em" else agg, m, alpha=opts.alpha,
                                threshold_fill=opts.threshold_fill).frequency
            losses[m].append(float(np.sum((est - truth) ** 2)))
            top_losses[m].append(float(np.sum((est[top] - truth[top]) ** 2)))
        tick()
    gu, pred = sp["guarantee"], sp["predicted"]["l2_loss_total"]["value"]
    return {"target": label, "mechanism": sp["mechanism"], "epsilon": sp["params"]["epsilon"],
            "g": sp["params"].get("g"), "alpha_bits": gu["alpha_bits"],
            "bayes_error_lower_bound": gu["bayes_error_lower_bound"], "predicted_l2_total": pred,
            "exact_l2_total_for_runtime": float(np.sum(mech.variance_per_user(truth)) / n),
            "measured": {m: {"l2_total_mean": float(np.mean(v)),
                             "l2_total_se": float(np.std(v, ddof=1) / math.sqrt(len(v))) if len(v) > 1 else None,
                             "l2_top10_mean": float(np.mean(top_losses[m]))} for m, v in losses.items()}}


def _table(results: list[dict[str, Any]], source: str, opts: SimulateOptions, trials: int) -> Table:
    """One row per simulated plan: guarantee, predicted and measured l2 loss per estimator."""
    rows = []
    for rec in results:
        meas = rec["measured"]
        rows.append([rec["target"], rec["mechanism"], float(rec["epsilon"]), "-" if rec["g"] is None else int(rec["g"]),
                     float(rec["alpha_bits"]), float(rec["bayes_error_lower_bound"]), float(rec["predicted_l2_total"])]
                    + [meas[m]["l2_total_mean"] for m in opts.methods]
                    + [meas[m]["l2_top10_mean"] for m in opts.methods])
    cols = (["target", "mechanism", "epsilon", "g", "alpha_bits", "Bayes err >=", "pred. l2"]
            + [f"l2 {_SHORT[m]}" for m in opts.methods] + [f"top10 l2 {_SHORT[m]}" for m in opts.methods])
    return Table(f"PIE on {source}: RR vs GLH (means over {trials} trials)", cols, rows,
                 note="pred. l2 = Prop. 4.6/4.7 total sum_x E[(p - p_hat)^2] (squared frequencies) for the empirical "
                      "estimate; l2 columns are measured sums over all |X| items, top10 over the 10 most frequent. "
                      + ("emp+thr: estimates below the Bonferroni threshold set to 0 (PIE paper, Sec. 5.3)"
                         if opts.threshold_fill == "zero" else
                         "emp+thr: the mass left by the significant estimates spread uniformly over the others "
                         "(ULDP paper's convention; the PIE paper's is -O threshold_fill=zero)")
                      + f", alpha = {opts.alpha}.")


def _plotter(results: list[dict[str, Any]], opts: SimulateOptions, n: int, k: int, trials: int):
    def plot(path: str) -> None:
        curves = []
        for color, mech_name in enumerate(("rr", "glh")):
            recs = sorted((r for r in results if r["mechanism"] == mech_name), key=lambda r: r["bayes_error_lower_bound"])
            xs = [r["bayes_error_lower_bound"] for r in recs]
            prop = "Prop. 4.6" if mech_name == "rr" else "Prop. 4.7"
            curves.append(Curve(f"{mech_name.upper()} predicted ({prop})", xs,
                                [r["predicted_l2_total"] for r in recs], style="theory", color=color))
            for m in opts.methods:
                curves.append(Curve(f"{mech_name.upper()} {_SHORT[m]}", xs,
                                    [r["measured"][m]["l2_total_mean"] for r in recs], color=color))
        plot_curves(curves, path, title=f"PIE: l2 loss vs re-identification guarantee (n = {n}, |X| = {k}, "
                                        f"{trials} trials)",
                    xlabel="Bayes error lower bound (Cor. 3.9)", ylabel="sum over X of l2 loss (squared frequency)")

    return plot

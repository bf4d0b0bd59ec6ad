"""Simulation of numeric plans: the runtime on real data (flights delays by default), predicted vs observed error.

Data: ``--data FILE`` (a ``value`` column), or a real data set, ``-O dataset=flights|gss|movielens`` and
``-O column=...`` (:data:`DATASETS`; a column alone names its data set). Values outside the plan's range
are clipped by the runtime and counted in the report (``clipped_below`` / ``clipped_above``); a column
with no value inside the range is refused (exit 2): it would measure the clipping, not the mechanism.

The predicted variance of the mean is exact for the data: ``sum_i Var[report | x_i] / n^2`` with each
user's variance under randomized rounding (:meth:`NumericChannel.report_variance`); the observed
error is the mean squared error of the estimated mean against the data's (clipped) mean over trials.
"""
from __future__ import annotations

import math
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, Mapping, Optional

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from .._common import attach_verification, parse_options, split_list
from .._report import SimulateOptions as RunOptions
from .._report import SimulationReport, Table
from ... import mechanisms
from ..data import GSS_NUMERIC, default_data_dir, load_gss_vocab, load_movielens_ratings
from ..data.flights import FLIGHTS_FILE, FLIGHTS_NUMERIC, load_flights
from ..errors import SpecError
from .inputs import iter_inputs
from .plan import build_plan
from .spec import EPSILON_MAX
from .verify import verify

__all__ = ["SimulateOptions", "simulate", "DATASETS", "dataset_column", "load_dataset_column", "clipping_counts"]

GSS_FILE = "gss_vocab.csv"
MOVIELENS_FILE = "movielens_ratings.csv"


#: the real data sets ``simulate`` runs on without ``--data``: each one's numeric columns, the first its default
DATASETS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"flights": FLIGHTS_NUMERIC, "gss": GSS_NUMERIC, "movielens": ("rating",)})
_COLUMNS = tuple(c for columns in DATASETS.values() for c in columns)


class SimulateOptions(BaseModel):
    """``-O KEY=VALUE`` options of ``ldpplan simulate`` for numeric plans."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    dataset: Optional[Literal["flights", "gss", "movielens"]] = Field(
        None, description="data set simulated when --data is not given: flights (nycflights13, cancelled flights "
                          "dropped), gss (GSS vocabulary respondents, NA dropped) or movielens (one rating a user); "
                          "default: the data set of -O column, else flights")
    column: Optional[Literal["dep_delay", "arr_delay", "air_time", "distance", "age", "educ", "rating"]] = Field(
        None, description="the data set's numeric column: flights dep_delay (default), arr_delay, air_time, distance; "
                          "gss age (default), educ; movielens rating")
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


def dataset_column(opts: SimulateOptions) -> tuple[str, str]:
    """The ``(dataset, column)`` an options set names: the column's data set, or flights; its first column.

    Raises
    ------
    SpecError
        ``-O column`` is not a column of ``-O dataset``.
    """
    dataset: str = opts.dataset or next((d for d, cols in DATASETS.items() if opts.column in cols), "flights")
    column = opts.column or DATASETS[dataset][0]
    if column not in DATASETS[dataset]:
        raise SpecError("-O column", f"must be a column of the {dataset} data set ({', '.join(DATASETS[dataset])})",
                        column)
    return dataset, column


def load_dataset_column(dataset: str, column: str, data_dir: Path) -> tuple[np.ndarray, str]:
    """One numeric column of a real data set, missing cells dropped: ``(values, source)``.

    Parameters
    ----------
    dataset, column : str
        A key of :data:`DATASETS` and one of its columns.
    data_dir : pathlib.Path
        The data folder (``planner.data.default_data_dir()``).

    Returns
    -------
    values : ndarray of float64, shape (n,)
        Flights: minutes (delays, air time) or miles; GSS: years; MovieLens: stars in [0.5, 5], one
        rating row each (a user of the simulation is a rating, not a MovieLens user).
    source : str
        The data set, column, count and the dropped rows, for the report.

    Raises
    ------
    InputDataError
        A missing or unreadable file.
    """
    if dataset == "flights":
        numbers = load_flights(data_dir / FLIGHTS_FILE).numbers[column]
        values = numbers[~np.isnan(numbers)]
        return values, (f"nycflights13 {column} ({values.size:,} flights, {numbers.size - values.size:,} "
                        f"cancelled dropped)")
    if dataset == "gss":
        gss = load_gss_vocab(data_dir / GSS_FILE, fields=(column,))
        values = gss.numbers(column)
        return values, f"GSS vocabulary {column} ({values.size:,} respondents, {gss.n_dropped:,} NA dropped)"
    values = load_movielens_ratings(data_dir / MOVIELENS_FILE).ratings
    return values, f"MovieLens ratings ({values.size:,} ratings)"


def _data(plan: Mapping[str, Any], options: RunOptions, opts: SimulateOptions) -> tuple[np.ndarray, str, int]:
    if options.data:
        if opts.dataset is not None:
            raise SpecError("-O dataset", "names a real data set; give it or --data, not both", opts.dataset)
        stream = iter_inputs(plan, options.data, skip_empty=options.skip_empty)
        chunks = list(stream)
        return np.concatenate(chunks), str(options.data), int(stream.skipped_empty)
    # the missing cells are dropped and counted in the source (skipped_empty counts rows of --data only)
    values, source = load_dataset_column(*dataset_column(opts), default_data_dir())
    return values, source, 0


def clipping_counts(values: np.ndarray, low: float, high: float, field: str) -> tuple[int, int]:
    """Values below ``low`` and above ``high`` (clipped by the runtime): ``(below, above)``.

    Raises
    ------
    SpecError
        No value lies in ``[low, high]``: every user would report an end of the range, and the
        simulation would measure the clipping, not the mechanism.
    """
    below, above = int(np.count_nonzero(values < low)), int(np.count_nonzero(values > high))
    if below + above == values.size:
        raise SpecError(field, f"must have values inside the plan's range [{low:g}, {high:g}] ({below:,} below, "
                               f"{above:,} above, none inside: plan a range that covers the data)",
                        f"{float(values.min()):g}..{float(values.max()):g}")
    return below, above


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
    dataset, column = (None, None) if options.data else dataset_column(opts)
    plans, trials = _plans(plan, opts), int(options.trials)
    seeds = np.random.SeedSequence(int(options.seed)).spawn(len(plans))
    results: list[dict[str, Any]] = []
    if progress:
        progress(0, len(plans) * trials)
    runtimes = [mechanisms.load(sp) for sp in plans]
    mech0 = runtimes[0]  # every plan has the spec's range
    below, above = clipping_counts(values, mech0.low, mech0.high, "--data" if options.data else "-O column")
    for sp, mech, ss in zip(plans, runtimes, seeds):
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
                             "rounding included); observed over the trials against the clipped data's mean; "
                             f"clipped to the range [{mech0.low:g}, {mech0.high:g}]: {below:,} below, {above:,} above"
                             + (" (most values: the error measured is mostly the clipping's; plan a range that "
                                "covers the data)." if 2 * (below + above) > values.size else "."))
    data = {"source": source, "n": int(values.size), "results": results, "seed": int(options.seed), "trials": trials,
            "mode": options.mode, "options": opts.model_dump(mode="json"), "skipped_empty": skipped,
            "dataset": dataset, "column": column,
            "range": [mech0.low, mech0.high], "clipped_below": below, "clipped_above": above}
    return SimulationReport(tables=[table], data=data)

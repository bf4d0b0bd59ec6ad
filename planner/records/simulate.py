"""Simulation of record plans: the runtime on the flights data (or synthetic records), predicted vs measured error.

Data, in order: ``--data`` (a records CSV, :mod:`.inputs`); the NYC flights of 2013 when every
attribute is one of its categorical columns with that column's domain size (``-O dataset=auto``,
the default, or ``flights``); else synthetic records, each attribute Zipf(1) independently.
"""
from __future__ import annotations

import math
from typing import Any, Literal, Mapping

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ... import mechanisms
from .._common import parse_options
from .._report import SimulateOptions as RunOptions
from .._report import SimulationReport, Table
from ..data import concat_chunks
from ..data.datasets import default_data_dir
from ..data.flights import FLIGHTS_CATEGORICAL, FLIGHTS_FILE, load_flights
from ..data.single import zipf_items
from ..errors import InputDataError
from .inputs import iter_inputs

__all__ = ["SimulateOptions", "simulate", "SYNTHETIC_USERS", "records_data"]

#: Users of the synthetic sample when the spec gives no ``users``.
SYNTHETIC_USERS = 10_000


class SimulateOptions(BaseModel):
    """``-O KEY=VALUE`` options of ``ldpplan simulate`` for record plans."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    dataset: Literal["auto", "flights", "synthetic"] = Field(
        "auto", description="auto (flights when the attributes are its columns), flights, synthetic")
    users: int = Field(0, ge=0, le=10_000_000, description="flights: the first this many flights (0: all)")


def _flights_fit(plan: Mapping[str, Any]) -> bool:
    return all(name in FLIGHTS_CATEGORICAL for name in plan["params"]["names"])


def records_data(plan: Mapping[str, Any], options: RunOptions, opts: SimulateOptions) -> tuple[np.ndarray, str]:
    """The users' records (int64 codes, shape (n, d)) and a description of their source."""
    p = plan["params"]
    if options.data:
        return concat_chunks(list(iter_inputs(plan, options.data, skip_empty=options.skip_empty))), str(options.data)
    use_flights = opts.dataset == "flights" or (opts.dataset == "auto" and _flights_fit(plan)
                                                and (default_data_dir() / FLIGHTS_FILE).is_file())
    if use_flights:
        if not _flights_fit(plan):
            raise InputDataError(f"-O dataset=flights: the attributes must be flights columns {FLIGHTS_CATEGORICAL}")
        flights = load_flights(default_data_dir() / FLIGHTS_FILE)
        sizes = flights.domain_sizes(p["names"])
        if tuple(p["domain_sizes"]) != sizes:
            raise InputDataError(f"-O dataset=flights: the attributes' domain sizes must be the flights' {sizes}")
        data = np.stack([flights.codes[name] for name in p["names"]], axis=1)
        if opts.users:
            data = data[:opts.users]
        return data, f"NYC flights 2013 ({data.shape[0]:,} flights)"
    n = int(plan["spec"].get("users") or SYNTHETIC_USERS)
    seed = int(options.seed)
    data = np.stack([zipf_items(k, n, seed + j) for j, k in enumerate(p["domain_sizes"])], axis=1)
    return data, f"synthetic records, each attribute Zipf(1) independently, n = {n}"


def simulate(plan: Mapping[str, Any], options: RunOptions, progress=None) -> SimulationReport:
    """Run the plan ``trials`` times through the runtime; per attribute, predicted vs measured l2 error.

    Raises
    ------
    InputDataError
        Unreadable data; SpecError for bad ``-O`` options (listing the valid keys).
    """
    opts = parse_options(SimulateOptions, options.extra)
    data, source = records_data(plan, options, opts)
    mech = mechanisms.load(plan)
    n, d = int(data.shape[0]), len(mech.names)
    truth = np.concatenate([np.bincount(data[:, j], minlength=k) / n for j, k in enumerate(mech.domain_sizes)])
    predicted = mech.variance_per_user(truth) / n
    trials = int(options.trials)
    losses = np.zeros((trials, d))
    if progress:
        progress(0, trials)
    for t, rng in enumerate(np.random.default_rng(s) for s in np.random.SeedSequence(int(options.seed)).spawn(trials)):
        err = (mech.estimate(mech.aggregate(mech.perturb(data, rng=rng))).frequency - truth) ** 2
        losses[t] = [err[mech.attribute_slice(j)].sum() for j in range(d)]
        if progress:
            progress(1, trials)
    weights = [float(a.get("weight", 1.0)) for a in plan["spec"]["attributes"]]
    rows, results = [], []
    for j, name in enumerate(mech.names):
        pred = float(predicted[mech.attribute_slice(j)].sum())
        mean = float(losses[:, j].mean())
        se = float(losses[:, j].std(ddof=1) / math.sqrt(trials)) if trials > 1 else None
        results.append({"attribute": name, "weight": weights[j], "predicted_l2_total": pred,
                        "measured_l2_total_mean": mean, "measured_l2_total_se": se})
        rows.append([name, mech.domain_sizes[j], mech.oracles[j], weights[j], pred, mean])
    table = Table(f"{plan['mechanism']} on {source} (means over {trials} trials)",
                  ["attribute", "k", "oracle", "weight", "pred. l2 (empirical)", "measured l2"], rows,
                  note="pred. l2 = sum over the attribute's values of n Var(f_hat)/n at the data's frequencies "
                       "(exact for SPL and RS+FD with fixed data; SMP: with m_j = pi_j n); measured: the mean of "
                       "sum (f_hat - f)^2 (squared frequency).")
    out = {"source": source, "n": n, "results": results, "seed": int(options.seed), "trials": trials,
           "mode": options.mode, "options": opts.model_dump(mode="json"),
           "epsilon": float(plan["params"]["epsilon"]), "epsilon_guarantee": float(plan["guarantee"]["epsilon"])}
    return SimulationReport(tables=[table], data=out)

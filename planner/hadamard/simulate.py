"""Simulation of Hadamard-response plans: the runtime on real or synthetic data, predicted vs measured error."""
from __future__ import annotations

import math
from typing import Any, Literal, Mapping

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from .._common import attach_verification, parse_options, split_list
from .._report import SimulateOptions as RunOptions
from .._report import SimulationReport, Table
from ..errors import InputDataError
from ... import mechanisms
from ..data.single import read_single_items, zipf_items
from .inputs import iter_inputs
from .plan import build_plan
from .verify import verify

__all__ = ["SimulateOptions", "simulate", "SYNTHETIC_USERS"]

#: Users of the synthetic sample when the spec gives no ``users``.
SYNTHETIC_USERS = 10_000


class SimulateOptions(BaseModel):
    """``-O KEY=VALUE`` options of ``ldpplan simulate`` for Hadamard-response plans."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    epsilons: tuple[float, ...] = Field((), description="comma-separated budgets (nats) to plan and run instead of "
                                                         "the plan's epsilon")
    methods: tuple[Literal["empirical", "projected"], ...] = Field(
        ("empirical", "projected"), description="comma-separated estimators: empirical, projected")

    _split_lists = field_validator("epsilons", "methods", mode="before")(split_list)

    @field_validator("epsilons")
    @classmethod
    def _positive(cls, v: tuple[float, ...]) -> tuple[float, ...]:
        for e in v:
            if not 0.0 < e <= 100.0:
                raise ValueError(f"every epsilon must be in (0, 100] (got {e})")
        return v


def _data_items(plan: Mapping[str, Any], options: RunOptions) -> tuple[np.ndarray, str, int]:
    """Users' items, a description, and the rows skipped for an empty item."""
    k = int(plan["domain"]["size"])
    if options.data:
        data = read_single_items(options.data, lambda path, **kw: iter_inputs(plan, path, **kw),
                                 skip_empty=options.skip_empty)
        if data.labels is not None and data.labels != plan["domain"]["labels"]:
            raise InputDataError(f"--data: the GSS categories are not the plan's domain.labels ({len(data.labels)} "
                                 "categories); plan with the hadamard-gss example's domain")
        return data.items, data.source, data.skipped_empty
    n = int(plan["spec"].get("users") or plan["spec"].get("n") or SYNTHETIC_USERS)
    return zipf_items(k, n, options.seed), f"synthetic Zipf(1) over {k} items, n = {n}", 0


def _plans(plan: Mapping[str, Any], n: int, opts: SimulateOptions) -> list[dict]:
    """The plan itself, or its spec re-planned at each ``-O epsilons`` (with the data's n)."""
    if not opts.epsilons:
        return [dict(plan)]
    spec = {key: v for key, v in dict(plan["spec"]).items() if key not in ("users", "n", "epsilon", "shuffle")}
    plans = [build_plan(dict(spec, epsilon=e, users=n)) for e in opts.epsilons]
    return [attach_verification(p, verify(p)) for p in plans]  # the room's steps of FAMILY.plan (no [shuffle])


def simulate(plan: Mapping[str, Any], options: RunOptions, progress=None) -> SimulationReport:
    """Run the plan ``trials`` times through the runtime (perturb -> aggregate -> estimate) on data.

    The table shows, per epsilon, the predicted total l2 error of the empirical estimate (exact, any
    distribution) and the measured ``sum_x (f_hat(x) - f(x))^2`` of each estimator (``-O methods``).

    Raises
    ------
    InputDataError
        Unreadable data; SpecError for bad ``-O`` options (listing the valid keys).
    """
    opts = parse_options(SimulateOptions, options.extra)
    items, source, skipped = _data_items(plan, options)
    n, k = int(items.size), int(plan["domain"]["size"])
    truth = np.bincount(items, minlength=k) / n
    plans = _plans(plan, n, opts)
    trials = int(options.trials)
    seeds = np.random.SeedSequence(int(options.seed)).spawn(len(plans))
    results: list[dict[str, Any]] = []
    if progress:
        progress(0, len(plans) * trials)  # the bar shows its total from the start
    for sp, ss in zip(plans, seeds):
        mech = mechanisms.load(sp)
        losses: dict[str, list[float]] = {m: [] for m in opts.methods}
        for rng in (np.random.default_rng(s) for s in ss.spawn(trials)):
            agg = mech.aggregate(mech.perturb(items, rng=rng))
            for m in opts.methods:
                losses[m].append(float(np.sum((mech.estimate(agg, m).frequency - truth) ** 2)))
            if progress:
                progress(1, len(plans) * trials)
        results.append({"epsilon": float(sp["params"]["epsilon"]), "epsilon_guarantee": float(sp["guarantee"]["epsilon"]),
                        "blocks": int(sp["params"]["blocks"]),
                        "predicted_l2_total": float(np.sum(mech.variance_per_user(truth)) / n),
                        "measured": {m: {"l2_total_mean": float(np.mean(v)),
                                         "l2_total_se": float(np.std(v, ddof=1) / math.sqrt(len(v))) if len(v) > 1
                                         else None} for m, v in losses.items()}})
    rows = [[r["epsilon"], r["epsilon_guarantee"], r["blocks"], r["predicted_l2_total"]]
            + [r["measured"][m]["l2_total_mean"] for m in opts.methods] for r in results]
    table = Table(f"Hadamard response on {source} (means over {trials} trials)",
                  ["epsilon", "guarantee epsilon", "B", "pred. l2 (empirical)"] + [f"l2 {m}" for m in opts.methods],
                  rows, note="pred. l2 = sum_x (c0 + c_block F_j + c1 f(x))/n at the data's frequencies: the exact "
                             "expected sum over the k items of (f_hat - f)^2 of the empirical estimate (squared "
                             "frequency); l2 columns are measured.")
    data = {"source": source, "n": n, "domain_size": k, "results": results, "seed": int(options.seed),
            "trials": trials, "mode": options.mode, "options": opts.model_dump(mode="json"), "skipped_empty": skipped}
    return SimulationReport(tables=[table], data=data)

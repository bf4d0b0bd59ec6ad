"""Generic perturb/estimate over files, for every family (what ``ldpplan perturb`` / ``estimate`` run).

Nothing here is family-specific: inputs are read with ``FAMILY.read_inputs``, the runtime is
``ldpplan.mechanisms.load``, reports go through :mod:`ldpplan.planner._reports_file`.
Nothing here prints.
"""
from __future__ import annotations

import csv
import dataclasses
import io
import os
from typing import Any

import numpy as np

from ._io import read_plan_file, write_bytes_atomic
from ._report import Table
from .errors import InputDataError, PrivacyViolation, SpecError
from .families import family_of_plan

__all__ = ["PerturbResult", "EstimateResult", "verified_plan", "perturb_file", "estimate_file", "estimate_table",
           "estimate_csv", "estimate_json", "write_estimate_csv"]


@dataclasses.dataclass(frozen=True)
class PerturbResult:
    """What ``perturb_file`` wrote: ``n`` reports of ``mechanism`` to ``output``; ``seed`` None = secure RNG."""

    n: int
    mechanism: str
    output: str
    seed: int | None


@dataclasses.dataclass(frozen=True)
class EstimateResult:
    """An estimate with the labels of its domain (``labels[i]`` names ``estimate.frequency[i]``)."""

    estimate: Any
    labels: list[str]
    mechanism: str


def verified_plan(path: str | os.PathLike) -> dict[str, Any]:
    """Read a plan file and re-verify it (exactly, against its spec) before anything runs it.

    Raises
    ------
    PlanFormatError
        Unreadable or invalid plan (exit 2).
    PrivacyViolation
        The plan fails verification (exit 1); the message names the file and the reason.
    """
    plan = read_plan_file(path)
    result = family_of_plan(plan).verify(plan)
    if not result.holds:
        raise PrivacyViolation(f"{path}: plan fails verification: {result.message}", result.details)
    return plan


def perturb_file(plan_path: str | os.PathLike, input_path: str | os.PathLike, output: str | os.PathLike,
                 seed: int | None = None) -> PerturbResult:
    """Verify a plan, read users' inputs, perturb them with the runtime and write a reports file.

    Parameters
    ----------
    seed : int, optional
        None (production): ``ldpplan.mechanisms.secure_rng()``. An int: ``numpy.random.default_rng(seed)``,
        a reproducible simulation (recorded as ``seeded: true`` with the seed).

    Raises
    ------
    PlanFormatError, PrivacyViolation, InputDataError, PlanError, ValueError
        Nothing is written in any of these cases.
    """
    from ldpplan import mechanisms

    from ._plan_format import plan_fingerprint, tool_version
    from ._reports_file import write_reports

    plan = verified_plan(plan_path)
    family = family_of_plan(plan)
    data = family.read_inputs(plan, input_path)
    mech = mechanisms.load(plan)
    rng = mechanisms.secure_rng() if seed is None else np.random.default_rng(seed)
    reports = mech.perturb(data, rng=rng)
    write_reports(output, reports.to_arrays(), mechanism=plan["mechanism"], plan_fingerprint=plan_fingerprint(plan),
                  ldpplan_version=tool_version(), seed=seed)
    return PerturbResult(n=len(reports), mechanism=plan["mechanism"], output=str(output), seed=seed)


def estimate_file(plan_path: str | os.PathLike, reports_path: str | os.PathLike,
                  method: str | None = None) -> EstimateResult:
    """Verify a plan, check a reports file belongs to it, aggregate and estimate.

    Raises
    ------
    InputDataError
        The reports file is unreadable, or was written for another mechanism or plan
        (the message names the file).
    SpecError
        ``--method`` is not one of the mechanism's ``methods``.
    """
    from ldpplan import mechanisms

    from ._plan_format import plan_fingerprint
    from ._reports_file import read_reports

    plan = verified_plan(plan_path)
    mech = mechanisms.load(plan)
    if method is not None and method not in mech.methods:
        raise SpecError("--method", f"must be one of {list(mech.methods)} for {plan['mechanism']}", method)
    content = read_reports(reports_path)
    if content.meta["mechanism"] != plan["mechanism"]:
        raise InputDataError(f"{reports_path}: reports of mechanism {content.meta['mechanism'][:40]!r} cannot be "
                             f"estimated with a {plan['mechanism']!r} plan")
    fingerprint = plan_fingerprint(plan)
    if content.meta["plan_fingerprint"] != fingerprint:
        raise InputDataError(f"{reports_path}: was written for another plan (plan_fingerprint "
                             f"{content.meta['plan_fingerprint'][:16]}... != {fingerprint[:16]}... of {plan_path})")
    reports = mechanisms.Reports(plan["mechanism"], content.arrays)
    mech.aggregate(reports)  # validates every column first (the file is untrusted): ValueError naming it
    estimate = mech.estimate(reports, method=method)  # reports, not an aggregate: some methods need them (GLH em)
    labels = mech.labels if mech.labels is not None else [str(i) for i in range(mech.domain_size)]
    return EstimateResult(estimate=estimate, labels=[str(x) for x in labels], mechanism=plan["mechanism"])


def _columns(result: EstimateResult) -> tuple[list[str], list[list[Any]]]:
    est = result.estimate
    cols = ["label", "frequency", "count"]
    data: list[Any] = [result.labels, est.frequency, est.frequency * est.n]
    if est.std_error is not None:
        cols.append("std_error")
        data.append(est.std_error)
    if est.mean is not None:
        cols.append("mean")
        data.append(est.mean)
    rows = [[data[0][i], *(float(c[i]) for c in data[1:])] for i in range(len(result.labels))]
    return cols, rows


def estimate_table(result: EstimateResult) -> Table:
    """The estimate as a table in domain order (label, frequency, count, std_error, mean where available)."""
    cols, rows = _columns(result)
    est = result.estimate
    return Table(title=f"{result.mechanism} estimate ({est.method}), n = {est.n:,}", columns=cols, rows=rows,
                 note="frequency = fraction of users; count = n x frequency")


def estimate_csv(result: EstimateResult) -> bytes:
    """The estimate as CSV bytes (full float precision)."""
    cols, rows = _columns(result)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(cols)
    writer.writerows([[row[0], *(repr(x) for x in row[1:])] for row in rows])
    return buf.getvalue().encode("utf-8")


def estimate_json(result: EstimateResult) -> dict[str, Any]:
    """``{"frequency", "mean", "n", "method", "std_error", "labels", ...}`` in domain order."""
    return result.estimate.to_dict(labels=result.labels)


def write_estimate_csv(result: EstimateResult, path: str | os.PathLike) -> None:
    """Write :func:`estimate_csv` atomically."""
    write_bytes_atomic(path, estimate_csv(result))

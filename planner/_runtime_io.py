"""Generic perturb/estimate over files, for every family (what ``ldpplan perturb`` / ``estimate`` run).

Nothing here is family-specific: inputs are read with ``FAMILY.read_inputs``, the runtime is
``ldpplan.mechanisms.load``, reports go through :mod:`ldpplan.planner._reports_file`.
Nothing here prints.
"""
from __future__ import annotations

import csv
import dataclasses
import io
import math
import os
from typing import Any, Callable, Mapping

import numpy as np

from ..mechanisms import Plan
from ._io import read_plan_file, write_bytes_atomic
from ._report import Table
from .errors import InputDataError, PrivacyViolation, SpecError
from .families import family_of_plan
from .. import mechanisms
from ._plan_format import tool_version
from ._reports_file import ReportsWriter, iter_report_batches, read_reports
from ._memoized_io import perturb_memoized
from .aggregate import BATCH_ROWS, aggregate_sources, expand_inputs, open_sources
from ._memory import DEFAULT_MAX_MEMORY, check_budget

__all__ = ["PERTURB_CHUNK", "MAX_WHOLE_REPORT_BYTES", "MIN_ROUND_REPORTS",
           "PerturbResult", "EstimateResult", "verified_plan", "perturb_file", "estimate_file",
           "estimate_table", "estimate_csv", "estimate_json", "write_estimate_csv"]


@dataclasses.dataclass(frozen=True)
class PerturbResult:
    """What ``perturb_file`` wrote: ``n`` reports of ``mechanism`` to ``output``; ``seed`` None = secure RNG;
    ``rows`` data rows read, ``skipped_empty`` of them dropped for an empty item (``skip_empty=True``);
    memoized plans: ``skipped_over_limit`` users dropped (``skip_over_limit=True``), ``memo_started`` (a new
    memo, ``new_memo=True``) and the ``round``."""

    n: int
    mechanism: str
    output: str
    seed: int | None
    rows: int = 0
    skipped_empty: int = 0
    skipped_over_limit: int = 0
    memo_started: bool = False
    round: int | None = None


@dataclasses.dataclass(frozen=True)
class EstimateResult:
    """An estimate with the labels of its domain (``labels[i]`` names ``estimate.frequency[i]``); ``round``: the
    collection round estimated (plans that count per round), else None."""

    estimate: Any
    labels: list[str]
    mechanism: str
    round: int | None = None


def verified_plan(path: str | os.PathLike | Mapping[str, Any]) -> Plan:
    """Read a plan file once (a :class:`~ldpplan.mechanisms.Plan`) and re-verify it (exactly, against its
    spec) before anything runs it. A Plan (or dict) given is not read again (a dict is converted once).

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


#: Input rows read (and users perturbed, reports written) per chunk by :func:`perturb_file`, at most.
PERTURB_CHUNK = 1 << 18
#: About the most report bytes per chunk: a plan over a domain of size m gets at most
#: ``PERTURB_CHUNK_BYTES // ceil(m / 8)`` rows per chunk (unary reports are m bits), at least 1024.
PERTURB_CHUNK_BYTES = 32 << 20


def perturb_file(plan_path: str | os.PathLike | Plan, input_path: str | os.PathLike, output: str | os.PathLike,
                 seed: int | None = None, chunk_rows: int = PERTURB_CHUNK, *, skip_empty: bool = False,
                 progress: Callable[[int, int], None] | None = None, memo: str | os.PathLike | None = None,
                 round: int | None = None, new_memo: bool = False, skip_over_limit: bool = False) -> PerturbResult:
    """Verify a plan, stream users' inputs, perturb them with the runtime and write a Parquet reports file.

    The input (CSV or Parquet) is read through the family's chunked reader
    (:meth:`~ldpplan.planner.families.Family.iter_inputs`): about ``chunk_rows`` rows are read,
    perturbed and written (one row group) at a time, so peak memory does not grow with the file.

    Parameters
    ----------
    seed : int, optional
        None (production): ``ldpplan.mechanisms.secure_rng()``. An int: ``numpy.random.default_rng(seed)``,
        a reproducible simulation (recorded as ``seeded: true`` with the seed).
    chunk_rows : int
        Most input rows read at a time (users for item sets and key-value pairs); wide domains
        get fewer (:data:`PERTURB_CHUNK_BYTES`), so that memory and progress steps stay bounded.
    skip_empty : bool
        Drop rows whose item is empty (counted in ``PerturbResult.skipped_empty``) instead of refusing the file.
    progress : callable, optional
        ``progress(advance, total)``: bytes of the input read since the last call, and the file size.
    memo, round : path-like, int, optional
        Runtimes with client state (``memoized``, the longitudinal family) only, and required there:
        the clients' memo file (checked, then rewritten atomically before the reports are renamed into
        place; :mod:`ldpplan.planner._memoized_io`) and the collection round. Their input has a column
        ``user`` of integer ids (canonical ASCII digits, one row per user) beside ``item``.
    new_memo : bool
        Memoized plans: start a new memo file (refused when it exists; without it an absent memo is
        refused: a new memo redraws the permanent responses of users who reported before).
    skip_over_limit : bool
        Memoized plans: drop (and count) users whose values would exceed the plan's limit instead of
        refusing the file.

    Raises
    ------
    PlanFormatError, PrivacyViolation, InputDataError, PlanError, ValueError
        Nothing is written in any of these cases (rows with an empty item: InputDataError naming
        their count and first lines, unless ``skip_empty``).
    """
    plan = verified_plan(plan_path)
    family = family_of_plan(plan)
    mech = mechanisms.load(plan)
    # bytes of one report: the runtime's own figure where it has one (k-RR, GLH: a few int64 whatever |X|),
    # else one bit per item (unary reports)
    width = getattr(mech, "report_bytes", None) or -(-plan.domain.size // 8)
    rows = min(int(chunk_rows), max(1024, PERTURB_CHUNK_BYTES // max(1, width)))
    if getattr(mech, "memoized", False):
        return PerturbResult(**perturb_memoized(plan, mech, input_path, output, seed, rows, skip_empty, progress,
                                                memo, round, new_memo=new_memo, skip_over_limit=skip_over_limit))
    given = [flag for flag, on in (("--memo", memo is not None), ("--round", round is not None),
                                   ("--new-memo", new_memo), ("--skip-over-limit", skip_over_limit)) if on]
    if given:
        raise SpecError(given[0], f"only for plans with client state (memoized); {plan['mechanism']} has none",
                        str(memo) if memo is not None else round if round is not None else True)
    stream = family.iter_inputs(plan, input_path, skip_empty=skip_empty, chunk_rows=rows)
    rng = mechanisms.secure_rng() if seed is None else np.random.default_rng(seed)
    done = 0
    if progress is not None:
        progress(0, stream.total_bytes)
    with ReportsWriter(output, mechanism=plan.mechanism, plan_fingerprint=plan.fingerprint,
                       ldpplan_version=tool_version(), seed=seed) as writer:
        for chunk in stream:
            writer.write(mech.perturb(chunk, rng=rng).to_arrays())
            if progress is not None:
                progress(stream.bytes_read - done, stream.total_bytes)
                done = stream.bytes_read
        if progress is not None and stream.bytes_read > done:
            progress(stream.bytes_read - done, stream.total_bytes)
    return PerturbResult(n=writer.rows, mechanism=plan.mechanism, output=str(output), seed=seed, rows=stream.rows,
                         skipped_empty=stream.skipped_empty)


#: Fewest reports of the round ``estimate`` takes for plans that count per round (``--min-reports``).
MIN_ROUND_REPORTS = 100


def _estimate_round(plan: Plan, mech, aggregate, method, round_, min_reports) -> EstimateResult:
    """One round of a plan that counts per round, refused under ``min_reports`` reports (see estimate_file)."""
    counts = aggregate.counts["reports"]
    present = [int(t) for t in np.flatnonzero(counts)]
    if round_ is None:
        round_ = present[-1] if present else 0
    if not 0 <= round_ < counts.size:
        raise SpecError("--round", f"must be below guarantee.rounds = {counts.size}", round_)
    least = MIN_ROUND_REPORTS if min_reports is None else int(min_reports)
    n = int(counts[round_])
    if n < max(least, 1):
        shown = ", ".join(f"{t}: {int(counts[t]):,}" for t in present[-5:]) or "none"
        raise SpecError("--min-reports", f"round {round_} has {n:,} reports, fewer than the minimum {least:,} (reports "
                        f"per round, last rounds: {shown}); pick a round with --round or accept it with "
                        "--min-reports N", n)
    try:
        estimate = mech.estimate(aggregate, method=method, round=round_)
    except ValueError as exc:
        raise SpecError("--round", str(exc), round_) from None
    labels = mech.labels if mech.labels is not None else [str(i) for i in range(mech.domain_size)]
    return EstimateResult(estimate=estimate, labels=[str(x) for x in labels], mechanism=plan.mechanism,
                          round=int(round_))


#: Most decoded bytes of reports :func:`estimate_file` reads whole, for a method that needs each
#: report (uRAP ``em``); every other estimate comes from the aggregate, read a batch at a time.
MAX_WHOLE_REPORT_BYTES = 1 << 30


def _whole_reports(plan: Plan, sources: list, method: str | None, why: ValueError):
    """The reports of ``sources`` read whole (bounded by MAX_WHOLE_REPORT_BYTES), for a method the aggregate refuses."""
    from ._parquet_columns import row_bytes  # deferred: pyarrow

    import pyarrow.parquet as pq

    if not all(s.kind == "reports" for s in sources):
        raise why
    size = sum(s.rows * row_bytes(pq.read_schema(s.file)) for s in sources)
    if size > MAX_WHOLE_REPORT_BYTES:
        raise InputDataError(f"--method {method}: needs every report in memory ({size:,} bytes decoded > the limit of "
                             f"{MAX_WHOLE_REPORT_BYTES:,}); {why}")
    parts = [read_reports(s.file).arrays for s in sources]
    arrays = {k: np.concatenate([p[k] for p in parts]) if len(parts) > 1 else parts[0][k] for k in parts[0]}
    return mechanisms.Reports(plan.mechanism, arrays)


def _item_indices(plan: Plan, items: Any) -> tuple[np.ndarray, list[str]]:
    """``--items``: a list (or comma-separated string) of labels of ``domain.labels`` or 0-based indices."""
    parts = [str(v).strip() for v in (items.split(",") if isinstance(items, str) else items)]
    labels, size = plan.domain.labels, plan.domain.size
    where = {label: i for i, label in enumerate(labels)} if labels is not None else {}
    out = []
    for part in parts:
        if part in where:
            out.append(where[part])
        elif part.isdigit() and int(part) < size:
            out.append(int(part))
        else:
            raise SpecError("--items", f"must be labels of domain.labels or indices in [0, {size})", part)
    if not out:
        raise SpecError("--items", "give at least one item", items)
    idx = np.array(out, dtype=np.int64)
    return idx, [labels[i] if labels is not None else str(i) for i in out]


def _estimate_items(plan: Plan, mech: Any, sources: list, items: Any, method: str | None) -> EstimateResult:
    """``--items`` of a runtime with ``estimate_items`` (k-RR, GLH): report files a batch at a time."""
    idx, names = _item_indices(plan, items)

    def batches():
        for src in sources:
            if src.kind == "aggregate":
                yield src.aggregate
                continue
            for arrays in iter_report_batches(src.file, BATCH_ROWS):
                yield mechanisms.Reports(plan.mechanism, arrays)
    try:
        estimate = mech.estimate_items(batches(), idx, method=method)
    except ValueError as exc:
        raise InputDataError(f"{[s.file for s in sources][:5]}: {exc}") from None
    return EstimateResult(estimate=estimate, labels=names, mechanism=plan.mechanism)


def estimate_file(plan_path: str | os.PathLike | Plan, inputs: str | os.PathLike | list,
                  method: str | None = None, round: int | None = None,
                  min_reports: int | None = None, *, max_memory: int | None = None,
                  items: Any = None) -> EstimateResult:
    """Verify a plan, check its inputs belong to it (each batch counted once), and estimate.

    Parameters
    ----------
    inputs : path-like or list of path-like
        Parquet report files (globs allowed) and/or aggregate files of ``ldpplan aggregate``.
        Everything is aggregated as ``ldpplan aggregate`` does (report files a batch at a
        time: memory stays bounded whatever the files' size) and estimated from the merged
        aggregate. A method that needs each report (uRAP ``em``) is run on the reports read
        whole, only when every input is a report file and they decode to at most
        :data:`MAX_WHOLE_REPORT_BYTES`.
    round : int, optional
        Plans that count per round (``memoized`` runtimes): the round to estimate (default: the last
        round with reports); the result names it (``EstimateResult.round``).
    min_reports : int, optional
        Plans that count per round: the fewest reports the round must have (default
        :data:`MIN_ROUND_REPORTS`); a round with fewer is refused, so that a few forged reports of a
        later round never become the default estimate.
    max_memory : int, optional
        Budget in bytes (default :data:`~._memory.DEFAULT_MAX_MEMORY`, 1 GiB) for an estimate of the
        full domain: refused before it allocates when the predicted peak is larger (SpecError naming
        ``--max-memory`` and the memory the full domain would need).
    items : str or list, optional
        Estimate only these items (labels or 0-based indices): for k-RR and GLH plans, from the
        report files a batch at a time, in memory independent of ``|X|`` (``estimate_items`` of the
        runtime; methods ``empirical`` and ``threshold``), equal to the full estimate at those items.

    Raises
    ------
    InputDataError
        An input is unreadable, was written for another mechanism or plan, or counts a batch
        another input counts (the message names the file); reports too large to read whole
        for a method that needs them.
    SpecError
        ``--method`` is not one of the mechanism's ``methods``.
    """
    plan = verified_plan(plan_path)
    mech = mechanisms.load(plan)
    if method is not None and method not in mech.methods:
        raise SpecError("--method", f"must be one of {list(mech.methods)} for {plan['mechanism']}", method)
    paths = expand_inputs(inputs if isinstance(inputs, (list, tuple)) else [inputs])
    if items is not None and hasattr(mech, "estimate_items") and round is None:
        return _estimate_items(plan, mech, open_sources(plan, paths), items, method)

    hint = " or estimate chosen items with --items" if hasattr(mech, "estimate_items") else ""
    if items is not None and not hasattr(mech, "estimate_items"):
        raise SpecError("--items", f"is for runtimes that estimate chosen items (k-RR, GLH); a {plan['mechanism']} "
                        "estimate needs the full domain", items)
    check_budget(plan, "estimate", DEFAULT_MAX_MEMORY if max_memory is None else max_memory, hint=hint)
    sources = open_sources(plan, paths)
    aggregate = aggregate_sources(plan, sources, mechanism=mech).aggregate   # every column, a batch at a time
    if getattr(mech, "memoized", False):
        return _estimate_round(plan, mech, aggregate, method, round, min_reports)
    if round is not None or min_reports is not None:
        raise SpecError("--round" if round is not None else "--min-reports",
                        f"only for plans that count per round; {plan['mechanism']} does not",
                        round if round is not None else min_reports)
    try:
        estimate = mech.estimate(aggregate, method=method)
    except ValueError as exc:   # a method that needs each report (uRAP em) when every input is a report file
        estimate = mech.estimate(_whole_reports(plan, sources, method, exc), method=method)
    labels = mech.labels if mech.labels is not None else [str(i) for i in range(mech.domain_size)]
    return EstimateResult(estimate=estimate, labels=[str(x) for x in labels], mechanism=plan.mechanism)


def check_confidence(confidence: Any) -> float | None:
    """``--confidence``: None or a level in (0, 1) (SpecError naming the flag otherwise)."""
    if confidence is None:
        return None
    try:
        level = float(confidence)
    except (TypeError, ValueError):
        level = math.nan
    if not 0.0 < level < 1.0:
        raise SpecError("--confidence", "must be a confidence level in (0, 1), e.g. 0.95", confidence)
    return level


def _columns(result: EstimateResult, confidence: float | None = None) -> tuple[list[str], list[list[Any]]]:
    est = result.estimate
    cols = ["label", "frequency", "count"]
    data: list[Any] = [result.labels, est.frequency, est.frequency * est.n]
    if est.std_error is not None:
        cols.append("std_error")
        data.append(est.std_error)
    if confidence is not None:
        cols += ["ci_low", "ci_high"]
        data += list(est.confidence_interval(confidence))
    if est.mean is not None:
        cols.append("mean")
        data.append(est.mean)
        if confidence is not None:
            cols += ["mean_ci_low", "mean_ci_high"]
            data += list(est.confidence_interval(confidence, which="mean"))
    rows = [[data[0][i], *(float(c[i]) for c in data[1:])] for i in range(len(result.labels))]
    return cols, rows


def estimate_table(result: EstimateResult, confidence: float | None = None) -> Table:
    """The estimate as a table in domain order (label, frequency, count, std_error, mean where available;
    with ``confidence``, the intervals ``ci_low``/``ci_high`` and, for means, ``mean_ci_low``/``mean_ci_high``)."""
    cols, rows = _columns(result, confidence)
    est = result.estimate
    note = "frequency = fraction of users; count = n x frequency"
    if confidence is not None:
        note += f"; {confidence:g} confidence intervals: {est.interval_method}"
    which = "" if result.round is None else f" of round {result.round}"
    return Table(title=f"{result.mechanism} estimate{which} ({est.method}), n = {est.n:,}", columns=cols, rows=rows,
                 note=note)


def estimate_csv(result: EstimateResult, confidence: float | None = None) -> bytes:
    """The estimate as CSV bytes (full float precision; interval columns with ``confidence``)."""
    cols, rows = _columns(result, confidence)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(cols)
    writer.writerows([[row[0], *(repr(x) for x in row[1:])] for row in rows])
    return buf.getvalue().encode("utf-8")


def estimate_json(result: EstimateResult, confidence: float | None = None) -> dict[str, Any]:
    """``{"frequency", "mean", "n", "method", "std_error", "labels", ...}`` in domain order.

    With ``confidence``: ``confidence``, ``interval_method``, ``ci_low``, ``ci_high`` (and
    ``mean_ci_low``, ``mean_ci_high``, ``mean_interval_method`` for key-value plans); ``round`` for
    plans that count per round (the round estimated).
    """
    out = result.estimate.to_dict(labels=result.labels, confidence=confidence)
    if result.round is not None:
        out["round"] = result.round
    return out


def write_estimate_csv(result: EstimateResult, path: str | os.PathLike, confidence: float | None = None) -> None:
    """Write :func:`estimate_csv` atomically."""
    write_bytes_atomic(path, estimate_csv(result, confidence))

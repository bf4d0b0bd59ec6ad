"""Aggregate report files (and earlier aggregate files) into one aggregate file (``ldpplan aggregate``).

Inputs are Parquet report files (:mod:`._reports_file`) and aggregate files written here; every
input's plan fingerprint is checked against the plan, and every batch of reports is checked to be
counted once (a reports file is a batch, identified by its ``batch_id`` and the digest of its
bytes; an aggregate file lists the batches it counts), before anything is aggregated; the
result is written atomically only when every input was read. Engines: ``"local"`` (this
process, a batch at a time) and ``"dask"`` (:mod:`._dask_engine`, one task per row group,
tree-reduced with ``+``); integer counts make both give identical aggregates.

Aggregate file (JSON, ``format`` :data:`AGGREGATE_FILE_FORMAT`)::

    {"format": "ldpplan-aggregate-file/1", "mechanism": ..., "plan_fingerprint": ...,
     "ldpplan_version": ..., "n": ..., "aggregate": Aggregate.to_dict() (with plan_fingerprint and batches),
     "sources": [{"file": ..., "path": absolute path, "kind": "reports" | "aggregate", "rows": ...,
                  "sources": [...] (aggregate inputs only)}]}

Nothing here prints.
"""
from __future__ import annotations

import dataclasses
import glob
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..mechanisms import Aggregate, Plan, PlanError, load, loads_strict
from .errors import InputDataError, SpecError
from ._reports_file import file_batch, is_parquet, iter_report_batches, open_reports
from .. import mechanisms
from ._dask_engine import aggregate_dask
from ._memory import DEFAULT_MAX_MEMORY, aggregate_file_bytes, check_budget, human_bytes
from ._io import write_json_atomic
from ._plan_format import tool_version

__all__ = ["AGGREGATE_FILE_FORMAT", "BATCH_ROWS", "ENGINES", "Source", "AggregateResult", "expand_inputs",
           "open_sources", "check_counted_once", "aggregate_sources", "aggregate_files", "write_aggregate_file",
           "read_aggregate_file"]

AGGREGATE_FILE_FORMAT = "ldpplan-aggregate-file/1"
#: Reports decoded at a time by the local engine and by each Dask task.
BATCH_ROWS = 1 << 16
ENGINES = ("local", "dask")
#: Largest aggregate file read, in bytes.
MAX_AGGREGATE_BYTES = 256 << 20
_FILE_KEYS = {"format", "mechanism", "plan_fingerprint", "ldpplan_version", "n", "aggregate", "sources"}


@dataclasses.dataclass(frozen=True)
class Source:
    """One checked input: ``kind`` "reports" (``info``: ReportsInfo, ``batch``: its Batch) or "aggregate"
    (``aggregate``, an identified ``ldpplan.mechanisms.Aggregate``, and the file's ``record``)."""

    file: str
    kind: str
    rows: int
    info: Any = None
    aggregate: Any = None
    record: dict[str, Any] | None = None
    batch: Any = None

    @property
    def batches(self) -> tuple:
        """The batches of reports this input counts."""
        return (self.batch,) if self.kind == "reports" else tuple(self.aggregate.batches)

    def describe(self) -> dict[str, Any]:
        """The entry of the aggregate file's ``sources`` list."""
        out: dict[str, Any] = {"file": self.file, "path": os.path.abspath(self.file), "kind": self.kind,
                               "rows": self.rows}
        if self.record is not None:
            out["sources"] = self.record.get("sources", [])
        return out


@dataclasses.dataclass(frozen=True)
class AggregateResult:
    """The merged ``aggregate`` (an ``ldpplan.mechanisms.Aggregate``) of ``sources``, with the plan's fingerprint."""

    aggregate: Any
    sources: tuple[Source, ...]
    mechanism: str
    plan_fingerprint: str
    engine: str

    @property
    def n(self) -> int:
        """Number of reports behind the aggregate."""
        return int(self.aggregate.n)


def expand_inputs(patterns: Sequence[str | os.PathLike]) -> list[str]:
    """Input paths: each argument as is, or its glob matches (sorted) when it holds ``*?[``.

    Raises
    ------
    InputDataError
        No input, a pattern matching nothing, or the same file given twice.
    """
    out: list[str] = []
    for pattern in patterns:
        text = os.fspath(pattern)
        if any(c in text for c in "*?["):
            matches = sorted(glob.glob(text))
            if not matches:
                raise InputDataError(f"{text}: the pattern matches no file")
            out.extend(matches)
        else:
            out.append(text)
    if not out:
        raise InputDataError("inputs: give at least one reports or aggregate file")
    seen: dict[str, str] = {}
    for path in out:
        key = os.path.realpath(path)
        if key in seen:
            raise InputDataError(f"{path}: given twice (also as {seen[key]}); its reports would be counted twice")
        seen[key] = path
    return out


def read_aggregate_file(path: str | os.PathLike, plan: Mapping[str, Any] | Plan) -> Source:
    """Read an aggregate file written by :func:`write_aggregate_file` and check it belongs to ``plan``.

    The file's aggregate is validated by ``Aggregate.from_dict`` (integer counts, not booleans,
    consistent with ``n`` by the mechanism's count rule; the batch list) and must list its
    batches (files written before batch ids cannot be checked for double counting: they are
    refused, aggregate their report files again).

    Raises
    ------
    InputDataError
        Unreadable, not strict JSON, another format, mechanism or plan fingerprint, an unknown
        field, malformed or inconsistent counts, no batch list, ``n`` not the aggregate's.
    """
    plan = Plan.read(plan)
    p = Path(path)
    try:
        if p.stat().st_size > MAX_AGGREGATE_BYTES:
            raise InputDataError(f"{p}: an aggregate file must be at most {MAX_AGGREGATE_BYTES} bytes")
        data = loads_strict(p.read_text(encoding="utf-8"), what="aggregate")
    except (OSError, UnicodeError, PlanError) as exc:
        raise InputDataError(f"{p}: must be a Parquet reports file or an aggregate file written by `ldpplan "
                             f"aggregate` ({type(exc).__name__}: {str(exc)[:200]})") from None
    if not isinstance(data, dict) or data.get("format") != AGGREGATE_FILE_FORMAT:
        got = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise InputDataError(f"{p}: format: must be {AGGREGATE_FILE_FORMAT!r} (got {str(got)[:40]!r})")
    unknown = sorted(set(data) - _FILE_KEYS)
    if unknown:
        raise InputDataError(f"{p}: unknown field {str(unknown[0])[:40]!r} "
                             f"(an aggregate file has {sorted(_FILE_KEYS)})")
    if data.get("mechanism") != plan.mechanism:
        raise InputDataError(f"{p}: an aggregate of mechanism {str(data.get('mechanism'))[:40]!r} cannot be used "
                             f"with a {plan.mechanism!r} plan")
    fingerprint = plan.fingerprint
    if data.get("plan_fingerprint") != fingerprint:
        raise InputDataError(f"{p}: plan_fingerprint: was aggregated for another plan "
                             f"({str(data.get('plan_fingerprint'))[:16]}... != {fingerprint[:16]}...)")
    try:
        agg = Aggregate.from_dict(data.get("aggregate"))
    except ValueError as exc:
        raise InputDataError(f"{p}: {exc}") from None
    if not agg.batches:
        raise InputDataError(f"{p}: aggregate.batches: missing; an aggregate file without its batch list (written "
                             f"before ldpplan recorded batches) cannot be checked for double counting: aggregate "
                             f"its report files again")
    if agg.plan_fingerprint != fingerprint:
        raise InputDataError(f"{p}: aggregate.plan_fingerprint: must be the file's plan_fingerprint "
                             f"({str(agg.plan_fingerprint)[:16]}... != {fingerprint[:16]}...)")
    if agg.mechanism != plan.mechanism or type(data.get("n")) is not int or agg.n != data["n"] \
            or not isinstance(data.get("sources"), list):
        raise InputDataError(f"{p}: aggregate: mechanism, n and sources must match the file's record "
                             f"(n = {str(data.get('n'))[:40]}, aggregate.n = {agg.n})")
    return Source(file=str(path), kind="aggregate", rows=agg.n, aggregate=agg, record=data)


def _where(batch: Any, source: Source) -> str:
    """Where a batch is counted, for messages: the input, and the original file for an aggregate input."""
    return source.file if source.kind == "reports" else f"{source.file} (its batch {batch.source or '(unnamed)'})"


def check_counted_once(sources: Sequence[Source]) -> None:
    """Refuse a batch of reports counted twice among ``sources`` (same ``batch_id`` or same digest),
    whatever the paths: a hard link, a byte copy, an aggregate and a copy of one of its batches.

    Raises
    ------
    InputDataError
        One line naming the batch and both inputs.
    """
    seen: dict[str, tuple[Any, Source]] = {}
    for src in sources:
        for batch in src.batches:
            for key in batch.keys():
                if key in seen:
                    first, where = seen[key]
                    raise InputDataError(f"{src.file}: batch {batch.label} is counted twice: in {_where(first, where)} "
                                         f"and in {_where(batch, src)} (each batch of reports is counted once)")
            for key in batch.keys():
                seen[key] = (batch, src)


def open_sources(plan: Mapping[str, Any] | Plan, paths: Sequence[str]) -> list[Source]:
    """Check every input (metadata, and the bytes' digest, for report files) against ``plan`` and
    check that no batch of reports is counted twice; nothing is aggregated yet.

    Raises
    ------
    InputDataError
        The first bad input, named: unreadable, another mechanism or plan, a batch counted twice
        (:func:`check_counted_once`).
    """
    plan = Plan.read(plan)  # a path or dict is read once here; a Plan is taken as it is
    fingerprint = plan.fingerprint
    sources = []
    for path in paths:
        if not Path(path).exists():  # name what the missing input is (issue 19: not "reports file" for an aggregate)
            what = ("aggregate file (JSON, written by `ldpplan aggregate`)" if Path(path).suffix.lower() == ".json"
                    else "input (a Parquet reports file of `ldpplan perturb` or an aggregate file of `ldpplan "
                         "aggregate`)")
            raise InputDataError(f"{path}: the {what} must exist")
        if not is_parquet(path) and Path(path).is_file() and Path(path).stat().st_size:
            sources.append(read_aggregate_file(path, plan))
            continue
        info = open_reports(path)
        if info.meta["mechanism"] != plan.mechanism:
            raise InputDataError(f"{path}: reports of mechanism {info.meta['mechanism'][:40]!r} cannot be used "
                                 f"with a {plan.mechanism!r} plan")
        if info.meta["plan_fingerprint"] != fingerprint:
            raise InputDataError(f"{path}: plan_fingerprint: was written for another plan "
                                 f"({info.meta['plan_fingerprint'][:16]}... != {fingerprint[:16]}...)")
        sources.append(Source(file=str(path), kind="reports", rows=info.num_rows, info=info, batch=file_batch(info)))
    check_counted_once(sources)
    return sources


def _aggregate_local(plan: Plan, mech: Any, reports: list[Source], batch_rows: int):
    total = None
    for src in reports:
        for arrays in iter_report_batches(src.file, batch_rows):
            try:
                agg = mech.aggregate(mechanisms.Reports(plan.mechanism, arrays))
            except ValueError as exc:
                raise InputDataError(f"{src.file}: {exc}") from None
            total = agg if total is None else total + agg
    return total


def aggregate_sources(plan: Mapping[str, Any] | Plan, sources: Sequence[Source], *, engine: str = "local",
                      scheduler: str | None = None, batch_rows: int = BATCH_ROWS,
                      mechanism: Any = None) -> AggregateResult:
    """Aggregate checked sources (:func:`open_sources`) and merge them with ``+``.

    Parameters
    ----------
    mechanism : Runtime, optional
        The plan's runtime already built (``ldpplan.mechanisms.load(plan)``); default: built here, once.
    engine : {"local", "dask"}
        Where report files are aggregated; the result is identical.
    scheduler : str, optional
        Dask scheduler address (``tcp://host:port``); None starts a ``distributed.LocalCluster``.
    batch_rows : int
        Reports decoded at a time (bounds the memory of the local engine and of each task).

    Raises
    ------
    SpecError
        An unknown engine, or ``scheduler`` with the local engine.
    InputDataError
        A report column the mechanism refuses (the message names the file).
    """
    plan = Plan.read(plan)
    if engine not in ENGINES:
        raise SpecError("--engine", f"must be one of {list(ENGINES)}", engine)
    if scheduler is not None and engine != "dask":
        raise SpecError("--scheduler", "is used only with --engine dask", scheduler)
    reports = [s for s in sources if s.kind == "reports"]
    total = None
    if reports:
        if engine == "dask":
            total = aggregate_dask(plan, [s.file for s in reports], scheduler=scheduler, batch_rows=batch_rows)
        else:
            mech = mechanism if mechanism is not None else load(plan)
            total = _aggregate_local(plan, mech, reports, batch_rows)
        if total.n != sum(s.rows for s in reports):
            raise InputDataError(f"{[s.file for s in reports][:5]}: the reports aggregated ({total.n}) are not the "
                                 f"files' rows ({sum(s.rows for s in reports)})")
        total = total.with_batches(plan.fingerprint, [s.batch for s in reports])
    for src in sources:
        if src.kind == "aggregate":
            try:
                total = src.aggregate if total is None else total + src.aggregate
            except ValueError as exc:
                raise InputDataError(f"{src.file}: {exc}") from None
    return AggregateResult(aggregate=total, sources=tuple(sources), mechanism=plan.mechanism,
                           plan_fingerprint=plan.fingerprint, engine=engine)


def aggregate_files(plan: Mapping[str, Any] | Plan, inputs: Sequence[str | os.PathLike], *, max_memory: int | None = None,
                    **options: Any) -> AggregateResult:
    """:func:`expand_inputs`, :func:`open_sources`, :func:`aggregate_sources`, then a check that the
    runtime estimates the merged aggregate (its counts have the plan's shapes). The result is
    identified: it carries the plan's fingerprint and every batch it counts.

    Before anything of the domain's size is allocated: the predicted peak memory must fit
    ``max_memory`` (default :data:`~._memory.DEFAULT_MAX_MEMORY`, 1 GiB; :func:`~._memory.check_budget`),
    and the file written must be one ``ldpplan aggregate``/``estimate`` read back (at most
    :data:`MAX_AGGREGATE_BYTES`, bounded from the number of count entries and of reports):
    never a file that the next command refuses.

    Raises
    ------
    InputDataError
        A bad input (named) or counts the runtime refuses.
    SpecError
        ``--max-memory``: the full domain's aggregate does not fit the budget or the file size limit.
    """
    plan = Plan.read(plan)  # a path or dict is read once here; a Plan is taken as it is
    hint = "; or estimate chosen items from the report files: `ldpplan estimate PLAN REPORTS --items ...`" \
        if hasattr(mechanisms.runtime_class(plan.mechanism), "estimate_items") else ""
    check_budget(plan, "aggregate", DEFAULT_MAX_MEMORY if max_memory is None else max_memory, hint=hint)
    sources = open_sources(plan, expand_inputs(inputs))
    size = aggregate_file_bytes(plan, sum(s.rows for s in sources))
    if size > MAX_AGGREGATE_BYTES:
        raise SpecError("--max-memory", f"the aggregate file of {plan.domain.size:,} items could reach "
                        f"{human_bytes(size)}, above the {human_bytes(MAX_AGGREGATE_BYTES)} an aggregate file may "
                        f"have (estimate reads no larger): estimate from the report files instead",
                        human_bytes(size))
    mech = mechanisms.load(plan)  # the one runtime of this call
    result = aggregate_sources(plan, sources, mechanism=mech, **options)
    try:
        mech.estimate(result.aggregate, method="empirical")
    except ValueError as exc:
        raise InputDataError(f"aggregate of {[s.file for s in sources][:5]}: {exc}") from None
    return result


def write_aggregate_file(path: str | os.PathLike, result: AggregateResult) -> dict[str, Any]:
    """Write ``result`` as an aggregate file (JSON, atomically). Returns the record written."""
    record = {"format": AGGREGATE_FILE_FORMAT, "mechanism": result.mechanism,
              "plan_fingerprint": result.plan_fingerprint, "ldpplan_version": tool_version(), "n": result.n,
              "aggregate": result.aggregate.to_dict(), "sources": [s.describe() for s in result.sources]}
    write_json_atomic(path, record)
    return record

"""Report files: the ONE module that writes and reads them (``ldpplan perturb`` / ``aggregate`` / ``estimate``).

Format ``ldpplan-reports`` 2.0 is Apache Parquet (schema in ``docs/REPORTS.md``):

* one column per report column of ``Reports.to_arrays()`` (1-D integers as Arrow integers,
  2-D arrays such as packed bits as ``fixed_size_binary``; see :mod:`._parquet_columns`);
* row groups of at most :data:`ROW_GROUP_ROWS` rows and about :data:`ROW_GROUP_BYTES` decoded bytes;
* the file's key-value metadata (all values strings): ``format`` = ``ldpplan-reports``,
  ``format_version``, ``mechanism``, ``plan_fingerprint`` (sha256 of the canonical plan JSON),
  ``ldpplan_version``, ``seeded`` (``true``/``false``), ``seed`` (only when seeded) and
  ``batch_id`` (32 lowercase hex digits: 128 random bits from :mod:`secrets`, one per file).

A file's identity as a batch (:func:`file_batch`) is its ``batch_id`` and the sha256 of its
bytes; files written before ``batch_id`` existed are identified by the digest alone.

A report file is attacker-controlled input: the metadata and schema are checked strictly here,
columns are decoded a batch at a time, and the mechanism validates the values in ``aggregate()``.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import secrets
import tempfile
from pathlib import Path
from typing import Any, Iterator, Mapping

import numpy as np

from ._io import _umask
from .errors import InputDataError
from ..mechanisms import Batch

__all__ = ["REPORTS_FORMAT", "REPORTS_FORMAT_VERSION", "ROW_GROUP_ROWS", "ROW_GROUP_BYTES", "MAX_ROW_GROUP_BYTES",
           "ReportsFile", "ReportsInfo", "ReportsWriter", "write_reports", "open_reports", "iter_report_batches",
           "read_reports", "is_parquet", "rows_per_group", "new_batch_id", "file_digest", "file_batch"]

REPORTS_FORMAT = "ldpplan-reports"
REPORTS_FORMAT_VERSION = "2.0"
#: Most rows in one row group.
ROW_GROUP_ROWS = 1 << 20
#: Most decoded bytes in one row group (wide reports get fewer rows per group).
ROW_GROUP_BYTES = 32 << 20
#: Most decoded bytes a row group of a file read may declare (a small file must not inflate beyond it).
MAX_ROW_GROUP_BYTES = 512 << 20
_MAGIC = b"PAR1"
_REQUIRED = ("format", "format_version", "mechanism", "plan_fingerprint", "ldpplan_version", "seeded")
#: Optional (files written before it existed are identified by their content digest).
_OPTIONAL = ("seed", "batch_id")
_BATCH_ID = re.compile(r"[0-9a-f]{32}")


def new_batch_id() -> str:
    """A fresh batch id: 128 random bits from :func:`secrets.token_hex`, 32 lowercase hex digits."""
    return secrets.token_hex(16)


def _bad(path: Any, rule: str) -> InputDataError:
    return InputDataError(f"{path}: {rule}")


def rows_per_group(arrays: Mapping[str, Any]) -> int:
    """Rows per row group for these columns: at most ROW_GROUP_ROWS and about ROW_GROUP_BYTES decoded."""
    row_bytes = sum(int(np.asarray(v)[:1].nbytes) or 1 for v in arrays.values()) or 1
    return max(1, min(ROW_GROUP_ROWS, ROW_GROUP_BYTES // row_bytes))


@dataclasses.dataclass(frozen=True)
class ReportsFile:
    """A report file read whole: ``meta`` (key-value metadata, ``n`` added) and the ``arrays`` (n rows each)."""

    meta: dict[str, Any]
    arrays: dict[str, np.ndarray]


@dataclasses.dataclass(frozen=True)
class ReportsInfo:
    """A report file's checked metadata: ``meta`` (``seeded`` bool, ``seed`` int, ``n``), rows, row groups."""

    path: str
    meta: dict[str, Any]
    num_rows: int
    num_row_groups: int


class ReportsWriter:
    """Write report columns chunk by chunk to a Parquet file, atomically (temp file, then rename).

    Use as a context manager; nothing is left at ``path`` if the block raises.

    Parameters
    ----------
    path : path-like
        Destination (an existing file is replaced only on success).
    mechanism, plan_fingerprint, ldpplan_version : str
        Recorded in the key-value metadata.
    seed : int or None
        The seed of a reproducible simulation, or None (secure generator; ``seeded`` false).
    batch_id : str, optional
        The file's batch id (32 lowercase hex digits); default a fresh :func:`new_batch_id`.
        Every file written is a new batch, also for a seeded simulation.
    """

    def __init__(self, path: str | os.PathLike, *, mechanism: str, plan_fingerprint: str, ldpplan_version: str,
                 seed: int | None, batch_id: str | None = None) -> None:
        self.path = Path(path)
        batch_id = new_batch_id() if batch_id is None else batch_id
        if not (isinstance(batch_id, str) and _BATCH_ID.fullmatch(batch_id)):
            raise ValueError(f"batch_id: must be 32 lowercase hex digits (got {str(batch_id)[:40]!r})")
        self.meta = {"format": REPORTS_FORMAT, "format_version": REPORTS_FORMAT_VERSION, "mechanism": str(mechanism),
                     "plan_fingerprint": str(plan_fingerprint), "ldpplan_version": str(ldpplan_version),
                     "seeded": "true" if seed is not None else "false", "batch_id": batch_id}
        if seed is not None:
            self.meta["seed"] = str(int(seed))
        self.rows = 0
        self._writer: Any = None  # a pyarrow.parquet.ParquetWriter once written to (pyarrow is untyped)
        self._schema: Any = None
        self._tmp: str | None = None

    def __enter__(self) -> "ReportsWriter":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, self._tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        os.close(fd)
        os.chmod(self._tmp, 0o666 & ~_umask())
        return self

    def write(self, arrays: Mapping[str, Any]) -> None:
        """Append reports (``Reports.to_arrays()`` of some users) in row groups of bounded size."""
        import pyarrow.parquet as pq

        from ._parquet_columns import arrays_to_table  # deferred: pyarrow

        table = arrays_to_table(arrays, self.meta)
        if self._writer is None:
            self._schema = table.schema
            self._writer = pq.ParquetWriter(self._tmp, table.schema, compression="zstd")
        elif not table.schema.equals(self._schema, check_metadata=True):
            raise ValueError(f"reports: every chunk must have the same columns (got {table.schema.names})")
        self._writer.write_table(table, row_group_size=rows_per_group(arrays))
        self.rows += table.num_rows

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type is None and self._writer is None:
                raise ValueError("reports: nothing to write (no reports)")
            if self._writer is not None:
                self._writer.close()
            if exc_type is None:
                assert self._tmp is not None  # __enter__ made it
                with open(self._tmp, "rb+") as fh:
                    os.fsync(fh.fileno())
                os.replace(self._tmp, self.path)
                self._tmp = None
        finally:
            if self._tmp is not None:
                try:
                    os.unlink(self._tmp)
                except FileNotFoundError:
                    pass


def write_reports(path: str | os.PathLike, arrays: Mapping[str, Any], *, mechanism: str, plan_fingerprint: str,
                  ldpplan_version: str, seed: int | None, batch_id: str | None = None) -> dict[str, Any]:
    """Write report columns (``Reports.to_arrays()``, one row per user) to ``path`` atomically
    (a fresh ``batch_id`` unless one is given; see :class:`ReportsWriter`).

    Returns
    -------
    dict
        The key-value metadata written (plus ``n``).
    """
    with ReportsWriter(path, mechanism=mechanism, plan_fingerprint=plan_fingerprint,
                       ldpplan_version=ldpplan_version, seed=seed, batch_id=batch_id) as writer:
        writer.write(arrays)
    return {**writer.meta, "n": writer.rows}


def is_parquet(path: str | os.PathLike) -> bool:
    """True when the file starts with the Parquet magic bytes (False for a missing or short file)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == _MAGIC
    except OSError:
        return False


def _meta(path: Path, raw: Mapping[bytes, bytes] | None) -> dict[str, Any]:
    raw = raw or {}
    meta: dict[str, Any] = {}
    for key in (*_REQUIRED, *_OPTIONAL):
        value = raw.get(key.encode())
        if value is not None:
            meta[key] = value.decode("utf-8", "replace")
    missing = [k for k in _REQUIRED if k not in meta]
    if missing:
        raise _bad(path, f"metadata: a reports file must record {missing} (written by `ldpplan perturb`)")
    if meta["format"] != REPORTS_FORMAT:
        raise _bad(path, f"metadata.format: must be {REPORTS_FORMAT!r} (got {meta['format'][:40]!r})")
    if meta["format_version"].split(".")[0] != REPORTS_FORMAT_VERSION.split(".")[0]:
        raise _bad(path, f"metadata.format_version: this ldpplan reads reports format {REPORTS_FORMAT_VERSION} "
                         f"(got {meta['format_version'][:40]!r})")
    if meta["seeded"] not in ("true", "false"):
        raise _bad(path, f"metadata.seeded: must be 'true' or 'false' (got {meta['seeded'][:40]!r})")
    meta["seeded"] = meta["seeded"] == "true"
    if "seed" in meta:
        if not meta["seeded"] or not meta["seed"].isdigit():
            raise _bad(path, f"metadata.seed: must be a non-negative integer and only when seeded "
                             f"(got {meta['seed'][:40]!r})")
        meta["seed"] = int(meta["seed"])
    if "batch_id" in meta and not _BATCH_ID.fullmatch(meta["batch_id"]):
        raise _bad(path, f"metadata.batch_id: must be 32 lowercase hex digits (got {meta['batch_id'][:40]!r})")
    meta.setdefault("batch_id", None)
    return meta


def open_reports(path: str | os.PathLike) -> ReportsInfo:
    """Check a report file's footer, metadata and schema without decoding its columns.

    Raises
    ------
    InputDataError
        Missing file, not Parquet (truncated, corrupt, empty), metadata missing or malformed,
        a column outside the schema, no reports. The message names the file and the rule.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ._parquet_columns import check_schema, row_bytes  # deferred: pyarrow

    p = Path(path)
    if not p.is_file():
        raise _bad(p, "reports file must exist")
    if p.stat().st_size == 0:
        raise _bad(p, "reports file is empty (0 bytes; a reports file is Parquet written by `ldpplan perturb`)")
    try:
        md = pq.read_metadata(p)
        schema = md.schema.to_arrow_schema()
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise _bad(p, f"must be a Parquet reports file written by `ldpplan perturb` ({type(exc).__name__}: "
                      f"{str(exc)[:200]})") from None
    meta = _meta(p, schema.metadata)
    try:
        check_schema(schema, str(p))
    except ValueError as exc:
        raise InputDataError(str(exc)) from None
    width = row_bytes(schema)
    for i in range(md.num_row_groups):
        size = md.row_group(i).num_rows * width
        if not 0 <= size <= MAX_ROW_GROUP_BYTES:
            raise _bad(p, f"row group {i}: must decode to at most {MAX_ROW_GROUP_BYTES} bytes (got {size} = "
                          f"{md.row_group(i).num_rows} rows x {width} bytes)")
    if md.num_rows < 1:
        raise _bad(p, "a reports file must hold at least one report (got 0 rows)")
    meta["n"] = int(md.num_rows)
    return ReportsInfo(path=str(p), meta=meta, num_rows=int(md.num_rows), num_row_groups=int(md.num_row_groups))


def iter_report_batches(path: str | os.PathLike, batch_rows: int) -> Iterator[dict[str, np.ndarray]]:
    """Yield the file's report columns at most ``batch_rows`` rows (and about 8 MiB) at a time.

    Raises
    ------
    InputDataError
        A corrupt page or a column outside the schema (the message names the file).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ._parquet_columns import batch_rows_for, check_schema, table_to_arrays  # deferred: pyarrow

    try:
        with pq.ParquetFile(path) as pf:
            check_schema(pf.schema_arrow, str(path))
            for batch in pf.iter_batches(batch_size=batch_rows_for(pf.schema_arrow, batch_rows)):
                yield table_to_arrays(batch, str(path))
    except (pa.ArrowException, OSError) as exc:
        raise _bad(path, f"unreadable Parquet data ({type(exc).__name__}: {str(exc)[:200]})") from None
    except ValueError as exc:
        raise InputDataError(str(exc)) from None


def file_digest(path: str | os.PathLike, chunk_bytes: int = 1 << 16) -> str:
    """``"sha256:"`` and the hex SHA-256 of the file's bytes, read ``chunk_bytes`` at a time."""
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(chunk_bytes), b""):
                h.update(block)
    except OSError as exc:
        raise _bad(path, f"unreadable ({type(exc).__name__}: {str(exc)[:200]})") from None
    return "sha256:" + h.hexdigest()


def file_batch(info: ReportsInfo):
    """The :class:`ldpplan.mechanisms.Batch` of a checked reports file: its ``batch_id`` (None for
    files written before batch ids), the digest of its bytes, its rows, its path as given."""
    return Batch(batch_id=info.meta["batch_id"], digest=file_digest(info.path), rows=info.num_rows, source=info.path)


def read_reports(path: str | os.PathLike) -> ReportsFile:
    """Read a whole report file written by :class:`ReportsWriter` (checked as :func:`open_reports`)."""
    info = open_reports(path)
    parts = list(iter_report_batches(path, ROW_GROUP_ROWS))
    arrays = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    return ReportsFile(meta=info.meta, arrays=arrays)

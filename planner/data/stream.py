"""Streamed reading of users' input files (CSV or Parquet), a bounded batch of rows at a time.

The one low-level reader behind every family's chunked input hook
(:meth:`ldpplan.planner.families.Family.iter_inputs`): pyarrow's streaming CSV reader
(``pyarrow.csv.open_csv``) or ``pyarrow.parquet.ParquetFile.iter_batches``, every column
read as text (cells stripped of surrounding spaces), so that peak memory depends on the batch
size, not on the number of rows, and progress is known in bytes read.

CSV rules (as :func:`ldpplan.planner.data.read_csv_table`): UTF-8 (a BOM is allowed), a header,
every row as long as the header. A wholly blank line is not a row in a file of several columns;
in a one-column file it is a row whose cell is empty (what pandas writes for NaN).
Line numbers in messages are exact: the rare error path re-reads the file to find them.
"""
from __future__ import annotations

import csv
import dataclasses
import os
from pathlib import Path
from typing import Iterator

import numpy as np

from ..errors import InputDataError

__all__ = ["RawBatch", "TableStream", "open_table_stream", "string_hashes", "DEFAULT_CHUNK_ROWS"]

#: Rows per batch of the chunked readers (a batch of short text cells is a few MB).
DEFAULT_CHUNK_ROWS = 1 << 18
_BLOCK_BYTES = 1 << 20


@dataclasses.dataclass(frozen=True)
class RawBatch:
    """Rows ``start .. start + rows - 1`` (0-based data rows) of an input file.

    Attributes
    ----------
    columns : dict of str to pyarrow.StringArray
        The requested columns, cells stripped; a missing optional column is absent.
    start : int
        Index of the batch's first data row in the file.
    bytes_read : int
        Bytes of the file consumed so far: blocks parsed, interpolated by rows inside a block
        (Parquet: in proportion to the rows read); the file's size after the last batch.
    """

    columns: dict
    start: int
    bytes_read: int

    @property
    def rows(self) -> int:
        """Number of rows in the batch."""
        return len(next(iter(self.columns.values()))) if self.columns else 0


def _is_parquet(path: Path) -> bool:
    with path.open("rb") as fh:
        return fh.read(4) == b"PAR1"


class TableStream:
    """An input file opened for streaming (see :func:`open_table_stream`).

    Attributes
    ----------
    path : pathlib.Path
    header : list of str
    total_bytes : int
        Size of the file.
    kind : {"csv", "parquet"}
    """

    def __init__(self, path: Path, header: list[str], kind: str, columns: list[str], chunk_rows: int):
        self.path, self.header, self.kind = path, header, kind
        self.total_bytes = path.stat().st_size
        self._columns, self._chunk_rows = columns, max(1, int(chunk_rows))

    def where(self, row: int) -> str:
        """``"FILE: line N"`` (CSV) or ``"FILE: row N"`` (Parquet) of the 0-based data row ``row``."""
        return f"{self.path}: {self.lines([row])[0]}"

    def lines(self, rows) -> list[str]:
        """``"line N"`` / ``"row N"`` of sorted 0-based data rows (re-reads a CSV; only on error paths)."""
        rows = [int(r) for r in rows]
        if self.kind == "parquet":
            return [f"row {r + 1}" for r in rows]
        out, want, single = [], iter(rows), len(self.header) == 1
        target = next(want, None)
        with self.path.open(newline="", encoding="utf-8-sig", errors="replace") as fh:
            reader = csv.reader(fh)
            next(reader, None)
            index = 0
            for record in reader:
                if target is None:
                    break
                if not record and not single:
                    continue
                while target is not None and target == index:
                    out.append(f"line {reader.line_num}")
                    target = next(want, None)
                index += 1
        return out + [f"row {r + 1}" for r in rows[len(out):]]

    def __iter__(self) -> Iterator[RawBatch]:
        return self._parquet() if self.kind == "parquet" else self._csv()

    def _clean(self, batch) -> dict:
        import pyarrow as pa  # deferred: pyarrow
        import pyarrow.compute as pc

        out = {}
        for name in self._columns:
            if name not in batch.schema.names:
                continue
            col = batch.column(batch.schema.get_field_index(name))
            if not pa.types.is_string(col.type):
                col = pc.cast(col, pa.string())
            out[name] = pc.utf8_trim_whitespace(pc.fill_null(col, ""))
        return out

    def _csv(self) -> Iterator[RawBatch]:
        import pyarrow as pa  # deferred: pyarrow
        import pyarrow.csv as pacsv

        ragged: list[str] = []

        def invalid(row) -> str:  # pyarrow swallows exceptions raised here: keep the message, stop the read
            ragged.append(f"{self.path}: line {row.number}: must have {row.expected_columns} fields like the "
                          f"header (got {row.actual_columns})")
            return "error"

        wanted = [c for c in self._columns if c in self.header]
        read = pacsv.ReadOptions(column_names=self.header, skip_rows=1, block_size=_BLOCK_BYTES, use_threads=False)
        parse = pacsv.ParseOptions(ignore_empty_lines=len(self.header) > 1, invalid_row_handler=invalid)
        convert = pacsv.ConvertOptions(column_types={c: pa.string() for c in self.header}, include_columns=wanted,
                                       strings_can_be_null=False, quoted_strings_can_be_null=False)
        start = done = 0
        with pa.OSFile(str(self.path), "rb") as fh:
            try:
                reader = pacsv.open_csv(fh, read_options=read, parse_options=parse, convert_options=convert)
                for batch in reader:  # one batch per block; pyarrow reads ahead, so fh.tell() runs early
                    end = min(done + _BLOCK_BYTES, self.total_bytes)
                    for offset in range(0, batch.num_rows, self._chunk_rows):
                        part = batch.slice(offset, self._chunk_rows)
                        at = done + (end - done) * (offset + part.num_rows) // max(1, batch.num_rows)
                        yield RawBatch(self._clean(part), start, at)
                        start += part.num_rows
                    done = end
            except pa.ArrowInvalid as exc:
                if ragged:
                    raise InputDataError(ragged[0]) from None
                raise InputDataError(f"{self.path}: must be valid UTF-8 CSV ({str(exc).splitlines()[0][:200]})") \
                    from None

    def _parquet(self) -> Iterator[RawBatch]:
        import pyarrow.parquet as pq  # deferred: pyarrow

        pf = pq.ParquetFile(self.path)
        total = max(1, pf.metadata.num_rows)
        start = 0
        wanted = [c for c in self._columns if c in self.header]
        for batch in pf.iter_batches(batch_size=self._chunk_rows, columns=wanted):
            yield RawBatch(self._clean(batch), start, self.total_bytes * (start + batch.num_rows) // total)
            start += batch.num_rows


def _csv_header(path: Path) -> list[str]:
    try:
        with path.open(newline="", encoding="utf-8-sig") as fh:
            return [h.strip() for h in next(csv.reader(fh), [])]
    except UnicodeDecodeError as exc:
        raise InputDataError(f"{path}: must be UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except csv.Error as exc:
        raise InputDataError(f"{path}: must be valid CSV ({exc})") from None


def open_table_stream(path: str | os.PathLike, required: tuple[str, ...] | list[str],
                      optional: tuple[str, ...] | list[str] = (), *, chunk_rows: int = DEFAULT_CHUNK_ROWS,
                      field: str = "--input") -> TableStream:
    """Open a users' input file (CSV, or Parquet recognised by its magic bytes) for streaming.

    Parameters
    ----------
    path : path-like
    required : sequence of str
        Columns the header must hold.
    optional : sequence of str
        Columns read when present.
    chunk_rows : int
        Most rows per :class:`RawBatch`.
    field : str
        The option the file came from, named in errors.

    Returns
    -------
    TableStream
        Iterate it for :class:`RawBatch` objects (one pass; iterate again to re-read).

    Raises
    ------
    InputDataError
        Missing or empty file, missing columns (at open); invalid CSV or UTF-8, ragged rows
        (while iterating): one line naming the file, the line and the rule.
    """
    p = Path(path)
    if not p.is_file():
        raise InputDataError(f"{field}: file must exist (got {str(p)!r})")
    if _is_parquet(p):
        import pyarrow.parquet as pq  # deferred: pyarrow

        try:
            header = list(pq.ParquetFile(p).schema_arrow.names)
        except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a corrupt file
            raise InputDataError(f"{p}: must be a readable Parquet file ({str(exc)[:200]})") from None
        kind = "parquet"
    else:
        header, kind = _csv_header(p), "csv"
    if not header:
        raise InputDataError(f"{p}: file is empty (a header with {list(required)} is required)")
    missing = [c for c in required if c not in header]
    if missing:
        raise InputDataError(f"{p}: line 1: columns {missing} are required (header is {header[:20]})")
    return TableStream(p, header, kind, list(dict.fromkeys([*required, *optional])), chunk_rows)


def string_hashes(column, *, piece: int = 1 << 15) -> np.ndarray:
    """64-bit polynomial hashes of a pyarrow string array's values (equal strings, equal hashes).

    Used to detect a repeated user in 8 bytes per user (callers confirm a hit on the strings) and
    to route a user's rows to one bucket. Computed ``piece`` strings at a time (bounded temporaries).
    """
    import pyarrow as pa  # deferred: pyarrow

    col = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if not pa.types.is_string(col.type):
        col = col.cast(pa.string())
    n = len(col)
    out = np.empty(n, dtype=np.uint64)
    if n == 0:
        return out
    offsets_all = np.frombuffer(col.buffers()[1], dtype=np.int32, count=n + 1, offset=col.offset * 4)
    raw = np.frombuffer(col.buffers()[2], dtype=np.uint8) if col.buffers()[2] is not None else np.zeros(0, np.uint8)
    for s in range(0, n, piece):
        offsets = offsets_all[s:min(s + piece, n) + 1].astype(np.int64)
        lengths = np.diff(offsets)
        data = raw[offsets[0]:offsets[-1]].astype(np.uint64)
        pos = np.arange(data.size, dtype=np.int64) - np.repeat(offsets[:-1] - offsets[0], lengths)
        with np.errstate(over="ignore"):
            powers = np.cumprod(np.full(int(lengths.max(initial=0)) + 1, 0x100000001B3, dtype=np.uint64))
            terms = (data + np.uint64(1)) * powers[pos]
            sums = np.zeros(lengths.size, dtype=np.uint64)
            nonempty = lengths > 0
            if data.size:
                sums[nonempty] = np.add.reduceat(terms, (offsets[:-1] - offsets[0])[nonempty])
            out[s:s + lengths.size] = sums * np.uint64(0x9E3779B97F4A7C15) + lengths.astype(np.uint64)
    return out

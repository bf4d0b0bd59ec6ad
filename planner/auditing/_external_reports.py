"""What an external runtime program prints, checked against the plan's report format.

The format is read from the plan's own runtime through its public API
(:func:`ldpplan.mechanisms.load`): the columns, integer dtypes and row shapes of the ``Reports`` its
``perturb`` returns (:meth:`ReportFormat.of`), and the output domain its ``aggregate`` enforces on
the server (ranges, padding bits, PCKV's bit planes; :func:`check_domain`). A report line is
refused, naming the line and the column, when it is not one JSON object, repeats or misses a
column or adds one, holds anything but a JSON integer where the column is 1-D (a float such as
``2.0`` or ``2.5``, a string, a boolean, an array, an object, ``NaN``), anything but an array of
exactly ``w`` such integers where it is 2-D, or an integer outside the column's dtype (e.g. a byte
``>= 256``) or outside the output domain (``y = -1``, ``y >= k``). The output is read as a stream,
one line at a time, with a bound on each line's bytes and on the file's.
"""
from __future__ import annotations

import dataclasses
import itertools
import json
import re
from typing import Any, BinaryIO

import numpy as np

from ..errors import InputDataError
from ...mechanisms import Reports

__all__ = ["ReportColumn", "ReportFormat", "decode_reports", "check_domain"]


@dataclasses.dataclass(frozen=True)
class ReportColumn:
    """One report column.

    Attributes
    ----------
    name : str
    dtype : str
        Its integer numpy dtype (``"int64"``, ``"int8"``, ``"uint8"``, ...).
    width : int
        0 for a 1-D column (one JSON integer per report); ``w >= 1`` for a 2-D column of shape
        ``(n, w)`` (a JSON array of ``w`` integers per report, e.g. packed bits as bytes).
    low, high : int
        The dtype's smallest and largest integer (derived).
    """

    name: str
    dtype: str
    width: int = 0
    low: int = dataclasses.field(init=False)
    high: int = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        info = np.iinfo(np.dtype(self.dtype))
        object.__setattr__(self, "low", int(info.min))
        object.__setattr__(self, "high", int(info.max))

    def describe(self) -> str:
        """What a report's value must be, in words."""
        item = "JSON integer" if self.dtype == "int64" else f"JSON integer in [{self.low}, {self.high}]"
        return f"an array of {self.width} {item}s ({self.dtype})" if self.width else f"a {item} ({self.dtype})"

    def accepts(self, value: Any) -> bool:
        """One report's value is of this column (exact integers of the dtype, the row's shape)."""
        if self.width:
            return (type(value) is list and len(value) == self.width
                    and all(type(v) is int and self.low <= v <= self.high for v in value))
        return type(value) is int and self.low <= value <= self.high

    def array(self, values: list[Any]) -> np.ndarray | None:
        """The values of a batch of reports as an array of the dtype, or ``None`` when one of them
        is not :meth:`accepts` (checked for the whole batch at once)."""
        flat = itertools.chain.from_iterable(values) if self.width else values
        if self.width and (set(map(type, values)) != {list} or set(map(len, values)) != {self.width}):
            return None
        if values and set(map(type, flat)) != {int}:  # a bool, float, str, list, dict or None
            return None
        try:
            arr = np.array(values, dtype=np.int64 if self.dtype != "uint64" else np.uint64)
        except (OverflowError, ValueError):
            return None
        if arr.size and (int(arr.min()) < self.low or int(arr.max()) > self.high):
            return None
        return arr.astype(self.dtype, copy=False)


@dataclasses.dataclass(frozen=True)
class ReportFormat:
    """The report columns of a plan's runtime.

    Attributes
    ----------
    mechanism : str
    columns : tuple of ReportColumn
        Sorted by name.
    """

    mechanism: str
    columns: tuple[ReportColumn, ...]

    @classmethod
    def of(cls, reports: Any) -> "ReportFormat":
        """The format of a ``Reports`` object (the reference runtime's own reports)."""
        cols = []
        for name, value in sorted(reports.columns.items()):
            arr = np.asarray(value)
            if arr.dtype.kind not in "iu" or arr.ndim not in (1, 2):
                raise ValueError(f"reports.{name}: the runtime's column is not 1-D or 2-D integers ({arr.dtype})")
            cols.append(ReportColumn(str(name), arr.dtype.name, int(arr.shape[1]) if arr.ndim == 2 else 0))
        return cls(str(reports.mechanism), tuple(cols))

    @property
    def names(self) -> tuple[str, ...]:
        """The column names."""
        return tuple(c.name for c in self.columns)

    @property
    def line_bytes(self) -> int:
        """The longest report line accepted: every value at its longest, with room for spaces."""
        return 256 + sum(len(c.name) + 48 + 8 * c.width for c in self.columns)


def _refuse(line: int, message: str) -> InputDataError:
    return InputDataError(f"runtime-cmd: report line {line}: {message}")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        keys = [k for k, _ in pairs]
        twice = next(k for i, k in enumerate(keys) if k in keys[:i])  # the first key seen before
        raise ValueError(f"column {twice!r} appears twice")
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


_DECODER = json.JSONDecoder(object_pairs_hook=_no_duplicates, parse_constant=_no_constant)


def _parse(text: str, line: int) -> dict[str, Any]:
    try:
        obj = _DECODER.decode(text)
    except ValueError as exc:  # JSONDecodeError, a duplicate column, NaN/Infinity, an integer of > 4300 digits
        raise _refuse(line, f"not one JSON object of report columns ({str(exc)[:120]})") from None
    if not isinstance(obj, dict):
        raise _refuse(line, f"must be a JSON object of report columns (got {type(obj).__name__})")
    return obj


def _shown(value: Any) -> str:
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_row(fmt: ReportFormat, obj: dict[str, Any], line: int) -> None:
    """Refuse one report that breaks the format, naming its line, the column and the value."""
    extra = sorted(set(obj) - set(fmt.names))
    if extra:
        raise _refuse(line, f"column {extra[0]!r} is not a report column of {fmt.mechanism} "
                            f"(its columns: {', '.join(fmt.names)})")
    for col in fmt.columns:
        if col.name not in obj:
            raise _refuse(line, f"column {col.name!r} is missing (the {fmt.mechanism} report columns: "
                                f"{', '.join(fmt.names)})")
        if not col.accepts(obj[col.name]):
            raise _refuse(line, f"column {col.name!r} must be {col.describe()} (got {_shown(obj[col.name])})")


class _Batch:
    """Up to :data:`BATCH` parsed reports, checked and stored together."""

    def __init__(self, fmt: ReportFormat) -> None:
        self.fmt = fmt
        self.rows: list[dict[str, Any]] = []
        self.lines: list[int] = []
        self.names = set(fmt.names)

    def add(self, obj: dict[str, Any], line: int) -> None:
        if obj.keys() != self.names:
            _check_row(self.fmt, obj, line)
        self.rows.append(obj)
        self.lines.append(line)

    def store(self, out: dict[str, np.ndarray], start: int) -> int:
        """Write the batch's columns at row ``start``; the rows written."""
        count = len(self.rows)
        if not count:
            return 0
        for col in self.fmt.columns:
            arr = col.array([r[col.name] for r in self.rows])
            if arr is None:  # find the first report that breaks the format (per report, slow)
                for obj, line in zip(self.rows, self.lines):
                    _check_row(self.fmt, obj, line)
                raise _refuse(self.lines[0], f"column {col.name!r} must be {col.describe()}")  # pragma: no cover
            out[col.name][start:start + count] = arr
        self.rows, self.lines = [], []
        return count


#: Reports parsed before their columns are checked and stored together.
BATCH = 4096


def decode_reports(stream: BinaryIO, n: int, fmt: ReportFormat, *, total_bytes: int | None = None,
                   ) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Read ``n`` report lines from a binary stream, one line at a time, checking each one.

    Parameters
    ----------
    stream : binary file object
        JSON lines (UTF-8), one report per line in input order; blank lines are skipped.
    n : int
        Reports expected.
    fmt : ReportFormat
        The plan's report columns.
    total_bytes : int, optional
        Bytes the stream may hold (default ``n`` lines of :attr:`ReportFormat.line_bytes` plus 64 KiB).

    Returns
    -------
    columns : dict of str to ndarray
        Each column with its dtype, shape ``(n,)`` or ``(n, w)``.
    lines : ndarray of int64, shape (n,)
        The 1-based line number of each report (for messages).

    Raises
    ------
    InputDataError
        A line over :attr:`ReportFormat.line_bytes`, a stream over ``total_bytes``, not UTF-8, a line
        that breaks the format (named by line and column, with its value), more or fewer than ``n``
        reports.
    """
    limit = fmt.line_bytes
    total_limit = n * limit + (1 << 16) if total_bytes is None else int(total_bytes)
    out = {c.name: np.zeros((n, c.width) if c.width else (n,), dtype=c.dtype) for c in fmt.columns}
    lines = np.zeros(n, dtype=np.int64)
    batch = _Batch(fmt)
    row = line = total = 0
    while True:
        raw = stream.readline(limit + 1)
        if not raw:
            break
        line, total = line + 1, total + len(raw)
        if len(raw) > limit:
            raise _refuse(line, f"longer than {limit} bytes, the longest a {fmt.mechanism} report can be")
        if total > total_limit:
            raise InputDataError(f"runtime-cmd: OUTPUT holds more than {total_limit} bytes ({n} reports expected)")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise _refuse(line, "not UTF-8 text") from None
        if not text.strip():
            continue
        if row + len(batch.rows) >= n:
            raise _refuse(line, f"more reports than the {n} inputs (one JSON line per input)")
        lines[row + len(batch.rows)] = line
        batch.add(_parse(text, line), line)
        if len(batch.rows) == BATCH:
            row += batch.store(out, row)
    row += batch.store(out, row)
    if row != n:
        raise InputDataError(f"runtime-cmd: wrote {row} reports for {n} inputs (one JSON line per input)")
    return out, lines


_COLUMN = re.compile(r"reports\.(\w+)")


def check_domain(reference: Any, columns: dict[str, np.ndarray], lines: np.ndarray) -> None:
    """Check the reports against the output domain the plan's runtime enforces in ``aggregate``.

    On a refusal, the first offending report is found by bisection (the runtime's checks are per
    report) and named with its line, its column and its value.

    Raises
    ------
    InputDataError
        ``runtime-cmd: report line L, column C = V: <the runtime's rule>``.
    """
    mech = str(reference.mechanism)

    def failure(lo: int, hi: int) -> str | None:
        try:
            reference.aggregate(Reports(mech, {k: v[lo:hi] for k, v in columns.items()}))
        except ValueError as exc:
            return str(exc)
        return None

    n = int(lines.size)
    message = failure(0, n) if n else None
    if message is None:
        return
    lo, hi = 0, n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if failure(lo, mid) is not None:
            hi = mid
        else:
            lo = mid
    message = failure(lo, lo + 1) or message
    found = _COLUMN.search(message)
    name = found.group(1) if found and found.group(1) in columns else None
    value = (f", column {name!r} = {_shown(np.asarray(columns[name][lo]).tolist())}" if name is not None
             else f" ({', '.join(f'{k} = {_shown(np.asarray(v[lo]).tolist())}' for k, v in sorted(columns.items()))})")
    raise InputDataError(f"runtime-cmd: report line {int(lines[lo])}{value}: outside the plan's output domain: "
                         f"{message}")

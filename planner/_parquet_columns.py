"""Report columns <-> Arrow, and the aggregation of one Parquet row group (worker side).

This module imports numpy, pyarrow and ``ldpplan.mechanisms`` only, nothing else of the
planner: :mod:`ldpplan.planner._dask_engine` ships its functions to Dask workers by value,
so a worker needs ``ldpplan.mechanisms`` and pyarrow, not cvxpy or scipy. Errors are
``ValueError`` naming the file and the column (the CLI maps them to exit 2).

Column mapping (``docs/REPORTS.md``): a 1-D integer column of ``Reports.to_arrays()`` is an
Arrow integer column of the same width; a 2-D column of shape ``(n, w)`` (e.g. packed bits,
uint8) is ``fixed_size_binary(w * itemsize)`` with field metadata ``ldpplan.dtype`` (numpy
dtype name, little-endian) and ``ldpplan.width`` (``w``).
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from .. import mechanisms
from ..mechanisms import Aggregate

__all__ = ["DTYPE_KEY", "WIDTH_KEY", "BATCH_BYTES", "arrays_to_table", "check_schema", "row_bytes", "batch_rows_for",
           "table_to_arrays", "aggregate_row_groups", "merge_aggregate_dicts"]

DTYPE_KEY = b"ldpplan.dtype"
WIDTH_KEY = b"ldpplan.width"
#: Most decoded bytes per batch (wide reports are decoded in fewer rows at a time).
BATCH_BYTES = 8 << 20
_INT_TYPES = {np.dtype(t).name: t for t in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                             "uint64")}


def _field_and_array(name: str, values: np.ndarray) -> tuple[pa.Field, pa.Array]:
    arr = np.ascontiguousarray(values)
    if arr.dtype.kind not in "iu" or arr.ndim not in (1, 2):
        raise ValueError(f"reports.{name}: a report column must be a 1-D or 2-D integer array "
                         f"(got dtype {arr.dtype}, shape {arr.shape})")
    arr = arr.astype(arr.dtype.newbyteorder("<"), copy=False)
    if arr.ndim == 1:
        return pa.field(name, pa.from_numpy_dtype(arr.dtype), nullable=False), pa.array(arr)
    width = int(arr.shape[1])
    row_bytes = width * arr.dtype.itemsize
    if row_bytes < 1:
        raise ValueError(f"reports.{name}: a 2-D report column needs at least one entry per row (got {arr.shape})")
    typ = pa.binary(row_bytes)
    data = pa.py_buffer(arr.tobytes()) if arr.size else pa.py_buffer(b"")
    array = pa.Array.from_buffers(typ, arr.shape[0], [None, data])
    meta = {DTYPE_KEY: arr.dtype.name.encode(), WIDTH_KEY: str(width).encode()}
    return pa.field(name, typ, nullable=False, metadata=meta), array


def arrays_to_table(arrays: Mapping[str, Any], metadata: Mapping[str, str] | None = None) -> pa.Table:
    """An Arrow table of report columns (``Reports.to_arrays()``), schema as in ``docs/REPORTS.md``.

    Raises
    ------
    ValueError
        A column that is not a 1-D or 2-D integer array.
    """
    fields, columns = [], []
    for name in sorted(arrays):
        field, array = _field_and_array(str(name), np.asarray(arrays[name]))
        fields.append(field)
        columns.append(array)
    schema = pa.schema(fields, metadata=dict(metadata) if metadata else None)
    return pa.Table.from_arrays(columns, schema=schema)


def check_schema(schema: pa.Schema, where: str) -> None:
    """Raise ValueError unless every field follows the mapping of the module docstring."""
    if len(schema) == 0:
        raise ValueError(f"{where}: a reports file must have at least one column")
    names = schema.names
    if len(set(names)) != len(names):
        raise ValueError(f"{where}: column names must be unique (got {names})")
    for field in schema:
        if pa.types.is_integer(field.type):
            continue
        if pa.types.is_fixed_size_binary(field.type):
            _binary_layout(field, where)
            continue
        raise ValueError(f"{where}: column {field.name!r} must be an integer or fixed_size_binary column "
                         f"(got {field.type})")


def row_bytes(schema: pa.Schema) -> int:
    """Decoded bytes of one report row under ``schema`` (after :func:`check_schema`)."""
    return sum(f.type.byte_width if pa.types.is_fixed_size_binary(f.type) else f.type.bit_width // 8
               for f in schema) or 1


def batch_rows_for(schema: pa.Schema, batch_rows: int) -> int:
    """Rows per decoded batch: at most ``batch_rows`` and about :data:`BATCH_BYTES` bytes."""
    return max(1, min(int(batch_rows), BATCH_BYTES // row_bytes(schema)))


def _binary_layout(field: pa.Field, where: str) -> tuple[np.dtype, int]:
    meta = field.metadata or {}
    name = meta.get(DTYPE_KEY, b"uint8").decode("ascii", "replace")
    if name not in _INT_TYPES:
        raise ValueError(f"{where}: column {field.name!r}: field metadata ldpplan.dtype must be one of "
                         f"{sorted(_INT_TYPES)} (got {name[:20]!r})")
    dtype = np.dtype(name).newbyteorder("<")
    default = field.type.byte_width // dtype.itemsize
    try:
        width = int(meta.get(WIDTH_KEY, str(default).encode()))
    except ValueError:
        raise ValueError(f"{where}: column {field.name!r}: field metadata ldpplan.width must be an integer") from None
    if width < 1 or width * dtype.itemsize != field.type.byte_width:
        raise ValueError(f"{where}: column {field.name!r}: ldpplan.width x itemsize must equal the binary width "
                         f"{field.type.byte_width} (got width {width}, dtype {name})")
    return dtype, width


def table_to_arrays(table: pa.Table | pa.RecordBatch, where: str) -> dict[str, np.ndarray]:
    """The report columns of an Arrow table or batch as numpy arrays (no nulls allowed).

    Raises
    ------
    ValueError
        Nulls, or a column outside the mapping; the message names ``where`` and the column.
    """
    check_schema(table.schema, where)
    out: dict[str, np.ndarray] = {}
    for field, column in zip(table.schema, table.columns):
        chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
        if any(c.null_count for c in chunks):
            raise ValueError(f"{where}: column {field.name!r} must not hold nulls")
        if pa.types.is_integer(field.type):
            parts = [c.to_numpy(zero_copy_only=False) for c in chunks]
            out[field.name] = np.concatenate(parts) if len(parts) != 1 else parts[0]
            continue
        dtype, width = _binary_layout(field, where)
        rows = []
        for c in chunks:
            data = c.buffers()[1]
            start = c.offset * field.type.byte_width
            raw = np.frombuffer(data, dtype=np.uint8, count=len(c) * field.type.byte_width, offset=start) \
                if len(c) else np.zeros(0, np.uint8)
            rows.append(raw.view(dtype).reshape(len(c), width))
        out[field.name] = (np.concatenate(rows) if len(rows) != 1 else rows[0]) if rows else \
            np.zeros((0, width), dtype)
    return out


def aggregate_row_groups(plan: Mapping[str, Any], path: str, row_groups: list[int],
                         batch_rows: int) -> tuple[dict[str, Any], int]:
    """Aggregate some row groups of a reports file with the numpy runtime (runs on a worker).

    Parameters
    ----------
    plan : mapping
        The verified plan (its fingerprint was checked against the file before).
    row_groups : list of int
        Row group indices of the file to read.
    batch_rows : int
        Most reports decoded at a time (also bounded by :data:`BATCH_BYTES`).

    Returns
    -------
    (dict, int)
        ``Aggregate.to_dict()`` of those reports and their number of rows.
    """
    mech = mechanisms.load(dict(plan))
    total = None
    rows = 0
    try:
        with pq.ParquetFile(path) as pf:
            check_schema(pf.schema_arrow, path)
            rows_per_batch = batch_rows_for(pf.schema_arrow, batch_rows)
            for batch in pf.iter_batches(batch_size=rows_per_batch, row_groups=list(row_groups)):
                arrays = table_to_arrays(batch, path)
                agg = mech.aggregate(mechanisms.Reports(plan["mechanism"], arrays))
                rows += batch.num_rows
                total = agg if total is None else total + agg
    except (pa.ArrowException, OSError) as exc:
        raise ValueError(f"{path}: unreadable Parquet data ({type(exc).__name__}: {str(exc)[:200]})") from None
    except ValueError as exc:
        raise ValueError(exc if str(exc).startswith(path) else f"{path}: {exc}") from None
    if total is None:
        raise ValueError(f"{path}: row groups {list(row_groups)} hold no reports")
    return total.to_dict(), rows


def merge_aggregate_dicts(*parts: tuple[dict[str, Any], int]) -> tuple[dict[str, Any], int]:
    """Merge ``(Aggregate.to_dict(), rows)`` pairs with ``+`` (integer counts: exact, order-free)."""
    total = Aggregate.from_dict(parts[0][0])
    rows = parts[0][1]
    for data, n in parts[1:]:
        total = total + Aggregate.from_dict(data)
        rows += n
    return total.to_dict(), rows

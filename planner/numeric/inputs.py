"""Users' true values for ``ldpplan perturb`` / ``simulate --data`` of a numeric plan (streamed).

Built on :class:`ldpplan.planner.data.chunked.InputStream`: a chunk of rows at a time (bounded memory),
a ``user`` column checked for repeats. **Empty cells** (a missing value, e.g. a cancelled flight's
delay) are refused with their count and first lines, or dropped and counted with ``skip_empty``
(``--skip-empty``), as empty items are in the other families. Values outside the plan's range are
not an error: the runtime clips them (the plan's ``params.clipping``).
"""
from __future__ import annotations

import os
from typing import Any, Mapping

import numpy as np

from ..data import DEFAULT_CHUNK_ROWS, concat_chunks, open_table_stream
from ..data.chunked import InputStream, _check_unique_users
from ..data.stream import string_hashes
from ..errors import InputDataError

__all__ = ["INPUT_DOC", "read_inputs", "iter_inputs"]

INPUT_DOC = ("CSV (or Parquet) with a header and a numeric column 'value' (or, when the file has none, 'item', "
             "the single-input column of the other families; no 'key' column), one row per user; values outside the plan's "
             "[low, high] are clipped; empty cells are refused unless --skip-empty.")


def _column(path: str | os.PathLike) -> str:
    """``value`` if the header has it, else ``item``; a ``key`` column (key-value pairs: PCKV's input) is refused."""
    header = list(open_table_stream(path, []).header)
    if "key" in header:
        raise InputDataError(f"{path}: column 'key': a numeric plan reads one value per user (key-value pairs "
                             "are the pckv family's input)")
    return "value" if "value" in header else "item"


def _floats(table, start: int, col, column: str) -> np.ndarray:
    """Float64 values of a batch's text cells, NaN where empty (InputDataError naming the line otherwise)."""
    cells = col.to_numpy(zero_copy_only=False).astype(str)
    out = np.full(cells.size, np.nan)
    for i, cell in enumerate(cells):
        if cell == "":
            continue
        try:
            value = float(cell)
        except ValueError:
            value = float("nan")
        if not np.isfinite(value):
            line = table.lines([start + i])[0]
            raise InputDataError(f"{table.path}: {line}: column {column!r} must be a finite number (got {cell!r:.40})")
        out[i] = value
    return out


def iter_inputs(plan: Mapping[str, Any], path: str | os.PathLike, *, skip_empty: bool = False,
                chunk_rows: int | None = None) -> InputStream:
    """The users' values streamed: an ``InputStream`` of float64 chunks (shape (rows,))."""
    column = _column(path)
    table = open_table_stream(path, [column], ("user",),
                              chunk_rows=DEFAULT_CHUNK_ROWS if chunk_rows is None else chunk_rows)

    def produce(stream: InputStream):
        hashes = []
        for batch in table:
            stream.note_batch(batch)
            values = _floats(table, batch.start, batch.columns[column], column)
            empty = np.isnan(values)
            if empty.any():
                stream.note_empty(batch.start + np.nonzero(empty)[0])
            if "user" in batch.columns:
                hashes.append(string_hashes(batch.columns["user"])[~empty])
            if (~empty).any():
                yield values[~empty]
        if hashes:
            _check_unique_users(table, np.concatenate(hashes), column)

    return InputStream(table, produce, skip_empty=skip_empty, column=column)


def read_inputs(plan: Mapping[str, Any], path: str | os.PathLike) -> np.ndarray:
    """Users' values (float64, shape (n,)) from a file (:data:`INPUT_DOC`).

    Raises
    ------
    InputDataError
        Missing file or column, a cell that is not a number (naming the line), empty cells.
    """
    return np.asarray(concat_chunks(list(iter_inputs(plan, path))), dtype=np.float64)

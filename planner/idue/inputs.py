"""Users' input files of IDUE / IDUE-PS plans (``ldpplan perturb --input``)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from ..data import concat_chunks, DEFAULT_CHUNK_ROWS, item_set_stream, item_stream

__all__ = ["INPUT_DOC", "read_inputs", "iter_inputs"]

INPUT_DOC = ("IDUE: a CSV with a column 'item', one row per user, holding a label of the plan's domain.labels "
             "(or a 0-based index when domain.labels is null). IDUE-PS: rows 'user,item', one row per item a "
             "user holds (repeated rows count once; a user with no row is not a user). MovieLens ratings "
             "('userId,movieId') are read as item sets as they are; `simulate` of an IDUE plan on them takes one "
             "report per rating (the paper's Sec. VII setting).")


def read_inputs(plan: Mapping[str, Any], path: str | Path):
    """Read users' true inputs for ``perturb``.

    Returns
    -------
    ndarray of int64, shape (n,)
        IDUE: item indices.
    (indptr, indices) : tuple of ndarray of int64
        IDUE-PS: CSR item sets.

    Raises
    ------
    InputDataError
        Missing file or column, an item outside the plan's domain (line named).
    """
    return concat_chunks(list(iter_inputs(plan, path)))


def iter_inputs(plan: Mapping[str, Any], path: str | Path, *, skip_empty: bool = False,
                chunk_rows: int | None = None):
    """Users' true inputs streamed (CSV or Parquet): an ``InputStream`` of int64 item-index chunks
    (IDUE) or CSR ``(indptr, indices)`` chunks (IDUE-PS), see :data:`INPUT_DOC`.

    Raises
    ------
    InputDataError
        As :func:`read_inputs`; rows with an empty item unless ``skip_empty``.
    """
    labels, size = plan["domain"]["labels"], int(plan["domain"]["size"])
    rows = DEFAULT_CHUNK_ROWS if chunk_rows is None else chunk_rows
    if plan["mechanism"] == "idue-ps":
        return item_set_stream(path, labels, size, skip_empty=skip_empty, chunk_rows=rows)
    return item_stream(path, labels, size, skip_empty=skip_empty, chunk_rows=rows)

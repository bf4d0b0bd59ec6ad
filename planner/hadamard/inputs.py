"""Users' true inputs for ``ldpplan perturb`` / ``simulate --data`` of a Hadamard-response plan."""
from __future__ import annotations

import os
from typing import Any, Mapping

from ..data import concat_chunks, DEFAULT_CHUNK_ROWS, item_stream

__all__ = ["INPUT_DOC", "read_inputs", "iter_inputs"]

INPUT_DOC = ("CSV (or Parquet) with a header and a column 'item', one row per user: a label of the plan's "
             "domain.labels, or a 0-based index in [0, domain.size) when domain.labels is null.")


def read_inputs(plan: Mapping[str, Any], path: str | os.PathLike):
    """Users' items (int64 indices, shape (n,)) from a file with a column ``item`` (:data:`INPUT_DOC`).

    Raises
    ------
    InputDataError
        Missing file or column, a value that is not a label or index (naming the line and value).
    """
    return concat_chunks(list(iter_inputs(plan, path)))


def iter_inputs(plan: Mapping[str, Any], path: str | os.PathLike, *, skip_empty: bool = False,
                chunk_rows: int | None = None):
    """The users' items streamed: an ``InputStream`` of int64 index chunks (empty items refused unless
    ``skip_empty``)."""
    return item_stream(path, plan["domain"]["labels"], int(plan["domain"]["size"]), skip_empty=skip_empty,
                       chunk_rows=DEFAULT_CHUNK_ROWS if chunk_rows is None else chunk_rows)

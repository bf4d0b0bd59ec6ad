"""Users' true inputs for ``ldpplan perturb`` of a ULDP plan (uRR, uRAP, PUM)."""
from __future__ import annotations

import os
from typing import Any, Mapping

import numpy as np

from ..errors import InputDataError
from ..data import concat_chunks, DEFAULT_CHUNK_ROWS, item_stream

__all__ = ["INPUT_DOC", "read_inputs", "iter_inputs"]

#: The CSV columns ``ldpplan perturb --input`` reads (``ldpplan options``, the family protocol's ``input_doc``).
INPUT_DOC = ("CSV with a header and column `item`: a label of the plan's domain.labels, or a 0-based index "
             "when labels is null (one row per user). PUM plans also read an optional column `tag`: the name "
             "of one of params.tags when the item is one of the user's own private items under that tag "
             "(her pre-processor, eq. 19), empty otherwise.")


def read_inputs(plan: Mapping[str, Any], path: str | os.PathLike):
    """Read the users' items: a CSV column ``item`` (a label of ``domain.labels``, or a 0-based
    index when the plan's labels are null), one row per user. A PUM plan also reads an optional
    column ``tag``: the name of one of ``params.tags`` when the item is one of the user's own
    private items under that semantic tag (PUM, eq. 19), empty otherwise.

    Returns
    -------
    ndarray of int64, shape (n,), or dict
        Item indices; for a PUM ``{"item": (n,) int64, "tag": (n,) int64 (-1: none)}``.

    Raises
    ------
    InputDataError
        Missing file or column, a value that is not a label/index/tag (naming the line and value).

    References
    ----------
    Murakami & Kawamoto, USENIX Security 2019, Sec. 5 (PUM).
    """
    return concat_chunks(list(iter_inputs(plan, path)))


def iter_inputs(plan: Mapping[str, Any], path: str | os.PathLike, *, skip_empty: bool = False,
                chunk_rows: int | None = None):
    """The users' items streamed (CSV or Parquet, the columns of :func:`read_inputs`): an
    ``InputStream`` of int64 index chunks, or for a PUM plan ``{"item", "tag"}`` chunks.

    Raises
    ------
    InputDataError
        As :func:`read_inputs`; rows with an empty item unless ``skip_empty``.
    """
    labels, size = plan["domain"]["labels"], int(plan["domain"]["size"])
    rows = DEFAULT_CHUNK_ROWS if chunk_rows is None else chunk_rows
    if plan.get("mechanism") != "pum":
        return item_stream(path, labels, size, skip_empty=skip_empty, chunk_rows=rows)
    tags = [str(t) for t in plan["params"].get("tags", [])]

    def tag_indices(chunk: dict) -> dict:
        tag_idx = np.full(chunk["item"].shape[0], -1, dtype=np.int64)
        for t in np.unique(chunk["tag"]):
            if t and t not in tags:
                raise InputDataError(f"{path}: tag must be empty or one of {tags} (got {str(t)[:40]!r})")
            if t:
                tag_idx[chunk["tag"] == t] = tags.index(t)
        return {"item": chunk["item"], "tag": tag_idx}

    return item_stream(path, labels, size, extra=("tag",), skip_empty=skip_empty, chunk_rows=rows).map(tag_indices)

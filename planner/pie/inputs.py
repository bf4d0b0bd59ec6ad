"""Users' true inputs of a PIE plan (k-ary RR or GLH) for ``ldpplan perturb`` and ``simulate --data``."""
from __future__ import annotations

from typing import Any, Mapping

from ..data import concat_chunks, DEFAULT_CHUNK_ROWS, item_stream

__all__ = ["INPUT_DOC", "read_inputs", "iter_inputs"]

#: The CSV columns ``ldpplan perturb --input`` reads (``ldpplan options``, the family protocol's ``input_doc``).
INPUT_DOC = ("CSV with a header and a column 'item', one row per user: a label of the plan's domain.labels, "
             "or a 0-based index in [0, domain.size) when domain.labels is null.")


def read_inputs(plan: Mapping[str, Any], path):
    """Users' items (int64 indices, shape (n,)) from a CSV with a column ``item``, one row per user
    (:func:`ldpplan.planner.data.read_item_column`)."""
    return concat_chunks(list(iter_inputs(plan, path)))


def iter_inputs(plan: Mapping[str, Any], path, *, skip_empty: bool = False, chunk_rows: int | None = None):
    """Users' items streamed from a CSV or Parquet file with a column ``item``: an ``InputStream`` of
    int64 index chunks (:func:`ldpplan.planner.data.item_stream`; empty items refused unless ``skip_empty``)."""
    return item_stream(path, plan["domain"]["labels"], int(plan["domain"]["size"]), skip_empty=skip_empty,
                       chunk_rows=DEFAULT_CHUNK_ROWS if chunk_rows is None else chunk_rows)

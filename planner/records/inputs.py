"""Users' true records for ``ldpplan perturb`` / ``simulate --data`` of a record plan (streamed)."""
from __future__ import annotations

import os
from typing import Any, Mapping

import numpy as np

from ..data import DEFAULT_CHUNK_ROWS, concat_chunks
from ..data.chunked import InputStream, map_items
from ..data.stream import open_table_stream

__all__ = ["INPUT_DOC", "read_inputs", "iter_inputs"]

INPUT_DOC = ("CSV (or Parquet) with a header and one column per attribute, named as the plan's attributes "
             "(params.names), one row per user: each cell a label of that attribute's domain, or a 0-based index "
             "when the attribute's domain is a count.")


def _attribute_domains(plan: Mapping[str, Any]) -> list[tuple[str, int, list[str] | None]]:
    """``(name, k, labels or None)`` per attribute, from the plan's concatenated ``name=value`` labels and spec."""
    p, labels, out, start = plan["params"], plan["domain"]["labels"], [], 0
    for j, (name, k) in enumerate(zip(p["names"], p["domain_sizes"])):
        values = [x[len(name) + 1:] for x in labels[start:start + k]]
        counted = not isinstance(plan["spec"]["attributes"][j].get("domain"), list)
        out.append((name, int(k), None if counted else values))
        start += k
    return out


def read_inputs(plan: Mapping[str, Any], path: str | os.PathLike):
    """Users' records (int64 codes, shape (n, d)) from a file with one column per attribute (:data:`INPUT_DOC`).

    Raises
    ------
    InputDataError
        Missing file or column, a value that is not a label or index (naming the line and value).
    """
    return concat_chunks(list(iter_inputs(plan, path)))


def iter_inputs(plan: Mapping[str, Any], path: str | os.PathLike, *, skip_empty: bool = False,
                chunk_rows: int | None = None) -> InputStream:
    """The users' records streamed: an ``InputStream`` of int64 chunks of shape (rows, d); a row with an empty
    cell is refused unless ``skip_empty`` (then dropped)."""
    attributes = _attribute_domains(plan)
    names = [a[0] for a in attributes]
    table = open_table_stream(path, names, ("user",), chunk_rows=DEFAULT_CHUNK_ROWS if chunk_rows is None
                              else chunk_rows)

    def produce(stream: InputStream):
        for batch in table:
            stream.note_batch(batch)
            codes = np.stack([map_items(table, batch.start, batch.columns[name], labels, k, name)
                              for name, k, labels in attributes], axis=1)
            empty = np.any(codes < 0, axis=1)
            if empty.any():
                stream.note_empty(batch.start + np.nonzero(empty)[0])
                codes = codes[~empty]
            if codes.shape[0]:
                yield codes

    return InputStream(table, produce, skip_empty=skip_empty, column=" or ".join(names))

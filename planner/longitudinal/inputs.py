"""Users' inputs of a longitudinal plan: one value per report, read by the one chunked reader.

``ldpplan perturb`` and the cross-family tests read a CSV (or Parquet) with a column ``item``
(one row per user of one round; an optional ``user`` column must not repeat).
``ldpplan simulate --data`` reads the panel layout ``user,round,item`` (:func:`read_panel`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ..errors import InputDataError
from ..data import concat_chunks, DEFAULT_CHUNK_ROWS, item_stream

__all__ = ["INPUT_DOC", "read_inputs", "iter_inputs", "read_panel"]

INPUT_DOC = ("CSV with a header and columns 'user' (integer ids: ASCII digits without leading zeros, 0..2^40-1) "
             "and 'item', one row per user of one round: a "
             "label of the plan's domain.labels, or a 0-based index in [0, domain.size) when domain.labels is "
             "null. `ldpplan perturb` needs the clients' memo file and the round (--memo FILE --round T; "
             "--new-memo to start the file); "
             "`ldpplan simulate --data` reads the panel layout user,round,item (one row per user and round).")


def read_inputs(plan: Mapping[str, Any], path):
    """Items (int64 indices, shape (n,)) from a CSV with a column ``item``, one row per user."""
    return concat_chunks(list(iter_inputs(plan, path)))


def iter_inputs(plan: Mapping[str, Any], path, *, skip_empty: bool = False, chunk_rows: int | None = None):
    """Items streamed (an ``InputStream`` of int64 index chunks; :func:`ldpplan.planner.data.item_stream`)."""
    return item_stream(path, plan["domain"]["labels"], int(plan["domain"]["size"]), skip_empty=skip_empty,
                       chunk_rows=DEFAULT_CHUNK_ROWS if chunk_rows is None else chunk_rows)


def read_panel(plan: Mapping[str, Any], path: str | Path) -> dict[str, np.ndarray]:
    """``{"user", "round", "item"}`` int64 arrays of a ``user,round,item`` CSV (rounds 0-based).

    Users are any strings (numbered in order of first appearance); each (user, round) at most once.

    Raises
    ------
    InputDataError
        Missing file or column, a round outside ``[0, rounds)``, an unknown item, a repeated
        (user, round).
    """
    import pyarrow.csv as pacsv  # deferred: pyarrow

    try:
        table = pacsv.read_csv(str(path), convert_options=pacsv.ConvertOptions(
            column_types={"user": "string", "item": "string", "round": "int64"}))
    except FileNotFoundError:
        raise InputDataError(f"--data: no such file {path}") from None
    except Exception as exc:  # noqa: BLE001 - pyarrow's parse errors, one line
        raise InputDataError(f"--data: {path}: not a user,round,item CSV ({str(exc).splitlines()[0][:120]})") from None
    missing = [c for c in ("user", "round", "item") if c not in table.column_names]
    if missing:
        raise InputDataError(f"--data: {path}: missing column {missing[0]!r} (a panel has user,round,item)")
    users_raw = table["user"].to_numpy(zero_copy_only=False).astype(str)
    _, users = np.unique(users_raw, return_inverse=True)
    rnd = table["round"].to_numpy(zero_copy_only=False).astype(np.int64)
    rounds = int(plan["guarantee"]["rounds"])
    if rnd.size and (rnd.min() < 0 or rnd.max() >= rounds):
        raise InputDataError(f"--data: {path}: rounds must be in 0..{rounds - 1} (got {int(rnd.min())}..{int(rnd.max())})")
    labels, k = plan["domain"]["labels"], int(plan["domain"]["size"])
    cells = table["item"].to_numpy(zero_copy_only=False).astype(str)
    names = labels if labels is not None else [str(i) for i in range(k)]
    index = {name: i for i, name in enumerate(names)}
    items = np.array([index.get(c, -1) for c in cells], dtype=np.int64)
    if items.size and items.min() < 0:
        bad = int(np.argmax(items < 0))
        raise InputDataError(f"--data: {path}: line {bad + 2}: item {cells[bad][:40]!r} is not in the plan's domain")
    pair = users.astype(np.int64) * rounds + rnd
    if np.unique(pair).size != pair.size:
        raise InputDataError(f"--data: {path}: a user reports at most once per round")
    return {"user": users.astype(np.int64), "round": rnd, "item": items}

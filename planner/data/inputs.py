"""Users' input CSVs, one reader per input shape for every family (single items, item sets)."""
from __future__ import annotations

import csv
import dataclasses
import os
from pathlib import Path

import numpy as np

from ..errors import InputDataError
from .chunked import _item_index, concat_chunks, item_stream

__all__ = ["CsvTable", "read_csv_table", "read_item_column", "read_item_sets", "MAX_INPUT_BYTES"]


#: Largest input CSV read by the generic readers (bytes).
MAX_INPUT_BYTES = 2**31


@dataclasses.dataclass(frozen=True)
class CsvTable:
    """A CSV read by :func:`read_csv_table`: ``header``, data ``rows`` (cells stripped) and each
    row's 1-based ``lines`` number in the file (for error messages)."""

    header: list[str]
    rows: list[list[str]]
    lines: list[int]


def read_csv_table(path: str | os.PathLike, required: tuple[str, ...] | list[str], *,
                   field: str = "--input") -> CsvTable:
    """Read a users' input CSV strictly: UTF-8 (a BOM is allowed), a header holding ``required``,
    every row as long as the header.

    Parameters
    ----------
    path : path-like
    required : sequence of str
        Column names that must be in the header (other columns are ignored by the callers).
    field : str
        The option the file came from, named in errors.

    Returns
    -------
    CsvTable
        Header, data rows (blank lines skipped; cells stripped of surrounding spaces) and line numbers.

    Raises
    ------
    InputDataError
        Missing, unreadable or too large file, missing columns, ragged rows: one line naming the
        file, the line number and the rule.
    """
    p = Path(path)
    if not p.is_file():
        raise InputDataError(f"{field}: file must exist (got {str(p)!r})")
    if p.stat().st_size > MAX_INPUT_BYTES:
        raise InputDataError(f"{p}: an input file must be at most {MAX_INPUT_BYTES} bytes")
    try:
        with p.open(newline="", encoding="utf-8-sig") as fh:
            reader = csv.reader(fh)
            header = [h.strip() for h in next(reader, [])]
            if not header:
                raise InputDataError(f"{p}: file is empty (a header with {list(required)} is required)")
            missing = [c for c in required if c not in header]
            if missing:
                raise InputDataError(f"{p}: line 1: columns {missing} are required (header is {header[:20]})")
            rows, lines = [], []
            for row in reader:
                if not row or all(not c.strip() for c in row):
                    continue
                if len(row) != len(header):
                    raise InputDataError(f"{p}: line {reader.line_num}: must have {len(header)} fields like the "
                                         f"header (got {len(row)})")
                rows.append([c.strip() for c in row])
                lines.append(reader.line_num)
    except UnicodeDecodeError as exc:
        raise InputDataError(f"{p}: must be UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except csv.Error as exc:
        raise InputDataError(f"{p}: must be valid CSV ({exc})") from None
    return CsvTable(header=header, rows=rows, lines=lines)


def read_item_column(path: str | os.PathLike, labels: list[str] | None, domain_size: int, *,
                     column: str = "item", extra: tuple[str, ...] = ()) -> np.ndarray | dict[str, np.ndarray]:
    """Single-item inputs, one row per user: column ``item`` holds a label of ``domain.labels``,
    or a 0-based index when the plan has no labels. A column ``user``, when present, must not
    repeat (a repeated user means item sets, which single-item plans do not take).

    Parameters
    ----------
    path : path-like
    labels : list of str or None
    domain_size : int
    column : str
        The item column.
    extra : tuple of str
        Optional further columns to return as strings (e.g. PUM's ``tag``); a missing one is all "".

    Returns
    -------
    ndarray of int64, shape (n_users,), or dict
        Each user's item index in ``[0, domain_size)``; with ``extra``, ``{"item": ..., name: str array}``.

    Raises
    ------
    InputDataError
        Naming the file, the line and the value (no rows, unknown label, bad index, repeated user,
        rows with an empty item: see :func:`ldpplan.planner.data.item_stream`, which reads the file).
    """
    return concat_chunks(list(item_stream(path, labels, domain_size, column=column, extra=extra)))


def read_item_sets(path: str | os.PathLike, labels: list[str] | None, domain_size: int, *,
                   user: str = "user", item: str = "item") -> tuple[list[str], np.ndarray, np.ndarray]:
    """Item-set inputs: rows ``user,item`` (a user's rows need not be adjacent; duplicates are kept once).

    MovieLens ratings (``userId,movieId``) are read as they are.

    Returns
    -------
    users : list of str
        User ids in order of first appearance.
    indptr : ndarray of int64, shape (n_users + 1,)
    indices : ndarray of int64, shape (n_pairs,)
        User ``u``'s items are ``indices[indptr[u]:indptr[u + 1]]`` (sorted item indices).

    Raises
    ------
    InputDataError
        Naming the file, the line and the value.
    """
    probe = read_csv_table(path, [])
    if item not in probe.header and {"userId", "movieId"} <= set(probe.header):  # MovieLens ratings as they are
        user, item = "userId", "movieId"
    table = read_csv_table(path, [user, item])
    ku, ki = table.header.index(user), table.header.index(item)
    lookup = {lab: i for i, lab in enumerate(labels)} if labels is not None else None
    sets: dict[str, set[int]] = {}
    for row, line in zip(table.rows, table.lines):
        cell = row[ki]
        hit = lookup.get(cell) if lookup is not None else None
        index = hit if hit is not None else _item_index(cell, labels, domain_size, f"{path}: line {line}: {item}")
        sets.setdefault(row[ku], set()).add(index)
    users = list(sets)
    counts = np.array([len(sets[u]) for u in users], dtype=np.int64)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    indices = np.array([x for u in users for x in sorted(sets[u])], dtype=np.int64)
    return users, indptr, indices

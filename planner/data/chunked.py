"""Users' inputs a chunk at a time, for every input shape (single items, item sets, key-value pairs).

What each family's ``iter_inputs`` hook returns (:meth:`ldpplan.planner.families.Family.iter_inputs`):
an :class:`InputStream`, iterated for chunks in the form the runtime's ``perturb`` takes.
Peak memory depends on the chunk size, not on the number of rows:

- single items: each batch of rows is mapped to item indices and yielded; a ``user`` column,
  when present, is checked for repeats with 8 bytes (a 64-bit hash) per user;
- item sets and key-value pairs (a user's rows need not be adjacent): rows are routed by a
  hash of the user id into ``ceil(file bytes / SPILL_BYTES)`` temporary Arrow files (at most
  ``MAX_BUCKETS``), then each
  bucket is grouped by user and yielded (one bucket: no temporary file, first-appearance order).

**Empty items.** A row whose item (or key) cell is empty, what pandas writes for a missing
value, is an error by default: from the first such row on, :class:`InputStream` hands on no
more chunks, reads the rest of the file to count them, and raises ``InputDataError`` with the
count and the first line numbers. With ``skip_empty=True`` those
rows are dropped and counted in :attr:`InputStream.skipped_empty` (the CLI says how many).
"""
from __future__ import annotations

import math
import os
import tempfile
from typing import Any, Callable, Iterator

import numpy as np

from .._report import counted
from ..errors import InputDataError
from .stream import DEFAULT_CHUNK_ROWS, TableStream, open_table_stream, string_hashes

__all__ = ["InputStream", "item_stream", "item_set_stream", "key_value_stream", "concat_chunks", "SPILL_BYTES",
           "DEFAULT_CHUNK_ROWS"]

#: Input bytes per temporary bucket when item sets or key-value pairs are grouped by user.
SPILL_BYTES = 16 << 20
#: Most temporary buckets (open files) at once; inputs over ``MAX_BUCKETS * SPILL_BYTES`` get larger buckets.
MAX_BUCKETS = 512
_SHOWN_LINES = 5


class InputStream:
    """Users' inputs of one file, read a chunk at a time (one pass).

    Iterate it for chunks of users (ndarray, dict of ndarrays, CSR tuple or ``KeyValueUsers``,
    whatever the family's runtime ``perturb`` takes). The counters grow while it is read.

    Attributes
    ----------
    path : pathlib.Path
    total_bytes : int
        Size of the file.
    bytes_read : int
        Bytes consumed so far (progress).
    rows : int
        Data rows read so far (including skipped ones).
    users : int
        Users yielded so far.
    skipped_empty : int
        Rows dropped for an empty item (only with ``skip_empty=True``; otherwise such rows raise).
    """

    def __init__(self, table: TableStream, produce: Callable[["InputStream"], Iterator[Any]], *,
                 skip_empty: bool, column: str):
        self._table, self._produce, self._column = table, produce, column
        self.skip_empty = bool(skip_empty)
        self.path, self.total_bytes = table.path, table.total_bytes
        self.bytes_read = self.rows = self.users = self.skipped_empty = 0
        self._empty_rows: list[int] = []
        self._transforms: list[Callable[[Any], Any]] = []

    def map(self, fn: Callable[[Any], Any]) -> "InputStream":
        """Apply ``fn`` to every chunk as it is yielded (a family's own form of its inputs); returns self."""
        self._transforms.append(fn)
        return self

    def note_batch(self, batch) -> None:
        """Advance the counters past a :class:`~.stream.RawBatch` (called by the producers)."""
        self.rows = batch.start + batch.rows
        self.bytes_read = batch.bytes_read

    def note_empty(self, rows: np.ndarray) -> None:
        """Record 0-based data rows whose item is empty."""
        self.skipped_empty += int(rows.size)
        room = _SHOWN_LINES - len(self._empty_rows)
        if room > 0:
            self._empty_rows.extend(int(r) for r in rows[:room])

    def __iter__(self) -> Iterator[Any]:
        produced = self._produce(self)
        for chunk in produced:
            if self.skipped_empty and not self.skip_empty:  # the file is refused: count the rest, hand on nothing
                for _ in produced:
                    pass
                break
            self.users += _n_users(chunk)
            for fn in self._transforms:
                chunk = fn(chunk)
            yield chunk
        self.bytes_read = self.total_bytes
        if self.skipped_empty and not self.skip_empty:
            lines = ", ".join(self._table.lines(self._empty_rows))
            raise InputDataError(f"{self.path}: {self.skipped_empty:,} rows have an empty {self._column} "
                                 f"(first at {lines}); every row needs one, or pass --skip-empty to drop them")
        if not self.users:
            left = f" left after skipping {self.skipped_empty:,} with an empty {self._column}" \
                if self.skipped_empty else ""
            raise InputDataError(f"{self.path}: no rows{left} (one row per user with a column "
                                 f"{self._column!r} is required)")


def _n_users(chunk) -> int:
    if isinstance(chunk, dict):
        return len(chunk["item"])
    if isinstance(chunk, tuple):  # (indptr, indices) or key-value (user_ids, indptr, keys, values, dropped)
        return len(chunk[0]) - 1 if len(chunk) == 2 else len(chunk[0])
    if hasattr(chunk, "n_users"):
        return int(chunk.n_users)
    return len(chunk)


# --------------------------------------------------------------------------- item cells -> indices
def _item_index(cell: str, labels: list[str] | None, domain_size: int, where: str) -> int:
    """Index of an item cell that is not a label (labels None: a 0-based index), else InputDataError."""
    if labels is not None:
        shown = labels[:5] + (["..."] if len(labels) > 5 else [])
        raise InputDataError(f"{where}: must be one of domain.labels {shown} (got {cell[:40]!r})")
    try:
        value = int(cell)
    except ValueError:
        raise InputDataError(f"{where}: must be a 0-based index (the plan has no labels) (got {cell[:40]!r})") from None
    if not 0 <= value < domain_size:
        raise InputDataError(f"{where}: must be a 0-based index in [0, {domain_size}) (got {value})")
    return value


def _fail_item(table: TableStream, start: int, col, i: int, labels, domain_size: int, column: str):
    _item_index(col[i].as_py(), labels, domain_size, f"{table.where(start + i)}: {column}")
    raise AssertionError("unreachable")  # pragma: no cover - _item_index raised


def map_items(table: TableStream, start: int, col, labels: list[str] | None, domain_size: int,
              column: str) -> np.ndarray:
    """Item indices of a batch's text cells: int64, ``-1`` where the cell is empty.

    Raises
    ------
    InputDataError
        A cell that is neither a label (an index when ``labels`` is None) nor empty: file, line, value.
    """
    import pyarrow as pa  # deferred: pyarrow
    import pyarrow.compute as pc

    empty = pc.equal(col, "").to_numpy(zero_copy_only=False)
    if labels is not None:
        found = pc.fill_null(pc.index_in(col, value_set=pa.array(labels, pa.string())), -1)
        out = found.to_numpy(zero_copy_only=False).astype(np.int64)
        bad = np.nonzero((out < 0) & ~empty)[0]
        if bad.size:
            _fail_item(table, start, col, int(bad[0]), labels, domain_size, column)
        return out
    out = np.full(len(col), -1, dtype=np.int64)
    full = np.nonzero(~empty)[0]
    try:
        values = pc.cast(col.filter(pa.array(~empty)), pa.int64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # e.g. "+3": Python's int() decides
        parsed = []
        for i in full:
            try:
                parsed.append(int(col[int(i)].as_py()))
            except ValueError:
                _fail_item(table, start, col, int(i), labels, domain_size, column)
        values = np.array(parsed, dtype=np.int64)
    bad = np.nonzero((values < 0) | (values >= domain_size))[0]
    if bad.size:
        _fail_item(table, start, col, int(full[bad[0]]), labels, domain_size, column)
    out[full] = values
    return out


# --------------------------------------------------------------------------- single items
def item_stream(path: str | os.PathLike, labels: list[str] | None, domain_size: int, *, column: str = "item",
                extra: tuple[str, ...] = (), skip_empty: bool = False, chunk_rows: int = DEFAULT_CHUNK_ROWS,
                field: str = "--input") -> InputStream:
    """Single-item inputs, one row per user, streamed (the rules of :func:`~.inputs.read_item_column`).

    Yields ``ndarray`` of int64 item indices, shape (rows,), or with ``extra`` a dict
    ``{"item": ..., name: str ndarray}`` (a missing extra column is all ``""``).

    Raises
    ------
    InputDataError
        Missing file or column, a bad item (file, line, value), a repeated ``user``, no rows,
        empty items without ``skip_empty`` (count and first lines).
    """
    table = open_table_stream(path, [column], ("user", *extra), chunk_rows=chunk_rows, field=field)

    def produce(stream: InputStream):
        hashes: list[np.ndarray] = []
        for batch in table:
            stream.note_batch(batch)
            col = batch.columns[column]
            items = map_items(table, batch.start, col, labels, domain_size, column)
            empty = items < 0
            if empty.any():
                stream.note_empty(batch.start + np.nonzero(empty)[0])
                items = items[~empty]
            if "user" in batch.columns:
                hashes.append(string_hashes(batch.columns["user"])[~empty])
            if not items.size:
                continue
            if not extra:
                yield items
                continue
            chunk: dict[str, np.ndarray] = {"item": items}
            for name in extra:
                cells = batch.columns[name].to_numpy(zero_copy_only=False).astype(str) if name in batch.columns \
                    else np.full(batch.rows, "", dtype=str)
                chunk[name] = cells[~empty]
            yield chunk
        if hashes:
            joined = np.concatenate(hashes)
            hashes.clear()
            _check_unique_users(table, joined, column)

    return InputStream(table, produce, skip_empty=skip_empty, column=column)


def _check_unique_users(table: TableStream, hashes: np.ndarray, column: str) -> None:
    """Refuse a repeated user. ``hashes``: the user hash of every kept row (8 bytes per user); rows
    whose hash repeats are re-read and compared as strings (a bare hash collision passes)."""
    h = hashes  # the caller's fresh concatenation: sorted in place (no second copy)
    h.sort()
    repeated = np.unique(h[1:][h[1:] == h[:-1]])
    if not repeated.size:
        return
    seen: set[str] = set()
    for batch in table:
        users = batch.columns["user"]
        suspect = np.isin(string_hashes(users), repeated)
        suspect &= ~pc_equal_empty(batch.columns[column])
        for i in np.nonzero(suspect)[0]:
            user = users[int(i)].as_py()
            if user in seen:
                raise InputDataError(f"{table.where(batch.start + int(i))}: user {user[:40]!r} appears twice (this "
                                     f"plan takes one item per user: a column {column!r}, one row per user)")
            seen.add(user)


def pc_equal_empty(col) -> np.ndarray:
    """Boolean mask of the empty cells of a pyarrow string array."""
    import pyarrow.compute as pc  # deferred: pyarrow

    return pc.equal(col, "").to_numpy(zero_copy_only=False)


# --------------------------------------------------------------------------- item sets and key-value pairs
def _grouped(stream: InputStream, table: TableStream, user: str, map_batch, finish, chunk_users: int):
    """Route mapped rows into buckets by user hash, then group each bucket by user (see module doc)."""
    import pyarrow as pa  # deferred: pyarrow
    import pyarrow.ipc as ipc

    buckets = min(MAX_BUCKETS, max(1, math.ceil(table.total_bytes / SPILL_BYTES)))
    with tempfile.TemporaryDirectory(prefix="ldpplan-input-") as tmp:
        writers: list = [None] * buckets
        held: list = []
        for batch in table:
            stream.note_batch(batch)
            mapped = map_batch(batch)
            if mapped is None or mapped.num_rows == 0:
                continue
            if buckets == 1:
                held.append(mapped)
                continue
            which = string_hashes(mapped.column(0)) % np.uint64(buckets)
            for b in np.unique(which):
                part = mapped.filter(pa.array(which == b))
                if writers[b] is None:
                    writers[b] = ipc.new_file(os.path.join(tmp, f"{b}.arrow"), part.schema)
                writers[b].write_table(part)
        for w in writers:
            if w is not None:
                w.close()
        if buckets == 1:
            if held:
                yield from finish(pa.concat_tables(held).combine_chunks(), chunk_users)
            return
        for b, w in enumerate(writers):
            if w is not None:
                with ipc.open_file(os.path.join(tmp, f"{b}.arrow")) as src:
                    tab = src.read_all().combine_chunks()
                yield from finish(tab, chunk_users)
                del tab


def _csr_by_user(users, keys: np.ndarray) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray]:
    """Users in first-appearance order, CSR ``indptr``, and the row order sorted by (user, key)."""
    import pyarrow.compute as pc  # deferred: pyarrow

    encoded = pc.dictionary_encode(users).combine_chunks()
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    order = np.lexsort((keys, codes))
    return encoded.dictionary, codes, order, np.bincount(codes, minlength=len(encoded.dictionary))


def item_set_stream(path: str | os.PathLike, labels: list[str] | None, domain_size: int, *, user: str = "user",
                    item: str = "item", skip_empty: bool = False, chunk_rows: int = DEFAULT_CHUNK_ROWS,
                    field: str = "--input") -> InputStream:
    """Item-set inputs (rows ``user,item``; MovieLens ``userId,movieId`` as they are), streamed.

    Yields ``(indptr, indices)`` CSR chunks of at most ``chunk_rows`` users (sorted items,
    repeated rows counted once). Users come in first-appearance order within a bucket.
    """
    import pyarrow as pa  # deferred: pyarrow

    probe = open_table_stream(path, [], chunk_rows=chunk_rows, field=field)
    if item not in probe.header and {"userId", "movieId"} <= set(probe.header):
        user, item = "userId", "movieId"
    table = open_table_stream(path, [user, item], chunk_rows=chunk_rows, field=field)

    def map_batch(batch):
        items = map_items(table, batch.start, batch.columns[item], labels, domain_size, item)
        empty = items < 0
        if empty.any():
            stream.note_empty(batch.start + np.nonzero(empty)[0])
        return pa.table({"user": batch.columns[user].filter(pa.array(~empty)), "item": items[~empty]})

    def finish(tab, chunk_users):
        dictionary, codes, order, _ = _csr_by_user(tab.column("user"), tab.column("item").to_numpy())
        c, k = codes[order], tab.column("item").to_numpy()[order]
        keep = np.ones(c.size, dtype=bool)
        keep[1:] = (np.diff(c) != 0) | (np.diff(k) != 0)
        c, k = c[keep], k[keep]
        indptr = np.concatenate([[0], np.cumsum(np.bincount(c, minlength=len(dictionary)))]).astype(np.int64)
        for s in range(0, len(dictionary), chunk_users):
            e = min(s + chunk_users, len(dictionary))
            yield indptr[s:e + 1] - indptr[s], k[indptr[s]:indptr[e]].astype(np.int64)

    stream = InputStream(table, lambda st: _grouped(st, table, user, map_batch, finish, chunk_rows),
                         skip_empty=skip_empty, column=item)
    return stream


def key_value_stream(path: str | os.PathLike, labels: list[str] | None, domain_size: int, *,
                     out_of_domain_keys: str = "reject", skip_empty: bool = False,
                     chunk_rows: int = DEFAULT_CHUNK_ROWS, field: str = "--input") -> InputStream:
    """Key-value inputs (``user,key,value``; ``user_id`` for ``user``; MovieLens ``userId,movieId,rating``
    with ratings mapped from [0.5, 5] to [-1, 1]), streamed.

    Yields ``(user_ids, indptr, keys, values, dropped_pairs)`` chunks of at most ``chunk_rows``
    users; keys index the plan's domain. Values are returned as read (the caller applies the
    plan's ``values`` rule); a non-finite value and a key listed twice by a user are errors.
    """
    import pyarrow as pa  # deferred: pyarrow
    import pyarrow.compute as pc

    probe = open_table_stream(path, [], chunk_rows=chunk_rows, field=field)
    movielens = {"userId", "movieId", "rating"} <= set(probe.header) and "key" not in probe.header
    user = "userId" if movielens else ("user" if "user" in probe.header or "user_id" not in probe.header
                                       else "user_id")
    key, value = ("movieId", "rating") if movielens else ("key", "value")
    if not movielens and "user" not in probe.header and "user_id" not in probe.header:
        missing = ["user"] + [c for c in ("key", "value") if c not in probe.header]
        raise InputDataError(f"{path}: columns {missing} are required: user,key,value (user_id is accepted for user; "
                             f"header is {probe.header[:20]})")
    table = open_table_stream(path, [user, key, value], chunk_rows=chunk_rows, field=field)
    where = str(path)

    def map_batch(batch):
        col = batch.columns[key]
        empty = pc.equal(col, "").to_numpy(zero_copy_only=False)
        if labels is not None:
            keys = pc.fill_null(pc.index_in(col, value_set=pa.array(labels, pa.string())), -1).to_numpy(
                zero_copy_only=False).astype(np.int64)
        else:
            digits = pc.match_substring_regex(col, r"^[0-9]+$").to_numpy(zero_copy_only=False)
            keys = np.full(batch.rows, -1, dtype=np.int64)
            if digits.any():
                keys[digits] = pc.cast(col.filter(pa.array(digits)), pa.int64()).to_numpy(zero_copy_only=False)
            keys[keys >= domain_size] = -1
        if empty.any():
            stream.note_empty(batch.start + np.nonzero(empty)[0])
        outside = (keys < 0) & ~empty
        if outside.any() and out_of_domain_keys != "drop":
            first = col[int(np.nonzero(outside)[0][0])].as_py()
            domain = "the plan's key labels" if labels is not None else f"0..{domain_size - 1}"
            here = counted(int(outside.sum()), "pair is", "pairs are")
            raise InputDataError(f"{where}: key {first!r} must be in {domain} ({here} not, in rows "
                                 f"{batch.start + 1:,}..{batch.start + len(keys):,}); plan with out_of_domain_keys = "
                                 "\"drop\" to drop them")
        kept = ~empty
        where_kept = np.nonzero(kept)[0]
        try:  # the value of a row with an empty key is not read (the row is refused or skipped)
            values = pc.cast(batch.columns[value].filter(pa.array(kept)), pa.float64()).to_numpy(zero_copy_only=False)
        except pa.ArrowInvalid as exc:
            raise InputDataError(f"{where}: every row needs user,key,value with a numeric value "
                                 f"({str(exc)[:120]})") from None
        if movielens:
            values = (values - 2.75) / 2.25
        bad = ~np.isfinite(values)
        if bad.any():
            row = int(where_kept[np.nonzero(bad)[0][0]])
            raise InputDataError(f"{table.where(batch.start + row)}: value must be a finite number "
                                 f"(got {batch.columns[value][row].as_py()!r})")
        return pa.table({"user": batch.columns[user].filter(pa.array(kept)), "key": keys[kept], "value": values})

    def finish(tab, chunk_users):
        keys_all = tab.column("key").to_numpy()
        dictionary, codes, order, _ = _csr_by_user(tab.column("user"), keys_all)
        c, k, v = codes[order], keys_all[order], tab.column("value").to_numpy()[order]
        dup = (np.diff(c) == 0) & (np.diff(k) == 0) & (k[1:] >= 0)
        if dup.any():
            i = int(np.nonzero(dup)[0][0])
            shown = labels[k[i]] if labels is not None else k[i]
            raise InputDataError(f"{where}: user {dictionary[c[i]].as_py()} lists key {shown} twice")
        inside = k >= 0
        counts = np.bincount(c[inside], minlength=len(dictionary))
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        dropped_per_user = np.bincount(c[~inside], minlength=len(dictionary))
        k, v = k[inside], v[inside]
        users = dictionary.to_numpy(zero_copy_only=False).astype(str)
        for s in range(0, len(dictionary), chunk_users):
            e = min(s + chunk_users, len(dictionary))
            dropped = int(dropped_per_user[s:e].sum())
            yield users[s:e], indptr[s:e + 1] - indptr[s], k[indptr[s]:indptr[e]], v[indptr[s]:indptr[e]], dropped

    stream = InputStream(table, lambda st: _grouped(st, table, user, map_batch, finish, chunk_rows),
                         skip_empty=skip_empty, column=key)
    return stream


def concat_chunks(chunks: list) -> Any:
    """One whole input from the chunks of an :class:`InputStream` (ndarray, dict or CSR tuple).

    Raises
    ------
    TypeError
        A chunk type this function does not join (a family joins its own).
    """
    if not chunks:
        return np.zeros(0, dtype=np.int64)
    first = chunks[0]
    if isinstance(first, np.ndarray):
        return np.concatenate(chunks)
    if isinstance(first, dict):
        return {k: np.concatenate([c[k] for c in chunks]) for k in first}
    if isinstance(first, tuple) and len(first) == 2:
        sizes = np.concatenate([np.diff(c[0]) for c in chunks])
        return (np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
                np.concatenate([c[1] for c in chunks]).astype(np.int64))
    raise TypeError(f"cannot join chunks of type {type(first).__name__}")


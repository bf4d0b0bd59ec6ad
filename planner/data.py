"""Loaders for the real data sets the project simulates on.

The files themselves are not shipped with the package (see
``../shared/data/README.md`` for provenance and licences: MovieLens
"ml-latest-small" via dslabs, GroupLens conditions; GSS vocabulary via carData,
GPL >= 2). Every loader takes an explicit path; library code never hard-codes one.
"""
from __future__ import annotations

import csv
import dataclasses
import os
from pathlib import Path

import numpy as np

from .errors import InputDataError

__all__ = [
    "MovieLensRatings", "load_movielens_ratings", "movielens_item_sets",
    "GSSVocab", "load_gss_vocab", "default_data_dir", "resolve_data_path",
    "KeyValueData", "load_key_value_data", "map_key_value_data",
    "PIE_GSS_FIELDS", "pie_gss_items", "count_pie_users", "max_prior_from_weights",
]


@dataclasses.dataclass(frozen=True)
class MovieLensRatings:
    """MovieLens ratings, one entry per rating (row of the CSV).

    Attributes
    ----------
    user_ids, movie_ids : ndarray of int64, shape (n_ratings,)
    ratings : ndarray of float64, shape (n_ratings,)
        Stars in [0.5, 5].
    timestamps : ndarray of int64, shape (n_ratings,)
        Unix seconds.
    """

    user_ids: np.ndarray
    movie_ids: np.ndarray
    ratings: np.ndarray
    timestamps: np.ndarray

    @property
    def n_ratings(self) -> int:
        """Number of rating rows."""
        return int(self.user_ids.shape[0])

    def movie_index(self) -> tuple[np.ndarray, np.ndarray]:
        """Distinct movie ids (sorted) and each rating's index into them.

        Returns
        -------
        movies : ndarray of int64, shape (m,)
        index : ndarray of int64, shape (n_ratings,)
        """
        movies, index = np.unique(self.movie_ids, return_inverse=True)
        return movies, index.astype(np.int64)

    def values_in_unit_interval(self) -> np.ndarray:
        """Ratings mapped linearly from [0.5, 5] to [-1, 1] (PCKV's value domain)."""
        return (self.ratings - 2.75) / 2.25


def _read_csv(path: str | os.PathLike, required: list[str]) -> tuple[list[str], list[list[str]]]:
    p = Path(path)
    if not p.is_file():
        raise InputDataError(f"--data: file must exist (got {str(p)!r})")
    with p.open(newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        try:
            header = next(reader)
        except StopIteration:
            raise InputDataError(f"{p}: file is empty") from None
        missing = [c for c in required if c not in header]
        if missing:
            raise InputDataError(f"{p}: columns {missing} are required (header is {header})")
        rows = list(reader)
    return header, rows


def load_movielens_ratings(path: str | os.PathLike) -> MovieLensRatings:
    """Load ``movielens_ratings.csv`` (columns userId, movieId, rating, timestamp).

    Raises
    ------
    InputDataError
        Missing file, missing columns or unparsable numbers.
    """
    header, rows = _read_csv(path, ["userId", "movieId", "rating"])
    iu, im, ir = header.index("userId"), header.index("movieId"), header.index("rating")
    it = header.index("timestamp") if "timestamp" in header else None
    try:
        users = np.array([int(r[iu]) for r in rows], dtype=np.int64)
        movies = np.array([int(r[im]) for r in rows], dtype=np.int64)
        ratings = np.array([float(r[ir]) for r in rows], dtype=np.float64)
        stamps = np.array([int(r[it]) for r in rows], dtype=np.int64) if it is not None else np.zeros(len(rows), np.int64)
    except (ValueError, IndexError) as exc:
        raise InputDataError(f"{path}: unparsable row ({exc})") from None
    return MovieLensRatings(users, movies, ratings, stamps)


def movielens_item_sets(data: MovieLensRatings) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each user's set of rated movies, in CSR form.

    Returns
    -------
    movies : ndarray of int64, shape (m,)
        Distinct movie ids; item ``k`` is ``movies[k]``.
    indptr : ndarray of int64, shape (n_users + 1,)
    indices : ndarray of int64, shape (n_ratings,)
        User ``u``'s items are ``indices[indptr[u]:indptr[u+1]]`` (indices into ``movies``).
    """
    movies, idx = data.movie_index()
    order = np.lexsort((idx, data.user_ids))
    users_sorted = data.user_ids[order]
    _, counts = np.unique(users_sorted, return_counts=True)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return movies, indptr, idx[order]


@dataclasses.dataclass(frozen=True)
class GSSVocab:
    """GSS vocabulary survey respondents (rows with a missing field dropped).

    Attributes
    ----------
    columns : dict of str -> ndarray of str, each shape (n,)
        ``year, gender, nativeBorn, ageGroup, educGroup`` as strings.
    n_dropped : int
        Rows dropped because one of the used fields was ``NA``.
    """

    columns: dict
    n_dropped: int

    def joint_categories(self, fields=("ageGroup", "educGroup", "gender", "nativeBorn")):
        """Joint category of each respondent over ``fields``.

        Returns
        -------
        labels : list of str, length |X|
            Every combination of observed values (Cartesian product, sorted),
            as ``"v1|v2|..."``; categories with zero respondents are included.
        index : ndarray of int64, shape (n,)
            Each respondent's index into ``labels``.
        """
        levels = [sorted(set(self.columns[f].tolist())) for f in fields]
        strides = np.cumprod([1] + [len(lv) for lv in levels[::-1]][:-1])[::-1]
        index = np.zeros(len(self.columns[fields[0]]), dtype=np.int64)
        for f, lv, s in zip(fields, levels, strides):
            pos = {v: i for i, v in enumerate(lv)}
            index += s * np.array([pos[v] for v in self.columns[f]], dtype=np.int64)
        import itertools

        labels = ["|".join(combo) for combo in itertools.product(*levels)]
        return labels, index


def load_gss_vocab(path: str | os.PathLike,
                   fields=("year", "gender", "nativeBorn", "ageGroup", "educGroup")) -> GSSVocab:
    """Load ``gss_vocab.csv``; rows with ``NA`` in any of ``fields`` are dropped (counted).

    Raises
    ------
    InputDataError
        Missing file or columns.
    """
    header, rows = _read_csv(path, list(fields))
    idx = [header.index(f) for f in fields]
    kept = [r for r in rows if all(r[i] not in ("NA", "") for i in idx)]
    cols = {f: np.array([r[i] for r in kept]) for f, i in zip(fields, idx)}
    return GSSVocab(columns=cols, n_dropped=len(rows) - len(kept))


# ============================================================================ generic readers (CLI/infra)


def default_data_dir() -> Path:
    """Folder of the real data sets: ``$LDPPLAN_DATA_DIR`` if set, else the first of
    ``../shared/data`` beside the source tree, ``./shared/data``, ``../shared/data`` (from the
    working directory) that holds ``movielens_ratings.csv``; else the ``$LDPPLAN_DATA_DIR``-less
    default ``../shared/data``.

    Returns
    -------
    pathlib.Path
    """
    env = os.environ.get("LDPPLAN_DATA_DIR")
    if env:
        return Path(env)
    here = Path(__file__).resolve().parent.parent  # the repository root in a source/editable install
    candidates = [here.parent / "shared" / "data", Path.cwd() / "shared" / "data", Path.cwd().parent / "shared" / "data"]
    for c in candidates:
        if (c / "movielens_ratings.csv").is_file():
            return c
    return Path("..") / "shared" / "data"


def resolve_data_path(text: str, base_dir: Path | None = None) -> Path:
    """Resolve a data path from a spec: ``${LDPPLAN_DATA_DIR}`` expands to :func:`default_data_dir`,
    other variables from the environment; relative paths are taken against ``base_dir``."""
    expanded = text.replace("${LDPPLAN_DATA_DIR}", str(default_data_dir())).replace("$LDPPLAN_DATA_DIR", str(default_data_dir()))
    expanded = os.path.expandvars(expanded)
    path = Path(expanded)
    if not path.is_absolute() and base_dir is not None:
        path = Path(base_dir) / path
    return path


__all__ += ["CsvTable", "read_csv_table", "read_item_column", "read_item_sets", "MAX_INPUT_BYTES"]

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
        Naming the file, the line and the value (no rows, unknown label, bad index, repeated user).
    """
    table = read_csv_table(path, [column])
    k = table.header.index(column)
    if "user" in table.header:
        ku, seen = table.header.index("user"), set()
        for row, line in zip(table.rows, table.lines):
            if row[ku] in seen:
                raise InputDataError(f"{path}: line {line}: user {row[ku][:40]!r} appears twice (this plan takes one "
                                     f"item per user: a column {column!r}, one row per user)")
            seen.add(row[ku])
    if not table.rows:
        raise InputDataError(f"{path}: no rows (one row per user with a column {column!r} is required)")
    lookup = {lab: i for i, lab in enumerate(labels)} if labels is not None else None
    out = np.empty(len(table.rows), dtype=np.int64)
    for i, (row, line) in enumerate(zip(table.rows, table.lines)):
        cell = row[k]
        hit = lookup.get(cell) if lookup is not None else None
        out[i] = hit if hit is not None else _item_index(cell, labels, domain_size, f"{path}: line {line}: {column}")
    if not extra:
        return out
    result: dict[str, np.ndarray] = {"item": out}
    for name in extra:
        j = table.header.index(name) if name in table.header else None
        result[name] = np.array([row[j] if j is not None else "" for row in table.rows], dtype=str)
    return result


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


# ============================================================================ IDUE / IDUE-PS inputs



# ============================================================================ PCKV key-value inputs
@dataclasses.dataclass(frozen=True)
class KeyValueData:
    """Users' key-value pairs read from a CSV, in CSR form with the file's own key labels.

    Attributes
    ----------
    labels : list of str, length m
        Distinct keys of the file (sorted numerically when all are integers).
    user_ids : ndarray of str, shape (n,)
    indptr : ndarray of int64, shape (n + 1,)
        User ``u`` holds pairs ``indptr[u]:indptr[u+1]``.
    keys : ndarray of int64, shape (pairs,)
        Indices into ``labels``.
    values : ndarray of float64, shape (pairs,)
        Values (MovieLens ratings mapped linearly from [0.5, 5] to [-1, 1]).
    """

    labels: list
    user_ids: np.ndarray
    indptr: np.ndarray
    keys: np.ndarray
    values: np.ndarray

    @property
    def n_users(self) -> int:
        """Number of users ``n``."""
        return int(self.indptr.shape[0] - 1)

    def set_sizes(self) -> np.ndarray:
        """Pairs per user, shape (n,)."""
        return np.diff(self.indptr)


def _sort_key_labels(labels: list[str]) -> list[str]:
    try:
        return [str(x) for x in sorted(labels, key=int)]
    except ValueError:
        return sorted(labels)


def load_key_value_data(path: str | os.PathLike) -> KeyValueData:
    """Read a key-value CSV: ``user,key,value`` (or ``user_id,key,value``) or MovieLens
    ``userId,movieId,rating`` (key = movieId, value = rating mapped from [0.5, 5] to [-1, 1]).

    Returns
    -------
    KeyValueData

    Raises
    ------
    InputDataError
        Missing file, missing columns, unparsable or NaN numbers, or a user listing a key twice.
    """
    p = Path(path)
    if not p.is_file():
        raise InputDataError(f"data file must exist (got {str(p)!r})")
    with p.open(newline="", encoding="utf-8") as fh:
        header = [h.strip() for h in (next(csv.reader(fh), None) or [])]
    if not header:
        raise InputDataError(f"{p}: file is empty")
    if {"userId", "movieId", "rating"} <= set(header):
        ml = load_movielens_ratings(p)
        users_raw, keys_raw, values = ml.user_ids.astype(str), ml.movie_ids.astype(str), ml.values_in_unit_interval()
    else:
        user_col = "user" if "user" in header else "user_id"
        header, rows = _read_csv(p, [user_col, "key", "value"])
        iu, ik, iv = header.index(user_col), header.index("key"), header.index("value")
        try:
            users_raw = np.array([r[iu].strip() for r in rows], dtype=str)
            keys_raw = np.array([r[ik].strip() for r in rows], dtype=str)
            values = np.array([float(r[iv]) for r in rows], dtype=np.float64)
        except (ValueError, IndexError) as exc:
            raise InputDataError(f"{p}: every row needs user,key,value with a numeric value ({exc})") from None
    if not np.isfinite(values).all():
        row = int(np.nonzero(~np.isfinite(values))[0][0]) + 2
        raise InputDataError(f"{p}: line {row}: value must be a finite number (got {values[row - 2]!r})")
    labels = _sort_key_labels(np.unique(keys_raw).tolist())
    pos = {lab: i for i, lab in enumerate(labels)}
    key_idx = np.array([pos[k] for k in keys_raw.tolist()], dtype=np.int64)
    user_u, user_idx = np.unique(users_raw, return_inverse=True)
    order = np.lexsort((key_idx, user_idx))
    uid_sorted, kid_sorted = user_idx[order], key_idx[order]
    dup = (np.diff(uid_sorted) == 0) & (np.diff(kid_sorted) == 0)
    if dup.any():
        i = int(np.nonzero(dup)[0][0])
        raise InputDataError(f"{p}: user {user_u[uid_sorted[i]]} lists key {labels[kid_sorted[i]]} twice")
    counts = np.bincount(user_idx, minlength=user_u.shape[0])
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return KeyValueData(labels=labels, user_ids=user_u, indptr=indptr, keys=kid_sorted.astype(np.int64),
                        values=values[order])


def map_key_value_data(data: KeyValueData, labels: list[str] | None, domain_size: int, *,
                       out_of_domain_keys: str = "reject",
                       where: str = "data") -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Re-index a file's keys into a plan's domain.

    Parameters
    ----------
    data : KeyValueData
    labels : list of str or None
        The plan's ``domain.labels``; None: keys are 0-based indices ``0..domain_size-1``.
    domain_size : int
    out_of_domain_keys : {"reject", "drop"}
    where : str
        Name of the file for messages.

    Returns
    -------
    indptr, keys, values : ndarrays (CSR, keys 0-based into the domain)
    dropped : int
        Pairs dropped (``out_of_domain_keys="drop"``).

    Raises
    ------
    InputDataError
        A key outside the domain with ``out_of_domain_keys="reject"``.
    """
    if labels is not None:
        pos = {lab: i for i, lab in enumerate(labels)}
        mapped = np.array([pos.get(lab, -1) for lab in data.labels], dtype=np.int64)
    else:
        mapped = np.array([int(lab) if lab.isdigit() else -1 for lab in data.labels], dtype=np.int64)
        mapped[mapped >= domain_size] = -1
    k = mapped[data.keys] if data.keys.size else data.keys
    bad = k < 0
    dropped = int(bad.sum())
    if not dropped:
        return data.indptr, k, data.values, 0
    if out_of_domain_keys != "drop":
        first = data.labels[int(data.keys[np.nonzero(bad)[0][0]])]
        domain = "the plan's key labels" if labels is not None else f"0..{domain_size - 1}"
        raise InputDataError(f"{where}: key {first!r} must be in {domain} ({dropped} pairs are not); "
                             "plan with out_of_domain_keys = \"drop\" to drop them")
    owner = np.repeat(np.arange(data.n_users), np.diff(data.indptr))[~bad]
    counts = np.bincount(owner, minlength=data.n_users)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return indptr, k[~bad], data.values[~bad], dropped


# ============================================================================ PIE inputs
#: GSS vocabulary joint category of the PIE examples: ageGroup x educGroup x gender x nativeBorn
PIE_GSS_FIELDS = ("ageGroup", "educGroup", "gender", "nativeBorn")


def _is_gss_vocab(path: Path) -> bool:
    with path.open(newline="", encoding="utf-8") as fh:
        header = next(csv.reader(fh), [])
    return all(f in header for f in PIE_GSS_FIELDS) and "vocab" in header


def pie_gss_items(path: str | os.PathLike) -> tuple[list[str], np.ndarray, int]:
    """GSS respondents' joint categories over :data:`PIE_GSS_FIELDS`.

    Returns
    -------
    labels : list of str, length 100
        ``"ageGroup|educGroup|gender|nativeBorn"``, Cartesian product of the observed values (sorted).
    index : ndarray of int64, shape (n,)
        Each kept respondent's index into ``labels``.
    n_dropped : int
        Respondents dropped for a missing field.

    Raises
    ------
    InputDataError
        Missing file or columns.
    """
    gss = load_gss_vocab(path, fields=PIE_GSS_FIELDS)
    labels, index = gss.joint_categories(PIE_GSS_FIELDS)
    return labels, index, gss.n_dropped


def count_pie_users(path: str | os.PathLike) -> int:
    """Number of users in a data file, for a PIE spec's ``users = {data = PATH}``.

    The GSS vocabulary file (recognised by its header) counts the respondents with all
    four PIE fields (:func:`pie_gss_items`); any other CSV counts its non-empty data rows.

    Raises
    ------
    InputDataError
        Missing or unreadable file.
    """
    p = Path(path)
    if not p.is_file():
        raise InputDataError(f"{p}: file must exist")
    try:
        if _is_gss_vocab(p):
            return int(pie_gss_items(p)[1].size)
        with p.open(newline="", encoding="utf-8") as fh:
            reader = csv.reader(fh)
            next(reader, None)
            return sum(1 for row in reader if row)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise InputDataError(f"{p}: must be a readable CSV file ({exc})") from None


def max_prior_from_weights(path: str | os.PathLike, column: str) -> float:
    """The adversary's largest prior ``max_u Pr(U = u)`` from a CSV of users' prior weights.

    One row per user; ``column`` holds a non-negative weight (e.g. how often the adversary
    expects each user). Returns ``max w / sum w``, for a PIE spec's
    ``target.max_prior = {data = PATH, column = NAME}`` (Cor. 3.9, eq. 11).

    Raises
    ------
    InputDataError
        Missing file or column, a weight that is not a finite number >= 0, or a zero sum.
    """
    header, rows = _read_csv(path, [column])
    col = header.index(column)
    try:
        weights = np.array([float(r[col]) for r in rows if r], dtype=np.float64)
    except (ValueError, IndexError) as exc:
        raise InputDataError(f"{path}: column {column!r} must hold numbers ({exc})") from None
    if weights.size == 0 or not np.all(np.isfinite(weights)) or np.any(weights < 0) or weights.sum() <= 0:
        raise InputDataError(f"{path}: column {column!r} must hold finite weights >= 0 with a positive sum")
    return float(weights.max() / weights.sum())


# ============================================================================ ULDP inputs

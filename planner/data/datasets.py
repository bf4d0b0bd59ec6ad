"""The real data sets the project simulates on (MovieLens, GSS) and where they live."""
from __future__ import annotations

import csv
import dataclasses
import itertools
import os
from pathlib import Path

import numpy as np

from ..errors import InputDataError

__all__ = ["MovieLensRatings", "load_movielens_ratings", "movielens_item_sets", "GSSVocab", "load_gss_vocab",
           "GSS_NUMERIC", "default_data_dir", "resolve_data_path", "read_simple_csv"]


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


#: the GSS file's numeric columns: the respondent's age (years, 18 to 89) and years of education (0 to 20)
GSS_NUMERIC = ("age", "educ")


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
        labels = ["|".join(combo) for combo in itertools.product(*levels)]
        return labels, index

    def numbers(self, field: str) -> np.ndarray:
        """A loaded numeric field (e.g. ``age`` or ``educ``, :data:`GSS_NUMERIC`) as numbers.

        Returns
        -------
        ndarray of float64, shape (n,)

        Raises
        ------
        InputDataError
            The field was not loaded or holds a cell that is not a number.
        """
        if field not in self.columns:
            raise InputDataError(f"GSS: field {field!r} was not loaded (loaded: {sorted(self.columns)})")
        try:
            return self.columns[field].astype(np.float64)
        except ValueError as exc:
            raise InputDataError(f"GSS: field {field!r} must hold numbers ({exc})") from None


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
    here = Path(__file__).resolve().parents[2]  # the repository root in a source/editable install
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


read_simple_csv = _read_csv

"""Data helpers of the PIE family: GSS joint categories, user counts and prior bounds from files."""
from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np

from ..errors import InputDataError

from .datasets import load_gss_vocab, read_simple_csv as _read_csv

__all__ = ["PIE_GSS_FIELDS", "pie_gss_items", "count_pie_users", "max_prior_from_weights"]

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

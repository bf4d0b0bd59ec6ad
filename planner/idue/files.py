"""Users' input files of IDUE / IDUE-PS plans (``ldpplan perturb --input``)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping


__all__ = ["INPUT_DOC", "read_inputs"]

INPUT_DOC = ("IDUE: a CSV with a column 'item', one row per user, holding a label of the plan's domain.labels "
             "(or a 0-based index when domain.labels is null). IDUE-PS: rows 'user,item', one row per item a "
             "user holds (repeated rows count once; a user with no row is not a user). MovieLens ratings "
             "('userId,movieId') are read as item sets as they are; `simulate` of an IDUE plan on them takes one "
             "report per rating (the paper's Sec. VII setting).")


def read_inputs(plan: Mapping[str, Any], path: str | Path):
    """Read users' true inputs for ``perturb``.

    Returns
    -------
    ndarray of int64, shape (n,)
        IDUE: item indices.
    (indptr, indices) : tuple of ndarray of int64
        IDUE-PS: CSR item sets.

    Raises
    ------
    InputDataError
        Missing file or column, an item outside the plan's domain (line named).
    """
    from ..data import read_item_column, read_item_sets

    labels, size = plan["domain"]["labels"], plan["domain"]["size"]
    if plan["mechanism"] == "idue-ps":
        _, indptr, indices = read_item_sets(path, labels, size)
        return indptr, indices
    return read_item_column(path, labels, size)

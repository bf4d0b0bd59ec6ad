"""Key-value input data (PCKV): users' (key, value) pairs in CSR form."""
from __future__ import annotations

import csv
import dataclasses
import os
from pathlib import Path

import numpy as np

from ...mechanisms.pckv import KeyValueUsers

from .._report import counted
from ..errors import InputDataError
from .datasets import load_movielens_ratings, read_simple_csv as _read_csv

__all__ = ["KeyValueData", "load_key_value_data", "map_key_value_data"]


@dataclasses.dataclass(frozen=True)
class KeyValueData(KeyValueUsers):
    """Users' key-value pairs read from a CSV: the runtime's :class:`KeyValueUsers` (CSR arrays
    ``indptr``, ``keys``, ``values``) plus the file's own key labels and user ids.

    Attributes
    ----------
    labels : list of str, length m
        Distinct keys of the file (sorted numerically when all are integers); ``keys`` index them.
    user_ids : ndarray of str, shape (n,)
    """

    labels: list = dataclasses.field(default_factory=list)
    user_ids: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=str))

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
        if "user" not in header and "user_id" not in header:  # the documented name is `user`; `user_id` is accepted
            missing = ["user"] + [c for c in ("key", "value") if c not in header]
            raise InputDataError(f"{p}: columns {missing} are required: user,key,value (user_id is accepted for user; "
                                 f"header is {header[:20]})")
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
        raise InputDataError(f"{where}: key {first!r} must be in {domain} ({counted(dropped, 'pair is', 'pairs are')} not); "
                             "plan with out_of_domain_keys = \"drop\" to drop them")
    owner = np.repeat(np.arange(data.n_users), np.diff(data.indptr))[~bad]
    counts = np.bincount(owner, minlength=data.n_users)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return indptr, k[~bad], data.values[~bad], dropped

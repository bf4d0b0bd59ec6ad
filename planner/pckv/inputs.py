"""Users' true inputs for ``ldpplan perturb`` and the reports files (PCKV)."""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ...mechanisms.pckv import KeyValueUsers

from ..errors import InputDataError
from ..data import DEFAULT_CHUNK_ROWS, key_value_stream

__all__ = ["INPUT_DOC", "KeyValueInputs", "read_inputs", "iter_inputs"]

INPUT_DOC = ("CSV with a header and one row per (user, key) pair: columns user,key,value (user_id is accepted "
             "for user). key is a label of domain.labels, or a 0-based index 0..d-1 when labels is null; value is "
             "a number in [-1, 1] (outside it: an error unless the plan has values = \"clip\"). A user lists a key "
             "at most once; keys outside the domain are an error unless the plan has out_of_domain_keys = "
             "\"drop\". The MovieLens layout userId,movieId,rating is read too (rating mapped from [0.5, 5] to "
             "[-1, 1]).")


@dataclasses.dataclass(frozen=True)
class KeyValueInputs(KeyValueUsers):
    """:class:`KeyValueUsers` (what ``perturb`` accepts) plus where they came from.

    Attributes
    ----------
    user_ids : ndarray of str, shape (n,)
        The file's user ids, in the order of the CSR rows.
    dropped_pairs : int
        Pairs whose key is outside the plan's domain (``out_of_domain_keys = "drop"``).
    """

    user_ids: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, str))
    dropped_pairs: int = 0

    @classmethod
    def join(cls, chunks: list["KeyValueInputs"]) -> "KeyValueInputs":
        """The users of several chunks as one (CSR rows in order)."""
        if not chunks:
            return cls(indptr=np.zeros(1, np.int64), keys=np.zeros(0, np.int64), values=np.zeros(0))
        if len(chunks) == 1:
            return chunks[0]
        sizes = np.concatenate([np.diff(c.indptr) for c in chunks])
        return cls(indptr=np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
                   keys=np.concatenate([c.keys for c in chunks]), values=np.concatenate([c.values for c in chunks]),
                   user_ids=np.concatenate([c.user_ids for c in chunks]),
                   dropped_pairs=sum(c.dropped_pairs for c in chunks))


def read_inputs(plan: Mapping[str, Any], path: str | Path) -> KeyValueInputs:
    """Read users' key-value pairs for the plan's runtime (see :data:`INPUT_DOC`).

    Returns
    -------
    KeyValueInputs
        Keys 0-based into the plan's domain.

    Raises
    ------
    InputDataError
        Unreadable file, missing columns, a key outside the domain, a value outside [-1, 1]
        (unless the plan clips), NaN, a repeated key.
    """
    return KeyValueInputs.join(list(iter_inputs(plan, path)))


def iter_inputs(plan: Mapping[str, Any], path: str | Path, *, skip_empty: bool = False,
                chunk_rows: int | None = None):
    """Users' key-value pairs streamed (CSV or Parquet, see :data:`INPUT_DOC`): an ``InputStream``
    of :class:`KeyValueInputs` chunks of at most ``chunk_rows`` users.

    Raises
    ------
    InputDataError
        As :func:`read_inputs`; rows with an empty key unless ``skip_empty``.
    """
    pr = plan["params"]
    clip = pr.get("values", "reject") == "clip"

    def to_users(chunk) -> KeyValueInputs:
        user_ids, indptr, keys, values, dropped = chunk
        bad = (values < -1) | (values > 1)
        if bad.any() and not clip:
            i = int(np.nonzero(bad)[0][0])
            user = user_ids[int(np.searchsorted(indptr, i, side="right") - 1)]
            raise InputDataError(f"{path}: value of user {user} must be in [-1, 1] (got {values[i]!r}); "
                                 "plan with values = \"clip\" to clip")
        return KeyValueInputs(indptr=indptr, keys=keys, values=values, user_ids=user_ids, dropped_pairs=dropped)

    stream = key_value_stream(path, plan["domain"]["labels"], int(pr["domain_size"]),
                              out_of_domain_keys=pr.get("out_of_domain_keys", "reject"), skip_empty=skip_empty,
                              chunk_rows=DEFAULT_CHUNK_ROWS if chunk_rows is None else chunk_rows)
    return stream.map(to_users)

"""Users' true inputs for ``ldpplan perturb`` and the reports files (PCKV)."""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ldpplan.mechanisms.pckv import KeyValueUsers

from ..data import load_key_value_data, map_key_value_data
from ..errors import InputDataError

__all__ = ["INPUT_DOC", "KeyValueInputs", "read_inputs"]

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
    pr = plan["params"]
    d = int(pr["domain_size"])
    data = load_key_value_data(path)
    indptr, keys, values, dropped = map_key_value_data(data, plan["domain"]["labels"], d,
                                                       out_of_domain_keys=pr.get("out_of_domain_keys", "reject"),
                                                       where=str(path))
    bad = (values < -1) | (values > 1)
    if bad.any() and pr.get("values", "reject") != "clip":
        i = int(np.nonzero(bad)[0][0])
        user = data.user_ids[int(np.searchsorted(indptr, i, side="right") - 1)]
        raise InputDataError(f"{path}: value of user {user} must be in [-1, 1] (got {values[i]!r}); "
                             "plan with values = \"clip\" to clip")
    return KeyValueInputs(indptr=indptr, keys=keys, values=values, user_ids=data.user_ids, dropped_pairs=dropped)

"""Users' true inputs for ``ldpplan perturb`` of a ULDP plan (uRR, uRAP, PUM)."""
from __future__ import annotations

import os
from typing import Any, Mapping

import numpy as np

from ..data import read_item_column
from ..errors import InputDataError

__all__ = ["read_inputs"]


def read_inputs(plan: Mapping[str, Any], path: str | os.PathLike):
    """Read the users' items: a CSV column ``item`` (a label of ``domain.labels``, or a 0-based
    index when the plan's labels are null), one row per user. A PUM plan also reads an optional
    column ``tag``: the name of one of ``params.tags`` when the item is one of the user's own
    private items under that semantic tag (PUM, eq. 19), empty otherwise.

    Returns
    -------
    ndarray of int64, shape (n,), or dict
        Item indices; for a PUM ``{"item": (n,) int64, "tag": (n,) int64 (-1: none)}``.

    Raises
    ------
    InputDataError
        Missing file or column, a value that is not a label/index/tag (naming the line and value).

    References
    ----------
    Murakami & Kawamoto, USENIX Security 2019, Sec. 5 (PUM).
    """
    labels, size = plan["domain"]["labels"], int(plan["domain"]["size"])
    if plan.get("mechanism") != "pum":
        return read_item_column(path, labels, size)
    tags = [str(t) for t in plan["params"].get("tags", [])]
    got = read_item_column(path, labels, size, extra=("tag",))
    tag_idx = np.full(got["item"].shape[0], -1, dtype=np.int64)
    for r, t in enumerate(got["tag"]):
        if t:
            if t not in tags:
                raise InputDataError(f"{path}: row {r + 2}: tag must be empty or one of {tags} (got {t[:40]!r})")
            tag_idx[r] = tags.index(t)
    return {"item": got["item"], "tag": tag_idx}

"""Single-item data for a simulation: the ``--data`` file (the GSS vocabulary data or an item CSV), or a
synthetic Zipf(1) sample. Shared by the families whose users hold one item (PIE, Hadamard response).
"""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..errors import InputDataError
from .chunked import concat_chunks
from .pie import pie_gss_items

__all__ = ["SingleItems", "read_single_items", "zipf_items"]


@dataclasses.dataclass(frozen=True)
class SingleItems:
    """Users' items read for a simulation.

    Attributes
    ----------
    items : ndarray of int, shape (n,)
        One item index per user.
    source : str
        What was read (for the report).
    labels : list of str or None
        The GSS joint categories when the file is the GSS vocabulary data (the caller compares them with
        the plan's ``domain.labels``); None for an item CSV read against the plan's domain.
    skipped_empty : int
        Rows skipped for an empty item (``--skip-empty``).
    """

    items: np.ndarray
    source: str
    labels: list[str] | None
    skipped_empty: int


def read_single_items(path: str | os.PathLike, stream: Callable[..., Any], *, skip_empty: bool = False) -> SingleItems:
    """The ``--data`` file of a single-item simulation.

    Parameters
    ----------
    path : path-like
        The GSS vocabulary CSV (columns ``vocab``, ``ageGroup``, ...: users are the respondents' joint
        categories) or an item CSV/Parquet file in the plan's domain.
    stream : callable
        The family's ``iter_inputs``-like reader ``stream(path, skip_empty=...) -> InputStream``.
    skip_empty : bool
        Skip (and count) rows with an empty item instead of refusing them.

    Raises
    ------
    InputDataError
        A missing file, or what the item reader refuses (naming the line and the value).
    """
    p = Path(path)
    if not p.is_file():
        raise InputDataError(f"--data: file must exist (got {str(path)!r})")
    with p.open(encoding="utf-8", errors="replace") as fh:
        header = fh.readline()
    if "vocab" in header and "ageGroup" in header:
        labels, index, dropped = pie_gss_items(p)
        return SingleItems(index, f"GSS ageGroup x educGroup x gender x nativeBorn ({index.size} respondents, "
                                  f"{dropped} dropped)", labels, 0)
    chunks = stream(p, skip_empty=skip_empty)
    items = concat_chunks(list(chunks))
    skipped = f"; {chunks.skipped_empty:,} rows with an empty item skipped" if chunks.skipped_empty else ""
    return SingleItems(items, f"{p.name} ({items.size} users{skipped})", None, int(chunks.skipped_empty))


def zipf_items(k: int, n: int, seed: int) -> np.ndarray:
    """``n`` synthetic users' items drawn from Zipf(1) over ``k`` items (frequency of item i ~ 1/(i+1)).

    The generator is ``numpy.random.default_rng([seed, 7])`` (the simulations' data stream).

    Returns
    -------
    ndarray of int64, shape (n,)
        Item indices in ``[0, k)``.
    """
    rng = np.random.default_rng([int(seed), 7])
    w = 1.0 / np.arange(1, k + 1)
    return rng.choice(k, size=n, p=w / w.sum())

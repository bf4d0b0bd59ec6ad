"""Provenance and consistency of aggregates (numpy and stdlib only): batches and count rules.

:class:`Batch` identifies one batch of reports counted in an ``Aggregate`` (its random
``batch_id`` and/or content digest); :class:`CountRule` is what a family's counts imply
about ``n``, declared by each runtime class as ``count_rule`` and checked by
``Aggregate.from_dict`` on every aggregate read from a file.
"""
from __future__ import annotations

import dataclasses
import itertools
import re
from typing import Any, Mapping, Sequence

import numpy as np

__all__ = ["Batch", "CountRule", "duplicate_message", "check_int", "count_array", "MAX_COUNT", "FINGERPRINT"]

_HEX_ID = re.compile(r"[0-9a-f]{32}")
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
FINGERPRINT = re.compile(r"[0-9a-f]{64}")
#: Largest ``n`` and count an aggregate holds: two of them add without overflowing int64.
MAX_COUNT = (1 << 62) - 1


def check_int(value: Any, field: str, low: int = 0, high: int = MAX_COUNT) -> int:
    """An int (not a bool) in ``[low, high]``, or ValueError naming ``field``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
        raise ValueError(f"{field}: must be an integer in [{low}, {high}] (got {str(value)[:40]!r})")
    return int(value)


@dataclasses.dataclass(frozen=True)
class Batch:
    """One batch of reports counted in an :class:`Aggregate` (e.g. one reports file).

    A batch is identified by its ``batch_id`` (a random 128-bit id written at perturb time)
    and/or its content ``digest``; two batches sharing either are the same reports.

    Attributes
    ----------
    batch_id : str or None
        32 lowercase hex digits (128 bits from :mod:`secrets`), or None (a file written
        without one: identified by its digest alone).
    digest : str or None
        ``"sha256:"`` and 64 lowercase hex digits of the batch's content (for a reports file:
        its bytes), or None.
    rows : int
        Reports in the batch.
    source : str
        Where the batch was read (a file name), for messages and provenance.
    """

    batch_id: str | None
    digest: str | None
    rows: int
    source: str = ""

    def __post_init__(self) -> None:
        if self.batch_id is not None and not (isinstance(self.batch_id, str) and _HEX_ID.fullmatch(self.batch_id)):
            raise ValueError(f"batch_id: must be 32 lowercase hex digits (got {str(self.batch_id)[:40]!r})")
        if self.digest is not None and not (isinstance(self.digest, str) and _DIGEST.fullmatch(self.digest)):
            raise ValueError(f"digest: must be 'sha256:' and 64 lowercase hex digits (got {str(self.digest)[:40]!r})")
        if self.batch_id is None and self.digest is None:
            raise ValueError("batch: needs a batch_id or a digest (got neither)")
        check_int(self.rows, "batch.rows")
        if not isinstance(self.source, str) or len(self.source) > 4096:
            raise ValueError("batch.source: must be a string of at most 4096 characters")

    @property
    def label(self) -> str:
        """The id shown in messages: the ``batch_id``, else the digest."""
        return self.batch_id or str(self.digest)

    def keys(self) -> tuple[str, ...]:
        """What identifies the batch (two batches sharing a key are the same reports)."""
        return tuple(k for k in (self.batch_id, self.digest) if k is not None)

    def to_dict(self) -> dict[str, Any]:
        """``{"batch_id", "digest", "rows", "source"}`` (JSON-ready)."""
        return {"batch_id": self.batch_id, "digest": self.digest, "rows": self.rows, "source": self.source}

    @classmethod
    def from_dict(cls, data: Any) -> "Batch":
        """Inverse of :meth:`to_dict` (ValueError naming the field on anything else)."""
        if not isinstance(data, Mapping) or set(data) != {"batch_id", "digest", "rows", "source"}:
            raise ValueError("batch: must be an object with exactly batch_id, digest, rows and source")
        return cls(data["batch_id"], data["digest"], data["rows"], data["source"])

    @staticmethod
    def find_duplicate(batches: Sequence["Batch"]) -> tuple["Batch", "Batch"] | None:
        """The first pair ``(earlier, later)`` of ``batches`` sharing a key, or None."""
        seen: dict[str, Batch] = {}
        for batch in batches:
            for key in batch.keys():
                if key in seen:
                    return seen[key], batch
            for key in batch.keys():
                seen[key] = batch
        return None


def duplicate_message(first: Batch, second: Batch) -> str:
    """One line naming a batch counted twice and both sources."""
    return (f"batch {second.label} is counted twice: in {first.source or '(unnamed)'} and in "
            f"{second.source or '(unnamed)'} (each batch of reports is counted once)")


def _exact_sum(arr: np.ndarray) -> int:
    """Exact sum of non-negative int64 entries (< 2**62 each, fewer than 2**32 of them)."""
    if not arr.size:
        return 0
    if int(arr.max()) * arr.size < 1 << 63:         # no int64 overflow possible: the plain sum
        return int(arr.sum(dtype=np.int64))
    a = arr.astype(np.uint64, copy=False).ravel()
    high = int((a >> np.uint64(32)).sum(dtype=np.uint64))
    return (high << 32) + int((a & np.uint64(0xFFFFFFFF)).sum(dtype=np.uint64))


@dataclasses.dataclass(frozen=True)
class CountRule:
    """What a family's counts imply about ``n`` (each runtime class declares one as ``count_rule``).

    Column groups name count arrays (of one shape); a group's columns absent from an
    aggregate are skipped (PUM's counts are its common mechanism's). Every rule column's
    entries are at most ``n``.

    Attributes
    ----------
    sums_to_n : tuple of tuple of str
        Groups whose entries together sum to exactly ``n`` (each report counted in exactly one
        entry, e.g. k-ary RR's ``y``).
    at_most_n : tuple of tuple of str
        Groups whose counts, entry by entry, sum to at most ``n`` (each report adds at most one
        to each entry, e.g. unary encodings' ``bit_counts``; PCKV-UE ``n1 + n2``).
    total_at_most_n : tuple of tuple of str
        Groups whose entries together sum to at most ``n`` (each report counted in at most one
        entry, e.g. PCKV-GRR ``n1 + n2`` over the unpadded keys).
    at_most_column : tuple of (tuple of str, str)
        ``(group, column)``: entry by entry the group's counts sum to at most ``column``'s.
    """

    sums_to_n: tuple[tuple[str, ...], ...] = ()
    at_most_n: tuple[tuple[str, ...], ...] = ()
    total_at_most_n: tuple[tuple[str, ...], ...] = ()
    at_most_column: tuple[tuple[tuple[str, ...], str], ...] = ()

    def check(self, n: int, counts: Mapping[str, np.ndarray]) -> None:
        """Raise ValueError naming the columns, the rule and the values when ``counts`` contradict ``n``."""
        def group(cols: tuple[str, ...]) -> tuple[str, list[np.ndarray]]:
            present = [c for c in cols if c in counts]
            return "+".join(present), [counts[c] for c in present]

        for column in {c for g in (*self.sums_to_n, *self.at_most_n, *self.total_at_most_n) for c in g} | \
                {c for g, col in self.at_most_column for c in (*g, col)}:
            if column in counts and counts[column].size and int(counts[column].max()) > n:
                raise ValueError(f"aggregate.counts.{column}: every count must be at most n = {n} "
                                 f"(got {int(counts[column].max())})")
        for cols in self.sums_to_n:
            name, arrays = group(cols)
            total = sum(_exact_sum(a) for a in arrays)
            if arrays and total != n:
                raise ValueError(f"aggregate.counts.{name}: must sum to n = {n} (each report is counted once; "
                                 f"got {total})")
        for cols in self.total_at_most_n:
            name, arrays = group(cols)
            total = sum(_exact_sum(a) for a in arrays)
            if arrays and total > n:
                raise ValueError(f"aggregate.counts.{name}: must sum to at most n = {n} (got {total})")
        for cols in self.at_most_n:
            name, arrays = group(cols)
            if len(arrays) > 1 and int(np.max(sum(arrays))) > n:
                raise ValueError(f"aggregate.counts.{name}: must be at most n = {n} at every entry "
                                 f"(got {int(np.max(sum(arrays)))})")
        for cols, bound in self.at_most_column:
            name, arrays = group(cols)
            if arrays and bound in counts and np.any(sum(arrays) > counts[bound]):
                raise ValueError(f"aggregate.counts.{name}: must be at most counts.{bound} at every entry")


def count_array(value: Any, field: str) -> np.ndarray:
    """A JSON count array: integers only (no booleans, floats or strings), rectangular."""
    try:
        arr = np.asarray(value)
    except ValueError:
        raise ValueError(f"{field}: must be a rectangular array of integer counts") from None
    if arr.dtype.kind not in "iu":
        raise ValueError(f"{field}: must be integer counts (got {arr.dtype.kind!r} values)")
    if isinstance(value, (list, tuple)) and arr.size:
        flat: Any = value
        for _ in range(arr.ndim - 1):
            flat = itertools.chain.from_iterable(flat)
        kinds = set(map(type, flat))    # C-level pass: about 0.3 s for 10^7 counts
        if bool in kinds or np.bool_ in kinds:
            raise ValueError(f"{field}: must be integer counts, not booleans")
    return arr

"""The client state of memoized mechanisms: permanent responses keyed by (user, value) (numpy + stdlib).

Design (written down, issue 22): a :class:`Memo` is an explicit, **append-only** store, not a
runtime object. Runtime objects (mechanisms, reports, aggregates, estimates) stay immutable;
the memo is the device's state, like a file it keeps. ``perturb(..., memo=memo)`` adds the
permanent responses of (user, value) pairs seen for the first time and returns only the
reports. An entry, once drawn, can never be replaced or removed through the API: that is the
privacy property (a re-drawn permanent response voids ``epsilon_perm``). The store holds

* ``keys``: int64, sorted, ``user * domain_size + value`` (users in ``[0, MAX_USER]``);
* ``responses``: the permanent responses in the same order, int64 values (L-GRR) or packed
  bits, uint8 of shape ``(entries, ceil(k/8))`` (unary encodings, little bit order);
* ``binding``: the plan fingerprint (64 hex digits) of the runtime that drew them, and the
  plan ``mechanism`` and ``domain_size``: a runtime refuses another plan's memo.

``to_bytes()`` / ``from_bytes()`` serialise it (format ``ldpplan-memo`` version 1: an 8-byte
magic, a 4-byte little-endian header length, a JSON header, the keys, the responses); the
reader checks the header, the sizes, that keys are strictly increasing and in range, values
in range and padding bits zero.
"""
from __future__ import annotations

import json
import re
import struct
from typing import Any

import numpy as np

__all__ = ["Memo", "MEMO_FORMAT", "MEMO_VERSION", "MAX_USER"]

MEMO_FORMAT = "ldpplan-memo"
MEMO_VERSION = 1
_MAGIC = b"LDPMEMO\x00"
#: Largest user id (user ids are integers in ``[0, MAX_USER]``).
MAX_USER = 2**40 - 1
_BINDING = re.compile(r"[0-9a-f]{64}")
_MAX_HEADER = 4096


def _width_bytes(kind: str, domain_size: int) -> int:
    return 0 if kind == "value" else (domain_size + 7) // 8


class Memo:
    """Permanent responses of one or many users, keyed by (user, value); append-only.

    Build one with the runtime (``mech.new_memo()``) or :meth:`from_bytes`; pass it to
    ``mech.perturb(data, rng=..., memo=memo, users=..., round=...)``.

    Parameters
    ----------
    binding : str
        The plan fingerprint (64 lowercase hex digits) of the runtime whose permanent responses
        this memo holds.
    mechanism : str
        The plan ``mechanism`` (``"l-grr"``, ``"l-sue"``, ...).
    domain_size : int
        ``k``.
    kind : {"value", "bits"}
        L-GRR stores one value per entry; unary encodings ``ceil(k/8)`` packed bytes.

    Attributes
    ----------
    entries : int
        Number of (user, value) pairs memoized (``len(memo)``).

    Raises
    ------
    ValueError
        A malformed binding, mechanism, domain size or kind.
    """

    __slots__ = ("binding", "mechanism", "domain_size", "kind", "_keys", "_responses")

    def __init__(self, binding: str, mechanism: str, domain_size: int, kind: str) -> None:
        if not (isinstance(binding, str) and _BINDING.fullmatch(binding)):
            raise ValueError(f"memo.binding: must be a plan fingerprint of 64 lowercase hex digits (got {binding!r:.80})")
        if not isinstance(mechanism, str) or not mechanism:
            raise ValueError(f"memo.mechanism: must be a non-empty string (got {mechanism!r:.40})")
        if isinstance(domain_size, bool) or not isinstance(domain_size, (int, np.integer)) or not 2 <= domain_size <= 2**24:
            raise ValueError(f"memo.domain_size: must be an integer in 2..2^24 (got {domain_size!r:.40})")
        if kind not in ("value", "bits"):
            raise ValueError(f"memo.kind: must be 'value' or 'bits' (got {kind!r:.40})")
        self.binding, self.mechanism, self.domain_size, self.kind = binding, mechanism, int(domain_size), kind
        width = _width_bytes(kind, self.domain_size)
        self._keys = np.zeros(0, dtype=np.int64)
        self._responses = np.zeros((0, width) if width else 0, dtype=np.uint8 if width else np.int64)

    def __len__(self) -> int:
        return int(self._keys.size)

    @property
    def entries(self) -> int:
        """Number of memoized (user, value) pairs."""
        return len(self)

    def __repr__(self) -> str:
        return (f"Memo(mechanism={self.mechanism!r}, domain_size={self.domain_size}, entries={len(self)}, "
                f"binding={self.binding[:12]!r}...)")

    # ------------------------------------------------------------------ lookups (runtime use)
    def keys_of(self, users: np.ndarray, values: np.ndarray) -> np.ndarray:
        """``user * domain_size + value`` (int64)."""
        return users.astype(np.int64) * self.domain_size + values.astype(np.int64)

    def lookup(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(found, index)`` of each key in the store (``index`` valid where ``found``)."""
        idx = np.searchsorted(self._keys, keys)
        found = np.zeros(keys.shape, dtype=bool)
        inside = idx < self._keys.size
        found[inside] = self._keys[idx[inside]] == keys[inside]
        return found, np.minimum(idx, max(self._keys.size - 1, 0))

    def responses_at(self, index: np.ndarray) -> np.ndarray:
        """The stored permanent responses at ``index`` (a copy)."""
        return self._responses[index].copy()

    def values_per_user(self, users: np.ndarray) -> np.ndarray:
        """Distinct values memoized for each of ``users`` (int64)."""
        lo = np.searchsorted(self._keys, users.astype(np.int64) * self.domain_size)
        hi = np.searchsorted(self._keys, (users.astype(np.int64) + 1) * self.domain_size)
        return (hi - lo).astype(np.int64)

    def _add(self, keys: np.ndarray, responses: np.ndarray) -> None:
        """Insert new entries (keys absent from the store and distinct); runtime use only."""
        if keys.size == 0:
            return
        all_keys = np.concatenate([self._keys, keys])
        order = np.argsort(all_keys, kind="stable")
        all_keys = all_keys[order]
        if np.any(all_keys[1:] == all_keys[:-1]):  # never replace a permanent response
            raise ValueError("memo: a (user, value) pair is already memoized; permanent responses are never redrawn")
        self._keys = all_keys
        self._responses = np.concatenate([self._responses, responses])[order]

    # ------------------------------------------------------------------ bytes
    def to_bytes(self) -> bytes:
        """Serialise (format ``ldpplan-memo`` version 1; see the module docstring)."""
        header = json.dumps({"format": MEMO_FORMAT, "version": MEMO_VERSION, "binding": self.binding,
                             "mechanism": self.mechanism, "domain_size": self.domain_size, "kind": self.kind,
                             "entries": len(self)}, sort_keys=True, separators=(",", ":")).encode()
        return b"".join([_MAGIC, struct.pack("<I", len(header)), header, self._keys.astype("<i8").tobytes(),
                         (self._responses.astype("<i8") if self.kind == "value" else self._responses).tobytes()])

    @classmethod
    def from_bytes(cls, data: bytes, *, binding: str | None = None) -> "Memo":
        """Read :meth:`to_bytes` output, checking everything an untrusted file may hold.

        Parameters
        ----------
        data : bytes
        binding : str, optional
            The plan fingerprint the memo must belong to (refused otherwise); the runtime's
            ``perturb`` checks it again.

        Raises
        ------
        ValueError
            One line naming the field and the rule: wrong magic, format or version, another
            plan's memo, sizes that do not match, keys not strictly increasing or out of
            range, values out of the domain, non-zero padding bits.
        """
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise ValueError(f"memo: must be bytes (got {type(data).__name__})")
        data = bytes(data)
        if data[:8] != _MAGIC or len(data) < 12:
            raise ValueError("memo: not an ldpplan memo (bad magic)")
        (size,) = struct.unpack("<I", data[8:12])
        if size > _MAX_HEADER or 12 + size > len(data):
            raise ValueError(f"memo.header: length {size} is out of range")
        try:
            head: Any = json.loads(data[12:12 + size])
        except ValueError:
            raise ValueError("memo.header: is not JSON") from None
        if not isinstance(head, dict) or head.get("format") != MEMO_FORMAT:
            raise ValueError(f"memo.format: must be {MEMO_FORMAT!r}")
        if head.get("version") != MEMO_VERSION:
            raise ValueError(f"memo.version: must be {MEMO_VERSION} (got {head.get('version')!r:.20})")
        memo = cls(head.get("binding"), head.get("mechanism"), head.get("domain_size"), head.get("kind"))
        if binding is not None and memo.binding != binding:
            raise ValueError(f"memo.binding: belongs to plan {memo.binding[:16]}..., not to {str(binding)[:16]}... "
                             "(a memo serves the plan that drew it)")
        entries = head.get("entries")
        if isinstance(entries, bool) or not isinstance(entries, int) or entries < 0:
            raise ValueError(f"memo.entries: must be an integer >= 0 (got {entries!r:.20})")
        width = _width_bytes(memo.kind, memo.domain_size)
        body = data[12 + size:]
        if len(body) != entries * (8 + (width or 8)):
            raise ValueError(f"memo: {len(body)} bytes of entries for {entries} entries (truncated or padded)")
        keys = np.frombuffer(body[:8 * entries], dtype="<i8").astype(np.int64)
        rest = body[8 * entries:]
        if entries and (np.any(np.diff(keys) <= 0) or keys[0] < 0 or keys[-1] > (MAX_USER + 1) * memo.domain_size - 1):
            raise ValueError("memo.keys: must be strictly increasing and in range")
        if memo.kind == "value":
            resp = np.frombuffer(rest, dtype="<i8").astype(np.int64)
            if resp.size and (resp.min() < 0 or resp.max() >= memo.domain_size):
                raise ValueError(f"memo.responses: values must be in [0, {memo.domain_size})")
        else:
            resp = np.frombuffer(rest, dtype=np.uint8).reshape(entries, width).copy()
            pad = width * 8 - memo.domain_size
            if pad and entries and np.any(resp[:, -1] >> (8 - pad)):
                raise ValueError("memo.responses: padding bits must be zero")
        memo._keys, memo._responses = keys, resp
        return memo

"""The client state of memoized mechanisms: permanent responses keyed by (user, value) (numpy + stdlib).

Design (issues 22 and 26): a :class:`Memo` is an explicit, **append-only** store, not a runtime
object. Runtime objects (mechanisms, reports, aggregates, estimates) stay immutable; the memo is
the device's state, like a file it keeps. ``perturb(..., memo=memo)`` adds the permanent responses
of (user, value) pairs seen for the first time, records the round each user reported in, and
returns only the reports. An entry, once drawn, can never be replaced or removed through the API:
that is the privacy property (a re-drawn permanent response voids ``epsilon_perm``). The store holds

* ``keys``: int64, sorted, ``user * domain_size + value`` (users in ``[0, MAX_USER]``, values in
  ``[0, domain_size)`` with ``domain_size <= MAX_MEMO_DOMAIN``, so a key is below 2^56: no id the
  docs allow overflows it);
* ``responses``: the permanent responses in the same order, int64 values (L-GRR) or packed
  bits, uint8 of shape ``(entries, ceil(k/8))`` (unary encodings, little bit order);
* ``last``: per user (the distinct users of ``keys``, ascending) the last round that user
  reported in; ``last_round`` is their maximum (None before the first report). **Rounds go forward
  only**: a call for round ``r`` is refused when ``r < last_round`` (an older round replayed, or
  the memo restored from an older copy and asked for a round it had served) and a user who already
  reported in round ``r`` is refused (one report per user and round);
* ``binding``: the plan fingerprint (64 hex digits) of the runtime that drew them, the plan
  ``mechanism``, ``domain_size`` and ``max_values`` (distinct values a user may hold): a runtime
  refuses another plan's memo.

``to_bytes()`` / ``from_bytes()`` / ``from_file()`` serialise it (format ``ldpplan-memo`` version 2:
an 8-byte magic, a 4-byte little-endian header length, a JSON header, the keys, the responses,
the per-user last rounds, and a SHA-256 of everything before it). The reader checks the magic,
header and checksum, that the size is exactly what the header's ``entries`` and ``users`` give
(``users <= entries <= users x max_values``), keys strictly increasing and in range, values in
range, padding bits zero, every user holding at most ``max_values`` values. What it cannot detect
(docs/SECURITY.md): a memo replaced by an older, intact copy of itself, then asked for a round
after every round that copy served, looks exactly like an honest memo; the checksum detects
damage, not a deliberate rewrite (anyone who can write the file can recompute it).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import struct
from typing import Any

import numpy as np

__all__ = ["Memo", "MEMO_FORMAT", "MEMO_VERSION", "MAX_USER", "MAX_MEMO_DOMAIN", "MAX_MEMO_BYTES"]

MEMO_FORMAT = "ldpplan-memo"
MEMO_VERSION = 2
_MAGIC = b"LDPMEMO\x00"
#: Largest user id (user ids are integers in ``[0, MAX_USER]``).
MAX_USER = 2**40 - 1
#: Largest ``domain_size`` of a memo (the longitudinal family's ``domain.size`` cap, as ``verify``).
MAX_MEMO_DOMAIN = 2**16
#: Largest memo file :meth:`Memo.from_file` reads by default (bytes).
MAX_MEMO_BYTES = 1 << 32
_BINDING = re.compile(r"[0-9a-f]{64}")
_MAX_HEADER = 4096
_DIGEST = 32
assert (MAX_USER + 1) * MAX_MEMO_DOMAIN <= 2**62  # keys never overflow int64


def _width_bytes(kind: str, domain_size: int) -> int:
    return 0 if kind == "value" else (domain_size + 7) // 8


def _field(head: dict[str, Any], key: str) -> Any:
    """A header field as read from JSON (``None`` when absent); ``Memo``'s constructor checks its type."""
    return head.get(key)


def _count(value: Any, field: str, low: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"memo.{field}: must be an integer >= {low} (got {value!r:.20})")
    return int(value)


class Memo:
    """Permanent responses of one or many users, keyed by (user, value); append-only; rounds go forward.

    Build one with the runtime (``mech.new_memo()``), :meth:`from_bytes` or :meth:`from_file`;
    pass it to ``mech.perturb(data, rng=..., memo=memo, users=..., round=...)``.

    Parameters
    ----------
    binding : str
        The plan fingerprint (64 lowercase hex digits) of the runtime whose permanent responses
        this memo holds.
    mechanism : str
        The plan ``mechanism`` (``"l-grr"``, ``"l-sue"``, ...).
    domain_size : int
        ``k``, in ``2 .. MAX_MEMO_DOMAIN``.
    kind : {"value", "bits"}
        L-GRR stores one value per entry; unary encodings ``ceil(k/8)`` packed bytes.
    max_values : int, optional
        Distinct values a user may hold (the plan's limit; default 1).

    Attributes
    ----------
    entries : int
        Number of (user, value) pairs memoized (``len(memo)``).
    users : int
        Number of users who reported.
    last_round : int or None
        The last round served (None before the first report).

    Raises
    ------
    ValueError
        A malformed binding, mechanism, domain size, kind or ``max_values``.

    References
    ----------
    Erlingsson, Pihur, Korolova (CCS 2014), RAPPOR, Sec. 3: the permanent randomized response is
    memoized per value and reused for the client's lifetime; a lost memo voids the longitudinal
    guarantee. Arcolezi et al. (2022), L-GRR and L-UE, the same memoization.
    """

    __slots__ = ("binding", "mechanism", "domain_size", "kind", "max_values", "_keys", "_responses", "_users",
                 "_last")
    #: Largest user id (:data:`MAX_USER`) and default largest file :meth:`from_file` reads (:data:`MAX_MEMO_BYTES`).
    MAX_USER, MAX_BYTES = MAX_USER, MAX_MEMO_BYTES

    def __init__(self, binding: str, mechanism: str, domain_size: int, kind: str, max_values: int = 1) -> None:
        if not (isinstance(binding, str) and _BINDING.fullmatch(binding)):
            raise ValueError(f"memo.binding: must be a plan fingerprint of 64 lowercase hex digits (got {binding!r:.80})")
        if not isinstance(mechanism, str) or not mechanism:
            raise ValueError(f"memo.mechanism: must be a non-empty string (got {mechanism!r:.40})")
        if isinstance(domain_size, bool) or not isinstance(domain_size, (int, np.integer)) \
                or not 2 <= domain_size <= MAX_MEMO_DOMAIN:
            raise ValueError(f"memo.domain_size: must be an integer in 2..2^16 (got {domain_size!r:.40})")
        if kind not in ("value", "bits"):
            raise ValueError(f"memo.kind: must be 'value' or 'bits' (got {kind!r:.40})")
        self.binding, self.mechanism, self.domain_size, self.kind = binding, mechanism, int(domain_size), kind
        self.max_values = _count(max_values, "max_values", low=1)
        width = _width_bytes(kind, self.domain_size)
        self._keys = np.zeros(0, dtype=np.int64)
        self._responses = np.zeros((0, width) if width else 0, dtype=np.uint8 if width else np.int64)
        self._users = np.zeros(0, dtype=np.int64)
        self._last = np.zeros(0, dtype=np.int64)

    def __len__(self) -> int:
        return int(self._keys.size)

    @property
    def entries(self) -> int:
        """Number of memoized (user, value) pairs."""
        return len(self)

    @property
    def users(self) -> int:
        """Number of users who reported."""
        return int(self._users.size)

    @property
    def last_round(self) -> int | None:
        """The last round served (None before the first report)."""
        return int(self._last.max()) if self._last.size else None

    def __repr__(self) -> str:
        return (f"Memo(mechanism={self.mechanism!r}, domain_size={self.domain_size}, entries={len(self)}, "
                f"users={self.users}, last_round={self.last_round}, binding={self.binding[:12]!r}...)")

    # ------------------------------------------------------------------ lookups (runtime use)
    def keys_of(self, users: np.ndarray, values: np.ndarray) -> np.ndarray:
        """``user * domain_size + value`` (int64; below 2^56 for users in ``[0, MAX_USER]``)."""
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

    def check_round(self, users: np.ndarray, round: int) -> None:
        """Refuse a round before the last one served, and a user who already reported in ``round``.

        Raises
        ------
        ValueError
            ``round < last_round`` (rounds go forward only: a replayed round or a memo restored
            from an older copy), a user repeated in ``users``, or a user whose last report is
            at ``round`` (one report per user and round).
        """
        last = self.last_round
        if last is not None and round < last:
            raise ValueError(f"round: {round} is before the memo's last round {last}; rounds go forward only (a "
                             "replayed round, or a memo restored from an older copy)")
        ordered = np.sort(users.astype(np.int64))
        twice = ordered[1:][ordered[1:] == ordered[:-1]]
        if twice.size:
            raise ValueError(f"users: user {int(twice[0])} appears twice in round {round}; one report per user "
                             "and round")
        idx = np.searchsorted(self._users, users)
        inside = idx < self._users.size
        hit = np.zeros(users.shape, dtype=bool)
        hit[inside] = (self._users[idx[inside]] == users[inside]) & (self._last[idx[inside]] >= round)
        if hit.any():
            raise ValueError(f"users: user {int(users[np.argmax(hit)])} already reported in round {round} (the "
                             "memo records it); one report per user and round")

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

    def _served(self, users: np.ndarray, round: int) -> None:
        """Record that ``users`` (distinct, checked by :meth:`check_round`) reported in ``round``."""
        idx = np.minimum(np.searchsorted(self._users, users), max(self._users.size - 1, 0))
        if self._users.size and np.array_equal(self._users[idx], users):  # every user known: update in place
            last = self._last.copy()
            last[idx] = int(round)
            self._last = last
            return
        merged = np.union1d(self._users, users)
        last = np.full(merged.size, -1, dtype=np.int64)
        last[np.searchsorted(merged, self._users)] = self._last
        last[np.searchsorted(merged, users)] = int(round)
        self._users, self._last = merged, last

    def replayed(self) -> "Memo":
        """A copy holding the same permanent responses and no round served.

        For simulations and audits that report one value more often than a plan has rounds (the
        averaging attack of ``ldpplan audit``): the permanent responses are kept, so the
        reports still reveal at most ``epsilon_perm`` per value. Never on a device: there the
        round record is what refuses a replayed round.
        """
        copy = Memo(self.binding, self.mechanism, self.domain_size, self.kind, self.max_values)
        copy._keys, copy._responses = self._keys.copy(), self._responses.copy()
        return copy

    # ------------------------------------------------------------------ bytes
    def to_bytes(self) -> bytes:
        """Serialise (format ``ldpplan-memo`` version 2; see the module docstring)."""
        head = {"format": MEMO_FORMAT, "version": MEMO_VERSION, "binding": self.binding, "mechanism": self.mechanism,
                "domain_size": self.domain_size, "kind": self.kind, "max_values": self.max_values,
                "entries": len(self), "users": self.users}
        header = json.dumps(head, sort_keys=True, separators=(",", ":")).encode()
        body = b"".join([_MAGIC, struct.pack("<I", len(header)), header, self._keys.astype("<i8").tobytes(),
                         (self._responses.astype("<i8") if self.kind == "value" else self._responses).tobytes(),
                         self._last.astype("<i8").tobytes()])
        return body + hashlib.sha256(body).digest()

    @classmethod
    def _header(cls, prefix: bytes, binding: str | None) -> tuple["Memo", int, int, int]:
        """The memo (empty) a header describes, its header end, entries, users; checks the sizes' rules."""
        if prefix[:8] != _MAGIC or len(prefix) < 12:
            raise ValueError("memo: not an ldpplan memo (bad magic)")
        (size,) = struct.unpack("<I", prefix[8:12])
        if size > _MAX_HEADER or 12 + size > len(prefix):
            raise ValueError(f"memo.header: length {size} is out of range (truncated?)")
        try:
            head: Any = json.loads(prefix[12:12 + size])
        except ValueError:
            raise ValueError("memo.header: is not JSON") from None
        if not isinstance(head, dict) or head.get("format") != MEMO_FORMAT:
            raise ValueError(f"memo.format: must be {MEMO_FORMAT!r}")
        extra = sorted(set(head) - {"format", "version", "binding", "mechanism", "domain_size", "kind", "max_values",
                                    "entries", "users"})
        if extra:
            raise ValueError(f"memo.header: unknown key {extra[0]!r:.40} (the format has no such field)")
        if head.get("version") != MEMO_VERSION:
            raise ValueError(f"memo.version: must be {MEMO_VERSION} (got {head.get('version')!r:.20}; version 1 "
                             "memos have no checksum and no round record)")
        memo = cls(_field(head, "binding"), _field(head, "mechanism"), _field(head, "domain_size"),
                   _field(head, "kind"), _field(head, "max_values"))
        if binding is not None and memo.binding != binding:
            raise ValueError(f"memo.binding: belongs to plan {memo.binding[:16]}..., not to {str(binding)[:16]}... "
                             "(a memo serves the plan that drew it)")
        entries, users = _count(head.get("entries"), "entries"), _count(head.get("users"), "users")
        if not users <= entries <= users * memo.max_values:
            raise ValueError(f"memo.entries: {entries} entries for {users} users; must be in users .. users x "
                             f"max_values = {users * memo.max_values}")
        return memo, 12 + size, entries, users

    def _size(self, start: int, entries: int, users: int) -> int:
        return start + entries * (8 + (_width_bytes(self.kind, self.domain_size) or 8)) + 8 * users + _DIGEST

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
            plan's memo, a size other than the header gives (truncated or padded), a checksum
            that does not match (corrupted), keys not strictly increasing or out of range,
            values out of the domain, non-zero padding bits, a user over ``max_values``.
        """
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise ValueError(f"memo: must be bytes (got {type(data).__name__})")
        data = bytes(data)
        memo, start, entries, users = cls._header(data[:12 + _MAX_HEADER], binding)
        want = memo._size(start, entries, users)
        if len(data) != want:
            raise ValueError(f"memo: {len(data)} bytes where the header gives {want} (truncated or padded)")
        if hashlib.sha256(data[:-_DIGEST]).digest() != data[-_DIGEST:]:
            raise ValueError("memo.checksum: the SHA-256 of the content does not match (corrupted or edited)")
        memo._parse(data[start:-_DIGEST], entries, users)
        return memo

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], *, binding: str | None = None,
                  max_bytes: int = MAX_MEMO_BYTES) -> "Memo":
        """Read a memo file: a regular file of at most ``max_bytes``, sized as its header says, then checked.

        Nothing larger than the header's stated size is ever read (``stat`` first), so a device
        or a huge file (``/dev/zero``) is refused without reading it.

        Raises
        ------
        ValueError
            Not a regular file, over ``max_bytes``, a size other than the header gives, or
            anything :meth:`from_bytes` refuses.
        OSError
            The file cannot be opened or read.
        """
        if not stat.S_ISREG(os.stat(path).st_mode):  # before open: opening a FIFO would block
            raise ValueError("memo: not a regular file (a memo is a file the device keeps)")
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise ValueError("memo: not a regular file (a memo is a file the device keeps)")
            if st.st_size > max_bytes:
                raise ValueError(f"memo: {st.st_size:,} bytes is over the limit of {max_bytes:,}")
            prefix = fh.read(12 + _MAX_HEADER)
            memo, start, entries, users = cls._header(prefix, binding)
            want = memo._size(start, entries, users)
            if st.st_size != want:
                raise ValueError(f"memo: {st.st_size:,} bytes where the header gives {want:,} for {entries:,} "
                                 f"entries of {users:,} users (truncated or padded)")
            data = prefix + fh.read(max(1, want - len(prefix) + 1))  # one byte more: a file that grew is refused
        return cls.from_bytes(data, binding=binding)

    def _parse(self, body: bytes, entries: int, users: int) -> None:
        width = _width_bytes(self.kind, self.domain_size)
        keys = np.frombuffer(body[:8 * entries], dtype="<i8").astype(np.int64)
        rest, tail = body[8 * entries:len(body) - 8 * users], body[len(body) - 8 * users:]
        if entries and (np.any(np.diff(keys) <= 0) or keys[0] < 0 or keys[-1] > (MAX_USER + 1) * self.domain_size - 1):
            raise ValueError("memo.keys: must be strictly increasing and in range")
        resp: np.ndarray
        if self.kind == "value":
            resp = np.frombuffer(rest, dtype="<i8").astype(np.int64)
            if resp.size and (resp.min() < 0 or resp.max() >= self.domain_size):
                raise ValueError(f"memo.responses: values must be in [0, {self.domain_size})")
        else:
            resp = np.frombuffer(rest, dtype=np.uint8).reshape(entries, width).copy()
            pad = width * 8 - self.domain_size
            if pad and entries and np.any(resp[:, -1] >> (8 - pad)):
                raise ValueError("memo.responses: padding bits must be zero")
        owners, per_user = np.unique(keys // self.domain_size, return_counts=True)
        if owners.size != users:
            raise ValueError(f"memo.users: the keys hold {owners.size} users, the header {users}")
        if per_user.size and per_user.max() > self.max_values:
            raise ValueError(f"memo.keys: a user holds {int(per_user.max())} values, over max_values = "
                             f"{self.max_values}")
        last = np.frombuffer(tail, dtype="<i8").astype(np.int64)
        if last.size and last.min() < 0:
            raise ValueError("memo.last: rounds must be >= 0")
        self._keys, self._responses, self._users, self._last = keys, resp, owners, last

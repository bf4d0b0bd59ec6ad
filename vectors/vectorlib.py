"""Record, replay and check the language-neutral test vectors (a dev tool, not installed).

A vector pins one plan, its inputs, the exact random bytes each ``perturb`` call consumed and
the reports, aggregate and estimate the Python runtime produced from them (format described in
``vectors/README.md``; the byte procedure in ``docs/REPORTS.md``, "Sampling procedure").

The runtime samples from a :class:`numpy.random.Generator` only. Recording and replaying go
through ``randomgen.UserBitGenerator``, whose ``next_raw`` is a Python callable: the recorder
forwards 64-bit words of a seeded PCG64 and keeps them, the replayer hands back the stored
words in order. Every runtime draw takes whole 64-bit words (``uniform_words``), so the
recorded words, written little-endian, are exactly the byte stream the procedure consumes.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ldpplan.mechanisms import Aggregate, Reports, load, plan_fingerprint

FORMAT = "ldpplan-vector/1"
HERE = Path(__file__).resolve().parent
WORD_BYTES = 8


class WordStream:
    """A Generator over recorded (``source`` given) or replayed (``data`` given) 64-bit words.

    ``randomgen`` ignores exceptions raised in ``next_raw``: running past the replayed words
    returns 0 and counts an ``overrun`` instead, which :func:`replay_call` turns into an error.
    """

    def __init__(self, *, data: bytes | None = None, source: np.random.Generator | None = None,
                 prefix: list[int] | None = None) -> None:
        from randomgen import UserBitGenerator

        if (data is None) == (source is None):
            raise ValueError("give exactly one of data (replay) and source (record)")
        if data is not None and len(data) % WORD_BYTES:
            raise ValueError(f"random bytes: length {len(data)} is not a multiple of 8")
        self._words = [] if data is None else [int(w) for w in np.frombuffer(data, dtype="<u8")]
        self._source, self.position, self.overrun = source, 0, 0
        self._prefix = list(prefix or [])  # recording: words handed out before the source's (edge cases)
        self.generator = np.random.Generator(UserBitGenerator(self._next_raw, 64))

    def _next_raw(self, _voidp) -> int:
        if self._source is not None:
            word = self._prefix.pop(0) if self._prefix else \
                int(self._source.integers(0, 2**64 - 1, dtype=np.uint64, endpoint=True))
            self._words.append(word)
            return word
        if self.position >= len(self._words):
            self.overrun += 1
            return 0
        self.position += 1
        return self._words[self.position - 1]

    def consumed(self) -> bytes:
        """The words drawn so far, little-endian, as bytes."""
        used = self._words if self._source is not None else self._words[: self.position]
        return np.asarray(used, dtype="<u8").tobytes()

    def exhausted(self) -> bool:
        return self.overrun == 0 and self.position == len(self._words)


# ------------------------------------------------------------------ JSON encodings
def encode_columns(reports: Reports) -> dict[str, Any]:
    """1-D integer columns as lists; 2-D uint8 columns (packed bits) as one hex string per row."""
    out: dict[str, Any] = {}
    for name, col in reports.to_arrays().items():
        col = np.asarray(col)
        if col.ndim == 1:
            out[name] = [int(v) for v in col]
        elif col.dtype == np.uint8:
            out[name] = [bytes(row).hex() for row in col]
        else:
            raise ValueError(f"column {name}: unsupported {col.dtype} {col.shape}")
    return out


def decode_columns(columns: dict[str, Any], like: Reports) -> dict[str, np.ndarray]:
    """The inverse of :func:`encode_columns`, with the dtypes of ``like``'s columns."""
    arrays = like.to_arrays()
    out = {}
    for name, values in columns.items():
        ref = np.asarray(arrays[name])
        if ref.ndim == 1:
            out[name] = np.asarray(values, dtype=ref.dtype)
        else:
            out[name] = np.array([list(bytes.fromhex(v)) for v in values], dtype=np.uint8).reshape(len(values), -1)
    return out


def memo_entries(memo) -> list[dict[str, Any]]:
    """A memo's permanent responses, sorted by (user, value): L-GRR a value, unary a hex row."""
    keys, responses = memo._keys, memo._responses  # a dev tool: read the append-only arrays
    out = []
    for key, response in zip(keys.tolist(), responses):
        user, value = divmod(int(key), memo.domain_size)
        resp = int(response) if np.ndim(response) == 0 else bytes(np.asarray(response, dtype=np.uint8)).hex()
        out.append({"user": user, "value": value, "permanent": resp})
    return sorted(out, key=lambda e: (e["user"], e["value"]))


def _data(mech, inputs: dict[str, Any]):
    """The ``perturb`` data of a call's ``inputs`` (see vectors/README.md)."""
    if "items" in inputs:
        return [np.asarray(s, dtype=np.int64) for s in inputs["items"]] if mech.mechanism == "idue-ps" \
            else {"item": np.asarray(inputs["items"], dtype=np.int64),
                  "tag": np.asarray(inputs["tags"], dtype=np.int64)} if "tags" in inputs \
            else np.asarray(inputs["items"], dtype=np.int64)
    if "numbers" in inputs:  # numeric plans: values in user units (floats)
        return np.asarray(inputs["numbers"], dtype=np.float64)
    if "pairs" in inputs:
        return [(np.asarray([k for k, _ in user], dtype=np.int64), np.asarray([v for _, v in user], dtype=np.float64))
                for user in inputs["pairs"]]
    return np.asarray(inputs["values"], dtype=np.int64)


def run_call(mech, inputs: dict[str, Any], streams: dict[str, WordStream], memo=None) -> Reports:
    """One ``perturb`` call of a vector on the given streams."""
    data = _data(mech, inputs)
    if mech.mechanism == "glh":
        return mech.perturb_streams(data, seed_rng=streams["seeds"].generator, coin_rng=streams["coins"].generator)
    if memo is not None:
        return mech.perturb(data, streams["coins"].generator, memo=memo,
                            users=np.asarray(inputs["users"], dtype=np.int64), round=int(inputs["round"]))
    return mech.perturb(data, streams["coins"].generator)


def stream_names(mechanism: str) -> tuple[str, ...]:
    """GLH draws the published hash seeds and the coins from two independent streams."""
    return ("seeds", "coins") if mechanism == "glh" else ("coins",)


def probe_indices(inputs: list[dict[str, Any]], size: int, first: int = 16, most: int = 64) -> list[int]:
    """Where a vector records the estimate: the first ``first`` items and every item in the inputs."""
    found: set[int] = set(range(min(first, size)))
    for call in inputs:
        for key in ("items", "values"):
            for v in call.get(key, []):
                found.update(int(x) for x in (v if isinstance(v, list) else [v]))
        for user in call.get("pairs", []):
            found.update(int(k) for k, _ in user)
    return sorted(i for i in found if 0 <= i < size)[:most]


def aggregate_json(agg: Aggregate) -> dict[str, Any]:
    """Every count array as its shape and its non-zero entries ``[flat index, count]`` (row-major)."""
    counts = {}
    for name in sorted(agg.counts):
        arr = np.asarray(agg.counts[name], dtype=np.int64)
        flat = arr.reshape(-1)
        counts[name] = {"shape": list(arr.shape), "nonzero": [[int(i), int(flat[i])] for i in np.flatnonzero(flat)]}
    return {"mechanism": agg.mechanism, "n": int(agg.n), "counts": counts}


def estimate_json(estimate, index: list[int]) -> dict[str, Any]:
    """The estimate's method, ``n``, size and its arrays at ``index`` (floats as JSON numbers, shortest repr)."""
    def pick(arr):
        return None if arr is None else [float(np.asarray(arr)[i]) for i in index]
    return {"method": estimate.method, "n": int(estimate.n), "size": int(np.asarray(estimate.frequency).shape[0]),
            "index": index, "frequency": pick(estimate.frequency), "std_error": pick(estimate.std_error),
            "mean": pick(estimate.mean)}


#: above this domain size a k-RR / GLH vector records the support counts and the estimate at its
#: probe items only (``item_support`` / ``estimate_items``), as ``ldpplan estimate --items`` does
ITEM_DOMAIN = 2**24


def finish(mech, reports: list[Reports], inputs: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The aggregate of all calls' reports (summed) and its estimate (the last round for longitudinal plans)."""
    if getattr(mech, "domain_size", 0) > ITEM_DOMAIN and hasattr(mech, "estimate_items"):
        index = probe_indices(inputs, int(mech.domain_size))
        support = sum(mech.item_support(rep, index) for rep in reports)
        estimate = mech.estimate_items(reports, index)
        aggregate = {"mechanism": mech.mechanism, "n": int(sum(len(rep) for rep in reports)), "items": index,
                     "support": [int(c) for c in support]}
        est = estimate_json(estimate, list(range(len(index))))
        est["index"], est["size"] = index, int(mech.domain_size)
        return aggregate, est
    total = None
    for rep in reports:
        agg = mech.aggregate(rep)
        total = agg if total is None else total + agg
    estimate = mech.estimate(total)
    return aggregate_json(total), estimate_json(estimate, probe_indices(inputs, int(np.asarray(estimate.frequency).size)))


def load_vector(path: Path) -> dict[str, Any]:
    return json.loads(Path(path).read_text())


def replay(vector: dict[str, Any]) -> dict[str, Any]:
    """Run a vector's calls on its recorded bytes; return what the runtime produced (same keys).

    Raises
    ------
    ValueError
        A call that does not consume its recorded bytes exactly (too few or too many).
    """
    plan = vector["plan"]
    if plan_fingerprint(plan) != vector["plan_fingerprint"]:
        raise ValueError("plan_fingerprint does not match the plan")
    mech = load(plan, fingerprint=vector["plan_fingerprint"])
    memo = mech.new_memo() if hasattr(mech, "new_memo") else None
    calls, reports = [], []
    for call in vector["calls"]:
        streams = {name: WordStream(data=bytes.fromhex(call["random"][name])) for name in stream_names(mech.mechanism)}
        rep = run_call(mech, call["inputs"], streams, memo)
        for name, stream in streams.items():
            if not stream.exhausted():
                raise ValueError(f"call {len(calls)}: stream {name} consumed {stream.position} of "
                                 f"{len(stream._words)} words (overrun {stream.overrun})")
        reports.append(rep)
        out = {"reports": encode_columns(rep)}
        if memo is not None:
            out["memo_after"] = memo_entries(memo)
        calls.append(out)
    aggregate, estimate = finish(mech, reports, [c["inputs"] for c in vector["calls"]])
    return {"calls": calls, "aggregate": aggregate, "estimate": estimate}


def rebuild_reports(mechanism: str, columns: dict[str, Any], like: Reports) -> Reports:
    return Reports.from_arrays(mechanism, decode_columns(columns, like))


__all__ = ["FORMAT", "WordStream", "encode_columns", "decode_columns", "memo_entries", "run_call", "stream_names",
           "finish", "probe_indices", "aggregate_json", "estimate_json", "load_vector", "replay", "rebuild_reports", "Aggregate"]

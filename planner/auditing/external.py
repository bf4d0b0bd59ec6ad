"""Audit an implementation in any language: a runtime that is an external program.

The protocol (``docs/AUDIT.md``): for every batch of inputs the audit runs

``CMD... PLAN SEED INPUT OUTPUT`` (memoized plans: ``CMD... PLAN SEED INPUT OUTPUT MEMO``)

(the command's own words, then four or five arguments): ``PLAN`` the plan file the program claims
to implement, ``SEED`` an integer in ``[0, 2^53)`` for its generator (an audit is a reproducible
simulation; a client drawing from a secure generator ignores it), ``INPUT`` a JSON-lines file with
one user per line, ``OUTPUT`` the path where the program writes one report per line, in input
order, with the plan's report columns (``docs/REPORTS.md``): a 1-D column as a JSON integer, a
2-D column (packed ``bits``, ``nonzero``, ``negative``) as a JSON array of its bytes. A user's
line is, by family:

* ``{"item": i}`` (RR, GLH, IDUE, uRR, uRAP, Hadamard; ``i`` the 0-based item index);
* ``{"items": [i, ...]}`` (IDUE-PS: an item set);
* ``{"keys": [k, ...], "values": [v, ...]}`` (PCKV: key-value pairs, ``v`` in [-1, 1]);
* ``{"item": i, "tag": t}`` (PUM: ``t`` the private-item tag index, ``-1`` for none);
* ``{"record": [x_0, ..., x_{d-1}]}`` (records: one value index per attribute);
* ``{"user": u, "round": t, "item": i}`` (longitudinal, memoized plans: ``u`` the user id, ``t``
  the collection round in ``[0, guarantee.rounds)``, ``i`` the value).

**Memoized plans.** ``MEMO`` is a directory that holds one memo (one population of devices): it is
empty when the audit starts a new memo and passed again, with whatever the program left in it,
for every later batch of that memo. The program keeps its permanent responses there, keyed by
user and value, and must re-randomize the stored one when a (user, value) comes back; its
reports carry the ``round`` of their input line. The audit removes the directory when done.

Exit status 0 means success; anything else is an error of the program (the audit stops, exit 2).
What the program prints is checked against the plan's report format, read from the plan's own
runtime (:mod:`._external_reports`: columns, dtypes, shapes, output domain, exact integers, the
round), and refused with exit 2 naming the line, the column and the value; its output is read as a
stream with bounds on bytes per line and in all; each run is bounded in time, output and chatter,
and the program's whole process group is ended when the run is over (:mod:`._external_process`).
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import weakref
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from ..errors import InputDataError
from ._external_process import ProgramLimits, run_program
from ._external_reports import ReportFormat, check_domain, decode_reports
from ...mechanisms import load, Reports

__all__ = ["ExternalRuntime", "ExternalMemo", "encode_inputs", "input_lines", "decode_reports", "ReportFormat",
           "TIMEOUT"]

#: Seconds one run of the program may take (default).
TIMEOUT = 600.0
_WRITE_LINES = 1 << 14


def input_lines(data: Any, users: Any = None, round: int | None = None) -> Iterator[str]:
    """The JSON lines of ``data`` as the audit builds it, one user per line (a generator).

    Parameters
    ----------
    data : ndarray, (indptr, indices), KeyValueUsers or dict
        The runtime's ``perturb`` input: item indices, IDUE-PS item sets (CSR), PCKV key-value
        users, PUM items and tags.
    users : array_like of int, shape (n,), optional
        Memoized plans: the user ids (each line then holds ``user``, ``round`` and ``item``).
    round : int, optional
        Memoized plans: the collection round.
    """
    if users is not None:
        if round is None:
            raise ValueError("round: memoized plans need the collection round")
        items = np.asarray(data, dtype=np.int64)
        for u, i in zip(np.asarray(users, dtype=np.int64).tolist(), items.tolist()):
            yield f'{{"user": {u}, "round": {int(round)}, "item": {i}}}'
        return
    if isinstance(data, tuple) and len(data) == 2:  # IDUE-PS: CSR (indptr, indices)
        indptr, indices = (np.asarray(a, dtype=np.int64) for a in data)
        for u in range(indptr.size - 1):
            yield json.dumps({"items": indices[indptr[u]:indptr[u + 1]].tolist()})
    elif hasattr(data, "indptr") and hasattr(data, "keys") and hasattr(data, "values"):  # PCKV KeyValueUsers
        ptr, keys, values = np.asarray(data.indptr), np.asarray(data.keys), np.asarray(data.values)
        for u in range(ptr.size - 1):
            yield json.dumps({"keys": keys[ptr[u]:ptr[u + 1]].tolist(), "values": values[ptr[u]:ptr[u + 1]].tolist()})
    elif isinstance(data, dict):  # PUM
        for i, t in zip(np.asarray(data["item"]).tolist(), np.asarray(data["tag"]).tolist()):
            yield json.dumps({"item": int(i), "tag": int(t)})
    elif isinstance(data, np.ndarray) and data.ndim == 2:  # records: one value index per attribute
        for row in data.astype(np.int64).tolist():
            yield json.dumps({"record": row})
    else:
        for i in np.asarray(data, dtype=np.int64).tolist():
            yield f'{{"item": {i}}}'


def encode_inputs(data: Any, users: Any = None, round: int | None = None) -> list[str]:
    """The JSON lines of ``data`` as a list (:func:`input_lines`)."""
    return list(input_lines(data, users, round))


def _write_inputs(path: str, lines: Iterator[str]) -> int:
    """Write the lines (a batch at a time); the number of lines."""
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        batch: list[str] = []
        for line in lines:
            batch.append(line)
            if len(batch) == _WRITE_LINES:
                fh.write("\n".join(batch) + "\n")
                n, batch = n + len(batch), []
        if batch:
            fh.write("\n".join(batch) + "\n")
            n += len(batch)
    return n


class ExternalMemo:
    """One memo of an external program: a directory it keeps its state in (empty when new).

    The directory is removed when the object is collected (or by :meth:`close`).

    Attributes
    ----------
    path : str
        The directory passed to the program as ``MEMO``.
    """

    def __init__(self, owner: "ExternalRuntime") -> None:
        self.path = tempfile.mkdtemp(prefix="ldpplan-memo-")
        self._owner = id(owner)
        self._cleanup = weakref.finalize(self, shutil.rmtree, self.path, ignore_errors=True)

    def close(self) -> None:
        """Remove the directory now."""
        self._cleanup()


class ExternalRuntime:
    """A runtime that is an external program (``perturb`` only), for :func:`ldpplan.planner.audit`.

    Parameters
    ----------
    plan_path : path-like
        The plan file passed to the program.
    command : sequence of str
        The program and its own arguments (``PLAN SEED INPUT OUTPUT`` and, for a memoized plan,
        ``MEMO`` are appended).
    plan : mapping
        The plan. Its own runtime (``ldpplan.mechanisms.load``) gives the report format the
        program's output is checked against, and whether the plan is memoized.
    timeout : float
        Seconds one run may take (then its process group is ended and the audit stops, exit 2).

    Attributes
    ----------
    memoized : bool
        The plan keeps client state (longitudinal): ``perturb`` needs ``memo=``, ``users=``, ``round=``.

    Raises
    ------
    InputDataError
        An empty command or a timeout that is not a positive number.
    PlanError
        A plan its runtime refuses.
    """

    def __init__(self, plan_path: Any, command: Sequence[str], plan: Mapping[str, Any], *,
                 timeout: float = TIMEOUT) -> None:
        if not command:
            raise InputDataError("runtime-cmd: empty command")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < float("inf"):
            raise InputDataError(f"runtime-timeout: must be a positive number of seconds (got {timeout!r})")
        self.plan_path, self.command, self.plan = os.fspath(plan_path), list(command), plan
        self.mechanism = str(plan["mechanism"])
        self.reference = load(plan)
        self.memoized = bool(getattr(self.reference, "memoized", False))
        self.timeout = float(timeout)
        self._format: ReportFormat | None = None

    def new_memo(self) -> ExternalMemo:
        """A fresh, empty memo directory (memoized plans only)."""
        if not self.memoized:
            raise ValueError(f"memo: {self.mechanism} keeps no client state")
        return ExternalMemo(self)

    def report_format(self, data: Any, users: Any = None, round: int | None = None) -> ReportFormat:
        """The plan's report columns, from its runtime's own reports on ``data`` (computed once)."""
        if self._format is None:
            rng = np.random.default_rng(0)
            if self.memoized:
                ref = self.reference.perturb(np.asarray(data)[:1], rng=rng, memo=self.reference.new_memo(),
                                             users=np.asarray(users)[:1], round=round)
            else:
                ref = self.reference.perturb(data, rng=rng)
            self._format = ReportFormat.of(ref)
        return self._format

    def _check_call(self, memo: Any, users: Any, round: Any, n: int) -> None:
        if not self.memoized:
            if memo is not None or users is not None or round is not None:
                raise ValueError(f"memo: {self.mechanism} keeps no client state (memo, users, round are not taken)")
            return
        if not isinstance(memo, ExternalMemo) or memo._owner != id(self):
            raise ValueError(f"memo: {self.mechanism} perturbs only with a memo of this runtime (new_memo())")
        rounds = int(self.reference.rounds)
        if isinstance(round, bool) or not isinstance(round, (int, np.integer)) or not 0 <= round < rounds:
            raise ValueError(f"round: must be an integer in 0..{rounds - 1} (got {round!r})")
        if users is None or np.asarray(users).shape != (n,):
            raise ValueError("users: perturb needs each report's user id, one per value")

    def perturb(self, data: Any, rng: np.random.Generator, *, memo: ExternalMemo | None = None, users: Any = None,
                round: int | None = None) -> Any:
        """Run the program on ``data`` with a seed drawn from ``rng``; its reports, checked.

        Parameters
        ----------
        data : the runtime's ``perturb`` input (see :func:`input_lines`)
        rng : numpy.random.Generator
            Draws the program's ``SEED``.
        memo, users, round
            Memoized plans only: the :class:`ExternalMemo` (its directory is ``MEMO``), the user ids
            (shape ``(n,)``) and the round.

        Returns
        -------
        Reports
            The plan's report columns with the runtime's dtypes and shapes.

        Raises
        ------
        InputDataError
            ``runtime-cmd: ...``: the program failed, ran out of time or bounds, or printed anything
            but the plan's reports (naming the line, the column and the value).
        ValueError
            Memoized plans: no memo of this runtime, a round out of range, no user ids.
        """
        n = len(data["item"]) if isinstance(data, dict) else (
            int(np.asarray(data[0]).size - 1) if isinstance(data, tuple) else len(data))
        self._check_call(memo, users, round, n)
        fmt = self.report_format(data, users, round)
        seed = int(rng.integers(0, 2**53))
        with tempfile.TemporaryDirectory(prefix="ldpplan-audit-") as tmp:
            inputs, output = os.path.join(tmp, "inputs.jsonl"), os.path.join(tmp, "reports.jsonl")
            n = _write_inputs(inputs, input_lines(data, users if self.memoized else None, round))
            total = n * fmt.line_bytes + (1 << 16)
            memo_args = [memo.path] if self.memoized and memo is not None else []
            argv = self.command + [self.plan_path, str(seed), inputs, output] + memo_args
            run_program(argv, ProgramLimits(self.timeout, total), output)
            try:
                with open(output, "rb") as fh:
                    columns, lines = decode_reports(fh, n, fmt, total_bytes=total)
            except FileNotFoundError:
                raise InputDataError("runtime-cmd: wrote no output file") from None
            except IsADirectoryError:
                raise InputDataError("runtime-cmd: OUTPUT is a directory, not a file of reports") from None
        if self.memoized and "round" in columns:
            wrong = np.flatnonzero(columns["round"] != round)
            if wrong.size:
                raise InputDataError(f"runtime-cmd: report line {int(lines[wrong[0]])}: column 'round' must be the "
                                     f"input's round {round} (got {int(columns['round'][wrong[0]])})")
        check_domain(self.reference, columns, lines)
        return Reports(self.mechanism, columns)

"""Audit an implementation in any language: a runtime that is an external program.

The protocol (``docs/AUDIT.md``): for every batch of inputs the audit runs

``CMD... PLAN SEED INPUT OUTPUT``

(the command's own words, then four arguments): ``PLAN`` the plan file the program claims to
implement, ``SEED`` an integer in ``[0, 2^53)`` for its generator (an audit is a reproducible
simulation), ``INPUT`` a JSON-lines file with one user per line, ``OUTPUT`` the path where the
program writes one report per line, in input order, with the plan's report columns
(``docs/REPORTS.md``): a 1-D column as a JSON integer, a packed bit column (``bits``,
``nonzero``, ``negative``) as a JSON array of its bytes. A user's line is, by family:

* ``{"item": i}`` (RR, GLH, IDUE, uRR, uRAP; ``i`` the 0-based item index);
* ``{"items": [i, ...]}`` (IDUE-PS: an item set);
* ``{"keys": [k, ...], "values": [v, ...]}`` (PCKV: key-value pairs, ``v`` in [-1, 1]);
* ``{"item": i, "tag": t}`` (PUM: ``t`` the private-item tag index, ``-1`` for none).

Exit status 0 means success; anything else is an error of the program (the audit stops).
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
from typing import Any, Sequence

import numpy as np

from ..errors import InputDataError

__all__ = ["ExternalRuntime", "encode_inputs", "decode_reports"]

#: Seconds one run of the program may take.
TIMEOUT = 600.0


def encode_inputs(data: Any) -> list[str]:
    """The JSON lines of ``data`` as the audit builds it (one user per line)."""
    if isinstance(data, tuple) and len(data) == 2:  # IDUE-PS: CSR (indptr, indices)
        indptr, indices = (np.asarray(a, dtype=np.int64) for a in data)
        return [json.dumps({"items": indices[indptr[u]:indptr[u + 1]].tolist()}) for u in range(indptr.size - 1)]
    if hasattr(data, "indptr") and hasattr(data, "keys") and hasattr(data, "values"):  # PCKV KeyValueUsers
        ptr, keys, values = np.asarray(data.indptr), np.asarray(data.keys), np.asarray(data.values)
        return [json.dumps({"keys": keys[ptr[u]:ptr[u + 1]].tolist(), "values": values[ptr[u]:ptr[u + 1]].tolist()})
                for u in range(ptr.size - 1)]
    if isinstance(data, dict):  # PUM
        return [json.dumps({"item": int(i), "tag": int(t)}) for i, t in zip(data["item"], data["tag"])]
    return [f'{{"item": {int(i)}}}' for i in np.asarray(data, dtype=np.int64)]


def decode_reports(lines: Sequence[str], n: int) -> dict[str, np.ndarray]:
    """Columns from the program's JSON lines (int64 for numbers, uint8 rows for byte arrays).

    Raises
    ------
    InputDataError
        Not ``n`` lines, a line that is not a JSON object, or rows with different columns.
    """
    rows = [line for line in lines if line.strip()]
    if len(rows) != n:
        raise InputDataError(f"runtime-cmd: wrote {len(rows)} reports for {n} inputs (one JSON line per input)")
    try:
        parsed = [json.loads(line) for line in rows]
    except json.JSONDecodeError as exc:
        raise InputDataError(f"runtime-cmd: a report line is not JSON ({exc})") from None
    if not parsed or not all(isinstance(r, dict) for r in parsed):
        raise InputDataError("runtime-cmd: every report line must be a JSON object of columns")
    names = sorted(parsed[0])
    if not names or any(sorted(r) != names for r in parsed):
        raise InputDataError(f"runtime-cmd: every report must have the same columns (first: {names})")
    out = {}
    for name in names:
        values = [r[name] for r in parsed]
        try:
            if isinstance(values[0], list):
                out[name] = np.asarray(values, dtype=np.int64).astype(np.uint8)
            else:
                out[name] = np.asarray(values, dtype=np.int64)
        except (TypeError, ValueError, OverflowError) as exc:
            raise InputDataError(f"runtime-cmd: column {name!r} is not integers of one shape ({exc})") from None
    return out


class ExternalRuntime:
    """A runtime that is an external program (``perturb`` only), for :func:`ldpplan.planner.audit`.

    Parameters
    ----------
    plan_path : path-like
        The plan file passed to the program.
    command : sequence of str
        The program and its own arguments (``PLAN SEED INPUT OUTPUT`` are appended).
    plan : mapping
        The plan (its mechanism names the reports).
    """

    def __init__(self, plan_path: Any, command: Sequence[str], plan: dict[str, Any]) -> None:
        if not command:
            raise InputDataError("runtime-cmd: empty command")
        self.plan_path, self.command, self.plan = os.fspath(plan_path), list(command), plan
        self.mechanism = str(plan["mechanism"])

    def perturb(self, data: Any, rng: np.random.Generator) -> Any:
        """Run the program on ``data`` with a seed drawn from ``rng``; its reports."""
        from ...mechanisms import Reports

        lines = encode_inputs(data)
        seed = int(rng.integers(0, 2**53))
        with tempfile.TemporaryDirectory(prefix="ldpplan-audit-") as tmp:
            inputs, output = os.path.join(tmp, "inputs.jsonl"), os.path.join(tmp, "reports.jsonl")
            with open(inputs, "w", encoding="utf-8") as fh:
                fh.write("\n".join(lines) + "\n")
            try:
                done = subprocess.run(self.command + [self.plan_path, str(seed), inputs, output],
                                      capture_output=True, text=True, timeout=TIMEOUT, check=False)
            except FileNotFoundError:
                raise InputDataError(f"runtime-cmd: program not found: {self.command[0]!r}") from None
            except subprocess.TimeoutExpired:
                raise InputDataError(f"runtime-cmd: no answer within {TIMEOUT:g} s") from None
            if done.returncode != 0:
                last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
                raise InputDataError(f"runtime-cmd: exited with status {done.returncode}: {last}")
            try:
                with open(output, encoding="utf-8") as fh:
                    columns = decode_reports(fh.read().splitlines(), len(lines))
            except FileNotFoundError:
                raise InputDataError("runtime-cmd: wrote no output file") from None
        return Reports(self.mechanism, columns)

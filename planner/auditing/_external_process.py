"""Running an external runtime program with bounded time, output and memory (stdlib only).

The program runs in a session (process group) of its own (``start_new_session=True``). Its stdout
and stderr are drained by two threads that keep only the last :data:`STDERR_TAIL` bytes of
stderr (for the error message) and count the bytes; the file it writes is watched while it
runs. The whole process group is ended with ``SIGKILL`` (``os.killpg``) when the run is over:
on timeout, when the program prints more than the chatter bound, when its output file outgrows
the bound, and also after a normal exit (a background child left behind would keep the pipes
open and outlive the audit). The leader is not reaped before its group is signalled (``waitid``
with ``WNOWAIT``), so the group id cannot have been reused by another process.
"""
from __future__ import annotations

import dataclasses
import os
import select
import signal
import subprocess
import threading
import time
from typing import Sequence

from ..errors import InputDataError

__all__ = ["run_program", "ProgramLimits", "STDERR_TAIL", "MAX_CHATTER"]

#: Bytes of the program's stderr kept for the error message (the last ones).
STDERR_TAIL = 4096
#: Bytes the program may print on stdout and stderr together in one run.
MAX_CHATTER = 8 << 20
_POLL_MAX = 0.05


@dataclasses.dataclass(frozen=True)
class ProgramLimits:
    """What one run of the program may use.

    Attributes
    ----------
    timeout : float
        Seconds of wall-clock time.
    output_bytes : int
        Bytes its output file may hold (watched while it runs).
    chatter_bytes : int
        Bytes it may print on stdout and stderr together.
    """

    timeout: float
    output_bytes: int
    chatter_bytes: int = MAX_CHATTER


class _Drain(threading.Thread):
    """Reads a pipe to its end, counting bytes and keeping the last ``keep`` of them."""

    def __init__(self, pipe, keep: int, counter: list[int], lock: threading.Lock) -> None:
        super().__init__(daemon=True)
        self.pipe, self.keep, self.counter, self.lock = pipe, keep, counter, lock
        self.tail = bytearray()

    def run(self) -> None:
        try:
            while True:
                chunk = self.pipe.read1(1 << 16) if hasattr(self.pipe, "read1") else self.pipe.read(1 << 16)
                if not chunk:
                    return
                with self.lock:
                    self.counter[0] += len(chunk)
                if self.keep:
                    self.tail += chunk
                    del self.tail[:-self.keep]
        except (OSError, ValueError):  # the pipe was closed under us
            return


def _exited(proc: subprocess.Popen) -> bool:
    """The program has ended (it stays a zombie, unreaped, so its group id stays ours)."""
    if hasattr(os, "waitid") and os.name == "posix":
        try:
            return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:
            return True
    return proc.poll() is not None


def _end_group(proc: subprocess.Popen) -> None:
    """``SIGKILL`` to the program's whole process group (the leader and anything it started), then reap."""
    if os.name == "posix":
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    else:  # pragma: no cover - no process groups
        proc.kill()
    proc.wait()


def _size(path: str | None) -> int:
    if path is None:
        return 0
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def run_program(argv: Sequence[str], limits: ProgramLimits, output: str | None = None) -> None:
    """Run ``argv`` to its end within ``limits``; return on exit status 0.

    Parameters
    ----------
    argv : sequence of str
        The program and its arguments.
    limits : ProgramLimits
    output : str, optional
        The file the program writes, watched against ``limits.output_bytes``.

    Raises
    ------
    InputDataError
        ``runtime-cmd: ...``: the program is not found or cannot run, exits with a nonzero status
        or a signal (the message holds its last line of stderr), takes longer than the timeout,
        prints more than the chatter bound, or writes more than the output bound. In every case
        its process group has been ended.
    """
    try:
        proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
    except FileNotFoundError:
        raise InputDataError(f"runtime-cmd: program not found: {argv[0]!r}") from None
    except OSError as exc:
        raise InputDataError(f"runtime-cmd: cannot run {argv[0]!r}: {exc.strerror or exc}") from None
    counter, lock = [0], threading.Lock()
    drains = [_Drain(proc.stdout, 0, counter, lock), _Drain(proc.stderr, STDERR_TAIL, counter, lock)]
    for d in drains:
        d.start()
    deadline, delay, problem = time.monotonic() + limits.timeout, 0.0005, None
    try:
        pidfd = os.pidfd_open(proc.pid) if hasattr(os, "pidfd_open") else None
    except OSError:
        pidfd = None
    try:
        while not _exited(proc):
            if time.monotonic() >= deadline:
                problem = f"no answer within {limits.timeout:g} s (its process group was ended)"
            elif counter[0] > limits.chatter_bytes:
                problem = (f"printed more than {limits.chatter_bytes} bytes on stdout and stderr (its process group "
                           "was ended)")
            elif _size(output) > limits.output_bytes:
                problem = (f"wrote more than {limits.output_bytes} bytes to OUTPUT, more than the reports can take "
                           "(its process group was ended)")
            if problem:
                break
            if pidfd is not None:  # readable when the program ends: no sleeping past its exit
                select.select([pidfd], [], [], _POLL_MAX)
            else:
                time.sleep(delay)
                delay = min(2 * delay, _POLL_MAX)
    finally:
        if pidfd is not None:
            os.close(pidfd)
        _end_group(proc)
        for d in drains:
            d.join(timeout=5.0)
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
    if problem:
        raise InputDataError(f"runtime-cmd: {problem}")
    if proc.returncode != 0:
        lines = drains[1].tail.decode("utf-8", errors="replace").strip().splitlines()
        last = lines[-1] if lines else "(no message)"
        how = (f"was killed by signal {-proc.returncode}" if proc.returncode < 0
               else f"exited with status {proc.returncode}")
        raise InputDataError(f"runtime-cmd: {how}: {last[-300:]}")

"""``ldpplan perturb`` for runtimes with client state (``memoized``: the longitudinal family).

The memo file is the devices' state (:class:`ldpplan.mechanisms.Memo`). Everything about it is
checked **before** a report is written, and a failure is one line naming the file and the rule
(exit 2): a path whose folder is missing, not a folder or not writable; a file that is not a
regular file (``/dev/zero``), over :data:`ldpplan.mechanisms.longitudinal.MAX_MEMO_BYTES`, sized
other than its header says, with a checksum that does not match, or of another plan; a memo that
is absent without ``--new-memo`` (and ``--new-memo`` over an existing file); a round before the
memo's last round, a user who already reported in the round, or a memo file that another process
changed while the reports were drawn (its device, inode, size and mtime are compared before writing); a memo
reached through a symbolic link or with a second hard link (the atomic rewrite would fork it: the other name keeps
the old state); a memo another ``perturb`` holds (an exclusive ``flock`` on the file from before it is read until
its rewrite is in place: two runs on one memo never both succeed). User ids are parsed strictly
(:func:`parse_user_ids`). The memo is rewritten atomically *before* the reports file is renamed
into place: a failure to save it leaves no reports (a report whose permanent response is not
kept would be redrawn next round). Nothing here prints.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

import numpy as np

from ..mechanisms import Memo, Plan
from ._io import write_bytes_atomic
from .errors import InputDataError, SpecError
from .. import mechanisms
from ._plan_format import tool_version
from ._reports_file import ReportsWriter
from .data import item_stream

__all__ = ["NEW_MEMO_COST", "parse_user_ids", "open_memo", "perturb_memoized"]

#: What starting a new memo costs users who reported before (the CLI's refusal and note say it).
NEW_MEMO_COST = ("users who reported before lose the memo's protection: their permanent responses are redrawn and "
                 "the values they already reported are exposed again (the lifetime bound no longer holds for them)")
_USER_PATTERN = r"^(0|[1-9][0-9]{0,12})$"


def parse_user_ids(cells: np.ndarray, where: str) -> np.ndarray:
    """User ids from text cells: ASCII digits in canonical form (no sign, no leading zero but ``"0"``), ``<= MAX_USER``.

    ``"1"`` and ``"01"``, or ``"12"`` and ``"١٢"``, are never one user: only the canonical ASCII
    spelling is accepted, everything else is refused.

    Parameters
    ----------
    cells : numpy.ndarray of str, shape (n,)
    where : str
        Names the file and column in the error (``"--input: users.csv: column 'user'"``).

    Returns
    -------
    numpy.ndarray of int64, shape (n,)

    Raises
    ------
    InputDataError
        A cell that is not such an id (the message names the column and the value).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    col = pa.array(np.asarray(cells, dtype=str), pa.string())
    ok = pc.match_substring_regex(col, _USER_PATTERN).to_numpy(zero_copy_only=False)
    values = np.zeros(len(col), dtype=np.int64)
    if ok.any():
        values[ok] = pc.cast(col.filter(pa.array(ok)), pa.int64()).to_numpy(zero_copy_only=False)
    ok &= values <= Memo.MAX_USER
    if not ok.all():
        bad = str(cells[int(np.argmin(ok))])
        raise InputDataError(f"{where} must hold user ids: ASCII digits without a sign or leading zeros, in "
                             f"0..{Memo.MAX_USER} (got {bad[:40]!r})")
    return values


def open_memo(mech, path, round_: int, *, new_memo: bool, max_bytes: int | None = None):
    """The memo of ``path`` (or a new one with ``new_memo``), after checking the path can take it back.

    Returns
    -------
    (Memo, bool, tuple or None)
        The memo, whether it was started now, and the file's identity when read (device, inode,
        size, mtime; :func:`_identity`), which must be unchanged when the memo is written back.

    Raises
    ------
    InputDataError
        Every rule of the module docstring about the path and the file (one line naming the file).
    """
    where = f"--memo: {path}"
    folder = Path(path).parent
    if not folder.is_dir():
        why = "is not a directory" if folder.exists() or os.path.lexists(folder) else "does not exist"
        raise InputDataError(f"{where}: its folder {folder} {why}; the memo is rewritten there after the reports")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputDataError(f"{where}: its folder {folder} is not writable; the memo is rewritten there after the "
                             "reports")
    if not os.path.lexists(path):
        if not new_memo:
            before = f"round {round_} needs the memo of the rounds before it; " if round_ else ""
            raise InputDataError(f"{where}: no such memo; {before}give --new-memo to start one ({NEW_MEMO_COST})")
        return mech.new_memo(), True, None
    if new_memo:
        raise InputDataError(f"{where}: --new-memo, but the file exists; starting over would redraw its permanent "
                             "responses (remove the file yourself if you mean to reset the devices' memo)")
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):  # the atomic rewrite would replace the link; its target would keep the old state
        raise InputDataError(f"{where}: is a symbolic link; give the memo file itself (rewriting it would replace the "
                             "link and leave its target with the old state)")
    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        raise InputDataError(f"{where}: has {st.st_nlink} hard links; rewriting it would leave the other names with the "
                             "old state (keep one name per memo)")
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise InputDataError(f"{where}: not a regular file (a memo is a file the device keeps)")
        identity = _identity(path)
        return Memo.from_file(path, binding=mech.plan_fingerprint,
                              max_bytes=Memo.MAX_BYTES if max_bytes is None else max_bytes), False, identity
    except ValueError as exc:
        if isinstance(exc, InputDataError):
            raise
        raise InputDataError(f"{where}: {exc}") from None
    except OSError as exc:
        raise InputDataError(f"{where}: cannot be read ({exc.strerror or exc})") from None


def _identity(path) -> tuple | None:
    """``(device, inode, size, mtime_ns)`` of ``path``, None when it does not exist."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _lock(path) -> int | None:
    """An exclusive ``flock`` on the existing memo file, held until its rewrite is in place (None: no file / no flock).

    A second ``perturb`` on the same memo is refused at once instead of racing the first between the identity
    check and the rename (both would otherwise succeed and serve one round twice).
    """
    try:
        import fcntl
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None  # open_memo refuses it
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except (ImportError, OSError):
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.fstat(fd).st_ino != os.stat(path).st_ino:
            raise BlockingIOError
    except OSError as exc:
        os.close(fd)
        if isinstance(exc, BlockingIOError):
            raise InputDataError(f"--memo: {path}: in use by another perturb (locked, or rewritten meanwhile); nothing "
                                 "was written: run one perturb per memo at a time") from None
        return None
    return fd


def perturb_memoized(plan: Plan, mech, input_path, output, seed, rows, skip_empty, progress, memo_path, round_, **options):
    """:func:`_perturb_memoized` holding :func:`_lock` on the memo file (one perturb per memo at a time)."""
    lock = _lock(memo_path) if memo_path is not None else None
    try:
        return _perturb_memoized(plan, mech, input_path, output, seed, rows, skip_empty, progress, memo_path, round_,
                                 **options)
    finally:
        if lock is not None:
            os.close(lock)


def _perturb_memoized(plan: Plan, mech, input_path, output, seed, rows, skip_empty, progress, memo_path, round_, *,
                      new_memo: bool = False, skip_over_limit: bool = False):
    """:func:`ldpplan.planner._runtime_io.perturb_file` for a runtime with client state (see the module docstring).

    Returns
    -------
    dict
        The fields of ``PerturbResult``, with ``skipped_over_limit`` (users dropped,
        ``skip_over_limit``), ``memo_started`` and ``round``.
    """
    if round_ is None:
        raise SpecError("--round", f"a {plan.mechanism} plan reports per collection round: give --round T (0-based, "
                        f"below guarantee.rounds = {plan.guarantee['rounds']})", None)
    if memo_path is None:
        raise SpecError("--memo", f"a {plan.mechanism} plan keeps client state: give --memo FILE (the devices' "
                        "permanent responses; --new-memo to start one)", None)
    if not 0 <= int(round_) < int(plan.guarantee["rounds"]):
        raise SpecError("--round", f"must be below guarantee.rounds = {plan.guarantee['rounds']}", round_)
    memo, started, identity = open_memo(mech, memo_path, round_, new_memo=new_memo)
    last = memo.last_round
    if last is not None and round_ < last:
        raise InputDataError(f"--memo: {memo_path}: round {round_} is before the memo's last round {last}; rounds go "
                             "forward only (a replayed round, or a memo restored from an older copy)")
    stream = item_stream(input_path, plan["domain"]["labels"], plan.domain.size, extra=("user",),
                         skip_empty=skip_empty, chunk_rows=rows)
    rng = mechanisms.secure_rng() if seed is None else np.random.default_rng(seed)
    done = dropped = 0
    with ReportsWriter(output, mechanism=plan.mechanism, plan_fingerprint=plan.fingerprint,
                       ldpplan_version=tool_version(), seed=seed) as writer:
        for chunk in stream:
            items, users = chunk["item"], parse_user_ids(chunk["user"], f"--input: {input_path}: column 'user'")
            try:
                if skip_over_limit:
                    keep = ~mech.over_limit(items, memo=memo, users=users)
                    dropped += int(keep.size - keep.sum())
                    items, users = items[keep], users[keep]
                if items.size:
                    writer.write(mech.perturb(items, rng=rng, memo=memo, users=users, round=round_).to_arrays())
            except ValueError as exc:
                raise InputDataError(f"--input: {input_path}: {exc}") from None
            if progress is not None:
                progress(stream.bytes_read - done, stream.total_bytes)
                done = stream.bytes_read
        if not writer.rows:
            raise InputDataError(f"--input: {input_path}: no user left to report (--skip-over-limit dropped "
                                 f"{dropped:,})")
        if _identity(memo_path) != identity:  # another process wrote it meanwhile: one of the two would be lost
            raise InputDataError(f"--memo: {memo_path}: changed while the reports were drawn (another perturb on "
                                 "the same memo?); nothing was written: run one perturb per memo at a time")
        try:  # before the reports are renamed into place: no report without its permanent response kept
            write_bytes_atomic(memo_path, memo.to_bytes())
        except OSError as exc:
            raise InputDataError(f"--memo: {memo_path}: cannot be written ({exc.strerror or exc}); no report was "
                                 "written") from None
    return {"n": writer.rows, "mechanism": plan.mechanism, "output": str(output), "seed": seed, "rows": stream.rows,
            "skipped_empty": stream.skipped_empty, "skipped_over_limit": dropped, "memo_started": started,
            "round": int(round_)}

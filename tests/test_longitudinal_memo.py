"""Device state that cannot fail silently (issue 26, point 4 and 5; issue 27, points 5 and 6).

Each failure of issue 26 point 4 is reproduced through ``ldpplan perturb`` / ``ldpplan estimate``
(click's CliRunner): exit 2, one line naming the file or option and the rule, no reports file
written and the memo file unchanged. Then the runtime API's rules (rounds go forward, one report
per user and round, keys that never overflow, the 2^16 domain cap of ``load``) and the memo
file's own checks (checksum, size from the header, ``stat`` before reading).
"""
from __future__ import annotations

import json
import os
import struct

import numpy as np
import pytest
from click.testing import CliRunner

import ldpplan
from ldpplan.mechanisms import Memo, PlanError
from ldpplan.mechanisms.longitudinal import LongitudinalGRR
from ldpplan.planner import write_plan
from ldpplan.planner.cli import main

SPEC = {"mechanism": "l-grr", "domain": 10, "users": 200000, "epsilon_perm": 4.0, "epsilon_1": 1.0, "rounds": 20,
        "max_values": 2}
USERS = 200


@pytest.fixture(scope="module")
def plan() -> dict:
    return ldpplan.planner.make_plan(SPEC)


@pytest.fixture(scope="module")
def plan_bytes(plan, tmp_path_factory) -> bytes:
    """The plan file's bytes, written once by ``write_plan`` (which verifies: ~0.2 CPU-s a plan)."""
    path = tmp_path_factory.mktemp("plan") / "plan.json"
    write_plan(plan, path)
    return path.read_bytes()


@pytest.fixture()
def work(tmp_path, plan_bytes):
    """A plan file (a copy of the one ``write_plan`` wrote), an input of USERS users (user u holds
    value u % 10) and a memo path."""
    (tmp_path / "plan.json").write_bytes(plan_bytes)
    _users(tmp_path / "users.csv", range(USERS))
    return tmp_path


def _users(path, ids, values=None) -> None:
    ids = list(ids)
    values = [int(u) % 10 for u in ids] if values is None else values
    path.write_text("user,item\n" + "".join(f"{u},{v}\n" for u, v in zip(ids, values)), encoding="utf-8")


def _perturb(work, round_, *extra, out=None, users="users.csv", memo="dev.memo"):
    out = work / (out or f"r{round_}.parquet")
    args = ["perturb", str(work / "plan.json"), "--input", str(work / users), "-o", str(out),
            "--memo", str(work / memo) if not os.path.isabs(memo) else memo, "--round", str(round_),
            "--seed", str(round_), *extra]
    return CliRunner().invoke(main, args), out


def _refused(res, out, *words) -> None:
    """Exit 2, one line on the output naming each of ``words``, no traceback, nothing written."""
    text = res.output.strip()
    assert res.exit_code == 2, res.output
    assert "\n" not in text and "Traceback" not in text, text
    for word in words:
        assert word in text, text
    assert not out.exists()


# ----------------------------------------------------------------------------- missing memo, --new-memo
def test_a_missing_memo_is_refused_and_new_memo_is_explicit_and_says_its_cost(work):
    res, out = _perturb(work, 5)
    _refused(res, out, "--memo", "dev.memo", "no such memo", "--new-memo", "exposed again")
    assert not (work / "dev.memo").exists()
    res, out = _perturb(work, 5, "--new-memo")
    assert res.exit_code == 0, res.output
    assert "started a new memo" in res.output and "exposed again" in res.output
    memo = Memo.from_file(work / "dev.memo")
    assert memo.last_round == 5 and memo.users == memo.entries == USERS
    before = (work / "dev.memo").read_bytes()
    res, out = _perturb(work, 6, "--new-memo")
    _refused(res, out, "--new-memo", "exists", "redraw")
    assert (work / "dev.memo").read_bytes() == before


def test_new_memo_at_round_zero_says_nothing_about_a_cost(work):
    res, _ = _perturb(work, 0, "--new-memo")
    assert res.exit_code == 0 and "started a new memo" in res.output and "exposed" not in res.output


def test_the_api_needs_new_memo_too(work):
    from ldpplan.planner._runtime_io import perturb_file

    from ldpplan.planner.errors import InputDataError

    with pytest.raises(InputDataError, match="no such memo"):
        perturb_file(work / "plan.json", work / "users.csv", work / "a.parquet", seed=1, memo=work / "m", round=0)
    result = perturb_file(work / "plan.json", work / "users.csv", work / "a.parquet", seed=1, memo=work / "m",
                          round=0, new_memo=True)
    assert result.memo_started and result.n == USERS and result.round == 0


# ----------------------------------------------------------------------------- rounds go forward, one report each
def test_the_same_round_twice_is_refused_and_nothing_changes(work):
    assert _perturb(work, 0, "--new-memo")[0].exit_code == 0
    assert _perturb(work, 1)[0].exit_code == 0
    before = (work / "dev.memo").read_bytes()
    res, out = _perturb(work, 1, out="again.parquet")
    _refused(res, out, "already reported in round 1", "one report per user and round")
    assert (work / "dev.memo").read_bytes() == before
    # new users may still join the round; a user listed twice in one file may not
    _users(work / "late.csv", [1000, 1001])
    res, out = _perturb(work, 1, users="late.csv", out="late.parquet")
    assert res.exit_code == 0, res.output
    assert Memo.from_file(work / "dev.memo").users == USERS + 2


def test_a_restored_older_memo_is_refused_for_a_round_it_served_or_before(work):
    for t in (0, 1):
        assert _perturb(work, t, *(["--new-memo"] if t == 0 else []))[0].exit_code == 0
    old = (work / "dev.memo").read_bytes()  # a backup after round 1
    for t in (2, 3):
        assert _perturb(work, t)[0].exit_code == 0
    (work / "dev.memo").write_bytes(old)  # restored
    res, out = _perturb(work, 0, out="replay0.parquet")
    _refused(res, out, "--memo", "round 0 is before the memo's last round 1", "rounds go forward only")
    res, out = _perturb(work, 1, out="replay1.parquet")
    _refused(res, out, "already reported in round 1")
    assert (work / "dev.memo").read_bytes() == old


def test_a_restored_copy_asked_for_a_later_round_is_indistinguishable_from_honest(work):
    """The limit docs/SECURITY.md states: a device alone cannot tell an intact older copy of its memo
    asked for a round after every round the copy served from the honest memo."""
    assert _perturb(work, 0, "--new-memo")[0].exit_code == 0
    old = (work / "dev.memo").read_bytes()
    assert _perturb(work, 1)[0].exit_code == 0
    (work / "dev.memo").write_bytes(old)
    assert _perturb(work, 1, out="again.parquet")[0].exit_code == 0


def test_api_rounds_go_forward_and_one_report_per_user_and_round(plan):
    mech = ldpplan.load(plan)
    memo, rng = mech.new_memo(), np.random.default_rng(0)
    ids, x = np.arange(10), np.arange(10) % 10
    mech.perturb(x, rng=rng, memo=memo, users=ids, round=3)
    state = memo.to_bytes()
    for users, round_, match in ((ids, 3, "already reported in round 3"), (ids, 2, "before the memo's last round 3"),
                                 (np.array([20, 20]), 4, "appears twice"), (np.array([20, 21]), 1, "forward only")):
        with pytest.raises(ValueError, match=match):
            mech.perturb(x[:users.size], rng=rng, memo=memo, users=users, round=round_)
        assert memo.to_bytes() == state  # nothing changes when a call refuses
    mech.perturb(x[:2], rng=rng, memo=memo, users=np.array([20, 21]), round=3)  # new users in the same round
    assert memo.last_round == 3 and memo.users == 12


def test_replayed_keeps_every_permanent_response_and_forgets_the_rounds(plan):
    mech = ldpplan.load(plan)
    memo, rng = mech.new_memo(), np.random.default_rng(1)
    mech.perturb(np.arange(50) % 10, rng=rng, memo=memo, users=np.arange(50), round=19)
    copy = memo.replayed()
    assert copy.last_round is None and len(copy) == 50
    assert np.array_equal(copy.responses_at(np.arange(50)), memo.responses_at(np.arange(50)))
    mech.perturb(np.arange(50) % 10, rng=rng, memo=copy, users=np.arange(50), round=0)
    assert len(copy) == 50  # no response redrawn


# ----------------------------------------------------------------------------- damaged memo files
def _header(data: bytes) -> tuple[dict, int]:
    (size,) = struct.unpack("<I", data[8:12])
    return json.loads(data[12:12 + size]), 12 + size


def _with_header(data: bytes, **changes) -> bytes:
    head, start = _header(data)
    text = json.dumps({**head, **changes}, sort_keys=True, separators=(",", ":")).encode()
    return data[:8] + struct.pack("<I", len(text)) + text + data[start:]


@pytest.mark.parametrize("damage, words", [
    (lambda d: d[:-10], ("truncated or padded",)),
    (lambda d: d + b"\0" * 16, ("truncated or padded",)),
    (lambda d: d[:-40] + bytes([d[-40] ^ 1]) + d[-39:], ("checksum", "corrupted")),
    # consistently truncated: the header says 199 entries and users, the body holds 199 of each, old digest
    (lambda d: _truncated(d), ("checksum",)),
    (lambda d: _with_header(d, entries=10 ** 12, users=10 ** 12), ("truncated or padded",)),
    (lambda d: _with_header(d, entries=3 * USERS), ("users x max_values",)),
    (lambda d: _with_header(d, version=1), ("version", "checksum")),
    (lambda d: b"garbage" + d, ("bad magic",)),
])
def test_a_damaged_memo_is_refused_naming_the_file_and_nothing_is_written(work, damage, words):
    assert _perturb(work, 0, "--new-memo")[0].exit_code == 0
    bad = damage((work / "dev.memo").read_bytes())
    (work / "dev.memo").write_bytes(bad)
    res, out = _perturb(work, 1)
    _refused(res, out, "--memo", "dev.memo", *words)
    assert (work / "dev.memo").read_bytes() == bad


def _truncated(data: bytes) -> bytes:
    head, start = _header(data)
    n = head["entries"]
    keys, resp, last = data[start:start + 8 * n], data[start + 8 * n:start + 16 * n], data[start + 16 * n:-32]
    out = _with_header(data[:start], entries=n - 1, users=n - 1)
    return out + keys[:-8] + resp[:-8] + last[:-8] + data[-32:]


def test_dev_zero_and_a_huge_sparse_file_are_refused_without_reading(work):
    res, out = _perturb(work, 1, memo="/dev/zero")
    _refused(res, out, "--memo", "/dev/zero", "not a regular file")
    huge = work / "huge.memo"
    with open(huge, "wb") as fh:
        fh.truncate(Memo.MAX_BYTES + 1)  # sparse: nothing is allocated, and nothing may be read
    res, out = _perturb(work, 1, memo=str(huge))
    _refused(res, out, "huge.memo", "over the limit")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_the_api_refuses_a_fifo_without_blocking(tmp_path):
    fifo = tmp_path / "memo.fifo"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="not a regular file"):
        Memo.from_file(fifo)
    with pytest.raises(ValueError, match="not a regular file"):
        Memo.from_file("/dev/zero")


def test_a_memo_path_whose_parent_is_a_file_is_refused_before_any_report(work):
    (work / "afile").write_text("x")
    res, out = _perturb(work, 0, "--new-memo", memo=str(work / "afile" / "dev.memo"))
    _refused(res, out, "--memo", "afile", "is not a directory")
    res, out = _perturb(work, 0, "--new-memo", memo=str(work / "nowhere" / "dev.memo"))
    _refused(res, out, "nowhere", "does not exist")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes anywhere")
def test_an_unwritable_memo_folder_is_refused(work):
    folder = work / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        res, out = _perturb(work, 0, "--new-memo", memo=str(folder / "dev.memo"))
        _refused(res, out, "ro", "not writable")
    finally:
        folder.chmod(0o700)


def test_an_unwritable_memo_folder_is_refused_even_for_root(work, monkeypatch):
    import ldpplan.planner._memoized_io as memoized_io

    real = os.access  # the memo's folder as a non-root user would find it
    monkeypatch.setattr(memoized_io.os, "access", lambda path, mode: False if os.fspath(path) == os.fspath(work)
                        else real(path, mode))
    res, out = _perturb(work, 0, "--new-memo")
    _refused(res, out, "--memo", "not writable")


def test_a_memo_changed_by_another_perturb_meanwhile_is_not_overwritten(work, monkeypatch):
    import ldpplan.planner._memoized_io as memoized_io

    assert _perturb(work, 0, "--new-memo")[0].exit_code == 0
    real, calls = memoized_io._identity, []

    def moved(path):  # the second look (before writing back) sees another process's memo
        calls.append(path)
        return real(path) if len(calls) == 1 else ("someone else",)

    monkeypatch.setattr(memoized_io, "_identity", moved)
    before = (work / "dev.memo").read_bytes()
    res, out = _perturb(work, 1)
    _refused(res, out, "--memo", "changed while the reports were drawn")
    assert (work / "dev.memo").read_bytes() == before


def test_a_memo_that_cannot_be_saved_leaves_no_reports(work, monkeypatch):
    import ldpplan.planner._memoized_io as memoized_io

    def broken(path, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(memoized_io, "write_bytes_atomic", broken)
    res, out = _perturb(work, 0, "--new-memo")
    _refused(res, out, "--memo", "cannot be written", "no report was written")
    assert not (work / "dev.memo").exists()


# ----------------------------------------------------------------------------- user ids
@pytest.mark.parametrize("ids, bad", [(["1", "01"], "01"), (["12", "١٢"], "١٢"), (["7", "²"], "²"), (["+3"], "+3"),
                                      (["1099511627776"], "1099511627776"), (["-1"], "-1")])
def test_user_ids_are_parsed_strictly_and_the_error_names_the_column(work, ids, bad):
    (work / "ids.csv").write_text("user,item\n" + "".join(f"{u},3\n" for u in ids), encoding="utf-8")
    res, out = _perturb(work, 0, "--new-memo", users="ids.csv")
    _refused(res, out, "column 'user'", repr(bad), "ASCII digits")
    assert "invalid literal" not in res.output and not (work / "dev.memo").exists()


def test_the_largest_documented_user_id_is_accepted(work):
    _users(work / "big.csv", [0, Memo.MAX_USER], [9, 9])
    res, _ = _perturb(work, 0, "--new-memo", users="big.csv")
    assert res.exit_code == 0, res.output
    memo = Memo.from_file(work / "dev.memo")
    assert memo.users == 2 and memo.values_per_user(np.array([Memo.MAX_USER]))[0] == 1


# ----------------------------------------------------------------------------- keys and the domain cap
def test_memo_keys_never_overflow_at_the_largest_domain_and_user():
    k = 2**16
    mech = LongitudinalGRR(domain=k, p1=0.5, p2=0.5, rounds=2, max_values=2)
    memo, rng = mech.new_memo(), np.random.default_rng(2)
    users = np.array([0, Memo.MAX_USER, Memo.MAX_USER - 1])
    values = np.array([k - 1, k - 1, 0])
    mech.perturb(values, rng=rng, memo=memo, users=users, round=0)
    back = Memo.from_bytes(memo.to_bytes())
    found, _ = back.lookup(back.keys_of(users, values))
    assert found.all() and (back.keys_of(users, values) >= 0).all()
    assert list(back.values_per_user(users)) == [1, 1, 1]
    assert int(back.keys_of(np.array([Memo.MAX_USER]), np.array([k - 1]))[0]) == (Memo.MAX_USER + 1) * k - 1
    with pytest.raises(ValueError, match="2..2\\^16"):
        LongitudinalGRR(domain=k + 1, p1=0.5, p2=0.5)


def test_load_refuses_a_longitudinal_domain_verify_refuses(plan):
    from ldpplan.mechanisms import plan_fingerprint

    big = json.loads(json.dumps(plan))
    big["domain"]["size"] = big["params"]["domain_size"] = big["spec"]["domain"] = 2**24
    try:
        refused = not ldpplan.planner.verify_plan(big).holds
    except ValueError:
        refused = True
    assert refused
    with pytest.raises(PlanError, match="domain.size: must be an integer in 2..65536"):
        ldpplan.load(big, fingerprint=plan_fingerprint(big))


# ----------------------------------------------------------------------------- --round, --skip-over-limit
def test_a_forgotten_round_names_round_and_a_forgotten_memo_names_memo(work):
    out = work / "x.parquet"
    base = ["perturb", str(work / "plan.json"), "--input", str(work / "users.csv"), "-o", str(out)]
    res = CliRunner().invoke(main, [*base, "--memo", str(work / "dev.memo")])
    _refused(res, out, "--round")
    assert "--memo:" not in res.output
    res = CliRunner().invoke(main, [*base, "--round", "0"])
    _refused(res, out, "--memo")


def test_skip_over_limit_drops_and_counts_the_users_over_the_value_limit(work):
    assert _perturb(work, 0, "--new-memo")[0].exit_code == 0
    assert _perturb(work, 1, users="users.csv")[0].exit_code == 0
    _users(work / "b.csv", range(USERS), [(u + 1) % 10 for u in range(USERS)])  # every user's second value
    assert _perturb(work, 2, users="b.csv")[0].exit_code == 0
    changed = [(u + 2) % 10 if u < 7 else (u + 1) % 10 for u in range(USERS)]  # 7 users take a third value
    _users(work / "c.csv", range(USERS), changed)
    before = (work / "dev.memo").read_bytes()
    res, out = _perturb(work, 3, users="c.csv")
    _refused(res, out, "user 0", "max_values = 2")
    assert (work / "dev.memo").read_bytes() == before
    res, out = _perturb(work, 3, "--skip-over-limit", users="c.csv")
    assert res.exit_code == 0, res.output
    assert "skipped 7 users" in res.output and f"wrote {USERS - 7:,} reports" in res.output
    memo = Memo.from_file(work / "dev.memo")
    assert memo.entries == 2 * USERS and memo.last_round == 3


# ----------------------------------------------------------------------------- estimate names its round
def test_a_forged_later_round_never_becomes_the_default_estimate(work, plan):
    from ldpplan.planner._plan_format import plan_fingerprint, tool_version
    from ldpplan.planner._reports_file import write_reports

    res, r0 = _perturb(work, 0, "--new-memo")
    assert res.exit_code == 0
    forged = work / "forged.parquet"
    write_reports(forged, {"round": np.array([19]), "y": np.array([3])}, mechanism="l-grr",
                  plan_fingerprint=plan_fingerprint(plan), ldpplan_version=tool_version(), seed=None)
    est = ["estimate", str(work / "plan.json"), str(r0), str(forged)]
    res = CliRunner().invoke(main, est + ["--json"])
    assert res.exit_code == 2 and "--min-reports" in res.output and "round 19 has 1 reports" in res.output
    assert f"0: {USERS}" in res.output and "\n" not in res.output.strip()
    res = CliRunner().invoke(main, est + ["--json", "--round", "0"])
    assert res.exit_code == 0 and json.loads(res.output)["round"] == 0 and json.loads(res.output)["n"] == USERS
    res = CliRunner().invoke(main, est + ["--json", "--min-reports", "1"])
    assert res.exit_code == 0 and json.loads(res.output)["round"] == 19 and json.loads(res.output)["n"] == 1
    res = CliRunner().invoke(main, ["estimate", str(work / "plan.json"), str(r0)])
    assert res.exit_code == 0 and "estimate of round 0" in res.output
    res = CliRunner().invoke(main, ["estimate", str(work / "plan.json"), str(r0), "-o", str(work / "e.csv")])
    assert res.exit_code == 0 and "estimates of round 0" in res.output
    res = CliRunner().invoke(main, ["estimate", str(work / "plan.json"), str(r0), "--min-reports", str(USERS + 1)])
    assert res.exit_code == 2 and f"round 0 has {USERS} reports, fewer than the minimum {USERS + 1}" in res.output

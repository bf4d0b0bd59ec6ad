"""``ldpplan audit --runtime-cmd`` checks what a program prints and bounds how it runs (issue 26, point 6).

Each malformed output (a float, a string, a boolean, a nested value, an out-of-domain value, a byte
>= 256, a wrong column name, a round that is not the input's) exits 2 naming the column; a program
that overruns its time has its whole process group ended (a child it forked included); endless
output on stdout or into OUTPUT is cut at its bound; a memoized plan passes one MEMO directory
through the rounds of one memo. The programs are small shell scripts (awk writes one fixed line per
input line)."""
from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ldpplan.planner import InputDataError, example_spec, make_plan
from ldpplan.planner.auditing.external import ExternalRuntime
from ldpplan.planner.cli import main

needs_sh = pytest.mark.skipif(shutil.which("sh") is None or shutil.which("awk") is None or os.name != "posix",
                              reason="needs a POSIX sh and awk")
pytestmark = needs_sh

RR_SPEC = {"mechanism": "rr", "domain": 4, "users": 1000, "target": {"epsilon": 1.0}}
OUE_SPEC = {"mechanism": "idue", "levels": [{"name": "all", "epsilon": 1.0, "items": 5}]}
#: writes its first argument once per input line (``$4`` is INPUT, ``$5`` OUTPUT)
PRINTER = "#!/bin/sh\nawk -v line=\"$1\" 'NF { print line }' \"$4\" > \"$5\"\n"


@pytest.fixture(scope="module")
def plans(tmp_path_factory):
    folder = tmp_path_factory.mktemp("plans")
    out = {}
    for name, spec in (("rr", RR_SPEC), ("oue", OUE_SPEC), ("daily", example_spec("longitudinal-daily")),
                       ("rappor", example_spec("longitudinal-rappor"))):
        out[name] = folder / f"{name}.json"
        out[name].write_text(json.dumps(make_plan(spec)))
    printer = folder / "printer.sh"
    printer.write_text(PRINTER)
    printer.chmod(0o755)
    out["printer"] = printer
    return out


def _audit(plans, plan, line, *extra):
    cmd = f"sh {plans['printer']} '{line}'"
    return CliRunner().invoke(main, ["audit", str(plans[plan]), "--runtime-cmd", cmd, "--trials", "100", *extra])


@pytest.mark.slow  # 18 CLI runs; decode_reports' own test covers the rules in the fast tier
@pytest.mark.parametrize("plan, line, column, shown", [
    ("rr", '{"y": 1.5}', "y", "1.5"),                 # a float: the fractional part would leak
    ("rr", '{"y": 2.0}', "y", "2.0"),                 # an integral float is not an integer
    ("rr", '{"y": "1"}', "y", '"1"'),                 # a string
    ("rr", '{"y": true}', "y", "true"),               # a boolean
    ("rr", '{"y": [1]}', "y", "[1]"),                 # nested
    ("rr", '{"y": {"v": 1}}', "y", '{"v": 1}'),       # nested
    ("rr", '{"y": -1}', "y", "-1"),                   # out of the output domain
    ("rr", '{"y": 1000004}', "y", "1000004"),         # k + 10^6
    ("rr", '{"y": 18446744073709551617}', "y", "18446744073709551617"),  # wraps int64
    ("rr", '{"value": 1}', "value", "rr"),            # a wrong column name
    ("rr", '{"y": 1, "extra": 0}', "extra", "rr"),    # an extra column
    ("oue", '{"bits": [256]}', "bits", "[256]"),      # a byte >= 256 (would wrap to 0)
    ("oue", '{"bits": [1, 0]}', "bits", "[1, 0]"),    # the wrong width
    ("oue", '{"bits": [255]}', "bits", "[255]"),      # padding bits set (5 items in 8 bits)
    ("daily", '{"round": 0, "value": 1}', "value", "round, y"),
    ("daily", '{"round": 0, "y": 10}', "y", "10"),
    ("daily", '{"round": 5, "y": 1}', "round", "5"),  # not the input's round
    ("rappor", '{"round": 0, "bits": [256]}', "bits", "[256]"),
])
def test_each_malformed_output_exits_2_naming_the_column(plans, plan, line, column, shown):
    result = _audit(plans, plan, line)
    assert result.exit_code == 2, result.output
    message = result.output.strip().splitlines()[-1]
    assert "runtime-cmd: report line 1" in message and repr(column) in message and shown in message
    assert "internal error" not in result.output


@pytest.mark.slow
def test_well_formed_constant_output_is_audited(plans):
    """The checks refuse nothing that is well formed: a constant report is a (useless) LDP mechanism."""
    result = _audit(plans, "rr", '{"y": 1}', "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["consistent"]


def _script(tmp_path, body: str) -> list[str]:
    path = tmp_path / "client.sh"
    path.write_text("#!/bin/sh\n" + body + "\n")
    return ["sh", str(path)]


def _running(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def _runtime(plans, tmp_path, body, timeout=30.0):
    plan = json.loads(plans["rr"].read_text())
    return ExternalRuntime(plans["rr"], _script(tmp_path, body), plan, timeout=timeout)


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_on_timeout_the_whole_process_group_is_ended(plans, tmp_path):
    pidfile = tmp_path / "child.pid"
    runtime = _runtime(plans, tmp_path, f"sleep 300 & echo $! > {pidfile}; sleep 300", timeout=1.0)
    start = time.monotonic()
    with pytest.raises(InputDataError, match="no answer within 1 s"):
        runtime.perturb(np.zeros(3, dtype=np.int64), np.random.default_rng(0))
    assert time.monotonic() - start < 10
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while _running(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(child)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_child_left_behind_after_success_is_ended_and_not_waited_for(plans, tmp_path):
    pidfile = tmp_path / "child.pid"
    runtime = _runtime(plans, tmp_path, f"sleep 300 & echo $! > {pidfile}\n"
                                        "awk 'NF { print \"{\\\"y\\\": 0}\" }' \"$3\" > \"$4\"")
    start = time.monotonic()
    reports = runtime.perturb(np.zeros(3, dtype=np.int64), np.random.default_rng(0))
    assert reports["y"].tolist() == [0, 0, 0] and time.monotonic() - start < 10
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while _running(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(child)


def test_endless_output_on_stdout_is_cut_at_its_bound(plans, tmp_path):
    runtime = _runtime(plans, tmp_path, "yes 'progress line'")
    with pytest.raises(InputDataError, match="printed more than 8388608 bytes on stdout and stderr"):
        runtime.perturb(np.zeros(3, dtype=np.int64), np.random.default_rng(0))


def test_endless_output_into_the_report_file_is_cut_at_its_bound(plans, tmp_path):
    runtime = _runtime(plans, tmp_path, "yes '{\"y\": 1}' > \"$4\"")
    with pytest.raises(InputDataError, match="wrote more than .* bytes to OUTPUT"):
        runtime.perturb(np.zeros(3, dtype=np.int64), np.random.default_rng(0))


@pytest.mark.slow
def test_the_cli_takes_a_runtime_timeout(plans, tmp_path):
    cmd = " ".join(_script(tmp_path, "sleep 300"))
    result = CliRunner().invoke(main, ["audit", str(plans["rr"]), "--runtime-cmd", cmd, "--runtime-timeout", "0.5"])
    assert result.exit_code == 2 and "no answer within 0.5 s" in result.output
    result = CliRunner().invoke(main, ["audit", str(plans["rr"]), "--runtime-cmd", '"unclosed'])
    assert result.exit_code == 2 and "--runtime-cmd" in result.output and "internal error" not in result.output


def test_a_memoized_plan_passes_one_memo_directory_through_its_rounds(plans, tmp_path):
    """MEMO ($5) is the same directory for every round of one memo, a fresh empty one for a new memo, and
    is removed with the memo; the inputs carry user, round and item."""
    log = tmp_path / "log"
    body = (f"echo \"$5 $(ls \"$5\" | wc -l)\" >> {log}; touch \"$5/state\"\n"
            "awk '/\"user\"/ { match($0, /\"round\": [0-9]+/); r = substr($0, RSTART + 9, RLENGTH - 9);"
            " print \"{\\\"round\\\": \" r \", \\\"y\\\": 0}\" }' \"$3\" > \"$4\"")
    plan = json.loads(plans["daily"].read_text())
    runtime = ExternalRuntime(plans["daily"], _script(tmp_path, body), plan)
    assert runtime.memoized
    with pytest.raises(ValueError, match="memo"):
        runtime.perturb(np.zeros(2, dtype=np.int64), np.random.default_rng(0))
    memo, other = runtime.new_memo(), runtime.new_memo()
    users = np.array([7, 9])
    for t, m in ((0, memo), (1, memo), (0, other)):
        reports = runtime.perturb(np.array([1, 2]), np.random.default_rng(t), memo=m, users=users, round=t)
        assert reports["round"].tolist() == [t, t] and reports["y"].tolist() == [0, 0]
    seen = [line.split() for line in log.read_text().splitlines()]
    assert seen == [[memo.path, "0"], [memo.path, "1"], [other.path, "0"]]
    path = memo.path
    memo.close()
    assert not os.path.exists(path)


def _example_names():
    from ldpplan.planner.families import all_families

    return [name for fam in all_families() for name in fam.examples]


@pytest.mark.slow
@pytest.mark.parametrize("example", _example_names())
def test_the_runtimes_own_reports_pass_the_checks_for_every_family(example):
    """What the numpy runtime reports, written as the protocol's JSON lines, is accepted bit for bit:
    the checks refuse only what the plan's runtime would not produce."""
    import io

    from ldpplan.planner.auditing._external_reports import check_domain
    from ldpplan.planner.auditing.external import decode_reports
    from ldpplan.planner.auditing.pairs import audit_pairs

    plan = make_plan(example_spec(example))
    runtime = ExternalRuntime("unused.json", ["true"], plan)
    data = audit_pairs(plan)[0].make(0, 50)
    memo = dict(memo=runtime.reference.new_memo(), users=np.arange(50), round=0) if runtime.memoized else {}
    fmt = runtime.report_format(data, memo.get("users"), memo.get("round"))
    ref = runtime.reference.perturb(data, rng=np.random.default_rng(1), **memo)
    text = "\n".join(json.dumps({k: np.asarray(v[i]).tolist() for k, v in ref.columns.items()})
                     for i in range(len(ref)))
    columns, lines = decode_reports(io.BytesIO(text.encode()), len(ref), fmt)
    check_domain(runtime.reference, columns, lines)
    assert set(columns) == set(ref.columns)
    for name, value in ref.columns.items():
        assert columns[name].dtype == value.dtype and np.array_equal(columns[name], value)

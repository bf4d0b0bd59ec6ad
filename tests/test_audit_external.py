"""``ldpplan audit --runtime-cmd``: independent JavaScript clients (examples/clients) audit consistent;
copies with a planted leak are flagged (skipped where node is absent)."""
from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ldpplan.planner import InputDataError, audit, example_spec, make_plan
from ldpplan.planner.auditing._external_reports import BATCH, ReportColumn
from ldpplan.planner.auditing.external import ExternalRuntime, ReportFormat, decode_reports, encode_inputs
from ldpplan.planner.cli import main

CLIENTS = Path(__file__).resolve().parents[1] / "examples" / "clients"
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node (JavaScript) is not installed: the example clients "
                                                     "cannot run")

RR_SPEC = {"mechanism": "rr", "domain": 4, "users": 1000, "target": {"epsilon": 1.0}}
OUE_SPEC = {"mechanism": "idue", "levels": [{"name": "all", "epsilon": 1.0, "items": 8}]}


def _write(tmp_path, spec, name):
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(make_plan(spec)))
    return path


def _leaky_copy(tmp_path, client, old, new):
    """A copy of the clients with one line changed (the planted leak)."""
    folder = tmp_path / "leaky"
    shutil.copytree(CLIENTS, folder)
    text = (folder / client).read_text()
    assert old in text
    (folder / client).write_text(text.replace(old, new))
    return folder / client


def test_inputs_and_reports_round_trip_the_documented_json_lines():
    assert encode_inputs(np.array([3, 0])) == ['{"item": 3}', '{"item": 0}']
    assert json.loads(encode_inputs((np.array([0, 2, 2]), np.array([4, 1])))[0]) == {"items": [4, 1]}
    assert encode_inputs(np.array([2]), users=np.array([7]), round=3) == ['{"user": 7, "round": 3, "item": 2}']
    fmt_y = ReportFormat("rr", (ReportColumn("y", "int64"),))
    cols, lines = decode_reports(io.BytesIO(b'{"y": 2}\n\n{"y": 0}\n'), 2, fmt_y)
    assert cols["y"].tolist() == [2, 0] and cols["y"].dtype == np.int64 and lines.tolist() == [1, 3]
    fmt_bits = ReportFormat("idue", (ReportColumn("bits", "uint8", 2),))
    bits = decode_reports(io.BytesIO(b'{"bits": [5, 1]}\n{"bits": [0, 255]}'), 2, fmt_bits)[0]["bits"]
    assert bits.dtype == np.uint8 and bits.tolist() == [[5, 1], [0, 255]]
    for text, n, fmt, named in (
            (b'{"y": 1}', 2, fmt_y, "wrote 1 reports for 2 inputs"), (b'{"y": 1}\n{"y": 1}', 1, fmt_y, "line 2"),
            (b"nope", 1, fmt_y, "line 1: not one JSON object"), (b'{"y": "a"}', 1, fmt_y, "column 'y'"),
            (b'{"bits": [1]}', 1, fmt_bits, "column 'bits' must be an array of 2"),
            (b'{"bits": [1, 256]}', 1, fmt_bits, "column 'bits'"), (b'{"bits": [1, -1]}', 1, fmt_bits, "column 'bits'"),
            (b'{"bits": [1, 2.0]}', 1, fmt_bits, "column 'bits'"), (b'{"bits": [true, 1]}', 1, fmt_bits, "column 'bits'"),
            (b'{"bits": [[1], 1]}', 1, fmt_bits, "column 'bits'"), (b'{"y": 1}', 1, fmt_bits, "column 'y' is not"),
            (b"\xff\xfe", 1, fmt_y, "not UTF-8"), (b'{"y": 1' + b" " * 400 + b"}", 1, fmt_y, "longer than")):
        with pytest.raises(InputDataError, match=re.escape(named)):
            decode_reports(io.BytesIO(text), n, fmt)


def test_a_batch_is_checked_at_once_and_the_first_bad_report_named():
    """Batched checking (BATCH reports at a time) names the same first bad line as a per-report check."""
    fmt = ReportFormat("rr", (ReportColumn("y", "int64"),))
    good = b'{"y": 1}\n' * (BATCH + 10)
    cols, _ = decode_reports(io.BytesIO(good), BATCH + 10, fmt)
    assert cols["y"].sum() == BATCH + 10
    for bad in (b'{"y": false}', b'{"y": 1.0}', b'{"y": 9223372036854775808}'):
        text = good + bad + b"\n" + b'{"y": 1}\n' * 5
        with pytest.raises(InputDataError, match=f"report line {BATCH + 11}: column 'y'"):
            decode_reports(io.BytesIO(text), BATCH + 16, fmt)


def test_a_failing_program_is_bad_input_naming_the_command(tmp_path):
    plan = _write(tmp_path, RR_SPEC, "rr")
    runtime = ExternalRuntime(plan, ["false"], json.loads(plan.read_text()))
    with pytest.raises(InputDataError, match="runtime-cmd: exited with status 1"):
        runtime.perturb(np.zeros(3, dtype=np.int64), np.random.default_rng(0))
    result = CliRunner().invoke(main, ["audit", str(plan), "--runtime-cmd", "no-such-program-xyz", "--trials", "100"])
    assert result.exit_code == 2 and "runtime-cmd" in result.output


@needs_node
@pytest.mark.slow
@pytest.mark.parametrize("client, spec", [("rr.js", RR_SPEC), ("unary.js", OUE_SPEC)])
def test_javascript_clients_audit_consistent_at_default_trials(tmp_path, client, spec):
    plan = _write(tmp_path, spec, client)
    result = CliRunner().invoke(main, ["audit", str(plan), "--runtime-cmd", f"{NODE} {CLIENTS / client}",
                                       "--seed", "3", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["consistent"] and data["epsilon_lower_bound"] >= 0.8 * data["epsilon_claimed"]
    assert data["min_detectable_epsilon"] <= 1.1 * data["epsilon_claimed"]


@needs_node
@pytest.mark.slow
@pytest.mark.parametrize("client, spec, old, new", [
    # RR: the true item is kept 5 points more often than mu (true epsilon about 1.2)
    ("rr.js", RR_SPEC, "const keep = plan.params.mu;", "const keep = plan.params.mu + 0.05;"),
    # OUE: item 5's report bit is 1 with probability a + 0.1 (one item leaks)
    ("unary.js", OUE_SPEC, "(j === user.item ? a[j] : b[j])", "(j === user.item ? a[j] + (j === 5 ? 0.1 : 0) : b[j])"),
])
def test_javascript_copies_with_a_planted_leak_are_flagged(tmp_path, client, spec, old, new):
    plan = _write(tmp_path, spec, client)
    leaky = _leaky_copy(tmp_path, client, old, new)
    result = CliRunner().invoke(main, ["audit", str(plan), "--runtime-cmd", f"{NODE} {leaky}", "--seed", "4"])
    assert result.exit_code == 1, result.output
    assert "NO" in result.output


@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
@needs_node
def test_javascript_rr_client_with_the_python_api(tmp_path):
    plan_path = _write(tmp_path, RR_SPEC, "rr")
    plan = json.loads(plan_path.read_text())
    runtime = ExternalRuntime(plan_path, [NODE, str(CLIENTS / "rr.js")], plan)
    result = audit(plan, mechanism=runtime, trials=3_000, rng=np.random.default_rng(5))
    assert result.consistent and result.explored == 4


@needs_node
@pytest.mark.slow
@pytest.mark.parametrize("example", ["longitudinal-daily", "longitudinal-rappor"])
def test_the_longitudinal_javascript_client_audits_consistent(tmp_path, example):
    """examples/clients/longitudinal.js keeps its memo in MEMO across invocations (crypto randomness, so
    the audit is not reproducible run to run): one report within epsilon_1, 64 reports of one value
    within epsilon_perm."""
    text = (CLIENTS / "longitudinal.js").read_text()
    assert "Math.random" not in text and "crypto.randomBytes" in text
    plan = _write(tmp_path, example_spec(example), example)
    result = CliRunner().invoke(main, ["audit", str(plan), "--runtime-cmd", f"{NODE} {CLIENTS / 'longitudinal.js'}",
                                       "--seed", "3", "--trials", "3000", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["consistent"]
    many = [p for p in data["pairs"] if "most reported" in p["event"]]
    assert many and all(p["holds"] for p in many)


@needs_node
@pytest.mark.slow
def test_a_longitudinal_javascript_client_that_drops_its_memo_is_flagged(tmp_path):
    """The planted leak: a fresh permanent response at every report (the memo never read), so 64
    reports average the noise away and the many-reports test exceeds epsilon_perm (exit 1).

    The client draws from crypto.randomBytes (SEED ignored), so the run is random; its false-miss
    probability is computed exactly. Leaky, every report is an independent draw of the composed channel
    (plan "longitudinal-daily": k = 10, p1 = 0.85849, p2 = 0.25659): Pr[y = x] = a = p1 p2 + (1 - p1) q2
    = 0.23197, Pr[y = j != x] = b = 0.08534 (q1 = (1 - p1)/9, q2 = (1 - p2)/9). The event "0 strictly
    most reported in 64 reports" then has Pr[E | 0] = P0 = 0.89912 and Pr[E | 1] = P1 = 0.0062955
    (multinomial, ``longitudinal.audit._grr_win``): ln(P0/P1) = 4.96 against epsilon_perm = 4.
    The audit flags iff cp_lower(K0, T, alpha) > e^4 cp_upper(K1, T, alpha), alpha = 0.05/(2 m), m = 11
    tests (the 11 pairs of the run's JSON: 3 plan pairs, 4 screened candidates twice); K0 ~ Bin(T, P0), K1 ~ Bin(T, P1)
    independent. Summing Pr[K0 = k0] Pr[K1 > kmax(k0)] exactly: miss = 1.1e-2 at T = 3,000 (the old
    flake), 9e-7 at 6,000, 6.8e-10 at T = 8,000 (still < 1e-8 for any m <= 33). So T = 8,000: the
    decisive pair's trials scale with T, the 2,000 screening runs do not (about 1.6x the CPU of 3,000)."""
    plan = _write(tmp_path, example_spec("longitudinal-daily"), "daily")
    leaky = _leaky_copy(tmp_path, "longitudinal.js", "if (!(key in memo.responses)) memo.responses[key]",
                        "memo.responses[key]")
    result = CliRunner().invoke(main, ["audit", str(plan), "--runtime-cmd", f"{NODE} {leaky}", "--seed", "4",
                                       "--trials", "8000", "--json"])
    assert result.exit_code == 1, result.output
    many = [p for p in json.loads(result.output)["pairs"] if "most reported" in p["event"]]
    assert many and not many[0]["holds"]

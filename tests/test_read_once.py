"""Issue 28, point 1: one command reads its plan file once, hashes it once, builds one runtime,
solves once and verifies once; the plan's JSON Schema is composed at most once per process.

The counters are on the real functions: every ``open`` of the plan file (``io.open``, which
``Path.read_text`` goes through), every sha256 of a plan's canonical JSON (the fingerprint's hash:
canonical plan JSON starts with ``{"baselines":``), every outermost ``from_plan`` of a runtime
class, and the calls of the family's parse, solve and verify functions and of the schema
composition (a profile hook counts the calls of their code objects, however they were imported).
"""
from __future__ import annotations

import builtins
import hashlib
import io
import os
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ldpplan import mechanisms
from ldpplan.planner import _plan_format
from ldpplan.planner.cli import main

#: the functions whose calls are counted, by example (one per family): (counter name, module, function)
_COUNTED = {
    "hadamard-synthetic": (("parse", "ldpplan.planner.hadamard.spec", "parse_spec"),
                 ("solve", "ldpplan.solvers.hadamard", "solve_hadamard"),
                 ("verify", "ldpplan.planner.hadamard.verify", "verify")),
    "pie-rr": (("parse", "ldpplan.planner.pie.spec", "parse_spec"),
            ("solve", "ldpplan.planner.pie._solve", "select"),
            ("verify", "ldpplan.planner.pie.verify", "verify")),
    "health": (("parse", "ldpplan.planner.idue.spec", "parse_idue_spec"),
             ("solve", "ldpplan.solvers.idue", "solve_idue"),
             ("verify", "ldpplan.planner.idue.verify", "verify")),
}


class Trace:
    """Counters of one traced command (see the module docstring)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, plan_file: Path | None, example: str) -> None:
        self.counts: Counter[str] = Counter()
        self._plan_file = os.path.realpath(plan_file) if plan_file is not None else None
        self._codes: dict[object, str] = {}
        for name, module, attr in _COUNTED[example]:
            __import__(module)
            self._codes[getattr(sys.modules[module], attr).__code__] = name
        composed = getattr(_plan_format, "_composed_schema", None)
        if composed is None:  # before issue 28 (measuring the "before"): composed by load_schema at every call
            self._codes[_plan_format.load_schema.__code__] = "schema"
        else:
            self._codes[composed.__wrapped__.__code__] = "schema"
            composed.cache_clear()   # as in a fresh process: the composition is counted
            _plan_format._plan_validator.cache_clear()
        real_open, real_sha = io.open, hashlib.sha256

        def counting_open(file, *args, **kwargs):
            if self._plan_file is not None and isinstance(file, (str, os.PathLike)) \
                    and os.path.realpath(file) == self._plan_file:
                self.counts["plan_open"] += 1
            return real_open(file, *args, **kwargs)

        def counting_sha(data=b"", *args, **kwargs):
            if bytes(data[:13]) == b'{"baselines":':
                self.counts["fingerprint"] += 1
            return real_sha(data, *args, **kwargs)

        monkeypatch.setattr(io, "open", counting_open)
        monkeypatch.setattr(builtins, "open", counting_open)
        monkeypatch.setattr(hashlib, "sha256", counting_sha)
        self._depth = 0
        for cls in set(mechanisms.RUNTIMES.values()):
            for klass in cls.__mro__:
                if "from_plan" in vars(klass):
                    monkeypatch.setattr(klass, "from_plan", self._counting(vars(klass)["from_plan"].__func__))

    def _counting(self, func):
        def from_plan(cls, plan):
            if self._depth == 0:
                self.counts["runtime"] += 1
            self._depth += 1
            try:
                return func(cls, plan)
            finally:
                self._depth -= 1
        return classmethod(from_plan)

    def _profile(self, frame, event, arg) -> None:
        if event == "call":
            name = self._codes.get(frame.f_code)
            if name is not None:
                self.counts[name] += 1

    def run(self, args: list[str]) -> Counter[str]:
        sys.setprofile(self._profile)
        try:
            result = CliRunner().invoke(main, args, catch_exceptions=False)
        finally:
            sys.setprofile(None)
        assert result.exit_code == 0, result.output
        return self.counts


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A Hadamard and an IDUE plan (by example name), reports of each, an aggregate of the Hadamard reports."""
    root = tmp_path_factory.mktemp("read_once")
    runner = CliRunner()
    rng = np.random.default_rng(1)
    out = {}
    for example in ("hadamard-synthetic", "health"):
        name = example
        plan = root / f"{name}.json"
        assert runner.invoke(main, ["plan", "--example", example, "-o", str(plan)]).exit_code == 0
        labels = mechanisms.load(plan).labels
        items = rng.integers(0, 10_000, 500) if labels is None else rng.choice(labels, 500)
        inputs = root / f"{name}.csv"
        inputs.write_text("item\n" + "\n".join(str(x) for x in items) + "\n")
        reports = root / f"{name}.parquet"
        result = runner.invoke(main, ["perturb", str(plan), "--input", str(inputs), "-o", str(reports), "--seed", "1"])
        assert result.exit_code == 0, result.output
        out[name] = (plan, inputs, reports)
    agg = root / "hadamard-agg.json"
    assert runner.invoke(main, ["aggregate", str(out["hadamard-synthetic"][0]), str(out["hadamard-synthetic"][2]),
                                "-o", str(agg)]
                         ).exit_code == 0
    out["aggregate"] = agg
    out["root"] = root
    return out


@pytest.mark.parametrize("example,source", [("hadamard-synthetic", "reports"), ("hadamard-synthetic", "aggregate"),
                                            ("health", "reports")])
def test_estimate_reads_once(files, example, source, monkeypatch):
    plan, _, reports = files[example]
    given = files["aggregate"] if source == "aggregate" else reports
    counts = Trace(monkeypatch, plan, example).run(["estimate", str(plan), str(given), "--json"])
    assert (counts["plan_open"], counts["fingerprint"], counts["runtime"], counts["verify"]) == (1, 1, 1, 1), counts
    assert counts["schema"] == 1, counts


@pytest.mark.parametrize("command", ["perturb", "aggregate", "verify"])
def test_runtime_commands_read_once(files, command, monkeypatch, tmp_path):
    plan, inputs, reports = files["hadamard-synthetic"]
    args = {"perturb": ["perturb", str(plan), "--input", str(inputs), "-o", str(tmp_path / "r.parquet"), "--seed", "2"],
            "aggregate": ["aggregate", str(plan), str(reports), "-o", str(tmp_path / "agg.json")],
            "verify": ["verify", str(plan)]}[command]
    counts = Trace(monkeypatch, plan, "hadamard-synthetic").run(args)
    assert counts["plan_open"] == 1 and counts["fingerprint"] == 1 and counts["verify"] == 1, counts
    assert counts["runtime"] == (0 if command == "verify" else 1), counts
    assert counts["schema"] == 1, counts


@pytest.mark.parametrize("example", ["pie-rr", "health"])
def test_plan_verifies_once(example, monkeypatch, tmp_path):
    # the family's plan() verifies; the CLI writes that plan without verifying it again
    output = tmp_path / "plan.json"
    counts = Trace(monkeypatch, None, example).run(["plan", "--example", example, "-o", str(output)])
    assert (counts["verify"], counts["schema"], counts["fingerprint"]) == (1, 1, 1), counts
    assert counts["parse"] >= 1 and counts["solve"] == (1 if example == "health" else 2), counts
    assert mechanisms.Plan.read(output).verification.holds is True


@pytest.mark.xfail(strict=True, reason="the family's verify re-parses (and PIE re-solves) the embedded spec to check "
                                        "the plan against it (planner/<family>/verify.py; issue 28 point 1 left open)")
@pytest.mark.parametrize("example", ["pie-rr", "health"])
def test_plan_parses_and_solves_once(example, monkeypatch, tmp_path):
    counts = Trace(monkeypatch, None, example).run(["plan", "--example", example, "-o", str(tmp_path / "plan.json")])
    assert counts["parse"] == 1 and counts["solve"] == 1, counts

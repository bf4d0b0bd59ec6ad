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
import dataclasses
import hashlib
import io
import json
import os
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ldpplan import mechanisms, planner
from ldpplan.planner import _plan_format
from ldpplan.planner.cli import main

#: the functions whose calls are counted, by example (one per family): (counter name, module, function)
_COUNTED = {
    "hadamard-synthetic": (("parse", "ldpplan.planner.hadamard.spec", "parse_spec"),
                 ("solve", "ldpplan.solvers.hadamard", "solve_hr"),
                 ("verify", "ldpplan.planner.hadamard.verify", "verify")),
    "pie-rr": (("parse", "ldpplan.planner.pie.spec", "parse_spec"),
            ("solve", "ldpplan.planner.pie._solve", "select"),
            ("verify", "ldpplan.planner.pie.verify", "verify")),
    "health": (("parse", "ldpplan.planner.idue.spec", "parse_idue_spec"),
             ("solve", "ldpplan.solvers.idue", "solve_idue"),
             ("verify", "ldpplan.planner.idue.verify", "verify")),
    "longitudinal-rappor": (("parse", "ldpplan.planner.longitudinal.spec", "parse_spec"),
                            ("solve", "ldpplan.planner.longitudinal.plan", "plan_budgets"),
                            ("verify", "ldpplan.planner.longitudinal.verify", "verify")),
    "pckv-synthetic": (("parse", "ldpplan.planner.pckv.spec", "parse_spec"),
                       ("solve", "ldpplan.planner.pckv._allocation", "solve_on_grid"),
                       ("verify", "ldpplan.planner.pckv.verify", "verify")),
    "uldp-urr": (("parse", "ldpplan.planner.uldp.spec", "parse_spec"),
                 ("solve", "ldpplan.planner.uldp.plan", "solve_numbers"),
                 ("verify", "ldpplan.planner.uldp.verify", "verify")),
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
    """A Hadamard and a PIE plan (the examples on 200 and 64 items), reports of each, an aggregate of the first."""
    root = tmp_path_factory.mktemp("read_once")
    runner = CliRunner()
    rng = np.random.default_rng(1)
    out = {}
    for example, smaller in (("hadamard-synthetic", {"domain": 200}), ("pie-rr", {"domain_size": 64, "n": 5000})):
        name = example
        plan, spec = root / f"{name}.json", root / f"{name}-spec.json"
        spec.write_text(json.dumps({**planner.example_spec(example), **smaller}), encoding="utf-8")
        assert runner.invoke(main, ["plan", str(spec), "-o", str(plan)]).exit_code == 0
        mech = mechanisms.load(plan)
        items = rng.integers(0, mech.domain_size, 500) if mech.labels is None else rng.choice(mech.labels, 500)
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
                                            ("pie-rr", "reports")])
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


#: ``ldpplan plan`` of one embedded example of every family (fast ones)
PLAN_EXAMPLES = list(_COUNTED)
#: solves of one plan: one, plus the other problems its ``baselines`` solve once each: PCKV's two comparison
#: allocations (``naive``, ``tight``), Hadamard's other block count (B = 1). Verify adds none (before: it did).
PLAN_SOLVES = {name: {"pckv-synthetic": 3, "hadamard-synthetic": 2}.get(name, 1) for name in PLAN_EXAMPLES}
#: solves of ``ldpplan verify`` run on its own: the spec's solution (and Hadamard's baseline B again; IDUE
#: and ULDP check their numbers exactly without re-solving)
VERIFY_SOLVES = {name: {"health": 0, "uldp-urr": 0, "hadamard-synthetic": 2}.get(name, 1) for name in PLAN_EXAMPLES}


@pytest.mark.parametrize("example", PLAN_EXAMPLES)
def test_plan_parses_solves_and_verifies_once(example, monkeypatch, tmp_path):
    # the family's plan() verifies, sharing build_plan's parse and solve (planner/_solve_once.py);
    # the CLI writes that plan without verifying it again
    output = tmp_path / "plan.json"
    counts = Trace(monkeypatch, None, example).run(["plan", "--example", example, "-o", str(output)])
    assert (counts["verify"], counts["schema"], counts["fingerprint"]) == (1, 1, 1), counts
    assert (counts["parse"], counts["solve"]) == (1, PLAN_SOLVES[example]), counts
    assert mechanisms.Plan.read(output).verification.holds is True
    # verify on its own stays independent: it parses and (where the family solves) solves the embedded spec
    alone = Trace(monkeypatch, output, example).run(["verify", str(output)])
    assert alone["verify"] == 1 and alone["parse"] >= 1 and alone["solve"] == VERIFY_SOLVES[example], alone


def test_verify_in_a_plan_scope_rederives_another_spec(tmp_path):
    # the memo hands verify build's parse and solve only for the same spec mapping: a plan whose
    # embedded spec was changed after build is checked against what that spec asks for
    from ldpplan.planner.families import all_examples
    from ldpplan.planner._solve_once import plan_scope

    family = all_examples()["hadamard-synthetic"][0]
    raw = {**planner.example_spec("hadamard-synthetic"), "domain": 200}
    with plan_scope():
        plan = family.room.build_plan(raw)
        assert family.verify(plan).holds
        plan["spec"] = {**plan["spec"], "epsilon": 1.5}
        check = family.verify(plan)
    assert not check.holds and "params.epsilon: must match the embedded spec" in check.message, check.message


# --------------------------------------------------------------------------- the Plan object itself
def _plan_dict(files) -> dict:
    return json.loads(files["hadamard-synthetic"][0].read_text(encoding="utf-8"))


def test_plan_is_typed_read_only_and_fingerprinted_once(files):
    import copy
    import pickle

    from ldpplan.mechanisms._plan import content_fingerprint

    path = files["hadamard-synthetic"][0]
    raw = _plan_dict(files)
    plan = mechanisms.Plan.read(path)
    # typed envelope fields, the same content as the file
    assert plan.mechanism == raw["mechanism"] and plan.format_version == "2.0"
    assert plan.domain == mechanisms.Domain(raw["domain"]["size"], None)
    assert (plan.verification.holds, plan.verification.message) == (True, raw["verification"]["message"])
    assert plan == raw and plan.to_dict() == raw and dict(plan.params) == raw["params"]
    # one fingerprint: the hash of the content, equal to plan_fingerprint of the dict; from every source
    assert plan.fingerprint == content_fingerprint(raw) == mechanisms.plan_fingerprint(raw)
    for source in (str(path), raw, plan):
        assert mechanisms.Plan.read(source).fingerprint == plan.fingerprint
    assert mechanisms.Plan.loads(path.read_text(encoding="utf-8")).fingerprint == plan.fingerprint
    assert mechanisms.Plan.loads(path.read_bytes()).fingerprint == plan.fingerprint
    assert mechanisms.Plan.read(plan) is plan and mechanisms.read_plan(plan) is plan
    assert mechanisms.read_envelope(plan) is plan
    # the public readers of a path still give the caller's own plain, mutable dict (their contract)
    for copy_ in (mechanisms.read_envelope(str(path)), mechanisms.read_envelope(raw)):
        assert type(copy_) is dict and copy_ == raw and json.loads(json.dumps(copy_)) == raw
        copy_["params"]["blocks"] = -1
    assert plan["params"]["blocks"] != -1 and raw["params"]["blocks"] != -1
    # read-only views that stay dicts and lists (isinstance, json) ...
    assert isinstance(plan["params"], dict) and isinstance(plan["baselines"], list)
    assert json.loads(json.dumps(plan["spec"])) == raw["spec"]
    for mutate in (lambda: plan["params"].__setitem__("blocks", 1), lambda: plan["baselines"].append({}),
                   lambda: plan["params"].update(blocks=1), lambda: plan["domain"].pop("size")):
        with pytest.raises(TypeError, match="read-only"):
            mutate()
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.mechanism = plan.mechanism + "x"  # type: ignore[misc]
    # ... whose copies are plain and mutable; the input dict is copied (changing it changes nothing)
    params = copy.deepcopy(plan["params"])
    params["blocks"] = 1
    raw["params"]["blocks"] = 1
    assert plan["params"]["blocks"] == _plan_dict(files)["params"]["blocks"] != 1
    again = pickle.loads(pickle.dumps(plan))
    assert again == plan and again.fingerprint == plan.fingerprint and isinstance(again, mechanisms.Plan)
    with pytest.raises(TypeError):
        again["params"]["blocks"] = 1


def test_plan_read_takes_a_str_as_a_path_always(files, tmp_path):
    # a plan file whose name starts with "{" is a file (as read_plan read every str at 79765dd), not JSON text
    text = files["hadamard-synthetic"][0].read_text(encoding="utf-8")
    odd = tmp_path / "{x}.json"
    odd.write_text(text, encoding="utf-8")
    from_file = mechanisms.Plan.read(str(odd))
    assert from_file == mechanisms.Plan.read(odd) == mechanisms.Plan.loads(text)
    assert from_file.fingerprint == mechanisms.Plan.loads(text).fingerprint
    assert mechanisms.load(str(odd)).domain_size == from_file.domain.size
    from ldpplan.mechanisms import PlanError

    with pytest.raises(PlanError, match="does not exist"):  # JSON text given as a path: a missing file, one line
        mechanisms.Plan.read('{"format_version": "2.0"}')
    with pytest.raises(PlanError, match="must be a JSON object"):
        mechanisms.Plan.loads("[1, 2]")
    with pytest.raises(PlanError, match="valid JSON"):
        mechanisms.Plan.loads("{x}")


def test_typed_params_are_the_runtime_class_params_read_once(files):
    from ldpplan.mechanisms import PlanError
    from ldpplan.mechanisms._plan_object import typed_params

    for name in ("hadamard-synthetic", "pie-rr"):
        plan = mechanisms.Plan.read(files[name][0])
        cls = mechanisms.runtime_class(plan.mechanism)
        params = plan.typed_params
        assert type(params) is cls.Params and params == cls.Params.from_mapping(plan.to_dict()["params"])
        assert plan.typed_params is params and typed_params(plan, cls) is params  # kept in the Plan
        assert typed_params(plan.to_dict(), cls) == params  # a dict: read now, the same record
        assert {f: getattr(params, f) for f in cls.Params.field_types()} == dict(plan.params)
        with pytest.raises(dataclasses.FrozenInstanceError):
            params.epsilon = 9.0  # type: ignore[misc]
        assert mechanisms.load(plan).domain_size == params.domain_size  # from_plan reads the same record
    raw = _plan_dict(files)
    bad = mechanisms.Plan.read({**raw, "params": {**raw["params"], "blocks": 2.5}})  # the envelope lets it by
    with pytest.raises(PlanError, match=r"^params\.blocks: must be an integer"):
        bad.typed_params
    with pytest.raises(PlanError, match=r"^params\.blocks: must be an integer"):
        mechanisms.load(bad)


def test_plan_refuses_what_read_envelope_refused_with_the_same_line(files):
    from ldpplan.mechanisms import PlanError
    from ldpplan.mechanisms._envelope import read_envelope as envelope_of

    raw = _plan_dict(files)
    fields = mechanisms.runtime_class(raw["mechanism"]).PLAN_FIELDS
    cases = [{**raw, "format_version": "2"}, {**raw, "extra": 1}, {**raw, "mechanism": "nope"},
             {**raw, "domain": {"size": 2**40, "labels": None}}, {**raw, "params": {**raw["params"], "x": float("nan")}},
             {**raw, "guarantee": {**raw["guarantee"], "made_up": 1}},
             {**raw, "verification": {"holds": "yes", "message": ""}}]
    for bad in cases:
        with pytest.raises(PlanError) as old:
            if bad["mechanism"] == "nope":
                mechanisms.runtime_class(bad["mechanism"])
            envelope_of(bad, fields)
        with pytest.raises(PlanError) as new:
            mechanisms.Plan.read(bad)
        assert str(new.value) == str(old.value)
    # the pin: the same refusals, from the cached fingerprint
    plan = mechanisms.Plan.read(raw)
    for pin in ("sha256:" + "0" * 64, "sha256:xyz", 7):
        with pytest.raises(PlanError) as old:
            envelope_of(raw, fields, fingerprint=pin)
        with pytest.raises(PlanError) as new:
            mechanisms.Plan.read(plan, fingerprint=pin)
        assert str(new.value) == str(old.value)
    assert mechanisms.load(plan, fingerprint="sha256:" + plan.fingerprint.upper()).domain_size == plan.domain.size
    # a verified=True read refuses an unverified plan, a Plan as a dict
    unverified = mechanisms.Plan.read({**raw, "verification": {"holds": False, "message": "no"}})
    with pytest.raises(PlanError, match="verification.holds: must be true"):
        mechanisms.load(unverified)


def _measure() -> None:  # pragma: no cover - `python tests/test_read_once.py`: the counts of the closing note
    """Print the traced counts of estimate, plan (PIE, health), verify, aggregate and perturb of the installed
    ldpplan (run it against another install, e.g. the main branch's, with ``PYTHONPATH=DIR``)."""
    import tempfile

    import ldpplan
    from ldpplan.mechanisms import _envelope

    root, runner = Path(tempfile.mkdtemp()), CliRunner()
    plan, inputs, reports = root / "h.json", root / "in.csv", root / "r.parquet"
    assert runner.invoke(main, ["plan", "--example", "hadamard-synthetic", "-o", str(plan)]).exit_code == 0
    inputs.write_text("item\n" + "\n".join(str(x) for x in np.random.default_rng(1).integers(0, 10_000, 500)) + "\n")
    assert runner.invoke(main, ["perturb", str(plan), "--input", str(inputs), "-o", str(reports), "--seed", "1"]
                         ).exit_code == 0
    runs = {"estimate (hadamard-synthetic)": ("hadamard-synthetic", plan, ["estimate", str(plan), str(reports)]),
            **{f"plan --example {name} -o": (name, None, ["plan", "--example", name, "-o", str(root / f"{name}.json")])
               for name in PLAN_EXAMPLES},
            "verify": ("hadamard-synthetic", plan, ["verify", str(plan)]),
            "aggregate": ("hadamard-synthetic", plan, ["aggregate", str(plan), str(reports), "-o", str(root / "a.json")]),
            "perturb": ("hadamard-synthetic", plan, ["perturb", str(plan), "--input", str(inputs), "-o",
                                                     str(root / "r2.parquet"), "--seed", "2"])}
    print("ldpplan", ldpplan.__file__)
    keys = ("plan_open", "envelope_read", "full_envelope", "fingerprint", "runtime", "parse", "solve", "verify", "schema")
    for name, (example, plan_file, args) in runs.items():
        patch = pytest.MonkeyPatch()
        try:
            trace = Trace(patch, plan_file, example)
            trace._codes[_envelope.read_envelope.__code__] = "envelope_read"
            if hasattr(_envelope, "check_envelope_data"):  # the full checks (before: inside every read_envelope)
                trace._codes[_envelope.check_envelope_data.__code__] = "full_envelope"
            counts = trace.run(args)
        finally:
            patch.undo()
        print(f"{name:30s}", " ".join(f"{k}={counts[k]}" for k in keys))


if __name__ == "__main__":  # pragma: no cover
    _measure()

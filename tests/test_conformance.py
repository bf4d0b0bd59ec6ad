"""Every registered family honours the contract (docs/ARCHITECTURE.md).

spec -> plan -> verify -> load -> perturb -> aggregate -> merge -> estimate -> simulate,
for every example of every family in ``ldpplan.planner.families`` (examples that read
real data skip when ``shared_data_dir`` does), plus the registry, the protocols, immutability,
channel matrices, the numpy-only runtime import and the wheel's single top-level package.
Nothing here names one family's fields: a new family is tested by adding it to the registry.
"""
from __future__ import annotations

import dataclasses
import json
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from _family_helpers import (example_plan, example_runtime, family_cases, fixed_truth, read_inputs, small_example_per_family,
                             perturb, subset, sum_aggregates)

CASES = family_cases()
SMALL = small_example_per_family()
N_USERS = 600


def _families():
    from ldpplan.planner.families import all_families

    return all_families()


# --------------------------------------------------------------------------- registry and protocols
def test_registry_plan_mechanisms_are_exactly_the_runtimes():
    from ldpplan.mechanisms import RUNTIMES
    from ldpplan.planner.families import REGISTRY

    fams = _families()
    assert [fam.name for fam in fams] == list(REGISTRY)
    written = [m for fam in fams for m in fam.plan_mechanisms]
    assert len(written) == len(set(written)), f"a plan mechanism belongs to two families: {written}"
    assert set(written) == set(RUNTIMES)
    for fam in fams:
        # a spec may name the plan mechanism itself: every plan mechanism is one of the family's spec names
        assert set(fam.plan_mechanisms) <= set(fam.spec_mechanisms), fam.name


def test_every_runtime_class_is_importable_and_implements_the_protocol():
    from ldpplan.mechanisms import RUNTIMES, runtime_class
    from ldpplan.mechanisms._protocol import Frozen

    for name in RUNTIMES:
        cls = runtime_class(name)
        assert issubclass(cls, Frozen), f"{name}: runtime classes subclass Frozen"
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen, f"{name}: a frozen dataclass"
        assert "__slots__" in vars(cls), f"{name}: a slotted dataclass (every attribute a declared field)"
        for attr in ("from_plan", "perturb", "aggregate", "estimate", "privacy_map"):
            assert callable(getattr(cls, attr, None)), f"{name}: {attr} missing"


def test_every_family_implements_the_family_protocol():
    import pydantic

    from ldpplan.planner._common import parse_options
    from ldpplan.planner.errors import SpecError
    from ldpplan.planner.families import Family

    for fam in _families():
        assert isinstance(fam, Family), fam
        assert isinstance(fam.name, str) and fam.examples, fam.name
        assert isinstance(fam.input_doc, str) and fam.input_doc.strip(), fam.name
        model = fam.options_model
        assert issubclass(model, pydantic.BaseModel)
        assert model.model_config.get("extra") == "forbid", f"{fam.name}: options_model must forbid extra keys"
        for key, field in model.model_fields.items():
            assert not field.is_required(), f"{fam.name}: option {key} needs a default"
            assert field.description, f"{fam.name}: option {key} needs a description"
        parse_options(model, {})  # every default is valid
        with pytest.raises(SpecError) as info:
            parse_options(model, {"bogus_option_xyz": "1"})
        for key in model.model_fields:
            assert key in str(info.value), f"{fam.name}: the error should list the valid key {key}"


# --------------------------------------------------------------------------- spec -> plan -> verify
@pytest.mark.parametrize("fam,name", CASES)
def test_plan_is_format_2_and_verifies(fam, name, request, tmp_path):
    import ldpplan
    from ldpplan.planner import Table, read_plan, verify_plan, write_plan
    from ldpplan.planner._plan_format import validate_plan

    plan = example_plan(fam, name, request)
    assert plan["format_version"] == "2.0"
    assert plan["mechanism"] in fam.plan_mechanisms
    for key in ("domain", "params", "guarantee", "predicted", "baselines", "planning_inputs", "solver",
                "verification", "spec", "provenance"):
        assert key in plan, f"plan misses {key}"
    assert {"notion", "epsilon"} <= set(plan["guarantee"])
    size, labels = plan["domain"]["size"], plan["domain"]["labels"]
    assert labels is None or len(labels) == size
    for entry in plan["predicted"].values():
        assert {"value", "unit", "source"} <= set(entry)
    assert all("name" in b for b in plan["baselines"])
    for entry in plan["planning_inputs"]:
        assert {"what", "source", "private"} <= set(entry)
    validate_plan(plan)
    json.dumps(plan, allow_nan=False)  # strict JSON
    check = verify_plan(plan)
    assert check.holds is True and plan["verification"]["holds"] is True, check.message
    # through a file and back: still verifies, still loads
    path = tmp_path / "plan.json"
    write_plan(plan, path)
    again = read_plan(path)
    assert type(again) is dict and json.loads(json.dumps(again)) == again  # the API's plan: a plain, mutable dict
    assert verify_plan(again).holds and verify_plan(path).holds
    assert type(ldpplan.load(path)) is type(ldpplan.load(again))
    assert all(isinstance(t, Table) for t in fam.summarize(plan))


# --------------------------------------------------------------------------- load -> runtime object
@pytest.mark.parametrize("fam,name", CASES)
def test_runtime_object_contract(fam, name, request):
    from ldpplan.mechanisms import RUNTIMES, Runtime, runtime_class
    from ldpplan.mechanisms._plan import round_up

    plan, mech = example_runtime(fam, name, request)
    assert isinstance(mech, Runtime)
    assert type(mech) is runtime_class(plan["mechanism"]) and plan["mechanism"] in RUNTIMES
    assert type(runtime_class(plan["mechanism"]).from_plan(plan)) is type(mech)
    assert mech.domain_size == plan["domain"]["size"]
    assert (None if mech.labels is None else list(mech.labels)) == plan["domain"]["labels"]
    assert isinstance(mech.methods, tuple) and "empirical" in mech.methods
    # the privacy map: recomputed from the numbers, never more than the plan claims
    pm = mech.privacy_map()
    assert pm["notion"] == plan["guarantee"]["notion"]
    assert np.isfinite(pm["epsilon"]) and pm["epsilon"] >= 0
    assert pm["epsilon"] <= round_up(plan["guarantee"]["epsilon"])
    # immutable, with a useful repr
    for attr in ("domain_size", "labels", "methods", "a_brand_new_attribute"):
        with pytest.raises(AttributeError):
            setattr(mech, attr, 1)
    with pytest.raises(AttributeError):
        delattr(mech, "domain_size")
    assert not hasattr(mech, "__dict__"), "every attribute is a declared field (slots)"
    assert repr(pickle.loads(pickle.dumps(mech))) == repr(mech)
    text = repr(mech)
    assert " object at 0x" not in text and type(mech).__name__ in text
    # numbers inside runtime objects never change
    state = dict(getattr(mech, "__dict__", {}))
    for cls in type(mech).__mro__:
        for slot in getattr(cls, "__slots__", ()):
            if hasattr(mech, slot):
                state[slot] = getattr(mech, slot)
    for key, value in state.items():
        if isinstance(value, np.ndarray):
            assert not value.flags.writeable, f"{type(mech).__name__}.{key} is a writeable array"


@pytest.mark.parametrize("fam,name", CASES)
def test_channel_matrix_rows_are_distributions(fam, name, request):
    _, mech = example_runtime(fam, name, request)
    channel = getattr(mech, "channel_matrix", None)
    if not callable(channel):
        pytest.skip(f"{type(mech).__name__} defines no channel_matrix")
    try:
        q = np.asarray(channel(), dtype=np.float64)
    except ValueError as exc:  # a documented refusal for domains too large for a dense matrix
        assert "\n" not in str(exc) and "channel_matrix" in str(exc), exc
        pytest.skip(f"channel_matrix refused: {exc}")
    assert q.ndim == 2 and q.shape[0] == mech.domain_size  # Q[x, y]: rows are inputs
    assert np.all(np.isfinite(q)) and np.all(q >= 0) and np.all(q <= 1)
    np.testing.assert_allclose(q.sum(axis=1), 1.0, rtol=0, atol=1e-12)


# --------------------------------------------------------------------------- perturb -> aggregate -> merge -> estimate
@pytest.mark.parametrize("fam,name", CASES)
def test_perturb_aggregate_merge_estimate(fam, name, request, tmp_path):
    from ldpplan.mechanisms import Aggregate, Estimate, Reports

    plan, mech = example_runtime(fam, name, request)
    data = read_inputs(fam, plan, tmp_path, N_USERS, np.random.default_rng(11))
    reports = perturb(mech, data, np.random.default_rng(12))
    assert isinstance(reports, Reports) and len(reports) == N_USERS
    assert " object at 0x" not in repr(reports)
    # same seed, same reports (the runtime has no hidden randomness)
    twin = perturb(mech, data, np.random.default_rng(12))
    for key, col in reports.to_arrays().items():
        np.testing.assert_array_equal(col, twin.to_arrays()[key])

    agg = mech.aggregate(reports)
    assert isinstance(agg, Aggregate) and agg.n == N_USERS
    # merge: a + b is the aggregate of the concatenated reports
    rows = np.arange(N_USERS)
    first, second = subset(reports, rows[:250]), subset(reports, rows[250:])
    merged = mech.aggregate(first) + mech.aggregate(second)
    assert merged == agg and merged.n == N_USERS
    assert sum_aggregates([mech.aggregate(subset(reports, r)) for r in np.array_split(rows, 5)]) == agg
    # to_dict / from_dict round trip, through strict JSON
    doc = json.loads(json.dumps(agg.to_dict(), allow_nan=False))
    back = type(agg).from_dict(doc)
    assert back == agg and back.n == agg.n

    d = mech.domain_size
    for method in mech.methods:
        try:
            est = mech.estimate(agg, method=method)
        except ValueError as exc:  # a method that needs each report (documented): one line naming the need
            assert "\n" not in str(exc) and "Reports" in str(exc), exc
            est = mech.estimate(reports, method=method)
            assert isinstance(est, Estimate) and est.method == method and est.n == N_USERS
            continue
        assert isinstance(est, Estimate) and est.method == method and est.n == N_USERS
        assert est.frequency.shape == (d,) and np.all(np.isfinite(est.frequency))
        if est.mean is not None:
            assert est.mean.shape == (d,)
        if est.std_error is not None:
            assert est.std_error.shape == (d,) and np.all(est.std_error >= 0)
        from_reports = mech.estimate(reports, method=method)
        np.testing.assert_allclose(from_reports.frequency, est.frequency, rtol=1e-12, atol=1e-12)
        doc = est.to_dict(mech.labels)
        assert doc["method"] == method and doc["n"] == N_USERS and len(doc["frequency"]) == d
        # issue 19: every estimate has per-item confidence intervals with a stated method
        low, high = est.confidence_interval(0.95)
        assert est.interval_method and low.shape == high.shape == (d,)
        assert np.all((0 <= low) & (low <= high) & (high <= 1))
    default = mech.estimate(agg)
    assert default.method == mech.methods[0]
    with pytest.raises(ValueError) as info:
        mech.estimate(agg, method="no-such-estimator")
    for method in mech.methods:
        assert method in str(info.value)


@pytest.mark.parametrize("fam,name", SMALL)
def test_empirical_estimate_is_close_to_the_truth(fam, name, request, tmp_path):
    # the unbiased estimator on n users, all holding the first domain element: the error of
    # each frequency stays within 6 standard errors (the estimator's own, when it gives one)
    plan, mech = example_runtime(fam, name, request)
    n = 4000
    data = read_inputs(fam, plan, tmp_path, n)
    est = mech.estimate(mech.aggregate(perturb(mech, data, np.random.default_rng(5))), method="empirical")
    truth = fixed_truth(plan)
    if est.std_error is not None:
        assert np.all(np.abs(est.frequency - truth) <= 6 * est.std_error + 1e-12)
    else:  # no standard error: the truth's coordinate is at least the closest one
        assert np.argmax(est.frequency) == 0
    low, high = est.confidence_interval(1 - 1e-9)  # z = 6.1: the truth is inside
    assert np.all((low <= truth + 1e-12) & (truth - 1e-12 <= high)), (low, high)


@pytest.mark.parametrize("fam,name", SMALL)
def test_aggregate_validates_report_columns(fam, name, request, tmp_path):
    # report files are attacker-controlled: wrong dtype or shape of any column is a ValueError
    plan, mech = example_runtime(fam, name, request)
    reports = perturb(mech, read_inputs(fam, plan, tmp_path, 40, np.random.default_rng(3)), np.random.default_rng(4))
    arrays = reports.to_arrays()
    for key, col in arrays.items():
        col = np.asarray(col)
        bad_versions = {"extra axis": col.reshape(col.shape + (1,))[..., [0, 0]] if col.ndim else col}
        if col.dtype.kind != "f":
            bad_versions["float"] = col.astype(np.float64) + 0.5
        if col.ndim == 2:
            bad_versions["dropped axis"] = col[:, 0]
        for what, bad in bad_versions.items():
            with pytest.raises(ValueError):
                tampered = type(reports).from_arrays(reports.mechanism, {**arrays, key: bad})
                mech.aggregate(tampered)
            # (from_arrays may refuse already; either way it is a ValueError, never a silent count)


def test_aggregates_of_different_mechanisms_do_not_merge():
    from ldpplan.mechanisms import Aggregate

    a = Aggregate("mechanism-a", 3, {"y": np.array([1, 2, 0])})
    with pytest.raises(ValueError):
        a + Aggregate("mechanism-b", 3, {"y": np.array([1, 2, 0])})
    with pytest.raises(ValueError):
        a + Aggregate("mechanism-a", 3, {"y": np.array([1, 2, 0, 0])})
    with pytest.raises(ValueError):
        Aggregate.from_dict({**a.to_dict(), "format": "other"})


# --------------------------------------------------------------------------- simulate
def _simulate_and_check(fam, plan, trials: int):
    from ldpplan.planner import SimulateOptions, SimulationReport, Table

    calls = []
    report = fam.simulate(plan, SimulateOptions(trials=trials, seed=1), progress=lambda a, t: calls.append((a, t)))
    assert isinstance(report, SimulationReport)
    assert report.tables and all(isinstance(t, Table) for t in report.tables)
    json.dumps(report.data, allow_nan=False)
    for advance, total in calls:
        assert total is not None and total > 0 and advance >= 0
    if calls:
        assert sum(a for a, _ in calls) <= calls[-1][1]


@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
@pytest.mark.parametrize("fam,name", SMALL)
def test_simulate_small(fam, name, request):
    _simulate_and_check(fam, example_plan(fam, name, request), trials=1)


@pytest.mark.slow
@pytest.mark.parametrize("fam,name", CASES)
def test_simulate_every_example(fam, name, request):
    _simulate_and_check(fam, example_plan(fam, name, request), trials=2)


# --------------------------------------------------------------------------- imports and packaging
def test_runtime_import_is_numpy_only():
    from ldpplan.mechanisms import RUNTIMES

    modules = sorted({cls.__module__ for cls in RUNTIMES.values()})
    code = ("import sys, importlib\n"
            "import ldpplan\n"
            "import ldpplan.mechanisms\n"
            f"for m in {modules!r}:\n    importlib.import_module(m)\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('cvxpy', 'scipy', 'matplotlib', 'pydantic')"
            " or m.startswith(('ldpplan.planner', 'ldpplan.solvers')))\n"
            "print('BAD', bad)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd="/")
    assert out.returncode == 0, out.stderr
    assert "BAD []" in out.stdout, out.stdout


def test_installed_distribution_has_one_top_level_package():
    import importlib.metadata as md

    dist = md.distribution("ldpplan")
    top = (dist.read_text("top_level.txt") or "").split()
    assert top == ["ldpplan"]


@pytest.mark.slow
def test_wheel_contains_only_the_ldpplan_package(tmp_path):
    import shutil

    repo = Path(__file__).resolve().parents[1]
    src = tmp_path / "src"  # build from a copy: the source tree gets no build/ folder
    src.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE"):
        if (repo / name).is_file():
            shutil.copy2(repo / name, src / name)
    for name in ("planner", "solvers", "mechanisms"):
        shutil.copytree(repo / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "-q", "-w", str(tmp_path)],
                         capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        pytest.skip(f"cannot build a wheel here: {out.stderr.strip().splitlines()[-1:]}")
    (wheel,) = tmp_path.glob("ldpplan-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"ldpplan"}, tops
    for sub in ("ldpplan/__init__.py", "ldpplan/planner/__init__.py", "ldpplan/mechanisms/__init__.py",
                "ldpplan/solvers/__init__.py", "ldpplan/planner/schemas/plan-2.0.schema.json"):
        assert sub in names, sub
    # every source module is in the wheel, under its installed name (setup.py finds the packages)
    top = src / "planner" / "_top"
    sources = {f"ldpplan/{p.relative_to(top).as_posix()}" for p in top.rglob("*.py")}
    for layer in ("planner", "solvers", "mechanisms"):
        sources |= {f"ldpplan/{p.relative_to(src).as_posix()}" for p in (src / layer).rglob("*.py")
                    if "_top" not in p.parts}
    assert sources <= set(names), sorted(sources - set(names))
    assert not any("/_top/" in n for n in names)


def test_estimate_is_a_frozen_record():
    from ldpplan.mechanisms import Estimate

    est = Estimate(frequency=[0.5, 0.5], mean=None, method="empirical", n=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        est.n = 3  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        est.a_brand_new_attribute = 3  # type: ignore[attr-defined]
    assert not hasattr(est, "__dict__") and pickle.loads(pickle.dumps(est)).n == 2
    with pytest.raises(ValueError):
        est.frequency[0] = 1.0


def test_reports_and_aggregates_are_frozen_slotted_records():
    from ldpplan.mechanisms import Aggregate, Batch, Reports

    reports = Reports("any-mechanism", {"y": [1, 0, 1]})
    agg = Aggregate("any-mechanism", 3, {"y": [1, 2]}, plan_fingerprint="a" * 64,
                    batches=[Batch(batch_id="b" * 32, digest="sha256:" + "0" * 64, rows=3, source="f.parquet")])
    for obj, field in ((reports, "columns"), (agg, "n")):
        assert dataclasses.is_dataclass(obj) and not hasattr(obj, "__dict__")
        for name in (field, "a_brand_new_attribute"):
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(obj, name, 1)
        with pytest.raises(dataclasses.FrozenInstanceError):
            delattr(obj, field)
    assert pickle.loads(pickle.dumps(agg)) == agg and agg.n == 3 and agg.identified
    assert len(pickle.loads(pickle.dumps(reports))) == 3

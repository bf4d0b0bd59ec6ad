"""One registry and family rooms of one shape (issue 18; ``docs/ARCHITECTURE.md``, "A new family").

* every planner room ``planner/<family>/`` has exactly the same public modules, with the same
  function names in them; every runtime package ``mechanisms/<family>/`` has ``__init__`` and
  ``runtime`` and declares its classes;
* every mechanism name is declared once: a plan mechanism in one runtime class's ``PLAN_FIELDS``,
  a spec mechanism in one family's declaration; ``RUNTIMES``, the planner's plan mechanisms, the
  composed schema and the conformance test's cases are all derived from the registry line;
* outside the rooms (``planner/<family>/``, ``mechanisms/<family>/``; the solver modules
  ``solvers/<family>.py``, ``solvers/_<family>_*.py`` name their own family's), mechanism names
  appear only where listed here (the remaining ones, each with its reason);
* the recipe holds for the tests: the cross-family tests' per-mechanism tables come from each
  family's conformance module ``tests/test_<family>_conformance.py`` (a registered toy family feeds
  them alone), and no test file but a family's own names its mechanisms (a reasoned allowlist aside).
"""
from __future__ import annotations

import ast
import collections
import dataclasses
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: the public modules of every planner room (anything else is a private ``_*.py`` helper)
ROOM_MODULES = {"__init__", "spec", "plan", "verify", "claims", "inputs", "simulate", "tables", "audit"}


def _registry() -> tuple[str, ...]:
    from ldpplan.planner.families import REGISTRY

    return tuple(REGISTRY)


def _public_modules(folder: Path) -> set[str]:
    return {p.stem for p in folder.glob("*.py") if p.stem == "__init__" or not p.stem.startswith("_")}


# --------------------------------------------------------------------------- rooms of one shape
def test_the_registry_line_names_the_family_folders():
    from ldpplan.mechanisms import runtime_families

    names = _registry()
    assert len(names) == len(set(names)) and len(names) >= 4
    # a runtime package without a planner room (or the reverse) is a family half-registered
    assert sorted(names) == list(runtime_families())
    # the two registry lines (planner: FAMILIES; runtime: RUNTIME_PACKAGES) list the same families in one order,
    # and each runtime package is a folder of mechanisms/ (nothing is found by walking the disk at run time)
    from ldpplan.mechanisms import RUNTIME_PACKAGES
    from ldpplan.planner.families import FAMILIES, all_families

    assert [fam.name for fam in FAMILIES] == [fam.name for fam in all_families()] == list(names)
    assert [p.__name__ for p in RUNTIME_PACKAGES] == [f"ldpplan.mechanisms.{n}" for n in names]
    assert {p.parent.name for p in (ROOT / "mechanisms").glob("*/__init__.py")} == set(names)
    rooms = {p.parent.name for p in (ROOT / "planner").glob("*/__init__.py")
             if "FAMILY" in p.read_text(encoding="utf-8")}
    assert rooms == set(names)


@pytest.mark.parametrize("family", _registry())
def test_every_planner_room_has_the_same_public_modules(family):
    assert _public_modules(ROOT / "planner" / family) == ROOM_MODULES


@pytest.mark.parametrize("family", _registry())
def test_every_runtime_package_has_init_and_runtime(family):
    folder = ROOT / "mechanisms" / family
    assert {"__init__", "runtime"} <= _public_modules(folder)
    package = importlib.import_module(f"ldpplan.mechanisms.{family}")
    runtime = importlib.import_module(f"ldpplan.mechanisms.{family}.runtime")
    assert package.RUNTIME_CLASSES and all(isinstance(c, type) for c in package.RUNTIME_CLASSES)
    for cls in package.RUNTIME_CLASSES:  # re-exported from runtime, each naming its plan mechanisms
        assert getattr(runtime, cls.__name__) is cls and cls.PLAN_FIELDS.mechanisms, cls


@pytest.mark.parametrize("family", _registry())
def test_room_functions_have_the_fixed_names(family):
    import pydantic

    from ldpplan.planner._common import SpecBase

    def module(name):
        return importlib.import_module(f"ldpplan.planner.{family}.{name}")

    for mod, attr in (("plan", "build_plan"), ("verify", "verify"), ("tables", "summarize"),
                      ("simulate", "simulate"), ("inputs", "read_inputs"), ("inputs", "iter_inputs"),
                      ("audit", "pairs"), ("audit", "domain")):
        assert callable(getattr(module(mod), attr, None)), f"{family}.{mod}.{attr}"
    assert issubclass(module("simulate").SimulateOptions, pydantic.BaseModel)
    assert isinstance(module("inputs").INPUT_DOC, str) and module("inputs").INPUT_DOC.strip()
    spec = module("spec")
    assert any(isinstance(v, type) and issubclass(v, SpecBase) and v is not SpecBase for v in vars(spec).values())
    claims = module("claims")
    assert claims.__doc__ and any(callable(getattr(claims, n)) for n in claims.__all__)


@pytest.mark.parametrize("family", _registry())
def test_a_family_declares_only_what_is_its_own(family):
    from ldpplan.planner.families import ModuleFamily, Room

    fam = importlib.import_module(f"ldpplan.planner.{family}").FAMILY
    assert isinstance(fam, ModuleFamily) and fam.name == family
    assert fam.package == f"ldpplan.planner.{family}"
    assert {f.name for f in dataclasses.fields(fam)} == {"name", "spec_mechanisms", "examples", "package", "room",
                                                         "runtime_classes", "runtime"}
    # the plan mechanisms are the runtime classes' PLAN_FIELDS, in their order
    classes = importlib.import_module(f"ldpplan.mechanisms.{fam.runtime or family}").RUNTIME_CLASSES
    assert fam.runtime_classes is classes
    assert fam.plan_mechanisms == tuple(m for c in classes for m in c.PLAN_FIELDS.mechanisms)
    # the operations are the room's own functions (referenced, not looked up by name): a room
    # function replaced after import would not be called, so the references must be the very objects
    assert isinstance(fam.room, Room)

    def module(name):
        return importlib.import_module(f"ldpplan.planner.{family}.{name}")

    fixed = {"build_plan": module("plan").build_plan, "verify": module("verify").verify,
             "summarize": module("tables").summarize, "simulate": module("simulate").simulate,
             "options_model": module("simulate").SimulateOptions, "read_inputs": module("inputs").read_inputs,
             "iter_inputs": module("inputs").iter_inputs, "input_doc": module("inputs").INPUT_DOC,
             "audit_pairs": module("audit").pairs, "audit_domain": module("audit").domain}
    claims = module("claims")
    hooks = {name: getattr(claims, name, None) for name in ("explain_items", "shuffle_randomizer", "report_facts",
                                                             "report_spec")}
    assert {f.name for f in dataclasses.fields(Room)} == set(fixed) | set(hooks)
    for name, value in {**fixed, **hooks}.items():
        assert getattr(fam.room, name) is value, f"{family}: room.{name}"
    assert fam.options_model is fixed["options_model"] and fam.input_doc is fixed["input_doc"]


def test_family_rooms_import_nothing_heavy():
    # ``import ldpplan.planner`` reads no room (the planner extra's pydantic stays optional, ``ldpplan --help``
    # stays light); the first registry lookup imports every room, its public modules explicitly, and the
    # heavy packages stay deferred
    import subprocess
    import sys

    heavy = ("scipy", "cvxpy", "matplotlib", "pyarrow", "dask", "jsonschema")
    rooms = f"sorted(m for m in sys.modules if m.startswith(tuple(f'ldpplan.planner.{{f}}' for f in {_registry()!r})))"
    code = ("import sys\nimport ldpplan.planner\nfrom ldpplan.planner import families\n"
            f"print({rooms})\nprint('pydantic' in sys.modules)\n"
            "families.spec_mechanisms()\n"
            f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({heavy!r})))\nprint({rooms})")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd="/")
    assert out.returncode == 0, out.stderr
    before, pydantic, found, room_modules = out.stdout.strip().splitlines()
    assert before == "[]" and pydantic == "False"
    assert found == "[]"
    # every room's public modules are imported by the registry line's imports (no lookup on first use)
    for family in _registry():
        for name in sorted(ROOM_MODULES - {"__init__"}):
            assert f"'ldpplan.planner.{family}.{name}'" in room_modules, (family, name)


def test_the_runtime_imports_nothing_of_the_planner_and_nothing_heavy():
    # ``import ldpplan.mechanisms`` imports its registry line (every runtime package): numpy only
    import subprocess
    import sys

    code = ("import sys\nimport ldpplan.mechanisms as m\nm.RUNTIMES\n"
            "print(sorted({x.split('.')[0] for x in sys.modules} & {'scipy', 'cvxpy', 'pydantic', 'click', "
            "'matplotlib', 'pyarrow', 'dask', 'jsonschema'}))\n"
            "print(sorted(x for x in sys.modules if x.startswith(('ldpplan.planner', 'ldpplan.solvers'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd="/")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[]", "[]"]


def test_explain_items_names_the_families_with_item_sets():
    # the registry (not the family object, which sees no other family) names the mechanisms that have them
    from ldpplan.planner import families

    with_sets = [m for f in families.all_families() if f.has_item_sets for m in f.plan_mechanisms]
    assert with_sets  # at least one family has item-set budgets
    without = next(f for f in families.all_families() if not f.has_item_sets)
    plan = {"mechanism": without.plan_mechanisms[0]}
    with pytest.raises(families.SpecError) as err:
        families.explain_items(plan, ["0"])
    assert all(repr(m) in str(err.value) for m in with_sets) and without.name in str(err.value)
    with pytest.raises(families.SpecError, match=f"the {without.name} family has none"):
        without.explain_items(plan, ["0"])


# --------------------------------------------------------------------------- each name declared once
def test_each_mechanism_name_is_declared_exactly_once():
    from ldpplan.mechanisms import RUNTIMES, family_runtimes, runtime_families
    from ldpplan.planner.families import all_families, family_for, family_of_plan, spec_mechanisms

    declared = collections.Counter(m for fam in runtime_families() for cls in family_runtimes(fam)
                                   for m in cls.PLAN_FIELDS.mechanisms)
    assert declared and max(declared.values()) == 1, declared
    assert set(declared) == set(RUNTIMES)
    fams = all_families()
    planned = collections.Counter(m for fam in fams for m in fam.plan_mechanisms)
    assert planned == declared
    spec_names = collections.Counter(n for fam in fams for n in fam.spec_mechanisms)
    assert max(spec_names.values()) == 1, spec_names
    for fam in fams:  # a family name used as a spec name belongs to that family (``ldpplan options pie``)
        assert not set(fam.spec_mechanisms) & ({f.name for f in fams} - {fam.name}), fam.name
    for fam in fams:
        assert set(fam.plan_mechanisms) <= set(fam.spec_mechanisms), fam.name
        for n in fam.spec_mechanisms:
            assert family_for(n) is fam and spec_mechanisms()[n] == fam.name
        for m in fam.plan_mechanisms:
            assert family_of_plan({"mechanism": m}) is fam
            assert RUNTIMES[m].__module__.startswith(f"ldpplan.mechanisms.{fam.runtime or fam.name}.")


def test_schema_and_runtimes_are_derived_from_the_declarations():
    from ldpplan.mechanisms import RUNTIMES
    from ldpplan.planner._plan_format import load_schema
    from ldpplan.planner.families import all_families

    schema = load_schema("plan-2.0")
    assert schema["properties"]["mechanism"]["enum"] == sorted(RUNTIMES)
    conditions = [part["if"]["properties"]["mechanism"]["enum"] for part in schema["allOf"]]
    assert conditions == [list(fam.plan_mechanisms) for fam in all_families()]


def test_one_registry_line_registers_a_family(toy_family):
    # with the registry line ("toy",) alone, everything reads the toy family: names, plans, schema-free lookups
    from ldpplan.mechanisms import RUNTIMES
    from ldpplan.planner import families

    assert families.family_names() == ["toy"]
    assert families.spec_mechanisms() == {"toy": "toy", "toy-rr": "toy"}
    assert families.family_for("toy") is toy_family.FAMILY
    plan = toy_family.FAMILY.plan(toy_family.FAMILY.examples["toy-example"])
    assert families.family_of_plan(plan) is toy_family.FAMILY and set(RUNTIMES) == {"toy-rr"}


def test_conformance_parametrizes_over_the_registry():
    import test_conformance

    cases = {case.values[0].name for case in test_conformance.CASES}
    assert cases == set(_registry())
    assert {case.values[0].name for case in test_conformance.SMALL} == set(_registry())
    # and names no family or mechanism of its own (a new family is tested by its registry line)
    from ldpplan.planner.families import all_families

    names = {fam.name for fam in all_families()} | {n for fam in all_families() for n in fam.spec_mechanisms}
    tree = ast.parse((ROOT / "tests" / "test_conformance.py").read_text(encoding="utf-8"))
    literals = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    assert not literals & names, sorted(literals & names)


# --------------------------------------------------------------------------- names outside the rooms
#: Mechanism-name string literals (docstrings aside) left outside the rooms ``planner/<family>/``,
#: ``mechanisms/<family>/``, each with its reason. The list only shrinks: a new literal fails here.
ALLOWED_OUTSIDE_ROOMS = {
    # the registry line itself (read from it: registering a family edits no list here)
    "planner/families.py": set(_registry()),
    # "auto" in Hadamard's solver room is its blocks option, not the longitudinal spec mechanism "auto"
    # (issue 22 pins both); the solver rooms may name their own family's mechanisms
    "solvers/hadamard.py": {"auto"},
    # the shuffle solver's vocabulary of randomizer-specific bounds ("rr": the exact binary-RR curve,
    # "krr", "glh"); which bound a plan gets is its family's hook (planner/pie/claims.shuffle_randomizer);
    # the Python API takes the plan's mechanism names "rr" (k-ary RR) and "glh" (issue 26)
    "planner/shuffle.py": {"rr", "glh"},
    "solvers/shuffle.py": {"rr", "glh"},
    # "numeric" is PCKV's allocation value (issue 12), not the numeric family's spec name
    "solvers/pckv.py": {"numeric"},
}


def _solver_room(rel: Path, families: tuple[str, ...]) -> str | None:
    """The family whose solver room this is (``solvers/<family>.py``, ``solvers/_<family>_*.py``), if any."""
    if len(rel.parts) != 2 or rel.parts[0] != "solvers":
        return None
    for fam in families:
        if rel.stem == fam or rel.stem.startswith(f"_{fam}_"):
            return fam
    return None


def _name_literals(path: Path, names: set[str]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body
            and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in docs and node.value in names}


def test_mechanism_names_stay_in_their_rooms():
    from ldpplan.planner.families import all_families

    fams = all_families()
    own = {f.name: {f.name, *f.spec_mechanisms, *f.plan_mechanisms} for f in fams}
    names = set().union(*own.values())
    found = {}
    for layer in ("planner", "solvers", "mechanisms"):
        for path in (ROOT / layer).rglob("*.py"):
            rel = path.relative_to(ROOT)
            if len(rel.parts) > 2 and rel.parts[0] in ("planner", "mechanisms") and rel.parts[1] in _registry():
                continue  # a family's own room
            solver_of = _solver_room(rel, _registry())
            hits = _name_literals(path, names) - (own[solver_of] if solver_of else set())
            if hits:
                found[rel.as_posix()] = hits
    extra = {f: sorted(h - ALLOWED_OUTSIDE_ROOMS.get(f, set())) for f, h in found.items()}
    assert not {f: h for f, h in extra.items() if h}, extra


# --------------------------------------------------------------------------- the recipe holds for tests
#: Mechanism-name literals (docstrings aside) in test files that are not a family's own
#: (``tests/test_<family>.py``, ``tests/test_<family>_*.py``, which may name their family's
#: mechanisms). None is a per-family table: each is one existing family used as the vehicle of a
#: cross-family feature, a paper case of that family, or a word that is also a mechanism name.
#: A table over the registry reads the families' conformance modules instead
#: (``tests/_family_helpers.py``); a new family adds nothing here. The list only shrinks.
ALLOWED_IN_CROSS_FAMILY_TESTS = {
    # one plan as the vehicle of a cross-family feature (aggregates, files, CLI, audit, shuffler, explain)
    "test_aggregate_memory.py": {"urr"},
    "test_audit.py": {"glh", "rr"},
    "test_audit_external.py": {"idue", "rr"},
    "test_audit_external_bounds.py": {"idue", "rr"},
    "test_audit_search.py": {"glh", "idue", "pckv-ue", "rr", "urr"},
    "test_cli.py": {"rr"},
    "test_cli_commands.py": {"uldp", "urr"},
    "test_cli_polish.py": {"idue", "pckv-ue", "rr"},
    "test_cli_readers.py": {"rr"},
    "test_cli_tables.py": {"idue", "uldp"},
    "test_explain.py": {"idue-ps", "pie"},
    "test_grid.py": {"pckv-grr", "pckv-ue"},
    "test_planning_inputs.py": {"idue", "uldp"},
    "test_privkvm.py": {"pckv-ue"},
    "test_reports_parquet.py": {"rr"},
    "test_shuffle.py": {"glh", "rr"},
    "test_shuffle_plan.py": {"glh", "rr", "uldp"},
    "test_shuffle_gate.py": {"glh", "rr", "uldp"},
    "test_central_console.py": {"glh", "rr"},
    "test_unary_mle.py": {"urap"},
    # the wheel without the planner: a client loads one plan of each of four families (not a coverage table)
    "test_packaging.py": {"glh", "idue", "pckv-ue", "urap"},
    # PCKV's cross-column count rules; an in-memory Aggregate labelled "rr" for the merge rules
    "test_aggregate_integrity.py": {"pckv-grr", "pckv-ue", "rr"},
    "test_pckv_private.py": {"rr"},
    # paper cases: GLH's near-zero cell, IDUE-PS's sampling variance, PCKV's padding (issue 19)
    "test_confidence_intervals.py": {"glh", "idue-ps", "pckv-ue", "rr"},
    # issue 16's reproductions (a uRAP, an IDUE and a PIE plan edited by hand)
    "test_plan_gate.py": {"idue", "pie", "uldp"},
    # "auto" is PCKV's allocation value too, not only the longitudinal spec mechanism
    "test_pckv_planner.py": {"auto", "numeric"},
    "test_pckv_simulation.py": {"auto"},
    # "numeric" is PCKV's allocation value too, not only the numeric family's name
    "test_pckv_solver.py": {"numeric"},
    # the red team of issue 26: the lifetime brute force (every longitudinal mechanism) and the shuffler's gate
    "test_redteam_issue26.py": {"l-grr", "l-osue", "l-oue", "l-soue", "l-sue"},
    "test_redteam_shuffle.py": {"glh", "l-grr", "rr"},
}
# this file names what its two lists allow
ALLOWED_IN_CROSS_FAMILY_TESTS["test_registry.py"] = set().union(*ALLOWED_IN_CROSS_FAMILY_TESTS.values(),
                                                                 *ALLOWED_OUTSIDE_ROOMS.values())


def _own_family(path: Path, families: tuple[str, ...]) -> str | None:
    """The family whose own test file this is (``test_<family>.py`` / ``test_<family>_*.py``), if any."""
    for fam in families:
        if path.stem == f"test_{fam}" or path.stem.startswith(f"test_{fam}_"):
            return fam
    return None


def test_cross_family_tests_name_no_mechanism():
    # the recipe holds for the tests: no table of a cross-family test lists mechanisms; a family's
    # names appear in its own test files (and its conformance module) only
    from ldpplan.planner.families import all_families

    fams = all_families()
    own = {f.name: {f.name, *f.spec_mechanisms, *f.plan_mechanisms} for f in fams}
    names = set().union(*own.values())
    extra = {}
    for path in sorted((ROOT / "tests").glob("*.py")):
        hits = _name_literals(path, names) - own.get(_own_family(path, _registry()), set())
        hits -= ALLOWED_IN_CROSS_FAMILY_TESTS.get(path.name, set())
        if hits:
            extra[path.name] = sorted(hits)
    assert not extra, extra
    # and every registered family has its conformance module, by its name
    for fam in fams:
        assert (ROOT / "tests" / f"test_{fam.name}_conformance.py").is_file(), fam.name


def test_the_recipe_a_new_family_touches_its_rooms_its_tests_and_the_registry_line(toy_family):
    # with the registry line ("toy",), every cross-family table is the toy's own declarations and the
    # coverage checks of the cross-family tests pass without a line of theirs naming it
    import copy

    import _family_helpers
    import test_aggregate_integrity
    import test_cli_polish
    import test_confidence_intervals
    import test_plan_gate
    import test_predicted_vs_simulated

    import ldpplan
    from ldpplan.planner import families

    fam = toy_family.FAMILY
    assert _family_helpers.conformance(fam) is toy_family
    assert _family_helpers.aggregate_specs() == toy_family.AGGREGATE_SPECS
    assert set(_family_helpers.interval_specs(100)) == set(fam.plan_mechanisms) == {"toy-rr"}
    test_aggregate_integrity.test_every_registered_runtime_declares_a_count_rule_and_is_covered_here()
    test_confidence_intervals.test_every_family_has_a_runtime_in_the_coverage_test()
    test_plan_gate.test_every_runtime_has_an_exact_reference()
    for f in families.all_families():
        test_predicted_vs_simulated.test_every_family_has_a_case(f)
    test_cli_polish.test_one_epsilon_range_for_every_family("toy")
    toy_family.PREDICTED_VS_SIMULATED()
    # the plan gate on the toy: its exact claim, one float step below, is refused by load
    plan = fam.plan(fam.examples["toy-example"])
    exact = _family_helpers.exact_claims(plan)
    assert set(exact) == {("epsilon",)}
    low = copy.deepcopy(plan)
    low["guarantee"]["epsilon"] = test_plan_gate._float_below(exact[("epsilon",)])
    test_plan_gate.refused_by_load(low)
    ldpplan.load(plan)
    # a family without a conformance module fails the derived tables, naming the file to add
    import sys

    del sys.modules["test_toy_conformance"]  # (the fixture's monkeypatch restores the entry)
    with pytest.raises(ModuleNotFoundError, match="test_toy_conformance"):
        _family_helpers.aggregate_specs()

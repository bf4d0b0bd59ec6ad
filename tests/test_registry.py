"""One registry and family rooms of one shape (issue 18; ``docs/ARCHITECTURE.md``, "A new family").

* every planner room ``planner/<family>/`` has exactly the same public modules, with the same
  function names in them; every runtime package ``mechanisms/<family>/`` has ``__init__`` and
  ``runtime`` and declares its classes;
* every mechanism name is declared once: a plan mechanism in one runtime class's ``PLAN_FIELDS``,
  a spec mechanism in one family's declaration; ``RUNTIMES``, the planner's plan mechanisms, the
  composed schema and the conformance test's cases are all derived from the registry line;
* outside the rooms, mechanism names appear only where listed here (the remaining ones, each with
  its reason).
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
    from ldpplan.planner.families import ModuleFamily

    fam = importlib.import_module(f"ldpplan.planner.{family}").FAMILY
    assert isinstance(fam, ModuleFamily) and fam.name == family
    assert fam.package == f"ldpplan.planner.{family}"
    assert {f.name for f in dataclasses.fields(fam)} == {"name", "spec_mechanisms", "examples", "package", "runtime"}
    # the plan mechanisms are the runtime classes' PLAN_FIELDS, in their order
    classes = importlib.import_module(f"ldpplan.mechanisms.{fam.runtime or family}").RUNTIME_CLASSES
    assert fam.plan_mechanisms == tuple(m for c in classes for m in c.PLAN_FIELDS.mechanisms)


def test_family_packages_import_nothing_heavy():
    # the registry imports every family's __init__ to read the declarations: they stay light
    import subprocess
    import sys

    code = ("import sys\nfrom ldpplan.planner import families\nfamilies.spec_mechanisms()\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'scipy', 'cvxpy', 'pydantic', 'matplotlib', "
            "'pyarrow'}))\n"
            f"print(sorted(m for m in sys.modules if m.startswith(tuple(f'ldpplan.planner.{{f}}.' for f in {_registry()!r}))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd="/")
    assert out.returncode == 0, out.stderr
    heavy, room_modules = out.stdout.strip().splitlines()
    assert heavy == "[]"
    assert room_modules == "[]", room_modules  # no spec/plan/... module imported to read a declaration


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
    # the registry line itself
    "planner/families.py": {"idue", "pckv", "pie", "uldp", "hadamard", "longitudinal"},
    # the per-family solver modules are the family's third room (solvers/<family>.py + private helpers);
    # "auto" there is Hadamard's blocks option, not the longitudinal spec mechanism "auto" (issue 22 pins both)
    "solvers/hadamard.py": {"auto"},
    "solvers/pckv.py": {"pckv-ue", "pckv-grr"},
    "solvers/_pckv_compose.py": {"pckv-ue", "pckv-grr"},
    "solvers/pie.py": {"rr", "glh"},
    # the shuffle solver's vocabulary of randomizer-specific bounds ("rr": the exact binary-RR curve,
    # "krr", "glh"); which bound a plan gets is its family's hook (planner/pie/claims.shuffle_randomizer)
    "planner/shuffle.py": {"rr"},
    "solvers/shuffle.py": {"rr", "glh"},
}


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
    names = {f.name for f in fams} | {n for f in fams for n in (*f.spec_mechanisms, *f.plan_mechanisms)}
    found = {}
    for layer in ("planner", "solvers", "mechanisms"):
        for path in (ROOT / layer).rglob("*.py"):
            rel = path.relative_to(ROOT)
            if len(rel.parts) > 2 and rel.parts[0] in ("planner", "mechanisms") and rel.parts[1] in names:
                continue  # a family's own room
            hits = _name_literals(path, names)
            if hits:
                found[rel.as_posix()] = hits
    extra = {f: sorted(h - ALLOWED_OUTSIDE_ROOMS.get(f, set())) for f, h in found.items()}
    assert not {f: h for f, h in extra.items() if h}, extra

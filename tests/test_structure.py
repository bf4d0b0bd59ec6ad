"""The structure of the tree, read from the source alone (no installation): the import graph.

The design card's root folders ``planner/``, ``solvers/`` and ``mechanisms/`` install as
``ldpplan.planner``, ``ldpplan.solvers`` and ``ldpplan.mechanisms``. Inside them every import of
our own code is relative, so ``..mechanisms`` written in ``planner/api.py`` resolves to the folder
``mechanisms/`` on disk exactly as it resolves to ``ldpplan.mechanisms`` at run time: a static
reader of the tree sees the arrows. This test draws that graph from the files (every import
statement, function-level ones included) and fails on

* an absolute ``ldpplan.*`` import inside a layer (only the namespace root ``planner/_top`` may
  name ``ldpplan``, since it has no parent to be relative to);
* a relative import that names no file or folder of the tree;
* an upward arrow: ``mechanisms`` imports nothing of ours, ``solvers`` nothing of ``planner`` (it
  may import the runtime's formulas from ``mechanisms``: one copy of each formula, issue 28);
* an import cycle between modules;
* a name-built import of our own code (``importlib.import_module``, ``__import__``, ``pkgutil``,
  ``sys.modules`` lookups): a dispatch the graph cannot see. Every dispatch is an import statement,
  so every dispatch is an edge of the graph (the registries import the rooms by name:
  ``planner/families.py``, ``mechanisms/__init__.py``). ``importlib.resources`` (data files) and
  ``importlib.metadata`` (the version) name no module of ours and are allowed.
"""
from __future__ import annotations

import ast
import collections
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("planner", "solvers", "mechanisms")
#: the repository root plays the namespace package: ``planner/api.py`` is ``ldpplan.planner.api``
ROOT_PACKAGE = "ldpplan"
#: what each layer may import from the others (``planner`` uses the public APIs of both)
ALLOWED = {"planner": {"planner", "solvers", "mechanisms"}, "solvers": {"solvers", "mechanisms"},
           "mechanisms": {"mechanisms"}}


def _modules() -> dict[str, Path]:
    mods = {}
    for layer in LAYERS:
        for path in sorted((ROOT / layer).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if "_top" in parts:
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            mods[".".join([ROOT_PACKAGE, *parts])] = path
    return mods


MODULES = _modules()


def _layer(module: str) -> str:
    return module.split(".")[1]


@functools.cache  # each file parsed once per session: the graph and the dispatch finder read the same trees
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _imports(module: str, path: Path):
    """``(lineno, target module, absolute?)`` for every import of our own code in one file."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == ROOT_PACKAGE:
                    yield node.lineno, alias.name, True
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                if (node.module or "").split(".")[0] == ROOT_PACKAGE:
                    yield node.lineno, node.module, True
                continue
            base = package[: len(package) - (node.level - 1)]
            if not base:
                yield node.lineno, "." * node.level + (node.module or ""), False
                continue
            stem = ".".join([*base, *([node.module] if node.module else [])])
            for alias in node.names:
                sub = f"{stem}.{alias.name}"
                yield node.lineno, sub if sub in MODULES else stem, False


@functools.cache  # drawn once per session: four tests read it, none changes it
def _graph():
    edges, problems = collections.defaultdict(dict), []
    for module, path in MODULES.items():
        for lineno, target, absolute in _imports(module, path):
            where = f"{path.relative_to(ROOT)}:{lineno}"
            if absolute:
                problems.append(f"{where}: absolute import of {target!r} (write it relative to the tree)")
                continue
            if target not in MODULES:
                problems.append(f"{where}: import of {target!r} names no file or folder of the tree")
                continue
            if target != module:
                edges[module].setdefault(target, where)
    return edges, problems


def _cycles(edges, nodes=None) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    for root in (MODULES if nodes is None else nodes):
        if root in index:
            continue
        work = [(root, iter(edges.get(root, ())))]
        index[root] = low[root] = counter[0]; counter[0] += 1; stack.append(root); on.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1; stack.append(w); on.add(w)
                    work.append((w, iter(edges.get(w, ()))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop(); on.discard(w); comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def test_every_import_resolves_inside_the_tree():
    _, problems = _graph()
    assert not problems, "\n".join(problems)


def test_no_upward_arrow():
    edges, _ = _graph()
    upward = [f"{where}: {a} -> {b}" for a, targets in edges.items() for b, where in targets.items()
              if _layer(b) not in ALLOWED[_layer(a)]]
    assert not upward, "\n".join(upward)


def test_no_import_cycle_even_through_function_level_imports():
    edges, _ = _graph()
    cycles = _cycles(edges)
    lines = []
    for comp in cycles:
        lines.append(" <-> ".join(comp))
        lines += [f"    {a} -> {b} ({w})" for a in comp for b, w in edges[a].items() if b in comp]
    assert not cycles, "\n".join(lines)


def test_the_graph_has_the_arrows_of_the_design():
    """The planner reaches both lower layers; the layers are connected, not five unconnected rooms."""
    edges, _ = _graph()
    layer_arrows = {(_layer(a), _layer(b)) for a, t in edges.items() for b in t}
    assert ("planner", "solvers") in layer_arrows
    assert ("planner", "mechanisms") in layer_arrows
    assert len(MODULES) > 100


@pytest.mark.parametrize("cycle", [
    {"ldpplan.planner.a": {"ldpplan.planner.b": "x"}, "ldpplan.planner.b": {"ldpplan.planner.a": "y"}},
    {"ldpplan.planner.a": {"ldpplan.planner.b": "x"}, "ldpplan.planner.b": {"ldpplan.planner.c": "y"}, "ldpplan.planner.c": {"ldpplan.planner.a": "z"}},
])
def test_the_cycle_finder_finds_cycles(cycle):
    assert _cycles(cycle, list(cycle)) == [sorted(cycle)]
    assert _cycles({"ldpplan.planner.a": {"ldpplan.planner.b": "x"}}, ["ldpplan.planner.a", "ldpplan.planner.b"]) == []


#: ``importlib`` submodules that read data files and metadata, not modules of ours
DATA_IMPORTLIB = {"importlib.resources", "importlib.metadata"}


def _name_built_imports(source: str | ast.Module) -> list[tuple[int, str]]:
    """``(lineno, what)`` for every way of importing a module by a name built at run time (``source``: text or tree)."""
    found = []
    for node in ast.walk(source if isinstance(source, ast.Module) else ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in ("importlib", "importlib.util", "pkgutil") or alias.name.startswith("pkgutil."):
                    found.append((node.lineno, f"import {alias.name}"))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "pkgutil" or node.module == "importlib.util":
                found.append((node.lineno, f"from {node.module} import ..."))
            elif node.module == "importlib":
                bad = [a.name for a in node.names if f"importlib.{a.name}" not in DATA_IMPORTLIB]
                if bad:
                    found.append((node.lineno, f"from importlib import {', '.join(bad)}"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__":
            found.append((node.lineno, "__import__(...)"))
        elif (isinstance(node, ast.Attribute) and node.attr == "modules" and isinstance(node.value, ast.Name)
              and node.value.id == "sys"):
            found.append((node.lineno, "sys.modules"))
        elif isinstance(node, ast.Attribute) and node.attr in ("import_module", "find_spec", "iter_modules"):
            found.append((node.lineno, f".{node.attr}"))
    return found


def test_no_name_built_import_of_our_modules():
    found = [f"{path.relative_to(ROOT)}:{line}: {what} (import the module by name, in one place)"
             for path in sorted({*MODULES.values(), *(ROOT / "planner" / "_top").glob("*.py")})
             for line, what in _name_built_imports(_tree(path))]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("source", [
    "import importlib\nimportlib.import_module(f'ldpplan.planner.{name}')",
    "from importlib import import_module",
    "import pkgutil",
    "from pkgutil import iter_modules",
    "__import__('ldpplan.mechanisms.' + name)",
    "import sys\nsys.modules[f'{__package__}.{name}']",
    "from . import mechanisms\nmechanisms.import_module",
])
def test_the_dispatch_finder_finds_name_built_imports(source):
    assert _name_built_imports(source)
    assert not _name_built_imports("from importlib import resources\nfrom importlib.metadata import version\n"
                                   "import importlib.metadata\nfrom . import idue, pie\nFAMILIES = (idue.FAMILY,)")

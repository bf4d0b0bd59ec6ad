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
* an import cycle between modules.
"""
from __future__ import annotations

import ast
import collections
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


def _imports(module: str, path: Path):
    """``(lineno, target module, absolute?)`` for every import of our own code in one file."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
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

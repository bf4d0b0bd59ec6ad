"""Imports at the top of modules (issue 28, point 4): a file's header says what it depends on.

Read from the source (no installation) for the folders already moved: the family rooms, the
shared planner packages ``reporting/``, ``auditing/`` and ``data/``, ``solvers/`` and ``mechanisms/``;
for the whole package, imports of our own code: fewer than 40 deferred, each naming the heavy package.
Inside a function only a heavy third-party package may be imported, and the place says so once
(``# deferred: scipy``); an import of our own code is never deferred. One subprocess then
imports the registry and every module of those folders and checks that no heavy package came
with them (``ldpplan --help`` and ``import ldpplan.mechanisms`` are pinned in
``tests/test_packaging.py`` and ``tests/test_conformance.py``).
"""
from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the folders whose function-level imports were moved (the top-level ``planner/*.py`` modules follow)
FOLDERS = ("planner/pckv", "planner/idue", "planner/pie", "planner/longitudinal", "planner/uldp",
           "planner/hadamard", "planner/records", "planner/reporting", "planner/auditing", "planner/data", "solvers", "mechanisms")
#: packages worth deferring: each costs tens of milliseconds to seconds at import
HEAVY = frozenset({"scipy", "cvxpy", "pyarrow", "dask", "distributed", "matplotlib", "jinja2", "markdown_it",
                   "randomgen"})
#: not yet moved (empty: every file follows the rule)
PENDING: frozenset[str] = frozenset()
#: the whole package: ``planner/`` (with ``_top``, installed as ``ldpplan``), ``solvers/``, ``mechanisms/``
PACKAGE = ("planner", "solvers", "mechanisms")
#: what a function of the whole package may defer (and then says so): the heavy packages, and the ones
#: that ``import ldpplan`` and ``ldpplan --help`` must not load: numpy (0.2-0.3 s; ``import ldpplan`` is
#: numpy-free), the planner extra (pydantic, click: ``ldpplan make_plan`` names the missing extra) and rich
#: (0.1 s, for a console that ``ldpplan --help`` does not draw)
DEFERRABLE = HEAVY | {"numpy", "pydantic", "click", "rich"}
#: function-level imports of our own modules allowed in the whole package (issue 28: "under 40")
MAX_OWN_DEFERRED = 40
_MARK = re.compile(r"#\s*deferred:\s*([\w.]+)")


def _files():
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel not in PENDING:
                yield rel, path


@functools.lru_cache(maxsize=None)
def _function_imports(path: Path) -> tuple:
    """``((function name, [(lineno, top-level package or None for ours, marked package or None)]), ...)``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out: dict[ast.AST, list] = {}

    def visit(node: ast.AST, fn: ast.AST | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, child)
                continue
            if fn is not None and isinstance(child, (ast.Import, ast.ImportFrom)):
                if isinstance(child, ast.ImportFrom):
                    names = [None] if child.level else [(child.module or "").split(".")[0]]
                else:
                    names = [alias.name.split(".")[0] for alias in child.names]
                mark = _MARK.search(lines[child.lineno - 1])
                out.setdefault(fn, []).extend((child.lineno, name, mark.group(1) if mark else None) for name in names)
            visit(child, fn)

    visit(ast.parse("\n".join(lines)), None)
    return tuple((fn.name, found) for fn, found in out.items())


def _package_files():
    for folder in PACKAGE:
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), path


def test_the_whole_package_defers_few_of_our_imports_each_for_a_heavy_package():
    # our own modules, package-wide: at the top, or deferred for a heavy package that the place names
    # (the folders above also hold every third-party deferral to the rule; the rest of planner/*.py not yet)
    own, bad = [], []
    for rel, path in _package_files():
        for fn, found in _function_imports(path):
            marked = {mark for _, _, mark in found if mark}
            for lineno, name, _ in found:
                if name is None or name == "ldpplan":
                    own.append(f"{rel}:{lineno}")
                    if not marked & DEFERRABLE:
                        bad.append(f"{rel}:{lineno} (in {fn}): import it at the module top, or mark the heavy "
                                   "package it defers (# deferred: scipy)")
    assert not bad, "\n".join(bad)
    assert 0 < len(own) < MAX_OWN_DEFERRED, own


def test_no_function_level_import_of_our_own_code():
    bad = [f"{rel}:{lineno} (in {fn})" for rel, path in _files() for fn, found in _function_imports(path)
           for lineno, name, _ in found if name is None or name == "ldpplan"]
    assert not bad, "import it at the module top (a cycle is fixed by moving the shared piece down):\n" \
                    + "\n".join(bad)


def test_a_function_defers_only_heavy_packages_and_says_so():
    bad = []
    for rel, path in _files():
        for fn, found in _function_imports(path):
            marked = {mark for _, _, mark in found if mark}
            for lineno, name, _ in found:
                if name is None or name == "ldpplan":
                    continue
                if name not in HEAVY:
                    bad.append(f"{rel}:{lineno}: {name} is not heavy: import it at the module top")
                elif name not in marked:
                    bad.append(f"{rel}:{lineno}: mark the deferral once in {fn} (# deferred: {name})")
    assert not bad, "\n".join(bad)


def test_the_marker_finds_what_it_should(tmp_path):
    import textwrap

    source = textwrap.dedent("""
        def f():
            import scipy.stats  # deferred: scipy
            import pyarrow.compute as pc
            from ..x import y
            import json
    """)
    path = tmp_path / "probe.py"
    path.write_text(source, encoding="utf-8")
    [(fn, found)] = list(_function_imports(path))
    assert fn == "f"
    assert found == [(3, "scipy", "scipy"), (4, "pyarrow", None), (5, None, None), (6, "json", None)]


def test_the_rooms_and_lower_layers_import_without_the_heavy_packages():
    modules = ["ldpplan.planner.families"]
    for rel, path in _files():
        parts = list(Path(rel).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules.append(".".join(["ldpplan", *parts]))
    code = ("import importlib, sys\n"
            f"for m in {modules!r}:\n    importlib.import_module(m)\n"
            f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({sorted(HEAVY)!r})))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd="/")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout
    assert len(modules) > 100

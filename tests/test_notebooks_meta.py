"""Structural checks of the notebooks (no execution; nbmake runs them).

The source of truth is the jupytext percent file ``notebooks/0N-*.py``; the committed ``.ipynb``
is its pair (``notebooks/jupytext.toml``). Checked here: every source has its notebook and the
two agree cell by cell, the common layout (title, "What this shows", imports, parameters, the
accessor cell, sections, a computed "Paper vs ours" table), no machine-specific paths, only public
APIs imported, and no plan field or runtime result read outside the accessor functions.
"""
from __future__ import annotations

import ast
import importlib
import re
import sys
from pathlib import Path

import jupytext
import nbformat
import numpy as np
import pytest

NOTEBOOK_DIR = Path(__file__).resolve().parents[1] / "notebooks"
HELPER = NOTEBOOK_DIR / "nbhelpers.py"
SOURCES = sorted(NOTEBOOK_DIR.glob("[0-9][0-9]-*.py"))
STEMS = [p.stem for p in SOURCES]
# notebook -> the paper figures/tables its first two cells must name
EXPECTED = {
    "01-idue-planning": ["Table II", "Fig. 3", "Fig. 6"],
    "02-idue-itemsets": ["Fig. 7", "Fig. 8-9"],
    "03-pckv": ["Fig. 4", "Fig. 6", "Fig. 9", "Fig. 10(d)"],
    "04-pie": ["Fig. 4", "Fig. 12"],
    "05-uldp": ["Table 3", "Fig. 5", "Fig. 6", "Table 1"],
    "06-tuning-with-the-api": ["no paper figure"],
    "07-audit": ["eq. 2", "constraint 6", "Def. 4"],
    "08-shuffle": ["Thm. 3.1", "Thm. 3.2"],
    "09-longitudinal": ["ε∞", "L-OSUE", "L-GRR"],
    "10-numeric": ["Sec. III", "ε* ≈ 0.61", "1.29"],
    "11-records": ["Sec. 2.3", "RS+FD", "SMP"],
}
WITH_PAPER = [s for s in EXPECTED if s != "06-tuning-with-the-api"]
# a path that only exists on one machine: /work/..., /tmp/..., /home/..., C:\...
ABSOLUTE_PATH = re.compile(r"""(?:^|[\s"'`(=])(?:/(?:work|tmp|home|Users|root|mnt|opt|data|var)/|[A-Za-z]:\\)""")
# plan fields and runtime results that may only be read inside the accessor cell
PLAN_OR_RESULT_ACCESS = re.compile(
    r"""\[\s*["'](params|baselines|predicted|prediction|guarantee|comparison|solver|selection|"""
    r"""padding_length_selection|worst_case_mse_per_user|model_objective|labels|verification|planning_inputs|"""
    r"""provenance)["']\s*\]"""
    r"""|\breport\.data\b|\.data\[|\.tables\[|\.estimate(_intermediate)?\(|\.aggregate\(|\.combine\("""
    r"""|\.variance(_per_user)?\(|\.simulate_counts\(|\.sampling_probabilities\(|\.sample_items\(|\.mu\b|\.width\b"""
    r"""|\.(frequency|std_error|log_likelihood|iterations|counts)\b""")
# top-level plan keys of the pre-2.0 format (now domain.labels, predicted.*, baselines, solver.*, guarantee.*)
# and the pre-protocol runtime calls; the accessor cells must not use them
PRE_2_0 = re.compile(
    r"""\bplan\[\s*["'](items|model_objective|comparison|prediction|selection|padding_length_selection|"""
    r"""worst_case_mse_per_user|created_by|notion|model)["']\s*\]"""
    r"""|\bmech\.items\b|\.estimate_em\(|\braw\s*=\s*(True|False|raw)\b""")
ALLOWED_TOP_LEVEL = {"ldpplan", "nbhelpers", "numpy", "matplotlib", "IPython"}


def _cells(path):
    return jupytext.read(path).cells


def _code_cells(stem):
    return [c for c in _cells(NOTEBOOK_DIR / f"{stem}.py") if c.cell_type == "code"]


def _accessor_index(cells):
    """Index of the code cell that follows the markdown cell announcing the accessors."""
    for i, cell in enumerate(cells[:-1]):
        if cell.cell_type == "markdown" and "accessors" in cell.source.lower():
            assert cells[i + 1].cell_type == "code"
            return i + 1
    raise AssertionError("no accessor cell")


def test_sources_match_the_expected_notebooks():
    assert STEMS == sorted(EXPECTED)
    assert sorted(p.stem for p in NOTEBOOK_DIR.glob("*.ipynb")) == STEMS, "every .ipynb needs its .py source"
    assert not list(NOTEBOOK_DIR.glob("_*.py")), "the generator modules are retired"
    assert 'formats = "ipynb,py:percent"' in (NOTEBOOK_DIR / "jupytext.toml").read_text()


@pytest.mark.parametrize("stem", STEMS)
def test_ipynb_in_sync_with_source(stem):
    """jupytext reads both files; cell types, sources and the parameters tag must agree."""
    source = _cells(NOTEBOOK_DIR / f"{stem}.py")
    committed = _cells(NOTEBOOK_DIR / f"{stem}.ipynb")
    assert [(c.cell_type, c.source) for c in committed] == [(c.cell_type, c.source) for c in source], (
        f"{stem}.ipynb differs from {stem}.py: run `jupytext --sync notebooks/{stem}.py` and re-execute")
    tags = [("parameters" in c.metadata.get("tags", [])) for c in committed]
    assert tags == [("parameters" in c.metadata.get("tags", [])) for c in source]


@pytest.mark.parametrize("stem", STEMS)
def test_committed_with_outputs_and_no_errors(stem):
    nb = nbformat.read(NOTEBOOK_DIR / f"{stem}.ipynb", as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    outputs = [o for c in code for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs), "execute the notebook before committing"


@pytest.mark.parametrize("stem", STEMS)
def test_the_test_run_only_narrows_the_parameters(stem):
    """A notebook run as a test (nbmake) may take a smaller setting: ``nbmake.mock`` in the parameter
    cell's metadata, which nbmake assigns after that cell runs. It sits on the parameter cell only,
    is the same in the .py and the .ipynb, runs no code (no ``post_cell_execute``), and only narrows:
    each mocked name is assigned by the cell, a mocked list is a subset of the committed run's list and
    a mocked number is at most the committed run's (the committed outputs come from the cell's values)."""
    source = _cells(NOTEBOOK_DIR / f"{stem}.py")
    committed = _cells(NOTEBOOK_DIR / f"{stem}.ipynb")
    assert [c.metadata.get("nbmake") for c in committed] == [c.metadata.get("nbmake") for c in source]
    for cell in source:
        if "nbmake" not in cell.metadata:
            continue
        assert "parameters" in cell.metadata.get("tags", []), f"{stem}: nbmake metadata outside the parameter cell"
        assert set(cell.metadata["nbmake"]) == {"mock"}, f"{stem}: only `mock` (no code run by nbmake)"
        namespace: dict = {"np": np}
        exec(cell.source, namespace)  # the parameter cell: plain assignments
        for name, value in cell.metadata["nbmake"]["mock"].items():
            assert name in namespace, f"{stem}: mock of {name}, which the parameter cell does not assign"
            full = namespace[name]
            if isinstance(value, list):
                assert value and set(value) <= set(full), f"{stem}: mocked {name} = {value} is not a subset of {full}"
            else:
                assert isinstance(value, (int, float)) and value <= full, f"{stem}: mocked {name} = {value} > {full}"


def test_the_narrowing_check_can_fail(tmp_path, monkeypatch):
    """The check above fails on a mock that widens a grid or names a variable the cell does not set."""
    def parameters(mock):
        return [nbformat.v4.new_code_cell("FULL = False\nGRID = [1, 2, 3]\nN = 10\n",
                                          metadata={"tags": ["parameters"], "nbmake": {"mock": mock}})]

    monkeypatch.setattr(sys.modules[__name__], "_cells", lambda path: parameters({"GRID": [1, 3], "N": 5}))
    test_the_test_run_only_narrows_the_parameters("any")
    for mock in ({"GRID": [1, 4]}, {"N": 20}, {"OTHER": 1}):
        monkeypatch.setattr(sys.modules[__name__], "_cells", lambda path, mock=mock: parameters(mock))
        with pytest.raises(AssertionError):
            test_the_test_run_only_narrows_the_parameters("any")


@pytest.mark.parametrize("path", SOURCES + [HELPER], ids=lambda p: p.name)
def test_valid_python_without_absolute_paths(path):
    text = path.read_text(encoding="utf-8")
    ast.parse(text, filename=str(path))
    hits = [line for line in text.splitlines() if ABSOLUTE_PATH.search(line)]
    assert not hits, f"machine-specific path in {path.name}: {hits[:3]}"


@pytest.mark.parametrize("stem", STEMS)
def test_layout(stem):
    """Title, "What this shows", imports, parameters, then the accessor cell before any section."""
    cells = _cells(NOTEBOOK_DIR / f"{stem}.py")
    title, shows, imports, params = cells[:4]
    assert title.cell_type == "markdown" and title.source.startswith(f"# {stem[:2]} · ")
    assert shows.cell_type == "markdown" and shows.source.startswith("## What this shows")
    for ref in EXPECTED[stem]:
        assert ref in title.source + shows.source, f"{stem}: must name {ref!r}"
    assert imports.cell_type == "code" and re.match(r"(import|from) ", imports.source)
    assert params.cell_type == "code" and params.metadata.get("tags") == ["parameters"]
    assert re.search(r"^FULL = False$", params.source, re.MULTILINE)
    assert re.search(r"^SEED = \d+$", params.source, re.MULTILINE)
    assert sum("parameters" in c.metadata.get("tags", []) for c in cells) == 1
    accessor = _accessor_index(cells)
    first_section = next(i for i, c in enumerate(cells) if c.cell_type == "markdown" and c.source.startswith("## ")
                         and not c.source.startswith("## What this shows"))
    assert accessor < first_section
    tree = ast.parse(cells[accessor].source)
    assert tree.body and all(isinstance(node, ast.FunctionDef) for node in tree.body), "accessors: functions only"


@pytest.mark.parametrize("stem", WITH_PAPER)
def test_paper_vs_ours_is_computed(stem):
    """The header states the paper's numbers only; ours come from a table built by the code."""
    cells = _cells(NOTEBOOK_DIR / f"{stem}.py")
    header = cells[0].source + cells[1].source
    assert ("paper's number" in header or "paper's finding" in header) and "why ours differs" in header
    table_header = [line for line in header.splitlines() if line.startswith("| section")]
    assert table_header and all("| ours" not in line for line in table_header), "no typed 'ours' column"
    last_md = max(i for i, c in enumerate(cells) if c.cell_type == "markdown")
    assert cells[last_md].source.startswith("## Paper vs ours")
    assert cells[last_md + 1].source.strip() == "summary.show()"
    code = "\n".join(c.source for c in cells if c.cell_type == "code")
    assert code.count("summary.add(") >= 3


@pytest.mark.parametrize("stem", STEMS)
def test_plan_and_result_access_only_in_accessors(stem):
    cells = _cells(NOTEBOOK_DIR / f"{stem}.py")
    accessor = _accessor_index(cells)
    for i, cell in enumerate(cells):
        if cell.cell_type != "code" or i == accessor:
            continue
        for line in cell.source.splitlines():
            code = line.split("#", 1)[0]
            assert not PLAN_OR_RESULT_ACCESS.search(code), f"{stem}: move into an accessor: {line.strip()}"


def _imports(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                yield node.module, alias.name
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            yield None, node.attr


@pytest.mark.parametrize("path", SOURCES + [HELPER], ids=lambda p: p.name)
def test_public_api_only(path):
    """Imports: the standard library, numpy, matplotlib, IPython, nbhelpers and public ldpplan names
    (no module or name starting with "_", names in the module's ``__all__``); no private attributes."""
    stdlib = sys.stdlib_module_names
    for module, name in _imports(path):
        assert module is not None or name is None, f"{path.name}: private attribute .{name}"
        if module is None or module == "__future__":
            continue
        top = module.split(".")[0]
        assert top in ALLOWED_TOP_LEVEL or top in stdlib, f"{path.name}: unexpected import {module}"
        assert not any(part.startswith("_") for part in module.split(".")), f"{path.name}: private module {module}"
        if name is not None:
            assert not name.startswith("_"), f"{path.name}: private name {module}.{name}"
        if top == "ldpplan" and name is not None:
            target = importlib.import_module(module)
            if not hasattr(target, name):    # `from ldpplan import planner`: a submodule
                importlib.import_module(f"{module}.{name}")
            elif hasattr(target, "__all__") and not isinstance(getattr(target, name), type(sys)):
                assert name in target.__all__, f"{path.name}: {module}.{name} is not in __all__"


@pytest.mark.parametrize("stem", STEMS)
def test_accessors_follow_plan_format_2_and_the_runtime_protocol(stem):
    """The accessor cell reads plan format 2.0 fields and runtime-protocol results only."""
    cells = _cells(NOTEBOOK_DIR / f"{stem}.py")
    source = cells[_accessor_index(cells)].source
    hits = [line.strip() for line in source.splitlines() if PRE_2_0.search(line.split("#", 1)[0])]
    assert not hits, f"{stem}: pre-2.0 plan field or pre-protocol runtime call in the accessors: {hits[:3]}"


def test_pre_2_0_pattern_catches_the_old_accessors():
    """The check above can fail: the accessors of the 1.x notebooks are caught."""
    old = ['return plan["items"]', 'return plan["worst_case_mse_per_user"]', 'plan["comparison"]',
           'return plan["selection"]["epsilon_binding"]', 'return mech.items',
           'estimate_from_counts(n, n1, n2, a, b, p, L, raw=raw)']
    new = ['return plan["domain"]["labels"]', 'plan["predicted"]["worst_case_mse_per_user"]["value"]',
           'plan["solver"]["selection"]["epsilon_binding"]', 'return mech.labels']
    assert all(PRE_2_0.search(line) for line in old)
    assert not any(PRE_2_0.search(line) for line in new)

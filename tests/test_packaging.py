"""Packaging: every source package is installed under the one namespace ``ldpplan``."""
from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _setup():
    """``setup.py`` as a module (its ``setup()`` call runs only as ``__main__``)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_ldpplan_setup", REPO / "setup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_source_package_is_found():
    # every folder with an __init__.py under a layer is a package, and nothing else is
    setup = _setup()
    listed = set(setup.find_packages())
    expected = {"ldpplan"}
    for name, folder in setup.PACKAGE_DIR.items():
        if name == "ldpplan":
            continue
        for init in (REPO / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(REPO / folder)
            if "_top" in rel.parts:  # the ``ldpplan`` package itself
                continue
            expected.add(".".join([name, *rel.parts]))
    assert listed == expected, f"missing: {sorted(expected - listed)}; extra: {sorted(listed - expected)}"
    from ldpplan.planner.families import REGISTRY

    for family in REGISTRY:  # the rooms of the families, found without a list
        assert {f"ldpplan.planner.{family}", f"ldpplan.mechanisms.{family}"} <= listed


def test_only_ldpplan_at_top_level():
    setup = _setup()
    assert {p.split(".")[0] for p in setup.find_packages()} == {"ldpplan"}
    assert all(k == "ldpplan" or k.startswith("ldpplan.") for k in setup.PACKAGE_DIR)
    assert setup.PACKAGE_DIR["ldpplan"] == "planner/_top"
    # pyproject.toml lists no packages of its own (one place decides)
    cfg = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert "packages" not in cfg and "package-dir" not in cfg


def test_the_command_line_starts_without_the_heavy_libraries():
    # `ldpplan --help` must stay fast: the CLI module and the planner package import neither
    # scipy, cvxpy, matplotlib, pyarrow nor dask until a command needs them.
    import subprocess
    import sys

    code = ("import sys\nfrom ldpplan.planner.cli import main\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'scipy', 'cvxpy', 'matplotlib', 'pyarrow', 'dask'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd="/")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout


# modules a client running the runtime may not have: the runtime must work without every one of them
_PLANNER_ONLY = ("scipy", "cvxpy", "click", "rich", "pydantic", "jsonschema", "matplotlib", "pyarrow", "randomgen",
                 "dask", "distributed")
_BLOCKER = (
    "import sys\n"
    "class _Blocker:\n"
    f"    blocked = {_PLANNER_ONLY!r}\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name.split('.')[0] in self.blocked:\n"
    "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
    "        return None\n"
    "sys.meta_path.insert(0, _Blocker())\n"
)


def test_the_core_distribution_is_the_numpy_only_runtime():
    deps = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    assert [d.split(">")[0].split("=")[0].strip() for d in deps] == ["numpy"]


def test_runtime_runs_every_family_with_numpy_alone(tmp_path):
    # plans made here (with the planner), then used in a process where nothing but numpy is importable
    import json
    import subprocess
    import sys

    from ldpplan import planner

    for name in ("health", "pckv-synthetic", "pie-gss", "uldp-urap"):
        (tmp_path / f"{name}.json").write_text(json.dumps(planner.make_plan(planner.example_spec(name))))
    code = _BLOCKER + (
        "import glob, numpy as np\n"
        "import ldpplan, ldpplan.mechanisms as m\n"
        "for f in sorted(glob.glob('*.json')):\n"
        "    mech = ldpplan.load(f)\n"
        "    data = [(np.array([0]), np.array([0.5]))] * 40 if mech.mechanism.startswith('pckv') "
        "else np.zeros(40, dtype=np.int64)\n"
        "    agg = mech.aggregate(mech.perturb(data, rng=np.random.default_rng(0)))\n"
        "    est = mech.estimate(agg + agg)\n"
        "    assert est.n == 80 and est.frequency.shape == (mech.domain_size,)\n"
        "    print(mech.mechanism)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["idue", "pckv-ue", "glh", "urap"]


def test_the_command_without_the_planner_extra_is_one_line(tmp_path):
    import subprocess
    import sys

    code = _BLOCKER + "sys.argv = ['ldpplan', '--help']\nfrom ldpplan._cli import main\nmain()\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 2 and out.stdout == ""
    (line,) = out.stderr.strip().splitlines()
    assert "pip install 'ldpplan[planner]'" in line and "Traceback" not in out.stderr
    # the Python API names the missing module and the extra in one line (issue 19 point 7)
    code = _BLOCKER + "import ldpplan\nldpplan.make_plan({'mechanism': 'rr', 'epsilon': 1.0})\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    last = out.stderr.strip().splitlines()[-1]
    assert out.returncode == 1 and "MissingDependency" in last and "pip install 'ldpplan[planner]'" in last, last
    assert any(repr(m) in last for m in _PLANNER_ONLY), last


def test_make_plan_without_pydantic_names_the_planner_extra(monkeypatch):
    # pydantic hidden via sys.modules (None makes `import pydantic` fail): one line naming ldpplan[planner]
    import sys

    import ldpplan
    from ldpplan.planner import example_spec
    from ldpplan.planner.errors import MissingDependency

    spec = example_spec("health")
    for name in [m for m in sys.modules if m == "pydantic" or m.startswith(("pydantic.", "ldpplan.planner.idue",
                                                                              "ldpplan.planner._common"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pydantic", None)
    with pytest.raises(ImportError) as info:
        ldpplan.make_plan(spec)
    assert isinstance(info.value, MissingDependency) and info.value.name == "pydantic"
    message = str(info.value)
    assert len(message.splitlines()) == 1
    assert message == ("ldpplan.make_plan needs the package 'pydantic', which is not installed: "
                       "pip install 'ldpplan[planner]'")

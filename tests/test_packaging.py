"""Packaging: every source package is installed under the one namespace ``ldpplan``."""
from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _config() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def test_every_source_package_is_listed():
    cfg = _config()
    listed = set(cfg["packages"])
    mapping = cfg["package-dir"]
    expected = {"ldpplan"}
    for name, folder in mapping.items():
        if name == "ldpplan":
            continue
        root = REPO / folder
        for init in root.rglob("__init__.py"):
            rel = init.parent.relative_to(root)
            if "_top" in rel.parts:  # the ``ldpplan`` package itself
                continue
            expected.add(".".join([name, *rel.parts]))
    assert listed == expected, f"missing: {sorted(expected - listed)}; extra: {sorted(listed - expected)}"


def test_only_ldpplan_at_top_level():
    cfg = _config()
    assert {p.split(".")[0] for p in cfg["packages"]} == {"ldpplan"}
    assert all(k == "ldpplan" or k.startswith("ldpplan.") for k in cfg["package-dir"])


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

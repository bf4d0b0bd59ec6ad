"""Packages of the ``ldpplan`` distribution, found on disk (the metadata is in ``pyproject.toml``).

The design card's root folders install under the one namespace ``ldpplan``: ``planner/`` as
``ldpplan.planner``, ``solvers/`` as ``ldpplan.solvers``, ``mechanisms/`` as ``ldpplan.mechanisms``,
and ``planner/_top`` as ``ldpplan`` itself. Every folder below them with an ``__init__.py`` is a
package (a new family's rooms are picked up without listing them anywhere); nothing else goes into
site-packages. ``tests/test_packaging.py`` checks the result.
"""
from __future__ import annotations

from pathlib import Path

#: installed package -> folder (relative to this file); subpackages follow their parent's folder
PACKAGE_DIR = {"ldpplan": "planner/_top", "ldpplan.planner": "planner", "ldpplan.solvers": "solvers",
               "ldpplan.mechanisms": "mechanisms"}


def find_packages(root: Path | str | None = None) -> list[str]:
    """Every package of the distribution: ``ldpplan`` and each folder with an ``__init__.py`` under a layer."""
    root = Path(__file__).resolve().parent if root is None else Path(root)
    found = {"ldpplan"}
    for name, folder in PACKAGE_DIR.items():
        if name == "ldpplan":
            continue
        base = root / folder
        for init in base.rglob("__init__.py"):
            rel = init.parent.relative_to(base)
            if "_top" in rel.parts or "__pycache__" in rel.parts:  # ``_top`` is ``ldpplan`` itself
                continue
            found.add(".".join([name, *rel.parts]))
    return sorted(found)


if __name__ == "__main__":
    from setuptools import setup

    setup(packages=find_packages(), package_dir=PACKAGE_DIR)

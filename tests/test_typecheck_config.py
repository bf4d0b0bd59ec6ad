"""The type check's configuration (issue 28: mypy in CI, no blanket ignores).

``.ci/typecheck`` runs mypy on the installed package with ``[tool.mypy]`` of ``pyproject.toml``
(``.ci/run`` calls it). These tests keep the configuration honest: no ``ignore_errors`` anywhere,
``ignore_missing_imports`` only for named third-party packages, and every per-line
``# type: ignore`` in the package names its error code. Running mypy itself is CI's job (about a
minute), not the fast tier's.
"""
from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LAYERS = ("planner", "solvers", "mechanisms")
#: the package's own top-level modules: an override must never name them
OWN = ("ldpplan",) + LAYERS


def _mypy_config() -> dict:
    with open(REPO / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)["tool"]["mypy"]


def test_mypy_config_has_no_blanket_ignore():
    config = _mypy_config()
    assert config["python_version"] == "3.11"
    assert config["warn_unused_ignores"] is True and config["warn_redundant_casts"] is True
    assert "ignore_errors" not in config and "ignore_missing_imports" not in config
    overrides = config.get("overrides", [])
    assert overrides, "the packages without types are named in an override"
    for override in overrides:
        assert set(override) == {"module", "ignore_missing_imports"}, override
        for module in override["module"]:
            assert re.fullmatch(r"[a-z_][a-z0-9_]*(\.\*)?", module), module  # a named package, no bare "*"
            assert module.split(".")[0] not in OWN, f"{module}: an override must not silence our own modules"


def test_type_ignores_name_their_error_code():
    bare = []
    for layer in LAYERS:
        for path in (REPO / layer).rglob("*.py"):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if re.search(r"#\s*type:\s*ignore(?!\[[a-z-]+(, *[a-z-]+)*\])", line):
                    bare.append(f"{path.relative_to(REPO)}:{number}")
    assert not bare, f"a # type: ignore without an error code: {bare}"


def test_ci_runs_the_type_check():
    script = REPO / ".ci" / "typecheck"
    assert os.access(script, os.X_OK)
    text = script.read_text(encoding="utf-8")
    assert "--no-deps --target" in text and "-m mypy --config-file" in text and "-p ldpplan" in text
    run = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    tests = "pip install -e '.[test]' && pytest"  # the README's test command, run verbatim and last
    assert ".ci/typecheck" in run and run[-1] == tests and run.index(".ci/typecheck") < run.index(tests)
    with open(REPO / "pyproject.toml", "rb") as fh:
        test_extra = tomllib.load(fh)["project"]["optional-dependencies"]["test"]
    assert any(re.fullmatch(r"mypy>=[0-9.]+", req.split("#")[0].strip()) for req in test_extra)

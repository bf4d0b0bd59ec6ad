"""The ``ldpplan`` console script: the planner's CLI, or one line saying which extra to install.

The core distribution is the numpy-only runtime; the command line needs the extra ``planner``.
"""
from __future__ import annotations

import sys

__all__ = ["main", "missing_planner_dependency"]

_HINT = "pip install 'ldpplan[planner]'"


def missing_planner_dependency(exc: ImportError) -> str | None:
    """The one-line message for an ImportError of a third-party module, else None (a bug of ours)."""
    name = getattr(exc, "name", None) or ""
    if not name or name.split(".")[0] == "ldpplan":
        return None
    return f"the ldpplan planner needs the package {name.split('.')[0]!r}, which is not installed: {_HINT}"


def main() -> None:
    """Run ``ldpplan``; exit 2 with one line when the planner's dependencies are missing."""
    try:
        from ldpplan.planner.cli import main as cli_main  # deferred: click (the extra ``ldpplan[planner]``)
    except ImportError as exc:
        message = missing_planner_dependency(exc)
        if message is None:
            raise
        sys.stderr.write(f"error: {message}\n")
        sys.exit(2)
    cli_main()

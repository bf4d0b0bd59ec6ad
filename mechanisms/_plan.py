"""Reading plan files in the runtime (json + numpy only)."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping

__all__ = ["PlanError", "read_plan", "SUPPORTED_FORMAT_MAJOR"]

#: Plan files with this major ``format_version`` can be loaded.
SUPPORTED_FORMAT_MAJOR = 1


class PlanError(ValueError):
    """A plan cannot be used by the runtime (unreadable, wrong version, missing field)."""


def read_plan(plan: str | os.PathLike | Mapping[str, Any]) -> dict[str, Any]:
    """Return the plan as a dict, reading JSON if given a path.

    Raises
    ------
    PlanError
        If the file is unreadable, not JSON, or has an unsupported ``format_version``.
    """
    if isinstance(plan, Mapping):
        data = dict(plan)
    else:
        try:
            data = json.loads(Path(plan).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise PlanError(f"{plan}: plan file does not exist") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise PlanError(f"{plan}: plan file must be valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise PlanError("plan must be a JSON object")
    version = str(data.get("format_version", ""))
    try:
        major = int(version.split(".")[0])
    except ValueError:
        raise PlanError(f"format_version: must be a version string like '1.0' (got {version!r})") from None
    if major != SUPPORTED_FORMAT_MAJOR:
        raise PlanError(f"format_version: this runtime reads major version {SUPPORTED_FORMAT_MAJOR} (got {version!r})")
    return data


def require(plan: Mapping[str, Any], dotted: str) -> Any:
    """Fetch ``a.b.c`` from a plan dict or raise :class:`PlanError` naming the field."""
    node: Any = plan
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            raise PlanError(f"{dotted}: required field is missing from the plan")
        node = node[part]
    return node

"""File handling for specs and plans: TOML/JSON reading and atomic writes."""
from __future__ import annotations

import json
import math
import os
import tempfile
import tomllib
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from .errors import PlanFormatError, SpecError
from ..mechanisms import Plan, PlanError, loads_strict

__all__ = ["read_spec_file", "write_json_atomic", "read_plan_file", "to_jsonable", "write_bytes_atomic"]


def read_spec_file(path: str | os.PathLike) -> dict[str, Any]:
    """Read a spec from a ``.toml`` or ``.json`` file.

    Parameters
    ----------
    path : path-like
        The spec file. ``.json`` is read as JSON, anything else as TOML.

    Returns
    -------
    dict
        The raw spec mapping (validated later by the family's model).

    Raises
    ------
    SpecError
        If the file is missing or is not valid TOML/JSON. The field is
        ``"<file>"`` and the value is the parser's message.
    """
    p = Path(path)
    if not p.is_file():
        raise SpecError("<file>", "spec file must exist", str(p))
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError("<file>", "spec file must be readable UTF-8 text", str(exc), str(p)) from None
    try:
        if p.suffix.lower() == ".json":
            try:
                data = loads_strict(text, what="spec")
            except PlanError as exc:
                raise SpecError("<file>", "spec must be strict JSON (finite numbers, bounded size and depth)",
                                str(exc), str(p)) from None
        else:
            data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError, RecursionError) as exc:
        kind = "JSON" if p.suffix.lower() == ".json" else "TOML"
        raise SpecError("<file>", f"spec must be valid {kind}", str(exc), str(p)) from None
    if not isinstance(data, dict):
        raise SpecError("<file>", "spec must be a table/object at top level", type(data).__name__, str(p))
    return data


def to_jsonable(obj: Any) -> Any:
    """Convert numpy scalars/arrays and tuples to plain JSON types.

    Non-finite floats are refused (JSON has no NaN/inf), so that a plan file is
    always standard JSON.
    """
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [to_jsonable(v) for v in obj.tolist()]
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        value = float(obj)
        if not math.isfinite(value):
            return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
        return value
    if isinstance(obj, Path):
        return str(obj)
    return obj


def _umask() -> int:
    """The process umask (read without changing it where /proc allows)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # pragma: no cover - non-Linux
    os.umask(mask)
    return mask


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file in the same folder, then rename).

    The file gets the permissions a plain ``open(path, "w")`` would give
    (``0o666 & ~umask``), not the ``0600`` of a temporary file. Nothing is left
    behind if writing fails, and an existing ``path`` is untouched until the rename.

    Raises
    ------
    OSError
        If the folder cannot be created or written (no file is left behind).
    """
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    try:
        os.chmod(tmp, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_json_atomic(path: str | os.PathLike, obj: Any) -> None:
    """Serialise ``obj`` (after :func:`to_jsonable`) to ``path`` atomically."""
    text = json.dumps(to_jsonable(obj), indent=2, allow_nan=False) + "\n"
    write_bytes_atomic(path, text.encode("utf-8"))


def read_plan_file(path: str | os.PathLike | Mapping[str, Any]) -> Plan:
    """Read a plan JSON file once with the runtime's envelope reader (:meth:`ldpplan.mechanisms.Plan.read`).

    Returns the :class:`~ldpplan.mechanisms.Plan` (typed, read-only, fingerprinted once); given a
    Plan, returns it as it is (a dict is converted once).

    Strict JSON (no NaN/Infinity, no duplicate keys, bounded size and depth), ``format_version``
    exactly ``"2.0"``, known fields and claims of a known mechanism, ``domain.size`` bounded and
    checked against the labels, finite numbers, the verification block.

    Raises
    ------
    PlanFormatError
        One line naming the field, the rule and the value.
    """
    try:
        return Plan.read(path)
    except PlanError as exc:
        if isinstance(path, Mapping):
            raise PlanFormatError(str(exc)) from None
        if _is_aggregate_file(path):
            raise PlanFormatError(f"{path}: is an aggregate file (written by `ldpplan aggregate`), not a plan; give the "
                                  "plan file (written by `ldpplan plan`)") from None
        text = str(exc)
        raise PlanFormatError(text if text.startswith(str(path)) else f"{path}: {text}") from None
    except ValueError as exc:  # e.g. an integer literal of more than 4300 digits
        raise PlanFormatError(f"{path}: <json>: a plan must be valid JSON with numbers float64 can hold ({exc})") from None


def _is_aggregate_file(path: str | os.PathLike) -> bool:
    """Whether ``path`` holds an aggregate file (JSON whose ``format`` is ``ldpplan-aggregate...``), for the error."""
    try:
        if os.path.getsize(path) > 64 * 2**20:
            return False
        with open(path, encoding="utf-8") as fh:
            data = loads_strict(fh.read(), "aggregate")
    except (OSError, ValueError, UnicodeDecodeError):
        return False
    return isinstance(data, dict) and str(data.get("format", "")).startswith("ldpplan-aggregate")

"""Reading plan files in the runtime (json + numpy only), strictly.

A plan is untrusted input: it may come from another team, a download or an
attacker. :func:`read_plan` therefore rejects JSON's non-standard ``NaN`` and
``Infinity`` constants at parse time, bounds the file size and the nesting
depth, and accepts only the plan format this runtime implements. The helpers
below read numbers with their rule and name the field in every error.
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Mapping

import numpy as np

__all__ = ["PlanError", "read_plan", "loads_strict", "require", "number", "integer", "check_verified",
           "check_claim", "FORMAT_VERSION", "SUPPORTED_FORMAT_MAJOR", "MAX_PLAN_BYTES", "MAX_DEPTH",
           "RUNTIME_TOLERANCE", "plan_fingerprint"]

#: The plan format this runtime reads (major version must match).
FORMAT_VERSION = "2.0"
SUPPORTED_FORMAT_MAJOR = 2
#: Largest plan file read (bytes). The largest embedded example is well under 1 MB.
MAX_PLAN_BYTES = 64 * 2**20
#: Deepest nesting of JSON arrays/objects accepted (a plan needs about 6).
MAX_DEPTH = 64
#: Relative float tolerance of the runtime's own privacy map (numpy float64): the
#: planner's verifier is the exact check; the runtime refuses anything beyond this.
RUNTIME_TOLERANCE = 1e-9


class PlanError(ValueError):
    """A plan cannot be used by the runtime (unreadable, wrong version, bad field, weaker than claimed)."""


def _reject_constant(name: str):
    raise PlanError(f"<json>: the non-standard constant {name} is not allowed in a plan (numbers must be finite)")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise PlanError(f"<json>: the number {text[:40]} is out of the float range (numbers must be finite)")
    return value


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > 30:
        raise PlanError(f"<json>: the integer {text[:40]}... has more than 30 digits")
    return int(text)


def _depth(text: str) -> int:
    depth = best = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            best = max(best, depth)
        elif ch in "]}":
            depth -= 1
    return best


def _a(word: str) -> str:
    """``word`` with its indefinite article (``a plan``, ``an aggregate``)."""
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"


def loads_strict(text: str, what: str = "plan") -> Any:
    """Parse JSON text with the plan rules: no NaN/Infinity, bounded size and depth.

    Raises
    ------
    PlanError
        Naming the rule that failed.
    """
    if len(text) > MAX_PLAN_BYTES:
        raise PlanError(f"<file>: {_a(what)} file must be at most {MAX_PLAN_BYTES} bytes (got {len(text)})")
    if _depth(text) > MAX_DEPTH:
        raise PlanError(f"<json>: {_a(what)} must nest at most {MAX_DEPTH} levels deep")
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float, parse_int=_bounded_int)
    except json.JSONDecodeError as exc:
        raise PlanError(f"<json>: {_a(what)} must be valid JSON ({exc})") from None
    except RecursionError:  # pragma: no cover - guarded by _depth
        raise PlanError(f"<json>: {_a(what)} must nest at most {MAX_DEPTH} levels deep") from None


def read_plan(plan: str | os.PathLike | Mapping[str, Any], *, check_version: bool = True) -> dict[str, Any]:
    """Return the plan as a dict, reading strict JSON if given a path.

    Parameters
    ----------
    plan : path-like or mapping
    check_version : bool
        Require ``format_version`` with major version :data:`SUPPORTED_FORMAT_MAJOR`.

    Raises
    ------
    PlanError
        If the file is unreadable, not strict JSON, too large or deep, or has an
        unsupported ``format_version`` (the message names the version).
    """
    if isinstance(plan, Mapping):
        data = dict(plan)
    else:
        path = Path(plan)
        try:
            if path.stat().st_size > MAX_PLAN_BYTES:
                raise PlanError(f"{path}: a plan file must be at most {MAX_PLAN_BYTES} bytes")
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise PlanError(f"{path}: plan file does not exist") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise PlanError(f"{path}: plan file must be readable UTF-8 ({exc})") from None
        try:
            data = loads_strict(text)
        except PlanError as exc:
            raise PlanError(f"{path}: {exc}") from None
    if not isinstance(data, dict):
        raise PlanError("<plan>: a plan must be a JSON object")
    if check_version:
        version = data.get("format_version")
        if not isinstance(version, str) or version.split(".")[0] != str(SUPPORTED_FORMAT_MAJOR):
            raise PlanError(
                f"format_version: this ldpplan reads plan format {FORMAT_VERSION} (got {version!r}); "
                "re-plan the spec embedded in the old plan with this version")
    return data


def require(plan: Mapping[str, Any], dotted: str) -> Any:
    """Fetch ``a.b.c`` from a plan dict or raise :class:`PlanError` naming the field."""
    node: Any = plan
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            raise PlanError(f"{dotted}: required field is missing from the plan")
        node = node[part]
    return node


def _is_real(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


def number(value: Any, field: str, *, low: float | None = None, high: float | None = None,
           low_open: bool = False, high_open: bool = False) -> float:
    """``value`` as a finite float within the bounds, or :class:`PlanError` naming field, rule, value."""
    if not _is_real(value) or not math.isfinite(float(value)):
        raise PlanError(f"{field}: must be a finite number (got {value!r})")
    x = float(value)
    if low is not None and (x < low or (low_open and x == low)):
        raise PlanError(f"{field}: must be {'>' if low_open else '>='} {low} (got {x!r})")
    if high is not None and (x > high or (high_open and x == high)):
        raise PlanError(f"{field}: must be {'<' if high_open else '<='} {high} (got {x!r})")
    return x


def integer(value: Any, field: str, *, low: int | None = None, high: int | None = None) -> int:
    """``value`` as an int within the bounds (floats are refused), or :class:`PlanError`."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise PlanError(f"{field}: must be an integer (got {value!r})")
    x = int(value)
    if low is not None and x < low:
        raise PlanError(f"{field}: must be >= {low} (got {x})")
    if high is not None and x > high:
        raise PlanError(f"{field}: must be <= {high} (got {x})")
    return x


def check_verified(plan: Mapping[str, Any]) -> None:
    """Refuse a plan whose ``verification.holds`` is not ``true``.

    Raises
    ------
    PlanError
        ``verification.holds: must be true ...``.
    """
    block = plan.get("verification")
    holds = block.get("holds") if isinstance(block, Mapping) else None
    if holds is not True:
        raise PlanError(f"verification.holds: must be true: the runtime runs only verified plans (got {holds!r}); "
                        "run `ldpplan verify` on it or re-plan")


def check_claim(actual: float, claimed: Any, field: str, rule: str = "the plan's numbers give") -> None:
    """Refuse a claimed epsilon smaller than the one the numbers give.

    Parameters
    ----------
    actual : float
        The epsilon (nats) the runtime's privacy map computes from the numbers.
    claimed : Any
        The plan's claim (read with :func:`number`).
    field : str
        The claim's dotted field, e.g. ``"guarantee.epsilon"``.

    Raises
    ------
    PlanError
        When ``actual > claimed (1 + RUNTIME_TOLERANCE)``, or the claim is not finite.
    """
    c = number(claimed, field, low=0.0)
    if not (actual <= c * (1.0 + RUNTIME_TOLERANCE)):
        raise PlanError(f"{field}: claims {c!r} but {rule} {actual!r}; the runtime refuses a plan that claims "
                        "more privacy than its numbers give")


def plan_fingerprint(plan: Mapping[str, Any]) -> str:
    """The plan's fingerprint: ``sha256`` of its canonical JSON (sorted keys, no spaces), hex.

    Clients pin it (``load(plan, fingerprint=...)``); report and aggregate files record it so
    that a server cannot estimate with the wrong plan.

    Parameters
    ----------
    plan : mapping
        The parsed plan.

    Returns
    -------
    str
        64 lowercase hex digits.
    """
    import hashlib

    text = json.dumps(plan, sort_keys=True, separators=(",", ":"), allow_nan=False, ensure_ascii=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()

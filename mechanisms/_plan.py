"""Reading plan files in the runtime (json + numpy only), strictly.

A plan is untrusted input: it may come from another team, a download or an
attacker. :func:`read_plan` therefore rejects JSON's non-standard ``NaN`` and
``Infinity`` constants at parse time, bounds the file size and the nesting
depth, and accepts only the plan format this runtime implements. The helpers
below read numbers with their rule and name the field in every error.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Mapping, NoReturn

import numpy as np

__all__ = ["PlanError", "read_plan", "loads_strict", "require", "number", "integer", "check_verified",
           "check_claim", "round_up", "FORMAT_VERSION", "MAX_PLAN_BYTES", "MAX_DEPTH", "ROUNDING_ULPS",
           "plan_fingerprint", "check_fingerprint", "log_fraction", "ReadOnce",
           "check_pinned", "content_fingerprint"]

#: The plan format this runtime reads: exactly this string (not "2", "2.1" or "2.0.0").
FORMAT_VERSION = "2.0"
#: Largest plan file read (bytes). The largest embedded example is well under 1 MB.
MAX_PLAN_BYTES = 64 * 2**20
#: Deepest nesting of JSON arrays/objects accepted (a plan needs about 6).
MAX_DEPTH = 64
#: Units in the last place by which a float64 privacy map is rounded toward the safe side
#: (:func:`round_up`): each map is a handful of correctly rounded or faithful operations
#: (``log1p`` of exact differences, sums of positive terms), so its error is a few ulps.
ROUNDING_ULPS = 16


class PlanError(ValueError):
    """A plan cannot be used by the runtime (unreadable, wrong version, bad field, weaker than claimed)."""


class ReadOnce:
    """Base of :class:`ldpplan.mechanisms.Plan`: a plan already parsed, envelope-checked and fingerprinted.

    :func:`read_plan` returns such a plan as it is (no copy, no parse) and :func:`plan_fingerprint`
    returns its ``fingerprint`` (computed once, when it was read).
    """

    __slots__ = ()
    fingerprint: str


def _reject_constant(name: str) -> NoReturn:
    raise PlanError(f"<json>: the non-standard constant {name} is not allowed in a plan (numbers must be finite)")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise PlanError(f"<json>: the number {text[:40]} is out of the float range (numbers must be finite)")
    return value


#: Most digits of an integer literal (bounded parsing work; a field's own rule then names it).
MAX_INT_DIGITS = 100


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise PlanError(f"<json>: the integer {text[:40]}... has more than {MAX_INT_DIGITS} digits")
    return int(text)


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook``: refuse an object that names a key twice (JSON leaves it undefined)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise PlanError(f"<json>: the key {key[:40]!r} appears twice in one object (duplicate keys are refused: "
                            "another reader could keep the other value)")
        out[key] = value
    return out


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
    """Parse JSON text with the plan rules: no NaN/Infinity, no duplicate keys, bounded size and depth.

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
        return json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float, parse_int=_bounded_int,
                          object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise PlanError(f"<json>: {_a(what)} must be valid JSON ({exc})") from None
    except RecursionError:  # pragma: no cover - guarded by _depth
        raise PlanError(f"<json>: {_a(what)} must nest at most {MAX_DEPTH} levels deep") from None


def read_plan(plan: str | os.PathLike | Mapping[str, Any], *, check_version: bool = True) -> Mapping[str, Any]:
    """Return the plan as a dict, reading strict JSON if given a path.

    A plan already read (:class:`ldpplan.mechanisms.Plan`) is returned as it is: it was parsed
    and checked once, when it was read, and is read-only.

    Parameters
    ----------
    plan : path-like or mapping
    check_version : bool
        Require ``format_version`` to be exactly :data:`FORMAT_VERSION` (the string ``"2.0"``).

    Raises
    ------
    PlanError
        If the file is unreadable, not strict JSON, too large or deep, or has an
        unsupported ``format_version`` (the message names the version).
    """
    if isinstance(plan, ReadOnce):
        return plan  # type: ignore[return-value]  # a Plan: a read-only Mapping read once
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
        if not isinstance(version, str) or version != FORMAT_VERSION:
            shown = version if isinstance(version, (str, int, float, type(None))) else type(version).__name__
            raise PlanError(
                f"format_version: this ldpplan reads plan format {FORMAT_VERSION} (got {str(shown)[:40]!r}); "
                f"the version must be exactly the string {FORMAT_VERSION!r}; re-plan the spec embedded in the old "
                "plan with this version")
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


def round_up(x: float, ulps: int = ROUNDING_ULPS, scale: float = 0.0) -> float:
    """``x`` moved toward ``+inf`` by ``ulps`` units in the last place of ``max(|x|, scale)``.

    The runtime's privacy maps are float64 computations accurate to a few ulps of their
    largest intermediate term (``scale``; the result itself when there is no cancellation);
    like OpenDP's ``inf_ln`` / ``inf_div`` (rounding toward +inf), a bound used to accept a
    claim is moved away from the unsafe side.
    """
    y = float(x)
    y = y + int(ulps) * math.ulp(max(abs(y), float(scale)))
    return math.nextafter(y, math.inf)  # the addition itself rounded up


def log_fraction(ratio: Fraction) -> Decimal:
    """``ln(ratio)`` of a positive rational in the current :mod:`decimal` context (callers set the precision).

    The runtime's exact privacy maps (PIE, IDUE sets, PCKV claims) take their logarithms here.
    """
    return Decimal(ratio.numerator).ln() - Decimal(ratio.denominator).ln()


def check_claim(actual: float, claimed: Any, field: str, rule: str = "the plan's numbers give", *,
                exact: Callable[[], Any] | None = None, scale: float = 0.0) -> float:
    """Refuse a claimed epsilon smaller than the one the numbers give, by any amount.

    The float64 ``actual`` is rounded up by :data:`ROUNDING_ULPS` (:func:`round_up`); a claim
    at or above that bound is accepted. Below it, a claim is accepted only if ``exact`` is
    given and the exact value it returns (a :class:`decimal.Decimal` or
    :class:`fractions.Fraction`) is at most the claim. There is no relative tolerance: a claim
    one float step below what the numbers give is refused.

    Parameters
    ----------
    actual : float
        The epsilon (nats) the runtime's privacy map computes from the numbers (float64).
    claimed : Any
        The plan's claim (read with :func:`number`).
    field : str
        The claim's dotted field, e.g. ``"guarantee.epsilon"``.
    rule : str
        What gives ``actual`` (for the message).
    exact : callable, optional
        Returns the exact value (50-digit Decimal or Fraction); used only near the bound.
    scale : float
        Magnitude of the map's largest intermediate term (:func:`round_up`), when it cancels.

    Returns
    -------
    float
        The claim.

    Raises
    ------
    PlanError
        When the claim is below what the numbers give, or is not a finite number >= 0.
    """
    c = number(claimed, field, low=0.0)
    if c >= round_up(actual, scale=scale):
        return c
    shown = repr(actual)
    if exact is not None:
        value = exact()
        if _exact_at_most(value, c):
            return c
        shown = f"{value:.20g} (exactly)" if not isinstance(value, Fraction) else f"{float(value)!r} (exactly {value})"
    raise PlanError(f"{field}: claims {c!r} but {rule} {shown}; the runtime refuses a plan that claims "
                    "more privacy than its numbers give")


def _exact_at_most(value: Any, c: float) -> bool:
    """``value <= c`` exactly (``value`` a Decimal, Fraction, int or float)."""
    if isinstance(value, Decimal):
        return value <= Decimal(c)  # Decimal(float) is exact
    return Fraction(value) <= Fraction(c)


#: fields that are clock readings, not the plan's content: left out of :func:`plan_fingerprint`
_NOT_CONTENT = (("provenance", "created_at"), ("solver", "time_seconds"))


def plan_fingerprint(plan: Mapping[str, Any]) -> str:
    """The plan's fingerprint: ``sha256`` of its content's canonical JSON (sorted keys, no spaces), hex.

    Clients pin it (``load(plan, fingerprint=...)``); report and aggregate files record it so
    that a server cannot estimate with the wrong plan. It covers every field except
    ``provenance.created_at`` (the time the plan was written, not its content): re-planning
    the same spec gives the same fingerprint, so devices' memos and pins stay valid (issue 26).

    A plan read once (:class:`ldpplan.mechanisms.Plan`) carries its fingerprint, computed when
    it was read: it is returned without hashing again.

    Parameters
    ----------
    plan : mapping
        The parsed plan.

    Returns
    -------
    str
        64 lowercase hex digits.
    """
    if isinstance(plan, ReadOnce):
        return plan.fingerprint
    return content_fingerprint(plan)


def content_fingerprint(plan: Mapping[str, Any], default: Callable[[Any], Any] | None = None) -> str:
    """The hash behind :func:`plan_fingerprint`, always computed (``default``: :func:`json.dumps`'s hook)."""
    for block, key in _NOT_CONTENT:
        node = plan.get(block) if isinstance(plan, Mapping) else None
        if isinstance(node, Mapping) and key in node:
            plan = {**plan, block: {k: v for k, v in node.items() if k != key}}
    text = json.dumps(plan, sort_keys=True, separators=(",", ":"), allow_nan=False, ensure_ascii=True,
                      default=default)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_fingerprint(plan: Mapping[str, Any], fingerprint: str | None) -> None:
    """Refuse a plan whose :func:`plan_fingerprint` is not the pinned ``fingerprint``.

    Parameters
    ----------
    plan : mapping
        The parsed plan.
    fingerprint : str or None
        ``"sha256:<64 hex digits>"`` (as ``ldpplan plan`` / ``ldpplan verify`` print it) or the
        bare 64 hex digits :func:`plan_fingerprint` returns; hex digits in either case.
        ``None``: no pinning.

    Raises
    ------
    PlanError
        ``fingerprint: ...`` when the value is malformed or differs from the plan's.
    """
    if fingerprint is not None:
        _compare(plan_fingerprint(plan), _pinned_digest(fingerprint))


def check_pinned(actual: str, fingerprint: str | None) -> None:
    """:func:`check_fingerprint` given the plan's fingerprint ``actual`` (64 hex digits), already computed.

    Raises
    ------
    PlanError
        ``fingerprint: ...`` when the value is malformed or differs from ``actual``.
    """
    if fingerprint is not None:
        _compare(actual, _pinned_digest(fingerprint))


def _pinned_digest(fingerprint: Any) -> str:
    """The 64 lowercase hex digits of a pin (``"sha256:<hex>"`` or bare), or :class:`PlanError`."""
    if not isinstance(fingerprint, str):
        raise PlanError(f"fingerprint: must be a string 'sha256:<64 hex digits>' (got {type(fingerprint).__name__})")
    text = fingerprint.strip().lower()
    digest = text[len("sha256:"):] if text.startswith("sha256:") else text
    if len(digest) != 64 or any(ch not in "0123456789abcdef" for ch in digest):
        raise PlanError(f"fingerprint: must be 'sha256:' followed by 64 hex digits (got {fingerprint[:80]!r})")
    return digest


def _compare(actual: str, digest: str) -> None:
    if digest != actual:
        raise PlanError(f"fingerprint: the plan's fingerprint is sha256:{actual}, not the pinned sha256:{digest}; "
                        "the runtime refuses a plan other than the one it was shipped")

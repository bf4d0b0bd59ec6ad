"""Numbers of a plan as the report shows them: read at a field, formatted once, traceable to the plan.

Every number the page takes from the plan is a :class:`Number`: its place in the plan (a JSON
Pointer, RFC 6901), its exact value (``repr``) and its text. The page renders it as
``<data value="exact" data-field="/pointer">text</data>``, so a reader (or a test) can check each
figure against the verified plan.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping, Sequence

__all__ = ["Number", "pointer", "read", "fmt", "number", "derived"]


@dataclasses.dataclass(frozen=True)
class Number:
    """One number shown in the report.

    Attributes
    ----------
    value : str
        The exact value (``repr`` of the float, the int's digits).
    text : str
        What the page shows (:func:`fmt`).
    field : str
        JSON Pointer of its place in the plan; ``""`` for a derived number (a what-if, a figure point).
    """

    value: str
    text: str
    field: str = ""


def pointer(field: Sequence[Any]) -> str:
    """The JSON Pointer (RFC 6901) of a field given as keys from the root: ``("a", "b/c", 0)`` -> ``/a/b~1c/0``."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in field)


def read(plan: Mapping[str, Any], field: Sequence[Any]) -> Any:
    """The value at ``field`` in ``plan`` (KeyError/IndexError when it is not there)."""
    node: Any = plan
    for part in field:
        node = node[part]
    return node


def fmt(value: Any) -> str:
    """A number for people: ints with thousands separators, floats to 6 significant digits (``1.38629``,
    ``1.81512e-05``), booleans as yes/no; anything else as ``str``."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        return f"{value:.6g}"
    return str(value)


def _exact(value: Any) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def number(plan: Mapping[str, Any], field: Sequence[Any]) -> Number:
    """The number at ``field`` of ``plan``, with its pointer."""
    value = read(plan, field)
    return Number(_exact(value), fmt(value), pointer(field))


def derived(value: Any) -> Number:
    """A number the report computed through the family's planner (not a field of this plan)."""
    return Number(_exact(value), fmt(value))

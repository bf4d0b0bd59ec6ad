"""What the report page shows, gathered from a verified plan and its family (no HTML here).

Every number of the plan reaches the page as a :class:`~.values.Number` read at its field; the
family's :class:`~.._report.ReportFacts` (``Family.report_facts``) says which fields are the
guarantee's bounds, which prediction is the headline and how the plan depends on its users.
"""
from __future__ import annotations

from typing import Any, Mapping

from .values import Number, derived, fmt, number, pointer, read

__all__ = ["bounds", "shuffled", "predictions", "baselines", "verification", "record", "scalars"]


def _maybe(plan: Mapping[str, Any], field) -> Number | None:
    try:
        value = read(plan, field)
    except (KeyError, IndexError, TypeError):
        return None
    return number(plan, field) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def bounds(plan: Mapping[str, Any], facts) -> list[dict[str, Any]]:
    """One row per bound of the guarantee: quantity, upper (or lower) bound, the matching lower bound, source."""
    rows = []
    for b in facts.bounds:
        rows.append({"quantity": b.quantity, "value": number(plan, b.field), "unit": b.unit, "source": b.source,
                     "direction": b.direction, "lower": None if b.lower_field is None else _maybe(plan, b.lower_field),
                     "lower_source": b.lower_source})
    return rows


def shuffled(plan: Mapping[str, Any]) -> dict[str, Any] | None:
    """``guarantee.shuffled`` (the central guarantee behind a shuffler) as Numbers, or None."""
    block = plan["guarantee"].get("shuffled")
    if not isinstance(block, Mapping):
        return None
    at = ("guarantee", "shuffled")
    return {"n": number(plan, (*at, "n")), "delta": number(plan, (*at, "delta")),
            "epsilon": number(plan, (*at, "epsilon")), "epsilon_lower": number(plan, (*at, "epsilon_lower")),
            "source": str(block.get("source", ""))}


def predictions(plan: Mapping[str, Any], headline: str) -> list[dict[str, Any]]:
    """Every ``predicted`` entry: name, value, unit, source and its stated assumptions (headline first)."""
    entries = plan.get("predicted") or {}
    names = sorted(entries, key=lambda k: k != headline)
    rows = []
    for name in names:
        entry = entries[name]
        if not isinstance(entry, Mapping) or not isinstance(entry.get("value"), (int, float)):
            continue
        extra = [f"{k}: {fmt(v)}" for k, v in entry.items() if k not in ("value", "unit", "source")]
        rows.append({"name": name, "value": number(plan, ("predicted", name, "value")), "unit": entry.get("unit", ""),
                     "source": entry.get("source", ""), "assumptions": "; ".join(extra), "headline": name == headline})
    return rows


def baselines(plan: Mapping[str, Any], headline: str) -> list[dict[str, Any]]:
    """The plan's baselines: name, guarantee, its epsilon and its headline error where it states them."""
    rows = []
    for i, base in enumerate(plan.get("baselines") or []):
        if not isinstance(base, Mapping):
            continue
        guarantee = base.get("guarantee")
        epsilon = (_maybe(plan, ("baselines", i, "guarantee", "epsilon")) if isinstance(guarantee, Mapping)
                   else _maybe(plan, ("baselines", i, "epsilon")))
        words = guarantee.get("notion", "") if isinstance(guarantee, Mapping) else str(guarantee or "")
        role = [w for w in (base.get("role"), "chosen" if base.get("chosen") else None) if isinstance(w, str)]
        rows.append({"name": str(base.get("name", f"baseline {i + 1}")), "guarantee": words, "epsilon": epsilon,
                     "error": _maybe(plan, ("baselines", i, "predicted", headline, "value")),
                     "role": ", ".join(role)})
    return rows


def scalars(data: Any, at: tuple = (), limit: int = 400) -> list[tuple[str, Any]]:
    """The scalar leaves of a JSON value as ``(pointer, value)`` rows, depth first, at most ``limit``."""
    out: list[tuple[str, Any]] = []

    def walk(node: Any, path: tuple) -> None:
        if len(out) >= limit:
            return
        if isinstance(node, Mapping):
            for key, value in node.items():
                walk(value, (*path, key))
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, (*path, i))
        else:
            out.append((pointer(path), node))

    walk(data, at)
    return out


def verification(plan: Mapping[str, Any], facts) -> dict[str, Any]:
    """What was checked (the verifier's message and facts), and the smallest slack."""
    block = plan["verification"]
    details = []
    for key, value in block.items():
        if key in ("holds", "message"):
            continue
        shown = _maybe(plan, ("verification", key))
        details.append({"name": key, "number": shown,
                        "text": "" if shown else (", ".join(map(str, value)) if isinstance(value, list) else str(value))})
    slack = None if facts.slack_field is None else _maybe(plan, facts.slack_field)
    return {"message": str(block.get("message", "")), "details": details, "slack": slack}


def record(plan: Mapping[str, Any], facts, fingerprint: str, version: str) -> dict[str, Any]:
    """The machine-readable DP deployment record of the plan (the JSON block of the page).

    Fields: the notion and model (``local``, or ``shuffle`` with the central ``(epsilon, delta)``),
    the unit of privacy, ``epsilon`` (nats) and ``delta`` of the headline guarantee, the plain-LDP
    epsilon, every bound with its source, the predicted headline error, the verification and the
    plan's fingerprint.
    """
    guarantee = plan["guarantee"]
    shuffle = guarantee.get("shuffled") if isinstance(guarantee.get("shuffled"), Mapping) else None
    head = facts.bounds[0]
    entry = (plan.get("predicted") or {}).get(facts.headline) or {}
    out = {
        "record": "dp-deployment", "record_version": "1", "generator": f"ldpplan {version}",
        "plan_fingerprint": fingerprint, "plan_format": plan.get("format_version"),
        "model": "shuffle" if shuffle else "local", "notion": guarantee.get("notion"),
        "mechanism": plan.get("mechanism"), "unit_of_privacy": facts.unit_of_privacy,
        "epsilon": read(plan, head.field), "delta": shuffle["delta"] if shuffle else 0.0, "epsilon_unit": "nats",
        "plain_ldp_epsilon": None if facts.ldp_epsilon is None else read(plan, facts.ldp_epsilon.field),
        "central": None if shuffle is None else {k: shuffle[k] for k in ("n", "delta", "epsilon", "epsilon_lower",
                                                                          "source")},
        "bounds": [{"quantity": b.quantity, "field": pointer(b.field), "value": read(plan, b.field), "unit": b.unit,
                    "direction": b.direction, "source": b.source,
                    "lower": None if b.lower_field is None else read(plan, b.lower_field),
                    "lower_source": b.lower_source or None} for b in facts.bounds],
        "predicted_error": {"metric": facts.headline, "value": entry.get("value"), "unit": entry.get("unit"),
                            "source": entry.get("source")},
        "verification": {"holds": plan["verification"].get("holds"), "message": plan["verification"].get("message")},
        "sources": sorted({b.source for b in facts.bounds} | ({shuffle["source"]} if shuffle else set())),
    }
    return out


def derived_ratio(new: Number, old: Number) -> Number:
    """``new / old`` of two shown numbers (how many times the error grows)."""
    return derived(float(new.value) / float(old.value)) if float(old.value) else derived(float("nan"))

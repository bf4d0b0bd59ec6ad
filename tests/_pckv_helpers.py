"""Shared pieces of the PCKV tests."""
from __future__ import annotations

import importlib

import pytest


@pytest.fixture(autouse=True)
def only_families_with_FAMILY(monkeypatch):
    """Compose the plan schema from the families that already expose ``FAMILY``.

    Before the branches of the other families are merged, their modules are still of the old
    layout; the composed schema (``load_schema("plan-2.0")``) would fail on them. After the
    merge this fixture removes nothing.
    """
    from ldpplan.planner import families

    for fam, (mod, _) in list(families.REGISTRY.items()):
        if not hasattr(importlib.import_module(mod), "FAMILY"):
            monkeypatch.delitem(families.REGISTRY, fam)

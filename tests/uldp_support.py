"""Helpers of the ULDP tests.

``other_families_until_merge`` lets the composed plan schema load while the other family
packages (IDUE, PCKV, PIE) are still being rewritten on their own branches: a family module
without ``FAMILY`` is replaced by a stub that names its plan mechanisms. Once every family
exposes ``FAMILY`` this is a no-op.
"""
from __future__ import annotations

import types

import pytest

_PLAN_MECHANISMS = {"idue": ("idue", "idue-ps"), "pckv": ("pckv-ue", "pckv-grr"), "pie": ("rr", "glh")}


def patch_families(setattr_=setattr) -> None:
    """Install the stub loader (``setattr_`` may be ``monkeypatch.setattr``)."""
    from ldpplan.planner import families

    real = getattr(families._load, "__wrapped__", families._load)

    def load(name: str):
        try:
            return real(name)
        except AttributeError:  # the family package is not merged yet
            return types.SimpleNamespace(name=name, plan_mechanisms=_PLAN_MECHANISMS[name], examples={})

    load.__wrapped__ = real
    setattr_(families, "_load", load)


@pytest.fixture(autouse=True)
def other_families_until_merge(monkeypatch):
    """Autouse in the ULDP test modules (import it there)."""
    patch_families(monkeypatch.setattr)

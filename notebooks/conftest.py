"""Notebooks collected by nbmake are the ``notebook`` tier, also when only this folder is run
(``pytest notebooks -m notebook``; ``tests/conftest.py`` marks them in a whole-suite run)."""
from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        if str(getattr(item, "path", "")).endswith(".ipynb") and not item.get_closest_marker("notebook"):
            item.add_marker(pytest.mark.notebook)

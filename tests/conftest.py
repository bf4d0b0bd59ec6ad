"""Shared fixtures. Real data is found through ONE fixture: ``shared_data_dir``."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    """Folder with the real data sets (``$LDPPLAN_DATA_DIR`` or ``../shared/data``)."""
    path = Path(os.environ.get("LDPPLAN_DATA_DIR", REPO.parent / "shared" / "data"))
    if not (path / "movielens_ratings.csv").is_file():
        pytest.skip(f"real data not found in {path} (set LDPPLAN_DATA_DIR)")
    return path

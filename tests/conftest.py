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


# Property tests: a fixed, reproducible example sequence on CI (derandomized), random locally.
from hypothesis import settings as _hyp_settings  # noqa: E402

_hyp_settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
_hyp_settings.register_profile("dev", deadline=None, print_blob=True)
_hyp_settings.load_profile("ci" if os.environ.get("CI") else "dev")


def pytest_configure(config) -> None:
    """Register the tiers' markers (``pytest -m "not slow and not notebook"`` is the fast tier)."""
    config.addinivalue_line("markers", "slow: takes more than about 2 s (excluded from the fast tier)")
    config.addinivalue_line("markers", "notebook: executes a notebook (excluded from the fast tier)")

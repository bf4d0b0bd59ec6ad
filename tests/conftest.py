"""Shared fixtures and the test tiers.

Tiers (markers registered in ``pyproject.toml``): ``unit`` (fast; every test without another
tier marker gets it here), ``slow`` (over ~2 s), ``notebook`` (the ``.ipynb`` files nbmake
collects). The fast tier is ``pytest -m "not slow and not notebook"``.

Real data is found through ONE fixture: ``shared_data_dir``.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
_TIERS = ("slow", "notebook")

# One BLAS thread per test process (set before numpy loads here, and inherited by the xdist workers and
# the CLI subprocesses the tests start): pytest-xdist already runs one process per core, and OpenBLAS's
# own threads (2 per process on 2 cores) spin-wait against the other workers, which made a PCKV plan's
# quadrature dot products (solvers/_pckv_errors.py) cost 3-18x their single-threaded CPU time.
# ``setdefault``: a run that sets them itself keeps its values.
for _blas_threads in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_blas_threads, "1")


def pytest_collection_modifyitems(config, items) -> None:
    """Mark notebooks ``notebook`` and every test without a tier marker ``unit``."""
    for item in items:
        if str(getattr(item, "path", "")).endswith(".ipynb"):
            item.add_marker(pytest.mark.notebook)
        if not any(item.get_closest_marker(m) for m in _TIERS):
            item.add_marker(pytest.mark.unit)


@pytest.fixture(autouse=True)
def _no_terminal_size_from_the_runner(monkeypatch):
    """pytest-xdist workers inherit ``COLUMNS=80`` and ``LINES=24``; the CLI honours ``COLUMNS`` on a pipe,
    so every test starts without them (tests of widths set them themselves): one output with or without -n."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    """Folder with the real data sets (``planner.data.default_data_dir()``: ``$LDPPLAN_DATA_DIR``
    or ``../shared/data``); skips the test when the data is not there."""
    from ldpplan.planner.data import default_data_dir

    path = default_data_dir()
    if not (path / "movielens_ratings.csv").is_file():
        pytest.skip(f"real data not found in {path} (set LDPPLAN_DATA_DIR)")
    return path


@pytest.fixture
def toy_family():
    """Register only the test-only toy family (``tests/_toy_family.py``) for this test."""
    import _toy_family

    with _toy_family.registered():
        yield _toy_family


# Property tests: ONE committed, derandomized profile, loaded always (with or without CI): every
# run draws the same examples, so a failing example cannot hide from CI and a local failure
# reproduces. Widen the search deliberately (e.g. a temporary ``max_examples``), never by chance.
from hypothesis import HealthCheck as _HealthCheck, settings as _hyp_settings  # noqa: E402

# a loaded machine (CI on 2 cores) must not fail a property test for slow example generation
_hyp_settings.register_profile("ldpplan", derandomize=True, deadline=None, print_blob=True,
                               suppress_health_check=[_HealthCheck.too_slow])
_hyp_settings.load_profile("ldpplan")


def pytest_configure(config) -> None:
    """Register the tiers' markers here too (pyproject.toml does; this keeps ``-c other.ini`` runs strict)."""
    for line in ("unit: fast test (added automatically to tests without another tier marker)",
                 "slow: takes more than ~2 s (excluded from the fast tier)",
                 "notebook: a notebook executed by nbmake (excluded from the fast tier)",
                 "oracle: compares with a peer implementation (the `oracle` extra); under CI a skip fails"):
        config.addinivalue_line("markers", line)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under CI (``CI`` set, as ``.ci/run`` runs) an ``oracle`` test that skips fails instead: the
    peers it compares against are in the test extra, so a skip means the comparison silently stopped."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and item.get_closest_marker("oracle") and os.environ.get("CI"):
        report.outcome = "failed"
        report.longrepr = f"oracle test skipped under CI (the `oracle` extra must be installed): {report.longrepr}"

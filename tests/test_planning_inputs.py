"""Issue 10, item 4: every plan lists the data it read to plan (``planning_inputs``), truthfully.

A spy records every file a family opens while planning (outside the installed package); every
such file must be a ``source`` of ``planning_inputs`` with ``private: false`` (raw data, outside
the stated epsilon), and a plan that opened no file must say ``[]``. Run over every embedded
example of every registered family, plus one data-reading spec per family that can read data.
"""
from __future__ import annotations

import builtins
import io
import os
import pathlib
from pathlib import Path

import pytest
from click.testing import CliRunner

import ldpplan
from ldpplan import planner
from ldpplan.planner.cli import main
from ldpplan.planner.families import all_families

PACKAGE = Path(ldpplan.__file__).resolve().parents[1]  # the installed tree (schemas, code)


@pytest.fixture
def data_dir(shared_data_dir, monkeypatch):
    """The real data folder (the one fixture ``shared_data_dir``), also as ``$LDPPLAN_DATA_DIR``."""
    monkeypatch.setenv("LDPPLAN_DATA_DIR", str(shared_data_dir))
    return shared_data_dir


class _Spy:
    def __init__(self):
        self.files: set[str] = set()

    def note(self, file) -> None:
        if isinstance(file, (str, os.PathLike)):
            p = Path(file).resolve()
            metadata = any(part.endswith((".egg-info", ".dist-info")) for part in p.parts)  # package metadata
            if p.is_file() and PACKAGE not in p.parents and "site-packages" not in p.parts and not metadata:
                self.files.add(str(p))


@pytest.fixture
def spy(monkeypatch):
    s = _Spy()
    real_open, real_path_open = builtins.open, pathlib.Path.open

    def fake_open(file, *a, **k):
        s.note(file)
        return real_open(file, *a, **k)

    def fake_path_open(self, *a, **k):
        s.note(self)
        return real_path_open(self, *a, **k)

    monkeypatch.setattr(builtins, "open", fake_open)
    monkeypatch.setattr(io, "open", fake_open)
    monkeypatch.setattr(pathlib.Path, "open", fake_path_open)
    return s


def _check_truthful(plan, opened: set[str]) -> None:
    entries = plan["planning_inputs"]
    assert isinstance(entries, list)
    for e in entries:
        assert set(e) >= {"what", "source", "private"} and isinstance(e["what"], str) and e["what"]
        assert e["private"] is False  # raw data read to plan: no plan accounts for it
    sources = {str(Path(e["source"]).resolve()) for e in entries}
    assert opened <= sources, f"files read to plan but not in planning_inputs: {sorted(opened - sources)}"
    assert sources <= opened, f"planning_inputs names files the planner did not read: {sorted(sources - opened)}"
    if not opened:
        assert entries == []


def _examples():
    out = []
    for fam in all_families():
        for name, spec in fam.examples.items():
            marks = [pytest.mark.slow] if "LDPPLAN_DATA_DIR" in repr(spec) else []  # reads MovieLens (~3 s)
            out.append(pytest.param(fam.name, name, id=f"{fam.name}-{name}", marks=marks))
    return out


@pytest.mark.parametrize("family,name", _examples())
def test_every_example_lists_what_it_read(family, name, spy, request):
    spec = planner.example_spec(name)
    if "LDPPLAN_DATA_DIR" in repr(spec):
        request.getfixturevalue("data_dir")
    plan = planner.make_plan(spec)
    _check_truthful(plan, spy.files)


def test_idue_item_levels_csv_is_listed(tmp_path, spy):
    path = tmp_path / "levels.csv"
    path.write_text("item,level\nhiv,hiv\nflu,other\ncold,other\n")
    spec = {"mechanism": "idue", "item_levels_csv": str(path),
            "levels": [{"name": "hiv", "epsilon": 1.0}, {"name": "other", "epsilon": 2.0}]}
    plan = planner.make_plan(spec)
    _check_truthful(plan, spy.files)
    assert [e["what"] for e in plan["planning_inputs"]] == ["item -> privacy level mapping"]
    # verify works without the file (it is inlined in the embedded spec)
    path.unlink()
    assert planner.verify_plan(plan).holds


@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
def test_idue_ps_movielens_lists_domain_and_users(spy, data_dir):
    plan = planner.make_plan(Path(__file__).parents[1] / "examples" / "movielens-idue-ps.toml")
    _check_truthful(plan, spy.files - {str((Path(__file__).parents[1] / "examples" / "movielens-idue-ps.toml").resolve())})
    whats = [e["what"] for e in plan["planning_inputs"]]
    assert any(w.startswith("item domain") for w in whats) and any(w.startswith("users' item sets") for w in whats)


def test_pie_users_from_data_is_listed(spy, data_dir):
    spec = planner.example_spec("pie-gss") | {"users": {"data": str(data_dir / "gss_vocab.csv")}}
    plan = planner.make_plan(spec)
    _check_truthful(plan, spy.files)
    assert any(e["what"].startswith("users") for e in plan["planning_inputs"])


def test_uldp_plans_read_nothing(spy):
    for name, spec in planner.api.family("uldp").examples.items():
        assert planner.make_plan(spec)["planning_inputs"] == [], name
    assert not spy.files


@pytest.mark.slow
def test_cli_warns_on_raw_planning_inputs(tmp_path, data_dir):
    runner = CliRunner()
    r = runner.invoke(main, ["plan", "--example", "pckv-movielens", "-o", str(tmp_path / "p.json")])
    assert r.exit_code == 0, r.output
    assert "warning:" in r.stderr and "private: false" in r.stderr
    r = runner.invoke(main, ["plan", "--example", "health", "-o", str(tmp_path / "h.json")])
    assert r.exit_code == 0 and "warning:" not in r.stderr

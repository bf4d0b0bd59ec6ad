"""The family and mechanism tables of the docs cannot drift from the registry (issue 28 point 7).

``docs/family_table.py`` generates them from ``ldpplan.planner.families`` and ``ldpplan.mechanisms.RUNTIMES``
(the classes' ``PLAN_FIELDS``, docstrings and References); these tests fail when a table in the docs
differs from what it generates, when a registered family or runtime class has no entry in the few facts
the script keeps (papers, what a planner decides, report columns) or an entry outlives its family, when
a cited paper is not in the family's own References, and when the documented report columns differ
from the columns the runtime writes.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from _family_helpers import aggregate_specs, perturb, read_inputs
from ldpplan import mechanisms
from ldpplan.planner.families import all_families, family_for, family_names

REPO = Path(__file__).resolve().parents[1]


sys.path.insert(0, str(REPO / "docs"))   # the script lives with the docs it writes
import family_table as ft  # noqa: E402


def test_generated_tables_match_the_registry():
    stale = ft.stale()
    assert not stale, "tables differ from the registry (refresh: python docs/family_table.py --update):\n\n" + \
        "\n\n".join(diff for _, _, diff in stale)


def test_a_stale_table_is_reported_and_update_rewrites_only_the_region():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    table = ft.families_table()
    first = family_names()[0]
    stale_text = text.replace(table, table.replace(f"| [`{first}`]", f"| [`{first}-old`]"))
    assert ft.current(stale_text, "families") != table
    fixed = ft.replace(stale_text, "families", table)
    assert fixed == text
    with pytest.raises(ValueError, match="missing or repeated"):
        ft.replace("no markers here", "families", table)


def test_every_registered_family_is_in_the_readme_table_with_its_paper_count():
    table = ft.current((REPO / "README.md").read_text(encoding="utf-8"), "families")
    rows = [ln for ln in table.split("\n") if ln.startswith("| [`")]
    assert [re.match(r"\| \[`([^`]+)`\]", r).group(1) for r in rows] == family_names()
    papers = {p.cite for name in family_names() for p in ft.PAPERS[name]}
    assert len(papers) == 8 and len(family_names()) == 7   # today's registry: eight papers, seven families
    assert table.startswith("It implements eight papers in seven mechanism families")
    for fam in all_families():   # every plan mechanism and its runtime class, as RUNTIMES has them
        row = next(r for r in rows if r.startswith(f"| [`{fam.name}`]"))
        for mechanism in fam.plan_mechanisms:
            assert f"`{mechanism}`" in row and f"`{mechanisms.runtime_class(mechanism).__name__}`" in row


def test_the_scripts_facts_cover_exactly_the_registry():
    """A new family fails here until its papers, its planner's decisions, its report columns and its page
    are written; a removed one fails until its entries go."""
    assert set(ft.PAPERS) == set(family_names()) == set(ft.DECIDES)
    firsts = {cls.PLAN_FIELDS.mechanisms[0] for cls in set(mechanisms.RUNTIMES.values())}
    assert set(ft.REPORT_COLUMNS) == firsts
    for name in family_names():
        assert (REPO / "docs" / "families" / f"{name}.md").is_file(), name


@pytest.mark.parametrize("name", family_names())
def test_each_cited_paper_is_in_the_familys_own_references(name):
    sources = ft.family_sources(family_for(name))
    for paper in ft.PAPERS[name]:
        assert paper.author in sources and paper.year in sources, (name, paper)


def test_references_are_read_from_the_class_docstrings():
    for cls in set(mechanisms.RUNTIMES.values()):   # every runtime class cites its paper (numpydoc)
        doc = cls.__doc__ or ""
        refs = ft.references(cls)
        assert refs and refs.split()[0] in doc and refs.split()[-1] in doc, cls.__name__
        assert ft._cell(ft.summary(cls)) in ft.mechanisms_table()

    class NoRefs:
        """A class without a References section."""

    assert ft.references(NoRefs) == ""


def test_the_mechanisms_table_has_one_row_per_runtime_class_with_its_plan_fields():
    table = ft.current((REPO / "docs" / "FAMILIES.md").read_text(encoding="utf-8"), "mechanisms")
    rows = [ln for ln in table.split("\n")[2:]]
    classes = {cls for cls in mechanisms.RUNTIMES.values()}
    assert len(rows) == len(classes)
    for cls in classes:
        (row,) = [r for r in rows if f"| `{cls.__name__}` |" in r]
        assert all(f"`{claim}`" in row for claim in cls.PLAN_FIELDS.guarantee)
        assert f"`{cls.PLAN_FIELDS.shuffle}`" in row


def _documented_columns(mechanism: str) -> list[set[str]]:
    """The column sets the REPORTS table allows a plan mechanism: the backticked names of its columns cell,
    one set per alternative (``A or B``: a mechanism whose reports are those of a mechanism it wraps)."""
    columns, _ = ft.REPORT_COLUMNS[mechanisms.runtime_class(mechanism).PLAN_FIELDS.mechanisms[0]]
    return [set(re.findall(r"`([a-z_][a-z_0-9]*)`", part)) for part in columns.split(" or ")]


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(aggregate_specs()))
def test_documented_report_columns_are_what_the_runtime_writes(case, tmp_path):
    """For a small plan of every plan mechanism: the columns of ``Reports.to_arrays()`` are the documented
    ones (or one of the documented alternatives), 2-D columns as packed bytes."""
    from ldpplan.planner import make_plan
    from ldpplan.planner.families import family_of_plan

    plan = make_plan(aggregate_specs()[case])
    mech = mechanisms.load(plan)
    arrays = perturb(mech, read_inputs(family_of_plan(plan), plan, tmp_path, 50, np.random.default_rng(0)),
                     np.random.default_rng(1)).to_arrays()
    assert set(arrays) in _documented_columns(plan["mechanism"]), (plan["mechanism"], sorted(arrays))
    for name, arr in arrays.items():
        assert arr.dtype.kind in "iu" and arr.ndim in (1, 2), name
        if "fixed_size_binary" in ft.REPORT_COLUMNS[mech.PLAN_FIELDS.mechanisms[0]][0] and arr.ndim == 2:
            assert arr.dtype == np.uint8, name


def test_every_per_mechanism_table_of_the_docs_lists_every_plan_mechanism():
    """The hand-written per-mechanism tables (the sampling procedure, the audit's input lines) name every
    plan mechanism in RUNTIMES: a new family fails here until its rows are written."""
    wanted = set(mechanisms.RUNTIMES)
    for rel, heading in (("docs/REPORTS.md", "### Per mechanism"), ("docs/AUDIT.md", "Input lines, by family")):
        text = (REPO / rel).read_text(encoding="utf-8")
        start = text.index(heading)
        table = text[text.index("\n|", start):]
        table = table[:table.index("\n\n")]
        named = {m for row in table.split("\n")[3:] for m in re.findall(r"`([a-z0-9-]+)`", row.split("|")[1])}
        assert wanted <= named, (rel, sorted(wanted - named))

"""Issue 27 point 6 (labels): a label with surrounding whitespace is refused, in every family with labels.

CSV cells are read stripped (``planner/data``), so a spec label ``" a"`` could never be reported and
``" a"`` / ``"a"`` would be two items every input file maps to one. The planner refuses such a label
in the spec (exit 2, one line naming the field, the rule and the value); the runtime refuses it too.
"""
from __future__ import annotations

import copy
import json

import pytest
from click.testing import CliRunner

from ldpplan.mechanisms._api import domain_labels
from ldpplan.planner.cli import main
from ldpplan.planner.families import all_families

from _family_helpers import conformance


def _labelled(fam):
    """A small spec of the family whose domain is a list of labels ``x0, x1, ...``, the field naming it, a
    function giving the spec's list of labels (to change) and one giving the plan's ``domain.labels``.

    A family whose labels are not a top-level ``domain`` or ``keys`` (records: one domain per attribute)
    declares ``labelled_spec()`` returning the same four in its conformance module."""
    hook = getattr(conformance(fam), "labelled_spec", None)
    if hook is not None:
        return hook()
    spec = copy.deepcopy(next(iter(conformance(fam).AGGREGATE_SPECS.values())))
    key = "keys" if "keys" in spec else "domain"
    size = spec.get(key, spec.pop("domain_size", None))  # PIE: the pinned alias domain_size
    assert isinstance(size, int), (fam.name, spec)
    spec[key] = [f"x{k}" for k in range(size)]
    return spec, key, (lambda s: s[key]), (lambda s: s[key])


def _plan(tmp_path, spec):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    return CliRunner().invoke(main, ["plan", str(path), "--json"])


@pytest.mark.parametrize("label", [" x0", "x0 ", "\tx0", "x0\n"])
@pytest.mark.parametrize("fam", all_families(), ids=lambda f: f.name)
def test_a_label_with_surrounding_whitespace_is_refused(fam, label, tmp_path):
    spec, key, labels_of, _ = _labelled(fam)
    labels_of(spec)[0] = label
    result = _plan(tmp_path, spec)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().split("\n")
    assert len(lines) == 1 and "Traceback" not in result.output
    assert f"{key}[0]: a label must not start or end with whitespace" in lines[0], lines[0]
    assert repr(label) in lines[0]


@pytest.mark.parametrize("fam", all_families(), ids=lambda f: f.name)
def test_labels_colliding_after_stripping_are_refused_and_clean_labels_plan(fam, tmp_path):
    spec, key, labels_of, planned = _labelled(fam)
    clean = _plan(tmp_path, spec)
    assert clean.exit_code == 0, clean.output
    assert json.loads(clean.output)["domain"]["labels"] == planned(spec)
    labels_of(spec)[1] = " " + labels_of(spec)[0]          # " x0" and "x0": one item once the cells are stripped
    result = _plan(tmp_path, spec)
    assert result.exit_code == 2 and f"{key}[1]: a label must not start or end with whitespace" in result.output


@pytest.mark.parametrize("domain", [[" a", "a"], ["a", "b "], ["a", "\u00a0b"]])
def test_the_runtime_refuses_labels_with_surrounding_whitespace(domain):
    with pytest.raises(ValueError, match=r"^domain: a label must not start or end with whitespace"):
        domain_labels(domain)
    assert domain_labels(["a", "b c"]) == (2, ["a", "b c"])   # inner spaces are part of a label

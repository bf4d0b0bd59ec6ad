"""The client's gate (issue 16): ``load()`` refuses what ``verify`` refuses, in every family.

* a plan rewritten *consistently* (params, guarantee and labels edited together, the embedded
  spec untouched) never loads (hypothesis, every registered family's fast examples);
* a claim one float step below what its numbers give, exactly, never loads (every family;
  the exact values come from the planner's independent exact arithmetic, each family's
  ``exact_claims`` in its ``tests/test_<family>_conformance.py``);
* strict JSON: duplicate keys, ``format_version`` variants, unknown fields and claims;
* ``domain.size`` of 10^8 .. 10^30 refused by ``verify`` and ``load`` with one line naming the
  field, within a generous memory bound (timings: ``benchmarks/``, not asserted here);
* fingerprint pinning.
"""
from __future__ import annotations

import copy
import json
import math
import tracemalloc
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import ldpplan
from _family_helpers import LOWER, conformance_of, exact_claims, example_plan, family_cases
from ldpplan.mechanisms import PlanError
from ldpplan.planner.errors import PlanFormatError

FAST = [c for c in family_cases() if not c.marks]
HYP = dict(deadline=None, max_examples=25,
           suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                  HealthCheck.differing_executors])


def refused_by_load(plan) -> str:
    """The one-line PlanError of ``load`` (fails the test if the plan loads)."""
    with pytest.raises(PlanError) as info:
        ldpplan.load(plan)
    message = str(info.value)
    assert "\n" not in message
    return message


# --------------------------------------------------------------------------- consistent rewrites
def _element_lists(node, universe, kind, path=()):
    """Paths of lists whose entries are all domain elements (labels, or indices of a count domain)."""
    out = []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _element_lists(v, universe, kind, path + (k,))
    elif isinstance(node, list):
        if node and all(isinstance(x, kind) and not isinstance(x, bool) and x in universe for x in node):
            out.append(path)
        else:
            for i, v in enumerate(node):
                out += _element_lists(v, universe, kind, path + (i,))
    return out


def _get(node, path):
    for p in path:
        node = node[p]
    return node


def _resize(plan, path) -> None:
    """Keep a ``size`` sibling equal to the edited list's length (IDUE levels)."""
    parent = _get(plan, path[:-1])
    if isinstance(parent, dict) and isinstance(parent.get("size"), int):
        parent["size"] = len(parent[path[-1]])


def _rewrite(plan, data) -> str:
    """Edit params, guarantee and labels together (never the spec); returns what was done."""
    labels = plan["domain"]["labels"]
    universe = list(labels) if labels else list(range(int(plan["domain"]["size"])))
    kind = str if labels else int
    lists = [("params",) + p for p in _element_lists(plan["params"], set(universe), kind)]
    lists += [("guarantee",) + p for p in _element_lists(plan["guarantee"], set(universe), kind)]
    actions = ["resize"] + (["swap-labels"] if labels and len(labels) >= 2 else [])
    actions += ["move", "drop", "add"] if lists else []
    action = data.draw(st.sampled_from(actions), label="action")
    if action == "resize":  # one more or one fewer item, everywhere the plan states the size
        delta = data.draw(st.sampled_from([-1, 1]), label="delta")
        for node, key in ((plan["domain"], "size"), (plan["params"], "domain_size"),
                          (plan["params"], "intermediate_size")):
            if key in node:
                node[key] += delta
        if labels:
            labels.append("an-extra-label") if delta > 0 else labels.pop()
        return f"domain.size {delta:+d} (and params)"
    if action == "swap-labels":
        i, j = data.draw(st.lists(st.integers(0, len(labels) - 1), min_size=2, max_size=2, unique=True), label="ij")
        labels[i], labels[j] = labels[j], labels[i]
        return f"swap domain.labels[{i}] and [{j}]"
    source = data.draw(st.sampled_from([p for p in lists if p[0] == "params"]), label="group")
    group = list(_get(plan, source))
    if action == "move":
        targets = [p for p in lists if p[0] == "params" and p != source
                   and not set(_get(plan, p)) & set(group)]
        assume(targets and len(group) > 1)
        target = data.draw(st.sampled_from(targets), label="target")
        x = data.draw(st.sampled_from(group), label="item")
        for path in lists:  # every list holding x loses it; every list equal to the target gains it
            items = _get(plan, path)
            if x in items:
                items.remove(x)
                _resize(plan, path)
        _get(plan, target).append(x)
        _resize(plan, target)
        return f"move {x!r} from {source} to {target}"
    if action == "drop":
        assume(len(group) > 1)
        x = data.draw(st.sampled_from(group), label="item")
        for path in lists:
            items = _get(plan, path)
            if x in items and len(items) > 1:
                items.remove(x)
                _resize(plan, path)
        return f"drop {x!r} everywhere"
    outside = [x for x in universe if x not in group]
    assume(outside)
    x = data.draw(st.sampled_from(outside), label="item")
    for path in lists:  # add x to every list that holds the whole group (the group and its mirrors)
        items = _get(plan, path)
        if set(group) <= set(items) and x not in items:
            items.append(x)
            _resize(plan, path)
    for path in lists:  # and take it out of the other groups of params (a partition stays one)
        items = _get(plan, path)
        if path[0] == "params" and not set(group) <= set(items) and x in items and len(items) > 1:
            items.remove(x)
            _resize(plan, path)
    return f"add {x!r} to {source} and its mirrors"


@pytest.mark.parametrize("fam,name", FAST)
def test_consistent_rewrites_never_load(fam, name, request):
    original = example_plan(fam, name, request)
    ldpplan.load(original)

    @settings(**HYP)
    @given(st.data())
    def prop(data):
        plan = copy.deepcopy(original)
        what = _rewrite(plan, data)
        assume(plan != original)
        refused_by_load(plan)
        ok = True
        try:
            ok = ldpplan.planner.verify_plan(plan).holds
        except PlanFormatError:
            ok = False
        assert not ok, f"verify accepted: {what}"

    prop()


def test_issue_16_finding_1_repro(request):
    # a uRAP plan with one sensitive item removed from params.sensitive and guarantee.sensitive
    fam = ldpplan.planner.families.family_for("uldp")
    plan = example_plan(fam, "uldp-urap", request)
    x = plan["params"]["sensitive"][5]
    plan["params"]["sensitive"].remove(x)
    plan["guarantee"]["sensitive"].remove(x)
    assert "params.sensitive" in refused_by_load(plan)
    # an IDUE item moved into a weaker level (sizes kept consistent)
    fam = ldpplan.planner.families.family_for("idue")
    plan = example_plan(fam, "health", request)
    levels = plan["params"]["levels"]
    levels[1]["items"].append(levels[0]["items"].pop())
    levels[0]["items"].append(levels[1]["items"].pop(0))
    assert "items" in refused_by_load(plan)
    # a sensitive label swapped in domain.labels
    plan = example_plan(fam, "health", request)
    labels = plan["domain"]["labels"]
    labels[0], labels[1] = labels[1], labels[0]
    assert "domain.labels" in refused_by_load(plan)


# --------------------------------------------------------------------------- one float step below
def _float_below(d: Decimal) -> float:
    """The largest float strictly below ``d``."""
    f = float(d)
    while Decimal(f) >= d:
        f = math.nextafter(f, -math.inf)
    return f


def _set_claim(plan, key: tuple, value: float) -> None:
    node, parts = plan["guarantee"], [k for k in key if k != LOWER]
    for p in parts[:-1]:
        node = node[p]
    node[parts[-1]] = value


def test_every_runtime_has_an_exact_reference():
    # every plan mechanism's family recomputes its claims exactly (``exact_claims`` in its
    # tests/test_<family>_conformance.py); the property below then covers it
    for mechanism in ldpplan.mechanisms.RUNTIMES:
        assert callable(getattr(conformance_of(mechanism), "exact_claims", None)), mechanism


@pytest.mark.parametrize("fam,name", FAST)
def test_claim_one_float_step_below_its_numbers_never_loads(fam, name, request):
    original = example_plan(fam, name, request)
    exact = exact_claims(original)
    assert exact, "no claim covered"

    @settings(**HYP)
    @given(st.sampled_from(sorted(exact)))
    def prop(key):
        value = exact[key]
        plan = copy.deepcopy(original)
        if key[0] == LOWER:  # a lower bound (PIE's Bayes error): one float step above the numbers
            _set_claim(plan, key, -_float_below(value))
        else:
            _set_claim(plan, key, _float_below(value))
        refused_by_load(plan)

    prop()
    ldpplan.load(original)  # the planner's claims (rounded toward the safe side) load


# --------------------------------------------------------------------------- strict JSON and envelope
@pytest.fixture(scope="module")
def health(tmp_path_factory):
    plan = ldpplan.make_plan(ldpplan.planner.example_spec("health"))
    path = tmp_path_factory.mktemp("gate") / "health.json"
    ldpplan.planner.write_plan(plan, path)
    return path


@pytest.mark.parametrize("edit", ['"format_version": "2.0", "format_version": "2.0",',
                                  '"format_version": "2.0", "mechanism": "urr",'])
def test_duplicate_keys_are_refused(health, tmp_path, edit):
    text = health.read_text().replace('"format_version": "2.0",', edit, 1)
    path = tmp_path / "dup.json"
    path.write_text(text)
    assert "appears twice" in refused_by_load(path)
    with pytest.raises(PlanFormatError, match="appears twice"):
        ldpplan.planner.verify_plan(path)


@pytest.mark.parametrize("version", ["2", "2.1", "2.0.0", "2.0 ", "2.x", " 2.0", 2.0, None])
def test_format_version_must_be_exactly_2_0(health, version):
    plan = json.loads(health.read_text())
    plan["format_version"] = version
    assert refused_by_load(plan).startswith("format_version:")
    with pytest.raises(PlanFormatError, match="format_version"):
        ldpplan.planner.verify_plan(plan)


@pytest.mark.parametrize("where, key", [((), "extra"), (("guarantee",), "extra_epsilon"), (("domain",), "kind")])
def test_unknown_fields_and_claims_are_refused(health, where, key):
    plan = json.loads(health.read_text())
    _get(plan, where)[key] = 1.0
    field = ".".join(where + (key,))
    assert refused_by_load(plan).startswith(field)
    with pytest.raises(PlanFormatError, match=field.replace(".", r"\.")):
        ldpplan.planner.verify_plan(plan)


@pytest.mark.parametrize("fam,name", FAST)
@pytest.mark.parametrize("exponent", [8, 12, 25, 30])
def test_huge_domain_size_is_refused_first_within_memory(fam, name, request, exponent):
    plan = example_plan(fam, name, request)
    plan["domain"]["size"] = 10**exponent
    if "domain_size" in plan["params"]:
        plan["params"]["domain_size"] = 10**exponent
    tracemalloc.start()
    try:
        message = refused_by_load(plan)
        with pytest.raises(PlanFormatError) as info:
            ldpplan.planner.verify_plan(plan)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # a class whose cap is above the size (k-RR/GLH read domains up to 2^62 in O(1) memory, issue 27) refuses
    # the labels list that does not have size entries; every other class refuses the size itself
    field = "domain.labels:" if plan["domain"]["labels"] is not None and \
        ldpplan.mechanisms.RUNTIMES[plan["mechanism"]].PLAN_FIELDS.max_domain >= 10**exponent else "domain.size:"
    assert message.startswith(field) and str(info.value).startswith(field)
    assert peak < 200 * 2**20, f"{peak / 2**20:.0f} MB"


def test_huge_domain_size_in_a_file_names_the_field(health, tmp_path):
    from click.testing import CliRunner

    from ldpplan.planner.cli import main

    plan = json.loads(health.read_text())
    plan["domain"]["size"] = 10**30
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(plan))
    result = CliRunner().invoke(main, ["verify", str(path)])
    assert result.exit_code == 2 and "domain.size:" in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


# --------------------------------------------------------------------------- pinning
def test_fingerprint_pinning(health):
    from ldpplan.mechanisms import plan_fingerprint

    digest = plan_fingerprint(json.loads(health.read_text()))
    for pinned in (f"sha256:{digest}", digest, f"SHA256:{digest.upper()}"):
        assert ldpplan.load(health, fingerprint=pinned).mechanism == "idue"
        assert ldpplan.mechanisms.load(health, fingerprint=pinned).mechanism == "idue"
    other = "sha256:" + ("0" * 64)
    assert refused_by_load_pinned(health, other).startswith("fingerprint: the plan's fingerprint is sha256:")
    for bad in ("sha256:abc", "md5:" + digest, digest + "0", 42):
        assert refused_by_load_pinned(health, bad).startswith("fingerprint:")
    # a rewritten plan (even one that verifies) is not the pinned one
    plan = json.loads(health.read_text())
    plan["provenance"]["ldpplan_version"] = "0.0.1"
    assert refused_by_load_pinned(plan, f"sha256:{digest}").startswith("fingerprint:")
    # the time a plan was written is not its content (issue 26): re-planning keeps the fingerprint
    plan = json.loads(health.read_text())
    plan["provenance"]["created_at"] = "2000-01-01T00:00:00Z"
    assert ldpplan.load(plan, fingerprint=f"sha256:{digest}").mechanism == "idue"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(__import__("ldpplan.planner.families", fromlist=["x"]).all_examples()))
def test_same_spec_planned_twice_has_one_fingerprint(name, monkeypatch):
    """Every example planned twice, the second time at another clock: one fingerprint (issue 26)."""
    import datetime

    from ldpplan.mechanisms import plan_fingerprint
    from ldpplan.planner import _plan_format, example_spec, make_plan

    first = make_plan(example_spec(name))

    class Later(datetime.datetime):
        @classmethod
        def now(cls, tz=None):
            return datetime.datetime(2031, 5, 4, 3, 2, 1, tzinfo=tz)

    monkeypatch.setattr(_plan_format._dt, "datetime", Later)
    second = make_plan(example_spec(name))
    assert first["provenance"]["created_at"] != second["provenance"]["created_at"]
    assert plan_fingerprint(first) == plan_fingerprint(second)


def refused_by_load_pinned(plan, fingerprint) -> str:
    with pytest.raises(PlanError) as info:
        ldpplan.load(plan, fingerprint=fingerprint)
    return str(info.value)


def test_cli_prints_the_fingerprint_clients_pin(health):
    from click.testing import CliRunner

    from ldpplan.mechanisms import plan_fingerprint
    from ldpplan.planner.cli import main

    digest = plan_fingerprint(json.loads(health.read_text()))
    result = CliRunner().invoke(main, ["verify", str(health)])
    assert result.exit_code == 0 and f"fingerprint: sha256:{digest}" in result.output.splitlines()
    result = CliRunner().invoke(main, ["verify", str(health), "--json"])
    assert json.loads(result.output)["fingerprint"] == f"sha256:{digest}"


def test_plan_prints_the_fingerprint_of_the_written_file(tmp_path):
    from click.testing import CliRunner

    from ldpplan.mechanisms import plan_fingerprint
    from ldpplan.planner.cli import main

    path = tmp_path / "urr.json"
    result = CliRunner().invoke(main, ["plan", "--example", "uldp-urr", "-o", str(path)])
    assert result.exit_code == 0, result.output
    digest = plan_fingerprint(json.loads(path.read_text()))
    assert f"fingerprint: sha256:{digest}" in result.output.splitlines()
    ldpplan.load(path, fingerprint=f"sha256:{digest}")


# --------------------------------------------------------------------------- verify agrees with load
@pytest.mark.parametrize("fam,name", FAST)
def test_off_grid_probabilities_never_verify(fam, name, request):
    # finding 10: verify must not say "holds" for a probability the runtime refuses (off the 2^-48 grid)
    from _family_helpers import numbers_in

    original = example_plan(fam, name, request)
    grid = [p for p, v in numbers_in(original["params"]) if isinstance(v, float) and 0 < v < 1
            and math.floor(v * 2**48) == v * 2**48]
    assert grid, "a plan without grid probabilities"
    for path in grid:
        plan = copy.deepcopy(original)
        node = _get(plan["params"], path[:-1])
        node[path[-1]] += 2.0**-52
        refused_by_load(plan)
        try:
            holds = ldpplan.planner.verify_plan(plan).holds
        except PlanFormatError:
            holds = False
        assert not holds, f"verify holds with params.{'.'.join(map(str, path))} off the grid"


@pytest.mark.parametrize("fam,name", FAST)
@pytest.mark.parametrize("edit", ["value-bool", "value-missing", "value-string", "predicted-int", "entry-bool"])
def test_baseline_predictions_are_schema_checked(fam, name, request, edit):
    # finding 7: a malformed baselines[*].predicted is a one-line PlanFormatError (CLI exit 2), not a crash
    plan = example_plan(fam, name, request)
    if not plan["baselines"]:
        pytest.skip(f"{name}: no baselines")
    baseline = plan["baselines"][0]
    key = next(iter(baseline["predicted"]))
    if edit == "value-bool":
        baseline["predicted"][key]["value"] = True
    elif edit == "value-missing":
        del baseline["predicted"][key]["value"]
    elif edit == "value-string":
        baseline["predicted"][key]["value"] = "1.0"
    elif edit == "predicted-int":
        baseline["predicted"] = 3
    else:
        baseline["predicted"][key] = False
    with pytest.raises(PlanFormatError, match=r"^baselines\.0\.predicted") as info:
        ldpplan.planner.verify_plan(plan)
    assert "\n" not in str(info.value)


def test_issue_16_finding_2_prior_and_ldp_epsilon_one_step(request):
    # one float step of PIE's max_prior (the Bayes bound then drops below the target) or of the
    # IDUE Lemma 1 claim below its exact value: both refused, no tolerance
    fam = ldpplan.planner.families.family_for("pie")
    plan = example_plan(fam, "pie-gss", request)
    plan["guarantee"]["max_prior"] = math.nextafter(plan["guarantee"]["max_prior"], math.inf)
    assert refused_by_load(plan).startswith("guarantee.max_prior")
    fam = ldpplan.planner.families.family_for("idue")
    plan = example_plan(fam, "health", request)
    plan["guarantee"]["ldp_epsilon"] = math.nextafter(plan["guarantee"]["ldp_epsilon"], 0.0)
    assert refused_by_load(plan).startswith("guarantee.ldp_epsilon")

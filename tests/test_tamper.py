"""Tampered plans: hypothesis properties over every family's example plans.

The trust chain (docs/ARCHITECTURE.md) has two independent gates: the planner's exact
``verify_plan`` (numbers AND plan-vs-spec, derived claims recomputed) and the runtime's
``load`` (strict reading, ranges, grid, its own privacy map against the claims). An
untouched plan passes both; a tampered plan must never pass BOTH, with one exception
the tests cannot decide from outside: moving a number by one grid step / ulp / integer
step may be privacy-neutral or even stronger (the test cannot know the direction). For
those moves the property is the sound one: if both gates accept, the runtime's privacy
map recomputed from the tampered numbers is still within the plan's claims, and the
claims are the untouched ones (so the exact check against the spec still holds).

Tamperings: one-step moves anywhere in ``params``/``domain``; NaN, +-Infinity, -0 and huge
values anywhere a number is in ``params``/``guarantee``/``domain``; an item or sensitive
label moved between groups; any ``guarantee`` field decreased by 1e-9 relative;
``verification.holds`` false or the block removed; a spec epsilon raised. Examples: the
smallest example of each family that needs no real data (fast); ``@settings`` keeps the
example counts small, and the committed profile (tests/conftest.py) derandomizes them always.
"""
from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _family_helpers import example_plan, numbers_in, small_example_per_family

SMALL = small_example_per_family()
GRID = 2.0**-48
HYP = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                                   HealthCheck.differing_executors])


# --------------------------------------------------------------------------- the two gates
def gates(plan) -> tuple[bool, object | None, str]:
    """(verifies, runtime or None, reasons): run both gates, requiring their documented errors.

    A malformed plan must be a ``PlanFormatError`` from ``verify_plan`` and a ``PlanError``
    from ``load``, each one line; any other exception escapes and fails the test (a bug:
    e.g. a NaN reaching a comparison or a KeyError on a removed field).
    """
    import ldpplan
    from ldpplan.mechanisms import PlanError
    from ldpplan.planner.errors import PlanFormatError

    reasons = []
    try:
        check = ldpplan.planner.verify_plan(plan)
        verifies = check.holds is True
        if not verifies:
            reasons.append(f"verify: {check.message}")
    except PlanFormatError as exc:
        assert "\n" not in str(exc), f"multi-line PlanFormatError: {exc}"
        verifies = False
        reasons.append(f"verify raised: {exc}")
    try:
        mech = ldpplan.load(plan)
    except PlanError as exc:
        assert "\n" not in str(exc), f"multi-line PlanError: {exc}"
        mech = None
        reasons.append(f"load raised: {exc}")
    return verifies, mech, "; ".join(reasons)


def assert_caught(plan, what: str) -> None:
    verifies, mech, _ = gates(plan)
    assert not (verifies and mech is not None), f"tampered plan passed both verify and load: {what}"


# --------------------------------------------------------------------------- locating things
def get(node, path):
    for p in path:
        node = node[p]
    return node


def put(node, path, value):
    get(node, path[:-1])[path[-1]] = value


def number_paths(plan, sections) -> list[tuple]:
    """Paths (section, ...) of every number in the given top-level sections."""
    return [(sec,) + p for sec in sections if sec in plan for p, _ in numbers_in(plan[sec])]


def one_step(value, direction: int):
    """``value`` moved one grid step (grid probabilities), one ulp (other floats) or by 1 (ints)."""
    if isinstance(value, int):
        return value + direction
    x = float(value)
    if 0.0 <= x <= 1.0 and (x / GRID) == math.floor(x / GRID):
        return x + direction * GRID
    return float(np.nextafter(x, math.inf if direction > 0 else -math.inf))


def epsilon_fields(mapping) -> dict[str, float]:
    """Numeric fields named like an epsilon (the papers' symbol), flattened one level."""
    out = {}
    for k, v in mapping.items():
        if "epsilon" in str(k) and isinstance(v, (int, float)) and not isinstance(v, bool):
            out[str(k)] = float(v)
    return out


# --------------------------------------------------------------------------- properties
@pytest.mark.parametrize("fam,name", SMALL)
def test_untouched_plan_verifies_and_loads(fam, name, request):
    plan = example_plan(fam, name, request)
    verifies, mech, reasons = gates(plan)
    assert verifies and mech is not None, reasons
    # and a deep copy that went through JSON is the same plan for both gates
    import json

    verifies, mech, reasons = gates(json.loads(json.dumps(plan, allow_nan=False)))
    assert verifies and mech is not None, reasons


@pytest.mark.parametrize("fam,name", SMALL)
def test_one_step_moves_never_weaken_what_both_gates_accept(fam, name, request):
    from ldpplan.mechanisms._plan import round_up

    original = example_plan(fam, name, request)
    paths = number_paths(original, ("params", "domain"))
    assert paths, "a plan without numbers in params"
    claims = epsilon_fields(original["guarantee"])

    @settings(max_examples=min(40, 4 * len(paths)), **HYP)
    @given(st.sampled_from(paths), st.sampled_from([-1, 1]))
    def prop(path, direction):
        plan = copy.deepcopy(original)
        put(plan, path, one_step(get(plan, path), direction))
        verifies, mech, _ = gates(plan)
        if verifies and mech is not None:
            realized = epsilon_fields(mech.privacy_map())
            for key, claim in claims.items():
                if key in realized:
                    assert realized[key] <= round_up(claim), (path, direction, key)
            assert plan["guarantee"] == original["guarantee"]

    prop()


NON_FINITE = [math.nan, math.inf, -math.inf]
ODD_FINITE = [-0.0, 1e308, -1e308, 10**30, -(10**30), 2**63]


@pytest.mark.parametrize("fam,name", SMALL)
def test_non_finite_numbers_are_refused_anywhere(fam, name, request):
    # contract: both gates check that every number is finite (NaN-proof comparisons)
    original = example_plan(fam, name, request)
    paths = number_paths(original, ("params", "guarantee", "domain"))

    @settings(max_examples=min(60, 3 * len(paths)), **HYP)
    @given(st.sampled_from(paths), st.sampled_from(NON_FINITE))
    def prop(path, bad):
        plan = copy.deepcopy(original)
        put(plan, path, bad)
        assert_caught(plan, f"{'.'.join(map(str, path))} = {bad!r}")

    prop()


@pytest.mark.parametrize("fam,name", SMALL)
def test_signed_zero_and_huge_numbers(fam, name, request):
    # in the guarantee: a changed claim, never both gates; in params/domain: possibly an
    # informational number, so the sound property (accepted => realized within the claims)
    from ldpplan.mechanisms._plan import round_up

    original = example_plan(fam, name, request)
    paths = number_paths(original, ("params", "guarantee", "domain"))
    claims = epsilon_fields(original["guarantee"])

    @settings(max_examples=min(60, 3 * len(paths)), **HYP)
    @given(st.sampled_from(paths), st.sampled_from(ODD_FINITE))
    def prop(path, bad):
        current = get(original, path)
        if bad == current:
            return  # -0 over a zero is the same number
        plan = copy.deepcopy(original)
        put(plan, path, bad)
        what = f"{'.'.join(map(str, path))} = {bad!r}"
        if path[0] == "guarantee":
            assert_caught(plan, what)
            return
        verifies, mech, _ = gates(plan)
        if verifies and mech is not None:
            realized = epsilon_fields(mech.privacy_map())
            for key, claim in claims.items():
                if key in realized:
                    assert realized[key] <= round_up(claim), what

    prop()


@pytest.mark.parametrize("fam,name", SMALL)
def test_guarantee_claims_decreased_are_refused(fam, name, request):
    original = example_plan(fam, name, request)
    paths = [p for p in number_paths(original, ("guarantee",)) if get(original, p) != 0]
    assert paths, "a guarantee without a nonzero number"
    for path in paths:  # exhaustive: a guarantee has few numbers
        plan = copy.deepcopy(original)
        value = get(plan, path)
        put(plan, path, value * (1 - 1e-9) if isinstance(value, float) else value - 1)
        assert_caught(plan, f"{'.'.join(map(str, path))} decreased")


@pytest.mark.parametrize("fam,name", SMALL)
def test_verification_block_edits_are_refused(fam, name, request):
    original = example_plan(fam, name, request)
    for edit in ("false", "removed", "holds-missing", "holds-string"):
        plan = copy.deepcopy(original)
        if edit == "false":
            plan["verification"]["holds"] = False
        elif edit == "removed":
            del plan["verification"]
        elif edit == "holds-missing":
            del plan["verification"]["holds"]
        else:
            plan["verification"]["holds"] = "true"
        _, mech, _ = gates(plan)
        assert mech is None, f"load ran a plan whose verification block was {edit}"


def _spec_epsilon_paths(spec) -> list[tuple]:
    return [p for p, v in numbers_in(spec) if any("epsilon" in str(k) for k in p if isinstance(k, str)) and v > 0]


@pytest.mark.parametrize("fam,name", SMALL)
def test_spec_epsilon_raised_is_refused(fam, name, request):
    # the plan no longer matches its embedded spec (verify compares them): never both
    original = example_plan(fam, name, request)
    paths = _spec_epsilon_paths(original["spec"])
    if not paths:
        pytest.skip(f"{name}: the spec names no epsilon")
    for path in paths:
        for factor in (1 + 1e-6, 1.5, 4.0):
            plan = copy.deepcopy(original)
            put(plan["spec"], path, get(plan["spec"], path) * factor)
            assert_caught(plan, f"spec.{'.'.join(map(str, path))} x {factor}")


def _label_groups(plan) -> list[tuple]:
    """Paths of lists in ``params`` whose entries are domain elements (labels, or indices)."""
    labels = plan["domain"]["labels"]
    universe = set(labels) if labels else set(range(int(plan["domain"]["size"])))
    out = []

    def walk(node, path):
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, path + (k,))
        elif isinstance(node, list):
            kind = str if labels else int
            if node and all(isinstance(x, kind) and not isinstance(x, bool) and x in universe for x in node):
                out.append(path)
            else:
                for i, v in enumerate(node):
                    walk(v, path + (i,))

    walk(plan["params"], ("params",))
    return out


@pytest.mark.parametrize("fam,name", SMALL)
def test_items_moved_between_groups_are_refused(fam, name, request):
    original = example_plan(fam, name, request)
    groups = _label_groups(original)
    if not groups:
        pytest.skip(f"{name}: params hold no group of domain elements")
    labels = original["domain"]["labels"]
    universe = list(labels) if labels else list(range(int(original["domain"]["size"])))

    @settings(max_examples=30, **HYP)
    @given(st.data())
    def prop(data):
        plan = copy.deepcopy(original)
        source = data.draw(st.sampled_from(groups), label="group")
        items = get(plan, source)
        action = data.draw(st.sampled_from(["move", "add", "drop"]), label="action")
        if action == "move" and len(groups) > 1 and len(items) > 1:
            target = data.draw(st.sampled_from([g for g in groups if g != source]), label="target")
            moved = items.pop(data.draw(st.integers(0, len(items) - 1), label="index"))
            if moved in get(plan, target):
                return
            get(plan, target).append(moved)
        elif action == "add":
            outside = [x for x in universe if x not in items]
            if not outside:
                return
            items.append(data.draw(st.sampled_from(outside), label="added"))
        else:
            if len(items) < 2:
                return
            items.pop(data.draw(st.integers(0, len(items) - 1), label="dropped"))
        assert_caught(plan, f"{action} in {'.'.join(map(str, source))}")

    prop()

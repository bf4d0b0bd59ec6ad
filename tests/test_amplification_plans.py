"""Plans of GLH, Hadamard response and IDUE / IDUE-PS with ``[shuffle]`` claim the randomizer's own blanket.

The claim names the theorem, is tighter than FMT21's generic bounds, is recomputed by ``verify``
and confirmed by the runtime gate ``load()``; a claim below it (tampered) is refused by both.
"""
from __future__ import annotations

import copy
import math

import pytest

import ldpplan
from ldpplan import mechanisms
from ldpplan.mechanisms import PlanError
from ldpplan.mechanisms._amplification import SOURCE_TWO_LEVEL, blanket_delta_upper, pairs_of, randomizer_of_plan
from ldpplan.planner.hadamard import EXAMPLES as HADAMARD
from ldpplan.planner.idue import EXAMPLES as IDUE
from ldpplan.planner.pie import EXAMPLES as PIE
from ldpplan.solvers.shuffle import fmt21_closed_form, fmt21_numerical

SHUFFLE = {"n": 10 ** 4, "delta": 1e-6}
SPECS = {  # the families' own examples (GLH, Hadamard response, IDUE, IDUE-PS), resized
    "hash": ({**PIE["pie-glh"], "domain_size": 1000, "n": 10 ** 4, "target": {"epsilon": 3.0}}, "hash"),
    "sylvester": ({**HADAMARD["hadamard-synthetic"], "epsilon": 2.0}, "sylvester"),
    "sylvester-blocks": ({**HADAMARD["hadamard-synthetic"], "epsilon": 7.0}, "sylvester"),
    "levels": (IDUE["health"], "unary"),
    "level-sets": (IDUE["health-itemsets"], "unary"),
}


@pytest.fixture(scope="module", params=sorted(SPECS))
def planned(request):
    spec, kind = SPECS[request.param]
    spec = {key: value for key, value in spec.items() if key not in ("description", "g_max")}
    return ldpplan.make_plan({**spec, "shuffle": dict(SHUFFLE)}), kind


def _epsilon0(plan):
    guarantee = plan["guarantee"]
    return guarantee["ldp_epsilon"] if guarantee["notion"] == "MinID-LDP" else guarantee["epsilon"]


@pytest.mark.slow
def test_claim_is_the_blanket_and_tighter_than_fmt21(planned):
    plan, kind = planned
    shuffled = plan["guarantee"]["shuffled"]
    assert shuffled["source"].startswith(SOURCE_TWO_LEVEL + "; lower: ")
    epsilon0 = _epsilon0(plan)
    generic = min(fmt21_numerical(epsilon0, SHUFFLE["n"], SHUFFLE["delta"]),
                  fmt21_closed_form(epsilon0, SHUFFLE["n"], SHUFFLE["delta"]))
    assert shuffled["epsilon_lower"] <= shuffled["epsilon"] < generic / 1.2
    pairs = pairs_of(randomizer_of_plan(plan, kind), epsilon0)
    assert blanket_delta_upper(shuffled["epsilon"], SHUFFLE["n"], pairs, SHUFFLE["delta"]) <= SHUFFLE["delta"]
    # the bisection's bracket: 1 % less epsilon breaks delta (the claim is not loose)
    assert blanket_delta_upper(shuffled["epsilon"] * 0.99, SHUFFLE["n"], pairs, SHUFFLE["delta"]) > SHUFFLE["delta"]


@pytest.mark.slow
def test_verify_and_load_accept_and_refuse_a_smaller_claim(planned):
    plan, _ = planned
    assert plan["verification"]["holds"] and ldpplan.verify_plan(plan).holds
    mechanisms.load(copy.deepcopy(plan))
    tampered = copy.deepcopy(plan)
    tampered["guarantee"]["shuffled"]["epsilon"] *= 0.97
    with pytest.raises(PlanError, match="guarantee.shuffled.epsilon"):
        mechanisms.load(tampered)
    assert not ldpplan.verify_plan(tampered).holds


@pytest.mark.slow
def test_the_runtime_reads_the_numbers_it_checks(planned):
    """A plan whose channel numbers differ from the ones the claim was computed for is refused."""
    plan, kind = planned
    tampered = copy.deepcopy(plan)
    if kind == "unary":
        for level in tampered["params"]["levels"]:
            level["b"] = level["b"] / 2.0  # a sharper channel: the blanket shrinks
    elif kind == "hash":
        tampered["params"]["g"] = 2
    else:
        tampered["params"]["blocks"] = tampered["params"]["blocks"] * 2
    with pytest.raises(PlanError):
        mechanisms.load(tampered)


def test_plans_without_shuffle_are_unchanged():
    """No [shuffle] block: no central claim, and the family's randomizer description is never attached."""
    spec = {key: value for key, value in IDUE["health"].items() if key != "description"}
    plan = ldpplan.make_plan(spec)
    assert "shuffled" not in plan["guarantee"]
    assert math.isfinite(plan["guarantee"]["ldp_epsilon"])

"""Plan dicts of SMP over a record with a numeric attribute (issue 30): built from a records spec, verified
exactly against the spec, loaded with the claim re-decided; tampering by one step is refused.

References: N. Wang et al., ICDE 2019, Sec. IV; Arcolezi, Couchot, Al Bouna, Xiao, CIKM 2021, Sec. 2.3.
"""
from __future__ import annotations

import copy
import json
import math
from fractions import Fraction

import numpy as np
import pytest

from ldpplan.mechanisms import PlanError
from ldpplan.planner.errors import SpecError
from ldpplan.planner.records._mixed import mixed_smp
from ldpplan.planner.records._mixed_plan import MECHANISM, build_mixed_plan, load_mixed, verify_mixed
from ldpplan.solvers.records import frequency_oracle_variance

RAW = {"mechanism": "smp", "epsilon": 1.0, "attributes": [
    {"name": "origin", "domain": ["EWR", "JFK", "LGA"], "weight": 2.0}, {"name": "delay", "range": [-10.0, 50.0]}]}


@pytest.fixture(scope="module")
def plan():
    return json.loads(json.dumps(build_mixed_plan(RAW)))  # through JSON, as a plan file


def test_the_plan_is_the_api_plan_and_verifies_exactly(plan):
    api = mixed_smp({k: v for k, v in RAW.items() if k != "mechanism"}).runtime
    assert plan["mechanism"] == MECHANISM and plan["params"]["kinds"][0] == "categorical"
    assert plan["params"]["kinds"][1] != "categorical" and plan["params"]["numbers"][1] is None
    assert [c is None for c in plan["params"]["channels"]] == [True, False]
    assert plan["params"]["sampling"] == list(api.sampling)
    assert plan["domain"]["labels"][:3] == ["origin=EWR", "origin=JFK", "origin=LGA"]
    result = verify_mixed(plan)
    assert result.holds, result.message
    ratios = api.attribute_ratios()
    p = Fraction(api.parts[0].number)
    assert ratios[0] == p * 2 / (1 - p)  # GRR's exact ratio at k = 3
    assert result.details["epsilon_effective"] == pytest.approx(math.log(max(ratios)), abs=1e-15)
    assert result.details["epsilon_effective"] <= 1.0
    assert plan["guarantee"]["epsilon"] >= result.details["epsilon_effective"]
    assert plan["guarantee"]["epsilon"] == api.epsilon  # the exact epsilon rounded up, not the budget


def test_load_gives_the_runtime_and_estimates_the_mean_in_user_units(plan):
    rt = load_mixed(plan)
    rng = np.random.default_rng(7)
    n = 40000
    data = np.column_stack([rng.integers(0, 3, n), rng.uniform(0.0, 20.0, n)])
    est = rt.estimate_mean(rt.aggregate(rt.perturb(data, rng)), "delay")
    se = math.sqrt(rt.mean_variance_per_user("delay", data[:, 1]) / n)
    assert abs(est.mean - data[:, 1].mean()) < 4.5 * se  # variance-derived tolerance
    assert est.std_error == pytest.approx(se, rel=0.15)


def _decisive(channel):
    m = len(channel["output_values"])
    table = np.array(channel["numerators"], dtype=np.int64).reshape(-1, m)
    ratios = table.max(axis=0) / np.maximum(table.min(axis=0), 1)
    return table, m, int(np.argmax(np.where(table.min(axis=0) > 0, ratios, 0)))


def test_a_numerator_raised_by_one_step_is_refused_by_verify_and_load(plan):
    bad = copy.deepcopy(plan)
    channel = bad["params"]["channels"][1]
    table, m, j = _decisive(channel)
    i = int(np.argmax(table[:, j]))
    sizes = channel["component_sizes"]
    donor = next(c for c in range(m) if c != j and table[i, c] > 1 and (c < sizes[0]) == (j < sizes[0]))
    table[i, j] += 1
    table[i, donor] -= 1
    channel["numerators"] = table.ravel().tolist()
    result = verify_mixed(bad)
    assert not result.holds and result.message.startswith("params.channels")
    with pytest.raises(PlanError, match="guarantee.epsilon"):
        load_mixed(bad)


def test_a_claim_one_float_step_low_or_a_raised_grid_number_is_refused(plan):
    low = copy.deepcopy(plan)
    low["guarantee"]["epsilon"] = math.nextafter(plan["guarantee"]["epsilon"], 0.0)
    assert not verify_mixed(low).holds
    with pytest.raises(PlanError, match="guarantee.epsilon"):
        load_mixed(low)
    unknown = copy.deepcopy(plan)
    unknown["params"]["kinds"][0] = "ordinal"
    with pytest.raises(PlanError, match="params.kinds"):
        load_mixed(unknown)
    raised = copy.deepcopy(plan)
    raised["params"]["numbers"][0] += 2.0 ** -48
    assert verify_mixed(raised).message.startswith("params.numbers")
    with pytest.raises(PlanError, match="params.numbers"):
        load_mixed(raised)


@pytest.mark.parametrize("mechanism", ["rsfd", "spl"])
def test_schemes_other_than_smp_are_refused_naming_the_field(mechanism):
    with pytest.raises(SpecError, match="mechanism"):
        build_mixed_plan({**RAW, "mechanism": mechanism})
    assert verify_mixed({"spec": {**RAW, "mechanism": mechanism}}).message.startswith("spec:")


@pytest.mark.slow
def test_perturb_plan_file_streams_the_flights_csv_and_estimates_the_delay_mean(shared_data_dir):
    # the real CSV through a plan file (JSON round trip): origin as labels, dep_delay as numbers; the delay's mean
    # within 5 predicted standard errors, the reports' std error within 10% of the exact prediction
    from ldpplan.planner.data.flights import load_flights
    from ldpplan.planner.records._mixed_plan import perturb_plan_file

    path = shared_data_dir / "nycflights13_flights.csv"
    flights = load_flights(path)
    raw = {"mechanism": "records", "epsilon": 2.0, "attributes": [
        {"name": "origin", "domain": list(flights.labels["origin"])}, {"name": "dep_delay", "range": [-43.0, 300.0]}]}
    plan = json.loads(json.dumps(build_mixed_plan(raw)))
    assert verify_mixed(plan).holds
    agg = perturb_plan_file(plan, path, np.random.default_rng(3), skip_empty=True, chunk_rows=100_000)
    rt = load_mixed(plan)
    delay = flights.numbers["dep_delay"]
    keep = ~np.isnan(delay)
    assert agg.n == int(keep.sum()) == int(agg.counts["m"].sum())
    est = rt.estimate_mean(agg, "dep_delay")
    predicted = math.sqrt(rt.mean_variance_per_user("dep_delay", delay[keep]) / agg.n)
    assert est.std_error == pytest.approx(predicted, rel=0.1)
    assert abs(est.mean - float(np.mean(np.clip(delay[keep], -43.0, 300.0)))) <= 5 * predicted
    origin = np.bincount(flights.codes["origin"][keep], minlength=3) / agg.n
    assert rt.parts[0].oracle == "grr"
    # GRR over m_origin reports: n Var per item <= (V + f(1-f))/pi with f(1-f) <= 1/4
    bound = math.sqrt((frequency_oracle_variance("grr", 2.0, 3) + 0.25) / rt.sampling[0] / agg.n)
    assert np.all(np.abs(rt.estimate_frequency(agg, "origin") - origin) <= 5 * bound)


@pytest.mark.slow
def test_the_loaded_runtime_is_audited_consistent(plan):
    # the room's audit (pairs differing in one attribute and in all) run on the runtime loaded from the plan file
    from ldpplan.planner.records._mixed_audit import audit_mixed

    api = mixed_smp({k: v for k, v in RAW.items() if k != "mechanism"})
    result = audit_mixed(api, mechanism=load_mixed(plan), trials=20000, rng=np.random.default_rng(11))
    assert result.consistent, result.table()

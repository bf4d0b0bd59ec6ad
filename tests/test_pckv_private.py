"""PCKV private padding length: phase 1 (RR over {0..max}), the plan's record, verify, simulate."""
from __future__ import annotations

import copy

import numpy as np
import pytest

from ldpplan.mechanisms import Aggregate
from ldpplan.mechanisms.pie import RandomizedResponse
from ldpplan.planner._report import SimulateOptions
from ldpplan.planner.errors import SpecError
from ldpplan.planner.pckv import FAMILY
from ldpplan.planner.pckv._private_length import estimate_distribution, phase1_user_count, project_simplex


TRUE_SIZES = np.array([0.0, 0.3, 0.25, 0.2, 0.1, 0.05, 0.04, 0.03, 0.02, 0.01, 0.0])  # sizes 0..10


def _counts(seed: int = 5, m: int = 2000, epsilon: float = 2.0) -> list[int]:
    rng = np.random.default_rng(seed)
    sizes = rng.choice(11, size=m, p=TRUE_SIZES)
    rr = RandomizedResponse(domain=11, epsilon=epsilon)
    return [int(c) for c in rr.aggregate(rr.perturb(sizes, rng=rng)).counts["y"]]


def _spec(**private) -> dict:
    ph = {"epsilon": 2.0, "user_share": 0.1, "max": 10, "counts": _counts()}
    ph.update(private)
    return {"mechanism": "pckv", "epsilon": 3.0, "domain": 40, "users": 20000, "allocation": "optimized",
            "padding_length": {"private": ph}}


def test_project_simplex_known_points_and_properties():
    np.testing.assert_allclose(project_simplex([0.5, 0.5, 0.5]), [1 / 3] * 3)
    np.testing.assert_allclose(project_simplex([2.0, 0.0, -1.0]), [1.0, 0.0, 0.0])
    np.testing.assert_allclose(project_simplex([0.2, 0.3, 0.5]), [0.2, 0.3, 0.5])
    rng = np.random.default_rng(0)
    for _ in range(50):
        v = rng.normal(size=7)
        x = project_simplex(v)
        assert x.min() >= 0 and x.sum() == pytest.approx(1.0)
        # optimality (KKT): v - x is constant on the support and not larger off it
        g = v - x
        sup = x > 0
        assert np.ptp(g[sup]) < 1e-12 and np.all(g[~sup] <= g[sup].max() + 1e-12)


def test_phase1_estimate_recovers_the_distribution_from_expected_counts():
    epsilon, m = 1.0, 10 ** 9
    rr = RandomizedResponse(domain=11, epsilon=epsilon)
    expected = rr.mu * TRUE_SIZES + rr.nu * (1 - TRUE_SIZES)
    counts = np.rint(m * expected).astype(np.int64)
    np.testing.assert_allclose(estimate_distribution(counts, epsilon, 10), TRUE_SIZES, atol=1e-6)
    assert Aggregate("rr", int(counts.sum()), {"y": counts}).n == counts.sum()


def test_private_plan_records_phase1_and_excludes_its_users():
    plan = FAMILY.plan(_spec())
    assert plan["verification"]["holds"], plan["verification"]["message"]
    rec = plan["solver"]["padding_length_selection"]["private"]
    m = sum(_counts())
    assert rec["phase1_users"] == m and rec["phase2_users"] == 20000 - m and rec["users"] == 20000
    assert plan["predicted"]["mse_frequency"]["users"] == 20000 - m
    entry = [x for x in plan["planning_inputs"] if x["what"] == "set-size distribution"]
    assert entry == [{"what": "set-size distribution", "source": rec["source"], "private": True, "epsilon": 2.0,
                      "user_share": 0.1, "phase1_users": m, "max": 10}]
    assert all(x["private"] for x in plan["planning_inputs"])  # nothing raw was read
    assert 1 <= plan["params"]["padding_length"] <= 10
    dist = np.array(rec["distribution"])
    assert dist.min() >= 0 and dist.sum() == pytest.approx(1.0)
    assert np.abs(dist - TRUE_SIZES).max() < 0.1  # 2000 reports at epsilon 2 over 11 symbols


def test_private_L_follows_the_estimated_distribution():
    """Same spec, phase-1 users with larger sets: the chosen L cannot decrease."""
    small = FAMILY.plan(_spec(counts=[0, 900, 900, 100, 50, 10, 10, 10, 10, 5, 5]))
    large = FAMILY.plan(_spec(counts=[0, 5, 5, 10, 10, 10, 50, 100, 900, 900, 10]))
    assert small["params"]["padding_length"] < large["params"]["padding_length"]


@pytest.mark.parametrize("path, value, field", [
    (("solver", "padding_length_selection", "private", "epsilon"), 1.0, "private.epsilon"),
    (("solver", "padding_length_selection", "private", "user_share"), 0.5, "private.user_share"),
    (("solver", "padding_length_selection", "private", "phase1_users"), 1, "phase1_users"),
    (("solver", "padding_length_selection", "private", "distribution", 1), 0.9, "private.distribution"),
    (("planning_inputs", 0, "private"), False, "planning_inputs"),
    (("planning_inputs", 0, "epsilon"), 0.5, "planning_inputs"),
    (("predicted", "mse_frequency", "users"), 20000, "users"),
])
def test_verify_checks_phase1_numbers_against_the_spec(path, value, field):
    plan = FAMILY.plan(_spec())
    bad = copy.deepcopy(plan)
    node = bad
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    res = FAMILY.verify(bad)
    assert not res.holds and field in res.message, res.message


def test_verify_rejects_a_spec_epsilon_changed_after_planning():
    plan = FAMILY.plan(_spec())
    bad = copy.deepcopy(plan)
    bad["spec"]["padding_length"]["private"]["epsilon"] = 0.5
    res = FAMILY.verify(bad)
    assert not res.holds and "padding_length.private.epsilon = 0.5" in res.message


@pytest.mark.parametrize("private, field", [
    ({"counts": None}, "padding_length.private"),
    ({"counts": [1, 2, 3]}, "padding_length.private.counts"),
    ({"user_share": 1.0}, "user_share"),
    ({"epsilon": 0.0}, "epsilon"),
    ({"bogus": 1}, "bogus"),
])
def test_bad_private_specs_name_the_field(private, field):
    spec = _spec(**private)
    if private.get("counts", 0) is None:
        del spec["padding_length"]["private"]["counts"]
    with pytest.raises(SpecError, match=field):
        FAMILY.plan(spec)


def test_phase1_user_count_is_clamped():
    assert phase1_user_count(671, 0.2) == 134
    assert phase1_user_count(10, 0.01) == 1 and phase1_user_count(10, 0.99) == 9


@pytest.mark.slow
def test_movielens_two_phase_end_to_end(shared_data_dir, monkeypatch):
    import tomllib
    from pathlib import Path

    monkeypatch.setenv("LDPPLAN_DATA_DIR", str(shared_data_dir))
    example = Path(__file__).resolve().parents[1] / "examples" / "movielens-pckv-private.toml"
    plan = FAMILY.plan(tomllib.loads(example.read_text()), base_dir=example.parent)
    assert plan["verification"]["holds"], plan["verification"]["message"]
    rec = plan["solver"]["padding_length_selection"]["private"]
    assert (rec["users"], rec["phase1_users"], rec["phase2_users"]) == (671, 134, 537)
    assert [x["private"] for x in plan["planning_inputs"]] == [False, True]  # key domain raw, set sizes private
    rep = FAMILY.simulate(plan, SimulateOptions(data=str(shared_data_dir / "movielens_ratings.csv"), trials=2, seed=3,
                                                extra={"baselines": "false"}))
    two = rep.data["two_phase"]
    assert two["private"]["users_phase2"] == 537 and two["raw"]["users_phase2"] == 671
    assert 1 <= two["private"]["L_min"] <= two["private"]["L_max"] <= 200
    assert any("privately vs from raw data" in t.title for t in rep.tables)


def test_phase1_simulated_on_a_data_file_is_rerun_by_verify(tmp_path):
    rng = np.random.default_rng(11)
    lines = ["user,key,value"]
    for u in range(300):
        for k in rng.choice(12, size=int(rng.integers(1, 8)), replace=False):
            lines.append(f"u{u},k{k},{rng.uniform(-1, 1):.3f}")
    data = tmp_path / "kv.csv"
    data.write_text("\n".join(lines) + "\n")
    spec = {"mechanism": "pckv-ue", "epsilon": 2.0, "domain": "data", "data": str(data), "allocation": "optimized",
            "padding_length": {"private": {"epsilon": 1.0, "user_share": 0.3, "max": 8, "seed": 4}}}
    plan = FAMILY.plan(spec)
    assert plan["verification"]["holds"], plan["verification"]["message"]
    rec = plan["solver"]["padding_length_selection"]["private"]
    assert rec["phase1_users"] == 90 and rec["data"] == str(data)
    bad = copy.deepcopy(plan)
    c = bad["solver"]["padding_length_selection"]["private"]["counts"]
    i = int(np.argmax(c))
    c[i] -= 1
    c[(i + 1) % len(c)] += 1  # same total: only the re-run can tell
    res = FAMILY.verify(bad)
    assert not res.holds and "re-running phase 1" in res.message

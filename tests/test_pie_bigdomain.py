"""Domains as large as the math allows (issue 27, point 2): k-RR up to 2^62 and GLH up to 2^61 - 1 plan,
verify, load and perturb in memory independent of |X|; aggregate and estimate are bounded by --max-memory
(refused before they allocate); ``estimate --items`` equals the full estimate at those items."""
from __future__ import annotations

import json
import random
import tracemalloc

import numpy as np
import pytest
from click.testing import CliRunner

from ldpplan import mechanisms
from ldpplan.mechanisms.pie import HASH_PRIME, HASH_PRIME_LARGE, GeneralizedLocalHashing, hash_prime, hash_values
from ldpplan.planner.cli import main
from ldpplan.planner.errors import SpecError
from ldpplan.planner.families import family_of_plan
from ldpplan.planner.pie.plan import build_plan


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _verified(raw):
    plan = build_plan(raw)
    result = family_of_plan(plan).verify(plan)
    assert result.holds, result.message
    plan["verification"] = {"holds": True, "message": result.message}
    return plan


def _peak_bytes(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


RR_BIG = {"mechanism": "rr", "domain": 10**8, "users": 10**6, "target": {"epsilon": 20.0}}
GLH_BIG = {"mechanism": "glh", "domain": 2**40, "users": 10**6, "target": {"bayes_error": 0.5}}


@pytest.mark.parametrize("raw", [RR_BIG, GLH_BIG], ids=["rr-1e8", "glh-2^40"])
def test_big_domain_plans_verify_load_and_perturb_in_memory_independent_of_the_domain(raw):
    plan = _verified(raw)
    assert plan["domain"]["size"] == raw["domain"]
    mech = mechanisms.load(plan)
    x = np.array([0, 1, raw["domain"] - 1] * 1000, dtype=np.int64)
    reports = {}
    # 3,000 users: a few int64 columns of 3,000 (24 KB each) plus numpy temporaries, nothing of |X|'s size
    peak = _peak_bytes(lambda: reports.update(mech.perturb(x, rng=np.random.default_rng(1)).to_arrays()))
    assert peak < 2_000_000
    assert int(reports["y"].max()) < (raw["domain"] if raw["mechanism"] == "rr" else plan["params"]["g"])
    if raw["mechanism"] == "glh":  # the large Mersenne prime, recorded in the plan and used by the runtime
        assert plan["params"]["hash"]["prime"] == HASH_PRIME_LARGE == mech.hash_prime
        assert int(reports["a"].max()) > HASH_PRIME  # seeds drawn in [1, 2^61 - 1)


def test_big_domain_verification_is_exact_and_refuses_tampering():
    plan = _verified(RR_BIG)
    bad = json.loads(json.dumps(plan))
    bad["guarantee"]["epsilon"] = float(np.nextafter(plan["guarantee"]["epsilon"], 0.0))  # one float step stronger
    assert not family_of_plan(bad).verify(bad).holds
    bad["verification"] = {"holds": True, "message": "tampered"}
    with pytest.raises(mechanisms.PlanError, match="guarantee.epsilon"):
        mechanisms.load(bad)
    glh = _verified(GLH_BIG)
    wrong = json.loads(json.dumps(glh))
    wrong["params"]["hash"]["prime"] = HASH_PRIME  # the small prime cannot hash 2^40 items
    assert "params.hash" in family_of_plan(wrong).verify(wrong).message
    wrong["verification"] = {"holds": True, "message": "tampered"}
    with pytest.raises(mechanisms.PlanError, match="params.hash.prime"):
        mechanisms.load(wrong)


def test_domain_caps_are_per_family():
    with pytest.raises(SpecError, match="domain"):
        build_plan({**RR_BIG, "domain": 2**62 + 1})
    with pytest.raises(SpecError, match="hash prime"):
        build_plan({**GLH_BIG, "domain": 2**61})
    assert build_plan({**RR_BIG, "mechanism": "pie", "domain": 2**62})["mechanism"] == "rr"  # no GLH candidate
    # families that allocate per item keep the 2^24 cap of the envelope
    plan = _verified(RR_BIG)
    plan["mechanism"] = next(name for name, cls in mechanisms.RUNTIMES.items()
                             if cls.PLAN_FIELDS.max_domain == mechanisms.MAX_DOMAIN_SIZE)
    with pytest.raises(mechanisms.PlanError, match="domain.size"):
        mechanisms.read_envelope(plan)


def test_hash_values_with_the_large_prime_match_exact_integers():
    rng = random.Random(3)
    p = HASH_PRIME_LARGE
    a = [rng.randrange(1, p) for _ in range(500)] + [p - 1, p - 1, 1]
    b = [rng.randrange(0, p) for _ in range(500)] + [p - 1, 0, p - 1]
    x = [rng.randrange(0, p) for _ in range(500)] + [p - 1, p - 2, 0]
    for g in (2, 1_000_003, 2**31 + 11, p):
        got = hash_values(np.array(a), np.array(b), np.array(x), g, p)
        assert got.tolist() == [((ai * xi + bi) % p) % g for ai, bi, xi in zip(a, b, x)]
    assert hash_prime(2**31 - 1, 2**31 - 1) == HASH_PRIME and hash_prime(2**31, 4) == HASH_PRIME_LARGE


def test_glh_with_the_large_prime_is_unbiased_on_chosen_items():
    glh = GeneralizedLocalHashing(domain=2**40, epsilon=4.0, g=64)
    rng = np.random.default_rng(5)
    items = np.array([2**39 + 7, 12345, 5])
    x = rng.choice(items, size=40_000, p=[0.5, 0.3, 0.2])
    est = glh.estimate_items([glh.perturb(x, rng=rng)], np.append(items, 999))
    # 5 standard errors of eq. 23 (fixed seed): the hash's exact collision probability keeps it unbiased
    assert np.all(np.abs(est.frequency - [0.5, 0.3, 0.2, 0.0]) < 5 * est.std_error)


@pytest.fixture(scope="module")
def moderate(tmp_path_factory):
    """An RR and a GLH plan on 3,000 items with 20,000 reports each (two report files per plan)."""
    root = tmp_path_factory.mktemp("bigdomain")
    rng = np.random.default_rng(11)
    x = rng.zipf(1.5, size=20_000) % 3000
    out = {}
    for name, raw in {"rr": {"mechanism": "rr", "domain": 3000, "users": 20_000, "target": {"epsilon": 6.0}},
                      "glh": {"mechanism": "glh", "domain": 3000, "users": 20_000, "target": {"epsilon": 4.0}}}.items():
        plan = _verified(raw)
        path = root / f"{name}.json"
        path.write_text(json.dumps(plan))
        files = []
        for part in range(2):
            data = root / f"{name}-{part}.csv"
            data.write_text("item\n" + "\n".join(map(str, x[part::2])) + "\n")
            files.append(root / f"{name}-{part}.parquet")
            assert run("perturb", path, "--input", data, "-o", files[-1], "--seed", part).exit_code == 0
        out[name] = (path, files)
    return out


@pytest.mark.parametrize("name", ["rr", "glh"])
@pytest.mark.parametrize("method", ["empirical", "threshold"])
def test_estimate_items_equals_the_full_estimate_on_those_items(moderate, name, method):
    path, files = moderate[name]
    full = json.loads(run("estimate", path, *files, "--json", "--method", method, "--confidence", "0.95").output)
    items = ["0", "2999", "7", "1"]
    part = run("estimate", path, *files, "--json", "--method", method, "--confidence", "0.95",
               "--items", ",".join(items))
    assert part.exit_code == 0, part.output
    part = json.loads(part.output)
    idx = [int(i) for i in items]
    assert part["labels"] == items
    assert part["n"] == full["n"] == 20_000
    np.testing.assert_allclose(part["frequency"], np.array(full["frequency"])[idx], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(part["std_error"], np.array(full["std_error"])[idx], rtol=1e-12, atol=1e-15)
    for key in ("ci_low", "ci_high"):
        np.testing.assert_allclose(part[key], np.array(full[key])[idx], rtol=1e-9, atol=1e-12)
    assert max(full["frequency"][i] for i in idx) > 0.05  # the test items include a frequent one


def test_estimate_items_from_an_aggregate_file_and_bad_items(moderate, tmp_path):
    path, files = moderate["rr"]
    agg = tmp_path / "agg.json"
    assert run("aggregate", path, *files, "-o", agg).exit_code == 0
    full = json.loads(run("estimate", path, agg, "--json").output)
    part = json.loads(run("estimate", path, agg, "--json", "--items", "5,3").output)
    np.testing.assert_allclose(part["frequency"], np.array(full["frequency"])[[5, 3]], rtol=1e-12)
    bad = run("estimate", path, *files, "--items", "3000")
    assert bad.exit_code == 2 and "--items" in bad.output
    em = run("estimate", path, *files, "--items", "3", "--method", "em")
    assert em.exit_code == 2 and "em" in em.output


def test_aggregate_and_estimate_refuse_before_allocating(moderate, tmp_path):
    path, files = moderate["rr"]
    for command, extra in (("aggregate", ("-o", tmp_path / "agg.json")), ("estimate", ())):
        res = run(command, path, *files, *extra, "--max-memory", "1MiB")
        assert res.exit_code == 2
        line = res.output.strip()
        assert "--max-memory" in line and "needs about" in line and "\n" not in line
        assert not (tmp_path / "agg.json").exists()
    assert run("estimate", path, *files, "--max-memory", "ten").exit_code == 2
    # --items needs no budget of the domain's size
    assert run("estimate", path, *files, "--max-memory", "1MiB", "--items", "0").exit_code == 0


def test_budget_check_allocates_nothing_of_the_domain():
    from ldpplan.planner._memory import check_budget, needed_bytes

    plan = _verified({"mechanism": "rr", "domain": 2**62, "users": 100, "target": {"epsilon": 50.0}})
    assert needed_bytes(plan, "estimate") > 2**62
    peak = _peak_bytes(lambda: pytest.raises(SpecError, check_budget, plan, "estimate", 1 << 30))
    assert peak < 100_000



def test_the_audit_events_of_a_big_glh_plan_use_its_hash_prime():
    """The audit's tight event ``y = h(0) != h(1)`` has probability ``(1 - kappa) mu`` on input 0 only
    with the runtime's prime (2^61 - 1 here): a binomial check, 5 standard deviations, fixed seed."""
    from ldpplan.planner.pie.audit import pairs

    plan = _verified(GLH_BIG)
    mech = mechanisms.load(plan)
    test = pairs(plan)[0].tests[0]
    n = 20_000
    for item, p in ((0, test.p_first), (1, test.p_second)):
        hits = int(test.occurs(mech.perturb(np.full(n, item), rng=np.random.default_rng(7 + item)).to_arrays()).sum())
        assert abs(hits - n * p) <= 5 * np.sqrt(n * p * (1 - p)) + 1, (item, hits, n * p)
    assert test.p_first > 0.4  # mu = 0.45: the event is frequent, so a wrong prime (p ~ 1/g) would fail

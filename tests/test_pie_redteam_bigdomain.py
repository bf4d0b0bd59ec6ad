"""Red team of the PIE big domains (issue 26 follow-up): k-RR with |X| = 10^8, GLH with |X| = 2^40 (prime 2^61 - 1).

Every tampering of the domain size, the hash prime, ``g`` and the hash description must be refused by both
``verify_plan`` (raises or ``holds = False``) and ``ldpplan.mechanisms.load`` (raises); the 61-bit hash is
compared with Python's big integers.
"""
from __future__ import annotations

import copy
import random

import numpy as np
import pytest

import ldpplan
from ldpplan.mechanisms import load
from ldpplan.mechanisms.pie._channel import HASH_PRIME, HASH_PRIME_LARGE, hash_values

P61 = 2**61 - 1


@pytest.fixture(scope="module")
def glh():
    return ldpplan.planner.make_plan({"mechanism": "glh", "domain": 2**40, "users": 10**6, "target": {"epsilon": 2.0}})


@pytest.fixture(scope="module")
def krr():
    return ldpplan.planner.make_plan({"mechanism": "rr", "domain": 10**8, "users": 10**6, "target": {"epsilon": 2.0}})


def _set(plan, path, value):
    out = copy.deepcopy(plan)
    node = out
    for key in path[:-1]:
        node = node[key]
    if value is KeyError:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return out


def _refused_everywhere(plan, label):
    try:
        verdict = ldpplan.planner.verify_plan(plan)
        assert not verdict.holds, f"verify accepted: {label}"
    except ldpplan.planner.LdpplanError:
        pass
    with pytest.raises(Exception) as info:
        load(plan)
    assert not isinstance(info.value, (AssertionError, KeyError, TypeError, AttributeError, IndexError)), \
        (label, repr(info.value))


def test_untampered_plans_load(glh, krr):
    assert glh["params"]["hash"]["prime"] == P61 and ldpplan.planner.verify_plan(glh).holds
    assert ldpplan.planner.verify_plan(krr).holds
    assert load(glh).domain_size == 2**40 and load(krr).domain_size == 10**8


GLH_TAMPERS = [
    (("domain", "size"), 2**40 + 1), (("params", "domain_size"), 2**40 + 1), (("params", "domain_size"), 2**40 - 1),
    (("domain", "size"), 2**61), (("params", "domain_size"), 2**62),
    (("params", "hash", "prime"), HASH_PRIME), (("params", "hash", "prime"), P61 - 2), (("params", "hash", "prime"), P61 + 2),
    (("params", "hash", "prime"), 2**89 - 1), (("params", "hash", "prime"), str(P61)), (("params", "hash", "prime"), float(P61)),
    (("params", "hash", "prime"), KeyError), (("params", "hash", "prime"), True),
    (("params", "g"), 7), (("params", "g"), 9), (("params", "g"), 1), (("params", "g"), 0), (("params", "g"), P61 + 1),
    (("params", "g"), 8.0), (("params", "hash", "family"), "tabulation"), (("params", "hash", "formula"), "(a*x) mod g"),
    (("params", "hash"), KeyError), (("params", "hash"), "carter-wegman"),
]


@pytest.mark.parametrize("path,value", GLH_TAMPERS, ids=[f"{'.'.join(p)}={str(v)[:12]}" for p, v in GLH_TAMPERS])
def test_glh_big_domain_tamperings_refused(glh, path, value):
    _refused_everywhere(_set(glh, path, value), (path, value))


def test_glh_small_domain_refuses_the_large_prime():
    plan = ldpplan.planner.make_plan({"mechanism": "glh", "domain": 1000, "users": 10**4, "target": {"epsilon": 2.0}})
    assert plan["params"]["hash"]["prime"] == HASH_PRIME
    _refused_everywhere(_set(plan, ("params", "hash", "prime"), P61), "small domain, large prime")


KRR_TAMPERS = [
    (("domain", "size"), 10**8 + 1), (("params", "domain_size"), 10**8 - 1), (("params", "domain_size"), 2**63),
    (("domain", "size"), 2**62 + 1), (("params", "mu"), "x"), (("params", "domain_size"), 1e8),
    (("params", "epsilon"), 2.5), (("guarantee", "epsilon"), 1.5), (("domain", "labels"), ["a", "b"]),
]


@pytest.mark.parametrize("path,value", KRR_TAMPERS, ids=[f"{'.'.join(p)}={str(v)[:12]}" for p, v in KRR_TAMPERS])
def test_krr_big_domain_tamperings_refused(krr, path, value):
    _refused_everywhere(_set(krr, path, value), (path, value))


def test_krr_mu_one_float_step_up_refused(krr):
    mu = krr["params"]["mu"]
    _refused_everywhere(_set(krr, ("params", "mu"), float(np.nextafter(mu, 1.0))), "mu + 1 ulp")


def test_hash_61_bit_against_python_integers():
    rng = random.Random(61)
    edges = [0, 1, 2, 2**30 - 1, 2**30, 2**31 - 1, 2**31, 2**60, P61 - 2, P61 - 1]
    a = [rng.randrange(1, P61) for _ in range(4000)] + [1, 2**31, 2**30 + 1, P61 - 1] * 10
    b = [rng.randrange(0, P61) for _ in range(4000)] + [0, P61 - 1, 2**60, 1] * 10
    x = [rng.randrange(0, P61) for _ in range(4000)] + [rng.choice(edges) for _ in range(40)]
    for g in (2, 3, 8, 1000, 2**31 - 1, 2**40 + 7, P61 - 1, P61):
        got = hash_values(np.array(a, dtype=np.int64), np.array(b, dtype=np.int64), np.array(x, dtype=np.int64), g,
                          HASH_PRIME_LARGE)
        want = [((ai * xi + bi) % P61) % g for ai, bi, xi in zip(a, b, x)]
        assert got.dtype == np.int64 and got.tolist() == want, g
    # every pair of edge values, exhaustively
    ea = np.array([e for e in edges if e >= 1], dtype=np.int64)
    grid_a, grid_x, grid_b = np.meshgrid(ea, np.array(edges, dtype=np.int64), np.array(edges, dtype=np.int64))
    got = hash_values(grid_a.ravel(), grid_b.ravel(), grid_x.ravel(), P61, HASH_PRIME_LARGE)
    want = [(int(u) * int(v) + int(w)) % P61 for u, v, w in zip(grid_a.ravel(), grid_x.ravel(), grid_b.ravel())]
    assert got.tolist() == want


def test_hash_31_bit_against_python_integers():
    rng = random.Random(31)
    a = [rng.randrange(1, HASH_PRIME) for _ in range(2000)]
    b = [rng.randrange(0, HASH_PRIME) for _ in range(2000)]
    x = [rng.randrange(0, HASH_PRIME) for _ in range(2000)]
    got = hash_values(np.array(a), np.array(b), np.array(x), 97, HASH_PRIME)
    assert got.tolist() == [((ai * xi + bi) % HASH_PRIME) % 97 for ai, bi, xi in zip(a, b, x)]


def test_glh_runtime_reports_hash_their_inputs_with_the_big_prime(glh):
    mech = load(glh)
    rng = np.random.default_rng(5)
    x = np.array([0, 1, 2**40 - 1, 2**39, 123456789012], dtype=np.int64)
    reports = mech.perturb(x, rng=rng)
    arrays = reports.to_arrays()
    a, b, y = (np.asarray(arrays[c], dtype=object) for c in ("a", "b", "y"))
    assert all(1 <= int(v) < P61 for v in a) and all(0 <= int(v) < P61 for v in b)
    assert all(0 <= int(v) < glh["params"]["g"] for v in y)
    # seeds span the 61-bit range (not the 31-bit one): at least one of 5 above 2^31 except with prob ~ 5 * 2^-30
    assert max(int(v) for v in a) > 2**31
    with pytest.raises(Exception):
        mech.perturb(np.array([2**40], dtype=np.int64), rng=rng)

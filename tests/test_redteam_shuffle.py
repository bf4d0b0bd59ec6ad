"""Red team of issue 26 points 2 and 3 (after wt-gate): ``load()`` and ``verify`` refuse every tampering of
``guarantee.shuffled``; ``shuffle_bound(..., mechanism="rr", domain_size=k)`` is never below the exact
hockey-stick divergence of explicit neighbouring pairs of shuffled k-ary RR (own code: exact multinomial sums
in 60-digit mpmath over the counts, a sufficient statistic of the shuffled histogram).
"""
from __future__ import annotations

import copy
import math

import mpmath
import numpy as np
import pytest

import ldpplan
from ldpplan.mechanisms import load

SHUFFLE = {"n": 10**4, "delta": 1e-6}
SPECS = {
    "rr10": {"mechanism": "rr", "domain": 10, "users": 10**4, "target": {"epsilon": 2.0}},
    "rr2": {"mechanism": "rr", "domain": 2, "users": 10**4, "target": {"epsilon": 1.0}},
    "glh": {"mechanism": "glh", "domain": 1000, "users": 10**4, "target": {"epsilon": 3.0}},
    "lgrr": {"mechanism": "l-grr", "domain": 10, "users": 10**4, "epsilon_perm": 3.0, "epsilon_1": 1.0, "rounds": 5,
             "max_values": 2},
}


class _Plans(dict):
    """Plans built on first use (``name`` with [shuffle], ``name-plain`` without)."""

    def __missing__(self, key):
        name, _, plain = key.partition("-")
        spec = SPECS[name] if plain else {**SPECS[name], "shuffle": SHUFFLE}
        self[key] = ldpplan.planner.make_plan(spec)
        return self[key]


@pytest.fixture(scope="module")
def plans():
    return _Plans()


def _tampers(claim):
    e = claim["epsilon"]
    return {
        "epsilon 0": dict(claim, epsilon=0.0), "epsilon -1": dict(claim, epsilon=-1.0),
        "epsilon / 2": dict(claim, epsilon=e / 2), "n x10": dict(claim, n=claim["n"] * 10),
        "n 1e30": dict(claim, n=10**30), "n float": dict(claim, n=float(claim["n"])), "n true": dict(claim, n=True),
        "delta / 10": dict(claim, delta=claim["delta"] / 10), "delta 0": dict(claim, delta=0.0),
        "epsilon NaN": dict(claim, epsilon=float("nan")), "epsilon inf": dict(claim, epsilon=float("inf")),
        "epsilon string": dict(claim, epsilon=str(e)), "extra key": dict(claim, note="x"),
        "no epsilon": {k: v for k, v in claim.items() if k != "epsilon"},
        "epsilon_lower above epsilon": dict(claim, epsilon_lower=e * 2), "yes": "yes", "null": None, "list": [claim],
    }


@pytest.mark.parametrize("name", ["rr10", pytest.param("rr2", marks=pytest.mark.slow), "glh",
                                  pytest.param("lgrr", marks=pytest.mark.slow)])
def test_shuffled_tamperings_refused_by_load_and_verify(plans, name):
    plan = plans[name]
    assert load(plan) is not None and ldpplan.planner.verify_plan(plan).holds
    accepted = []
    for key in ("shuffled", "shuffled_lifetime"):
        if key not in plan["guarantee"]:
            continue
        for label, value in _tampers(plan["guarantee"][key]).items():
            bad = copy.deepcopy(plan)
            bad["guarantee"][key] = value
            try:
                load(bad)
                accepted.append(f"load: {key} {label}")
            except (AssertionError, KeyError, TypeError, AttributeError, IndexError) as exc:
                accepted.append(f"load crashed: {key} {label}: {exc!r}")
            except Exception:  # noqa: BLE001 -- any refusal of ldpplan's
                pass
            try:
                if ldpplan.planner.verify_plan(bad).holds:
                    accepted.append(f"verify: {key} {label}")
            except ldpplan.planner.LdpplanError:
                pass
    assert not accepted, accepted


@pytest.mark.xfail(strict=True, reason="finding (minor, not a privacy break): load() accepts guarantee.shuffled.epsilon "
                   "one float step (up to ~0.04-0.07%) below the plan's claim, which verify refuses; load accepts any "
                   "claim it can confirm with numpy, so the accepted claim is still a sound bound (see the next test)")
@pytest.mark.parametrize("name", ["rr10", "glh"])
def test_epsilon_one_float_step_down_refused_by_load(plans, name):
    bad = copy.deepcopy(plans[name])
    bad["guarantee"]["shuffled"]["epsilon"] = float(np.nextafter(bad["guarantee"]["shuffled"]["epsilon"], 0.0))
    assert not ldpplan.planner.verify_plan(bad).holds
    with pytest.raises(Exception):
        load(bad)


def _binary_pair_delta(mu, n, eps):
    """Exact divergence (30 digits) of shuffled binary RR, D = (0, 0..0) / D' = (1, 0..0), over the count of ones."""
    mu = mpmath.mpf(mu)
    q = 1 - mu
    logq, logmu = mpmath.log(q), mpmath.log(mu)
    b = [mpmath.e ** (mpmath.loggamma(n) - mpmath.loggamma(c + 1) - mpmath.loggamma(n - c) + c * logq
                      + (n - 1 - c) * logmu) for c in range(n)] + [mpmath.mpf(0)]
    d = [q * (b[c - 1] if c else 0) + (1 - q) * b[c] for c in range(n + 1)]
    d2 = [mu * (b[c - 1] if c else 0) + (1 - mu) * b[c] for c in range(n + 1)]
    t = mpmath.e ** mpmath.mpf(eps)
    return max(sum(max(0, u - t * v) for u, v in zip(d, d2)), sum(max(0, v - t * u) for u, v in zip(d, d2)))


@pytest.mark.slow
def test_smallest_claim_load_accepts_is_sound_for_binary_rr(plans):
    """Bisect the smallest guarantee.shuffled.epsilon that load() accepts (rr, k = 2, n = 10^4, delta = 1e-6); the
    exact divergence of the explicit pair at that epsilon is at most delta."""
    mpmath.mp.dps = 30
    plan = plans["rr2"]

    def loads(e):
        bad = copy.deepcopy(plan)
        bad["guarantee"]["shuffled"]["epsilon"] = e
        try:
            load(bad)
            return True
        except Exception:  # noqa: BLE001
            return False

    lo, hi = 0.0, plan["guarantee"]["shuffled"]["epsilon"]
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if loads(mid) else (mid, hi)
    assert _binary_pair_delta(plan["params"]["mu"], 10**4, hi) <= 1e-6
    # and the plan's epsilon_lower is what that pair needs (to 1e-4 relative)
    lower = plan["guarantee"]["shuffled"]["epsilon_lower"]
    assert _binary_pair_delta(plan["params"]["mu"], 10**4, lower * (1 - 1e-4)) > 1e-6


@pytest.mark.parametrize("name", ["rr10", "glh", "lgrr"])
def test_claim_added_to_a_plan_without_shuffle_refused(plans, name):
    bad = copy.deepcopy(plans[name + "-plain"])
    bad["guarantee"]["shuffled"] = copy.deepcopy(plans[name]["guarantee"]["shuffled"])
    with pytest.raises(Exception) as info:
        load(bad)
    assert not isinstance(info.value, (AssertionError, KeyError, TypeError, AttributeError))
    try:
        assert not ldpplan.planner.verify_plan(bad).holds
    except ldpplan.planner.LdpplanError:
        pass


# ----------------------------------------------------------------------------- shuffle_bound vs an exact pair
def _pair_probs(epsilon0, k, n, others):
    """``[(P(h|D), P(h|D'))]`` of shuffled k-RR over the histogram statistic, ``D = (0, z..z)``, ``D' = (1, z..z)``,
    ``z = others`` (0, 1 or 2) for all n - 1 others; for k = 2, ``others = ("mix", m)``: m others hold 0, the
    rest 1.

    With every other user at ``z`` the histogram's probability ratio depends on it only through the counts of the
    symbols 0, 1, z and the rest (exchangeable), so the sum runs over compositions of ``n`` with exact
    multinomial weights (60 digits).
    """
    e = mpmath.e ** mpmath.mpf(epsilon0)
    p, q = e / (e + k - 1), 1 / (e + k - 1)
    if isinstance(others, tuple):  # k = 2: the count of ones; others = m zeros and n - 1 - m ones
        m = others[1]
        ones = [mpmath.mpf(1)]
        for prob_one, count in ((q, m), (p, n - 1 - m)):
            for _ in range(count):
                ones = [(ones[c] if c < len(ones) else 0) * (1 - prob_one) + (ones[c - 1] * prob_one if c else 0)
                        for c in range(len(ones) + 1)]
        ones += [mpmath.mpf(0)]
        return [(q * (ones[c - 1] if c else 0) + (1 - q) * ones[c], p * (ones[c - 1] if c else 0) + (1 - p) * ones[c])
                for c in range(n + 1)]
    cats = [0, 1] + ([2] if others == 2 else []) + ["rest"]
    size = {0: 1, 1: 1, 2: 1, "rest": k - len(cats) + 1}

    def prob(y_cat, source):  # one report of a user holding `source` falls in category y_cat
        return size[y_cat] * (p if y_cat == source else q)

    m = len(cats)
    base = [prob(c, others) for c in cats]  # each of the n - 1 other users
    lead = {x: [prob(c, x) for c in cats] for x in (0, 1)}
    logfact = [mpmath.log(mpmath.factorial(i)) for i in range(n + 1)]
    logbase = [mpmath.log(b) if b > 0 else None for b in base]

    def comps(rem, parts):
        if parts == 1:
            yield (rem,)
            return
        for i in range(rem + 1):
            for rest in comps(rem - i, parts - 1):
                yield (i,) + rest

    out = []
    for h in comps(n, m):
        pd = []
        for x in (0, 1):  # P(h | D) = sum_c lead_c Mult(h - e_c; n - 1, base)
            total = mpmath.mpf(0)
            for c in range(m):
                g = list(h)
                g[c] -= 1
                if g[c] < 0 or any(g[j] and logbase[j] is None for j in range(m)):
                    continue
                lw = logfact[n - 1] - sum(logfact[v] for v in g) + sum(g[j] * logbase[j] for j in range(m) if g[j])
                total += lead[x][c] * mpmath.e ** lw
            pd.append(total)
        out.append(tuple(pd))
    return out


def _divergence(probs, eps):
    """Hockey-stick divergence at ``eps``, the larger of both directions."""
    t = mpmath.e ** mpmath.mpf(eps)
    return max(sum(max(0, a - t * b) for a, b in probs), sum(max(0, b - t * a) for a, b in probs))


def _pair_epsilon(probs, delta, top):
    """Smallest eps (to ~1e-10) with the pair's divergence <= delta (bisection; the divergence falls in eps)."""
    lo, hi = 0.0, float(top)
    if _divergence(probs, lo) <= delta:
        return 0.0
    for _ in range(36):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if _divergence(probs, mid) <= delta else (mid, hi)
    return lo


CASES = [(3.0, 10, 30, 1e-2), (2.0, 3, 30, 1e-3), (4.0, 4, 24, 1e-2), (1.0, 2, 30, 1e-3), (6.0, 10, 20, 5e-2)]


@pytest.mark.slow
@pytest.mark.parametrize("epsilon0,k,n,delta", CASES)
def test_shuffle_bound_krr_at_least_exact_pairs(epsilon0, k, n, delta):
    mpmath.mp.dps = 60
    bound = ldpplan.planner.shuffle_bound(epsilon0, n, delta, mechanism="rr", domain_size=k)
    others = (0, 1, 2) if k > 2 else [("mix", m) for m in range(n)]
    probs = {z: _pair_probs(epsilon0, k, n, z) for z in others}
    pairs = {z: _pair_epsilon(pr, delta, epsilon0) for z, pr in probs.items()}
    worst = max(pairs.values())
    assert bound.epsilon >= worst, (bound, worst)
    # at the claimed epsilon, each explicit pair's divergence is at most delta (exactly, 60 digits)
    for pr in probs.values():
        assert _divergence(pr, bound.epsilon) <= delta
    # the lower bound is met by one of these explicit pairs (k > 2: (x, z..z) / (x', z..z), as its source says)
    assert bound.epsilon_lower <= worst + 1e-9, (bound, pairs)


def test_shuffle_bound_krr_small_case_fast():
    mpmath.mp.dps = 40
    bound = ldpplan.planner.shuffle_bound(3.0, 12, 1e-2, mechanism="rr", domain_size=5)
    for z in (0, 1, 2):
        assert _divergence(_pair_probs(3.0, 5, 12, z), bound.epsilon) <= 1e-2
    binary = ldpplan.planner.shuffle_bound(3.0, 12, 1e-2, mechanism="rr", domain_size=2)
    assert math.isfinite(binary.epsilon) and binary.epsilon != bound.epsilon  # domain_size is not ignored


def test_shuffle_bound_refuses_contradicting_arguments():
    for kwargs in ({"mechanism": "rr", "domain_size": 1}, {"mechanism": "rr", "domain_size": 10, "hash_range": 4},
                   {"mechanism": "nope", "domain_size": 10}, {"mechanism": "rr", "domain_size": 2.5}):
        with pytest.raises(Exception) as info:
            ldpplan.planner.shuffle_bound(2.0, 1000, 1e-6, **kwargs)
        assert not isinstance(info.value, (AssertionError, KeyError, AttributeError)), (kwargs, info.value)

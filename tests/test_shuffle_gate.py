"""``load()`` confirms ``guarantee.shuffled`` (issue 26, "the gate checks every claim").

Every family's example with a ``[shuffle]`` block added plans, verifies and loads; each of the
tamperings of the red team's list (and more) is refused by ``load()`` in one line: epsilon set
to 0 / -1 / below the bound, ``n x 10``, ``n = 10^30``, ``delta / 10``, a claim added to a plan
without ``[shuffle]``, ``shuffled = "yes"``, missing / extra fields, NaN / inf, wrong types,
``epsilon_lower`` above ``epsilon``, the source changed. The runtime's numpy bounds are
cross-checked against the planner's scipy ones.
"""
from __future__ import annotations

import copy
import math

import pytest

import ldpplan
from ldpplan.mechanisms import _shuffle_gate as gate
from ldpplan.planner import example_spec, make_plan, verify_plan
from ldpplan.planner.families import all_examples
from ldpplan.solvers import _shuffle_curves as curves
from ldpplan.solvers import shuffle as solver
from test_plan_gate import refused_by_load as _refused  # load()'s one-line PlanError

BLOCK = {"n": 20_000, "delta": 1e-7}
SHUFFLABLE = sorted(name for name, (family, _) in all_examples().items() if family.name != "uldp")
FAST = ["pie-rr", "hadamard-synthetic"]




def _set(path, value):
    def edit(plan):
        node = plan
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value(node[path[-1]]) if callable(value) else value
    return edit


def _drop(path):
    def edit(plan):
        node = plan
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]
    return edit


OTHER_SOURCES = [solver.SOURCE_FMT_CLOSED, solver.SOURCE_FMT_NUMERICAL, solver.SOURCE_BLANKET, solver.SOURCE_EXACT_RR]


def tamperings(claim="shuffled"):
    """Name -> edit of the central claim ``guarantee.<claim>`` (the red team's kinds and more)."""
    S = ("guarantee", claim)
    return {
        "epsilon = 0": _set(S + ("epsilon",), 0.0),
        "epsilon = -1": _set(S + ("epsilon",), -1.0),
        "epsilon x 0.5": _set(S + ("epsilon",), lambda v: v * 0.5),
        "epsilon x 0.99": _set(S + ("epsilon",), lambda v: v * 0.99),
        "epsilon_lower = 0, epsilon x 0.9": lambda p: (_set(S + ("epsilon_lower",), 0.0)(p),
                                                       _set(S + ("epsilon",), lambda v: v * 0.9)(p)),
        "n x 10": _set(S + ("n",), lambda v: v * 10),
        "n = 10^30": _set(S + ("n",), 10**30),
        "n = 1": _set(S + ("n",), 1),
        "delta / 10": _set(S + ("delta",), lambda v: v / 10),
        "delta = 0": _set(S + ("delta",), 0.0),
        "delta = 1": _set(S + ("delta",), 1.0),
        "spec and claim: n / 10": lambda p: (_set(S + ("n",), lambda v: v // 10)(p),
                                             _set(("spec", "shuffle", "n"), lambda v: v // 10)(p)),
        "spec and claim: delta / 10": lambda p: (_set(S + ("delta",), lambda v: v / 10)(p),
                                                 _set(("spec", "shuffle", "delta"), lambda v: v / 10)(p)),
        "spec block dropped": _drop(("spec", "shuffle")),
        "claim dropped": _drop(S),
        "shuffled = 'yes'": _set(S, "yes"),
        "shuffled = true": _set(S, True),
        "shuffled = []": _set(S, []),
        "shuffled = null": _set(S, None),
        "extra field": _set(S + ("epsilon_central",), 0.0),
        "epsilon_lower > epsilon": _set(S + ("epsilon_lower",), lambda v: 1e9),
        "epsilon_lower < 0": _set(S + ("epsilon_lower",), -0.5),
        "epsilon NaN": _set(S + ("epsilon",), math.nan),
        "epsilon inf": _set(S + ("epsilon",), math.inf),
        "delta NaN": _set(S + ("delta",), math.nan),
        "n inf": _set(S + ("n",), math.inf),
        "n as string": _set(S + ("n",), lambda v: str(v)),
        "n as float": _set(S + ("n",), lambda v: float(v)),
        "n as bool": _set(S + ("n",), True),
        "epsilon as string": _set(S + ("epsilon",), lambda v: str(v)),
        "epsilon as bool": _set(S + ("epsilon",), False),
        "delta as string": _set(S + ("delta",), lambda v: str(v)),
        "delta null": _set(S + ("delta",), None),
        "source as number": _set(S + ("source",), 5),
        "source made up": _set(S + ("source",), "trust me; lower: nothing"),
        "source without lower part": _set(S + ("source",), lambda v: v.partition("; lower: ")[0]),
        "source empty": _set(S + ("source",), ""),
        **{f"missing {key}": _drop(S + (key,)) for key in gate.SHUFFLED_FIELDS},
        **{f"source -> {other[:30]}": _set(S + ("source",), lambda v, other=other: f"{other}; lower: x")
           for other in OTHER_SOURCES},
    }


TAMPERINGS = tamperings()


def _shuffled_plan(name, block=BLOCK):
    spec = copy.deepcopy(dict(example_spec(name)))
    spec["shuffle"] = dict(block)
    return make_plan(spec)


def _check_every_tampering(name):
    plan = _shuffled_plan(name)
    assert verify_plan(plan).holds
    assert ldpplan.load(plan).mechanism == plan["mechanism"]  # the honest plan loads
    refused = 0
    claims = [key for key in ("shuffled", "shuffled_lifetime") if key in plan["guarantee"]]
    for claim in claims:
        refused += _refuse_each(plan, claim)
    # a claim added to a plan with no [shuffle] block
    plain = make_plan(dict(example_spec(name)))
    for claim in claims:
        added = copy.deepcopy(plain)
        added["guarantee"][claim] = copy.deepcopy(plan["guarantee"][claim])
        assert "no [shuffle] block" in _refused(added)
    return refused // len(claims) + 1


def _refuse_each(plan, claim):
    honest_source = plan["guarantee"][claim]["source"]
    refused = 0
    for kind, edit in tamperings(claim).items():
        tampered = copy.deepcopy(plan)
        edit(tampered)
        if kind.startswith("source -> ") and tampered["guarantee"][claim]["source"].split("; lower:")[0] \
                == honest_source.split("; lower:")[0]:
            continue  # the honest source itself
        if kind.startswith("spec and claim") and not _amplified(plan, claim):
            continue  # no amplification claimed: epsilon0 holds for any n and delta (a true claim)
        message = _refused(tampered)
        assert "shuffle" in message or "guarantee" in message or "must be a finite number" in message, (kind, message)
        refused += 1
    return refused


def _amplified(plan, claim):
    epsilon0 = plan["guarantee"]["epsilon_lifetime" if claim == "shuffled_lifetime" else "epsilon"]
    return plan["guarantee"][claim]["epsilon"] < epsilon0


@pytest.mark.parametrize("name", FAST)
def test_every_tampering_of_the_central_claim_is_refused_by_load(name):
    assert _check_every_tampering(name) >= len(TAMPERINGS) - 3


@pytest.mark.slow
@pytest.mark.parametrize("name", [name for name in SHUFFLABLE if name not in FAST])
def test_every_tampering_refused_in_every_family(name):
    assert _check_every_tampering(name) >= len(TAMPERINGS) - 3


def test_sources_are_the_solvers():
    """The runtime names the bounds exactly as the planner does (a claim's source is matched verbatim)."""
    assert gate.SOURCE_FMT_CLOSED == solver.SOURCE_FMT_CLOSED
    assert gate.SOURCE_FMT_NUMERICAL == solver.SOURCE_FMT_NUMERICAL
    assert gate.SOURCE_BLANKET == solver.SOURCE_BLANKET


@pytest.mark.parametrize("epsilon,epsilon0,n", [(0.5, 2.0, 10**4), (0.3, 1.0, 10**5), (1.2, 4.0, 10**5)])
def test_runtime_clone_divergence_matches_the_solver(epsilon, epsilon0, n):
    """FMT21 Thm 3.2 in numpy (direct pmf sums) against scipy's tail formulas: same value, never below."""
    mine, theirs = gate.clone_delta(epsilon, epsilon0, n), curves.clone_delta_upper(epsilon, epsilon0, n)
    assert mine == pytest.approx(theirs, rel=1e-7)


@pytest.mark.parametrize("epsilon,epsilon0,k,n", [(1.0, 6.0, 10, 10**4), (1.4, 6.0, 10, 10**4),
                                                  (0.5, 3.0, 2, 10**4), (2.0, 8.0, 20, 10**5)])
def test_runtime_blanket_matches_the_solver(epsilon, epsilon0, k, n):
    mine = gate.blanket_delta(epsilon, epsilon0, n, {"domain_size": k})
    theirs = curves.blanket_krr_delta_upper(epsilon, epsilon0, k, n)
    assert mine == pytest.approx(theirs, rel=1e-4)
    assert mine >= theirs * (1 - 1e-8)  # never optimistic against the planner's evaluation


def test_binary_rr_plans_claim_what_the_runtime_confirms():
    """k = 2: the exact curve (solver) is tighter than any bound the runtime implements; the plan
    states the runtime's blanket bound, which load() confirms, and which is at least the curve."""
    spec = {"mechanism": "rr", "domain": 2, "users": 10**4, "target": {"epsilon": 2.0},
            "shuffle": {"n": 10**4, "delta": 1e-6}}
    plan = make_plan(spec)
    shuffled = plan["guarantee"]["shuffled"]
    assert shuffled["source"].startswith(solver.SOURCE_BLANKET)
    exact = solver.shuffle_bound(plan["guarantee"]["epsilon"], 10**4, 1e-6, mechanism="rr")
    assert exact.epsilon_lower <= shuffled["epsilon"]
    assert ldpplan.load(plan).mechanism == "rr"
    claim = dict(shuffled, epsilon=exact.epsilon, source=exact.source)
    assert "cannot confirm" in gate.check_shuffled_claim(claim, plan["guarantee"]["epsilon"],
                                                         {"kind": "krr", "domain_size": 2})


def test_closed_form_claim_one_step_below_is_refused():
    """FMT21 Thm 3.1: the runtime's closed form (rounded up) accepts the planner's and refuses a smaller claim."""
    epsilon0, n, delta = 1.0, 10**6, 1e-8
    closed = solver.fmt21_closed_form(epsilon0, n, delta)
    claim = {"n": n, "delta": delta, "epsilon": closed, "epsilon_lower": 0.0,
             "source": f"{solver.SOURCE_FMT_CLOSED}; lower: none"}
    assert gate.check_shuffled_claim(claim, epsilon0) is None
    below = dict(claim, epsilon=math.nextafter(closed / (1 + 1e-12), 0.0) * (1 - 1e-12))
    assert "closed form" in gate.check_shuffled_claim(below, epsilon0)
    # epsilon0 itself always holds (the differing report is epsilon0-LDP)
    assert gate.check_shuffled_claim(dict(claim, epsilon=epsilon0, source="x; lower: y"), epsilon0) is not None
    assert gate.check_shuffled_claim(dict(claim, epsilon=epsilon0), epsilon0) is None


# --------------------------------------------------------------------------- one vocabulary (issue 26, point 3)
def _pair_epsilon(epsilon0: float, n: int, delta: float, k: int) -> float:
    """Independent lower bound of the central epsilon of k-RR: one explicit neighbouring pair.

    ``D = (x, z, .., z)`` / ``D' = (x', z, .., z)`` (k >= 3; k = 2: ``(x, x', .., x')`` / ``(x', .., x')``),
    the adversary seeing the counts of ``x`` and ``x'`` (a post-processing of the shuffled
    histogram). Exact trinomial / binomial pmfs by ``lgamma`` on a window (the truncated tail
    only drops positive terms: still a lower bound); the largest epsilon at which the pair's
    hockey-stick divergence, in the worse direction, exceeds ``delta`` (bisection, lower end).
    """
    import numpy as np

    e0 = math.exp(epsilon0)
    p, q = e0 / (e0 + k - 1), 1.0 / (e0 + k - 1)
    m = n - 1
    width = int(m * q + 40 * math.sqrt(m * q) + 40)
    a = np.arange(width + 1, dtype=float)
    lg = np.vectorize(math.lgamma)
    if k == 2:
        base = np.exp(lg(m + 1) - lg(a + 1) - lg(m - a + 1) + a * math.log(q) + (m - a) * math.log1p(-q))
        shifted = np.r_[0.0, base[:-1]]
        forward, backward = p * shifted + q * base, q * shifted + p * base
    else:
        A, B = np.meshgrid(a, a, indexing="ij")
        rest = m - A - B
        trinomial = np.where(rest >= 0, np.exp(lg(m + 1) - lg(A + 1) - lg(B + 1) - lg(np.maximum(rest, 0) + 1)
                                               + (A + B) * math.log(q) + np.maximum(rest, 0) * math.log1p(-2 * q)), 0.0)
        down_a = np.zeros_like(trinomial)
        down_a[1:, :] = trinomial[:-1, :]  # T(i - 1, j): the differing user reported x
        down_b = np.zeros_like(trinomial)
        down_b[:, 1:] = trinomial[:, :-1]  # T(i, j - 1): it reported x'
        other = 1.0 - p - q
        forward = p * down_a + q * down_b + other * trinomial
        backward = q * down_a + p * down_b + other * trinomial

    def divergence(epsilon):
        e = math.exp(epsilon)
        return max(float(np.maximum(forward - e * backward, 0).sum()), float(np.maximum(backward - e * forward, 0).sum()))

    lo, hi = 0.0, epsilon0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if divergence(mid) > delta else (lo, mid)
    return lo


@pytest.mark.parametrize("k", [2, 3, 10])
def test_rr_with_domain_size_is_k_ary_rr_never_below_an_explicit_pair(k):
    """``planner.shuffle_bound(..., mechanism="rr", domain_size=k)`` is k-ary RR (the plan's name):
    never below the exact divergence of an explicit k-ary pair (issue 26: 1.3117 vs 1.4396 at k = 10)."""
    from ldpplan.planner import shuffle_bound

    epsilon0, n, delta = 6.0, 10**4, 1e-6
    pair = _pair_epsilon(epsilon0, n, delta, k)
    bound = shuffle_bound(epsilon0, n, delta, mechanism="rr", domain_size=k)
    assert bound.epsilon >= pair
    if k == 10:
        assert pair == pytest.approx(1.4396, abs=2e-3)  # the figure, recomputed here
        assert solver.shuffle_bound(epsilon0, n, delta, mechanism="rr").epsilon < pair  # binary RR: too small


@pytest.mark.parametrize("kwargs,field", [
    ({"mechanism": "rr"}, "domain_size"),
    ({"mechanism": "krr", "domain_size": 10}, "mechanism"),
    ({"domain_size": 10}, "domain_size"),
    ({"mechanism": "rr", "domain_size": 10, "hash_range": 4}, "hash_range"),
    ({"mechanism": "glh", "hash_range": 4}, "collision"),
    ({"mechanism": "glh", "hash_range": 4, "collision": 0.1, "domain_size": 10}, "domain_size"),
    ({"mechanism": "rr", "domain_size": 1}, "domain_size"),
])
def test_ignored_or_contradicting_arguments_are_refused(kwargs, field):
    from ldpplan.planner import local_epsilon_for, shuffle_bound

    with pytest.raises(ValueError) as info:
        shuffle_bound(2.0, 1000, 1e-6, **kwargs)
    assert str(info.value).startswith(f"{field}:") and "\n" not in str(info.value)
    if "hash_range" not in kwargs and "collision" not in kwargs:
        with pytest.raises(ValueError, match=f"^{field}:"):
            local_epsilon_for(1.0, 1e-6, 1000, **kwargs)


# --------------------------------------------------------------------------- longitudinal (issue 26, point 7)
@pytest.mark.parametrize("name", ["longitudinal-daily", "longitudinal-rappor"])
def test_longitudinal_plans_state_one_round_and_all_rounds(name):
    """``guarantee.shuffled`` covers one round (epsilon0 = one report's epsilon); ``shuffled_lifetime``
    all rounds (epsilon0 = epsilon_lifetime, the whole history's local bound): recomputed by verify
    and load, never below the one-round claim, never above epsilon_lifetime."""
    from ldpplan.planner.shuffle import shuffle_bound

    plan = _shuffled_plan(name, {"n": 10**4, "delta": 1e-6})
    guarantee = plan["guarantee"]
    one, every = guarantee["shuffled"], guarantee["shuffled_lifetime"]
    # one round: the round channel's own blanket (k-RR / unary encoding, issue 26), at most the generic bound
    assert one["epsilon"] <= shuffle_bound(guarantee["epsilon"], 10**4, 1e-6).epsilon * (1 + 1e-6)
    assert every["epsilon"] >= shuffle_bound(guarantee["epsilon_lifetime"], 10**4, 1e-6).epsilon * (1 - 1e-12)
    assert one["epsilon"] < every["epsilon"] <= guarantee["epsilon_lifetime"]
    assert (every["n"], every["delta"]) == (10**4, 1e-6)
    assert verify_plan(plan).holds and ldpplan.load(plan).mechanism == plan["mechanism"]
    tampered = copy.deepcopy(plan)
    tampered["guarantee"]["shuffled_lifetime"] = copy.deepcopy(one)  # the one-round claim for all rounds
    assert not verify_plan(tampered).holds
    assert _refused(tampered).startswith("guarantee.shuffled_lifetime")


@pytest.mark.parametrize("n,p", [(10, 0.3), (1000, 0.5), (10**7, 0.5), (10**9, 0.37), (50, 0.01)])
def test_runtime_binomial_pmf_is_exact_to_1e_13(n, p):
    """The runtime's numpy pmf (Loader's saddle point) against exact big-float binomials (mpmath)."""
    import mpmath
    import numpy as np

    from ldpplan.mechanisms._binomial import binom_pmf

    mpmath.mp.dps = 40
    x = np.unique(np.clip(np.round(n * p + np.linspace(-6, 6, 9) * math.sqrt(n * p * (1 - p))), 0, n))
    exact = np.array([float(mpmath.binomial(n, int(k)) * mpmath.mpf(p) ** int(k) * (1 - mpmath.mpf(p)) ** (n - int(k)))
                      for k in x])
    assert np.max(np.abs(binom_pmf(x, n, p) / exact - 1)) < 1e-11


@pytest.mark.parametrize("m,slope,offset", [(40, 1.0, 25.3), (1001, 2.5, 1300.0), (10**6, 1.0, 500_800.0)])
def test_runtime_positive_part_is_an_upper_bound(m, slope, offset):
    """``E[(slope X - offset)_+]``, ``X ~ Bin(m, 1/2)``: the runtime's bound against an exact mpmath sum
    (40 digits, terms by the exact pmf recursion until negligible): never below, within 1e-6 relative."""
    import mpmath

    from ldpplan.mechanisms._binomial import positive_part_half

    mpmath.mp.dps = 40
    x = int(math.floor(offset / slope)) + 1
    pmf = mpmath.binomial(m, x) / mpmath.mpf(2) ** m
    exact = mpmath.mpf(0)
    while x <= m:
        term = pmf * (slope * x - offset)
        exact += term
        if term < exact * mpmath.mpf(10) ** -30:
            break
        pmf, x = pmf * (m - x) / (x + 1), x + 1
    mine = float(positive_part_half(float(m), slope, offset)[0])
    assert float(exact) <= mine <= float(exact) * (1 + 1e-6)


@pytest.mark.parametrize("epsilon0,n,randomizer", [(2.0, 1000, {"kind": "generic"}), (12.0, 100, {"kind": "generic"}),
                                                   (3.0, 5000, {"kind": "krr", "domain_size": 2}),
                                                   (5.0, 2000, {"kind": "krr", "domain_size": 10})])
def test_the_runtimes_own_bound_is_confirmed_by_the_runtime(epsilon0, n, randomizer):
    """What the planner falls back to (``upper_epsilon``) passes the gate, also where no bound
    amplifies (epsilon0 = 12 at n = 100: the claim is epsilon0 itself)."""
    epsilon, source = gate.upper_epsilon(epsilon0, n, 1e-6, randomizer)
    claim = {"n": n, "delta": 1e-6, "epsilon": epsilon, "epsilon_lower": 0.0, "source": f"{source}; lower: none"}
    assert 0 < epsilon <= epsilon0
    assert gate.check_shuffled_claim(claim, epsilon0, randomizer) is None
    assert gate.check_shuffled_claim(dict(claim, epsilon=epsilon * 0.98), epsilon0, randomizer) is not None

"""One copy of each formula (issue 28, point 5): shared math lives in the numpy-only runtime.

The solvers and the planner import the runtime's formulas (the Hadamard channel, the PIE exact
guarantee, the IDUE share split, PCKV's corrected estimate, the Chernoff bound) instead of keeping
copies; the independent second path is exact arithmetic (integers, ``Fraction``), checked here
against the float path. The first test keeps copies from coming back: no function body stands in
two layers.
"""
from __future__ import annotations

import ast
import collections
import dataclasses
import hashlib
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from ldpplan.mechanisms import _binomial
from ldpplan.mechanisms.hadamard import _channel
from ldpplan.mechanisms.idue._promises import items_by_shares, shares_to_counts
from ldpplan.mechanisms.pckv._core import corrected_mean, estimate_from_counts
from ldpplan.mechanisms.pie import keep_probability as pie_keep_probability, pie_alpha_bits, realized_epsilon
from ldpplan.planner.pie._exact import exact_guarantee
from ldpplan.solvers import SolveResult, SolverError
from ldpplan.solvers import hadamard as hr
from ldpplan.solvers._pckv_errors import _corrected_mean

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("planner", "solvers", "mechanisms")
#: functions smaller than this (AST nodes of the body) are one-liners, not formulas
MIN_NODES = 40


class _Anonymous(ast.NodeTransformer):
    """Renames every identifier and argument: a copy with other local names is still a copy."""

    def visit_Name(self, node):
        return ast.copy_location(ast.Name(id="_", ctx=node.ctx), node)

    def visit_arg(self, node):
        node.arg, node.annotation = "_", None
        return node


def _bodies():
    """``body hash -> [(layer, place)]`` for every function and method of the three layers."""
    found = collections.defaultdict(list)
    for layer in LAYERS:
        for path in sorted((ROOT / layer).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
                module = _Anonymous().visit(ast.Module(body=body, type_ignores=[]))
                if sum(1 for _ in ast.walk(module)) < MIN_NODES:
                    continue
                digest = hashlib.sha256(ast.dump(module).encode()).hexdigest()
                found[digest].append((layer, f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"))
    return found


@pytest.mark.slow  # parses every module of the three layers (2-7 s on a shared machine)
def test_no_function_body_stands_in_two_layers():
    copies = [places for places in _bodies().values() if len({layer for layer, _ in places}) > 1]
    assert not copies, "\n".join(" = ".join(place for _, place in places) for places in copies)


def test_the_body_finder_finds_a_copy(tmp_path):
    """The detector itself: two layers holding one body (other names) are found."""
    source = "def f(a, b):\n    c = a * a + b\n    d = [c + i for i in range(10) if i % 2]\n    return sum(d) / (a - b)\n"
    trees = [ast.parse(source), ast.parse(source.replace("a", "x").replace("f(", "g("))]
    digests = set()
    for tree in trees:
        fn = tree.body[0]
        digests.add(hashlib.sha256(ast.dump(_Anonymous().visit(ast.Module(body=fn.body, type_ignores=[])))
                                   .encode()).hexdigest())
    assert len(digests) == 1


# ------------------------------------------------------------------ Hadamard: the solvers' shape
@pytest.mark.parametrize("name", ["block_size", "keep_probability", "exact_epsilon", "in_set", "fwht", "supports",
                                  "channel_matrix", "GRID_STEPS"])
def test_the_solver_reexports_the_runtime_channel(name):
    assert getattr(hr, name) is getattr(_channel, name)


@pytest.mark.parametrize("epsilon, k, blocks", [(1.0, 10, None), (4.0, 200, None), (4.0, 200, 8), (8.0, 5, 2),
                                                (0.5, 2, 1)])
def test_solve_hr_is_a_frozen_solve_result(epsilon, k, blocks):
    """``blocks = None``: the default, the smallest worst-case error."""
    given = () if blocks is None else (blocks,)
    res = hr.solve_hr(epsilon, k, *given)
    numbers = res.extra["numbers"]
    assert isinstance(res, SolveResult) and res.status == "closed_form"
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.objective = 0.0  # type: ignore[misc]
    assert res.objective == numbers.worst_l2(1) and res.certificate.gap == 0.0
    assert dict(res.parameters) == {"epsilon": epsilon, "domain_size": k, "blocks": numbers.blocks,
                                    "block_size": numbers.block_size, "output_size": numbers.output_size,
                                    "keep_probability": numbers.keep_probability}
    assert res.blocks == numbers.blocks  # SolveResult reads parameters as attributes
    assert hr.solve_hadamard(epsilon, k, *given) == numbers  # the former entry point: the same numbers
    assert res.extra["epsilon_exact"] == numbers.epsilon_exact <= Fraction(epsilon)


@pytest.mark.parametrize("epsilon, k", [(0.3, 7), (1.0, 100), (3.0, 1000), (6.0, 50), (9.0, 3000)])
def test_auto_blocks_is_the_exact_argmin(epsilon, k):
    """The default ``B``: the one whose worst-case l2, computed in rationals from the grid ``P``, is smallest."""
    best = None
    for B in hr.block_candidates(k):
        p = Fraction(hr.keep_probability(epsilon, B))
        q = (1 - p) / (2 * B - 1)
        if p <= q:
            continue
        b = 1 << (-(-k // B)).bit_length()
        assert B * (b - 1) >= k > B * (b // 2 - 1)  # b: the smallest power of two with B (b - 1) >= k
        l2 = (2 * q * k + (p - q) * min(b - 1, k)) / (p - q) ** 2 - 1
        assert math.isclose(float(l2), hr.solve_hadamard(epsilon, k, B).worst_l2(), rel_tol=1e-12)
        if best is None or l2 < best[0] * (1 - Fraction(1, 10**9)):
            best = (l2, B)
    assert hr.solve_hr(epsilon, k).parameters["blocks"] == best[1] == _channel.auto_blocks(epsilon, k)


@pytest.mark.parametrize("args, field", [((-1.0, 10), "epsilon"), ((math.nan, 10), "epsilon"),
                                         ((1.0, 1), "domain_size"), ((1.0, 2**24 + 1), "domain_size"),
                                         ((1.0, 10, 3), "blocks"), ((1e-16, 10, 1), "epsilon")])
def test_solve_hr_refuses_bad_input_naming_the_field(args, field):
    with pytest.raises(SolverError, match=f"^{field}: "):
        hr.solve_hr(*args)
    with pytest.raises(ValueError, match=f"^{field}: "):
        hr.solve_hadamard(*args)


def test_hadamard_exact_epsilon_by_integer_counting():
    """``exact_epsilon`` against ``ln`` of the ratio counted from the grid integers, and the float map."""
    for epsilon, B in ((0.7, 1), (2.0, 4), (5.0, 16)):
        p = hr.keep_probability(epsilon, B)
        steps = int(p * 2**48)
        assert steps == p * 2**48  # on the grid
        ratio = Fraction(steps * (2 * B - 1), 2**48 - steps)  # P (2B - 1)/(1 - P) from integers
        exact = hr.exact_epsilon(p, B)
        assert abs(float(exact) - math.log(ratio.numerator / ratio.denominator)) < 1e-14
        assert math.isclose(_channel.realized_epsilon(p, B), float(exact), rel_tol=1e-14)
        assert exact <= Fraction(epsilon)


# ------------------------------------------------------------------ PIE: one exact guarantee
@pytest.mark.parametrize("epsilon, symbols, k, n, t, prior", [(1.0, 10, 10, 1000, 1, None), (3.0, 64, 5000, 10**6, 3, 1e-4),
                                                              (0.2, 2, 2, 50, 1, None), (12.0, 2**20, 2**20, 10**9, 2, None)])
def test_pie_exact_guarantee_against_integer_ratio_and_float_map(epsilon, symbols, k, n, t, prior):
    mu = pie_keep_probability(epsilon, symbols)
    max_prior = prior if prior is not None else 1.0 / n
    ex = exact_guarantee(mu, symbols, k, n, t, max_prior)
    steps = int(mu * 2**48)
    assert ex["ratio"] == Fraction(steps * (symbols - 1), 2**48 - steps)  # e^eps from the grid integers
    assert float(ex["theta"]) == pytest.approx((symbols * steps - 2**48) / ((symbols - 1) * 2**48), rel=1e-15)
    eps = realized_epsilon(mu, symbols)
    assert float(ex["epsilon"]) == pytest.approx(eps, rel=1e-13)
    alpha = pie_alpha_bits(eps, float(ex["theta"]), n, k, t)  # the runtime's float64 map
    for key in ("alpha_bits", "mechanism_bits", "ldp_bits"):
        assert float(ex[key]) == pytest.approx(alpha[key], rel=1e-12, abs=1e-300)
    assert float(ex["alpha_nats"]) == pytest.approx(alpha["alpha_bits"] * math.log(2), rel=1e-12)
    assert float(ex["prior_bits"]) == pytest.approx(-math.log2(max_prior), rel=1e-14)


# ------------------------------------------------------------------ IDUE: one share split
@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 50), min_size=1, max_size=6), st.integers(0, 200))
def test_shares_to_counts_is_a_largest_remainder_split(weights, extra):
    shares = [w / sum(weights) for w in weights]
    m = len(weights) + extra
    counts = shares_to_counts(shares, m)
    assert sum(counts) == m and min(counts) >= 1
    if all(s * m >= 1 for s in shares):  # no level needed a borrowed item: each count within 1 of its share
        assert all(abs(c - s * m) < 1 for c, s in zip(counts, shares))


def test_items_by_shares_is_a_partition_of_the_domain():
    labels = [f"item-{i}" for i in range(37)]
    items = items_by_shares([0.5, 0.3, 0.2], 37, 7, labels)
    assert sorted(x for level in items for x in level) == sorted(labels)
    assert [len(level) for level in items] == shares_to_counts([0.5, 0.3, 0.2], 37) == [19, 11, 7]
    assert items_by_shares([0.5, 0.3, 0.2], 37, 7, None) == [[labels.index(x) for x in lv] for lv in items]


# ------------------------------------------------------------------ PCKV: one corrected estimate
def test_corrected_mean_is_the_runtime_estimate_and_the_solvers():
    rng = np.random.default_rng(5)
    a, b, p, L, n = 0.6, 0.2, 0.8, 2, 5000
    n1, n2 = rng.integers(0, 800, 40), rng.integers(0, 800, 40)
    f, m = corrected_mean(n1.astype(float), n2.astype(float), float(n), a, b, p, L)
    est = estimate_from_counts(n, n1, n2, a, b, p, L)
    np.testing.assert_array_equal(est.frequency, f)
    np.testing.assert_array_equal(est.mean, m)
    np.testing.assert_array_equal(_corrected_mean(n1.astype(float), n2.astype(float), float(n), a, b, p, float(L)), m)
    assert np.all((1.0 / n <= f) & (f <= 1.0)) and np.all(np.abs(m) <= 1.0 + 1e-12)


def test_corrected_mean_solves_lemma_1_inside_the_box():
    """Away from the clipping, eq. (13)-(14) invert the expected counts exactly: the key's true mean."""
    a, b, p, L, n = 0.7, 0.1, 0.9, 1, 10**6
    f, mean = 0.3, 0.4
    p1 = f / L * a * (p * (1 + mean) / 2 + (1 - p) * (1 - mean) / 2) + (1 - f / L) * b / 2
    p2 = f / L * a * (p * (1 - mean) / 2 + (1 - p) * (1 + mean) / 2) + (1 - f / L) * b / 2
    got_f, got_m = corrected_mean(np.array([n * p1]), np.array([n * p2]), float(n), a, b, p, L)
    assert got_f[0] == pytest.approx(f, rel=1e-12) and got_m[0] == pytest.approx(mean, rel=1e-12)


# ------------------------------------------------------------------ binomials: one Chernoff bound
@pytest.mark.parametrize("n, p", [(20, 0.5), (60, 0.1), (200, 0.03), (7, 0.9)])
def test_chernoff_outside_bounds_the_exact_tails(n, p):
    q = Fraction(p)
    pmf = [math.comb(n, x) * q**x * (1 - q) ** (n - x) for x in range(n + 1)]
    for lo, hi in ((0, n), (1, n - 1), (int(n * p) // 2, min(n, int(n * p) * 2 + 1)), (0, int(n * p)), (int(n * p), n)):
        exact = sum(pmf[:lo], Fraction(0)) + sum(pmf[hi + 1:], Fraction(0))
        assert _binomial.chernoff_outside(n, p, lo, hi) >= float(exact) * (1 - 1e-12)
    assert _binomial.chernoff_outside(n, p, 0, n) == 0.0


def test_theorem4_mean_terms_are_the_runtimes_errors_and_the_planners_prediction():
    """The runtime's standard error of a mean and the planner's Theorem 4 MSE: one formula, closed form at f_s = f."""
    from ldpplan.mechanisms.pckv._core import mean_variance, theorem4_mean_terms
    from ldpplan.solvers._pckv_errors import theorem4_mse

    a, b, p, L, n = 0.5, 0.25, 0.75, 2, 10_000
    f, m = np.array([0.01, 0.2, 0.9]), np.array([-0.5, 0.0, 0.8])
    var, bias = theorem4_mean_terms(f, m, a, b, p, L, n)
    delta, gamma = (a - b) * f / L, a * (2 * p - 1) * f / L  # eq. (12)
    np.testing.assert_allclose(var, (b + delta) / (n * gamma**2) + (b * (1 - b) - delta) * m**2 / (n * delta**2),
                               rtol=1e-14)
    np.testing.assert_allclose(bias, m * (1 - b - delta) * b / (n * delta**2), rtol=1e-14)
    np.testing.assert_array_equal(theorem4_mse(a, b, p, L, n, f, m)[1], var + bias**2)
    np.testing.assert_array_equal(mean_variance(f, m, a, b, p, L, n).std_error, np.sqrt(var + bias * bias))

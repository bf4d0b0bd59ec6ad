"""Exact Bernoulli sampling on the 2^-48 grid (mechanisms._sampling)."""
from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpplan.mechanisms import _sampling as S


def reference_bits(rng: np.random.Generator, p_columns: np.ndarray, n_rows: int) -> np.ndarray:
    """Re-derive bernoulli_columns from the raw bit stream with Python integers."""
    m = len(p_columns)
    ks = [int(p * 2**48) for p in p_columns]
    raw = rng.bit_generator.random_raw((n_rows * m + 7) // 8)
    bytes_ = raw.view(np.uint8)[: n_rows * m]
    out = np.zeros(n_rows * m, dtype=bool)
    ties = []
    for pos, r in enumerate(bytes_):
        k = ks[pos % m]
        hi, lo = k >> 40, k & (2**40 - 1)
        if hi >= 256:
            out[pos] = True
        elif r < hi:
            out[pos] = True
        elif r == hi:
            ties.append((pos, lo))
    if ties:
        extra = rng.bit_generator.random_raw(len(ties))
        for (pos, lo), word in zip(ties, extra):
            out[pos] = (int(word) >> 24) < lo
    return out.reshape(n_rows, m)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 2**48), min_size=1, max_size=5), st.integers(1, 300), st.integers(0, 2**32))
def test_sampler_is_exactly_the_documented_integer_rule(ks, n_rows, seed):
    p = np.array([k / 2**48 for k in ks])
    rng = np.random.default_rng(seed)
    twin = copy.deepcopy(rng)
    np.testing.assert_array_equal(S.bernoulli_columns(rng, p, n_rows), reference_bits(twin, p, n_rows))


def test_tie_break_probability_is_exact_in_expectation():
    # p with hi = 3 and lo = 2^39: Pr = (3 + 1/2) / 256; 2e6 draws, tolerance 5 sd
    p = (3 * 2**40 + 2**39) / 2**48
    x = S.bernoulli_iid(np.random.default_rng(1), p, 2_000_000)
    sd = np.sqrt(p * (1 - p) / x.size)
    assert abs(x.mean() - p) < 5 * sd


def test_grid_rounding_directions():
    p = 0.1
    assert S.to_grid(p, "down") <= p <= S.to_grid(p, "up")
    assert S.on_grid(S.to_grid(p, "down")) and S.on_grid([0.0, 1.0, 0.5])
    assert not S.on_grid(0.1)
    with pytest.raises(ValueError, match="multiples of 2\\*\\*-48"):
        S.bernoulli(np.random.default_rng(0), [0.1])
    with pytest.raises(TypeError, match="Generator"):
        S.bernoulli(np.random.RandomState(0), [0.5])  # type: ignore[arg-type]
    assert S.bernoulli_columns(np.random.default_rng(0), np.array([1.0, 0.0]), 50).tolist() == [[True, False]] * 50

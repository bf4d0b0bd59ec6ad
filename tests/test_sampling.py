"""Exact Bernoulli sampling on the 2^-48 grid (mechanisms._sampling)."""
from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpplan.mechanisms import _sampling as S


def reference_bits(rng: np.random.Generator, p_columns: np.ndarray, n_rows: int) -> np.ndarray:
    """Re-derive bernoulli_columns with Python integers from the documented stream.

    The stream: ``ceil(n_rows * m / 8)`` full-range 64-bit integers (``Generator.integers``,
    endpoint included) split into bytes least-significant first; then one 40-bit integer
    per tie, in row-major order of the tied cells. Cell ``pos`` with ``k = p * 2**48``,
    ``hi = k >> 40``, ``lo = k mod 2**40`` is 1 iff ``r < hi``, or ``r == hi`` and the tie
    integer is ``< lo`` (``hi == 256`` means p = 1).
    """
    m = len(p_columns)
    ks = [int(p * 2**48) for p in p_columns]
    words = rng.integers(0, 2**64 - 1, size=(n_rows * m + 7) // 8, dtype=np.uint64, endpoint=True)
    bytes_ = [(int(w) >> (8 * j)) & 0xFF for w in words for j in range(8)][: n_rows * m]
    out = np.zeros(n_rows * m, dtype=bool)
    ties = []
    for pos, r in enumerate(bytes_):
        k = ks[pos % m]
        hi, lo = k >> 40, k & (2**40 - 1)
        if hi >= 256 or r < hi:
            out[pos] = True
        elif r == hi:
            ties.append((pos, lo))
    if ties:
        extra = rng.integers(0, 2**40, size=len(ties), dtype=np.uint64)
        for (pos, lo), s in zip(ties, extra):
            assert 0 <= int(s) < 2**40
            out[pos] = int(s) < lo
    return out.reshape(n_rows, m)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 2**48), min_size=1, max_size=5), st.integers(1, 300), st.integers(0, 2**32))
def test_sampler_is_exactly_the_documented_integer_rule(ks, n_rows, seed):
    p = np.array([k / 2**48 for k in ks])
    rng = np.random.default_rng(seed)
    twin = copy.deepcopy(rng)
    np.testing.assert_array_equal(S.bernoulli_columns(rng, p, n_rows), reference_bits(twin, p, n_rows))
    # both consumed the same stream: the generators are in the same state afterwards
    assert rng.bit_generator.state == twin.bit_generator.state


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 2**48), min_size=1, max_size=5), st.integers(1, 200), st.integers(0, 2**32),
       st.sampled_from(["PCG64", "MT19937", "Philox", "SFC64", "PCG64DXSM"]))
def test_integer_rule_holds_under_every_bit_generator(ks, n_rows, seed, bitgen):
    p = np.array([k / 2**48 for k in ks])
    rng = np.random.Generator(getattr(np.random, bitgen)(seed))
    twin = copy.deepcopy(rng)
    np.testing.assert_array_equal(S.bernoulli_columns(rng, p, n_rows), reference_bits(twin, p, n_rows))


def test_ties_are_resolved_by_the_40_bit_remainder():
    # hi = 0 and lo = 2^40 - 1: only r == 0 can give a 1, and then with probability 1 - 2^-40.
    # p = (2^40 - 1) / 2^48; reference and sampler agree, and every 1 sits on a zero byte.
    p = np.array([(2**40 - 1) / 2**48])
    rng = np.random.default_rng(7)
    twin = copy.deepcopy(rng)
    got = S.bernoulli_columns(rng, p, 20_000)
    np.testing.assert_array_equal(got, reference_bits(twin, p, 20_000))
    zero_bytes = (np.random.default_rng(7).integers(0, 2**64 - 1, size=2500, dtype=np.uint64, endpoint=True)
                  .view(np.uint8)[:20_000] == 0)
    assert np.all(got[:, 0] <= zero_bytes) and got.sum() > 0


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
    for draw in (S.uniform_bytes, S.uniform_bits):
        with pytest.raises(TypeError, match="Generator"):
            draw(np.random.RandomState(0), 8)  # type: ignore[arg-type]
    assert S.bernoulli_columns(np.random.default_rng(0), np.array([1.0, 0.0]), 50).tolist() == [[True, False]] * 50


@pytest.mark.parametrize("bitgen", [np.random.PCG64, np.random.Philox, np.random.MT19937])
def test_word_primitives_match_numpy_where_numpy_is_exact(bitgen):
    """refine40 is numpy's integers(0, 2**40) (so Bernoulli outputs did not move when it was
    written on the word stream); uniform_unit is rng.random for 64-bit generators."""
    a = S.refine40(np.random.Generator(bitgen(3)), 500)
    b = np.random.Generator(bitgen(3)).integers(0, 1 << 40, size=500, dtype=np.uint64)
    assert np.array_equal(a, b)
    if bitgen is not np.random.MT19937:  # MT19937's random() is its own 53-bit construction
        assert np.array_equal(S.uniform_unit(np.random.Generator(bitgen(4)), 500),
                              np.random.Generator(bitgen(4)).random(500))


@settings(max_examples=60, deadline=None)
@given(bounds=st.lists(st.one_of(st.integers(1, 2**63 - 1), st.sampled_from([2**64 // 3 + 1, 5, 2**31 - 2])),
                       min_size=1, max_size=20), seed=st.integers(0, 2**32 - 1))
def test_uniform_below_is_the_documented_modulo_rejection(bounds, seed):
    """Per entry: accept w < 2^64 - (2^64 mod m), return w mod m (re-derived with Python integers from
    the same words); rejected entries redraw one word each, in index order. The bound 2^64 // 3 + 1
    rejects a word with probability about 1/3, so the redraw order is exercised; the scalar and
    per-entry paths agree."""
    got = S.uniform_below(np.random.Generator(np.random.PCG64(seed)), np.array(bounds))
    stream = iter(np.random.Generator(np.random.PCG64(seed)).integers(0, 2**64 - 1, size=10**4, dtype=np.uint64,
                                                                      endpoint=True).tolist())
    first = [next(stream) for _ in bounds]
    want, pending = [None] * len(bounds), []
    for i, (w, m) in enumerate(zip(first, bounds)):
        if w < 2**64 - 2**64 % m:
            want[i] = w % m
        else:
            pending.append(i)
    while pending:
        redo = [(i, next(stream)) for i in pending]
        pending = [i for i, w in redo if w >= 2**64 - 2**64 % bounds[i]]
        for i, w in redo:
            if w < 2**64 - 2**64 % bounds[i]:
                want[i] = w % bounds[i]
    assert got.tolist() == want
    scalar = S.uniform_below(np.random.Generator(np.random.PCG64(seed)), bounds[0], 5)
    array = S.uniform_below(np.random.Generator(np.random.PCG64(seed)), np.full(5, bounds[0]))
    assert scalar.tolist() == array.tolist()

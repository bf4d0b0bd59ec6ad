"""The byte-stream kernels (mechanisms._bitkernels) against an integer reference, bit for bit."""
from __future__ import annotations

import numpy as np
import pytest

from ldpplan.mechanisms import _sampling
from ldpplan.mechanisms._bitkernels import (bernoulli_entries, bernoulli_rows, column_sums, count_bits, grid_split,
                                            true_positions)


def _reference_rows(seed, p, n_rows, generator=np.random.PCG64):
    """The documented rule with Python integers: byte r, bit r < hi, tie r == hi -> s < lo (s 40 bits)."""
    rng = np.random.Generator(generator(seed))
    m = len(p)
    k = [int(x * 2**48) for x in p]
    r = _sampling.uniform_bytes(rng, n_rows * m).tolist()
    ties = [i for i, v in enumerate(r) if v == k[i % m] >> 40]
    s = rng.integers(0, 1 << 40, size=len(ties), dtype=np.uint64).tolist()
    out = [v < (k[i % m] >> 40) for i, v in enumerate(r)]
    for i, v in zip(ties, s):
        out[i] = v < (k[i % m] & ((1 << 40) - 1))
    return np.array(out, dtype=bool).reshape(n_rows, m)


@pytest.mark.parametrize("generator", [np.random.PCG64, np.random.MT19937, np.random.Philox, np.random.SFC64])
def test_bernoulli_rows_bit_for_bit_against_integer_reference(generator):
    # probabilities whose high byte is small so ties are frequent, including 0 and a fine lo part
    p = _sampling.to_grid(np.array([0.0, 3 / 256 + 2**-47, 1 / 256, 0.5 - 2**-48, 2**-48, 200 / 256 + 5 * 2**-48,
                                    0.25, 0.99]))
    hi, lo = grid_split(p)
    got = bernoulli_rows(np.random.Generator(generator(7)), hi, lo, 4001)
    assert np.array_equal(got, _reference_rows(7, p, 4001, generator))
    # the tie branch was exercised: about n * m / 256 ties
    assert got[:, 0].sum() == 0


def test_bernoulli_entries_matches_reference_and_frequencies():
    p = np.repeat(_sampling.to_grid(np.array([1 / 256 + 2**-45, 0.75, 2**-48])), 20000)
    hi, lo = grid_split(p)
    got = bernoulli_entries(np.random.default_rng(3), hi, lo)
    rng = np.random.default_rng(3)
    r = _sampling.uniform_bytes(rng, p.size)
    k = (p * 2**48).astype(np.int64)
    ref = r < (k >> 40)
    ties = np.flatnonzero(r == (k >> 40))
    ref[ties] = rng.integers(0, 1 << 40, size=ties.size, dtype=np.uint64) < (k[ties] & ((1 << 40) - 1)).astype(np.uint64)
    assert np.array_equal(got, ref)
    mean = got[20000:40000].mean()
    assert abs(mean - 0.75) < 5 * np.sqrt(0.75 * 0.25 / 20000)


def test_grid_split_rejects_off_grid_and_one():
    with pytest.raises(ValueError):
        grid_split([0.1])
    with pytest.raises(ValueError):
        grid_split([1.0])
    hi, lo = grid_split([0.5 + 2**-48])
    assert hi[0] == 128 and lo[0] == 1


@pytest.mark.parametrize("size", [0, 1, 7, 8, 9, 64, 1003])
def test_true_positions_equals_flatnonzero(size):
    rng = np.random.default_rng(size)
    for density in (0.0, 0.004, 0.5, 1.0):
        mask = rng.random(size) < density
        assert np.array_equal(true_positions(mask), np.flatnonzero(mask))
    mask2 = rng.random((13, 11)) < 0.1
    assert np.array_equal(true_positions(mask2), np.flatnonzero(mask2))


@pytest.mark.parametrize("n,width", [(0, 5), (1, 1), (254, 9), (256, 16), (1300, 1003)])
def test_count_bits_and_column_sums(n, width):
    y = np.random.default_rng(width).random((n, width)) < 0.3
    packed = np.packbits(y, axis=1, bitorder="little")
    expect = y.sum(axis=0)
    assert np.array_equal(count_bits(packed, width), expect)
    assert np.array_equal(column_sums(y.view(np.uint8)), expect)
    # all ones beyond the 255-row uint8 lane
    ones = np.ones((600, 3), np.uint8)
    assert column_sums(ones).tolist() == [600, 600, 600]


def test_hi_tile_gives_the_same_bits():
    from ldpplan.mechanisms._bitkernels import hi_tile

    p = _sampling.to_grid(np.linspace(0.001, 0.9, 37))
    hi, lo = grid_split(p)
    plain = bernoulli_rows(np.random.default_rng(1), hi, lo, 300)
    tiled = bernoulli_rows(np.random.default_rng(1), hi, lo, 300, hi_tile(hi, 512))
    assert np.array_equal(plain, tiled)

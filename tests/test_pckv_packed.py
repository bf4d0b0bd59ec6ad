"""Packed PCKV-UE reports (2 bits per position): layout, round trips, bit-identical estimates, validation."""
from __future__ import annotations

import numpy as np
import pytest

from ldpplan.mechanisms import _sampling
from ldpplan.mechanisms._protocol import Reports
from ldpplan.mechanisms.pckv import PCKVUE, KeyValueUsers, PCKVReports, pack_ternary, sample_pairs
from ldpplan.mechanisms.pckv import to_grid


def _ue(d=13, L=3):
    return PCKVUE(domain=d, a=to_grid(0.7, "down"), b=to_grid(0.15, "up"), p=to_grid(0.8, "down"), padding_length=L)


def _users(n, d, seed=0):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(0, 5, n)
    indptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    keys = np.concatenate([rng.choice(d, s, replace=False) for s in sizes]).astype(np.int64)
    return KeyValueUsers(indptr, keys, rng.uniform(-1, 1, keys.size))


def _reference_y(mech, users, seed):
    """Algorithm 2 on int8 vectors, following the documented stream with the integer rule (one block)."""
    rng = np.random.default_rng(seed)
    k, v = sample_pairs(users, mech.domain_size, mech.padding_length, rng)
    n, w = k.size, mech.output_size
    nbytes = (w + 7) // 8

    def rule(r, p, refine):
        kk = int(p * 2**48)
        out = r < (kk >> 40)
        ties = np.flatnonzero(r == (kk >> 40))
        out[ties] = refine(ties.size) < (kk & ((1 << 40) - 1))
        return out

    refine = lambda c: rng.integers(0, 1 << 40, size=c, dtype=np.uint64)  # noqa: E731
    nz = rule(_sampling.uniform_bytes(rng, n * w), mech.b, refine).reshape(n, w)
    sign_bits = np.unpackbits(_sampling.uniform_bytes(rng, n * nbytes).reshape(n, nbytes), axis=1,
                              bitorder="little")[:, :w]
    keep = rule(_sampling.uniform_bytes(rng, n), mech.a, refine)
    same = rule(_sampling.uniform_bytes(rng, n), mech.p, refine)
    y = np.where(nz, np.where(sign_bits == 1, -1, 1), 0).astype(np.int8)
    y[np.arange(n), k] = np.where(keep, np.where(same, v, -v), 0)
    return y


def test_packed_reports_equal_the_documented_int8_reference_bit_for_bit():
    mech = _ue()
    users = _users(3000, 13)
    rep = mech.perturb(users, rng=np.random.default_rng(5))
    ref = _reference_y(mech, users, 5)
    assert np.array_equal(rep.unpack(), ref)
    nz, neg = pack_ternary(ref)
    assert np.array_equal(rep["nonzero"], nz) and np.array_equal(rep["negative"], neg)
    # the layout: bit k % 8 of byte k // 8, little order; two planes of ceil(16 / 8) = 2 bytes
    assert rep["nonzero"].shape == (3000, 2) and rep["nonzero"].dtype == np.uint8
    assert np.array_equal(rep.unpack([0, 15, 7]), ref[:, [0, 15, 7]])


@pytest.mark.parametrize("method", ["corrected", "empirical"])
def test_packed_estimate_bit_identical_to_the_int8_path(method):
    mech = _ue()
    rep = mech.perturb(_users(4000, 13, seed=2), rng=np.random.default_rng(11))
    legacy = PCKVReports("pckv-ue", {"y": rep.unpack()})
    assert mech.aggregate(rep) == mech.aggregate(legacy)
    a, b = mech.estimate(rep, method=method), mech.estimate(legacy, method=method)
    assert np.array_equal(a.frequency, b.frequency) and np.array_equal(a.mean, b.mean, equal_nan=True)
    # and the counts are the plain int8 counts
    y = rep.unpack()[:, :13]
    assert mech.aggregate(rep)["n1"].tolist() == (y == 1).sum(axis=0).tolist()
    assert mech.aggregate(rep)["n2"].tolist() == (y == -1).sum(axis=0).tolist()


def test_packed_reports_round_trip_through_parquet(tmp_path):
    from ldpplan.planner._reports_file import read_reports, write_reports

    mech = _ue()
    rep = mech.perturb(_users(500, 13, seed=3), rng=np.random.default_rng(1))
    path = tmp_path / "r.parquet"
    write_reports(path, rep.to_arrays(), mechanism="pckv-ue", plan_fingerprint="0" * 64, ldpplan_version="test",
                  seed=1)
    back = read_reports(path).arrays
    assert set(back) == {"nonzero", "negative"}
    for k in back:
        assert back[k].dtype == np.uint8 and np.array_equal(back[k], rep[k])
    again = Reports("pckv-ue", back)
    assert mech.aggregate(again) == mech.aggregate(rep)


def test_blocks_do_not_change_counts_across_many_rows():
    """More rows than one block (2^22 / d' rows): counts equal the int8 counts."""
    mech = PCKVUE(domain=4000, a=to_grid(0.6, "down"), b=to_grid(0.3, "up"), p=to_grid(0.7, "down"), padding_length=96)
    n = 1100
    rep = mech.perturb(KeyValueUsers(np.arange(n + 1), np.arange(n) % 4000, np.zeros(n)), rng=np.random.default_rng(0))
    y = rep.unpack()
    agg = mech.aggregate(rep)
    assert agg["n1"].tolist() == (y[:, :4000] == 1).sum(axis=0).tolist()
    assert agg["n2"].tolist() == (y[:, :4000] == -1).sum(axis=0).tolist()


def test_aggregate_validates_foreign_packed_columns():
    mech = _ue()                     # d' = 16: two bytes per plane, no padding bits
    odd = PCKVUE(domain=10, a=mech.a, b=mech.b, p=mech.p, padding_length=1)   # d' = 11: padding bits 3..7 of byte 1
    z = np.zeros((2, 2), np.uint8)
    cases = [
        (mech, {"nonzero": z, "negative": z.astype(np.int8)}, "reports.negative"),
        (mech, {"nonzero": np.zeros((2, 3), np.uint8), "negative": z}, "reports.nonzero"),
        (mech, {"nonzero": z, "negative": np.array([[1, 0], [0, 0]], np.uint8)}, "nonzero is clear"),
        (mech, {"nonzero": z}, "exactly the columns"),
        (mech, {"nonzero": z, "negative": z, "extra": np.zeros(2)}, "exactly the columns"),
        (odd, {"nonzero": np.array([[0, 8], [0, 0]], np.uint8), "negative": z}, "padding bits"),
    ]
    for m, cols, match in cases:
        with pytest.raises(ValueError, match=match):
            m.aggregate(PCKVReports("pckv-ue", cols))
    # the largest valid byte values are accepted
    ok = odd.aggregate(PCKVReports("pckv-ue", {"nonzero": np.array([[255, 7]], np.uint8),
                                               "negative": np.array([[255, 7]], np.uint8)}))
    assert ok["n2"].tolist() == [1] * 10 and ok["n1"].tolist() == [0] * 10


def test_unpack_positions_are_checked():
    rep = _ue().perturb(_users(5, 13), rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="positions"):
        rep.unpack([16])


def test_from_arrays_rebuilds_packed_reports():
    mech = _ue(10, 1)                      # d' = 11: 2 bytes per plane
    rep = mech.perturb(_users(50, 10), rng=np.random.default_rng(4))
    again = type(rep).from_arrays(rep.mechanism, rep.to_arrays())
    assert again.width == 16 and rep.width == 11
    assert np.array_equal(again.unpack()[:, :11], rep.unpack()) and not again.unpack()[:, 11:].any()
    assert mech.aggregate(again) == mech.aggregate(rep)

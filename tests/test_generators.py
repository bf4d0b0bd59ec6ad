"""The generator matrix: sampling is exact PER USER POSITION under every bit generator.

Before release 0.2 the sampler read bytes from ``bit_generator.random_raw()``; under
MT19937 (32-bit words in 64-bit slots) bytes 4..7 of every word were 0, so users at index
4..7 mod 8 of a batch kept their true value with probability 1. Every check here is
therefore made per position (index mod 8 and mod 64), for whole batches and for one
user per call, under PCG64, PCG64DXSM, Philox, SFC64, MT19937 and ``secure_rng`` (ChaCha),

(a) at the sampling level (``bernoulli``, ``bernoulli_columns``, ``bernoulli_iid``,
    ``uniform_bytes``, ``uniform_bits``): the frequency of each event against its exact
    probability (binomial z, Bonferroni over positions, family-wise level 1e-6);
(b) for every family's runtime (an example plan per family, a fixed input perturbed many
    times): the paper's unbiased ``"empirical"`` estimate of each position group against
    the truth (the input's indicator), and, where the runtime defines ``channel_matrix()``
    and reports one output per user, the output histogram against ``Q[x, :]`` exactly.

``test_old_byte_reader_fails_*`` run a test-only copy of the pre-0.2 reader through the
same checks under MT19937 and assert that they FAIL: the checks can catch the bug.
"""
from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from _family_helpers import example_runtime, fixed_truth, perturb, read_inputs, small_example_per_family, subset, sum_aggregates
from ldpplan.mechanisms import _sampling as S

FAMILY_WISE_ALPHA = 1e-6
SEED = 20260522


def _secure(seed):
    from ldpplan.mechanisms import secure_rng

    return secure_rng(seed)


GENERATORS = {
    "PCG64": lambda s: np.random.Generator(np.random.PCG64(s)),
    "PCG64DXSM": lambda s: np.random.Generator(np.random.PCG64DXSM(s)),
    "Philox": lambda s: np.random.Generator(np.random.Philox(s)),
    "SFC64": lambda s: np.random.Generator(np.random.SFC64(s)),
    "MT19937": lambda s: np.random.Generator(np.random.MT19937(s)),
    "ChaCha": _secure,
}


# --------------------------------------------------------------------------- statistics
def z_threshold(n_tests: int, alpha: float = FAMILY_WISE_ALPHA) -> float:
    """Two-sided normal quantile at ``alpha / n_tests`` (Bonferroni); about 5.3 for 8 tests."""
    return NormalDist().inv_cdf(1.0 - alpha / (2.0 * n_tests))


def binomial_failures(events, probs, groups) -> list[tuple[int, float]]:
    """Groups whose event count deviates from its exact expectation by more than the threshold.

    ``events`` (0/1), ``probs`` (the exact probability of each event) and ``groups`` (an
    integer label, e.g. position mod 8) are 1-D arrays of equal length. Per group the count
    has mean ``sum p`` and variance ``sum p (1 - p)`` (independent Bernoulli trials); the
    z score is compared with the Bonferroni threshold over the groups.
    """
    events = np.asarray(events, dtype=np.float64).ravel()
    probs = np.broadcast_to(np.asarray(probs, dtype=np.float64), events.shape).ravel()
    groups = np.asarray(groups).ravel()
    labels = np.unique(groups)
    limit = z_threshold(labels.size)
    bad = []
    for g in labels:
        sel = groups == g
        mean = probs[sel].sum()
        var = (probs[sel] * (1.0 - probs[sel])).sum()
        dev = events[sel].sum() - mean
        if var == 0.0:
            if dev != 0.0:
                bad.append((int(g), math.inf))
            continue
        z = dev / math.sqrt(var)
        if abs(z) > limit:
            bad.append((int(g), float(z)))
    return bad


def chi_square_limit(df: int, n_tests: int, alpha: float = FAMILY_WISE_ALPHA) -> float:
    """Upper ``alpha / n_tests`` quantile of chi-square(df) (Wilson-Hilferty)."""
    z = NormalDist().inv_cdf(1.0 - alpha / n_tests)
    return df * (1.0 - 2.0 / (9 * df) + z * math.sqrt(2.0 / (9 * df))) ** 3


def chi_square_failures(values, expected_probs, groups) -> list[tuple[int, float]]:
    """Groups whose histogram of ``values`` (ints in [0, len(expected_probs))) fails chi-square."""
    values, groups = np.asarray(values).ravel(), np.asarray(groups).ravel()
    q = np.asarray(expected_probs, dtype=np.float64)
    support = q > 0
    labels = np.unique(groups)
    limit = chi_square_limit(int(support.sum()) - 1, labels.size)
    bad = []
    for g in labels:
        v = values[groups == g]
        counts = np.bincount(v, minlength=q.size)
        if np.any(counts[~support]):
            bad.append((int(g), math.inf))
            continue
        exp = q[support] * v.size
        stat = float(((counts[support] - exp) ** 2 / exp).sum())
        if stat > limit:
            bad.append((int(g), stat))
    return bad


def test_the_statistics_helpers_reject_what_they_should():
    rng = np.random.default_rng(0)
    fair = rng.random(8000) < 0.3
    pos = np.arange(8000) % 8
    assert binomial_failures(fair, 0.3, pos) == []
    rigged = fair.copy()
    rigged[pos >= 4] = True  # the pre-0.2 MT19937 symptom
    assert {g for g, _ in binomial_failures(rigged, 0.3, pos)} == {4, 5, 6, 7}
    assert binomial_failures(np.ones(10), 1.0, np.zeros(10)) == []
    assert binomial_failures(np.r_[np.ones(9), 0], 1.0, np.zeros(10)) == [(0, math.inf)]
    vals = rng.integers(0, 4, 8000)
    assert chi_square_failures(vals, [0.25] * 4, pos) == []
    assert chi_square_failures(np.where(pos == 3, 0, vals), [0.25] * 4, pos)[0][0] == 3
    assert 5.0 < z_threshold(8) < 6.0 and z_threshold(64) > z_threshold(8)
    # Wilson-Hilferty against a known quantile: chi2(10) upper 1e-3 is 29.588
    assert abs(chi_square_limit(10, 1, alpha=1e-3) - 29.588) < 0.3


# --------------------------------------------------------------------------- (a) sampling level
#: grid probabilities with a tie part (k mod 2^40 != 0) and without
P1 = (77 * 2**40 + 2**39 + 12345) / 2**48
P2 = (200 * 2**40) / 2**48
P3 = (3 * 2**40 + 987654321) / 2**48
PROBS = np.array([P1, P2, P3])
N_BATCH = 64 * 400
N_CALLS = 64 * 40


def _positions(n: int, modulus: int) -> np.ndarray:
    return np.arange(n) % modulus


def sampling_events(name: str, rng: np.random.Generator, n: int):
    """``n`` users' events from one batch: (events, exact probabilities, user index) as flat arrays."""
    if name == "bernoulli_iid":
        return S.bernoulli_iid(rng, P1, n), np.full(n, P1), np.arange(n)
    if name == "bernoulli":
        p = PROBS[np.arange(n) % 3]
        return S.bernoulli(rng, p), p, np.arange(n)
    if name == "bernoulli_columns":
        x = S.bernoulli_columns(rng, PROBS, n)  # rows are users
        return x.ravel(), np.tile(PROBS, n), np.repeat(np.arange(n), 3) * 3 + np.tile(np.arange(3), n)
    if name == "uniform_bytes":
        bits = np.unpackbits(S.uniform_bytes(rng, n)[:, None], axis=1)  # (n, 8): byte position is the user
        return bits.ravel(), np.full(bits.size, 0.5), np.repeat(np.arange(n), 8) * 8 + np.tile(np.arange(8), n)
    if name == "uniform_bits":
        return S.uniform_bits(rng, n), np.full(n, 0.5), np.arange(n)
    raise AssertionError(name)


SAMPLERS = ["bernoulli", "bernoulli_columns", "bernoulli_iid", "uniform_bytes", "uniform_bits"]


def _group_labels(index: np.ndarray, sub: np.ndarray | None, modulus: int, width: int) -> np.ndarray:
    """Group = (user position mod modulus, sub-event index within the user)."""
    return (index % modulus) * width + (0 if sub is None else sub)


def batch_failures(name: str, rng: np.random.Generator, modulus: int) -> list:
    events, probs, flat = sampling_events(name, rng, N_BATCH)
    width = {"bernoulli_columns": 3, "uniform_bytes": 8}.get(name, 1)
    user, sub = flat // width, flat % width
    return binomial_failures(events, probs, _group_labels(user, sub, modulus, width))


def per_call_failures(name: str, rng: np.random.Generator, modulus: int) -> list:
    parts = [sampling_events(name, rng, 1) for _ in range(N_CALLS)]
    width = {"bernoulli_columns": 3, "uniform_bytes": 8}.get(name, 1)
    events = np.concatenate([np.asarray(e).ravel() for e, _, _ in parts])
    probs = np.concatenate([np.asarray(p).ravel() for _, p, _ in parts])
    call = np.repeat(np.arange(N_CALLS), width)
    sub = np.tile(np.arange(width), N_CALLS)
    return binomial_failures(events, probs, _group_labels(call, sub, modulus, width))


@pytest.mark.parametrize("modulus", [8, 64])
@pytest.mark.parametrize("sampler", SAMPLERS)
@pytest.mark.parametrize("generator", list(GENERATORS))
def test_batch_sampling_is_exact_at_every_position(generator, sampler, modulus):
    rng = GENERATORS[generator](SEED)
    assert batch_failures(sampler, rng, modulus) == []


@pytest.mark.parametrize("sampler", SAMPLERS)
@pytest.mark.parametrize("generator", list(GENERATORS))
def test_one_user_per_call_is_exact_at_every_call_position(generator, sampler):
    rng = GENERATORS[generator](SEED + 1)
    assert per_call_failures(sampler, rng, 8) == []


@pytest.mark.parametrize("generator", list(GENERATORS))
def test_uniform_bytes_are_uniform_at_every_byte_position(generator):
    # the full 256-value histogram of each byte position mod 8 (chi-square, Bonferroni over 8)
    rng = GENERATORS[generator](SEED + 2)
    data = S.uniform_bytes(rng, 8 * 256 * 40)
    assert chi_square_failures(data, np.full(256, 1 / 256), _positions(data.size, 8)) == []


@pytest.mark.parametrize("generator", list(GENERATORS))
def test_certain_and_impossible_events_under_every_generator(generator):
    rng = GENERATORS[generator](SEED + 3)
    x = S.bernoulli_columns(rng, np.array([0.0, 1.0, 2**-48, 1 - 2**-48]), 4096)
    assert not x[:, 0].any() and x[:, 1].all()
    assert x[:, 2].sum() <= 1 and x[:, 3].sum() >= 4095  # 2^-48 events: essentially never / always


# --------------------------------------------------------------------------- the pre-0.2 bug
def old_uniform_bytes(rng: np.random.Generator, size: int) -> np.ndarray:
    """TEST-ONLY copy of the pre-0.2 byte reader (wrong for 32-bit bit generators)."""
    words = (int(size) + 7) // 8
    return rng.bit_generator.random_raw(words).view(np.uint8)[:size]


def _patch_old_reader(monkeypatch) -> None:
    import sys

    originals = {id(S.uniform_bytes), id(S._uniform8)}
    for modname, module in list(sys.modules.items()):
        if not modname.startswith("ldpplan.mechanisms") or module is None:
            continue
        for attr in ("_uniform8", "uniform_bytes"):
            if id(getattr(module, attr, None)) in originals:
                monkeypatch.setattr(module, attr, old_uniform_bytes)


@pytest.mark.parametrize("sampler", ["bernoulli", "bernoulli_columns", "bernoulli_iid", "uniform_bytes",
                                     "uniform_bits"])
def test_old_byte_reader_fails_the_position_check_under_mt19937(monkeypatch, sampler):
    _patch_old_reader(monkeypatch)
    failures = batch_failures(sampler, GENERATORS["MT19937"](SEED), 8)
    assert failures, "the position check did not catch the pre-0.2 reader"
    if sampler == "bernoulli_iid":  # exactly the users at index 4..7 mod 8
        assert {g for g, _ in failures} == {4, 5, 6, 7}
    # and the same old reader is harmless under a 64-bit generator (the check is not trigger-happy)
    assert batch_failures(sampler, GENERATORS["PCG64"](SEED), 8) == []


# --------------------------------------------------------------------------- (b) family runtimes
def fixed_inputs(fam, plan, tmp_path, n: int):
    """``n`` users who all hold the first domain element, read by the family's own reader."""
    return read_inputs(fam, plan, tmp_path, n)


def estimate_failures(mech, aggregates_by_group: dict[int, list], truth: np.ndarray) -> list:
    """Groups whose ``"empirical"`` estimate is off the truth by more than the Bonferroni threshold.

    Each group has several disjoint sub-aggregates; the standard error is the estimator's
    ``std_error`` when it gives one, else the spread of the sub-aggregates' estimates
    (a t statistic, threshold raised to stay conservative for its heavier tails).
    """
    n_tests = len(aggregates_by_group) * truth.size
    limit = z_threshold(n_tests)
    bad = []
    for g, parts in aggregates_by_group.items():
        total = sum_aggregates(parts)
        est = mech.estimate(total, method="empirical")
        assert est.frequency.shape == truth.shape and est.n == total.n
        subs = np.array([mech.estimate(p, method="empirical").frequency for p in parts])
        spread = subs.std(axis=0, ddof=1) / math.sqrt(len(parts))
        dev = np.abs(est.frequency - truth)
        if est.std_error is not None and np.all(np.isfinite(est.std_error)):
            # the estimator's own standard error where it is positive; where it is 0 (an output that
            # only the true item produces, e.g. a ULDP invertible output) the spread of the parts
            own = est.std_error > 0
            se = np.where(own, est.std_error, spread)
            off = np.where(own, dev > limit * se, dev > 1.5 * limit * se)
        else:
            se = spread
            off = dev > 1.5 * limit * se  # t statistic on few parts: heavier tails; se == 0 with dev > 0 fails
        z = np.where(se > 0, dev / np.where(se > 0, se, 1), np.where(dev > 0, np.inf, 0))
        if np.any(off):
            bad.append((int(g), float(np.max(z))))
    return bad


def _one_column_outputs(reports):
    """The single 1-D integer report column (RR-like mechanisms), or None."""
    cols = [v for v in reports.to_arrays().values() if np.asarray(v).ndim == 1 and np.asarray(v).dtype.kind in "iu"]
    return np.asarray(cols[0]) if len(reports.to_arrays()) == 1 and len(cols) == 1 else None


FAMILY_USERS_PER_GROUP = 2000
FAMILY_SUBS = 8


def family_batch_failures(fam, plan, mech, rng, tmp_path, modulus: int = 8) -> list:
    n = modulus * FAMILY_USERS_PER_GROUP
    data = fixed_inputs(fam, plan, tmp_path, n)
    reports = perturb(mech, data, rng)
    assert len(reports) == n
    truth = fixed_truth(plan)
    pos = np.arange(n) % modulus
    groups = {}
    for g in range(modulus):
        rows = np.flatnonzero(pos == g)
        groups[g] = [mech.aggregate(subset(reports, chunk)) for chunk in np.array_split(rows, FAMILY_SUBS)]
    groups[-1] = [part for g in range(modulus) for part in groups[g]]  # all positions pooled: more power
    bad = estimate_failures(mech, groups, truth)
    outputs = _one_column_outputs(reports)
    channel = getattr(mech, "channel_matrix", None)
    if outputs is not None and callable(channel):
        try:
            q = np.asarray(channel())
        except ValueError:  # too large for a dense matrix: the estimate check above still applies
            q = np.zeros((0, 0))
        if q.ndim == 2 and q.shape[0] == mech.domain_size and outputs.max(initial=0) < q.shape[1]:
            bad += [("channel", g, s) for g, s in chi_square_failures(outputs, q[0], pos)]
            bad += [("channel", "pooled", s) for _, s in chi_square_failures(outputs, q[0], np.zeros(n, int))]
    return bad


@pytest.mark.slow
@pytest.mark.parametrize("generator", list(GENERATORS))
@pytest.mark.parametrize("fam,name", small_example_per_family())
def test_family_runtime_is_exact_at_every_position(fam, name, generator, request, tmp_path):
    plan, mech = example_runtime(fam, name, request)
    assert family_batch_failures(fam, plan, mech, GENERATORS[generator](SEED), tmp_path) == []


@pytest.mark.parametrize("fam,name", small_example_per_family())
def test_family_runtime_is_exact_at_every_position_pcg64_mt19937(fam, name, request, tmp_path):
    # the fast tier's share of the matrix above: the default and the 32-bit generator
    plan, mech = example_runtime(fam, name, request)
    for generator in ("PCG64", "MT19937"):
        assert family_batch_failures(fam, plan, mech, GENERATORS[generator](SEED), tmp_path) == [], generator


@pytest.mark.slow
@pytest.mark.parametrize("generator", list(GENERATORS))
@pytest.mark.parametrize("fam,name", small_example_per_family())
def test_family_runtime_one_user_per_call(fam, name, generator, request, tmp_path):
    plan, mech = example_runtime(fam, name, request)
    one = fixed_inputs(fam, plan, tmp_path, 1)
    rng = GENERATORS[generator](SEED + 5)
    modulus, per_group = 8, 160
    aggs = [mech.aggregate(perturb(mech, one, rng)) for _ in range(modulus * per_group)]
    assert all(a.n == 1 for a in aggs)
    truth = fixed_truth(plan)
    groups = {}
    for g in range(modulus):
        mine = aggs[g::modulus]
        size = len(mine) // FAMILY_SUBS
        parts = []
        for i in range(FAMILY_SUBS):
            parts.append(sum_aggregates(mine[i * size:(i + 1) * size]))
        groups[g] = parts
    groups[-1] = [part for g in range(modulus) for part in groups[g]]  # all calls pooled
    assert estimate_failures(mech, groups, truth) == []


@pytest.mark.slow
def test_old_byte_reader_fails_a_family_runtime_under_mt19937(monkeypatch, request, tmp_path):
    # The same family check, with the pre-0.2 reader patched in: at least one family's
    # runtime must fail it under MT19937 (and, with the fixed reader, none does: see above).
    caught = []
    for case in small_example_per_family():
        fam, name = case.values
        plan, mech = example_runtime(fam, name, request)
        with monkeypatch.context() as m:
            _patch_old_reader(m)
            if family_batch_failures(fam, plan, mech, GENERATORS["MT19937"](SEED), tmp_path):
                caught.append(fam.name)
    assert caught, "no family runtime's position check caught the pre-0.2 byte reader"

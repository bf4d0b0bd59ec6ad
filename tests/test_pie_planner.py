"""PIE family: spec -> plan (format 2.0) -> verify -> load, tampering, the practical range, the CLI."""
from __future__ import annotations

import copy
import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpplan import mechanisms, planner
from ldpplan.planner import families
from ldpplan.planner._plan_format import load_schema, validate_plan
from ldpplan.planner.errors import InputDataError, PlanFormatError, PrivacyViolation, SpecError
from ldpplan.planner.pie import EXAMPLES, FAMILY, gss_labels

N_LOC, X_LOC = 1370637, 10500393



def _plan(**spec):
    return planner.make_plan(spec)


@pytest.mark.parametrize("name", ["pie-rr", "pie-glh", "pie-gss"])
def test_examples_plan_verify_and_load(name):
    plan = planner.make_plan(EXAMPLES[name])
    validate_plan(plan)
    assert plan["format_version"] == "2.0" and FAMILY.verify(plan).holds
    p, gu = plan["params"], plan["guarantee"]
    assert gu["notion"] == "LDP+PIE" and gu["bayes_error_lower_bound"] >= plan["spec"]["target"]["bayes_error"]
    assert gu["alpha_nats"] == pytest.approx(gu["alpha_bits"] * math.log(2))
    assert gu["epsilon"] <= p["epsilon"] and plan["planning_inputs"] == []
    assert p["domain_size"] == plan["domain"]["size"]
    for entry in plan["predicted"].values():
        assert set(entry) >= {"value", "unit", "source"}
    assert {b["name"] for b in plan["baselines"]} == {"rr", "glh"}
    assert sum(b["chosen"] for b in plan["baselines"]) == 1
    json.dumps(plan, allow_nan=False)
    assert len(FAMILY.summarize(plan)) == 4
    mech = mechanisms.load(json.loads(json.dumps(plan)))
    assert mech.mechanism == plan["mechanism"] and mech.domain_size == plan["domain"]["size"]


def test_issue_spec_numbers():
    rr = planner.make_plan(EXAMPLES["pie-rr"])
    # Bayes error 0.5 with n = 1370637: alpha = 0.5 log2 n - 1 = 9.1932 bits; theta = alpha / log2 n
    alpha = 0.5 * math.log2(N_LOC) - 1
    assert rr["guarantee"]["alpha_bits"] == pytest.approx(alpha, rel=1e-9)
    assert rr["guarantee"]["alpha_bits"] <= alpha
    theta = alpha / math.log2(N_LOC)
    assert rr["params"]["epsilon"] == pytest.approx(math.log1p(theta * X_LOC / (1 - theta)), rel=1e-9)
    glh = planner.make_plan(EXAMPLES["pie-glh"])
    assert glh["params"]["g"] == 10**8 and glh["mechanism"] == "glh"
    assert glh["guarantee"]["theta"] == pytest.approx(theta, rel=1e-9)
    # Thm. 4.8 / Sec. 4.4: GLH with large g has a smaller total l2 loss than the RR
    assert glh["predicted"]["l2_loss_total"]["value"] < rr["predicted"]["l2_loss_total"]["value"]


def test_pie_mechanism_records_choice_in_baselines():
    plan = planner.make_plan(EXAMPLES["pie-gss"])
    sel = plan["solver"]["selection"]
    assert sel["requested"] == "pie" and sel["chosen"] == plan["mechanism"]
    losses = {b["name"]: b["predicted"]["l2_loss_total"]["value"] for b in plan["baselines"]}
    assert losses[plan["mechanism"]] == min(losses.values())
    assert plan["spec"]["mechanism"] == "pie" and plan["domain"]["labels"] == gss_labels()


def test_alpha_and_epsilon_targets_and_prior():
    plan = _plan(mechanism="rr", domain_size=1000, n=10**6, target={"alpha_bits": 2.0})
    assert plan["guarantee"]["alpha_bits"] <= 2.0
    plan = _plan(mechanism="rr", domain_size=X_LOC, n=N_LOC, target={"epsilon": 1.0})
    assert plan["params"]["epsilon"] <= 1.0 and plan["guarantee"]["epsilon"] <= 1.0
    # Fig. 4: epsilon = 1 -> alpha = 3.3e-6 bits (Thm. 4.2)
    assert float(f"{plan['guarantee']['alpha_bits']:.2g}") == 3.3e-6
    uni = _plan(mechanism="rr", domain_size=1000, n=10**6, target={"bayes_error": 0.5})
    non = _plan(mechanism="rr", domain_size=1000, n=10**6, target={"bayes_error": 0.5, "max_prior": 1e-4})
    assert non["params"]["epsilon"] < uni["params"]["epsilon"]  # a sharper prior needs more noise
    assert non["guarantee"]["bayes_error_lower_bound"] >= 0.5 and non["guarantee"]["max_prior"] == 1e-4
    assert uni["guarantee"]["max_prior"] == 1.0 / 10**6
    two = _plan(mechanism="rr", domain_size=1000, n=10**6, releases=2, target={"bayes_error": 0.5})
    assert two["params"]["epsilon"] < uni["params"]["epsilon"]


def test_common_names_and_pinned_aliases_agree():
    a = _plan(mechanism="rr", domain=100, users=28629, target={"bayes_error": 0.8})
    b = _plan(mechanism="rr", domain_size=100, n=28629, target={"bayes_error": 0.8})
    assert a["params"] == b["params"] and a["guarantee"] == b["guarantee"]
    c = _plan(mechanism="rr", domain=gss_labels(), users=28629, target={"bayes_error": 0.8})
    assert c["params"]["mu"] == a["params"]["mu"] and c["domain"]["labels"] == gss_labels()


def test_users_from_a_data_file_is_a_planning_input(shared_data_dir):
    path = str(shared_data_dir / "gss_vocab.csv")
    plan = _plan(mechanism="rr", domain=gss_labels(), users={"data": path}, target={"bayes_error": 0.8})
    assert plan["guarantee"]["n"] == 28629
    assert plan["planning_inputs"] == [{"what": "users (n)", "source": path, "private": False, "value": 28629}]
    assert FAMILY.verify(plan).holds
    bad = copy.deepcopy(plan)
    bad["planning_inputs"][0]["value"] = 28630
    assert not FAMILY.verify(bad).holds  # the plan's n no longer matches what was read


@pytest.mark.parametrize("raw, field", [
    ({"mechanism": "rr", "domain_size": 10, "n": 100, "target": {}}, "target"),
    ({"mechanism": "rr", "domain_size": 10, "n": 100, "target": {"bayes_error": 0.5, "epsilon": 1}}, "target"),
    ({"mechanism": "rr", "n": 100, "target": {"epsilon": 1}}, "domain_size"),
    ({"mechanism": "rr", "domain_size": 10, "target": {"epsilon": 1}}, "users"),
    ({"mechanism": "rr", "domain_size": 1, "n": 100, "target": {"epsilon": 1}}, "domain_size"),
    ({"mechanism": "rr", "domain": 1, "n": 100, "target": {"epsilon": 1}}, "domain"),
    ({"mechanism": "rr", "domain": ["a", "a"], "n": 100, "target": {"epsilon": 1}}, "domain"),
    ({"mechanism": "rr", "domain_size": 10, "n": 100, "target": {"bayes_error": 1.5}}, "target.bayes_error"),
    ({"mechanism": "rr", "domain_size": 10, "n": 100, "target": {"bayes_error": 0.9}}, "target.bayes_error"),
    ({"mechanism": "rr", "domain_size": 10, "n": 100, "target": {"epsilon": float("nan")}}, "target.epsilon"),
    ({"mechanism": "rr", "domain_size": 10, "n": 100, "target": {"bayes_error": 0.5, "max_prior": 1e-5}},
     "target.max_prior"),
    ({"mechanism": "glh", "domain_size": 10, "n": 100, "g_max": 1, "target": {"epsilon": 1}}, "g_max"),
    ({"mechanism": "rr", "domain_size": 3, "domain": ["a", "b"], "n": 100, "target": {"epsilon": 1}}, "domain_size"),
    ({"mechanism": "rr", "domain_size": 10, "n": 100, "users": 100, "target": {"epsilon": 1}}, "n"),
    ({"mechanism": "rr", "domain_size": 10, "n": 100, "target": {"epsilon": 1}, "bogus": 1}, "bogus"),
    ({"mechanism": "rr", "domain_size": 10**6, "n": 10, "target": {"epsilon": 1e-13}}, "target"),
    ({"mechanism": "rr", "domain_size": 10, "n": 100, "target": {"epsilon": 700.0}}, "target.epsilon"),
    ({"mechanism": "rr", "domain_size": 10, "n": 100, "target": {"epsilon": "1.0"}}, "target.epsilon"),
    ({"mechanism": "rr", "domain": 10, "users": {"data": "/nonexistent/users.csv"}, "target": {"epsilon": 1}},
     "users.data"),
    ({"mechanism": "rr", "domain": 10, "users": {"file": "x.csv"}, "target": {"epsilon": 1}}, "users"),
])
def test_spec_errors_name_the_field(raw, field):
    with pytest.raises(SpecError) as err:
        planner.make_plan(raw)
    assert err.value.field == field


@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
def test_practical_range_plans_or_spec_error():
    """epsilon in [1e-6, 100] (the range of every family), |X| in {2, 100, 10^6}, n in {2, 10, 10^7}: a plan or a
    SpecError, nothing else."""
    planned = refused = 0
    for epsilon in list(np.geomspace(1e-6, 100, 7)) + [100.0]:
        for k in (2, 100, 10**6):
            for n in (2, 10, 10**7):
                for mech in ("pie", "rr", "glh"):
                    try:
                        plan = _plan(mechanism=mech, domain=k, users=n, target={"epsilon": float(epsilon)})
                    except SpecError:
                        refused += 1
                        continue
                    planned += 1
                    assert plan["guarantee"]["epsilon"] <= epsilon
                    assert all(math.isfinite(v) for v in (plan["params"]["epsilon"], plan["guarantee"]["alpha_bits"]))
                    mechanisms.load(plan)  # the runtime's privacy map agrees with the exact claims
    assert planned > 150
    plan = _plan(mechanism="pie", domain=10**6, users=10, target={"epsilon": 100.0})  # OverflowError before
    assert plan["params"]["mu"] == 1 - 2**-48 and FAMILY.verify(plan).holds


# ------------------------------------------------------------------ tampering
def _gss_glh():
    return _plan(mechanism="glh", domain=100, users=28629, g_max=65536, target={"bayes_error": 0.8})


def _rr_plan():
    return _plan(mechanism="rr", domain=100, users=28629, target={"bayes_error": 0.8})


@pytest.mark.parametrize("make, edit", [
    (_rr_plan, lambda p: p["params"].__setitem__("mu", p["params"]["mu"] + 2**-48)),
    (_gss_glh, lambda p: p["params"].__setitem__("mu", p["params"]["mu"] + 2**-48)),
    (_gss_glh, lambda p: p["params"].__setitem__("g", p["params"]["g"] + 1)),
    (_rr_plan, lambda p: p["guarantee"].__setitem__("releases", 2)),
    (_rr_plan, lambda p: p["guarantee"].__setitem__("max_prior", p["guarantee"]["max_prior"] / 2)),
    (_rr_plan, lambda p: p["guarantee"].__setitem__("bayes_error_lower_bound", 0.9)),
])
def test_one_step_toward_less_privacy_fails_verify_and_load(make, edit):
    plan = make()
    bad = copy.deepcopy(plan)
    edit(bad)
    assert not FAMILY.verify(bad).holds
    with pytest.raises(mechanisms.PlanError):
        mechanisms.load(bad)  # verification.holds is still true: the runtime's own checks refuse it
    with pytest.raises(PrivacyViolation):
        planner.write_plan(bad, "/nonexistent/never.json")


@pytest.mark.parametrize("edit, needle", [
    (lambda p: p["guarantee"].__setitem__("n", 28630), "guarantee.n"),
    (lambda p: p["guarantee"].__setitem__("releases", 2), "releases"),
    (lambda p: p["guarantee"].__setitem__("max_prior", 1e-4), "guarantee.max_prior"),
    (lambda p: p["params"].__setitem__("g", 70000), "params.g"),
    (lambda p: (p["domain"].__setitem__("size", 101), p["params"].__setitem__("domain_size", 101)), "domain"),
    (lambda p: p["guarantee"].__setitem__("epsilon", p["guarantee"]["epsilon"] * (1 - 1e-15)), "guarantee.epsilon"),
    (lambda p: p["guarantee"].__setitem__("alpha_bits", p["guarantee"]["alpha_bits"] * (1 - 1e-15)), "alpha_bits"),
    (lambda p: p["spec"]["target"].__setitem__("bayes_error", 0.81), "target"),
])
def test_plan_must_match_its_numbers_and_spec(edit, needle):
    bad = _gss_glh()
    edit(bad)
    res = FAMILY.verify(bad)
    assert not res.holds and needle in res.message, res.message


def test_nan_and_malformed_plans_are_format_errors():
    plan = _rr_plan()
    for part, key in (("params", "epsilon"), ("params", "mu"), ("guarantee", "alpha_bits")):
        bad = copy.deepcopy(plan)
        bad[part][key] = float("nan")
        with pytest.raises(PlanFormatError, match="finite"):
            FAMILY.verify(bad)
        with pytest.raises(mechanisms.PlanError, match="finite"):
            mechanisms.load(bad)
    bad = copy.deepcopy(plan)
    del bad["guarantee"]["alpha_bits"]
    with pytest.raises(PlanFormatError):
        FAMILY.verify(bad)
    bad = copy.deepcopy(plan)
    bad["params"]["mu"] = 0.3  # not a multiple of 2^-48
    with pytest.raises(PlanFormatError):
        FAMILY.verify(bad)
    glh = _gss_glh()
    del glh["params"]["g"]
    with pytest.raises(PlanFormatError, match="g"):
        FAMILY.verify(glh)
    unverified = dict(plan, verification={"holds": False, "message": "x"})
    with pytest.raises(mechanisms.PlanError, match="verification"):
        mechanisms.load(unverified)


@settings(max_examples=40, deadline=None)
@given(beta=st.floats(0.05, 0.95), n=st.integers(100, 10**8), k=st.integers(2, 10**7),
       mech=st.sampled_from(["rr", "glh", "pie"]), t=st.integers(1, 3))
def test_target_round_trip(beta, n, k, mech, t):
    raw = {"mechanism": mech, "domain_size": k, "n": n, "releases": t, "g_max": 2**20, "target": {"bayes_error": beta}}
    try:
        plan = planner.make_plan(raw)
    except SpecError as exc:  # unreachable by Fano's bound, or below the grid
        assert exc.field in ("target.bayes_error", "target")
        return
    assert FAMILY.verify(plan).holds
    gu = plan["guarantee"]
    size = plan["params"].get("g", k)
    mu = plan["params"]["mu"]
    theta = (size * mu - 1) / (size - 1)
    e = t * math.log(mu * (size - 1) / (1 - mu))
    alpha = min(t * theta * min(math.log2(n), math.log2(k)), min(e, e * e) / math.log(2), math.log2(n),
                t * math.log2(k))
    assert alpha <= gu["alpha_bits"] * (1 + 1e-12)
    assert 1 - (gu["alpha_bits"] + 1) / math.log2(n) >= beta


def test_schema_part_is_composed():
    part = load_schema("pie")
    assert part["properties"]["guarantee"]["properties"]["notion"] == {"const": "LDP+PIE"}
    plan = _gss_glh()
    bad = copy.deepcopy(plan)
    bad["guarantee"]["notion"] = "LDP"
    with pytest.raises(PlanFormatError, match="notion"):
        validate_plan(bad)


# ------------------------------------------------------------------ inputs, options, CLI
def test_read_inputs_labels_or_indices(tmp_path):
    labeled = _plan(mechanism="rr", domain=["x", "y", "z"], users=100, target={"epsilon": 1.0})
    f = tmp_path / "items.csv"
    f.write_text("user,item\n1,y\n2,z\n3,x\n")
    assert FAMILY.read_inputs(labeled, f).tolist() == [1, 2, 0]
    f.write_text("item\n1\n")
    with pytest.raises(InputDataError, match="must be one of domain.labels"):
        FAMILY.read_inputs(labeled, f)  # with labels, items are labels
    counted = _plan(mechanism="rr", domain=3, users=100, target={"epsilon": 1.0})
    f.write_text("item\n2\n0\n")
    assert FAMILY.read_inputs(counted, f).tolist() == [2, 0]
    f.write_text("item\n3\n")
    with pytest.raises(InputDataError, match=r"0-based index in \[0, 3\)"):
        FAMILY.read_inputs(counted, f)
    f.write_text("value\n1\n")
    with pytest.raises(InputDataError, match="item"):
        FAMILY.read_inputs(counted, f)
    assert "item" in FAMILY.input_doc


def test_simulate_options_are_typed():
    from ldpplan.planner._report import SimulateOptions

    plan = _plan(mechanism="rr", domain=20, users=500, target={"bayes_error": 0.3})
    with pytest.raises(SpecError, match="valid: alpha, bayes_errors, methods, threshold_fill"):
        FAMILY.simulate(plan, SimulateOptions(trials=1, extra={"bogus": "1"}))
    with pytest.raises(SpecError, match="methods"):
        FAMILY.simulate(plan, SimulateOptions(trials=1, extra={"methods": "empirical,magic"}))
    with pytest.raises(SpecError, match="bayes_errors"):
        FAMILY.simulate(plan, SimulateOptions(trials=1, extra={"bayes_errors": "0.5,1.5"}))
    calls = []
    rep = FAMILY.simulate(plan, SimulateOptions(trials=2, seed=1, extra={"methods": "empirical,em",
                                                                          "bayes_errors": "0.2,0.3"}),
                          progress=lambda a, t: calls.append((a, t)))
    assert len(rep.data["results"]) == 4 and calls == [(0, 8)] + [(1, 8)] * 8   # the total first (issue 27)
    assert {r["mechanism"] for r in rep.data["results"]} == {"rr", "glh"}


def test_cli_plan_verify_perturb_estimate(tmp_path):
    runner = CliRunner()
    out = tmp_path / "gss.json"
    r = runner.invoke(main_cli(), ["plan", "--example", "pie-gss", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "Bayes error" in r.output
    r = runner.invoke(main_cli(), ["verify", str(out)])
    assert r.exit_code == 0 and "holds" in r.output
    plan = json.loads(out.read_text())
    plan["params"]["mu"] += 2.0**-48
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(plan))
    assert runner.invoke(main_cli(), ["verify", str(bad)]).exit_code == 1
    spec = tmp_path / "spec.toml"
    spec.write_text('mechanism = "rr"\ndomain_size = 100\nn = 28629\n[target]\nbayes_error = 2.0\n')
    r = runner.invoke(main_cli(), ["plan", str(spec)])
    assert r.exit_code == 2 and "target.bayes_error" in r.output
    items = tmp_path / "items.csv"
    items.write_text("item\n" + "\n".join(["60+|16 yrs|male|yes"] * 30 + ["18-29|12 yrs|female|no"] * 20) + "\n")
    rep = tmp_path / "reports.npz"
    r = runner.invoke(main_cli(), ["perturb", str(out), "--input", str(items), "-o", str(rep), "--seed", "1"])
    assert r.exit_code == 0, r.output
    for method in ("threshold", "empirical", "em"):  # GLH has the three estimators (issue #9)
        r = runner.invoke(main_cli(), ["estimate", str(out), str(rep), "--json", "--method", method])
        assert r.exit_code == 0, r.output
        doc = json.loads(r.output)
        assert doc["method"] == method and doc["n"] == 50 and len(doc["frequency"]) == 100
        assert doc["labels"] == gss_labels()
    r = runner.invoke(main_cli(), ["estimate", str(out), str(rep), "--method", "magic"])
    assert r.exit_code == 2 and "empirical" in r.output


def main_cli():
    from ldpplan.planner.cli import main

    return main


@pytest.mark.slow
def test_simulation_matches_prediction_on_real_data(shared_data_dir, tmp_path):
    from ldpplan.planner._report import SimulateOptions

    plan = _plan(mechanism="rr", domain=gss_labels(), users=28629, target={"bayes_error": 0.8})
    rep = FAMILY.simulate(plan, SimulateOptions(data=str(shared_data_dir / "gss_vocab.csv"), trials=40, seed=0,
                                                extra={"methods": "empirical"}))
    rr = next(r for r in rep.data["results"] if r["mechanism"] == "rr")
    m = rr["measured"]["empirical"]
    # the mean of 40 totals is within 5 standard errors of Prop. 4.6 (exact for fixed data)
    assert abs(m["l2_total_mean"] - rr["predicted_l2_total"]) <= 5 * m["l2_total_se"]
    assert rr["exact_l2_total_for_runtime"] == pytest.approx(rr["predicted_l2_total"], rel=1e-6)
    glh = next(r for r in rep.data["results"] if r["mechanism"] == "glh")
    assert glh["measured"]["empirical"]["l2_total_mean"] < m["l2_total_mean"]
    rep.plot(str(tmp_path / "pie.png"))
    assert (tmp_path / "pie.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_family_implements_the_protocol():
    from ldpplan.planner._common import options_help

    assert isinstance(FAMILY, families.Family)
    assert families.family_for("pie") is FAMILY and families.family_for("glh") is FAMILY
    assert FAMILY.plan_mechanisms == ("rr", "glh") and set(FAMILY.examples) == {"pie-rr", "pie-glh", "pie-gss"}
    keys = [row[0] for row in options_help(FAMILY.options_model)]
    assert keys == ["bayes_errors", "methods", "alpha", "threshold_fill"]
    assert all(row[2] for row in options_help(FAMILY.options_model))  # every option is described


def test_coordinated_edits_are_not_the_spec_solution():
    from ldpplan.mechanisms.pie import keep_probability

    plan = _gss_glh()
    bad = copy.deepcopy(plan)
    bad["params"]["g"] = plan["params"]["g"] // 2  # with a consistent mu: the numbers alone hold together
    bad["params"]["mu"] = keep_probability(bad["params"]["epsilon"], bad["params"]["g"])
    res = FAMILY.verify(bad)
    assert not res.holds and "params.g" in res.message, res.message
    rr = _rr_plan()
    bad = copy.deepcopy(rr)
    bad["params"]["epsilon"] = rr["params"]["epsilon"] / 2  # more private, but not what the spec solves to
    bad["params"]["mu"] = keep_probability(bad["params"]["epsilon"], 100)
    res = FAMILY.verify(bad)
    assert not res.holds and "params.epsilon" in res.message, res.message


def test_simulate_without_data_replans_large_plans_on_a_synthetic_sample():
    from ldpplan.planner._report import SimulateOptions

    plan = planner.make_plan(EXAMPLES["pie-glh"])  # |X| = 10,500,393: n |X| hash evaluations are out of reach
    rep = FAMILY.simulate(plan, SimulateOptions(trials=1, seed=0, extra={"methods": "empirical"}))
    assert rep.data["domain_size"] == 1000 and rep.data["n"] == 20000
    assert "re-planned" in rep.data["source"]
    for rec in rep.data["results"]:
        assert rec["bayes_error_lower_bound"] >= 0.5  # the plan's target, for the synthetic n and |X|


def test_prior_bound_from_a_weight_file_is_a_planning_input(tmp_path):
    weights = tmp_path / "weights.csv"
    weights.write_text("user,weight\n" + "\n".join(f"{u},{1 + (u == 0) * 99}" for u in range(1000)) + "\n")
    spec = {"mechanism": "rr", "domain": 100, "users": 1000,
            "target": {"bayes_error": 0.3, "max_prior": {"data": str(weights), "column": "weight"}}}
    plan = planner.make_plan(spec)
    prior = 100 / 1099  # max w / sum w
    assert plan["guarantee"]["max_prior"] == pytest.approx(prior) and plan["guarantee"]["prior"] == "max_prior"
    assert plan["planning_inputs"] == [{"what": "target.max_prior", "source": f"{weights} (column weight)",
                                        "private": False, "value": plan["guarantee"]["max_prior"]}]
    assert FAMILY.verify(plan).holds
    uniform = _plan(mechanism="rr", domain=100, users=1000, target={"bayes_error": 0.3})
    assert plan["params"]["epsilon"] < uniform["params"]["epsilon"]  # a sharper prior needs more noise
    bad = copy.deepcopy(plan)
    bad["planning_inputs"][0]["value"] = prior / 2
    assert not FAMILY.verify(bad).holds
    bad = copy.deepcopy(plan)
    bad["planning_inputs"] = []
    with pytest.raises(PlanFormatError, match="planning_inputs"):
        FAMILY.verify(bad)
    weights.write_text("user,weight\n1,-1\n")
    with pytest.raises(SpecError) as err:
        planner.make_plan(spec)
    assert err.value.field == "target.max_prior.data"


@pytest.mark.parametrize("name", ["pie-gss", "pie-rr"])
def test_predictions_are_recomputed_by_verify(name):
    # claims.predicted_of writes them and verify recomputes them (never reads them)
    import copy

    plan = planner.make_plan(EXAMPLES[name])
    assert planner.verify_plan(plan).holds
    for key in plan["predicted"]:
        bad = copy.deepcopy(plan)
        bad["predicted"][key]["value"] = bad["predicted"][key]["value"] * (1 + 1e-6) + 1e-12
        check = planner.verify_plan(bad)
        assert not check.holds and f"predicted.{key}" in check.message, key

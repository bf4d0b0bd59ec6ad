"""The one runtime API (issue 18; docs/ARCHITECTURE.md, "The one runtime API") for every class in RUNTIMES.

* ``from_plan`` builds every registered class from every example plan, agreeing with ``load``
  and with the plan's domain; every plan mechanism has an example;
* constructors are keyword-only and say the domain one way (``domain``: a size or labels),
  and rebuilding a runtime from its own attributes through the constructor gives the same
  privacy map;
* every ``estimate`` accepts ``tol`` and ``max_iter`` for every method and refuses bad ones;
  iterative methods report iterations and a certified gap; every EM/MLE solver returns the one
  :class:`SimplexFit` and stops by the one rule;
* every ``privacy_map()`` uses the vocabulary with one type per key.

Nothing here names one family: a new runtime class is tested by registering it.
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest

from _family_helpers import example_runtime, family_cases, perturb, read_inputs, spec_domain_size

from ldpplan.mechanisms import RUNTIMES, Estimate, runtime_class
from ldpplan.mechanisms._fit import SimplexFit, check_options
from ldpplan.mechanisms._protocol import PRIVACY_MAP_TYPES, check_privacy_map, domain_labels

CASES = family_cases()
#: estimating every method on a domain of millions of items (PIE's location examples) takes seconds
ESTIMATE_CASES = [pytest.param(*c.values, marks=(*c.marks, pytest.mark.slow), id=c.id)
                  if not isinstance(c.values[0], Exception)
                  and 1e5 < spec_domain_size(c.values[0].examples[c.values[1]]) < float("inf")
                  else c for c in CASES]


def _constructor_parameters(cls) -> dict[str, inspect.Parameter]:
    params = dict(inspect.signature(cls.__init__).parameters)
    params.pop("self")
    return params


@pytest.mark.parametrize("mechanism", sorted(RUNTIMES))
def test_constructor_is_keyword_only_with_one_domain(mechanism):
    cls = runtime_class(mechanism)
    assert isinstance(inspect.getattr_static(cls, "from_plan"), classmethod), f"{mechanism}: from_plan"
    params = _constructor_parameters(cls)
    positional = [n for n, p in params.items() if p.kind is not inspect.Parameter.KEYWORD_ONLY]
    assert not positional, f"{cls.__name__}: constructor parameters must be keyword-only (got {positional})"
    assert "domain" in params and params["domain"].default is inspect.Parameter.empty, cls.__name__
    assert not {"labels", "domain_size", "eps"} & set(params), f"{cls.__name__}: one way to say the domain"


def test_every_plan_mechanism_has_an_example():
    from ldpplan.planner.families import all_examples

    seen = set()
    for fam, _spec in all_examples().values():
        seen |= set(fam.plan_mechanisms)
    assert set(RUNTIMES) <= seen


@pytest.mark.parametrize("fam, name", CASES)
def test_from_plan_round_trips_every_example(fam, name, request):
    plan, loaded = example_runtime(fam, name, request)
    cls = runtime_class(plan["mechanism"])
    mech = cls.from_plan(plan)
    assert type(mech) is type(loaded) is cls
    assert mech.mechanism == plan["mechanism"]
    assert (mech.domain_size, mech.labels) == (plan["domain"]["size"], plan["domain"]["labels"])
    assert mech.privacy_map() == loaded.privacy_map() and repr(mech) == repr(loaded)
    check_privacy_map(mech.privacy_map())
    # the constructor takes the runtime's own numbers back under the same names
    params = _constructor_parameters(cls)
    kwargs = {"domain": mech.labels if mech.labels is not None else mech.domain_size}
    for key in params:
        if key != "domain" and hasattr(mech, key):
            kwargs[key] = getattr(mech, key)
    missing = [k for k, p in params.items() if p.default is inspect.Parameter.empty and k not in kwargs]
    assert not missing, f"{cls.__name__}: required constructor parameters that are not attributes: {missing}"
    rebuilt = cls(**kwargs)
    assert rebuilt.domain_size == mech.domain_size and rebuilt.labels == mech.labels
    check_privacy_map(rebuilt.privacy_map())
    if "privacy" not in params:
        assert rebuilt.privacy_map() == mech.privacy_map()
        assert repr(rebuilt) == repr(mech)
    else:  # IDUE: the levels' map comes from the plan; built directly, the plain LDP map of the same numbers
        assert rebuilt.privacy_map() == {"notion": "LDP", "epsilon": mech.privacy_map()["ldp_epsilon"]}


@pytest.mark.parametrize("fam, name", ESTIMATE_CASES)
def test_every_method_takes_tol_and_max_iter(fam, name, request, tmp_path):
    plan, mech = example_runtime(fam, name, request)
    signature = inspect.signature(mech.estimate).parameters
    for key in ("tol", "max_iter"):
        assert key in signature and signature[key].kind is inspect.Parameter.KEYWORD_ONLY, (mech.mechanism, key)
    assert not {"em_tol", "em_max_iter", "gap_tol", "rtol"} & set(signature), mech.mechanism
    reports = perturb(mech, read_inputs(fam, plan, tmp_path, 300, np.random.default_rng(1)), np.random.default_rng(2))
    for method in mech.methods:
        est = mech.estimate(reports, method, tol=1e-9, max_iter=500)
        assert isinstance(est, Estimate) and est.method == method
        assert est.frequency.shape == (mech.domain_size,)
        if est.iterations and method == "ems":  # EM with smoothing is no MLE: the documented exception (no gap)
            assert est.optimality_gap is None and est.iterations <= 500
        elif est.iterations:  # an iterative method: it certifies where it stopped
            assert est.optimality_gap is not None and est.optimality_gap >= 0
            assert est.iterations <= 500
            assert est.optimality_gap <= 1e-9 * abs(est.log_likelihood) or est.iterations == 500
    with pytest.raises(ValueError, match="tol"):
        mech.estimate(reports, mech.methods[-1], tol=-1.0, max_iter=10)
    with pytest.raises(ValueError, match="max_iter"):
        mech.estimate(reports, mech.methods[-1], tol=1e-9, max_iter=0)


def test_privacy_map_vocabulary_is_checked():
    check_privacy_map({"notion": "ULDP", "epsilon": 1.0, "sensitive": [0, 2], "protected_outputs": "Y_P in words"})
    bad = [({"notion": "LDP"}, "epsilon"),
           ({"notion": "ULDP", "epsilon": 1.0, "protected_outputs": [0, 1]}, "protected_outputs"),
           ({"notion": "LDP", "epsilon": np.float64(1.0)}, "epsilon"),
           ({"notion": "LDP+PIE", "epsilon": 1.0, "n": True}, "n"),
           ({"notion": "LDP", "epsilon": 1.0, "levels": {"a": 1}}, "levels"),
           ({"notion": "ULDP", "epsilon": 1.0, "sensitive": [0.0]}, "sensitive"),
           ({"notion": "LDP", "epsilon": 1.0, "eps": 1.0}, "eps")]
    for pm, key in bad:
        with pytest.raises(ValueError, match=f"privacy_map.{key}"):
            check_privacy_map(pm)
    assert set(PRIVACY_MAP_TYPES) >= {"notion", "epsilon", "protected_outputs", "sensitive", "levels"}


def test_domain_is_a_size_or_distinct_labels():
    assert domain_labels(3) == (3, None)
    assert domain_labels(np.int64(2)) == (2, None)
    assert domain_labels(["a", "b"]) == (2, ["a", "b"])
    assert domain_labels(np.array(["x", "y", "z"])) == (3, ["x", "y", "z"])
    for bad, rule in ((True, "size"), ("ab", "size"), (1.5, "size"), (["a", "a"], "distinct"), (1, "at least 2")):
        with pytest.raises(ValueError, match=f"domain: .*{rule}"):
            domain_labels(bad, low=2)


def test_baseline_constructors_follow_the_api():
    from ldpplan.mechanisms.uldp import BasicRAPPOR, PersonalizedULDP

    for cls in (BasicRAPPOR, PersonalizedULDP):
        params = _constructor_parameters(cls)
        assert "domain" in params and all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params.values())
    rappor = BasicRAPPOR(domain=["a", "b", "c"], theta=0.75, psi=0.25)
    assert rappor.labels == ["a", "b", "c"]
    assert rappor.privacy_map() == {"notion": "LDP", "epsilon": pytest.approx(2 * np.log(3.0))}
    check_privacy_map(rappor.privacy_map())
    with pytest.raises(TypeError):
        BasicRAPPOR(3, 0.75, 0.25)


# --------------------------------------------------------------------------- the estimators' one result and rule
def _tiny_problem():
    rng = np.random.default_rng(3)
    a, b = 0.75, 0.25
    f = np.array([0.5, 0.3, 0.15, 0.05])
    x = rng.choice(4, size=400, p=f)
    y = rng.random((400, 4)) < np.where(np.arange(4)[None, :] == x[:, None], a, b)
    return y, a, b


def _solvers():
    from ldpplan.mechanisms import _estimators, _mle, _unary_em, _unary_mle

    y, a, b = _tiny_problem()
    counts = np.bincount(np.argmax(y, axis=1), minlength=4).astype(float) + 1
    lik = np.where(np.eye(4, dtype=bool), 0.55, 0.15)
    s = y.sum(axis=0).astype(float)
    lo, hi = np.full(4, (1 - a) / (1 - b)), np.full(4, a / b)
    return {
        "em_simplex": (lambda **kw: _estimators.em_simplex(lik, counts, **kw), True),
        "em_simplex squarem": (lambda **kw: _estimators.em_simplex(lik, counts, accelerate=True, **kw), True),
        "unary_em": (lambda **kw: _unary_em.unary_em(s, 400, a, b, **kw), True),
        "unary_em_full": (lambda **kw: _unary_em.unary_em_full(y, a, b, **kw), True),
        "binary_rows_em": (lambda **kw: _unary_em.binary_rows_em(y, lo, hi, **kw), True),
        "binary_rows_mle": (lambda **kw: _unary_mle.binary_rows_mle(y, lo, hi, **kw), True),
        "unary_mle_full": (lambda **kw: _unary_mle.unary_mle_full(y, a, b, **kw), True),
        "rr_mle": (lambda **kw: _mle.rr_mle(counts, 0.55, 0.15), False),
        "urr_mle": (lambda **kw: _mle.urr_mle(counts, [0, 1], 0.5, 0.25, 0.5), False),
        "unary_composite_mle": (lambda **kw: _mle.unary_composite_mle(s, 400, a, b), False),
    }


@pytest.mark.parametrize("name", sorted(_solvers()))
def test_every_solver_returns_the_one_fit_and_stops_by_the_one_rule(name):
    solve, iterative = _solvers()[name]
    res = solve(tol=1e-10, max_iter=5000)
    assert isinstance(res, SimplexFit)
    assert res.frequency.sum() == pytest.approx(1.0, abs=1e-12) and np.all(res.frequency >= 0)
    assert not res.frequency.flags.writeable
    if not iterative:
        assert (res.iterations, res.converged, res.optimality_gap) == (0, True, 0.0)
        return
    # the rule: converged exactly when the certified gap is within tol |L|
    assert res.converged and res.optimality_gap <= 1e-10 * abs(res.log_likelihood)
    capped = solve(tol=0.0, max_iter=1)
    assert capped.iterations == 1 and not capped.converged and capped.optimality_gap > 0
    assert res.log_likelihood >= capped.log_likelihood
    # the certificate holds: the best point is at most optimality_gap above the capped one
    best = solve(tol=1e-14, max_iter=20000)
    assert best.log_likelihood - capped.log_likelihood <= capped.optimality_gap + 1e-9 * abs(best.log_likelihood)


def test_options_are_checked_once():
    assert check_options(0, 1) == (0.0, 1)
    for tol, max_iter, field in ((-1e-3, 5, "tol"), (float("nan"), 5, "tol"), (True, 5, "tol"), (1e-9, 0, "max_iter"),
                                 (1e-9, 2.5, "max_iter"), (1e-9, True, "max_iter")):
        with pytest.raises(ValueError, match=field):
            check_options(tol, max_iter)


def test_simplex_fit_is_the_only_estimator_result_type():
    import dataclasses

    from ldpplan.mechanisms import _estimators, _fit, _mle, _unary_em, _unary_mle

    for module in (_estimators, _fit, _mle, _unary_em, _unary_mle):
        results = [obj for obj in vars(module).values()
                   if isinstance(obj, type) and dataclasses.is_dataclass(obj)
                   and {"frequency", "freq"} & {f.name for f in dataclasses.fields(obj)}]
        assert all(obj is SimplexFit for obj in results), (module.__name__, results)

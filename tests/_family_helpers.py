"""Helpers shared by the cross-family tests (conformance, generators, tamper).

Everything here is generic: families come from ``ldpplan.planner.families.all_families()``,
inputs are written in the pinned CSV layouts and read by each family's own ``read_inputs``,
and no family's field names appear.

What a cross-family test needs per plan mechanism (a small spec, an exact recomputation of the
claims, ...) is the family's own: its conformance module ``tests/test_<family>_conformance.py``
(found by that name, :func:`conformance`) declares it, and the tables here are derived from the
registry (``docs/ARCHITECTURE.md``, "A new family"). A conformance module defines:

* ``AGGREGATE_SPECS``: case name -> small spec (plans in well under a second), covering every plan
  mechanism of the family (``tests/test_aggregate_integrity.py``);
* ``interval_specs(n)``: plan mechanism -> spec of a plan for ``n`` users, and optionally
  ``interval_inputs(mechanism, items, counts, n) -> (data, means) | None``, the users' inputs when
  they are not one item per user (``tests/test_confidence_intervals.py``);
* ``exact_claims(plan)``: claim path -> exact ``Decimal`` value its numbers give, recomputed by the
  planner's exact arithmetic (a path starting with :data:`LOWER` is a lower bound, stored negated;
  ``tests/test_plan_gate.py``);
* ``epsilon_spec(epsilon)`` and ``EPSILON_FIELD``: a spec whose one epsilon is ``epsilon`` and that
  field's name (and ``EPSILON_MAX`` when the family's spec stops below the common 100 nats;
  ``tests/test_cli_polish.py``, one epsilon range in every family);
* its predicted-vs-simulated tests, the main one named by ``PREDICTED_VS_SIMULATED``
  (``tests/test_predicted_vs_simulated.py`` checks that every family has one);
* optionally ``write_inputs(plan, tmp_path, n, rng) -> [(header, path)]`` and ``fixed_truth(plan)``: a
  family whose users hold something other than one item of the pinned layouts (records: one value per
  attribute, a multi-column CSV) writes its own inputs (``rng`` None: every user holds the first value)
  and gives their true frequencies (default: the first domain element, :func:`fixed_truth`);
  ``interval_inputs`` may then return ``(data, means, truth)``, and ``labelled_spec()`` gives
  ``tests/test_labels_whitespace.py`` a spec with a labelled domain (spec, field, its labels, the plan's labels);
* optionally ``VECTORS = False`` and ``NO_VECTORS_REASON``: its plan mechanisms have no language-neutral test
  vector (``vectors/``; the TypeScript client does not run them), explicitly (``tests/test_vectors.py``);
* optionally ``EXPENSIVE_AUDITS``: names of its examples whose audit at default trials takes
  seconds (``tests/test_audit_search.py`` runs them under 3 seeds plus the exact false-flag
  probability over 20 runs, instead of 20 seeded runs; measured 20 of 20 in docs/AUDIT.md).
"""
from __future__ import annotations

import copy
import importlib
import json
import math

import numpy as np
import pytest

__all__ = ["family_cases", "small_example_per_family", "needs_real_data", "spec_domain_size", "example_plan",
           "example_runtime", "write_inputs", "read_inputs", "subset", "sum_aggregates", "numbers_in", "perturb",
           "LOWER", "conformance", "conformance_of", "aggregate_specs", "interval_specs", "exact_claims",
           "check_prediction", "expensive_audits", "file_plan", "report_page", "fixed_truth"]

#: The first element of an :func:`exact_claims` path that is a lower bound (stored negated).
LOWER = "<a lower bound>"


def conformance(fam):
    """The family's conformance module, ``tests/test_<family>_conformance.py`` (by its name)."""
    return importlib.import_module(f"test_{fam.name}_conformance")


def expensive_audits() -> list[str]:
    """The examples of every registered family whose audit takes seconds (``EXPENSIVE_AUDITS``)."""
    from ldpplan.planner.families import all_families

    return [name for fam in all_families() for name in getattr(conformance(fam), "EXPENSIVE_AUDITS", ())]


def conformance_of(mechanism: str):
    """The conformance module of the family that plans ``mechanism`` (a plan mechanism)."""
    from ldpplan.planner.families import family_of_plan

    return conformance(family_of_plan({"mechanism": mechanism}))


def aggregate_specs() -> dict[str, dict]:
    """Case name -> small spec: every registered family's ``AGGREGATE_SPECS`` (names are unique)."""
    from ldpplan.planner.families import all_families

    out: dict[str, dict] = {}
    for fam in all_families():
        specs = conformance(fam).AGGREGATE_SPECS
        assert not set(specs) & set(out), f"{fam.name}: case names already used: {sorted(set(specs) & set(out))}"
        out.update(specs)
    return out


def interval_specs(n: int) -> dict[str, dict]:
    """Plan mechanism -> spec of a plan for ``n`` users: every registered family's ``interval_specs(n)``."""
    from ldpplan.planner.families import all_families

    out: dict[str, dict] = {}
    for fam in all_families():
        specs = conformance(fam).interval_specs(n)
        assert set(specs) <= set(fam.plan_mechanisms), (fam.name, sorted(specs))
        out.update(specs)
    return out


def exact_claims(plan) -> dict:
    """Claim path -> exact ``Decimal``: the plan's family's ``exact_claims(plan)``."""
    return conformance_of(plan["mechanism"]).exact_claims(plan)


def check_prediction(name: str, predicted: float, samples, *, slack: float = 0.0, z: float = 4.0) -> None:
    """``|mean - predicted| <= z * se + slack * predicted`` (se from the trials' spread).

    Also asserts that the trials resolve the prediction to a few per cent (the test can fail).
    """
    x = np.asarray(samples, dtype=float)
    mean, se = float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))
    assert abs(mean - predicted) <= z * se + slack * abs(predicted), (
        f"{name}: simulated {mean:.6g} +- {se:.3g} (se, {x.size} trials) vs predicted {predicted:.6g}")
    # the test can fail: the prediction is resolved to a few per cent
    assert z * se + slack * abs(predicted) < 0.15 * abs(predicted), f"{name}: too few trials to test anything"


def family_cases(include_data: bool = True) -> list:
    """``pytest.param(family, example_name)`` for every registered family's examples.

    A registry that fails to load yields a single case carrying the exception, which
    :func:`example_plan` turns into a failure (never a silent empty parametrization).
    Examples that read real data are marked ``slow`` (large domains).
    """
    try:
        from ldpplan.planner.families import all_families

        fams = all_families()
    except Exception as exc:  # noqa: BLE001 - reported by the test that receives it
        return [pytest.param(exc, None, id="family-registry")]
    out = []
    for fam in fams:
        for name, spec in fam.examples.items():
            data = needs_real_data(spec)
            if include_data or not data:
                # examples on real data, and paper-scale domains (the PIE spec's 10.5 million items),
                # are the slow tier's
                big = spec_domain_size(spec) > 10_000 and spec_domain_size(spec) != math.inf
                marks = [pytest.mark.slow] if data or big else []
                out.append(pytest.param(fam, name, id=f"{fam.name}-{name}", marks=marks))
    return out


def needs_real_data(spec) -> bool:
    """True when an example spec reads a data file (it names a CSV or the data folder)."""
    text = json.dumps(spec, default=str)
    return ".csv" in text or "LDPPLAN_DATA_DIR" in text


def spec_domain_size(spec) -> float:
    """The spec's common ``domain`` key as a size (int, or number of labels); inf if absent."""
    dom = spec.get("domain", spec.get("domain_size")) if isinstance(spec, dict) else None
    if isinstance(dom, int) and not isinstance(dom, bool):
        return dom
    return len(dom) if isinstance(dom, list) else math.inf


def small_example_per_family() -> list:
    """Per family, the example with the smallest domain that needs no real data (if any)."""
    best: dict[str, tuple] = {}
    for case in family_cases():
        fam, name = case.values
        if isinstance(fam, Exception):
            return [case]
        spec = fam.examples[name]
        key = (needs_real_data(spec), spec_domain_size(spec), name)
        if fam.name not in best or key < best[fam.name][0]:
            best[fam.name] = (key, case)
    return [case for _, case in best.values()]


_PLANS: dict[tuple[str, str], dict] = {}


def example_plan(fam, name, request) -> dict:
    """A fresh copy of the plan of an embedded example (solved once per session).

    Skips (through the ``shared_data_dir`` fixture) when the example reads real data that
    is absent.
    """
    import ldpplan

    if isinstance(fam, Exception):
        raise AssertionError(f"the family registry did not load: {type(fam).__name__}: {fam}")
    spec = fam.examples[name]
    if needs_real_data(spec):
        request.getfixturevalue("shared_data_dir")
    key = (fam.name, name)
    if key not in _PLANS:
        _PLANS[key] = ldpplan.planner.make_plan(copy.deepcopy(spec))
    return copy.deepcopy(_PLANS[key])


_PAGES: dict[tuple, str] = {}
_FILE_PLANS: dict[str, dict] = {}


def file_plan(path) -> dict:
    """A fresh copy of the plan of a spec file (``examples/*.toml``), solved once per session."""
    import ldpplan

    key = str(path)
    if key not in _FILE_PLANS:
        _FILE_PLANS[key] = ldpplan.planner.make_plan(path)
    return copy.deepcopy(_FILE_PLANS[key])


def report_page(key, plan) -> str:
    """The HTML report of ``plan`` (``ldpplan.planner.reporting.report``), rendered once per session
    under ``key``: the golden tests and the browser tests read the same page of an example, and the
    page's what-ifs (the family re-planning the changed specs) are the costly part."""
    if key not in _PAGES:
        from ldpplan.planner.reporting import report

        _PAGES[key] = report(copy.deepcopy(plan))
    return _PAGES[key]


def example_runtime(fam, name, request):
    """``(plan, runtime)`` of an example, through ``ldpplan.load``."""
    import ldpplan

    plan = example_plan(fam, name, request)
    return plan, ldpplan.load(plan)


def _layouts(values: list[str], n: int, rng: np.random.Generator | None):
    """The pinned CSV layouts: (header, rows) for n users; fixed input when rng is None."""
    pick = (lambda: values[0]) if rng is None else (lambda: values[int(rng.integers(len(values)))])
    kv, sets, single = [], [], []
    for u in range(n):
        k = 1 if rng is None else int(rng.integers(1, 3))
        chosen = list(dict.fromkeys(pick() for _ in range(k)))
        for x in chosen:
            value = 0.5 if rng is None else float(np.round(rng.uniform(-1, 1), 3))
            kv.append(f"{u},{x},{value}")
            sets.append(f"{u},{x}")
        single.append(chosen[0])
    return [("user,key,value", kv), ("user,item", sets), ("item", single)]


def write_inputs(plan, tmp_path, n: int, rng: np.random.Generator | None = None) -> list:
    """Write the ``n`` users' inputs in every pinned layout; returns [(header, path)].

    With ``rng`` None every user holds the first domain element (value 0.5 for key-value). A family whose
    conformance module defines ``write_inputs`` writes its own layout.
    """
    hook = getattr(conformance_of(plan["mechanism"]), "write_inputs", None)
    if hook is not None:
        return hook(plan, tmp_path, n, rng)
    labels = plan["domain"]["labels"]
    values = [str(x) for x in labels] if labels else [str(i) for i in range(int(plan["domain"]["size"]))]
    out = []
    for header, rows in _layouts(values, n, rng):
        path = tmp_path / f"inputs-{header.replace(',', '-')}-{n}-{'fixed' if rng is None else 'random'}.csv"
        path.write_text(header + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
        out.append((header, path))
    return out


def read_inputs(fam, plan, tmp_path, n: int, rng: np.random.Generator | None = None):
    """``n`` users' inputs read by the family's own ``read_inputs`` (first pinned layout it reads)."""
    errors = []
    for header, path in write_inputs(plan, tmp_path, n, rng):
        try:
            return fam.read_inputs(plan, path)
        except Exception as exc:  # noqa: BLE001 - the family's InputDataError for a layout it does not read
            errors.append(f"{header}: {type(exc).__name__}: {exc}")
    raise AssertionError(f"{fam.name}: no pinned CSV layout was readable: {errors}")


def fixed_truth(plan) -> np.ndarray:
    """True frequencies of the fixed inputs (every user holds the first domain element, or the family's
    ``fixed_truth(plan)``)."""
    hook = getattr(conformance_of(plan["mechanism"]), "fixed_truth", None)
    if hook is not None:
        return np.asarray(hook(plan), dtype=float)
    truth = np.zeros(int(plan["domain"]["size"]))
    truth[0] = 1.0
    return truth


def perturb(mech, data, rng):
    """``mech.perturb(data, rng=rng)``; a runtime with client state (``memoized``) gets a fresh memo,
    one user per row, round 0 (the runtime protocol's memoized call)."""
    if getattr(mech, "memoized", False):
        return mech.perturb(data, rng=rng, memo=mech.new_memo(), users=np.arange(len(data)), round=0)
    return mech.perturb(data, rng=rng)


def subset(reports, rows):
    """The reports of the given users (row indices), rebuilt through the pinned ``from_arrays``."""
    rows = np.asarray(rows)
    arrays = {k: np.asarray(v)[rows] for k, v in reports.to_arrays().items()}
    return type(reports).from_arrays(reports.mechanism, arrays)


def sum_aggregates(parts):
    """``parts[0] + parts[1] + ...`` (the merge under test)."""
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return total


def numbers_in(node, path=()):
    """Yield ``(path, value)`` for every int/float leaf of a JSON tree (bools excluded)."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from numbers_in(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from numbers_in(v, path + (i,))
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        yield path, node

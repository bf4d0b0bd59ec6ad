"""Records (Arcolezi et al., CIKM 2021; Wang et al., ICDE 2019): conformance declarations and predicted-vs-simulated tests.

The family's conformance module. The cross-family tests read it by its name (``_family_helpers.conformance``; the
contract is in that module's docstring): ``AGGREGATE_SPECS``, ``interval_specs`` and ``interval_inputs``,
``exact_claims``, ``epsilon_spec`` and ``EPSILON_FIELD``, ``PREDICTED_VS_SIMULATED``, and the records' own input
hooks ``write_inputs`` (a multi-column CSV, one column per attribute) and ``fixed_truth`` (every user holds the
first value of every attribute).
"""
from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest

from _family_helpers import check_prediction
from ldpplan import mechanisms, planner

_ATTRIBUTES = [{"name": "a", "domain": 3}, {"name": "b", "domain": ["x", "y", "z", "w"], "weight": 2.0},
               {"name": "c", "domain": 5, "weight": 0.5, "oracle": "oue"}]
_GRR = [dict(a, oracle="grr") for a in _ATTRIBUTES]


def _spec(mechanism: str, epsilon=1.0, attributes=None, **extra) -> dict:
    attrs = attributes if attributes is not None else (_GRR if mechanism == "rsfd" else _ATTRIBUTES)
    return {"mechanism": mechanism, "epsilon": epsilon, "attributes": attrs, **extra}


#: No test vectors (``vectors/``) for spl, smp, rsfd: the TypeScript client does not run records (issue 30).
VECTORS = False
NO_VECTORS_REASON = "the TypeScript client does not implement the records runtimes (spl, smp, rsfd) yet"

#: One small spec per plan mechanism (``test_aggregate_integrity.py``).
AGGREGATE_SPECS = {"records-spl": _spec("spl"), "records-smp": _spec("smp"), "records-rsfd": _spec("rsfd")}


def interval_specs(n: int) -> dict[str, dict]:
    """A plan per plan mechanism (``n`` unused)."""
    return {m: _spec(m, 2.0) for m in ("spl", "smp", "rsfd")}


def _skewed(k: int, n: int) -> np.ndarray:
    weights = np.linspace(3.0, 1.0, k)
    counts = np.floor(weights / weights.sum() * n).astype(int)
    counts[0] += n - counts.sum()
    return counts


def interval_inputs(mechanism, items, counts, n):
    """Records whose attributes are each skewed (every value held by >= 4% of users) and the concatenated truth."""
    plan = planner.make_plan(interval_specs(n)[mechanism])
    rng = np.random.default_rng(17)
    columns, truth = [], []
    for k in plan["params"]["domain_sizes"]:
        c = _skewed(k, n)
        columns.append(rng.permutation(np.repeat(np.arange(k), c)))
        truth.append(c / n)
    return np.stack(columns, axis=1), None, np.concatenate(truth)


def write_inputs(plan, tmp_path, n: int, rng=None) -> list:
    """The users' records as one CSV, one column per attribute (labels, or indices for a count domain)."""
    p, labels, start, cols = plan["params"], plan["domain"]["labels"], 0, []
    for j, (name, k) in enumerate(zip(p["names"], p["domain_sizes"])):
        values = [x[len(name) + 1:] for x in labels[start:start + k]]
        codes = np.zeros(n, dtype=int) if rng is None else rng.integers(0, k, n)
        cols.append([values[c] for c in codes])
        start += k
    path = tmp_path / f"records-{n}-{'fixed' if rng is None else 'random'}.csv"
    rows = [",".join(r) for r in zip(*cols)]
    path.write_text(",".join(p["names"]) + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return [(",".join(p["names"]), path)]


def fixed_truth(plan) -> np.ndarray:
    """The true frequencies when every user holds the first value of every attribute."""
    truth = np.zeros(plan["domain"]["size"])
    truth[np.concatenate([[0], np.cumsum(plan["params"]["domain_sizes"])[:-1]])] = 1.0
    return truth


def labelled_spec():
    """A records spec whose first attribute's domain is labels ``x0, x1, x2`` (``test_labels_whitespace.py``): the
    spec, the field, the spec's label list and the plan's ``domain.labels``."""
    spec = _spec("spl", 1.0, [dict(_ATTRIBUTES[0], domain=["x0", "x1", "x2"]), *_ATTRIBUTES[1:]])

    def planned(s):
        out = []
        for a in s["attributes"]:
            values = a["domain"] if isinstance(a["domain"], list) else range(a["domain"])
            out += [f"{a['name']}={v}" for v in values]
        return out
    return spec, "attributes[0].domain", (lambda s: s["attributes"][0]["domain"]), planned


def exact_claims(plan) -> dict[tuple, Decimal]:
    """The record's epsilon and each attribute's, from the exact grid numbers (``mechanisms.records._privacy``)."""
    from ldpplan.mechanisms.records._privacy import exact_attribute_ratios, exact_record_ratio
    from ldpplan.planner._exact import log_exact

    p, scheme = plan["params"], plan["mechanism"]
    out = {("epsilon",): log_exact(exact_record_ratio(scheme, p["oracles"], p["numbers"], p["domain_sizes"]))}
    for j, r in enumerate(exact_attribute_ratios(scheme, p["oracles"], p["numbers"], p["domain_sizes"])):
        out[("attribute_epsilons", j)] = log_exact(r)
    return out


#: The spec field of :func:`epsilon_spec`'s epsilon (``test_cli_polish.py``: one epsilon range in every family).
EPSILON_FIELD = "epsilon"


def epsilon_spec(epsilon) -> dict:
    """A spec whose epsilon is ``epsilon``."""
    return _spec("records", epsilon)


# ------------------------------------------------------------------ predicted vs simulated
def _l2_per_attribute(mechanism: str, n: int, trials: int, seed: int):
    plan = planner.make_plan(_spec(mechanism, 1.0))
    mech = mechanisms.load(plan)
    rng0 = np.random.default_rng(seed)
    data = np.stack([rng0.integers(0, k, n) for k in mech.domain_sizes], axis=1)
    truth = np.concatenate([np.bincount(data[:, j], minlength=k) / n for j, k in enumerate(mech.domain_sizes)])
    predicted = mech.variance_per_user(truth) / n
    losses = []
    for child in np.random.SeedSequence(seed + 1).spawn(trials):
        err = (mech.estimate(mech.perturb(data, np.random.default_rng(child))).frequency - truth) ** 2
        losses.append([err[mech.attribute_slice(j)].sum() for j in range(len(mech.names))])
    return mech, predicted, np.array(losses)


@pytest.mark.slow
def test_records_l2_per_attribute():
    # each attribute's total l2 error against its exact prediction, for every scheme (fixed data; SMP: m_j ~ pi_j n,
    # the prediction's large-n form, within 3% at n = 500); 3000 runs resolve a 3-valued attribute's l2 to ~2%
    for mechanism, slack in (("spl", 0.0), ("smp", 0.03), ("rsfd", 0.0)):
        mech, predicted, losses = _l2_per_attribute(mechanism, 500, 3000, 40)
        for j, name in enumerate(mech.names):
            check_prediction(f"{mechanism} {name} l2_total", float(predicted[mech.attribute_slice(j)].sum()),
                             losses[:, j], slack=slack)


PREDICTED_VS_SIMULATED = test_records_l2_per_attribute

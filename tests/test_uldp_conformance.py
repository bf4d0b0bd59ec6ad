"""ULDP: uRR, uRAP, PUM (Murakami, Kawamoto; USENIX Sec. 2019): conformance declarations, predicted-vs-simulated tests.

The family's conformance module. The cross-family tests read it by its name (``_family_helpers.conformance``; the
contract is in that module's docstring): ``AGGREGATE_SPECS`` (``test_aggregate_integrity.py``),
``interval_specs`` (``test_confidence_intervals.py``), ``exact_claims``
(``test_plan_gate.py``), ``epsilon_spec`` and ``EPSILON_FIELD`` (``test_cli_polish.py``) and
``PREDICTED_VS_SIMULATED`` (``test_predicted_vs_simulated.py``).

Predicted vs simulated: the worst-case l2 (and the n -> infinity l1, eq. 37) at p_UN.
"""
from __future__ import annotations

import math
from decimal import Decimal

import numpy as np
import pytest

from _family_helpers import check_prediction
from ldpplan import mechanisms, planner
from ldpplan.planner._exact import log_exact

#: One small spec per plan mechanism, PUM over both common mechanisms (``test_aggregate_integrity.py``).
AGGREGATE_SPECS = {
    "urr": {"mechanism": "urr", "epsilon": 1.0, "domain": 10, "sensitive": 3},
    "urap": {"mechanism": "urap", "epsilon": 1.0, "domain": 10, "sensitive": 3},
    "pum": {"mechanism": "pum", "epsilon": 1.0, "domain": 16, "sensitive": 3, "common": "urap",
            "tags": ["home", "work"]},
    "pum-urr": {"mechanism": "pum", "epsilon": 1.0, "domain": 16, "sensitive": 3, "common": "urr",
                "tags": ["home", "work"]},
}


def interval_specs(n: int) -> dict[str, dict]:
    """A plan per plan mechanism (``n`` unused: the ULDP specs name no population)."""
    return {"urr": {"mechanism": "urr", "epsilon": 1.0, "domain": 6, "sensitive": 2},
            "urap": {"mechanism": "urap", "epsilon": 1.0, "domain": 6, "sensitive": 2},
            "pum": {"mechanism": "pum", "epsilon": 1.0, "domain": 6, "sensitive": 2, "common": "urr",
                    "tags": ["home"]}}


def exact_claims(plan) -> dict[tuple, Decimal]:
    """epsilon (and PUM's user-indistinguishability epsilon) from the exact uRR / uRAP ratio."""
    from ldpplan.planner.uldp._numbers import urap_ratio, urr_ratio

    p = plan["params"]
    kind = p.get("common", plan["mechanism"])
    size = p.get("intermediate_size", p["domain_size"])
    n_s = len(p.get("intermediate_sensitive", p["sensitive"]))
    ratio = urr_ratio(p["c1"], p["c2"]) if kind == "urr" else urap_ratio(p["theta"], p["d1"], p["d2"], n_s, size - n_s)
    out = {("epsilon",): log_exact(ratio)}
    if "user_indistinguishability_epsilon" in plan["guarantee"]:
        out[("user_indistinguishability_epsilon",)] = out[("epsilon",)]
    return out


#: The spec field of :func:`epsilon_spec`'s epsilon (``test_cli_polish.py``: one epsilon range in every family).
EPSILON_FIELD = "epsilon"


def epsilon_spec(epsilon) -> dict:
    """A spec whose epsilon is ``epsilon``."""
    return {"mechanism": "urr", "epsilon": epsilon, "domain": 10, "sensitive": 3}


# ------------------------------------------------------------------ predicted vs simulated
@pytest.mark.slow  # over ~0.5 s: kept out of the fast tier
@pytest.mark.parametrize("example", ["uldp-urr", "uldp-urap", "uldp-pum"])
def test_uldp_worst_case_l2_and_l1(example):
    plan = planner.make_plan(planner.example_spec(example))
    mech = mechanisms.load(plan)
    size = plan["params"]["domain_size"]
    sensitive = set(plan["params"]["sensitive"])
    nonsensitive = np.array([x for x in range(size) if x not in sensitive])
    n = nonsensitive.size * 40
    data = np.repeat(nonsensitive, 40)  # p_UN: uniform over X_N, the worst case the plan states
    p = np.bincount(data, minlength=size) / n
    if example == "uldp-pum":
        # the prediction is about the common mechanism's estimate r_hat over Z = X + bots (no user has a tag,
        # so r = p padded with zeros); eq. (21) then moves the bots' (noise) mass onto X
        p = np.concatenate([p, np.zeros(len(plan["params"]["tags"]))])
    l2, l1 = [], []
    for child in np.random.SeedSequence(40).spawn(160 if example == "uldp-pum" else 40):
        reports = mech.perturb(data, np.random.default_rng(child))
        est = (mech.estimate_intermediate(reports, "empirical") if example == "uldp-pum"
               else mech.estimate(reports, "empirical")).frequency
        l2.append(n * float(np.sum((est - p) ** 2)))
        l1.append(math.sqrt(n) * float(np.sum(np.abs(est - p))))
    assert "uniform over X_N" in plan["predicted"]["l2_worst_times_n"]["at"]
    check_prediction(f"{example} l2_worst_times_n", plan["predicted"]["l2_worst_times_n"]["value"], l2)
    # eq. (37) is the n -> infinity (normal) limit of E l1: 3% slack at finite n
    check_prediction(f"{example} l1_worst_times_sqrt_n", plan["predicted"]["l1_worst_times_sqrt_n"]["value"], l1,
                     slack=0.03)


PREDICTED_VS_SIMULATED = test_uldp_worst_case_l2_and_l1

"""Numeric values (Duchi et al. 2018; Wang et al. ICDE 2019; Li et al. SIGMOD 2020): conformance declarations
and the predicted-vs-simulated test.

The family's conformance module, read by the cross-family tests by its name (contract in
``tests/_family_helpers.py``). Predicted vs simulated: the exact variance of the mean for the data.
"""
from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest

from _family_helpers import check_prediction
from ldpplan import mechanisms, planner

#: One small spec per plan mechanism (``test_aggregate_integrity.py``).
AGGREGATE_SPECS = {
    "numeric-duchi": {"mechanism": "duchi", "epsilon": 1.0, "range": [0, 10]},
    "numeric-piecewise": {"mechanism": "piecewise", "epsilon": 1.0, "range": [0, 10], "input_points": 5},
    "numeric-hybrid": {"mechanism": "hybrid", "epsilon": 2.0, "range": [0, 10], "input_points": 5},
    "numeric-square-wave": {"mechanism": "square-wave", "epsilon": 1.0, "range": [0, 10], "input_points": 5,
                            "task": "distribution"},
}


def interval_specs(n: int) -> dict[str, dict]:
    """Duchi (two grid points); PM, HM and SW on three grid points (``n`` unused)."""
    return {"duchi": {"mechanism": "duchi", "epsilon": 1.0, "range": [0, 1]},
            "piecewise": {"mechanism": "piecewise", "epsilon": 2.0, "range": [0, 1], "input_points": 3},
            "hybrid": {"mechanism": "hybrid", "epsilon": 2.0, "range": [0, 1], "input_points": 3},
            "square-wave": {"mechanism": "square-wave", "epsilon": 2.0, "range": [0, 1], "input_points": 3,
                            "task": "distribution"}}


def interval_inputs(mechanism, items, counts, n):
    """Users hold the grid points' values (user units): the truth is the distribution over the grid."""
    grid = np.linspace(0.0, 1.0, 2 if mechanism == "duchi" else 3)
    return grid[np.asarray(items)], None


def exact_claims(plan) -> dict[tuple, Decimal]:
    """epsilon from the integer numerators (``solvers._numeric_channel.exact_epsilon`` on each component)."""
    from ldpplan.solvers._numeric_plan import components_of

    p = plan["params"]
    channel = components_of(plan["mechanism"], p["epsilon"], p["input_grid"], p["output_values"],
                            p["component_weights"], p["component_sizes"], p["numerators"])
    return {("epsilon",): channel.exact().log_ratio}


#: The spec field of :func:`epsilon_spec`'s epsilon.
EPSILON_FIELD = "epsilon"


def epsilon_spec(epsilon) -> dict:
    """A spec whose epsilon is ``epsilon``."""
    return {"mechanism": "duchi", "epsilon": epsilon, "range": [0, 1]}


# ------------------------------------------------------------------ predicted vs simulated
@pytest.mark.slow
def test_numeric_mean_error_matches_the_exact_variance():
    # the squared error of the mean over 1000 runs against Var = sum_i Var[report | x_i] / n^2 (+ bias^2)
    plan = planner.make_plan(planner.example_spec("numeric-flights"))
    mech = mechanisms.load(plan)
    n = 500
    values = np.random.default_rng(40).uniform(-40.0, 130.0, n)  # some clipped at both ends
    truth = float(np.mean(np.clip(values, -30.0, 120.0)))
    predicted = float(np.sum(mech.report_variance(values)) / n**2)
    bias = plan["predicted"]["mean_bias_bound"]["value"]
    losses = [(mech.estimate(mech.aggregate(mech.perturb(values, np.random.default_rng(s)))).value_mean - truth) ** 2
              for s in np.random.SeedSequence(41).spawn(1000)]
    check_prediction("numeric mean squared error", predicted, losses, slack=bias**2 / predicted + 1e-9, z=3.0)


PREDICTED_VS_SIMULATED = test_numeric_mean_error_matches_the_exact_variance


#: The family's spec stops at 10 nats (``planner.numeric.spec.EPSILON_MAX``: its grids).
EPSILON_MAX = 10.0

#: The numeric mechanisms have language-neutral vectors (vectors/2.0/numeric-*.json: the reference client and the
#: TypeScript client reproduce them; tests/test_vectors.py reads this flag).
VECTORS = True

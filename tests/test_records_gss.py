"""The ``records-gss`` example: the GSS vocabulary columns as a record, simulated on the respondents.

Independent checks: the respondents' codes against the csv module's own count of the file, and the
runtime's observed l2 error per attribute against the plan's prediction at the data's frequencies,
within four standard errors of the Monte Carlo mean (a variance-derived tolerance).
"""
from __future__ import annotations

import collections
import csv

import numpy as np
import pytest

from ldpplan.planner import api
from ldpplan.planner._report import SimulateOptions
from ldpplan.planner.errors import InputDataError
from ldpplan.planner.records._gss import GSS_ATTRIBUTES, GSS_FILE, gss_records


def test_gss_records_match_the_file(shared_data_dir):
    plan = api.make_plan(api.example_spec("records-gss"))
    assert plan["verification"]["holds"]
    data = gss_records(plan, shared_data_dir)
    names = plan["params"]["names"]
    with open(shared_data_dir / GSS_FILE, newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if all(r[n] not in ("NA", "") for n in names)]
    assert data.shape == (len(rows), len(names)) == (28629, 5)
    for j, name in enumerate(names):
        counts = collections.Counter(r[name] for r in rows)
        assert np.bincount(data[:, j], minlength=len(GSS_ATTRIBUTES[name])).tolist() == \
            [counts[v] for v in GSS_ATTRIBUTES[name]]


@pytest.mark.slow
def test_gss_simulation_matches_the_predicted_error(shared_data_dir):
    plan = api.make_plan(api.example_spec("records-gss"))
    report = api.simulate(plan, SimulateOptions(trials=300, seed=7, extra={"dataset": "gss"}))
    assert report.data["source"].startswith("GSS") and report.data["n"] == 28629
    for row in report.data["results"]:
        pred, mean, se = row["predicted_l2_total"], row["measured_l2_total_mean"], row["measured_l2_total_se"]
        assert abs(mean - pred) <= 4 * se, row
        assert se < 0.1 * pred, row  # 300 runs resolve each mean to <= ~8% (a 2-valued attribute's l2 is chi2_1)


def test_dataset_gss_refuses_a_plan_of_other_columns(shared_data_dir):
    plan = api.make_plan(api.example_spec("records-synthetic"))
    with pytest.raises(InputDataError, match="GSS"):
        api.simulate(plan, SimulateOptions(trials=1, extra={"dataset": "gss"}))

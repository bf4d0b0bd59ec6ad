"""Numeric simulation on real data (issue 29's Data section): the flights' delays, air time and distance,
the GSS ages and years of education, the MovieLens ratings. Loaders checked against an independent read of
the CSVs; ``-O dataset`` / ``-O column`` and the clipping report; on each data set the observed error of
the mean through the runtime against the exact prediction (tolerance from the trials' spread of the
squared errors: the variance of the sample variance)."""
from __future__ import annotations

import csv
import math

import numpy as np
import pytest
from click.testing import CliRunner

from ldpplan import mechanisms, planner
from ldpplan.mechanisms import Reports
from ldpplan.planner._report import SimulateOptions as RunOptions
from ldpplan.planner.cli import main
from ldpplan.planner.data import GSS_NUMERIC, load_gss_vocab
from ldpplan.planner.errors import InputDataError, SpecError
from ldpplan.planner.numeric.simulate import (DATASETS, SimulateOptions, clipping_counts, dataset_column,
                                              load_dataset_column)
from ldpplan.planner._common import parse_options

from _family_helpers import check_prediction


def _csv_columns(path, columns):
    """An independent read: per column, its non-empty, non-NA cells as floats, and the number of others."""
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    out = {}
    for column in columns:
        kept = [float(r[column]) for r in rows if r[column] not in ("", "NA")]
        out[column] = (np.array(kept), len(rows) - len(kept))
    return out


def _csv_column(path, column):
    return _csv_columns(path, [column])[column]


# --------------------------------------------------------------------------- loaders
@pytest.mark.parametrize("field,low,high", [("age", 18, 89), ("educ", 0, 20)])
def test_gss_numeric_fields_load_as_the_csvs_numbers(field, low, high, shared_data_dir):
    path = shared_data_dir / "gss_vocab.csv"
    gss = load_gss_vocab(path, fields=(field,))
    values = gss.numbers(field)
    expected, missing = _csv_column(path, field)
    assert field in GSS_NUMERIC and values.dtype == np.float64
    assert gss.n_dropped == missing > 0 and values.size == expected.size
    np.testing.assert_array_equal(values, expected)
    assert values.min() == low and values.max() == high and np.all(values == np.round(values))
    loaded, source = load_dataset_column("gss", field, shared_data_dir)
    np.testing.assert_array_equal(loaded, expected)
    assert f"{expected.size:,} respondents" in source and f"{missing:,} NA dropped" in source


def test_gss_numbers_refuses_a_field_not_loaded_or_not_numeric(shared_data_dir):
    gss = load_gss_vocab(shared_data_dir / "gss_vocab.csv", fields=("gender", "age"))
    with pytest.raises(InputDataError, match="was not loaded"):
        gss.numbers("educ")
    with pytest.raises(InputDataError, match="must hold numbers"):
        gss.numbers("gender")


def test_movielens_ratings_load_as_the_csvs_numbers(shared_data_dir):
    ratings, source = load_dataset_column("movielens", "rating", shared_data_dir)
    expected, missing = _csv_column(shared_data_dir / "movielens_ratings.csv", "rating")
    assert missing == 0 and f"{expected.size:,} ratings" in source
    np.testing.assert_array_equal(ratings, expected)
    assert ratings.min() == 0.5 and ratings.max() == 5.0 and np.all(ratings * 2 == np.round(ratings * 2))


@pytest.mark.slow  # 336,776 rows read twice
def test_flights_columns_load_as_the_csvs_numbers(shared_data_dir):
    independent = _csv_columns(shared_data_dir / "nycflights13_flights.csv", DATASETS["flights"])
    for column in DATASETS["flights"]:
        values, source = load_dataset_column("flights", column, shared_data_dir)
        expected, cancelled = independent[column]
        np.testing.assert_array_equal(values, expected)
        assert f"{values.size:,} flights, {cancelled:,} cancelled dropped" in source
        assert (cancelled > 0) == (column != "distance")


# --------------------------------------------------------------------------- options
@pytest.mark.parametrize("extra,expected", [
    ({}, ("flights", "dep_delay")), ({"column": "arr_delay"}, ("flights", "arr_delay")),
    ({"column": "age"}, ("gss", "age")), ({"column": "educ"}, ("gss", "educ")), ({"dataset": "gss"}, ("gss", "age")),
    ({"dataset": "movielens"}, ("movielens", "rating")), ({"column": "rating"}, ("movielens", "rating")),
    ({"dataset": "flights", "column": "distance"}, ("flights", "distance"))])
def test_dataset_and_column_options(extra, expected):
    assert dataset_column(parse_options(SimulateOptions, extra)) == expected


def test_a_column_of_another_data_set_or_an_unknown_one_is_refused():
    with pytest.raises(SpecError, match=r"-O column: must be a column of the gss data set \(age, educ\)"):
        dataset_column(parse_options(SimulateOptions, {"dataset": "gss", "column": "dep_delay"}))
    with pytest.raises(SpecError, match="-O dataset"):
        parse_options(SimulateOptions, {"dataset": "census"})
    with pytest.raises(SpecError, match="-O column"):
        parse_options(SimulateOptions, {"column": "income"})


def test_clipping_counts_are_exact_and_a_column_outside_the_range_is_refused():
    values = np.array([-5.0, 0.0, 0.0, 3.0, 7.0, 7.5, 12.0])
    assert clipping_counts(values, 0.0, 7.0, "-O column") == (1, 2)  # the ends themselves are inside
    with pytest.raises(SpecError, match=r"-O column: must have values inside the plan's range \[8, 10\]"):
        clipping_counts(values, 8.0, 10.0, "-O column")
    with pytest.raises(SpecError, match="6 below, 1 above, none inside"):
        clipping_counts(values, 7.6, 11.0, "-O column")


# --------------------------------------------------------------------------- simulate
@pytest.mark.slow  # two plans re-verified by the runtime: ~2 s on a loaded machine
def test_simulate_on_gss_ages_reports_the_exact_prediction_and_the_clipping(shared_data_dir, monkeypatch):
    monkeypatch.setenv("LDPPLAN_DATA_DIR", str(shared_data_dir))
    ages, _ = _csv_column(shared_data_dir / "gss_vocab.csv", "age")
    plan = planner.make_plan({"mechanism": "numeric", "epsilon": 1.0, "range": [20, 80]})
    report = planner.simulate(plan, RunOptions(trials=3, seed=5, extra={"dataset": "gss"}))
    data = report.data
    assert data["n"] == ages.size and data["range"] == [20.0, 80.0] and (data["dataset"], data["column"]) == ("gss", "age")
    assert (data["clipped_below"], data["clipped_above"]) == (np.sum(ages < 20), np.sum(ages > 80))
    mech = mechanisms.load(plan)
    (result,) = data["results"]
    assert result["true_mean"] == pytest.approx(np.clip(ages, 20, 80).mean(), rel=1e-12)
    assert result["predicted_sd"] == pytest.approx(math.sqrt(np.sum(mech.report_variance(ages))) / ages.size,
                                                   rel=1e-12)
    assert "GSS vocabulary age" in data["source"] and "below" in report.tables[0].note
    example = planner.make_plan(planner.example_spec("numeric-gss-age"))  # the survey's range: nothing clipped
    data = planner.simulate(example, RunOptions(trials=1, extra={"column": "age"})).data
    assert data["clipped_below"] == data["clipped_above"] == 0 and data["n"] == planner.example_spec(
        "numeric-gss-age")["users"]


@pytest.mark.slow
def test_simulate_refuses_a_column_outside_the_range_with_exit_2(shared_data_dir, monkeypatch, tmp_path):
    monkeypatch.setenv("LDPPLAN_DATA_DIR", str(shared_data_dir))
    plan = planner.make_plan(planner.example_spec("numeric-movielens"))  # [0.5, 5] stars
    with pytest.raises(SpecError, match="-O column: must have values inside the plan's range"):
        planner.simulate(plan, RunOptions(trials=1, extra={"column": "distance"}))  # 17 to 4,983 miles
    # the flights' departure delays on [0.5, 5] minutes: some inside, most clipped (reported and warned)
    report = planner.simulate(plan, RunOptions(trials=1))
    delays, _ = load_dataset_column("flights", "dep_delay", shared_data_dir)
    assert (report.data["clipped_below"], report.data["clipped_above"]) == (np.sum(delays < 0.5), np.sum(delays > 5))
    assert "(most values: the error measured is mostly the clipping's" in report.tables[0].note
    values = tmp_path / "values.csv"
    values.write_text("value\n1\n2.5\n", encoding="utf-8")
    with pytest.raises(SpecError, match="-O dataset: names a real data set; give it or --data, not both"):
        planner.simulate(plan, RunOptions(data=str(values), trials=1, extra={"dataset": "gss"}))
    path = tmp_path / "plan.json"
    planner.write_plan(plan, path)
    for args, field in ([("-O", "column=distance"), "-O column"], [("-O", "dataset=gss", "-O", "column=rating"),
                                                                    "-O column"]):
        result = CliRunner().invoke(main, ["simulate", str(path), *args, "--trials", "1"])
        assert result.exit_code == 2, result.output
        assert field in result.output and "Traceback" not in result.output


def test_example_plans_pin_their_data_sets_range_and_users(shared_data_dir):
    for name, dataset, column in [("numeric-gss-age", "gss", "age"), ("numeric-movielens", "movielens", "rating")]:
        spec = planner.example_spec(name)
        values, _ = load_dataset_column(dataset, column, shared_data_dir)
        assert spec["range"] == [values.min(), values.max()] and spec["users"] == values.size, name
        assert f"-O dataset={dataset}" in spec["description"]


CASES = [
    pytest.param("flights", "dep_delay", "numeric-flights", marks=pytest.mark.slow, id="flights-dep_delay-hybrid"),
    pytest.param("flights", "air_time", {"mechanism": "piecewise", "epsilon": 4.0, "range": [20, 700]},
                 marks=pytest.mark.slow, id="flights-air_time-piecewise"),
    pytest.param("gss", "age", "numeric-gss-age", marks=pytest.mark.slow, id="gss-age-hybrid"),
    pytest.param("gss", "educ", {"mechanism": "square-wave", "epsilon": 2.0, "range": [0, 20]},
                 marks=pytest.mark.slow, id="gss-educ-square-wave"),
    pytest.param("movielens", "rating", "numeric-movielens", id="movielens-rating-duchi"),
]


@pytest.mark.parametrize("dataset,column,spec", CASES)
def test_observed_error_of_the_mean_matches_the_prediction(dataset, column, spec, shared_data_dir):
    """2,000 runs of 1,500 users drawn from the column: the squared error's mean is the exact predicted
    variance ``sum_i Var[report | x_i] / n^2`` within 4 standard errors of the trials (the variance of the
    sample variance: about 12% here, resolving the done-when's 10% on flights at ~3.2 standard errors),
    the mean error within 4 standard errors of its own plus the plan's discretization bias bound."""
    values_all, _ = load_dataset_column(dataset, column, shared_data_dir)
    rng = np.random.default_rng([29, len(dataset), len(column)])
    values = rng.choice(values_all, 1500, replace=False)
    plan = planner.make_plan(planner.example_spec(spec) if isinstance(spec, str) else spec)
    mech, trials, n = mechanisms.load(plan), 2000, values.size
    truth = float(np.mean(np.clip(values, mech.low, mech.high)))
    predicted = float(np.sum(mech.report_variance(values))) / n ** 2
    y = mech.perturb(np.tile(values, trials), rng)["y"].reshape(trials, n)  # one vectorized perturb
    means = mech.low + (mech.high - mech.low) / 2 * (1 + np.asarray(mech.output_values)[y].mean(axis=1))
    # the runtime's estimate is this mean, trial by trial
    first = mech.estimate(mech.aggregate(Reports(mech.mechanism, {"y": y[0]})))
    assert first.value_mean == pytest.approx(means[0], rel=1e-12, abs=1e-12)
    errors = means - truth
    check_prediction(f"{dataset} {column} mean", predicted, np.square(errors), z=4.0)
    bias_bound = float(plan["predicted"]["mean_bias_bound"]["value"])
    assert abs(errors.mean()) <= 4 * errors.std(ddof=1) / math.sqrt(trials) + bias_bound

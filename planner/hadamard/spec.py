"""Hadamard-response spec: a budget and a domain.

Spec keys (TOML or JSON)::

    mechanism = "hr"        # the Hadamard response (Acharya, Sun & Zhang, AISTATS 2019)
    epsilon = 1.0           # LDP budget, nats, in (0, 100]
    domain = 100            # k (a count domain 0..k-1, 2 <= k <= 2^24) or a list of distinct labels
    blocks = "auto"         # B: a power of two (1: the basic scheme), or "auto" (default): the B with the
                            # smallest worst-case total squared error (ldpplan.solvers.hadamard)
    users = 28629           # optional: number of users n for the predicted error (alias: n)
    description = "..."     # optional free text
    # [shuffle] n, delta    # optional: the central guarantee of n shuffled reports (every family)
"""
from __future__ import annotations

import dataclasses
from typing import Literal, Optional, Union

from pydantic import AliasChoices, Field, StrictInt, field_validator

from ...mechanisms import MAX_DOMAIN_SIZE as MAX_DOMAIN  # largest domain: the runtime reads at most 2^24 items
from .._common import Epsilon, SpecBase, check_labels, spec_from_pydantic
from ..errors import SpecError

__all__ = ["HadamardSpec", "Resolved", "parse_spec", "MAX_DOMAIN"]


class HadamardSpec(SpecBase):
    """Validated Hadamard-response spec (see the module docstring).

    References
    ----------
    Acharya, Sun & Zhang, AISTATS 2019 (arXiv:1802.04705).
    """

    mechanism: Literal["hr"]
    epsilon: Epsilon = Field(description="LDP budget (nats)")
    domain: Union[StrictInt, list[str]] = Field(description="k (a count) or the labels of the items")
    users: Optional[StrictInt] = Field(default=None, ge=1, le=10**15, validation_alias=AliasChoices("users", "n"),
                                       description="number of users n (for the predicted error)")
    blocks: Union[Literal["auto"], StrictInt] = Field(default="auto", description="B: a power of two, or 'auto'")

    @field_validator("blocks")
    @classmethod
    def _blocks_ok(cls, v):
        if v != "auto" and (v < 1 or v & (v - 1) or v > 2 * MAX_DOMAIN):
            raise ValueError("must be a power of two >= 1 (at most 2k) or 'auto'")
        return v

    @field_validator("domain")
    @classmethod
    def _domain_ok(cls, v):
        if isinstance(v, int) and not 2 <= v <= MAX_DOMAIN:
            raise ValueError(f"must be a count in [2, {MAX_DOMAIN}] or a list of labels")
        if isinstance(v, list) and (not 2 <= len(v) <= MAX_DOMAIN or len(set(v)) != len(v)):
            raise ValueError(f"must list 2 .. {MAX_DOMAIN} distinct labels")
        return v


@dataclasses.dataclass(frozen=True)
class Resolved:
    """A spec resolved into numbers: ``spec``, ``size`` (k) and ``labels`` (None: a count domain)."""

    spec: HadamardSpec
    size: int
    labels: list[str] | None


def parse_spec(raw) -> Resolved:
    """Validate a raw spec mapping (SpecError naming the first bad key) and resolve the domain."""
    spec = spec_from_pydantic(HadamardSpec, raw)
    if not isinstance(spec.domain, int):
        check_labels("domain", spec.domain)
    res = Resolved(spec, spec.domain, None) if isinstance(spec.domain, int) else \
        Resolved(spec, len(spec.domain), list(spec.domain))
    if spec.blocks != "auto" and spec.blocks > 2 * res.size:
        raise SpecError("blocks", f"must be at most 2k = {2 * res.size} (one item per block)", spec.blocks)
    return res

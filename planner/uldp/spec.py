"""ULDP spec model (uRR, uRAP, PUM) and its resolution into a domain and a sensitive set.

Spec keys (TOML or JSON)::

    mechanism = "urr"      # "urr" (Def. 3) | "urap" (Def. 4) | "pum" (Sec. 5)
    epsilon = 1.0          # nats, in (0, 100]
    domain = 400           # |X| (a count domain 0..399) or a list of labels
    sensitive = 76         # a count k (the first k items) or a list of labels (indices for a count domain): X_S
    theta = 0.6            # uRAP (or PUM with common = "urap") only, optional: default e^(eps/2)/(e^(eps/2)+1)
    users = 100000         # optional: number of users n for the predicted losses (alias: n)
    # PUM only:
    tags = ["home", "workplace"]     # kappa semantic tags (bots)
    common = "urr"                   # common mechanism over Z = X + bots: "urr" | "urap"
    [background]                     # optional pi_k per tag (|X| probabilities summing to 1)
    home = [...]
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Literal, Mapping, Optional, Union

import numpy as np
from pydantic import AliasChoices, Field, StrictInt, field_validator

from .._common import EPSILON_MAX, Epsilon, SpecBase, check_labels, spec_from_pydantic
from ..errors import SpecError

__all__ = ["ULDPSpec", "Resolved", "parse_spec", "resolve", "MAX_EPSILON"]

#: Largest epsilon (nats) a spec may ask for. Beyond about 33 (uRR) or 66 (uRAP) nats the
#: 2^-48 probability grid, not epsilon, bounds the numbers; the plan then gives more privacy.
MAX_EPSILON = EPSILON_MAX

class ULDPSpec(SpecBase):
    """Validated ULDP spec (see the module docstring for the keys).

    References
    ----------
    Murakami & Kawamoto 2019: Def. 3 (uRR), Def. 4 (uRAP), Sec. 5 (PUM).
    """

    mechanism: Literal["urr", "urap", "pum"]
    epsilon: Epsilon = Field(description="ULDP budget (nats)")
    domain: Union[StrictInt, list[Union[str, StrictInt]]] = Field(description="|X| or the labels of X")
    sensitive: Union[StrictInt, list[Union[str, StrictInt]]] = Field(description="X_S: a count or a list of items")
    theta: Optional[float] = Field(default=None, gt=0, lt=1, description="uRAP theta (default e^(eps/2)/(e^(eps/2)+1))")
    users: Optional[StrictInt] = Field(default=None, ge=1, validation_alias=AliasChoices("users", "n"),
                                       description="number of users n (for predicted losses)")
    tags: Optional[list[str]] = None
    common: Optional[Literal["urr", "urap"]] = None
    background: Optional[dict[str, list[float]]] = None

    @field_validator("domain")
    @classmethod
    def _domain_ok(cls, v):
        if isinstance(v, int) and not (2 <= v <= 1_000_000):
            raise ValueError("must be a count in [2, 1000000] or a list of labels")
        if isinstance(v, list):
            labels = [str(x) for x in v]
            if len(labels) < 2 or len(set(labels)) != len(labels):
                raise ValueError("must list at least 2 distinct labels")
        return v

    @field_validator("tags")
    @classmethod
    def _tags_ok(cls, v):
        if v is not None and (len(v) < 1 or len(set(v)) != len(v) or any(not t for t in v)):
            raise ValueError("must be a non-empty list of distinct, non-empty tag names")
        return v


@dataclasses.dataclass(frozen=True)
class Resolved:
    """A spec resolved into numbers.

    Attributes
    ----------
    spec : ULDPSpec
    size : int
        |X|.
    labels : list of str or None
        None for a count domain.
    sensitive : list of int
        Sorted indices of X_S.
    kind : str
        The mechanism whose numbers are solved: ``"urr"`` or ``"urap"`` (PUM: its common one).
    tags : list of str
        PUM's semantic tags (empty otherwise).
    background : dict of str -> list of float
        PUM's background distributions (checked).
    """

    spec: ULDPSpec
    size: int
    labels: list[str] | None
    sensitive: list[int]
    kind: str
    tags: list[str]
    background: dict[str, list[float]]

    @property
    def n_sensitive_common(self) -> int:
        """|X_S| + kappa: the sensitive symbols the common mechanism sees."""
        return len(self.sensitive) + len(self.tags)

    @property
    def common_size(self) -> int:
        """|X| + kappa (|Z| for the PUM)."""
        return self.size + len(self.tags)


def parse_spec(raw: Mapping[str, Any]) -> ULDPSpec:
    """Validate a raw spec mapping (SpecError naming the first bad key)."""
    return spec_from_pydantic(ULDPSpec, raw)


def _sensitive(spec: ULDPSpec, size: int, labels: list[str] | None) -> list[int]:
    if isinstance(spec.sensitive, int):
        if not (1 <= spec.sensitive <= size):
            raise SpecError("sensitive", f"must be a count in [1, |X| = {size}]", spec.sensitive)
        return list(range(spec.sensitive))
    if not spec.sensitive:
        raise SpecError("sensitive", "must be a non-empty list of items", spec.sensitive)
    idx = []
    for j, item in enumerate(spec.sensitive):
        if labels is None:
            if not isinstance(item, int) or not (0 <= item < size):
                raise SpecError(f"sensitive[{j}]", f"must be an item index in [0, {size}) (the domain is a count)", item)
            idx.append(item)
        else:
            if str(item) not in labels:
                raise SpecError(f"sensitive[{j}]", "must be a label of the domain", item)
            idx.append(labels.index(str(item)))
    if len(set(idx)) != len(idx):
        raise SpecError("sensitive", "must list distinct items", spec.sensitive)
    return sorted(idx)


def resolve(spec: ULDPSpec) -> Resolved:
    """Resolve domain, X_S, the solved mechanism and PUM's tags/background (SpecError on a bad mix)."""
    labels: list[str] | None = None
    if isinstance(spec.domain, int):
        size = spec.domain
    else:
        labels = check_labels("domain", spec.domain)
        size = len(labels)
    sens = _sensitive(spec, size, labels)
    kind = spec.mechanism
    if spec.mechanism == "pum":
        if not spec.tags:
            raise SpecError("tags", "PUM needs a non-empty list of semantic tags", spec.tags)
        kind = spec.common or "urr"
    else:
        for key in ("tags", "common", "background"):
            if getattr(spec, key) is not None:
                raise SpecError(key, "is only allowed for mechanism = 'pum'", getattr(spec, key))
    if spec.theta is not None and kind != "urap":
        raise SpecError("theta", "is only used by the uRAP (mechanism 'urap' or common = 'urap')", spec.theta)
    background = {}
    for tag, dist in (spec.background or {}).items():
        if tag not in (spec.tags or []):
            raise SpecError(f"background.{tag}", f"must be one of the tags {spec.tags}", tag)
        d = np.asarray(dist, dtype=np.float64)
        if d.shape != (size,) or np.any(d < 0) or not math.isclose(float(d.sum()), 1.0, abs_tol=1e-9):
            raise SpecError(f"background.{tag}", f"must be {size} non-negative probabilities summing to 1",
                            f"{d.size} values")
        background[tag] = d.tolist()
    return Resolved(spec=spec, size=size, labels=labels, sensitive=sens, kind=kind,
                    tags=list(spec.tags or []) if spec.mechanism == "pum" else [], background=background)

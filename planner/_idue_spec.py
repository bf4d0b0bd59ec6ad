"""Spec model for IDUE / IDUE-PS plans (ID-LDP, Gu et al. ICDE 2020).

Accepted keys (TOML or JSON)::

    mechanism = "idue"        # or "idue-ps" (then padding_length = L is required)
    model = "opt0"            # "opt0" (default) | "opt1" | "opt2"      (eq. 9, 11, 12)
    notion = "minid"          # "minid" (default, r = min) | "avgid" (r = average, Sec. VIII)
    padding_length = 2        # IDUE-PS only: L >= 1
    [[levels]]
    name = "hiv"
    epsilon = 1.3862943611198906
    items = 1                 # a count, or a list of item labels

Item-to-level assignment, exactly one of:

* every level has ``items`` (a count ``k`` makes labels ``name`` if ``k == 1`` else
  ``name-1 .. name-k``);
* ``item_levels_csv = "map.csv"``: a CSV with header ``item,level`` (one row per item;
  item order = row order; relative paths are resolved against the spec's folder);
* ``domain`` (a count, or a list of labels) or ``domain_csv = {path = ..., column = ...}``
  (distinct values of a CSV column, sorted), every level has ``share`` (fractions summing
  to 1), and ``assignment_seed`` (int): items are assigned to levels by a seeded random
  permutation, level ``i`` receiving ``round(share_i * m)`` items (largest remainder,
  at least one each). This is the paper's default setting (Sec. VII: budgets
  ``{eps, 1.2 eps, 2 eps}`` on ``{5%, 5%, 90%}`` of the items).
"""
from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any, Literal, Mapping, Optional, Union

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator

from ._common import spec_from_pydantic
from .errors import SpecError

__all__ = ["IDUESpec", "LevelSpec", "ResolvedLevels", "parse_idue_spec"]


class LevelSpec(BaseModel):
    """One privacy level: a name, a budget (nats) and its items (or a share of the domain)."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1)
    epsilon: float = Field(gt=0, allow_inf_nan=False)
    items: Optional[Union[StrictInt, list[Union[str, StrictInt]]]] = None
    share: Optional[float] = Field(default=None, gt=0, le=1, allow_inf_nan=False)

    @field_validator("items")
    @classmethod
    def _items_ok(cls, v):
        if isinstance(v, int) and v < 1:
            raise ValueError("must be a count >= 1 or a non-empty list of labels")
        if isinstance(v, list) and len(v) == 0:
            raise ValueError("must be a count >= 1 or a non-empty list of labels (an empty level is not allowed)")
        return v


class DomainCSV(BaseModel):
    """Take the item domain from the distinct values of one CSV column."""

    model_config = ConfigDict(extra="forbid")
    path: str
    column: str


class IDUESpec(BaseModel):
    """Validated IDUE / IDUE-PS spec (see module docstring)."""

    model_config = ConfigDict(extra="forbid")
    mechanism: Literal["idue", "idue-ps"]
    model: Literal["opt0", "opt1", "opt2"] = "opt0"
    notion: Literal["minid", "avgid"] = "minid"
    padding_length: Optional[StrictInt] = Field(default=None, ge=1)
    levels: list[LevelSpec] = Field(min_length=1)
    item_levels_csv: Optional[str] = None
    domain: Optional[Union[StrictInt, list[Union[str, StrictInt]]]] = None
    domain_csv: Optional[DomainCSV] = None
    assignment_seed: StrictInt = 0
    description: Optional[str] = None


class ResolvedLevels:
    """Levels with their item labels resolved.

    Attributes
    ----------
    names : list of str, length t
    epsilons : ndarray of float, shape (t,)
    items : list of list of str
        Item labels of each level.
    order : list of str, length m
        All item labels in index order (the runtime's ``mech.items``).
    """

    def __init__(self, names, epsilons, items, order):
        self.names, self.epsilons, self.items, self.order = names, np.asarray(epsilons, float), items, order

    @property
    def sizes(self) -> np.ndarray:
        """Items per level, shape (t,)."""
        return np.array([len(x) for x in self.items], dtype=np.int64)


def _read_mapping(path: Path) -> list[tuple[str, str]]:
    if not path.is_file():
        raise SpecError("item_levels_csv", "file must exist", str(path))
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    if not rows or [c.strip() for c in rows[0][:2]] != ["item", "level"]:
        raise SpecError("item_levels_csv", "CSV must start with the header 'item,level'", rows[0] if rows else "")
    out = []
    for k, row in enumerate(rows[1:], start=2):
        if len(row) < 2 or not row[0].strip() or not row[1].strip():
            raise SpecError(f"item_levels_csv line {k}", "must have an item label and a level name", row)
        out.append((row[0].strip(), row[1].strip()))
    if not out:
        raise SpecError("item_levels_csv", "must list at least one item", str(path))
    return out


def _domain_from_csv(dc: DomainCSV, base: Path) -> list[str]:
    path = (base / dc.path) if not Path(dc.path).is_absolute() else Path(dc.path)
    if not path.is_file():
        raise SpecError("domain_csv.path", "file must exist", str(path))
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        header = next(reader, [])
        if dc.column not in header:
            raise SpecError("domain_csv.column", f"must be a column of {path.name} ({header})", dc.column)
        col = header.index(dc.column)
        values = {row[col] for row in reader if len(row) > col and row[col] != ""}
    if not values:
        raise SpecError("domain_csv", "column has no values", dc.column)
    if all(v.lstrip("-").isdigit() for v in values):
        return [str(v) for v in sorted(values, key=int)]
    return sorted(values)


def _shares_to_counts(shares: list[float], m: int) -> list[int]:
    raw = np.array(shares) * m
    counts = np.floor(raw).astype(int)
    rest = m - counts.sum()
    order = np.argsort(-(raw - counts), kind="stable")
    counts[order[:rest]] += 1
    # at least one item per level (take from the largest level)
    for i in range(len(counts)):
        if counts[i] == 0:
            j = int(np.argmax(counts))
            counts[j] -= 1
            counts[i] = 1
    return counts.tolist()


def parse_idue_spec(raw: Mapping[str, Any], base_dir: Path | None = None) -> tuple[IDUESpec, ResolvedLevels]:
    """Validate a raw spec and resolve each level's items.

    Raises
    ------
    SpecError
        Naming the field, rule and value: non-positive/NaN epsilon, empty level, an item in
        two levels, duplicate level names, unknown model/notion, missing padding_length for
        IDUE-PS, inconsistent item assignment, unreadable CSV.
    """
    spec = spec_from_pydantic(IDUESpec, raw)
    base = Path(base_dir) if base_dir is not None else Path.cwd()
    names = [lv.name for lv in spec.levels]
    seen: dict[str, int] = {}
    for i, n in enumerate(names):
        if n in seen:
            raise SpecError(f"levels[{i}].name", f"must be unique (also levels[{seen[n]}])", n)
        seen[n] = i
    if spec.mechanism == "idue-ps":
        if spec.padding_length is None:
            raise SpecError("padding_length", "is required for mechanism 'idue-ps' (padding-and-sampling length L >= 1)", None)
        if spec.notion != "minid":
            raise SpecError("notion", "must be 'minid' for 'idue-ps' (Theorem 4 proves IDUE-PS for MinID-LDP only)", spec.notion)
    elif spec.padding_length is not None:
        raise SpecError("padding_length", "applies only to mechanism 'idue-ps'", spec.padding_length)

    has_items = [lv.items is not None for lv in spec.levels]
    has_share = [lv.share is not None for lv in spec.levels]
    modes = [bool(all(has_items)), spec.item_levels_csv is not None,
             spec.domain is not None or spec.domain_csv is not None]
    if sum(modes) != 1:
        raise SpecError("levels", "give items to levels in exactly one way: 'items' on every level, "
                        "'item_levels_csv', or 'domain'/'domain_csv' with a 'share' on every level",
                        {"items": has_items, "item_levels_csv": spec.item_levels_csv, "domain": spec.domain is not None})
    items: list[list[str]] = [[] for _ in names]
    if modes[0]:
        if any(has_share):
            raise SpecError(f"levels[{has_share.index(True)}].share", "cannot be combined with 'items'", "share")
        for i, lv in enumerate(spec.levels):
            if isinstance(lv.items, int):
                items[i] = [lv.name] if lv.items == 1 else [f"{lv.name}-{k}" for k in range(1, lv.items + 1)]
            else:
                items[i] = [str(x) for x in lv.items]
        order = [x for lvl in items for x in lvl]
    elif modes[1]:
        if any(has_items) or any(has_share):
            raise SpecError("levels", "must not have 'items' or 'share' when 'item_levels_csv' is given", names)
        path = Path(spec.item_levels_csv)
        path = path if path.is_absolute() else base / path
        order = []
        for item, level in _read_mapping(path):
            if level not in seen:
                raise SpecError("item_levels_csv", f"level names must be among {names}", level)
            items[seen[level]].append(item)
            order.append(item)
    else:
        if not all(has_share) or any(has_items):
            raise SpecError("levels", "every level needs 'share' (and no 'items') when 'domain' is given", has_share)
        total = sum(lv.share for lv in spec.levels)
        if not math.isclose(total, 1.0, rel_tol=0, abs_tol=1e-9):
            raise SpecError("levels[*].share", "must sum to 1", total)
        if spec.domain is not None and spec.domain_csv is not None:
            raise SpecError("domain", "give 'domain' or 'domain_csv', not both", "both")
        if spec.domain_csv is not None:
            order = _domain_from_csv(spec.domain_csv, base)
        elif isinstance(spec.domain, int):
            if spec.domain < len(names):
                raise SpecError("domain", f"must have at least one item per level ({len(names)})", spec.domain)
            order = [str(k) for k in range(1, spec.domain + 1)]
        else:
            order = [str(x) for x in spec.domain]
        if len(order) < len(names):
            raise SpecError("domain", f"must have at least one item per level ({len(names)})", len(order))
        counts = _shares_to_counts([lv.share for lv in spec.levels], len(order))
        perm = np.random.default_rng(spec.assignment_seed).permutation(len(order))
        level_of = np.repeat(np.arange(len(names)), counts)[np.argsort(perm)]
        for idx, lvl in enumerate(level_of):
            items[int(lvl)].append(order[idx])
    for i, lvl in enumerate(items):
        if not lvl:
            raise SpecError(f"levels[{i}].items", "must not be empty (every level needs at least one item)", names[i])
    owner: dict[str, int] = {}
    for i, lvl in enumerate(items):
        for x in lvl:
            if x in owner:
                if owner[x] == i:
                    raise SpecError(f"levels[{i}].items", "must not list an item twice", x)
                raise SpecError(f"levels[{i}].items", f"item is already in level {names[owner[x]]!r} (an item belongs to one level)", x)
            owner[x] = i
    return spec, ResolvedLevels(names, [lv.epsilon for lv in spec.levels], items, order)

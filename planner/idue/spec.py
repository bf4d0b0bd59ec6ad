"""Spec model for IDUE / IDUE-PS plans (ID-LDP, Gu et al. ICDE 2020).

Accepted keys (TOML or JSON)::

    mechanism = "idue"        # or "idue-ps" (then padding_length = L is required)
    model = "opt0"            # "opt0" (default) | "opt1" | "opt2"      (eq. 9, 11, 12)
    notion = "minid"          # "minid" (default, r = min) | "avgid" (r = average, Sec. VIII)
    padding_length = 2        # IDUE-PS only: L >= 1
    users = 100000            # optional: n, to also predict the total MSE
    [[levels]]
    name = "hiv"
    epsilon = 1.3862943611198906
    items = 1                 # a count, or a list of item labels

Item-to-level assignment, exactly one of:

* every level has ``items`` (a count ``k`` makes labels ``name`` if ``k == 1`` else
  ``name-1 .. name-k``); an optional ``domain`` list then fixes the item order (it must
  hold exactly the levels' items);
* ``item_levels_csv = "map.csv"``: a CSV with header ``item,level`` (item order = row order;
  relative paths are resolved against the spec's folder);
* ``domain`` (a count ``m``: items are the indices 0..m-1 and ``domain.labels`` is null; or a
  list of labels) or ``domain_csv = {path = ..., column = ...}`` (distinct values of a CSV
  column, sorted; ``${LDPPLAN_DATA_DIR}`` expands to the data folder), every level has
  ``share`` (fractions summing to 1), and ``assignment_seed`` (int): items are assigned by a
  seeded random permutation, level ``i`` receiving ``round(share_i * m)`` items (largest
  remainder, at least one each): the paper's Sec. VII setting.

IDUE-PS with ``domain_csv``: ``user_set_budgets = true`` also reads the file's users' item sets
(rows ``user,item`` or MovieLens ``userId,movieId``) and records the distribution of their
eq. (16) set budgets in ``guarantee.users_set_budgets`` (raw data: a ``planning_inputs`` entry
with ``private: false``).

A plan embeds the spec with files inlined (``domain`` list and per-level ``items``), so
``verify`` re-derives the assignment without reading any file.
"""
from __future__ import annotations

import copy
import csv
import math
from pathlib import Path
from typing import Any, Iterable, Literal, Mapping, Optional, Union

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator

from ...mechanisms.idue._promises import IDUE_NOTIONS, items_by_shares
from .._common import Epsilon, SpecBase, check_labels, spec_from_pydantic
from ..errors import SpecError
from ..data import resolve_data_path

__all__ = ["IDUESpec", "LevelSpec", "ResolvedLevels", "parse_idue_spec", "inline_spec", "NOTION_NAMES"]

#: spec ``notion`` -> ``guarantee.notion`` (the runtime's table)
NOTION_NAMES = IDUE_NOTIONS


class LevelSpec(BaseModel):
    """One privacy level: a name, a budget (nats) and its items (or a share of the domain)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    name: str = Field(min_length=1)
    epsilon: Epsilon
    items: Optional[Union[StrictInt, list[Union[str, StrictInt]]]] = None
    share: Optional[float] = Field(default=None, gt=0, le=1)
    description: str = ""

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


class IDUESpec(SpecBase):
    """Validated IDUE / IDUE-PS spec (see the module docstring)."""

    mechanism: Literal["idue", "idue-ps"]
    model: Literal["opt0", "opt1", "opt2"] = "opt0"
    notion: Literal["minid", "avgid"] = "minid"
    padding_length: Optional[StrictInt] = Field(default=None, ge=1)
    users: Optional[StrictInt] = Field(default=None, ge=1)
    levels: list[LevelSpec] = Field(min_length=1)
    item_levels_csv: Optional[str] = None
    domain: Optional[Union[StrictInt, list[Union[str, StrictInt]]]] = None
    domain_csv: Optional[DomainCSV] = None
    assignment_seed: StrictInt = 0
    user_set_budgets: bool = Field(
        False, description="IDUE-PS with domain_csv: also read the file's users' item sets (rows user,item) and "
                           "record the distribution of their eq. (16) budgets in guarantee.users_set_budgets "
                           "(raw data: planning_inputs private false)")


class ResolvedLevels:
    """Levels with their items resolved.

    Attributes
    ----------
    names : list of str, length t
    epsilons : ndarray of float, shape (t,)
    items : list of list
        Items of each level: labels (str), or 0-based indices (int) when ``labels`` is None.
    labels : list of str or None
        All labels in index order (``domain.labels``), or None for a count domain.
    size : int
        ``m``.
    planning_inputs : list of dict
        Files read to plan (``{what, source, private}``).
    """

    def __init__(self, names: list[str], epsilons: npt.ArrayLike, items: list[list[Any]], labels: list[str] | None,
                 size: int, planning_inputs: Iterable[dict[str, Any]] = ()) -> None:
        self.names, self.epsilons, self.items = names, np.asarray(epsilons, float), items
        self.labels, self.size, self.planning_inputs = labels, int(size), list(planning_inputs)

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


def _domain_from_csv(dc: DomainCSV, base: Path) -> tuple[list[str], Path]:
    path = resolve_data_path(dc.path, base)
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
        return [str(v) for v in sorted(values, key=int)], path
    return sorted(values), path


def _check_common(spec: IDUESpec) -> dict[str, int]:
    seen: dict[str, int] = {}
    for i, lv in enumerate(spec.levels):
        if lv.name in seen:
            raise SpecError(f"levels[{i}].name", f"must be unique (also levels[{seen[lv.name]}])", lv.name)
        seen[lv.name] = i
    if spec.mechanism == "idue-ps":
        if spec.padding_length is None:
            raise SpecError("padding_length", "is required for mechanism 'idue-ps' (padding-and-sampling length L >= 1)", None)
        if spec.notion != "minid":
            raise SpecError("notion", "must be 'minid' for 'idue-ps' (Theorem 4 proves IDUE-PS for MinID-LDP only)", spec.notion)
    elif spec.padding_length is not None:
        raise SpecError("padding_length", "applies only to mechanism 'idue-ps'", spec.padding_length)
    if spec.user_set_budgets and (spec.mechanism != "idue-ps" or spec.domain_csv is None):
        raise SpecError("user_set_budgets", "needs mechanism 'idue-ps' and a 'domain_csv' file holding rows "
                        "user,item", spec.user_set_budgets)
    return seen


def _by_items(spec: IDUESpec):
    items: list[list] = []
    for i, lv in enumerate(spec.levels):
        if lv.share is not None:
            raise SpecError(f"levels[{i}].share", "cannot be combined with 'items'", lv.share)
        if lv.items is None:  # (the caller takes this route only when every level has items)
            raise SpecError(f"levels[{i}].items", "is required on every level when one level has 'items'", None)
        if isinstance(lv.items, int):
            items.append([lv.name] if lv.items == 1 else [f"{lv.name}-{k}" for k in range(1, lv.items + 1)])
        else:
            items.append([str(x) for x in lv.items])
    order = [x for lvl in items for x in lvl]
    if spec.domain is not None:
        if not isinstance(spec.domain, list):
            raise SpecError("domain", "with 'items' on every level must be a list of labels (the item order)", spec.domain)
        given = [str(x) for x in spec.domain]
        if sorted(given) != sorted(order):
            raise SpecError("domain", "must hold exactly the levels' items (each once)", len(given))
        order = given
    return items, order


def _by_shares(spec: IDUESpec, base: Path):
    names = [lv.name for lv in spec.levels]
    shares = [lv.share for lv in spec.levels if lv.share is not None]
    if len(shares) != len(spec.levels) or any(lv.items is not None for lv in spec.levels):
        raise SpecError("levels", "every level needs 'share' (and no 'items') when 'domain' is given",
                        [lv.share for lv in spec.levels])
    total = sum(shares)
    if not math.isclose(total, 1.0, rel_tol=0, abs_tol=1e-9):
        raise SpecError("levels[*].share", "must sum to 1", total)
    if spec.domain is not None and spec.domain_csv is not None:
        raise SpecError("domain", "give 'domain' or 'domain_csv', not both", "both")
    inputs = []
    if spec.domain_csv is not None:
        labels, path = _domain_from_csv(spec.domain_csv, base)
        inputs.append({"what": f"item domain: distinct values of column {spec.domain_csv.column!r}",
                       "source": str(path), "private": False})
        m = len(labels)
    elif isinstance(spec.domain, int):
        labels, m = None, spec.domain
    elif spec.domain is None:  # (the caller takes this route only with 'domain' or 'domain_csv')
        raise SpecError("domain", "is required (or 'domain_csv') when every level has a 'share'", None)
    else:
        labels = check_labels("domain", spec.domain)
        if len(set(labels)) != len(labels):
            raise SpecError("domain", "labels must be distinct", len(labels))
        m = len(labels)
    if m < len(names):
        raise SpecError("domain", f"must have at least one item per level ({len(names)})", m)
    items = items_by_shares(shares, m, spec.assignment_seed, labels)
    return items, labels, m, inputs


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
    seen = _check_common(spec)
    names = list(seen)
    all_items = all(lv.items is not None for lv in spec.levels)
    modes = [all_items, spec.item_levels_csv is not None,
             not all_items and (spec.domain is not None or spec.domain_csv is not None)]
    if sum(modes) != 1:
        raise SpecError("levels", "give items to levels in exactly one way: 'items' on every level, "
                        "'item_levels_csv', or 'domain'/'domain_csv' with a 'share' on every level",
                        {"items": [lv.items is not None for lv in spec.levels],
                         "item_levels_csv": spec.item_levels_csv, "domain": spec.domain is not None})
    inputs: list[dict] = []
    if modes[0]:
        items, labels = _by_items(spec)
        m = len(labels)
    elif spec.item_levels_csv is not None:  # modes[1]
        if any(lv.items is not None or lv.share is not None for lv in spec.levels) or spec.domain is not None:
            raise SpecError("levels", "must not have 'items', 'share' or 'domain' when 'item_levels_csv' is given", names)
        path = Path(spec.item_levels_csv)
        path = path if path.is_absolute() else base / path
        items, labels = [[] for _ in names], []
        for item, level in _read_mapping(path):
            if level not in seen:
                raise SpecError("item_levels_csv", f"level names must be among {names}", level)
            items[seen[level]].append(item)
            labels.append(item)
        m = len(labels)
        inputs.append({"what": "item -> privacy level mapping", "source": str(path), "private": False})
    else:
        items, labels, m, inputs = _by_shares(spec, base)
    owner: dict[Any, int] = {}
    for i, lvl in enumerate(items):
        if not lvl:
            raise SpecError(f"levels[{i}].items", "must not be empty (every level needs at least one item)", names[i])
        for x in lvl:
            if x in owner:
                if owner[x] == i:
                    raise SpecError(f"levels[{i}].items", "must not list an item twice", x)
                raise SpecError(f"levels[{i}].items", f"item is already in level {names[owner[x]]!r} (an item belongs to one level)", x)
            owner[x] = i
    return spec, ResolvedLevels(names, [lv.epsilon for lv in spec.levels], items, labels, m, inputs)


def inline_spec(raw: Mapping[str, Any], levels: ResolvedLevels) -> dict[str, Any]:
    """The spec with its files inlined: re-parsing it needs no file and gives the same levels.

    ``domain_csv`` becomes a ``domain`` list (and ``user_set_budgets`` is dropped); ``item_levels_csv`` becomes per-level ``items``
    plus a ``domain`` list (the item order).
    """
    out = copy.deepcopy(dict(raw))
    out.pop("user_set_budgets", None)  # the file is not inlined; guarantee.users_set_budgets records the result
    if ("domain_csv" in out or "item_levels_csv" in out) and levels.labels is None:
        raise ValueError("levels.labels: a domain read from a file has labels")
    if "domain_csv" in out:
        out.pop("domain_csv")
        out["domain"] = list(levels.labels or ())
    if "item_levels_csv" in out:
        out.pop("item_levels_csv")
        out["domain"] = list(levels.labels or ())
        out["levels"] = [dict(lv) | {"items": list(it)} for lv, it in zip(out["levels"], levels.items)]
    return out

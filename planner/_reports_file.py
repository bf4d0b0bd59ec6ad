"""Report files: the ONE module that writes and reads them (``ldpplan perturb`` / ``estimate``).

Format ``ldpplan-reports`` 1.0: an uncompressed numpy ``.npz`` archive with

* ``meta``: a 0-d unicode array holding strict JSON: ``{"format": "ldpplan-reports",
  "format_version": "1.0", "mechanism", "plan_fingerprint", "ldpplan_version", "n",
  "columns", "seeded", "seed" (only when seeded)}``;
* one array per report column (``Reports.to_arrays()``), named ``column.<name>``.

A report file is attacker-controlled input: it is read with ``allow_pickle=False``, its
size and the size of every member are bounded, and the mechanism validates the column
values in ``aggregate()``. A later release moves reports to Parquet: only this module changes.
"""
from __future__ import annotations

import dataclasses
import io
import json
import os
import zipfile
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ._io import write_bytes_atomic
from .errors import InputDataError

__all__ = ["REPORTS_FORMAT", "REPORTS_FORMAT_VERSION", "MAX_REPORTS_BYTES", "ReportsFile", "write_reports",
           "read_reports"]

REPORTS_FORMAT = "ldpplan-reports"
REPORTS_FORMAT_VERSION = "1.0"
#: Largest report file (and sum of its uncompressed members) read, in bytes.
MAX_REPORTS_BYTES = 4 * 2**30
_PREFIX = "column."


@dataclasses.dataclass(frozen=True)
class ReportsFile:
    """A report file's content.

    Attributes
    ----------
    meta : dict
        The ``meta`` record (see the module docstring).
    arrays : dict of str -> ndarray
        The report columns, each with ``n`` rows (first axis).
    """

    meta: dict[str, Any]
    arrays: dict[str, np.ndarray]


def write_reports(path: str | os.PathLike, arrays: Mapping[str, Any], *, mechanism: str, plan_fingerprint: str,
                  ldpplan_version: str, seed: int | None) -> dict[str, Any]:
    """Write report columns and their provenance to ``path`` atomically.

    Parameters
    ----------
    arrays : mapping of str -> array-like
        ``Reports.to_arrays()``: one row per user.
    seed : int or None
        The seed of a reproducible simulation (``seeded: true``), or None when the reports
        were drawn from a cryptographically secure generator.

    Returns
    -------
    dict
        The ``meta`` record written.
    """
    cols = {str(k): np.ascontiguousarray(v) for k, v in arrays.items()}
    n = int(next(iter(cols.values())).shape[0]) if cols else 0
    meta: dict[str, Any] = {
        "format": REPORTS_FORMAT, "format_version": REPORTS_FORMAT_VERSION, "mechanism": str(mechanism),
        "plan_fingerprint": str(plan_fingerprint), "ldpplan_version": str(ldpplan_version), "n": n,
        "columns": sorted(cols), "seeded": seed is not None,
    }
    if seed is not None:
        meta["seed"] = int(seed)
    buf = io.BytesIO()
    np.savez(buf, meta=np.array(json.dumps(meta, sort_keys=True)), **{_PREFIX + k: v for k, v in cols.items()})
    write_bytes_atomic(path, buf.getvalue())
    return meta


def _bad(path: Path, rule: str) -> InputDataError:
    return InputDataError(f"{path}: {rule}")


def _meta(path: Path, archive) -> dict[str, Any]:
    from ldpplan.mechanisms import PlanError, loads_strict

    if "meta" not in archive.files:
        raise _bad(path, "a reports file must hold a 'meta' record (written by `ldpplan perturb`)")
    raw = archive["meta"]
    if raw.dtype.kind != "U" or raw.ndim != 0:
        raise _bad(path, f"meta: must be a JSON string (got dtype {raw.dtype}, shape {raw.shape})")
    try:
        meta = loads_strict(str(raw), what="reports meta")
    except PlanError as exc:
        raise _bad(path, f"meta: {exc}") from None
    if not isinstance(meta, dict):
        raise _bad(path, "meta: must be a JSON object")
    if meta.get("format") != REPORTS_FORMAT:
        raise _bad(path, f"meta.format: must be {REPORTS_FORMAT!r} (got {str(meta.get('format'))[:40]!r})")
    version = meta.get("format_version")
    if not isinstance(version, str) or version.split(".")[0] != REPORTS_FORMAT_VERSION.split(".")[0]:
        raise _bad(path, f"meta.format_version: this ldpplan reads reports format {REPORTS_FORMAT_VERSION} "
                         f"(got {str(version)[:40]!r})")
    for key, kind in (("mechanism", str), ("plan_fingerprint", str), ("seeded", bool)):
        if not isinstance(meta.get(key), kind):
            raise _bad(path, f"meta.{key}: must be a {kind.__name__} (got {str(meta.get(key))[:40]!r})")
    n = meta.get("n")
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise _bad(path, f"meta.n: must be an integer >= 0 (got {str(n)[:40]!r})")
    return meta


def _check_members(p: Path) -> None:
    """Bound the arrays a file declares before numpy allocates them (headers are attacker-controlled)."""
    total = 0
    with zipfile.ZipFile(p) as zf:
        for info in zf.infolist():
            if not info.filename.endswith(".npy"):
                raise _bad(p, f"{info.filename}: unexpected member (a reports file holds .npy arrays only)")
            with zf.open(info) as fh:
                version = np.lib.format.read_magic(fh)
                reader = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
                    np.lib.format.read_array_header_2_0
                shape, _, dtype = reader(fh)
            if dtype.hasobject:
                raise _bad(p, f"{info.filename[:-4]}: object arrays are not allowed in a reports file")
            total += int(np.prod(shape, dtype=object)) * dtype.itemsize
            if total > MAX_REPORTS_BYTES:
                raise _bad(p, f"a reports file must hold at most {MAX_REPORTS_BYTES} bytes of arrays")


def read_reports(path: str | os.PathLike) -> ReportsFile:
    """Read a report file written by :func:`write_reports`, strictly.

    Raises
    ------
    InputDataError
        Missing or unreadable file, not an npz archive, too large, pickled (object) arrays,
        a missing or malformed ``meta`` record, columns of different lengths or not
        matching ``meta.n`` / ``meta.columns``. The message names the file and the rule.
    """
    p = Path(path)
    if not p.is_file():
        raise _bad(p, "reports file must exist")
    try:
        if p.stat().st_size > MAX_REPORTS_BYTES:
            raise _bad(p, f"a reports file must be at most {MAX_REPORTS_BYTES} bytes")
        _check_members(p)
        with np.load(p, allow_pickle=False) as archive:
            meta = _meta(p, archive)
            arrays = {}
            for name in archive.files:
                if name == "meta":
                    continue
                if not name.startswith(_PREFIX):
                    raise _bad(p, f"{name}: unexpected member (report columns are named {_PREFIX}<name>)")
                arrays[name[len(_PREFIX):]] = archive[name]
    except InputDataError:
        raise
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, KeyError) as exc:
        raise _bad(p, f"must be a reports file written by `ldpplan perturb` ({type(exc).__name__}: {exc})") from None
    if sorted(arrays) != meta.get("columns"):
        raise _bad(p, f"meta.columns: must list the file's columns {sorted(arrays)} "
                      f"(got {str(meta.get('columns'))[:80]})")
    for name, arr in arrays.items():
        if arr.ndim == 0 or arr.shape[0] != meta["n"]:
            raise _bad(p, f"column {name!r}: must have meta.n = {meta['n']} rows (got shape {arr.shape})")
    return ReportsFile(meta=meta, arrays=arrays)

"""Users' input files and report files of IDUE / IDUE-PS plans (``ldpplan perturb`` / ``estimate``)."""
from __future__ import annotations

import io
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from .._report import Table
from ..errors import InputDataError

__all__ = ["INPUT_DOC", "read_inputs", "perturb_file", "estimate_file"]

INPUT_DOC = ("IDUE: a CSV with a column 'item', one row per user, holding a label of the plan's domain.labels "
             "(or a 0-based index when domain.labels is null). IDUE-PS: rows 'user,item', one row per item a "
             "user holds (repeated rows count once; a user with no row is not a user). MovieLens ratings "
             "('userId,movieId') are read as item sets as they are; `simulate` of an IDUE plan on them takes one "
             "report per rating (the paper's Sec. VII setting).")


def read_inputs(plan: Mapping[str, Any], path: str | Path):
    """Read users' true inputs for ``perturb``.

    Returns
    -------
    ndarray of int64, shape (n,)
        IDUE: item indices.
    (indptr, indices) : tuple of ndarray of int64
        IDUE-PS: CSR item sets.

    Raises
    ------
    InputDataError
        Missing file or column, an item outside the plan's domain (line named).
    """
    from ..data import read_item_column, read_item_sets

    labels, size = plan["domain"]["labels"], plan["domain"]["size"]
    if plan["mechanism"] == "idue-ps":
        _, indptr, indices = read_item_sets(path, labels, size)
        return indptr, indices
    return read_item_column(path, labels, size)


def perturb_file(plan: Mapping[str, Any], input_path: str, output_path: str, rng: np.random.Generator) -> dict[str, Any]:
    """Perturb a CSV of inputs (:func:`read_inputs`) and write the reports (.npz: ``mechanism``, ``bits``).

    Returns ``{"n": n}``.
    """
    from ldpplan import mechanisms

    from .._io import write_bytes_atomic

    mech = mechanisms.load(dict(plan))
    reports = mech.perturb(read_inputs(plan, input_path), rng=rng)
    buf = io.BytesIO()
    np.savez_compressed(buf, mechanism=np.array(plan["mechanism"]), **reports.to_arrays())
    write_bytes_atomic(output_path, buf.getvalue())
    return {"n": len(reports)}


def estimate_file(plan: Mapping[str, Any], reports_path: str) -> Table:
    """Estimate item frequencies from a reports file written by :func:`perturb_file`.

    Returns
    -------
    Table
        Per item: label, frequency, count (``n * frequency``) and the eq. (8) standard error.
    """
    from ldpplan import mechanisms
    from ldpplan.mechanisms.idue import UnaryReports

    p = Path(reports_path)
    mech = mechanisms.load(dict(plan))
    try:
        with np.load(p, allow_pickle=False) as z:
            name = str(z["mechanism"])
            reports = UnaryReports(name, {"bits": z["bits"]})
    except FileNotFoundError:
        raise InputDataError(f"{p}: reports file does not exist") from None
    except (OSError, KeyError, ValueError) as exc:
        raise InputDataError(f"{p}: not a reports file written by 'ldpplan perturb' ({exc})") from None
    try:
        est = mech.estimate(reports)
    except ValueError as exc:
        raise InputDataError(f"{p}: {exc}") from None
    n = est.n
    rows = [[lab, float(f), float(n * f), float(s)] for lab, f, s in zip(mech.items, est.frequency, est.std_error)]
    return Table(f"Estimated frequencies from {n:,} reports", ["item", "frequency", "count", "std. error"], rows)

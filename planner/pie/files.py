"""Reports files of RR/GLH plans for ``ldpplan perturb`` / ``ldpplan estimate`` (``.npz``)."""
from __future__ import annotations

import io
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from .._report import Table
from ..errors import InputDataError, PlanFormatError

__all__ = ["perturb_file", "estimate_file", "runtime"]


def runtime(plan: Mapping[str, Any]):
    """The runtime of a plan (``mechanisms.load``), PlanError as PlanFormatError."""
    from ldpplan import mechanisms

    try:
        return mechanisms.load(dict(plan))
    except mechanisms.PlanError as exc:
        raise PlanFormatError(str(exc)) from None


def perturb_file(plan: Mapping[str, Any], input_path, output_path, rng) -> dict:
    """Perturb the items of a CSV (column ``item``, see ``FAMILY.input_doc``) and write the reports.

    The ``.npz`` holds the report columns (RR ``y``; GLH ``a``, ``b``, ``y``) and ``mechanism``.

    Returns
    -------
    dict
        ``{"n": number of reports}``.
    """
    from .._io import write_bytes_atomic
    from ..data import read_pie_items

    mech = runtime(plan)
    items = read_pie_items(input_path, mech.domain_size, mech.labels)
    reports = mech.perturb(items, rng=rng)
    buf = io.BytesIO()
    np.savez(buf, mechanism=np.array(plan["mechanism"]), **reports.to_arrays())
    write_bytes_atomic(output_path, buf.getvalue())
    return {"n": len(reports)}


def estimate_file(plan: Mapping[str, Any], reports_path, method: str | None = None) -> Table:
    """Estimate frequencies from a reports ``.npz`` with ``method`` (default: the runtime's first).

    Raises
    ------
    InputDataError
        Unreadable file, reports of another mechanism, malformed columns, unknown method.
    """
    from ldpplan.mechanisms import Reports

    mech = runtime(plan)
    columns = ("a", "b", "y") if plan["mechanism"] == "glh" else ("y",)
    try:
        with np.load(Path(reports_path), allow_pickle=False) as z:
            kind = str(z["mechanism"])
            arrays = {c: z[c] for c in columns} if kind == plan["mechanism"] else {}
    except (OSError, KeyError, ValueError) as exc:
        raise InputDataError(f"{reports_path}: not a reports file of this plan ({exc})") from None
    if kind != plan["mechanism"]:
        raise InputDataError(f"{reports_path}: reports of {kind!r}, the plan is {plan['mechanism']!r}")
    try:
        reports = Reports(plan["mechanism"], arrays)
    except ValueError as exc:
        raise InputDataError(f"{reports_path}: {exc}") from None
    try:
        est = mech.estimate(reports, method)
    except ValueError as exc:
        raise InputDataError(f"{reports_path}: {exc}") from None
    labels = mech.labels if mech.labels is not None else [str(i) for i in range(mech.domain_size)]
    se = [float(s) for s in est.std_error] if est.std_error is not None else ["-"] * len(labels)
    rows = [[lab, float(f), s] for lab, f, s in zip(labels, est.frequency, se)]
    return Table(f"{plan['mechanism'].upper()} frequency estimates ({est.method}, n = {est.n})",
                 ["item", est.method, "std_error"], rows)

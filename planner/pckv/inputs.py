"""Users' true inputs for ``ldpplan perturb`` and the reports files (PCKV)."""
from __future__ import annotations

import dataclasses
import io
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ldpplan.mechanisms.pckv import KeyValueUsers

from ..data import load_key_value_data, map_key_value_data
from ..errors import InputDataError, PrivacyViolation

__all__ = ["INPUT_DOC", "KeyValueInputs", "read_inputs", "perturb_file", "estimate_file"]

INPUT_DOC = ("CSV with a header and one row per (user, key) pair: columns user,key,value (user_id is accepted "
             "for user). key is a label of domain.labels, or a 0-based index 0..d-1 when labels is null; value is "
             "a number in [-1, 1] (outside it: an error unless the plan has values = \"clip\"). A user lists a key "
             "at most once; keys outside the domain are an error unless the plan has out_of_domain_keys = "
             "\"drop\". The MovieLens layout userId,movieId,rating is read too (rating mapped from [0.5, 5] to "
             "[-1, 1]).")


@dataclasses.dataclass(frozen=True)
class KeyValueInputs(KeyValueUsers):
    """:class:`KeyValueUsers` (what ``perturb`` accepts) plus where they came from.

    Attributes
    ----------
    user_ids : ndarray of str, shape (n,)
        The file's user ids, in the order of the CSR rows.
    dropped_pairs : int
        Pairs whose key is outside the plan's domain (``out_of_domain_keys = "drop"``).
    """

    user_ids: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, str))
    dropped_pairs: int = 0


def read_inputs(plan: Mapping[str, Any], path: str | Path) -> KeyValueInputs:
    """Read users' key-value pairs for the plan's runtime (see :data:`INPUT_DOC`).

    Returns
    -------
    KeyValueInputs
        Keys 0-based into the plan's domain.

    Raises
    ------
    InputDataError
        Unreadable file, missing columns, a key outside the domain, a value outside [-1, 1]
        (unless the plan clips), NaN, a repeated key.
    """
    pr = plan["params"]
    d = int(pr["domain_size"])
    data = load_key_value_data(path)
    indptr, keys, values, dropped = map_key_value_data(data, plan["domain"]["labels"], d,
                                                       out_of_domain_keys=pr.get("out_of_domain_keys", "reject"),
                                                       where=str(path))
    bad = (values < -1) | (values > 1)
    if bad.any() and pr.get("values", "reject") != "clip":
        i = int(np.nonzero(bad)[0][0])
        user = data.user_ids[int(np.searchsorted(indptr, i, side="right") - 1)]
        raise InputDataError(f"{path}: value of user {user} must be in [-1, 1] (got {values[i]!r}); "
                             "plan with values = \"clip\" to clip")
    return KeyValueInputs(indptr=indptr, keys=keys, values=values, user_ids=data.user_ids, dropped_pairs=dropped)


def perturb_file(plan: Mapping[str, Any], input_path, output_path, rng: np.random.Generator) -> dict:
    """Perturb users from a CSV and write the reports ``.npz`` (atomically).

    Arrays: ``mechanism``, ``plan_fingerprint``, ``user_ids`` and the report columns
    (PCKV-UE ``y``; PCKV-GRR ``key``, ``value``).

    Returns
    -------
    dict
        ``{"n": users, "dropped_pairs": int}``.
    """
    from ldpplan import mechanisms

    from .._io import write_bytes_atomic
    from .._plan_format import plan_fingerprint
    from .verify import verify

    check = verify(plan)
    if not check.holds:
        raise PrivacyViolation(f"refusing to perturb with a plan that fails verification: {check.message}")
    users = read_inputs(plan, input_path)
    mech = mechanisms.load(plan)
    try:
        reports = mech.perturb(users, rng=rng)
    except ValueError as exc:
        raise InputDataError(f"{input_path}: {exc}") from None
    buf = io.BytesIO()
    np.savez_compressed(buf, mechanism=np.array(plan["mechanism"]), plan_fingerprint=np.array(plan_fingerprint(plan)),
                        user_ids=users.user_ids, **reports.to_arrays())
    write_bytes_atomic(output_path, buf.getvalue())
    return {"n": len(reports), "dropped_pairs": users.dropped_pairs + reports.dropped_pairs}


def estimate_file(plan: Mapping[str, Any], reports_path, method: str | None = None):
    """Estimate every key's frequency and mean from a reports ``.npz`` of :func:`perturb_file`.

    Returns
    -------
    Table
        Columns ``key, frequency, mean, std_error`` (frequencies are fractions of users).

    Raises
    ------
    InputDataError
        Unreadable file, reports of another plan, malformed columns or unknown method.
    """
    from ldpplan import mechanisms
    from ldpplan.mechanisms.pckv import PCKVReports

    from .._plan_format import plan_fingerprint
    from .._report import Table

    mech = mechanisms.load(plan)
    cols = ("y",) if plan["mechanism"] == "pckv-ue" else ("key", "value")
    try:
        with np.load(reports_path, allow_pickle=False) as z:
            name, fp = str(z["mechanism"]), str(z["plan_fingerprint"])
            arrays = {c: z[c] for c in cols}
    except (OSError, KeyError, ValueError) as exc:
        raise InputDataError(f"{reports_path}: must be a reports .npz written by ldpplan perturb ({exc})") from None
    if name != plan["mechanism"] or fp != plan_fingerprint(plan):
        raise InputDataError(f"{reports_path}: reports were made with a different plan ({name})")
    try:
        est = mech.estimate(PCKVReports(name, arrays), method=method)
    except ValueError as exc:
        raise InputDataError(f"{reports_path}: {exc}") from None
    labels = plan["domain"]["labels"] or [str(i) for i in range(mech.domain_size)]
    rows = [[labels[i], float(est.frequency[i]), float(est.mean[i]), float(est.std_error[i])]
            for i in range(mech.domain_size)]
    return Table(f"PCKV estimates ({plan['mechanism']}, {est.method}, n={est.n})",
                 ["key", "frequency", "mean", "std_error"], rows)

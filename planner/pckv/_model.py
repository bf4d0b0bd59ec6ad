r"""What the PCKV planner assumes about the data: frequencies, means, set sizes, ``n``.

From a data file (exact per-key frequency ``f_k``, mean ``m_k`` and sampled frequency
``f_s(L)`` of Algorithm 1) or from the spec's priors (``prior_frequencies``,
``prior_means``, ``set_size_distribution``; defaults: pairs spread uniformly over keys
and ``|m_k| = 1``, the worst case of eq. (11)).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np

from ..data import KeyValueData, load_key_value_data, map_key_value_data, resolve_data_path
from ..errors import InputDataError, SpecError
from .spec import DEFAULT_USERS, PCKVSpec, private_phase
from ...solvers.pckv import KeyModel

__all__ = ["PlanningData", "read_spec_data", "data_model", "build_model", "open_assumptions", "MIN_KEY_FREQUENCY_SHARE",
           "length_search_key"]

#: Default ``min_key_frequency`` as a share of the uniform key frequency ``min(1, E[set size]/d)``.
MIN_KEY_FREQUENCY_SHARE = 0.5


def open_assumptions(spec: PCKVSpec, d: int, mean_set_size: float) -> dict[str, Any]:
    """``KeyModel`` keyword arguments for what the spec leaves open (frequencies, means).

    Without ``prior_frequencies`` the key distribution is open: the worst case covers keys with
    frequency at least ``min_key_frequency`` (default :data:`MIN_KEY_FREQUENCY_SHARE` of the uniform
    frequency) and means up to ``max |prior_means|`` (1 when the means are open too); the corrected
    estimator's worst case (the headline ``mse_mean``) covers every key the spec allows: frequency at
    least the spec's ``min_key_frequency`` when given, else ``1/n`` (``allowed_min_frequency``).

    Raises
    ------
    SpecError
        ``min_key_frequency`` given together with ``prior_frequencies``.
    """
    if spec.prior_frequencies is not None:
        if spec.min_key_frequency is not None:
            raise SpecError("min_key_frequency", "applies only when key frequencies are left open "
                            "(not with prior_frequencies or data)", spec.min_key_frequency)
        return {"basis": "priors"}
    floor = spec.min_key_frequency
    if floor is None:
        floor = MIN_KEY_FREQUENCY_SHARE * min(1.0, max(mean_set_size, 1e-12) / d)
    bound = 1.0 if spec.prior_means is None else max(abs(float(m)) for m in spec.prior_means)
    allowed = None if spec.min_key_frequency is None else float(spec.min_key_frequency)  # None: 1/n (KeyModel)
    return {"min_key_frequency": float(floor), "max_abs_mean": bound, "basis": "assumption",
            "allowed_min_frequency": allowed}


@dataclasses.dataclass(frozen=True)
class PlanningData:
    """The spec's data file, read once (or nothing).

    Attributes
    ----------
    path : Path or None
    data : KeyValueData or None
    """

    path: Path | None
    data: KeyValueData | None


def read_spec_data(spec: PCKVSpec, base_dir: Path | None) -> PlanningData:
    """Read ``spec.data`` (if any) with :func:`planner.data.load_key_value_data`.

    Raises
    ------
    SpecError
        ``data``: the file must exist and be a readable key-value CSV.
    """
    if spec.data is None:
        return PlanningData(None, None)
    path = resolve_data_path(spec.data, base_dir)
    if "$" in str(path):
        raise SpecError("data", "environment variables in the path must be set", spec.data)
    if not path.is_file():
        raise SpecError("data", "file must exist (relative paths are taken against the spec's folder; "
                        "${LDPPLAN_DATA_DIR} is $LDPPLAN_DATA_DIR or ../shared/data)", str(path))
    try:
        return PlanningData(path, load_key_value_data(path))
    except InputDataError as exc:
        raise SpecError("data", "must be a readable key-value CSV", str(exc)) from None


def data_model(indptr: np.ndarray, keys: np.ndarray, values: np.ndarray, d: int):
    """True ``f_k``, ``m_k``, the exact sampled frequency ``f_s(L)`` (a function) and set sizes.

    Returns
    -------
    freq : ndarray, shape (d,)
        Fraction of users holding each key.
    means : ndarray, shape (d,)
        Mean value of each key (0 where no user holds it).
    sampled : callable ``L -> ndarray (d,)``
        ``L E[#users sampling k] / n`` under Algorithm 1.
    sizes : ndarray of int, shape (n,)
    """
    n = indptr.shape[0] - 1
    sizes = np.diff(indptr)
    holders = np.bincount(keys, minlength=d).astype(float)
    freq = holders / n
    sums = np.bincount(keys, weights=values, minlength=d)
    means = np.where(holders > 0, sums / np.maximum(holders, 1), 0.0)
    size_of_pair = np.repeat(sizes, sizes).astype(float)

    def sampled(L: int) -> np.ndarray:
        w = L / np.maximum(size_of_pair, L)
        return np.bincount(keys, weights=w, minlength=d) / n

    return freq, means, sampled, sizes


def _prior_arrays(spec: PCKVSpec, d: int):
    sset = swt = None
    mean_size = 1.0
    if spec.set_size_distribution is not None:
        items = sorted((int(k), float(v)) for k, v in spec.set_size_distribution.items())
        sset = np.array([s for s, _ in items], dtype=float)
        swt = np.array([w for _, w in items], dtype=float)
        mean_size = float(np.dot(sset, swt / swt.sum()))
    freq, means = prior_vectors(spec, d, mean_size)
    return freq, means, sset, swt


def prior_vectors(spec: PCKVSpec, d: int, mean_size: float) -> tuple[np.ndarray, np.ndarray]:
    """``(f, m)``, shape ``(d,)``: ``prior_frequencies`` or ``min(1, E[size]/d)``, ``prior_means`` or 1.

    Raises
    ------
    SpecError
        ``prior_frequencies`` / ``prior_means`` without one entry per key.
    """
    for name in ("prior_frequencies", "prior_means"):
        vals = getattr(spec, name)
        if vals is not None and len(vals) != d:
            raise SpecError(name, f"must have one entry per key (d={d})", len(vals))
    freq = (np.array(spec.prior_frequencies, dtype=float) if spec.prior_frequencies is not None
            else np.full(d, min(1.0, mean_size / d)))
    means = np.array(spec.prior_means, dtype=float) if spec.prior_means is not None else np.ones(d)
    return freq, means


def build_model(spec: PCKVSpec, d: int, labels: list[str] | None, pdata: PlanningData):
    """The :class:`solvers.pckv.KeyModel` the planner predicts errors with, and its assumptions.

    Returns
    -------
    model : KeyModel
    info : dict
        ``source`` ("data"/"priors"), ``users``, ``users_source``, data statistics or prior choices.

    Raises
    ------
    SpecError
        Priors of the wrong length, data keys outside the domain, no key with ``f > 0``.
    """
    info: dict[str, Any] = {}
    if pdata.data is not None:
        try:
            indptr, keys, values, dropped = map_key_value_data(pdata.data, labels, d,
                                                               out_of_domain_keys=spec.out_of_domain_keys)
        except InputDataError as exc:
            raise SpecError("data", "keys must be in the plan's domain", str(exc)) from None
        freq, means, sampled, sizes = data_model(indptr, keys, np.clip(values, -1, 1), d)
        n = spec.users or pdata.data.n_users
        info.update({"source": "data", "data": str(pdata.path), "users_in_data": pdata.data.n_users,
                     "pairs": int(keys.size), "dropped_pairs": dropped,
                     "max_set_size": int(sizes.max()) if sizes.size else 0,
                     "mean_set_size": float(sizes.mean()) if sizes.size else 0.0})
        sset, swt = np.unique(sizes, return_counts=True)
        if spec.min_key_frequency is not None:
            raise SpecError("min_key_frequency", "applies only when key frequencies are left open "
                            "(not with prior_frequencies or data)", spec.min_key_frequency)
        kwargs = dict(sampled_frequencies=sampled, set_sizes=sset, set_size_weights=swt, basis="data")
    else:
        freq, means, sset, swt = _prior_arrays(spec, d)
        n = spec.users or DEFAULT_USERS
        info.update({"source": "priors",
                     "prior_frequencies": "spec" if spec.prior_frequencies is not None
                     else "pairs spread uniformly over keys (f_k = E[set size]/d)",
                     "prior_means": "spec" if spec.prior_means is not None else "|m_k| = 1 (worst case of eq. 11)"})
        mean_size = 1.0 if sset is None else float(np.dot(sset, swt / swt.sum()))
        kwargs = dict(set_sizes=sset, set_size_weights=swt, **open_assumptions(spec, d, mean_size))
        if kwargs.get("min_key_frequency") is not None:
            info["min_key_frequency"] = kwargs["min_key_frequency"]
    info["users_source"] = "spec" if spec.users is not None else (
        "data" if pdata.data is not None else f"default ({DEFAULT_USERS})")
    order = np.argsort(-freq, kind="stable")
    obj_keys = np.nonzero(freq > 0)[0] if spec.objective_keys == "all" else order[: min(int(spec.objective_keys), d)]
    obj_keys = obj_keys[freq[obj_keys] > 0]
    if obj_keys.size == 0:
        raise SpecError("prior_frequencies", "at least one key must have a frequency > 0", None)
    info["users"] = int(n)
    return KeyModel(freq, means, n, objective_keys=obj_keys, **kwargs), info


def length_search_key(spec: PCKVSpec, mechanism: str, source: Any) -> list[Any] | None:
    """What the ``"auto"`` padding-length search of ``mechanism`` depends on, as a memo key of
    :func:`ldpplan.planner._solve_once.once` (one search per ``ldpplan plan``, shared by plan and verify).

    The search is a function of the spec (budget, allocation, weights, bound, priors) and of the planning
    model, itself a function of the spec and of the data file ``source`` (its path; None without data).
    On the private route the model comes from phase 1 (simulated by plan, recomputed from the recorded
    counts by verify): None, the search is not shared.
    """
    if private_phase(spec) is not None:
        return None
    return [mechanism, spec.model_dump(mode="json"), None if source is None else str(source)]

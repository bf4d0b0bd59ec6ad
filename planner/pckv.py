r"""PCKV family: key-value data (key frequencies and per-key value means).

Source: Gu, Li, Cheng, Xiong, Cao, *PCKV: Locally Differentially Private Correlated
Key-Value Data Collection with Optimized Utility*, USENIX Security 2020 (Sec. 4-6,
App. A-F). Math lives in :mod:`solvers.pckv`, the client/server runtime in
:mod:`mechanisms.pckv`.

Spec (TOML or JSON)
-------------------
``mechanism``
    ``"pckv-ue"``, ``"pckv-grr"`` or ``"pckv"`` (choose the one with the smaller
    predicted error, Theorem 4 and Sec. 5.4; the plan records why).
``epsilon``
    Total budget in nats, ``0 < epsilon <= 20``.
``keys``
    ``d`` as a count, a list of distinct key labels, or ``"data"`` (the distinct keys
    of the ``data`` file).
``padding_length``
    ``L >= 1`` or ``"auto"`` (needs ``set_size_distribution`` or ``data``; see
    :func:`solvers.pckv.choose_padding_length` for the truncation model). Default 1.
``allocation``
    ``"optimized"`` (Lemma 2 / Lemma 3, default), ``"numeric"``, ``"naive"``, ``"tight"`` (eq. 21).
``weights``
    ``{frequency = w_f, mean = w_m}`` of the objective ``w_f MSE_f + w_m MSE_m`` (default 1, 1).
``users``
    ``n`` for predicted errors (default: the data's user count, else 1,000,000).
``prior_frequencies`` / ``prior_means``
    Optional lists of length ``d`` (defaults: pairs spread uniformly over keys;
    ``|m_k| = 1``, the worst case of eq. (11)).
``set_size_distribution``
    Optional table ``{"1" = 0.5, "2" = 0.3, ...}`` (pairs per user -> probability or count).
``data``
    Optional path to a key-value CSV (``user_id,key,value`` or the MovieLens
    ``userId,movieId,rating`` layout, ratings mapped from [0.5, 5] to [-1, 1]);
    ``$VARS`` are expanded, relative paths resolve against the spec's folder.
``objective_keys``
    ``"all"`` (default) or ``N``: the objective averages over the ``N`` most frequent keys.
``max_padding_length``
    Upper end of the ``L = "auto"`` search (default 64).
``values`` / ``out_of_domain_keys``
    Runtime handling: ``"reject"`` (default) or ``"clip"`` values outside [-1, 1];
    ``"reject"`` (default) or ``"drop"`` keys outside the plan's domain.

Simulation (``ldpplan simulate``)
---------------------------------
``--data`` a key-value CSV (as above); without it the synthetic setting of Sec. 6.1
(``-O distribution=uniform|gaussian``, ``-O users=N``). ``-O top=50`` sets the top-N
key set. Rows: the plan as written, PCKV-UE and PCKV-GRR with the optimized
allocation and with the naive ``epsilon/2`` split, all at the plan's ``epsilon`` and ``L``.

Runtime files
-------------
``ldpplan perturb --input users.csv`` reads ``user_id,key,value`` (or MovieLens) and
writes ``.npz`` with ``mechanism``, ``reports`` (PCKV-UE: ``(n, d+L)`` int8; PCKV-GRR:
``(n, 2)`` int64), ``params`` (a, b, p, d, L) and ``user_ids``.
"""
from __future__ import annotations

import dataclasses
import io
import math
import os
import time
from decimal import Decimal, localcontext
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal, Mapping, Optional, Union

import numpy as np

from ldpplan.mechanisms.pckv import KeyValueUsers

from ._common import attach_verification, plan_header, spec_from_pydantic, validate_plan_schema
from ._report import SimulateOptions, SimulationReport, Table, Verification
from .errors import InputDataError, PlanFormatError, PrivacyViolation, SpecError

__all__ = [
    "MECHANISMS", "EXAMPLES", "PCKVSpec", "KeyValueData", "load_key_value_data",
    "plan_from_spec", "verify_plan", "summarize", "simulate", "perturb_file", "estimate_file",
    "composed_epsilon_exact",
]

MECHANISMS = ("pckv", "pckv-ue", "pckv-grr")

#: Relative shrink of the budget before solving, so grid rounding keeps slack >= 0.
SAFETY = 1e-12
MAX_EPSILON = 20.0
DEFAULT_USERS = 1_000_000

EXAMPLES: dict[str, dict[str, Any]] = {
    # Sec. 6.1: n = 10^6 users, d = 100 keys, one pair per user (L = 1).
    "pckv-synthetic": {
        "mechanism": "pckv-ue", "epsilon": 1.0, "keys": 100, "padding_length": 1,
        "allocation": "optimized", "users": 1_000_000,
    },
    # MovieLens ratings: key = movieId, value = rating mapped to [-1, 1]; L chosen from
    # the data's set-size distribution (the data folder comes from $LDPPLAN_DATA_DIR).
    "pckv-movielens": {
        "mechanism": "pckv", "epsilon": 4.0, "keys": "data", "padding_length": "auto",
        "allocation": "optimized", "objective_keys": 50, "max_padding_length": 200,
        "data": "${LDPPLAN_DATA_DIR}/movielens_ratings.csv",
    },
}


# ======================================================================= spec
def _spec_model():
    import pydantic

    class Weights(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="forbid")
        frequency: float = pydantic.Field(1.0, ge=0, allow_inf_nan=False)
        mean: float = pydantic.Field(1.0, ge=0, allow_inf_nan=False)

    class Spec(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="forbid")
        mechanism: Literal["pckv", "pckv-ue", "pckv-grr"]
        epsilon: float = pydantic.Field(gt=0, le=MAX_EPSILON, allow_inf_nan=False)
        keys: Union[pydantic.conint(ge=2, le=10_000_000), Literal["data"], list[Union[str, int]]]
        padding_length: Union[pydantic.conint(ge=1, le=100_000), Literal["auto"]] = 1
        allocation: Literal["optimized", "numeric", "naive", "tight"] = "optimized"
        weights: Weights = Weights()
        users: Optional[pydantic.conint(ge=1)] = None
        prior_frequencies: Optional[list[pydantic.confloat(ge=0, le=1, allow_inf_nan=False)]] = None
        prior_means: Optional[list[pydantic.confloat(ge=-1, le=1, allow_inf_nan=False)]] = None
        set_size_distribution: Optional[dict[str, pydantic.confloat(ge=0, allow_inf_nan=False)]] = None
        data: Optional[str] = None
        objective_keys: Union[Literal["all"], pydantic.conint(ge=1)] = "all"
        max_padding_length: pydantic.conint(ge=1, le=100_000) = 64
        values: Literal["reject", "clip"] = "reject"
        out_of_domain_keys: Literal["reject", "drop"] = "reject"

    return Spec


PCKVSpec = None  # filled lazily (pydantic import is deferred)


def _parse_spec(raw: Mapping[str, Any]):
    global PCKVSpec
    if PCKVSpec is None:
        PCKVSpec = _spec_model()
    spec = spec_from_pydantic(PCKVSpec, raw)
    if spec.weights.frequency + spec.weights.mean <= 0:
        raise SpecError("weights", "frequency + mean must be > 0", raw.get("weights"))
    if isinstance(spec.keys, list):
        labels = [str(k) for k in spec.keys]
        if len(labels) < 2 or len(set(labels)) != len(labels):
            raise SpecError("keys", "a list of keys must hold at least 2 distinct labels", spec.keys)
    if spec.keys == "data" and spec.data is None:
        raise SpecError("keys", '"data" needs the data field (a key-value CSV)', spec.keys)
    if spec.padding_length == "auto" and spec.data is None and spec.set_size_distribution is None:
        raise SpecError("padding_length", '"auto" needs set_size_distribution or data', "auto")
    if spec.set_size_distribution is not None:
        try:
            sizes = [int(k) for k in spec.set_size_distribution]
        except ValueError:
            raise SpecError("set_size_distribution", "keys must be integer set sizes", list(spec.set_size_distribution)) from None
        if min(sizes) < 0 or sum(spec.set_size_distribution.values()) <= 0:
            raise SpecError("set_size_distribution", "sizes must be >= 0 and the weights must not all be 0",
                            spec.set_size_distribution)
    return spec


# ======================================================================= data
@dataclasses.dataclass(frozen=True, kw_only=True)
class KeyValueData(KeyValueUsers):
    """Users' key-value sets read from a CSV: the runtime's CSR :class:`KeyValueUsers` plus labels.

    Attributes
    ----------
    labels : list of str, length m
        Distinct keys of the file (sorted numerically when all are integers).
    user_ids : ndarray of str, shape (n,)
    indptr : ndarray of int64, shape (n + 1,)
    keys : ndarray of int64, shape (pairs,)
        Indices into ``labels``.
    values : ndarray of float64, shape (pairs,)
        Values (MovieLens ratings mapped linearly from [0.5, 5] to [-1, 1]).
    """

    labels: list
    user_ids: np.ndarray

    def set_sizes(self) -> np.ndarray:
        """Pairs per user, shape (n,)."""
        return np.diff(self.indptr)


def _sort_labels(labels: np.ndarray) -> list[str]:
    try:
        return [str(x) for x in sorted(labels.tolist(), key=lambda s: (0, int(s), "") )]
    except ValueError:
        return sorted(str(x) for x in labels.tolist())


def load_key_value_data(path: str | os.PathLike) -> KeyValueData:
    """Read a key-value CSV: ``user_id,key,value`` or MovieLens ``userId,movieId,rating``.

    MovieLens files go through :func:`planner.data.load_movielens_ratings`; key =
    movieId, value = rating mapped linearly from [0.5, 5] to [-1, 1].

    Raises
    ------
    InputDataError
        Missing file, missing columns, unparsable numbers, or a user listing a key twice.
    """
    import csv

    p = Path(path)
    if not p.is_file():
        raise InputDataError(f"data file must exist (got {str(p)!r})")
    with p.open(newline="", encoding="utf-8") as fh:
        header = next(csv.reader(fh), None)
    if header is None:
        raise InputDataError(f"{p}: file is empty")
    header = [h.strip() for h in header]
    if {"userId", "movieId", "rating"} <= set(header):
        from .data import load_movielens_ratings

        ml = load_movielens_ratings(p)
        users_raw = ml.user_ids.astype(str)
        keys_raw = ml.movie_ids.astype(str)
        values = ml.values_in_unit_interval()
    elif {"user_id", "key", "value"} <= set(header):
        iu, ik, iv = header.index("user_id"), header.index("key"), header.index("value")
        with p.open(newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))[1:]
        try:
            users_raw = np.array([r[iu].strip() for r in rows], dtype=str)
            keys_raw = np.array([r[ik].strip() for r in rows], dtype=str)
            values = np.array([float(r[iv]) for r in rows], dtype=np.float64)
        except (ValueError, IndexError) as exc:
            raise InputDataError(f"{p}: unparsable row ({exc})") from None
    else:
        raise InputDataError(f"{p}: columns user_id,key,value (or userId,movieId,rating) are required (header is {header})")
    if np.isnan(values).any():
        raise InputDataError(f"{p}: values must be numbers (found NaN)")
    uniq_keys = np.unique(keys_raw)
    labels = _sort_labels(uniq_keys)
    pos = {lab: i for i, lab in enumerate(labels)}
    key_idx = np.array([pos[k] for k in keys_raw.tolist()], dtype=np.int64) if keys_raw.size else np.zeros(0, np.int64)
    user_u, user_idx = np.unique(users_raw, return_inverse=True)
    order = np.lexsort((key_idx, user_idx))
    uid_sorted, kid_sorted = user_idx[order], key_idx[order]
    if uid_sorted.size > 1:
        dup = (np.diff(uid_sorted) == 0) & (np.diff(kid_sorted) == 0)
        if dup.any():
            i = int(np.nonzero(dup)[0][0])
            raise InputDataError(f"{p}: user {user_u[uid_sorted[i]]} lists key {labels[kid_sorted[i]]} twice")
    counts = np.bincount(user_idx, minlength=user_u.shape[0])
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return KeyValueData(labels=labels, user_ids=user_u, indptr=indptr, keys=kid_sorted.astype(np.int64),
                        values=values[order])


def _resolve_path(text: str, base_dir: Path | None, field: str) -> Path:
    expanded = os.path.expandvars(os.path.expanduser(text))
    if "$" in expanded:
        raise SpecError(field, "environment variables in the path must be set (e.g. LDPPLAN_DATA_DIR=/path/to/data)", text)
    p = Path(expanded)
    if not p.is_absolute() and base_dir is not None:
        p = Path(base_dir) / p
    if not p.is_file():
        raise SpecError(field, "file must exist", str(p))
    return p


def _map_to_domain(data: KeyValueData, labels: list[str] | None, d: int, mode: str, where: str):
    """Re-index the data's keys into the plan's domain. Returns (indptr, keys, values, dropped)."""
    if labels is not None:
        pos = {lab: i for i, lab in enumerate(labels)}
        mapped = np.array([pos.get(lab, -1) for lab in data.labels], dtype=np.int64)
    else:
        mapped = np.array([int(lab) if lab.lstrip("-").isdigit() else -1 for lab in data.labels], dtype=np.int64)
        mapped[(mapped < 0) | (mapped >= d)] = -1
    k = mapped[data.keys] if data.keys.size else data.keys
    bad = k < 0
    dropped = int(bad.sum())
    if dropped:
        if mode != "drop":
            first = data.labels[int(data.keys[np.nonzero(bad)[0][0]])]
            domain = "the plan's key labels" if labels is not None else f"0..{d - 1}"
            raise InputDataError(f"{where}: key {first!r} is not in {domain} ({dropped} pairs); "
                                 "plan with out_of_domain_keys = \"drop\" to drop them")
        owner = np.repeat(np.arange(data.n_users), np.diff(data.indptr))[~bad]
        counts = np.bincount(owner, minlength=data.n_users)
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        return indptr, k[~bad], data.values[~bad], dropped
    return data.indptr, k, data.values, 0


def _data_model(indptr, keys, values, d: int):
    """True f_k, m_k and the exact sampled-frequency function f_s(L) of a data set."""
    n = indptr.shape[0] - 1
    sizes = np.diff(indptr)
    holders = np.bincount(keys, minlength=d).astype(float)
    freq = holders / n
    sums = np.bincount(keys, weights=values, minlength=d)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(holders > 0, sums / np.maximum(holders, 1), 0.0)
    size_of_pair = np.repeat(sizes, sizes).astype(float)

    def sampled(L: int) -> np.ndarray:
        w = L / np.maximum(size_of_pair, L)
        return np.bincount(keys, weights=w, minlength=d) / n

    return freq, means, sampled, sizes


# ================================================================ plan build
def _grid_params(mechanism: str, pr: Mapping[str, float], d: int, L: int) -> dict[str, float]:
    """Round to the 2^-48 grid toward the safe side (a, p down; UE b up; GRR b derived)."""
    from ldpplan.mechanisms._sampling import to_grid

    if mechanism == "pckv-ue":
        a, b, p = to_grid(pr["a"], "down"), to_grid(pr["b"], "up"), to_grid(pr["p"], "down")
    else:
        a, p = to_grid(pr["a"], "down"), to_grid(pr["p"], "down")
        b = (1.0 - a) / (d + L - 1)
    p = max(p, 0.5)
    return {"a": float(a), "b": float(b), "p": float(p)}


def _budgets(mechanism: str, a: float, b: float, p: float) -> tuple[float, float]:
    e1 = math.log(a / b) if mechanism == "pckv-grr" else math.log(a * (1 - b) / (b * (1 - a)))
    return e1, math.log(p / (1 - p))


def _solve_params(mechanism: str, epsilon: float, method: str, d: int, L: int, model, weights):
    """Allocate at a budget shrunk by SAFETY and round to the grid; returns (SolveResult, grid params)."""
    from ldpplan.solvers import pckv as S

    sol = S.allocate(mechanism, epsilon * (1.0 - SAFETY), method=method, domain_size=d, padding_length=L,
                     model=model, weights=weights)
    return sol, _grid_params(mechanism, sol.parameters, d, L)


def composed_epsilon_exact(mechanism: str, a: float, b: float, p: float, domain_size: int, padding_length: int) -> Fraction:
    r"""The worst-case probability ratio ``e^epsilon`` of the numbers in a plan, exactly.

    Recomputed from the probabilities (not the budgets) with rational arithmetic, from
    the proofs of Theorem 2 (App. A) and Theorem 3 (App. B):

    * PCKV-UE: ``(2pa/b) / min{(1-a)/(1-b), 2(1-p)a/b}``;
    * PCKV-GRR (``b = (1-a)/(d+L-1)``):
      ``(ap/L + (1-1/L) b/2) / min{a(1-p)/L + (1-1/L) b/2, b/2}``.

    Valid for ``0 < b < a < 1`` and ``1/2 <= p < 1``.

    Returns
    -------
    fractions.Fraction
        The ratio bound (``ln`` of it is the composed epsilon in nats).
    """
    A, P = Fraction(a), Fraction(p)
    L = Fraction(int(padding_length))
    if mechanism == "pckv-ue":
        B = Fraction(b)
        upper = 2 * P * A / B
        lower = min((1 - A) / (1 - B), 2 * (1 - P) * A / B)
        return upper / lower
    B = (1 - A) / (int(domain_size) + int(padding_length) - 1)
    upper = A * P / L + (1 - 1 / L) * B / 2
    lower = min(A * (1 - P) / L + (1 - 1 / L) * B / 2, B / 2)
    return upper / lower


def _ratio_within(ratio: Fraction, epsilon: float) -> bool:
    """Rigorous ``ratio <= e^epsilon`` (60-digit decimals with a 1e-50 guard)."""
    with localcontext() as ctx:
        ctx.prec = 60
        r = Decimal(ratio.numerator) / Decimal(ratio.denominator)
        bound = Decimal(float(epsilon)).exp()
        return r * (1 + Decimal(10) ** -50) <= bound


def _guarantee_epsilon(ratio: Fraction, target: float) -> float:
    """Smallest float >= ln(ratio) (checked rigorously), never above ``target``."""
    e = math.log(ratio.numerator) - math.log(ratio.denominator)
    for _ in range(64):
        if _ratio_within(ratio, e):
            return min(e, target) if _ratio_within(ratio, min(e, target)) else e
        e = math.nextafter(e, math.inf)
    return target


def _build_model(spec, d: int, labels, base_dir):
    """KeyModel, data summary and set sizes for predictions; returns (model, info)."""
    from ldpplan.solvers.pckv import KeyModel

    info: dict[str, Any] = {}
    if spec.data is not None:
        path = _resolve_path(spec.data, base_dir, "data")
        try:
            data = load_key_value_data(path)
        except InputDataError as exc:
            raise SpecError("data", "must be a readable key-value CSV", str(exc)) from None
        try:
            indptr, keys, values, dropped = _map_to_domain(data, labels, d, spec.out_of_domain_keys, "data")
        except InputDataError as exc:
            raise SpecError("data", "keys must be in the plan's domain", str(exc)) from None
        vals = np.clip(values, -1, 1)
        freq, means, sampled, sizes = _data_model(indptr, keys, vals, d)
        n = spec.users or data.n_users
        info.update({"source": "data", "data": str(path), "users_in_data": data.n_users, "pairs": int(keys.size),
                     "dropped_pairs": dropped, "max_set_size": int(sizes.max()) if sizes.size else 0,
                     "mean_set_size": float(sizes.mean()) if sizes.size else 0.0,
                     "median_set_size": float(np.median(sizes)) if sizes.size else 0.0})
        sset, swt = np.unique(sizes, return_counts=True)
        model_kwargs = dict(sampled_frequencies=sampled, set_sizes=sset, set_size_weights=swt)
    else:
        n = spec.users or DEFAULT_USERS
        sset = swt = None
        mean_size = 1.0
        if spec.set_size_distribution is not None:
            items = sorted((int(k), float(v)) for k, v in spec.set_size_distribution.items())
            sset = np.array([s for s, _ in items], dtype=float)
            swt = np.array([w for _, w in items], dtype=float)
            mean_size = float(np.dot(sset, swt / swt.sum()))
        if spec.prior_frequencies is not None:
            if len(spec.prior_frequencies) != d:
                raise SpecError("prior_frequencies", f"must have one entry per key (d={d})", len(spec.prior_frequencies))
            freq = np.array(spec.prior_frequencies, dtype=float)
        else:
            freq = np.full(d, min(1.0, mean_size / d))
        if spec.prior_means is not None:
            if len(spec.prior_means) != d:
                raise SpecError("prior_means", f"must have one entry per key (d={d})", len(spec.prior_means))
            means = np.array(spec.prior_means, dtype=float)
        else:
            means = np.ones(d)
        info.update({"source": "priors", "prior_frequencies": "spec" if spec.prior_frequencies else
                     "pairs spread uniformly over keys (f_k = E[set size]/d)",
                     "prior_means": "spec" if spec.prior_means else "|m_k| = 1 (worst case of eq. 11)"})
        model_kwargs = dict(set_sizes=sset, set_size_weights=swt)
    if spec.users is not None:
        info["users_source"] = "spec"
    else:
        info["users_source"] = "data" if spec.data is not None else f"default ({DEFAULT_USERS})"
    order = np.argsort(-freq, kind="stable")
    if spec.objective_keys == "all":
        obj_keys = np.nonzero(freq > 0)[0]
    else:
        obj_keys = order[: min(int(spec.objective_keys), d)]
        obj_keys = obj_keys[freq[obj_keys] > 0]
    if obj_keys.size == 0:
        raise SpecError("prior_frequencies", "at least one key must have a frequency > 0", None)
    model = KeyModel(freq, means, n, objective_keys=obj_keys, **model_kwargs)
    info["users"] = int(n)
    info["objective_keys"] = spec.objective_keys
    return model, info


def _prediction(mechanism: str, q: Mapping[str, float], L: int, model, info) -> dict[str, Any]:
    from ldpplan.solvers.pckv import approximate_mse, theorem4_mse

    keys = model.objective_keys
    fs = model.sampled(L)
    mf, mm = theorem4_mse(q["a"], q["b"], q["p"], L, model.n, model.frequencies[keys], model.means[keys], fs[keys])
    af, am = approximate_mse(q["a"], q["b"], q["p"], L, model.n, model.frequencies[keys], model.means[keys])
    a, b, p = q["a"], q["b"], q["p"]
    truncated = None
    if model.set_sizes is not None:
        w = model.set_size_weights / model.set_size_weights.sum()
        truncated = float(w[model.set_sizes > L].sum())
    return {
        "users": int(model.n), "users_source": info["users_source"], "objective_keys": info["objective_keys"],
        "keys_averaged": int(keys.size),
        "mse_frequency": float(np.mean(mf)), "mse_mean": float(np.mean(mm)),
        "approx_mse_frequency": float(np.mean(af)), "approx_mse_mean": float(np.mean(am)),
        "g": b / (a * a * (2 * p - 1) ** 2), "h": (1 - b) * b / (a - b) ** 2,
        "users_truncated_fraction": truncated,
        "model": ("Theorem 4 eq. (9)-(12) per key at the sampled frequency f_s(L), plus the truncation bias "
                  "(f_s(L) - f)^2 of eq. (7) and the bias (10)^2 of eq. (8); approximations eq. (17)-(18)"),
        "assumptions": {k: v for k, v in info.items() if k not in ("users", "users_source", "objective_keys")},
    }


def plan_from_spec(raw: Mapping[str, Any], *, base_dir: Path | None = None) -> dict[str, Any]:
    """Validate a PCKV spec, allocate the budget, build and verify the plan.

    Parameters
    ----------
    raw : mapping
        The spec (see the module docstring).
    base_dir : Path, optional
        Folder for relative ``data`` paths (default: working directory).

    Returns
    -------
    dict
        The plan (mechanism ``"pckv-ue"`` or ``"pckv-grr"``), already verified.

    Raises
    ------
    SpecError
        Invalid spec (field, rule, value).
    PrivacyViolation
        The rounded parameters fail the independent check (never returned).
    """
    from ldpplan.solvers import SolverError
    from ldpplan.solvers import pckv as S

    t0 = time.perf_counter()
    spec = _parse_spec(raw)
    labels: list[str] | None = None
    if spec.keys == "data":
        path = _resolve_path(spec.data, base_dir, "data")
        try:
            labels = load_key_value_data(path).labels
        except InputDataError as exc:
            raise SpecError("data", "must be a readable key-value CSV", str(exc)) from None
        d = len(labels)
        if d < 2:
            raise SpecError("keys", "the data must hold at least 2 distinct keys", d)
    elif isinstance(spec.keys, list):
        labels = [str(k) for k in spec.keys]
        d = len(labels)
    else:
        d = int(spec.keys)
    model, info = _build_model(spec, d, labels, base_dir)
    weights = (spec.weights.frequency, spec.weights.mean)
    eps = float(spec.epsilon)
    candidates = ["pckv-ue", "pckv-grr"] if spec.mechanism == "pckv" else [spec.mechanism]

    per_mech: dict[str, Any] = {}
    try:
        for mech in candidates:
            selection = None
            if spec.padding_length == "auto":
                selection = S.choose_padding_length(mech, eps * (1 - SAFETY), domain_size=d, model=model,
                                                    method=spec.allocation, weights=weights,
                                                    max_padding_length=spec.max_padding_length)
                L = int(selection.parameters["padding_length"])
            else:
                L = int(spec.padding_length)
            sol, q = _solve_params(mech, eps, spec.allocation, d, L, model, weights)
            obj = model.objective(q["a"], q["b"], q["p"], L, weights)[0]
            per_mech[mech] = {"L": L, "solution": sol, "grid": q, "objective": obj, "selection": selection}
    except (SolverError, ValueError) as exc:
        raise SpecError("epsilon", f"no feasible allocation ({exc})", eps) from None

    choice = None
    if spec.mechanism == "pckv":
        from ldpplan.solvers._result import Certificate, SolveResult

        fake = {m: SolveResult("closed_form", v["objective"], {}, Certificate("n/a", -math.inf, v["objective"]), "", 0.0)
                for m, v in per_mech.items()}
        mech, reason = S.choose_mechanism(fake, eps, d, {m: v["L"] for m, v in per_mech.items()})
        choice = {"requested": "pckv", "chosen": mech, "reason": reason,
                  "objectives": {m: v["objective"] for m, v in per_mech.items()},
                  "padding_lengths": {m: v["L"] for m, v in per_mech.items()},
                  "sec54_conditions": S.sec54_conditions(eps, d, per_mech["pckv-grr"]["L"])}
    else:
        mech = spec.mechanism
    chosen = per_mech[mech]
    L, q, sol = chosen["L"], chosen["grid"], chosen["solution"]
    ratio = composed_epsilon_exact(mech, q["a"], q["b"], q["p"], d, L)
    e1, e2 = _budgets(mech, q["a"], q["b"], q["p"])
    g_eps = _guarantee_epsilon(ratio, eps)

    plan = plan_header(mech)
    plan["params"] = {"a": q["a"], "b": q["b"], "p": q["p"], "epsilon1": e1, "epsilon2": e2,
                      "padding_length": L, "domain_size": d}
    plan["keys"] = {"domain_size": d, "labels": labels, "dummy_keys": L,
                    "indexing": "0-based into labels (or 0..d-1 without labels); d..d+L-1 are dummy keys"}
    plan["guarantee"] = {
        "epsilon": g_eps, "target_epsilon": eps, "units": "nats",
        "composition": "Theorem 2, eq. (3)" if mech == "pckv-ue" else "Theorem 3, eq. (6)",
        "composed_epsilon_formula": S.compose(mech, e1, e2, L),
        "slack": eps - g_eps,
    }
    src = dict(sol.certificate.details)
    plan["allocation"] = {"method": spec.allocation, "source": src.get("source", sol.certificate.kind),
                          "unrounded": {k: float(sol.parameters[k]) for k in ("epsilon1", "epsilon2", "a", "b", "p")},
                          "weights": {"frequency": weights[0], "mean": weights[1]}}
    if spec.allocation == "numeric":
        plan["allocation"].update({"gain_over_closed_form": float(sol.extra["gain"]),
                                   "closed_form_objective": float(sol.extra["closed_form_objective"]),
                                   "objective": float(sol.objective),
                                   "closed_form": dict(sol.extra["closed_form"])})
    if choice is not None:
        plan["mechanism_choice"] = choice
    if chosen["selection"] is not None:
        sel = chosen["selection"]
        plan["padding_length_selection"] = {
            "chosen": L, "max_padding_length": spec.max_padding_length,
            "model": ("minimise w_f*MSE_f + w_m*MSE_m over L = 1..max: Theorem 4 at the sampled frequency "
                      "f_s(L) (users with s > L pairs report each with probability 1/s) plus the truncation "
                      "bias (f_s(L) - f)^2 of eq. (7); f_s exact from data, else rho(L) f with "
                      "rho = E[min(s, L)]/E[s] (pairs spread over keys independently of set size)"),
            "candidates": [{k: (float(v) if isinstance(v, float) else v) for k, v in row.items()}
                           for row in sel.extra["candidates"]],
            "at_search_bound": bool(L == spec.max_padding_length),
        }
    plan["prediction"] = _prediction(mech, q, L, model, info)
    plan["runtime"] = {"values": spec.values, "keys": spec.out_of_domain_keys}
    plan["solver"] = {"name": sol.solver, "status": sol.status, "time_seconds": time.perf_counter() - t0,
                      "certificate": sol.certificate.to_dict()}
    plan["spec"] = {k: v for k, v in dict(raw).items()}
    attach_verification(plan, verify_plan(plan, _skip_schema=True))
    validate_plan_schema(plan, "pckv")
    return plan


# ================================================================== verify
def _num(plan: Mapping[str, Any], *path: str):
    node: Any = plan
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            raise PlanFormatError(f"{'.'.join(path)}: required field is missing")
        node = node[part]
    return node


def verify_plan(plan: Mapping[str, Any], _skip_schema: bool = False) -> Verification:
    """Re-check a PCKV plan from the numbers in it (independently of the solver).

    Checks: the schema; ``a``, ``p`` (and ``b`` for PCKV-UE) are multiples of 2^-48;
    ``0 < b < a < 1``, ``1/2 <= p < 1`` (PCKV-GRR: ``b = (1-a)/(d+L-1)``); the exact
    worst-case ratio of :func:`composed_epsilon_exact` is ``<= e^{guarantee.epsilon}``
    (rational arithmetic, 60-digit exponential); ``guarantee.epsilon <=
    guarantee.target_epsilon = spec.epsilon``; ``params.epsilon1/epsilon2`` match
    ``a, b, p`` (eq. (2)/(5)).

    Returns
    -------
    Verification
        ``details``: ``composed_epsilon`` (nats, recomputed), ``slack`` (nats),
        ``checks`` (list of what was checked).

    Raises
    ------
    PlanFormatError
        Schema-invalid or malformed plan.
    """
    from ldpplan.mechanisms._sampling import on_grid

    if not _skip_schema:
        validate_plan_schema(plan, "pckv")
    mech = plan.get("mechanism")
    if mech not in ("pckv-ue", "pckv-grr"):
        raise PlanFormatError(f"mechanism: must be 'pckv-ue' or 'pckv-grr' (got {mech!r})")
    a, b, p = (float(_num(plan, "params", k)) for k in ("a", "b", "p"))
    d, L = int(_num(plan, "params", "domain_size")), int(_num(plan, "params", "padding_length"))
    g_eps = float(_num(plan, "guarantee", "epsilon"))
    target = float(_num(plan, "guarantee", "target_epsilon"))
    fail = []
    grid_vals = [a, b, p] if mech == "pckv-ue" else [a, p]
    if not on_grid(grid_vals):
        fail.append("a, p" + (", b" if mech == "pckv-ue" else "") + " must be multiples of 2^-48")
    if mech == "pckv-grr":
        exact_b = (1.0 - a) / (d + L - 1)
        if abs(b - exact_b) > 1e-12 * exact_b:
            fail.append(f"b must equal (1-a)/(d+L-1) = {exact_b!r} (got {b!r})")
        b = exact_b
    if not (0 < b < a < 1 and 0.5 <= p < 1):
        fail.append("need 0 < b < a < 1 and 1/2 <= p < 1")
    if fail:
        return Verification(False, "; ".join(fail), {"checks": ["grid", "ranges"]})
    ratio = composed_epsilon_exact(mech, a, b, p, d, L)
    composed = math.log(ratio.numerator) - math.log(ratio.denominator)
    details: dict[str, Any] = {"composed_epsilon": composed, "slack": g_eps - composed,
                               "checks": ["2^-48 grid", "probability ranges", "exact ratio bound (App. A/B) <= e^epsilon",
                                          "epsilon <= target", "epsilon1/epsilon2 consistent with a, b, p"]}
    if not _ratio_within(ratio, g_eps):
        return Verification(False, f"composed epsilon {composed!r} exceeds guarantee.epsilon {g_eps!r} "
                                   f"by {composed - g_eps:.3g} nats", details)
    spec_eps = plan.get("spec", {}).get("epsilon") if isinstance(plan.get("spec"), Mapping) else None
    if g_eps > target or (spec_eps is not None and target != float(spec_eps)):
        return Verification(False, f"guarantee.epsilon {g_eps!r} must be <= target_epsilon {target!r} = spec.epsilon",
                            details)
    e1, e2 = _budgets(mech, a, b, p)
    pe1, pe2 = float(_num(plan, "params", "epsilon1")), float(_num(plan, "params", "epsilon2"))
    if abs(e1 - pe1) > 1e-9 * max(1, abs(e1)) or abs(e2 - pe2) > 1e-9 * max(1, abs(e2)):
        return Verification(False, f"params.epsilon1/epsilon2 ({pe1}, {pe2}) do not match a, b, p ({e1}, {e2})", details)
    msg = (f"{mech}: composed epsilon {composed:.12g} <= {g_eps:.12g} nats (target {target:g}; "
           f"{'Theorem 2' if mech == 'pckv-ue' else 'Theorem 3'} recomputed exactly from a, b, p, L={L}, d={d})")
    return Verification(True, msg, details)


# =============================================================== summarize
def summarize(plan: Mapping[str, Any]) -> list[Table]:
    """Tables shown by ``ldpplan plan``: parameters, predicted errors, choices made."""
    pr, g, pred = plan["params"], plan["guarantee"], plan.get("prediction", {})
    tables = [Table(
        f"PCKV plan: {plan['mechanism']}",
        ["item", "value"],
        [["epsilon (composed, nats)", g["epsilon"]], ["target epsilon", g["target_epsilon"]],
         ["composition", g["composition"]], ["allocation", plan.get("allocation", {}).get("method", "")],
         ["epsilon1 (key)", pr["epsilon1"]], ["epsilon2 (value)", pr["epsilon2"]],
         ["a", pr["a"]], ["b", pr["b"]], ["p", pr["p"]],
         ["padding_length L", pr["padding_length"]], ["keys d", pr["domain_size"]]],
    )]
    if pred:
        rows = [["users n", f"{pred['users']} ({pred['users_source']})"],
                ["keys averaged", f"{pred['keys_averaged']} ({pred['objective_keys']})"],
                ["MSE frequency (Thm 4 + truncation)", pred["mse_frequency"]],
                ["MSE mean (Thm 4 + truncation)", pred["mse_mean"]],
                ["MSE frequency approx (17)", pred["approx_mse_frequency"]],
                ["MSE mean approx (18)", pred["approx_mse_mean"]],
                ["g, h (16)", f"{pred['g']:.4g}, {pred['h']:.4g}"]]
        if pred.get("users_truncated_fraction") is not None:
            rows.append(["users with > L pairs", f"{100 * pred['users_truncated_fraction']:.1f}%"])
        tables.append(Table("Predicted error", ["item", "value"], rows))
    if "mechanism_choice" in plan:
        ch = plan["mechanism_choice"]
        rows = [[m, ch["padding_lengths"][m], ch["objectives"][m], "chosen" if m == ch["chosen"] else ""]
                for m in ("pckv-ue", "pckv-grr")]
        tables.append(Table("Mechanism choice (mechanism = \"pckv\")", ["mechanism", "L", "predicted objective", ""],
                            rows, note=ch["reason"]))
    if "padding_length_selection" in plan:
        sel = plan["padding_length_selection"]
        cands = sorted(sel["candidates"], key=lambda r: r["objective"])[:5]
        rows = [[c["padding_length"], c["objective"], c["mse_frequency"], c["mse_mean"]] for c in cands]
        note = sel["model"]
        if sel.get("at_search_bound"):
            note += (f". WARNING: the chosen L equals max_padding_length = {sel['max_padding_length']}; "
                     "the optimum may lie beyond it (raise max_padding_length)")
        tables.append(Table(f"Padding length L = \"auto\": chose L = {sel['chosen']} (best 5 of {len(sel['candidates'])})",
                            ["L", "objective", "MSE frequency", "MSE mean"], rows, note=note))
    al = plan.get("allocation", {})
    if "gain_over_closed_form" in al:
        tables.append(Table("Numeric allocation vs closed form", ["item", "value"],
                            [["objective (numeric)", al["objective"]], ["objective (Lemma 2/3)", al["closed_form_objective"]],
                             ["relative gain", al["gain_over_closed_form"]]]))
    return tables


# ================================================================ simulate
def _synthetic(d: int, n: int, distribution: str, rng: np.random.Generator):
    """Sec. 6.1 data: one pair per user; keys/means uniform or Gaussian (mu=0, sigma_key=50, sigma_mean=1)."""
    if distribution == "uniform":
        keys = rng.integers(0, d, size=n)
        means = rng.uniform(-1, 1, size=d)
    elif distribution == "gaussian":
        keys = np.empty(0, np.int64)
        while keys.size < n:
            x = np.floor(rng.normal(0.0, 50.0, size=2 * n)).astype(np.int64)
            keys = np.concatenate([keys, x[(x >= 0) & (x < d)]])
        keys = keys[:n]
        means = np.empty(0)
        while means.size < d:
            x = rng.normal(0.0, 1.0, size=2 * d)
            means = np.concatenate([means, x[np.abs(x) <= 1]])
        means = means[:d]
    else:
        raise SpecError("-O distribution", "must be 'uniform' or 'gaussian'", distribution)
    m = means[keys]
    values = m + (1 - np.abs(m)) * rng.uniform(-1, 1, size=n)   # mean exactly m_k, inside [-1, 1]
    return np.arange(n + 1, dtype=np.int64), keys.astype(np.int64), values


def _aggregate_counts(mech: str, q, d: int, L: int, users, rng):
    """Exact-in-distribution per-key counts (n1, n2) without building reports."""
    from ldpplan.mechanisms.pckv import sample_pairs

    n = users.n_users
    k, v = sample_pairs(users, d, L, rng)
    a, b, p = q["a"], q["b"], q["p"]
    dp = d + L
    if mech == "pckv-ue":
        Np = np.bincount(k[v > 0], minlength=dp)[:d]
        Nm = np.bincount(k[v < 0], minlength=dp)[:d]
        rest = n - Np - Nm
        c1 = rng.multinomial(Np, [a * p, a * (1 - p), 1 - a])
        c2 = rng.multinomial(Nm, [a * (1 - p), a * p, 1 - a])
        c3 = rng.multinomial(rest, [b / 2, b / 2, 1 - b])
        return n, c1[:, 0] + c2[:, 0] + c3[:, 0], c1[:, 1] + c2[:, 1] + c3[:, 1]
    # PCKV-GRR: one categorical draw per user (vectorised), exact
    u = rng.random(n)
    keep = u < a
    same = u < a * p
    other = rng.integers(0, dp - 1, size=n)
    other += other >= k
    kout = np.where(keep, k, other)
    vout = np.where(keep, np.where(same, v, -v), np.where(rng.random(n) < 0.5, 1, -1))
    counts = np.bincount(kout * 2 + (vout < 0), minlength=2 * dp)
    return n, counts[0:2 * d:2], counts[1:2 * d:2]


def _method_params(plan, mech: str, method: str, eps: float, d: int, L: int):
    if mech == plan["mechanism"] and method == plan.get("allocation", {}).get("method"):
        pr = plan["params"]
        return {"a": pr["a"], "b": pr["b"], "p": pr["p"]}
    return _solve_params(mech, eps, method, d, L, None, (1.0, 1.0))[1]


def simulate(plan: Mapping[str, Any], options: SimulateOptions, progress=None) -> SimulationReport:
    """Empirical vs Theorem 4 MSE of frequency and mean, all keys and top-N keys.

    Parameters
    ----------
    plan : mapping
        A verified PCKV plan.
    options : SimulateOptions
        ``data``: key-value CSV (else Sec. 6.1 synthetic data, ``-O distribution=``,
        ``-O users=``); ``mode``: ``aggregate`` (sampling of Algorithm 1 per user, then
        exact per-key count distributions) or ``runtime`` (the client runtime for every
        user); ``-O top=50``.

    Returns
    -------
    SimulationReport
        Tables "all keys" and "top-N keys": per method (plan, PCKV-UE/GRR optimized,
        PCKV-UE/GRR naive) the empirical MSE of the corrected (Algorithm 4) and raw
        ((7)-(8)) estimates, averaged over trials, and the Theorem 4 prediction
        (with the truncation bias of users holding more than ``L`` pairs).

    Raises
    ------
    InputDataError
        Unreadable data or keys outside the plan's domain.
    SpecError
        Bad ``-O`` option.
    """
    from ldpplan import mechanisms
    from ldpplan.solvers.pckv import theorem4_mse

    ver = verify_plan(plan)
    if not ver.holds:
        raise PrivacyViolation(f"refusing to simulate a plan that fails verification: {ver.message}")
    d, L = int(plan["params"]["domain_size"]), int(plan["params"]["padding_length"])
    eps = float(plan["guarantee"]["target_epsilon"])
    labels = plan.get("keys", {}).get("labels")
    extra = dict(options.extra)
    try:
        top = int(extra.pop("top", 50))
        n_synth = int(extra.pop("users", plan.get("prediction", {}).get("users", DEFAULT_USERS)))
    except ValueError:
        raise SpecError("-O", "top and users must be integers", options.extra) from None
    distribution = extra.pop("distribution", "uniform")
    if extra:
        raise SpecError("-O", "unknown option(s) for PCKV (known: top, users, distribution)", sorted(extra))
    if options.mode not in ("aggregate", "runtime"):
        raise SpecError("--mode", "must be aggregate or runtime", options.mode)
    root = np.random.SeedSequence(options.seed)
    data_rng, trials_seq = [np.random.default_rng(s) for s in root.spawn(1)][0], root.spawn(options.trials)
    if options.data:
        data = load_key_value_data(options.data)
        mode = plan.get("runtime", {}).get("keys", "reject")
        indptr, keys, values, dropped = _map_to_domain(data, labels, d, mode, str(options.data))
        if plan.get("runtime", {}).get("values", "reject") == "clip":
            values = np.clip(values, -1, 1)
        elif ((values < -1) | (values > 1)).any():
            raise InputDataError(f"{options.data}: values must be in [-1, 1] (plan with values = \"clip\" to clip)")
        source = str(options.data)
    else:
        indptr, keys, values = _synthetic(d, n_synth, distribution, data_rng)
        dropped, source = 0, f"synthetic Sec. 6.1 ({distribution}, n={n_synth}, one pair per user)"
    users = KeyValueUsers(indptr, keys, values)
    n = users.n_users
    freq, means, sampled, sizes = _data_model(indptr, keys, values, d)
    fs = sampled(L)
    order = np.argsort(-freq, kind="stable")
    sets = {"all keys": (np.arange(d), np.nonzero(freq > 0)[0]),
            f"top-{top} keys": (order[:top], order[:top][freq[order[:top]] > 0])}
    methods = [(plan["mechanism"], plan.get("allocation", {}).get("method", "optimized"), "plan")]
    for mech, meth in (("pckv-ue", "optimized"), ("pckv-grr", "optimized"), ("pckv-ue", "naive"), ("pckv-grr", "naive")):
        if (mech, meth) != methods[0][:2]:
            methods.append((mech, meth, ""))
    total = len(methods) * options.trials
    results = []
    for mech, meth, tag in methods:
        q = _method_params(plan, mech, meth, eps, d, L)
        e1, e2 = _budgets(mech, q["a"], q["b"], q["p"])
        runtime_plan = {"format_version": "1.0", "mechanism": mech,
                        "params": {**q, "domain_size": d, "padding_length": L}}
        runtime = mechanisms.load(runtime_plan)
        err = {name: {"f": [], "fr": [], "m": [], "mr": []} for name in sets}
        for t in range(options.trials):
            rng = np.random.default_rng(trials_seq[t])
            if options.mode == "runtime":
                nn, n1, n2 = runtime.aggregate(runtime.perturb(users, rng))
            else:
                nn, n1, n2 = _aggregate_counts(mech, q, d, L, users, rng)
            f_c, m_c = runtime.estimate_counts(nn, n1, n2)
            f_r, m_r = runtime.estimate_counts(nn, n1, n2, raw=True)
            for name, (fk, mk) in sets.items():
                err[name]["f"].append(np.mean((f_c[fk] - freq[fk]) ** 2))
                err[name]["fr"].append(np.mean((f_r[fk] - freq[fk]) ** 2))
                err[name]["m"].append(np.mean((m_c[mk] - means[mk]) ** 2))
                with np.errstate(invalid="ignore"):
                    err[name]["mr"].append(np.nanmean((m_r[mk] - means[mk]) ** 2) if mk.size else np.nan)
            if progress is not None:
                progress(1, total)
        th_f, th_m = theorem4_mse(q["a"], q["b"], q["p"], L, n, freq, means, fs)
        row = {"mechanism": mech + (" (plan)" if tag else ""), "allocation": meth, "epsilon1": e1, "epsilon2": e2,
               "a": q["a"], "b": q["b"], "p": q["p"]}
        for name, (fk, mk) in sets.items():
            row[name] = {"mse_frequency": float(np.mean(err[name]["f"])),
                         "mse_frequency_raw": float(np.mean(err[name]["fr"])),
                         "mse_frequency_theory": float(np.mean(th_f[fk])),
                         "mse_mean": float(np.mean(err[name]["m"])),
                         "mse_mean_raw": float(np.nanmean(err[name]["mr"])) if mk.size else float("nan"),
                         "mse_mean_theory": float(np.mean(th_m[mk])) if mk.size else float("nan")}
        results.append(row)
    cols = ["mechanism", "allocation", "epsilon1", "epsilon2", "MSE freq", "MSE freq raw (7)", "MSE freq Thm 4",
            "MSE mean", "MSE mean raw (8)", "MSE mean Thm 4"]
    tables = []
    truncated = float(np.mean(sizes > L)) if sizes.size else 0.0
    tables.append(Table("PCKV simulation setting", ["item", "value"], [
        ["data", source], ["users n", n], ["keys d", d], ["pairs", int(keys.size)],
        ["padding_length L", L], ["epsilon (nats)", eps], ["users with > L pairs", f"{100 * truncated:.1f}%"],
        ["pairs dropped (outside the plan's keys)", dropped], ["mode", options.mode], ["trials", options.trials]]))
    for name, (fk, mk) in sets.items():
        rows = [[r["mechanism"], r["allocation"], r["epsilon1"], r["epsilon2"],
                 r[name]["mse_frequency"], r[name]["mse_frequency_raw"], r[name]["mse_frequency_theory"],
                 r[name]["mse_mean"], r[name]["mse_mean_raw"], r[name]["mse_mean_theory"]] for r in results]
        tables.append(Table(f"MSE over {name} ({fk.size} keys for frequency, {mk.size} with f > 0 for mean)", cols, rows,
                            note="empirical: Algorithm 4 (corrected) and baseline (7)-(8), mean over trials; "
                                 "Thm 4: eq. (9)-(11) + bias (10)^2 + truncation bias of users with > L pairs"))
    payload = {"setting": {"data": source, "users": n, "keys": d, "padding_length": L, "epsilon": eps,
                           "users_truncated_fraction": truncated, "dropped_pairs": dropped, "top": top},
               "results": results}
    return SimulationReport(tables=tables, data=payload, plot=None)


# ========================================================== runtime files
def perturb_file(plan: Mapping[str, Any], input_path, output_path, rng: np.random.Generator) -> dict:
    """Perturb users from a key-value CSV and write the reports (``.npz``, atomically).

    Input: ``user_id,key,value`` (or MovieLens) CSV; keys are the plan's labels (or
    integer indices ``0..d-1`` when the plan has none). Output arrays: ``mechanism``,
    ``reports``, ``user_ids``, ``params`` ([a, b, p, d, L]).

    Returns
    -------
    dict
        ``{"n": users, "dropped_pairs": ...}``.

    Raises
    ------
    InputDataError
        Unreadable input, keys outside the domain (unless the plan drops them) or
        values outside [-1, 1] (unless the plan clips them).
    """
    from ldpplan import mechanisms

    from ._io import write_bytes_atomic

    ver = verify_plan(plan)
    if not ver.holds:
        raise PrivacyViolation(f"refusing to perturb with a plan that fails verification: {ver.message}")
    d = int(plan["params"]["domain_size"])
    data = load_key_value_data(input_path)
    mode = plan.get("runtime", {}).get("keys", "reject")
    indptr, keys, values, dropped = _map_to_domain(data, plan.get("keys", {}).get("labels"), d, mode, str(input_path))
    mech = mechanisms.load(plan)
    try:
        reports = mech.perturb(KeyValueUsers(indptr, keys, values), rng=rng)
    except ValueError as exc:
        raise InputDataError(f"{input_path}: {exc}") from None
    pr = plan["params"]
    buf = io.BytesIO()
    np.savez_compressed(buf, mechanism=np.array(plan["mechanism"]), reports=reports, user_ids=data.user_ids,
                        params=np.array([pr["a"], pr["b"], pr["p"], pr["domain_size"], pr["padding_length"]], dtype=float))
    write_bytes_atomic(output_path, buf.getvalue())
    return {"n": int(reports.shape[0]), "dropped_pairs": dropped}


def estimate_file(plan: Mapping[str, Any], reports_path) -> Table:
    """Estimate every key's frequency and mean from a reports ``.npz``.

    Returns
    -------
    Table
        Columns ``key, frequency, mean, frequency_raw, mean_raw`` (Algorithm 4 and the
        baseline (7)-(8)); frequencies are fractions of users.

    Raises
    ------
    InputDataError
        Unreadable file, or reports made with a different plan.
    """
    from ldpplan import mechanisms

    try:
        with np.load(reports_path, allow_pickle=False) as z:
            mech_name, reports, params = str(z["mechanism"]), z["reports"], z["params"]
    except (OSError, KeyError, ValueError) as exc:
        raise InputDataError(f"{reports_path}: must be a reports .npz written by ldpplan perturb ({exc})") from None
    pr = plan["params"]
    expected = np.array([pr["a"], pr["b"], pr["p"], pr["domain_size"], pr["padding_length"]], dtype=float)
    if mech_name != plan["mechanism"] or params.shape != expected.shape or not np.array_equal(params, expected):
        raise InputDataError(f"{reports_path}: reports were made with a different plan ({mech_name})")
    mech = mechanisms.load(plan)
    try:
        f, m = mech.estimate(reports)
        fr, mr = mech.estimate(reports, raw=True)
    except ValueError as exc:
        raise InputDataError(f"{reports_path}: {exc}") from None
    labels = plan.get("keys", {}).get("labels") or [str(i) for i in range(len(f))]
    rows = [[labels[i], float(f[i]), float(m[i]), float(fr[i]), float(mr[i])] for i in range(len(f))]
    return Table(f"PCKV estimates ({plan['mechanism']}, n={reports.shape[0]})",
                 ["key", "frequency", "mean", "frequency_raw", "mean_raw"], rows)

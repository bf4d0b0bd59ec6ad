"""Pieces shared by the ULDP runtimes: plan fields, input checks, linear estimators (numpy only).

Every ULDP mechanism here (uRR, uRAP, and the RR / RAPPOR they generalise) has report
"marginals" ``m_j = alpha_j + beta_j p_j`` (Murakami & Kawamoto 2019, eqs. 34 and 40), so
the empirical estimate (eq. 3; closed forms 35 and 41) and the Bonferroni significance
threshold (Sec. 2.5) are shared: :func:`linear_estimate`.
"""
from __future__ import annotations

from typing import Any, ClassVar, Mapping, Protocol, Sequence, TypeVar

import numpy as np

from .. import _sampling
from .._api import domain_labels as _domain_labels
from .._estimators import significance_threshold
from .._envelope import PlanFields, read_domain as _read_domain, read_envelope
from .._intervals import FrequencyVariance, affine_variance
from .._plan import PlanError, check_claim, integer, number, require
from ._promises import uldp_promises

__all__ = ["GUARANTEE_FIELDS", "read_uldp_envelope", "from_plan_numbers", "bernoulli_two", "read_domain", "read_sensitive", "grid_probability", "check_items",
           "sensitive_mask", "linear_estimate", "linear_variance", "domain_labels", "GRID_DENOMINATOR", "check_guarantee"]

#: The claims of a ULDP plan besides notion and epsilon, per mechanism.
GUARANTEE_FIELDS = {
    "urr": ("sensitive", "protected_outputs", "invertible_outputs"),
    "urap": ("sensitive", "protected_outputs", "invertible_outputs"),
    "pum": ("sensitive", "protected_outputs", "invertible_outputs", "intermediate_sensitive", "user_sensitive",
            "user_indistinguishability_epsilon"),
}

#: Probabilities in plans are multiples of ``1 / GRID_DENOMINATOR``.
GRID_DENOMINATOR = _sampling.GRID_DENOMINATOR


def domain_labels(domain: int | Sequence[str]) -> tuple[int, list[str] | None]:
    """:func:`ldpplan.mechanisms._api.domain_labels` with at least 2 items (ULDP needs X_S and X_N)."""
    return _domain_labels(domain, low=2)


def read_domain(plan: Mapping[str, Any]) -> tuple[int, list[str] | None]:
    """``domain.size`` (>= 2) and ``domain.labels`` of a plan: the envelope's one reader of ``domain``.

    Raises
    ------
    PlanError
        Missing fields, a size outside ``2 .. MAX_DOMAIN_SIZE``, labels that are not ``size`` distinct strings.
    """
    return _read_domain(plan, low=2)


def read_uldp_envelope(plan: Any, fields: PlanFields) -> tuple[dict[str, Any], int, list[str] | None, float]:
    """The envelope (:func:`read_envelope`, verified), the domain, and ``spec.epsilon`` after the
    plan's domain and sensitive set were checked against its embedded spec (:func:`uldp_promises`)."""
    data = read_envelope(plan, fields, verified=True)
    size, labels = read_domain(data)
    params = require(data, "params")
    if "domain_size" in params and params["domain_size"] != size:
        raise PlanError(f"params.domain_size: must equal domain.size {size} (got {params['domain_size']!r})")
    read_sensitive(require(data, "params.sensitive"), "params.sensitive", size)
    claimed = require(data, "guarantee").get("sensitive", [])
    if not isinstance(claimed, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in claimed):
        raise PlanError(f"guarantee.sensitive: must be a list of item indices (got {claimed!r:.80})")
    return data, size, labels, uldp_promises(data)


def read_sensitive(value: Any, field: str, size: int) -> np.ndarray:
    """Sorted distinct indices of X_S in ``[0, size)`` (at least one), int64.

    Raises
    ------
    PlanError
        Not a non-empty list of distinct in-range integers.
    """
    if not isinstance(value, list) or not value:
        raise PlanError(f"{field}: must be a non-empty list of item indices (got {value!r:.80})")
    idx = [integer(v, f"{field}[{i}]", low=0, high=size - 1) for i, v in enumerate(value)]
    if len(set(idx)) != len(idx):
        raise PlanError(f"{field}: indices must be distinct")
    return np.array(sorted(idx), dtype=np.int64)


def grid_probability(value: Any, field: str) -> float:
    """A probability on the 2^-48 grid, or :class:`PlanError` naming the field."""
    x = number(value, field, low=0.0, high=1.0)
    if not _sampling.on_grid(x):
        raise PlanError(f"{field}: must be a multiple of 2^-48 in [0, 1] (got {x!r})")
    return x


def sensitive_mask(size: int, sensitive: Any) -> np.ndarray:
    """Boolean mask of X_S, shape (size,).

    Raises
    ------
    ValueError
        Indices not distinct, out of range, or none.
    """
    idx = np.asarray(sensitive, dtype=np.int64).reshape(-1)
    if idx.size == 0 or idx.min() < 0 or idx.max() >= size or np.unique(idx).size != idx.size:
        raise ValueError(f"sensitive: must be distinct indices in [0, {size}) with at least one entry")
    mask = np.zeros(size, dtype=bool)
    mask[idx] = True
    return mask


def check_items(items: Any, size: int, field: str = "items") -> np.ndarray:
    """A 1-D int64 array of indices in ``[0, size)``.

    Raises
    ------
    ValueError
        Another dtype or shape, or an index out of range (the message names ``field``).
    """
    x = np.asarray(items)
    if x.ndim != 1 or (x.size and x.dtype.kind not in "iu"):
        raise ValueError(f"{field}: must be a 1-D integer array of item indices (got dtype {x.dtype}, shape {x.shape})")
    x = x.astype(np.int64, copy=False)
    if x.size and (x.min() < 0 or x.max() >= size):
        raise ValueError(f"{field}: must be item indices in [0, {size}) (got range [{x.min()}, {x.max()}])")
    return x


def bernoulli_two(rng: np.random.Generator, mask: np.ndarray, p_true: float, p_false: float) -> np.ndarray:
    """Bernoulli draws with probability ``p_true`` where ``mask`` else ``p_false`` (grid scalars).

    Each group goes through the scalar sampler :func:`_sampling.bernoulli_iid` (one
    grid decomposition per group, not per entry as ``bernoulli(np.where(...))``).

    Parameters
    ----------
    rng : numpy.random.Generator
    mask : ndarray of bool, shape (n,)
    p_true, p_false : float
        Multiples of 2^-48 in [0, 1].

    Returns
    -------
    ndarray of bool, shape (n,)
    """
    out = np.empty(mask.shape[0], dtype=bool)
    on = np.flatnonzero(mask)
    off = np.flatnonzero(~mask)
    if on.size:
        out[on] = _sampling.bernoulli_iid(rng, p_true, on.size)
    if off.size:
        out[off] = _sampling.bernoulli_iid(rng, p_false, off.size)
    return out


def linear_estimate(counts: np.ndarray, n: int, alpha: np.ndarray, beta: np.ndarray, method: str,
                    significance: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Empirical (eq. 3) or thresholded estimate from marginal counts, with plug-in standard errors.

    Parameters
    ----------
    counts : ndarray, shape (K,)
        Number of reports whose marginal ``j`` is on (uRR: report = j; uRAP: bit j set).
    n : int
        Number of reports (> 0).
    alpha, beta : ndarray, shape (K,)
        ``m_j = alpha_j + beta_j p_j`` (eqs. 34, 40), ``beta > 0``.
    method : {"empirical", "threshold"}
    significance : float
        Family-wise level of the Bonferroni threshold.

    Returns
    -------
    frequency : ndarray, shape (K,)
        ``(counts / n - alpha) / beta`` (may be negative), or its thresholded version.
    std_error : ndarray, shape (K,)
        ``sqrt(m_hat (1 - m_hat) / n) / beta`` (frequency units).

    References
    ----------
    Murakami & Kawamoto 2019, eqs. (3), (35), (41) and Sec. 2.5 (emp+thr).
    """
    if n <= 0:
        raise ValueError("reports: an estimate needs at least one report (n = 0)")
    m_hat = np.asarray(counts, dtype=np.float64) / n
    emp = (m_hat - alpha) / beta
    std = np.sqrt(np.clip(m_hat * (1.0 - m_hat), 0.0, None) / n) / beta
    if method == "empirical":
        return emp, std
    variance = alpha * (1.0 - alpha) / beta**2  # n Var under the null p_j = 0
    return significance_threshold(emp, n, variance, significance), std


def linear_variance(counts: np.ndarray, n: int, alpha: np.ndarray, beta: np.ndarray) -> FrequencyVariance:
    """The exact variance of the empirical estimate (eq. 35/41) for fixed users' data.

    A holder of ``j`` reports marginal ``j`` with probability ``alpha_j + beta_j``, every other user
    with ``alpha_j`` (eqs. 34, 40), so ``n Var(p_hat_j) = c0 + c1 p_j`` (see
    :func:`ldpplan.mechanisms._intervals.affine_variance`).

    References
    ----------
    Murakami & Kawamoto 2019, eqs. (34)-(35), (40)-(41).
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    beta = np.asarray(beta, dtype=np.float64)
    emp = (np.asarray(counts, dtype=np.float64) / n - alpha) / beta
    c0, c1 = affine_variance(alpha, alpha + beta)
    return FrequencyVariance(emp, c0, c1, 0.0, int(n), source="ULDP eqs. (34)-(35) / (40)-(41), fixed users' data")


def check_guarantee(actual: dict[str, Any], plan: dict[str, Any], spec_epsilon: float | None = None) -> None:
    """Refuse a plan whose ``guarantee`` claims more than ``actual`` (a privacy map).

    ``guarantee.epsilon`` (and every other ``*epsilon`` claim) must be >= the map's epsilon;
    every item of ``guarantee.sensitive`` must be protected by the numbers.

    Raises
    ------
    PlanError
        Naming the claim, its value and what the numbers give.
    """
    guarantee = require(plan, "guarantee")
    if not isinstance(guarantee, dict) or guarantee.get("notion") != actual["notion"]:
        raise PlanError(f"guarantee.notion: must be {actual['notion']!r} (got {guarantee.get('notion')!r})")
    for key, value in guarantee.items():
        if key.endswith("epsilon"):
            check_claim(actual.get(key, actual["epsilon"]), value, f"guarantee.{key}")
    if spec_epsilon is not None:
        check_claim(actual["epsilon"], spec_epsilon, "spec.epsilon")  # the budget the spec promises
    claimed = guarantee.get("sensitive", [])
    if not isinstance(claimed, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in claimed):
        raise PlanError(f"guarantee.sensitive: must be a list of item indices (got {claimed!r:.80})")
    missing = sorted(set(claimed) - set(actual["sensitive"]), key=repr)
    if missing:
        raise PlanError(f"guarantee.sensitive: claims items {missing[:5]} are protected but params.sensitive does not "
                        "protect them; the runtime refuses a plan that claims more privacy than its numbers give")


class _FromNumbers(Protocol):
    """What :func:`from_plan_numbers` uses of the uRR and uRAP classes."""

    PLAN_FIELDS: ClassVar[PlanFields]

    def __init__(self, *, domain: Any, sensitive: Any, **numbers: float) -> None: ...

    def privacy_map(self) -> dict[str, Any]: ...


_Runtime = TypeVar("_Runtime", bound=_FromNumbers)  # the uRR or uRAP class of from_plan_numbers


def from_plan_numbers(cls: type[_Runtime], plan: Any, names: tuple[str, ...]) -> _Runtime:
    """``cls(domain=..., sensitive=..., **params[names])`` from a verified plan, refused unless its guarantee holds.

    The shared body of the uRR and uRAP ``from_plan``: strict reading, ``verification.holds``,
    the domain and ``params.domain_size`` consistent, the sensitive items, every number on the
    2^-48 grid, then the class's ``privacy_map()`` compared with the plan's ``guarantee``.

    Raises
    ------
    PlanError
        Naming the field, the rule and the value.
    """
    data, size, labels, spec_epsilon = read_uldp_envelope(plan, cls.PLAN_FIELDS)
    sens = read_sensitive(require(data, "params.sensitive"), "params.sensitive", size)
    numbers = [grid_probability(require(data, f"params.{n}"), f"params.{n}") for n in names]
    try:
        mech = cls(domain=labels if labels is not None else size, sensitive=sens, **dict(zip(names, numbers)))
    except ValueError as exc:
        raise PlanError(f"params.{exc}") from None
    check_guarantee(mech.privacy_map(), data, spec_epsilon)
    return mech

"""The one runtime API's shared vocabulary: the domain argument and the privacy-map keys (numpy + stdlib).

Re-exported by :mod:`ldpplan.mechanisms._protocol`, which documents the whole runtime protocol;
``docs/ARCHITECTURE.md`` ("The one runtime API") lists every constructor.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence, TypedDict

import numpy as np

__all__ = ["domain_labels", "check_items", "report_columns", "PrivacyMap", "PRIVACY_MAP_TYPES", "check_privacy_map"]


def domain_labels(domain: Any, *, low: int = 1) -> tuple[int, list[str] | None]:
    """``(size, labels or None)`` of a runtime constructor's ``domain`` argument.

    The one way a runtime is told its domain (as a plan's ``domain.size`` / ``domain.labels``):
    an ``int`` size (items ``0 .. size-1``, no labels) or a sequence (or 1-D array) of distinct
    labels, converted to ``str``.

    Parameters
    ----------
    domain : int or sequence of str
    low : int, default 1
        Smallest number of items the mechanism accepts.

    Returns
    -------
    size : int
    labels : list of str or None

    Raises
    ------
    ValueError
        ``domain: ...`` naming the rule: a bool, a string, anything else that is neither a size
        nor a sequence, fewer than ``low`` items, repeated labels, or a label that starts or ends
        with whitespace (input files are read with cells stripped, so it could never be reported;
        the planner refuses it in the spec, issue 27).
    """
    if isinstance(domain, (int, np.integer)) and not isinstance(domain, (bool, np.bool_)):
        if int(domain) < low:
            raise ValueError(f"domain: must have at least {low} items (got {int(domain)})")
        return int(domain), None
    if isinstance(domain, (str, bytes, bool, np.bool_)) or not isinstance(domain, (Sequence, np.ndarray, range)):
        raise ValueError(f"domain: must be a size (int) or a list of labels (got {type(domain).__name__})")
    labels = [str(v) for v in domain]
    if len(labels) < low:
        raise ValueError(f"domain: must have at least {low} items (got {len(labels)} labels)")
    if len(set(labels)) != len(labels):
        raise ValueError("domain: labels must be distinct")
    spaced = next((label for label in labels if label != label.strip()), None)
    if spaced is not None:  # input cells are read stripped: such an item could never be reported
        raise ValueError(f"domain: a label must not start or end with whitespace (got {spaced!r})")
    return len(labels), labels


class PrivacyMap(TypedDict, total=False):
    """The keys a runtime's ``privacy_map()`` may return, each with one type in every family.

    ``notion`` and ``epsilon`` are always present; the other keys belong to the notions that
    use them. A new key is added here (and to :data:`PRIVACY_MAP_TYPES`) before a family uses it.

    References
    ----------
    ID-LDP (Gu et al. ICDE 2020) Def. 4-5: ``levels``, ``ldp_epsilon``, ``dummy_epsilon``;
    PCKV (Gu et al. USENIX Sec. 2020) Thm. 2: ``epsilon1``, ``epsilon2``; PIE (Murakami &
    Takahashi TDP 2021) Thm. 4.2, Cor. 3.9: ``theta``, ``alpha_bits``, ``alpha_nats``,
    ``bayes_error_lower_bound``, ``n``, ``releases``, ``max_prior``; ULDP (Murakami & Kawamoto
    USENIX Sec. 2019) Def. 2, Props. 9-10: ``sensitive``, ``protected_outputs``,
    ``invertible_outputs``, ``intermediate_sensitive``, ``user_sensitive``,
    ``user_indistinguishability_epsilon``. Longitudinal (Erlingsson et al. CCS 2014; Arcolezi et al. 2022):
    ``epsilon_perm``, ``epsilon_1``, ``rounds``, ``max_values``, ``epsilon_2``, ``epsilon_lifetime``,
    ``epsilon_lifetime_one_value``.
    """

    notion: str                       # "LDP", "MinID-LDP", "AvgID-LDP", "LDP+PIE", "ULDP", ...
    epsilon: float                    # nats: the notion's headline budget
    levels: dict                      # str -> float: per privacy level, its epsilon (nats)
    ldp_epsilon: float                # nats: the plain LDP epsilon the numbers imply
    dummy_epsilon: float              # nats: IDUE-PS dummy items' budget
    epsilon1: float                   # nats: PCKV key budget
    epsilon2: float                   # nats: PCKV value budget
    theta: float                      # PIE: mu - nu (dimensionless)
    alpha_bits: float                 # PIE: MI bound, bits
    alpha_nats: float                 # PIE: MI bound, nats
    bayes_error_lower_bound: float    # PIE Cor. 3.9 (probability)
    n: int                            # PIE: number of users
    releases: int                     # PIE: releases per user
    max_prior: float                  # PIE: largest prior probability of an input
    sensitive: list                   # list of int: the sensitive items X_S (indices)
    intermediate_sensitive: list      # list of int: PUM's Z_S (indices over Z = X + bots)
    protected_outputs: str            # ULDP Def. 2's Y_P, in words
    invertible_outputs: str           # ULDP Def. 2's Y_I, in words
    user_sensitive: str               # PUM Prop. 9's X_S^(i), in words
    user_indistinguishability_epsilon: float  # PUM Prop. 10 (nats)
    epsilon_perm: float               # longitudinal: any number of reports of one value (nats)
    epsilon_1: float                  # longitudinal: one report, the composed channel (nats)
    rounds: int                       # longitudinal: planned collections
    max_values: int                   # longitudinal: distinct values a user may hold
    epsilon_2: float                  # longitudinal: second round on the permanent response (nats)
    epsilon_lifetime: float           # longitudinal: sound bound over histories (nats)
    epsilon_lifetime_one_value: float  # longitudinal: an unchanging value, any rounds (nats)


#: key -> (Python type of the value, type of list items / dict values or None).
PRIVACY_MAP_TYPES: dict[str, tuple[type, type | None]] = {
    "notion": (str, None), "epsilon": (float, None), "levels": (dict, float), "ldp_epsilon": (float, None),
    "dummy_epsilon": (float, None), "epsilon1": (float, None), "epsilon2": (float, None), "theta": (float, None),
    "alpha_bits": (float, None), "alpha_nats": (float, None), "bayes_error_lower_bound": (float, None),
    "n": (int, None), "releases": (int, None), "max_prior": (float, None), "sensitive": (list, int),
    "intermediate_sensitive": (list, int), "protected_outputs": (str, None), "invertible_outputs": (str, None),
    "user_sensitive": (str, None), "user_indistinguishability_epsilon": (float, None),
    "epsilon_perm": (float, None), "epsilon_1": (float, None), "rounds": (int, None), "max_values": (int, None),
    "epsilon_2": (float, None), "epsilon_lifetime": (float, None), "epsilon_lifetime_one_value": (float, None),
}
assert set(PRIVACY_MAP_TYPES) == set(PrivacyMap.__annotations__)


def check_privacy_map(pm: Mapping[str, Any]) -> None:
    """Check a ``privacy_map()`` against the vocabulary: known keys, one type each.

    ``bool`` is not an ``int``; floats must be Python ``float`` (not numpy scalars), ints
    Python ``int``; ``levels`` maps ``str`` to ``float``; lists hold ``int``.

    Raises
    ------
    ValueError
        ``privacy_map.<key>: ...`` naming the key, the expected type and the value.
    """
    for key in ("notion", "epsilon"):
        if key not in pm:
            raise ValueError(f"privacy_map.{key}: required key is missing")
    for key, value in pm.items():
        if key not in PRIVACY_MAP_TYPES:
            raise ValueError(f"privacy_map.{key}: unknown key (add it to PRIVACY_MAP_TYPES with its type)")
        kind, item = PRIVACY_MAP_TYPES[key]
        if type(value) is not kind:
            raise ValueError(f"privacy_map.{key}: must be {kind.__name__} (got {type(value).__name__} {value!r:.40})")
        container: Any = value  # of type ``kind``: a dict, a list or a scalar
        inner = list(container.values()) if kind is dict else container if kind is list else ()
        if kind is dict and not all(type(k) is str for k in container):
            raise ValueError(f"privacy_map.{key}: keys must be str")
        if item is not None and not all(type(v) is item for v in inner):
            raise ValueError(f"privacy_map.{key}: items must be {item.__name__}")


def check_items(items: Any, k: int, what: str = "items") -> np.ndarray:
    """``items`` as a 1-D int64 array of indices in ``[0, k)``: the one check of item indices.

    Raises
    ------
    ValueError
        Not 1-D integers, or an index outside ``[0, k)`` (the message names ``what``).
    """
    x = np.asarray(items)
    if x.ndim != 1:
        raise ValueError(f"{what}: must be a 1-D integer array (got shape {x.shape})")
    if x.size and x.dtype.kind not in "iu":
        raise ValueError(f"{what}: must be integers (got dtype {x.dtype})")
    if x.dtype.kind == "u" and x.size and int(x.max()) > np.iinfo(np.int64).max:
        raise ValueError(f"{what}: must be indices in [0, {k})")
    x = x.astype(np.int64, copy=False)
    if x.size and (int(x.min()) < 0 or int(x.max()) >= k):
        raise ValueError(f"{what}: must be indices in [0, {k}) (got range [{int(x.min())}, {int(x.max())}])")
    return x


def report_columns(reports: Any, mechanism: str, names: Sequence[str], *,
                   mappings: bool = True) -> dict[str, np.ndarray]:
    """The named 1-D integer columns of a ``Reports`` object of ``mechanism`` (or, with ``mappings``, a dict).

    Raises
    ------
    ValueError
        Reports of another mechanism, not a reports object, a missing column or one that is not 1-D
        integers (naming ``reports.<column>``).
    """
    if hasattr(reports, "columns") and hasattr(reports, "mechanism"):
        if reports.mechanism != mechanism:
            raise ValueError(f"reports: of mechanism {reports.mechanism!r}, this runtime is {mechanism!r}")
        cols = reports.columns
    elif mappings and isinstance(reports, Mapping):
        cols = reports
    else:
        raise ValueError(f"reports: must be a Reports object (got {type(reports).__name__})")
    missing = [c for c in names if c not in cols]
    if missing:
        raise ValueError(f"reports.{missing[0]}: required column is missing (columns: {sorted(cols)})")
    out = {c: np.asarray(cols[c]) for c in names}
    for c, v in out.items():
        if v.ndim != 1 or (v.size and v.dtype.kind not in "iu"):
            raise ValueError(f"reports.{c}: must be a 1-D integer array (got {v.dtype}, shape {v.shape})")
    return out

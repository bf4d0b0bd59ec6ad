"""RS+FD's privacy for the whole record: the exact likelihood ratio, in closed form and by brute force.

RS+FD (Arcolezi, Couchot, Al Bouna, Xiao, CIKM 2021) samples one of the ``d`` attributes uniformly,
reports it through a frequency oracle at ``epsilon'`` and reports *fake data* for the others (GRR:
a uniform value; OUE-z: OUE of the all-zero vector; OUE-r: OUE of a uniform value). With
``fake_i`` the fake-data distribution and ``real_j`` the oracle's, the report's probability is

    Pr[y | x] = (1/d) sum_j real_j(y_j | x_j) prod_{i != j} fake_i(y_i) = C(y) sum_j r_j(y_j, x_j),

``C(y) = prod_i fake_i(y_i) / d`` and ``r_j = real_j / fake_j``; so the ratio of two records is
``sum_j r_j(y_j, x_j) / sum_j r_j(y_j, x'_j)``. With ``X = e^{epsilon'}`` each term pair has
``r_j(y, v) / r_j(y, v') <= X`` (the oracle is ``epsilon'``-LDP and ``fake_j`` does not depend on
``x``) and, for ``x_j != x'_j``, a ``y_j`` reaches ``X`` exactly. Hence:

* **whole record** (records differing in every attribute, report equal to the first): the ratio
  is exactly ``X``, for every protocol and every domain sizes: the record is ``epsilon'``-LDP and no
  better, not ``epsilon``-LDP as the paper's amplification ``epsilon' = ln(d (e^epsilon - 1) + 1)``
  claims;
* **one attribute i changed**: ``(S_i + hi_i) / (S_i + lo_i)`` with ``S_i = sum_{j != i} min r_j``
  and ``(hi_i, lo_i)`` the pair of ``r_i`` values (GRR and OUE-r: ``(k X, k)/(X + k - 1)``; OUE-z:
  ``((X + 1)/2, (X + 1)/(2 X))``); ``min r_j`` is ``k/(X + k - 1)`` (GRR), ``(X + 1)/(2 X)``
  (OUE-z), ``k/((k - 1) X + 1)`` (OUE-r). With equal domains and GRR (or any OUE-z record) this is
  exactly ``e^epsilon`` at the paper's ``epsilon'``; with unequal domains it exceeds it (GRR,
  ``k = (3, 5)``, ``epsilon = 1``: 1.0729), and OUE-r exceeds it even with equal domains (its fake
  data depend on how many bits are set: 1.1250 for ``k = (3, 3)``).

:func:`rsfd_privacy_brute_force` enumerates every pair of records and every report with
:class:`fractions.Fraction` probabilities written from the mechanism's definition (not from the
formulas above), as the independent check.

References
----------
H. H. Arcolezi, J.-F. Couchot, B. Al Bouna, X. Xiao, "Random Sampling Plus Fake Data:
Multidimensional Frequency Estimates With Local Differential Privacy", CIKM 2021, Sec. 3 (RS+FD[GRR],
RS+FD[OUE-z], RS+FD[OUE-r] and the amplified ``epsilon'``).
"""
from __future__ import annotations

import dataclasses
import itertools
import math
from fractions import Fraction
from typing import Sequence

__all__ = ["RSFD_PROTOCOLS", "RecordPrivacy", "rsfd_record_privacy", "rsfd_privacy_brute_force",
           "paper_amplified_epsilon"]

#: the local randomizers of RS+FD (the fake-data rule is part of the name)
RSFD_PROTOCOLS = ("grr", "oue-z", "oue-r")


@dataclasses.dataclass(frozen=True)
class RecordPrivacy:
    """Worst-case privacy loss of one RS+FD report of a whole record.

    Attributes
    ----------
    whole_record_epsilon : float
        ``max ln Pr[y|x]/Pr[y|x']`` over every pair of records and report (nats).
    one_attribute_epsilons : tuple of float, length d
        The same maximum over records differing only in attribute ``j`` (nats).
    whole_record_ratio, one_attribute_ratios : Fraction or float
        The ratios themselves (exact :class:`~fractions.Fraction` from the enumerator, floats from
        the closed form).
    """

    whole_record_epsilon: float
    one_attribute_epsilons: tuple[float, ...]
    whole_record_ratio: Fraction | float
    one_attribute_ratios: tuple[Fraction | float, ...]


def paper_amplified_epsilon(epsilon: float, attributes: int) -> float:
    """The paper's ``epsilon' = ln(d (e^epsilon - 1) + 1)`` (CIKM 2021, Sec. 3), nats."""
    return math.log(attributes * math.expm1(epsilon) + 1.0)


def _check(domain_sizes: Sequence[int], protocols: str | Sequence[str]) -> tuple[list[int], list[str]]:
    sizes = [int(k) for k in domain_sizes]
    if len(sizes) < 1 or any(k < 2 for k in sizes):
        raise ValueError(f"domain_sizes: must be one or more integers >= 2 (got {list(domain_sizes)!r})")
    names = [protocols] * len(sizes) if isinstance(protocols, str) else list(protocols)
    if len(names) != len(sizes) or any(p not in RSFD_PROTOCOLS for p in names):
        raise ValueError(f"protocols: must be one of {RSFD_PROTOCOLS} per attribute (got {protocols!r})")
    return sizes, names


def _ratio_terms(x: float, k: int, protocol: str) -> tuple[float, float, float]:
    """``(hi, lo, min r)`` of one attribute at ``X = e^{epsilon'}`` (module docstring)."""
    if protocol == "oue-z":
        return (x + 1) / 2, (x + 1) / (2 * x), (x + 1) / (2 * x)
    minimum = k / (x + k - 1) if protocol == "grr" else k / ((k - 1) * x + 1)
    return k * x / (x + k - 1), k / (x + k - 1), minimum


def rsfd_record_privacy(amplified_epsilon: float, domain_sizes: Sequence[int],
                        protocols: str | Sequence[str] = "grr") -> RecordPrivacy:
    """Exact worst-case privacy loss of an RS+FD report, from the closed form of the ratio.

    Parameters
    ----------
    amplified_epsilon : float, > 0 (nats)
        ``epsilon'``, the budget of the sampled attribute's frequency oracle.
    domain_sizes : sequence of int, length d, each >= 2
    protocols : str or sequence of str
        ``"grr"``, ``"oue-z"`` or ``"oue-r"`` (one for all attributes, or one per attribute).

    Returns
    -------
    RecordPrivacy
        Whole record: exactly ``epsilon'``; one attribute: ``ln((S_i + hi_i)/(S_i + lo_i))``.

    Raises
    ------
    ValueError
        On a domain size below 2, an unknown protocol or a non-positive budget.

    References
    ----------
    .. [1] Arcolezi et al., CIKM 2021, Sec. 3 (the mechanisms); the ratio is derived in this module's
       docstring and checked by :func:`rsfd_privacy_brute_force`.
    """
    if not (math.isfinite(amplified_epsilon) and amplified_epsilon > 0):
        raise ValueError(f"amplified_epsilon: must be a finite number > 0 nats (got {amplified_epsilon!r})")
    sizes, names = _check(domain_sizes, protocols)
    x = math.exp(amplified_epsilon)
    terms = [_ratio_terms(x, k, p) for k, p in zip(sizes, names)]
    total_min = sum(t[2] for t in terms)
    ratios = tuple((total_min - t[2] + t[0]) / (total_min - t[2] + t[1]) for t in terms)
    return RecordPrivacy(amplified_epsilon, tuple(math.log(r) for r in ratios), x, ratios)


# ----------------------------------------------------------------------------- brute force

def _oracle_tables(x: Fraction, k: int, protocol: str) -> tuple[list, dict, dict]:
    """Outputs, ``real[(y, v)]`` and ``fake[y]`` of one attribute, exactly, from the definitions."""
    if protocol == "grr":
        p, q = x / (x + k - 1), 1 / (x + k - 1)
        outputs: list = list(range(k))
        real = {(y, v): (p if y == v else q) for y in outputs for v in range(k)}
        fake = {y: Fraction(1, k) for y in outputs}
        return outputs, real, fake
    p, q = Fraction(1, 2), 1 / (x + 1)  # OUE (Wang et al. 2017): the held bit is 1 w.p. 1/2, others w.p. q
    outputs = list(itertools.product((0, 1), repeat=k))

    def encode(y: tuple, v: int | None) -> Fraction:
        out = Fraction(1)
        for position, bit in enumerate(y):
            one = p if position == v else q
            out *= one if bit else 1 - one
        return out
    real = {(y, v): encode(y, v) for y in outputs for v in range(k)}
    if protocol == "oue-z":
        fake = {y: encode(y, None) for y in outputs}
    else:
        fake = {y: sum((real[(y, v)] for v in range(k)), Fraction(0)) / k for y in outputs}
    return outputs, real, fake


def rsfd_privacy_brute_force(exp_amplified_epsilon: Fraction | int | float, domain_sizes: Sequence[int],
                             protocols: str | Sequence[str] = "grr") -> RecordPrivacy:
    """Exact worst-case likelihood ratio of an RS+FD report, by enumerating records and reports.

    Every report ``y`` of every record ``x`` gets ``Pr[y | x]`` as a :class:`~fractions.Fraction`
    from the mechanism's definition (uniform sampling of the reported attribute, the oracle on it,
    fake data on the others); the whole-record maximum is ``max_y max_x Pr / min_x' Pr``, the
    one-attribute maximum the same over records that agree outside attribute ``j``.

    Parameters
    ----------
    exp_amplified_epsilon : Fraction, > 1
        ``X = e^{epsilon'}`` as an exact rational (e.g. ``Fraction(math.exp(epsilon'))``: the exact
        value of the float, so the result is exact for the channel a float runtime would use).
    domain_sizes : sequence of int
        Small: the report space has ``prod k_j`` (GRR) or ``2^{sum k_j}`` (OUE) elements.
    protocols : str or sequence of str
        ``"grr"``, ``"oue-z"``, ``"oue-r"``, one for all attributes or one per attribute.

    Returns
    -------
    RecordPrivacy
        Ratios exact; epsilons are their natural logs rounded up by one float step.

    Raises
    ------
    ValueError
        On ``X <= 1``, or a space above 2e5 (records times reports).
    """
    x = Fraction(exp_amplified_epsilon)
    if x <= 1:
        raise ValueError(f"exp_amplified_epsilon: must be > 1 (got {exp_amplified_epsilon!r})")
    sizes, names = _check(domain_sizes, protocols)
    tables = [_oracle_tables(x, k, p) for k, p in zip(sizes, names)]
    records = list(itertools.product(*(range(k) for k in sizes)))
    reports = list(itertools.product(*(t[0] for t in tables)))
    if len(records) * len(reports) > 200_000:
        raise ValueError(f"domain_sizes: the enumeration ({len(records)} records x {len(reports)} reports) is too large")
    d = len(sizes)
    whole = Fraction(1)
    one = [Fraction(1)] * d
    for y in reports:
        fakes = [tables[i][2][y[i]] for i in range(d)]
        probabilities = {}
        for record in records:
            total = Fraction(0)
            for j in range(d):
                term = tables[j][1][(y[j], record[j])]
                for i in range(d):
                    if i != j:
                        term *= fakes[i]
                total += term
            probabilities[record] = total / d
        whole = max(whole, max(probabilities.values()) / min(probabilities.values()))
        for j in range(d):
            groups: dict[tuple, list[Fraction]] = {}
            for record, probability in probabilities.items():
                groups.setdefault(record[:j] + record[j + 1:], []).append(probability)
            one[j] = max([one[j]] + [max(g) / min(g) for g in groups.values()])
    return RecordPrivacy(_log_up(whole), tuple(_log_up(r) for r in one), whole, tuple(one))


def _log_up(ratio: Fraction) -> float:
    """``ln(ratio)`` rounded up by one float step (the privacy loss is never under-reported)."""
    return math.nextafter(math.log(ratio), math.inf)

r"""PCKV budget composition and probabilities (part of :mod:`ldpplan.solvers.pckv`, which re-exports it).

Source: Gu, Li, Cheng, Xiong, Cao, *PCKV*, USENIX Security 2020: Theorem 2 eq. (3),
Theorem 3 eq. (6), eq. (2), (4), (5). Budgets in nats.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["compose_ue", "compose_grr", "compose", "max_epsilon1", "max_epsilon2", "feasible_frontier",
           "ue_probabilities", "grr_probabilities", "probabilities", "budgets_from_probabilities", "MECHANISMS",
           "EPSILON2_CAP"]

MECHANISMS = ("pckv-ue", "pckv-grr")
#: Largest value budget ever allocated (nats): keeps ``1 - p`` far above the 2^-48 grid.
EPSILON2_CAP = 30.0


# ---------------------------------------------------------------- composition
def compose_ue(epsilon1: float, epsilon2: float) -> float:
    r"""Composed budget of PCKV-UE (Theorem 2, eq. (3)).

    ``epsilon = max{epsilon2, epsilon1 + ln[2 / (1 + e^{-epsilon2})]}``.

    Parameters
    ----------
    epsilon1, epsilon2 : float
        Key and value budgets (nats, >= 0).

    Returns
    -------
    float
        The composed budget in nats (independent of the padding length).
    """
    e1, e2 = float(epsilon1), float(epsilon2)
    return max(e2, e1 + math.log(2.0) - math.log1p(math.exp(-e2)))


def compose_grr(epsilon1: float, epsilon2: float, padding_length: int) -> float:
    r"""Composed budget of PCKV-GRR (Theorem 3, eq. (6)).

    ``epsilon = ln[(e^{e1+e2} + lambda) / (min{e^{e1}, (e^{e2}+1)/2} + lambda)]`` with
    ``lambda = (L - 1)(e^{e2} + 1)/2``. Reduces to eq. (3) at ``L = 1`` and to
    ``ln((e^{e1} + L - 1)/L)`` at ``epsilon2 = 0``.

    Parameters
    ----------
    epsilon1, epsilon2 : float
        Budgets in nats (>= 0).
    padding_length : int
        ``L >= 1``.

    Returns
    -------
    float
        Composed budget in nats.
    """
    e1, e2, L = float(epsilon1), float(epsilon2), int(padding_length)
    if L < 1:
        raise ValueError(f"padding_length must be >= 1 (got {padding_length})")
    # work with everything divided by e^{e2} for stability at large budgets
    half = (1.0 + math.exp(-e2)) / 2.0              # (e^{e2}+1)/2 / e^{e2}
    lam = (L - 1) * half
    num = math.exp(e1) + lam
    den = min(math.exp(e1 - e2), half) + lam
    return math.log(num / den)


def compose(mechanism: str, epsilon1: float, epsilon2: float, padding_length: int = 1) -> float:
    """Composed budget of ``"pckv-ue"`` (Thm. 2) or ``"pckv-grr"`` (Thm. 3), in nats."""
    if mechanism == "pckv-ue":
        return compose_ue(epsilon1, epsilon2)
    if mechanism == "pckv-grr":
        return compose_grr(epsilon1, epsilon2, padding_length)
    raise ValueError(f"mechanism must be one of {MECHANISMS} (got {mechanism!r})")


def max_epsilon1(mechanism: str, epsilon: float, padding_length: int = 1) -> float:
    """Supremum of ``epsilon1`` under total ``epsilon`` (reached at ``epsilon2 = 0``).

    PCKV-UE: ``epsilon``; PCKV-GRR: ``ln(L (e^epsilon - 1) + 1)`` (App. F, eq. (37)).
    """
    if mechanism == "pckv-ue":
        return float(epsilon)
    return math.log(int(padding_length) * math.expm1(float(epsilon)) + 1.0)


def max_epsilon2(mechanism: str, epsilon: float, epsilon1: float, padding_length: int = 1) -> float:
    r"""Largest ``epsilon2`` with composed budget ``<= epsilon`` for a given ``epsilon1``.

    PCKV-UE (eq. (4)): ``min{epsilon, -ln(2 e^{epsilon1 - epsilon} - 1)}``.
    PCKV-GRR: eq. (6) is solved for ``x = e^{epsilon2}``. With ``t = e^{epsilon1}``,
    ``E = e^{epsilon}`` and ``c = (L-1)/2`` the condition is linear in ``x`` on each
    branch of the ``min`` (``x >= 2t - 1`` and ``x <= 2t - 1``); both are solved in
    closed form and the feasible maximum is returned. For ``L > 1`` and a small
    ``epsilon1`` every ``epsilon2`` is feasible; the result is then capped at
    :data:`EPSILON2_CAP`.

    Parameters
    ----------
    mechanism : {"pckv-ue", "pckv-grr"}
    epsilon, epsilon1 : float
        Nats; ``0 <= epsilon1 < max_epsilon1(...)``.
    padding_length : int

    Returns
    -------
    float
        ``epsilon2`` in nats (``0`` when ``epsilon1`` is at its maximum).
    """
    eps, e1 = float(epsilon), float(epsilon1)
    if mechanism == "pckv-ue":
        z = 2.0 * math.exp(e1 - eps) - 1.0
        return eps if z <= math.exp(-eps) else max(0.0, -math.log(z))
    L = int(padding_length)
    E, t, c = math.exp(eps), math.exp(e1), (L - 1) / 2.0
    # composed(x) = (t x + c (x+1)) / (min(t, (x+1)/2) + c (x+1)) <= E, x = e^{e2} >= 1
    # Branch A (t <= (x+1)/2):  t x + c(x+1) <= E (t + c(x+1))  ->  x (t + c - E c) <= E t + E c - c
    # Branch B (t >= (x+1)/2):  t x + c(x+1) <= E (x+1)(1/2 + c) ->  x (t + c - E(1/2+c)) <= E(1/2+c) - c
    best = 1.0
    kA = t + c - E * c
    rA = E * t + E * c - c
    xA = math.inf if kA <= 0 else rA / kA
    lo_A = max(1.0, 2.0 * t - 1.0)   # branch A region: x >= 2t - 1
    if xA >= lo_A:
        best = max(best, xA)
    kB = t + c - E * (0.5 + c)
    rB = E * (0.5 + c) - c
    xB = math.inf if kB <= 0 else rB / kB
    hi_B = 2.0 * t - 1.0             # branch B region: x <= 2t - 1
    if hi_B >= 1.0:
        best = max(best, min(xB, hi_B))
    if best >= math.exp(EPSILON2_CAP):   # unbounded (possible for L > 1 and small epsilon1)
        return EPSILON2_CAP
    return math.log(best)


def feasible_frontier(mechanism: str, epsilon: float, padding_length: int = 1, num: int = 201) -> tuple[np.ndarray, np.ndarray]:
    """The Pareto frontier of the feasible ``(epsilon1, epsilon2)`` set under ``epsilon``.

    Every feasible pair lies below it: ``epsilon2 <= frontier(epsilon1)``.

    Returns
    -------
    epsilon1, epsilon2 : ndarray, shape (num,)
        Nats; ``epsilon1`` from 0 to ``max_epsilon1`` (excluded) on a uniform grid.
    """
    hi = max_epsilon1(mechanism, epsilon, padding_length)
    e1 = np.linspace(0.0, hi, num + 1)[:-1]
    e2 = np.array([max_epsilon2(mechanism, epsilon, x, padding_length) for x in e1])
    return e1, e2


# ------------------------------------------------------------- probabilities
def ue_probabilities(epsilon1: float, epsilon2: float) -> dict[str, float]:
    """PCKV-UE probabilities with OUE key perturbation, eq. (19).

    ``a = 1/2``, ``b = 1/(e^{epsilon1} + 1)``, ``p = e^{epsilon2}/(e^{epsilon2} + 1)``.
    """
    return {"a": 0.5, "b": 1.0 / (math.exp(epsilon1) + 1.0), "p": 1.0 / (1.0 + math.exp(-epsilon2))}


def grr_probabilities(epsilon1: float, epsilon2: float, domain_size: int, padding_length: int) -> dict[str, float]:
    """PCKV-GRR probabilities, eq. (5): ``a = e^{e1}/(e^{e1}+d'-1)``, ``b = (1-a)/(d'-1)``, ``p`` as UE."""
    dp = int(domain_size) + int(padding_length)
    a = 1.0 / (1.0 + (dp - 1) * math.exp(-epsilon1))
    return {"a": a, "b": (1.0 - a) / (dp - 1), "p": 1.0 / (1.0 + math.exp(-epsilon2))}


def probabilities(mechanism: str, epsilon1: float, epsilon2: float, domain_size: int, padding_length: int) -> dict[str, float]:
    """Dispatch to :func:`ue_probabilities` / :func:`grr_probabilities`."""
    if mechanism == "pckv-ue":
        return ue_probabilities(epsilon1, epsilon2)
    return grr_probabilities(epsilon1, epsilon2, domain_size, padding_length)


def budgets_from_probabilities(a: float, b: float, p: float) -> tuple[float, float]:
    """``epsilon1 = ln(a(1-b)/(b(1-a)))`` (UE) and ``epsilon2 = ln(p/(1-p))``, eq. (2).

    For PCKV-GRR ``a/b = e^{epsilon1}`` and ``(1-b)/(1-a)`` is not part of eq. (5); use
    ``ln(a/b)`` there (the planner does).
    """
    return math.log(a * (1 - b) / (b * (1 - a))), math.log(p / (1 - p))

r"""PCKV budget composition, allocation, error analysis and padding-length selection.

Source: Gu, Li, Cheng, Xiong, Cao, *PCKV: Locally Differentially Private Correlated
Key-Value Data Collection with Optimized Utility*, USENIX Security 2020 ("PCKV" below),
Sec. 5.2-5.4 and App. A-F. Equation numbers refer to that paper.

Symbols (all budgets in nats):

* ``epsilon1`` / ``epsilon2``: budgets of the key and of the value perturbation;
* ``a``, ``b``: key kept / key reported when not held (PCKV-UE: per position;
  PCKV-GRR: ``b = (1 - a) / (d' - 1)`` per other key);
* ``p``: value kept given the key was kept;
* ``padding_length`` (``L``, the paper's ``ell``) and ``d' = d + L``.

Composition (both ways)
-----------------------
* :func:`compose_ue` - Theorem 2, eq. (3); :func:`compose_grr` - Theorem 3, eq. (6).
* :func:`max_epsilon2` - the largest ``epsilon2`` feasible with a given ``epsilon1``
  (eq. (4) for PCKV-UE; for PCKV-GRR eq. (6) solved for ``e^{epsilon2}``, a quadratic).
  The feasible set of ``(epsilon1, epsilon2)`` under a total ``epsilon`` is
  ``{0 <= epsilon1 < epsilon1_max, 0 <= epsilon2 <= max_epsilon2(epsilon1)}``
  (:func:`feasible_frontier`).

Allocation
----------
:func:`allocate` - ``"optimized"`` (Lemma 2 eq. (20) / Lemma 3 eq. (22)-(23)),
``"naive"`` (``epsilon/2`` each, sequential composition as in PrivKVM),
``"tight"`` (eq. (21): ``epsilon2 = epsilon/2`` and the largest ``epsilon1`` the exact
composition allows) and ``"numeric"`` (minimise ``w_f MSE_f + w_m MSE_m`` of
Theorem 4 over the exact composition frontier).

Errors
------
:func:`theorem4_mse` - eq. (9)-(12) per key, plus the truncation bias of users holding
more than ``L`` pairs (see :func:`truncation_factor`); :func:`approximate_mse` - eq. (16)-(18).
"""
from __future__ import annotations

import math
import time
from typing import Any, Sequence

import numpy as np

from ._result import Certificate, SolveResult, SolverError, STATUS_CLOSED_FORM, STATUS_OPTIMAL

__all__ = [
    "compose_ue", "compose_grr", "compose", "max_epsilon1", "max_epsilon2", "feasible_frontier",
    "ue_probabilities", "grr_probabilities", "probabilities", "budgets_from_probabilities",
    "allocate", "ALLOCATIONS", "theorem4_mse", "approximate_mse", "truncation_factor",
    "choose_mechanism", "choose_padding_length", "KeyModel",
]

#: Allocation methods accepted by :func:`allocate`.
ALLOCATIONS = ("optimized", "numeric", "naive", "tight")
MECHANISMS = ("pckv-ue", "pckv-grr")
#: Grid points of the numeric allocation's 1-D search before the bounded Brent refinement.
NUMERIC_GRID_POINTS = 500
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


# ------------------------------------------------------------------ errors
def truncation_factor(set_sizes: Sequence[int] | np.ndarray, weights: Sequence[float] | np.ndarray, padding_length: int) -> float:
    r"""``rho(L) = E[min(s, L)] / E[s]`` under a set-size distribution.

    Model (the truncation the paper leaves to future work, Sec. 5.1): a user with ``s``
    pairs reports one of them with probability ``1/max(s, L)``; if key ``k`` is held by a
    user with probability proportional to her set size (each pair equally likely to be
    any key), then ``E[f_hat_k] = rho(L) f_k`` with eq. (7), a bias of ``-(1 - rho) f_k``.

    Parameters
    ----------
    set_sizes : array of int
        Support of the distribution (number of pairs per user).
    weights : array of float
        Probabilities or counts of each size (normalised here).
    padding_length : int

    Returns
    -------
    float in (0, 1]
    """
    s = np.asarray(set_sizes, dtype=float)
    w = np.asarray(weights, dtype=float)
    w = w / w.sum()
    mean = float(np.dot(w, s))
    if mean <= 0:
        return 1.0
    return float(np.dot(w, np.minimum(s, padding_length)) / mean)


def theorem4_mse(a: float, b: float, p: float, padding_length: int, n: float, frequencies, means,
                 sampled_frequencies=None) -> tuple[np.ndarray, np.ndarray]:
    r"""Per-key MSE of the baseline estimators (7) and (8), Theorem 4.

    ``MSE_f = Var (9) + (f_s - f)^2`` and ``MSE_m = Var (11) + bias (10)^2`` with
    ``delta = (a-b) f_s / L`` and ``gamma = a (2p-1) f_s / L`` (eq. (12)). ``f_s`` is the
    frequency the sampling actually sees (``sampled_frequencies``: ``f_k`` when no user
    holds more than ``L`` pairs, as Theorem 4 assumes; smaller with truncation, see
    :func:`truncation_factor`). Keys with ``f_s = 0`` get ``inf`` mean error.

    Parameters
    ----------
    a, b, p : float
        Perturbation probabilities (PCKV-UE or PCKV-GRR; the theorem covers both).
    padding_length : int
    n : float
        Number of users.
    frequencies, means : array_like, shape (d,)
        True frequencies (fraction of users holding the key) and value means in [-1, 1].
    sampled_frequencies : array_like, shape (d,), optional
        ``L * E[#users sampling key k] / n``; defaults to ``frequencies``.

    Returns
    -------
    mse_frequency, mse_mean : ndarray, shape (d,)
        Squared frequency (fraction) units and squared value units.
    """
    L = float(padding_length)
    f = np.asarray(frequencies, dtype=float)
    m = np.asarray(means, dtype=float)
    fs = f if sampled_frequencies is None else np.asarray(sampled_frequencies, dtype=float)
    var_f = L * L * b * (1 - b) / (n * (a - b) ** 2) + L * fs * (1 - a - b) / (n * (a - b))
    mse_f = var_f + (fs - f) ** 2
    delta = (a - b) * fs / L
    gamma = a * (2 * p - 1) * fs / L
    with np.errstate(divide="ignore", invalid="ignore"):
        bias = m * (1 - b - delta) * b / (n * delta ** 2)
        var_m = (b + delta) / (n * gamma ** 2) + (b * (1 - b) - delta) / (n * delta ** 2) * m ** 2
        mse_m = np.where(fs > 0, var_m + bias ** 2, np.inf)
    return mse_f, mse_m


def approximate_mse(a: float, b: float, p: float, padding_length: int, n: float, frequencies, means) -> tuple[np.ndarray, np.ndarray]:
    r"""Approximations (17)-(18): ``MSE_f ~ L^2 h / n``, ``MSE_m ~ mu (g + h m^2)``.

    With ``mu = L^2/(n f^2)``, ``g = b/(a^2 (2p-1)^2)``, ``h = (1-b) b/(a-b)^2`` (eq. (16)).

    Returns
    -------
    mse_frequency, mse_mean : ndarray, shape (d,)
    """
    L = float(padding_length)
    f = np.asarray(frequencies, dtype=float)
    m = np.asarray(means, dtype=float)
    g = b / (a * a * (2 * p - 1) ** 2)
    h = (1 - b) * b / (a - b) ** 2
    with np.errstate(divide="ignore"):
        mu = L * L / (n * f * f)
    return np.full_like(f, L * L * h / n), mu * (g + h * m * m)


class KeyModel:
    """What the planner assumes about the data when predicting errors.

    Parameters
    ----------
    frequencies : array, shape (d,)
        ``f_k`` (fraction of users holding key k).
    means : array, shape (d,)
        ``m_k`` in [-1, 1].
    n : int
        Number of users.
    set_sizes, set_size_weights : arrays, optional
        Set-size distribution (for the truncation model). ``None``: every user holds
        at most one pair (no truncation for any ``L >= 1``).
    sampled_frequencies : callable ``L -> array (d,)``, optional
        Exact per-key ``f_s(L)`` computed from real data (overrides the
        proportional model of :func:`truncation_factor`).
    objective_keys : array of int, optional
        Indices of the keys the objective averages over (default all keys with f > 0).
    """

    def __init__(self, frequencies, means, n, set_sizes=None, set_size_weights=None,
                 sampled_frequencies=None, objective_keys=None):
        self.frequencies = np.asarray(frequencies, dtype=float)
        self.means = np.asarray(means, dtype=float)
        self.n = float(n)
        self.set_sizes = None if set_sizes is None else np.asarray(set_sizes, dtype=float)
        self.set_size_weights = None if set_size_weights is None else np.asarray(set_size_weights, dtype=float)
        self._sampled = sampled_frequencies
        keys = np.nonzero(self.frequencies > 0)[0] if objective_keys is None else np.asarray(objective_keys)
        self.objective_keys = keys

    def sampled(self, padding_length: int) -> np.ndarray:
        """``f_s(L)`` per key (equals ``f`` without truncation)."""
        if self._sampled is not None:
            return np.asarray(self._sampled(int(padding_length)), dtype=float)
        if self.set_sizes is None:
            return self.frequencies
        return self.frequencies * truncation_factor(self.set_sizes, self.set_size_weights, padding_length)

    def objective(self, a, b, p, padding_length, weights=(1.0, 1.0)) -> tuple[float, float, float]:
        """``(w_f MSE_f + w_m MSE_m, MSE_f, MSE_m)`` averaged over :attr:`objective_keys`."""
        keys = self.objective_keys
        fs = self.sampled(padding_length)
        mf, mm = theorem4_mse(a, b, p, padding_length, self.n, self.frequencies[keys], self.means[keys], fs[keys])
        ef, em = float(np.mean(mf)), float(np.mean(mm))
        return weights[0] * ef + weights[1] * em, ef, em


# -------------------------------------------------------------- allocation
def _closed_form(mechanism: str, method: str, epsilon: float, L: int) -> tuple[float, float]:
    eps = float(epsilon)
    if method == "naive":
        return eps / 2.0, eps / 2.0
    if method == "optimized":
        if mechanism == "pckv-ue":
            return math.log((math.exp(eps) + 1.0) / 2.0), eps            # (20)
        return math.log(L * math.expm1(eps) / 2.0 + 1.0), math.log(L * math.expm1(eps) + 1.0)  # (22)
    if method == "tight":
        e2 = eps / 2.0
        if mechanism == "pckv-ue":
            return math.log((math.exp(eps) + math.exp(eps / 2.0)) / 2.0), e2   # (21)
        return _max_epsilon1_given_epsilon2(mechanism, eps, e2, L), e2
    raise ValueError(f"allocation must be one of {ALLOCATIONS} (got {method!r})")


def _max_epsilon1_given_epsilon2(mechanism: str, epsilon: float, epsilon2: float, L: int) -> float:
    """Largest ``epsilon1`` with composed budget ``<= epsilon`` (bisection; composition increases in epsilon1)."""
    lo, hi = 0.0, max_epsilon1(mechanism, epsilon, L)
    if compose(mechanism, 0.0, epsilon2, L) > epsilon:
        raise SolverError(f"epsilon2={epsilon2} alone exceeds epsilon={epsilon}")
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if compose(mechanism, mid, epsilon2, L) <= epsilon:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-15 * max(1.0, hi):
            break
    return lo


def allocate(mechanism: str, epsilon: float, *, method: str = "optimized", domain_size: int,
             padding_length: int = 1, model: KeyModel | None = None,
             weights: tuple[float, float] = (1.0, 1.0)) -> SolveResult:
    r"""Split a total budget into ``(epsilon1, epsilon2)`` and perturbation probabilities.

    Parameters
    ----------
    mechanism : {"pckv-ue", "pckv-grr"}
    epsilon : float
        Total budget in nats (> 0).
    method : {"optimized", "numeric", "naive", "tight"}
        ``optimized``: Lemma 2, eq. (20) (UE) / Lemma 3, eq. (22)-(23) (GRR), closed form.
        ``naive``: ``epsilon/2`` each (sequential composition, Theorem 1; PrivKVM).
        ``tight``: eq. (21) for UE; for GRR ``epsilon2 = epsilon/2`` and the largest
        feasible ``epsilon1`` under Theorem 3 (bisection).
        ``numeric``: minimise ``w_f MSE_f + w_m MSE_m`` (Theorem 4, averaged over
        ``model.objective_keys``) over ``epsilon1`` with ``epsilon2 = max_epsilon2(epsilon1)``
        from the *exact* composition (both MSEs are non-increasing in ``epsilon2``, so
        the optimum is on this frontier). Grid of NUMERIC_GRID_POINTS (500) then bounded
        Brent refinement; the result is never worse than the closed form (it is
        kept if the search does not beat it).
    domain_size : int
        ``d`` (number of keys).
    padding_length : int
        ``L``.
    model : KeyModel, optional
        Prior frequencies/means and ``n`` for the predicted objective (required for
        ``numeric``; otherwise only used to report the objective).
    weights : (w_f, w_m)

    Returns
    -------
    SolveResult
        ``parameters``: ``epsilon1``, ``epsilon2``, ``a``, ``b``, ``p`` (unrounded floats);
        ``objective``: predicted ``w_f MSE_f + w_m MSE_m`` (``nan`` without a model);
        ``extra``: ``composed_epsilon`` and, for ``numeric``, ``closed_form_objective``
        and ``gain`` (relative reduction versus the Lemma 2/3 allocation).

    Raises
    ------
    SolverError
        If ``numeric`` is asked without a model, or no finite objective is found.
    ValueError
        Unknown mechanism or method, ``epsilon <= 0``.
    """
    t0 = time.perf_counter()
    if mechanism not in MECHANISMS:
        raise ValueError(f"mechanism must be one of {MECHANISMS} (got {mechanism!r})")
    if method not in ALLOCATIONS:
        raise ValueError(f"allocation must be one of {ALLOCATIONS} (got {method!r})")
    eps = float(epsilon)
    if not (eps > 0 and math.isfinite(eps)):
        raise ValueError(f"epsilon must be finite and > 0 (got {epsilon})")
    L, d = int(padding_length), int(domain_size)

    def evaluate(e1: float, e2: float) -> float:
        if model is None:
            return math.nan
        pr = probabilities(mechanism, e1, e2, d, L)
        return model.objective(pr["a"], pr["b"], pr["p"], L, weights)[0]

    if method != "numeric":
        e1, e2 = _closed_form(mechanism, method, eps, L)
        obj = evaluate(e1, e2)
        pr = probabilities(mechanism, e1, e2, d, L)
        source = {"optimized": "Lemma 2, eq. (20)" if mechanism == "pckv-ue" else "Lemma 3, eq. (22)-(23)",
                  "naive": "epsilon1 = epsilon2 = epsilon/2 (Theorem 1)",
                  "tight": "eq. (21)" if mechanism == "pckv-ue" else "epsilon2 = epsilon/2, Theorem 3 solved for epsilon1"}[method]
        cert = Certificate("closed form", -math.inf, obj, {"source": source})
        return SolveResult(STATUS_CLOSED_FORM, obj, {"epsilon1": e1, "epsilon2": e2, **pr}, cert,
                           f"pckv.{method}", time.perf_counter() - t0,
                           {"composed_epsilon": compose(mechanism, e1, e2, L)})

    if model is None:
        raise SolverError("numeric allocation needs a KeyModel (prior frequencies, means and n)")
    hi = max_epsilon1(mechanism, eps, L)

    def f_of(e1: float) -> float:
        e2 = max_epsilon2(mechanism, eps, e1, L)
        if e2 <= 0:
            return math.inf
        val = evaluate(e1, e2)
        return val if math.isfinite(val) else math.inf

    grid = np.linspace(0.0, hi, NUMERIC_GRID_POINTS + 2)[1:-1]
    vals = np.array([f_of(x) for x in grid])
    if not np.isfinite(vals).any():
        raise SolverError("numeric allocation: the predicted MSE is infinite everywhere (keys with zero frequency?)")
    i = int(np.nanargmin(vals))
    from scipy.optimize import minimize_scalar

    lo_b, hi_b = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    res = minimize_scalar(f_of, bounds=(lo_b, hi_b), method="bounded", options={"xatol": 1e-12 * max(1.0, hi)})
    best_e1, best_val = (float(res.x), float(res.fun)) if res.fun <= vals[i] else (float(grid[i]), float(vals[i]))
    cf1, cf2 = _closed_form(mechanism, "optimized", eps, L)
    cf_val = evaluate(cf1, cf2)
    if not (best_val <= cf_val):   # keep the closed form if the search did not beat it
        best_e1, best_val = cf1, cf_val
    e1, e2 = best_e1, max_epsilon2(mechanism, eps, best_e1, L) if best_e1 != cf1 else cf2
    pr = probabilities(mechanism, e1, e2, d, L)
    gain = (cf_val - best_val) / cf_val if cf_val > 0 and math.isfinite(cf_val) else 0.0
    step = float(grid[1] - grid[0])
    cert = Certificate("dense grid + bounded Brent (1-D, not a global bound)", -math.inf, best_val,
                       {"grid_points": len(grid), "grid_step": step, "closed_form_objective": cf_val})
    return SolveResult(STATUS_OPTIMAL, best_val, {"epsilon1": e1, "epsilon2": e2, **pr}, cert, "pckv.numeric",
                       time.perf_counter() - t0,
                       {"composed_epsilon": compose(mechanism, e1, e2, L), "closed_form_objective": cf_val,
                        "gain": gain, "closed_form": {"epsilon1": cf1, "epsilon2": cf2}})


# -------------------------------------------------------- mechanism choice
def sec54_conditions(epsilon: float, domain_size: int, padding_length: int) -> dict[str, Any]:
    r"""The two conditions at the end of Sec. 5.4 (optimized allocations).

    * frequency (smaller ``h``): PCKV-UE better iff ``2(d-1) > L(4L-1)(e^eps+1)``;
    * mean (smaller ``g``): PCKV-UE better iff ``2d > L(4L(e^eps+1)/(e^eps+3) - 1)(e^eps+1)``.
    """
    E, d, L = math.exp(epsilon), int(domain_size), int(padding_length)
    freq_lhs, freq_rhs = 2 * (d - 1), L * (4 * L - 1) * (E + 1)
    mean_lhs, mean_rhs = 2 * d, L * (4 * L * (E + 1) / (E + 3) - 1) * (E + 1)
    return {
        "frequency": {"ue_better": bool(freq_lhs > freq_rhs), "lhs": freq_lhs, "rhs": freq_rhs,
                      "rule": "2(d-1) > L(4L-1)(e^eps+1)"},
        "mean": {"ue_better": bool(mean_lhs > mean_rhs), "lhs": mean_lhs, "rhs": mean_rhs,
                 "rule": "2d > L(4L(e^eps+1)/(e^eps+3)-1)(e^eps+1)"},
    }


def choose_mechanism(candidates: dict[str, SolveResult], epsilon: float, domain_size: int,
                     padding_length: int | dict[str, int]) -> tuple[str, str]:
    """Pick PCKV-UE or PCKV-GRR: the smaller predicted objective wins.

    Parameters
    ----------
    candidates : {"pckv-ue": SolveResult, "pckv-grr": SolveResult}
        Allocations with objectives from the same KeyModel and weights.
    epsilon, domain_size, padding_length
        For the Sec. 5.4 conditions quoted in the reason.

    Returns
    -------
    mechanism, reason : str
    """
    ue, grr = candidates["pckv-ue"], candidates["pckv-grr"]
    Lu = padding_length["pckv-ue"] if isinstance(padding_length, dict) else padding_length
    Lg = padding_length["pckv-grr"] if isinstance(padding_length, dict) else padding_length
    cond = sec54_conditions(epsilon, domain_size, Lg)
    pick = "pckv-ue" if ue.objective <= grr.objective else "pckv-grr"
    reason = (f"predicted w_f*MSE_f + w_m*MSE_m (Theorem 4): PCKV-UE {ue.objective:.4g} (L={Lu}) vs "
              f"PCKV-GRR {grr.objective:.4g} (L={Lg}); Sec. 5.4 at L={Lg}: frequency favours "
              f"{'UE' if cond['frequency']['ue_better'] else 'GRR'}, mean favours "
              f"{'UE' if cond['mean']['ue_better'] else 'GRR'}")
    return pick, reason


# ---------------------------------------------------------- padding length
def choose_padding_length(mechanism: str, epsilon: float, *, domain_size: int, model: KeyModel,
                          method: str = "optimized", weights=(1.0, 1.0), max_padding_length: int = 64) -> SolveResult:
    r"""Choose ``L`` minimising the predicted ``w_f MSE_f + w_m MSE_m`` including truncation.

    Model: for each candidate ``L`` the budget is allocated with ``method``; the error
    of key ``k`` is Theorem 4 (eq. (9)-(12)) evaluated at the *sampled* frequency
    ``f_s(L)`` plus the squared truncation bias ``(f_s(L) - f)^2`` of estimator (7)
    (users holding ``s > L`` pairs report each pair with probability ``1/s``, not
    ``1/L``). ``f_s`` is exact when computed from a data file, or
    ``rho(L) f`` (:func:`truncation_factor`) from a set-size distribution. The mean
    estimator (8) is assumed unbiased by truncation (values independent of set size).
    Candidates ``L = 1..max_padding_length`` are all evaluated (exhaustive search).

    Returns
    -------
    SolveResult
        ``parameters``: ``padding_length`` and the allocation's ``epsilon1, epsilon2, a, b, p``;
        ``extra["candidates"]``: list of ``{padding_length, objective, mse_frequency, mse_mean}``.
    """
    t0 = time.perf_counter()
    rows = []
    best = None
    for L in range(1, int(max_padding_length) + 1):
        try:
            sol = allocate(mechanism, epsilon, method=method, domain_size=domain_size, padding_length=L,
                           model=model, weights=weights)
        except SolverError:
            continue
        obj, ef, em = model.objective(sol.a, sol.b, sol.p, L, weights)
        rows.append({"padding_length": L, "objective": obj, "mse_frequency": ef, "mse_mean": em})
        if math.isfinite(obj) and (best is None or obj < best[0]):
            best = (obj, L, sol)
    if best is None:
        raise SolverError("padding-length selection: no candidate L has a finite predicted error")
    obj, L, sol = best
    cert = Certificate("exhaustive search over L", obj, obj, {"candidates": len(rows), "max_padding_length": int(max_padding_length)})
    return SolveResult(STATUS_OPTIMAL, obj, {"padding_length": L, **dict(sol.parameters)}, cert,
                       "pckv.padding_length", time.perf_counter() - t0, {"candidates": rows, "allocation": sol})

"""PIE privacy calculators and targeting for k-ary RR and GLH.

Source: Murakami & Takahashi, "Toward Evaluating Re-identification Risks in the
Local Privacy Model", Trans. Data Privacy 2021 (``pie-murakami-takahashi-tdp2021``):

* (U, alpha)-PIE privacy, Def. 3.1: ``sup I(U;Y) <= alpha`` **in bits**;
* Bayes error bounds, Prop. 3.7 / Cor. 3.9 (eq. 11-12), ``log`` in base 2;
* alpha of any epsilon-LDP mechanism, Prop. 4.1 (eq. 14);
* alpha of the epsilon-RR (Thm. 4.2, eq. 16) and of the (g, epsilon)-GLH
  (Thm. 4.4, eq. 18), composition over ``t`` releases (Thm. 4.3 / 4.5);
* expected l2 loss of the empirical estimators, Prop. 4.6 (eq. 22) and 4.7 (eq. 23),
  and the large-``g`` limit of Thm. 4.8 (eq. 24).

Units: alpha is in **bits** everywhere (``*_nats`` helpers convert); epsilon is in
nats (the usual LDP convention, ``e^epsilon``); losses are squared **frequencies**.

Targeting inverts these bounds in closed form. The guarantee used for a mechanism
is the smaller of the mechanism-specific bound (Thm. 4.2/4.4, times ``t``) and the
general LDP bound (Prop. 4.1 applied to the ``t epsilon``-LDP joint release); both
are non-decreasing in epsilon, so ``{epsilon : min(.,.) <= alpha}`` is the interval
``[0, max(epsilon_mech, epsilon_general)]`` and its right end is the exact answer.

No printing, no file I/O; solvers return frozen :class:`solvers.SolveResult`.
"""
from __future__ import annotations

import math
import time

from ._pie_bounds import (  # noqa: F401  (public names of this module)
    EPSILON_CEILING, LOG2_E, PIEBound, _check_int, _inv_expm1, alpha_for_bayes_error, alpha_glh, alpha_ldp_bound,
    alpha_rr, bayes_error_lower_bound, bits_to_nats, l2_loss_glh, l2_loss_glh_limit, l2_loss_rr,
    mi_loss_from_keep_probability, mi_loss_glh, mi_loss_rr, nats_to_bits, prior_bits, total_l2_loss_glh,
    total_l2_loss_rr,
)
from ._checks import check_epsilon
from ._result import STATUS_CLOSED_FORM, Certificate, SolveResult, SolverError

__all__ = [
    "LOG2_E", "bits_to_nats", "nats_to_bits",
    "mi_loss_rr", "mi_loss_glh", "mi_loss_from_keep_probability",
    "alpha_ldp_bound", "alpha_rr", "alpha_glh", "PIEBound",
    "prior_bits", "bayes_error_lower_bound", "alpha_for_bayes_error",
    "l2_loss_rr", "l2_loss_glh", "l2_loss_glh_limit", "total_l2_loss_rr", "total_l2_loss_glh",
    "epsilon_for_alpha", "solve_rr", "solve_glh", "solve_pie", "EPSILON_CEILING",
]


# ------------------------------------------------------------------ inversion
def _epsilon_general(alpha_bits: float, n: int, k: int, t: int) -> float:
    """Largest epsilon with Prop. 4.1 (t releases) <= alpha (inf when the log terms suffice)."""
    if alpha_bits >= min(math.log2(n), t * math.log2(k)):
        return math.inf
    a = alpha_bits / LOG2_E  # nats
    return max(a, math.sqrt(a)) / t


def _epsilon_mechanism(alpha_bits: float, n: int, k_log: int, size: int, t: int) -> float:
    """Largest epsilon with t * theta(eps, size) * min(log2 n, log2 k_log) <= alpha."""
    theta_max = alpha_bits / (t * min(math.log2(n), math.log2(k_log)))
    if theta_max >= 1.0:
        return math.inf
    # theta = E/(size + E) with E = e^eps - 1  <=>  E = theta size / (1 - theta)
    return math.log1p(theta_max * size / (1.0 - theta_max))


def epsilon_for_alpha(alpha_bits: float, n: int, domain_size: int, releases: int = 1, g: int | None = None) -> float:
    """Largest epsilon whose PIE guarantee (min of Thm. 4.2/4.4 and Prop. 4.1) is <= ``alpha_bits``.

    Closed form (see the module docstring): ``max(eps_mech, eps_general)`` with
    ``eps_mech = log(1 + theta* s/(1 - theta*))``, ``theta* = alpha/(t min(log2 n, log2|X|))``,
    ``s = |X|`` (RR) or ``g`` (GLH), and ``eps_general = max(a, sqrt(a))/t`` with
    ``a = alpha / log2 e`` unless the log terms of eq. 14 already meet alpha.

    Returns
    -------
    float
        epsilon in nats; ``inf`` when every epsilon meets the target (Prop. 3.10:
        pseudonymisation alone suffices). ``0`` when ``alpha_bits <= 0``.
    """
    a = float(alpha_bits)
    n = _check_int("n", n, 2)
    k = _check_int("domain_size", domain_size, 2)
    t = _check_int("releases", releases, 1)
    if not (a > 0.0):
        return 0.0
    size = k if g is None else _check_int("g", g, 2)
    return max(_epsilon_mechanism(a, n, k, size, t), _epsilon_general(a, n, k, t))


def _certificate(kind: str, objective: float, **details) -> Certificate:
    return Certificate(kind=kind, lower_bound=float(objective), upper_bound=float(objective), details=details)


def _check_target(alpha_bits, epsilon) -> None:
    if (alpha_bits is None) == (epsilon is None):
        raise SolverError("give exactly one of alpha_bits (a PIE budget) or epsilon (an LDP budget)")
    if alpha_bits is not None and not (float(alpha_bits) > 0.0):
        raise SolverError(f"alpha_bits must be > 0 to allow any obfuscation with epsilon > 0 (got {alpha_bits!r})")
    if epsilon is not None:
        check_epsilon(epsilon, error=SolverError)


def solve_rr(*, n: int, domain_size: int, alpha_bits: float | None = None, epsilon: float | None = None,
             releases: int = 1, epsilon_max: float = 30.0) -> SolveResult:
    """Largest epsilon of the epsilon-RR meeting a PIE budget (or a given epsilon).

    Parameters
    ----------
    n, domain_size : int
        Number of users and ``|X|``.
    alpha_bits : float, optional
        PIE budget in bits (Def. 3.1); the answer is :func:`epsilon_for_alpha`, capped
        at ``epsilon_max``.
    epsilon : float, optional
        A plain LDP budget (then nothing is solved; the guarantee is reported).
    releases : int, default 1
        Releases per user ``t`` (Thm. 4.3).
    epsilon_max : float, default 30
        Cap (nats) applied when the budget allows a larger (or unbounded) epsilon.

    Returns
    -------
    SolveResult
        ``parameters = {epsilon, domain_size}``; ``objective`` = total expected l2
        loss ``sum_x E[(p - p_hat)^2]`` (squared frequencies, Prop. 4.6);
        ``extra`` holds ``alpha_bits``, ``theta``, ``binding``.

    Raises
    ------
    SolverError
        Bad target.
    """
    start = time.perf_counter()
    _check_target(alpha_bits, epsilon)
    k = _check_int("domain_size", domain_size, 2)
    n = _check_int("n", n, 2)
    t = _check_int("releases", releases, 1)
    if epsilon is not None:
        eps, binding = min(float(epsilon), EPSILON_CEILING), "epsilon target"
        unconstrained = eps
    else:
        assert alpha_bits is not None  # _check_target: exactly one of alpha_bits, epsilon
        unconstrained = epsilon_for_alpha(alpha_bits, n, k, t)
        cap = min(float(epsilon_max), EPSILON_CEILING)
        eps, binding = (unconstrained, "alpha target") if unconstrained <= cap else (cap, "epsilon_max")
    bound = alpha_rr(eps, n, k, t)
    loss = total_l2_loss_rr(eps, k, n)
    cert = _certificate("closed form", loss, theorem="Thm. 4.2/4.3 and Prop. 4.1 inverted exactly; "
                        "l2 loss (Prop. 4.6) is decreasing in epsilon, so the largest feasible epsilon is optimal",
                        unconstrained_epsilon=unconstrained if math.isfinite(unconstrained) else "inf")
    return SolveResult(STATUS_CLOSED_FORM, loss, {"epsilon": eps, "domain_size": k}, cert, "pie.closed_form.rr",
                       time.perf_counter() - start,
                       {"alpha_bits": bound.alpha_bits, "theta": bound.theta, "binding": binding,
                        "alpha_binding": bound.binding})


def _glh_pieces(alpha_bits, n, k, t, g_max, epsilon_max):
    """Breakpoints of eps(g) = min(cap, max(eps_theta(g), eps_general)) on [2, g_max]."""
    eps_gen = _epsilon_general(alpha_bits, n, k, t)
    theta_max = alpha_bits / (t * min(math.log2(n), math.log2(k)))
    return eps_gen, theta_max


def _convex_g_candidates(epsilon: float, k: int, lo: int, hi: int) -> list[int]:
    """Integer minimisers of the total GLH loss in g at fixed epsilon on [lo, hi].

    ``n * total(g) = c1 u + c2 / u + c0`` with ``u = g - 1``,
    ``c1 = k/E^2 + 1/E`` and ``c2 = (E+1)/E * (k (E+1)/E - 1)`` (``E = e^eps - 1``),
    convex in ``u > 0`` with minimiser ``sqrt(c2/c1)``.
    """
    if lo > hi:
        return []
    inv = _inv_expm1(epsilon)
    c1 = k * inv * inv + inv
    c2 = (1.0 + inv) * (k * (1.0 + inv) - 1.0)
    u = min(math.sqrt(c2 / c1) if c1 > 0 else math.inf, float(hi))
    cands = {lo, hi}
    for gg in (math.floor(u) + 1, math.ceil(u) + 1):
        cands.add(min(hi, max(lo, int(gg))))
    return sorted(cands)


def _glh_g_candidates(alpha_bits, epsilon, n: int, k: int, t: int, g_min: int, g_max: int,
                      epsilon_max: float) -> set[int]:
    """The few integer g among which the GLH optimum lies (see :func:`solve_glh`)."""
    candidates: set[int] = {g_min, g_max}
    if epsilon is not None:
        candidates.update(_convex_g_candidates(float(epsilon), k, g_min, g_max))
    else:
        eps_gen, theta_max = _glh_pieces(alpha_bits, n, k, t, g_max, epsilon_max)
        if theta_max >= 1.0 or eps_gen >= epsilon_max:
            # epsilon = epsilon_max for every g: one convex piece
            candidates.update(_convex_g_candidates(float(epsilon_max), k, g_min, g_max))
        else:
            r = theta_max / (1.0 - theta_max)
            # eps_theta(g) >= eps_gen  <=>  g >= expm1(eps_gen)/r ; eps_theta(g) >= cap <=> g >= expm1(cap)/r
            g_c = max(g_min, min(g_max + 1, math.ceil(math.expm1(eps_gen) / r))) if eps_gen > 0 else g_min
            g_cap = max(g_min, min(g_max + 1, math.ceil(math.expm1(epsilon_max) / r)))
            if g_c > g_min:  # constant eps_gen piece [g_min, g_c - 1]
                candidates.update(_convex_g_candidates(eps_gen, k, g_min, g_c - 1))
            if g_cap > g_c:  # theta piece [g_c, g_cap - 1]: right end (Thm. 4.8)
                candidates.update({g_c, g_cap - 1})
            if g_cap <= g_max:  # constant cap piece [g_cap, g_max]
                candidates.update(_convex_g_candidates(float(epsilon_max), k, g_cap, g_max))
            for gg in list(candidates):  # guard the rounding of the breakpoints
                candidates.update(x for x in (gg - 1, gg + 1) if g_min <= x <= g_max)
    return candidates


def solve_glh(*, n: int, domain_size: int, g_max: int, alpha_bits: float | None = None,
              epsilon: float | None = None, releases: int = 1, epsilon_max: float = 30.0,
              g_min: int = 2) -> SolveResult:
    """(g, epsilon) of the GLH minimising the total expected l2 loss under a PIE budget.

    The objective is ``sum_x E[(p(x) - p_hat(x))^2]`` (eq. 23 summed, ``sum p = 1``;
    independent of ``p``). For each integer ``g`` the loss decreases in epsilon, so
    ``epsilon(g) = min(epsilon_max, max(eps_theta(g), eps_general))`` where
    ``eps_theta(g) = log(1 + theta* g/(1 - theta*))`` keeps ``theta_GLH = theta*``
    (Thm. 4.4) and ``eps_general`` is Prop. 4.1's. This is non-decreasing in ``g``
    and splits ``[g_min, g_max]`` into at most three pieces:

    * ``eps_theta(g)`` binds: theta is fixed, and by Thm. 4.8 the loss decreases in
      ``g`` -> the right end of the piece;
    * epsilon constant (``eps_general`` or ``epsilon_max``): the loss is
      ``c1 (g-1) + c2/(g-1) + c0``, convex -> its integer minimiser (closed form).

    The minimum over these few candidates is the exact integer optimum. With an
    ``epsilon`` target only the constant piece exists.

    Parameters
    ----------
    n, domain_size : int
    g_max : int
        Largest allowed hash range (e.g. ``2**report_bits``); >= ``g_min``.
    alpha_bits, epsilon : float
        Exactly one: PIE budget in bits, or plain LDP epsilon (nats).
    releases : int, default 1
    epsilon_max : float, default 30
    g_min : int, default 2

    Returns
    -------
    SolveResult
        ``parameters = {g, epsilon, domain_size}``, objective = total l2 loss.

    Raises
    ------
    SolverError
        Bad target or ``g_max < g_min``.
    """
    start = time.perf_counter()
    _check_target(alpha_bits, epsilon)
    k = _check_int("domain_size", domain_size, 2)
    n = _check_int("n", n, 2)
    t = _check_int("releases", releases, 1)
    g_min = _check_int("g_min", g_min, 2)
    if int(g_max) < g_min:
        raise SolverError(f"g_max must be >= {g_min} (got {g_max!r})")
    g_max = int(g_max)
    epsilon_max = min(float(epsilon_max), EPSILON_CEILING)
    if epsilon is not None:
        epsilon = min(float(epsilon), EPSILON_CEILING)

    def eps_of(g: int) -> float:
        if epsilon is not None:
            return float(epsilon)
        assert alpha_bits is not None  # _check_target: exactly one of alpha_bits, epsilon
        return min(float(epsilon_max), epsilon_for_alpha(alpha_bits, n, k, t, g=g))

    candidates = _glh_g_candidates(alpha_bits, epsilon, n, k, t, g_min, g_max, epsilon_max)
    scored = []
    for g in sorted(candidates):
        e = eps_of(g)
        if not (e > 0) or not math.isfinite(e):
            continue
        scored.append((total_l2_loss_glh(e, g, n, k), g, e))
    if not scored:
        raise SolverError("no (g, epsilon) with epsilon > 0 meets the target")
    loss, g, eps = min(scored)
    bound = alpha_glh(eps, g, n, k, t)
    cert = _certificate("closed form", loss,
                        theorem="piecewise exact: Thm. 4.8 monotonicity on the theta piece, closed-form convex "
                                "minimiser on constant-epsilon pieces",
                        candidates=[{"g": gg, "epsilon": ee, "total_l2_loss": ll} for ll, gg, ee in scored[:12]])
    binding = "epsilon target" if epsilon is not None else ("epsilon_max" if eps >= epsilon_max else "alpha target")
    return SolveResult(STATUS_CLOSED_FORM, loss, {"g": g, "epsilon": eps, "domain_size": k}, cert,
                       "pie.closed_form.glh", time.perf_counter() - start,
                       {"alpha_bits": bound.alpha_bits, "theta": bound.theta, "binding": binding,
                        "alpha_binding": bound.binding,
                        "limit_total_l2_loss": l2_loss_glh_limit(bound.theta, n, 1.0) if bound.theta > 0 else math.inf})


def solve_pie(*, n: int, domain_size: int, g_max: int, alpha_bits: float | None = None,
              epsilon: float | None = None, releases: int = 1, epsilon_max: float = 30.0) -> SolveResult:
    """Choose between the RR and the GLH for one target: the smaller total expected l2 loss.

    Ties go to the RR (its reports are ``ceil(log2 |X|)`` bits versus the GLH's hash
    seed plus ``ceil(log2 g)`` bits, Sec. 4.4). The chosen mechanism's parameters
    are returned with ``parameters["mechanism"]``; both candidates are in ``extra``.

    Returns
    -------
    SolveResult
    """
    start = time.perf_counter()
    rr = solve_rr(n=n, domain_size=domain_size, alpha_bits=alpha_bits, epsilon=epsilon, releases=releases,
                  epsilon_max=epsilon_max)
    glh = solve_glh(n=n, domain_size=domain_size, g_max=g_max, alpha_bits=alpha_bits, epsilon=epsilon,
                    releases=releases, epsilon_max=epsilon_max)
    best = rr if rr.objective <= glh.objective else glh
    mech = "rr" if best is rr else "glh"
    params = dict(best.parameters)
    params["mechanism"] = mech
    return SolveResult(STATUS_CLOSED_FORM, best.objective, params, best.certificate, "pie.closed_form.choose",
                       time.perf_counter() - start, {**dict(best.extra), "rr": rr, "glh": glh})

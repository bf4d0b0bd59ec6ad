"""The runtime's check of ``guarantee.shuffled`` (numpy + stdlib only): ``load()`` confirms a central claim.

A plan whose spec has a ``[shuffle] n, delta`` block claims the central ``(epsilon, delta)`` of
``n`` shuffled reports. :func:`check_shuffled_claim` confirms the claim from the plan's own
numbers, independently of the planner (no scipy): the claim's shape (exactly the fields ``n``,
``delta``, ``epsilon``, ``epsilon_lower``, ``source``, each of its type and range), its agreement
with the embedded spec (the ``[shuffle]`` block, ``target.central_epsilon``), and the bound its
``source`` names, recomputed here and rounded toward the safe side:

* ``epsilon >= epsilon0`` always holds (the differing user's report is epsilon0-LDP, the shuffle
  a post-processing);
* :data:`SOURCE_FMT_CLOSED`: FMT21 Theorem 3.1 in closed form, recomputed and rounded up;
* :data:`SOURCE_FMT_NUMERICAL`: FMT21 Theorem 3.2 (the divergence of the two clone mixtures)
  evaluated at the claimed ``epsilon`` by direct sums of binomial pmfs; it must be ``<= delta``;
* :data:`SOURCE_BLANKET`: the privacy blanket of k-ary randomized response (Balle et al. 2019,
  Sec. 3), summed over the blanket size the same way, for runtimes that declare ``shuffle="krr"``
  (k = ``domain.size``).

Anything else (an unknown source, a bound this module does not implement, such as the planner's
exact curve of binary RR) is refused in one line: the runtime only accepts what it can confirm,
and the planner only claims what this module confirms (:func:`upper_epsilon` is the bound it
falls back to). A new bound is one entry in :data:`_CHECKS` (a function ``(epsilon, epsilon0, n,
randomizer) -> delta``, an upper bound of the divergence at ``epsilon``) and its source string.

Rounding (:mod:`ldpplan.mechanisms._binomial`): pmfs by Loader's saddle-point formula (relative
error ~1e-15 at any n), binomial tails by exact windowed sums every 4096 points and an exact
recursion in between, each with an error bound added toward the safe side; binomial mass outside
a window is bounded by the Chernoff bound ``exp(-n KL(a/n || p))`` and added in full; every
divergence is multiplied by ``1 +`` :data:`RELATIVE_SLACK` and increased by :data:`ABSOLUTE_SLACK`.

References
----------
.. [FMT21] V. Feldman, A. McMillan, K. Talwar, "Hiding among the clones: a simple and nearly
   optimal analysis of privacy amplification by shuffling", FOCS 2021, Theorems 3.1 and 3.2.
.. [BBGN19] B. Balle, J. Bell, A. Gascon, K. Nissim, "The privacy blanket of the shuffle model",
   CRYPTO 2019, Section 3 (Lemma 3.1: the blanket of k-RR).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping

import numpy as np

from ._amplification import MAX_N, PLAN_KINDS, SOURCE_TWO_LEVEL, TWO_LEVEL_KINDS, randomizer_of_plan, two_level_delta
from ._binomial import binom_pmf, chernoff_outside, positive_part_half, window

__all__ = ["check_shuffled_claim", "check_plan_shuffled", "upper_epsilon", "SOURCE_FMT_CLOSED",
           "SOURCE_FMT_NUMERICAL", "SOURCE_BLANKET", "SHUFFLED_FIELDS", "MAX_SHUFFLE_N"]

SOURCE_FMT_CLOSED = "Feldman, McMillan, Talwar, Hiding among the clones (FOCS 2021), Theorem 3.1"
SOURCE_FMT_NUMERICAL = "Feldman, McMillan, Talwar, Hiding among the clones (FOCS 2021), Theorem 3.2 / Sec. 4 (numerical)"
SOURCE_BLANKET = ("Balle et al., The privacy blanket (CRYPTO 2019), Sec. 3 blanket decomposition of k-RR, "
                  "optimal by Su, Cheng, Wang (arXiv 2504.07414); summed exactly over the blanket size")
#: the fields of ``guarantee.shuffled`` (exactly these)
SHUFFLED_FIELDS = ("n", "delta", "epsilon", "epsilon_lower", "source")
#: the largest shuffled batch the runtime confirms a claim for (its windows stay under ~2 million points)
MAX_SHUFFLE_N = 10**10
#: relative safety margin on every divergence computed here (the tails carry their own error bounds;
#: this covers the pmf weights, ~1e-15 each, and the sums over them)
RELATIVE_SLACK = 1e-9
#: absolute safety margin on every divergence computed here
ABSOLUTE_SLACK = 1e-15


def _safe(value: float) -> float:
    return float(value) * (1.0 + RELATIVE_SLACK) + ABSOLUTE_SLACK


def clone_delta(epsilon: float, epsilon0: float, n: int, randomizer: Mapping[str, Any] | None = None) -> float:
    """FMT21 Theorem 3.2: upper bound of the divergence of the two clone mixtures at ``epsilon``.

    Given ``C = c`` clones the first coordinate ``J ~ Bin(c + 1, 1/2)`` reweighted gives
    ``P - e^epsilon Q = Bin(j; c+1, 1/2) 2 / (c + 1) (a j - b)`` with ``a = (2p - 1)(1 + e^epsilon)``,
    ``b = (p e^epsilon - (1 - p))(c + 1)``, ``p = e^epsilon0 / (e^epsilon0 + 1)``, ``C ~ Bin(n - 1, e^-epsilon0)``
    (summed over a window of ``C``; the mass outside it counts in full).
    """
    if epsilon >= epsilon0:
        return 0.0
    p = math.exp(epsilon0) / (math.exp(epsilon0) + 1.0)
    e = math.exp(epsilon)
    slope = (2.0 * p - 1.0) * (1.0 + e)
    lo, hi = window(n - 1, math.exp(-epsilon0))
    c = np.arange(lo, hi + 1, dtype=float)
    weights = binom_pmf(c, n - 1, math.exp(-epsilon0))
    inner = 2.0 / (c + 1.0) * positive_part_half(c + 1.0, slope, (p * e - (1.0 - p)) * (c + 1.0))
    return _safe(float(np.dot(weights, np.minimum(inner, 1.0))) + chernoff_outside(n - 1, math.exp(-epsilon0), lo, hi))


def _blanket_given_m(epsilon: float, epsilon0: float, k: int, m: int) -> float:
    """Divergence of k-RR given ``m`` blanket reports besides the differing user's (BBGN19 Sec. 3).

    With ``s = m + 1`` and the counts ``(h_x, h_x')``: ``P - e^epsilon Q = Mult_s(h) gamma / s ((e^epsilon0 - 1)
    (h_x - e^epsilon h_x') - (e^epsilon - 1) s)``, summed over ``t = h_x + h_x' ~ Bin(s, 2/k)`` and
    ``h_x | t ~ Bin(t, 1/2)``; ``gamma = k / (e^epsilon0 + k - 1)``.
    """
    e, e0 = math.exp(epsilon), math.exp(epsilon0)
    gamma = k / (e0 + k - 1.0)
    s = m + 1
    slope = (e0 - 1.0) * (1.0 + e)
    if k == 2:
        return float(gamma / s * positive_part_half(float(s), slope, (e0 - 1.0) * e * s + (e - 1.0) * s)[0])
    lo, hi = window(s, 2.0 / k)
    t = np.arange(lo, hi + 1, dtype=float)
    inner = gamma / s * positive_part_half(t, slope, (e0 - 1.0) * e * t + (e - 1.0) * s)
    # the truncated t: their terms are at most their mass under P (the x/x' count is Bin(m, 2/k) plus at most one)
    return float(np.dot(binom_pmf(t, s, 2.0 / k), inner)) + chernoff_outside(m, 2.0 / k, lo, max(hi - 1, 0))


def blanket_delta(epsilon: float, epsilon0: float, n: int, randomizer: Mapping[str, Any]) -> float:
    """Balle et al.'s blanket of k-RR summed over the blanket size ``M ~ Bin(n - 1, gamma)`` (upper bound).

    ``delta_m`` is non-increasing in ``m`` (one more uniform report is post-processing); the
    blanket sizes are evaluated at the quantiles the planner uses (levels ``1e-18 .. 0.9``), each
    block ``[m_i, m_{i+1})`` bounded by ``delta_{m_i}`` and the mass below the first point by 1.
    """
    if epsilon >= epsilon0:
        return 0.0
    k = int(randomizer["domain_size"])
    gamma = k / (math.exp(epsilon0) + k - 1.0)
    lo, hi = window(n - 1, gamma)
    cdf = np.cumsum(binom_pmf(np.arange(lo, hi + 1), n - 1, gamma))
    left = chernoff_outside(n - 1, gamma, lo, n - 1)  # P(M < lo)
    levels = np.array([1e-18, 1e-12, 1e-8, 1e-5, 1e-3, 0.02, 0.1, 0.3, 0.5, 0.7, 0.9])
    points = np.unique(lo + np.minimum(np.searchsorted(cdf, levels - left), hi - lo))
    cdf_before = np.where(points > lo, cdf[np.maximum(points - lo - 1, 0)], 0.0)
    total = left + float(cdf_before[0])  # below the first point: bound 1
    mass = np.diff(np.append(cdf_before, 1.0))  # the last block takes the rest (its bound is the smallest)
    for m, w in zip(points.tolist(), mass.tolist()):
        if w > 0:
            total += w * min(1.0, _blanket_given_m(epsilon, epsilon0, k, int(m)))
    return _safe(total)


def fmt21_closed_form(epsilon0: float, n: int, delta: float) -> float:
    """FMT21 Theorem 3.1, rounded up by 1e-13 (relative); ``inf`` outside its range."""
    if n < 2 or epsilon0 > math.log(n / (16.0 * math.log(2.0 / delta))) * (1.0 - 1e-12):
        return math.inf
    e0 = math.exp(epsilon0)
    inner = (e0 - 1.0) / (e0 + 1.0) * (8.0 * math.sqrt(e0 * math.log(4.0 / delta)) / math.sqrt(n) + 8.0 * e0 / n)
    return math.log1p(inner) * (1.0 + 1e-13)


#: source -> (divergence upper bound at epsilon, randomizer kinds it applies to)
_CHECKS: dict[str, tuple[Callable[..., float], tuple[str, ...]]] = {
    SOURCE_FMT_NUMERICAL: (clone_delta, ("generic",) + TWO_LEVEL_KINDS),
    # k-RR's blanket: the same theorem summed by mechanisms/_amplification.py (finer blanket blocks, so never
    # above blanket_delta's value by more than its rounding margins; path recursions instead of a sum per t)
    SOURCE_BLANKET: (lambda epsilon, epsilon0, n, randomizer: (two_level_delta if n <= MAX_N else blanket_delta)(
        epsilon, epsilon0, n, randomizer), ("krr",)),
    # the randomizer's own blanket (mechanisms/_amplification.py): GLH, Hadamard response, unary encodings
    SOURCE_TWO_LEVEL: (two_level_delta, tuple(kind for kind in TWO_LEVEL_KINDS if kind != "krr")),
}


def check_shuffled_claim(shuffled: Any, epsilon0: float, randomizer: Mapping[str, Any] | None = None,
                         block: Mapping[str, Any] | None = None) -> str | None:
    """Confirm a ``guarantee.shuffled`` claim from the numbers; ``None`` when it holds, else one line.

    Parameters
    ----------
    shuffled : object
        The claim (a mapping with exactly :data:`SHUFFLED_FIELDS`).
    epsilon0 : float
        The plan's plain local epsilon of one report (natural log).
    randomizer : mapping, optional
        ``{"kind": "generic"}`` (any epsilon0-LDP randomizer; the default) or ``{"kind": "krr",
        "domain_size": k}`` (k-ary randomized response).
    block : mapping, optional
        The embedded spec's ``[shuffle]`` block (``n``, ``delta``): the claim must be for it.

    Returns
    -------
    str or None
        ``"guarantee.shuffled...: rule (value)"`` when refused.

    References
    ----------
    FMT21 Theorems 3.1 and 3.2; BBGN19 Sec. 3 (see the module docstring).
    """
    where = "guarantee.shuffled"
    if not isinstance(shuffled, Mapping):
        return f"{where}: must be an object with {', '.join(SHUFFLED_FIELDS)} (got {type(shuffled).__name__})"
    missing = [key for key in SHUFFLED_FIELDS if key not in shuffled]
    extra = sorted(str(key)[:40] for key in shuffled if key not in SHUFFLED_FIELDS)
    if missing or extra:
        return (f"{where}.{(missing or extra)[0]}: " + ("required field is missing" if missing else "unknown field")
                + f" (a central claim has exactly {', '.join(SHUFFLED_FIELDS)})")
    n, delta, epsilon, lower, source = (shuffled[key] for key in SHUFFLED_FIELDS)
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or not 2 <= n <= MAX_SHUFFLE_N:
        return f"{where}.n: must be an integer in 2..{MAX_SHUFFLE_N} (got {str(n)[:40]})"
    for key, value in (("delta", delta), ("epsilon", epsilon), ("epsilon_lower", lower)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) \
                or not math.isfinite(float(value)):
            return f"{where}.{key}: must be a finite number (got {value!r:.40})"
    n, delta, epsilon, lower = int(n), float(delta), float(epsilon), float(lower)
    if not 0.0 < delta < 1.0:
        return f"{where}.delta: must be in (0, 1) (got {delta!r})"
    if not 0.0 <= lower <= epsilon:
        return f"{where}.epsilon_lower: must be in [0, epsilon = {epsilon!r}] (got {lower!r})"
    if not isinstance(source, str):
        return f"{where}.source: must be a string (got {type(source).__name__})"
    if block is not None and (block.get("n") != n or block.get("delta") != delta):
        return (f"{where}: n/delta {n!r}/{delta!r} differ from the embedded spec's [shuffle] block "
                f"{block.get('n')!r}/{block.get('delta')!r}")
    return _confirm(epsilon, epsilon0, n, delta, source, dict(randomizer or {"kind": "generic"}))


def _confirm(epsilon: float, epsilon0: float, n: int, delta: float, source: str, randomizer: dict) -> str | None:
    """The bound ``source`` names, recomputed: ``None`` when it confirms ``epsilon``."""
    upper, _, rest = source.partition("; lower: ")
    if not rest or len(source) > 400:
        return f"guarantee.shuffled.source: must name the upper bound, then '; lower: ' and the lower bound (got {source[:80]!r})"
    kind = randomizer.get("kind", "generic")
    if upper == SOURCE_FMT_CLOSED:
        closed = fmt21_closed_form(epsilon0, n, delta)
        if not math.isfinite(closed):
            return (f"guarantee.shuffled.source: FMT21 Theorem 3.1 does not apply at epsilon0 = {epsilon0!r}, "
                    f"n = {n}, delta = {delta!r} (it needs epsilon0 <= log(n / (16 log(2 / delta))))")
        if epsilon >= min(closed, epsilon0):
            return None
        return (f"guarantee.shuffled.epsilon: {epsilon!r} is below FMT21 Theorem 3.1's closed form "
                f"{min(closed, epsilon0)!r} recomputed by the runtime")
    if upper not in _CHECKS or kind not in _CHECKS[upper][1]:
        return (f"guarantee.shuffled.source: the runtime cannot confirm a bound from {upper[:80]!r} for a "
                f"{kind!r} randomizer; it refuses a central claim it cannot check")
    if epsilon >= epsilon0:
        return None
    value = _CHECKS[upper][0](epsilon, epsilon0, n, {**randomizer, "delta": delta})
    if value <= delta:
        return None
    return (f"guarantee.shuffled.epsilon: at the claimed {epsilon!r} the runtime's bound ({upper[:60]}...) gives "
            f"delta {value:.6g} > {delta!r}")


def upper_epsilon(epsilon0: float, n: int, delta: float, randomizer: Mapping[str, Any] | None = None,
                  tolerance: float = 1e-3) -> tuple[float, str]:
    """The smallest central ``epsilon`` (to ``tolerance``, relative) this module confirms, and its source.

    The planner falls back to it when its own bound is one the runtime cannot confirm. Bisection
    on each divergence of :data:`_CHECKS` that applies (non-increasing in ``epsilon``); the upper
    end of the bracket is returned, so ``check_shuffled_claim`` accepts it.
    """
    randomizer = {**dict(randomizer or {"kind": "generic"}), "delta": delta}
    kind = randomizer.get("kind", "generic")
    best = (float(epsilon0), SOURCE_FMT_NUMERICAL)  # epsilon0 itself: every divergence check accepts it
    closed = fmt21_closed_form(epsilon0, n, delta)
    if closed < best[0]:
        best = (closed, SOURCE_FMT_CLOSED)
    for source, (delta_of, kinds) in _CHECKS.items():
        if kind not in kinds or delta_of(best[0], epsilon0, n, randomizer) > delta:
            continue  # cannot beat the best so far
        lo, hi = 0.0, best[0]
        if delta_of(0.0, epsilon0, n, randomizer) <= delta:
            hi = 0.0
        while hi - lo > tolerance * hi:
            mid = 0.5 * (lo + hi)
            if delta_of(mid, epsilon0, n, randomizer) <= delta:
                hi = mid
            else:
                lo = mid
        best = (hi, source)
    return best


def _check_lifetime(guarantee: Mapping[str, Any], block: Mapping[str, Any]) -> str | None:
    """``guarantee.shuffled_lifetime``: required iff the plan claims ``epsilon_lifetime`` (several rounds).

    Over all rounds, the per-round shuffled batches are a post-processing of the shuffled multiset
    of the users' whole-history reports (a fresh uniform permutation per round), and one user's
    whole history is ``epsilon_lifetime``-LDP: the generic bounds apply with ``epsilon0 =
    epsilon_lifetime`` (``guarantee.shuffled`` then covers one round, ``epsilon0 = epsilon``).
    """
    lifetime = guarantee.get("epsilon_lifetime")
    if lifetime is None:
        if "shuffled_lifetime" in guarantee:
            return "guarantee.shuffled_lifetime: present but the plan claims no epsilon_lifetime (one report per user)"
        return None
    if "shuffled_lifetime" not in guarantee:
        return "guarantee.shuffled_lifetime: required (the plan has several rounds and a [shuffle] block)"
    if isinstance(lifetime, bool) or not isinstance(lifetime, (int, float)) or not 0 < lifetime < math.inf:
        return f"guarantee.epsilon_lifetime: must be a positive number (got {lifetime!r:.40})"
    failure = check_shuffled_claim(guarantee["shuffled_lifetime"], float(lifetime), {"kind": "generic"}, block)
    return None if failure is None else failure.replace("guarantee.shuffled", "guarantee.shuffled_lifetime", 1)


def check_plan_shuffled(plan: Mapping[str, Any], kind: str = "generic") -> str | None:
    """``load()``'s check of a plan's ``guarantee.shuffled`` against its spec and numbers (``None``: holds).

    ``kind``: the runtime class's randomizer (``PlanFields.shuffle``); ``"krr"`` takes ``k`` from
    ``domain.size``. A claim without a ``[shuffle]`` block, a block without a claim, a ULDP plan
    with a claim, or a claim above ``target.central_epsilon`` is refused.
    """
    guarantee = plan.get("guarantee") or {}
    embedded = plan.get("spec")
    spec: Mapping[str, Any] = embedded if isinstance(embedded, Mapping) else {}
    block = spec.get("shuffle")
    if "shuffled" not in guarantee and "shuffled_lifetime" not in guarantee and block is None:
        return None
    if block is None:
        which = "shuffled" if "shuffled" in guarantee else "shuffled_lifetime"
        return f"guarantee.{which}: present but the embedded spec has no [shuffle] block"
    if not isinstance(block, Mapping):
        return f"spec.shuffle: must be an object with n and delta (got {type(block).__name__})"
    if "shuffled" not in guarantee:
        return "guarantee.shuffled: required by the embedded spec's [shuffle] block"
    notion = guarantee.get("notion")
    if notion == "ULDP":
        return "guarantee.shuffled: ULDP plans release non-sensitive outputs as they are (no central claim)"
    epsilon0 = guarantee.get("ldp_epsilon") if notion == "MinID-LDP" else guarantee.get("epsilon")
    if isinstance(epsilon0, bool) or not isinstance(epsilon0, (int, float)) or not 0 < epsilon0 < math.inf:
        return f"guarantee.shuffled: no plain local epsilon in a {notion!r:.40} plan"
    randomizer: dict[str, Any] = {"kind": kind}
    if kind == "krr":
        size = (plan.get("domain") or {}).get("size")
        if isinstance(size, (bool, np.bool_)) or not isinstance(size, (int, np.integer)):
            return f"domain.size: must be an integer (got {size!r:.40})"
        randomizer["domain_size"] = int(size)
    elif kind in PLAN_KINDS:  # the numbers of the runtime's channel, read from the plan
        try:
            randomizer = randomizer_of_plan(plan, kind)
        except ValueError as exc:
            return f"guarantee.shuffled: the runtime cannot describe its randomizer: {exc}"
    failure = check_shuffled_claim(guarantee["shuffled"], float(epsilon0), randomizer, block)
    if failure is not None:
        return failure
    failure = _check_lifetime(guarantee, block)
    if failure is not None:
        return failure
    target = spec.get("target")
    central = target.get("central_epsilon") if isinstance(target, Mapping) else None
    if isinstance(central, (int, float)) and not isinstance(central, bool) \
            and not guarantee["shuffled"]["epsilon"] <= central:
        return (f"guarantee.shuffled.epsilon: {guarantee['shuffled']['epsilon']!r} exceeds the spec's "
                f"target.central_epsilon = {central!r}")
    return None

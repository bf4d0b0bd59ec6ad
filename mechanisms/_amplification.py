"""Amplification by shuffling for two-level randomizers: a conservative central bound (numpy only).

The computation lives here, in the numpy-only runtime, and nowhere else: the planner
(:func:`ldpplan.planner.shuffle.confirmable_guarantee`) searches ``epsilon`` with
:func:`blanket_epsilon_upper`, ``verify`` and the runtime gate ``load()``
(:mod:`ldpplan.mechanisms._shuffle_gate`) evaluate :func:`blanket_delta_upper` at the claimed
``epsilon``, so a plan's ``guarantee.shuffled`` and its rechecks come from the same arithmetic, rounded
toward the safe side at every step (the soundness tests compare it with exact enumerations and
scipy's independent pmfs, ``tests/test_amplification.py``).

The bound (the privacy blanket, [BBGN19] Sec. 3)
------------------------------------------------
A local randomizer ``R`` has a *blanket* ``(gamma, omega)`` when ``R(x) >= gamma omega`` pointwise for
every input ``x``: each user's report is then a sample of ``omega`` with probability ``gamma`` and of
``LO(x) = (R(x) - gamma omega) / (1 - gamma)`` otherwise. For neighbouring datasets that differ in user 1
(``x`` vs ``x'``), reveal which of the other ``n - 1`` users drew from the blanket (``M ~ Bin(n - 1,
gamma)`` of them) and their ``LO`` samples: the shuffled view is a post-processing of the multiset of
the ``s = M + 1`` reports of user 1 and the blanket users, whose law is (exchangeability)

    ``P_s(z) = omega^s(z) * (1/s) sum_i l(z_i)``,  ``l = R(x) / omega`` (``l' = R(x') / omega`` for ``Q_s``).

So ``delta(epsilon) <= E_M delta_M(epsilon)`` with ``delta_M = E_{omega^s}[((1/s) sum_i l(z_i) - e^epsilon
(1/s) sum_i l'(z_i))_+]``, and ``delta_m`` is non-increasing in ``m`` (one more blanket report is a
post-processing), so each block ``[m_i, m_{i+1})`` of ``M``'s range is bounded by ``delta_{m_i}``.

*Two-level randomizers*: ``l`` takes two values, ``low`` off and ``high`` on the set ``S_x`` of outputs
"supporting" ``x``. Then ``sum_i l(z_i) = s low + (high - low) T`` with ``T`` the number of the ``s``
samples in ``S_x``, and ``delta_m`` is a sum over the joint law of ``(T, T')`` under ``omega^s``:

* ``"independent"``: ``T ~ Bin(s, rho)`` and ``T' ~ Bin(s, rho')`` independent (unary encodings, whose
  blanket is the product of the bits' "other" Bernoullis; Hadamard response with one block);
* ``"exclusive"`` (``low, high`` the same for ``x`` and ``x'``): each sample supports only ``x`` or only
  ``x'`` with probability ``pi`` each; samples supporting both are counted as supporting neither,
  which only drops ``(high - low)(1 - e^epsilon) B <= 0`` from the positive part (an upper bound).
  Here ``t = T + T' ~ Bin(s, 2 pi)`` and ``T | t ~ Bin(t, 1/2)``. k-RR, GLH and Hadamard response
  with ``B`` blocks are of this kind; so is the clone pair of [FMT21] Theorem 3.2 (``gamma =
  e^-epsilon0``, ``pi = 1/2``, ``low, high = 2/(e^epsilon0 + 1), 2 e^epsilon0/(e^epsilon0 + 1)``).

Rounding
--------
Binomial pmfs in log space from ``math.lgamma`` (error assumed at most :data:`LGAMMA_ULPS` ulp, far
above glibc's few ulp) with an absolute log margin ``64 u (2 lgamma(N + 1) + N (1 + |log p| + |log(1 - p)|))``
added; every positive-part term rounded up by ``32 u`` times the size of what it is a difference of;
sums of non-negative terms multiplied by ``1 + (terms + 16) u``; the mass outside every window
bounded by the Chernoff bound ``exp(-N KL(k/N || p))`` (its exponent shrunk by one part in 10^9) and
added in full, times the largest value a term can take there. The search returns the upper end of
a bracket at which the computed bound is at most ``delta``.

References
----------
.. [BBGN19] B. Balle, J. Bell, A. Gascon, K. Nissim, "The privacy blanket of the shuffle model",
   CRYPTO 2019, Section 3 (the blanket decomposition of a local randomizer; Lemma 3.1 for k-RR).
.. [FMT21] V. Feldman, A. McMillan, K. Talwar, "Hiding among the clones", FOCS 2021, Theorem 3.2.
.. [FMT23] V. Feldman, A. McMillan, K. Talwar, "Stronger privacy amplification by shuffling for
   Renyi and approximate differential privacy", SODA 2023 (with its erratum: the stronger reduction
   holds for randomizers with an explicit decomposition of this kind, as used here).
.. [SCW25] P. Su, H. Cheng, P. Wang, "Decomposition-based optimal bounds for privacy amplification
   via shuffling", arXiv 2504.07414 (the blanket decomposition is optimal among such decompositions).
"""
from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from ._amplification_sums import LGAMMA_ULPS, chernoff, delta_given_m, log_margin, log_pmf, window
from ._hashing import collision_probability, hash_prime

__all__ = ["BlanketPair", "blanket_delta_upper", "blanket_epsilon_upper", "clone_pairs", "krr_pairs",
           "glh_pairs", "hadamard_pairs", "unary_pairs", "LGAMMA_ULPS"]

_U = 2.0 ** -53
#: quantile levels of the blanket size ``M`` at which ``delta_m`` is evaluated (the first is scaled by delta)
_LEVELS = (1e-12, 1e-9, 1e-7, 1e-5, 1e-4, 1e-3, 0.005, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8,
           0.9, 0.95)
#: a blanket-size window of at most this many values: every ``m`` is a block of its own
_EVERY_M = 64
#: mass each truncated window may drop, relative to the target delta
_TAIL = 1e-6


@dataclasses.dataclass(frozen=True)
class BlanketPair:
    """One ordered neighbouring pair ``(x, x')`` of a two-level randomizer seen against its blanket.

    Attributes
    ----------
    kind : {"independent", "exclusive"}
        Joint law of the support counts ``(T, T')`` under the blanket (module docstring).
    gamma : float
        Blanket mass in (0, 1]: each other user's report is a blanket sample with this probability.
    low, high : float
        ``R(x)/omega`` off and on the outputs supporting ``x`` (``low <= high``).
    support : float
        ``"independent"``: ``Pr_omega[z supports x]``; ``"exclusive"``: ``Pr_omega[z supports x only]``.
    low_other, high_other, support_other : float
        The same for ``x'`` (equal to the above for ``"exclusive"``).
    """

    kind: str
    gamma: float
    low: float
    high: float
    support: float
    low_other: float
    high_other: float
    support_other: float

    def __post_init__(self) -> None:
        if self.kind not in ("independent", "exclusive"):
            raise ValueError(f"kind: must be 'independent' or 'exclusive', got {self.kind!r}")
        if not 0.0 < self.gamma <= 1.0:
            raise ValueError(f"gamma: must be in (0, 1], got {self.gamma!r}")
        for name in ("low", "high", "low_other", "high_other"):
            if not (math.isfinite(getattr(self, name)) and getattr(self, name) >= 0.0):
                raise ValueError(f"{name}: must be finite and >= 0, got {getattr(self, name)!r}")
        if self.kind == "exclusive" and (self.low, self.high, self.support) != (
                self.low_other, self.high_other, self.support_other):
            raise ValueError("exclusive pairs are symmetric: low/high/support must equal the other's")
        limit = 0.5 if self.kind == "exclusive" else 1.0
        for name in ("support", "support_other"):
            if not 0.0 < getattr(self, name) <= limit:
                raise ValueError(f"{name}: must be in (0, {limit}], got {getattr(self, name)!r}")


def _exclusive(gamma: float, low: float, high: float, support: float) -> BlanketPair:
    return BlanketPair("exclusive", gamma, low, high, support, low, high, support)


def clone_pairs(epsilon0: float) -> tuple[BlanketPair, ...]:
    """The clone pair of [FMT21] Theorem 3.2 for any epsilon0-LDP randomizer (a cross-check, and FMT21's bound).

    References
    ----------
    Feldman, McMillan, Talwar, FOCS 2021, Theorem 3.2.
    """
    e0 = math.exp(epsilon0)
    return (_exclusive(math.exp(-epsilon0), 2.0 / (e0 + 1.0), 2.0 * e0 / (e0 + 1.0), 0.5),)


def krr_pairs(epsilon0: float, k: int) -> tuple[BlanketPair, ...]:
    """k-ary randomized response: blanket uniform on ``k`` values, ``gamma = k/(e^epsilon0 + k - 1)``, ``pi = 1/k``.

    References
    ----------
    Balle et al., CRYPTO 2019, Lemma 3.1.
    """
    e0 = math.exp(epsilon0)
    gamma = k / (e0 + k - 1.0)
    return (_exclusive(gamma, gamma, gamma * e0, 1.0 / k),)


def glh_pairs(epsilon0: float, g: int, collision: float) -> tuple[BlanketPair, ...]:
    """GLH with hash range ``g``: blanket uniform on (hash, bucket), ``gamma = g/(e^epsilon0 + g - 1)``.

    A blanket sample ``(h, y)`` supports ``x`` when ``y = h(x)``; it supports ``x`` only with probability
    ``pi = (1 - kappa)/g`` (``kappa = Pr[h(x) = h(x')]``, the hash family's collision probability).
    A runtime whose keep probability is rounded down is a per-report post-processing of this one.

    References
    ----------
    Balle et al., CRYPTO 2019, Sec. 3 (blanket decomposition); Wang et al., USENIX Security 2017 (GLH).
    """
    e0 = math.exp(epsilon0)
    gamma = g / (e0 + g - 1.0)
    return (_exclusive(gamma, gamma, gamma * e0, (1.0 - collision) / g),)


def hadamard_pairs(epsilon0: float, k: int, blocks: int) -> tuple[BlanketPair, ...]:
    """Hadamard response with ``B`` blocks of size ``b`` (``K = B b`` outputs, ``|C_x| = b/2``).

    Blanket uniform on ``[0, K)``, ``gamma = 2B/(e^epsilon0 + 2B - 1)``. Two items of one block share
    ``b/4`` of their ``b/2`` outputs (rows of a Sylvester matrix): for ``B = 1`` the two support
    indicators of a uniform output are independent fair coins (``"independent"``, exact); for
    ``B > 1`` each item of the pair is supported alone with probability ``1/(4B)`` (same block) or
    ``1/(2B)`` (different blocks), ``"exclusive"``.

    References
    ----------
    Acharya, Sun, Zhang, AISTATS 2019 (Hadamard response); Balle et al., CRYPTO 2019, Sec. 3.
    """
    e0 = math.exp(epsilon0)
    size = 2
    while blocks * (size - 1) < k:
        size *= 2
    gamma = 2.0 * blocks / (e0 + 2.0 * blocks - 1.0)
    if blocks == 1:
        return (BlanketPair("independent", gamma, gamma, gamma * e0, 0.5, gamma, gamma * e0, 0.5),)
    pairs = []
    if min(k, size - 1) >= 2:
        pairs.append(_exclusive(gamma, gamma, gamma * e0, 1.0 / (4.0 * blocks)))
    if k > size - 1:
        pairs.append(_exclusive(gamma, gamma, gamma * e0, 1.0 / (2.0 * blocks)))
    return tuple(pairs)


def unary_pairs(keep: npt.ArrayLike, flip: npt.ArrayLike) -> tuple[BlanketPair, ...]:
    """Unary encodings: bit ``j`` is 1 with probability ``keep_j`` when ``j = x``, ``flip_j`` otherwise.

    ``keep``, ``flip``: one value per level (items of a level share them; SUE/OUE/IDUE and the rounds
    of the longitudinal unary protocols). Blanket: the product of ``Bernoulli(flip_j)``, ``gamma =
    min_j (1 - keep_j)/(1 - flip_j)``; ``R(x)/omega`` is ``(1 - keep_x)/(1 - flip_x)`` or ``keep_x/flip_x``
    by bit ``x`` alone, and bits ``x != x'`` are independent. Every ordered pair of levels (a level
    with itself included) is returned. Item sets (padding and sampling, IDUE-PS) report a mixture of
    these encodings; by joint convexity of the hockey-stick divergence (couple the two users' atom
    choices) the largest pair of atoms bounds every pair of sets, and other users' mixtures keep
    the same blanket.

    References
    ----------
    Balle et al., CRYPTO 2019, Sec. 3; Wang et al., USENIX Security 2017 (unary encoding).
    """
    keep, flip = [float(v) for v in np.ravel(keep)], [float(v) for v in np.ravel(flip)]
    if len(keep) != len(flip) or not keep or any(not 0.0 < f < p < 1.0 for p, f in zip(keep, flip)):
        raise ValueError("keep/flip: one pair per level with 0 < flip < keep < 1")
    gamma = min((1.0 - p) / (1.0 - f) for p, f in zip(keep, flip))
    levels = [((1.0 - p) / (1.0 - f), p / f, f) for p, f in zip(keep, flip)]
    return tuple(BlanketPair("independent", gamma, *first, *second) for first in levels for second in levels)


@functools.lru_cache(maxsize=64)
def _blanket_blocks(n: int, gamma: float, delta: float) -> tuple[tuple[int, ...], tuple[float, ...], float]:
    """``(m_i, mass_i, below)``: block starts of ``M ~ Bin(n - 1, gamma)`` at the quantile levels,
    upper bounds of each block's mass (the last block runs to ``n - 1``) and of ``P(M < m_0)``."""
    size = n - 1
    if size == 0:
        return (0,), (1.0,), 0.0
    lo, hi, _ = window(size, gamma, delta * _TAIL)
    points = np.arange(lo, hi + 1, dtype=np.int64)
    log_pmf_m = log_pmf(points, size, gamma)
    pmf_up = np.exp(log_pmf_m + log_margin(size, gamma)) * (1.0 + 8 * _U)
    cdf = np.cumsum(np.exp(log_pmf_m))
    levels = (min(_LEVELS[0], delta * 1e-5),) + _LEVELS[1:]
    if points.size <= _EVERY_M:
        starts = [int(point) for point in points]
    else:
        starts = sorted({int(points[min(int(np.searchsorted(cdf, level)), points.size - 1)]) for level in levels})
    below = float(chernoff(size, gamma, lo - 1, False)) + float(pmf_up[:starts[0] - lo].sum()) * (1.0 + points.size * _U)
    masses = []
    for first, last in zip(starts, starts[1:] + [hi + 1]):
        masses.append(float(pmf_up[first - lo:last - lo].sum()) * (1.0 + points.size * _U))
    masses[-1] += float(chernoff(size, gamma, hi + 1, True))
    return tuple(starts), tuple(masses), below


def blanket_delta_upper(epsilon: float, n: int, pairs: Sequence[BlanketPair], delta: float) -> float:
    """Sound upper bound of the central ``delta(epsilon)`` of ``n`` shuffled reports (largest over ``pairs``).

    Parameters
    ----------
    epsilon : float
        Central epsilon (nats, >= 0).
    n : int
        Users, one report each (>= 1).
    pairs : sequence of BlanketPair
        Every ordered neighbouring pair the randomizer can produce (from ``*_pairs``).
    delta : float
        The target delta: windows drop at most ``1e-6 delta`` of mass, the lowest blanket block
        ``1e-5 delta`` (both added in full).

    Returns
    -------
    float
        ``delta(epsilon)`` rounded up.

    References
    ----------
    Balle et al., CRYPTO 2019, Sec. 3 (the blanket decomposition); Feldman, McMillan, Talwar, FOCS 2021,
    Theorem 3.2 (the clone pair); module docstring for the rounding.
    """
    worst = 0.0
    for pair in pairs:
        if pair.low_other > 0 and math.exp(epsilon) >= pair.high / pair.low_other:
            continue  # (1/s) sum l <= high <= e^epsilon low' <= e^epsilon (1/s) sum l': delta = 0
        starts, masses, below = _blanket_blocks(int(n), pair.gamma, float(delta))
        tail = float(delta) * _TAIL / max(1.0, pair.high)
        total = below
        for m, mass in zip(starts, masses):
            if mass > 0.0:
                total += mass * min(1.0, delta_given_m(float(epsilon), pair, m, tail))
        worst = max(worst, total * (1.0 + 64 * _U))
    return worst


def blanket_epsilon_upper(n: int, delta: float, pairs: Sequence[BlanketPair], epsilon_max: float, *,
                          tolerance: float = 1e-3, guess: float | None = None) -> float:
    """Smallest ``epsilon`` (to ``tolerance``, relative) at which :func:`blanket_delta_upper` is at most ``delta``.

    Returns the upper end of the final bracket, at which the bound was computed to hold, or
    ``epsilon_max`` when no smaller ``epsilon`` was certified. ``guess``: a starting point (e.g.
    a lower bound of the answer or another bound's value).

    References
    ----------
    As :func:`blanket_delta_upper`.
    """
    def holds(epsilon: float) -> bool:
        return blanket_delta_upper(epsilon, n, pairs, delta) <= delta

    if holds(0.0):
        return 0.0
    lo, hi = 0.0, float(epsilon_max)
    if guess is not None and 0.0 < guess < epsilon_max:
        probe = guess
        for factor in (1.0, 1.01, 1.05, 1.2, 1.6, 2.5):
            probe = min(epsilon_max, guess * factor)
            if holds(probe):
                hi = probe
                break
            lo = probe
        if guess > 0 and lo == 0.0:
            lo = 0.0
    while hi - lo > tolerance * hi:
        mid = 0.5 * (lo + hi) if lo > 0 else (hi / 4.0 if hi > 4 * tolerance else 0.5 * hi)
        if holds(mid):
            hi = mid
        else:
            lo = mid
    return hi


#: ``guarantee.shuffled.source`` of this bound (the upper bound's part; the lower bound's follows ``"; lower: "``)
SOURCE_TWO_LEVEL = ("Balle, Bell, Gascon, Nissim, The privacy blanket of the shuffle model (CRYPTO 2019), Sec. 3 "
                    "(blanket decomposition, Lemma 3.1), optimal by Su, Cheng, Wang (arXiv 2504.07414): the "
                    "randomizer's own blanket, two-level likelihood ratio, summed over the blanket size")
#: largest batch the bound is computed for (its work grows as sqrt(n): about 10 s at 10^8 on one core)
MAX_N = 10**9
#: randomizer kinds with a two-level description (``PlanFields.shuffle`` of their runtime classes)
TWO_LEVEL_KINDS = ("krr", "hash", "sylvester", "unary")
#: the kinds ``randomizer_of_plan`` reads: ``"unary-rounds"`` is one round of a memoized unary encoding
PLAN_KINDS = TWO_LEVEL_KINDS + ("unary-rounds",)


def pairs_of(randomizer: Mapping[str, Any], epsilon0: float) -> tuple[BlanketPair, ...]:
    """The ordered neighbouring pairs of a randomizer description (``{"kind": ..., numbers}``).

    ``"krr"``: ``domain_size``; ``"hash"`` (GLH): ``hash_range``, ``collision``; ``"sylvester"``:
    ``domain_size``, ``blocks``; ``"unary"``: ``keep``, ``flip`` (one value per level).
    ``epsilon0`` is the plan's local epsilon (the channel's ratio; a runtime rounding its keep
    probability down is a per-report post-processing of the channel at ``epsilon0``).

    Raises
    ------
    ValueError
        An unknown kind or a missing / out-of-range number (the message names it).
    """
    kind = randomizer.get("kind")
    if kind == "krr":
        return krr_pairs(epsilon0, _count(randomizer, "domain_size", 2))
    if kind == "hash":
        g = _count(randomizer, "hash_range", 2)
        collision = randomizer.get("collision")
        if isinstance(collision, bool) or not isinstance(collision, (int, float)) or not 0 <= collision <= 1.0 / g:
            raise ValueError(f"collision: must be the hash family's Pr[h(x) = h(x')] in [0, 1/g], got {collision!r}")
        return glh_pairs(epsilon0, g, float(collision))
    if kind == "sylvester":
        blocks = _count(randomizer, "blocks", 1)
        if blocks & (blocks - 1):
            raise ValueError(f"blocks: must be a power of two, got {blocks!r}")
        return hadamard_pairs(epsilon0, _count(randomizer, "domain_size", 2), blocks)
    if kind == "unary":
        keep, flip = randomizer.get("keep"), randomizer.get("flip")
        if keep is None or flip is None:
            raise ValueError("keep/flip: one pair per level with 0 < flip < keep < 1")
        return unary_pairs(keep, flip)
    raise ValueError(f"kind: must be one of {list(TWO_LEVEL_KINDS)}, got {kind!r}")


def _count(randomizer, key: str, low: int) -> int:
    value = randomizer.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{key}: must be an integer >= {low}, got {value!r}")
    return int(value)


def randomizer_of_plan(plan: Mapping[str, Any], kind: str) -> dict[str, Any]:
    """The randomizer description ``load()`` reads from a plan for its runtime's kind.

    ``"krr"``: ``domain.size``; ``"hash"``: ``params.g`` and the runtime hash family's collision
    probability (over the prime the runtime hashes with for ``domain.size`` and ``g``); ``"sylvester"``: ``domain.size`` and ``params.blocks``; ``"unary"``: every level's
    ``params.levels[i].a`` / ``.b`` plus ``params.dummy`` (IDUE-PS's padding items) when present;
    ``"unary-rounds"``: one round of a memoized unary encoding, bit by bit ``keep = p1 p2 + (1 - p1) q2``
    and ``flip = q1 p2 + (1 - q1) q2`` (the permanent response is drawn once per user and value, so one
    round's report of each user is this channel, independently across users).

    Raises
    ------
    ValueError
        A number missing or of the wrong type (the message names the field).
    """
    given = plan.get("params")
    params: Mapping[str, Any] = given if isinstance(given, dict) else {}
    size = (plan.get("domain") or {}).get("size") if isinstance(plan.get("domain"), dict) else None
    if kind in ("krr", "sylvester"):
        out = {"kind": kind, "domain_size": size}
        if kind == "sylvester":
            out["blocks"] = params.get("blocks")
        return out
    if kind == "hash":
        g = params.get("g")
        if isinstance(g, bool) or not isinstance(g, int) or g < 2:
            raise ValueError(f"params.g: must be an integer >= 2, got {g!r:.40}")
        if isinstance(size, bool) or not isinstance(size, int) or size < 2:
            raise ValueError(f"domain.size: must be an integer >= 2, got {size!r:.40}")
        return {"kind": kind, "hash_range": g, "collision": collision_probability(g, hash_prime(size, g))}
    if kind == "unary-rounds":  # permanent (p1, q1) then instantaneous (p2, q2) per bit: one round's channel
        numbers: list[Any] = [params.get(key) for key in ("p1", "q1", "p2", "q2")]
        if any(isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < 1 for v in numbers):
            raise ValueError("params.p1/q1/p2/q2: must be numbers in (0, 1)")
        p1, q1, p2, q2 = (float(v) for v in numbers)
        return {"kind": "unary", "keep": [p1 * p2 + (1.0 - p1) * q2], "flip": [q1 * p2 + (1.0 - q1) * q2]}
    if kind == "unary":
        levels = params.get("levels")
        if not isinstance(levels, list) or not levels or not all(isinstance(level, dict) for level in levels):
            raise ValueError("params.levels: must be a non-empty list of levels with a and b")
        keep, flip = [level.get("a") for level in levels], [level.get("b") for level in levels]
        dummy = params.get("dummy")
        if dummy is not None:
            if not isinstance(dummy, dict):
                raise ValueError("params.dummy: must be an object with a and b")
            keep.append(dummy.get("a"))
            flip.append(dummy.get("b"))
        for name, values in (("a", keep), ("b", flip)):
            if any(isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < 1 for v in values):
                raise ValueError(f"params.levels[].{name}: must be numbers in (0, 1)")
        return {"kind": kind, "keep": keep, "flip": flip}
    raise ValueError(f"kind: no two-level description for {kind!r}")


def two_level_delta(epsilon: float, epsilon0: float, n: int, randomizer: Mapping[str, Any]) -> float:
    """:func:`blanket_delta_upper` for a randomizer description (with its ``"delta"``): the gate's check.

    ``inf`` (nothing confirmed) above :data:`MAX_N` users.
    """
    if n > MAX_N:
        return math.inf
    return blanket_delta_upper(epsilon, n, pairs_of(randomizer, epsilon0), float(randomizer["delta"]))

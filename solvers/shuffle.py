"""Privacy amplification by shuffling: the central ``(epsilon, delta)`` of ``n`` shuffled epsilon0-LDP reports.

``shuffle_bound`` returns a sound upper bound ``epsilon`` (the smallest of the applicable bounds
below, each a theorem for the randomizer at hand) and a lower bound ``epsilon_lower`` (the
``epsilon`` that one concrete neighbouring pair of datasets provably needs), with the source of each.
``local_epsilon_for`` inverts it: the largest ``epsilon0`` (on a 0.001 grid) whose bound meets a
central target.

Bounds, tightest sound one chosen per randomizer:

* any epsilon0-LDP randomizer: FMT21 Theorem 3.1 (closed form) and FMT21 Theorem 3.2 (the
  divergence of the two binomial "clone" mixtures, evaluated numerically as in its Section 4);
* k-RR with ``k >= 3`` (``mechanism="krr"``): the privacy-blanket decomposition of
  Balle et al. (CRYPTO 2019) summed exactly over the blanket size; Su, Cheng and Wang (arXiv
  2504.07414) show it is the optimal decomposition. Lower bound: the exact divergence of the two
  counts of the differing values for the datasets ``(x, z, .., z)`` / ``(x', z, .., z)``.
* binary RR (``mechanism="rr"``, or ``"krr"`` with ``k = 2``): the exact privacy curve of the
  shuffled count, i.e. the maximum over every dataset and both directions, at any ``n``
  (:mod:`solvers._shuffle_binary`: a cover of all datasets by blocks whose bounds follow from
  data processing and a partial blanket, refined by branch and bound). ``epsilon`` and
  ``epsilon_lower`` bracket it: ``epsilon_lower`` is attained by the concrete pair named in the
  source, and ``tolerance = (epsilon - epsilon_lower) / epsilon`` (at most ``RELATIVE_TOLERANCE``
  in the done-when table). The worst dataset is not always an extreme one: a few others holding
  the other value can add about 1 % to ``delta`` (the source names the pair found).
* GLH (``mechanism="glh"``, with the hash range ``g`` and the hash family's collision
  probability): FMT21's upper bounds; lower bound the exact divergence of the number of reports
  ``(h, y)`` with ``h(x) = y != h(x')`` for the datasets ``(x, x', .., x')`` / ``(x', x', .., x')``
  (a post-processing of the shuffled view; our own attack, using only pairwise independence of
  the hash family: :func:`solvers._shuffle_binary.support_count_pair`).

Every ``epsilon`` comes from a bisection on a divergence that is non-increasing in ``epsilon`` and
evaluated conservatively (:mod:`solvers._shuffle_curves`); the returned upper end of the bracket
satisfies ``delta(epsilon) <= delta`` as computed, and the bracket is narrower than
:data:`RELATIVE_TOLERANCE` times its upper end. Lower bounds return the lower end of their bracket.

References
----------
.. [FMT21] V. Feldman, A. McMillan, K. Talwar, "Hiding among the clones", FOCS 2021
   (arXiv 2012.12803), Theorems 3.1 and 3.2, Section 4.
.. [EFMRTT19] U. Erlingsson et al., "Amplification by shuffling", SODA 2019 (the shuffle model
   and its first amplification theorem; superseded numerically by [FMT21]).
.. [BBGN19] B. Balle, J. Bell, A. Gascon, K. Nissim, "The privacy blanket of the shuffle
   model", CRYPTO 2019, Section 3.
.. [WANG24] S. Wang et al., "Unified, tight and fast privacy amplification in the shuffle model
   of differential privacy" (k-RR characterised by its variation-ratio parameters; the same
   dominating-pair structure as the blanket bound used here).
.. [SCW25] P. Su, H. Cheng, P. Wang, "Decomposition-based optimal bounds for privacy
   amplification via shuffling", arXiv 2504.07414.
"""
from __future__ import annotations

import dataclasses
import functools
import math
from typing import Callable

from . import _shuffle_binary as binary
from . import _shuffle_curves as curves

__all__ = ["ShuffleBound", "shuffle_bound", "local_epsilon_for", "fmt21_closed_form", "fmt21_numerical",
           "RELATIVE_TOLERANCE", "EXHAUSTIVE_N", "TARGET_STEP",
           "binary_rr_curve", "binary_rr_independent_delta"]

#: width of the final bisection bracket, relative to its upper end
RELATIVE_TOLERANCE = 1e-3
#: k = 2 and n up to this: verify recomputes the exact curve by brute force over every dataset
EXHAUSTIVE_N = 1000
#: k = 2: each binomial window drops at most delta * TRUNCATION per tail (added to upper bounds)
TRUNCATION = 1e-5
#: k = 2 and n up to this: the block cover is refined until no block exceeds the best pair
SMALL_N = 2000
#: grid of epsilon0 on which local_epsilon_for searches
TARGET_STEP = 1e-3

SOURCE_FMT_CLOSED = "Feldman, McMillan, Talwar, Hiding among the clones (FOCS 2021), Theorem 3.1"
SOURCE_FMT_NUMERICAL = "Feldman, McMillan, Talwar, Hiding among the clones (FOCS 2021), Theorem 3.2 / Sec. 4 (numerical)"
SOURCE_BLANKET = ("Balle et al., The privacy blanket (CRYPTO 2019), Sec. 3 blanket decomposition of k-RR, "
                  "optimal by Su, Cheng, Wang (arXiv 2504.07414); summed exactly over the blanket size")
SOURCE_EXACT_RR = ("exact privacy curve of shuffled binary RR (maximum over every dataset and both directions; "
                   "block cover by data processing)")
SOURCE_LOWER_KRR = "exact divergence of the differing values' counts, datasets (x, z..z) / (x', z..z)"
SOURCE_LOWER_RR = "exact divergence of the shuffled count, datasets (1, others) / (0, others)"
SOURCE_LOWER_GLH = ("exact divergence of the number of reports supporting x but not x' (h(x) = y != h(x')), "
                    "datasets (x, x'..x') / (x', x'..x')")
SOURCE_LOWER_NONE = "no mechanism-specific attack: trivial lower bound 0"


@dataclasses.dataclass(frozen=True)
class ShuffleBound:
    """Central guarantee of ``n`` shuffled reports.

    Attributes
    ----------
    epsilon : float
        Sound upper bound: the shuffled batch is ``(epsilon, delta)``-DP (natural log units).
    epsilon_lower : float
        A concrete neighbouring pair needs at least this ``epsilon`` at ``delta``
        (``epsilon_lower <= true epsilon <= epsilon``).
    delta : float
        The ``delta`` the bound is for.
    n : int
        Number of users (one report each) in the shuffled batch.
    source : str
        Paper and theorem of the upper bound, then of the lower bound (``"; lower: ..."``).
    tolerance : float
        Width of the bisection bracket the upper bound was taken from (relative). For binary RR
        (the exact curve): ``(epsilon - epsilon_lower) / epsilon``, the bracket of the true value.
    """

    epsilon: float
    epsilon_lower: float
    delta: float
    n: int
    source: str
    tolerance: float = RELATIVE_TOLERANCE


def fmt21_closed_form(epsilon0: float, n: int, delta: float) -> float:
    """FMT21 Theorem 3.1: ``log(1 + (e^e0 - 1)/(e^e0 + 1) (8 sqrt(e^e0 log(4/delta)) / sqrt(n) + 8 e^e0 / n))``.

    Valid for ``epsilon0 <= log(n / (16 log(2/delta)))``; ``inf`` outside that range. The value is
    rounded up by one part in 10^12.

    References
    ----------
    Feldman, McMillan, Talwar, "Hiding among the clones", FOCS 2021, Theorem 3.1.
    """
    if n < 2 or epsilon0 > math.log(n / (16.0 * math.log(2.0 / delta))):
        return math.inf
    e0 = math.exp(epsilon0)
    inner = (e0 - 1.0) / (e0 + 1.0) * (8.0 * math.sqrt(e0 * math.log(4.0 / delta)) / math.sqrt(n) + 8.0 * e0 / n)
    return min(epsilon0, math.log1p(inner) * (1.0 + 1e-12))


def _crossing(delta_of: Callable[[float], float], delta: float, lo: float, hi: float,
              tolerance: float = RELATIVE_TOLERANCE) -> tuple[float, float]:
    """Bracket ``[lo, hi]`` with ``delta_of(lo) > delta >= delta_of(hi)``, narrowed to ``tolerance`` (relative).

    ``delta_of`` is non-increasing and the caller guarantees the invariant at the ends. It is kept
    on every evaluation, so the result is sound whatever the steps. The steps are the Illinois
    variant of regula falsi on ``sqrt(-log delta_of)`` (close to linear in ``epsilon`` for the
    near-Gaussian tails of these curves), with bisection whenever that is undefined or stalls.
    """
    def transform(value: float) -> float:
        return math.sqrt(-math.log(value)) if 0 < value < 1 else (math.inf if value <= 0 else 0.0)

    target = transform(delta)
    f_lo = transform(delta_of(lo)) - target if lo > 0 else None
    f_hi = None
    side = 0
    while hi - lo > tolerance * hi:
        width = hi - lo
        mid = 0.5 * (lo + hi) if lo > 0 else hi / 4.0
        if f_lo is not None and f_hi is not None and math.isfinite(f_hi) and f_hi > f_lo:
            guess = lo - f_lo * (hi - lo) / (f_hi - f_lo)
            if lo + 0.001 * width < guess < hi - 0.001 * width:
                mid = guess
        f_mid = transform(delta_of(mid)) - target
        if f_mid < 0:
            lo, f_lo = mid, f_mid
            if side == -1 and f_hi is not None:
                f_hi *= 0.5
            side = -1
        else:
            hi, f_hi = mid, f_mid
            if side == 1 and f_lo is not None:
                f_lo *= 0.5
            side = 1
    return lo, hi


def _upper_epsilon(delta_of: Callable[[float], float], delta: float, epsilon0: float,
                   guess: float | None = None, tolerance: float = RELATIVE_TOLERANCE) -> float:
    """Smallest ``epsilon`` in ``[0, epsilon0]`` (to the tolerance) with ``delta_of(epsilon) <= delta``.

    ``guess`` (a lower bound of the answer, e.g. ``epsilon_lower``) brackets the search: the probes
    ``guess * (1 + 1e-3), ..., guess * 1.3`` are tried in turn, and the first that meets ``delta``
    closes a bracket whose lower end is the previous probe (or ``guess``).
    """
    if delta_of(0.0) <= delta:
        return 0.0
    lo = 0.0
    if guess is not None and guess > 0:
        lo = guess
        for factor in (1.0 + RELATIVE_TOLERANCE, 1.003, 1.01, 1.03, 1.1, 1.3):
            probe = min(epsilon0, guess * factor)
            if delta_of(probe) <= delta:
                return _crossing(delta_of, delta, lo, probe, tolerance)[1]
            lo = probe
            if probe >= epsilon0:
                return epsilon0
    return _crossing(delta_of, delta, lo, epsilon0, tolerance)[1]


def _lower_epsilon(delta_of: Callable[[float], float], delta: float, epsilon0: float,
                   tolerance: float = RELATIVE_TOLERANCE) -> float:
    """Largest ``epsilon`` (to the tolerance) with ``delta_of(epsilon) > delta`` (0 when none)."""
    if delta_of(0.0) <= delta:
        return 0.0
    return _crossing(delta_of, delta, 0.0, epsilon0, tolerance)[0]


def fmt21_numerical(epsilon0: float, n: int, delta: float) -> float:
    """FMT21 Theorem 3.2 evaluated numerically (Section 4): an upper bound for any epsilon0-LDP randomizer.

    References
    ----------
    Feldman, McMillan, Talwar, "Hiding among the clones", FOCS 2021, Theorem 3.2 and Section 4.
    """
    return _upper_epsilon(lambda e: curves.clone_delta_upper(e, epsilon0, n), delta, epsilon0)


def _check(epsilon0, n, delta, mechanism, domain_size, hash_range=None, collision=None):
    if not (math.isfinite(epsilon0) and epsilon0 > 0):
        raise ValueError(f"epsilon0: must be a positive finite number, got {epsilon0!r}")
    if int(n) != n or n < 1:
        raise ValueError(f"n: must be a positive integer, got {n!r}")
    if not (0 < delta < 1):
        raise ValueError(f"delta: must be in (0, 1), got {delta!r}")
    if mechanism not in (None, "krr", "rr", "glh"):
        raise ValueError(f"mechanism: must be None (any epsilon0-LDP randomizer), 'krr', 'rr' or 'glh', "
                         f"got {mechanism!r}")
    if mechanism == "glh" and (hash_range is None or int(hash_range) != hash_range or hash_range < 2):
        raise ValueError(f"hash_range: GLH needs an integer hash range g >= 2, got {hash_range!r}")
    if mechanism == "glh" and (collision is None or not 0 <= collision <= 1.0 / hash_range):
        raise ValueError(f"collision: GLH needs the hash family's collision probability in [0, 1/g], got {collision!r}")
    if mechanism == "krr" and (domain_size is None or int(domain_size) != domain_size or domain_size < 2):
        raise ValueError(f"domain_size: k-RR needs an integer domain size >= 2, got {domain_size!r}")


def shuffle_bound(epsilon0: float, n: int, delta: float, *, mechanism: str | None = None,
                  domain_size: int | None = None, hash_range: int | None = None,
                  collision: float | None = None) -> ShuffleBound:
    """Central ``(epsilon, delta)`` of ``n`` shuffled reports of an epsilon0-LDP randomizer.

    Parameters
    ----------
    epsilon0 : float
        Local privacy parameter of one report (> 0, natural log).
    n : int
        Number of users, one report each.
    delta : float
        Target ``delta`` in (0, 1).
    mechanism : {None, "krr", "rr", "glh"}
        ``None``: any epsilon0-LDP randomizer (FMT21 bounds only). ``"krr"``: k-ary randomized
        response on ``domain_size`` values; ``"rr"``: binary randomized response (``k = 2``);
        ``"glh"``: generalized local hashing (FMT21 upper bound; the support-count attack of
        :func:`solvers._shuffle_binary.support_count_pair` as the lower bound).
    domain_size : int, optional
        ``k`` for ``"krr"``.
    hash_range : int, optional
        ``g`` for ``"glh"``.
    collision : float, optional
        ``"glh"``: the hash family's ``Pr[h(x) = h(x')]`` for ``x != x'`` (``<= 1/g``).

    Returns
    -------
    ShuffleBound
        ``epsilon`` (sound upper bound), ``epsilon_lower``, ``delta``, ``n``, ``source``.

    Raises
    ------
    ValueError
        A parameter outside its range (the message names it).

    References
    ----------
    FMT21 Theorems 3.1, 3.2; Balle et al. CRYPTO 2019 Sec. 3; Su, Cheng, Wang arXiv 2504.07414.
    """
    _check(epsilon0, n, delta, mechanism, domain_size, hash_range, collision)
    if mechanism == "glh":
        assert hash_range is not None and collision is not None  # _check refused a GLH bound without them
        return _shuffle_bound(float(epsilon0), int(n), float(delta), mechanism, None, int(hash_range),
                              float(collision))
    return _shuffle_bound(float(epsilon0), int(n), float(delta), mechanism,
                          None if domain_size is None else int(domain_size))


@functools.lru_cache(maxsize=4096)
def _shuffle_bound(epsilon0: float, n: int, delta: float, mechanism: str | None,
                   domain_size: int | None, hash_range: int | None = None,
                   collision: float | None = None) -> ShuffleBound:
    """:func:`shuffle_bound` after validation (a pure function: cached, so ``verify`` after
    ``plan`` and the targeting search do not repeat work)."""
    k = 2 if mechanism == "rr" else (int(domain_size) if mechanism == "krr" and domain_size is not None else None)
    if n == 1:
        return ShuffleBound(float(epsilon0), float(epsilon0) if k else 0.0, delta, n,
                            "one report: the local guarantee" + ("" if k else f"; lower: {SOURCE_LOWER_NONE}"))
    if k == 2:
        return _binary_rr_bound(epsilon0, n, delta)
    lower, lower_source = 0.0, SOURCE_LOWER_NONE
    if k is not None:
        lower = _lower_epsilon(lambda e: curves.krr_pair_delta_lower(e, epsilon0, k, n), delta, epsilon0)
        lower_source = SOURCE_LOWER_KRR
    if mechanism == "glh":
        assert hash_range is not None and collision is not None  # shuffle_bound's _check refused None
        e0 = math.exp(epsilon0)
        keep = e0 / (e0 + hash_range - 1.0)
        stray = (1.0 - collision) * (1.0 - keep) / (hash_range - 1.0)  # y = h(x) != h(x') for an x'-holder
        pairs = binary.support_count_pair(n - 1, (1.0 - collision) * keep, stray, delta * TRUNCATION)
        lower = _lower_epsilon(lambda e: max(pair.delta(e, bound="lower") for pair in pairs), delta, epsilon0)
        lower_source = SOURCE_LOWER_GLH
    candidates = [(fmt21_closed_form(epsilon0, n, delta), SOURCE_FMT_CLOSED)]
    if k is not None:
        candidates.append((_upper_epsilon(lambda e: curves.blanket_krr_delta_upper(e, epsilon0, k, n),
                                          delta, epsilon0, lower), SOURCE_BLANKET))
    epsilon, source = _with_fmt21_numerical(candidates, epsilon0, n, delta)
    return ShuffleBound(float(epsilon), float(min(lower, epsilon)), float(delta), n, f"{source}; lower: {lower_source}")


def _with_fmt21_numerical(candidates: list, epsilon0: float, n: int, delta: float) -> tuple[float, str]:
    """The smallest candidate, FMT21 Thm 3.2 included when it can beat the others (one evaluation decides)."""
    best = min(item[0] for item in candidates)
    if not math.isfinite(best) or curves.clone_delta_upper(best, epsilon0, n) <= delta:
        candidates = [*candidates, (fmt21_numerical(epsilon0, n, delta), SOURCE_FMT_NUMERICAL)]
    epsilon, source = min(candidates, key=lambda item: item[0])
    return min(epsilon, float(epsilon0)), source


def binary_rr_curve(epsilon0: float, n: int, delta: float, *, independent: bool = False,
                    epsilon_ref: float | None = None, budget: int = 400) -> binary.BinaryCurve:
    """The block cover of shuffled binary RR's exact curve (:func:`solvers._shuffle_binary.binary_curve`).

    The reference ``epsilon`` is where the two extreme datasets (every other user holding the
    differing user's value 1, or 0) cross ``delta`` (or ``epsilon_ref`` when given); at most
    ``budget`` pairs are evaluated (every dataset up to SMALL_N users); windows drop
    at most ``delta * TRUNCATION`` per binomial tail.
    """
    tau = delta * TRUNCATION
    q = 1.0 / (math.exp(epsilon0) + 1.0)
    ends = [binary.CountPair.build(a, n - 1 - a, q, tau) for a in sorted({0, n - 1})]

    def end_delta(epsilon: float) -> float:
        return max(pair.delta(epsilon, bound="lower") for pair in ends)

    if epsilon_ref is None:
        epsilon_ref = _lower_epsilon(end_delta, delta, epsilon0)
    # refine blocks to eta in delta, about 0.4 * RELATIVE_TOLERANCE in epsilon:
    # eta = 0.4 tol * dlog(delta)/dlog(epsilon);
    # up to SMALL_N users every block is refined until it is no larger than the best pair (cheap there)
    eta = 2e-3
    if 0 < epsilon_ref < epsilon0 / 1.01:
        here, there = end_delta(epsilon_ref), end_delta(epsilon_ref * 1.01)
        if here > 0 and there > 0:
            eta = min(5e-2, max(1e-4, 0.4 * RELATIVE_TOLERANCE * math.log(here / there) / math.log(1.01)))
    if n <= SMALL_N:
        eta, budget = 0.0, 3 * n + 64
    return binary.binary_curve(epsilon0, n, epsilon_ref, tau, eta=eta, budget=budget, independent=independent)


def binary_rr_independent_delta(epsilon0: float, n: int, delta: float, epsilon: float) -> float:
    """``verify``'s independent upper bound of binary RR's exact curve at ``epsilon`` (large ``n``).

    The block cover the solver's answer came from is checked (it covers every dataset) and its
    deciding blocks re-evaluated by the other convolution order
    (:func:`solvers._shuffle_binary.independent_upper`).
    """
    curve = _binary_rr_search(float(epsilon0), int(n), float(delta))[0]
    return binary.independent_upper(curve, epsilon0, delta * TRUNCATION, epsilon)


@functools.lru_cache(maxsize=1)  # the last search only (tens of MB at n = 10^6): verify after plan reuses it
def _binary_rr_search(epsilon0: float, n: int, delta: float) -> tuple[binary.BinaryCurve, float, float]:
    """``(curve, lower, upper)``: the block cover the answer comes from and the two ends of the bracket."""
    step = 0.3 * RELATIVE_TOLERANCE
    curve = binary_rr_curve(epsilon0, n, delta)
    for attempt in range(2):  # a second cover, refined at the first answer, when the first is not tight there
        lower = _lower_epsilon(curve.lower, delta, epsilon0, step)
        upper = _upper_epsilon(functools.partial(curve.upper, top=12), delta, epsilon0, lower, tolerance=step)
        if curve.upper(upper) > delta:  # the search used the top blocks only: certify with every block
            upper = _upper_epsilon(curve.upper, delta, epsilon0, lower, tolerance=step)
        if upper - lower <= RELATIVE_TOLERANCE * upper or attempt or upper >= epsilon0:
            break
        curve = binary_rr_curve(epsilon0, n, delta, epsilon_ref=upper, budget=800)
    return curve, lower, upper


def _binary_rr_bound(epsilon0: float, n: int, delta: float) -> ShuffleBound:
    """The exact curve of shuffled binary RR: ``epsilon`` and ``epsilon_lower`` bracket it to the tolerance.

    ``epsilon`` is the upper end of a bracket on the block cover's sound upper bound; ``epsilon_lower``
    the lower end of a bracket on the best concrete pair's divergence; each bracket is narrowed to
    ``0.3 *`` :data:`RELATIVE_TOLERANCE` and the reported ``tolerance`` is ``(epsilon -
    epsilon_lower) / epsilon`` (the true curve's ``epsilon`` lies in between).
    """
    curve, lower, upper = _binary_rr_search(epsilon0, n, delta)
    candidates = [(fmt21_closed_form(epsilon0, n, delta), SOURCE_FMT_CLOSED), (upper, SOURCE_EXACT_RR)]
    epsilon, source = _with_fmt21_numerical(candidates, epsilon0, n, delta)
    a, b = curve.worst_pair(lower)
    lower = min(lower, epsilon)
    tolerance = (epsilon - lower) / epsilon if epsilon > 0 else 0.0
    lower_source = f"{SOURCE_LOWER_RR}: others {a} holding 1, {b} holding 0 (one neighbouring pair)"
    return ShuffleBound(float(epsilon), float(lower), float(delta), n, f"{source}; lower: {lower_source}",
                        max(tolerance, 0.0))


def local_epsilon_for(central_epsilon: float, delta: float, n: int, *, mechanism: str | None = None,
                      domain_size: int | None = None, epsilon0_max: float = 20.0) -> float:
    """Largest epsilon0 (a multiple of :data:`TARGET_STEP`) whose shuffled bound meets ``central_epsilon``.

    The upper bound ``shuffle_bound(epsilon0, ...).epsilon`` is non-decreasing in ``epsilon0`` (an
    epsilon0-LDP randomizer is also epsilon0'-LDP for ``epsilon0' > epsilon0``); the search
    bisects on the grid and checks the returned point.

    Returns
    -------
    float
        ``epsilon0`` with ``shuffle_bound(epsilon0).epsilon <= central_epsilon`` and
        ``shuffle_bound(epsilon0 + TARGET_STEP).epsilon > central_epsilon`` (or ``epsilon0_max``).

    Raises
    ------
    ValueError
        A parameter outside its range, or a target that not even ``epsilon0 = TARGET_STEP`` meets.

    References
    ----------
    As :func:`shuffle_bound`.
    """
    if not (math.isfinite(central_epsilon) and central_epsilon > 0):
        raise ValueError(f"central_epsilon: must be a positive finite number, got {central_epsilon!r}")

    def meets(step: int) -> bool:
        return shuffle_bound(step * TARGET_STEP, n, delta, mechanism=mechanism,
                             domain_size=domain_size).epsilon <= central_epsilon

    lo = max(1, int(math.floor(central_epsilon / TARGET_STEP)))  # epsilon0 = central epsilon always meets it
    lo = min(lo, int(round(epsilon0_max / TARGET_STEP)))
    if not meets(lo):
        raise ValueError(f"central_epsilon: {central_epsilon} is not met even by epsilon0 = {lo * TARGET_STEP:.3f}")
    hi = int(round(epsilon0_max / TARGET_STEP))
    if meets(hi):
        return hi * TARGET_STEP
    while hi - lo > 1:  # invariant: meets(lo), not meets(hi)
        mid = (lo + hi) // 2
        if meets(mid):
            lo = mid
        else:
            hi = mid
    return round(lo * TARGET_STEP, 6)

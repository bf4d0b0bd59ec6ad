"""The exact privacy curve of shuffled binary randomized response (``k = 2``) for any ``n``.

The shuffled view of ``n`` binary-RR reports is the count of reported ones. Each report keeps its
bit with probability ``p = e^epsilon0 / (e^epsilon0 + 1)`` and flips it with ``q = 1 - p``.

Setting
-------
Neighbouring datasets differ in one user (1 in ``D``, 0 in ``D'``); of the ``n - 1`` others ``a``
hold 1 and ``b = n - 1 - a`` hold 0. The others' count is ``S_ab = Bin(a, p) + Bin(b, q)`` (a
Poisson-binomial), and the two views are ``P = S_ab + Bern(p)``, ``Q = S_ab + Bern(q)``. Write
``g_ab(epsilon) = sum_h (P(h) - e^epsilon Q(h))_+`` (the hockey-stick divergence, forward direction).
The exact curve is ``delta(epsilon) = max`` over ``a`` and both directions. These facts make the
maximum computable soundly and fast:

1. **One direction suffices.** The reflection ``h -> n - h`` maps ``S_ab`` to ``S_ba`` and ``(P, Q)`` of
   ``(a, b)`` to ``(Q, P)`` of ``(b, a)``, so the backward divergence of ``(a, b)`` is ``g_ba`` and
   ``delta(epsilon) = max_{a = 0..n-1} g_{a, n-1-a}(epsilon)``.
2. **More users, less divergence.** ``g_{a+1,b} <= g_ab`` and ``g_{a,b+1} <= g_ab``: the pair for
   ``(a + 1, b)`` is the pair for ``(a, b)`` convolved with the same independent ``Bern(p)`` (a Markov
   kernel applied to both), and hockey-stick divergences obey the data-processing inequality.
3. **Block bound.** Hence for every ``a`` in a block ``[a0, a1]``: ``g_{a, n-1-a} <= g_{a0, n-1-a1}``
   (the block's lower ``a`` and lower ``b``, i.e. ``n - (a1 - a0)`` users). A singleton block is exact.
4. **Tighter block bound (a partial blanket).** In the block, ``a0`` others surely hold 1, ``b0 = n - 1 -
   a1`` surely hold 0, and ``r = a1 - a0`` are "uncertain". Each uncertain report is ``(1 - C) x + C F``
   with ``C ~ Bern(gamma)``, ``gamma = 2 q``, ``F ~ Bern(1/2)`` (the blanket of [BBGN19] for k = 2:
   ``(1 - gamma) + gamma / 2 = p``). Reveal ``N = sum C`` and ``M = sum (1 - C) x`` over the uncertain
   users only: their law is the same under both neighbours, and given them the count is ``M`` (a
   known shift) plus ``Bin(N, 1/2)``, whatever the uncertain users hold. So every dataset of the
   block has divergence at most ``E_N h(N)``, ``h(c)`` the divergence with ``a0`` ones, ``b0`` zeros and
   ``c`` fair coins; ``h`` is non-increasing (fact 2), so ``E_N h(N) <= P(N < c*) + h(c*)`` for any
   ``c*``; ``c*`` is the ``tau``-quantile of ``Bin(r, gamma)``. The coins keep ``q / (2 p q) = 1 / (2p)``
   of the variance the uncertain users carry, so this loses far fewer users' worth than fact 3
   (``r (1 - 1/(2p))`` instead of ``r``).

5. **Only counts above the mode matter.** ``P(h) <= Q(h)`` iff ``f(h - 1) <= f(h)`` (``f`` the law of
   the others' count, ``p > q``), true up to the mode of ``f``; ``f`` is a Poisson-binomial, hence
   log-concave (unimodal) with its mode within 1 of its mean (Darroch 1964). So the positive part
   vanishes for ``h <= floor(mean) - 2`` at every ``epsilon >= 0``, and only the convolution above
   ``floor(mean) - 3`` is computed (half the work).

6. **FFT convolutions, with an error bound.** Long convolutions use ``scipy.signal.fftconvolve``;
   its error ``||c_fft - c||_2`` is bounded (Higham 2002, Theorem 24.2, with a factor 10 of margin,
   :func:`_fft_error`) and, by Cauchy-Schwarz, ``sum_h |c_fft(h) - c(h)| <= sqrt(L) ||c_fft - c||_2``
   over the ``L`` kept counts; since ``P`` and ``Q`` are convex combinations of shifted counts,
   ``(1 + e^epsilon)`` times that is added to upper bounds (subtracted from lower ones). The
   FFT is used only when this is at most ``FFT_MAX_ERROR * tau`` (``1e-3 delta`` in
   :mod:`solvers.shuffle`); ``verify``'s independent path convolves directly.

A branch and bound over blocks of ``a`` (:func:`binary_curve`) refines, at a reference ``epsilon``, every
block whose bound exceeds ``(1 + eta)`` times the largest exact value found, until none does (or a
budget of evaluations is spent: still sound, only looser); each block's bound is fact 4's. The
resulting blocks cover ``0..n-1``,
so ``max_blocks g_block(epsilon)`` is a sound upper bound of ``delta(epsilon)`` for *every* ``epsilon``,
and the best exact point is a concrete dataset pair, i.e. a lower bound. Near the worst dataset the
divergence varies slowly with ``a`` (``Var S_ab = (n - 1) p q`` for every ``a``; only the third
cumulant ``p q (p - q)(a - b)`` changes), while fact 4 loses ``1 - 1/(2p)`` of a user per unit of
width, so the blocks needed stay few (at most a few hundred at ``n = 10^6``; a budget caps them).
An earlier exhaustive search at ``n = 2000`` found the worst ``a`` away from both ends by a few
users (lattice effects when ``n q`` is small); the branch and bound finds such maxima because it
never prunes a block whose bound is above ``(1 + eta)`` times the best exact value (the source of a
plan names the worst pair found, e.g. ``others 99903 holding 1, 96 holding 0``).

Each ``g_ab`` is evaluated from the pmfs: ``Bin(a, p)``, ``Bin(b, q)`` (and the coins) on windows
about the mean that drop about ``tau`` mass per tail (widened to the ``tau`` quantiles when they drop
more than ``2 tau``; the exact dropped mass, from ``binom.cdf``/``binom.sf``, is added to upper bounds
in full: ``(P - e^epsilon Q)_+ <= (P_t - e^epsilon Q_t)_+ + (P - P_t)``), pmfs from ``binom.pmf``
anchors every 64 points and exact ratios in between, convolved directly (sums of positive terms:
relative error at most ``L u`` with ``L`` the shorter window and ``u`` the unit roundoff) or by FFT
(fact 6), then ``P`` and ``Q`` formed and the positive part summed. The relative error ``rho`` of
every ``P(h)``, ``Q(h)`` is bounded (pmf error ``1e-12``, far above Boost's few ulps plus the 63
ratio steps, plus ``L u``); the sum is corrected by ``rho`` times the mass where the sign could be
wrong. The pmfs do not depend on ``epsilon``: they are computed once per pair and
reused by every step of the search.

References
----------
.. [BBGN19] B. Balle, J. Bell, A. Gascon, K. Nissim, "The privacy blanket of the shuffle model",
   CRYPTO 2019 (the blanket decomposition of a local randomizer, used by fact 4 on part of the
   users only).
.. [FMT21] V. Feldman, A. McMillan, K. Talwar, "Hiding among the clones", FOCS 2021 (the
   hockey-stick divergence of the shuffled view).
.. [D64] J. N. Darroch, "On the distribution of the number of successes in independent trials",
   Ann. Math. Statist. 35 (1964) (the mode of a Poisson-binomial is within 1 of its mean).
.. [H02] N. J. Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., SIAM 2002,
   Theorem 24.2 (error of the FFT).
"""
from __future__ import annotations

import dataclasses
import heapq
import math

import numpy as np

__all__ = ["CountPair", "BinaryCurve", "binary_curve", "independent_upper", "support_count_pair", "PMF_RELATIVE_ERROR"]

#: relative error allowed for one ``binom.pmf`` value (Boost's is a few ulps; this is generous)
PMF_RELATIVE_ERROR = 1e-12
#: exact binom.pmf anchors every this many points of a window
_ANCHOR = 64
#: a refined block is cut into at most this many pieces at once
SPLIT_MAX = 16
#: unit roundoff of binary64
_U = 2.0 ** -53
#: convolutions with both factors longer than this go through the FFT (fact 6)
FFT_MIN_SIZE = 400
#: the FFT is used only when its error bound is at most this times ``tau`` (else: direct convolution)
FFT_MAX_ERROR = 100.0
#: relative and absolute margins on every upper bound (as in :mod:`solvers._shuffle_curves`)
_RELATIVE_SLACK = 1e-9
_ABSOLUTE_SLACK = 1e-15


def _anchored_pmf(size: int, prob: float, lo: int, hi: int) -> np.ndarray:
    """``Bin(size, prob)`` pmf on ``lo..hi``: ``binom.pmf`` every ``_ANCHOR`` points, ratios in between.

    ``pmf(k + 1) = pmf(k) (size - k) / (k + 1) prob / (1 - prob)``; at most ``_ANCHOR - 1`` ratios
    (each within ``6 u``) multiply an anchor, so the relative error stays below ``PMF_RELATIVE_ERROR``.
    """
    from scipy.stats import binom  # deferred: scipy

    k = np.arange(lo, hi + 1, dtype=float)
    chunks = -(-k.size // _ANCHOR)
    steps = np.ones(chunks * _ANCHOR)
    steps[1:k.size] = (size - k[:-1]) / (k[:-1] + 1.0) * (prob / (1.0 - prob))
    blocks = steps.reshape(chunks, _ANCHOR)
    blocks[:, 0] = binom.pmf(k[::_ANCHOR], size, prob)
    return np.cumprod(blocks, axis=1).ravel()[:k.size]


def _window(size: int, prob: float, tau: float, z: float | None) -> tuple[int, np.ndarray, float]:
    """``(lo, pmf on lo..hi, exact mass outside)`` for ``Bin(size, prob)``.

    ``z`` None (the main path): ``mean -/+ (z sd + 20)`` with ``z`` from ``tau``, widened to the
    ``tau`` quantiles when that drops more than ``2 tau``; pmf by :func:`_anchored_pmf`. Otherwise
    (``verify``'s path) the given ``z`` and ``binom.pmf`` at every point. The outside mass is
    computed exactly (``binom.cdf``/``binom.sf``) either way and rounded up by one part in 10^9.
    """
    from scipy.stats import binom  # deferred: scipy

    if size == 0:
        return 0, np.ones(1), 0.0
    mean, sd = size * prob, math.sqrt(size * prob * (1.0 - prob))
    width = (math.sqrt(2.0 * math.log(1.0 / tau)) + 0.5 if z is None else z) * sd + 20
    lo, hi = int(max(0, math.floor(mean - width))), int(min(size, math.ceil(mean + width)))

    def outside_of(lo: int, hi: int) -> float:
        return ((float(binom.cdf(lo - 1, size, prob)) if lo > 0 else 0.0)
                + (float(binom.sf(hi, size, prob)) if hi < size else 0.0)) * (1.0 + 1e-9)

    outside = outside_of(lo, hi)
    if z is not None:
        return lo, binom.pmf(np.arange(lo, hi + 1), size, prob), outside
    if outside > 2.0 * tau:
        lo = min(lo, int(max(0, binom.ppf(tau, size, prob))))
        hi = max(hi, int(min(size, binom.isf(tau, size, prob) + 1)))
        outside = outside_of(lo, hi)
    return lo, _anchored_pmf(size, prob, lo, hi), outside


def _fft_error(first: np.ndarray, second: np.ndarray, result: np.ndarray, kept: int) -> float:
    """Bound of ``sum |c_fft(h) - c(h)|`` over ``kept`` entries of an FFT convolution (fact 6).

    ``||c_fft - c||_2 <= (3 eps_F + 2 u)(||a||_2 + ||b||_2 + ||c||_2)`` to first order, ``eps_F =
    log2(N) (u + gamma_4 (sqrt 2 + u))`` (Higham, Accuracy and Stability of Numerical Algorithms,
    2nd ed., Theorem 24.2, applied to the forward transforms, the pointwise product and the
    inverse); times a safety factor of 10 for the mixed-radix transform and second-order terms;
    then Cauchy-Schwarz over the ``kept`` entries.
    """
    size = first.size + second.size - 1
    log_n = math.ceil(math.log2(max(size, 2)))
    eps_f = log_n * (_U + 4.0 * _U * (math.sqrt(2.0) + _U) / (1.0 - 4.0 * _U))
    norms = sum(math.sqrt(float(np.square(vector).sum())) for vector in (first, second, result))  # no BLAS
    return 10.0 * (3.0 * eps_f + 2.0 * _U) * norms * math.sqrt(kept)


@dataclasses.dataclass(frozen=True)
class CountPair:
    """The two shuffled-count laws of one neighbouring pair: ``a`` others hold 1, ``b`` hold 0.

    Attributes
    ----------
    a, b : int
        Others holding 1 and 0 (``n = a + b + 1`` users).
    forward, backward : numpy.ndarray
        ``P(h)`` and ``Q(h)`` on a common window of counts (truncated; see ``outside``).
    outside : float
        Upper bound of the mass of ``P`` (and of ``Q``) outside the window.
    rho : float
        Bound of the relative error of every stored ``P(h)`` and ``Q(h)``.
    coins : int
        Fair coins in the others' count (fact 4; 0 for a dataset).
    absolute : float
        Bound of ``sum_h |P_stored(h) - P(h)|`` (and the same for ``Q``) from an FFT (fact 6; 0 when
        the convolution was direct).
    """

    a: int
    b: int
    forward: np.ndarray
    backward: np.ndarray
    outside: float
    rho: float
    coins: int = 0
    absolute: float = 0.0

    @classmethod
    def build(cls, a: int, b: int, q: float, tau: float, *, coins: int = 0,
              independent: bool = False) -> CountPair:
        """Pmfs of ``P = S + Bern(p)`` and ``Q = S + Bern(q)`` with ``S = Bin(a, p) + Bin(b, q) + Bin(coins, 1/2)``.

        ``coins > 0`` is a block's bound (fact 4 of the module docstring), not a dataset.
        ``independent``: the other evaluation order used by ``verify`` -- windows by a z-rule,
        and ``P``, ``Q`` as the direct convolutions ``Bin(a + 1, p) * Bin(b, q)`` and ``Bin(a, p) *
        Bin(b + 1, q)`` (times the coins) instead of mixing one count's pmf.
        """
        import scipy.signal  # deferred: scipy

        p = 1.0 - q
        if independent:
            z = max(8.0, math.sqrt(2.0 * math.log(1.0 / tau)) + 1.0)
            parts = [(_window(a + 1, p, tau, z), _window(b, q, tau, z)),
                     (_window(a, p, tau, z), _window(b + 1, q, tau, z))]
            coin = _window(coins, 0.5, tau, z)
            laws, length = [], 0
            for (lo1, f1, out1), (lo2, f2, out2) in parts:
                law = np.convolve(coin[1], np.convolve(f2, f1))
                length = max(length, min(f1.size, f2.size) + min(coin[1].size, f1.size + f2.size))
                laws.append((lo1 + lo2 + coin[0], law, out1 + out2 + coin[2]))
            lo = min(laws[0][0], laws[1][0])
            size = max(start + law.size for start, law, _ in laws) - lo
            forward, backward = np.zeros(size), np.zeros(size)
            forward[laws[0][0] - lo:laws[0][0] - lo + laws[0][1].size] = laws[0][1]
            backward[laws[1][0] - lo:laws[1][0] - lo + laws[1][1].size] = laws[1][1]
            rho = PMF_RELATIVE_ERROR * 3.0 + (length + 2) * _U * 1.01
            return cls(a, b, forward, backward, max(laws[0][2], laws[1][2]), rho, coins)
        windows = sorted([_window(a, p, tau, None), _window(b, q, tau, None), _window(coins, 0.5, tau, None)],
                         key=lambda item: item[1].size)
        (lo1, f1, _), (lo2, f2, _), (lo3, f3, _) = windows
        small, start = np.convolve(f1, f2), lo1 + lo2
        # only counts above the mode matter (fact 5): the last convolution starts at floor(mean) - 3
        first = max(start + lo3, int(math.floor(a * p + b * q + coins / 2.0)) - 3)
        absolute = 0.0
        if min(small.size, f3.size) > FFT_MIN_SIZE:  # fact 6: FFT, with its error bound
            full = scipy.signal.fftconvolve(small, f3)
            count = np.maximum(full[first - start - lo3:], 0.0)
            length = f1.size
            absolute = _fft_error(small, f3, full, count.size)
            if absolute > FFT_MAX_ERROR * tau:  # too coarse for this delta: convolve directly
                absolute = 0.0  # the direct convolution below replaces count
        if not absolute:
            padded = np.r_[np.zeros(small.size - 1), f3, np.zeros(small.size - 1)]
            count = np.convolve(padded[first - start - lo3:], small, mode="valid")
            length = f1.size + min(small.size, f3.size)
        shifted, same = count, np.r_[count[1:], 0.0]  # h = first + 1, ...: P(h) = p c(h - 1) + q c(h)
        forward, backward = p * shifted + q * same, q * shifted + p * same
        rho = PMF_RELATIVE_ERROR * 3.0 + (length + 4) * _U * 1.01
        return cls(a, b, forward, backward, sum(item[2] for item in windows), rho, coins, absolute)

    def delta(self, epsilon: float, *, bound: str = "upper") -> float:
        """``sum_h (P(h) - e^epsilon Q(h))_+``, rounded toward ``bound`` ("upper" or "lower")."""
        e = math.exp(epsilon)
        difference = self.forward - e * self.backward
        magnitude = self.forward + e * self.backward
        value = float(np.maximum(difference, 0.0).sum())
        # where the sign of a term could be wrong, or its value off: rho times the terms' size
        doubtful = float(magnitude[difference > -2.0 * self.rho * magnitude].sum()) * self.rho * 1.01
        spread = (1.0 + e) * self.absolute
        if bound == "upper":
            return (value + doubtful + spread + self.outside) * (1.0 + _RELATIVE_SLACK) + _ABSOLUTE_SLACK
        return max(0.0, (value - doubtful - spread - e * self.outside) * (1.0 - _RELATIVE_SLACK))


@dataclasses.dataclass(frozen=True)
class BinaryCurve:
    """The exact curve of shuffled binary RR as a cover of blocks plus the best exact pairs.

    Attributes
    ----------
    n : int
        Users.
    blocks : tuple of (int, int, CountPair)
        ``(a0, a1, pair)``: every dataset with ``a`` in ``[a0, a1]`` others holding 1 has forward
        divergence at most ``pair.delta(epsilon)`` (fact 4 for ``(a0, n - 1 - a1)``); the blocks
        cover ``0..n-1``; largest first at the reference ``epsilon``.
    exact : tuple of CountPair
        Concrete neighbouring pairs (``b = n - 1 - a``), the best first at the reference ``epsilon``.
    evaluations : int
        Pairs evaluated by the branch and bound.
    complete : bool
        False when the evaluation budget stopped the refinement (the bound is sound, maybe looser).
    """

    n: int
    blocks: tuple
    exact: tuple
    evaluations: int
    complete: bool

    def upper(self, epsilon: float, top: int | None = None) -> float:
        """Sound upper bound of ``delta(epsilon)`` over every dataset and both directions.

        ``top``: only the ``top`` blocks largest at the reference ``epsilon`` (a search aid, not a
        bound: the caller certifies its answer with every block).
        """
        return max(pair.delta(epsilon, bound="upper") for _, _, pair in self.blocks[:top])

    def lower(self, epsilon: float) -> float:
        """``delta(epsilon)`` of the best concrete pair (rounded down): a lower bound of the curve."""
        return max(pair.delta(epsilon, bound="lower") for pair in self.exact)

    def worst_pair(self, epsilon: float) -> tuple[int, int]:
        """``(a, b)`` of the concrete pair with the largest divergence at ``epsilon``."""
        pair = max(self.exact, key=lambda item: item.delta(epsilon, bound="lower"))
        return pair.a, pair.b


def _block_pair(a: int, b: int, uncertain: int, q: float, tau: float, independent: bool) -> CountPair:
    """Fact 4's bound for ``a`` sure ones, ``b`` sure zeros and ``uncertain`` users (a dataset when 0).

    ``N ~ Bin(uncertain, 2q)`` blanket coins are at least ``c*`` (the ``tau``-quantile) but with
    probability ``P(N < c*)``, which is added to the pair's outside mass.
    """
    from scipy.stats import binom  # deferred: scipy

    coins, below = 0, 0.0
    if uncertain:
        coins = int(max(0, binom.ppf(tau, uncertain, 2.0 * q)))
        below = float(binom.cdf(coins - 1, uncertain, 2.0 * q)) * (1.0 + 1e-9) if coins > 0 else 0.0
    built = CountPair.build(a, b, q, tau, coins=coins, independent=independent)
    return dataclasses.replace(built, outside=built.outside + below) if below else built


def support_count_pair(others: int, keep: float, support: float, tau: float) -> tuple[CountPair, CountPair]:
    """The laws of a count ``T = S + Bern(keep)`` vs ``T' = S + Bern(support)``, ``S = Bin(others, support)``.

    GLH's attack (:func:`solvers.shuffle.shuffle_bound`, ``mechanism="glh"``): datasets ``(x, x',
    .., x')`` / ``(x', x', .., x')`` and ``T`` the number of reports ``(h, y)`` with ``h(x) = y !=
    h(x')`` (a post-processing of the shuffled multiset, so its divergence is at most the
    view's). A user holding ``x'`` reports ``y = h(x')`` with probability ``mu``, else a uniform
    other bucket, which is ``h(x)`` with probability ``(1 - kappa) / (g - 1)`` (``kappa`` the hash
    family's collision probability): ``support = (1 - kappa)(1 - mu) / (g - 1)``. A user holding
    ``x`` has ``h(x) = y != h(x')`` with probability ``keep = (1 - kappa) mu``. Only pairwise
    independence of the hash family is used; ``keep / support = e^epsilon0`` when ``kappa < 1``.
    Returns the pair in both orders (forward and backward); each ``delta`` is exact up to the
    rounding it reports.
    """
    _, f, outside = _window(others, support, tau, None)
    rho = PMF_RELATIVE_ERROR * 2.0 + 8 * _U
    shifted, same = np.r_[0.0, f], np.r_[f, 0.0]
    with_x = keep * shifted + (1.0 - keep) * same
    without = support * shifted + (1.0 - support) * same
    return (CountPair(others, 0, with_x, without, outside, rho),
            CountPair(others, 0, without, with_x, outside, rho))


def independent_upper(curve: BinaryCurve, epsilon0: float, tau: float, epsilon: float, top: int = 40) -> float:
    """``verify``'s recomputation of a curve's upper bound at ``epsilon`` through the other path.

    Checks that the blocks cover ``a = 0..n-1`` with the pairs fact 4 names (``inf`` otherwise),
    rebuilds the ``top`` blocks largest at ``epsilon`` with :meth:`CountPair.build`'s independent
    evaluation order (the deciding ones; the others enter with their stored value). Returns the
    largest.
    """
    reach, last = -1, curve.n - 1
    for a0, a1, pair in sorted(curve.blocks, key=lambda block: block[0]):
        if a0 > reach + 1 or pair.a != a0 or pair.b != last - a1 or a1 < a0:
            return math.inf
        reach = max(reach, a1)
    if reach < last:
        return math.inf
    q = 1.0 / (math.exp(epsilon0) + 1.0)
    ranked = sorted(((pair.delta(epsilon), a0, a1) for a0, a1, pair in curve.blocks), reverse=True)
    values = [value for value, _, _ in ranked[top:]]
    for _, a0, a1 in ranked[:top]:
        values.append(_block_pair(a0, last - a1, a1 - a0, q, tau, True).delta(epsilon))
    return max(values)


def binary_curve(epsilon0: float, n: int, epsilon_ref: float, tau: float, *, eta: float = 5e-3,
                 budget: int = 400, independent: bool = False) -> BinaryCurve:
    """Branch and bound over the number ``a`` of others holding 1 (see the module docstring).

    Parameters
    ----------
    epsilon0 : float
        Local epsilon of binary RR.
    n : int
        Users (>= 2).
    epsilon_ref : float
        The ``epsilon`` at which blocks are refined (near the answer; any value is sound).
    tau : float
        Mass each binomial window may drop per tail (added to upper bounds in full).
    eta : float
        Refine every block whose bound exceeds ``(1 + eta)`` times the best exact value.
    budget : int
        Largest number of pairs evaluated.
    independent : bool
        Build every pair through :meth:`CountPair.build`'s independent path (``verify``).

    Returns
    -------
    BinaryCurve
        Blocks (sound upper bound at every ``epsilon``) and the five best exact pairs.
    """
    q = 1.0 / (math.exp(epsilon0) + 1.0)
    cache: dict[tuple[int, int, int], tuple[CountPair, float]] = {}

    def pair(a: int, b: int, uncertain: int = 0) -> tuple[CountPair, float]:
        if (a, b, uncertain) not in cache:
            built = _block_pair(a, b, uncertain, q, tau, independent)
            cache[a, b, uncertain] = built, built.delta(epsilon_ref, bound="upper")
        return cache[a, b, uncertain]

    last = n - 1
    powers = [2 ** i for i in range(int(math.log2(max(last, 1))) + 1)]
    points = sorted({0, last} | {min(last, step) for step in powers} | {max(0, last - step) for step in powers})
    exact = {a: pair(a, last - a) for a in points}
    heap: list = []

    def push(a0: int, a1: int) -> None:
        if a0 == a1 and a0 not in exact:
            exact[a0] = pair(a0, last - a0)
        value = exact[a0][1] if a0 == a1 else pair(a0, last - a1, a1 - a0)[1]
        heapq.heappush(heap, (-value, a0, a1))

    for a0, a1 in zip(points[:-1], points[1:]):
        push(a0, a1)
    if len(points) == 1:
        push(0, 0)
    complete = True
    while True:
        best = max(value for _, value in exact.values())
        top, a0, a1 = heap[0]
        if -top <= best * (1.0 + eta) or a0 == a1:
            break
        if len(cache) >= budget:
            complete = False
            break
        heapq.heappop(heap)
        if a1 - a0 == 1:  # singletons are exact pairs
            push(a0, a0)
            push(a1, a1)
            continue
        # pieces overlap at their ends (no exact evaluation needed there); their number guesses the
        # width that brings the bound within eta (the looseness grows about linearly with the width)
        excess = -top / best - 1.0 if best > 0 else math.inf
        pieces = int(min(SPLIT_MAX, a1 - a0, max(2, math.ceil(math.sqrt(excess / eta)) if eta > 0 else SPLIT_MAX)))
        cuts = sorted({a0 + (a1 - a0) * i // pieces for i in range(pieces + 1)})
        for left, right in zip(cuts[:-1], cuts[1:]):
            push(left, right)
    ordered = sorted(heap)
    blocks = tuple((a0, a1, cache[a0, last - a1, a1 - a0][0] if a0 != a1 else exact[a0][0]) for _, a0, a1 in ordered)
    ranked = sorted(exact.values(), key=lambda item: -item[1])[:5]
    return BinaryCurve(n, blocks, tuple(item[0] for item in ranked), len(cache), complete)

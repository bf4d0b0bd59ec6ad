"""Exact worst-case lifetime loss of memoized L-GRR (any k, any T) over pairs of histories with <= 2 values.

Test helper, written from the definitions only (no code of ldpplan). The model: a history
``x = (x_1 .. x_T)``; each distinct value ``u`` gets ONE permanent response ``s ~ P1(. | u)`` (k-ary RR,
``p1``, ``q1 = (1 - p1)/(k - 1)``); round ``t`` reports ``y_t ~ P2(. | s)`` (k-ary RR, ``p2``, ``q2``).
With ``r = p2/q2`` and ``c_s(S) = #{t in S: y_t = s}``, the group of rounds ``S`` at which the user holds
``u`` contributes

    q2^|S| F(S, u),   F(S, u) = sum_s w_u(s) r^{c_s(S)},   w_u(u) = p1, w_u(s) = q1 (s != u),

so ``P(y|x) = q2^T prod_groups F`` and the ``q2^T`` cancels between two histories of T rounds.

**Reduction (a proof, not a heuristic).** Two histories with at most two values each split the rounds
into at most four cells (A∩A', A∩B', B∩A', B∩B'); every cell lies in exactly one group of ``x`` and one
of ``x'``. Fix ``y`` outside one cell ``c`` of size ``n`` and let ``m_s`` be the number of its rounds
reporting ``s`` (``sum_s m_s = n``). Only the two groups holding ``c`` depend on ``m``:

    R(m) = P(y|x) / P(y|x') = const x (sum_s alpha_s r^{m_s}) / (sum_s beta_s r^{m_s}),

``alpha_s, beta_s > 0`` (weights times ``r`` to the counts in the groups' other cells). Let ``t`` be
the maximum of this ratio over the integer points of the simplex, attained at ``m*``, and
``phi(m) = sum_s (alpha_s - t beta_s) r^{m_s}``: ``phi <= 0`` on every integer point and
``phi(m*) = 0``. If every coefficient is ``<= 0``, ``phi(m*) = 0`` forces all to be 0 and every
point is a maximizer. Otherwise let ``P`` be the symbols with a positive coefficient: moving the
mass of the symbols outside ``P`` onto one symbol of ``P`` does not decrease ``phi`` (``r > 1``),
and on the face of the simplex supported on ``P`` ``phi`` is convex, so it is largest at a vertex
``n e_s``: ``phi(n e_s) >= phi(m*) = 0``, i.e. the ratio at the vertex is ``>= t``. So the cell can
be made constant without lowering the ratio. Doing this cell after cell (each step leaves the other
cells as they are) turns a maximizing ``y`` into one that is constant on every cell with a ratio at
least as large: **the maximum over all ``k^T`` outputs is attained by an output constant on each
cell** (the same holds for either direction, by swapping ``x`` and ``x'``).

**Finite enumeration.** Rounds are exchangeable given the partition (the likelihood depends on
cell sizes and per-cell counts only), so a pair is (the four cell sizes, summing to T; the values:
``x`` holds 0 on A and 1 on B, ``x'`` holds ``a' != b'`` in {0, 1, 2, 3} (2, 3 new values) up to
relabelling), and an output is one symbol per cell. A relabelling of the symbols fixing the pair's
values maps any four symbols into ``min(k, 8)`` symbols, so outputs over ``range(min(k, 8))``
suffice (the other ``k - 8`` symbols have count 0 and contribute ``r^0 = 1`` each to ``Z``). Empty
groups give ``F = p1 + (k - 1) q1 = 1``, so cell sizes 0 cover histories with one value (``V = 1``:
the single configuration ``(T, 0, 0, 0)``). Everything is screened in float64; every
candidate within ``1e-7`` nats of the float maximum is re-evaluated exactly (``Fraction``, then a
60-digit logarithm), so the returned value is the exact maximum to ~1e-40 (float64 log-space errors
here are below 1e-11 nats). The reduction needs ``p2 > q2`` (every plan's second round); it holds for
any number of values (every cell lies in one group of each history), the enumeration covers ``V <= 2``.

References
----------
.. [1] U. Erlingsson, V. Pihur, A. Korolova, "RAPPOR", ACM CCS 2014, Sec. 3 (memoization).
.. [2] B. Ding, J. Kulkarni, S. Yekhanin, "Collecting telemetry data privately", NeurIPS 2017, Sec. 3.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np

__all__ = ["GrrWorst", "grr_exact_worst", "grr_pair_loss_exact", "value_patterns"]

#: cells: (slot of x, slot of x'); slot 0 = A (value 0), slot 1 = B (value 1)
_CELLS = ((0, 0), (0, 1), (1, 0), (1, 1))
_TOLERANCE = 1e-7


@dataclass(frozen=True)
class GrrWorst:
    """Exact worst case: ``loss`` (nats, 60-digit log of an exact rational) and an explicit maximizer.

    ``x``, ``x2`` are histories of T rounds and ``y`` an output with ``ln P(y|x) - ln P(y|x2) = loss``;
    ``cells`` the four cell sizes, ``values`` the values ``(a', b')`` of ``x2`` on its slots,
    ``symbols`` the output symbol of each cell.
    """

    loss: float
    x: tuple
    x2: tuple
    y: tuple
    cells: tuple
    values: tuple
    symbols: tuple


def value_patterns(k: int) -> list[tuple[int, int]]:
    """Values ``(a', b')`` of ``x'`` up to relabelling, ``x`` holding ``(0, 1)``; only values ``< k``."""
    pats = [(0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1), (2, 3)]
    return [p for p in pats if max(p) < k]


def _configs(rounds: int, max_values: int) -> np.ndarray:
    if max_values == 1:
        return np.array([[rounds, 0, 0, 0]])
    out = []
    for a in range(rounds + 1):
        for b in range(rounds + 1 - a):
            for c in range(rounds + 1 - a - b):
                n = (a, b, c, rounds - a - b - c)
                # swapping x's slots (values 0 <-> 1) or x''s slots maps the patterns onto themselves:
                # one configuration per orbit suffices
                if n <= min((n[2], n[3], n[0], n[1]), (n[1], n[0], n[3], n[2]), (n[3], n[2], n[1], n[0])):
                    out.append(n)
    return np.array(out)


def _outputs(k: int, named: set) -> np.ndarray:
    """One symbol per cell over ``range(min(k, 8))``, unnamed symbols up to relabelling (first-use order)."""
    alphabet = range(min(k, 8))
    free = [s for s in alphabet if s not in named]
    out = []
    for y in itertools.product(alphabet, repeat=4):
        seen = [s for s in dict.fromkeys(y) if s not in named]
        if seen == free[:len(seen)]:
            out.append(y)
    return np.array(out)


def _log_f(cfg, outs, cells, value, k, m, lam, p1, q1):
    """``ln F`` of the group holding ``value`` (< m) over ``cells`` (indices), shape (configs, outputs).

    ``F = r^n sum_s w(s) r^(c_s - n)``: the most reported symbol has ``c_s >= n/2`` (two cells), so the
    sum is ``>= q1 r^(-T/2)``, far from underflow while ``lam T / 2 < 600`` (checked by the caller).
    """
    n = cfg[:, cells].sum(axis=1)[:, None].astype(float)
    total = np.full((len(cfg), len(outs)), 0.0) + (k - m) * q1 * np.exp(-lam * n)
    for s in range(m):
        count = sum(cfg[:, c][:, None] * (outs[None, :, c] == s) for c in cells)
        total += (p1 if s == value else q1) * np.exp(lam * (count - n))
    return lam * n + np.log(total)


def _float_losses(rounds, k, p1, p2, max_values):
    """Per value pattern: ``(d, cfg, pat, outs)``, ``d[i, j] = ln P(y|x) - ln P(y|x')`` (float64) of
    configuration ``cfg[i]`` and per-cell output ``outs[j]``."""
    q1, q2 = (1 - p1) / (k - 1), (1 - p2) / (k - 1)
    lam = np.log(p2) - np.log(q2)
    if not 0 < lam * rounds / 2 < 600:
        raise ValueError("needs p2 > q2 (the reduction uses r > 1) and ln(p2/q2) T / 2 < 600 (float64 screening)")
    m = min(k, 8)
    cfg = _configs(rounds, max_values)
    for pat in value_patterns(k):
        outs = _outputs(k, {0, 1, *pat})
        lx = _log_f(cfg, outs, [0, 1], 0, k, m, lam, p1, q1) + _log_f(cfg, outs, [2, 3], 1, k, m, lam, p1, q1)
        lx2 = (_log_f(cfg, outs, [0, 2], pat[0], k, m, lam, p1, q1)
               + _log_f(cfg, outs, [1, 3], pat[1], k, m, lam, p1, q1))
        yield lx - lx2, cfg, pat, outs


def _histories(cells, pat, symbols):
    x, x2, y = [], [], []
    for (sx, sx2), n, s in zip(_CELLS, cells, symbols):
        x += [sx] * n
        x2 += [pat[sx2]] * n
        y += [s] * n
    return tuple(x), tuple(x2), tuple(y)


def grr_pair_loss_exact(x, x2, y, k, p1, p2) -> Fraction:
    """``P(y|x) / P(y|x2)`` as an exact rational from the group sums (``p1``, ``p2`` taken exactly)."""
    p1, p2 = Fraction(p1), Fraction(p2)
    q1, q2 = (1 - p1) / (k - 1), (1 - p2) / (k - 1)

    def prob(h):
        total = Fraction(1)
        for u in set(h):
            rounds = [t for t in range(len(h)) if h[t] == u]
            group = Fraction(0)
            for s in range(k):
                hits = sum(1 for t in rounds if y[t] == s)
                group += (p1 if s == u else q1) * p2 ** hits * q2 ** (len(rounds) - hits)
            total *= group
        return total

    return prob(x) / prob(x2)


def _exact_log(ratio: Fraction) -> mpmath.mpf:
    with mpmath.workdps(60):
        return mpmath.log(mpmath.mpf(ratio.numerator)) - mpmath.log(mpmath.mpf(ratio.denominator))


def grr_exact_worst(rounds: int, k: int, p1: float, p2: float, *, max_values: int = 2) -> GrrWorst:
    """Exact ``max`` over pairs of histories (T rounds, <= ``max_values`` in {1, 2} values each, changes at
    any rounds) and outputs ``y in [k]^T`` of ``ln P(y|x) / P(y|x')`` for memoized L-GRR.

    Parameters
    ----------
    rounds : int
        T >= 1.
    k : int
        Domain size >= 2.
    p1, p2 : float
        ``P1(u|u)`` and ``P2(s|s)``; ``q = (1 - p)/(k - 1)``; taken as exact binary rationals.
    max_values : int
        1 or 2.

    Returns
    -------
    GrrWorst
        The exact loss and an explicit maximizing ``(x, x', y)`` (see the module doc for the proof).
    """
    if max_values not in (1, 2) or rounds < 1 or k < 2:
        raise ValueError("max_values must be 1 or 2, rounds >= 1, k >= 2")
    found = []
    for d, cfg, pat, outs in _float_losses(rounds, k, p1, p2, max_values):
        for sign in (1.0, -1.0):
            found.append((float((sign * d).max()), sign * d, cfg, pat, outs, sign))
    top = max(f[0] for f in found)
    best, seen = None, set()
    for level, d, cfg, pat, outs, sign in found:
        if level < top - _TOLERANCE:
            continue
        for i, j in zip(*np.nonzero(d >= top - _TOLERANCE)):
            x, x2, y = _histories(tuple(int(v) for v in cfg[i]), pat, tuple(int(v) for v in outs[j]))
            if sign < 0:
                x, x2 = x2, x
            if (x, x2, y) in seen:  # empty cells: their symbol and value do not matter
                continue
            seen.add((x, x2, y))
            value = _exact_log(grr_pair_loss_exact(x, x2, y, k, p1, p2))
            if best is None or value > best[0]:
                best = (value, x, x2, y, tuple(int(v) for v in cfg[i]), pat, tuple(int(v) for v in outs[j]))
    value, x, x2, y, cells, pat, symbols = best
    return GrrWorst(float(value), x, x2, y, cells, pat, symbols)

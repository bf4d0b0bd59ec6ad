"""Independent exact worst-case privacy loss of memoized (longitudinal) channels over histories.

Test helper, written from the definitions only (no code of ldpplan): a user's history
``x = (x_1 .. x_T)`` holds at most ``V`` distinct values; each distinct value ``u`` gets ONE
permanent response ``s_u ~ P1(. | u)``; round ``t`` reports ``y_t ~ P2(. | s_{x_t})`` afresh. So

    P(y | x) = prod_j f(y_{S_j}; u_j),   f(y_S; u) = sum_s P1(s | u) prod_{t in S} P2(y_t | s),

with ``S_j`` the rounds at which the user holds ``u_j``. The loss of a pair is
``max_y |ln P(y|x) - ln P(y|x')|``; the worst case is its maximum over every pair of allowed histories.

Three computations:

* :func:`literal_loss` enumerates permanent responses and outputs literally in rationals (tiny cases);
* :func:`binary_worst` (L-GRR with k = 2 and every unary encoding, whose k bit positions are
  independent binary memoized channels) uses sufficient statistics: with at most two distinct values
  per history, a pair is four cells ``n_ij`` = rounds in slot i of x and slot j of x'; the likelihood
  of one bit position depends on y only through the number of ones per cell. Exhaustive over every
  pair (cell sizes, which values, which direction) and every y (ones per cell, per bit position);
  the maximizer is re-evaluated in 50-digit mpmath.
* :func:`grr_worst_bruteforce`: L-GRR for any k, all pairs and all ``k^T`` outputs (small T).
"""
from __future__ import annotations

import itertools
from fractions import Fraction

import mpmath
import numpy as np

__all__ = ["literal_loss", "binary_worst", "grr_worst_bruteforce", "BinaryWorst"]


# ----------------------------------------------------------------------------- literal (rationals)

def _literal_prob(x, y, first, second, perm_outputs):
    values = sorted(set(x))
    total = Fraction(0)
    for s in itertools.product(perm_outputs, repeat=len(values)):
        perm = dict(zip(values, s))
        term = Fraction(1)
        for v in values:
            term *= first(perm[v], v)
        for xt, yt in zip(x, y):
            term *= second(yt, perm[xt])
        total += term
    return total


def literal_loss(x, x2, first, second, perm_outputs, outputs):
    """``max_y |ln P(y|x) / P(y|x2)|`` by literal enumeration (Fractions); returns ``(loss, y)``."""
    best, arg = Fraction(1), None
    for y in itertools.product(outputs, repeat=len(x)):
        a = _literal_prob(x, y, first, second, perm_outputs)
        b = _literal_prob(x2, y, first, second, perm_outputs)
        r = max(a / b, b / a)
        if r > best:
            best, arg = r, y
    return float(mpmath.log(mpmath.mpf(best.numerator) / best.denominator)), arg


# ----------------------------------------------------------------------------- binary channels, counts

class BinaryWorst:
    """Result of :func:`binary_worst`: ``loss`` (nats, 50-digit re-evaluation) and the worst pair."""

    def __init__(self, loss, cells, pattern, direction):
        self.loss, self.cells, self.pattern, self.direction = loss, cells, pattern, direction

    def __repr__(self):
        return f"BinaryWorst(loss={self.loss!r}, cells={self.cells}, pattern={self.pattern}, dir={self.direction})"


def _log_f_table(pi, p2, q2, T):
    """``ln f(c; n, pi)`` for 0 <= c <= n <= T: one slot of n rounds, c ones, permanent-one probability pi."""
    n = np.arange(T + 1)[:, None]
    c = np.arange(T + 1)[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        a = np.log(pi) + c * np.log(p2) + (n - c) * np.log1p(-p2)
        b = np.log1p(-pi) + c * np.log(q2) + (n - c) * np.log1p(-q2)
    out = np.logaddexp(a, b)
    out[c > n] = np.nan
    return out


def _patterns(k, unary):
    """Position types of a pair: for each x' value pattern, ``{(la1, la2, lb1, lb2): multiplicity}``.

    x's slots hold values A, B; x' slots hold b1 != b2 among A, B and new values C, D.
    Labels: 1 where the slot's value is the position (unary) / the value is 1 (k = 2 L-GRR).
    """
    if not unary:  # L-GRR k = 2: one position, x = (1, 0), x' either order
        return [{(1, 0, 1, 0): 1}, {(1, 0, 0, 1): 1}]
    out = []
    for b1, b2 in (("A", "B"), ("B", "A"), ("A", "C"), ("C", "A"), ("B", "C"), ("C", "B"), ("C", "D")):
        used = sorted({"A", "B", b1, b2})
        if len(used) > k:
            continue
        types: dict = {}
        for v in used:
            key = (int(v == "A"), int(v == "B"), int(b1 == v), int(b2 == v))
            types[key] = types.get(key, 0) + 1
        if k - len(used):
            types[(0, 0, 0, 0)] = types.get((0, 0, 0, 0), 0) + k - len(used)
        out.append(types)
    return out


def _cell_configs(T):
    for n11 in range(T + 1):
        for n12 in range(T + 1 - n11):
            for n21 in range(T + 1 - n11 - n12):
                yield n11, n12, n21, T - n11 - n12 - n21


def _grid_losses(tables, cells, labels):
    """Max over ones-per-cell of ln P(x) - ln P(x') and of its negative, for one position type."""
    n11, n12, n21, n22 = cells
    c11, c12, c21, c22 = np.ix_(*(np.arange(n + 1) for n in cells))
    la1, la2, lb1, lb2 = (tables[lab] for lab in labels)
    lp = la1[n11 + n12][c11 + c12] + la2[n21 + n22][c21 + c22]
    lq = lb1[n11 + n21][c11 + c21] + lb2[n12 + n22][c12 + c22]
    d = lp - lq
    return float(d.max()), float((-d).max())


def binary_worst(T, k, p1, q1, p2, q2, *, unary, max_values=2):
    """Worst-case loss over all pairs of histories with <= ``max_values`` (1 or 2) values, T rounds.

    Parameters: per-bit (unary) or k = 2 GRR probabilities (``Pr[1|1]``, ``Pr[1|0]`` of each round).
    """
    tables = {1: _log_f_table(p1, p2, q2, T), 0: _log_f_table(q1, p2, q2, T)}
    best = (-1.0, None, None, None)
    configs = [(T, 0, 0, 0)] if max_values == 1 else _cell_configs(T)
    for cells in configs:
        per_type = {}
        for patterns in _patterns(k, unary):
            for lab in patterns:
                if lab not in per_type:
                    per_type[lab] = _grid_losses(tables, cells, lab)
            for direction in (0, 1):
                total = sum(m * per_type[lab][direction] for lab, m in patterns.items())
                if total > best[0]:
                    best = (total, cells, patterns, direction)
    _, cells, patterns, direction = best
    return BinaryWorst(_mp_loss(cells, patterns, direction, p1, q1, p2, q2), cells, patterns, direction)


def _mp_loss(cells, patterns, direction, p1, q1, p2, q2):
    """The worst pair's loss in 50 digits: for each position type, max over ones per cell (mpmath)."""
    mpmath.mp.dps = 50
    p1, q1, p2, q2 = (mpmath.mpf(Fraction(v).numerator) / Fraction(v).denominator for v in (p1, q1, p2, q2))

    def f(c, n, lab):
        pi = p1 if lab else q1
        return pi * p2**c * (1 - p2)**(n - c) + (1 - pi) * q2**c * (1 - q2)**(n - c)

    n11, n12, n21, n22 = cells
    total = mpmath.mpf(0)
    for lab, mult in patterns.items():
        best = None
        for c in itertools.product(*(range(n + 1) for n in cells)):
            c11, c12, c21, c22 = c
            a = f(c11 + c12, n11 + n12, lab[0]) * f(c21 + c22, n21 + n22, lab[1])
            b = f(c11 + c21, n11 + n21, lab[2]) * f(c12 + c22, n12 + n22, lab[3])
            v = mpmath.log(a / b) if direction == 0 else mpmath.log(b / a)
            best = v if best is None or v > best else best
        total += mult * best
    return float(total)


# ----------------------------------------------------------------------------- L-GRR brute force

def grr_worst_bruteforce(T, k, p1, p2, *, max_values=2):
    """L-GRR worst case over all pairs (values relabelled to 0..3) and all ``k^T`` outputs (floats)."""
    q1, q2 = (1 - p1) / (k - 1), (1 - p2) / (k - 1)
    ys = np.array(list(itertools.product(range(k), repeat=T)))  # (k^T, T)
    hist = set()
    for x in itertools.product(range(min(k, 2 * max_values)), repeat=T):
        if len(set(x)) <= max_values:
            hist.add(x)
    logs = {}
    for x in hist:
        lp = np.zeros(len(ys))
        for u in set(x):
            rounds = [t for t in range(T) if x[t] == u]
            acc = np.zeros(len(ys))
            for s in range(k):
                w = p1 if s == u else q1
                hits = (ys[:, rounds] == s).sum(axis=1)
                acc += w * p2**hits * q2**(len(rounds) - hits)
            lp += np.log(acc)
        logs[x] = lp
    names = sorted(logs)
    mat = np.stack([logs[x] for x in names])
    best = 0.0
    for i in range(len(names)):
        best = max(best, float((mat[i][None, :] - mat).max()))
    return best

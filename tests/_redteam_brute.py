"""Red-team brute force of memoized (longitudinal) channels, from the definitions only (no ldpplan code).

A history ``x = (x_1 .. x_T)`` with at most ``V`` distinct values; each distinct value ``u`` draws ONE
permanent response ``s_u ~ P1(. | u)``; round ``t`` reports ``y_t ~ P2(. | s_{x_t})`` afresh. So

    P(y | x) = prod_u sum_s P1(s | u) prod_{t : x_t = u} P2(y_t | s).

Loss of a pair: ``max_y |ln P(y|x) - ln P(y|x')|``. Worst case: max over every pair of histories with the same
rounds, each of at most ``V`` values (changes at any round). Both the GRR channel and the unary encodings are
invariant under a joint relabelling of the domain, so ``x`` is enumerated in first-appearance (canonical) form and
``x'`` in full. Unary encodings: the ``k`` bit positions are independent, so the max over ``y`` is the sum over
positions of per-position maxima (each direction separately).

Everything is float64 in log space; :func:`exact_grr_ratio` / :func:`exact_unary_ratio` recompute a pair's
likelihood ratio at one output in exact rationals for the decisive cases.
"""
from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np

__all__ = ["histories", "canonical", "grr_worst", "unary_worst", "exact_grr_ratio", "exact_unary_ratio"]


def histories(alphabet: int, rounds: int, values: int):
    """Every sequence over ``range(alphabet)`` of length ``rounds`` with at most ``values`` distinct symbols."""
    return [h for h in itertools.product(range(alphabet), repeat=rounds) if len(set(h)) <= values]


def canonical(h) -> bool:
    """True when ``h``'s symbols first appear in the order 0, 1, 2, ..."""
    seen = []
    for v in h:
        if v not in seen:
            if v != len(seen):
                return False
            seen.append(v)
    return True


def _lse(stack: np.ndarray) -> np.ndarray:
    top = stack.max(axis=0)
    return top + np.log(np.exp(stack - top).sum(axis=0))


def _grr_loglik(h, ys: np.ndarray, k: int, p1: float, p2: float) -> np.ndarray:
    """``ln P(y | h)`` for every row ``y`` of ``ys`` (shape ``(N, T)``), k-ary RR in both rounds."""
    q1, q2 = (1 - p1) / (k - 1), (1 - p2) / (k - 1)
    total = np.zeros(len(ys))
    for u in set(h):
        rounds = [t for t in range(len(h)) if h[t] == u]
        terms = []
        for s in range(k):
            inner = np.full(len(ys), np.log(p1 if s == u else q1))
            for t in rounds:
                inner += np.where(ys[:, t] == s, np.log(p2), np.log(q2))
            terms.append(inner)
        total += _lse(np.stack(terms))
    return total


def grr_worst(k: int, rounds: int, values: int, p1: float, p2: float, alphabet: int | None = None):
    """Worst loss of k-ary memoized RR over every pair (same rounds) and every output.

    ``alphabet`` limits the symbols the second history and the outputs use (defaults to ``k``: exhaustive);
    with fewer symbols than ``k`` the result is a lower estimate of the worst case. Returns
    ``(loss, x, x2, y)``.
    """
    a = k if alphabet is None else alphabet
    ys = np.array(list(itertools.product(range(a), repeat=rounds)), dtype=np.int64)
    hs = histories(a, rounds, values)
    table = np.stack([_grr_loglik(h, ys, k, p1, p2) for h in hs])
    best = (-1.0, None, None, None)
    for i, x in enumerate(hs):
        if not canonical(x):
            continue
        diff = np.abs(table - table[i])
        j, yi = np.unravel_index(int(np.argmax(diff)), diff.shape)
        if diff[j, yi] > best[0]:
            best = (float(diff[j, yi]), x, hs[j], tuple(int(v) for v in ys[yi]))
    return best


def _bit_loglik(h, position: int, ybits: np.ndarray, p1, q1, p2, q2) -> np.ndarray:
    """``ln P(y_b | h)`` of one bit position for every row of ``ybits`` (shape ``(N, T)``, 0/1)."""
    total = np.zeros(len(ybits))
    for u in set(h):
        rounds = [t for t in range(len(h)) if h[t] == u]
        first = p1 if u == position else q1
        terms = []
        for s, prior in ((1, first), (0, 1 - first)):
            inner = np.full(len(ybits), np.log(prior))
            on = p2 if s else q2
            for t in rounds:
                inner += np.where(ybits[:, t] == 1, np.log(on), np.log1p(-on))
            terms.append(inner)
        total += _lse(np.stack(terms))
    return total


def unary_worst(k: int, rounds: int, values: int, p1, q1, p2, q2):
    """Worst loss of a memoized unary encoding (k bits) over every pair and output; ``(loss, x, x2)``."""
    ybits = np.array(list(itertools.product((0, 1), repeat=rounds)), dtype=np.int64)
    hs = histories(k, rounds, values)
    # table[h, b, y]
    table = np.stack([np.stack([_bit_loglik(h, b, ybits, p1, q1, p2, q2) for b in range(k)]) for h in hs])
    best = (-1.0, None, None)
    for i, x in enumerate(hs):
        if not canonical(x):
            continue
        d = table - table[i]  # (H, k, Y)
        up = d.max(axis=2).sum(axis=1)
        down = (-d).max(axis=2).sum(axis=1)
        loss = np.maximum(up, down)
        j = int(np.argmax(loss))
        if loss[j] > best[0]:
            best = (float(loss[j]), x, hs[j])
    return best


# ----------------------------------------------------------------------------- exact rationals


def _exact_prob(h, y, first, second, perm_outputs) -> Fraction:
    total = Fraction(1)
    for u in set(h):
        slot = Fraction(0)
        for s in perm_outputs:
            term = first(s, u)
            for t in range(len(h)):
                if h[t] == u:
                    term *= second(y[t], s)
            slot += term
        total *= slot
    return total


def exact_grr_ratio(x, x2, y, k: int, p1: float, p2: float) -> Fraction:
    """``max(P(y|x)/P(y|x2), inverse)`` in rationals (the plan's floats taken exactly)."""
    a1, a2 = Fraction(p1), Fraction(p2)
    b1, b2 = (1 - a1) / (k - 1), (1 - a2) / (k - 1)
    first = lambda s, u: a1 if s == u else b1  # noqa: E731
    second = lambda o, s: a2 if o == s else b2  # noqa: E731
    p, q = _exact_prob(x, y, first, second, range(k)), _exact_prob(x2, y, first, second, range(k))
    return max(p / q, q / p)


def exact_unary_ratio(x, x2, k: int, p1, q1, p2, q2, rounds: int) -> Fraction:
    """The pair's worst ratio over every output, in rationals: per bit position the best output, multiplied."""
    a1, b1, a2, b2 = (Fraction(v) for v in (p1, q1, p2, q2))
    second = lambda o, s: (a2 if s else b2) if o else (1 - (a2 if s else b2))  # noqa: E731
    best = Fraction(0)
    for sign in (1, -1):
        total = Fraction(1)
        for b in range(k):
            first = lambda s, u, b=b: (a1 if u == b else b1) if s else 1 - (a1 if u == b else b1)  # noqa: E731
            per = Fraction(0)
            for y in itertools.product((0, 1), repeat=rounds):
                r = _exact_prob(x, y, first, second, (0, 1)) / _exact_prob(x2, y, first, second, (0, 1))
                per = max(per, r if sign == 1 else 1 / r)
            total *= per
        best = max(best, total)
    return best

"""Exact numbers of IDUE shared by the claims and the verifier: the log ratios u, w and Lemma 1's LDP budget.

References
----------
Gu, Li, Xiong, Cao, ICDE 2020: eq. (6) (the per-pair ratio a_i (1 - b_j) / (b_i (1 - a_j))), Lemma 1.
"""
from __future__ import annotations

from decimal import Decimal, localcontext

from .._exact import DIGITS, exact, log_exact

__all__ = ["exact_ldp_epsilon"]


def _uw(a: float, b: float) -> tuple[Decimal, Decimal]:
    fa, fb = exact(a), exact(b)
    return log_exact(fa / fb), log_exact((1 - fb) / (1 - fa))


def exact_ldp_epsilon(a, b, sizes) -> Decimal:
    """Lemma 1 exactly: max of ``u_i + w_j`` over distinct items (50 digits; 0 for one item)."""
    with localcontext() as ctx:
        ctx.prec = DIGITS + 10
        uw = [_uw(x, y) for x, y in zip(a, b)]
        order = sorted(range(len(uw)), key=lambda k: uw[k][1], reverse=True)  # top two w, O(t log t)
        best = Decimal(0)
        for k, (u, w) in enumerate(uw):
            other = order[0] if order[0] != k else (order[1] if len(order) > 1 else None)
            if other is not None:
                best = max(best, u + uw[other][1])
            if sizes[k] >= 2:
                best = max(best, u + w)
        return best

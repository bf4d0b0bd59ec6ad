"""The IDUE models reduced exactly to convex problems in one or two scalars (numpy only).

See :mod:`solvers.idue` for the reductions (opt0 under MinID in ``(U, W)``, under AvgID in
``P``; opt1 in ``T``; opt2 in ``b``). Each ``_reduce_*`` returns the map from the reduced
variables to the per-level parameters, ``value_grad(z) -> (value, subgradient)``, the open box
and, for opt0, a value-only function for the line searches (cheaper: no gradient).

References
----------
Gu, Li, Xiong, Cao, *Providing Input-Discriminative Protection for Local Differential
Privacy*, ICDE 2020, Sec. V-D, eqs. (9), (11), (12).
"""
from __future__ import annotations

import math

import numpy as np

__all__: list[str] = []


def _x_and_dx(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        x = 1.0 / np.expm1(u)
    return x, -x * (1.0 + x)


class _Opt0:
    """opt0 objective as a function of (u, w) with value and gradient."""

    def __init__(self, m: np.ndarray):
        self.m = m

    def value_grad_uw(self, u, w):
        if np.any(u <= 0) or np.any(w <= 0):
            return math.inf, None, None
        X, dX = _x_and_dx(u)
        Y, dY = _x_and_dx(w)
        diff = Y - X
        k = int(np.argmax(diff))
        val = float(np.sum(self.m * X * (1.0 + Y)) + diff[k])
        gu = self.m * (1.0 + Y) * dX
        gw = self.m * X * dY
        gu[k] -= dX[k]
        gw[k] += dY[k]
        return val, gu, gw


def _reduce_opt0_min(e, m):
    """opt0 under MinID over ``z = (U, W)``: ``u_i = min(U, e_i - W)``, ``w_i = min(W, e_i - U)``.

    Both minima switch at the same place: levels with ``e_i >= U + W`` ("full") have ``u_i = U``
    and ``w_i = W``, the others ("partial") ``u_i = e_i - W < U`` and ``w_i = e_i - U < W``. With the
    budgets sorted once and prefix sums of the sizes, an evaluation touches only the partial
    levels (a binary search finds them) and adds the full ones in O(1): value and gradient
    together, plus a value-only path for the line searches.
    """
    order = np.argsort(e, kind="stable")
    es, ms = e[order], m[order]
    tail = np.concatenate([np.cumsum(ms[::-1])[::-1], [0.0]])  # tail[j] = sum of ms[j:]

    def uw(z):
        U, W = z
        return np.minimum(U, e - W), np.minimum(W, e - U)

    def parts(z):
        U, W = float(z[0]), float(z[1])
        j = int(np.searchsorted(es, U + W, side="left"))  # es[:j] < U + W: partial levels
        if U <= 0 or W <= 0 or (j and float(es[0]) <= max(U, W)):
            return None
        X, dX = _x_and_dx(np.array([U]))
        Y, dY = _x_and_dx(np.array([W]))
        return U, W, j, float(X[0]), float(dX[0]), float(Y[0]), float(dY[0])

    def value(z):
        pr = parts(z)
        if pr is None:
            return math.inf
        U, W, j, X0, _, Y0, _ = pr
        val = float(tail[j]) * X0 * (1.0 + Y0)
        diff = Y0 - X0 if j < es.size else -math.inf
        if j:
            with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
                xp = 1.0 / np.expm1(es[:j] - W)
                yp = 1.0 / np.expm1(es[:j] - U)
            val += float(np.dot(ms[:j], xp * (1.0 + yp)))
            diff = max(diff, float(np.max(yp - xp)))
        return val + diff

    def value_grad(z):
        pr = parts(z)
        if pr is None:
            return math.inf, np.full(2, np.nan)
        U, W, j, X0, dX0, Y0, dY0 = pr
        full = float(tail[j])
        val = full * X0 * (1.0 + Y0)
        gU = full * (1.0 + Y0) * dX0
        gW = full * X0 * dY0
        best = Y0 - X0 if j < es.size else -math.inf
        kink: int | None = None
        if j:
            xp, dxp = _x_and_dx(es[:j] - W)
            yp, dyp = _x_and_dx(es[:j] - U)
            mj = ms[:j]
            val += float(np.dot(mj, xp * (1.0 + yp)))
            gU -= float(np.dot(mj, xp * dyp))        # w_i = e_i - U
            gW -= float(np.dot(mj, (1.0 + yp) * dxp))  # u_i = e_i - W
            dp = yp - xp
            k = int(np.argmax(dp))
            if float(dp[k]) > best:
                best, kink = float(dp[k]), k
        if kink is None:  # the max term is a full level: d(Y(W) - X(U))
            gU -= dX0
            gW += dY0
        else:  # a partial level: d(Y(e - U) - X(e - W))
            gU -= float(dyp[kink])
            gW += float(dxp[kink])
        return val + best, np.array([gU, gW])

    emin = float(e.min())
    return uw, value_grad, [0.0, 0.0], [emin, emin], value


def _reduce_opt0_avg(e, m):
    core = _Opt0(m)

    def uw(z):
        (P,) = z
        return e / 2 + P, e / 2 - P

    def value_grad(z):
        u, w = uw(z)
        val, gu, gw = core.value_grad_uw(u, w)
        if gu is None:
            return math.inf, np.full(1, np.nan)
        return val, np.array([float(np.sum(gu) - np.sum(gw))])

    def value(z):
        u, w = uw(z)
        if np.any(u <= 0) or np.any(w <= 0):
            return math.inf
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            X, Y = 1.0 / np.expm1(u), 1.0 / np.expm1(w)
        return float(np.dot(m, X * (1.0 + Y)) + np.max(Y - X))

    h = float(e.min()) / 2
    return uw, value_grad, [-h], [h], value


def _reduce_opt1_min(e, m):
    def uw(z):
        (T,) = z
        tau = np.minimum(T, e - T)
        return tau, tau

    def value_grad(z):
        (T,) = z
        tau = np.minimum(T, e - T)
        if np.any(tau <= 0):
            return math.inf, np.full(1, np.nan)
        X, dX = _x_and_dx(tau)
        val = float(np.sum(m * X * (1.0 + X)))
        dtau = np.where(T <= e - T, 1.0, -1.0)
        g = float(np.sum(m * (1.0 + 2.0 * X) * dX * dtau))
        return val, np.array([g])

    return uw, value_grad, [0.0], [float(e.min())]


def _g_opt2(b):
    with np.errstate(divide="ignore", invalid="ignore"):
        return b * (1 - b) / (0.5 - b) ** 2, 0.5 / (0.5 - b) ** 3


def _reduce_opt2(e, m, notion):
    if notion == "minid":
        pieces = lambda B: np.stack([np.full_like(e, B), (1 - B) * np.exp(-e), 1 - B * np.exp(e)])  # noqa: E731
        slopes = np.stack([np.ones_like(e), -np.exp(-e), -np.exp(e)])
        emin = float(e.min())
        lo = max(math.exp(-emin) / 2, 1 - math.exp(emin) / 2, 0.0)
        hi = 0.5
    else:
        pieces = lambda S: np.stack([S * np.exp(-e / 2), 1 - S * np.exp(e / 2)])  # noqa: E731
        slopes = np.stack([np.exp(-e / 2), -np.exp(e / 2)])
        lo = float(np.max(np.exp(-e / 2))) / 2
        hi = float(np.min(np.exp(e / 2))) / 2

    def b_of(z):
        P = pieces(float(z[0]))
        idx = np.argmax(P, axis=0)
        return P[idx, np.arange(e.size)], slopes[idx, np.arange(e.size)]

    def value_grad(z):
        b, db = b_of(z)
        if np.any(b >= 0.5) or np.any(b <= 0):
            return math.inf, np.full(1, np.nan)
        g, dg = _g_opt2(b)
        return float(np.sum(m * g)), np.array([float(np.sum(m * dg * db))])

    return b_of, value_grad, [lo], [hi]

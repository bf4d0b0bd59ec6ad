"""Full-report maximum likelihood for unary encodings by projected Newton (numpy only).

The full-report log-likelihood of RAPPOR / uRAP reports (ULDP eqs. 8-10) is, with the
notation of :func:`mechanisms._unary_em.binary_rows_em`,

.. math::

    L(f) = \\sum_r w_r \\log m_r(f) + \\sum_x \\pi_x \\log f_x + C, \\qquad
    m_r(f) = \\sum_x (\\mathrm{low}_x + \\delta_x Y_{rx}) f_x,

concave on the simplex. EM (even SQUAREM-accelerated) converges sublinearly where
coordinates of the maximiser sit at 0, which is what skewed data give. This module
maximises ``L`` by a second-order method in the style of mix-SQP (Kim, Carbonetto,
Stephens & Anitescu 2020):

1. **Reduction.** Columns of ``Y`` that are 0 in every report (uRAP's X_N bits in the
   reports that reveal nothing) enter every ``m_r`` only through ``low_x f_x``; columns
   with one common ``low`` value form a group whose total ``F_G`` is one variable, split
   inside the group in proportion to the pinned counts (that split maximises
   ``sum_x pi_x log f_x`` at fixed ``F_G``; uniform if the group has no pinned report).
   uRAP at |X| = 400, |X_S| = 76 becomes a 77-variable problem. Distinct report patterns
   are merged with weights when the active columns fit in 64 bits.
2. **Relaxed Newton step.** On ``phi(z) = -L(z) + W sum(z)`` over ``z >= 0`` (``W`` the total
   weight; ``L`` is homogeneous, so the minimiser lies on the simplex) the model
   ``q(y) = 1/2 y'Hy + c'y`` with ``H = V' diag(w/m^2) V + diag(pi/z^2)`` and ``c = W - g - H z``
   (``g = grad L(z)``; the ``Y`` Gram block of ``H`` is summed from float32 products, and taking
   ``H z`` from that same ``H``, not ``g``, keeps the step exact in the gradient, so the float32
   error slows nothing but the last digits) is minimised over ``y >= 0`` by the
   Lawson-Hanson active-set method warm-started at the support of ``z``; ``y - z`` is searched
   by backtracking (Armijo) on ``phi`` (one forward product per step: ``m`` is linear in ``z``),
   then the point is renormalised onto the simplex. Coordinates at 0 whose gradient is below
   ``W (1 - 1e-3)`` stay out of the QP (and of the ``O(n k^2)`` Gram matrix) for that step;
   the certificate below sees every coordinate, so a wrong exclusion is undone next step.
3. **Certificate.** For ``f`` on the simplex and any maximiser ``f*``, Jensen's inequality on
   the concave ``log`` gives (``g.f = W`` for a mixture likelihood)

   .. math::

       L(f^*) - L(f) = \\sum_r w_r \\log\\frac{m_r(f^*)}{m_r(f)} + \\sum_x \\pi_x
       \\log\\frac{f^*_x}{f_x} \\le W \\log\\frac{g \\cdot f^*}{W} \\le W \\log\\frac{\\max_x g_x}{W},

   which is at most the Frank-Wolfe gap ``max_x g_x - g.f`` (``log t <= t - 1``). The
   reported ``optimality_gap`` is this bound in nats, computed in float64 on the full domain
   (its rounding error is about ``W`` times the relative error of ``g``, ~1e-10 nats at
   ``n = 1e5``); the solver stops by the one rule of :mod:`._fit` (this bound ``<= tol |L|``). Pinned reports are rows ``e_x`` of the same
   mixture, so the bound covers them.

The existing EM (:func:`mechanisms._unary_em.unary_em_full`) is kept as the cross-check of
this solver in the tests.
"""
from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ._mle import _rows_inputs, _unary_full_inputs, _unary_params, _vector, _xlogy, unary_composite_mle
from ._fit import SimplexFit, check_options, stop
from ._unary_em import _Packed

__all__ = ["binary_rows_mle", "unary_mle_full", "unary_mle_patterns"]

#: Rows per block of the Gram matrix ``Y' diag(s) Y`` (float32 products, float64 sums).
_GRAM_BLOCK = 8192
#: Tile of the Gram products (see :func:`_gram_add`).
_TILE = 64
#: A coordinate at 0 joins the Newton QP when its gradient exceeds ``(1 - _ENTER) W``.
_ENTER = 1e-3
#: Armijo constant and the number of halvings of the line search.
_ARMIJO, _HALVINGS = 1e-4, 60


class _Rows:
    """The reduced likelihood rows ``V = [low_A + delta_A Y_A | low_G]`` and their products.

    ``packed`` holds ``Y_A`` as ``np.packbits(Y_A, axis=1)`` (``n_active`` bits per row).
    """

    def __init__(self, packed: np.ndarray, w: np.ndarray, lo: np.ndarray, delta: np.ndarray, n_active: int) -> None:
        self.packed, self.w, self.lo, self.ka = packed, w, lo, n_active
        self.kernel = _Packed(packed=packed, d=n_active) if n_active else None
        self.dA = delta[:n_active]

    def forward(self, z: np.ndarray) -> np.ndarray:
        base = float(self.lo @ z)
        if self.kernel is None:
            return np.full(self.w.size, base)
        return self.kernel.forward(self.dA * z[: self.ka]) + base

    def backward(self, u: np.ndarray) -> np.ndarray:
        out = self.lo * float(u.sum())
        if self.kernel is not None:
            out[: self.ka] += self.dA * self.kernel.backward(u)
        return out

    def hessian(self, s: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """``V[:, cols]' diag(s) V[:, cols]`` (float64; the ``Y`` Gram block in float32 row blocks)."""
        lo = self.lo[cols]
        h = float(s.sum()) * np.outer(lo, lo)
        act = cols[cols < self.ka]
        if act.size and self.kernel is not None:  # act is empty when no item is active (no kernel)
            pos = np.flatnonzero(cols < self.ka)
            t = np.zeros(cols.size)
            t[pos] = self.dA[act] * self.kernel.backward(s)[act]
            h += np.outer(lo, t) + np.outer(t, lo)
            gram = np.zeros((act.size, act.size))
            root = np.sqrt(s).astype(np.float32)
            every = act.size == self.ka
            for i in range(0, s.size, _GRAM_BLOCK):
                bits = np.unpackbits(self.packed[i:i + _GRAM_BLOCK], axis=1, count=self.ka)
                block = (bits if every else bits[:, act]).astype(np.float32)
                block *= root[i:i + _GRAM_BLOCK, None]
                _gram_add(gram, block)
            d = self.dA[act]
            h[np.ix_(pos, pos)] += gram * d[:, None] * d[None, :]
        return h


def _gram_add(gram: np.ndarray, z: np.ndarray) -> None:
    """``gram += z' z`` by ``_TILE``-cubed float32 products batched over row blocks.

    Each BLAS call multiplies ``_TILE x _TILE`` tiles over ``_TILE`` rows, at OpenBLAS's
    single-thread threshold (``m n k <= 2^18``): on a shared machine a multi-threaded product
    waits for a descheduled core (10-30x slower than one thread, measured on 2 cores with 8
    jobs), and a single-threaded one keeps the cost to one core.
    """
    r, c = z.shape
    if r % _TILE:
        z = np.concatenate([z, np.zeros((_TILE - r % _TILE, c), dtype=z.dtype)])
    zb = z.reshape(-1, _TILE, c)
    for a0 in range(0, c, _TILE):
        za = zb[:, :, a0:a0 + _TILE].transpose(0, 2, 1)
        for b0 in range(a0, c, _TILE):
            tile = np.matmul(za, zb[:, :, b0:b0 + _TILE]).sum(axis=0, dtype=np.float64)
            gram[a0:a0 + _TILE, b0:b0 + _TILE] += tile
            if b0 != a0:
                gram[b0:b0 + _TILE, a0:a0 + _TILE] += tile.T


def _nnqp(h: np.ndarray, c: np.ndarray, y: np.ndarray, max_iter: int) -> np.ndarray:
    """Lawson-Hanson active set for ``min 1/2 y'Hy + c'y`` over ``y >= 0`` from a feasible ``y``.

    The passive set starts at the support of ``y``; each pass solves the equality-constrained
    problem on it (LU, with a small ridge if ``H`` is numerically singular), steps back to
    the boundary if a coordinate would turn negative, and otherwise adds the coordinate with
    the most negative gradient. Every iterate is feasible and ``q`` never increases, so a
    capped run still returns a descent point.
    """
    tol = 1e-12 * max(1.0, float(np.max(np.abs(c))))
    free = y > 0
    for _ in range(max_iter):
        idx = np.flatnonzero(free)
        z = np.zeros_like(y)
        if idx.size:
            z[idx] = _solve(h[np.ix_(idx, idx)], -c[idx])
        if np.all(z[idx] > 0):
            y = z
            grad = h @ y + c
            grad[free] = 0.0
            j = int(np.argmin(grad))
            if grad[j] >= -tol:
                return y
            free[j] = True
            continue
        neg = idx[z[idx] <= 0]
        ratios = y[neg] / (y[neg] - z[neg])
        alpha = float(np.min(ratios))
        y = y + alpha * (z - y)
        y[neg[ratios <= alpha * (1.0 + 1e-12)]] = 0.0  # the blocking coordinate(s) leave the passive set
        y[y < 0] = 0.0
        free &= y > 0
    return y


def _solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a^-1 b`` for a symmetric positive semi-definite ``a`` (one LU; a small ridge if singular)."""
    ridge = 0.0
    scale = float(np.max(np.abs(np.diag(a)))) or 1.0
    for _ in range(6):
        try:
            x = np.linalg.solve(a + ridge * np.eye(a.shape[0]) if ridge else a, b)
            if np.all(np.isfinite(x)):
                return x
        except np.linalg.LinAlgError:
            pass
        ridge = max(ridge * 100.0, 1e-13 * scale)
    return np.linalg.lstsq(a, b, rcond=None)[0]


def _objective(m: np.ndarray, z: np.ndarray, w: np.ndarray, pin: np.ndarray, pinpos: np.ndarray) -> float:
    """``L(z)`` without constants (``-inf`` off the domain)."""
    if np.any(m <= 0) or np.any(z[pinpos] <= 0):
        return -np.inf
    return float(w @ np.log(m)) + float(pin[pinpos] @ np.log(z[pinpos]))


def _newton(rows: _Rows, pin: np.ndarray, z: np.ndarray, tol: float, max_iter: int, constant: float):
    """Projected Newton on the reduced problem; returns ``(z, iterations, converged)``.

    Stops by the one rule (:func:`._fit.stop`: the certified gap ``<= tol |L|``, converged), after ``max_iter`` iterations, or when two iterations in a row
    do not raise the likelihood (float64 resolves no more progress); returns the point with the
    smallest gap seen.
    """
    w, total = rows.w, float(rows.w.sum() + pin.sum())
    pinpos = pin > 0
    m = rows.forward(z)
    ll = _objective(m, z, w, pin, pinpos)
    it, converged, best, fails, previous = 0, False, None, 0, None
    while True:
        ratio = w / m
        g = rows.backward(ratio)
        g[pinpos] += pin[pinpos] / z[pinpos]
        gap = total * np.log(float(np.max(g)) / total)
        if best is None or gap < best[1]:
            best = (z, gap)
        # no progress = the likelihood (monotone: backtracking, else an EM step) stops rising within float64's
        # resolution; the gap alone may rise for a step or two far from the optimum, which is progress
        if previous is not None:
            fails = fails + 1 if ll <= previous + 1e-15 * (abs(previous) + total) else 0
        previous = ll
        if stop(gap, ll + constant, tol):
            converged = True
            break
        if fails >= 2 or it >= max_iter:
            break
        it += 1
        z, m, ll = _step(rows, pin, pinpos, z, m, ll, g, ratio, total)
    return best[0], it, converged


def _step(rows: _Rows, pin, pinpos, z, m, ll, g, ratio, total):
    """One Newton step (QP + backtracking on ``phi``), or an EM step if it makes no progress."""
    w = rows.w
    cols = np.flatnonzero((z > 0) | (g > (1.0 - _ENTER) * total))
    h = rows.hessian(ratio / m, cols)
    pc = np.flatnonzero(pinpos[cols])
    h[pc, pc] += pin[cols[pc]] / z[cols[pc]] ** 2
    y = np.zeros(z.size)
    zc = z[cols]
    y[cols] = _nnqp(h, (total - g[cols]) - h @ zc, zc.copy(), 4 * cols.size + 50)  # c = grad phi - H z
    p = y - z
    mp = rows.forward(p)
    slope = float((total - g) @ p)  # directional derivative of phi = -L + W sum(z)
    phi0, t, new = -ll + total * float(z.sum()), 1.0, None
    # below this predicted change float64 cannot compare the two likelihoods: take the full step
    # (the gap at the new point decides whether it is kept, see _newton)
    resolution = 1e-12 * (abs(ll) + total)
    for _ in range(_HALVINGS if slope < 0 else 0):
        zt, mt = z + t * p, m + t * mp
        zt[zt < 0] = 0.0
        lt = _objective(mt, zt, w, pin, pinpos)
        phi = -lt + total * float(zt.sum())
        if phi <= phi0 + _ARMIJO * t * slope or (-slope <= resolution and phi <= phi0 + resolution):
            new = (zt, mt, lt)
            break
        t *= 0.5
    if new is None:  # no Newton progress: one EM step (monotone) instead
        zt = z * g / total
        mt = rows.forward(zt)
        new = (zt, mt, _objective(mt, zt, w, pin, pinpos))
    scale = float(new[0].sum())
    zn, mn = new[0] / scale, new[1] / scale
    return zn, mn, _objective(mn, zn, w, pin, pinpos)


def _compress(packed: np.ndarray, w: np.ndarray):
    """Merge identical packed rows (when they fit in 64 bits) into weights."""
    if packed.shape[1] > 8 or packed.shape[0] < 2:
        return packed, w
    key = np.zeros(packed.shape[0], dtype=np.uint64)
    for b in range(packed.shape[1]):
        key = (key << np.uint64(8)) | packed[:, b].astype(np.uint64)
    uniq, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    if uniq.size > 0.8 * packed.shape[0]:
        return packed, w
    return packed[first], np.bincount(inverse.ravel(), weights=w, minlength=uniq.size)


def binary_rows_mle(rows: npt.ArrayLike, low: npt.ArrayLike, high: npt.ArrayLike, *,
                    weights: npt.ArrayLike | None = None, pinned: npt.ArrayLike | None = None, constant: float = 0.0,
                    tol: float = 1e-15, max_iter: int = 200, init: npt.ArrayLike | None = None) -> SimplexFit:
    """MLE for reports whose likelihood takes two values per input, by projected Newton.

    Same model and arguments as :func:`mechanisms._unary_em.binary_rows_em` (``Pr(y_r | x) =
    C_r (low_x + (high_x - low_x) Y[r, x])``, pinned reports adding ``pinned_x log f_x``);
    the method, reduction and certificate are described in the module docstring. Cost per
    Newton iteration: a few passes over the packed active columns (``O(n k_A / 8)`` look-ups)
    and one Gram matrix ``O(n k^2)`` over the ``k`` coordinates in play (float32 BLAS).

    Parameters
    ----------
    rows : array_like of bool or 0/1, shape (n, d)
    low, high : array_like of float, shape (d,)
        Non-negative.
    weights : array_like of float, shape (n,), optional
    pinned : array_like of float, shape (d,), optional
    constant : float
        ``sum_r w_r log C_r`` (nats), added to the reported log-likelihood.
    tol : float, default 1e-15
        The one stopping rule (:mod:`._fit`): stop when the certified bound on
        ``L(MLE) - L(f)`` is ``<= tol |L(f)|``.
    max_iter : int, default 200
        Cap on Newton iterations (each: one Gram matrix, one QP, a line search). The solver
        also stops when two iterations in a row do not lower the certified gap (float64
        resolves no more progress), keeping the point with the smallest gap.
    init : array_like, shape (d,), optional
        Start on the simplex (default uniform); zeros are allowed where no report is pinned.

    Returns
    -------
    SimplexFit
        ``likelihood == "full"``, ``method == "newton"``, ``iterations`` = Newton iterations,
        ``optimality_gap`` the certificate (nats), ``converged`` True if the rule fired.

    Raises
    ------
    ValueError
        Bad shapes, negative entries, a row impossible under every input, bad tolerances.

    References
    ----------
    ULDP paper Sec. 2.5; Kim, Carbonetto, Stephens & Anitescu, "A fast algorithm for maximum
    likelihood estimation of mixture proportions using sequential quadratic programming",
    J. Comput. Graph. Stat. 29 (2020); Lawson & Hanson, *Solving Least Squares Problems*
    (1974), ch. 23 (active set); Böhning (1999) for the gradient bound.
    """
    tols = check_options(tol, max_iter)
    y, nrow, d, lo, hi, w, pin = _rows_inputs(rows, low, high, weights, pinned)
    keep = w > 0
    yb = y.astype(bool, copy=False)[keep]
    active = np.flatnonzero(yb.any(axis=0)) if yb.shape[0] else np.zeros(0, dtype=np.intp)
    packed = np.packbits(yb[:, active], axis=1)
    return _reduced_mle(packed, active, w[keep], lo, hi - lo, pin, init, float(constant), *tols)


def _reduced_mle(packed, active, w, lo, delta, pin, init, constant, tol, max_iter) -> SimplexFit:
    """Group the idle columns, run :func:`_newton`, expand, certify (see the module docstring).

    ``packed``: the rows restricted to the domain columns ``active`` (in that order), packed;
    ``lo``, ``delta``, ``pin`` and ``init`` are over the whole domain.
    """
    d = lo.size
    idle = np.setdiff1d(np.arange(d), active)
    levels, group = np.unique(lo[idle], return_inverse=True)
    group = group.ravel()
    pin_group = np.bincount(group, weights=pin[idle], minlength=levels.size)
    pa, wa = _compress(packed, w)
    red = _Rows(np.ascontiguousarray(pa), wa, np.concatenate([lo[active], levels]),
                np.concatenate([delta[active], np.zeros(levels.size)]), active.size)
    rpin = np.concatenate([pin[active], pin_group])
    f0 = np.full(d, 1.0 / d) if init is None else _vector(init, "init", d)
    if np.any(f0 < 0) or not f0.sum() > 0:
        raise ValueError("init must be >= 0 with a positive sum")
    f0 = f0 / f0.sum()
    z = np.concatenate([f0[active], np.bincount(group, weights=f0[idle], minlength=levels.size)])
    if np.any(red.forward(z) <= 0) or np.any((z == 0) & (rpin > 0)):
        z = 0.5 * z + 0.5 / z.size  # keep every row possible (mix with uniform)
        if np.any(red.forward(z) <= 0):
            raise ValueError("rows: a report with positive weight has likelihood 0 under every input")
    z, it, conv = _newton(red, rpin, z, tol, max_iter, constant)  # |L| up to the split terms
    f = _expand(z, active, idle, group, pin, pin_group, d)
    # the certificate and the likelihood on the full domain, at the returned f
    zf = np.concatenate([f[active], np.bincount(group, weights=f[idle], minlength=levels.size)])
    m = red.forward(zf)
    ratio = red.w / m
    g = np.empty(d)
    g[active] = red.backward(ratio)[: active.size]
    g[idle] = levels[group] * float(ratio.sum())
    ppos = pin > 0
    g[ppos] += pin[ppos] / f[ppos]
    total = float(red.w.sum() + pin.sum())
    gap = float(max(0.0, total * np.log(float(np.max(g)) / total)))
    ll = float(red.w @ np.log(m)) + float(np.sum(_xlogy(pin, f))) + constant
    return SimplexFit(frequency=f, log_likelihood=ll, iterations=it, converged=conv, optimality_gap=gap,
                      method="newton", n=total, likelihood="full")


def _expand(z, active, idle, group, pin, pin_group, d) -> np.ndarray:
    """Full-domain frequencies from the reduced variables (group totals split by the pinned counts)."""
    f = np.zeros(d)
    f[active] = z[: active.size]
    if idle.size:
        totals = z[active.size:]
        has = pin_group[group] > 0
        share = np.where(has, pin[idle] / np.where(has, pin_group[group], 1.0),
                         1.0 / np.bincount(group, minlength=totals.size)[group])
        f[idle] = totals[group] * share
    f = np.maximum(f, 0.0)
    return f / f.sum()


def unary_mle_full(reports: npt.ArrayLike, a: npt.ArrayLike, b: npt.ArrayLike, *,
                   weights: npt.ArrayLike | None = None, tol: float = 1e-15, max_iter: int = 200,
                   init: npt.ArrayLike | None = None) -> SimplexFit:
    """The MLE of a unary encoding from the full reports, by projected Newton, with a certificate.

    The likelihood, pinned reports and constants are those of
    :func:`mechanisms._unary_em.unary_em_full` (ULDP eq. 8; a bit with ``b_j = 0`` set to 1
    pins the report to ``x = j``, eq. 10); the maximiser is found by :func:`binary_rows_mle`
    from the composite MLE (:func:`mechanisms._mle.unary_composite_mle`), with zeros kept.

    Parameters
    ----------
    reports : array_like of bool, shape (n, d)
    a, b : array_like of float, shape (d,) or scalar
        ``0 <= b_j < a_j <= 1``.
    weights : array_like of float, shape (n,), optional
    tol, max_iter, init
        As in :func:`binary_rows_mle`.

    Returns
    -------
    SimplexFit
        ``likelihood == "full"``; ``log_likelihood`` is the exact ``sum_r w_r log Pr(y_r)``
        in nats, ``optimality_gap`` certifies ``L(MLE) - log_likelihood <= optimality_gap``.

    Raises
    ------
    ValueError
        Bad shapes or probabilities, or a report impossible under every input.

    References
    ----------
    ULDP paper eqs. (8)-(10) and Sec. 2.5; see :func:`binary_rows_mle`.
    """
    y, w, low, high, pinned, constant, comp = _unary_full_inputs(reports, a, b, weights)
    start = comp if init is None else init
    return binary_rows_mle(y, low, high, weights=w, pinned=pinned, constant=constant, tol=tol,
                           max_iter=max_iter, init=start)


def unary_mle_patterns(patterns: np.ndarray, columns: npt.ArrayLike, pinned: npt.ArrayLike,
                       bit_counts: npt.ArrayLike, n: int, a: npt.ArrayLike, b: npt.ArrayLike, *, tol: float = 1e-15,
                       max_iter: int = 200, init: npt.ArrayLike | None = None) -> SimplexFit:
    """:func:`unary_mle_full` from compact sufficient data (the uRAP runtime's path).

    For a unary encoding whose bits outside ``columns`` have ``b_j = 0`` (uRAP's X_N, eq. 10),
    a report with such a bit set is pinned to that input, and every other report is described
    by its bits on ``columns`` (X_S). This takes those patterns packed, the pinned counts and
    the per-bit counts of all reports, and returns the same MLE, log-likelihood and
    certificate as :func:`unary_mle_full` on the full reports, without an ``n x |X|`` matrix.

    Parameters
    ----------
    patterns : ndarray of uint8, shape (n_p, ceil(len(columns) / 8))
        ``np.packbits(Y[:, columns], axis=1)`` for the ``n_p`` reports that are not pinned.
    columns : array_like of int, shape (k,)
        Domain indices of the pattern bits; ``0 < b_j < 1`` there, ``b_j = 0`` elsewhere.
    pinned : array_like of float, shape (d,)
        Pinned reports per input (0 on ``columns``).
    bit_counts : array_like of float, shape (d,)
        Reports with bit ``j`` set, over all ``n`` reports.
    n : int
        Number of reports (pinned or not).
    a, b : array_like of float, shape (d,) or scalar
        ``0 <= b_j < a_j <= 1``.
    tol, max_iter, init
        As in :func:`binary_rows_mle` (default start: the composite MLE).

    Returns
    -------
    SimplexFit

    Raises
    ------
    ValueError
        Inconsistent shapes, counts or probabilities.

    References
    ----------
    ULDP paper eqs. (8)-(10) and Sec. 2.5; see :func:`binary_rows_mle`.
    """
    tols = check_options(tol, max_iter)
    pin, ones = np.asarray(pinned, dtype=np.float64), np.asarray(bit_counts, dtype=np.float64)
    d = pin.size
    a, b = _unary_params(a, b, d)
    cols = np.asarray(columns, dtype=np.intp).reshape(-1)
    pat = np.asarray(patterns, dtype=np.uint8)
    on = np.zeros(d, dtype=bool)
    on[cols] = True
    if (pat.ndim != 2 or pat.shape[1] != (cols.size + 7) // 8 or ones.shape != (d,) or np.any(pin[on] != 0)
            or np.any(b[on] <= 0) or np.any(b[on] >= 1) or np.any(b[~on] != 0)
            or np.any(ones[~on] != pin[~on]) or pat.shape[0] + pin.sum() != n):
        raise ValueError("patterns, columns, pinned, bit_counts, n: inconsistent uRAP sufficient data")
    constant = float(np.sum(_xlogy(ones[on], b[on])) + np.sum(_xlogy(n - ones[on], 1.0 - b[on]))
                     + np.sum(_xlogy(pin, a)))
    low = np.where(b < 1, (1.0 - a) / (1.0 - b), 0.0)
    high = np.where(on, a / np.where(on, b, 1.0), 0.0)
    start = unary_composite_mle(ones, n, a, b).frequency if init is None else init
    w = np.ones(pat.shape[0])
    set_cols = _Packed(packed=pat, d=cols.size).backward(w) > 0 if pat.shape[0] else np.zeros(cols.size, bool)
    if not set_cols.all():  # a column never set is idle: repack without it
        pat = np.packbits(np.unpackbits(pat, axis=1, count=cols.size)[:, set_cols], axis=1)
        cols = cols[set_cols]
    return _reduced_mle(pat, cols, w, low, high - low, pin, start, constant, *tols)

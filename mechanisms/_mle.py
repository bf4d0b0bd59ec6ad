"""Maximum-likelihood distribution estimators at the machine's bound (numpy only).

The ULDP paper's "EM reconstruction" (Murakami & Kawamoto, USENIX Security 2019,
Sec. 2.5) computes the maximum-likelihood estimate (MLE) of the input distribution
``f`` on the probability simplex. For the channels of this project the MLE has far
cheaper forms than the generic EM of :func:`mechanisms._estimators.em_simplex`:

* **k-RR and uRR: exact, non-iterative.** The probability of output ``y`` is affine in
  the single coordinate ``f_y`` (RR eq. 2 of the ULDP paper; uRR eq. 6), so the
  log-likelihood is *separable* and its KKT conditions are solved by one monotone
  root (water-filling): :func:`water_filling_mle`, :func:`rr_mle`, :func:`urr_mle`.
  Cost ``O(k log k)`` (one sort; an ``O(k)`` expected-time selection variant exists
  but the sort is already well under a millisecond at ``k = 10**4``).
* **Unary encodings** (RAPPOR, uRAP eqs. 8-10, OUE/IDUE: bit ``j`` is 1 with
  probability ``a_j`` if ``j = x`` else ``b_j``, independently given ``x``):

  - the **composite (per-bit) likelihood** ``sum_j s_j log m_j + (n - s_j) log(1 - m_j)``
    with ``m_j = b_j + (a_j - b_j) f_j`` uses only the per-bit counts ``s_j``; it
    treats the ``n d`` bits as independent observations, i.e. it ignores that the
    ``d`` bits of one report share one input. It is separable too:
    :func:`unary_composite_mle` maximises it exactly (a monotone root in the
    multiplier, ``O(d)`` per evaluation) and :func:`mechanisms._unary_em.unary_em`
    runs the EM on it with ``O(d)`` work per iteration. It is a consistent estimator
    but **not** the MLE.
  - the **full-report likelihood** ``sum_r log Pr(y_r | f)`` with ``Pr(y | x) =
    prod_j Pr(y_j | x)`` (eq. 8) is the true likelihood; its maximiser is the MLE the
    paper's EM reconstruction computes. :func:`mechanisms._unary_em.unary_em_full`
    runs EM on it with two matrix-vector products of the ``n x d`` report matrix per
    iteration (``O(n d)``, BLAS), warm-started at the composite MLE and
    SQUAREM-accelerated.

Units: ``frequency`` is a fraction of users; ``log_likelihood`` is in nats, on counts
(not divided by ``n``), including every constant (the multinomial coefficient of the
counts excepted), so it equals ``sum_r w_r log Pr(report_r)`` under the estimate.
"""
from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ._fit import SimplexFit

__all__ = ["water_filling_mle", "rr_mle", "urr_mle", "unary_composite_mle"]


# --------------------------------------------------------------------------- helpers
def _vector(x, name: str, size: int | None = None) -> np.ndarray:
    v = np.asarray(x, dtype=np.float64)
    if v.ndim != 1 or v.size == 0 or (size is not None and v.size != size):
        want = f"({size},)" if size is not None else "a non-empty 1-D"
        raise ValueError(f"{name} must be {want} array (got shape {v.shape})")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must be finite")
    return v


def _counts(counts, name: str = "counts") -> np.ndarray:
    c = _vector(counts, name)
    if np.any(c < 0) or c.sum() <= 0:
        raise ValueError(f"{name} must be >= 0 with a positive sum (got sum {c.sum()!r})")
    return c


def _xlogy(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``x log y`` with ``0 log 0 = 0`` (and ``x log 0 = -inf`` for ``x > 0``)."""
    out = np.zeros(np.broadcast(x, y).shape)
    pos = np.broadcast_to(x > 0, out.shape)
    with np.errstate(divide="ignore"):
        out[pos] = np.broadcast_to(x, out.shape)[pos] * np.log(np.broadcast_to(y, out.shape)[pos])
    return out


# --------------------------------------------------------------------------- water-filling
def water_filling_mle(counts: npt.ArrayLike, intercept: npt.ArrayLike, slope: npt.ArrayLike) -> SimplexFit:
    """Exact MLE of ``L(f) = sum_y t_y log(alpha_y + beta_y f_y)`` on the simplex.

    Every term depends on one coordinate, so with the multiplier ``lambda`` of
    ``sum f = 1`` the KKT conditions read ``t_y beta_y / (alpha_y + beta_y f_y) =
    lambda`` where ``f_y > 0`` and ``<= lambda`` where ``f_y = 0``, i.e.::

        f_y(tau) = max(0, t_y tau - alpha_y / beta_y),   tau = 1 / lambda,

    and ``h(tau) = sum_y f_y(tau)`` is continuous, piecewise linear and non-decreasing
    from ``h(0) = 0``, so ``h(tau) = 1`` has one root. Coordinate ``y`` enters at the
    breakpoint ``tau_y = (alpha_y / beta_y) / t_y``; after sorting the breakpoints,
    with the ``m`` first ones active, ``tau = (1 + sum r) / (sum t)`` over them.
    ``O(K log K)``.

    Parameters
    ----------
    counts : array_like of float, shape (K,)
        ``t_y >= 0``: how many users reported ``y`` (counts; any non-negative weights).
    intercept, slope : array_like of float, shape (K,) or scalar
        ``alpha_y >= 0`` and ``beta_y > 0`` with ``Pr(Y = y) = alpha_y + beta_y f_y``
        on the simplex (probabilities).

    Returns
    -------
    SimplexFit

    Raises
    ------
    ValueError
        Counts negative, not finite or all zero; ``alpha < 0`` or ``beta <= 0``.

    References
    ----------
    Water-filling: Boyd & Vandenberghe, *Convex Optimization* (2004), Example 5.2.
    """
    t = _counts(counts)
    alpha = np.broadcast_to(np.asarray(intercept, dtype=np.float64), t.shape)
    beta = np.broadcast_to(np.asarray(slope, dtype=np.float64), t.shape)
    if not (np.all(np.isfinite(alpha)) and np.all(alpha >= 0)):
        raise ValueError("intercept must be finite and >= 0")
    if not (np.all(np.isfinite(beta)) and np.all(beta > 0)):
        raise ValueError("slope must be finite and > 0")
    r = alpha / beta
    pos = np.flatnonzero(t > 0)
    tp, rp = t[pos], r[pos]
    order = np.argsort(rp / tp, kind="stable")
    ts, rs = tp[order], rp[order]
    brk = rs / ts
    csum_t, csum_r = np.cumsum(ts), np.cumsum(rs)
    # h at each breakpoint, with the coordinates before it active
    h = brk * np.concatenate(([0.0], csum_t[:-1])) - np.concatenate(([0.0], csum_r[:-1]))
    m = max(1, int(np.count_nonzero(h < 1.0)))
    tau = (1.0 + csum_r[m - 1]) / csum_t[m - 1]
    f = np.zeros(t.size)
    f[pos] = np.maximum(tp * tau - rp, 0.0)
    f /= f.sum()
    ll = float(np.sum(_xlogy(t, alpha + beta * f)))
    return SimplexFit(frequency=f, log_likelihood=ll, iterations=0, converged=True, optimality_gap=0.0,
                      method="water-filling", n=float(t.sum()), lagrange_multiplier=1.0 / tau)


def rr_mle(counts: npt.ArrayLike, mu: float, nu: float) -> SimplexFit:
    """Exact MLE of the k-ary randomized response (no iterations).

    With ``Q[x, y] = mu`` if ``y = x`` else ``nu`` (ULDP paper eq. 2; ``mu`` is the
    keep probability, ``nu = (1 - mu)/(k - 1)``), on the simplex ``Pr(Y = y) =
    nu + (mu - nu) f_y``, so ``L(f) = sum_y c_y log(nu + (mu - nu) f_y)`` and the KKT
    solution is ``f_y = max(0, c_y / lambda - nu / (mu - nu))`` with one monotone root
    ``lambda`` making ``sum f = 1`` (:func:`water_filling_mle`); equivalently
    ``nu + (mu - nu) f_y = max(nu, (mu - nu) c_y / lambda)``. Where every
    ``f_y > 0`` it is the empirical estimate (eq. 19 of the PIE paper) and
    ``lambda = (mu - nu) n``.

    Parameters
    ----------
    counts : array_like of float, shape (k,)
        Output counts ``c_y``.
    mu, nu : float
        ``0 <= nu < mu <= 1`` (probabilities).

    Returns
    -------
    SimplexFit

    Raises
    ------
    ValueError
        Bad counts, or not ``0 <= nu < mu <= 1``.

    References
    ----------
    Murakami & Kawamoto (USENIX Security 2019), eq. (2) and Sec. 2.5 (the MLE on the
    simplex that EM reconstruction converges to).
    """
    mu, nu = float(mu), float(nu)
    if not (0.0 <= nu < mu <= 1.0):
        raise ValueError(f"mu, nu: need 0 <= nu < mu <= 1 (got mu={mu!r}, nu={nu!r})")
    return water_filling_mle(counts, nu, mu - nu)


def urr_mle(counts: npt.ArrayLike, sensitive: npt.ArrayLike, c1: float, c2: float, c3: float) -> SimplexFit:
    """Exact MLE of the (X_S, epsilon)-utility-optimized RR (no iterations).

    Derivation. By eq. (6), for an output ``y`` in ``X_S`` (protected, ``Y_P = X_S``)
    ``Pr(Y = y) = c1 f_y + c2 sum_{x != y} f_x = c2 + (c1 - c2) f_y`` (every other
    input, sensitive or not, reaches ``y`` with ``c2``), and for ``y`` in ``X_N``
    (invertible outputs, ``Y_I = X_N``) ``Pr(Y = y) = c3 f_y`` (only ``x = y``
    reaches it). So::

        L(f) = sum_{y in X_S} t_y log(c2 + (c1 - c2) f_y) + sum_{y in X_N} t_y log(c3 f_y)

    is separable, and the KKT conditions with multiplier ``lambda = 1 / tau`` give

    * on ``X_N``: ``t_y / f_y = lambda``, i.e. ``f_y = t_y tau``: the X_N outputs fix
      the shape of ``f`` on X_N directly (proportional to their counts, the
      empirical estimate (35) up to the common scale);
    * on ``X_S``: ``f_y = max(0, t_y tau - c2 / (c1 - c2))``, a water-filling;

    with ``tau`` the one root of ``T_N tau + sum_{X_S} max(0, t_y tau - c2/(c1 - c2))
    = 1`` (``T_N`` = number of invertible reports: the offset of the water-filling).
    With ``X_S = X`` it is :func:`rr_mle` with ``mu = c1``, ``nu = c2``.

    Parameters
    ----------
    counts : array_like of float, shape (|X|,)
        Output counts ``t_y``.
    sensitive : array_like of bool, shape (|X|,), or of int
        Mask or indices of ``X_S``.
    c1, c2, c3 : float
        The uRR probabilities (eq. 6): ``c1 > c2 >= 0`` and ``c3 > 0`` when X_N is not empty.

    Returns
    -------
    SimplexFit

    Raises
    ------
    ValueError
        Bad counts, mask or probabilities.

    References
    ----------
    Murakami & Kawamoto (USENIX Security 2019, full version), Def. 3, eq. (6); the
    empirical estimate eq. (35); Sec. 2.5 (EM reconstruction = MLE on the simplex).
    """
    t = _counts(counts)
    k = t.size
    s = np.asarray(sensitive)
    if s.dtype == bool:
        if s.shape != (k,):
            raise ValueError(f"sensitive: a boolean mask must have shape ({k},) (got {s.shape})")
        mask = s.copy()
    else:
        idx = s.reshape(-1).astype(np.int64)
        if idx.size == 0 or idx.min() < 0 or idx.max() >= k or np.unique(idx).size != idx.size:
            raise ValueError(f"sensitive: need distinct indices in [0, {k}) (got {s!r})")
        mask = np.zeros(k, dtype=bool)
        mask[idx] = True
    if not mask.any():
        raise ValueError("sensitive: X_S must not be empty")
    c1, c2, c3 = float(c1), float(c2), float(c3)
    if not (0.0 <= c2 < c1 <= 1.0) or (not mask.all() and not (0.0 < c3 <= 1.0)):
        raise ValueError(f"c1, c2, c3: need 0 <= c2 < c1 <= 1 and 0 < c3 <= 1 (got {c1!r}, {c2!r}, {c3!r})")
    return water_filling_mle(t, np.where(mask, c2, 0.0), np.where(mask, c1 - c2, c3))


# --------------------------------------------------------------------------- unary: composite
def _unary_params(a, b, d: int) -> tuple[np.ndarray, np.ndarray]:
    a = np.broadcast_to(np.asarray(a, dtype=np.float64), (d,)).copy()
    b = np.broadcast_to(np.asarray(b, dtype=np.float64), (d,)).copy()
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("a, b must be finite")
    if np.any(b < 0) or np.any(a > 1) or np.any(a <= b):
        raise ValueError("a, b: need 0 <= b_j < a_j <= 1 for every bit j")
    return a, b


def _composite_inputs(bit_counts: npt.ArrayLike, n: float, a: npt.ArrayLike, b: npt.ArrayLike
                      ) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
    s = _vector(bit_counts, "bit_counts")
    n = float(n)
    if not (n > 0) or np.any(s < 0) or np.any(s > n):
        raise ValueError(f"bit_counts: need 0 <= s_j <= n with n > 0 (got n={n!r})")
    a, b = _unary_params(a, b, s.size)
    if np.any((s > 0) & (a == 0)) or np.any((s < n) & (b == 1)):
        raise ValueError("bit_counts: a count is impossible under every input (a_j = 0 or b_j = 1)")
    return s, n, a, b


def _composite_frequency(lam: float, s, n, a, b) -> np.ndarray:
    """Per-bit maximiser of ``phi_j(f) - lam f`` (the root of a quadratic), clipped to [0, 1]."""
    delta = a - b
    kappa = lam / delta  # s/m - (n - s)/(1 - m) = kappa  <=>  kappa m^2 - (kappa + n) m + s = 0
    big = kappa + n
    disc = np.sqrt(np.maximum(big * big - 4.0 * kappa * s, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        m = np.where(big >= 0, 2.0 * s / (big + disc), (big - disc) / (2.0 * kappa))
    m = np.where(np.isfinite(m), m, s / n)
    return np.clip((m - b) / delta, 0.0, 1.0)


def unary_composite_mle(bit_counts: npt.ArrayLike, n: float, a: npt.ArrayLike, b: npt.ArrayLike) -> SimplexFit:
    """Exact maximiser of the per-bit composite likelihood of a unary encoding.

    ``L_c(f) = sum_j s_j log m_j + (n - s_j) log(1 - m_j)``, ``m_j = b_j + (a_j - b_j)
    f_j``, is a sum of concave one-coordinate terms ``phi_j``; the KKT conditions
    ``phi_j'(f_j) = lambda`` (``<= lambda`` at 0, ``>= lambda`` at 1) give ``f_j(lambda)``
    in closed form (the root in (0, 1) of ``kappa m^2 - (kappa + n) m + s_j = 0``,
    ``kappa = lambda / (a_j - b_j)``), non-increasing in ``lambda``; the one root of
    ``sum_j f_j(lambda) = 1`` is found by bracketing and bisection (``O(d)`` per step,
    at most ~200 steps). This is the fixed point of :func:`mechanisms._unary_em.unary_em`, not the
    full-report MLE.

    Parameters
    ----------
    bit_counts : array_like of float, shape (d,)
        ``s_j``: how many reports have bit ``j`` set (counts).
    n : float
        Number of reports.
    a, b : array_like of float, shape (d,) or scalar
        ``Pr(y_j = 1 | x = j) = a_j`` and ``Pr(y_j = 1 | x != j) = b_j``, ``0 <= b_j < a_j <= 1``.

    Returns
    -------
    SimplexFit
        ``log_likelihood`` is the composite one (nats).

    Raises
    ------
    ValueError
        Bad counts or probabilities.

    References
    ----------
    Composite likelihood: Varin, Reid & Firth, Statistica Sinica 21 (2011). Unary
    encodings: ULDP paper eqs. (8)-(10) (uRAP, RAPPOR), IDLDP paper Sec. V-B (IDUE).
    """
    s, n, a, b = _composite_inputs(bit_counts, n, a, b)

    def excess(lam: float) -> float:
        return float(_composite_frequency(lam, s, n, a, b).sum()) - 1.0

    lo, hi = -n, n
    for _ in range(400):
        if excess(hi) <= 0:
            break
        lo, hi = hi, hi * 4.0
    for _ in range(400):
        if excess(lo) >= 0:
            break
        hi, lo = lo, lo * 4.0
    for _ in range(400):
        mid = 0.5 * (lo + hi)
        if not (lo < mid < hi):
            break
        if excess(mid) > 0:
            lo = mid
        else:
            hi = mid
    lam = 0.5 * (lo + hi)
    f = _composite_frequency(lam, s, n, a, b)
    f /= f.sum()
    m = b + (a - b) * f
    ll = float(np.sum(_xlogy(s, m) + _xlogy(n - s, 1.0 - m)))
    return SimplexFit(frequency=f, log_likelihood=ll, iterations=0, converged=True, optimality_gap=0.0,
                      method="root", n=float(n), likelihood="composite", lagrange_multiplier=lam)


# --------------------------------------------------------------------------- unary: full reports
def _colsum(y: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """``w @ y`` for a boolean ``y`` without a float copy of the whole matrix (chunks of rows)."""
    if w is None:
        return np.count_nonzero(y, axis=0).astype(np.float64)
    out = np.zeros(y.shape[1])
    for i in range(0, y.shape[0], 8192):
        out += w[i:i + 8192] @ y[i:i + 8192]
    return out


def _rows_inputs(rows, low, high, weights, pinned):
    """Checked inputs of the full-report unary likelihood: ``(y, nrow, d, low, high, weights, pinned)``.

    ``rows`` is an ``(n, d)`` 0/1 array; ``low``/``high`` the per-column probabilities of a 1
    (length d, >= 0); ``weights`` (length n) and ``pinned`` (length d) non-negative and not all zero.

    Raises
    ------
    ValueError
        Naming the argument and the rule.
    """
    y = np.asarray(rows)
    if y.ndim != 2 or y.shape[1] == 0:
        raise ValueError(f"rows must be an (n, d) array (got shape {y.shape})")
    nrow, d = y.shape
    lo, hi = _vector(low, "low", d), _vector(high, "high", d)
    if np.any(lo < 0) or np.any(hi < 0):
        raise ValueError("low, high must be >= 0")
    w = np.ones(nrow) if weights is None or nrow == 0 else _vector(weights, "weights", nrow)
    pin = np.zeros(d) if pinned is None else _vector(pinned, "pinned", d)
    if np.any(w < 0) or np.any(pin < 0) or w.sum() + pin.sum() <= 0:
        raise ValueError("weights and pinned must be >= 0 and not all zero")
    if y.dtype != bool and nrow and not np.all((y == 0) | (y == 1)):
        raise ValueError("rows must hold only 0 and 1")
    return y, nrow, d, lo, hi, w, pin


def _unary_full_inputs(reports, a, b, weights):
    """Validate unary reports and split off the pinned ones (ULDP eq. 10).

    Returns ``(rows, weights, low, high, pinned, constant, composite)``: the non-pinned rows
    and their weights (None = 1), the two likelihood values per input, the pinned weight per
    input, ``sum_r w_r log C_r`` (nats) and the composite MLE (the start of both solvers).
    """
    y = np.asarray(reports)
    if y.ndim != 2 or y.shape[0] == 0 or y.shape[1] == 0:
        raise ValueError(f"reports must be a non-empty (n, d) array (got shape {y.shape})")
    if y.dtype != bool:
        if not np.all((y == 0) | (y == 1)):
            raise ValueError("reports must hold only 0 and 1")
        y = y.astype(bool)
    nrow, d = y.shape
    a, b = _unary_params(a, b, d)
    w = None if weights is None else _vector(weights, "weights", nrow)
    if w is not None and (np.any(w < 0) or w.sum() <= 0):
        raise ValueError("weights must be >= 0 and not all zero")
    wt = np.ones(nrow) if w is None else w
    pin_one, pin_zero = b == 0, b == 1
    pins = np.count_nonzero(y[:, pin_one], axis=1) + np.count_nonzero(~y[:, pin_zero], axis=1)
    if np.any((pins > 1) & (wt > 0)):
        raise ValueError("reports: a report with two pinning bits is impossible under every input")
    pinned_rows = pins == 1
    yp, wp = y[pinned_rows], wt[pinned_rows]
    col = np.argmax((yp & pin_one) | (~yp & pin_zero), axis=1)
    pinned = np.bincount(col, weights=wp, minlength=d)
    pin_ones = np.bincount(col, weights=wp * yp[np.arange(col.size), col], minlength=d)
    pin_zeros = pinned - pin_ones
    if np.any((pin_ones > 0) & (a == 0)) or np.any((pin_zeros > 0) & (a == 1)):
        raise ValueError("reports: a pinned report is impossible under its only possible input")
    # log C: every report's non-pinning bits under b, plus each pinned report's pinning bit under a
    all_ones = _colsum(y, w)
    all_zeros = wt.sum() - all_ones
    constant = float(np.sum(_xlogy(np.where(b > 0, all_ones, 0.0), b))
                     + np.sum(_xlogy(np.where(b < 1, all_zeros, 0.0), 1.0 - b))
                     + np.sum(_xlogy(pin_ones, a)) + np.sum(_xlogy(pin_zeros, 1.0 - a)))
    with np.errstate(divide="ignore", invalid="ignore"):
        high = np.where(b > 0, a / b, 0.0)
        low = np.where(b < 1, (1.0 - a) / (1.0 - b), 0.0)
    comp = unary_composite_mle(all_ones, wt.sum(), a, b).frequency
    if pinned_rows.any():
        y, wt = y[~pinned_rows], wt[~pinned_rows]
    return y, (None if w is None else wt), low, high, pinned, constant, comp

"""EM for unary encodings (and any two-valued likelihood rows) at the machine's bound (numpy only).

See :mod:`mechanisms._mle` for the choice of likelihoods:

* :func:`unary_em` -- EM on the per-bit **composite** likelihood, ``O(d)`` per
  iteration from the per-bit counts; its fixed point is
  :func:`mechanisms._mle.unary_composite_mle` (consistent, not the MLE);
* :func:`unary_em_full` / :func:`binary_rows_em` -- EM on the **full-report**
  likelihood (ULDP eq. 8), ``O(n d)`` per iteration as two BLAS matrix-vector
  products; its fixed point is the MLE of the paper's EM reconstruction (Sec. 2.5).

Both stop when the relative log-likelihood increase is ``<= rtol`` or after
``max_iter`` EM-map evaluations, are SQUAREM-accelerated with a monotonicity guard,
and report the log-likelihood (nats), the iterations and a certified optimality gap.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ._mle import _composite_inputs, _unary_params, _vector, _xlogy, unary_composite_mle

__all__ = ["UnaryEMResult", "unary_em", "unary_em_full", "binary_rows_em"]

#: An extrapolated SQUAREM point keeps at least this fraction of each coordinate of the
#: cycle's start: EM multiplies coordinates, so one that an extrapolation sets to ~0 (a
#: plain floor such as 1e-300) would need thousands of steps to come back, and the
#: relative-change rule would then stop at a non-optimal point.
_SHRINK = 1e-2


@dataclasses.dataclass(frozen=True)
class UnaryEMResult:
    """Outcome of :func:`unary_em`, :func:`unary_em_full` and :func:`binary_rows_em`.

    Attributes
    ----------
    frequency : ndarray of float64, shape (d,)
        The estimate (read-only) on the simplex.
    log_likelihood : float
        Log-likelihood at ``frequency`` in nats (composite or full, see ``likelihood``).
    iterations : int
        EM-map evaluations performed (each one forward and one backward pass).
    converged : bool
        True if the relative log-likelihood change fell to ``<= rtol`` before ``max_iter``.
    gap_bound : float
        Certified bound (nats) on ``L(MLE) - L(frequency)``: ``W log(max_x g_x / W)``
        with ``g`` the gradient and ``W`` the total weight (Jensen's inequality on the
        concave mixture log-likelihood, see :func:`binary_rows_em`).
    likelihood : str
        ``"composite"`` (per-bit pseudo-likelihood) or ``"full"`` (the true likelihood).
    """

    frequency: np.ndarray
    log_likelihood: float
    iterations: int
    converged: bool
    gap_bound: float
    likelihood: str

    def __post_init__(self) -> None:
        f = np.array(self.frequency, dtype=np.float64)
        f.setflags(write=False)
        object.__setattr__(self, "frequency", f)


# --------------------------------------------------------------------------- monotone EM / SQUAREM
def _run_em(step, p: np.ndarray, rtol: float, max_iter: int, accelerate: bool):
    """EM iterations, SQUAREM-accelerated with a monotonicity guard.

    ``step(q)`` returns ``(L(q), gap_bound(q), EM(q))``. A SQUAREM cycle (Varadhan &
    Roland 2008, scheme S3) from ``p`` evaluates ``p1 = EM(p)``, ``p2 = EM(p1)``, the
    extrapolation ``cand`` and ``EM(cand)``; the next point is ``EM(cand)`` if
    ``L(cand) >= L(p1)`` and ``p2`` otherwise, so the log-likelihood at the start of
    every cycle never decreases (EM itself is monotone). ``cand`` is floored at
    ``_SHRINK * p`` coordinate-wise (see there). Stops when the relative
    increase between cycle starts ``(L_new - L_old) <= rtol |L_new|`` or after
    ``max_iter`` evaluations; returns the last point whose likelihood was evaluated.
    """
    rtol, max_iter = float(rtol), int(max_iter)
    if not (rtol >= 0) or max_iter < 1:
        raise ValueError(f"rtol must be >= 0 and max_iter >= 1 (got {rtol!r}, {max_iter!r})")
    ll, gap, p1 = step(p)
    it, converged = 1, False
    while it < max_iter:
        if accelerate and it + 3 <= max_iter:
            ll1, _, p2 = step(p1)
            r = p1 - p
            v = p2 - p1 - r
            nv = float(np.sqrt(v @ v))
            alpha = min(-float(np.sqrt(r @ r)) / nv, -1.0) if nv > 0 else -1.0
            cand = np.maximum(p - 2.0 * alpha * r + alpha * alpha * v, _SHRINK * p)
            llc, _, pc = step(cand / cand.sum())
            it += 2
            p1 = pc if llc >= ll1 else p2
        ll_new, gap_new, p2 = step(p1)
        it += 1
        done = ll_new - ll <= rtol * abs(ll_new)
        p, ll, gap, p1 = p1, ll_new, gap_new, p2
        if done:
            converged = True
            break
    return p, ll, gap, it, converged


def _gap(g: np.ndarray, total: float) -> float:
    return float(max(0.0, total * np.log(float(np.max(g)) / total)))


def unary_em(bit_counts, n, a, b, *, rtol: float = 1e-12, max_iter: int = 10000, init=None,
             accelerate: bool = True) -> UnaryEMResult:
    """EM on the per-bit composite likelihood of a unary encoding: ``O(d)`` per iteration.

    Every bit is one observation ``(j, y_j)`` of a mixture with latent input ``x``:
    ``Pr(y_j = 1 | x) = a_j`` if ``x = j`` else ``b_j``. The ``2 d`` distinct
    observations have weights ``s_j`` and ``n - s_j`` and likelihood rows that are a
    constant plus one spike, so the EM update ``f_x <- f_x g_x / (n d)`` with
    ``g_x = sum_j [s_j b_j / m_j + (n - s_j)(1 - b_j)/(1 - m_j)] + (a_x - b_x)(s_x / m_x
    - (n - s_x)/(1 - m_x))`` costs ``O(d)``. Its fixed point is
    :func:`unary_composite_mle` (which computes it directly); this EM exists for
    callers that want the paper's iterative form and its diagnostics. All arithmetic
    is float64 (the work is ``O(d)``, float32 would gain nothing).

    Parameters
    ----------
    bit_counts : array_like of float, shape (d,)
        Per-bit counts ``s_j`` (reports with bit j set).
    n : float
        Number of reports.
    a, b : array_like of float, shape (d,) or scalar
        ``0 <= b_j < a_j <= 1``.
    rtol : float, default 1e-12
        Stop when the relative log-likelihood increase of one iteration (or SQUAREM
        cycle) is ``<= rtol``.
    max_iter : int, default 10000
        Cap on EM-map evaluations.
    init : array_like, shape (d,), optional
        Strictly positive start (default uniform).
    accelerate : bool, default True
        Monotone SQUAREM.

    Returns
    -------
    UnaryEMResult
        ``likelihood == "composite"``.

    Raises
    ------
    ValueError
        Bad counts, probabilities or start.

    References
    ----------
    Agrawal & Aggarwal (PODS 2001) EM; ULDP paper Sec. 2.5; Varadhan & Roland, Scand.
    J. Stat. 35 (2008) (SQUAREM).
    """
    s, n, a, b = _composite_inputs(bit_counts, n, a, b)
    d = s.size
    delta = a - b
    total = n * d
    p = _start(init, d)

    def step(q: np.ndarray):
        m1 = b + delta * q
        m0 = 1.0 - m1
        ll = float(np.sum(_xlogy(s, m1) + _xlogy(n - s, m0)))
        with np.errstate(divide="ignore", invalid="ignore"):
            r1 = np.where(s > 0, s / m1, 0.0)
            r0 = np.where(n - s > 0, (n - s) / m0, 0.0)
        g = float(np.sum(r1 * b + r0 * (1.0 - b))) + delta * (r1 - r0)
        new = q * g / total
        return ll, _gap(g, total), new / new.sum()

    p, ll, gap, it, conv = _run_em(step, p, rtol, max_iter, accelerate)
    return UnaryEMResult(frequency=p, log_likelihood=ll, iterations=it, converged=conv, gap_bound=gap,
                         likelihood="composite")


def _start(init, d: int) -> np.ndarray:
    if init is None:
        return np.full(d, 1.0 / d)
    p = _vector(init, "init", d)
    if np.any(p <= 0):
        raise ValueError("init must be strictly positive (EM cannot move a coordinate that is 0)")
    return p / p.sum()


# --------------------------------------------------------------------------- full likelihood
def binary_rows_em(rows, low, high, *, weights=None, pinned=None, constant: float = 0.0,
                   dtype=np.float64, rtol: float = 1e-12, max_iter: int = 10000, init=None,
                   accelerate: bool = True) -> UnaryEMResult:
    """EM for reports whose likelihood takes two values per input: ``O(n d)`` per iteration.

    Report ``r`` has ``Pr(y_r | x) = C_r (low_x + (high_x - low_x) Y[r, x])`` with a
    binary matrix ``Y`` and a constant ``C_r`` not depending on ``x`` (unary
    encodings: ``Y`` = the report bits, ``high = a/b``, ``low = (1-a)/(1-b)``; GLH:
    ``Y[r, x] = [h_r(x) = y_r]``, ``high = mu``, ``low = nu``). The mixture
    probabilities are ``Y @ ((high - low) f) + low . f`` and the gradient
    ``g = low sum_r w_r/m_r + (high - low) (Y.T @ (w/m))``: two BLAS matrix-vector
    products per EM step. The EM update is ``f <- f g / W``. Because
    ``L(q) - L(f) <= W log(sum_x q_x g_x / W) <= W log(max_x g_x / W)`` (Jensen on the
    concave mixture likelihood), ``gap_bound`` certifies how far from the maximum the
    result can be.

    float32 (``dtype=np.float32``) stores ``Y`` (exactly: it holds 0/1) and runs the
    two matrix-vector products in single precision, halving memory traffic; the
    mixture probabilities then carry a relative error of about ``sqrt(d) 2**-24``, so
    ``rtol`` should be ``>= 1e-7`` and the result is the MLE to that relative accuracy.
    Everything else (``f``, ratios, log-likelihood sums) stays float64.

    Parameters
    ----------
    rows : array_like of bool or 0/1, shape (n, d)
    low, high : array_like of float, shape (d,)
        Non-negative; every row must have a positive likelihood for some ``x``.
    weights : array_like of float, shape (n,), optional
        Multiplicity of each row (default 1).
    pinned : array_like of float, shape (d,), optional
        Weight of reports whose likelihood is ``C e_x`` (they reveal ``x``: uRAP's
        invertible reports); they add ``pinned_x log f_x``.
    constant : float
        ``sum_r w_r log C_r`` (nats), added to the reported log-likelihood.
    dtype : numpy float dtype, default float64
    rtol, max_iter, init, accelerate
        As in :func:`unary_em`.

    Returns
    -------
    UnaryEMResult
        ``likelihood == "full"``.

    Raises
    ------
    ValueError
        Bad shapes, negative entries, or a row impossible under every input.

    References
    ----------
    ULDP paper Sec. 2.5 (EM reconstruction); Böhning, *Computer-assisted analysis of
    mixtures* (1999), for the gradient bound of mixture likelihoods.
    """
    dtype = np.dtype(dtype)
    if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"dtype must be float32 or float64 (got {dtype})")
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
    ymat = np.ascontiguousarray(y, dtype=dtype)
    if nrow and not np.all((ymat == 0) | (ymat == 1)):
        raise ValueError("rows must hold only 0 and 1")
    delta = hi - lo
    total = float(w.sum() + pin.sum())
    p = _start(init, d)

    def mix(q: np.ndarray) -> np.ndarray:
        return (ymat @ (delta * q).astype(dtype)).astype(np.float64) + float(lo @ q)

    if nrow and np.any((mix(np.full(d, 1.0 / d)) <= 0) & (w > 0)):
        raise ValueError("rows: a report with positive weight has likelihood 0 under every input")

    def step(q: np.ndarray):
        m = mix(q)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(w > 0, w / m, 0.0)
            rp = np.where(pin > 0, pin / q, 0.0)
        ll = float(np.sum(_xlogy(w, m)) + np.sum(_xlogy(pin, q))) + float(constant)
        g = lo * float(ratio.sum()) + delta * (ymat.T @ ratio.astype(dtype)).astype(np.float64) + rp
        new = q * g / total
        return ll, _gap(g, total), new / new.sum()

    p, ll, gap, it, conv = _run_em(step, p, rtol, max_iter, accelerate)
    return UnaryEMResult(frequency=p, log_likelihood=ll, iterations=it, converged=conv, gap_bound=gap,
                         likelihood="full")


def unary_em_full(reports, a, b, *, weights=None, dtype=np.float64, rtol: float = 1e-12,
                  max_iter: int = 10000, init=None, accelerate: bool = True) -> UnaryEMResult:
    """The MLE of a unary encoding from the full reports (the paper's EM reconstruction).

    ``Pr(y | x) = prod_j Pr(y_j | x)`` (ULDP eq. 8). For bits with ``0 < b_j < 1`` the
    likelihood of a report is ``C(y) (low_x + (high_x - low_x) y_x)`` with ``C(y) =
    prod_j b_j^{y_j} (1 - b_j)^{1 - y_j}``, ``high = a/b``, ``low = (1 - a)/(1 - b)``
    (:func:`binary_rows_em`). A bit with ``b_j = 0`` set to 1 (or ``b_j = 1`` set to 0)
    can only come from ``x = j`` (uRAP's invertible reports, eq. 10): such a report
    is *pinned* and contributes ``log f_j``; two pinning bits make a report
    impossible. The start (default) is the composite MLE
    (:func:`unary_composite_mle`) mixed with 1e-3 of the uniform distribution, so
    the EM starts near the answer with no coordinate at 0. ``log_likelihood`` is the
    exact ``sum_r w_r log Pr(y_r)`` in nats.

    Parameters
    ----------
    reports : array_like of bool, shape (n, d)
        The report bit vectors.
    a, b : array_like of float, shape (d,) or scalar
        ``0 <= b_j < a_j <= 1``.
    weights : array_like of float, shape (n,), optional
        Multiplicities of the rows (grouped distinct reports).
    dtype, rtol, max_iter, init, accelerate
        As in :func:`binary_rows_em` / :func:`unary_em`.

    Returns
    -------
    UnaryEMResult
        ``likelihood == "full"``.

    Raises
    ------
    ValueError
        Bad shapes or probabilities, or a report impossible under every input.

    References
    ----------
    ULDP paper eqs. (8)-(10) and Sec. 2.5; IDLDP paper Sec. V-B (IDUE).
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
    w = np.ones(nrow) if weights is None else _vector(weights, "weights", nrow)
    if np.any(w < 0) or w.sum() <= 0:
        raise ValueError("weights must be >= 0 and not all zero")
    pin_one, pin_zero = b == 0, b == 1
    pins = y[:, pin_one].sum(axis=1) + (~y[:, pin_zero]).sum(axis=1)
    if np.any((pins > 1) & (w > 0)):
        raise ValueError("reports: a report with two pinning bits is impossible under every input")
    pinned_rows = pins == 1
    pinning = (y & pin_one) | (~y & pin_zero)
    col = np.argmax(pinning[pinned_rows], axis=1)
    pinned = np.bincount(col, weights=w[pinned_rows], minlength=d)
    free = ~pinned_rows
    yf, wf = y[free], w[free]
    pin_ones = np.bincount(col, weights=w[pinned_rows] * y[pinned_rows][np.arange(col.size), col], minlength=d)
    pin_zeros = pinned - pin_ones
    if np.any((pin_ones > 0) & (a == 0)) or np.any((pin_zeros > 0) & (a == 1)):
        raise ValueError("reports: a pinned report is impossible under its only possible input")
    # sum over all reports and all non-pinning bits of log Pr(y_i | b_i), plus the pinning bit's log Pr(y_j | a_j)
    all_ones = w @ y
    all_zeros = w.sum() - all_ones
    constant = float(np.sum(_xlogy(np.where(b > 0, all_ones, 0.0), b))
                     + np.sum(_xlogy(np.where(b < 1, all_zeros, 0.0), 1.0 - b))
                     + np.sum(_xlogy(pin_ones, a)) + np.sum(_xlogy(pin_zeros, 1.0 - a)))
    with np.errstate(divide="ignore", invalid="ignore"):
        high = np.where(b > 0, a / b, 0.0)
        low = np.where(b < 1, (1.0 - a) / (1.0 - b), 0.0)
    if init is None:
        comp = unary_composite_mle(w @ y, w.sum(), a, b).frequency
        init = 0.999 * comp + 0.001 / d
    return binary_rows_em(yf, low, high, weights=wf, pinned=pinned, constant=constant, dtype=dtype,
                          rtol=rtol, max_iter=max_iter, init=init, accelerate=accelerate)

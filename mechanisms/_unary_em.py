"""EM for unary encodings (and any two-valued likelihood rows) at the machine's bound (numpy only).

See :mod:`mechanisms._mle` for the choice of likelihoods:

* :func:`unary_em` -- EM on the per-bit **composite** likelihood, ``O(d)`` per
  iteration from the per-bit counts; its fixed point is
  :func:`mechanisms._mle.unary_composite_mle` (consistent, not the MLE);
* :func:`unary_em_full` / :func:`binary_rows_em` -- EM on the **full-report**
  likelihood (ULDP eq. 8), ``O(n d)`` per iteration as two BLAS matrix-vector
  products; its fixed point is the MLE of the paper's EM reconstruction (Sec. 2.5).

Both stop by the one rule of :mod:`._fit` (the certified optimality gap ``<= tol |L|``, else
``max_iter`` EM-map evaluations), are
SQUAREM-accelerated with a monotonicity guard, and return a :class:`._fit.SimplexFit`.
"""
from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ._fit import SimplexFit, certified_gap as _gap, run_em
from ._mle import _rows_inputs, _composite_inputs, _unary_full_inputs, _vector, _xlogy

__all__ = ["unary_em", "unary_em_full", "binary_rows_em"]

#: Rows per float32 block of the backward product ``Y.T @ ratio`` (summed in float64 across
#: blocks): a single float32 sum over n = 1e5 rows would be off by ~1e-5 relative, enough to
#: inflate the gap bound to tens of nats.
_BLOCK = 2048


def unary_em(bit_counts: npt.ArrayLike, n: float, a: npt.ArrayLike, b: npt.ArrayLike, *, tol: float = 1e-12,
             max_iter: int = 100000, init: npt.ArrayLike | None = None, accelerate: bool = True) -> SimplexFit:
    """EM on the per-bit composite likelihood of a unary encoding: ``O(d)`` per iteration.

    Every bit is one observation ``(j, y_j)`` of a mixture with latent input ``x``:
    ``Pr(y_j = 1 | x) = a_j`` if ``x = j`` else ``b_j``. The ``2 d`` distinct
    observations have weights ``s_j`` and ``n - s_j`` and likelihood rows that are a
    constant plus one spike, so the EM update ``f_x <- f_x g_x / (n d)`` with
    ``g_x = sum_j [s_j b_j / m_j + (n - s_j)(1 - b_j)/(1 - m_j)] + (a_x - b_x)(s_x / m_x
    - (n - s_x)/(1 - m_x))`` costs ``O(d)``. Its fixed point is
    :func:`mechanisms._mle.unary_composite_mle`, which computes it directly and is
    the faster way to get it: each bit informs only its own coordinate (``1/d`` of
    the weight), so plain EM contracts by about ``1 - 1/d`` per step and is sublinear
    at coordinates that end at 0; SQUAREM needs ~200 evaluations at ``d = 100`` but
    ~10^4 at ``d = 400`` with a Zipf input (see ``benchmarks/bench_estimators.py``).
    All arithmetic is float64 (the work is ``O(d)``; float32 would gain nothing).

    Parameters
    ----------
    bit_counts : array_like of float, shape (d,)
        Per-bit counts ``s_j`` (reports with bit j set).
    n : float
        Number of reports.
    a, b : array_like of float, shape (d,) or scalar
        ``0 <= b_j < a_j <= 1``.
    tol : float, default 1e-12
        The one stopping rule (:mod:`._fit`): stop when the certified gap is ``<= tol |L|``.
    max_iter : int, default 100000
        Cap on EM-map evaluations.
    init : array_like, shape (d,), optional
        Strictly positive start (default uniform).
    accelerate : bool, default True
        Monotone SQUAREM.

    Returns
    -------
    SimplexFit
        ``likelihood == "composite"``, ``method`` ``"squarem"`` or ``"em"``.

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
    s0 = n - s
    on1, on0 = s > 0, s0 > 0
    dense = bool(on1.all() and on0.all())

    def step(q: np.ndarray):
        m1 = b + delta * q
        m0 = 1.0 - m1
        if dense:
            ll = float(s @ np.log(m1) + s0 @ np.log(m0))
            r1, r0 = s / m1, s0 / m0
        else:
            ll = float(np.sum(_xlogy(s, m1) + _xlogy(s0, m0)))
            r1 = np.divide(s, m1, out=np.zeros(d), where=on1)
            r0 = np.divide(s0, m0, out=np.zeros(d), where=on0)
        g = float(r1 @ b + r0 @ (1.0 - b)) + delta * (r1 - r0)
        new = q * g
        return ll, _gap(g, total), new / new.sum()

    p, ll, gap, it, conv = run_em(step, p, tol, max_iter, accelerate)
    return SimplexFit(frequency=p, log_likelihood=ll, iterations=it, converged=conv, optimality_gap=gap,
                      method="squarem" if accelerate else "em", n=float(n), likelihood="composite")


def _start(init, d: int) -> np.ndarray:
    if init is None:
        return np.full(d, 1.0 / d)
    p = _vector(init, "init", d)
    if np.any(p <= 0):
        raise ValueError("init must be strictly positive (EM cannot move a coordinate that is 0)")
    return p / p.sum()


# --------------------------------------------------------------------------- full likelihood
class _Packed:
    """``Y @ u`` and ``Y.T @ r`` for a binary ``Y`` stored as bytes, by table look-up.

    ``Y`` is packed 8 bits per byte (``np.packbits``); per byte column ``k`` a table of
    the 256 partial sums ``sum_i bit_i(v) u[8k + i]`` turns ``Y @ u`` into ``n ceil(d/8)``
    look-ups, and ``Y.T @ r`` is a weighted histogram of the byte values per column
    (``np.bincount``) times the 256 x 8 bit matrix. The sums are float64 (same accuracy
    as the dense float64 product); memory is ``8 n ceil(d/8)`` bytes (the flat
    indices), a sixteenth of a float64 copy of ``Y``.
    """

    def __init__(self, y: np.ndarray | None = None, *, packed: np.ndarray | None = None, d: int = 0) -> None:
        """From a bool ``y`` (n, d), or from ``packed = np.packbits(y, axis=1)`` and ``d``."""
        if packed is None:
            if y is None:
                raise ValueError("_Packed: give y (n, d) or packed and d")
            packed = np.packbits(y, axis=1)
            d = y.shape[1]
        self.n, self.d = packed.shape[0], int(d)
        self.nb = (self.d + 7) // 8
        self.idx = packed.astype(np.intp) + 256 * np.arange(self.nb, dtype=np.intp)
        self.flat = self.idx.ravel()
        self.bits = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).astype(np.float64)

    def forward(self, u: np.ndarray) -> np.ndarray:
        pad = np.zeros(self.nb * 8)
        pad[: self.d] = u
        table = (pad.reshape(self.nb, 8) @ self.bits.T).ravel()
        return np.take(table, self.idx).sum(axis=1)

    def backward(self, r: np.ndarray) -> np.ndarray:
        hist = np.bincount(self.flat, weights=np.repeat(r, self.nb), minlength=self.nb * 256)
        return (hist.reshape(self.nb, 256) @ self.bits).ravel()[: self.d]


class _Dense:
    """``Y @ u`` and ``Y.T @ r`` with ``Y`` as a float32 or float64 matrix (BLAS)."""

    def __init__(self, y: np.ndarray, dtype) -> None:
        self.dtype = np.dtype(dtype)
        self.y = np.ascontiguousarray(y, dtype=self.dtype)

    def forward(self, u: np.ndarray) -> np.ndarray:
        return (self.y @ u.astype(self.dtype)).astype(np.float64)

    def backward(self, r: np.ndarray) -> np.ndarray:
        if self.dtype == np.float64:
            return self.y.T @ r
        out = np.zeros(self.y.shape[1])  # float32 sums over at most _BLOCK rows, accumulated in float64
        for i in range(0, self.y.shape[0], _BLOCK):
            out += self.y[i:i + _BLOCK].T @ r[i:i + _BLOCK].astype(np.float32)
        return out


_STORAGE = ("packed", "float64", "float32")


def binary_rows_em(rows: npt.ArrayLike, low: npt.ArrayLike, high: npt.ArrayLike, *,
                   weights: npt.ArrayLike | None = None, pinned: npt.ArrayLike | None = None, constant: float = 0.0,
                   storage: str = "packed", tol: float = 1e-12, max_iter: int = 10000,
                   init: npt.ArrayLike | None = None, accelerate: bool = True) -> SimplexFit:
    """EM for reports whose likelihood takes two values per input: ``O(n d)`` per iteration.

    Report ``r`` has ``Pr(y_r | x) = C_r (low_x + (high_x - low_x) Y[r, x])`` with a
    binary matrix ``Y`` and a constant ``C_r`` not depending on ``x`` (unary
    encodings: ``Y`` = the report bits, ``high = a/b``, ``low = (1-a)/(1-b)``; GLH:
    ``Y[r, x] = [h_r(x) = y_r]``, ``high = mu``, ``low = nu``). The mixture
    probabilities are ``m = Y @ ((high - low) f) + low . f`` and the gradient
    ``g = low sum_r w_r/m_r + (high - low) (Y.T @ (w/m))``: two BLAS matrix-vector
    products per EM step (memory-bound: ``Y`` is read twice). The EM update is
    ``f <- f g / W``. Because ``L(q) - L(f) <= W log(sum_x q_x g_x / W) <= W log(max_x
    g_x / W)`` (Jensen on the concave mixture likelihood, ``W`` the total weight),
    ``optimality_gap`` certifies how far from the maximum the result can be; the one
    stopping rule (:mod:`._fit`) stops on it.

    Columns of ``Y`` that are 0 in every row are left out of both products (their term is
    ``low_x f_x`` for every report): uRAP reports that reveal no item carry only the
    ``|X_S|`` sensitive bits, so its EM costs ``O(n |X_S|)`` per iteration, not ``O(n |X|)``.

    Storage of ``Y`` (``storage``): ``"packed"`` (default) keeps it as bytes and does
    both products by table look-up (:class:`_Packed`: float64 sums, ``8 n ceil(d/8)``
    bytes, up to 2x faster than dense float64 at ``d = 100-400``); ``"float64"`` is
    the dense BLAS path; ``"float32"`` stores ``Y`` exactly (it holds 0/1) in single
    precision, halving the dense memory and traffic. Where float32 is safe: the forward
    product sums ``d`` terms per report, so the mixture probabilities carry a relative
    error of about ``sqrt(d) 2**-24`` and the log-likelihood is good to ~1e-8
    relative; the backward product sums over reports, so it runs in float32 blocks of
    ``_BLOCK`` rows accumulated in float64. Everything else (``f``, ratios,
    log-likelihood sums) stays float64 in every storage.

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
    storage : {"packed", "float64", "float32"}, default "packed"
    tol : float, default 1e-12
        The one stopping rule (:mod:`._fit`): the certified gap ``<= tol |L|``. With float32
        storage the log-likelihood and gradient are resolved to ~1e-8 relative only, so a
        ``tol`` below that may run to ``max_iter``.
    max_iter, init, accelerate
        As in :func:`unary_em` (default start: uniform).

    Returns
    -------
    SimplexFit
        ``likelihood == "full"``, ``method`` ``"squarem"`` or ``"em"``.

    Raises
    ------
    ValueError
        Bad shapes, negative entries, or a row impossible under every input.

    References
    ----------
    ULDP paper Sec. 2.5 (EM reconstruction); Böhning, *Computer-assisted analysis of
    mixtures* (1999), for the gradient bound of mixture likelihoods.
    """
    if storage not in _STORAGE:
        raise ValueError(f"storage must be one of {_STORAGE} (got {storage!r})")
    y, nrow, d, lo, hi, w, pin = _rows_inputs(rows, low, high, weights, pinned)
    yb = y.astype(bool, copy=False)
    active = np.flatnonzero(yb.any(axis=0)) if nrow else np.zeros(0, dtype=np.intp)
    sparse_cols = active.size < d  # all-zero columns (e.g. uRAP's X_N bits in non-pinned reports) add nothing
    yk = yb[:, active] if sparse_cols else yb
    kernel = _Packed(yk) if storage == "packed" else _Dense(yk, storage)
    delta = hi - lo
    delta_active = delta[active] if sparse_cols else delta
    total = float(w.sum() + pin.sum())
    p = _start(init, d)
    wpos, ppos = w > 0, pin > 0
    all_w = bool(wpos.all())

    def mix(q: np.ndarray) -> np.ndarray:
        if not sparse_cols:
            return kernel.forward(delta * q) + float(lo @ q)
        if active.size == 0:
            return np.full(nrow, float(lo @ q))
        return kernel.forward(delta_active * q[active]) + float(lo @ q)

    def back(ratio: np.ndarray) -> np.ndarray:
        if not sparse_cols:
            return kernel.backward(ratio)
        out = np.zeros(d)
        if active.size:
            out[active] = kernel.backward(ratio)
        return out

    if nrow and np.any((mix(np.full(d, 1.0 / d)) <= 0) & wpos):
        raise ValueError("rows: a report with positive weight has likelihood 0 under every input")

    def step(q: np.ndarray):
        m = mix(q)
        if all_w:
            ll = float(w @ np.log(m))
            ratio = w / m
        else:
            ll = float(np.sum(_xlogy(w, m)))
            ratio = np.divide(w, m, out=np.zeros(nrow), where=wpos)
        ll += float(np.sum(_xlogy(pin, q))) + float(constant)
        g = lo * float(ratio.sum()) + delta * back(ratio)
        g += np.divide(pin, q, out=np.zeros(d), where=ppos)
        new = q * g
        return ll, _gap(g, total), new / new.sum()

    p, ll, gap, it, conv = run_em(step, p, tol, max_iter, accelerate)
    return SimplexFit(frequency=p, log_likelihood=ll, iterations=it, converged=conv, optimality_gap=gap,
                      method="squarem" if accelerate else "em", n=total, likelihood="full")


def unary_em_full(reports: npt.ArrayLike, a: npt.ArrayLike, b: npt.ArrayLike, *,
                  weights: npt.ArrayLike | None = None, storage: str = "packed", tol: float = 1e-12,
                  max_iter: int = 10000, init: npt.ArrayLike | None = None, accelerate: bool = True) -> SimplexFit:
    """The MLE of a unary encoding from the full reports (the paper's EM reconstruction).

    ``Pr(y | x) = prod_j Pr(y_j | x)`` (ULDP eq. 8). For bits with ``0 < b_j < 1`` the
    likelihood of a report is ``C(y) (low_x + (high_x - low_x) y_x)`` with ``C(y) =
    prod_j b_j^{y_j} (1 - b_j)^{1 - y_j}``, ``high = a/b``, ``low = (1 - a)/(1 - b)``
    (:func:`binary_rows_em`). A bit with ``b_j = 0`` set to 1 (or ``b_j = 1`` set to 0)
    can only come from ``x = j`` (uRAP's invertible reports, eq. 10): such a report
    is *pinned* and contributes ``log f_j``; two pinning bits make a report
    impossible. The start (default) is the composite MLE
    (:func:`mechanisms._mle.unary_composite_mle`) mixed with 1e-3 of the uniform
    distribution, so the EM starts near the answer with no coordinate at 0.
    ``log_likelihood`` is the exact ``sum_r w_r log Pr(y_r)`` in nats. Memory: the
    reports in the chosen ``storage`` (``8 n ceil(d/8)`` bytes when packed).

    Parameters
    ----------
    reports : array_like of bool, shape (n, d)
        The report bit vectors.
    a, b : array_like of float, shape (d,) or scalar
        ``0 <= b_j < a_j <= 1``.
    weights : array_like of float, shape (n,), optional
        Multiplicities of the rows (grouped distinct reports).
    storage, tol, max_iter, init, accelerate
        As in :func:`binary_rows_em`.

    Returns
    -------
    SimplexFit
        ``likelihood == "full"``.

    Raises
    ------
    ValueError
        Bad shapes or probabilities, or a report impossible under every input.

    References
    ----------
    ULDP paper eqs. (8)-(10) and Sec. 2.5; IDLDP paper Sec. V-B (IDUE).
    """
    y, w, low, high, pinned, constant, comp = _unary_full_inputs(reports, a, b, weights)
    if init is None:
        init = 0.999 * comp + 0.001 / comp.size
    return binary_rows_em(y, low, high, weights=w, pinned=pinned, constant=constant, storage=storage, tol=tol,
                          max_iter=max_iter, init=init, accelerate=accelerate)

"""EM for unary encodings (and any two-valued likelihood rows) at the machine's bound (numpy only).

See :mod:`mechanisms._mle` for the choice of likelihoods:

* :func:`unary_em` -- EM on the per-bit **composite** likelihood, ``O(d)`` per
  iteration from the per-bit counts; its fixed point is
  :func:`mechanisms._mle.unary_composite_mle` (consistent, not the MLE);
* :func:`unary_em_full` / :func:`binary_rows_em` -- EM on the **full-report**
  likelihood (ULDP eq. 8), ``O(n d)`` per iteration as two BLAS matrix-vector
  products; its fixed point is the MLE of the paper's EM reconstruction (Sec. 2.5).

Both stop when the relative log-likelihood increase is ``<= rtol``, when the certified
optimality gap is ``<= gap_tol`` nats, or after ``max_iter`` EM-map evaluations; both
are SQUAREM-accelerated with a monotonicity guard, and report the log-likelihood
(nats), the iterations, whether a stopping rule fired, and the certified gap.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ._mle import _rows_inputs, _composite_inputs, _unary_full_inputs, _vector, _xlogy

__all__ = ["UnaryEMResult", "unary_em", "unary_em_full", "binary_rows_em"]

#: An extrapolated SQUAREM point keeps at least this fraction of each coordinate of the
#: cycle's start: EM multiplies coordinates, so one that an extrapolation sets to ~0 (a
#: plain floor such as 1e-300) would need thousands of steps to come back, and the
#: relative-change rule would then stop at a non-optimal point.
_SHRINK = 1e-2

#: Rows per float32 block of the backward product ``Y.T @ ratio`` (summed in float64 across
#: blocks): a single float32 sum over n = 1e5 rows would be off by ~1e-5 relative, enough to
#: inflate the gap bound to tens of nats.
_BLOCK = 2048


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
def _run_em(step, p: np.ndarray, rtol: float, max_iter: int, accelerate: bool, gap_tol: float = 0.0):
    """EM iterations, SQUAREM-accelerated with a monotonicity guard.

    ``step(q)`` returns ``(L(q), gap_bound(q), EM(q))``. A SQUAREM cycle (Varadhan &
    Roland 2008, scheme S3) from ``p`` evaluates ``p1 = EM(p)``, ``p2 = EM(p1)``, the
    extrapolation ``cand`` and ``EM(cand)``; the next point is ``EM(cand)`` if
    ``L(cand) >= L(p1)`` and ``p2`` otherwise, so the log-likelihood at the start of
    every cycle never decreases (EM itself is monotone). ``cand`` is floored at
    ``_SHRINK * p`` coordinate-wise (see there). Stops when the relative increase
    between cycle starts ``(L_new - L_old) <= rtol |L_new|``, or when the certified
    gap bound is ``<= gap_tol`` nats, or after ``max_iter`` evaluations; returns the
    last point whose likelihood was evaluated.
    """
    rtol, max_iter, gap_tol = float(rtol), int(max_iter), float(gap_tol)
    if not (rtol >= 0) or not (gap_tol >= 0) or max_iter < 1:
        raise ValueError(f"rtol, gap_tol must be >= 0 and max_iter >= 1 (got {rtol!r}, {gap_tol!r}, {max_iter!r})")
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
        done = ll_new - ll <= rtol * abs(ll_new) or (gap_tol > 0 and gap_new <= gap_tol)
        p, ll, gap, p1 = p1, ll_new, gap_new, p2
        if done:
            converged = True
            break
    return p, ll, gap, it, converged


def _gap(g: np.ndarray, total: float) -> float:
    return float(max(0.0, total * np.log(float(np.max(g)) / total)))


def unary_em(bit_counts, n, a, b, *, rtol: float = 1e-12, gap_tol: float = 0.0, max_iter: int = 100000,
             init=None, accelerate: bool = True) -> UnaryEMResult:
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
    rtol : float, default 1e-12
        Stop when the relative log-likelihood increase of one iteration (or SQUAREM
        cycle) is ``<= rtol``.
    gap_tol : float, default 0
        Also stop when the certified gap bound is ``<= gap_tol`` nats.
    max_iter : int, default 100000
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

    p, ll, gap, it, conv = _run_em(step, p, rtol, max_iter, accelerate, gap_tol)
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


def binary_rows_em(rows, low, high, *, weights=None, pinned=None, constant: float = 0.0,
                   storage: str = "packed", rtol: float = 1e-12, gap_tol: float = 1e-2, max_iter: int = 10000,
                   init=None, accelerate: bool = True) -> UnaryEMResult:
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
    ``gap_bound`` certifies how far from the maximum the result can be; ``gap_tol``
    stops on it.

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
    rtol : float, default 1e-12
        Relative log-likelihood change rule (as in :func:`unary_em`). The likelihood
        of LDP reports is flat: with OUE at epsilon = 1, n = 1e5, d = 100-400 (from
        the composite start) ``rtol = 1e-10`` stops after ~40 passes 0.03-0.08 nats
        below the maximum, with ``f`` off by ~1e-3 (0.15 standard errors); 1e-12
        takes ~200 passes and reaches the maximum (``benchmarks/bench_estimators.py``).
    gap_tol : float, default 1e-2
        Also stop when the certified gap bound is ``<= gap_tol`` nats (the bound is
        loose at coordinates near 0, so on such data ``rtol`` usually stops first).
        With float32 the log-likelihood is resolved to ~1e-8 relative only (~0.05
        nats at ``n d = 4e7``): the ``rtol`` rule then stops on "no measurable
        progress" at that distance from the maximum.
    max_iter, init, accelerate
        As in :func:`unary_em` (default start: uniform).

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

    p, ll, gap, it, conv = _run_em(step, p, rtol, max_iter, accelerate, gap_tol)
    return UnaryEMResult(frequency=p, log_likelihood=ll, iterations=it, converged=conv, gap_bound=gap,
                         likelihood="full")


def unary_em_full(reports, a, b, *, weights=None, storage: str = "packed", rtol: float = 1e-12,
                  gap_tol: float = 1e-2, max_iter: int = 10000, init=None,
                  accelerate: bool = True) -> UnaryEMResult:
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
    storage, rtol, gap_tol, max_iter, init, accelerate
        As in :func:`binary_rows_em`.

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
    y, w, low, high, pinned, constant, comp = _unary_full_inputs(reports, a, b, weights)
    if init is None:
        init = 0.999 * comp + 0.001 / comp.size
    return binary_rows_em(y, low, high, weights=w, pinned=pinned, constant=constant, storage=storage, rtol=rtol,
                          gap_tol=gap_tol, max_iter=max_iter, init=init, accelerate=accelerate)

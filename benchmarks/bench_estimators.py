"""Speed of the exact / fast maximum-likelihood estimators against the iterative EM.

Usage: python benchmarks/bench_estimators.py [--n 100000] [--repeat 5] [--em-cap 20000]

Prints one Markdown table: medians over ``--repeat`` runs (wall clock, seconds; the
slow iterative baselines run once, capped at ``--em-cap`` EM evaluations, or fewer for
the dense ones, as stated in each row), the iterations, and the log-likelihood
shortfall ``L(best) - L(estimate)`` in nats (0 = the best estimate of that block):

* k-RR at |X| = 1e2, 1e3, 1e4 (n users, epsilon = 1): :func:`rr_mle` (water-filling)
  (the runtimes' "em") vs :func:`em_simplex` with :class:`RRChannel` (the earlier "em");
* uRR at |X| = 1000, |X_S| = 100, epsilon = 1: :func:`urr_mle` (the runtime's "em") vs
  :func:`em_simplex` with the dense channel (the earlier iterative EM);
* OUE (a = 1/2, b = 1/(e^epsilon + 1), epsilon = 1) at n users, |X| = 100 and 400:
  the composite MLE, the composite EM, the full-report EM (packed, dense float64 and
  float32 storage; the runtime's "em" before issue 20), the projected-Newton MLE (the uRAP
  runtime's "em" now) vs :func:`em_simplex` on the
  grouped full likelihood (the earlier iterative EM). The shortfall of every unary row is measured on the full
  likelihood.

Data are drawn with numpy from a Zipf(1.1) input distribution (the runtimes are not
used, so the benchmark does not depend on their API). If ``multi_freq_ldpy`` is
importable its IBU estimators (iterative Bayesian update) are put beside; pure-ldp
only offers the empirical estimate with post-processing, whose simplex projection is
the "empirical + projection" row.
"""
from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np

from ldpplan.mechanisms._estimators import RRChannel, em_simplex, project_simplex
from ldpplan.mechanisms._mle import rr_mle, unary_composite_mle, urr_mle
from ldpplan.mechanisms._unary_em import unary_em, unary_em_full
from ldpplan.mechanisms._unary_mle import unary_mle_full

try:  # optional peer (pip install '.[bench]')
    from multi_freq_ldpy.pure_frequency_oracles import GRR as _mf_grr
    from multi_freq_ldpy.pure_frequency_oracles import UE as _mf_ue
except ImportError:  # pragma: no cover - optional
    _mf_grr = _mf_ue = None


def _warm_up() -> None:
    """Compile the peers' numba kernels outside the timings."""
    if _mf_grr is not None:
        _mf_grr.GRR_Aggregator_IBU(np.array([0, 1, 1]), 3, 1.0, nb_iter=2)
        _mf_ue.UE_Aggregator_IBU(np.eye(3, dtype=np.int64), 3, 1.0, nb_iter=2)


def _median(fn, repeat: int):
    times, out = [], None
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def _zipf(k: int) -> np.ndarray:
    w = 1.0 / np.arange(1, k + 1) ** 1.1
    return w / w.sum()


def _rr_ll(c, mu, nu, f) -> float:
    m = nu + (mu - nu) * np.asarray(f)
    with np.errstate(divide="ignore"):
        return float(np.sum(c[c > 0] * np.log(m[c > 0])))


def bench_rr(n: int, repeat: int, cap: int, rows: list) -> None:
    eps = 1.0
    rng = np.random.default_rng(1)
    for k in (100, 1000, 10000):
        mu = math.exp(eps) / (math.exp(eps) + k - 1)
        nu = (1 - mu) / (k - 1)
        c = rng.multinomial(n, nu + (mu - nu) * _zipf(k)).astype(float)
        size = f"k={k}, n={n:.0e}"
        t, exact = _median(lambda: rr_mle(c, mu, nu), repeat)
        best = exact.log_likelihood
        rows.append(("k-RR water-filling MLE (`rr_mle`)", size, t, "-", 0.0))
        t, em = _median(lambda: em_simplex(RRChannel(mu=mu, nu=nu, k=k), c, tol=1e-10, max_iter=cap,
                                           accelerate=True), 1)
        rows.append((f"k-RR `em_simplex` RRChannel SQUAREM, tol 1e-10 (conv={em.converged})", size, t,
                     em.iterations, best - em.log_likelihood))
        proj = project_simplex((c / n - nu) / (mu - nu))
        rows.append(("k-RR empirical + simplex projection (pure-ldp norm. 2)", size, float("nan"), "-",
                     best - _rr_ll(c, mu, nu, proj)))
        if _mf_grr is not None and k <= 1000:
            reports = np.repeat(np.arange(k), c.astype(np.int64))
            t, est = _median(lambda: _mf_grr.GRR_Aggregator_IBU(reports, k, eps, nb_iter=cap, tol=1e-12), 1)
            rows.append((f"k-RR multi_freq_ldpy `GRR_Aggregator_IBU` (nb_iter {cap})", size, t, "?",
                         best - _rr_ll(c, mu, nu, est)))


def bench_urr(n: int, repeat: int, cap: int, rows: list) -> None:
    k, ks, eps = 1000, 100, 1.0
    mask = np.zeros(k, dtype=bool)
    mask[np.random.default_rng(2).choice(k, ks, replace=False)] = True
    c2 = 1.0 / (ks + math.exp(eps) - 1)
    c1, c3 = math.exp(eps) * c2, 1.0 - ks * c2
    q = np.zeros((k, k))
    q[:, mask] = c2
    q[np.arange(k), np.arange(k)] = np.where(mask, c1, c3)
    c = np.random.default_rng(3).multinomial(n, _zipf(k) @ q / (_zipf(k) @ q).sum()).astype(float)
    size = f"k=1000, k_S=100, n={n:.0e}"
    t, exact = _median(lambda: urr_mle(c, mask, c1, c2, c3), repeat)
    rows.append(("uRR water-filling MLE (`urr_mle`)", size, t, "-", 0.0))
    t, em = _median(lambda: em_simplex(q.T, c, tol=1e-10, max_iter=cap, accelerate=True), 1)
    rows.append((f"uRR `em_simplex` dense channel SQUAREM, tol 1e-10 (conv={em.converged})", size, t,
                 em.iterations, exact.log_likelihood - em.log_likelihood))


def _full_ll(y, a, b, f) -> float:
    d = y.shape[1]
    return unary_em_full(y, a, b, init=np.asarray(f) * (1 - 1e-12) + 1e-12 / d, max_iter=1).log_likelihood


def bench_unary(n: int, repeat: int, cap: int, rows: list) -> None:
    eps = 1.0
    a, b = 0.5, 1.0 / (math.exp(eps) + 1)
    for d in (100, 400):
        rng = np.random.default_rng(4 + d)
        x = rng.choice(d, size=n, p=_zipf(d))
        y = rng.random((n, d)) < b
        y[np.arange(n), x] = rng.random(n) < a
        s = y.sum(axis=0).astype(float)
        size = f"d={d}, n={n:.0e}"
        out = []
        t, comp = _median(lambda: unary_composite_mle(s, n, a, b), repeat)
        out.append(("OUE composite MLE, exact (`unary_composite_mle`)", t, "-", comp.frequency))
        t, cem = _median(lambda: unary_em(s, n, a, b), repeat)
        out.append((f"OUE composite EM, O(d)/it (`unary_em`, conv={cem.converged})", t, cem.iterations,
                     cem.frequency))
        half = max(1, repeat // 2)
        t, full = _median(lambda: unary_em_full(y, a, b), half)
        out.append((f"OUE full-report EM, packed, tol 1e-12 (`unary_em_full` default, conv={full.converged})",
                    t, full.iterations, full.frequency))
        t, newton = _median(lambda: unary_mle_full(y, a, b), half)
        out.append((f"OUE full-report MLE, projected Newton (`unary_mle_full`, certified gap "
                    f"{newton.optimality_gap:.0e} nats)", t, newton.iterations, newton.frequency))
        for storage in ("packed", "float64", "float32"):
            t, res = _median(lambda: unary_em_full(y, a, b, storage=storage, tol=1e-10), half)
            out.append((f"OUE full-report EM, {storage}, tol 1e-10 (conv={res.converged})", t, res.iterations,
                        res.frequency))
        dense_cap = min(cap, 300 if d > 100 else 2000)

        def current():
            pattern, cnt = np.unique(np.packbits(y, axis=1), axis=0, return_counts=True)
            bits = np.unpackbits(pattern, axis=1, count=d).astype(bool)
            lik = np.where(bits, a / b, (1 - a) / (1 - b))
            return em_simplex(lik, cnt, tol=1e-10, max_iter=dense_cap, accelerate=True)

        t, em = _median(current, 1)
        out.append((f"OUE `em_simplex` grouped full likelihood, cap {dense_cap} (conv={em.converged})", t,
                    em.iterations, em.frequency))
        out.append(("OUE empirical + simplex projection", float("nan"), "-",
                    project_simplex((s / n - b) / (a - b))))
        if _mf_ue is not None:
            t, est = _median(lambda: _mf_ue.UE_Aggregator_IBU(y.astype(np.int64), d, eps, optimal=True,
                                                              nb_iter=cap, tol=1e-12), 1)
            out.append((f"OUE multi_freq_ldpy `UE_Aggregator_IBU` (nb_iter {cap})", t, "?", est))
        lls = [_full_ll(y, a, b, f) for *_, f in out]
        best = max(lls)
        rows.extend((name, size, t, it, best - ll) for (name, t, it, _), ll in zip(out, lls))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000, help="users (reports)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--em-cap", type=int, default=20_000, help="iteration cap of the iterative baselines")
    ap.add_argument("--only", choices=["rr", "urr", "unary"], default=None)
    args = ap.parse_args()
    rows: list = []
    _warm_up()
    for name, fn in (("rr", bench_rr), ("urr", bench_urr), ("unary", bench_unary)):
        if args.only in (None, name):
            fn(args.n, args.repeat, args.em_cap, rows)
    print("| estimator | size | median time (s) | iterations | L(best) - L (nats) |")
    print("|---|---|---:|---:|---:|")
    for name, size, t, it, gap in rows:
        ts = "-" if t != t else f"{t:.4g}"
        print(f"| {name} | {size} | {ts} | {it} | {gap:.3g} |")
    if _mf_grr is None:
        print("\n(multi_freq_ldpy not installed: its IBU rows are skipped; pip install '.[bench]')")


if __name__ == "__main__":
    main()

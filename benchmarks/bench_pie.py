"""Benchmark of the PIE runtime (mechanisms.pie: k-ary RR and GLH) and the PIE targeting solvers.

Run::

    python benchmarks/bench_pie.py            # all cases
    python benchmarks/bench_pie.py --quick    # skips the n = 1,370,637 cases

Figures are medians over ``--runs`` repetitions (wall clock, ``time.perf_counter``),
compared with the GRR reference of ``../shared/notes/landscape-existing-ldp-systems.md``
(eps = 1, n = 1e5, d = 1e3, perturb + estimate: pure-ldp ``DEClient/DEServer`` 0.090 s,
multi-freq-ldpy ``GRR`` + MI 0.149 s; ``GRR_Aggregator_IBU`` 6.85 s). No reference
system has a working local-hashing runtime (pure-ldp LH fails with xxhash 4.1.0), so
the GLH rows are reported against the hash-evaluation count they need (n |X|, or n ceil(P/g)
when the hash is inverted for large g).
"""
from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ldpplan.mechanisms.pie import GeneralizedLocalHashing, RandomizedResponse  # noqa: E402
from ldpplan.solvers.pie import alpha_for_bayes_error, solve_glh, solve_rr  # noqa: E402

REF_GRR = {"pure-ldp DEClient/DEServer": 0.090, "multi-freq-ldpy GRR + MI": 0.149}
REF_GRR_IBU = 6.85


def timed(fn, runs: int):
    ts, out = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), ts, out


def skewed(n: int, d: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.minimum(rng.geometric(0.01, size=n) - 1, d - 1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    print(f"# PIE runtime benchmark  (python {platform.python_version()}, numpy {np.__version__}, "
          f"{platform.machine()}, medians of {args.runs} runs)")
    rows = []

    # --- RR vs the GRR reference (eps = 1, n = 1e5, d = 1e3)
    n, d = 100_000, 1_000
    x = skewed(n, d)
    truth = np.bincount(x, minlength=d) / n
    rr = RandomizedResponse(domain=d, epsilon=1.0)
    med, ts, est = timed(lambda: rr.estimate(rr.perturb(x, rng=np.random.default_rng(1))).frequency, args.runs)
    mse = float(np.mean((est - truth) ** 2))
    best_ref = min(REF_GRR.values())
    rows.append(("RR perturb+estimate, eps=1, n=1e5, |X|=1e3", med, f"ref {best_ref:.3f} s -> {best_ref / med:.1f}x faster",
                 f"MSE {mse:.3g}"))
    # "em" is the exact water-filling MLE (no iterations, O(|X| log |X|)), at the GSS size and at |X| = 1e3
    xg = skewed(28629, 100)
    rr_g = RandomizedResponse(domain=100, epsilon=3.758)
    agg_g = rr_g.aggregate(rr_g.perturb(xg, rng=np.random.default_rng(2)))
    med, ts, em = timed(lambda: rr_g.estimate(agg_g, "em"), args.runs)
    rows.append(("RR MLE (\"em\", water-filling), n=28629, |X|=100, eps=3.758", med, "exact, 0 iterations", ""))
    agg_k = rr.aggregate(rr.perturb(x, rng=np.random.default_rng(2)))
    med, ts, em = timed(lambda: rr.estimate(agg_k, "em"), args.runs)
    rows.append(("RR MLE (\"em\", water-filling), n=1e5, |X|=1e3, eps=1", med, "exact, 0 iterations", ""))

    # --- GLH (the same data), g = 2^16 and the GSS-sized case
    glh = GeneralizedLocalHashing(domain=d, epsilon=10.0, g=65536)
    med_p, _, rep = timed(lambda: glh.perturb(x, rng=np.random.default_rng(3)), args.runs)
    med_e, _, est = timed(lambda: glh.estimate(rep).frequency, args.runs)
    rows.append(("GLH perturb, eps=10, g=2^16, n=1e5", med_p, "", ""))
    rows.append(("GLH estimate (n x |X| = 1e8 hashes)", med_e, f"{n * d / med_e / 1e6:.0f} M hash-compares/s",
                 f"MSE {float(np.mean((est - truth) ** 2)):.3g}"))
    xg = skewed(28629, 100)
    glh_gss = GeneralizedLocalHashing(domain=100, epsilon=10.22, g=65536)
    med, _, _ = timed(lambda: glh_gss.estimate(glh_gss.perturb(xg, rng=np.random.default_rng(4))), args.runs)
    rows.append(("GLH perturb+estimate, GSS size n=28629, |X|=100", med, "", ""))

    if not args.quick:
        # --- the spec: n = 1,370,637, |X| = 10,500,393 (RR end to end; GLH perturb only)
        nl, kl = 1370637, 10500393
        xl = skewed(nl, kl)
        a = alpha_for_bayes_error(0.5, nl)
        rr_l = RandomizedResponse(domain=kl,
                                  epsilon=solve_rr(n=nl, domain_size=kl, alpha_bits=a).parameters["epsilon"])
        med, _, _ = timed(lambda: rr_l.estimate(rr_l.perturb(xl, rng=np.random.default_rng(5))), args.runs)
        rows.append(("RR perturb+estimate, n=1.37e6, |X|=1.05e7 (issue spec)", med, "", ""))
        res = solve_glh(n=nl, domain_size=kl, alpha_bits=a, g_max=10**8)
        glh_l = GeneralizedLocalHashing(domain=kl, epsilon=res.parameters["epsilon"], g=res.parameters["g"])
        med, _, rep_l = timed(lambda: glh_l.perturb(xl, rng=np.random.default_rng(6)), args.runs)
        rows.append(("GLH perturb, n=1.37e6, g=1e8 (issue spec)", med, "", ""))
        med, _, _ = timed(lambda: glh_l.estimate(glh_l.aggregate(rep_l)), args.runs)
        rows.append(("GLH aggregate+estimate, n=1.37e6, |X|=1.05e7, g=1e8 (issue spec)", med,
                     f"hash inversion: n ceil(P/g) = {nl * 22:.2g} ops instead of n|X| = {nl * kl:.2g}", ""))

    # --- solvers
    a = alpha_for_bayes_error(0.5, 1370637)
    med, _, _ = timed(lambda: solve_rr(n=1370637, domain_size=10500393, alpha_bits=a), max(args.runs, 5))
    rows.append(("solve_rr (closed form)", med, "", ""))
    med, _, _ = timed(lambda: solve_glh(n=1370637, domain_size=10500393, alpha_bits=a, g_max=2**31 - 1), max(args.runs, 5))
    rows.append(("solve_glh (exact integer g over [2, 2^31-1])", med, "", ""))

    w = max(len(r[0]) for r in rows)
    print(f"{'case':<{w}}  {'median s':>10}  comparison / notes")
    for name, med, cmp, extra in rows:
        print(f"{name:<{w}}  {med:>10.4f}  {cmp} {extra}".rstrip())


if __name__ == "__main__":
    main()

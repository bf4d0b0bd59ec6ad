"""Hadamard response: ldpplan's runtime beside pure-ldp's implementation, in the same run.

Run::

    python benchmarks/bench_hadamard.py              # the table below (about a minute on 2 cores)
    python benchmarks/bench_hadamard.py --markdown   # the same as a Markdown table (benchmarks/RESULTS.md)

For each case (epsilon, k, n users with Zipf(1) items) and each of ``--rounds`` interleaved rounds,
both implementations perturb the same items and estimate the frequencies (pure-ldp: its
``HadamardResponseClient.privatise`` per user and ``HadamardResponseServer`` with no normalisation,
the unbiased estimate; ldpplan: ``perturb`` -> ``aggregate`` -> ``estimate(method="empirical")``), with
the same scheme: ``B = 1`` for epsilon <= 1 and the authors' ``B = 2^floor(log2 min(e^eps, 2k))``
blocks above (pure-ldp's choice). Reported: medians of the wall times, throughput (reports/s),
report size (bits), the squared l2 error ``sum_x (f_hat(x) - f(x))^2`` of each (median over rounds)
with ldpplan's exact expectation at the data, and the error of ldpplan's planned ``blocks = "auto"``.

pure-ldp is in the ``bench`` extra (``pip install ldpplan[bench]``).
"""
from __future__ import annotations

import argparse
import math
import platform
import random
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ldpplan.mechanisms.hadamard import HadamardResponse  # noqa: E402
from ldpplan.solvers.hadamard import authors_blocks, solve_hadamard  # noqa: E402

CASES = [(1.0, 100, 20_000), (1.0, 1_000, 20_000), (1.0, 10_000, 20_000), (4.0, 1_000, 20_000), (4.0, 10_000, 20_000)]


def _items(k: int, n: int, seed: int) -> np.ndarray:
    w = 1.0 / np.arange(1, k + 1)
    return np.random.default_rng(seed).choice(k, size=n, p=w / w.sum())


def _blocks(epsilon: float, k: int) -> int:
    return 1 if epsilon <= 1 else authors_blocks(epsilon, k)  # pure-ldp's scheme


def _ours(epsilon: float, k: int, x: np.ndarray, seed: int, blocks: int | None = None) -> dict:
    mech = HadamardResponse(domain=k, epsilon=epsilon, blocks=_blocks(epsilon, k) if blocks is None else blocks)
    t0 = time.perf_counter()
    reports = mech.perturb(x, rng=np.random.default_rng(seed))
    t1 = time.perf_counter()
    est = mech.estimate(mech.aggregate(reports)).frequency
    t2 = time.perf_counter()
    return {"perturb": t1 - t0, "estimate": t2 - t1, "freq": est, "bits": mech.output_size.bit_length() - 1}


def _pure(epsilon: float, k: int, x: np.ndarray, seed: int) -> dict:
    from pure_ldp.frequency_oracles.hadamard_response import HadamardResponseClient, HadamardResponseServer

    random.seed(seed)
    np.random.seed(seed % 2**32)
    server = HadamardResponseServer(epsilon, k, index_mapper=lambda v: v)
    client = HadamardResponseClient(epsilon, k, server.get_hash_funcs(), index_mapper=lambda v: v)
    items = x.tolist()
    with warnings.catch_warnings():  # pure-ldp passes a float to random.randint (deprecated since 3.10)
        warnings.simplefilter("ignore", DeprecationWarning)
        t0 = time.perf_counter()
        reports = [client.privatise(v) for v in items]
        t1 = time.perf_counter()
    server.aggregate_all(reports)
    est = np.array(server.estimate_all(range(k), suppress_warnings=True)) / len(items)
    t2 = time.perf_counter()
    return {"perturb": t1 - t0, "estimate": t2 - t1, "freq": est, "bits": int(server.hr.outbit)}


def run(rounds: int) -> list[dict]:
    rows = []
    for epsilon, k, n in CASES:
        x = _items(k, n, seed=k)
        truth = np.bincount(x, minlength=k) / n
        mech = HadamardResponse(domain=k, epsilon=epsilon, blocks=_blocks(epsilon, k))
        auto = solve_hadamard(epsilon, k).blocks
        res: dict[str, list[dict]] = {"ldpplan": [], "pure-ldp": [], "auto": []}
        for r in range(rounds):  # interleaved: both see the same machine load
            for name, fn in (("ldpplan", _ours), ("pure-ldp", _pure), ("auto", lambda *a, **kw: _ours(*a, **kw,
                                                                                                  blocks=auto))):
                out = fn(epsilon, k, x, seed=100 * r + 1)
                out["l2"] = float(np.sum((out.pop("freq") - truth) ** 2))
                res[name].append(out)
        row = {"epsilon": epsilon, "k": k, "n": n, "blocks": mech.blocks, "auto_blocks": auto,
               "predicted_l2": float(np.sum(mech.variance_per_user(truth)) / n)}
        for name, outs in res.items():
            row[name] = {key: statistics.median(o[key] for o in outs) for key in ("perturb", "estimate", "l2")}
            row[name]["bits"] = outs[0]["bits"]
        rows.append(row)
    return rows


def _fmt(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms" if seconds < 1 else f"{seconds:.2f} s"


def markdown(rows: list[dict], rounds: int) -> str:
    head = ("| epsilon, k, n | B | bits (ldpplan / pure-ldp) | perturb ldpplan | perturb pure-ldp | estimate ldpplan | "
            "estimate pure-ldp | perturb throughput (reports/s) ldpplan / pure-ldp | l2 error ldpplan / pure-ldp "
            "(ldpplan predicted) | ldpplan blocks = auto: B, l2 |\n|---|---|---|---|---|---|---|---|---|---|")
    lines = [head]
    for r in rows:
        a, b, c = r["ldpplan"], r["pure-ldp"], r["auto"]
        lines.append(f"| {r['epsilon']:g}, {r['k']:,}, {r['n']:,} | {r['blocks']} | {a['bits']} / {b['bits']} | "
                     f"{_fmt(a['perturb'])} | {_fmt(b['perturb'])} | {_fmt(a['estimate'])} | {_fmt(b['estimate'])} | "
                     f"{r['n'] / a['perturb']:.3g} / {r['n'] / b['perturb']:.3g} | "
                     f"{a['l2']:.4g} / {b['l2']:.4g} ({r['predicted_l2']:.4g}) | {r['auto_blocks']}, {c['l2']:.4g} |")
    lines.append(f"\nMedians of {rounds} interleaved rounds; python {platform.python_version()}, numpy {np.__version__}.")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    try:
        import pure_ldp  # noqa: F401
    except ImportError:
        sys.exit("bench_hadamard: needs pure-ldp, the peer implementation (pip install ldpplan[bench])")
    t0 = time.perf_counter()
    rows = run(args.rounds)
    text = markdown(rows, args.rounds)
    print(text if args.markdown else text.replace("|", " ").replace("---", ""))
    print(f"whole run {time.perf_counter() - t0:.0f} s")
    assert all(math.isfinite(r["ldpplan"]["l2"]) for r in rows)


if __name__ == "__main__":
    main()

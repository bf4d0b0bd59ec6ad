"""The issue-21 table: central (epsilon, delta) of n shuffled k-RR reports, and the shuffler's error gain.

Run::

    python benchmarks/bench_shuffle.py > benchmarks/SHUFFLE_RESULTS.md   # the gain and the full done-when table
    python benchmarks/bench_shuffle.py --gain-only  # the error gain at central epsilon = 1, delta = 1e-8, n = 1e6
    python benchmarks/bench_shuffle.py --amplification-only  # issue 26: randomizer blankets vs FMT21 (n = 1e5)

Columns: ``upper`` is ``shuffle_bound(...).epsilon`` (sound; the plan's ``guarantee.shuffled.epsilon``),
``lower`` its ``epsilon_lower`` (the exact divergence of one neighbouring pair), ``tol`` the reported
``tolerance`` (k = 2: ``(upper - lower) / upper``, the exact curve lies in between), ``FMT21 num`` the
numerical bound of FMT21 Theorem 3.2, ``FMT21 closed`` its Theorem 3.1 (inf outside its range), and
``s`` the wall-clock seconds of one ``shuffle_bound`` call (upper and lower, cache cleared).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ldpplan.planner import make_plan  # noqa: E402
from ldpplan.solvers import shuffle as solver  # noqa: E402


def table() -> None:
    print("| k | epsilon0 | n | delta | upper | lower | upper/lower | tol | FMT21 num | FMT21 closed | s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for k in (2, 10, 100):
        for epsilon0 in (0.5, 1.0, 2.0, 4.0, 6.0):
            for n in (10**4, 10**5, 10**6):
                for delta in (1e-6, 1e-8):
                    solver._shuffle_bound.cache_clear()
                    start = time.perf_counter()
                    bound = solver.shuffle_bound(epsilon0, n, delta, mechanism="krr", domain_size=k)
                    seconds = time.perf_counter() - start
                    numerical = solver.fmt21_numerical(epsilon0, n, delta)
                    closed = solver.fmt21_closed_form(epsilon0, n, delta)
                    ratio = bound.epsilon / bound.epsilon_lower if bound.epsilon_lower > 0 else float("inf")
                    print(f"| {k} | {epsilon0:g} | {n:.0e} | {delta:.0e} | {bound.epsilon:.5g} | "
                          f"{bound.epsilon_lower:.5g} | {ratio:.4f} | {bound.tolerance:.1e} | {numerical:.5g} | "
                          f"{closed:.5g} | {seconds:.2f} |",
                          flush=True)


def gain() -> None:
    print("| mechanism | k | local epsilon0 | central epsilon (upper / lower) | l2 with shuffler | l2 without | gain |")
    print("|---|---|---|---|---|---|---|")
    for mechanism, k in (("rr", 2), ("rr", 10), ("rr", 100), ("glh", 100), ("pie", 1000)):
        plan = make_plan({"mechanism": mechanism, "domain": k, "users": 10**6, "target": {"central_epsilon": 1.0},
                          "shuffle": {"n": 10**6, "delta": 1e-8}})
        shuffled, predicted = plan["guarantee"]["shuffled"], plan["predicted"]
        print(f"| {plan['mechanism']} (spec {mechanism}) | {k} | {plan['params']['epsilon']:.4g} | "
              f"{shuffled['epsilon']:.4g} / {shuffled['epsilon_lower']:.4g} | "
              f"{predicted['l2_loss_total']['value']:.3g} | {predicted['l2_loss_total_without_shuffler']['value']:.3g} | "
              f"{predicted['shuffler_gain']['value']:.4g} |", flush=True)


def amplification() -> None:
    """Issue 26: the central epsilon of the randomizer's own blanket (mechanisms/_amplification.py) vs FMT21."""
    import math

    from ldpplan.mechanisms import _amplification as amp
    from ldpplan.mechanisms.pie._channel import collision_probability

    n, delta = 10**5, 1e-6
    print(f"Central epsilon at n = {n:.0e}, delta = {delta:g}: FMT21 = min(Thm 3.1, Thm 3.2 numerical) for any "
          "epsilon0-LDP randomizer; the others are the randomizer's own blanket (Balle et al. 2019, Sec. 3; "
          "`mechanisms/_amplification.py`), each cell `epsilon (FMT21 / epsilon)`. GLH: g = round(e^epsilon0 + 1) "
          "with the runtime hash family's collision probability; SUE/OUE: symmetric / optimized unary "
          "encoding; HR: Hadamard response, k = 100, B blocks; k-RR: k = 10.\n")
    names = ("GLH", "SUE", "OUE", "HR B=1", "HR B=8", "k-RR k=10")
    print("| epsilon0 | FMT21 | " + " | ".join(names) + " | s |")
    print("|---" * (len(names) + 3) + "|")
    for epsilon0 in (1.0, 2.0, 4.0, 8.0):
        start = time.perf_counter()
        fmt = min(solver.fmt21_numerical(epsilon0, n, delta), solver.fmt21_closed_form(epsilon0, n, delta))
        g = max(2, int(round(math.exp(epsilon0) + 1)))
        keep = math.exp(epsilon0 / 2) / (math.exp(epsilon0 / 2) + 1)
        randomizers = (amp.glh_pairs(epsilon0, g, collision_probability(g)), amp.unary_pairs([keep], [1 - keep]),
                       amp.unary_pairs([0.5], [1 / (math.exp(epsilon0) + 1)]), amp.hadamard_pairs(epsilon0, 100, 1),
                       amp.hadamard_pairs(epsilon0, 100, 8), amp.krr_pairs(epsilon0, 10))
        cells = []
        for pairs in randomizers:
            ours = amp.blanket_epsilon_upper(n, delta, pairs, epsilon0, guess=0.5 * fmt)
            cells.append(f"{ours:.4g} ({fmt / ours:.2f}x)")
        print(f"| {epsilon0:g} | {fmt:.4g} | " + " | ".join(cells) + f" | {time.perf_counter() - start:.1f} |",
              flush=True)


HEADER = """# Shuffle bounds (issue 21): `python benchmarks/bench_shuffle.py > benchmarks/SHUFFLE_RESULTS.md`

Machine: 2 shared cores; seconds are one `shuffle_bound` call (upper and lower), cache cleared.
k = 2 is the exact curve of shuffled binary RR (maximum over every dataset, `solvers/_shuffle_binary.py`):
`upper` and `lower` bracket it to `tol`; `lower` is attained by a concrete neighbouring pair.
Gain: central epsilon = 1, delta = 1e-8, n = 10^6 users (predicted total l2 loss, eq. 22/23).
"""


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gain-only", action="store_true")
    parser.add_argument("--amplification-only", action="store_true")
    args = parser.parse_args()
    if args.amplification_only:
        amplification()
        sys.exit(0)
    print(HEADER)
    gain()
    if not args.gain_only:
        print()
        table()
        print()
        amplification()

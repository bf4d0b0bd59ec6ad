"""Weighted error of the records schemes on the flights record (issue 30's closing-note tables).

Run::

    python benchmarks/records_tables.py                      # flights record, default weights
    python benchmarks/records_tables.py --weights 1 2 0.5 1 1 --epsilons 0.5 1 2 4 8

The record is the five categorical columns of ``nycflights13_flights.csv`` (carrier, origin, dest,
month, hour; the domain sizes are read from the data when ``planner.data.default_data_dir()`` holds
it, else the known sizes 16, 3, 105, 12, 20 are used and the output says so). Default weights:
carrier 1, origin 2, dest 0.5, month 1, hour 1 (the origin's error counts double, the destination's
half). Variances are ``n Var(f_hat_j)`` per user, summed with the weights, at a true frequency 0
(Wang et al. 2017's usual approximation, the done-when's) and again at ``f_j = 1/k_j`` (an average
item), where SMP pays its sampling term ``f (1 - f)(1/pi_j - 1)`` (``solvers.records``).

Printed (markdown): per epsilon, the weighted variance of uniform SPL (``epsilon/d`` each), the
certified optimal SPL split, uniform SMP (``pi_j = 1/d``), optimal SMP (``pi_j ~ sqrt(A_j)``), RS+FD at
the ``epsilon'`` that provably gives the whole record ``epsilon`` (``rsfd_epsilon_for``: ``epsilon' =
epsilon``, not the paper's ``ln(d (e^epsilon - 1) + 1)``), and the chosen scheme (the smallest of the
certified optima and RS+FD) with its certificate's relative gap; then the chosen allocation
(``epsilon_j`` or ``pi_j`` and the oracle per attribute); both for each frequency setting. Closed forms
only: it runs in about a second.
"""
from __future__ import annotations

import argparse
from typing import Sequence

from ldpplan.planner.data import default_data_dir
from ldpplan.planner.data.flights import FLIGHTS_CATEGORICAL, FLIGHTS_FILE, load_flights
from ldpplan.solvers import records

#: domain sizes of carrier, origin, dest, month, hour in nycflights13 (used when the data is absent)
KNOWN_SIZES = (16, 3, 105, 12, 20)
DEFAULT_WEIGHTS = (1.0, 2.0, 0.5, 1.0, 1.0)
DEFAULT_EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)


def flights_sizes() -> tuple[tuple[int, ...], str]:
    """The categorical columns' domain sizes and where they came from."""
    path = default_data_dir() / FLIGHTS_FILE
    if path.is_file():
        return load_flights(path).domain_sizes(FLIGHTS_CATEGORICAL), f"read from {FLIGHTS_FILE}"
    return KNOWN_SIZES, f"{FLIGHTS_FILE} not found: the known sizes"


def schemes(epsilon: float, attributes: records.RecordAttributes) -> dict:
    """Every scheme's allocation at ``epsilon`` (name -> allocation)."""
    return {"uniform SPL": records.spl_uniform(epsilon, attributes),
            "optimal SPL": records.spl_optimal(epsilon, attributes),
            "uniform SMP": records.smp_uniform(epsilon, attributes),
            "optimal SMP": records.smp_optimal(epsilon, attributes),
            "RS+FD": records.rsfd_allocation(epsilon, attributes)}


def chosen(allocations: dict) -> str:
    """The name of the smallest weighted variance among the certified optima and RS+FD."""
    return min(("optimal SPL", "optimal SMP", "RS+FD"), key=lambda name: allocations[name].weighted_variance)


def _table(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def _allocation_cells(allocation) -> list[str]:
    if isinstance(allocation, records.SplitAllocation):
        return [f"ε={e:.3f} {p.upper()}" for e, p in zip(allocation.epsilons, allocation.protocols)]
    if isinstance(allocation, records.SamplingAllocation):
        return [f"π={x:.3f} {p.upper()}" for x, p in zip(allocation.probabilities, allocation.protocols)]
    return [f"ε'={allocation.amplified_epsilon:.3f} {p.upper()}" for p in allocation.protocols]


def _gap(allocation) -> str:
    certificate = getattr(allocation, "certificate", None)
    if certificate is None:
        return "-"
    return f"{(certificate.upper_bound - certificate.lower_bound) / certificate.upper_bound:.1e}"


def tables(epsilons: Sequence[float], attributes: records.RecordAttributes) -> tuple[str, str]:
    """The weighted-variance table and the chosen-allocation table (markdown)."""
    names = ("uniform SPL", "optimal SPL", "uniform SMP", "optimal SMP", "RS+FD")
    variance_rows, allocation_rows = [], []
    for epsilon in epsilons:
        allocations = schemes(epsilon, attributes)
        best = chosen(allocations)
        variance_rows.append([f"{epsilon:g}"] + [f"{allocations[n].weighted_variance:.4g}" for n in names]
                             + [best, _gap(allocations[best])])
        allocation_rows.append([f"{epsilon:g}", best] + _allocation_cells(allocations[best]))
    variance = _table(["ε"] + list(names) + ["chosen", "certificate gap (rel.)"], variance_rows)
    allocation = _table(["ε", "chosen"] + [f"{c} (k={k})" for c, k in zip(FLIGHTS_CATEGORICAL, attributes.domain_sizes)],
                        allocation_rows)
    return variance, allocation


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", type=float, nargs=5, default=DEFAULT_WEIGHTS,
                        help="weights of carrier, origin, dest, month, hour (default 1 2 0.5 1 1)")
    parser.add_argument("--epsilons", type=float, nargs="+", default=DEFAULT_EPSILONS, help="record budgets (nats)")
    args = parser.parse_args(argv)
    sizes, source = flights_sizes()
    described = ", ".join(f"{c} k={k} w={w:g}" for c, k, w in zip(FLIGHTS_CATEGORICAL, sizes, args.weights))
    print(f"Flights record ({source}): {described}.")
    settings = (("f = 0 (the approximate variance of the papers and of multi-freq-ldpy)", 0.0),
                ("f_j = 1/k_j (an average item: SMP's sampling term f (1 - f)(1/pi - 1) appears)",
                 [1.0 / k for k in sizes]))
    for label, frequencies in settings:
        attributes = records.RecordAttributes.of(sizes, args.weights, frequencies)
        variance, allocation = tables(args.epsilons, attributes)
        print(f"\n### Weighted variance sum_j w_j n Var(f_hat_j) per user at {label}\n")
        print("RS+FD at epsilon' = its provable whole-record epsilon; the gap is the chosen certificate's.\n")
        print(variance)
        print("\nThe chosen scheme's allocation (epsilon_j or pi_j, and the frequency oracle, per attribute):\n")
        print(allocation)


if __name__ == "__main__":
    main()

"""Issue 29's done-when at the runtime level: a Monte Carlo of 2e5 users through ``mechanisms.load(plan)``.

Usage::

    python benchmarks/numeric_runtime_table.py [n]

For epsilon in {0.25, 0.5, 1, 2, 4, 8} and each plan mechanism (duchi, piecewise, hybrid,
square-wave): a plan on the range [-1, 1] (the planner's default grids), ``n`` users (default 2e5)
all at the plan's worst input ``x*`` (the real input whose report variance, randomized rounding to
the input grid included, is the plan's ``predicted.mean_variance_times_n``), one call of the runtime's
exact ``perturb`` and its ``estimate``. Printed as a markdown table:

* ``V`` the plan's ``predicted.mean_variance_times_n``; ``s^2`` the reports' sample variance, so the
  observed variance of the mean is ``s^2 / n`` against the predicted ``V / n``;
* the tolerance ``max(5% V, 5 se(s^2))``, ``se(s^2) = sqrt((m_4 - s^4)/n)`` (``m_4`` the reports' fourth
  central moment: the variance of the sample variance); ``test`` says which one applies: ``5%`` where
  five standard errors are below 5% (5% is resolvable at this ``n``), ``5 se`` otherwise;
* the bias ``(value_mean - x*) / se``, ``se = s / sqrt(n)``: within 5 standard errors.

Fixed seeds (``[29, 100 epsilon, mechanism index]``); about half a minute on one core.
"""
from __future__ import annotations

import dataclasses
import math
import sys

import numpy as np

from ldpplan import mechanisms, planner

EPSILONS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
MECHANISMS = ("duchi", "piecewise", "hybrid", "square-wave")
N_USERS = 200_000


@dataclasses.dataclass(frozen=True)
class RuntimeCase:
    """One cell of the table (the module docstring defines the figures)."""

    mechanism: str
    epsilon: float
    worst_input: float
    predicted: float
    worst_input_variance: float
    sample_variance: float
    sample_variance_se: float
    bias_in_se: float
    n: int

    @property
    def relative_error(self) -> float:
        """``s^2 / V - 1``."""
        return self.sample_variance / self.predicted - 1.0

    @property
    def resolves_5_percent(self) -> bool:
        """Five standard errors of ``s^2`` are at most 5% of ``V``."""
        return 5.0 * self.sample_variance_se <= 0.05 * self.predicted

    @property
    def tolerance(self) -> float:
        """``max(5% V, 5 se(s^2))``, relative to ``V``."""
        return max(0.05, 5.0 * self.sample_variance_se / self.predicted)

    @property
    def passes(self) -> bool:
        """Variance within the tolerance and bias within 5 standard errors."""
        return abs(self.relative_error) <= self.tolerance and abs(self.bias_in_se) <= 5.0


def worst_input(mech) -> tuple[float, float]:
    """The real input of ``[low, high]`` with the largest report variance and that variance (user units).

    Between grid neighbours ``a < b`` the variance is ``(1-t) V_a + t V_b + t (1-t) D``, ``D = (m_b - m_a)^2``
    (randomized rounding), a concave quadratic in ``t`` maximised at ``t = (V_b - V_a + D) / (2 D)``
    clipped to ``[0, 1]``; the candidates are these maximisers, evaluated by the runtime's own
    ``report_variance``.
    """
    grid, values = np.asarray(mech.input_grid), np.asarray(mech.output_values)
    q = mech.channel_matrix()
    mean = q @ values
    var = np.maximum(q @ values ** 2 - mean ** 2, 0.0)
    d = np.diff(mean) ** 2
    t = np.clip(np.divide(np.diff(var) + d, 2 * d, out=np.zeros_like(d), where=d > 0), 0.0, 1.0)
    unit = np.concatenate([grid, grid[:-1] + t * np.diff(grid)])
    x = mech.low + (unit + 1.0) * (mech.high - mech.low) / 2.0
    v = mech.report_variance(x)
    i = int(np.argmax(v))
    return float(x[i]), float(v[i])


def runtime_case(mechanism: str, epsilon: float, n: int = N_USERS) -> RuntimeCase:
    """Plan ``mechanism`` at ``epsilon`` on [-1, 1]; ``n`` users at its worst input through the runtime."""
    plan = planner.make_plan({"mechanism": mechanism, "epsilon": epsilon, "range": [-1, 1]})
    mech = mechanisms.load(plan)
    x_star, v_star = worst_input(mech)
    rng = np.random.default_rng([29, int(round(epsilon * 100)), MECHANISMS.index(mechanism)])
    aggregate = mech.aggregate(mech.perturb(np.full(n, x_star), rng))
    estimate = mech.estimate(aggregate)
    counts, values = aggregate.counts["y"].astype(np.float64), np.asarray(mech.output_values)
    mean = float(counts @ values) / n
    central = values - mean
    s2 = float(counts @ central ** 2) / (n - 1)
    m4 = float(counts @ central ** 4) / n
    se = math.sqrt(s2 / n)
    return RuntimeCase(mechanism, epsilon, x_star, float(plan["predicted"]["mean_variance_times_n"]["value"]),
                       v_star, s2, math.sqrt(max(m4 - s2 * s2, 0.0) / n), (estimate.value_mean - x_star) / se, n)


def table(n: int = N_USERS) -> list[RuntimeCase]:
    """Every case, printed as a markdown table."""
    cases = []
    print(f"| epsilon | mechanism | x* | V (plan) | s^2 | s^2/V - 1 | tolerance | test | bias / se | ok |\n"
          f"|---|---|---|---|---|---|---|---|---|---|")
    for epsilon in EPSILONS:
        for mechanism in MECHANISMS:
            c = runtime_case(mechanism, epsilon, n)
            cases.append(c)
            print(f"| {epsilon:g} | {mechanism} | {c.worst_input:+.4f} | {c.predicted:.5g} | {c.sample_variance:.5g} "
                  f"| {c.relative_error:+.4f} | {c.tolerance:.4f} | {'5%' if c.resolves_5_percent else '5 se'} "
                  f"| {c.bias_in_se:+.2f} | {'yes' if c.passes else 'NO'} |", flush=True)
    return cases


if __name__ == "__main__":
    table(int(float(sys.argv[1])) if len(sys.argv) > 1 else N_USERS)

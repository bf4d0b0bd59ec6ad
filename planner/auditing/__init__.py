"""``ldpplan audit``: an empirical lower bound on epsilon, measured on the runtime itself.

The verifier proves that a plan's numbers satisfy its guarantee; the audit measures whether
the code that samples from those numbers does. For each guarantee the plan states it picks,
from the privacy map of the family, input pairs ``(x, x')`` and an output event ``E`` that
make the ratio tight (:mod:`.pairs`, one module per family), runs the mechanism ``trials``
times on each input, and turns the event counts into a one-sided lower confidence bound on
``ln(Pr[E|x] / Pr[E|x'])`` with Clopper-Pearson intervals (:mod:`.bounds`), Bonferroni over
the tests. A bound above its claim means the implementation leaks (at the stated confidence).

Examples
--------
>>> from ldpplan.planner import audit, make_plan, example_spec
>>> result = audit(make_plan(example_spec("health")), trials=20_000, rng=np.random.default_rng(1))  # doctest: +SKIP
>>> result.consistent  # doctest: +SKIP
True
"""
from __future__ import annotations

import dataclasses
import math
import os
import time
from typing import Any, Callable, Mapping

import numpy as np

from .._report import Table
from ..errors import SpecError
from . import bounds
from . import explore as explore_module
from .pairs import InputPair, audit_domain, audit_pairs
from .run import count_events
from ... import mechanisms
from ...mechanisms import Plan, read_plan

__all__ = ["audit", "AuditResult", "AuditPair", "audit_pairs", "planned_trials"]


@dataclasses.dataclass(frozen=True)
class AuditPair:
    """One audited (input pair, event).

    Attributes
    ----------
    inputs : tuple of (str, str)
        Numerator and denominator inputs of the bounded ratio (for a ``never`` test, the
        input and ``"-"``).
    event : str
    counts : tuple of (int, int)
        Runs (out of ``trials`` each) in the event on the numerator and denominator input.
    trials : int
    claim : float
        The plan's claim for this pair, nats (0 for a ``never`` test).
    bound : float
        Lower confidence bound on the log-ratio, nats, ``>= 0`` (``inf`` when a ``never``
        event happened).
    never : bool
    source : str
    """

    inputs: tuple[str, str]
    event: str
    counts: tuple[int, int]
    trials: int
    claim: float
    bound: float
    never: bool = False
    source: str = ""

    @property
    def holds(self) -> bool:
        """The bound does not exceed the claim."""
        return self.bound <= self.claim

    @property
    def ratio(self) -> float:
        """``bound / claim`` (``inf`` for a violated ``never`` test; 0 for a clean one)."""
        if self.claim > 0:
            return self.bound / self.claim
        return math.inf if self.bound > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (``inf`` as the string ``"inf"``)."""
        return {"inputs": list(self.inputs), "event": self.event, "counts": list(self.counts),
                "trials": self.trials, "claim": self.claim,
                "bound": "inf" if math.isinf(self.bound) else self.bound, "never": self.never,
                "holds": self.holds, "source": self.source}


@dataclasses.dataclass(frozen=True)
class AuditResult:
    """Result of :func:`audit`.

    Attributes
    ----------
    mechanism : str
        The plan's mechanism.
    epsilon_claimed, epsilon_lower_bound : float
        Claim and lower bound (nats) of the most binding pair: the largest ``bound / claim``.
    confidence : float
        Joint confidence of all the pairs' bounds (Bonferroni).
    trials : int
        Runs of the mechanism on each input.
    consistent : bool
        Every pair's bound is at most its claim (and no ``never`` event happened).
    pairs : tuple of AuditPair
    seconds : float
        Wall-clock time of the runs (exploration and confirmation).
    min_detectable_epsilon : float
        The power of the run: the smallest true epsilon (nats) of the most binding pair that
        this run flags with probability >= 0.95 (:func:`bounds.min_detectable_epsilon` at the
        trials and Bonferroni level of the run, from the honest probability of the event on the
        denominator input). The most binding pair is the plan's tight test (:mod:`.pairs`, and the
        tight events of the confirmed candidates) of claim ``epsilon_claimed`` with the smallest
        ``min_detectable_epsilon``; ``inf`` when no test reaches power 0.95.
    explored : int
        Inputs screened by the exploration stage (:mod:`.explore`; 0 when it was skipped).
    explore_trials : int
        Runs per input of the exploration stage.
    """

    mechanism: str
    epsilon_claimed: float
    epsilon_lower_bound: float
    confidence: float
    trials: int
    consistent: bool
    pairs: tuple[AuditPair, ...]
    seconds: float
    min_detectable_epsilon: float = math.inf
    explored: int = 0
    explore_trials: int = 0

    @property
    def binding(self) -> AuditPair:
        """The most binding pair."""
        return max(self.pairs, key=lambda p: p.ratio)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (what ``ldpplan audit --json`` prints)."""
        return {"mechanism": self.mechanism, "epsilon_claimed": self.epsilon_claimed,
                "epsilon_lower_bound": ("inf" if math.isinf(self.epsilon_lower_bound) else self.epsilon_lower_bound),
                "confidence": self.confidence, "trials": self.trials, "consistent": self.consistent,
                "min_detectable_epsilon": (None if math.isinf(self.min_detectable_epsilon)
                                           else self.min_detectable_epsilon),
                "explored": self.explored, "explore_trials": self.explore_trials, "seconds": self.seconds, "pairs": [p.to_dict() for p in self.pairs]}

    def table(self) -> Table:
        """The pairs as a planner :class:`Table` (nats)."""
        rows = [[(" and " if p.never else " vs ").join(x for x in p.inputs if x != "-"), p.event,
                 f"{p.counts[0]} / {p.counts[1]}", p.claim, p.bound, "yes" if p.holds else "NO"] for p in self.pairs]
        power = (f"a leak to epsilon >= {self.min_detectable_epsilon:.4g} on the most binding pair would have "
                 f"been caught (power 0.95); "
                 if math.isfinite(self.min_detectable_epsilon) else "")
        explored = (f"{self.explored:,} inputs screened ({self.explore_trials:,} runs each); " if self.explored
                    else "")
        verdict = "consistent" if self.consistent else "a lower bound exceeds its claim: the implementation leaks"
        note = (f"{self.trials:,} trials per input, {self.confidence:g} joint confidence (Clopper-Pearson, "
                f"Bonferroni over {sum(not p.never for p in self.pairs)} tests); most binding: "
                f"{self.epsilon_lower_bound:.4g} {'<=' if self.epsilon_lower_bound <= self.epsilon_claimed else '>'} "
                f"{self.epsilon_claimed:.4g} nats claimed; {verdict}; {power}{explored}"
                f"{self.seconds:.1f} s")
        # a summary of a long table always shows the pairs that do not hold, then the most binding ones
        binding = sorted(range(len(self.pairs)), key=lambda k: (self.pairs[k].holds,
                                                                 -(self.pairs[k].bound - self.pairs[k].claim)))
        return Table(title=f"audit of {self.mechanism}: empirical lower bounds on epsilon (nats)",
                     columns=["inputs", "event", "counts", "claim", "lower bound", "holds"], rows=rows, note=note,
                     keep=binding)


def _read(plan: Any) -> Mapping[str, Any]:
    if isinstance(plan, Plan):
        return plan  # read once already (read-only, fingerprinted)
    if isinstance(plan, Mapping):
        return dict(plan)
    return read_plan(os.fspath(plan))


def planned_trials(plan: Any, confidence: float = 0.95) -> int:
    """The default number of trials of :func:`audit` for ``plan`` (see :func:`bounds.default_trials`)."""
    pairs = audit_pairs(_read(plan))
    return _default_trials(pairs, confidence)


def _ratio_tests(pairs: list[InputPair]) -> int:
    return sum(1 for p in pairs for t in p.tests if not t.never)


def _default_trials(pairs: list[InputPair], confidence: float) -> int:
    every = [t for p in pairs for t in p.tests if not t.never]
    # the tests whose honest ratio attains (95 % of) the claim decide; all of them when none does
    tight = [t for t in every if t.probabilities[1] > 0 and t.probabilities[0] > 0
             and math.log(t.probabilities[0] / t.probabilities[1]) + t.offset >= 0.95 * t.claim]
    chosen = tight or every
    single = [(t.probabilities[1], t.claim) for t in chosen if not t.pool]
    pooled = [(t.probabilities[1], t.claim, t.offset) for t in chosen if t.pool]
    work = sum(2.0 * p.cost for p in pairs)
    alpha = bounds.per_bound_alpha(confidence, len(every) + explore_module.TOP * explore_module.TESTS_PER_CANDIDATE)
    trials = bounds.default_trials(single or pooled, alpha, work)
    # a pooled test decides only where no single-event test reaches the target within the budget
    if single and pooled and not bounds.reaches(single, trials, alpha):
        trials = bounds.default_trials(pooled, alpha, work)
    return trials


def audit(plan: Any, *, mechanism: Any = None, trials: int | None = None, confidence: float = 0.95,
          rng: np.random.Generator | None = None, progress: Callable[[int, int], None] | None = None,
          explore: bool = True) -> AuditResult:
    """Measure a lower bound on the plan's epsilon from the runtime's own outputs.

    Two stages: the exploration (:mod:`.explore`) runs every input of the family's domain and
    picks the ``TOP`` events and input pairs with the largest empirical ratio (every report
    column counts, so a column that depends on the input where the plan says it must not, or a
    deterministic function of the input, is found); the confirmation runs the family's tight
    pairs (:mod:`.pairs`) and the selected ones ``trials`` times each on fresh samples and bounds
    every ratio with Clopper-Pearson intervals, Bonferroni over all of them. On huge domains the
    family adds a pooled test (:class:`.events.Test` ``pool``: the LDP inequality summed over
    disjoint events and inputs), which decides the default trials when no single-event test can.

    Parameters
    ----------
    plan : mapping or path-like
        A plan (format 2.0) of any family.
    mechanism : object, optional
        Anything with the runtime protocol's ``perturb(data, rng=...) -> Reports`` (the plan's
        report columns). Default: ``ldpplan.mechanisms.load(plan)``.
    trials : int, optional
        Runs on each input of the confirmation stage (default: :func:`planned_trials`: the
        fewest for which the most sensitive test flags a leak to 1.05 x its claim with
        probability 0.95, capped by a work budget; see
        :func:`ldpplan.planner.auditing.bounds.default_trials`).
    confidence : float
        Joint confidence of the bounds, in (0, 1).
    rng : numpy.random.Generator, optional
        Passed to ``perturb`` (default: a fresh ``default_rng()``).
    progress : callable, optional
        ``progress(advance, total)`` in runs of the mechanism (both stages; ``total`` counts
        ``TOP`` candidates, the advances sum to it).
    explore : bool
        Run the exploration stage (default ``True``).

    Returns
    -------
    AuditResult

    Raises
    ------
    SpecError
        ``trials`` or ``confidence`` out of range.
    PlanFormatError, PlanError
        A malformed plan, or (default mechanism) a plan the runtime refuses.

    References
    ----------
    Clopper & Pearson (1934); Gu et al. ICDE 2020 eq. (6), (16); Gu et al. USENIX Security 2020
    Theorems 2-3; Murakami & Takahashi TDP 2021 eq. (2)-(3); Murakami & Kawamoto 2019 Def. 2-4.
    """
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0.0 < float(confidence) < 1.0:
        raise SpecError("confidence", "must be a number in (0, 1)", confidence)
    if trials is not None and (isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or trials < 1):
        raise SpecError("trials", "must be an integer >= 1", trials)
    data = _read(plan)
    if mechanism is None:
        mechanism = mechanisms.load(data)  # looked up on use: a test wraps the runtime's load
    if rng is None:
        rng = np.random.default_rng()
    pairs = audit_pairs(data)
    trials = int(trials) if trials is not None else _default_trials(pairs, confidence)
    start = time.perf_counter()
    explored = runs = 0
    domain = audit_domain(data) if explore else None
    if domain is not None:
        runs = explore_module.explore_trials(domain)
        explored = explore_module.screened_count(domain, runs)
    total = explored * runs + 2 * trials * (len(pairs) + (explore_module.TOP if explore else 0))
    done = [0]
    if progress is not None:
        progress(0, total)  # the bar shows its total from the start

    def step(advance: int, _total: int) -> None:
        done[0] += advance
        if progress is not None:
            progress(advance, total)

    if domain is not None:
        candidates = explore_module.explore(mechanism, domain, runs, rng, progress=step)
        pairs = pairs + explore_module.candidate_pairs(candidates, domain, pairs)
    counts = count_events(mechanism, pairs, trials, rng, step)
    if progress is not None and done[0] < total:  # fewer candidates than TOP
        progress(total - done[0], total)
    seconds = time.perf_counter() - start
    result = _result(str(data["mechanism"]), pairs, counts, trials, float(confidence), seconds)
    return dataclasses.replace(result, explored=explored, explore_trials=runs if explored else 0)


def _detectable(pairs: list[InputPair], trials: int, alpha: float, claim: float) -> float:
    """``min_detectable_epsilon`` of the most binding tight test: the smallest over the tests of the
    plan's numbers that share the reported ``claim`` (all of them when none does)."""
    tests = [t for p in pairs for t in p.tests if not (t.never or t.estimated) and t.claim > 0]
    same = [t for t in tests if math.isclose(t.claim, claim, rel_tol=1e-12)]
    best, best_ratio = math.inf, math.inf
    for test in same or tests:
        eps = test.offset + bounds.min_detectable_epsilon(test.probabilities[1], trials, alpha,
                                                          test.claim - test.offset)
        if eps / test.claim < best_ratio:
            best, best_ratio = eps, eps / test.claim
    return best


def _result(mech: str, pairs: list[InputPair], counts: list[np.ndarray], trials: int, confidence: float,
            seconds: float) -> AuditResult:
    m = _ratio_tests(pairs)
    alpha = bounds.per_bound_alpha(confidence, m)
    out: list[AuditPair] = []
    p_den: list[float] = []
    for pair, c in zip(pairs, counts):
        for test, (k_first, k_second) in zip(pair.tests, c.tolist()):
            if test.never:
                hits = k_first + (k_second if test.both else 0)
                names = (pair.first, pair.second) if test.both else (pair.first, "-")
                out.append(AuditPair(names, test.event, (hits, 0), trials, 0.0, math.inf if hits else 0.0, True,
                                     test.source))
                p_den.append(0.0)
                continue
            num, den = (k_second, k_first) if test.reverse else (k_first, k_second)
            names = (pair.second, pair.first) if test.reverse else (pair.first, pair.second)
            bound = max(0.0, test.offset + bounds.log_ratio_bound(num, den, trials, alpha))
            out.append(AuditPair(names, test.event, (num, den), trials, test.claim, bound, False, test.source))
            p_den.append((den + 0.5) / (trials + 1.0) if test.estimated else test.probabilities[1])
    binding = max(out, key=lambda p: p.ratio)
    ratio_pairs = [p for p in out if not p.never] or out
    shown = binding if binding.never and binding.bound > 0 else max(ratio_pairs, key=lambda p: p.ratio)
    detectable = _detectable(pairs, trials, alpha, shown.claim)
    return AuditResult(mech, shown.claim, shown.bound, confidence, trials, all(p.holds for p in out),
                       tuple(out), seconds, detectable)

"""Privacy amplification by shuffling, as the planner offers it (wraps :mod:`ldpplan.solvers.shuffle`).

``shuffle_bound(epsilon0, n, delta, *, mechanism=None, domain_size=None)`` gives the central
``(epsilon, delta)`` of ``n`` shuffled reports (a sound upper bound ``epsilon`` and a lower bound
``epsilon_lower``, with their sources); ``local_epsilon_for(central_epsilon, delta, n, ...)`` the
largest ``epsilon0`` (0.001 grid) that meets a central target. ``mechanism`` takes the plan's
names: ``None`` (any epsilon0-LDP randomizer: Feldman, McMillan, Talwar, FOCS 2021, Theorems 3.1
and 3.2), ``"rr"`` (k-ary randomized response, ``domain_size = k`` required; k = 2 is binary RR)
or ``"glh"`` (``hash_range`` and ``collision`` required); an argument the mechanism would ignore
is refused (ValueError naming it).

A plan claims only what the runtime's ``load()`` confirms (:mod:`ldpplan.mechanisms._shuffle_gate`):
:func:`confirmable_guarantee` keeps the solver's bound when the runtime confirms it and otherwise
falls back to the runtime's own bound (e.g. binary RR: the blanket instead of the exact curve).

:func:`shuffled_guarantee` is the ``guarantee.shuffled`` block of a plan, and
:func:`check_shuffled` recomputes it for ``verify``.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

from ._shuffle_blanket import solver_keywords as _solver_keywords
from ._shuffle_blanket import two_level_claim as _two_level_claim
from ._shuffle_blanket import two_level_source as _two_level_source
from ..solvers import _shuffle_curves as curves
from ..solvers import shuffle as solver
from ..solvers.shuffle import TARGET_STEP, ShuffleBound
from ..mechanisms._shuffle_gate import MAX_SHUFFLE_N, check_shuffled_claim, upper_epsilon
from ..mechanisms._amplification import two_level_delta
from .errors import SpecError
from ._report import Table


def _solver_kind(mechanism: str | None, domain_size: int | None, hash_range: int | None,
                 collision: float | None) -> dict[str, Any]:
    """The plan's mechanism names -> the solver's keyword arguments; refuses ignored or contradicting ones.

    ``None``: any epsilon0-LDP randomizer (no other argument); ``"rr"``: k-ary randomized response
    on ``domain_size = k`` values (k = 2 is binary RR), as in plans; ``"glh"``: generalized local
    hashing with ``hash_range = g`` and the hash family's ``collision`` probability.

    Raises
    ------
    ValueError
        One line naming the argument: an unknown mechanism, a missing argument, or one the
        mechanism would ignore.
    """
    given = {"domain_size": domain_size, "hash_range": hash_range, "collision": collision}
    needs = {None: (), "rr": ("domain_size",), "glh": ("hash_range", "collision")}
    if mechanism not in needs:
        raise ValueError(f"mechanism: must be None (any epsilon0-LDP randomizer), 'rr' (k-ary randomized response, "
                         f"with domain_size) or 'glh' (with hash_range and collision), as in plans; got {mechanism!r}")
    for name, value in given.items():
        if value is not None and name not in needs[mechanism]:
            raise ValueError(f"{name}: not an argument of mechanism={mechanism!r} (it would be ignored); got {value!r}")
        if value is None and name in needs[mechanism]:
            raise ValueError(f"{name}: required with mechanism={mechanism!r}")
    if mechanism == "rr":
        if domain_size is None or isinstance(domain_size, bool) or int(domain_size) != domain_size or domain_size < 2:
            raise ValueError(f"domain_size: k-ary RR needs an integer domain size >= 2, got {domain_size!r}")
        return {"mechanism": "rr"} if domain_size == 2 else {"mechanism": "krr", "domain_size": int(domain_size)}
    if mechanism == "glh":
        return {"mechanism": "glh", "hash_range": hash_range, "collision": collision}
    return {}


def shuffle_bound(epsilon0: float, n: int, delta: float, *, mechanism: str | None = None,
                  domain_size: int | None = None, hash_range: int | None = None, collision: float | None = None
                  ) -> ShuffleBound:
    """Central ``(epsilon, delta)`` of ``n`` shuffled epsilon0-LDP reports -> ``ShuffleBound``.

    Parameters
    ----------
    epsilon0 : float
        Local epsilon of one report (nats).
    n : int
        Users, one report each.
    delta : float
        In (0, 1).
    mechanism : {None, "rr", "glh"}
        The plan's mechanism names: ``None`` any epsilon0-LDP randomizer; ``"rr"`` k-ary randomized
        response with ``domain_size = k`` (required; ``k = 2`` is binary RR); ``"glh"`` with
        ``hash_range`` and ``collision`` (required).
    domain_size, hash_range, collision
        As ``mechanism`` requires; an argument it would ignore is refused.

    Raises
    ------
    ValueError
        One line naming the argument (see :func:`ldpplan.solvers.shuffle.shuffle_bound` for the ranges).

    References
    ----------
    See :func:`ldpplan.solvers.shuffle.shuffle_bound`.
    """
    return solver.shuffle_bound(epsilon0, n, delta, **_solver_kind(mechanism, domain_size, hash_range, collision))


def local_epsilon_for(central_epsilon: float, delta: float, n: int, *, mechanism: str | None = None,
                      domain_size: int | None = None) -> float:
    """Largest epsilon0 (0.001 grid) whose plan claim (:func:`confirmable_guarantee`) meets ``central_epsilon``.

    ``mechanism``/``domain_size`` as in :func:`shuffle_bound` (``"glh"`` plans use the generic
    bound: pass ``None``). The solver's search on its bound gives the start; when the runtime
    cannot confirm that bound, the grid is searched down on the claim the plan will carry.

    Raises
    ------
    ValueError
        As :func:`ldpplan.solvers.shuffle.local_epsilon_for`.
    """
    kind = _solver_kind(mechanism, domain_size, None, None)
    top = solver.local_epsilon_for(central_epsilon, delta, n, **kind)

    def meets(step: int) -> bool:
        return confirmable_guarantee(step * TARGET_STEP, n, delta, kind)["epsilon"] <= central_epsilon

    hi = int(round(top / TARGET_STEP))
    if meets(hi):
        return top
    lo = 1
    if not meets(lo):
        raise ValueError(f"central_epsilon: {central_epsilon} is not met even by epsilon0 = {TARGET_STEP:.3f}")
    while hi - lo > 1:  # invariant: meets(lo), not meets(hi)
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if meets(mid) else (lo, mid)
    return round(lo * TARGET_STEP, 6)


def fmt21_closed_form(epsilon0: float, n: int, delta: float) -> float:
    """FMT21 Theorem 3.1 (see :func:`ldpplan.solvers.shuffle.fmt21_closed_form`)."""
    return solver.fmt21_closed_form(epsilon0, n, delta)

__all__ = ["ShuffleBound", "shuffle_bound", "local_epsilon_for", "shuffled_guarantee", "check_shuffled",
           "local_epsilon_of_plan", "attach_shuffled", "verify_shuffled",
           "central_guarantee", "confirmable_guarantee", "lifetime_guarantee", "central_tables"]


def shuffled_guarantee(epsilon0: float, n: int, delta: float, *, mechanism: str | None = None,
                       domain_size: int | None = None, **glh: Any) -> dict[str, Any]:
    """``guarantee.shuffled = {n, delta, epsilon, epsilon_lower, source}`` for a local ``epsilon0``.

    ``glh``: ``hash_range`` and ``collision`` of a hashing randomizer (from its family's ``shuffle_randomizer``).

    References
    ----------
    See :mod:`ldpplan.solvers.shuffle`.
    """
    bound = solver.shuffle_bound(epsilon0, n, delta, mechanism=mechanism, domain_size=domain_size, **glh)
    return {"n": int(n), "delta": float(delta), "epsilon": bound.epsilon, "epsilon_lower": bound.epsilon_lower,
            "source": bound.source}


def _gate_randomizer(randomizer: Mapping[str, Any]) -> dict[str, Any]:
    """The family's randomizer keywords -> the runtime gate's description (``kind`` and its numbers).

    ``blanket``: a two-level description given as it is (Hadamard response, unary encodings);
    ``mechanism="glh"``: the hashing kind of :mod:`ldpplan.mechanisms._amplification`.
    """
    mechanism = randomizer.get("mechanism")
    if randomizer.get("blanket") is not None:
        return dict(randomizer["blanket"])
    if mechanism in ("rr", "krr"):
        return {"kind": "krr", "domain_size": 2 if mechanism == "rr" else int(randomizer["domain_size"])}
    if mechanism == "glh":
        return {"kind": "hash", "hash_range": int(randomizer["hash_range"]), "collision": float(randomizer["collision"])}
    return {"kind": "generic"}


def confirmable_guarantee(epsilon0: float, n: int, delta: float,
                          randomizer: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``guarantee.shuffled`` as a plan states it: the tightest bound the runtime's ``load()`` confirms.

    ``randomizer``: the family's ``shuffle_randomizer`` (the solver's keywords, and ``blanket``: a
    two-level description). The candidates: the solver's bound (FMT21 Theorems 3.1/3.2, k-RR's
    blanket, binary RR's exact curve) and, for GLH, Hadamard response and unary encodings, the
    randomizer's own blanket (:mod:`ldpplan.mechanisms._amplification`, the computation ``load()``
    repeats). The solver's bound is first nudged up by a few parts in 10^9 .. 10^4 when the
    runtime's evaluation of the same theorem lands a rounding margin above ``delta``; a bound the
    runtime does not implement (the exact curve of binary RR) is replaced by the runtime's best
    bound, with its source.

    References
    ----------
    See :mod:`ldpplan.solvers.shuffle`, :mod:`ldpplan.mechanisms._amplification` (Balle et al.,
    CRYPTO 2019, Sec. 3) and :mod:`ldpplan.mechanisms._shuffle_gate`.
    """
    randomizer = dict(randomizer or {})
    claim = shuffled_guarantee(epsilon0, n, delta, **_solver_keywords(randomizer))
    gate = _gate_randomizer(randomizer)
    better = _two_level_claim(claim, epsilon0, gate)
    if better is not None and check_shuffled_claim(better, epsilon0, gate) is None:
        return better
    for factor in (1.0, 1.0 + 1e-9, 1.0 + 1e-6, 1.0 + 1e-4):
        trial = {**claim, "epsilon": min(float(epsilon0), claim["epsilon"] * factor)}
        if check_shuffled_claim(trial, epsilon0, gate) is None:
            return trial
    epsilon, source = upper_epsilon(epsilon0, n, delta, gate)
    lower = claim["source"].partition("; lower: ")[2]
    return {**claim, "epsilon": epsilon, "epsilon_lower": min(claim["epsilon_lower"], epsilon),
            "source": f"{source}; lower: {lower}"}


def check_shuffled(shuffled: Mapping[str, Any], epsilon0: float, *, mechanism: str | None = None,
                   domain_size: int | None = None, expected: Mapping[str, Any] | None = None,
                   **glh: Any) -> str | None:
    """Recompute a plan's ``guarantee.shuffled`` through an independent path; ``None`` when it holds.

    The claim must (1) equal the recomputed bound, and (2) pass the independent cross-checks: it
    is at least the recomputed lower bound and, where FMT21 Theorem 3.1 applies, at most its
    closed form (a claim below a sound lower bound, or one that the closed form contradicts,
    is refused). ``expected``: the claim the plan should carry (:func:`confirmable_guarantee`);
    default the solver's bound (:func:`shuffled_guarantee`).
    """
    for key in ("n", "delta", "epsilon", "epsilon_lower", "source"):
        if key not in shuffled:
            return f"guarantee.shuffled.{key}: required"
    n, delta = shuffled["n"], shuffled["delta"]
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        return f"guarantee.shuffled.n: must be a positive integer, got {n!r}"
    if not isinstance(delta, (int, float)) or not 0 < delta < 1:
        return f"guarantee.shuffled.delta: must be in (0, 1), got {delta!r}"
    if expected is None:
        expected = shuffled_guarantee(epsilon0, n, float(delta), mechanism=mechanism, domain_size=domain_size,
                                      **_solver_keywords(glh))
    for key in ("epsilon", "epsilon_lower", "source"):
        if shuffled[key] != expected[key]:
            return (f"guarantee.shuffled.{key}: claims {shuffled[key]!r} but the bound recomputed from the plan's "
                    f"local epsilon {epsilon0!r} gives {expected[key]!r}")
    if shuffled["epsilon"] < shuffled["epsilon_lower"]:
        return f"guarantee.shuffled.epsilon: {shuffled['epsilon']!r} is below the lower bound {shuffled['epsilon_lower']!r}"
    closed = fmt21_closed_form(epsilon0, n, float(delta))
    if math.isfinite(closed) and shuffled["epsilon"] > closed:
        return f"guarantee.shuffled.epsilon: {shuffled['epsilon']!r} exceeds FMT21 Theorem 3.1's closed form {closed!r}"
    gate = _gate_randomizer({"mechanism": mechanism, "domain_size": domain_size, **glh})
    return _independent_divergence(shuffled, epsilon0, mechanism, domain_size, gate)


def _independent_divergence(shuffled: Mapping[str, Any], epsilon0: float, mechanism, domain_size,
                            gate: Mapping[str, Any] | None = None) -> str | None:
    """Evaluate the claimed bound's divergence at the claimed epsilon through the other tail algorithm.

    The planner's search sums binomial tails along a recursion anchored by ``bdtrc``; this check
    takes every tail from ``bdtrc`` directly and requires ``delta(epsilon) <= delta``. For the exact
    binary-RR curve: up to ``EXHAUSTIVE_N`` users every dataset's divergence from the full
    (untruncated) convolution of the pmfs; above, the block cover is checked to cover every
    dataset and its deciding blocks are re-evaluated in the other convolution order.
    """
    epsilon, n, delta = float(shuffled["epsilon"]), int(shuffled["n"]), float(shuffled["delta"])
    source = str(shuffled["source"]).split("; lower:")[0]
    if epsilon >= epsilon0 or source == solver.SOURCE_FMT_CLOSED:
        return None
    if source == solver.SOURCE_FMT_NUMERICAL:
        value = curves.clone_delta_upper(epsilon, epsilon0, n, independent=True)
    elif source == solver.SOURCE_BLANKET:
        k = 2 if mechanism == "rr" else int(domain_size)
        value = curves.blanket_krr_delta_upper(epsilon, epsilon0, k, n, independent=True)
        if value > delta:  # the runtime's sums of the same theorem (finer blanket blocks): either bound suffices

            value = min(value, two_level_delta(epsilon, epsilon0, n, {"kind": "krr", "domain_size": k, "delta": delta}))
    elif source == solver.SOURCE_EXACT_RR and n <= solver.EXHAUSTIVE_N:
        value = curves.binary_rr_pair_delta_exhaustive(epsilon, epsilon0, n)  # every dataset, full pmfs
    elif source == solver.SOURCE_EXACT_RR:
        value = solver.binary_rr_independent_delta(epsilon0, n, delta, epsilon)
    elif source == _two_level_source() and gate is not None and gate.get("kind") in ("hash", "sylvester", "unary"):
        value = two_level_delta(epsilon, epsilon0, n, {**gate, "delta": delta})  # load() repeats this sum
    else:
        return f"guarantee.shuffled.source: unknown bound {source!r}"
    if value > delta:
        return (f"guarantee.shuffled.epsilon: at the claimed {epsilon!r} the divergence recomputed independently is "
                f"{value:.6g} > delta = {delta!r}")
    return None


def local_epsilon_of_plan(plan: Mapping[str, Any]) -> float:
    """The plain local epsilon0 of one report of a plan (what the amplification theorems take).

    ``LDP``/``LDP+PIE`` plans (k-RR, GLH, PCKV's composed epsilon): ``guarantee.epsilon``;
    ``MinID-LDP`` plans (IDUE, IDUE-PS): ``guarantee.ldp_epsilon`` (Lemma 1's plain LDP budget).

    Raises
    ------
    ValueError
        ULDP plans (their non-sensitive outputs are released as they are, so the theorems for
        epsilon0-LDP randomizers do not apply as stated), or a plan without a plain epsilon.
    """
    guarantee = plan.get("guarantee") or {}
    notion = guarantee.get("notion")
    if notion == "ULDP":
        raise ValueError("ULDP plans release non-sensitive outputs as they are: the amplification theorems for "
                         "epsilon0-LDP randomizers do not apply")
    value = guarantee.get("ldp_epsilon") if notion == "MinID-LDP" else guarantee.get("epsilon")
    if not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"guarantee: no plain local epsilon in a {notion!r} plan")
    return float(value)


def attach_shuffled(plan: dict[str, Any], block: Mapping[str, Any],
                    randomizer: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Add ``guarantee.shuffled`` for the spec's ``[shuffle]`` block (``n``, ``delta``) to a solved plan.

    ``randomizer``: keyword arguments of the randomizer-specific bound, from the plan's family
    (``Family.shuffle_randomizer``); empty or None: the generic bounds for epsilon0-LDP randomizers.
    """
    if int(block["n"]) > MAX_SHUFFLE_N:
        raise SpecError("shuffle.n", f"must be at most {MAX_SHUFFLE_N:.0e} (the largest batch the runtime's load() "
                        "confirms a central claim for)", block["n"])
    plan["guarantee"]["shuffled"] = confirmable_guarantee(local_epsilon_of_plan(plan), int(block["n"]),
                                                          float(block["delta"]), randomizer)
    if "epsilon_lifetime" in plan["guarantee"]:  # several reports per user: also the claim over all rounds
        plan["guarantee"]["shuffled_lifetime"] = lifetime_guarantee(plan, block)
    return plan


def lifetime_guarantee(plan: Mapping[str, Any], block: Mapping[str, Any]) -> dict[str, Any]:
    """``guarantee.shuffled_lifetime``: the central guarantee of all of a plan's rounds through the shuffler.

    Each round's batch is shuffled; ``guarantee.shuffled`` covers one round (``epsilon0`` = one
    report's ``epsilon``). Over all rounds the rounds share each user's permanent response, so
    per-round claims do not compose by the composition theorems (their randomness is not
    independent). Instead: the ``R`` shuffled batches are a post-processing of one shuffle of the
    users' whole-history tuples (apply an independent uniform permutation per round to the
    shuffled tuples), and one user's whole history is ``epsilon_lifetime``-LDP (the plan's
    lifetime claim), so FMT21's bounds for any epsilon0-LDP randomizer apply with ``epsilon0 =
    guarantee.epsilon_lifetime`` (rounded as :func:`confirmable_guarantee`).

    References
    ----------
    Feldman, McMillan, Talwar, "Hiding among the clones", FOCS 2021, Theorems 3.1 and 3.2 (any
    epsilon0-LDP randomizer); Dwork and Roth 2014, Prop. 2.1 (post-processing).
    """
    lifetime = float(plan["guarantee"]["epsilon_lifetime"])
    return confirmable_guarantee(lifetime, int(block["n"]), float(block["delta"]), None)


def verify_shuffled(plan: Mapping[str, Any], randomizer: Mapping[str, Any] | None = None) -> str | None:
    """``verify``'s check of ``guarantee.shuffled`` against the plan's numbers and spec; ``None`` when it holds.

    ``randomizer`` as in :func:`attach_shuffled` (the family's ``shuffle_randomizer(plan)``).
    """
    block = (plan.get("spec") or {}).get("shuffle")
    shuffled = (plan.get("guarantee") or {}).get("shuffled")
    if block is None and "shuffled_lifetime" in (plan.get("guarantee") or {}):
        return "guarantee.shuffled_lifetime: present but the embedded spec has no [shuffle] block"
    if block is None and shuffled is None:
        return None
    if block is None:
        return "guarantee.shuffled: present but the embedded spec has no [shuffle] block"
    if shuffled is None:
        return "guarantee.shuffled: required by the embedded spec's [shuffle] block"
    if shuffled.get("n") != block.get("n") or shuffled.get("delta") != block.get("delta"):
        return (f"guarantee.shuffled: n/delta {shuffled.get('n')!r}/{shuffled.get('delta')!r} differ from the spec's "
                f"{block.get('n')!r}/{block.get('delta')!r}")
    try:
        epsilon0 = local_epsilon_of_plan(plan)
    except ValueError as exc:
        return f"guarantee.shuffled: {exc}"
    central = ((plan.get("spec") or {}).get("target") or {}).get("central_epsilon")
    if central is not None and not shuffled.get("epsilon", math.inf) <= central:
        return (f"guarantee.shuffled.epsilon: {shuffled.get('epsilon')!r} exceeds the spec's target.central_epsilon "
                f"= {central!r}")
    try:
        expected = confirmable_guarantee(epsilon0, shuffled["n"], float(shuffled["delta"]), randomizer)
    except (KeyError, TypeError, ValueError) as exc:
        return f"guarantee.shuffled: {exc}"
    failure = check_shuffled(shuffled, epsilon0, expected=expected, **dict(randomizer or {}))
    return failure if failure is not None else _verify_lifetime(plan, block)


def _verify_lifetime(plan: Mapping[str, Any], block: Mapping[str, Any]) -> str | None:
    """``verify``'s check of ``guarantee.shuffled_lifetime`` (:func:`lifetime_guarantee`); None when it holds."""
    guarantee = plan.get("guarantee") or {}
    claim = guarantee.get("shuffled_lifetime")
    if "epsilon_lifetime" not in guarantee:
        return None if claim is None else "guarantee.shuffled_lifetime: present but the plan claims no epsilon_lifetime"
    if claim is None:
        return "guarantee.shuffled_lifetime: required (the plan has several rounds and a [shuffle] block)"
    try:
        expected = lifetime_guarantee(plan, block)
    except (KeyError, TypeError, ValueError) as exc:
        return f"guarantee.shuffled_lifetime: {exc}"
    if claim != expected:
        return (f"guarantee.shuffled_lifetime: claims {claim!r:.200} but the bound recomputed from epsilon_lifetime "
                f"gives {expected!r:.200}")
    return None


def central_guarantee(plan: Mapping[str, Any], n: int, delta: float,
                      randomizer: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The central guarantee of a plan's reports through a shuffler of ``n`` users (the plan is not re-checked).

    :func:`ldpplan.planner.api.explain_shuffled` re-checks the plan first; this is its second step.

    Parameters
    ----------
    plan : mapping
        A plan of any family with a plain local epsilon (not ULDP).
    n : int
        Users, one report each (>= 2).
    delta : float
        In (0, 1).
    randomizer : mapping, optional
        The family's ``shuffle_randomizer(plan)`` (randomizer-specific bound); None: generic bounds.

    Returns
    -------
    dict
        ``mechanism``, ``local_epsilon`` and the fields of ``guarantee.shuffled``.

    Raises
    ------
    SpecError
        ``--shuffle-n`` / ``--delta`` out of range, or a ULDP plan.

    References
    ----------
    See :mod:`ldpplan.solvers.shuffle`.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise SpecError("--shuffle-n", "must be an integer >= 2", n)
    if not isinstance(delta, (int, float)) or not 0 < delta < 1:
        raise SpecError("--delta", "must be in (0, 1)", delta)
    try:
        epsilon0 = local_epsilon_of_plan(plan)
    except ValueError as exc:
        raise SpecError("PLAN", str(exc), plan.get("mechanism")) from None
    return {"mechanism": plan.get("mechanism"), "local_epsilon": epsilon0,
            **confirmable_guarantee(epsilon0, n, float(delta), randomizer)}


def central_tables(plan: Mapping[str, Any]) -> list:
    """The plan's central guarantees as tables (``ldpplan plan``, ``verify`` and ``simulate`` print them).

    One table per claim: ``guarantee.shuffled`` (the batch of ``n`` shuffled reports; one round's
    batch when the plan also has ``shuffled_lifetime``) and ``guarantee.shuffled_lifetime`` (all
    rounds); each row gives epsilon (sound upper bound), delta, n, the lower bound, the local
    epsilon0 it is computed from, and the sources. ``[]`` for a plan without a central claim.
    """
    guarantee = plan.get("guarantee") or {}
    out = []
    several = "shuffled_lifetime" in guarantee
    for key, covers, local in (("shuffled", "one round's batch (one report per user)" if several else
                                "one report per user", "epsilon"),
                               ("shuffled_lifetime", f"all {guarantee.get('rounds')} rounds (whole histories)",
                                "epsilon_lifetime")):
        claim = guarantee.get(key)
        if not isinstance(claim, Mapping):
            continue
        epsilon0 = guarantee.get("ldp_epsilon") if guarantee.get("notion") == "MinID-LDP" else guarantee.get(local)
        upper, _, lower_source = str(claim.get("source", "")).partition("; lower: ")
        out.append(Table(f"Central guarantee through a shuffler (guarantee.{key}): {covers}", ["key", "value"], [
            ["central epsilon (nats, sound upper bound)", float(claim["epsilon"])],
            ["delta", float(claim["delta"])],
            ["n users shuffled", int(claim["n"])],
            ["lower bound (a concrete pair needs)", float(claim["epsilon_lower"])],
            ["from local epsilon0 (nats)", float(epsilon0) if isinstance(epsilon0, (int, float)) else "-"],
            ["covers", covers]], note=f"upper bound: {upper}; lower bound: {lower_source}"))
    return out

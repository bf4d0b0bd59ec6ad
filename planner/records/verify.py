"""Independent verification of record plans: the record's epsilon exactly, and the plan against its spec.

The scheme's numbers are re-derived from the embedded spec (the same solver, then the grid) and
must equal the plan's exactly: a per-attribute budget or grid number raised by one step differs.
The record's worst likelihood ratio over every pair of records (SPL: the product of the
attributes' ratios; SMP: the largest; RS+FD[GRR]: ``sum_j k_j P_j / sum_j k_j q_j``,
:mod:`ldpplan.mechanisms.records._privacy`) is computed from the plan's own numbers as an exact
rational and decided against ``e^epsilon`` with 50-digit logarithms; the claims (guarantee,
predictions, baselines) are recomputed and compared, never read.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

from ...mechanisms.records._privacy import exact_attribute_ratios, exact_record_ratio
from .._exact import log_exact, log_ratio_slack, ratio_within
from .._plan_format import validate_plan
from .._report import Verification
from .._solve_once import once
from ..errors import SpecError
from ._solve import solve_all
from .claims import baselines_of, choose, guarantee_of, predicted_of
from .spec import parse_spec

__all__ = ["verify"]


def _differs(where: str, got: Any, want: Any) -> str | None:
    """The first field where ``got`` differs from ``want`` (floats to 1e-12 relative), else None."""
    if isinstance(want, Mapping):
        if not isinstance(got, Mapping) or set(got) != set(want):
            return f"{where}: must have the keys {sorted(want)}"
        return next((m for m in (_differs(f"{where}.{k}", got[k], want[k]) for k in want) if m), None)
    if isinstance(want, (list, tuple)):
        if not isinstance(got, (list, tuple)) or len(got) != len(want):
            return f"{where}: must have {len(want)} entries"
        return next((m for m in (_differs(f"{where}[{i}]", g, w) for i, (g, w) in enumerate(zip(got, want))) if m), None)
    if isinstance(want, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        return None if math.isclose(got, want, rel_tol=1e-12, abs_tol=0.0) else \
            f"{where}: must equal the value recomputed from the spec ({want!r}) (got {got!r})"
    return None if (got == want and type(got) is type(want)) else \
        f"{where}: must equal the value recomputed from the spec ({want!r:.80}) (got {got!r:.80})"


def _exactly(where: str, got: Any, want: Any) -> str | None:
    """Numbers that must be the re-derived ones bit for bit (the grid numbers, the budgets)."""
    if list(got) != list(want):
        return f"{where}: must be the numbers re-derived from the embedded spec ({list(want)!r:.120}) (got {got!r:.120})"
    return None


def _against_spec(plan: Mapping[str, Any]):
    """``(message, None)`` for a plan that differs from its spec, else ``(None, (res, solved, chosen))``."""
    try:
        res = once(parse_spec, plan["spec"])
        solved = once(solve_all, res)
    except SpecError as exc:
        return f"spec: the embedded spec is invalid or cannot be planned ({exc})", None
    chosen = choose(solved)
    if plan["mechanism"] != chosen.scheme:
        return f"mechanism: must be {chosen.scheme!r}, the embedded spec's scheme (got {plan['mechanism']!r})", None
    if plan["domain"]["size"] != len(res.labels) or plan["domain"]["labels"] != res.labels:
        return "domain: must be the embedded spec's attribute domains, concatenated as 'name=value'", None
    p = plan["params"]
    want = {"epsilon": res.spec.epsilon, "names": list(res.names), "domain_sizes": list(res.sizes),
            "oracles": list(chosen.oracles)}
    for key, value in want.items():
        if p.get(key) != value:
            return f"params.{key}: must match the embedded spec ({value!r:.80}) (got {p.get(key)!r:.80})", None
    sampling = list(chosen.sampling) if chosen.sampling is not None else None
    message = (_exactly("params.epsilons", p["epsilons"], chosen.epsilons)
               or _exactly("params.numbers", p["numbers"], chosen.numbers)
               or (None if p.get("sampling") == sampling else
                   f"params.sampling: must be the grid pi re-derived from the embedded spec (got {p.get('sampling')!r:.80})"))
    return (message, None) if message else (None, (res, solved, chosen))


def verify(plan: Mapping[str, Any]) -> Verification:
    """Decide the record's epsilon exactly over every pair of records and compare the plan with its spec.

    Returns
    -------
    Verification
        ``holds`` with ``epsilon_effective`` and ``slack_nats`` (nats) in ``details``, or the first
        failure naming the field.

    Raises
    ------
    PlanFormatError
        Malformed plan (the runtime's envelope reader, then the JSON Schema).
    """
    validate_plan(plan)
    mismatch, solved = _against_spec(plan)
    if mismatch:
        return Verification(False, mismatch, {})
    res, every, chosen = solved
    p, scheme = plan["params"], plan["mechanism"]
    ratio = exact_record_ratio(scheme, p["oracles"], p["numbers"], p["domain_sizes"])
    epsilon = res.spec.epsilon
    effective = float(log_exact(ratio))
    details = {"epsilon_effective": effective, "slack_nats": float(log_ratio_slack(ratio, epsilon)),
               "attribute_epsilons": [float(log_exact(r)) for r in
                                      exact_attribute_ratios(scheme, p["oracles"], p["numbers"], p["domain_sizes"])]}
    if not ratio_within(ratio, epsilon):
        return Verification(False, f"LDP: the record's epsilon {effective!r} > epsilon {epsilon!r}", details)
    gu = dict(plan["guarantee"])
    gu.pop("shuffled", None)
    if gu != guarantee_of(chosen):  # exact rationals and 50-digit logs: the claims are recomputed bit for bit
        claims = guarantee_of(chosen)
        key = next((k for k in sorted(set(gu) | set(claims)) if gu.get(k) != claims.get(k)), "epsilon")
        return Verification(False, f"guarantee.{key}: must be the claim its numbers give, exactly, rounded up "
                                   f"({claims.get(key)!r:.200}) (got {gu.get(key)!r:.200})", details)
    for where, got, want in (("predicted", plan["predicted"], predicted_of(chosen, res.spec.users)),
                             ("baselines", plan["baselines"], baselines_of(res, every, chosen))):
        message = _differs(where, got, want)
        if message:
            return Verification(False, message, details)
    msg = (f"{epsilon:g}-LDP of the whole record ({scheme}, {len(res.sizes)} attributes) holds exactly: epsilon = "
           f"{effective:.15g} <= {epsilon:g} nats (slack {details['slack_nats']:.3g}); plan matches its spec")
    return Verification(True, msg, details)

"""Records planning: spec -> every allowed scheme on the grid -> the least weighted variance -> plan format 2.0."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from .._plan_format import envelope
from .._solve_once import once
from ._solve import solve_all
from .claims import baselines_of, choose, guarantee_of, predicted_of
from .spec import parse_spec

__all__ = ["build_plan"]


def build_plan(raw: Mapping[str, Any], *, base_dir: Path | None = None) -> dict[str, Any]:
    """Solve a records spec into an (unverified) plan 2.0 dict.

    Returns
    -------
    dict
        ``mechanism``: the chosen scheme (``spl``, ``smp`` or ``rsfd``); ``domain``: the attributes'
        domains concatenated (labels ``name=value``); ``params``: ``epsilon``, ``names``,
        ``domain_sizes``, ``oracles``, ``epsilons``, ``numbers`` (grid), ``sampling`` (SMP);
        ``guarantee``: the record's epsilon and each attribute's, exact, rounded up; ``predicted``:
        the weighted variance; ``baselines``: the other schemes and uniform SPL / SMP; ``solver``:
        the certificate (lower bound, value, gap) and the comparison.

    Raises
    ------
    SpecError
        A bad spec, or an epsilon too small for the 2^-48 grid.

    References
    ----------
    Arcolezi et al., CIKM 2021; Wang et al., USENIX Security 2017; Wang et al., ICDE 2019.
    """
    res = once(parse_spec, raw)
    solved = once(solve_all, res)
    chosen = choose(solved)
    params: dict[str, Any] = {"epsilon": res.spec.epsilon, "names": list(res.names), "domain_sizes": list(res.sizes),
                              "oracles": list(chosen.oracles), "epsilons": list(chosen.epsilons),
                              "numbers": list(chosen.numbers)}
    if chosen.sampling is not None:
        params["sampling"] = list(chosen.sampling)
    solver = {"name": "records: water-filling (SPL), Cauchy-Schwarz (SMP), closed form (RS+FD)", "status": "optimal",
              "certificate": dict(chosen.certificate), "safety_margin": chosen.margin,
              "comparison": {s: n.weighted_variance for s, n in solved.items()}}
    return envelope(mechanism=chosen.scheme, domain_size=len(res.labels), labels=res.labels, params=params,
                    guarantee=guarantee_of(chosen), predicted=predicted_of(chosen, res.spec.users),
                    baselines=baselines_of(res, solved, chosen), solver=solver, spec=dict(raw))

"""PUM simulation (ULDP Sec. 5, Fig. 8): TV vs epsilon with and without background knowledge.

Synthetic users over the plan's domain X (Zipf(1)); every tag k owns a disjoint tenth of the
non-sensitive items (its "typical places"), and a user at such an item regards it as private
under tag k with probability ``tag_rate``; her pre-processor maps it to bot k (eq. 19). The
data collector estimates ``r_hat`` over Z = X + bots and then p with eq. (21), with (I) no
background (the proportional fallback of Sec. 5.3), (III) the true ``pi_k`` and, if the plan
has one, the plan's background.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Mapping

import numpy as np

from .._report import SimulateOptions, SimulationReport, Table
from ..errors import SpecError
from ._counts import sample_aggregate
from ._numbers import grid_urap, grid_urr, marginals_model
from ._options import METHOD_NAMES, parse_epsilons, parse_methods
from ...mechanisms.uldp import PersonalizedULDP, UtilityOptimizedRAPPOR, UtilityOptimizedRR
from ..plotting import Curve, plot_curves

__all__ = ["simulate_pum"]


def _population(plan: Mapping[str, Any], opts, rng: np.random.Generator):
    k = int(plan["domain"]["size"])
    tags = list(plan["params"]["tags"])
    mask = np.zeros(k, dtype=bool)
    mask[plan["params"]["sensitive"]] = True
    zipf = 1.0 / np.arange(1, k + 1)
    p = zipf / zipf.sum()
    nonsens = rng.permutation(np.flatnonzero(~mask))
    share = max(1, nonsens.size // 10)
    owner = np.full(k, -1)
    for j in range(len(tags)):
        owner[nonsens[j * share:(j + 1) * share]] = j
    return k, tags, p, owner


def _users(k: int, p: np.ndarray, owner: np.ndarray, n: int, rate: float, rng: np.random.Generator):
    x = rng.choice(k, size=n, p=p)
    private = (owner[x] >= 0) & (rng.random(n) < rate)
    return x, np.where(private, owner[x], -1)


def _one_trial(pum, eps, plan, options, opts, methods, backgrounds, x, tag, z_counts, p, rng, tv, mse) -> None:
    """Perturb (or sample the aggregate of) one trial's users and record TV/MSE of eq. (21) per background."""
    k, tags = pum.domain_size, pum.tags
    true_bg = {name: np.bincount(x[tag == j], minlength=k) / max(1, int((tag == j).sum()))
               for j, name in enumerate(tags) if (tag == j).any()}
    bgs = {"none": {}, "true": true_bg, "plan": plan["params"].get("background") or {}}
    source = (sample_aggregate(pum.common, z_counts, rng, mechanism="pum") if options.mode == "aggregate"
              else pum.perturb({"item": x, "tag": tag}, rng))
    for meth in methods:
        method = METHOD_NAMES[meth]
        if method == "em" and options.mode == "aggregate" and "em-bits" in pum.methods:
            method = "em-bits"
        kw = {"alpha": opts.alpha} if method == "threshold" else (
            {"tol": opts.tol, "max_iter": opts.max_iter} if method.startswith("em") else {})
        r_hat = pum.estimate_intermediate(source, method, **kw).frequency
        for b in backgrounds:
            est = pum.combine(r_hat, bgs[b])
            tv[(eps, b, meth)].append(0.5 * float(np.abs(est - p).sum()))
            mse[(eps, b, meth)].append(float(np.mean((est - p) ** 2)))


def simulate_pum(plan: Mapping[str, Any], options: SimulateOptions, opts: Any,
                 progress: Callable[[int, int], None] | None = None) -> SimulationReport:
    """Run a PUM plan over synthetic tagged users (see the module docstring).

    Raises
    ------
    SpecError
        ``--data`` (no shipped data set has per-user private tags).
    """
    if options.data:
        raise SpecError("--data", "a PUM plan simulates synthetic users with private tagged items (no data set "
                                  "ships per-user tags); simulate a urr/urap plan on real data", options.data)
    methods = parse_methods(opts.methods)
    data_seed, trial_seed = np.random.SeedSequence(options.seed).spawn(2)
    drng = np.random.default_rng(data_seed)
    k, tags, p, owner = _population(plan, opts, drng)
    kind = plan["params"]["common"]
    z_sens = list(plan["params"]["intermediate_sensitive"])
    kz, ks = k + len(tags), len(z_sens)
    fixed = _users(k, p, owner, opts.n, opts.tag_rate, drng)
    eps_list = parse_epsilons(opts.epsilons, k)
    backgrounds = ["none", "true"] + (["plan"] if plan["params"].get("background") else [])
    total = options.trials * len(eps_list)
    if progress is not None:
        progress(0, total)
    seeds = trial_seed.spawn(total)
    tv: dict[tuple[Any, ...], list[float]] = {(e, b, m): [] for e in eps_list for b in backgrounds for m in methods}
    mse: dict[tuple[Any, ...], list[float]] = {key: [] for key in tv}
    theory = {}
    t0 = time.perf_counter()
    for ei, eps in enumerate(eps_list):
        numbers = grid_urr(eps, ks) if kind == "urr" else grid_urap(eps, ks, kz - ks)
        common = (UtilityOptimizedRR if kind == "urr" else UtilityOptimizedRAPPOR)(domain=kz, sensitive=z_sens, **numbers)
        pum = PersonalizedULDP(domain=k, common=common, tags=tags)
        model = marginals_model(kind, numbers, ks, kz - ks)
        for t in range(options.trials):
            rng = np.random.default_rng(seeds[ei * options.trials + t])
            x, tag = fixed if opts.sample == "fixed" else _users(k, p, owner, opts.n, opts.tag_rate, rng)
            z = pum.preprocess(x, tag)
            z_counts = np.bincount(z, minlength=kz)
            if t == 0:
                r = z_counts / z.size
                zmask = np.zeros(kz, dtype=bool)
                zmask[z_sens] = True
                theory[eps] = model.expected_l1(np.concatenate([r[zmask], r[~zmask]]), z.size) / 2
            _one_trial(pum, eps, plan, options, opts, methods, backgrounds, x, tag, z_counts, p, rng, tv, mse)
            if progress is not None:
                progress(1, total)
    rows = [[f"{e:.4g}", b] + [v for m in methods for v in (float(np.mean(tv[(e, b, m)])),
                                                             float(np.mean(mse[(e, b, m)])))] + [theory[e]]
            for e in eps_list for b in backgrounds]
    cols = ["epsilon", "background"] + [c for m in methods for c in (f"TV {m}", f"MSE {m}")] + ["TV(r_hat) emp theory"]
    n_private = int((fixed[1] >= 0).sum())
    desc = (f"PUM ({kind} over |Z| = {kz}: |X| = {k} + {len(tags)} bots, |Z_S| = {ks}); synthetic Zipf(1) users, "
            f"n = {opts.n}, tag_rate = {opts.tag_rate} (~{n_private} private tagged users)")
    table = Table(f"PUM: TV and MSE of p_hat (eq. 21) vs epsilon (ULDP Fig. 8): {desc}", cols, rows,
                  note=(f"Means over {options.trials} trials ({options.mode} mode). background: none = proportional "
                        f"fallback (Sec. 5.3), true = the users' pi_k, plan = the plan's. TV(r_hat) theory: first term "
                        f"of Thm. 1 (eq. 22) for the empirical estimate. {time.perf_counter() - t0:.1f} s."))
    data = {"dataset": desc, "domain_size": k, "intermediate_size": kz, "n": opts.n, "epsilons": eps_list,
            "methods": methods, "backgrounds": backgrounds,
            "results": [{"epsilon": e, "background": b, "method": m, "tv": float(np.mean(tv[(e, b, m)])),
                         "mse": float(np.mean(mse[(e, b, m)]))} for e in eps_list for b in backgrounds for m in methods],
            "theory_r_hat_tv": [{"epsilon": e, "tv": theory[e]} for e in eps_list]}

    def plot(path: str) -> None:
        curves = [Curve(f"{b} {m}", eps_list, [float(np.mean(tv[(e, b, m)])) for e in eps_list], color=bi)
                  for bi, b in enumerate(backgrounds) for m in methods]
        plot_curves(curves, path, title=f"PUM: TV vs epsilon (|X| = {k}, {len(tags)} tags)",
                    xlabel="epsilon (nats)", ylabel="TV (frequency)", logx=True, logy=True)

    return SimulationReport(tables=[table], data=data, plot=plot)

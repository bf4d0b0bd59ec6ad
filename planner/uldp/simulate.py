"""ULDP simulations: TV/MSE vs epsilon of RR, RAPPOR, uRR, uRAP (Fig. 5) and of the PUM (Fig. 8).

A ``urr`` or ``urap`` plan runs the common-mechanism comparison (on ``--data`` the users' ``item``
CSV that ``perturb`` takes, over the plan's domain and sensitive set; on ``--data gss_vocab.csv``;
or on a Zipf sample over the plan's domain); a ``pum`` plan runs the PUM itself on synthetic
users, some of whom regard their own item as private under a semantic tag.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, Literal, Mapping

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from .._common import parse_options
from .._report import SimulateOptions as RunOptions, SimulationReport, Table
from ._counts import sample_aggregate
from ._numbers import grid_rappor, grid_urap, grid_urr, marginals_model
from ._simulate_pum import simulate_pum
from ._options import METHOD_NAMES, GSS_SENSITIVE_CHOICES, parse_epsilons, parse_methods
from ...mechanisms import Aggregate
from ...mechanisms.uldp import BasicRAPPOR, UtilityOptimizedRAPPOR, UtilityOptimizedRR
from ..data import open_table_stream, concat_chunks, load_gss_vocab
from ..plotting import Curve, plot_curves
from .inputs import iter_inputs

__all__ = ["simulate", "SimulateOptions"]

class SimulateOptions(BaseModel):
    """``-O KEY=VALUE`` options of ``ldpplan simulate`` for ULDP plans."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    epsilons: str = Field("0.1,0.5,1,2,4,ln", description="comma-separated epsilons (nats); 'ln' = ln|X|")
    methods: str = Field("emp,thr,em", description="comma-separated subset of emp,thr,em")
    tol: float = Field(1e-10, gt=0, description="uRAP/RAPPOR EM (the full-report MLE) stops when its "
                       "certified optimality gap is <= tol |log-likelihood| (the runtime's "
                       "one stopping rule; uRR and RR use the exact maximum-likelihood estimate)")
    max_iter: int = Field(1000, ge=1, description="cap on EM steps")
    alpha: float = Field(0.05, gt=0, lt=1, description="Bonferroni level of emp+thr")
    sensitive: Literal["lowed", "foreign"] = Field("lowed", description="GSS X_S (--data gss_vocab.csv): educGroup '<12 yrs' or nativeBorn 'no'")
    sample: Literal["iid", "fixed"] = Field("iid", description="iid: users drawn from the true distribution per trial; "
                                                              "fixed: the data's users as they are")
    n: int = Field(100000, ge=1, description="synthetic users (without --data)")
    tag_rate: float = Field(0.5, ge=0, le=1, description="PUM: chance that a user at a tag's item regards it as private")


_NAMES = ("RR", "RAPPOR", "uRR", "uRAP")

def _is_gss(path: str) -> bool:
    """The GSS vocabulary layout (``ageGroup``, ..., ``vocab``), recognised by its header."""
    header = set(open_table_stream(path, [], field="--data").header)
    return {"ageGroup", "educGroup", "gender", "nativeBorn", "vocab"} <= header and "item" not in header


def _data(plan: Mapping[str, Any], options: RunOptions, opts: SimulateOptions, rng) -> tuple:
    """``(|X|, items, sensitive indices, description, rows skipped for an empty item)``.

    ``--data`` is either the users' ``item`` CSV (or Parquet) that ``perturb`` takes, over the plan's
    domain and sensitive set, or the GSS vocabulary file (X = the four GSS fields, X_S by ``-O sensitive``).
    """
    if options.data and not _is_gss(options.data):
        stream = iter_inputs(plan, options.data, skip_empty=options.skip_empty)
        x = concat_chunks(list(stream))
        k, sens = int(plan["domain"]["size"]), list(plan["params"]["sensitive"])
        skipped = f", {stream.skipped_empty:,} rows with an empty item skipped" if stream.skipped_empty else ""
        desc = (f"{Path(options.data).name}: the plan's {k} items, X_S = its {len(sens)} sensitive items, "
                f"n = {x.size}{skipped}")
        return k, x, sens, desc, stream.skipped_empty
    if options.data:
        field, value = GSS_SENSITIVE_CHOICES[opts.sensitive]
        fields = ("ageGroup", "educGroup", "gender", "nativeBorn")
        labels, x = load_gss_vocab(options.data).joint_categories(fields)
        j = fields.index(field)
        sens = [i for i, lab in enumerate(labels) if lab.split("|")[j] == value]
        desc = (f"{Path(options.data).name}: X = ageGroup x educGroup x gender x nativeBorn ({len(labels)} "
                f"categories), X_S = {field} == {value!r} ({len(sens)} categories), n = {x.size}")
        return len(labels), x, sens, desc, 0
    k = int(plan["domain"]["size"])
    zipf = 1.0 / np.arange(1, k + 1)
    x = rng.choice(k, size=opts.n, p=zipf / zipf.sum())
    return k, x, list(plan["params"]["sensitive"]), f"synthetic Zipf(1) over the plan's {k} items, n = {opts.n}", 0


def _mechanisms(eps: float, k: int, sens: list[int]) -> dict[str, Any]:
    ks = len(sens)
    rr, rap = grid_urr(eps, k), grid_rappor(eps)
    return {"RR": UtilityOptimizedRR(domain=k, sensitive=list(range(k)), **rr),
            "RAPPOR": BasicRAPPOR(domain=k, theta=rap["theta"], psi=rap["psi"]),
            "uRR": UtilityOptimizedRR(domain=k, sensitive=sens, **grid_urr(eps, ks)),
            "uRAP": UtilityOptimizedRAPPOR(domain=k, sensitive=sens, **grid_urap(eps, ks, k - ks))}


def _theory(mechs: dict[str, Any], p_true: np.ndarray, sens: list[int], n: int) -> dict[str, tuple[float, float]]:
    k = p_true.size
    mask = np.zeros(k, dtype=bool)
    mask[sens] = True
    p_sorted = np.concatenate([p_true[mask], p_true[~mask]])
    out = {}
    for name, m in mechs.items():
        kind = "urr" if hasattr(m, "c1") else "urap"
        params = ({"c1": m.c1, "c2": m.c2, "c3": m.c3} if kind == "urr" else {"theta": m.theta, "d1": m.d1, "d2": m.d2})
        ks = int(np.asarray(m.sensitive).size)
        model = marginals_model(kind, params, ks, k - ks)
        p = p_true if ks == k else p_sorted
        out[name] = (model.expected_l1(p, n) / 2, model.expected_l2(p, n) / k)
    return out


def _estimate(mech, source, method: str, opts: SimulateOptions):
    """Estimate with the simulate options; in aggregate mode a uRAP's "em" is "em-bits"."""
    if method == "em" and isinstance(source, Aggregate) and "em-bits" in mech.methods:
        method = "em-bits"
    if method == "threshold":
        return mech.estimate(source, method, alpha=opts.alpha)
    return mech.estimate(source, method, tol=opts.tol, max_iter=opts.max_iter) if method.startswith("em") \
        else mech.estimate(source, method)


def _trials(options: RunOptions, opts: SimulateOptions, k: int, sens: list[int], true_counts: np.ndarray,
            eps_list: list[float], methods: list[str], seeds, progress) -> tuple[dict, dict, dict, dict]:
    """TV, MSE and EM steps per (mechanism, epsilon, method), and the theory of the empirical estimate."""
    n = int(true_counts.sum())
    p_true = true_counts / n
    names = list(_NAMES)
    total = options.trials * len(eps_list)
    tv: dict[tuple[Any, ...], list[float]] = {(m, e, meth): [] for m in names for e in eps_list for meth in methods}
    mse: dict[tuple[Any, ...], list[float]] = {key: [] for key in tv}
    iters: dict[tuple[Any, ...], list[int]] = {key: [] for key in tv if key[2] == "em"}
    theory = {}
    for ei, eps in enumerate(eps_list):
        mechs = _mechanisms(eps, k, sens)
        theory[eps] = _theory(mechs, p_true, sens, n)
        for t in range(options.trials):
            rng = np.random.default_rng(seeds[ei * options.trials + t])
            counts = true_counts if opts.sample == "fixed" else rng.multinomial(n, p_true)
            for name, mech in mechs.items():
                if options.mode == "aggregate":
                    source = sample_aggregate(mech, counts, rng)
                else:
                    source = mech.perturb(rng.permutation(np.repeat(np.arange(k), counts)), rng)
                for meth in methods:
                    est = _estimate(mech, source, METHOD_NAMES[meth], opts)
                    tv[(name, eps, meth)].append(0.5 * float(np.abs(est.frequency - p_true).sum()))
                    mse[(name, eps, meth)].append(float(np.mean((est.frequency - p_true) ** 2)))
                    if meth == "em":
                        iters[(name, eps, meth)].append(int(est.iterations or 0))
            if progress is not None:
                progress(1, total)
    return tv, mse, iters, theory


def _report(options: RunOptions, opts: SimulateOptions, desc: str, k: int, sens: list[int], n: int,
            eps_list: list[float], methods: list[str], results: tuple, seconds: float) -> SimulationReport:
    """Table, JSON data and figure of the Fig. 5 comparison."""
    tv, mse, iters, theory = results
    names = list(_NAMES)
    rows = []
    for eps in eps_list:
        for name in names:
            row: list[Any] = [f"{eps:.4g}", name]
            for meth in methods:
                row += [float(np.mean(tv[(name, eps, meth)])), float(np.mean(mse[(name, eps, meth)]))]
            row += list(theory[eps][name])
            if "em" in methods:
                row.append(f"{np.mean(iters[(name, eps, 'em')]):.0f}")
            rows.append(row)
    cols = ["epsilon", "mechanism"] + [c for m in methods for c in (f"TV {m}", f"MSE {m}")]
    cols += ["TV emp theory", "MSE emp theory"] + (["EM steps"] if "em" in methods else [])
    em_note = ("EM: RR/uRR exact likelihood from counts; RAPPOR/uRAP per-bit likelihood (em-bits) in aggregate "
               "mode, exact likelihood (eq. 8) in runtime mode. " if "em" in methods else "")
    table = Table(f"TV and MSE vs epsilon (ULDP Fig. 5 / App. E.3): {desc}", cols, rows,
                  note=(f"Means over {options.trials} trials ({options.mode} mode, users {opts.sample}). TV = l1/2, "
                        f"MSE = l2^2/|X|. Theory: eq. (37) (asymptotic) and eqs. (46)/(48) for the empirical "
                        f"estimate. emp+thr: Bonferroni alpha = {opts.alpha}. {em_note}EM: warm start emp+thr, "
                        f"tol {opts.tol:g}, at most {opts.max_iter} steps. {seconds:.1f} s."))
    data = {
        "dataset": desc, "sample": opts.sample, "domain_size": k, "n_sensitive": len(sens), "n": n,
        "epsilons": eps_list, "methods": methods,
        "results": [{"epsilon": e, "mechanism": m, "method": meth, "tv": float(np.mean(tv[(m, e, meth)])),
                     "mse": float(np.mean(mse[(m, e, meth)])), "tv_sd": float(np.std(tv[(m, e, meth)])),
                     **({"em_iterations_mean": float(np.mean(iters[(m, e, meth)]))} if meth == "em" else {})}
                    for e in eps_list for m in names for meth in methods],
        "theory_empirical": [{"epsilon": e, "mechanism": m, "tv": theory[e][m][0], "mse": theory[e][m][1]}
                             for e in eps_list for m in names],
    }

    def plot(path: str) -> None:
        curves = [Curve(f"{m} {meth}", eps_list, [float(np.mean(tv[(m, e, meth)])) for e in eps_list],
                        style="empirical", color=ci) for ci, m in enumerate(names) for meth in methods]
        curves += [Curve(f"{m} emp theory", eps_list, [theory[e][m][0] for e in eps_list], style="theory", color=ci)
                   for ci, m in enumerate(names)]
        plot_curves(curves, path, title=f"TV vs epsilon ({k} items, |X_S| = {len(sens)}, n = {n})",
                    xlabel="epsilon (nats)", ylabel="TV (frequency)", logx=True, logy=True)

    return SimulationReport(tables=[table], data=data, plot=plot)


def simulate(plan: Mapping[str, Any], options: RunOptions, progress: Callable[[int, int], None] | None = None
             ) -> SimulationReport:
    """Run a ULDP plan's simulation (see the module docstring and :class:`SimulateOptions`).

    ``mode="aggregate"`` samples each mechanism's aggregate from the true counts (O(|X|)
    per mechanism; uRAP/RAPPOR EM then uses the per-bit likelihood, ``em-bits``);
    ``mode="runtime"`` perturbs every user with the client runtime (uRAP/RAPPOR EM with the
    exact likelihood of eq. 8). TV = l1/2 and MSE = l2^2/|X| (App. E.3), means over trials.

    Raises
    ------
    SpecError
        Bad ``-O`` option (unknown key: the message lists the valid ones), or ``--data`` with a PUM plan.
    """
    opts = parse_options(SimulateOptions, options.extra)
    if plan["mechanism"] == "pum":
        return simulate_pum(plan, options, opts, progress)
    methods = parse_methods(opts.methods)
    data_seed, trial_seed = np.random.SeedSequence(options.seed).spawn(2)
    k, x_data, sens, desc, skipped = _data(plan, options, opts, np.random.default_rng(data_seed))
    n = int(x_data.size)
    true_counts = np.bincount(x_data, minlength=k)
    eps_list = parse_epsilons(opts.epsilons, k)
    total = options.trials * len(eps_list)
    if progress is not None:
        progress(0, total)
    t0 = time.perf_counter()
    tv, mse, iters, theory = _trials(options, opts, k, sens, true_counts, eps_list, methods, trial_seed.spawn(total),
                                     progress)
    report = _report(options, opts, desc, k, sens, n, eps_list, methods, (tv, mse, iters, theory),
                     time.perf_counter() - t0)
    report.data["skipped_empty"] = skipped
    return report

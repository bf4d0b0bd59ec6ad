"""Simulation of IDUE / IDUE-PS plans against RAPPOR and OUE (ID-LDP Sec. VII, Fig. 3/4).

Metrics: ``MSE = sum_i (c_hat_i - c_i)^2 / n`` (counts^2 per user, the paper's unit; equals
``n sum_i (f_hat_i - f_i)^2``) and ``RE(top-k)``, the mean relative error
``|f_hat_i - f_i| / f_i`` over the ``k`` items with the largest true frequency.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Literal, Mapping, Optional

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, field_validator

from .._common import parse_options
from .._report import SimulateOptions as RunOptions, SimulationReport, Table
from ... import mechanisms
from ...mechanisms.idue import IDUE, IDUEPS
from ..data import concat_chunks, item_stream, open_table_stream
from ..plotting import Curve, plot_curves
from ._itemsets import budget_distribution, user_set_budgets
from .inputs import iter_inputs
from .plan import build_plan
from .tables import users_budget_table

__all__ = ["SimulateOptions", "simulate", "theoretical_mse", "synthetic_inputs", "runtimes", "RE_NOTE"]

RE_NOTE = ("RE(top-k) = mean over the k items with the largest true frequency f_i (f_i > 0) of "
           "|f_hat_i - f_i| / f_i (ID-LDP Sec. VII)")


class SimulateOptions(BaseModel):
    """``-O KEY=VALUE`` options of ``ldpplan simulate`` for IDUE / IDUE-PS plans."""

    model_config = ConfigDict(extra="forbid")
    top_k: int = Field(20, ge=1, description="k of RE(top-k): mean relative error of the k most frequent items")
    sweep: Optional[list[float]] = Field(
        None, description="comma-separated values of min(E) in nats: every level's budget is scaled and "
                          "opt0/opt1/opt2, RAPPOR and OUE are re-planned at each value (ID-LDP Fig. 3)")
    synthetic: Literal["powerlaw", "uniform"] = Field(
        "powerlaw", description="synthetic data without --data: power law (alpha = 2, Sec. VII) or uniform items")
    n: int = Field(100_000, ge=1, description="number of synthetic users (without --data)")

    @field_validator("sweep", mode="before")
    @classmethod
    def _split(cls, v):
        if isinstance(v, str):
            try:
                v = [float(x) for x in v.split(",") if x.strip()]
            except ValueError:
                raise ValueError("must be a comma-separated list of numbers") from None
        if v is not None and (not v or not all(0 < float(x) < float("inf") for x in v)):
            raise ValueError("values must be finite and > 0 (nats)")
        return v


class _Inputs:
    """Users' true inputs as indices: single items (n,) or CSR item sets."""

    def __init__(self, items=None, indptr=None, indices=None, source="", skipped_empty=0):
        self.items, self.indptr, self.indices, self.source = items, indptr, indices, source
        self.skipped_empty = int(skipped_empty)

    @property
    def is_sets(self) -> bool:
        return self.indptr is not None

    @property
    def n(self) -> int:
        return int(self.indptr.size - 1) if self.is_sets else int(self.items.size)

    def data(self):
        return (self.indptr, self.indices) if self.is_sets else self.items


def synthetic_inputs(plan: Mapping[str, Any], opts: SimulateOptions, rng: np.random.Generator) -> _Inputs:
    """Power-law (``min(floor(X), m)``, ``X ~ Pareto(alpha = 2, x_m = 1)``, Sec. VII) or uniform items.

    IDUE-PS users hold ``1 + Poisson(2)`` distinct items (capped at m) drawn from the same law.
    """
    m = plan["domain"]["size"]

    def draw(size):
        if opts.synthetic == "uniform":
            return rng.integers(0, m, size=size)
        return np.minimum(np.floor(rng.pareto(2.0, size=size) + 1.0), m).astype(np.int64) - 1

    if plan["mechanism"] == "idue":
        return _Inputs(items=draw(opts.n).astype(np.int64), source=f"synthetic {opts.synthetic}")
    sizes = np.minimum(1 + rng.poisson(2.0, size=opts.n), m)
    sets = []
    for s in sizes:
        chosen: set[int] = set()
        while len(chosen) < s:
            chosen.update(int(x) for x in draw(int(s - len(chosen))))
        sets.append(sorted(chosen))
    indptr = np.concatenate([[0], np.cumsum([len(x) for x in sets])]).astype(np.int64)
    return _Inputs(indptr=indptr, indices=np.concatenate(sets).astype(np.int64), source=f"synthetic {opts.synthetic}")


def _truth_and_sampled(inputs: _Inputs, m: int, L: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """True frequencies f (m,), expected sampled-item frequencies f' (m,) and the sampling spread (m,).

    The spread is ``sum_u pi_uk (1 - pi_uk) / n`` (0 for single items).
    """
    n = inputs.n
    if not inputs.is_sets:
        f = np.bincount(inputs.items, minlength=m) / n
        return f, f, np.zeros(m)
    if L is None:
        raise ValueError("params.padding_length: item-set inputs need the plan's padding length")
    sizes = np.diff(inputs.indptr)
    f = np.bincount(inputs.indices, minlength=m) / n
    w = np.repeat(1.0 / np.maximum(sizes, L), sizes)
    return (f, np.bincount(inputs.indices, weights=w, minlength=m) / n,
            np.bincount(inputs.indices, weights=w * (1 - w), minlength=m) / n)


def theoretical_mse(a: npt.ArrayLike, b: npt.ArrayLike, f: np.ndarray, f_sampled: np.ndarray, n: int,
                    L: int | None, spread: npt.ArrayLike | None = None) -> float:
    """Expected ``sum_k (c_hat_k - c_k)^2 / n`` (counts^2 per user).

    IDUE: eq. (8) summed over items, divided by n. IDUE-PS: the estimator ``L (c_k/n - b)/(a - b)``
    has mean ``L f'_k`` and variance ``L^2 [f'_k a(1-a) + (1-f'_k) b(1-b) + spread_k (a-b)^2] /
    (n (a-b)^2)`` (``spread_k = sum_u pi_uk (1 - pi_uk) / n``: the sampling of Algorithm 1); the
    truncation bias ``L f'_k - f_k`` (users with more than L items) is included.

    References
    ----------
    Gu et al., ICDE 2020, eq. (8); Sec. VI-B.
    """
    m = f.size
    a, b = np.asarray(a)[:m], np.asarray(b)[:m]
    s = 1.0 if L is None else float(L)
    var = s**2 * (f_sampled * a * (1 - a) + (1 - f_sampled) * b * (1 - b)) / (n * (a - b) ** 2)
    if spread is not None:
        var = var + s**2 * np.asarray(spread) / n
    bias2 = (s * f_sampled - f) ** 2 if L is not None else 0.0
    return float(n * np.sum(var + bias2))


def runtimes(plan: Mapping[str, Any]) -> dict[str, Any]:
    """The plan's runtime and the RAPPOR / OUE baselines as runtime objects (same items, same L)."""
    out = {f"IDUE {plan['params']['model']}": mechanisms.load(dict(plan))}
    m, L = plan["domain"]["size"], plan["params"].get("padding_length")
    width = m + (L or 0)
    for base in plan["baselines"]:
        eps, a, b = base["guarantee"]["epsilon"], base["params"]["a"], base["params"]["b"]
        cls = IDUE if L is None else IDUEPS
        labels = plan["domain"]["labels"]
        out[base["name"]] = cls(domain=labels if labels is not None else m, a=np.full(width, a), b=np.full(width, b),
                                epsilon=np.full(width, eps), level_names=("all items",),
                                privacy={"notion": "LDP", "epsilon": eps}, **({} if L is None else {"padding_length": L}))
    return out


def _counts(mech, inputs: _Inputs, true_counts, mode: str, rng: np.random.Generator):
    if mode == "runtime":
        return mech.collect(inputs.data(), rng)
    if inputs.is_sets:
        sampled = mech.sample_items(inputs.data(), rng)
        return mech.simulate_counts(np.bincount(sampled, minlength=mech.width), inputs.n, rng)
    return mech.simulate_counts(true_counts, inputs.n, rng)


def _re_topk(est: np.ndarray, f: np.ndarray, k: int) -> float:
    top = np.argsort(-f, kind="stable")[:k]
    top = top[f[top] > 0]
    return float(np.mean(np.abs(est[top] - f[top]) / f[top])) if top.size else float("nan")


def _run(plan, inputs, trials, seed, mode, top_k, tick, idue_only=False):
    mechs = runtimes(plan)
    if idue_only:
        mechs = {k: v for k, v in mechs.items() if k.startswith("IDUE")}
    m, L = plan["domain"]["size"], plan["params"].get("padding_length")
    n = inputs.n
    f, fs, spread = _truth_and_sampled(inputs, m, L)
    true_counts = np.bincount(inputs.items, minlength=m) if not inputs.is_sets else None
    children = np.random.SeedSequence(seed).spawn(trials)
    results: dict[str, dict[str, Any]] = {}
    for k, (name, mech) in enumerate(mechs.items()):
        mses, res = [], []
        for t in range(trials):
            rng = np.random.default_rng(children[t].spawn(len(mechs))[k])
            est = mech.estimate(_counts(mech, inputs, true_counts, mode, rng)).frequency
            mses.append(n * float(np.sum((est - f) ** 2)))
            res.append(_re_topk(est, f, top_k))
            tick()
        mse_trials = np.array(mses)
        results[name] = {
            "empirical_mse": float(mse_trials.mean()),
            "empirical_mse_se": float(mse_trials.std(ddof=1) / np.sqrt(trials)) if trials > 1 else None,  # JSON: no NaN
            "theoretical_mse": theoretical_mse(mech.a, mech.b, f, fs, n, L, spread),
            "re_topk": float(np.mean([x for x in res if x == x])) if any(x == x for x in res) else None,
        }
    return results


def _rescaled(plan: Mapping[str, Any], eps_min: float, model: str) -> dict[str, Any]:
    spec = {key: value for key, value in dict(plan["spec"]).items() if key != "shuffle"}  # local accuracy only
    scale = eps_min / min(lv["epsilon"] for lv in spec["levels"])
    spec["levels"] = [dict(lv) | {"epsilon": lv["epsilon"] * scale} for lv in spec["levels"]]
    spec["model"] = model
    return build_plan(spec)


def _load_inputs(plan, options: RunOptions, opts: SimulateOptions) -> _Inputs:
    if options.data is None:
        return synthetic_inputs(plan, opts, np.random.default_rng(np.random.SeedSequence([options.seed, 0xDA7A])))
    name = Path(options.data).name
    header = open_table_stream(options.data, [], field="--data").header
    if plan["mechanism"] == "idue" and "item" not in header and {"userId", "movieId"} <= set(header):
        # the paper's single-item setting (Sec. VII): every rating is one user's report of the movie
        stream = item_stream(options.data, plan["domain"]["labels"], int(plan["domain"]["size"]), column="movieId",
                             skip_empty=options.skip_empty, field="--data")
    else:
        stream = iter_inputs(plan, options.data, skip_empty=options.skip_empty)
    data = concat_chunks(list(stream))
    if stream.skipped_empty:
        name += f" ({stream.skipped_empty:,} rows with an empty item skipped)"
    return _Inputs(indptr=data[0], indices=data[1], source=name, skipped_empty=stream.skipped_empty) \
        if isinstance(data, tuple) else _Inputs(items=data, source=name, skipped_empty=stream.skipped_empty)


def simulate(plan: Mapping[str, Any], options: RunOptions, progress: Callable[[int, int], None] | None = None
             ) -> SimulationReport:
    """Simulate an IDUE / IDUE-PS plan against RAPPOR and OUE at ``epsilon = min(E)``.

    Parameters
    ----------
    plan : mapping
        A verified plan.
    options : ldpplan.planner.SimulateOptions
        ``data`` (CSV read by :func:`read_inputs`; else synthetic), ``trials``, ``seed``,
        ``mode`` (``"aggregate"``: counts sampled exactly in distribution; ``"runtime"``: every
        user perturbed), ``extra``: :class:`SimulateOptions`.
    progress : callable, optional
        ``progress(advance, total)``.

    Returns
    -------
    SimulationReport
        Empirical vs theoretical MSE (counts^2 per user) and RE(top-k) per mechanism;
        ``plot(path)`` draws MSE vs min(E) through :func:`planner.plotting.plot_curves`.

    Raises
    ------
    SpecError
        A bad ``-O`` option (the message lists the valid keys).
    """
    opts = parse_options(SimulateOptions, options.extra)
    inputs = _load_inputs(plan, options, opts)
    model = plan["params"]["model"]
    points: list[tuple[float | None, list[Mapping[str, Any]]]]
    if opts.sweep:
        points = [(x, [_rescaled(plan, x, mdl) for mdl in ("opt0", "opt1", "opt2")]) for x in opts.sweep]
    else:
        points = [(None, [plan])]
    total = sum(options.trials * (2 + len(ps)) for _, ps in points)
    done = [0]
    if progress:
        progress(0, total)  # the bar shows its total from the start

    def tick() -> None:
        done[0] += 1
        if progress:
            progress(1, total)

    m, L = plan["domain"]["size"], plan["params"].get("padding_length")
    rows, data_points = [], []
    for _, ps in points:
        res: dict[str, Any] = {}
        for k, p in enumerate(ps):
            res.update(_run(p, inputs, options.trials, options.seed, options.mode, opts.top_k, tick, idue_only=k > 0))
        e_min = float(ps[0]["guarantee"]["epsilon"])
        for name, r in res.items():
            rows.append([name, e_min, r["empirical_mse"], "n/a" if r["empirical_mse_se"] is None else r["empirical_mse_se"],
                         r["theoretical_mse"], r["empirical_mse"] / r["theoretical_mse"],
                         "n/a" if r["re_topk"] is None else r["re_topk"]])
        data_points.append({"epsilon_min": e_min, "mechanisms": res})
    title = (f"{plan['mechanism'].upper()} ({model}) on {inputs.source}: n = {inputs.n:,} users, m = {m:,} items"
             + (f", L = {L}" if L else "") + f", {options.trials} trials ({options.mode})")
    table = Table(title, ["mechanism", "min epsilon", "empirical MSE", "std. error", "theoretical MSE",
                          "empirical / theory", f"RE(top-{opts.top_k})"], rows,
                  note="MSE = sum_i (c_hat_i - c_i)^2 / n (counts^2 per user, ID-LDP Sec. VII); theory from eq. (8)"
                       + (" times L^2 plus the sampling variance and the padding-and-sampling truncation bias" if L else "")
                       + f". {RE_NOTE}. RAPPOR/OUE satisfy epsilon-LDP with epsilon = min(E).")
    payload = {"n": inputs.n, "m": m, "source": inputs.source, "top_k": opts.top_k,
               "metric": "MSE = sum_i (c_hat_i - c_i)^2 / n (counts^2 per user)", "re_topk": RE_NOTE,
               "points": data_points, "skipped_empty": inputs.skipped_empty}
    tables = [table]
    if inputs.is_sets:
        dist = budget_distribution(user_set_budgets(plan, inputs.indptr, inputs.indices), inputs.source)
        payload["users_set_budgets"] = dist
        tables.append(users_budget_table(dist))
    return SimulationReport(tables, payload, plot=lambda path: _plot(data_points, title, path))


def _plot(points, title: str, path: str) -> None:
    names = list(points[0]["mechanisms"])
    curves = []
    for k, name in enumerate(names):
        xs = [p["epsilon_min"] for p in points if name in p["mechanisms"]]
        for kind, style in (("theoretical_mse", "theory"), ("empirical_mse", "empirical")):
            ys = [p["mechanisms"][name][kind] for p in points if name in p["mechanisms"]]
            curves.append(Curve(f"{name} ({style})", xs, ys, style=style, color=k))
    plot_curves(curves, path, title=title, xlabel="min privacy budget min(E) (nats)",
                ylabel="MSE = sum (c_hat - c)^2 / n  (counts^2 per user)")


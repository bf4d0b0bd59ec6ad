"""Simulation and file-based runtime for IDUE / IDUE-PS plans.

Metrics follow ID-LDP Sec. VII: ``MSE = sum_i (c_hat_i - c_i)^2 / n`` (counts^2 per user,
the paper's Fig. 3/4 unit; equals ``n * sum_i (f_hat_i - f_i)^2`` for frequencies) and
``RE(k) = mean over the true top-k items of |c_hat_i - c_i| / c_i``.
"""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ._report import SimulateOptions, SimulationReport, Table
from .errors import InputDataError, SpecError

__all__ = ["simulate", "perturb_file", "estimate_file", "load_inputs", "theoretical_mse"]


# ----------------------------------------------------------------------------- inputs
class _Inputs:
    """Users' true inputs as item indices: single items (n,) or CSR item sets."""

    def __init__(self, items=None, indptr=None, indices=None, source=""):
        self.items, self.indptr, self.indices, self.source = items, indptr, indices, source

    @property
    def is_sets(self) -> bool:
        return self.indptr is not None

    @property
    def n(self) -> int:
        return int(self.indptr.size - 1) if self.is_sets else int(self.items.size)

    def sets(self) -> tuple[np.ndarray, np.ndarray]:
        if self.is_sets:
            return self.indptr, self.indices
        return np.arange(self.items.size + 1, dtype=np.int64), self.items


def _label_index(plan, labels: np.ndarray, source: str) -> np.ndarray:
    lookup = {lab: k for k, lab in enumerate(plan["items"])}
    uniq, inv = np.unique(labels.astype(str), return_inverse=True)
    mapped = np.array([lookup.get(u, -1) for u in uniq], dtype=np.int64)
    missing = uniq[mapped < 0]
    if missing.size:
        raise InputDataError(f"{source}: {missing.size} item label(s) are not in the plan's items "
                             f"(e.g. {missing[:3].tolist()}); the plan's domain must cover the data")
    return mapped[inv]


def _read_columns(path: Path) -> dict[str, np.ndarray]:
    if not path.is_file():
        raise InputDataError(f"--data: file must exist (got {str(path)!r})")
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    if len(rows) < 2:
        raise InputDataError(f"{path}: needs a header row and at least one record")
    header = [h.strip() for h in rows[0]]
    body = np.array([r[: len(header)] for r in rows[1:] if len(r) >= len(header)], dtype=str)
    return {h: body[:, k] for k, h in enumerate(header)}


def load_inputs(plan: Mapping[str, Any], path: str | None, extra: Mapping[str, str], rng: np.random.Generator) -> _Inputs:
    """Read users' inputs for ``plan`` from a CSV, or make the synthetic default.

    CSV formats (header required):

    * MovieLens ratings (``userId, movieId, ...``): IDUE - every rating is one user's
      report of ``movieId`` (n = 100,004); IDUE-PS - each user's set of rated movies.
    * ``item``: one row per user (IDUE); ``user, item``: one row per (user, item) (IDUE-PS).

    Without a file: ``-O synthetic=powerlaw|uniform`` (default powerlaw) with ``-O n=100000``
    users; power-law items are ``min(floor(X), m)`` with ``X ~ Pareto(alpha = 2, x_m = 1)``
    over the plan's items in index order (ID-LDP Sec. VII); IDUE-PS users hold
    ``1 + Poisson(2)`` distinct items (capped at m) drawn from the same law.
    """
    ps = plan["mechanism"] == "idue-ps"
    m = len(plan["items"])
    if path is None:
        kind = extra.get("synthetic", "powerlaw")
        try:
            n = int(extra.get("n", 100_000))
        except ValueError:
            raise SpecError("-O n", "must be an integer", extra.get("n")) from None
        if kind not in ("powerlaw", "uniform"):
            raise SpecError("-O synthetic", "must be 'powerlaw' or 'uniform'", kind)

        def draw(size):
            if kind == "uniform":
                return rng.integers(0, m, size=size)
            return np.minimum(np.floor(rng.pareto(2.0, size=size) + 1.0), m).astype(np.int64) - 1

        if not ps:
            return _Inputs(items=draw(n).astype(np.int64), source=f"synthetic {kind}")
        sizes = np.minimum(1 + rng.poisson(2.0, size=n), m)
        sets = []
        for s in sizes:  # small synthetic sets; rejection keeps items distinct
            chosen: set[int] = set()
            while len(chosen) < s:
                chosen.update(int(x) for x in draw(int(s - len(chosen))))
            sets.append(sorted(chosen))
        indptr = np.concatenate([[0], np.cumsum([len(x) for x in sets])]).astype(np.int64)
        return _Inputs(indptr=indptr, indices=np.concatenate(sets).astype(np.int64), source=f"synthetic {kind}")
    p = Path(path)
    cols = _read_columns(p)
    if "movieId" in cols and "userId" in cols:
        user, item = cols["userId"], cols["movieId"]
    elif "item" in cols:
        user, item = cols.get("user"), cols["item"]
    else:
        raise InputDataError(f"{p}: needs columns 'item' (and 'user' for item sets) or MovieLens 'userId,movieId' "
                             f"(header is {list(cols)})")
    idx = _label_index(plan, item, str(p))
    if not ps:
        return _Inputs(items=idx, source=p.name)
    if user is None:
        raise InputDataError(f"{p}: item-set data needs a 'user' column")
    uniq_users, uinv = np.unique(user, return_inverse=True)
    order = np.lexsort((idx, uinv))
    pairs = np.stack([uinv[order], idx[order]])
    keep = np.ones(pairs.shape[1], bool)
    keep[1:] = np.any(pairs[:, 1:] != pairs[:, :-1], axis=0)  # drop duplicate (user, item) pairs
    u_sorted, i_sorted = pairs[0, keep], pairs[1, keep]
    counts = np.bincount(u_sorted, minlength=uniq_users.size)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return _Inputs(indptr=indptr, indices=i_sorted.astype(np.int64), source=p.name)


# ----------------------------------------------------------------------------- theory
def _truth_and_sampled(inputs: _Inputs, m: int, L: int | None) -> tuple[np.ndarray, np.ndarray]:
    """True frequencies f (m,) and expected sampled-item frequencies f' (m [+L],)."""
    n = inputs.n
    if not inputs.is_sets:
        f = np.bincount(inputs.items, minlength=m) / n
        return f, f
    indptr, indices = inputs.indptr, inputs.indices
    sizes = np.diff(indptr)
    f = np.bincount(indices, minlength=m) / n
    w = np.repeat(1.0 / np.maximum(sizes, L), sizes)
    fs = np.zeros(m + L)
    fs[:m] = np.bincount(indices, weights=w, minlength=m) / n
    eta = sizes / np.maximum(sizes, L)
    fs[m:] = np.sum(1.0 - eta) / (n * L)
    return f, fs


def theoretical_mse(a: np.ndarray, b: np.ndarray, f: np.ndarray, f_sampled: np.ndarray, n: int, L: int | None) -> float:
    """Expected ``sum_k (c_hat_k - c_k)^2 / n`` (counts^2 per user).

    IDUE: eq. (8) summed and divided by n. IDUE-PS: the estimator ``L (c_k/n - b)/(a - b)``
    has mean ``L f'_k`` (``f'_k`` = expected fraction of users whose sampled item is k) and
    variance ``L^2 [f'_k a(1-a) + (1-f'_k) b(1-b)] / (n (a-b)^2)``; the truncation bias
    ``L f'_k - f_k`` (users with more than L items) is included.
    """
    m = f.size
    a, b = a[:m], b[:m]
    scale = 1.0 if L is None else float(L)
    fs = f_sampled[:m]
    var = scale**2 * (fs * a * (1 - a) + (1 - fs) * b * (1 - b)) / (n * (a - b) ** 2)
    bias2 = (scale * fs - f) ** 2 if L is not None else 0.0
    return float(n * np.sum(var + bias2))


# ----------------------------------------------------------------------------- simulation
def _mechanisms(plan: Mapping[str, Any]) -> dict[str, Any]:
    from ldpplan import mechanisms
    from .idue import baseline_plan

    out = {f"IDUE {plan['model']}": mechanisms.load(dict(plan))}
    for name in ("rappor", "oue"):
        out[name.upper()] = mechanisms.load(baseline_plan(plan, name))
    return out


def _counts_once(mech, inputs: _Inputs, true_counts: np.ndarray, mode: str, rng: np.random.Generator):
    if mode == "runtime":
        return mech.collect(inputs.sets() if inputs.is_sets else inputs.items, rng)
    if inputs.is_sets:
        sampled = mech.sample_items(inputs.sets(), rng)
        return mech.simulate_counts(np.bincount(sampled, minlength=mech.width), inputs.n, rng)
    return mech.simulate_counts(true_counts, inputs.n, rng)


def _re_topk(est: np.ndarray, f: np.ndarray, k: int) -> float:
    top = np.argsort(-f, kind="stable")[:k]
    top = top[f[top] > 0]
    return float(np.mean(np.abs(est[top] - f[top]) / f[top])) if top.size else float("nan")


def _run(plan, inputs, trials, seed, mode, top_k, progress=None, tick=None):
    mechs = _mechanisms(plan)
    m = len(plan["items"])
    L = plan["params"].get("padding_length")
    n = inputs.n
    f, fs = _truth_and_sampled(inputs, m, L)
    true_counts = np.bincount(inputs.items, minlength=m) if not inputs.is_sets else None
    children = np.random.SeedSequence(seed).spawn(trials)
    results: dict[str, dict[str, Any]] = {}
    for name, mech in mechs.items():
        mses, res = [], []
        for t in range(trials):
            rng = np.random.default_rng(children[t].spawn(len(mechs))[list(mechs).index(name)])
            counts = _counts_once(mech, inputs, true_counts, mode, rng)
            est = np.asarray(mech.estimate(counts))[:m]
            mses.append(n * float(np.sum((est - f) ** 2)))
            res.append(_re_topk(est, f, top_k))
            if tick:
                tick()
        mses = np.array(mses)
        results[name] = {
            "empirical_mse": float(mses.mean()),
            "empirical_mse_se": float(mses.std(ddof=1) / np.sqrt(trials)) if trials > 1 else float("nan"),
            "theoretical_mse": theoretical_mse(np.asarray(mech.a), np.asarray(mech.b), f, fs, n, L),
            f"re_top{top_k}": float(np.nanmean(res)),
        }
    return results, f


def simulate(plan: Mapping[str, Any], options: SimulateOptions, progress=None) -> SimulationReport:
    """Simulate an IDUE / IDUE-PS plan against RAPPOR and OUE at ``epsilon = min(E)``.

    Parameters
    ----------
    plan : mapping
        A verified plan.
    options : SimulateOptions
        ``data`` (CSV, see :func:`load_inputs`), ``trials``, ``seed``, ``mode``
        (``"aggregate"``: counts sampled exactly in distribution; ``"runtime"``: every user
        perturbed by :mod:`mechanisms`). Extra ``-O`` options: ``top_k`` (default 20),
        ``synthetic``, ``n``, and ``sweep=e1,e2,...`` (values of ``min(E)``; every level's
        budget is scaled proportionally and opt0/opt1/opt2, RAPPOR and OUE are re-planned
        at each value, like ID-LDP Fig. 3).
    progress : callable, optional
        ``progress(advance, total)``.

    Returns
    -------
    SimulationReport
        A table of empirical vs theoretical MSE (counts^2 per user) and RE(top-k) per
        mechanism; ``data`` with the same numbers; ``plot(path)`` draws MSE vs epsilon.
    """
    extra = dict(options.extra)
    try:
        top_k = int(extra.get("top_k", 20))
        sweep = [float(x) for x in extra["sweep"].split(",")] if "sweep" in extra else None
    except ValueError as exc:
        raise SpecError("-O top_k/sweep", "must be an integer / a comma-separated list of numbers", str(exc)) from None
    if sweep is not None and any(not (x > 0) for x in sweep):
        raise SpecError("-O sweep", "values must be > 0", sweep)
    data_rng = np.random.default_rng(np.random.SeedSequence([options.seed, 0xDA7A]))
    inputs = load_inputs(plan, options.data, extra, data_rng)
    plans = {None: plan}
    if sweep:
        plans = {x: p for x in sweep for p in [_rescaled(plan, x, plan["model"])]}
    total = options.trials * 3 * len(plans) + (options.trials * 2 * len(plans) if sweep else 0)
    done = [0]

    def tick():
        done[0] += 1
        if progress:
            progress(1, total)

    rows, payload, curves = [], {"n": inputs.n, "m": len(plan["items"]), "source": inputs.source,
                                 "metric": "MSE = sum_i (c_hat_i - c_i)^2 / n (counts^2 per user)", "points": []}, []
    for eps_min, p in plans.items():
        res, _ = _run(p, inputs, options.trials, options.seed, options.mode, top_k, tick=tick)
        if sweep:  # the other two models for the Fig. 3 comparison
            for other in sorted({"opt0", "opt1", "opt2"} - {p["model"]}):
                q = _rescaled(plan, eps_min, other)
                r2, _ = _run(q, inputs, options.trials, options.seed, options.mode, top_k, tick=tick)
                res[f"IDUE {other}"] = r2[f"IDUE {other}"]
        e_label = float(min(lv["epsilon"] for lv in p["params"]["levels"]))
        for name, r in res.items():
            rows.append([name, e_label, r["empirical_mse"], r["empirical_mse_se"], r["theoretical_mse"],
                         r["empirical_mse"] / r["theoretical_mse"], r[f"re_top{top_k}"]])
        payload["points"].append({"epsilon_min": e_label, "mechanisms": res})
        curves.append((e_label, res))
    L = plan["params"].get("padding_length")
    title = (f"{plan['mechanism'].upper()} on {inputs.source}: n = {inputs.n:,} users, m = {len(plan['items']):,} items"
             + (f", L = {L}" if L else "") + f", {options.trials} trials ({options.mode})")
    table = Table(title, ["mechanism", "min epsilon", "empirical MSE", "std. error", "theoretical MSE",
                          "empirical / theory", f"RE(top-{top_k})"], rows,
                  note="MSE = sum_i (c_hat_i - c_i)^2 / n (counts^2 per user, ID-LDP Sec. VII); theory from eq. (8)"
                       + (" plus the padding-and-sampling truncation bias" if L else "")
                       + ". RAPPOR/OUE satisfy epsilon-LDP with epsilon = min(E).")
    return SimulationReport([table], payload, plot=lambda path: _plot(curves, title, path))


def _rescaled(plan: Mapping[str, Any], eps_min: float, model: str) -> dict[str, Any]:
    from .idue import plan_from_spec

    levels = plan["params"]["levels"]
    scale = eps_min / min(lv["epsilon"] for lv in levels)
    spec = {"mechanism": plan["mechanism"], "model": model, "notion": plan["notion"],
            "levels": [{"name": lv["name"], "epsilon": lv["epsilon"] * scale, "items": list(lv["items"])} for lv in levels]}
    if plan["params"].get("padding_length"):
        spec["padding_length"] = plan["params"]["padding_length"]
    out = plan_from_spec(spec)
    out["items"] = list(plan["items"])  # keep the original index order
    return out


def _plot(curves, title: str, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ._io import write_bytes_atomic
    import io

    names = list(curves[0][1])
    fig, ax = plt.subplots(figsize=(7, 4.5))
    xs = [c[0] for c in curves]
    for k, name in enumerate(names):
        emp = [c[1][name]["empirical_mse"] for c in curves if name in c[1]]
        th = [c[1][name]["theoretical_mse"] for c in curves if name in c[1]]
        color = f"C{k}"
        ax.plot(xs, th, "-", color=color, label=f"{name} (theory)")
        ax.plot(xs, emp, "--o", color=color, mfc="none", label=f"{name} (empirical)")
    ax.set_yscale("log")
    ax.set_xlabel("min privacy budget epsilon (nats)")
    ax.set_ylabel("MSE = sum (c_hat - c)^2 / n  (counts^2 per user)")
    ax.set_title(title, fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120)
    plt.close(fig)
    write_bytes_atomic(path, buf.getvalue())


# ----------------------------------------------------------------------------- CLI runtime
def perturb_file(plan: Mapping[str, Any], input_path: str, output_path: str, rng: np.random.Generator) -> dict[str, Any]:
    """Perturb users' inputs from a CSV (``item`` per row, or ``user,item`` rows for item
    sets, or MovieLens ratings) and write the packed reports to ``output_path`` (.npz).

    The file holds ``bits`` (uint8, shape (n, ceil(width/8)), np.packbits order), ``width``
    and ``mechanism``. Returns ``{"n": n}``.
    """
    import io

    from ldpplan import mechanisms

    from ._io import write_bytes_atomic

    mech = mechanisms.load(dict(plan))
    inputs = load_inputs(plan, input_path, {}, rng)
    reports = mech.perturb(inputs.sets() if inputs.is_sets else inputs.items, rng=rng)
    buf = io.BytesIO()
    np.savez_compressed(buf, mechanism=np.array(plan["mechanism"]), **reports.to_arrays())
    write_bytes_atomic(output_path, buf.getvalue())
    return {"n": int(reports.bits.shape[0])}


def estimate_file(plan: Mapping[str, Any], reports_path: str) -> Table:
    """Estimate item frequencies from a reports file written by :func:`perturb_file`.

    Returns a Table with, per item: label, estimated frequency, estimated count
    (``n * freq``) and the standard error of the frequency (eq. 8 at the estimate; for
    IDUE-PS at the implied sampled-item frequencies ``freq / L``).
    """
    from ldpplan import mechanisms
    from ldpplan.mechanisms.idue import UnaryReports

    p = Path(reports_path)
    mech = mechanisms.load(dict(plan))
    try:
        with np.load(p, allow_pickle=False) as z:
            mech_name = str(z["mechanism"])
            reports = UnaryReports.from_arrays(z)
    except FileNotFoundError:
        raise InputDataError(f"{p}: reports file does not exist") from None
    except (OSError, KeyError, ValueError) as exc:
        raise InputDataError(f"{p}: not a reports file written by 'ldpplan perturb' ({exc})") from None
    if mech_name != plan["mechanism"]:
        raise InputDataError(f"{p}: reports are for mechanism {mech_name!r}, the plan is {plan['mechanism']!r}")
    if reports.width != mech.width:
        raise InputDataError(f"{p}: report width {reports.width} does not match the plan (width {mech.width})")
    n = reports.n
    freq = np.asarray(mech.estimate(reports))
    # IDUE-PS: variance() takes sampled-item frequencies, estimated by freq / L (E[f_hat] = L f')
    scale = float(plan["params"].get("padding_length") or 1)
    sampled = np.clip(freq / scale, 0, 1)
    sd = np.sqrt(np.maximum(np.asarray(mech.variance(sampled, n))[: len(freq)], 0))
    rows = [[lab, float(fr), float(n * fr), float(s)] for lab, fr, s in zip(plan["items"], freq, sd)]
    return Table(f"Estimated frequencies from {n:,} reports", ["item", "frequency", "count", "std. error"], rows)

"""Write the IDUE notebooks from their cell sources and execute them in place.

Usage (from the repository root)::

    /tmp/devenv/bin/python notebooks/_build.py                 # every notebook defined here
    /tmp/devenv/bin/python notebooks/_build.py 01 06           # by number or file stem
    /tmp/devenv/bin/python notebooks/_build.py --no-execute 02 # write the cells only

The cell sources live in this file (one ``NOTEBOOKS`` entry per notebook) so that the
notebooks can be regenerated and reviewed as plain Python. Each notebook is written with
:mod:`nbformat` (v4) and executed with :mod:`nbclient` in its own folder, so the committed
``.ipynb`` carries its outputs (figures render when browsing the repository).

Conventions every notebook follows (checked by ``tests/test_notebooks_meta.py``):

* the first cell is markdown and names the paper figures/tables it reproduces;
* exactly one code cell is tagged ``parameters``; it holds ``FULL = False`` (reduced sizes,
  < 2 minutes on 2 cores) and ``SEED``; set ``FULL = True`` for the papers' sizes;
* only the public API is used (``planner``, ``planner.data``, ``solvers.idue``, ``mechanisms``).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
from _nbtools import DISPLAY_HELPERS, build as _build_cells, code, md, source_modules  # noqa: E402

# ============================================================================ 01
NB01 = [
    md("""
    # 01 · IDUE planning: ID-LDP Table II, Fig. 3, Fig. 6, opt0/opt1/opt2 and solver time

    **Paper:** Gu, Li, Xiong, Cao. *Providing Input-Discriminative Protection for Local Differential
    Privacy*, ICDE 2020 (ID-LDP; `/work/shared/papers/idldp-gu-li-xiong-cao-icde2020.txt`).

    | section | reproduces | paper's number | ours | why they differ |
    |---|---|---|---|---|
    | 1 | **Table II** (toy example, HIV at ε = ln 4, four conditions at ln 6) | IDUE total variance 8.68n ~ 8.86n | **8.387n ~ 8.5675n** (eq. 9 optimum 8.5675 per user, 3.3 % below the paper's 8.86n) | the paper evaluates probabilities rounded to 2 decimals (and rounds 1.3254 to 1.32); re-evaluated exactly, its rounded point gives 8.70n ~ 8.88n |
    | 2 | **Fig. 3** (empirical vs theoretical MSE, power-law m = 100 and uniform m = 1,000, n = 100,000) | curves only (no numbers printed); empirical ≈ theoretical, IDUE below RAPPOR and OUE, opt1/opt2 above opt0 | empirical / theoretical: mean 1.006, every point within 4 % (≤ 2.5 standard errors); IDUE opt0 35-38 % below OUE at every ε | default samples the aggregated counts exactly in distribution (`mode="aggregate"`, 100 trials); `FULL = True` perturbs every user (10 trials, as the paper) |
    | 3 | **Fig. 6** (share of the most sensitive items 0-100 % vs MSE, two levels ε1 < ε2) | "above ~40 % IDUE has almost the same MSE as OUE" | IDUE's gain over OUE: 55 % with 1 % sensitive items, 1.4 % at 40 %, 0 from 60 % on | the paper does not state ε1, ε2 for Fig. 6; we use 1 and 2 nats |
    | 4 | opt0 vs opt1 vs opt2 (Sec. V-D) | "opt1/opt2 provide near-optimal solutions" | opt1 within 5 % of opt0 only for ε ≤ 1 (60-110 % above at ε ≥ 4); opt2 9-47 % above for ε ≤ 3 and identical to OUE from ε = 3 on | not a paper figure; the paper calls eq. (9) non-convex, we solve an exact convex reduction, cross-checked with a conic solver |
    | 5 | solver time vs number of levels t | cost depends on t only (Sec. VII) | opt0 under a second for every t up to 1,000 (machine-dependent, the one output that does not reproduce to the digit) | not a paper figure |

    Units: budgets ε in nats; MSE in the paper's unit `sum_i (ĉ_i − c_i)² / n` (counts² per user,
    equal to `n · sum_i (f̂_i − f_i)²` for frequencies). The notebook uses only the public API
    (`planner`, `solvers.idue`, `mechanisms`). Set `FULL = True` in the next cell for the paper's
    full procedure (every user through the client runtime, 10 trials, finer grids; ~10 minutes).
    """),
    code("""
    # Parameters: the only cell to edit. FULL = True switches to the papers' full procedure.
    FULL = False
    SEED = 2020

    N_USERS = 100_000                      # Table III: n = 100,000 for both synthetic data sets
    FIG3_EPSILONS = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0] if FULL else [0.5, 1.0, 2.0, 3.0, 4.0]
    FIG3_MODE = "runtime" if FULL else "aggregate"   # runtime: every user perturbed by mechanisms/
    FIG3_TRIALS = 10 if FULL else 100               # paper: averaged over ten repeats
    FIG6_EPSILON1, FIG6_EPSILON2 = 1.0, 2.0         # two levels, eps1 < eps2 (not stated in the paper)
    FIG6_SHARES = ([0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0] if FULL
                   else [0.01, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0])
    FIG6_TRIALS = 10 if FULL else 50
    FIG6_TOP_K = 50                                 # the paper's Fig. 6 uses RE with k = 50
    GAP_EPSILONS = [0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0]
    TIME_T = [2, 5, 10, 20, 50, 100, 200, 500, 1000] + ([2000, 5000, 10000] if FULL else [])
    TIME_REPEATS = 5 if FULL else 3
    CONIC_MAX_T = 200 if FULL else 50               # CVXPY cross-check only on small instances
    """, "parameters"),
    code("""
    import time

    import matplotlib.pyplot as plt
    import matplotlib.ticker as mticker
    import numpy as np

    from ldpplan import planner
    from ldpplan.solvers import idue as idue_solvers
    """ + DISPLAY_HELPERS),
    md("""
    ## 1 · Table II: the toy example (one HIV item at ε = ln 4, four common conditions at ln 6)

    The embedded example spec `health` is exactly the paper's setting. `planner.make_plan` solves
    eq. (9) (opt0, MinID-LDP), rounds the probabilities to the 2⁻⁴⁸ grid on the safe side and
    re-verifies constraint (6) independently; `planner.summarize` gives the tables `ldpplan plan` prints.
    """),
    code("""
    health = planner.make_plan(planner.example_spec("health"))
    print(planner.verify_plan(health).message)
    for table in planner.summarize(health):
        show_planner_table(table)
    """),
    md("""
    Side by side with the paper. `Var[ĉ_i] = coef_n · n + coef_c · c_i` (eq. 8); the total variance ranges
    over the data because `sum_i c_i = n`: from `n (sum_i m_i coef_n,i + min coef_c)` to
    `n (sum_i m_i coef_n,i + max coef_c)`, the latter being eq. (9) times n (the worst case).
    The row *paper's rounded point, exact* re-evaluates the paper's two-decimal probabilities
    without further rounding; `solvers.idue.log_ratio_slack` confirms that point is feasible
    (positive slack), i.e. it is a valid but sub-optimal ID-LDP mechanism.
    """),
    code("""
    def ue_row(name, notion, a1, b1, a2, b2, sizes=(1, 4)):
        \"\"\"Flip probabilities, eq. (8) coefficients and the total-variance range for two levels.\"\"\"
        cn = lambda a, b: b * (1 - b) / (a - b) ** 2
        cc = lambda a, b: (1 - a - b) / (a - b)
        base = sizes[0] * cn(a1, b1) + sizes[1] * cn(a2, b2)
        lo, hi = base + min(cc(a1, b1), cc(a2, b2)), base + max(cc(a1, b1), cc(a2, b2))
        return [name, notion, f"{1 - a1:.4f}", f"{1 - a2:.4f}", f"{b1:.4f}", f"{b2:.4f}",
                f"{cn(a1, b1):.3f}n + {cc(a1, b1):.3f}c", f"{cn(a2, b2):.3f}n + {cc(a2, b2):.3f}c",
                f"{lo:.4f}n ~ {hi:.4f}n" if hi - lo > 1e-9 else f"{hi:.4f}n"], (lo, hi)

    levels = {lv["name"]: lv for lv in health["params"]["levels"]}
    hiv, other = levels["hiv"], levels["other"]
    rap, oue = health["baselines"]["rappor"], health["baselines"]["oue"]
    paper = [
        ["RAPPOR (paper)", "LDP", "0.33", "0.33", "0.33", "0.33", "2n", "2n", "10n"],
        ["OUE (paper)", "LDP", "0.5", "0.5", "0.2", "0.2", "1.78n + c", "1.78n + c", "9.9n"],
        ["IDUE (paper)", "MinID-LDP", "0.41", "0.33", "0.33", "0.28", "3.27n + 0.31c", "1.32n + 0.13c", "8.68n ~ 8.86n"],
    ]
    row_rap, _ = ue_row("RAPPOR (ours)", "LDP", rap["a"], rap["b"], rap["a"], rap["b"])
    row_oue, (_, oue_total) = ue_row("OUE (ours)", "LDP", oue["a"], oue["b"], oue["a"], oue["b"])
    row_idue, (idue_lo, idue_hi) = ue_row("IDUE opt0 (ours, exact optimum)", "MinID-LDP",
                                          hiv["a"], hiv["b"], other["a"], other["b"])
    row_paper_exact, (paper_lo, paper_hi) = ue_row("IDUE (paper's rounded point, exact)", "MinID-LDP",
                                                   0.59, 0.33, 0.67, 0.28)
    show_table(["mechanism", "notion", "1-a (i=1)", "1-a (i=2..5)", "b (i=1)", "b (i=2..5)",
                "Var[ĉ_1]", "Var[ĉ_i], i=2..5", "Σ Var[ĉ_i]"],
               paper + [row_rap, row_oue, row_idue, row_paper_exact],
               title="ID-LDP Table II: paper (2-decimal rounding) vs ours (exact)")

    eps = np.array([hiv["epsilon"], other["epsilon"]])
    slack, _, _ = idue_solvers.log_ratio_slack([0.59, 0.67], [0.33, 0.28], eps, "minid")
    print(f"paper's rounded point: smallest slack of constraint (6) = {slack:.4f} nats (>= 0: feasible)")
    print(f"our eq. (9) optimum: {health['worst_case_mse_per_user']:.6f} per user, certified gap "
          f"{health['solver']['certificate']['gap']:.1e}")
    print(f"worst case: ours {idue_hi:.4f}n vs the paper's rounded point {paper_hi:.4f}n "
          f"({100 * (paper_hi / idue_hi - 1):.2f} % higher); OUE {oue_total:.4f}n; RAPPOR 10n")

    # The reproduced numbers, asserted so that a regression fails the notebook run.
    assert abs(health["worst_case_mse_per_user"] - 8.5675) < 5e-4
    assert abs(idue_lo - 8.387) < 1e-3 and abs(paper_lo - 8.70) < 5e-3 and abs(paper_hi - 8.88) < 5e-3
    assert slack > 0 and abs(oue_total - 9.8889) < 1e-3
    """),
    md("""
    **Paper vs ours.** The paper reports 8.68n ~ 8.86n for IDUE; the exact optimum of eq. (9) is
    **8.5675n** in the worst case (8.387n at best), about 3.5 % lower. The difference is rounding only: the
    paper's printed probabilities (1 − a₁ = 0.41, b₁ = 0.33, 1 − a = 0.33, b = 0.28) are feasible but are
    not the optimum, re-evaluated exactly they give 8.70n ~ 8.88n, and the paper also rounds the
    coefficient 1.3254 down to 1.32 (4 × 0.0054 ≈ 0.02n). RAPPOR (10n) and OUE (9.889n, printed 9.9n) agree.
    Our flip probabilities (0.408, 0.327, 0.327, 0.278) round to the paper's.
    """),
    md("""
    ## 2 · Fig. 3: empirical vs theoretical MSE on synthetic single-item data

    Setting (Sec. VII, Table III): three levels with budgets {ε, 1.2ε, 2ε} on {5 %, 5 %, 90 %} of the
    items (the embedded example `three-levels`, items assigned to levels by a seeded permutation),
    n = 100,000 users, power-law (α = 2, m = 100) and uniform (m = 1,000) data. RAPPOR and OUE satisfy
    ε-LDP with ε = min(E). `planner.simulate(..., extra={"sweep": ...})` re-plans opt0/opt1/opt2, RAPPOR
    and OUE at every ε and reports empirical and theoretical (eq. 8) MSE.
    """),
    code("""
    MECHS = ["RAPPOR", "OUE", "IDUE opt0", "IDUE opt1", "IDUE opt2"]
    STYLE = {"RAPPOR": "C0", "OUE": "C1", "IDUE opt0": "C3", "IDUE opt1": "C2", "IDUE opt2": "C4"}


    def fig3_sweep(synthetic, m):
        spec = planner.example_spec("three-levels")
        spec["domain"] = m
        plan = planner.make_plan(spec)
        options = planner.SimulateOptions(
            trials=FIG3_TRIALS, seed=SEED, mode=FIG3_MODE,
            extra={"n": str(N_USERS), "synthetic": synthetic, "sweep": ",".join(map(str, FIG3_EPSILONS))})
        return planner.simulate(plan, options).data


    t0 = time.perf_counter()
    fig3 = {"Power-law (m = 100)": fig3_sweep("powerlaw", 100),
            "Uniform (m = 1,000)": fig3_sweep("uniform", 1000)}
    print(f"Fig. 3 simulations: {time.perf_counter() - t0:.1f} s ({FIG3_MODE} mode, {FIG3_TRIALS} trials)")

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, (label, data) in zip(axes, fig3.items()):
        xs = [p["epsilon_min"] for p in data["points"]]
        for name in MECHS:
            th = [p["mechanisms"][name]["theoretical_mse"] for p in data["points"]]
            emp = np.array([p["mechanisms"][name]["empirical_mse"] for p in data["points"]])
            se = np.array([p["mechanisms"][name]["empirical_mse_se"] for p in data["points"]])
            ax.plot(xs, th, "-", color=STYLE[name], lw=1.5, label=f"{name} theoretical")
            ax.errorbar(xs, emp, yerr=2 * se, fmt="o--", color=STYLE[name], mfc="none", ms=5, lw=0.8,
                        label=f"{name} empirical (±2 s.e.)")
        ax.set_yscale("log")
        ax.set_xlabel("privacy budget ε = min(E) (nats)")
        ax.set_ylabel("MSE = Σ (ĉ_i − c_i)² / n  (counts² per user)")
        ax.set_title(f"{label}, n = {data['n']:,}")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=7, ncol=2)
    fig.suptitle("ID-LDP Fig. 3 (ours): empirical (dashed, markers) vs theoretical (solid) MSE", fontsize=10)
    fig.tight_layout()
    plt.show()
    """),
    code("""
    rows, z_all, ratios = [], [], []
    for label, data in fig3.items():
        for p in data["points"]:
            r = p["mechanisms"]
            th = {name: r[name]["theoretical_mse"] for name in MECHS}
            for name in MECHS:
                z_all.append((r[name]["empirical_mse"] - th[name]) / r[name]["empirical_mse_se"])
                ratios.append(r[name]["empirical_mse"] / th[name])
            rows.append([label.split(" ")[0], p["epsilon_min"]] + [th[name] for name in MECHS]
                        + [f"{100 * (1 - th['IDUE opt0'] / th['OUE']):.1f} %"])
    show_table(["data", "ε"] + [f"{name} (theory)" for name in MECHS] + ["opt0 gain vs OUE"], rows,
               title="Fig. 3 theoretical MSE (counts² per user)", digits=5)
    ratios, z_all = np.array(ratios), np.array(z_all)
    print(f"empirical / theoretical over {ratios.size} points: mean {ratios.mean():.4f}, "
          f"range [{ratios.min():.3f}, {ratios.max():.3f}]; max |z| = {np.abs(z_all).max():.2f} standard errors")

    # Empirical must match eq. (8), and the paper's ordering must hold at every point.
    assert abs(ratios.mean() - 1) < (0.03 if FIG3_TRIALS >= 50 else 0.1)   # heavy-tailed power-law trials
    if FIG3_TRIALS >= 50:
        assert np.abs(z_all).max() < 6
    for data in fig3.values():
        for p in data["points"]:
            th = {k: v["theoretical_mse"] for k, v in p["mechanisms"].items()}
            assert th["IDUE opt0"] < th["OUE"] <= th["RAPPOR"] * (1 + 1e-9)
            assert th["IDUE opt0"] <= min(th["IDUE opt1"], th["IDUE opt2"]) * (1 + 1e-6)
    """),
    md("""
    **Paper vs ours.** Fig. 3 has no printed numbers; its claims are (i) empirical ≈ theoretical,
    (ii) IDUE beats RAPPOR and OUE, (iii) opt1/opt2 are slightly worse than opt0 but near-optimal.
    (i) and (ii) hold: the empirical/theoretical ratios are printed above (mean within 1 %, each point within
    a few standard errors), and opt0's MSE is 35-38 % below OUE's at every ε on both data sets. (iii) needs a
    nuance the figure hides: opt2 (a = ½) becomes *exactly* OUE at ε ≥ 3 (its column equals OUE's), and
    opt1 (a + b = 1) is worse than OUE at ε = 4, the RAPPOR-vs-OUE gap showing through (section 4).

    The paper's caption says empirical = dashed and theoretical = solid while its text says the reverse; we
    follow the caption. The empirical MSE of the power-law data has a heavy-tailed trial distribution
    (item 1 holds 75 % of the users), so its standard errors are larger than for uniform data.
    """),
    md("""
    ## 3 · Fig. 6: share of the most sensitive items vs MSE

    Two levels, ε1 = 1 (the sensitive items) and ε2 = 2 nats, on the power-law data (m = 100,
    n = 100,000). The share of items at ε1 goes from 1 % (one item) to 100 % (plain LDP at ε1, where IDUE
    opt0 can only match the best unary encoding). RAPPOR and OUE run at ε1 throughout. We report the MSE
    and the RE of the top-50 items (the paper's Fig. 6 uses k = 50). Items are assigned to levels by a
    seeded permutation, so the sensitive sets are nested as the share grows.
    """),
    code("""
    def fig6_spec(share):
        if share >= 1:
            levels = [{"name": "sensitive", "epsilon": FIG6_EPSILON1, "share": 1.0}]
        else:
            levels = [{"name": "sensitive", "epsilon": FIG6_EPSILON1, "share": share},
                      {"name": "other", "epsilon": FIG6_EPSILON2, "share": 1.0 - share}]
        return {"mechanism": "idue", "model": "opt0", "domain": 100, "assignment_seed": 0, "levels": levels}


    t0 = time.perf_counter()
    fig6 = []
    for share in FIG6_SHARES:
        plan = planner.make_plan(fig6_spec(share))
        sim = planner.simulate(plan, planner.SimulateOptions(
            trials=FIG6_TRIALS, seed=SEED, mode="aggregate",
            extra={"n": str(N_USERS), "synthetic": "powerlaw", "top_k": str(FIG6_TOP_K)}))
        res = sim.data["points"][0]["mechanisms"]
        fig6.append({"share": share, "worst_case": plan["worst_case_mse_per_user"],
                     "worst_case_oue": plan["baselines"]["oue"]["worst_case_mse_per_user"], **res})
    print(f"Fig. 6 simulations: {time.perf_counter() - t0:.1f} s")

    names6 = ["RAPPOR", "OUE", "IDUE opt0"]
    x = 100 * np.array(FIG6_SHARES)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for name in names6:
        axes[0].plot(x, [r[name]["theoretical_mse"] for r in fig6], "-", color=STYLE[name], label=f"{name} theoretical")
        axes[0].plot(x, [r[name]["empirical_mse"] for r in fig6], "o--", mfc="none", color=STYLE[name],
                     label=f"{name} empirical")
        axes[1].plot(x, [r[name][f"re_top{FIG6_TOP_K}"] for r in fig6], "o-", color=STYLE[name], label=name)
    axes[0].set_ylabel("MSE = Σ (ĉ_i − c_i)² / n  (counts² per user)")
    axes[1].set_ylabel(f"RE(top-{FIG6_TOP_K}) = mean |ĉ_i − c_i| / c_i  (fraction)")
    for ax in axes:
        ax.set_xlabel(f"items with the smaller budget ε1 = {FIG6_EPSILON1:g} (% of m = 100; others ε2 = {FIG6_EPSILON2:g})")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"ID-LDP Fig. 6 (ours): power-law data, n = {N_USERS:,}, {FIG6_TRIALS} trials", fontsize=10)
    fig.tight_layout()
    plt.show()

    show_table(["share at ε1", "IDUE opt0 MSE (theory)", "OUE MSE (theory)", "IDUE gain vs OUE",
                "worst case eq. (9): IDUE", "OUE", f"RE(top-{FIG6_TOP_K}) IDUE", "OUE"],
               [[f"{100 * r['share']:g} %", r["IDUE opt0"]["theoretical_mse"], r["OUE"]["theoretical_mse"],
                 f"{100 * (1 - r['IDUE opt0']['theoretical_mse'] / r['OUE']['theoretical_mse']):.1f} %",
                 r["worst_case"], r["worst_case_oue"],
                 r["IDUE opt0"][f"re_top{FIG6_TOP_K}"], r["OUE"][f"re_top{FIG6_TOP_K}"]] for r in fig6],
               title="Fig. 6 numbers (MSE in counts² per user)")
    gains = {r["share"]: 1 - r["IDUE opt0"]["theoretical_mse"] / r["OUE"]["theoretical_mse"] for r in fig6}
    assert gains[min(gains)] > 0.5                    # large benefit when few items are sensitive
    assert all(g < 0.02 for s, g in gains.items() if s >= 0.4)  # "above ~40 % IDUE ≈ OUE"
    assert all(r["worst_case"] <= r["worst_case_oue"] * (1 + 1e-9) for r in fig6)  # opt0 never worse (eq. 9)
    """),
    md("""
    **Paper vs ours.** The paper states that with few sensitive items IDUE gains most, and that above
    about 40 % sensitive items IDUE has almost the same MSE and RE as OUE. With ε1 = 1, ε2 = 2 we find the
    same shape: a 55 % lower MSE with 1 % sensitive items, 27 % at 10 %, 1.4 % at 40 % and exactly OUE's
    probabilities from 60 % on (at 100 % all items share one budget and eq. 9 is minimised by OUE). The RE
    of the top-50 items is far above 1 for every mechanism because the top-50 of a power law on 100 items
    includes items held by a few dozen users, below the noise level; it follows the MSE's ordering. The
    paper's ε1, ε2 for Fig. 6 are not stated, so its absolute values are not comparable; the shape is.
    RAPPOR and OUE do not depend on the share, and with the fixed seed their empirical points repeat the
    same 50 trials, hence the flat dashed lines (a few percent off theory: power-law trials are heavy-tailed).
    """),
    md("""
    ## 4 · opt0 vs opt1 vs opt2: how far from optimal are the reduced models?

    The paper introduces opt1 (RAPPOR structure a + b = 1, eq. 11) and opt2 (OUE structure a = ½, eq. 12)
    because it considers eq. (9) non-convex. ldpplan solves opt0 exactly through a convex reduction (see
    `solvers.idue`), and `solvers.idue.solve_opt0_conic` solves the same problem as an exponential-cone
    program with CVXPY as an independent check. Below, every model's solution is scored on the same
    objective, the worst-case MSE of eq. (9), for the default three-level setting (m = 100).
    """),
    code("""
    E_SHAPE, SIZES = np.array([1.0, 1.2, 2.0]), np.array([5, 5, 90])
    gap_rows, excess = [], {"IDUE opt1": [], "IDUE opt2": [], "OUE": [], "RAPPOR": []}
    for e in GAP_EPSILONS:
        wc = {model: idue_solvers.solve_idue(e * E_SHAPE, SIZES, model=model).extra["worst_case_mse"]
              for model in ("opt0", "opt1", "opt2")}
        for name, res in (("OUE", idue_solvers.oue(e)), ("RAPPOR", idue_solvers.rappor(e))):
            wc[name] = idue_solvers.worst_case_mse([res.a], [res.b], [SIZES.sum()])
        for name in excess:
            excess[name].append(100 * (wc[name.replace("IDUE ", "")] / wc["opt0"] - 1))
        gap_rows.append([e, wc["opt0"], wc["opt1"], wc["opt2"], wc["OUE"], wc["RAPPOR"],
                         f"{excess['IDUE opt1'][-1]:.2f} %", f"{excess['IDUE opt2'][-1]:.2f} %"])
    show_table(["ε", "opt0", "opt1", "opt2", "OUE", "RAPPOR", "opt1 excess", "opt2 excess"], gap_rows,
               title="Worst-case MSE, eq. (9), per user (counts²), budgets {ε, 1.2ε, 2ε} on {5, 5, 90} items", digits=5)

    fig, ax = plt.subplots(figsize=(7, 4))
    for name, ys in excess.items():
        ax.plot(GAP_EPSILONS, ys, "o-", color=STYLE[name], label=name)
    ax.set_xscale("log")
    ax.set_xticks(GAP_EPSILONS[::2] + [GAP_EPSILONS[-1]])
    ax.xaxis.set_major_formatter(mticker.FormatStrFormatter("%g"))
    ax.xaxis.set_minor_formatter(mticker.NullFormatter())
    ax.set_xlabel("privacy budget ε = min(E) (nats)")
    ax.set_ylabel("worst-case MSE above opt0 (%)")
    ax.set_title("Excess of eq. (9) over the opt0 optimum", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    plt.show()

    # Independent cross-check of opt0 with the exponential-cone program (CVXPY / Clarabel).
    conic_rows = []
    for e in (0.5, 1.0, 2.0, 4.0):
        ours = idue_solvers.solve_idue(e * E_SHAPE, SIZES, model="opt0")
        conic = idue_solvers.solve_opt0_conic(e * E_SHAPE, SIZES)
        rel = (conic.objective - ours.objective) / ours.objective
        conic_rows.append([e, ours.objective, ours.certificate.gap, conic.objective, f"{rel:+.1e}"])
        assert abs(rel) < 1e-5
    show_table(["ε", "opt0 (ldpplan)", "certified gap", "opt0 (CVXPY conic)", "relative difference"], conic_rows,
               title="opt0 cross-check", digits=10)
    assert all(min(excess["IDUE opt1"][k], excess["IDUE opt2"][k]) >= -1e-6 for k in range(len(GAP_EPSILONS)))
    assert all(excess["IDUE opt1"][k] < 5 for k, e in enumerate(GAP_EPSILONS) if e <= 1)
    assert all(abs(excess["IDUE opt2"][k] - excess["OUE"][k]) < 1e-4 for k, e in enumerate(GAP_EPSILONS) if e >= 3)
    """),
    md("""
    **Paper vs ours.** The paper calls opt1 and opt2 near-optimal. On eq. (9) they are never better than
    opt0 (asserted), and neither is uniformly close: opt1 is within 5 % of opt0 for ε ≤ 1 but 60-110 % above
    for ε ≥ 4 (it inherits RAPPOR's a + b = 1), while opt2 is 9-47 % above for ε ≤ 3 and, from ε = 3 on, its
    constraints leave no room to favour the less sensitive levels: it returns OUE's probabilities at min(E)
    (excess = OUE's, asserted). A planner should therefore default to opt0, which `ldpplan` does; its optimum
    agrees with the conic solver to better than 10⁻⁵ (relative; the last digits differ by the solvers'
    tolerances and our 10⁻¹⁰ safety margin on the budgets), and its certificate gap is below 10⁻⁹.
    """),
    md("""
    ## 5 · Solver time vs the number of privacy levels t

    The paper notes that the cost depends only on the number of levels t (2t variables, t² constraints in
    eq. 9), not on the domain size. ldpplan's reductions evaluate the objective in O(t) per point, so even
    t = 1,000 levels solve in under a second (some instances need more cutting-plane iterations than
    others, hence the bumps). Random budgets in [1, 3] nats and level sizes in
    [1, 20]; medians over repeats. Timings depend on the machine and are the one output of this notebook
    that does not reproduce to the digit.
    """),
    code("""
    rng = np.random.default_rng(SEED)
    idue_solvers.solve_idue([1.0, 2.0], [1, 4])            # warm-up (first-call imports)
    timing = {"opt0": [], "opt1": [], "opt2": [], "opt0 conic (CVXPY)": []}
    for t in TIME_T:
        e = rng.uniform(1.0, 3.0, size=t)
        sizes = rng.integers(1, 21, size=t)
        for model in ("opt0", "opt1", "opt2"):
            timing[model].append(np.median([idue_solvers.solve_idue(e, sizes, model=model).time_seconds
                                            for _ in range(TIME_REPEATS)]))
        if t <= CONIC_MAX_T:
            timing["opt0 conic (CVXPY)"].append(idue_solvers.solve_opt0_conic(e, sizes).time_seconds)

    fig, ax = plt.subplots(figsize=(7, 4))
    for k, (name, ys) in enumerate(timing.items()):
        ax.plot(TIME_T[:len(ys)], ys, "o-", label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("number of privacy levels t")
    ax.set_ylabel("solve time (seconds, median)")
    ax.set_title("IDUE solver time vs t (machine-dependent)", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    plt.show()
    show_table(["t"] + list(timing), [[t] + [f"{timing[k][i]:.4f}" if i < len(timing[k]) else "-" for k in timing]
                                      for i, t in enumerate(TIME_T)], title="Solve time (s)")
    """),
]

# ============================================================================ 02
NB02 = [
    md("""
    # 02 · IDUE-PS on item sets: RE(top-k) and precision vs padding length L and ε (ID-LDP Fig. 7-9 analogues)

    **Paper:** Gu, Li, Xiong, Cao, ICDE 2020 (ID-LDP), Sec. VI (IDUE-PS, Algorithms 1-2, Theorem 4) and
    Sec. VII-B. The paper evaluates item-set data on Clothing (n = 105,508 users, m = 5,850 items, ~2 items
    per user) and Kosarak (n = 990,002, m = 41,270, ~8 items per user). Those files are not available here;
    we use the **MovieLens** item sets (each user's set of rated movies, `../shared/data`), which are very
    different: only n = 671 users, m = 9,066 movies and about 149 movies per user (median 71, 90th
    percentile 323). The figures are therefore *analogues*: same questions, same metrics, other data.

    | section | analogue of | paper's finding | ours | why they differ |
    |---|---|---|---|---|
    | 1 | - | - | real n = 671 through `planner.simulate`: RE(top-20) ≈ 0.9 for every mechanism even at ε = 4 | 671 users are far too few for LDP frequency estimation over 9,066 items |
    | 2 | **Fig. 8-9** (RE vs L for several ε) | the best L grows with ε (small L: bias, large L: variance); L ≈ mean set size at large ε | the best L grows with ε, from 20-50 at ε = 1 to 200-400 at ε = 8 (tables) | population replicated to n = 100,650 (Clothing's scale); MovieLens sets are ~20-70× larger than Clothing's/Kosarak's, so L is larger and ε must be larger |
    | 3 | **Fig. 7** (precision and RE of top-k vs ε and vs k, L fixed) | IDUE-PS has the smallest RE; its precision can trail OUE-PS at small ε or k, and is the highest at larger ε and k | same pattern: at ε = 4 IDUE-PS's precision is below OUE-PS's for k = 10-20 and above for k = 50-100; smallest RE at ε ≤ 4 and smallest total MSE | same caveats; L = 100 instead of the paper's 2; below ε = 4 no mechanism finds the top-20 at this n |

    Privacy levels are the paper's default: budgets {ε, 1.2ε, 2ε} on {5 %, 5 %, 90 %} of the movies
    (seeded random assignment); RAPPOR-PS and OUE-PS run at ε = min(E); the dummy items of IDUE-PS use
    ε* = min(E) (Theorem 4). RE(k) = mean over the true top-k movies of |f̂ − f| / f (Sec. VII);
    precision@k = share of the estimated top-k that are in the true top-k. The public API has no function
    for these two metrics on item sets, so they are computed here with numpy from the runtime's estimates.

    Simulation is in *aggregate* mode: each user's item is drawn by the runtime's padding-and-sampling
    (`IDUEPS.sample_items`, Algorithm 1) and the aggregated bit counts are sampled exactly in distribution
    (`simulate_counts`), identical in law to perturbing every user's m + L bits.
    """),
    code("""
    # Parameters: the only cell to edit. FULL = True: Kosarak-scale n, the paper's ten repeats, finer grids.
    FULL = False
    SEED = 2020

    REPLICAS = 1500 if FULL else 150   # each MovieLens user appears REPLICAS times: n = 671 * REPLICAS
    TRIALS = 10 if FULL else 3         # paper: ten repeats
    EPSILONS = [0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0] if FULL else [1.0, 2.0, 4.0, 8.0]
    PADDING_LENGTHS = ([2, 5, 10, 20, 35, 50, 75, 100, 150, 200, 300, 400, 800] if FULL
                       else [5, 10, 20, 50, 100, 200, 400])
    TOP_K = 20                         # Fig. 8 uses k = 20
    FIG7_L = 100                       # Fig. 7 fixes L (= 2 for Clothing); section 2 motivates 100 here
    FIG7_KS = [10, 20, 50, 100]
    FIG7_EPSILON = 4.0                 # epsilon of the "vs k" panel
    REAL_TRIALS = 10
    """, "parameters"),
    code("""
    import os
    import time
    from pathlib import Path

    import matplotlib.pyplot as plt
    import numpy as np

    from ldpplan import mechanisms
    from ldpplan import planner
    import ldpplan.planner.data
    from ldpplan.solvers import idue as idue_solvers

    DATA_DIR = Path(os.environ.get("LDPPLAN_DATA_DIR", Path("..") / ".." / "shared" / "data"))
    RATINGS = DATA_DIR / "movielens_ratings.csv"
    assert RATINGS.is_file(), f"MovieLens ratings not found in {DATA_DIR} (set LDPPLAN_DATA_DIR)"
    """ + DISPLAY_HELPERS),
    md("""
    ## 1 · The data, and what 671 users can and cannot do
    """),
    code("""
    ratings = planner.data.load_movielens_ratings(RATINGS)
    movies, indptr, indices = planner.data.movielens_item_sets(ratings)
    n_real, m = indptr.size - 1, movies.size
    set_sizes = np.diff(indptr)
    f_true = np.bincount(indices, minlength=m) / n_real          # share of users who rated each movie
    true_order = np.argsort(-f_true, kind="stable")
    print(f"{ratings.n_ratings:,} ratings, n = {n_real} users, m = {m:,} movies")
    print(f"movies per user: mean {set_sizes.mean():.1f}, median {np.median(set_sizes):.0f}, "
          f"90th percentile {np.percentile(set_sizes, 90):.0f}, min {set_sizes.min()}, max {set_sizes.max()}")
    print(f"top-{TOP_K} movies are rated by {100 * f_true[true_order[TOP_K - 1]]:.1f} % to "
          f"{100 * f_true[true_order[0]]:.1f} % of the users")

    LEVEL_SHAPE = [("eps", 1.0, 0.05), ("1.2eps", 1.2, 0.05), ("2eps", 2.0, 0.90)]


    def itemset_spec(epsilon, L, model="opt0", levels=LEVEL_SHAPE):
        \"\"\"IDUE-PS spec over the MovieLens movie ids, budgets scaled so that min(E) = epsilon.\"\"\"
        return {"mechanism": "idue-ps", "model": model, "padding_length": int(L),
                "domain": [str(x) for x in movies], "assignment_seed": 0,
                "levels": [{"name": name, "epsilon": epsilon * scale, "share": share}
                           for name, scale, share in levels]}


    plan = planner.make_plan(itemset_spec(4.0, 10))
    assert plan["items"] == [str(x) for x in movies]    # estimates are indexed like `movies`
    t0 = time.perf_counter()
    real = planner.simulate(plan, planner.SimulateOptions(data=str(RATINGS), trials=REAL_TRIALS, seed=SEED,
                                                          mode="aggregate", extra={"top_k": str(TOP_K)}))
    print(f"simulate on the real users: {time.perf_counter() - t0:.1f} s")
    show_planner_table(real.tables[0])
    real_re = {row[0]: row[-1] for row in real.tables[0].rows}
    assert all(0.5 < v < 1.5 for v in real_re.values())          # no usable signal at n = 671
    """),
    md("""
    Even at ε = 4 (budgets 4 / 4.8 / 8 nats) the RE of the top-20 movies is about 0.9 for every mechanism:
    with L = 10 the estimates are dominated by the truncation bias (a user with 149 movies reports each
    one with probability 1/149, so L·f^s is about a tenth of f) and, at larger L, by the perturbation noise
    of only 671 reports. IDUE-PS still has the smallest MSE, as in the paper. To study the paper's questions
    at the paper's scale, the next sections **replicate the population**: each user appears 150 times
    (n = 100,650, close to Clothing's 105,508; `FULL = True`: 1,500 times, n = 1,006,500, Kosarak's scale);
    frequencies and set sizes are unchanged.
    """),
    md("""
    ## 2 · Fig. 8-9 analogue: RE(top-20) vs the padding length L for several ε

    A small L truncates the large MovieLens sets (bias: the estimate of a movie's frequency tends to
    L·f^s ≤ f, where f^s is the probability that a user's sampled item is that movie), a large L dilutes each
    report (variance grows as L²). The runtime gives f^s and the sampling spread (`sampling_probabilities`)
    and the perturbation variance (`variance`), so we also plot the theoretical bias² and variance of the
    top-20 movies, and the "noise-free" RE and precision an infinite population would reach (ranking by
    L·f^s instead of f).
    """),
    code("""
    def sampled_histogram(mech, rng):
        \"\"\"Histogram over the m + L report positions of the n = n_real * REPLICAS users' sampled items.
        Loops over replicas (671 users each, vectorised inside the runtime), not over users.\"\"\"
        hist = np.zeros(mech.width, dtype=np.int64)
        for _ in range(REPLICAS):
            hist += np.bincount(mech.sample_items((indptr, indices), rng), minlength=mech.width)
        return hist


    def re_topk(est, k):
        top = true_order[:k]
        return float(np.mean(np.abs(est[top] - f_true[top]) / f_true[top]))


    def precision_at_k(est, k):
        return np.intersect1d(np.argsort(-est, kind="stable")[:k], true_order[:k]).size / k


    def runtimes(epsilon, L):
        \"\"\"IDUE-PS (opt0) and the LDP baselines, each a verified plan loaded in the runtime.

        One-level plans reproduce the baselines exactly: opt1 on one level is RAPPOR, opt2 is OUE.\"\"\"
        one = [("all", 1.0, 1.0)]
        plans = {"IDUE-PS": planner.make_plan(itemset_spec(epsilon, L)),
                 "RAPPOR-PS": planner.make_plan(itemset_spec(epsilon, L, "opt1", one)),
                 "OUE-PS": planner.make_plan(itemset_spec(epsilon, L, "opt2", one))}
        for name, closed in (("RAPPOR-PS", idue_solvers.rappor(epsilon)), ("OUE-PS", idue_solvers.oue(epsilon))):
            lv = plans[name]["params"]["levels"][0]
            assert abs(lv["a"] - closed.a) < 1e-9 and abs(lv["b"] - closed.b) < 1e-9
        return {name: mechanisms.load(p) for name, p in plans.items()}


    MECHS = ["RAPPOR-PS", "OUE-PS", "IDUE-PS"]
    STYLE = {"RAPPOR-PS": "C0", "OUE-PS": "C1", "IDUE-PS": "C3"}
    n_sim = n_real * REPLICAS
    root = np.random.SeedSequence(SEED)
    t0 = time.perf_counter()
    results = {}      # (epsilon, L, mechanism) -> list over trials of estimated frequencies, shape (m,)
    theory = {}       # (epsilon, L) -> IDUE-PS bias^2 and variance, mean over the true top-k
    noise_free = {}   # L -> L * f^s (what an infinite population estimates)
    top = true_order[:TOP_K]
    for j, L in enumerate(PADDING_LENGTHS):
        mechs_by_eps = {e: runtimes(e, L) for e in EPSILONS}
        sampler = mechs_by_eps[EPSILONS[0]]["IDUE-PS"]   # Algorithm 1 does not depend on epsilon
        expected, spread = sampler.sampling_probabilities((indptr, indices))
        noise_free[L] = L * expected
        for seq in root.spawn(len(PADDING_LENGTHS))[j].spawn(TRIALS):
            rng = np.random.default_rng(seq)
            hist = sampled_histogram(sampler, rng)    # common sampled items for every mechanism and ε
            for e, mechs in mechs_by_eps.items():
                for name, mech in mechs.items():
                    est = mech.estimate(mech.simulate_counts(hist, n_sim, rng))
                    results.setdefault((e, L, name), []).append(est)
        for e, mechs in mechs_by_eps.items():
            var = mechs["IDUE-PS"].variance(expected, n_sim) + L * L * spread / n_sim
            theory[(e, L)] = {"bias2": float(np.mean((L * expected[top] - f_true[top]) ** 2)),
                              "var": float(np.mean(var[top]))}
    print(f"{len(results) * TRIALS:,} simulated collections of n = {n_sim:,} users in {time.perf_counter() - t0:.1f} s")


    def mean_metric(metric, e, L, name, k):
        return float(np.mean([metric(est, k) for est in results[(e, L, name)]]))
    """),
    code("""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4))
    best_L, best_L_theory, rows = {}, {}, []
    for i, e in enumerate(EPSILONS):
        re_idue = [mean_metric(re_topk, e, L, "IDUE-PS", TOP_K) for L in PADDING_LENGTHS]
        re_oue = [mean_metric(re_topk, e, L, "OUE-PS", TOP_K) for L in PADDING_LENGTHS]
        best_L[e] = PADDING_LENGTHS[int(np.argmin(re_idue))]
        total = [theory[(e, L)]["bias2"] + theory[(e, L)]["var"] for L in PADDING_LENGTHS]
        best_L_theory[e] = PADDING_LENGTHS[int(np.argmin(total))]
        rows.append([e] + re_idue + [best_L[e], best_L_theory[e]])
        axes[0].plot(PADDING_LENGTHS, re_idue, "o-", color=f"C{i}", label=f"IDUE-PS, ε = {e:g}")
        axes[0].plot(PADDING_LENGTHS, re_oue, "x:", color=f"C{i}", alpha=0.7, label=f"OUE-PS, ε = {e:g}")
        axes[1].plot(PADDING_LENGTHS, [theory[(e, L)]["var"] for L in PADDING_LENGTHS], "o-", color=f"C{i}",
                     label=f"variance, ε = {e:g}")
    axes[0].plot(PADDING_LENGTHS, [re_topk(noise_free[L], TOP_K) for L in PADDING_LENGTHS], "k--", lw=2,
                 label="noise-free (n → ∞)")
    axes[1].plot(PADDING_LENGTHS, [theory[(EPSILONS[0], L)]["bias2"] for L in PADDING_LENGTHS], "k--",
                 lw=2, label="bias² (any ε)")
    axes[0].set_ylabel(f"RE(top-{TOP_K})  (fraction, mean of |f̂ − f| / f)")
    axes[1].set_ylabel(f"IDUE-PS, mean over the top-{TOP_K} movies (frequency²)")
    axes[1].set_title("theory: truncation bias² vs variance (sampling + perturbation)", fontsize=9)
    for ax in axes:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("padding length L (items)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
    fig.suptitle(f"ID-LDP Fig. 8-9 analogue: MovieLens item sets, n = {n_sim:,}, {TRIALS} trials", fontsize=10)
    fig.tight_layout()
    plt.show()

    show_table(["ε"] + [f"L = {L}" for L in PADDING_LENGTHS] + ["best L (simulated)", "best L (theory)"], rows,
               title=f"IDUE-PS RE(top-{TOP_K}) vs L", digits=3)
    print(f"mean set size {set_sizes.mean():.0f}; 90th percentile (the rule of [7] for L) "
          f"{np.percentile(set_sizes, 90):.0f}")
    # The paper's finding (Fig. 8-9): the best L does not decrease as epsilon grows.
    assert all(best_L_theory[a] <= best_L_theory[b] for a, b in zip(EPSILONS, EPSILONS[1:]))
    assert best_L_theory[EPSILONS[0]] < best_L_theory[EPSILONS[-1]]
    """),
    md("""
    **Paper vs ours.** The paper finds (Fig. 8-9) that the best L depends on both the data and ε and grows
    with ε, because a larger ε lowers the variance and leaves the truncation bias dominant; it suggests L
    near the mean set size at large ε and smaller L at small ε. The MovieLens analogue shows the same
    mechanism: the bias² curve falls with L and does not depend on ε, the variance curves rise as L² and
    fall with ε, and the best L (theory, and the simulated RE up to trial noise) grows with ε (asserted).
    The values differ from the paper's (L = 2-4 for Clothing) because MovieLens sets are ~70× larger: L must
    reach the hundreds to remove the bias, and only large ε (≥ 4) can afford the variance that comes with it
    at n = 100,650. The rule of [7] (90th percentile of set sizes, 323) is only right at the largest ε.
    """),
    md("""
    ## 3 · Fig. 7 analogue: precision and RE of the top-k movies vs ε and vs k (L fixed)

    The paper fixes L = 2 for Clothing (about its mean set size). For MovieLens we fix L = 100, the best L
    of section 2 around ε = 4 (an IDUE-PS deployment would choose L from a plan like this one).
    """),
    code("""
    if FIG7_L not in PADDING_LENGTHS:
        raise ValueError(f"FIG7_L = {FIG7_L} must be one of PADDING_LENGTHS")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    rows_eps, rows_k = [], []
    for name in MECHS:
        prec = [mean_metric(precision_at_k, e, FIG7_L, name, TOP_K) for e in EPSILONS]
        rel = [mean_metric(re_topk, e, FIG7_L, name, TOP_K) for e in EPSILONS]
        axes[0].plot(EPSILONS, prec, "o-", color=STYLE[name], label=f"{name} precision@{TOP_K}")
        axes[0].plot(EPSILONS, rel, "s--", color=STYLE[name], mfc="none", label=f"{name} RE(top-{TOP_K})")
        rows_eps += [[name, e, p, r] for e, p, r in zip(EPSILONS, prec, rel)]
        prec_k = [mean_metric(precision_at_k, FIG7_EPSILON, FIG7_L, name, k) for k in FIG7_KS]
        rel_k = [mean_metric(re_topk, FIG7_EPSILON, FIG7_L, name, k) for k in FIG7_KS]
        axes[1].plot(FIG7_KS, prec_k, "o-", color=STYLE[name], label=f"{name} precision@k")
        axes[1].plot(FIG7_KS, rel_k, "s--", color=STYLE[name], mfc="none", label=f"{name} RE(top-k)")
        rows_k += [[name, k, p, r] for k, p, r in zip(FIG7_KS, prec_k, rel_k)]
    nf = noise_free[FIG7_L]
    axes[0].axhline(precision_at_k(nf, TOP_K), color="k", ls=":", lw=1, label="noise-free precision")
    axes[1].plot(FIG7_KS, [precision_at_k(nf, k) for k in FIG7_KS], "k:", lw=1, label="noise-free precision")
    axes[0].set_xlabel("privacy budget ε = min(E) (nats)")
    axes[0].set_title(f"k = {TOP_K}, L = {FIG7_L}", fontsize=9)
    axes[1].set_xlabel("k (number of top movies)")
    axes[1].set_title(f"ε = {FIG7_EPSILON:g}, L = {FIG7_L}", fontsize=9)
    for ax in axes:
        ax.set_ylabel("precision@k and RE(top-k)  (fractions)")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
    fig.suptitle(f"ID-LDP Fig. 7 analogue: MovieLens item sets, n = {n_sim:,}, {TRIALS} trials", fontsize=10)
    fig.tight_layout()
    plt.show()
    show_table(["mechanism", "ε", f"precision@{TOP_K}", f"RE(top-{TOP_K})"], rows_eps, digits=3,
               title=f"vs ε (L = {FIG7_L}); noise-free precision@{TOP_K} = {precision_at_k(nf, TOP_K):.2f}")
    show_table(["mechanism", "k", "precision@k", "RE(top-k)"], rows_k, digits=3,
               title=f"vs k (ε = {FIG7_EPSILON:g}, L = {FIG7_L})")

    # Total squared error over all movies (the quantity opt0 minimises, up to the common bias term):
    # IDUE-PS must not be worse than the LDP baselines at any (epsilon, L).
    def total_mse(e, L, name):
        return float(np.mean([n_sim * np.sum((est - f_true) ** 2) for est in results[(e, L, name)]]))
    mse_rows = [[e, L] + [total_mse(e, L, name) for name in MECHS] for e in EPSILONS for L in (10, FIG7_L)
                if L in PADDING_LENGTHS]
    show_table(["ε", "L"] + [f"{name} MSE" for name in MECHS], mse_rows, digits=4,
               title="Total MSE over all 9,066 movies (counts² per user, Sec. VII)")
    # Where the perturbation variance matters, IDUE-PS is strictly better; where the truncation bias (common
    # to all mechanisms) dominates, the three tie. IDUE-PS is never worse by more than 2 %.
    ratio = {(e, L): total_mse(e, L, "IDUE-PS") / min(total_mse(e, L, "OUE-PS"), total_mse(e, L, "RAPPOR-PS"))
             for e in EPSILONS for L in PADDING_LENGTHS}
    ties = [(e, L, round(r, 4)) for (e, L), r in ratio.items() if r >= 1]
    print(f"(ε, L, IDUE-PS / best baseline) where IDUE-PS's total MSE is not the smallest: {ties or 'none'}")
    assert max(ratio.values()) < 1.02
    assert ratio[(EPSILONS[0], FIG7_L)] < 0.9
    """),
    md("""
    **Paper vs ours.** The paper reports (Fig. 7, Clothing, L = 2) that IDUE-PS has the smallest RE, while
    its top-k precision can fall below OUE-PS at small ε or small k because the 5 % most sensitive items
    get noisier estimates (Sec. V-E). On the MovieLens analogue: (i) IDUE-PS has the smallest *total* MSE over
    all movies wherever the perturbation variance matters (e.g. 36 % below OUE-PS at ε = 1, L = 100), which
    is what opt0 optimises; where the truncation bias common to all mechanisms dominates (small L, large ε)
    the three tie within 2 % (asserted; the printed list names those (ε, L)); (ii) its RE(top-20) is the smallest for ε ≤ 4 and ties at ε = 8, where the bias of L = 100
    dominates every mechanism's error; (iii) the precision pattern is the paper's: at ε = 4 IDUE-PS trails
    OUE-PS for k = 10-20 and leads for k = 50-100, because a few of the most popular movies sit in the
    sensitive 5 % levels and get noisier estimates; (iv) below ε = 4 no mechanism identifies the top-20 at
    this n (precision near 0), and at ε = 8 IDUE-PS and OUE-PS approach the noise-free precision (0.90),
    the limit set by truncation at L = 100. With 3 trials the precision values carry a standard error of
    about 0.05; absolute values are not comparable with the paper's (different data, set sizes, L and a
    replicated population).
    """),
]

# ============================================================================ 06
NB06 = [
    md("""
    # 06 · Tuning with the Python API: spec → solve → inspect → sweep → export → verify → run

    **Reproduces:** no paper figure; this is the workflow a privacy engineer follows with ldpplan's Python
    API, on the ID-LDP mechanism (Gu et al., ICDE 2020, IDUE eq. 6-12). Every number below is computed
    by the public API (`planner`, `solvers.idue`, `mechanisms`); the CLI commands that do the same are
    given alongside (`ldpplan plan`, `ldpplan verify`, `ldpplan simulate`).

    Scenario: a clinic survey asks each patient for their main condition among 40 conditions. Two are
    highly sensitive (HIV, hepatitis C: ε = 0.7 nats), six are moderately sensitive (ε = 1.0), the rest
    are common conditions (ε = 1.6). We want the smallest error for the estimated frequencies with
    n = 20,000 patients, and a plan file the app can ship.
    """),
    code("""
    # Parameters: the only cell to edit. FULL = True uses more users and finer sweeps.
    FULL = False
    SEED = 7

    N_PATIENTS = 200_000 if FULL else 20_000     # survey size
    SWEEP_POINTS = 17 if FULL else 9              # budget scales from 1/4 to 4 times the policy
    """, "parameters"),
    code("""
    import json
    import tempfile
    from pathlib import Path

    import matplotlib.pyplot as plt
    import matplotlib.ticker as mticker
    import numpy as np

    from ldpplan import mechanisms
    from ldpplan import planner
    from ldpplan.solvers import idue as idue_solvers

    SWEEP_SCALES = np.geomspace(0.25, 4.0, SWEEP_POINTS)
    """ + DISPLAY_HELPERS),
    md("""
    ## 1 · Write the spec in Python

    The spec is a plain dict with the same keys as a TOML/JSON spec file (see `planner/_idue_spec.py`'s
    docstring): the mechanism, the optimisation model (opt0 = eq. 9, the worst-case MSE; the default), the
    notion (MinID-LDP: a pair of inputs is protected at the smaller of their budgets), and the levels with
    their items. Invalid specs raise `planner.SpecError` naming the field, rule and value.
    """),
    code("""
    common = [f"condition-{k:02d}" for k in range(1, 33)]
    spec = {
        "mechanism": "idue",
        "model": "opt0",
        "notion": "minid",
        "description": "clinic survey: main condition, three privacy levels",
        "levels": [
            {"name": "highly-sensitive", "epsilon": 0.7, "items": ["hiv", "hepatitis-c"]},
            {"name": "sensitive", "epsilon": 1.0,
             "items": ["depression", "anxiety", "diabetes", "asthma", "epilepsy", "psoriasis"]},
            {"name": "common", "epsilon": 1.6, "items": common},
        ],
    }

    try:   # what a mistake looks like: one line naming field, rule and value
        planner.make_plan({**spec, "levels": [{**spec["levels"][0], "epsilon": -1}] + spec["levels"][1:]})
    except planner.SpecError as exc:
        print("SpecError:", exc)
    """),
    md("""
    ## 2 · Solve and inspect the result object

    `solvers.idue.solve_idue` is the math layer: it returns a frozen `SolveResult` (status, objective,
    parameters by the paper's names, a certificate of optimality, the solver name and time).
    `planner.make_plan` calls it, rounds a, b to the 2⁻⁴⁸ grid on the safe side, verifies constraint (6)
    independently and returns the plan dict.
    """),
    code("""
    epsilons = [lv["epsilon"] for lv in spec["levels"]]
    sizes = [len(lv["items"]) for lv in spec["levels"]]
    result = idue_solvers.solve_idue(epsilons, sizes, model="opt0", notion="minid")
    print("status      :", result.status)
    print("solver      :", result.solver)
    print("objective   :", f"{result.objective:.6f}  (eq. 9, counts² per user = worst-case total MSE / n)")
    print("a           :", np.round(result.a, 6))
    print("b           :", np.round(result.b, 6))
    print("certificate :", result.certificate.kind, f"| lower bound {result.certificate.lower_bound:.9f}",
          f"| gap {result.certificate.gap:.1e}")
    print("min slack   :", f"{result.extra['min_log_ratio_slack']:.2e} nats (constraint 6, >= 0)")
    try:
        result.parameters["a"][0] = 0.9
    except ValueError as exc:
        print("read-only   :", exc)

    plan = planner.make_plan(spec)
    for table in planner.summarize(plan):      # what `ldpplan plan clinic.toml` prints
        show_planner_table(table)
    """),
    md("""
    What to read in these tables: each level's flip probabilities (1 − a: a held condition is hidden;
    b: a non-held condition is reported), the variance coefficients of eq. (8), and the worst-case total
    MSE compared with RAPPOR and OUE at ε = min(E) = 0.7, the only way plain LDP can honour the strictest
    level. The gain comes from the 32 common conditions, whose probabilities IDUE is free to sharpen.
    In frequency terms, the standard error of one item's estimated frequency is
    `sqrt(coef_n + f · coef_c) / sqrt(n)`:
    """),
    code("""
    for lv in plan["params"]["levels"]:
        a, b = lv["a"], lv["b"]
        se = np.sqrt(b * (1 - b) / (a - b) ** 2) / np.sqrt(N_PATIENTS)
        print(f"{lv['name']:>17}: ε = {lv['epsilon']:.2f}, std. error of a rare item's frequency with "
              f"n = {N_PATIENTS:,}: {100 * se:.2f} percentage points")
    """),
    md("""
    ## 3 · Sweep ε and the models, plot the trade-off

    Scale all three budgets together (the ratio between levels is the policy; the scale is the knob) and
    compare the models: opt0 (eq. 9), opt1 (RAPPOR structure, eq. 11), opt2 (OUE structure, eq. 12), the
    AvgID-LDP notion (Sec. VIII: a pair is protected at the average of the budgets, weaker than MinID), and
    the LDP baselines at min(E). The y-axis is the worst-case root-MSE of one frequency, averaged over
    items, for n patients: `sqrt(eq. 9 / (m · n))`.
    """),
    code("""
    m = len(plan["items"])
    variants = {"IDUE opt0 (MinID)": ("opt0", "minid"), "IDUE opt1 (MinID)": ("opt1", "minid"),
                "IDUE opt2 (MinID)": ("opt2", "minid"), "IDUE opt0 (AvgID)": ("opt0", "avgid")}
    curves = {name: [] for name in list(variants) + ["OUE at min(E)", "RAPPOR at min(E)"]}
    for s in SWEEP_SCALES:
        e = s * np.array(epsilons)
        for name, (model, notion) in variants.items():
            curves[name].append(idue_solvers.solve_idue(e, sizes, model=model, notion=notion).extra["worst_case_mse"])
        for name, res in (("OUE at min(E)", idue_solvers.oue(e.min())), ("RAPPOR at min(E)", idue_solvers.rappor(e.min()))):
            curves[name].append(idue_solvers.worst_case_mse([res.a], [res.b], [m]))

    x = SWEEP_SCALES * min(epsilons)
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for name, ys in curves.items():
        rmse = 100 * np.sqrt(np.array(ys) / (m * N_PATIENTS))
        ax.plot(x, rmse, "o-" if "IDUE" in name else "s--", ms=4, label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):          # plain numbers on the log axes
        axis.set_major_formatter(mticker.FormatStrFormatter("%g"))
        axis.set_minor_formatter(mticker.NullFormatter())
    ax.set_xticks([0.2, 0.3, 0.5, 0.7, 1, 1.5, 2, 3])
    ax.set_xlabel("strictest budget min(E) (nats); the other levels scale with it")
    ax.set_ylabel(f"worst-case RMSE per item (percentage points, n = {N_PATIENTS:,})")
    ax.axvline(min(epsilons), color="grey", lw=0.8, ls=":")
    ax.set_title("Utility vs privacy for the clinic policy {0.7, 1.0, 1.6} × scale", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    plt.show()

    k = int(np.argmin(np.abs(SWEEP_SCALES - 1.0)))
    base = curves["IDUE opt0 (MinID)"][k]
    show_table(["variant", "worst-case MSE / n (eq. 9)", "vs opt0 MinID"],
               [[name, ys[k], f"{ys[k] / base:.3f}"] for name, ys in curves.items()],
               title=f"At the policy's own budgets (scale {SWEEP_SCALES[k]:.2f})", digits=5)
    # Sanity of the sweep: opt0 is the optimum of eq. (9) among the MinID models and beats LDP.
    for i in range(len(SWEEP_SCALES)):
        o0 = curves["IDUE opt0 (MinID)"][i]
        assert o0 <= min(curves["IDUE opt1 (MinID)"][i], curves["IDUE opt2 (MinID)"][i]) * (1 + 1e-6)
        assert o0 <= curves["OUE at min(E)"][i] * (1 + 1e-9)
    """),
    md("""
    Reading the plot: the curves are nearly parallel, so a budget change moves every variant alike; the
    vertical gap between IDUE opt0 and OUE at min(E) is what the per-level policy buys. AvgID-LDP gives a
    lower error only because it protects less (a pair at the average of its budgets): choose the notion
    from the threat model, not from the plot. A target such as "RMSE ≤ 1 percentage point" can be read
    off directly, or solved for with a one-dimensional search over the scale.

    ## 4 · Which budgets matter? Tighten for free

    Under MinID-LDP every pair of inputs is protected at the *smaller* of their budgets, so a level's budget
    can exceed what the optimum can use (the gain over LDP is bounded by 2·min(E), ID-LDP Lemma 1). The
    optimal eq. (9) is non-increasing in each budget, so a bisection finds, per level, the smallest budget
    that keeps the optimum unchanged (within 10⁻⁶ relative): a stronger guarantee at no utility cost.
    """),
    code("""
    def optimum_with(level, value):
        e = list(epsilons)
        e[level] = value
        return idue_solvers.solve_idue(e, sizes).objective


    current = result.objective
    fig, ax = plt.subplots(figsize=(7, 4))
    rows, tightened = [], list(epsilons)
    for i, lv in enumerate(spec["levels"]):
        grid = np.linspace(0.5, 2.0, 16)
        ax.plot(grid, [optimum_with(i, g) for g in grid], "o-", ms=3, label=f"vary {lv['name']} only")
        lo, hi = 0.05, lv["epsilon"]            # invariant: optimum_with(i, hi) stays at the current optimum
        if optimum_with(i, lo) <= current * (1 + 1e-6):
            hi = lo
        while hi - lo > 1e-3:
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if optimum_with(i, mid) <= current * (1 + 1e-6) else (mid, hi)
        tightened[i] = round(hi + 5e-4, 3)      # round up: never below the bisection's feasible end
        rows.append([lv["name"], lv["epsilon"], tightened[i]])
    ax.axhline(current, color="grey", ls=":", lw=1, label="current optimum")
    ax.set_xlabel("budget of the varied level (nats), the other two fixed")
    ax.set_ylabel("optimal worst-case MSE, eq. (9) (counts² per user)")
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    plt.show()
    show_table(["level", "budget in the spec (nats)", "smallest budget with the same optimum"], rows,
               title="Budgets the optimum does not use")

    final_spec = {**spec, "levels": [{**lv, "epsilon": e} for lv, e in zip(spec["levels"], tightened)]}
    final_plan = planner.make_plan(final_spec)
    print(f"optimum with the spec's budgets {current:.6f}; with the tightened budgets "
          f"{final_plan['model_objective']:.6f}")
    assert final_plan["model_objective"] <= current * (1 + 2e-6)
    assert all(t <= e for t, e in zip(tightened, epsilons))
    plan = final_plan          # the plan we ship
    """),
    md("""
    The common conditions' budget 1.6 buys nothing over about 1.0 here: the app can promise a stronger
    guarantee for them with the same accuracy. Whether to do so is a policy decision; the planner only
    shows that the extra budget is unused. The rest of the notebook ships the tightened plan.

    ## 5 · Export the plan, verify it independently, tamper with it

    `planner.write_plan` re-verifies and writes atomically; `planner.verify_plan` recomputes constraint (6)
    from the numbers in the file (exact rational arithmetic on the worst pair), so a plan edited by hand
    cannot slip through. CLI equivalents: `ldpplan plan clinic.toml -o clinic-plan.json`, then
    `ldpplan verify clinic-plan.json` (exit 1 when the guarantee fails).
    """),
    code("""
    workdir = tempfile.TemporaryDirectory()
    plan_path = Path(workdir.name) / "clinic-plan.json"
    planner.write_plan(plan, plan_path)
    loaded = planner.read_plan(plan_path)
    check = planner.verify_plan(plan_path)
    print(f"wrote {plan_path.name} ({plan_path.stat().st_size:,} bytes); verify: holds = {check.holds}")
    print("  ", check.message)
    print("   plan keys:", sorted(loaded))
    print("   a of the first level on the 2^-48 grid:", loaded["params"]["levels"][0]["a"] * 2**48 % 1 == 0)

    tampered = json.loads(json.dumps(loaded))
    lv = tampered["params"]["levels"][2]           # make the common conditions more accurate by hand ...
    lv["a"] = min(lv["a"] + 0.02, 1 - 2**-48)
    bad = planner.verify_plan(tampered)
    print(f"tampered plan: holds = {bad.holds}")
    print("  ", bad.message)
    try:
        planner.write_plan(tampered, Path(workdir.name) / "tampered.json")
    except planner.PrivacyViolation as exc:
        print("   write_plan refused:", str(exc)[:100], "...")
    assert check.holds and not bad.holds
    assert not (Path(workdir.name) / "tampered.json").exists()
    """),
    md("""
    ## 6 · Load the plan in the runtime, perturb, estimate

    `mechanisms` is the numpy-only client/server runtime (it imports neither the planner nor cvxpy). Each
    client perturbs its item into an m-bit report (exact sampling of the grid probabilities); the server
    aggregates and applies the unbiased estimator of eq. (7). We check the estimates against the truth
    using the theoretical variance (eq. 8).
    """),
    code("""
    mech = mechanisms.load(plan_path)
    print(mech, "| items:", mech.items[:3], "...")
    rng = np.random.default_rng(SEED)

    # A synthetic population: common conditions are frequent, the sensitive ones rare.
    level_of_item = {x: lv["name"] for lv in plan["params"]["levels"] for x in lv["items"]}
    weights = np.array([0.5 if level_of_item[x] != "common" else 3.0 for x in mech.items])
    truth_items = rng.choice(m, size=N_PATIENTS, p=weights / weights.sum())

    reports = mech.perturb(truth_items, rng)              # client side: one packed report per patient
    print(f"reports: {reports.bits.shape[0]:,} x {reports.width} bits ({reports.bits.nbytes:,} bytes packed)")
    freq_hat = mech.estimate(reports)                     # server side: frequencies (counts = n * freq)
    f = np.bincount(truth_items, minlength=m) / N_PATIENTS
    sd = np.sqrt(mech.variance(f, N_PATIENTS))
    z = (freq_hat - f) / sd
    show_table(["item", "level", "true frequency", "estimate", "std. error (eq. 8)", "z"],
               [[mech.items[k], level_of_item[mech.items[k]], f[k], freq_hat[k], sd[k], f"{z[k]:+.2f}"]
                for k in [0, 1, 2, 3, 8, 9, 10]], digits=4,
               title=f"Estimated frequencies from {N_PATIENTS:,} perturbed reports")
    print(f"over all {m} items: mean z = {z.mean():+.3f}, sd of z = {z.std(ddof=1):.3f} (expected 0 and 1)")
    print(f"total squared error: {N_PATIENTS * np.sum((freq_hat - f) ** 2):.1f} counts² per user; "
          f"expected (eq. 8): {N_PATIENTS * np.sum(sd ** 2):.1f}; worst case (eq. 9): {plan['worst_case_mse_per_user']:.1f}")
    assert abs(z.mean()) < 4 / np.sqrt(m) and 0.6 < z.std(ddof=1) < 1.4
    workdir.cleanup()
    """),
    md("""
    ## Where to go from here

    * `planner.simulate(plan, planner.SimulateOptions(data=..., trials=..., mode="aggregate"))` compares the
      plan with RAPPOR and OUE on real or synthetic data (`ldpplan simulate`); notebook 01 uses it for Fig. 3.
    * For item sets, use `"mechanism": "idue-ps"` with a `padding_length` (notebook 02 shows how to pick L).
    * The same spec can be a TOML file read by `planner.load_spec` or passed to `ldpplan plan`.
    """),
]

NOTEBOOKS: dict[str, list] = {
    "01-idue-planning": NB01,
    "02-idue-itemsets": NB02,
    "06-tuning-with-the-api": NB06,
}


NOTEBOOKS.update(source_modules())  # 03-pckv, 04-pie, 05-uldp: one module each (notebooks/_nbNN_*.py)
NOTEBOOKS = dict(sorted(NOTEBOOKS.items()))


def build(name: str, execute: bool = True, timeout: int = 900) -> float:
    """Write notebook ``name`` and (optionally) execute it in place; returns seconds spent executing."""
    return _build_cells(name, NOTEBOOKS[name], execute=execute, timeout=timeout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="notebook numbers or stems (default: all)")
    parser.add_argument("--no-execute", action="store_true", help="write the cells without running them")
    args = parser.parse_args(argv)
    chosen = []
    for token in args.names or list(NOTEBOOKS):
        match = [n for n in NOTEBOOKS if n == token or n.split("-")[0] == token or n == Path(token).stem]
        if not match:
            parser.error(f"unknown notebook {token!r}; choose from {list(NOTEBOOKS)}")
        chosen += match
    for name in chosen:
        seconds = build(name, execute=not args.no_execute)
        print(f"{name}.ipynb written" + (f", executed in {seconds:.1f} s" if not args.no_execute else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())

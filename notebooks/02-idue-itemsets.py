# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 02 · IDUE-PS on item sets: RE(top-k) and precision vs padding length L and ε (ID-LDP Fig. 7-9 analogues)
#
# **Paper:** Gu, Li, Xiong, Cao, ICDE 2020 (ID-LDP), Sec. VI (IDUE-PS, Algorithms 1-2, Theorem 4) and
# Sec. VII-B.
#
# **Reproduces:** analogues of Fig. 7 and Fig. 8-9 on the MovieLens item sets.

# %% [markdown]
# ## What this shows
#
# The paper evaluates item-set data on Clothing (n = 105,508 users, m = 5,850 items, ~2 items per user)
# and Kosarak (n = 990,002, m = 41,270, ~8 items per user). Those files are not available here; we use
# the **MovieLens** item sets (each user's set of rated movies, from the data folder
# `ldpplan.planner.data.default_data_dir()`), which are very different (few users, large sets: section 1
# prints the numbers). The figures are therefore *analogues*: same questions, same metrics, other data.
#
# | section | analogue of | paper's finding | why ours differs |
# |---|---|---|---|
# | 1 | - | - | 671 users are far too few for LDP frequency estimation over thousands of items |
# | 2 | **Fig. 8-9** (RE vs L for several ε) | the best L grows with ε (small L: bias, large L: variance); L ≈ mean set size at large ε | population replicated to Clothing's scale; MovieLens sets are much larger than Clothing's/Kosarak's, so L is larger and ε must be larger |
# | 3 | **Fig. 7** (precision and RE of top-k vs ε and vs k, L fixed) | IDUE-PS has the smallest RE; its precision can trail OUE-PS at small ε or k, and is the highest at larger ε and k | same caveats; L = 100 instead of the paper's 2 |
#
# Our numbers are computed below and collected in the **Paper vs ours** table at the end.
# Privacy levels are the paper's default: budgets {ε, 1.2ε, 2ε} on {5 %, 5 %, 90 %} of the movies
# (seeded random assignment); RAPPOR-PS and OUE-PS run at ε = min(E); the dummy items of IDUE-PS use
# ε* = min(E) (Theorem 4). RE(k) = mean over the true top-k movies of |f̂ − f| / f (Sec. VII);
# precision@k = share of the estimated top-k that are in the true top-k. The public API has no function
# for these two metrics on item sets, so they are computed here with numpy from the runtime's estimates.
#
# Simulation is in *aggregate* mode: each user's item is drawn by the runtime's padding-and-sampling
# (`IDUEPS.sample_items`, Algorithm 1) and the aggregated bit counts are sampled exactly in distribution
# (`simulate_counts`), identical in law to perturbing every user's m + L bits.

# %%
import time

import matplotlib.pyplot as plt
import numpy as np

import ldpplan.planner.data
from ldpplan import mechanisms, planner
from ldpplan.solvers import idue as idue_solvers
from nbhelpers import PaperVsOurs, show_planner_table, show_table

DATA_DIR = ldpplan.planner.data.default_data_dir()
RATINGS = DATA_DIR / "movielens_ratings.csv"
assert RATINGS.is_file(), f"MovieLens ratings not found in {DATA_DIR} (set LDPPLAN_DATA_DIR)"
summary = PaperVsOurs()

# %% tags=["parameters"] nbmake={"mock": {"EPSILONS": [1.0, 4.0, 8.0], "PADDING_LENGTHS": [10, 20, 50, 100]}}
# Parameters: the only cell to edit. FULL = True: Kosarak-scale n, the paper's ten repeats, finer grids.
# Run as a test (pytest --nbmake), this cell's metadata `nbmake.mock` narrows the grids after it runs
# (EPSILONS 1, 4, 8 and L = 10-100: the plans at L = 200-400 take most of the time);
# the committed outputs come from the values below.
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

# %% [markdown]
# **Plan and runtime accessors.** Every read of a plan field or of a runtime result goes through
# these functions, so a change of the plan format or of the runtime API touches this cell only.

# %%
def plan_labels(plan):
    """The plan's item labels (list of str), in the order of the runtime's estimates (``domain.labels``)."""
    return plan["domain"]["labels"]


def plan_levels(plan):
    """The plan's privacy levels: list of {name, epsilon, size, items, a, b}."""
    return plan["params"]["levels"]


def estimate_frequency(mech, counts):
    """Frequency estimate, shape (m,), from the ``Aggregate`` of ``simulated_counts`` (the paper's estimator)."""
    return mech.estimate(counts, method="empirical").frequency


def report_width(mech):
    """Number of report positions m + L of an IDUE-PS runtime."""
    return mech.width


def sampled_positions(mech, item_sets, rng):
    """Algorithm 1 (padding and sampling): one report position per user, shape (n,)."""
    return mech.sample_items(item_sets, rng)


def simulated_counts(mech, histogram, n, rng):
    """Aggregated bit counts of n reports whose sampled positions have ``histogram``, sampled exactly."""
    return mech.simulate_counts(histogram, n, rng)


def sampling_probabilities(mech, item_sets):
    """(expected f^s per item, sampling spread per item) of Algorithm 1 for these users."""
    return mech.sampling_probabilities(item_sets)


def frequency_variance(mech, frequencies, n):
    """Perturbation variance of each estimated frequency, shape (m,), for n users (Theorem 4)."""
    return mech.variance(frequencies, n)


def simulation_table(report):
    """The first table of a ``planner.simulate`` report (a planner Table)."""
    return report.tables[0]


# %% [markdown]
# ## 1 · The data, and what 671 users can and cannot do

# %%
ratings = ldpplan.planner.data.load_movielens_ratings(RATINGS)
movies, indptr, indices = ldpplan.planner.data.movielens_item_sets(ratings)
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
    """IDUE-PS spec over the MovieLens movie ids, budgets scaled so that min(E) = epsilon."""
    return {"mechanism": "idue-ps", "model": model, "padding_length": int(L),
            "domain": [str(x) for x in movies], "assignment_seed": 0,
            "levels": [{"name": name, "epsilon": epsilon * scale, "share": share}
                       for name, scale, share in levels]}


plan = planner.make_plan(itemset_spec(4.0, 10))
assert plan_labels(plan) == [str(x) for x in movies]    # estimates are indexed like `movies`
t0 = time.perf_counter()
real = planner.simulate(plan, planner.SimulateOptions(data=str(RATINGS), trials=REAL_TRIALS, seed=SEED,
                                                      mode="aggregate", extra={"top_k": str(TOP_K)}))
print(f"simulate on the real users: {time.perf_counter() - t0:.1f} s")
show_planner_table(simulation_table(real))
real_re = {row[0]: row[-1] for row in simulation_table(real).rows}
assert all(0.5 < v < 1.5 for v in real_re.values())          # no usable signal at n = 671
summary.add("1", f"RE(top-{TOP_K}) at the real n = {n_real}, ε = 4, L = 10 (every mechanism)", "-",
            f"{min(real_re.values()):.2f} ~ {max(real_re.values()):.2f}", "no signal at this n")


# %% [markdown]
# Even at ε = 4 (budgets 4 / 4.8 / 8 nats) the RE of the top-20 movies is close to 1 for every mechanism:
# with L = 10 the estimates are dominated by the truncation bias (a user with 149 movies reports each
# one with probability 1/(set size), so L·f^s is a small fraction of f) and, at larger L, by the perturbation noise
# of only 671 reports. IDUE-PS still has the smallest MSE, as in the paper. To study the paper's questions
# at the paper's scale, the next sections **replicate the population**: each user appears 150 times
# (n = 100,650, close to Clothing's 105,508; `FULL = True`: 1,500 times, n = 1,006,500, Kosarak's scale);
# frequencies and set sizes are unchanged.

# %% [markdown]
# ## 2 · Fig. 8-9 analogue: RE(top-20) vs the padding length L for several ε
#
# A small L truncates the large MovieLens sets (bias: the estimate of a movie's frequency tends to
# L·f^s ≤ f, where f^s is the probability that a user's sampled item is that movie), a large L dilutes each
# report (variance grows as L²). The runtime gives f^s and the sampling spread (`sampling_probabilities`)
# and the perturbation variance (`variance`), so we also plot the theoretical bias² and variance of the
# top-20 movies, and the "noise-free" RE and precision an infinite population would reach (ranking by
# L·f^s instead of f).

# %%
def sampled_histogram(mech, rng):
    """Histogram over the m + L report positions of the n = n_real * REPLICAS users' sampled items.
    Loops over replicas (671 users each, vectorised inside the runtime), not over users."""
    hist = np.zeros(report_width(mech), dtype=np.int64)
    for _ in range(REPLICAS):
        hist += np.bincount(sampled_positions(mech, (indptr, indices), rng), minlength=report_width(mech))
    return hist


def re_topk(est, k):
    top = true_order[:k]
    return float(np.mean(np.abs(est[top] - f_true[top]) / f_true[top]))


def precision_at_k(est, k):
    return np.intersect1d(np.argsort(-est, kind="stable")[:k], true_order[:k]).size / k


def runtimes(epsilon, L):
    """IDUE-PS (opt0) and the LDP baselines, each a verified plan loaded in the runtime.

    One-level plans reproduce the baselines exactly: opt1 on one level is RAPPOR, opt2 is OUE."""
    one = [("all", 1.0, 1.0)]
    plans = {"IDUE-PS": planner.make_plan(itemset_spec(epsilon, L)),
             "RAPPOR-PS": planner.make_plan(itemset_spec(epsilon, L, "opt1", one)),
             "OUE-PS": planner.make_plan(itemset_spec(epsilon, L, "opt2", one))}
    for name, closed in (("RAPPOR-PS", idue_solvers.rappor(epsilon)), ("OUE-PS", idue_solvers.oue(epsilon))):
        lv = plan_levels(plans[name])[0]
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
    expected, spread = sampling_probabilities(sampler, (indptr, indices))
    noise_free[L] = L * expected
    for seq in root.spawn(len(PADDING_LENGTHS))[j].spawn(TRIALS):
        rng = np.random.default_rng(seq)
        hist = sampled_histogram(sampler, rng)    # common sampled items for every mechanism and ε
        for e, mechs in mechs_by_eps.items():
            for name, mech in mechs.items():
                est = estimate_frequency(mech, simulated_counts(mech, hist, n_sim, rng))
                results.setdefault((e, L, name), []).append(est)
    for e, mechs in mechs_by_eps.items():
        var = frequency_variance(mechs["IDUE-PS"], expected, n_sim) + L * L * spread / n_sim
        theory[(e, L)] = {"bias2": float(np.mean((L * expected[top] - f_true[top]) ** 2)),
                          "var": float(np.mean(var[top]))}
print(f"{len(results) * TRIALS:,} simulated collections of n = {n_sim:,} users in {time.perf_counter() - t0:.1f} s")


def mean_metric(metric, e, L, name, k):
    return float(np.mean([metric(est, k) for est in results[(e, L, name)]]))


# %%
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
summary.add("2", "best L (theory) at the smallest / largest ε", "grows with ε (L = 2-4 on Clothing)",
            f"{best_L_theory[EPSILONS[0]]} at ε = {EPSILONS[0]:g} / {best_L_theory[EPSILONS[-1]]} at ε = {EPSILONS[-1]:g}",
            f"MovieLens sets: mean {set_sizes.mean():.0f} movies")
summary.add("2", "best L (simulated RE) at the smallest / largest ε", "grows with ε",
            f"{best_L[EPSILONS[0]]} / {best_L[EPSILONS[-1]]}", f"{TRIALS} trials")

# %% [markdown]
# **Paper vs ours.** The paper finds (Fig. 8-9) that the best L depends on both the data and ε and grows
# with ε, because a larger ε lowers the variance and leaves the truncation bias dominant; it suggests L
# near the mean set size at large ε and smaller L at small ε. The MovieLens analogue shows the same
# mechanism: the bias² curve falls with L and does not depend on ε, the variance curves rise as L² and
# fall with ε, and the best L (theory, and the simulated RE up to trial noise) grows with ε (asserted).
# The values differ from the paper's (L = 2-4 for Clothing) because MovieLens sets are far larger: L must
# reach the hundreds to remove the bias, and only large ε can afford the variance that comes with it.
# The rule of [7] (90th percentile of set sizes, printed above) is only right at the largest ε.

# %% [markdown]
# ## 3 · Fig. 7 analogue: precision and RE of the top-k movies vs ε and vs k (L fixed)
#
# The paper fixes L = 2 for Clothing (about its mean set size). For MovieLens we fix L = 100, the best L
# of section 2 around ε = 4 (an IDUE-PS deployment would choose L from a plan like this one).

# %%
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
           title=f"Total MSE over all {m:,} movies (counts² per user, Sec. VII)")
# Where the perturbation variance matters, IDUE-PS is strictly better; where the truncation bias (common
# to all mechanisms) dominates, the three tie. IDUE-PS is never worse by more than 2 %.
ratio = {(e, L): total_mse(e, L, "IDUE-PS") / min(total_mse(e, L, "OUE-PS"), total_mse(e, L, "RAPPOR-PS"))
         for e in EPSILONS for L in PADDING_LENGTHS}
ties = [(e, L, round(r, 4)) for (e, L), r in ratio.items() if r >= 1]
print(f"(ε, L, IDUE-PS / best baseline) where IDUE-PS's total MSE is not the smallest: {ties or 'none'}")
assert max(ratio.values()) < 1.02
assert ratio[(EPSILONS[0], FIG7_L)] < 0.9
summary.add("3", f"IDUE-PS total MSE / best baseline, ε = {EPSILONS[0]:g}, L = {FIG7_L}", "smallest (Fig. 7)",
            f"{ratio[(EPSILONS[0], FIG7_L)]:.3f}", "")
summary.add("3", "IDUE-PS total MSE / best baseline, worst (ε, L)", "smallest", f"{max(ratio.values()):.4f}",
            "ties where the common truncation bias dominates")
by_k = {(r[0], r[1]): r[2] for r in rows_k}
summary.add("3", f"precision@k at ε = {FIG7_EPSILON:g}, IDUE-PS − OUE-PS, k = {FIG7_KS[0]} / {FIG7_KS[-1]}",
            "can trail at small k, leads at larger k",
            f"{by_k[('IDUE-PS', FIG7_KS[0])] - by_k[('OUE-PS', FIG7_KS[0])]:+.2f} / "
            f"{by_k[('IDUE-PS', FIG7_KS[-1])] - by_k[('OUE-PS', FIG7_KS[-1])]:+.2f}", f"{TRIALS} trials, L = {FIG7_L}")

# %% [markdown]
# **Paper vs ours.** The paper reports (Fig. 7, Clothing, L = 2) that IDUE-PS has the smallest RE, while
# its top-k precision can fall below OUE-PS at small ε or small k because the 5 % most sensitive items
# get noisier estimates (Sec. V-E). On the MovieLens analogue: (i) IDUE-PS has the smallest *total* MSE over
# all movies wherever the perturbation variance matters (ratio at ε = 1, L = 100 in the table below), which
# is what opt0 optimises; where the truncation bias common to all mechanisms dominates (small L, large ε)
# the three tie within 2 % (asserted; the printed list names those (ε, L)); (ii) its RE(top-20) is the smallest for ε ≤ 4 and ties at ε = 8, where the bias of L = 100
# dominates every mechanism's error; (iii) the precision pattern is the paper's: at ε = 4 IDUE-PS trails
# OUE-PS for k = 10-20 and leads for k = 50-100, because a few of the most popular movies sit in the
# sensitive 5 % levels and get noisier estimates; (iv) below ε = 4 no mechanism identifies the top-20 at
# this n (precision near 0), and at ε = 8 IDUE-PS and OUE-PS approach the noise-free precision,
# the limit set by truncation at L = 100. With 3 trials the precision values carry a standard error of
# about 0.05; absolute values are not comparable with the paper's (different data, set sizes, L and a
# replicated population).

# %% [markdown]
# ## Paper vs ours
#
# The paper's findings as stated; ours as computed by the cells above.

# %%
summary.show()

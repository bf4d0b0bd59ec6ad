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
# # 06 · Tuning with the Python API: spec → solve → inspect → sweep → export → verify → run
#
# **Reproduces:** no paper figure; this is the workflow a privacy engineer follows with ldpplan's Python
# API, on the ID-LDP mechanism (Gu et al., ICDE 2020, IDUE eq. 6-12).

# %% [markdown]
# ## What this shows
#
# Every number below is computed by the public API (`ldpplan.planner`, `ldpplan.solvers.idue`,
# `ldpplan.mechanisms`); the CLI commands that do the same are given alongside (`ldpplan plan`,
# `ldpplan verify`, `ldpplan simulate`). There is no paper to compare with, hence no "paper vs ours" table.
#
# Scenario: a clinic survey asks each patient for their main condition among 40 conditions. Two are
# highly sensitive (HIV, hepatitis C: ε = 0.7 nats), six are moderately sensitive (ε = 1.0), the rest
# are common conditions (ε = 1.6). We want the smallest error for the estimated frequencies with
# n = 20,000 patients, and a plan file the app can ship. Sections: 1 write the spec, 2 solve and inspect,
# 3 sweep ε and the models, 4 find budgets the optimum does not use, 5 export, verify and tamper,
# 6 load the plan in the runtime, perturb and estimate.

# %%
import json
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import matplotlib.ticker as mticker
import numpy as np

from ldpplan import mechanisms, planner
from ldpplan.solvers import idue as idue_solvers
from nbhelpers import show_planner_table, show_table

# %% tags=["parameters"]
# Parameters: the only cell to edit. FULL = True uses more users and finer sweeps.
FULL = False
SEED = 7

N_PATIENTS = 200_000 if FULL else 20_000     # survey size
SWEEP_POINTS = 17 if FULL else 9              # budget scales from 1/4 to 4 times the policy
SWEEP_SCALES = np.geomspace(0.25, 4.0, SWEEP_POINTS)

# %% [markdown]
# **Plan and runtime accessors.** Every read of a plan field or of a runtime result goes through these
# functions, so a change of the plan format or of the runtime API touches this cell only.

# %%
def plan_levels(plan):
    """The plan's privacy levels: list of {name, epsilon, size, items, a, b} (the plan's own objects)."""
    return plan["params"]["levels"]


def plan_labels(plan):
    """The plan's item labels, in the order of the runtime's estimates (plan format 2.0: ``domain.labels``)."""
    return plan["domain"]["labels"]


def plan_model_objective(plan):
    """The optimum of the plan's model (eq. 9 for opt0; counts² per user): ``solver.objective``."""
    return plan["solver"]["objective"]


def plan_worst_case(plan):
    """Eq. (9): the plan's worst-case MSE per user (counts²)."""
    return plan["predicted"]["worst_case_mse_per_user"]["value"]


def runtime_labels(mech):
    """The runtime's item labels (index k of an estimate is label k)."""
    return mech.labels


def report_shape(mech, reports):
    """(number of reports, bits per report, bytes held) of a batch of reports."""
    return len(reports), mech.width, reports["bits"].nbytes


def estimate_frequency(mech, reports):
    """Server side: estimated frequencies, shape (m,) (counts = n · frequency; eq. 7)."""
    return mech.estimate(reports, method="empirical").frequency


def frequency_variance(mech, frequencies, n):
    """Var[f̂] per item, shape (m,), for true frequencies ``frequencies`` and n users (eq. 8)."""
    return mech.variance(frequencies, n)


# %% [markdown]
# ## 1 · Write the spec in Python
#
# The spec is a plain dict with the same keys as a TOML/JSON spec file (`planner.example_spec("health")` returns one;
# `ldpplan plan --help` lists the keys): the mechanism, the optimisation model (opt0 = eq. 9, the worst-case MSE; the default), the
# notion (MinID-LDP: a pair of inputs is protected at the smaller of their budgets), and the levels with
# their items. Invalid specs raise `planner.SpecError` naming the field, rule and value.

# %%
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

# %% [markdown]
# ## 2 · Solve and inspect the result object
#
# `solvers.idue.solve_idue` is the math layer: it returns a frozen `SolveResult` (status, objective,
# parameters by the paper's names, a certificate of optimality, the solver name and time).
# `planner.make_plan` calls it, rounds a, b to the 2⁻⁴⁸ grid on the safe side, verifies constraint (6)
# independently and returns the plan dict.

# %%
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

# %% [markdown]
# What to read in these tables: each level's flip probabilities (1 − a: a held condition is hidden;
# b: a non-held condition is reported), the variance coefficients of eq. (8), and the worst-case total
# MSE compared with RAPPOR and OUE at ε = min(E) = 0.7, the only way plain LDP can honour the strictest
# level. The gain comes from the 32 common conditions, whose probabilities IDUE is free to sharpen.
# In frequency terms, the standard error of one item's estimated frequency is
# `sqrt(coef_n + f · coef_c) / sqrt(n)`:

# %%
for lv in plan_levels(plan):
    a, b = lv["a"], lv["b"]
    se = np.sqrt(b * (1 - b) / (a - b) ** 2) / np.sqrt(N_PATIENTS)
    print(f"{lv['name']:>17}: ε = {lv['epsilon']:.2f}, std. error of a rare item's frequency with "
          f"n = {N_PATIENTS:,}: {100 * se:.2f} percentage points")

# %% [markdown]
# ## 3 · Sweep ε and the models, plot the trade-off
#
# Scale all three budgets together (the ratio between levels is the policy; the scale is the knob) and
# compare the models: opt0 (eq. 9), opt1 (RAPPOR structure, eq. 11), opt2 (OUE structure, eq. 12), the
# AvgID-LDP notion (Sec. VIII: a pair is protected at the average of the budgets, weaker than MinID), and
# the LDP baselines at min(E). The y-axis is the worst-case root-MSE of one frequency, averaged over
# items, for n patients: `sqrt(eq. 9 / (m · n))`.

# %%
m = len(plan_labels(plan))
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


# %% [markdown]
# Reading the plot: the curves are nearly parallel, so a budget change moves every variant alike; the
# vertical gap between IDUE opt0 and OUE at min(E) is what the per-level policy buys. AvgID-LDP gives a
# lower error only because it protects less (a pair at the average of its budgets): choose the notion
# from the threat model, not from the plot. A target such as "RMSE ≤ 1 percentage point" can be read
# off directly, or solved for with a one-dimensional search over the scale.
#
# ## 4 · Which budgets matter? Tighten for free
#
# Under MinID-LDP every pair of inputs is protected at the *smaller* of their budgets, so a level's budget
# can exceed what the optimum can use (the gain over LDP is bounded by 2·min(E), ID-LDP Lemma 1). The
# optimal eq. (9) is non-increasing in each budget, so a bisection finds, per level, the smallest budget
# that keeps the optimum unchanged (within 10⁻⁶ relative): a stronger guarantee at no utility cost.

# %%
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
      f"{plan_model_objective(final_plan):.6f}")
assert plan_model_objective(final_plan) <= current * (1 + 2e-6)
assert all(t <= e for t, e in zip(tightened, epsilons))
plan = final_plan          # the plan we ship

# %% [markdown]
# The common conditions' budget 1.6 buys nothing over the smaller value in the table: the app can promise a stronger
# guarantee for them with the same accuracy. Whether to do so is a policy decision; the planner only
# shows that the extra budget is unused. The rest of the notebook ships the tightened plan.
#
# ## 5 · Export the plan, verify it independently, tamper with it
#
# `planner.write_plan` re-verifies and writes atomically; `planner.verify_plan` recomputes constraint (6)
# from the numbers in the file (exact rational arithmetic on the worst pair), so a plan edited by hand
# cannot slip through. CLI equivalents: `ldpplan plan clinic.toml -o clinic-plan.json`, then
# `ldpplan verify clinic-plan.json` (exit 1 when the guarantee fails).

# %%
workdir = tempfile.TemporaryDirectory()
plan_path = Path(workdir.name) / "clinic-plan.json"
planner.write_plan(plan, plan_path)
loaded = planner.read_plan(plan_path)
check = planner.verify_plan(plan_path)
print(f"wrote {plan_path.name} ({plan_path.stat().st_size:,} bytes); verify: holds = {check.holds}")
print("  ", check.message)
print("   plan keys:", sorted(loaded))
print("   a of the first level on the 2^-48 grid:", plan_levels(loaded)[0]["a"] * 2**48 % 1 == 0)

tampered = json.loads(json.dumps(loaded))
lv = plan_levels(tampered)[2]                  # make the common conditions more accurate by hand ...
lv["a"] = min(round((lv["a"] + 0.02) * 2**48) / 2**48, 1 - 2**-48)  # on the 2^-48 grid, as plans must be
bad = planner.verify_plan(tampered)
print(f"tampered plan: holds = {bad.holds}")
print("  ", bad.message)
try:
    planner.write_plan(tampered, Path(workdir.name) / "tampered.json")
except planner.PrivacyViolation as exc:
    print("   write_plan refused:", str(exc)[:100], "...")
assert check.holds and not bad.holds
assert not (Path(workdir.name) / "tampered.json").exists()

# %% [markdown]
# ## 6 · Load the plan in the runtime, perturb, estimate
#
# `mechanisms` is the numpy-only client/server runtime (it imports neither the planner nor cvxpy). Each
# client perturbs its item into an m-bit report (exact sampling of the grid probabilities); the server
# aggregates and applies the unbiased estimator of eq. (7). We check the estimates against the truth
# using the theoretical variance (eq. 8).

# %%
mech = mechanisms.load(plan_path)
print(mech, "| items:", runtime_labels(mech)[:3], "...")
rng = np.random.default_rng(SEED)

# A synthetic population: common conditions are frequent, the sensitive ones rare.
level_of_item = {x: lv["name"] for lv in plan_levels(plan) for x in lv["items"]}
labels = runtime_labels(mech)
weights = np.array([0.5 if level_of_item[x] != "common" else 3.0 for x in labels])
truth_items = rng.choice(m, size=N_PATIENTS, p=weights / weights.sum())

reports = mech.perturb(truth_items, rng=rng)              # client side: one packed report per patient
n_reports, width, nbytes = report_shape(mech, reports)
print(f"reports: {n_reports:,} x {width} bits ({nbytes:,} bytes packed)")
freq_hat = estimate_frequency(mech, reports)          # server side: frequencies (counts = n * freq)
f = np.bincount(truth_items, minlength=m) / N_PATIENTS
sd = np.sqrt(frequency_variance(mech, f, N_PATIENTS))
z = (freq_hat - f) / sd
show_table(["item", "level", "true frequency", "estimate", "std. error (eq. 8)", "z"],
           [[labels[k], level_of_item[labels[k]], f[k], freq_hat[k], sd[k], f"{z[k]:+.2f}"]
            for k in [0, 1, 2, 3, 8, 9, 10]], digits=4,
           title=f"Estimated frequencies from {N_PATIENTS:,} perturbed reports")
print(f"over all {m} items: mean z = {z.mean():+.3f}, sd of z = {z.std(ddof=1):.3f} (expected 0 and 1)")
print(f"total squared error: {N_PATIENTS * np.sum((freq_hat - f) ** 2):.1f} counts² per user; "
      f"expected (eq. 8): {N_PATIENTS * np.sum(sd ** 2):.1f}; worst case (eq. 9): {plan_worst_case(plan):.1f}")
assert abs(z.mean()) < 4 / np.sqrt(m) and 0.6 < z.std(ddof=1) < 1.4
workdir.cleanup()

# %% [markdown]
# ## Where to go from here
#
# * `planner.simulate(plan, planner.SimulateOptions(data=..., trials=..., mode="aggregate"))` compares the
#   plan with RAPPOR and OUE on real or synthetic data (`ldpplan simulate`); notebook 01 uses it for Fig. 3.
# * For item sets, use `"mechanism": "idue-ps"` with a `padding_length` (notebook 02 shows how to pick L).
# * The same spec can be a TOML file read by `planner.load_spec` or passed to `ldpplan plan`.

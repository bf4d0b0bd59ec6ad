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
# # 09 · Longitudinal collections: memoization (RAPPOR's PRR + IRR), L-GRR / L-OSUE, error per round vs lifetime budget, the averaging attack
#
# **Papers:** Erlingsson, Pihur, Korolova. *RAPPOR: Randomized aggregatable privacy-preserving ordinal
# response*, CCS 2014 (permanent and instantaneous randomized response; ε∞ and ε₁). Arcolezi, Couchot,
# Al Bouna, Xiao. *Improving the utility of locally differentially private protocols for longitudinal and
# multidimensional frequency estimates*, Digital Communications and Networks 2022 (arXiv:2111.04636: L-GRR,
# L-SUE, L-OUE, L-OSUE, L-SOUE and their approximate variance).
#
# **Reproduces:** the papers' ordering of the protocols (L-OSUE ≤ L-SUE, L-GRR best for small domains), the
# correction of L-GRR's second round for k > 2, and the reason for memoization: without it, a user reporting
# one value T times loses T·ε and an averaging attacker recovers the value.

# %% [markdown]
# ## What this shows
#
# | section | reproduces | paper's finding | why ours differs |
# |---|---|---|---|
# | 1 | **Protocols at ε∞ = 4, ε₁ = 1, k = 10** (Arcolezi et al., approximate variance) | L-OSUE has the lowest variance of the unary protocols; L-GRR wins for small k | L-GRR's second round is solved on the exact composed k-ary channel (the papers' two-path form is conservative for k > 2: true ε₁ below the target) |
# | 2 | **Error per round vs lifetime budget**, memoized vs fresh reports at the same lifetime budget, 20 rounds, users change value at most once | RAPPOR: ε∞ bounds any number of reports of one value; without memoization the budget composes over the rounds | measured through the runtime with one memo per population; the fresh-report baseline splits max_changes·ε∞ over the rounds (sequential composition) |
# | 3 | **Averaging attack**: plurality vote over T reports of one unchanged value | RAPPOR: memoization stops the attacker at what the permanent response reveals | ours: success of the vote as T grows, fresh ε₁-reports vs the memoized plan |
#
# Our numbers are computed below and collected in the **Paper vs ours** table at the end. Units: ε in **nats**;
# errors are total squared errors of the frequency estimate, Σ_v (f̂(v) − f(v))², per round.

# %%
import math

import matplotlib.pyplot as plt
import numpy as np

from ldpplan import load, planner
from ldpplan.mechanisms.pie import RandomizedResponse
from ldpplan.planner import SimulateOptions
from ldpplan.solvers.longitudinal import l_grr, l_grr_composed_epsilon
from nbhelpers import PaperVsOurs, show_table

summary = PaperVsOurs()

# %% tags=["parameters"]
FULL = False
SEED = 2014
K = 10
ROUNDS = 20
MAX_CHANGES = 2
USERS = 200_000 if FULL else 20_000
TRIALS = 5 if FULL else 2

# %% [markdown]
# **Plan and runtime accessors.** Every read of a plan field or of a runtime result goes through these
# functions, so a change of the plan format or of the runtime API touches this cell only.

# %%
def plan_mechanism(plan):
    return plan["mechanism"]


def plan_variance(plan):
    return plan["predicted"]["variance_per_round"]["value"]


def plan_mse(plan):
    return plan["predicted"]["mse_total_per_round"]["value"]


def baseline(plan, name):
    return next(b for b in plan["baselines"] if b["name"] == name)


def baseline_variance(plan, name):
    return baseline(plan, name)["predicted"]["variance_per_round"]["value"]


def candidate_variances(plan):
    names = ("l-grr", "l-sue", "l-oue", "l-osue", "l-soue")
    return {b["name"]: b["predicted"]["variance_per_round"]["value"] for b in plan["baselines"]
            if b["name"] in names and b["reachable"]}


def guarantee(plan, key):
    return plan["guarantee"][key]


def papers_l_grr_true_epsilon_1(epsilon_perm, epsilon_1, k):
    r = l_grr(epsilon_perm, epsilon_1, k)
    return float(l_grr_composed_epsilon(r.p1, r.q1, r.p2, r.q2, k).epsilon)


def simulated_errors(plan, seed):
    report = planner.simulate(plan, SimulateOptions(trials=TRIALS, seed=seed, extra={"users": str(USERS)}))
    return np.array(report.data["error"]), np.array(report.data["baseline_error"]), report.data


def plurality_success(reports_of, users, values, t_max):
    """Share of users whose most reported value after t reports is their own, for t = 1..t_max."""
    tally = np.zeros((users, K))
    out = []
    for t in range(t_max):
        y = reports_of(t)
        tally[np.arange(users), y] += 1
        out.append(float(np.mean(tally.argmax(axis=1) == values)))
    return np.array(out)


def memoized_reports(mech, memo, values, rounds):
    ids, state = np.arange(values.size), {"memo": memo}

    def report(t):
        if t and t % rounds == 0:  # past the plan's rounds: the same permanent responses, rounds counted afresh
            state["memo"] = state["memo"].replayed()
        return np.asarray(mech.perturb(values, rng=RNG, memo=state["memo"], users=ids, round=t % rounds)["y"])

    return report


def fresh_reports(rr, values):
    return lambda t: np.asarray(rr.perturb(values, rng=RNG)["y"])


def permanent_keep(plan):
    return plan["params"]["p1"]


# %% [markdown]
# ## 1 · The five protocols at ε∞ = 4, ε₁ = 1 (k = 10, n = 200,000 per round)

# %%
spec = {"mechanism": "auto", "domain": K, "users": 200_000, "epsilon_perm": 4.0, "epsilon_1": 1.0,
        "rounds": ROUNDS, "max_changes": MAX_CHANGES}
plan = planner.make_plan(spec)
cands = candidate_variances(plan)
papers_grr = baseline_variance(plan, "l-grr-papers-second-round")
rows = [[name, v, v / cands["l-osue"]] for name, v in cands.items()] + \
       [["l-grr, papers' second round", papers_grr, papers_grr / cands["l-osue"]]]
show_table(["protocol", "variance per value and round", "/ L-OSUE"], rows,
           title=f"auto chose {plan_mechanism(plan)}")
true_eps = papers_l_grr_true_epsilon_1(4.0, 1.0, K)
summary.add("1", "L-SUE / L-OSUE variance (k = 10)", "L-OSUE lower", round(cands["l-sue"] / cands["l-osue"], 3))
summary.add("1", "true ε₁ of the papers' L-GRR at target 1 (k = 10)", "1 (two-path ratio)", round(true_eps, 3),
            "the k-ary composed channel has k − 2 more paths")
summary.add("1", "L-GRR variance: papers' / exact second round", "—", round(papers_grr / cands["l-grr"], 3),
            "the plan spends the whole ε₁")

# %% [markdown]
# ## 2 · Error per round vs lifetime budget: memoized vs fresh reports
#
# Lifetime budgets ε_L = max_changes · ε∞ from 1 to 16 nats, ε₁ = ε∞ / 2. The fresh-report baseline spends the
# same ε_L over the 20 rounds (ε_L / 20 per report, the better of GRR and OUE). Predicted per-round error
# (lines) and measured through the runtime on a Zipf(1.1) population with 5 % drift (markers).

# %%
lifetimes = [1.0, 2.0, 4.0, 8.0, 16.0]
pred_memo, pred_fresh, meas_memo, meas_fresh = [], [], [], []
for i, life in enumerate(lifetimes):
    perm = life / MAX_CHANGES
    p = planner.make_plan(spec | {"users": USERS, "epsilon_perm": perm, "epsilon_1": perm / 2})
    pred_memo.append(plan_mse(p))
    pred_fresh.append(K * baseline_variance(p, "no-memo-same-lifetime"))
    err, base, _ = simulated_errors(p, SEED + i)
    meas_memo.append(err.mean())
    meas_fresh.append(base.mean())
fig, ax = plt.subplots(figsize=(6, 4))
ax.loglog(lifetimes, pred_memo, "-", label="memoized (predicted)")
ax.loglog(lifetimes, meas_memo, "o", label="memoized (runtime)")
ax.loglog(lifetimes, pred_fresh, "--", label="fresh reports, same lifetime (predicted)")
ax.loglog(lifetimes, meas_fresh, "s", label="fresh reports (sampled)")
ax.set_xlabel("lifetime budget ε_L (nats)")
ax.set_ylabel("total squared error per round")
ax.set_title(f"{ROUNDS} rounds, k = {K}, n = {USERS:,}, ≤ {MAX_CHANGES} values per user")
ax.legend(fontsize=8)
plt.show()
show_table(["ε_L", "memoized (pred.)", "memoized (meas.)", "fresh (pred.)", "fresh (meas.)"],
           [[l, a, b, c, d] for l, a, b, c, d in zip(lifetimes, pred_memo, meas_memo, pred_fresh, meas_fresh)])
at8 = lifetimes.index(8.0)
summary.add("2", "fresh / memoized error per round at ε_L = 8", "memoization bounds the lifetime loss",
            round(meas_fresh[at8] / meas_memo[at8], 1), "measured; same lifetime budget for both")
summary.add("2", "memoized measured / predicted (mean over ε_L)", "—",
            round(float(np.mean(np.array(meas_memo) / np.array(pred_memo))), 3))

# %% [markdown]
# ## 3 · The averaging attack
#
# 2,000 users all hold value 0 and report it T times. Fresh ε₁ = 1 reports (k-ary RR at ε₁ every round)
# vs the memoized plan of section 1 (every report also 1-LDP). The attacker takes the most reported value.

# %%
RNG = np.random.default_rng(SEED)
T_MAX = 2000 if FULL else 400
values = np.zeros(2000, dtype=np.int64)
grr_plan = planner.make_plan(spec | {"mechanism": "l-grr"})
mech = load(grr_plan)
memo_curve = plurality_success(memoized_reports(mech, mech.new_memo(), values, ROUNDS), values.size, values, T_MAX)
fresh_curve = plurality_success(fresh_reports(RandomizedResponse(domain=K, epsilon=1.0), values), values.size, values, T_MAX)
fig, ax = plt.subplots(figsize=(6, 4))
ts = np.arange(1, T_MAX + 1)
ax.semilogx(ts, fresh_curve, label="fresh reports at ε₁ = 1 (lifetime T·ε₁)")
ax.semilogx(ts, memo_curve, label="memoized L-GRR (lifetime ε∞ = 4)")
ax.axhline(permanent_keep(grr_plan), color="grey", ls=":", label="Pr[permanent response = value]")
ax.set_xlabel("reports T of one value")
ax.set_ylabel("attacker recovers the value")
ax.legend(fontsize=8)
plt.show()
summary.add("3", f"attacker success after {T_MAX} reports, fresh", "→ 1 (RAPPOR: averaging fresh reports)", round(fresh_curve[-1], 3))
summary.add("3", f"attacker success after {T_MAX} reports, memoized", "≤ what the PRR reveals",
            round(memo_curve[-1], 3), f"Pr[permanent = value] = {permanent_keep(grr_plan):.3f}")

# %% [markdown]
# ## Paper vs ours

# %%
summary.show()

/**
 * Each family's privacy map, recomputed from the plan's numbers (float64, rounded toward the
 * safe side by `checkClaim`), ported from mechanisms/<family>/: a claim above what the
 * numbers give is refused. See README "What the client checks" for what is not ported.
 */
import { PlanError } from "./errors.js";
import { FIXED_BITS, FIXED_ONE, Frac, LN2, add, claimBelow, claimCovers, cmp, div, fmax, fmin, frac, int, lnFixed, mul, sub } from "./exact.js";
import { blockSize, hadamardPromises, idueLevels, keepProbabilityMatches, longitudinalPromises, piePromises, uldpPromises } from "./promises.js";
import { NUMERIC_MECHANISMS, numericCheck } from "./numeric.js";
import { Ctx, checkClaim, gridProbability, integer, nextDown, nextUp, number, req, same } from "./numbers.js";

const log = Math.log, log1p = Math.log1p;

function notion(plan: any, want: string): void {
  const got = req(plan, "guarantee.notion");
  if (got !== want) throw new PlanError(`guarantee.notion: must be '${want}' (got ${JSON.stringify(got)})`);
}

function domainSize(ctx: Ctx, plan: any, key = "params.domain_size"): number {
  const k = integer(ctx, req(plan, key), key, 2);
  if (k !== plan.domain.size) throw new PlanError(`${key}: must equal domain.size = ${plan.domain.size} (got ${k})`);
  return k;
}

/** The plan's domain is the spec's (a count: no labels; a list: those labels). */
function checkSpecDomain(plan: any, value: unknown, field: string): void {
  if (typeof value === "number") {
    same("domain.size", plan.domain.size, value);
    if (plan.domain.labels !== null) throw new PlanError(`domain.labels: must be the labels of the embedded ${field} (none)`);
  } else if (Array.isArray(value)) {
    same("domain.size", plan.domain.size, value.length);
    if (JSON.stringify(plan.domain.labels) !== JSON.stringify(value.map(String))) {
      throw new PlanError(`domain.labels: must be the labels of the embedded ${field} (${value.length})`);
    }
  } else throw new PlanError(`${field}: must be a count or a list of labels`);
}


/** The GLH's hash prime: 2^31 - 1 when |X|, g <= 2^31 - 1, else 2^61 - 1 (mechanisms/pie/_channel.py `hash_prime`). */
export function hashPrime(k: number, g: number): bigint {
  return Math.max(k, g) <= 2147483647 ? 2147483647n : (1n << 61n) - 1n;
}

/** PIE (rr, glh): Murakami & Takahashi (TDP 2021) Prop. 4.1, Thm. 4.2-4.5, Cor. 3.9, decided exactly (mechanisms/pie/_exact.py). */
function pie(ctx: Ctx, plan: any): void {
  notion(plan, "LDP+PIE");
  const k = domainSize(ctx, plan);
  const mu = gridProbability(req(plan, "params.mu"), "params.mu");
  let symbols = k;
  if (plan.mechanism === "glh") {
    symbols = integer(ctx, req(plan, "params.g"), "params.g", 2, Number.MAX_SAFE_INTEGER);
    const prime = req(plan, "params.hash.prime");
    const want = hashPrime(k, symbols);
    if ((typeof prime !== "number" && typeof prime !== "bigint") || BigInt(prime) !== want) {
      throw new PlanError(`params.hash.prime: the runtime hashes |X| = ${k} items into g = ${symbols} values with the prime ${want} (got ${String(prime).slice(0, 40)})`);
    }
  }
  const gu = plan.guarantee;
  const n = integer(ctx, req(plan, "guarantee.n"), "guarantee.n", 2);
  const releases = integer(ctx, req(plan, "guarantee.releases"), "guarantee.releases", 1);
  const maxPrior = number(req(plan, "guarantee.max_prior"), "guarantee.max_prior", { low: 0, high: 1, lowOpen: true });
  if (maxPrior < 1 / n) throw new PlanError(`guarantee.max_prior: must be >= 1/n = ${1 / n} (got ${maxPrior})`);
  const target = piePromises(plan);
  const epsilon = number(req(plan, "params.epsilon"), "params.epsilon", { low: 0, lowOpen: true });
  if (!keepProbabilityMatches(epsilon, 1, mu, symbols - 1, 100 + log(symbols))) {
    throw new PlanError(`params.mu: must be the 2^-48 grid rounding (down) of the keep probability of params.epsilon for ${symbols} symbols (got ${mu})`);
  }
  const cap = target.epsilon ?? target.epsilon_max!;
  const capField = target.epsilon !== null ? "spec.target.epsilon" : "spec.epsilon_max";
  for (const [where, value] of [["params.epsilon", epsilon], ["guarantee.epsilon", gu.epsilon]] as [string, unknown][]) {
    if ((target.epsilon !== null || where === "params.epsilon") && !(number(value, where, { low: 0 }) <= cap)) {
      throw new PlanError(`${where}: ${value} exceeds the embedded ${capField} = ${cap}`);
    }
  }
  // the exact guarantee in 256-bit fixed point
  const M = frac(mu), one = int(1), S = BigInt(FIXED_BITS);
  const eps = lnFixed(div(mul(M, int(symbols - 1)), sub(one, M)));
  const theta = div(sub(mul(int(symbols), M), one), int(symbols - 1));
  const th = (theta[0] << S) / theta[1];
  const log2 = (x: Frac) => (lnFixed(x) << S) / LN2;
  const log2n = log2(int(n)), log2k = log2(int(k));
  const te = BigInt(releases) * eps;
  const minOf = (...xs: bigint[]) => xs.reduce((a, b) => (a < b ? a : b));
  const mech = (BigInt(releases) * th * minOf(log2n, log2k)) >> S;
  const ldp = minOf((te << S) / LN2, (((te * te) >> S) << S) / LN2, log2n, BigInt(releases) * log2k);
  const alpha = minOf(mech, ldp);
  const exact: Record<string, bigint> = { epsilon: eps, alpha_bits: alpha, alpha_nats: (alpha * LN2) >> S };
  const claims: [string, string, unknown][] = [["epsilon", "guarantee.epsilon", gu.epsilon], ["epsilon", "params.epsilon", epsilon],
    ["alpha_bits", "guarantee.alpha_bits", gu.alpha_bits], ["alpha_nats", "guarantee.alpha_nats", gu.alpha_nats]];
  if (target.alpha_bits !== null) claims.push(["alpha_bits", "spec.target.alpha_bits", target.alpha_bits]);
  for (const [key, where, claim] of claims) {
    const c = number(claim, where, { low: 0 });
    if (!claimCovers(c, exact[key])) throw new PlanError(`${where}: claims ${c} but the plan's numbers give more (exactly); the client refuses a plan that claims more privacy than its numbers give`);
  }
  const prior = fmax(frac(maxPrior), [1n, BigInt(n)]);
  const priorBits = cmp(prior, one) < 0 ? -log2(prior) : 0n;
  const bayes = priorBits > 0n ? FIXED_ONE - ((alpha + FIXED_ONE) << S) / priorBits : null;
  const bounds: [string, unknown][] = [["guarantee.bayes_error_lower_bound", gu.bayes_error_lower_bound]];
  if (target.bayes_error !== null) bounds.push(["spec.target.bayes_error", target.bayes_error]);
  for (const [where, claim] of bounds) {
    const c = number(claim, where, { low: 0, high: 1 });
    if (c !== 0 && (bayes === null || !claimBelow(c, bayes))) {
      throw new PlanError(`${where}: claims a Bayes-error bound ${c} but the plan's numbers give less (Cor. 3.9); the client refuses a plan that claims more privacy than its numbers give`);
    }
  }
}

function hadamard(ctx: Ctx, plan: any): void {
  notion(plan, "LDP");
  const budget = hadamardPromises(plan);
  const k = domainSize(ctx, plan);
  const B = integer(ctx, req(plan, "params.blocks"), "params.blocks", 1, 2 * k);
  if (B & (B - 1)) throw new PlanError(`params.blocks: must be a power of two (got ${B})`);
  const b = blockSize(k, B);
  if (integer(ctx, req(plan, "params.block_size"), "params.block_size", 2) !== b) {
    throw new PlanError(`params.block_size: must be the smallest power of two with blocks (b - 1) >= k, ${b} (got ${plan.params.block_size})`);
  }
  if (integer(ctx, req(plan, "params.output_size"), "params.output_size", 2) !== B * b) {
    throw new PlanError(`params.output_size: must be blocks x block_size = ${B * b} (got ${plan.params.output_size})`);
  }
  const P = gridProbability(req(plan, "params.keep_probability"), "params.keep_probability");
  const epsilon = number(req(plan, "params.epsilon"), "params.epsilon", { low: 0, lowOpen: true });
  if (!keepProbabilityMatches(epsilon, B, P)) {
    throw new PlanError(`params.keep_probability: must be the 2^-48 grid rounding (down) of e^eps/(e^eps + 2B - 1) for params.epsilon and params.blocks (got ${P})`);
  }
  const eps = log(P) + log(2 * B - 1) - log1p(-P);
  const claim = checkClaim(eps, req(plan, "guarantee.epsilon"), "guarantee.epsilon", Math.abs(log(P)) + log(2 * B),
    () => lnFixed(div(mul(frac(P), int(2 * B - 1)), sub(int(1), frac(P)))));
  if (claim > budget) throw new PlanError(`guarantee.epsilon: ${claim} exceeds the embedded spec.epsilon = ${budget}`);
}

function sensitiveList(ctx: Ctx, v: unknown, field: string, size: number): number[] {
  if (!Array.isArray(v)) throw new PlanError(`${field}: must be a list of item indices (got ${JSON.stringify(v)})`);
  v.forEach((x, i) => integer(ctx, x, `${field}[${i}]`, 0, size - 1));
  if (new Set(v).size !== v.length) throw new PlanError(`${field}: items must be distinct`);
  return v as number[];
}

function urapEpsilon(theta: number, d1: number, d2: number, ns: number, nn: number): number {
  const a1 = log(theta) - log(d1), a0 = log1p(-theta) - log1p(-d1);
  const extra = nn ? [log(d2)] : [];
  const classes = [[a1, ...extra], [a0, ...extra]];
  if (ns >= 2) classes.push([a1, a0, ...extra]);
  return Math.max(...classes.map((c) => Math.max(...c) - Math.min(...c)));
}

/** ULDP (urr, urap, pum): eq. (5)-(10) of Murakami & Kawamoto 2019. */
function uldp(ctx: Ctx, plan: any): void {
  notion(plan, "ULDP");
  const k = domainSize(ctx, plan);
  const p = plan.params;
  let size = k, sens = sensitiveList(ctx, req(plan, "params.sensitive"), "params.sensitive", k);
  const specEpsilon = uldpPromises(plan);
  let common = plan.mechanism;
  if (plan.mechanism === "pum") {
    common = p.common;
    if (common !== "urr" && common !== "urap") throw new PlanError(`params.common: must be 'urr' or 'urap' (got ${JSON.stringify(common)})`);
    const tags = req(plan, "params.tags");
    if (!Array.isArray(tags)) throw new PlanError("params.tags: must be a list of tag names");
    size = integer(ctx, req(plan, "params.intermediate_size"), "params.intermediate_size", 2);
    if (size !== k + tags.length) throw new PlanError(`params.intermediate_size: must be domain.size + tags = ${k + tags.length} (got ${size})`);
    const inter = sensitiveList(ctx, req(plan, "params.intermediate_sensitive"), "params.intermediate_sensitive", size);
    const want = [...sens, ...tags.map((_: unknown, i: number) => k + i)];
    same("params.intermediate_sensitive", [...inter].sort((x, y) => x - y), want.sort((x, y) => x - y));
    sens = inter;
  }
  let eps: number, exact: () => bigint;
  const one = int(1);
  if (common === "urr") {
    const c1 = gridProbability(req(plan, "params.c1"), "params.c1");
    const c2 = gridProbability(req(plan, "params.c2"), "params.c2");
    gridProbability(req(plan, "params.c3"), "params.c3");
    eps = Math.abs(log(c1) - log(c2));
    exact = () => lnFixed(div(fmax(frac(c1), frac(c2)), fmin(frac(c1), frac(c2))));
  } else {
    const t = gridProbability(req(plan, "params.theta"), "params.theta");
    const d1 = gridProbability(req(plan, "params.d1"), "params.d1");
    const d2 = gridProbability(req(plan, "params.d2"), "params.d2", false);
    eps = urapEpsilon(t, d1, d2, sens.length, size - sens.length);
    const nn = size - sens.length, ns = sens.length;
    exact = () => {
      const a1 = div(frac(t), frac(d1)), a0 = div(sub(one, frac(t)), sub(one, frac(d1)));
      const extra = nn ? [frac(d2)] : [];
      const classes = [[a1, ...extra], [a0, ...extra]];
      if (ns >= 2) classes.push([a1, a0, ...extra]);
      return lnFixed(fmax(...classes.map((c) => div(fmax(...c), fmin(...c)))));
    };
  }
  for (const key of Object.keys(plan.guarantee)) if (key.endsWith("epsilon")) checkClaim(eps, plan.guarantee[key], `guarantee.${key}`, 0, exact);
  checkClaim(eps, specEpsilon, "spec.epsilon", 0, exact);
  const claimed = plan.guarantee.sensitive ?? [];
  if (!Array.isArray(claimed)) throw new PlanError("guarantee.sensitive: must be a list of item indices");
  const protectedSet = new Set(plan.mechanism === "pum" ? plan.params.sensitive : sens);
  const missing = claimed.filter((x: unknown) => !protectedSet.has(x as number));
  if (missing.length) throw new PlanError(`guarantee.sensitive: claims items ${JSON.stringify(missing.slice(0, 5))} are protected but params.sensitive does not protect them`);
  if (plan.mechanism !== "pum") same("params.sensitive", [...sens].sort((x, y) => x - y), [...claimed].sort((x: number, y: number) => x - y));
}

/** PCKV: Theorem 2 eq. (3) (UE) and Theorem 3 eq. (6) (GRR). */
function pckv(ctx: Ctx, plan: any): void {
  notion(plan, "LDP");
  if (plan.spec.mechanism !== "pckv" && plan.spec.mechanism !== plan.mechanism) {
    throw new PlanError(`mechanism: must match the embedded spec ('${plan.spec.mechanism}') (got '${plan.mechanism}')`);
  }
  const specEpsilon = plan.spec.epsilon;
  if (!(typeof specEpsilon === "number" && specEpsilon > 0 && specEpsilon <= 20)) throw new PlanError(`spec.epsilon: must be a number in (0, 20] (got ${JSON.stringify(specEpsilon)})`);
  const d = domainSize(ctx, plan);
  const L = integer(ctx, req(plan, "params.padding_length"), "params.padding_length", 1);
  const specL = plan.spec.padding_length ?? 1;
  if (typeof specL === "number") same("params.padding_length", L, specL);
  else {
    const priv = specL && typeof specL === "object" ? specL.private : undefined;
    const bound = priv && typeof priv === "object" ? priv.max : plan.spec.max_padding_length ?? 64;
    if (specL !== "auto" && priv === undefined) throw new PlanError("spec.padding_length: must be an integer, \"auto\" or {private = ...}");
    if (typeof bound !== "number" || L > bound) throw new PlanError(`params.padding_length: must be <= the spec's bound ${bound} (got ${L})`);
  }
  const specDomainValue = plan.spec.domain === undefined && "keys" in plan.spec ? plan.spec.keys : plan.spec.domain;
  if (specDomainValue !== "data") checkSpecDomain(plan, specDomainValue, plan.spec.domain === undefined && "keys" in plan.spec ? "spec.keys" : "spec.domain");
  const a = gridProbability(req(plan, "params.a"), "params.a");
  let b: number;
  if (plan.mechanism === "pckv-grr") {
    b = number(req(plan, "params.b"), "params.b", { low: 0, high: 1, lowOpen: true, highOpen: true });
    const exactB = (1 - a) / (d + L - 1);
    if (!(Math.abs(b - exactB) <= 1e-12 * exactB)) throw new PlanError(`params.b: must equal (1-a)/(d+L-1) = ${exactB} (got ${b})`);
  } else b = gridProbability(req(plan, "params.b"), "params.b");
  const p = gridProbability(req(plan, "params.p"), "params.p");
  let ratio: number, e1: number;
  if (plan.mechanism === "pckv-ue") {
    ratio = (2 * p * a / b) / Math.min((1 - a) / (1 - b), 2 * (1 - p) * a / b);
    e1 = log(a) + log1p(-b) - log(b) - log1p(-a);
  } else {
    e1 = log(a) - log(b);
    b = (1 - a) / (d + L - 1);
    ratio = (a * p / L + (1 - 1 / L) * b / 2) / Math.min(a * (1 - p) / L + (1 - 1 / L) * b / 2, b / 2);
  }
  const e2 = log(p) - log1p(-p);
  const one = int(1), two = int(2), A = frac(a), Bf = frac(plan.params.b), Pf = frac(p);
  const exactRatio = (): Frac => {
    if (plan.mechanism === "pckv-ue") {
      return div(div(mul(mul(two, Pf), A), Bf), fmin(div(sub(one, A), sub(one, Bf)), div(mul(mul(two, sub(one, Pf)), A), Bf)));
    }
    const bb = div(sub(one, A), int(d + L - 1)), Lf = int(L), rest = mul(sub(one, div(one, Lf)), div(bb, two));
    return div(add(div(mul(A, Pf), Lf), rest), fmin(add(div(mul(A, sub(one, Pf)), Lf), rest), div(bb, two)));
  };
  const claim = checkClaim(log(ratio), req(plan, "guarantee.epsilon"), "guarantee.epsilon", 4, () => lnFixed(exactRatio()));
  const exact1 = () => lnFixed(plan.mechanism === "pckv-ue" ? div(mul(A, sub(one, Bf)), mul(Bf, sub(one, A))) : div(A, Bf));
  const exact2 = () => lnFixed(div(Pf, sub(one, Pf)));
  for (const where of ["guarantee", "params"]) {
    checkClaim(e1, req(plan, `${where}.epsilon1`), `${where}.epsilon1`, 4, exact1);
    checkClaim(e2, req(plan, `${where}.epsilon2`), `${where}.epsilon2`, 4, exact2);
  }
  checkClaim(log(ratio), req(plan, "spec.epsilon"), "spec.epsilon", 4, () => lnFixed(exactRatio()));
  void claim;
}

/** Longitudinal (memoized) channels: mechanisms/longitudinal/_numbers.py `Rounds`. */
function longitudinal(ctx: Ctx, plan: any): void {
  const gu = req(plan, "guarantee");
  if ("max_changes" in gu) {
    throw new PlanError("guarantee.max_changes: a plan of the earlier format claims max_changes x epsilon_perm over a lifetime, which is false once values change; re-plan the spec");
  }
  notion(plan, "longitudinal-LDP");
  const k = domainSize(ctx, plan);
  const T = integer(ctx, req(plan, "guarantee.rounds"), "guarantee.rounds", 1);
  const V = integer(ctx, req(plan, "guarantee.max_values"), "guarantee.max_values", 1, T);
  longitudinalPromises(ctx, plan);
  const p1 = gridProbability(req(plan, "params.p1"), "params.p1", false);
  const p2 = gridProbability(req(plan, "params.p2"), "params.p2", false);
  let q1: number, q2: number, positions = 1, grr = plan.mechanism === "l-grr";
  if (grr) {
    q1 = (1 - p1) / (k - 1);
    q2 = (1 - p2) / (k - 1);
  } else {
    q1 = gridProbability(req(plan, "params.q1"), "params.q1", false);
    q2 = gridProbability(req(plan, "params.q2"), "params.q2", false);
    positions = k;
  }
  const P = p1 * p2 + (1 - p1) * q2, Q = q1 * p2 + (1 - q1) * q2;
  const perm = grr ? log(p1 / q1) : log((p1 * (1 - q1)) / ((1 - p1) * q1));
  const one = grr ? log(P / Q) : log((P * (1 - Q)) / ((1 - P) * Q));
  const two = positions * (grr ? log(p2 / q2) : log(Math.max(p2 / q2, (1 - q2) / (1 - p2))));
  const pm: Record<string, number> = { epsilon: one, epsilon_perm: perm, epsilon_1: one, epsilon_2: two, epsilon_lifetime_one_value: perm };
  const I = int(1), fp1 = frac(p1), fp2 = frac(p2);
  const fq1 = grr ? div(sub(I, fp1), int(k - 1)) : frac(q1), fq2 = grr ? div(sub(I, fp2), int(k - 1)) : frac(q2);
  const fP = add(mul(fp1, fp2), mul(sub(I, fp1), fq2)), fQ = add(mul(fq1, fp2), mul(sub(I, fq1), fq2));
  const unary = (x: Frac, y: Frac): Frac => div(mul(x, sub(I, y)), mul(sub(I, x), y));
  const exactPerm = () => lnFixed(grr ? div(fp1, fq1) : unary(fp1, fq1));
  const exactOne = () => lnFixed(grr ? div(fP, fQ) : unary(fP, fQ));
  const exactTwo = () => BigInt(positions) * lnFixed(grr ? div(fp2, fq2) : fmax(div(fp2, fq2), div(sub(I, fq2), sub(I, fp2))));
  const exactOf: Record<string, () => bigint> = { epsilon: exactOne, epsilon_perm: exactPerm, epsilon_1: exactOne, epsilon_2: exactTwo, epsilon_lifetime_one_value: exactPerm };
  for (const [key, value] of Object.entries(pm)) checkClaim(value, gu[key], `guarantee.${key}`, 1, exactOf[key]);
  // the smallest float >= min(T eps_2, V eps_perm + floor(T (V-1)/V) eps_2) of the claims, exactly
  const m = Math.floor((T * (V - 1)) / V);
  let want = add(mul(int(V), frac(gu.epsilon_perm)), mul(int(m), frac(gu.epsilon_2)));
  if (V >= 2) want = fmin(want, mul(int(T), frac(gu.epsilon_2)));
  let lifetime = V >= 2 ? Math.min(V * gu.epsilon_perm + m * gu.epsilon_2, T * gu.epsilon_2) : V * gu.epsilon_perm + m * gu.epsilon_2;
  while (cmp(frac(lifetime), want) < 0) lifetime = nextUp(lifetime);
  while (cmp(frac(nextDown(lifetime)), want) >= 0) lifetime = nextDown(lifetime);
  const claimed = number(gu.epsilon_lifetime, "guarantee.epsilon_lifetime", { low: 0 });
  if (claimed < lifetime) throw new PlanError(`guarantee.epsilon_lifetime: claims ${claimed} but the sound bound is ${lifetime}`);
  if (number(gu.epsilon_lifetime_lower, "guarantee.epsilon_lifetime_lower", { low: 0 }) > claimed) {
    throw new PlanError("guarantee.epsilon_lifetime_lower: a lower bound above the plan's epsilon_lifetime");
  }
}

function maxOthers(v: number[]): number[] {
  return v.map((_, i) => Math.max(-Infinity, ...v.filter((__, j) => j !== i)));
}

/** IDUE / IDUE-PS: constraint (6) per level (MinID / AvgID) and Lemma 1's LDP epsilon (Gu et al., ICDE 2020). */
function idue(ctx: Ctx, plan: any): void {
  const levels = req(plan, "params.levels");
  if (!Array.isArray(levels) || !levels.length) throw new PlanError("params.levels: must be a non-empty list of levels");
  const m = plan.domain.size, labels: string[] | null = plan.domain.labels;
  const owner = new Array<number>(m).fill(-1);
  const a: number[] = [], b: number[] = [], e: number[] = [], sizes: number[] = [], names: string[] = [];
  levels.forEach((lv: any, j: number) => {
    names.push(String(lv.name));
    a.push(gridProbability(lv.a, `params.levels[${j}].a`));
    b.push(gridProbability(lv.b, `params.levels[${j}].b`));
    e.push(number(lv.epsilon, `params.levels[${j}].epsilon`, { low: 0, lowOpen: true }));
    if (!Array.isArray(lv.items)) throw new PlanError(`params.levels[${j}].items: must be a list`);
    if (integer(ctx, lv.size, `params.levels[${j}].size`, 1) !== lv.items.length) throw new PlanError(`params.levels[${j}].size: must be the number of items (${lv.items.length})`);
    sizes.push(lv.items.length);
    for (const item of lv.items) {
      const i = typeof item === "string" && labels ? labels.indexOf(item) : typeof item === "number" ? item : -1;
      if (!(i >= 0 && i < m) || owner[i] >= 0) throw new PlanError(`params.levels[${j}].items: item ${JSON.stringify(item)} is not a distinct item of the domain`);
      owner[i] = j;
    }
  });
  if (owner.some((o) => o < 0)) throw new PlanError("params.levels: every item of the domain must be in one level");
  // the embedded spec's levels: names, epsilons, and each item's level (or, for share specs, each level's size)
  const promised = idueLevels(plan);
  same("params.levels[*].name", names, promised.names);
  e.forEach((x, j) => {
    if (x !== promised.epsilons[j]) throw new PlanError(`params.levels[${j}].epsilon: must be the spec's epsilon ${promised.epsilons[j]} (got ${x})`);
  });
  if (promised.owner) {
    const moved = owner.findIndex((o, k) => o !== promised.owner![k]);
    if (moved >= 0) {
      throw new PlanError(`params.levels[${owner[moved]}].items: item ${JSON.stringify(labels ? labels[moved] : moved)} is in level '${names[owner[moved]]}' but the embedded spec puts it in level '${promised.names[promised.owner[moved]]}'`);
    }
  } else {
    sizes.forEach((size, j) => {
      if (size !== promised.counts[j]) throw new PlanError(`params.levels[${j}].items: must hold the spec's share of the domain, ${promised.counts[j]} items (got ${size})`);
    });
  }
  const notionName = plan.guarantee.notion;
  if (notionName !== "MinID-LDP" && notionName !== "AvgID-LDP") throw new PlanError(`guarantee.notion: must be 'MinID-LDP' or 'AvgID-LDP' (got ${JSON.stringify(notionName)})`);
  let dummy: number[] | null = null;
  const aa = [...a], bb = [...b], ee = [...e], ss = [...sizes];
  if (plan.mechanism === "idue-ps") {
    const L = integer(ctx, req(plan, "params.padding_length"), "params.padding_length", 1);
    if (plan.spec.padding_length !== undefined) same("params.padding_length", L, plan.spec.padding_length);
    const dm = req(plan, "params.dummy");
    dummy = [number(dm.epsilon, "params.dummy.epsilon", { low: 0, lowOpen: true }), gridProbability(dm.a, "params.dummy.a"), gridProbability(dm.b, "params.dummy.b")];
    ee.push(dummy[0]); aa.push(dummy[1]); bb.push(dummy[2]); ss.push(L);
    if (dummy[0] > Math.min(...e)) throw new PlanError(`params.dummy.epsilon: must be <= the smallest level epsilon ${Math.min(...e)} (Theorem 4)`);
  }
  const u = aa.map((x, i) => log1p((x - bb[i]) / bb[i])), w = aa.map((x, i) => log1p((x - bb[i]) / (1 - x)));
  let need: number[];
  if (notionName === "MinID-LDP") {
    const mu = Math.max(...u), mw = Math.max(...w);
    need = u.map((ui, i) => Math.max(ui + mw, mu + w[i]));
  } else {
    const o1 = maxOthers(w.map((x, i) => 2 * x - ee[i])), o2 = maxOthers(u.map((x, i) => 2 * x - ee[i]));
    need = u.map((ui, i) => Math.max(2 * ui + o1[i], 2 * w[i] + o2[i], ui + w[i]));
  }
  const scale = 4 * Math.max(...need.map(Math.abs), 1);
  const I = int(1);
  const U = aa.map((x, i) => div(frac(x), frac(bb[i]))), W = aa.map((x, i) => div(sub(I, frac(bb[i])), sub(I, frac(x))));
  const exactNeed = (i: number) => (notionName === "MinID-LDP" ? () => lnFixed(fmax(mul(U[i], fmax(...W)), mul(fmax(...U), W[i]))) : undefined);
  names.forEach((name, j) => checkClaim(need[j], e[j], `params.levels[${j}].epsilon`, scale, exactNeed(j)));
  if (dummy) checkClaim(need[names.length], dummy[0], "params.dummy.epsilon", scale, exactNeed(names.length));
  const jmin = need.slice(0, names.length).indexOf(Math.min(...need.slice(0, names.length)));
  const exactMin = notionName === "MinID-LDP" ? () => names.map((_, j) => exactNeed(j)!()).reduce((x, y) => (x < y ? x : y)) : undefined;
  void jmin;
  checkClaim(Math.min(...need.slice(0, names.length)), req(plan, "guarantee.epsilon"), "guarantee.epsilon", scale, exactMin);
  const claimed = req(plan, "guarantee.levels");
  if (typeof claimed !== "object" || claimed === null || Object.keys(claimed).sort().join("\u0000") !== [...names].sort().join("\u0000")) {
    throw new PlanError(`guarantee.levels: must map every level name ${JSON.stringify(names)} to its epsilon`);
  }
  names.forEach((name, j) => checkClaim(need[j], claimed[name], `guarantee.levels.${name}`, scale, exactNeed(j)));
  const cross = u.map((ui, i) => ui + maxOthers(w)[i]);
  const own = u.map((ui, i) => (ss[i] >= 2 ? ui + w[i] : -Infinity));
  const ldp = Math.max(0, ...cross.map((c, i) => Math.max(c, own[i])));
  const exactLdp = () => {
    let best: Frac = I;
    U.forEach((ui, i) => W.forEach((wj, j) => {
      if (i !== j || ss[i] >= 2) best = fmax(best, mul(ui, wj));
    }));
    return lnFixed(best);
  };
  for (const key of ["ldp_epsilon", "ldp_epsilon_lemma1"]) {
    if (key in plan.guarantee) checkClaim(ldp, plan.guarantee[key], `guarantee.${key}`, scale, exactLdp);
  }
}

/** The family check of each mechanism the client runs. */
export const FAMILY_CHECKS: Record<string, (ctx: Ctx, plan: any) => void> = {
  rr: pie, glh: pie, hr: hadamard, urr: uldp, urap: uldp, pum: uldp, "pckv-ue": pckv, "pckv-grr": pckv,
  "l-grr": longitudinal, "l-sue": longitudinal, "l-oue": longitudinal, "l-osue": longitudinal, "l-soue": longitudinal,
  idue, "idue-ps": idue, ...Object.fromEntries(NUMERIC_MECHANISMS.map((m) => [m, numericCheck])),
};

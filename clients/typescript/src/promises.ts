/**
 * What a plan's embedded spec promises (mechanisms/<family>/_promises.py): a plan whose params,
 * guarantee and domain were rewritten consistently still contradicts the spec it embeds.
 */
import { PlanError } from "./errors.js";
import { Ctx, integer, isReal, number, same } from "./numbers.js";
import { claimCovers, div, frac, int, lnFixed, mul, sub } from "./exact.js";

export const MAX_DOMAIN_SIZE = 2 ** 24;

function show(v: unknown): string {
  return (typeof v === "bigint" ? String(v) : JSON.stringify(v) ?? String(v)).slice(0, 40);
}

const isInt = (x: unknown): x is number => typeof x === "number" && Number.isInteger(x);

/** `[size, labels]` of a spec domain: a count (labels null) or a list of distinct labels. */
export function specDomain(value: unknown, field: string, high = MAX_DOMAIN_SIZE): [number, string[] | null] {
  if (typeof value === "bigint") throw new PlanError(`${field}: must be a count in 1..${high} (got ${value})`);
  if (isInt(value)) {
    if (!(value >= 1 && value <= high)) throw new PlanError(`${field}: must be a count in 1..${high} (got ${show(value)})`);
    return [value, null];
  }
  if (Array.isArray(value) && value.length <= MAX_DOMAIN_SIZE) {
    const labels = value.map((x) => (typeof x === "string" ? x : pyStr(x)));
    if (new Set(labels).size !== labels.length) throw new PlanError(`${field}: labels must be distinct`);
    return [labels.length, labels];
  }
  throw new PlanError(`${field}: must be a count or a list of labels (got ${typeof value})`);
}

function pyStr(x: unknown): string {
  return typeof x === "number" && Number.isInteger(x) ? String(x) : String(x);
}

/** The plan's `domain` is the spec's (size, then labels). */
export function checkDomain(plan: any, size: number, labels: string[] | null, field: string): void {
  same("domain.size", plan.domain.size, size);
  if (JSON.stringify(plan.domain.labels) !== JSON.stringify(labels)) {
    throw new PlanError(`domain.labels: must be the labels of the embedded ${field} (${labels === null ? "none" : labels.length})`);
  }
}

function recorded(plan: any, what: string): unknown {
  for (const entry of Array.isArray(plan.planning_inputs) ? plan.planning_inputs : []) {
    if (entry && typeof entry === "object" && entry.what === what) return entry.value;
  }
  throw new PlanError(`planning_inputs: the spec reads '${what}' from a data file; the plan must record its value`);
}

/** PIE (mechanisms/pie/_promises.py): returns the spec's targets. */
export function piePromises(plan: any): Record<string, number | null> {
  const spec = plan.spec;
  if (spec.mechanism !== "pie" && spec.mechanism !== plan.mechanism) throw new PlanError(`mechanism: must match the embedded spec (${show(spec.mechanism)}) (got '${plan.mechanism}')`);
  const [size, labels] = specDomain(spec.domain ?? spec.domain_size, "spec.domain", Number.MAX_SAFE_INTEGER);
  checkDomain(plan, size, labels, "spec.domain");
  let users = spec.users ?? spec.n;
  if (users && typeof users === "object") users = recorded(plan, "users (n)");
  if (!isInt(users)) throw new PlanError(`spec.users: must be an integer (got ${show(users)})`);
  same("guarantee.n", plan.guarantee.n, users);
  same("guarantee.releases", plan.guarantee.releases, spec.releases ?? 1);
  const target = spec.target;
  if (!target || typeof target !== "object") throw new PlanError("spec.target: must be an object (bayes_error, alpha_bits or epsilon)");
  let prior = target.max_prior;
  if (prior && typeof prior === "object") prior = recorded(plan, "target.max_prior");
  same("guarantee.max_prior", plan.guarantee.max_prior, prior === undefined || prior === null ? 1 / users : prior);
  const gMax = spec.g_max ?? 2 ** 31 - 1;
  if (plan.mechanism === "glh" && !(isInt(gMax) && (plan.params.g ?? 0) <= gMax)) throw new PlanError(`params.g: must be <= the spec's g_max = ${show(gMax)}`);
  const out: Record<string, number | null> = {};
  for (const key of ["epsilon", "alpha_bits", "bayes_error"]) {
    const v = target[key];
    if (v !== undefined && v !== null && !isReal(v)) throw new PlanError(`spec.target.${key}: must be a number`);
    out[key] = v ?? null;
  }
  out.epsilon_max = spec.epsilon_max ?? 30.0;
  return out;
}

/** Hadamard `keep_probability`: the grid rounding down of e^eps/(e^eps + 2B - 1), exactly (via ln bounds). */
export function keepProbabilityMatches(epsilon: number, B: number, P: number, others = 2 * B - 1, cap = 100 + Math.log(2 * B)): boolean {
  const G = 2 ** 48, s = P * G;
  if (!Number.isInteger(s) || s < 1 || s > G - 1) return false;
  const eps = Math.min(epsilon, cap);
  // floor(x G) = s  <=>  s (2B-1)/(G-s) <= e^eps < (s+1)(2B-1)/(G-s-1)   (s = G - 1: the cap)
  const lower = lnFixed(div(mul(int(s), int(others)), int(G - s)));
  if (!claimCovers(eps, lower)) return false;
  if (s === G - 1) return true;
  const upper = lnFixed(div(mul(int(s + 1), int(others)), int(G - s - 1)));
  return !claimCovers(eps, upper);
}

function keepProbabilityFloat(epsilon: number, B: number): number {
  const e = Math.exp(Math.min(epsilon, 100 + Math.log(2 * B)));
  const s = Math.floor((e / (e + 2 * B - 1)) * 2 ** 48);
  for (const t of [s, s - 1, s + 1]) if (keepProbabilityMatches(epsilon, B, t / 2 ** 48)) return t / 2 ** 48;
  return Math.min(s, 2 ** 48 - 1) / 2 ** 48;
}

export function blockSize(k: number, B: number): number {
  let b = 1;
  const need = Math.ceil(k / B);
  while (b <= need) b *= 2;
  return b;
}

/** The planner's `blocks = "auto"` (mechanisms/hadamard/_channel.py `auto_blocks`). */
export function autoBlocks(epsilon: number, k: number): number {
  let best = 1, bestL2 = Infinity, B = 1;
  for (;;) {
    const p = keepProbabilityFloat(epsilon, B), q = (1 - p) / (2 * B - 1), b = blockSize(k, B);
    if (p > q) {
      const d = p - q, l2 = k * ((2 * q) / (d * d)) + (1 / d) * Math.min(b - 1, k) - 1;
      if (l2 < bestL2) { best = B; bestL2 = l2; }
    }
    if (b === 2) return best;
    B *= 2;
  }
}

/** Hadamard (mechanisms/hadamard/_promises.py): returns spec.epsilon. */
export function hadamardPromises(plan: any): number {
  const spec = plan.spec;
  if (spec.mechanism !== plan.mechanism) throw new PlanError(`mechanism: must match the embedded spec (${show(spec.mechanism)}) (got '${plan.mechanism}')`);
  const epsilon = spec.epsilon;
  if (!isReal(epsilon) || !(epsilon > 0)) throw new PlanError(`spec.epsilon: must be a number > 0 (got ${show(epsilon)})`);
  if (plan.params.epsilon !== epsilon) throw new PlanError(`params.epsilon: must match the embedded spec (${epsilon}) (got ${show(plan.params.epsilon)})`);
  const [size, labels] = specDomain(spec.domain, "spec.domain");
  let blocks = spec.blocks ?? "auto";
  if (blocks === "auto" && size >= 2) blocks = autoBlocks(epsilon, size);
  if (plan.params.blocks !== blocks) throw new PlanError(`params.blocks: must match the embedded spec (${show(blocks)}) (got ${show(plan.params.blocks)})`);
  if (plan.domain.size !== size) throw new PlanError(`domain.size: must match the embedded spec (${size}) (got ${show(plan.domain.size)})`);
  checkDomain(plan, size, labels, "spec.domain");
  return epsilon;
}

function uldpSensitive(value: unknown, size: number, labels: string[] | null): number[] {
  if (isInt(value)) {
    if (!(value >= 1 && value <= size)) throw new PlanError(`spec.sensitive: must be a count in [1, ${size}] (got ${value})`);
    return Array.from({ length: value }, (_, i) => i);
  }
  if (!Array.isArray(value) || !value.length) throw new PlanError("spec.sensitive: must be a count or a non-empty list of items");
  const idx = value.map((item, j) => {
    const k = labels !== null ? labels.indexOf(pyStr(item)) : isInt(item) ? item : -1;
    if (!(k >= 0 && k < size)) throw new PlanError(`spec.sensitive[${j}]: must be an item of the spec's domain (got ${show(item)})`);
    return k;
  });
  if (new Set(idx).size !== idx.length) throw new PlanError("spec.sensitive: must list distinct items");
  return idx.sort((a, b) => a - b);
}

const sorted = (v: unknown): unknown => (Array.isArray(v) ? [...v].sort((a, b) => a - b) : v);

/** ULDP (mechanisms/uldp/_promises.py): returns spec.epsilon. */
export function uldpPromises(plan: any): number {
  const spec = plan.spec;
  same("mechanism", plan.mechanism, spec.mechanism);
  const epsilon = spec.epsilon;
  if (!isReal(epsilon) || !(epsilon > 0)) throw new PlanError(`spec.epsilon: must be a number > 0 (got ${show(epsilon)})`);
  const [size, labels] = specDomain(spec.domain, "spec.domain");
  checkDomain(plan, size, labels, "spec.domain");
  const sensitive = uldpSensitive(spec.sensitive, size, labels);
  same("params.sensitive", sorted(plan.params.sensitive ?? []), sensitive);
  same("guarantee.sensitive", sorted(plan.guarantee.sensitive ?? []), sensitive);
  if (spec.mechanism === "pum") {
    same("params.tags", plan.params.tags, spec.tags);
    same("params.common", plan.params.common, spec.common || "urr");
  }
  return epsilon;
}

/** Longitudinal (mechanisms/longitudinal/_promises.py). */
export function longitudinalPromises(ctx: Ctx, plan: any): void {
  const spec = plan.spec, gu = plan.guarantee;
  if (spec.mechanism !== "auto" && spec.mechanism !== plan.mechanism) throw new PlanError(`mechanism: must match the embedded spec (${show(spec.mechanism)}) (got '${plan.mechanism}')`);
  const [size, labels] = specDomain(spec.domain, "spec.domain");
  if (plan.domain.size !== size || JSON.stringify(plan.domain.labels) !== JSON.stringify(labels)) throw new PlanError(`domain: must be the embedded spec's domain (size ${size})`);
  const valuesKey = "max_changes" in spec && !("max_values" in spec) ? "max_changes" : "max_values";
  for (const [key, specKey] of [["rounds", "rounds"], ["max_values", valuesKey]]) {
    const want = integer(ctx, spec[specKey] ?? 1, `spec.${specKey}`, 1);
    if (integer(ctx, gu[key], `guarantee.${key}`, 1) !== want) throw new PlanError(`guarantee.${key}: must match the embedded spec (${want}) (got ${show(gu[key])})`);
  }
  if (spec.target !== undefined && spec.target !== null) {
    if (typeof spec.target !== "object") throw new PlanError("spec.target: must be a table with epsilon_lifetime");
    const cap = number(spec.target.epsilon_lifetime, "spec.target.epsilon_lifetime", { low: 0, lowOpen: true });
    if (number(gu.epsilon_lifetime, "guarantee.epsilon_lifetime", { low: 0 }) > cap) throw new PlanError(`guarantee.epsilon_lifetime: ${gu.epsilon_lifetime} exceeds the embedded spec.target.epsilon_lifetime = ${cap}`);
  }
  for (const key of ["epsilon_perm", "epsilon_1"]) {
    const cap = number(spec[key], `spec.${key}`, { low: 0, lowOpen: true });
    if (number(gu[key], `guarantee.${key}`, { low: 0 }) > cap) throw new PlanError(`guarantee.${key}: ${gu[key]} exceeds the embedded spec.${key} = ${cap}`);
  }
}

/** Largest-remainder split of `m` items by `shares` (at least one per level): the planner's rule. */
export function sharesToCounts(shares: number[], m: number): number[] {
  const raw = shares.map((s) => s * m);
  const counts = raw.map(Math.floor);
  let rest = m - counts.reduce((a, b) => a + b, 0);
  const order = raw.map((r, i) => [-(r - counts[i]), i]).sort((x, y) => x[0] - y[0] || x[1] - y[1]).map((x) => x[1]);
  for (const i of order) if (rest-- > 0) counts[i] += 1;
  for (let i = 0; i < counts.length; i++) {
    if (counts[i] === 0) {
      const j = counts.indexOf(Math.max(...counts));
      counts[j] -= 1;
      counts[i] = 1;
    }
  }
  return counts;
}

const IDUE_NOTIONS: Record<string, string> = { minid: "MinID-LDP", avgid: "AvgID-LDP" };

/**
 * IDUE (mechanisms/idue/_promises.py). Returns the spec's level names, epsilons, and either each
 * item's level (`items` on every level) or, for `share` specs, each level's size: the item
 * assignment of a share spec is numpy's seeded permutation, which this client does not port.
 */
export function idueLevels(plan: any): { names: string[]; epsilons: number[]; owner: number[] | null; counts: number[] } {
  const spec = plan.spec;
  for (const key of ["domain_csv", "item_levels_csv"]) if (key in spec) throw new PlanError(`spec.${key}: a plan embeds its spec with files inlined (domain list, level items)`);
  same("mechanism", plan.mechanism, spec.mechanism);
  same("guarantee.notion", plan.guarantee.notion, IDUE_NOTIONS[spec.notion ?? "minid"] ?? null);
  same("params.padding_length", plan.params.padding_length ?? null, spec.padding_length ?? null);
  const levels = spec.levels;
  if (!Array.isArray(levels) || !levels.length || !levels.every((l) => l && typeof l === "object")) throw new PlanError("spec.levels: must be a non-empty list of levels");
  const names = levels.map((l: any) => l.name), epsilons = levels.map((l: any) => l.epsilon);
  if (!names.every((n: unknown) => typeof n === "string" && n) || new Set(names).size !== names.length) throw new PlanError("spec.levels[*].name: must be distinct non-empty strings");
  if (!epsilons.every((e: unknown) => isReal(e) && e > 0)) throw new PlanError("spec.levels[*].epsilon: must be numbers > 0");
  if (levels.every((l: any) => l.items !== undefined && l.items !== null)) {
    const items: string[][] = levels.map((l: any, i: number) => {
      if (isInt(l.items) && l.items >= 1 && l.items <= MAX_DOMAIN_SIZE) {
        return l.items === 1 ? [String(l.name)] : Array.from({ length: l.items }, (_, k) => `${l.name}-${k + 1}`);
      }
      if (Array.isArray(l.items) && l.items.length) return l.items.map(pyStr);
      throw new PlanError(`spec.levels[${i}].items: must be a count >= 1 or a non-empty list of labels`);
    });
    let order = items.flat();
    if (spec.domain !== undefined && spec.domain !== null) {
      const [, given] = specDomain(spec.domain, "spec.domain");
      if (given === null || JSON.stringify([...given].sort()) !== JSON.stringify([...order].sort())) throw new PlanError("spec.domain: with 'items' on every level must list exactly the levels' items");
      order = given;
    }
    checkDomain(plan, order.length, order, "spec (levels and domain)");
    const index = new Map(order.map((lab, k) => [lab, k] as [string, number]));
    const owner = new Array<number>(order.length).fill(-1);
    items.forEach((level, j) => level.forEach((item) => {
      const k = index.get(item)!;
      if (owner[k] >= 0) throw new PlanError(`spec.levels[${j}].items: item '${item.slice(0, 40)}' is in two levels`);
      owner[k] = j;
    }));
    return { names, epsilons, owner, counts: items.map((l) => l.length) };
  }
  const shares = levels.map((l: any) => l.share);
  if (!shares.every((s: unknown) => isReal(s) && s > 0 && s <= 1) || Math.abs(shares.reduce((a: number, b: number) => a + b, 0) - 1) > 1e-9) {
    throw new PlanError("spec.levels[*].share: must be numbers in (0, 1] summing to 1");
  }
  const [m, labels] = specDomain(spec.domain, "spec.domain");
  if (m < levels.length) throw new PlanError(`spec.domain: must have at least one item per level (${levels.length})`);
  if (!isInt(spec.assignment_seed ?? 0)) throw new PlanError("spec.assignment_seed: must be an integer");
  checkDomain(plan, m, labels, "spec (levels and domain)");
  return { names, epsilons, owner: null, counts: sharesToCounts(shares, m) };
}
void sub; void frac;

/**
 * Numeric plans (duchi, piecewise, hybrid, square-wave): a finite channel on declared grids, ported from
 * mechanisms/numeric/ (runtime.py `NumericChannel.from_plan`, _channel.py, _formulas.py, _promises.py).
 *
 * The gate: params exactly the typed fields; the input grid the spec's `input_points` equal steps from -1 to 1
 * (numpy's linspace, bit for bit); numerators integers in [0, 2^48] (no float literals), each component's part
 * of a row summing to 2^48; no output reachable from one input and not from another; the report values and the
 * hybrid's weights recomputed from the formulas at `params.epsilon` (bit for bit, with the platform's
 * Math.exp / expm1: a libm differing from CPython's by one ulp would refuse an honest plan, on the safe side);
 * `guarantee.epsilon` at least ln(max/min) of the decisive column (float rounded up, else exactly in fixed
 * point) and at most the spec's budget.
 *
 * Perturbation (docs/REPORTS.md, "Sampling procedure"; vectors/reference.py `numeric`): clip to [low, high], map
 * onto [-1, 1], round at random to a grid neighbour (one Bernoulli of the 2^-48 rounding, half to even, of the
 * position), then one word per user for the component (hybrid only), then per component in order one word per
 * of its users for the output; a word's top 48 bits `u` pick the first cumulative sum above `u`.
 *
 * References: Duchi et al., JASA 2018, Sec. 4.2.3; Wang et al., ICDE 2019, Sec. III; Li et al., SIGMOD 2020,
 * Sec. 4; Mironov, CCS 2012 (finite outputs, probabilities on a grid).
 */
import { PlanError } from "./errors.js";
import { lnFixed } from "./exact.js";
import { Ctx, checkClaim, integer, number, req } from "./numbers.js";
import { Stream } from "./random.js";

export const NUMERIC_MECHANISMS = ["duchi", "piecewise", "hybrid", "square-wave"];
const SCALE = 2 ** 48;
const MAX_ENTRIES = 2 ** 20;
const PARAMS = ["epsilon", "low", "high", "clipping", "task", "input_grid", "output_values", "component_weights",
  "component_sizes", "numerators"];
/** The input grid of a `task = "distribution"` plan when the spec gives none (mechanisms/numeric/_promises.py). */
const DISTRIBUTION_INPUT_POINTS = 1025;

/** numpy.linspace(start, stop, num): `i * ((stop - start) / (num - 1)) + start`, the last point `stop`. */
export function linspace(start: number, stop: number, num: number): number[] {
  const step = (stop - start) / (num - 1);
  const out = Array.from({ length: num }, (_, i) => i * step + start);
  if (num > 1) out[num - 1] = stop;
  return out;
}

/** numpy.rint: to the nearest integer, halves to even. */
function rint(x: number): number {
  const r = Math.round(x);
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

const duchiBound = (e: number) => (Math.exp(e) + 1) / Math.expm1(e);
const piecewiseBound = (e: number) => (Math.exp(e / 2) + 1) / Math.expm1(e / 2);

function squareWaveBandwidth(e: number): number {
  const x = Math.exp(e);
  let numerator = x * (e - 1) + 1, denominator = 2 * x * (Math.expm1(e) - e);
  if (e < 1e-3) {
    numerator = e ** 2 / 2 + e ** 3 / 3;
    denominator = e ** 2 + 4 * e ** 3 / 3;
  }
  return numerator / denominator;
}

function hybridAlpha(e: number): number {
  const root = Math.sqrt(241);
  const star = Math.log((-5 + 2 * Math.cbrt(6353 - 405 * root) + 2 * Math.cbrt(6353 + 405 * root)) / 27);
  return e > star ? -Math.expm1(-e / 2) : 0;
}

function bandValues(mechanism: string, e: number, cells: number): number[] {
  if (mechanism === "piecewise") {
    const bound = piecewiseBound(e);
    const edges = linspace(-bound, bound, cells + 1);
    return edges.slice(0, -1).map((v, i) => (v + edges[i + 1]) / 2);
  }
  const b = squareWaveBandwidth(e), x = Math.exp(e);
  const p = x / (2 * b * x + 1), q = 1 / (2 * b * x + 1), slope = 2 * b * (p - q);
  const edges = linspace(-b, 1 + b, cells + 1);
  return edges.slice(0, -1).map((v, i) => (2 * ((v + edges[i + 1]) / 2 - q * (1 + 2 * b) / 2)) / slope - 1);
}

/** The report values and component weights a plan of `mechanism` at `e` must carry (`expected_layout`). */
function expectedLayout(mechanism: string, e: number, sizes: number[]): [number[], number[]] {
  const duchi = [duchiBound(e), -duchiBound(e)];
  if (mechanism === "duchi") return [duchi, [SCALE]];
  if (mechanism !== "hybrid") return [bandValues(mechanism, e, sizes[0]), [SCALE]];
  const alpha = rint(hybridAlpha(e) * SCALE);
  if (alpha === 0) return [duchi, [SCALE]];
  return [[...bandValues("piecewise", e, sizes[0]), ...duchi], [alpha, SCALE - alpha]];
}

function numberList(v: unknown, field: string): number[] {
  if (!Array.isArray(v)) throw new PlanError(`${field}: must be a list of numbers`);
  return v.map((x, i) => number(x, `${field}[${i}]`));
}

function intList(ctx: Ctx, v: unknown, field: string, low: number, high: number): number[] {
  if (!Array.isArray(v)) throw new PlanError(`${field}: must be a list of integers`);
  return v.map((x, i) => integer(ctx, x, `${field}[${i}]`, low, high));
}

/** The plan against its embedded spec (`numeric_promises`); returns the budget `guarantee.epsilon` may not exceed. */
function promises(ctx: Ctx, plan: any): number {
  const spec = plan.spec, p = plan.params, mechanism = plan.mechanism;
  const asked = spec.mechanism;
  if (!(NUMERIC_MECHANISMS.includes(asked) || asked === "numeric") || (asked !== "numeric" && asked !== mechanism)) {
    throw new PlanError(`mechanism: must match the embedded spec (${JSON.stringify(asked)}) (got '${mechanism}')`);
  }
  const range = spec.range;
  if (!Array.isArray(range) || range.length !== 2 || !range.every((v) => typeof v === "number" && Number.isFinite(v)) || !(range[0] < range[1])) {
    throw new PlanError(`spec.range: must be [low, high] with low < high (got ${JSON.stringify(range)?.slice(0, 60)})`);
  }
  if (p.low !== range[0] || p.high !== range[1]) {
    throw new PlanError(`params.low, params.high: must be the embedded spec.range [${range[0]}, ${range[1]}] (got [${p.low}, ${p.high}])`);
  }
  const task = spec.task ?? "mean";
  if (p.task !== task) throw new PlanError(`params.task: must match the embedded spec ('${task}')`);
  const points = spec.input_points ?? (task === "distribution" ? DISTRIBUTION_INPUT_POINTS : mechanism === "duchi" ? 2 : 65);
  const grid = p.input_grid;
  const want = typeof points === "number" && Number.isInteger(points) && !ctx.floatPaths.has("spec.input_points") && points >= 2 ? linspace(-1, 1, points) : null;
  if (want === null || !Array.isArray(grid) || grid.length !== want.length || grid.some((g, i) => g !== want[i])) {
    throw new PlanError(`params.input_grid: must be ${JSON.stringify(points)} equally spaced points from -1 to 1 (the embedded spec's input_points)`);
  }
  if ("epsilon" in spec) {
    const e = spec.epsilon;
    if (typeof e !== "number" || !(e > 0) || p.epsilon !== e) throw new PlanError(`params.epsilon: must match the embedded spec (${JSON.stringify(e)}) (got ${JSON.stringify(p.epsilon)})`);
    return e;
  }
  const target = spec.target;
  if (typeof target !== "object" || target === null || Array.isArray(target)) throw new PlanError("spec: needs epsilon or a [target] block");
  if ("epsilon" in target && target.epsilon !== p.epsilon) {
    throw new PlanError(`params.epsilon: must match the embedded spec.target.epsilon (${JSON.stringify(target.epsilon)}) (got ${JSON.stringify(p.epsilon)})`);
  }
  if (typeof p.epsilon !== "number" || !(p.epsilon > 0 && p.epsilon <= 100)) throw new PlanError(`params.epsilon: must be in (0, 100] (got ${JSON.stringify(p.epsilon)})`);
  return p.epsilon;
}

/** The gate of a numeric plan (`NumericChannel.from_plan`). */
export function numericCheck(ctx: Ctx, plan: any): void {
  const k: number = plan.domain.size;
  if (k < 2 || plan.domain.labels !== null) throw new PlanError(`domain: a numeric plan's domain is the input grid's size (>= 2, no labels) (got ${k})`);
  const p = plan.params;
  const keys = Object.keys(p);
  const unknown = keys.filter((key) => !PARAMS.includes(key)).sort();
  if (unknown.length) throw new PlanError(`params.${unknown[0].slice(0, 40)}: unknown field of a '${plan.mechanism}' plan`);
  for (const key of PARAMS) req(plan, `params.${key}`);
  const epsilon = number(p.epsilon, "params.epsilon", { low: 0, lowOpen: true });
  const low = number(p.low, "params.low"), high = number(p.high, "params.high");
  if (!(low < high)) throw new PlanError(`params.low, params.high: must be finite with low < high (got ${low}, ${high})`);
  if (p.clipping !== "clip") throw new PlanError(`params.clipping: must be 'clip' (got ${JSON.stringify(p.clipping)?.slice(0, 40)})`);
  if (p.task !== "mean" && p.task !== "distribution") throw new PlanError(`params.task: must be 'mean' or 'distribution' (got ${JSON.stringify(p.task)?.slice(0, 40)})`);
  const grid = numberList(p.input_grid, "params.input_grid");
  if (grid.length !== k) throw new PlanError(`params.input_grid: must hold domain.size = ${k} points (got ${grid.length})`);
  if (grid[0] !== -1 || grid[k - 1] !== 1 || grid.some((g, i) => i > 0 && !(g > grid[i - 1]))) {
    throw new PlanError(`params.input_grid: must be ${k} increasing numbers from -1 to 1`);
  }
  const notion = req(plan, "guarantee.notion");
  if (notion !== "LDP") throw new PlanError(`guarantee.notion: must be 'LDP' (got ${JSON.stringify(notion)?.slice(0, 40)})`);
  const budget = promises(ctx, plan);
  const values = numberList(p.output_values, "params.output_values");
  const weights = intList(ctx, p.component_weights, "params.component_weights", 0, SCALE);
  const sizes = intList(ctx, p.component_sizes, "params.component_sizes", 1, MAX_ENTRIES);
  const m = values.length;
  if (sizes.length !== weights.length || sizes.reduce((a, b) => a + b, 0) !== m || weights.reduce((a, b) => a + b, 0) !== SCALE || !sizes.length || k * m > MAX_ENTRIES) {
    throw new PlanError(`params: component_weights, component_sizes, output_values: weights >= 0 summing to 2^48, sizes >= 1 summing to the ${m} outputs, k m <= ${MAX_ENTRIES}`);
  }
  if (!Array.isArray(p.numerators) || p.numerators.length !== k * m) {
    throw new PlanError(`params.numerators: must hold k m = ${k * m} integers (got ${Array.isArray(p.numerators) ? p.numerators.length : typeof p.numerators})`);
  }
  const table = intList(ctx, p.numerators, "params.numerators", 0, SCALE);
  let start = 0;
  sizes.forEach((size, c) => {
    for (let i = 0; i < k; i++) {
      let sum = 0;
      for (let j = start; j < start + size; j++) sum += table[i * m + j];
      if (sum !== SCALE) throw new PlanError(`params.numerators[${i}]: component ${c} sums to ${sum}, not 2^48`);
    }
    start += size;
  });
  // the decisive column: the largest max/min over reachable columns (exact integers below 2^53)
  let best: [number, number] = [1, 1];
  start = 0;
  sizes.forEach((size, c) => {
    for (let j = start; j < start + size && weights[c] > 0; j++) {
      let hi = 0, lo = SCALE;
      for (let i = 0; i < k; i++) {
        hi = Math.max(hi, table[i * m + j]);
        lo = Math.min(lo, table[i * m + j]);
      }
      if (hi > 0 && lo === 0) throw new PlanError(`params.numerators: output ${j} is reachable from one input and not from another (infinite epsilon)`);
      if (hi > 0 && BigInt(hi) * BigInt(best[1]) > BigInt(best[0]) * BigInt(lo)) best = [hi, lo];
    }
    start += size;
  });
  const [wantValues, wantWeights] = expectedLayout(plan.mechanism, epsilon, sizes);
  if (wantWeights.length !== weights.length || wantWeights.some((w, c) => w !== weights[c])) {
    throw new PlanError(`params.component_weights: must be ${JSON.stringify(wantWeights)} for ${plan.mechanism} at params.epsilon`);
  }
  if (wantValues.length !== m || wantValues.some((v, j) => v !== values[j])) {
    throw new PlanError(`params.output_values: must be ${plan.mechanism}'s report values at params.epsilon for component_sizes ${JSON.stringify(sizes)}`);
  }
  const [hi, lo] = best;
  const realized = hi === lo ? 0 : Math.log1p((hi - lo) / lo);
  const claim = checkClaim(realized, req(plan, "guarantee.epsilon"), "guarantee.epsilon", 0, () => lnFixed([BigInt(hi), BigInt(lo)]));
  if (claim > budget) throw new PlanError(`guarantee.epsilon: ${claim} exceeds the embedded spec's budget ${budget}`);
}

function pick(s: Stream, cumulative: number[]): number {
  const u = Number(s.word() >> 16n);
  let j = 0;
  while (cumulative[j] <= u) j++;
  return j;
}

/** One call's reports `{y}` for values in user units (numbers; clipped to [low, high]). */
export function numericPerturb(s: Stream, p: any, numbers: number[]): { y: number[] } {
  const low: number = p.low, high: number = p.high, grid: number[] = p.input_grid, k = grid.length;
  const sizes: number[] = p.component_sizes, weights: number[] = p.component_weights, table: number[] = p.numerators;
  const m = sizes.reduce((a, b) => a + b, 0);
  numbers.forEach((v, i) => {
    if (typeof v !== "number" || !Number.isFinite(v)) throw new RangeError(`numbers[${i}]: must be a finite number (got ${v})`);
  });
  const clip = (x: number, a: number, b: number) => Math.min(Math.max(x, a), b);
  const xs = numbers.map((v) => clip((2.0 * (clip(v, low, high) - low)) / (high - low) - 1.0, -1.0, 1.0));
  const upper = xs.map((x) => {
    let i = 0;
    while (i < k && grid[i] < x) i++;
    return clip(i, 1, k - 1);
  });
  const t = xs.map((x, u) => clip((x - grid[upper[u] - 1]) / (grid[upper[u]] - grid[upper[u] - 1]), 0.0, 1.0));
  const up = xs.length ? s.bernoulli(t.map((ti) => rint(ti * SCALE) / SCALE)) : [];
  const rows = upper.map((u, i) => (up[i] ? u : u - 1));
  const cumulative = (row: number, from: number, size: number) => {
    const out: number[] = [];
    let total = 0;
    for (let j = from; j < from + size; j++) out.push((total += table[row * m + j]));
    return out;
  };
  if (sizes.length === 1) return { y: rows.map((r) => pick(s, cumulative(r, 0, m))) };
  let acc = 0;
  const cumW = weights.map((w) => (acc += w));
  const component = rows.map(() => pick(s, cumW));
  const y = new Array<number>(rows.length).fill(0);
  let from = 0;
  sizes.forEach((size, c) => {
    component.forEach((ci, i) => {
      if (ci === c) y[i] = from + pick(s, cumulative(rows[i], from, size));
    });
    from += size;
  });
  return { y };
}

/** Float helpers of mechanisms/_plan.py: `number`, `integer`, `round_up`, `check_claim` (no exact fallback: the client is at least as strict). */
import { PlanError } from "./errors.js";
import { claimCovers } from "./exact.js";

export const ROUNDING_ULPS = 16;

const view = new DataView(new ArrayBuffer(8));

/** The next float after `x` toward +infinity. */
export function nextUp(x: number): number {
  if (Number.isNaN(x) || x === Infinity) return x;
  if (x === 0) return Number.MIN_VALUE;
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  view.setBigUint64(0, x > 0 ? bits + 1n : bits - 1n);
  return view.getFloat64(0);
}

/** The next float after `x` toward -infinity. */
export function nextDown(x: number): number {
  return -nextUp(-x);
}

/** Python's `math.ulp`. */
export function ulp(x: number): number {
  const a = Math.abs(x);
  return nextUp(a) - a;
}

/** `x` moved toward +inf by `ulps` units in the last place of `max(|x|, scale)`, then one more step. */
export function roundUp(x: number, ulps = ROUNDING_ULPS, scale = 0): number {
  return nextUp(x + ulps * ulp(Math.max(Math.abs(x), scale)));
}

export interface Ctx {
  floatPaths: Set<string>;
}

function show(v: unknown): string {
  const s = typeof v === "string" ? `'${v}'` : typeof v === "bigint" ? String(v) : JSON.stringify(v) ?? String(v);
  return s.length > 80 ? s.slice(0, 80) : s;
}

export function isReal(v: unknown): v is number {
  return typeof v === "number" && Number.isFinite(v);
}

export function number(v: unknown, field: string, o: { low?: number; high?: number; lowOpen?: boolean; highOpen?: boolean } = {}): number {
  if (!isReal(v)) throw new PlanError(`${field}: must be a finite number (got ${show(v)})`);
  if (o.low !== undefined && (v < o.low || (o.lowOpen && v === o.low))) throw new PlanError(`${field}: must be ${o.lowOpen ? ">" : ">="} ${o.low} (got ${v})`);
  if (o.high !== undefined && (v > o.high || (o.highOpen && v === o.high))) throw new PlanError(`${field}: must be ${o.highOpen ? "<" : "<="} ${o.high} (got ${v})`);
  return v;
}

export function integer(ctx: Ctx, v: unknown, field: string, low?: number, high?: number): number {
  if (typeof v !== "number" || !Number.isInteger(v) || ctx.floatPaths.has(field)) throw new PlanError(`${field}: must be an integer (got ${show(v)})`);
  if (low !== undefined && v < low) throw new PlanError(`${field}: must be >= ${low} (got ${v})`);
  if (high !== undefined && v > high) throw new PlanError(`${field}: must be <= ${high} (got ${v})`);
  return v;
}

/** Refuse a claimed epsilon below `roundUp(actual)` (the float map, rounded toward the safe side). */
export function checkClaim(actual: number, claimed: unknown, field: string, scale = 0, exact?: () => bigint): number {
  const c = number(claimed, field, { low: 0 });
  if (!(c >= roundUp(actual, ROUNDING_ULPS, scale)) && !(exact && claimCovers(c, exact()))) {
    throw new PlanError(`${field}: claims ${c} but the plan's numbers give ${actual}; the client refuses a plan that claims more privacy than its numbers give`);
  }
  return c;
}

/** A probability on the 2^-48 grid, in (0, 1). */
export function gridProbability(v: unknown, field: string, open = true): number {
  const p = number(v, field, { low: 0, high: 1, lowOpen: open, highOpen: open });
  if (Math.floor(p * 2 ** 48) !== p * 2 ** 48) throw new PlanError(`${field}: must be a multiple of 2^-48 (got ${p})`);
  return p;
}

/** `a.b.c` of a plan, or PlanError naming the field. */
export function req(plan: any, dotted: string): any {
  let node = plan;
  for (const part of dotted.split(".")) {
    if (node === null || typeof node !== "object" || Array.isArray(node) || !(part in node)) {
      throw new PlanError(`${dotted}: required field is missing from the plan`);
    }
    node = node[part];
  }
  return node;
}

const text = (v: unknown) => JSON.stringify(v, (_, x) => (typeof x === "bigint" ? `${x}n` : x));

export function same(field: string, planValue: unknown, specValue: unknown): void {
  if (text(planValue) !== text(specValue)) {
    throw new PlanError(`${field}: must match the embedded spec (${show(specValue)}) (got ${show(planValue)})`);
  }
}

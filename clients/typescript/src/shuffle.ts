/**
 * `guarantee.shuffled` (mechanisms/_shuffle_gate.py `check_plan_shuffled`): the central claim of n
 * shuffled reports, its shape, its agreement with the spec's `[shuffle]` block, and its bound.
 * Ported: FMT21 Theorem 3.1 in closed form, and `epsilon >= epsilon0` (the shuffle is a
 * post-processing). Not ported: the numerical FMT21 Theorem 3.2 and the k-RR blanket sums, so a
 * claim below epsilon0 from those sources is refused here (on the safe side of the runtime).
 */
import { PlanError } from "./errors.js";

export const SOURCE_FMT_CLOSED = "Feldman, McMillan, Talwar, Hiding among the clones (FOCS 2021), Theorem 3.1";
export const SHUFFLED_FIELDS = ["n", "delta", "epsilon", "epsilon_lower", "source"];
export const MAX_SHUFFLE_N = 1e10;

/** FMT21 Theorem 3.1, rounded up by 1e-13 (relative); Infinity outside its range. */
export function fmt21ClosedForm(epsilon0: number, n: number, delta: number): number {
  if (n < 2 || epsilon0 > Math.log(n / (16 * Math.log(2 / delta))) * (1 - 1e-12)) return Infinity;
  const e0 = Math.exp(epsilon0);
  const inner = ((e0 - 1) / (e0 + 1)) * ((8 * Math.sqrt(e0 * Math.log(4 / delta))) / Math.sqrt(n) + (8 * e0) / n);
  return Math.log1p(inner) * (1 + 1e-13);
}

const isNum = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

function checkClaim(shuffled: any, epsilon0: number, block: any): string | null {
  const where = "guarantee.shuffled";
  if (!shuffled || typeof shuffled !== "object" || Array.isArray(shuffled)) return `${where}: must be an object with ${SHUFFLED_FIELDS.join(", ")}`;
  const missing = SHUFFLED_FIELDS.filter((k) => !(k in shuffled));
  const extra = Object.keys(shuffled).filter((k) => !SHUFFLED_FIELDS.includes(k)).sort();
  if (missing.length || extra.length) {
    return `${where}.${(missing.length ? missing : extra)[0]}: ${missing.length ? "required field is missing" : "unknown field"} (a central claim has exactly ${SHUFFLED_FIELDS.join(", ")})`;
  }
  const { n, delta, epsilon, epsilon_lower: lower, source } = shuffled;
  if (!Number.isInteger(n) || n < 2 || n > MAX_SHUFFLE_N) return `${where}.n: must be an integer in 2..${MAX_SHUFFLE_N} (got ${String(n).slice(0, 40)})`;
  for (const [key, value] of [["delta", delta], ["epsilon", epsilon], ["epsilon_lower", lower]] as [string, unknown][]) {
    if (!isNum(value)) return `${where}.${key}: must be a finite number (got ${String(value).slice(0, 40)})`;
  }
  if (!(delta > 0 && delta < 1)) return `${where}.delta: must be in (0, 1) (got ${delta})`;
  if (!(lower >= 0 && lower <= epsilon)) return `${where}.epsilon_lower: must be in [0, epsilon = ${epsilon}] (got ${lower})`;
  if (typeof source !== "string") return `${where}.source: must be a string`;
  if (block && (block.n !== n || block.delta !== delta)) return `${where}: n/delta ${n}/${delta} differ from the embedded spec's [shuffle] block ${block.n}/${block.delta}`;
  const sep = source.indexOf("; lower: ");
  if (sep < 0 || source.length > 400) return `guarantee.shuffled.source: must name the upper bound, then '; lower: ' and the lower bound`;
  const upper = source.slice(0, sep);
  if (upper === SOURCE_FMT_CLOSED) {
    const closed = fmt21ClosedForm(epsilon0, n, delta);
    if (!Number.isFinite(closed)) return `guarantee.shuffled.source: FMT21 Theorem 3.1 does not apply at epsilon0 = ${epsilon0}, n = ${n}, delta = ${delta}`;
    return epsilon >= Math.min(closed, epsilon0) ? null : `guarantee.shuffled.epsilon: ${epsilon} is below FMT21 Theorem 3.1's closed form ${Math.min(closed, epsilon0)} recomputed by the client`;
  }
  if (epsilon >= epsilon0) return null;
  return `guarantee.shuffled.epsilon: ${epsilon} is below the local epsilon ${epsilon0}, and this client does not recompute the bound '${upper.slice(0, 60)}' (it confirms FMT21 Theorem 3.1 only); it refuses a central claim it cannot check`;
}

/** Throws a PlanError unless the plan's central claims hold (or it has none). */
export function checkPlanShuffled(plan: any): void {
  const guarantee = plan.guarantee, block = plan.spec.shuffle;
  const fail = (message: string | null) => {
    if (message !== null) throw new PlanError(message);
  };
  if (!("shuffled" in guarantee) && !("shuffled_lifetime" in guarantee) && block === undefined) return;
  if (block === undefined || block === null) fail(`guarantee.${"shuffled" in guarantee ? "shuffled" : "shuffled_lifetime"}: present but the embedded spec has no [shuffle] block`);
  if (typeof block !== "object" || Array.isArray(block)) fail("spec.shuffle: must be an object with n and delta");
  if (!("shuffled" in guarantee)) fail("guarantee.shuffled: required by the embedded spec's [shuffle] block");
  const notion = guarantee.notion;
  if (notion === "ULDP") fail("guarantee.shuffled: ULDP plans release non-sensitive outputs as they are (no central claim)");
  const epsilon0 = notion === "MinID-LDP" ? guarantee.ldp_epsilon : guarantee.epsilon;
  if (!isNum(epsilon0) || !(epsilon0 > 0)) fail(`guarantee.shuffled: no plain local epsilon in a '${notion}' plan`);
  fail(checkClaim(guarantee.shuffled, epsilon0, block));
  const lifetime = guarantee.epsilon_lifetime;
  if (lifetime === undefined) {
    if ("shuffled_lifetime" in guarantee) fail("guarantee.shuffled_lifetime: present but the plan claims no epsilon_lifetime (one report per user)");
  } else {
    if (!("shuffled_lifetime" in guarantee)) fail("guarantee.shuffled_lifetime: required (the plan has several rounds and a [shuffle] block)");
    if (!isNum(lifetime) || !(lifetime > 0)) fail("guarantee.epsilon_lifetime: must be a positive number");
    const failure = checkClaim(guarantee.shuffled_lifetime, lifetime, block);
    fail(failure === null ? null : failure.replace("guarantee.shuffled", "guarantee.shuffled_lifetime"));
  }
  const central = plan.spec.target && typeof plan.spec.target === "object" ? plan.spec.target.central_epsilon : undefined;
  if (isNum(central) && !(guarantee.shuffled.epsilon <= central)) fail(`guarantee.shuffled.epsilon: ${guarantee.shuffled.epsilon} exceeds the spec's target.central_epsilon = ${central}`);
}

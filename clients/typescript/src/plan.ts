/**
 * The plan 2.0 envelope (mechanisms/_envelope.py `read_envelope`) and `loadPlan`: strict
 * JSON, the pinned fingerprint (SHA-256 of the canonical JSON, through WebCrypto), known
 * fields only, a bounded domain, finite numbers, `verification.holds`, then the family's
 * privacy map recomputed from the numbers (families.ts).
 */
import { PlanError } from "./errors.js";
import { Node, canonical, parseStrict } from "./json.js";
import { FAMILY_CHECKS } from "./families.js";
import { checkPlanShuffled } from "./shuffle.js";
import { Ctx } from "./numbers.js";

export const FORMAT_VERSION = "2.0";
export const MAX_DOMAIN_SIZE = 2 ** 24;
/**
 * Largest `domain.size` per mechanism (the runtime classes' `PlanFields.max_domain`: k-RR 2^62,
 * GLH 2^61 - 1), capped at 2^53 - 1: item indices are JavaScript numbers in this client, so a
 * larger domain is refused (on the safe side of the Python runtime).
 */
export const MAX_DOMAIN: Record<string, number> = { rr: Number.MAX_SAFE_INTEGER, glh: Number.MAX_SAFE_INTEGER,
  duchi: 2 ** 16, piecewise: 2 ** 16, hybrid: 2 ** 16, "square-wave": 2 ** 16 };
export const TOP_LEVEL_FIELDS = ["format_version", "mechanism", "domain", "params", "guarantee", "predicted", "baselines",
  "planning_inputs", "solver", "verification", "spec", "provenance"];
export const COMMON_GUARANTEE_FIELDS = ["notion", "epsilon", "shuffled", "shuffled_lifetime"];
const PIE = ["alpha_bits", "alpha_nats", "bayes_error_lower_bound", "theta", "alpha_mechanism_bits", "alpha_ldp_bits",
  "alpha_binding", "prior", "max_prior", "n", "releases", "sources"];
const IDUE = ["levels", "ldp_epsilon", "ldp_epsilon_lemma1", "ldp_epsilon_kind"];
const ULDP = ["sensitive", "protected_outputs", "invertible_outputs"];
const LONG = ["epsilon_perm", "epsilon_1", "rounds", "max_values", "epsilon_2", "epsilon_lifetime", "epsilon_lifetime_lower",
  "epsilon_lifetime_one_value", "sources", "max_changes"];
const PCKV = ["epsilon1", "epsilon2", "units", "composition"];
/** The `guarantee` claims each mechanism may carry besides the common ones (the runtime classes' PLAN_FIELDS). */
export const GUARANTEE_FIELDS: Record<string, string[]> = {
  rr: PIE, glh: PIE, hr: ["sources"], idue: IDUE, "idue-ps": [...IDUE, "set_budgets", "users_set_budgets"],
  "l-grr": LONG, "l-sue": LONG, "l-oue": LONG, "l-osue": LONG, "l-soue": LONG, "pckv-ue": PCKV, "pckv-grr": PCKV,
  duchi: ["sources"], piecewise: ["sources"], hybrid: ["sources"], "square-wave": ["sources"],
  urr: ULDP, urap: ULDP, pum: [...ULDP, "intermediate_sensitive", "user_sensitive", "user_indistinguishability_epsilon"],
};
/** Clock readings left out of the fingerprint (mechanisms/_plan.py `_NOT_CONTENT`): re-planning gives the same fingerprint. */
export const NOT_CONTENT: [string, string][] = [["provenance", "created_at"], ["solver", "time_seconds"]];

export interface LoadOptions {
  /** The pinned `"sha256:<64 hex>"` (or bare hex, any case): another plan is refused. */
  fingerprint?: string;
}

/** A loaded, checked plan. */
export interface LoadedPlan {
  readonly plan: any;
  readonly mechanism: string;
  /** 64 lowercase hex digits. */
  readonly fingerprint: string;
}

function subtle(): SubtleCrypto {
  const c = (globalThis as any).crypto;
  if (!c?.subtle) throw new Error("WebCrypto (crypto.subtle) is not available: Node 18 needs globalThis.crypto (the CLI sets it)");
  return c.subtle;
}

/** SHA-256 hex of the plan's canonical JSON (Python `json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=True)`). */
export async function fingerprintOf(node: Node): Promise<string> {
  let content = node;
  if (node.kind === "object" && NOT_CONTENT.length) {
    content = { kind: "object", entries: node.entries.map(([k, v]) => {
      const drop = NOT_CONTENT.filter(([block]) => block === k).map(([, key]) => key);
      return [k, drop.length && v.kind === "object" ? { kind: "object", entries: v.entries.filter(([kk]) => !drop.includes(kk)) } : v] as [string, Node];
    }) };
  }
  const bytes = new TextEncoder().encode(canonical(content));
  const digest = new Uint8Array(await subtle().digest("SHA-256", bytes));
  return Array.from(digest, (x) => x.toString(16).padStart(2, "0")).join("");
}

function isObject(v: unknown): boolean {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function readDomain(ctx: Ctx, plan: any, high: number): void {
  const domain = plan.domain;
  if (!isObject(domain)) throw new PlanError("domain: must be an object with 'size' and 'labels'");
  for (const key of ["size", "labels"]) if (!(key in domain)) throw new PlanError(`domain.${key}: required field is missing from the plan`);
  const extra = Object.keys(domain).filter((k) => k !== "size" && k !== "labels").sort();
  if (extra.length) throw new PlanError(`domain.${extra[0].slice(0, 40)}: unknown field (a domain has exactly 'size' and 'labels')`);
  const size = domain.size;
  if (typeof size !== "number" || !Number.isInteger(size) || ctx.floatPaths.has("domain.size") || size < 1 || size > high) {
    throw new PlanError(`domain.size: must be an integer in 1..${high} (the client reads domains of at most ${high} items for this mechanism) (got ${String(size).slice(0, 40)})`);
  }
  const labels = domain.labels;
  if (labels === null) return;
  if (!Array.isArray(labels) || labels.length !== size) throw new PlanError(`domain.labels: must be null or a list of domain.size = ${size} labels`);
  const seen = new Set<string>();
  labels.forEach((label, k) => {
    if (typeof label !== "string") throw new PlanError(`domain.labels[${k}]: must be a string`);
    if (seen.has(label)) throw new PlanError(`domain.labels[${k}]: label '${label.slice(0, 40)}' appears twice (labels must be distinct)`);
    seen.add(label);
  });
}

function checkFingerprint(actual: string, pinned: unknown): void {
  if (pinned === undefined || pinned === null) return;
  if (typeof pinned !== "string") throw new PlanError(`fingerprint: must be a string 'sha256:<64 hex digits>' (got ${typeof pinned})`);
  const text = pinned.trim().toLowerCase();
  const digest = text.startsWith("sha256:") ? text.slice(7) : text;
  if (!/^[0-9a-f]{64}$/.test(digest)) throw new PlanError(`fingerprint: must be 'sha256:' followed by 64 hex digits (got '${pinned.slice(0, 80)}')`);
  if (digest !== actual) {
    throw new PlanError(`fingerprint: the plan's fingerprint is sha256:${actual}, not the pinned sha256:${digest}; the client refuses a plan other than the one it was shipped`);
  }
}

/**
 * Read plan text, check it as the numpy runtime's `load()` does, and return it.
 *
 * @throws PlanError one line naming the field, the rule and the value.
 */
export async function loadPlan(text: string, options: LoadOptions = {}): Promise<LoadedPlan> {
  if (typeof text !== "string") throw new PlanError("<plan>: loadPlan reads the plan's JSON text");
  const parsed = parseStrict(text);
  const plan = parsed.value;
  const ctx: Ctx = { floatPaths: parsed.floatPaths };
  if (!isObject(plan)) throw new PlanError("<plan>: a plan must be a JSON object");
  const version = plan.format_version;
  if (version !== FORMAT_VERSION || ctx.floatPaths.has("format_version")) {
    throw new PlanError(`format_version: must be exactly "${FORMAT_VERSION}" (got ${JSON.stringify(version ?? null)}); this client reads plan format ${FORMAT_VERSION} only`);
  }
  const fingerprint = await fingerprintOf(parsed.node);
  checkFingerprint(fingerprint, options.fingerprint);
  const unknown = Object.keys(plan).filter((k) => !TOP_LEVEL_FIELDS.includes(k));
  if (unknown.length) throw new PlanError(`${unknown[0].slice(0, 40)}: unknown top-level field (a plan 2.0 has exactly ${TOP_LEVEL_FIELDS.join(", ")})`);
  const missing = TOP_LEVEL_FIELDS.filter((k) => !(k in plan));
  if (missing.length) throw new PlanError(`${missing[0]}: required field is missing from the plan`);
  const mechanism = plan.mechanism;
  if (typeof mechanism !== "string" || !(mechanism in FAMILY_CHECKS)) {
    throw new PlanError(`mechanism: this client runs ${Object.keys(FAMILY_CHECKS).join(", ")} plans (got ${JSON.stringify(mechanism)?.slice(0, 40)})`);
  }
  readDomain(ctx, plan, MAX_DOMAIN[mechanism] ?? MAX_DOMAIN_SIZE);
  for (const key of ["params", "guarantee", "verification", "spec"]) if (!isObject(plan[key])) throw new PlanError(`${key}: must be an object`);
  const allowed = new Set([...COMMON_GUARANTEE_FIELDS, ...GUARANTEE_FIELDS[mechanism]]);
  const extra = Object.keys(plan.guarantee).filter((k) => !allowed.has(k)).sort();
  if (extra.length) {
    throw new PlanError(`guarantee.${extra[0].slice(0, 40)}: unknown claim for a '${mechanism}' plan (known: ${[...allowed].sort().join(", ")}); the client refuses claims it cannot check`);
  }
  const block = plan.verification;
  if (typeof block.holds !== "boolean" || typeof block.message !== "string") throw new PlanError("verification: must be an object with a boolean 'holds' and a string 'message'");
  if (block.holds !== true) throw new PlanError(`verification.holds: must be true: the client runs only verified plans (got ${block.holds})`);
  checkPlanShuffled(plan);
  FAMILY_CHECKS[mechanism](ctx, plan);
  return Object.freeze({ plan, mechanism, fingerprint });
}

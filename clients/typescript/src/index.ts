/**
 * ldpplan client (browser entry: an ES module without Node-only imports).
 *
 *   const plan = await loadPlan(text, { fingerprint: "sha256:..." });
 *   const client = new Client(plan, { memo: storage });
 *   const reports = client.perturb({ items: [3] });
 */
import { LoadedPlan } from "./plan.js";
import { CryptoSource, ByteSource, Stream } from "./random.js";
import { Inputs, MapStorage, MemoStorage, Reports, perturbWith } from "./perturb.js";

export { loadPlan, fingerprintOf, FORMAT_VERSION, MAX_DOMAIN_SIZE } from "./plan.js";
export type { LoadedPlan, LoadOptions } from "./plan.js";
export { PlanError } from "./errors.js";
export { CryptoSource, FixedSource, Stream, pack, unpack, hexToBytes } from "./random.js";
export type { ByteSource } from "./random.js";
export { MapStorage, perturbWith, reportsToJSON } from "./perturb.js";
export type { Inputs, MemoStorage, Reports } from "./perturb.js";

export interface ClientOptions {
  /** Where longitudinal plans keep each (user, value)'s permanent response (default: in memory). */
  memo?: MemoStorage;
  /** Randomness (default: `crypto.getRandomValues`); the test vectors give fixed bytes. */
  source?: ByteSource;
  /** GLH's hash-seed randomness (default: `source`). */
  seeds?: ByteSource;
}

/** Perturbs inputs for one loaded plan. */
export class Client {
  readonly memo: MemoStorage;
  private readonly coins: Stream;
  private readonly seeds: Stream;
  constructor(readonly loaded: LoadedPlan, options: ClientOptions = {}) {
    this.memo = options.memo ?? new MapStorage();
    const source = options.source ?? new CryptoSource();
    this.coins = new Stream(source);
    this.seeds = new Stream(options.seeds ?? source);
  }
  /** The report columns of docs/REPORTS.md for these inputs (memo keys are prefixed with the plan's fingerprint). */
  perturb(inputs: Inputs): Reports {
    return perturbWith(this.loaded.plan, inputs, { coins: this.coins, seeds: this.seeds }, this.memo, `${this.loaded.fingerprint}:`);
  }
}

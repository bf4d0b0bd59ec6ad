#!/usr/bin/env node
/**
 * The audit protocol (docs/AUDIT.md, planner/auditing/external.py) for this client:
 *
 *   node dist/cli.js PLAN SEED INPUT OUTPUT [MEMO]
 *
 * loads PLAN with every check of `loadPlan` (exit 2 with one line if refused), perturbs each
 * JSON line of INPUT with `crypto.getRandomValues` (SEED is ignored: this client behaves as a
 * device does), and writes one report per line to OUTPUT (packed columns as byte arrays). For
 * memoized plans MEMO is a directory holding `memo.json`, bound to the plan's fingerprint.
 * Exit 1: a user over the plan's `guarantee.max_values`.
 */
import { readFileSync, writeFileSync, renameSync, existsSync } from "node:fs";
import { join } from "node:path";
import { webcrypto } from "node:crypto";
import { Client, MapStorage, PlanError, loadPlan, reportsToJSON } from "./index.js";

if (!(globalThis as any).crypto) (globalThis as any).crypto = webcrypto; // Node 18

const PACKED = new Set(["bits", "nonzero", "negative"]);

function fail(message: string, code: number): never {
  process.stderr.write(`ldpplan-client: ${message}\n`);
  process.exit(code);
}

async function main(): Promise<void> {
  const [planPath, , inputPath, outputPath, memoDir] = process.argv.slice(2);
  if (outputPath === undefined) fail("usage: node cli.js PLAN SEED INPUT OUTPUT [MEMO]", 2);
  let loaded;
  try {
    loaded = await loadPlan(readFileSync(planPath, "utf8"));
  } catch (err) {
    fail(err instanceof PlanError ? err.message : String(err), 2);
  }
  const mech = loaded.mechanism;
  const lines = readFileSync(inputPath, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
  const memoPath = memoDir === undefined ? null : join(memoDir, "memo.json");
  const memo = new MapStorage();
  if (memoPath && existsSync(memoPath)) {
    const stored = JSON.parse(readFileSync(memoPath, "utf8"));
    if (stored.format !== "ldpplan-ts-memo/1" || stored.plan_fingerprint !== loaded.fingerprint) fail(`${memoPath}: a memo of another plan`, 2);
    for (const [k, v] of Object.entries(stored.entries as Record<string, string>)) memo.set(k, v);
  }
  const client = new Client(loaded, { memo });
  const reports: Record<string, unknown>[] = new Array(lines.length);
  const emit = (rows: number[], out: Record<string, any>) => {
    rows.forEach((row, j) => {
      const line: Record<string, unknown> = {};
      for (const [col, values] of Object.entries(out)) {
        const v = values[j];
        line[col] = PACKED.has(col) ? Array.from({ length: v.length / 2 }, (_, b) => parseInt(v.substr(2 * b, 2), 16)) : v;
      }
      reports[row] = line;
    });
  };
  const all = lines.map((_, i) => i);
  try {
    if (mech.startsWith("l-")) {
      const rounds = [...new Set(lines.map((l) => l.round))];
      for (const round of rounds) {
        const rows = all.filter((i) => lines[i].round === round);
        emit(rows, client.perturb({ users: rows.map((i) => lines[i].user), values: rows.map((i) => lines[i].item), round }));
      }
    } else if (mech === "idue-ps") emit(all, client.perturb({ items: lines.map((l) => l.items) }));
    else if (mech.startsWith("pckv")) emit(all, client.perturb({ pairs: lines.map((l) => l.keys.map((k: number, j: number) => [k, l.values[j]])) }));
    else if (["duchi", "piecewise", "hybrid", "square-wave"].includes(mech)) emit(all, client.perturb({ numbers: lines.map((l) => l.value) }));
    else if (mech === "pum") emit(all, client.perturb({ items: lines.map((l) => l.item), tags: lines.map((l) => l.tag ?? -1) }));
    else emit(all, client.perturb({ items: lines.map((l) => l.item) }));
  } catch (err) {
    fail(String((err as Error).message ?? err), err instanceof RangeError ? 1 : 2);
  }
  if (memoPath) {
    const tmp = `${memoPath}.tmp`;
    writeFileSync(tmp, JSON.stringify({ format: "ldpplan-ts-memo/1", plan_fingerprint: loaded.fingerprint, entries: Object.fromEntries(memo.map) }));
    renameSync(tmp, memoPath);
  }
  writeFileSync(outputPath, reports.map((r) => reportsToJSON(r as any)).join("\n") + "\n");
}

main();

// The gate: the client refuses every tampered plan of tests/test_plan_gate.py and loads the honest
// ones (fixtures written by scripts/make_gate_fixtures.py, each checked against the Python load()).
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { PlanError, loadPlan } from "../src/index.js";

const REPO = fileURLToPath(new URL("../../../../", import.meta.url));
const DIR = process.env.LDPPLAN_GATE_FIXTURES ?? join(REPO, "clients", "typescript", "test", "fixtures", "gate");

function fixtures(): { file: string; accept: boolean; case: string; fingerprint: string | null; python: string | null; client_refuses: string | null }[] | null {
  if (!existsSync(join(DIR, "manifest.json"))) {
    const python = process.env.LDPPLAN_PYTHON ?? "python3";
    const run = spawnSync(python, [join(REPO, "clients/typescript/scripts/make_gate_fixtures.py"), DIR], { cwd: REPO, encoding: "utf8" });
    if (run.status !== 0) return null;
  }
  return JSON.parse(readFileSync(join(DIR, "manifest.json"), "utf8"));
}

const manifest = fixtures();

test("gate fixtures exist (scripts/make_gate_fixtures.py with ldpplan installed)", (t) => {
  if (manifest === null) {
    t.skip(`SKIPPED LOUDLY: no gate fixtures in ${DIR} and ${process.env.LDPPLAN_PYTHON ?? "python3"} could not write them (ldpplan not installed?)`);
    return;
  }
  assert.ok(manifest.length > 100 && manifest.some((m) => m.accept) && manifest.some((m) => !m.accept));
});

for (const entry of manifest ?? []) {
  const what = entry.accept ? "loads" : entry.client_refuses ? `refused on the safe side (${entry.client_refuses})` : "refused";
  test(`gate ${entry.file} (${entry.case}): ${what}`, async () => {
    const text = readFileSync(join(DIR, entry.file), "utf8");
    const options = entry.fingerprint === null ? {} : { fingerprint: entry.fingerprint };
    if (entry.accept) {
      const loaded = await loadPlan(text, options);
      assert.equal(typeof loaded.fingerprint, "string");
      return;
    }
    await assert.rejects(loadPlan(text, options), (err: unknown) => {
      assert.ok(err instanceof PlanError, `not a PlanError: ${err}`);
      assert.ok(!err.message.includes("\n"), "one line");
      if (entry.client_refuses) assert.match(err.message, /does not recompute the bound/);
      return true;
    }, `the Python runtime refuses it: ${entry.python}`);
  });
}

// Every vector under vectors/<plan format>/ reproduced bit for bit from its plan, inputs and bytes,
// every byte consumed, and the memo after each longitudinal round equal to the vector's.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { FixedSource, Stream, hexToBytes, unpack } from "../src/random.js";
import { MapStorage, perturbWith, reportsToJSON } from "../src/perturb.js";
import { Client, loadPlan } from "../src/index.js";
import { parseStrict, canonical } from "../src/json.js";

export const REPO = fileURLToPath(new URL("../../../../", import.meta.url));
const DIR = join(REPO, "vectors", "2.0");

const files = existsSync(DIR) ? readdirSync(DIR).filter((f) => f.endsWith(".json")).sort() : [];

test("the vectors folder exists and holds vectors", () => {
  assert.ok(files.length >= 20, `found ${files.length} vectors in ${DIR}`);
});

for (const file of files) {
  test(`vector ${file}`, async () => {
    const text = readFileSync(join(DIR, file), "utf8");
    const vector = JSON.parse(text);
    const root = parseStrict(text).node;
    const planNode = root.kind === "object" ? root.entries.find(([k]) => k === "plan")![1] : root;
    // the plan's text keeps its number literals (1.0 stays a float), so its fingerprint is the vector's
    const plan = { plan: parseStrict(canonical((parseStrict(text).node as any).entries.find(([k]: [string]) => k === "plan")[1])).value };
    const rootNode = parseStrict(text).node as any;
    const callsNode = rootNode.entries.find(([k]: [string]) => k === "calls")[1];
    const memo = new MapStorage();
    for (const [c, call] of vector.calls.entries()) {
      const sources: Record<string, FixedSource> = {};
      for (const [name, hex] of Object.entries(call.random as Record<string, string>)) sources[name] = new FixedSource(hexToBytes(hex));
      const streams = { coins: new Stream(sources.coins), seeds: sources.seeds ? new Stream(sources.seeds) : undefined };
      const reports = perturbWith(plan.plan, call.inputs, streams, memo, "");
      // compared as canonical JSON of the vector's own number literals (GLH seeds of a 2^61 - 1 prime exceed 2^53)
      const want = (callsNode as any).items[c].entries.find(([k]: [string]) => k === "reports")[1];
      assert.equal(canonical(parseStrict(reportsToJSON(reports)).node), canonical(want), `call ${c}`);
      for (const [name, src] of Object.entries(sources)) assert.equal(src.remaining, 0, `call ${c}: stream ${name} not used up`);
      if (call.memo_after) {
        const got = [...memo.map.entries()].filter(([k]) => !k.startsWith("#")).map(([k, v]) => {
          const [user, value] = k.split(":").map(Number);
          return { user, value, permanent: vector.mechanism === "l-grr" ? Number(v) : v };
        }).sort((x, y) => x.user - y.user || x.value - y.value);
        assert.deepEqual(got, call.memo_after, `call ${c}: memo`);
      }
    }
  });
}
for (const file of files) {
  test(`vector ${file}: its plan loads, pinned to the vector's fingerprint`, async () => {
    const text = readFileSync(join(DIR, file), "utf8");
    const root = parseStrict(text).node;
    const planNode = root.kind === "object" ? root.entries.find(([k]) => k === "plan")![1] : root;
    const fingerprint = JSON.parse(text).plan_fingerprint;
    // the plan's canonical text keeps its number literals (1.0 stays a float), so its fingerprint is the vector's
    const loaded = await loadPlan(canonical(planNode), { fingerprint: "sha256:" + fingerprint });
    assert.equal(loaded.fingerprint, fingerprint);
    // the public API: a Client over the vector's bytes reproduces the first call
    const call = JSON.parse(text).calls[0];
    const seeds = call.random.seeds ? new FixedSource(hexToBytes(call.random.seeds)) : undefined;
    const client = new Client(loaded, { source: new FixedSource(hexToBytes(call.random.coins)), seeds });
    const callsNode = (parseStrict(text).node as any).entries.find(([k]: [string]) => k === "calls")[1];
    const want = callsNode.items[0].entries.find(([k]: [string]) => k === "reports")[1];
    assert.equal(canonical(parseStrict(reportsToJSON(client.perturb(call.inputs))).node), canonical(want));
  });
}
void unpack;

// Property tests (fast-check): the samplers against their definitions, the canonical JSON, packing, pinning.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { FixedSource, Stream, pack, unpack } from "../src/random.js";
import { canonical, parseStrict, pyFloatRepr } from "../src/json.js";
import { loadPlan } from "../src/plan.js";
import { nextUp } from "../src/numbers.js";

const le = (words: bigint[]) => {
  const out = new Uint8Array(words.length * 8);
  words.forEach((w, i) => { for (let b = 0; b < 8; b++) out[i * 8 + b] = Number((w >> BigInt(8 * b)) & 0xffn); });
  return out;
};
const word = fc.bigUintN(64);

test("bernoulli(k / 2^48) is [U < k] for U = byte * 2^40 + (refinement word >> 24) on a tie", () => {
  fc.assert(fc.property(fc.integer({ min: 0, max: 2 ** 48 }), word, word, (k, w0, w1) => {
    const src = new FixedSource(le([w0, w1]));
    const [bit] = new Stream(src).bernoulli([k / 2 ** 48]);
    const r = Number(w0 & 0xffn), top = Math.floor(k / 2 ** 40);
    const tie = top < 256 && r === top;
    const want = tie ? Number(w1 >> 24n) < k % 2 ** 40 : r < top;
    assert.equal(bit, want ? 1 : 0);
    assert.equal(src.pos, tie ? 16 : 8); // one word, and one more on a tie
  }));
});

test("below(m) is the first word under 2^64 - (2^64 mod m), mod m (modulo rejection)", () => {
  fc.assert(fc.property(fc.integer({ min: 1, max: 2 ** 53 }), fc.array(word, { minLength: 1, maxLength: 4 }), (m, words) => {
    const limit = (1n << 64n) - ((1n << 64n) % BigInt(m));
    const first = words.findIndex((w) => w < limit);
    fc.pre(first >= 0);
    const src = new FixedSource(le(words));
    const [v] = new Stream(src).below([m]);
    assert.equal(v, Number(words[first] % BigInt(m)));
    assert.equal(src.pos, 8 * (first + 1));
  }));
});

test("pack and unpack are inverse; bit j sits at bit j % 8 of byte j / 8", () => {
  fc.assert(fc.property(fc.array(fc.integer({ min: 0, max: 1 }), { minLength: 1, maxLength: 70 }), (bits) => {
    const hex = pack(bits);
    assert.equal(hex.length, 2 * Math.ceil(bits.length / 8));
    assert.deepEqual(unpack(hex, bits.length), bits);
    bits.forEach((b, j) => assert.equal((parseInt(hex.substr((j >> 3) * 2, 2), 16) >> (j & 7)) & 1, b));
  }));
});

test("Python's float repr: round-trips, shortest digits, fixed in [1e-4, 1e16), exponent of two digits at least", () => {
  fc.assert(fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
    const text = pyFloatRepr(x);
    assert.ok(Object.is(Number(text), x), `${x} -> ${text}`);
    assert.match(text, /^-?(\d+\.\d+|\d(\.\d+)?e[+-]\d{2,3})$/);
    const a = Math.abs(x);
    if (a !== 0) assert.equal(text.includes("e"), !(a >= 1e-4 && a < 1e16));
  }));
  for (const [x, want] of [[1e-5, "1e-05"], [1e16, "1e+16"], [0.0001, "0.0001"], [123.0, "123.0"], [1.5e300, "1.5e+300"], [-0.0, "-0.0"]] as [number, string][]) {
    assert.equal(pyFloatRepr(x), want);
  }
});

test("canonical JSON is a fixed point and keeps integer and float literals apart", () => {
  fc.assert(fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
    const once = canonical(parseStrict(JSON.stringify(value)).node);
    assert.equal(canonical(parseStrict(once).node), once);
  }));
  assert.equal(canonical(parseStrict('{"b": 1.0, "a": [1, 2.50, "\\u00e9"]}').node), '{"a":[1,2.5,"\\u00e9"],"b":1.0}');
});

const REPO = fileURLToPath(new URL("../../../../", import.meta.url));
const plans = readdirSync(join(REPO, "vectors", "2.0")).filter((f) => f.endsWith("-small.json"))
  .map((f) => canonical((parseStrict(readFileSync(join(REPO, "vectors", "2.0", f), "utf8")).node as any).entries.find(([k]: [string]) => k === "plan")[1]));

test("a pinned plan with any number moved by one float step is refused; the clock readings are not content", async () => {
  await fc.assert(fc.asyncProperty(fc.constantFrom(...plans), fc.nat(), async (text, pick) => {
    const loaded = await loadPlan(text);
    // every float but the clock reading solver.time_seconds (left out of the fingerprint)
    const numbers = [...text.matchAll(/(?<=[:,\[])-?\d+\.\d+(?:e[+-]\d+)?/g)].filter((m) => !text.slice(0, m.index).endsWith('"time_seconds":'));
    fc.pre(numbers.length > 0);
    const m = numbers[pick % numbers.length];
    const moved = text.slice(0, m.index!) + pyFloatRepr(nextUp(Number(m[0]))) + text.slice(m.index! + m[0].length);
    await assert.rejects(loadPlan(moved, { fingerprint: `sha256:${loaded.fingerprint}` }), /^PlanError: fingerprint:|fingerprint:/);
  }), { numRuns: 40 });
  for (const text of plans) {  // provenance.created_at and solver.time_seconds are left out (mechanisms/_plan.py _NOT_CONTENT)
    const pinned = `sha256:${(await loadPlan(text)).fingerprint}`;
    const other = text.replace(/"created_at":"[^"]*"/, '"created_at":"2000-01-01T00:00:00Z"').replace(/"time_seconds":[^,}]*/, '"time_seconds":123.5');
    assert.notEqual(other, text);
    await loadPlan(other, { fingerprint: pinned });
  }
});

test("the built bundle never calls the non-cryptographic Math random source", () => {
  const dist = join(REPO, "clients", "typescript", "dist");
  const files = readdirSync(dist).filter((f) => f.endsWith(".js"));
  assert.ok(files.length >= 5);
  for (const f of files) assert.ok(!readFileSync(join(dist, f), "utf8").includes("Math." + "random"), f);
});

// Shared by the example clients: the audit protocol of docs/AUDIT.md and a seeded generator.
// Plain JavaScript (Node >= 14), no dependencies.
//
// Protocol: node CLIENT.js PLAN SEED INPUT OUTPUT
//   PLAN   the plan file (JSON, format 2.0) the client implements
//   SEED   an integer in [0, 2^53): seeds the generator (an audit is a reproducible simulation)
//   INPUT  JSON lines, one user per line ({"item": i} for RR and unary encodings)
//   OUTPUT JSON lines, one report per line in input order, the plan's report columns
//          (docs/REPORTS.md): integers, or arrays of bytes for packed bit columns.
// A production client draws from crypto.getRandomValues instead of the seeded generator.
"use strict";
const fs = require("fs");

// xoshiro128** (Blackman & Vigna), state seeded with splitmix32 from the seed's two 32-bit halves.
function generator(seed) {
  let s = [0, 0, 0, 0];
  let x = (Number(BigInt(seed) & 0xffffffffn) ^ 0x9e3779b9) >>> 0;
  const hi = Number(BigInt(seed) >> 32n) >>> 0;
  function splitmix() {
    x = (x + 0x9e3779b9) >>> 0;
    let z = x ^ hi;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  }
  s = s.map(splitmix);
  function next() {
    const result = Math.imul(rotl(Math.imul(s[1], 5) >>> 0, 7), 9) >>> 0;
    const t = (s[1] << 9) >>> 0;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
    s[2] ^= t; s[3] = rotl(s[3], 11);
    return result;
  }
  function rotl(v, k) { return ((v << k) | (v >>> (32 - k))) >>> 0; }
  // uniform double in [0, 1) with 53 random bits
  return function uniform() {
    const a = next() >>> 5, b = next() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  };
}

function run(perturb) {
  const [planPath, seed, inputPath, outputPath] = process.argv.slice(2);
  if (outputPath === undefined) {
    process.stderr.write("usage: node CLIENT.js PLAN SEED INPUT OUTPUT\n");
    process.exit(2);
  }
  const plan = JSON.parse(fs.readFileSync(planPath, "utf8"));
  const uniform = generator(seed);
  const users = fs.readFileSync(inputPath, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
  const report = perturb(plan, uniform);
  fs.writeFileSync(outputPath, users.map((u) => JSON.stringify(report(u))).join("\n") + "\n");
}

module.exports = { generator, run };

// Memoized (longitudinal) frequency oracles for an ldpplan longitudinal plan: L-GRR ("l-grr") and the
// unary encodings ("l-sue" = basic one-time RAPPOR, "l-oue", "l-osue", "l-soue").
// Erlingsson et al. (CCS 2014), permanent and instantaneous randomized response; Arcolezi et al. (2022).
//
// Protocol (docs/AUDIT.md, memoized plans): node longitudinal.js PLAN SEED INPUT OUTPUT MEMO
//   INPUT  JSON lines {"user": u, "round": t, "item": i}
//   OUTPUT JSON lines, one report per input line, in order: {"round": t, "y": v} (L-GRR) or
//          {"round": t, "bits": [bytes]} (unary: k bits packed little-endian per byte)
//   MEMO   a directory this client owns: it keeps its memo there (MEMO/memo.json) across invocations.
// The permanent response of a (user, value) is drawn once, stored in the memo and re-randomized at every
// report. A user who would hold more distinct values than the plan's guarantee.max_values (or its older
// name max_changes) is refused (exit 1, nothing written). Randomness comes from crypto.randomBytes only:
// SEED is ignored (this client behaves as a production device would; its runs are not reproducible).
"use strict";
const crypto = require("crypto");
const fs = require("fs");
const path = require("path");

// Uniform draws from the operating system's CSPRNG, read 64 KiB at a time.
function secureSource() {
  let buf = Buffer.alloc(0), pos = 0;
  function word() {
    if (pos + 4 > buf.length) { buf = crypto.randomBytes(1 << 16); pos = 0; }
    const w = buf.readUInt32LE(pos);
    pos += 4;
    return w;
  }
  return {
    // Bernoulli(p), exact for p on the 2^-48 grid: u = m / 2^53 with m uniform in [0, 2^53)
    bernoulli(p) {
      const m = (word() >>> 5) * 67108864 + (word() >>> 6);
      return m / 9007199254740992 < p;
    },
    // uniform integer in [0, n), 1 <= n <= 2^32, exact (rejection sampling)
    below(n) {
      const limit = Math.floor(4294967296 / n) * n;
      for (;;) {
        const w = word();
        if (w < limit) return w % n;
      }
    },
  };
}

function fail(message) {
  process.stderr.write(`longitudinal.js: ${message}\n`);
  process.exit(1);
}

function grrStep(value, k, keep, rng) {
  if (rng.bernoulli(keep)) return value;
  const other = rng.below(k - 1);
  return other + (other >= value ? 1 : 0);
}

function unaryStep(ones, k, p, q, rng) { // ones(j) -> is bit j set; returns the packed bytes
  const out = new Array(Math.ceil(k / 8)).fill(0);
  for (let j = 0; j < k; j++) {
    if (rng.bernoulli(ones(j) ? p : q)) out[j >> 3] |= 1 << (j & 7);
  }
  return out;
}

function main() {
  const [planPath, , inputPath, outputPath, memoDir] = process.argv.slice(2);
  if (memoDir === undefined) fail("usage: node longitudinal.js PLAN SEED INPUT OUTPUT MEMO");
  const planBytes = fs.readFileSync(planPath);
  const plan = JSON.parse(planBytes.toString("utf8"));
  const mech = plan.mechanism, prm = plan.params, gu = plan.guarantee;
  if (!["l-grr", "l-sue", "l-oue", "l-osue", "l-soue"].includes(mech)) fail(`plan.mechanism: not longitudinal (${mech})`);
  const k = plan.domain.size, rounds = gu.rounds;
  const maxValues = gu.max_values !== undefined ? gu.max_values : gu.max_changes;
  const planDigest = crypto.createHash("sha256").update(planBytes).digest("hex");
  const rng = secureSource();

  // the memo: permanent responses by "user:value", distinct values by user
  const memoPath = path.join(memoDir, "memo.json");
  let memo = { format: "ldpplan-js-memo/1", plan_sha256: planDigest, mechanism: mech, responses: {}, values: {} };
  if (fs.existsSync(memoPath)) {
    memo = JSON.parse(fs.readFileSync(memoPath, "utf8"));
    if (memo.format !== "ldpplan-js-memo/1" || memo.plan_sha256 !== planDigest) fail(`${memoPath}: a memo of another plan`);
  }
  const users = fs.readFileSync(inputPath, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));

  const permanent = mech === "l-grr"
    ? (v) => grrStep(v, k, prm.p1, rng)
    : (v) => Buffer.from(unaryStep((j) => j === v, k, prm.p1, prm.q1, rng)).toString("hex");
  const instantaneous = mech === "l-grr"
    ? (z) => ({ y: grrStep(z, k, prm.p2, rng) })
    : (z) => {
      const bytes = Buffer.from(z, "hex");
      return { bits: unaryStep((j) => (bytes[j >> 3] >> (j & 7)) & 1, k, prm.p2, prm.q2, rng) };
    };

  // first pass: check every line and the max-values rule before anything is drawn or written
  const added = {};
  for (const u of users) {
    if (!Number.isInteger(u.user) || u.user < 0) fail(`input: user must be an integer id >= 0 (got ${u.user})`);
    if (!Number.isInteger(u.round) || u.round < 0 || u.round >= rounds) fail(`input: round must be in 0..${rounds - 1} (got ${u.round})`);
    if (!Number.isInteger(u.item) || u.item < 0 || u.item >= k) fail(`input: item must be in 0..${k - 1} (got ${u.item})`);
    const key = `${u.user}:${u.item}`;
    if (!(key in memo.responses) && !(key in added)) {
      added[key] = true;
      const held = (memo.values[u.user] || 0) + 1;
      memo.values[u.user] = held;
      if (held > maxValues) fail(`user ${u.user} would hold more than ${maxValues} distinct values (nothing reported)`);
    }
  }
  const lines = users.map((u) => {
    const key = `${u.user}:${u.item}`;
    if (!(key in memo.responses)) memo.responses[key] = permanent(u.item);
    return JSON.stringify(Object.assign({ round: u.round }, instantaneous(memo.responses[key])));
  });
  const tmp = `${memoPath}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(memo));
  fs.renameSync(tmp, memoPath);
  fs.writeFileSync(outputPath, lines.join("\n") + "\n");
}

main();

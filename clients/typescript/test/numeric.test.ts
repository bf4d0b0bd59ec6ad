// Numeric plans: the client's output distribution against the plan's channel (statistical, fixed bytes), the
// randomized rounding's mean, numpy's linspace and rint, and the word-level rule of the output pick.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { FixedSource, Stream } from "../src/random.js";
import { linspace, numericPerturb } from "../src/numeric.js";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../../../../", import.meta.url));
/** The params of a vector's plan. */
const plan = (name: string) => JSON.parse(readFileSync(join(REPO, "vectors", "2.0", `${name}.json`), "utf8")).plan.params;

/** A deterministic byte stream (splitmix64 words, little-endian): `words` words. */
function splitmix(seed: bigint, words: number): Uint8Array {
  const out = new Uint8Array(words * 8);
  const mask = (1n << 64n) - 1n;
  let x = seed;
  for (let i = 0; i < words; i++) {
    x = (x + 0x9e3779b97f4a7c15n) & mask;
    let z = x;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & mask;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & mask;
    z ^= z >> 31n;
    for (let b = 0; b < 8; b++) out[i * 8 + b] = Number((z >> BigInt(8 * b)) & 0xffn);
  }
  return out;
}

/** Row `i` of the channel: `w_c N[i, j] / 2^96` (exact enough in floats for a statistical check). */
function row(p: any, i: number): number[] {
  const m = p.output_values.length, out: number[] = [];
  let c = 0, end = p.component_sizes[0];
  for (let j = 0; j < m; j++) {
    if (j >= end) end += p.component_sizes[++c];
    out.push((p.component_weights[c] / 2 ** 48) * (p.numerators[i * m + j] / 2 ** 48));
  }
  return out;
}

for (const name of ["numeric-duchi", "numeric-piecewise", "numeric-hybrid", "numeric-square-wave"]) {
  test(`${name}: outputs follow the plan's row for a grid point and the mixture between two (5 sigma)`, () => {
    const p = plan(name), n = 20000;
    // 7.5 is grid point 3 of [0, 10] on 5 points; 3.125 is a quarter of the way from point 1 to point 2
    for (const [value, mix] of [[7.5, [[3, 1]]], [3.125, [[1, 0.75], [2, 0.25]]]] as [number, [number, number][]][]) {
      const words = 4 * n; // a byte each for the rounding (n / 8 words), a word for the component, one for the output, ties
      const y = numericPerturb(new Stream(new FixedSource(splitmix(BigInt(Math.round(value * 1000)), words))), p,
        new Array<number>(n).fill(value)).y;
      const want = row(p, 0).map((_, j) => mix.reduce((s, [i, w]) => s + w * row(p, i)[j], 0));
      const counts = new Array<number>(want.length).fill(0);
      for (const v of y) counts[v]++;
      want.forEach((q, j) => {
        const sd = Math.sqrt(n * q * (1 - q));
        assert.ok(Math.abs(counts[j] - n * q) <= 5 * sd + 1e-9, `${name} value ${value} output ${j}: ${counts[j]} vs ${n * q}`);
      });
    }
  });
}

test("numeric: values outside the range are clipped (same reports as the ends, same bytes)", () => {
  const p = plan("numeric-piecewise"), bytes = splitmix(7n, 400);
  const clipped = numericPerturb(new Stream(new FixedSource(bytes)), p, [-5, 1e300, -0.0001, 10.5]).y;
  const ends = numericPerturb(new Stream(new FixedSource(bytes)), p, [0, 10, 0, 10]).y;
  assert.deepEqual(clipped, ends);
  assert.throws(() => numericPerturb(new Stream(new FixedSource(bytes)), p, [Number.NaN]), RangeError);
});

test("numeric: the output is the first cumulative numerator above the word's top 48 bits", () => {
  const p = plan("numeric-duchi"); // 2 outputs; inputs at -1 (value 0) never go up: a byte of rounding, then one word
  const first = p.numerators[0];
  fc.assert(fc.property(fc.bigUintN(64), (w) => {
    const bytes = new Uint8Array(16);
    for (let b = 0; b < 8; b++) bytes[8 + b] = Number((w >> BigInt(8 * b)) & 0xffn);
    bytes[0] = 1; // the rounding's byte: t = 0 at the grid point (k = 0: never up; byte 0 would ask a tie word)
    const src = new FixedSource(bytes);
    const [y] = numericPerturb(new Stream(src), p, [0]).y;
    assert.equal(y, Number(w >> 16n) < first ? 0 : 1);
    assert.equal(src.remaining, 0);
  }));
});

test("linspace is numpy's (the grids of the vector plans, bit for bit)", () => {
  for (const name of ["numeric-duchi", "numeric-hybrid"]) assert.deepEqual(linspace(-1, 1, 5), plan(name).input_grid);
  assert.deepEqual(linspace(-1, 1, 3), [-1, 0, 1]);
  const g = linspace(-1, 1, 65);
  assert.equal(g[64], 1);
  assert.ok(g.every((v, i) => i === 0 || v > g[i - 1]));
});

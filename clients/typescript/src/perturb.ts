/**
 * Perturbation for every runtime mechanism, byte for byte as docs/REPORTS.md "Sampling
 * procedure" specifies (and vectors/reference.py implements): the same stream, the same
 * order of draws, the same report columns.
 */
import { Stream, pack } from "./random.js";
import { NUMERIC_MECHANISMS, numericPerturb } from "./numeric.js";

export type Reports = Record<string, number[] | string[] | bigint[]>;

/** JSON text of reports (BigInt columns as exact integers). */
export function reportsToJSON(reports: Reports): string {
  return JSON.stringify(reports, (_, v) => (typeof v === "bigint" ? `__big${v}__` : v)).replace(/"__big(\d+)__"/g, "$1");
}

/** Inputs of one call (the keys depend on the mechanism; see vectors/README.md). */
export interface Inputs {
  items?: number[] | number[][];
  tags?: number[];
  pairs?: [number, number][][];
  users?: number[];
  values?: number[];
  round?: number;
  /** Numeric plans: each user's value in user units (clipped to the plan's range). */
  numbers?: number[];
}

/** Where a longitudinal client keeps its permanent responses (e.g. a wrapper of localStorage). */
export interface MemoStorage {
  get(key: string): string | undefined | null;
  set(key: string, value: string): void;
}

/** A `MemoStorage` in memory. */
export class MapStorage implements MemoStorage {
  readonly map = new Map<string, string>();
  get(key: string): string | undefined {
    return this.map.get(key);
  }
  set(key: string, value: string): void {
    this.map.set(key, value);
  }
}

function rrStep(s: Stream, xs: number[], mu: number, size: number): number[] {
  const keep = s.bernoulliConst(mu, xs.length);
  const other = s.below(new Array<number>(xs.length).fill(size - 1));
  return xs.map((x, i) => (keep[i] ? x : other[i] + (other[i] >= x ? 1 : 0)));
}

function matrix(s: Stream, rows: number, probs: number[]): number[][] {
  const all: number[] = [];
  for (let r = 0; r < rows; r++) for (const p of probs) all.push(p);
  const flat = s.bernoulli(all);
  const out: number[][] = [];
  for (let r = 0; r < rows; r++) out.push(flat.slice(r * probs.length, (r + 1) * probs.length));
  return out;
}

function twoGroups(s: Stream, mask: boolean[], pTrue: number, pFalse: number): number[] {
  const out = new Array<number>(mask.length).fill(0);
  for (const [want, p] of [[true, pTrue], [false, pFalse]] as [boolean, number][]) {
    const group = mask.flatMap((m, i) => (m === want ? [i] : []));
    if (group.length) s.bernoulliConst(p, group.length).forEach((v, j) => (out[group[j]] = v));
  }
  return out;
}

function unaryRows(s: Stream, sampled: number[], a: number[], b: number[]): string[] {
  const w = b.length;
  const rows = Math.max(1, Math.floor(2 ** 20 / w));
  const out: string[] = [];
  for (let start = 0; start < sampled.length; start += rows) {
    const chunk = sampled.slice(start, start + rows);
    const z = matrix(s, chunk.length, b);
    const bits = s.bernoulli(chunk.map((i) => a[i]));
    chunk.forEach((item, r) => (z[r][item] = bits[r]));
    for (const row of z) out.push(pack(row));
  }
  return out;
}

function hadamard(s: Stream, xs: number[], p: any): number[] {
  const b: number = p.block_size, blocks: number = p.blocks, n = xs.length;
  const keep = s.bernoulliConst(p.keep_probability, n);
  const u = s.below(new Array<number>(n).fill(b));
  const r = blocks > 1 ? s.below(new Array<number>(n).fill(2 * blocks - 1)) : new Array<number>(n).fill(0);
  return xs.map((x, i) => {
    const block = Math.floor(x / (b - 1));
    const t = (x % (b - 1)) + 1;
    let ui = u[i];
    const inBlock = keep[i] === 1 || r[i] === 0;
    if (inBlock && ((popcount(t & ui) % 2 === 0) !== (keep[i] === 1))) ui ^= t & -t;
    const o = Math.floor((r[i] - 1) / 2);
    return (inBlock ? block : o + (o >= block ? 1 : 0)) * b + ui;
  });
}

function popcount(v: number): number {
  let c = 0;
  for (; v; v &= v - 1) c++;
  return c;
}

/** IDUE: each item's (a, b) from its level (items given as labels or indices). */
export function itemProbabilities(plan: any): [number[], number[]] {
  const labels: string[] | null = plan.domain.labels;
  const m: number = plan.domain.size;
  const a = new Array<number>(m).fill(0), b = new Array<number>(m).fill(0);
  for (const level of plan.params.levels) {
    for (const item of level.items) {
      const j = typeof item === "string" ? labels!.indexOf(item) : item;
      a[j] = level.a;
      b[j] = level.b;
    }
  }
  return [a, b];
}

function pckv(s: Stream, mechanism: string, p: any, users: [number, number][][]): Reports {
  const d: number = p.domain_size, L: number = p.padding_length;
  const width = d + L, n = users.length;
  const j = s.below(users.map((u) => Math.max(u.length, L)));
  const dummy = s.below(new Array<number>(n).fill(L)).map((v) => d + v);
  const t = s.unit(n);
  const keys: number[] = [], values: number[] = [];
  users.forEach((u, i) => {
    const [key, v] = j[i] < u.length ? [u[j[i]][0], u[j[i]][1]] : [dummy[i], 0.0];
    keys.push(key);
    values.push(t[i] < (1.0 + v) / 2.0 ? 1 : -1);
  });
  if (mechanism === "pckv-grr") {
    const keep = s.bernoulliConst(p.a, n), same = s.bernoulliConst(p.p, n);
    const other = s.below(new Array<number>(n).fill(width - 1));
    const signs = s.bits(n);
    return {
      key: keys.map((k, i) => (keep[i] ? k : other[i] + (other[i] >= k ? 1 : 0))),
      value: values.map((v, i) => (keep[i] ? (same[i] ? v : -v) : signs[i] ? 1 : -1)),
    };
  }
  const nbytes = Math.ceil(width / 8), rows = Math.max(1, Math.floor(2 ** 20 / width));
  const nonzero: string[] = [], negative: string[] = [];
  for (let start = 0; start < n; start += rows) {
    const k = keys.slice(start, start + rows), v = values.slice(start, start + rows);
    const z = matrix(s, k.length, new Array<number>(width).fill(p.b));
    const signs = s.bytes(k.length * nbytes);
    const keep = s.bernoulliConst(p.a, k.length), same = s.bernoulliConst(p.p, k.length);
    z.forEach((row, i) => {
      row[k[i]] = keep[i];
      const neg = row.map((bit, c) => bit & ((signs[i * nbytes + (c >> 3)] >> (c & 7)) & 1));
      neg[k[i]] = keep[i] === 1 && (v[i] < 0) === (same[i] === 1) ? 1 : 0;
      nonzero.push(pack(row));
      negative.push(pack(neg));
    });
  }
  return { nonzero, negative };
}

function urr(s: Stream, xs: number[], sensitive: number[], c1: number, c3: number): number[] {
  const ks = sensitive.length;
  const pos = new Map(sensitive.map((x, i) => [x, i] as [number, number]));
  const sens = xs.map((x) => pos.has(x));
  const keep = twoGroups(s, sens, c1, c3);
  const out = [...xs];
  const movedS = xs.flatMap((_, i) => (sens[i] && !keep[i] ? [i] : []));
  if (ks > 1 && movedS.length) {
    const o = s.below(new Array<number>(movedS.length).fill(ks - 1));
    movedS.forEach((i, j) => (out[i] = sensitive[o[j] + (o[j] >= pos.get(xs[i])! ? 1 : 0)]));
  }
  const movedN = xs.flatMap((_, i) => (!sens[i] && !keep[i] ? [i] : []));
  if (movedN.length) {
    const o = s.below(new Array<number>(movedN.length).fill(ks));
    movedN.forEach((i, j) => (out[i] = sensitive[o[j]]));
  }
  return out;
}

function urap(s: Stream, xs: number[], size: number, sensitive: number[], theta: number, d1: number, d2: number): string[] {
  const rows = xs.map(() => new Array<number>(size).fill(0));
  if (sensitive.length) {
    matrix(s, xs.length, new Array<number>(sensitive.length).fill(d1)).forEach((bits, r) =>
      sensitive.forEach((item, c) => (rows[r][item] = bits[c])));
  }
  const set = new Set(sensitive);
  const own = twoGroups(s, xs.map((x) => set.has(x)), theta, 1.0 - d2);
  xs.forEach((x, r) => (rows[r][x] = own[r]));
  return rows.map(pack);
}

/**
 * Perturb one call's inputs for a loaded plan's mechanism. `streams.coins` feeds every
 * mechanism; GLH also reads `streams.seeds` (its published hash seeds).
 */
export function perturbWith(plan: any, inputs: Inputs, streams: { coins: Stream; seeds?: Stream },
  memo: MemoStorage, memoPrefix: string): Reports {
  const mech: string = plan.mechanism, p = plan.params, s = streams.coins;
  const items = inputs.items as number[];
  switch (mech) {
    case "rr":
      return { y: rrStep(s, items, p.mu, p.domain_size) };
    case "glh": {
      const seeds = streams.seeds ?? s, n = items.length, prime = BigInt(p.hash.prime), g = BigInt(p.g);
      const a = seeds.belowBig(new Array<bigint>(n).fill(prime - 1n)).map((v) => 1n + v);
      const b = seeds.belowBig(new Array<bigint>(n).fill(prime));
      const h = items.map((x, i) => Number(((a[i] * BigInt(x) + b[i]) % prime) % g));
      // seeds below 2^53 as numbers; a 2^61 - 1 prime's seeds stay BigInt (JSON: exact integers, see toJSON)
      const small = prime < BigInt(Number.MAX_SAFE_INTEGER);
      return { a: small ? a.map(Number) : a, b: small ? b.map(Number) : b, y: rrStep(s, h, p.mu, p.g) };
    }
    case "hr":
      return { y: hadamard(s, items, p) };
    case "idue":
    case "idue-ps": {
      let [a, b] = itemProbabilities(plan);
      let sampled: number[];
      if (mech === "idue-ps") {
        const sets = inputs.items as number[][];
        const m = a.length, L: number = p.padding_length;
        const j = s.below(sets.map((u) => Math.max(u.length, L)));
        const nd = sets.filter((u, i) => j[i] >= u.length).length;
        const dummies = s.below(new Array<number>(nd).fill(L)).map((v) => m + v);
        let next = 0;
        sampled = sets.map((u, i) => (j[i] < u.length ? u[j[i]] : dummies[next++]));
        a = a.concat(new Array<number>(L).fill(p.dummy.a));
        b = b.concat(new Array<number>(L).fill(p.dummy.b));
      } else sampled = items;
      return { bits: unaryRows(s, sampled, a, b) };
    }
    case "pckv-ue":
    case "pckv-grr":
      return pckv(s, mech, p, inputs.pairs!);
    case "urr":
    case "urap":
    case "pum": {
      let xs = items, size: number = p.domain_size, sensitive: number[] = p.sensitive;
      if (mech === "pum") {
        const tags = inputs.tags ?? xs.map(() => -1);
        xs = xs.map((x, i) => (tags[i] >= 0 ? size + tags[i] : x));
        size = p.intermediate_size;
        sensitive = p.intermediate_sensitive;
      }
      if ((p.common ?? mech) === "urr") return { y: urr(s, xs, sensitive, p.c1, p.c3) };
      return { bits: urap(s, xs, size, sensitive, p.theta, p.d1, p.d2) };
    }
    default:
      if (NUMERIC_MECHANISMS.includes(mech)) return numericPerturb(s, p, inputs.numbers ?? []);
      return longitudinal(s, mech, p, inputs, memo, memoPrefix, plan.guarantee?.max_values ?? Infinity);
  }
}

function longitudinal(s: Stream, mech: string, p: any, inputs: Inputs, memo: MemoStorage, prefix: string, maxValues: number): Reports {
  const k: number = p.domain_size;
  const users = inputs.users!, values = inputs.values!, n = users.length;
  const key = (u: number, v: number) => `${prefix}${u}:${v}`;
  const seen = new Set<string>();
  const fresh: [number, number][] = [];
  users.forEach((u, i) => {
    const kk = key(u, values[i]);
    if (!seen.has(kk) && (memo.get(kk) === undefined || memo.get(kk) === null)) fresh.push([u, values[i]]);
    seen.add(kk);
  });
  // a user may hold at most guarantee.max_values distinct values (the lifetime claim's V): checked before any draw
  const held = new Map<number, number>();
  for (const [u] of fresh) held.set(u, (held.get(u) ?? Number(memo.get(`${prefix}#${u}`) ?? 0)) + 1);
  for (const [u, count] of held) {
    if (count > maxValues) throw new RangeError(`user ${u} would hold ${count} distinct values, more than the plan's guarantee.max_values = ${maxValues} (nothing reported)`);
  }
  for (const [u, count] of held) memo.set(`${prefix}#${u}`, String(count));
  fresh.sort((x, y) => x[0] * k + x[1] - (y[0] * k + y[1]));
  const round = new Array<number>(n).fill(inputs.round ?? 0);
  if (mech === "l-grr") {
    rrStep(s, fresh.map(([, v]) => v), p.p1, k).forEach((perm, i) => memo.set(key(...fresh[i]), String(perm)));
    const perms = users.map((u, i) => Number(memo.get(key(u, values[i]))));
    return { round, y: rrStep(s, perms, p.p2, k) };
  }
  const ones = fresh.map(([, v]) => Array.from({ length: k }, (_, j) => (j === v ? 1 : 0)));
  ue(s, ones, p.p1, p.q1, k).forEach((row, i) => memo.set(key(...fresh[i]), pack(row)));
  const perms = users.map((u, i) => unpackRow(memo.get(key(u, values[i]))!, k));
  return { round, bits: ue(s, perms, p.p2, p.q2, k).map(pack) };
}

function unpackRow(hex: string, k: number): number[] {
  const out = new Array<number>(k);
  for (let j = 0; j < k; j++) out[j] = (parseInt(hex.substr((j >> 3) * 2, 2), 16) >> (j & 7)) & 1;
  return out;
}

function ue(s: Stream, ones: number[][], probOne: number, probZero: number, k: number): number[][] {
  const first = matrix(s, ones.length, new Array<number>(k).fill(probOne));
  const second = matrix(s, ones.length, new Array<number>(k).fill(probZero));
  return ones.map((row, r) => row.map((o, j) => (o ? first[r][j] : second[r][j])));
}

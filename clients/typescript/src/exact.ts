/**
 * Exact arithmetic for claims near their bound (mechanisms/_plan.py `check_claim`'s `exact`):
 * floats are dyadic rationals, a privacy map is `ln` of a rational of them, and `ln` is
 * computed in 256-bit fixed point (atanh series) with a margin of 2^-220: a claim is accepted
 * only when it is at least the exact value plus the margin (never on the unsafe side).
 */
export type Frac = [bigint, bigint]; // numerator, denominator > 0

const P = 256n;
const ONE = 1n << P;
const MARGIN = 1n << (P - 220n);

const view = new DataView(new ArrayBuffer(8));

/** The exact rational value of a finite float. */
export function frac(x: number): Frac {
  if (x === 0) return [0n, 1n];
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const sign = bits >> 63n ? -1n : 1n;
  const e = Number((bits >> 52n) & 0x7ffn);
  let m = bits & ((1n << 52n) - 1n);
  if (e) m |= 1n << 52n;
  const exp = (e || 1) - 1075;
  return exp >= 0 ? [sign * (m << BigInt(exp)), 1n] : [sign * m, 1n << BigInt(-exp)];
}

export const mul = (a: Frac, b: Frac): Frac => [a[0] * b[0], a[1] * b[1]];
export const div = (a: Frac, b: Frac): Frac => (b[0] < 0n ? [-a[0] * b[1], a[1] * -b[0]] : [a[0] * b[1], a[1] * b[0]]);
export const add = (a: Frac, b: Frac): Frac => [a[0] * b[1] + b[0] * a[1], a[1] * b[1]];
export const sub = (a: Frac, b: Frac): Frac => [a[0] * b[1] - b[0] * a[1], a[1] * b[1]];
export const int = (n: number): Frac => [BigInt(n), 1n];
export const cmp = (a: Frac, b: Frac): number => {
  const d = a[0] * b[1] - b[0] * a[1];
  return d > 0n ? 1 : d < 0n ? -1 : 0;
};
export const fmax = (...xs: Frac[]): Frac => xs.reduce((m, x) => (cmp(x, m) > 0 ? x : m));
export const fmin = (...xs: Frac[]): Frac => xs.reduce((m, x) => (cmp(x, m) < 0 ? x : m));

function bitlen(x: bigint): number {
  return x.toString(2).length;
}

/** 2 atanh(z) for a fixed-point z (|z| <= 1/3), in fixed point. */
function atanh2(z: bigint): bigint {
  if (z < 0n) return -atanh2(-z);
  const z2 = (z * z) >> P;
  let term = z, sum = 0n;
  for (let k = 1n; term !== 0n; k += 2n) {
    sum += term / k;
    term = (term * z2) >> P;
  }
  return 2n * sum;
}

/** ln 2 in fixed point. */
export const LN2 = atanh2(ONE / 3n);
export const FIXED_ONE = ONE;
export const FIXED_BITS = P;

/** ln of a positive rational, in fixed point (units of 2^-256), accurate to a few units. */
export function lnFixed(r: Frac): bigint {
  const [n, d] = r;
  if (n <= 0n || d <= 0n) throw new Error("lnFixed: a positive rational");
  let k = bitlen(n) - bitlen(d);
  // y = r / 2^k in [1/2, 2)
  const y = k >= 0 ? (n << P) / (d << BigInt(k)) : ((n << BigInt(-k)) << P) / d;
  return BigInt(k) * LN2 + atanh2(((y - ONE) << P) / (y + ONE));
}

/** The claim `c` (a float) is at least `ln` of the exact value (`sum` of fixed-point logs), with the margin. */
export function claimCovers(c: number, lnValue: bigint): boolean {
  const [n, d] = frac(c);
  const fixed = (n << P) / d; // exact floor for dyadic c
  return fixed >= lnValue + MARGIN;
}

/** A fixed-point value at least `c` exactly, with the margin (for lower bounds: `c <= value`). */
export function claimBelow(c: number, value: bigint): boolean {
  const [n, d] = frac(c);
  return (n << P) / d + MARGIN <= value;
}

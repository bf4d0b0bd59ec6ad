/**
 * Randomness: 64-bit little-endian words from a byte source, and the samplers of
 * docs/REPORTS.md "Sampling procedure (bytes to reports)" (Bernoulli(k / 2^48), uniform
 * integers by modulo rejection, uniform units, packed bits). The only sources are
 * `crypto.getRandomValues` (WebCrypto) and, for the test vectors, caller-given bytes.
 */
export interface ByteSource {
  /** Fill `out` with random bytes. */
  fill(out: Uint8Array): void;
}

const TWO64 = 1n << 64n;
const GRID = 2 ** 48;
const TWO40 = 2 ** 40;

/** WebCrypto's CSPRNG (`crypto.getRandomValues`, at most 65,536 bytes a call). */
export class CryptoSource implements ByteSource {
  fill(out: Uint8Array): void {
    const c = (globalThis as any).crypto;
    if (!c || typeof c.getRandomValues !== "function") {
      throw new Error("no secure random source: crypto.getRandomValues is not available (the client has no non-cryptographic fallback)");
    }
    for (let i = 0; i < out.length; i += 65536) c.getRandomValues(out.subarray(i, Math.min(out.length, i + 65536)));
  }
}

/** Exactly the given bytes (a test vector's stream); reading past them throws. */
export class FixedSource implements ByteSource {
  pos = 0;
  constructor(readonly bytes: Uint8Array) {}
  fill(out: Uint8Array): void {
    if (this.pos + out.length > this.bytes.length) throw new Error("stream exhausted: the call reads past the vector's bytes");
    out.set(this.bytes.subarray(this.pos, this.pos + out.length));
    this.pos += out.length;
  }
  get remaining(): number {
    return this.bytes.length - this.pos;
  }
}

/** The word stream every sampler reads (one word = 8 bytes, little-endian), in 32-bit halves. */
export class Stream {
  private buf = new Uint8Array(8);
  private view = new DataView(this.buf.buffer);
  private limits = new Map<number, number>();
  constructor(readonly source: ByteSource) {}

  /** The next word as [high, low] 32-bit halves. */
  private halves(): [number, number] {
    this.source.fill(this.buf);
    return [this.view.getUint32(4, true), this.view.getUint32(0, true)];
  }
  word(): bigint {
    const [hi, lo] = this.halves();
    return (BigInt(hi) << 32n) | BigInt(lo);
  }
  /** `s` bytes: `ceil(s / 8)` words, their little-endian bytes, the first `s` kept. */
  bytes(s: number): Uint8Array {
    const out = new Uint8Array(Math.ceil(s / 8) * 8);
    if (out.length) this.source.fill(out);
    return out.subarray(0, s);
  }
  /** `s` bits, most significant bit of each byte first. */
  bits(s: number): number[] {
    const raw = this.bytes(Math.ceil(s / 8));
    const out = new Array<number>(s);
    for (let j = 0; j < s; j++) out[j] = (raw[j >> 3] >> (7 - (j & 7))) & 1;
    return out;
  }
  /** Uniform integers in `[0, bounds[i])`: one word each, then rejected ones redrawn round by round. */
  below(bounds: number[]): number[] {
    if (bounds.some((b) => b >= 2 ** 26)) return this.belowBig(bounds.map(BigInt)).map(Number);
    const n = bounds.length;
    const hi = new Array<number>(n), lo = new Array<number>(n);
    for (let i = 0; i < n; i++) [hi[i], lo[i]] = this.halves();
    const out = new Array<number>(n).fill(-1);
    let pending = Array.from({ length: n }, (_, i) => i);
    while (pending.length) {
      for (const i of pending) {
        const b = bounds[i];
        let r = this.limits.get(b); // 2^64 mod b (< 2^26): accept w < 2^64 - r
        if (r === undefined) this.limits.set(b, (r = Number((1n << 64n) % BigInt(b))));
        if (!(hi[i] === 0xffffffff && lo[i] >= 2 ** 32 - r)) out[i] = (((hi[i] % b) * (2 ** 32 % b)) % b + (lo[i] % b)) % b;
      }
      pending = pending.filter((i) => out[i] < 0);
      for (const i of pending) [hi[i], lo[i]] = this.halves();
    }
    return out;
  }
  /** `below` for bounds up to 2^64 (BigInt in and out): the GLH seeds of a 2^61 - 1 prime. */
  belowBig(bounds: bigint[]): bigint[] {
    const n = bounds.length;
    const words = bounds.map(() => this.word());
    const out = new Array<bigint>(n).fill(-1n);
    let pending = Array.from({ length: n }, (_, i) => i);
    while (pending.length) {
      for (const i of pending) if (words[i] < TWO64 - (TWO64 % bounds[i])) out[i] = words[i] % bounds[i];
      pending = pending.filter((i) => out[i] < 0n);
      for (const i of pending) words[i] = this.word();
    }
    return out;
  }
  /** Uniform floats `(word >> 11) * 2^-53` in [0, 1). */
  unit(n: number): number[] {
    const out = new Array<number>(n);
    for (let i = 0; i < n; i++) {
      const [hi, lo] = this.halves();
      out[i] = (hi * 2 ** 21 + (lo >>> 11)) * 2 ** -53;
    }
    return out;
  }
  /** Bernoulli(floor(p 2^48) / 2^48): one byte each, a 40-bit refinement word for each tie, in order. */
  bernoulli(probs: number[]): number[] {
    const n = probs.length;
    const ks = probs.map((p) => Math.floor(p * GRID));
    const r = this.bytes(n);
    const out = new Array<number>(n);
    for (let i = 0; i < n; i++) out[i] = r[i] < Math.floor(ks[i] / TWO40) ? 1 : 0;
    for (let i = 0; i < n; i++) {
      const top = Math.floor(ks[i] / TWO40);
      if (top < 256 && r[i] === top) {
        const [hi, lo] = this.halves();
        out[i] = hi * 256 + (lo >>> 24) < ks[i] % TWO40 ? 1 : 0; // word >> 24, 40 bits
      }
    }
    return out;
  }
  /** `bernoulli` of one probability, `n` times. */
  bernoulliConst(p: number, n: number): number[] {
    return this.bernoulli(new Array<number>(n).fill(p));
  }
}

/** Rows of bits packed little-endian within each byte, as lowercase hex. */
export function pack(row: ArrayLike<number>): string {
  const nbytes = Math.ceil(row.length / 8);
  let out = "";
  for (let b = 0; b < nbytes; b++) {
    let v = 0;
    for (let j = 0; j < 8 && b * 8 + j < row.length; j++) v |= (row[b * 8 + j] & 1) << j;
    out += v.toString(16).padStart(2, "0");
  }
  return out;
}

/** The bits of a packed hex row (`width` of them). */
export function unpack(hex: string, width: number): number[] {
  const out = new Array<number>(width);
  for (let j = 0; j < width; j++) out[j] = (parseInt(hex.substr((j >> 3) * 2, 2), 16) >> (j & 7)) & 1;
  return out;
}

export function hexToBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(2 * i, 2), 16);
  return out;
}

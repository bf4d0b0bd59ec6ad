/**
 * Strict JSON for plans, as the Python runtime reads them (mechanisms/_plan.py `loads_strict`):
 * no NaN/Infinity, no duplicate keys, at most 64 levels, at most 64 MiB, integers of at most
 * 100 digits, every number finite. The parser keeps each number's literal kind (integer or
 * float) so that the canonical JSON of `plan_fingerprint` (Python `json.dumps(sort_keys=True,
 * separators=(",", ":"), ensure_ascii=True)`) is reproduced byte for byte.
 */
import { PlanError } from "./errors.js";

export const MAX_PLAN_BYTES = 64 * 2 ** 20;
export const MAX_DEPTH = 64;
export const MAX_INT_DIGITS = 100;

/** A parsed JSON node that remembers whether each number was an integer literal. */
export type Node =
  | { kind: "object"; entries: [string, Node][] }
  | { kind: "array"; items: Node[] }
  | { kind: "string"; value: string }
  | { kind: "int"; value: bigint }
  | { kind: "float"; value: number }
  | { kind: "bool"; value: boolean }
  | { kind: "null" };

export interface Parsed {
  node: Node;
  /** The plain value (objects without prototype, numbers as JS numbers, integers beyond 2^53 as BigInt). */
  value: any;
  /** Dotted paths ("domain.size", "params.levels[0].size") of float literals. */
  floatPaths: Set<string>;
}

class Parser {
  pos = 0;
  constructor(readonly text: string) {}

  fail(what: string): never {
    throw new PlanError(`<json>: a plan must be valid JSON (${what} at char ${this.pos})`);
  }
  ws(): void {
    const t = this.text;
    while (this.pos < t.length && " \t\n\r".includes(t[this.pos])) this.pos++;
  }
  value(depth: number): Node {
    this.ws();
    const c = this.text[this.pos];
    if (c === "{" || c === "[") {
      if (depth + 1 > MAX_DEPTH) throw new PlanError(`<json>: a plan must nest at most ${MAX_DEPTH} levels deep`);
      return c === "{" ? this.object(depth + 1) : this.array(depth + 1);
    }
    if (c === '"') return { kind: "string", value: this.string() };
    if (this.text.startsWith("true", this.pos)) { this.pos += 4; return { kind: "bool", value: true }; }
    if (this.text.startsWith("false", this.pos)) { this.pos += 5; return { kind: "bool", value: false }; }
    if (this.text.startsWith("null", this.pos)) { this.pos += 4; return { kind: "null" }; }
    for (const name of ["NaN", "Infinity", "-Infinity"]) {
      if (this.text.startsWith(name, this.pos)) {
        throw new PlanError(`<json>: the non-standard constant ${name} is not allowed in a plan (numbers must be finite)`);
      }
    }
    return this.number();
  }
  object(depth: number): Node {
    this.pos++;
    const entries: [string, Node][] = [];
    const seen = new Set<string>();
    this.ws();
    if (this.text[this.pos] === "}") { this.pos++; return { kind: "object", entries }; }
    for (;;) {
      this.ws();
      if (this.text[this.pos] !== '"') this.fail("expected a key");
      const key = this.string();
      if (seen.has(key)) {
        throw new PlanError(`<json>: the key '${key.slice(0, 40)}' appears twice in one object (duplicate keys are refused: another reader could keep the other value)`);
      }
      seen.add(key);
      this.ws();
      if (this.text[this.pos] !== ":") this.fail("expected ':'");
      this.pos++;
      entries.push([key, this.value(depth)]);
      this.ws();
      const c = this.text[this.pos++];
      if (c === "}") return { kind: "object", entries };
      if (c !== ",") this.fail("expected ',' or '}'");
    }
  }
  array(depth: number): Node {
    this.pos++;
    const items: Node[] = [];
    this.ws();
    if (this.text[this.pos] === "]") { this.pos++; return { kind: "array", items }; }
    for (;;) {
      items.push(this.value(depth));
      this.ws();
      const c = this.text[this.pos++];
      if (c === "]") return { kind: "array", items };
      if (c !== ",") this.fail("expected ',' or ']'");
    }
  }
  string(): string {
    const start = this.pos;
    this.pos++;
    const t = this.text;
    for (;;) {
      if (this.pos >= t.length) this.fail("unterminated string");
      const c = t.charCodeAt(this.pos);
      if (c === 0x22) break;
      if (c < 0x20) this.fail("control character in a string");
      this.pos += c === 0x5c ? 2 : 1;
    }
    this.pos++;
    try {
      return JSON.parse(t.slice(start, this.pos)) as string;
    } catch {
      return this.fail("bad string escape");
    }
  }
  number(): Node {
    const m = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(this.text.slice(this.pos, this.pos + 1200));
    if (!m) this.fail("unexpected character");
    const lit = m![0];
    this.pos += lit.length;
    if (m![2] === undefined && m![3] === undefined) {
      if (lit.replace("-", "").length > MAX_INT_DIGITS) {
        throw new PlanError(`<json>: the integer ${lit.slice(0, 40)}... has more than ${MAX_INT_DIGITS} digits`);
      }
      return { kind: "int", value: BigInt(lit) };
    }
    const value = Number(lit);
    if (!Number.isFinite(value)) {
      throw new PlanError(`<json>: the number ${lit.slice(0, 40)} is out of the float range (numbers must be finite)`);
    }
    return { kind: "float", value };
  }
}

/** Parse plan text with the plan rules (see the module comment). */
export function parseStrict(text: string): Parsed {
  if (text.length > MAX_PLAN_BYTES) {
    throw new PlanError(`<file>: a plan file must be at most ${MAX_PLAN_BYTES} bytes (got ${text.length})`);
  }
  const p = new Parser(text);
  const node = p.value(0);
  p.ws();
  if (p.pos !== text.length) p.fail("extra data");
  const floatPaths = new Set<string>();
  return { node, value: plain(node, "", floatPaths), floatPaths };
}

function plain(node: Node, path: string, floats: Set<string>): any {
  switch (node.kind) {
    case "object": {
      const out: Record<string, any> = Object.create(null);
      for (const [k, v] of node.entries) out[k] = plain(v, path ? `${path}.${k}` : k, floats);
      return out;
    }
    case "array":
      return node.items.map((v, i) => plain(v, `${path}[${i}]`, floats));
    case "int": // beyond 2^53 an integer stays a BigInt (exact; the GLH's 2^61 - 1 prime)
      return node.value > BigInt(Number.MAX_SAFE_INTEGER) || node.value < -BigInt(Number.MAX_SAFE_INTEGER) ? node.value : Number(node.value);
    case "float":
      floats.add(path);
      return node.value;
    case "null":
      return null;
    default:
      return node.value;
  }
}

/** Python's `repr(float)`: shortest round-trip digits, fixed for 1e-4 <= |x| < 1e16, else `d.ddde+XX`. */
export function pyFloatRepr(x: number): string {
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const sign = x < 0 ? "-" : "";
  const [mant, expText] = Math.abs(x).toExponential().split("e");
  const digits = mant.replace(".", "");
  const exp = Number(expText);
  if (exp >= -4 && exp < 16) {
    if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
    if (digits.length <= exp + 1) return `${sign}${digits}${"0".repeat(exp + 1 - digits.length)}.0`;
    return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
  }
  const e = `${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  return `${sign}${digits[0]}${digits.length > 1 ? "." + digits.slice(1) : ""}e${e}`;
}

function pyString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ch = s[i];
    if (ch === '"') out += '\\"';
    else if (ch === "\\") out += "\\\\";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\b") out += "\\b";
    else if (ch === "\f") out += "\\f";
    else if (c < 0x20 || c > 0x7e) out += "\\u" + c.toString(16).padStart(4, "0");
    else out += ch;
  }
  return out + '"';
}

function codePointCompare(a: string, b: string): number {
  const x = Array.from(a), y = Array.from(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i].codePointAt(0)! - y[i].codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** The canonical JSON text of Python's `json.dumps(node, sort_keys=True, separators=(",", ":"))`. */
export function canonical(node: Node): string {
  switch (node.kind) {
    case "object": {
      const sorted = [...node.entries].sort((a, b) => codePointCompare(a[0], b[0]));
      return "{" + sorted.map(([k, v]) => pyString(k) + ":" + canonical(v)).join(",") + "}";
    }
    case "array":
      return "[" + node.items.map(canonical).join(",") + "]";
    case "string":
      return pyString(node.value);
    case "int":
      return node.value.toString();
    case "float":
      return pyFloatRepr(node.value);
    case "bool":
      return node.value ? "true" : "false";
    default:
      return "null";
  }
}

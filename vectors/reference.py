"""An independent reference client: docs/REPORTS.md "Sampling procedure", in plain Python integers.

Written from the specification, not from the runtime (no numpy, nothing of ldpplan): it reads a
vector's plan, inputs and bytes and returns the reports, so ``tests/test_vectors.py`` checks
that the specification alone reproduces every vector, as a client in another language must.
"""
from __future__ import annotations

from typing import Any

GRID = 2**48


class Stream:
    """The byte stream as 64-bit little-endian words; counts what it hands out."""

    def __init__(self, data: bytes) -> None:
        self.words = [int.from_bytes(data[i:i + 8], "little") for i in range(0, len(data), 8)]
        self.pos = 0

    def word(self) -> int:
        if self.pos >= len(self.words):
            raise ValueError("stream exhausted")
        self.pos += 1
        return self.words[self.pos - 1]

    def bytes(self, s: int) -> list[int]:
        out: list[int] = []
        for _ in range((s + 7) // 8):
            out += list(self.word().to_bytes(8, "little"))
        return out[:s]

    def bits(self, s: int) -> list[int]:
        raw = self.bytes((s + 7) // 8)
        return [(raw[j // 8] >> (7 - j % 8)) & 1 for j in range(s)]

    def below(self, bounds: list[int]) -> list[int]:
        words = [self.word() for _ in bounds]
        out: list[int | None] = [None] * len(bounds)
        pending = list(range(len(bounds)))
        while pending:
            for i in pending:
                if words[i] < 2**64 - 2**64 % bounds[i]:
                    out[i] = words[i] % bounds[i]
            pending = [i for i in pending if out[i] is None]
            for i in pending:
                words[i] = self.word()
        return out  # type: ignore[return-value]

    def unit(self, n: int) -> list[float]:
        return [(self.word() >> 11) * 2.0**-53 for _ in range(n)]

    def bernoulli(self, probs: list[float]) -> list[int]:
        ks = [int(p * GRID) for p in probs]
        r = self.bytes(len(ks))
        out = [int(r[i] < (k >> 40)) for i, k in enumerate(ks)]
        for i, k in enumerate(ks):
            if (k >> 40) < 256 and r[i] == k >> 40:
                out[i] = int((self.word() >> 24) < k % 2**40)
        return out


def rr_step(s: Stream, xs: list[int], mu: float, size: int) -> list[int]:
    keep = s.bernoulli([mu] * len(xs))
    other = s.below([size - 1] * len(xs))
    return [x if k else o + (o >= x) for x, k, o in zip(xs, keep, other)]


def pack(rows: list[list[int]]) -> list[str]:
    """Little-endian bits per byte, one hex string per row."""
    return [bytes(sum(bit << (j % 8) for j, bit in enumerate(row[b * 8:b * 8 + 8])) for b in range((len(row) + 7) // 8)).hex()
            for row in rows]


def two_groups(s: Stream, mask: list[bool], p_true: float, p_false: float) -> list[int]:
    on = [i for i, m in enumerate(mask) if m]
    off = [i for i, m in enumerate(mask) if not m]
    out = [0] * len(mask)
    for group, p in ((on, p_true), (off, p_false)):
        if group:
            for i, v in zip(group, s.bernoulli([p] * len(group))):
                out[i] = v
    return out


def matrix(s: Stream, rows: int, probs: list[float]) -> list[list[int]]:
    flat = s.bernoulli(probs * rows)
    return [flat[i * len(probs):(i + 1) * len(probs)] for i in range(rows)]


def unary_rows(s: Stream, sampled: list[int], a: list[float], b: list[float]) -> list[str]:
    w = len(b)
    rows = max(1, 2**20 // w)
    out: list[list[int]] = []
    for start in range(0, len(sampled), rows):
        chunk = sampled[start:start + rows]
        z = matrix(s, len(chunk), b)
        for row, item, bit in zip(z, chunk, s.bernoulli([a[i] for i in chunk])):
            row[item] = bit
        out += z
    return pack(out)


def pckv_sampling(s: Stream, users: list[list[list[float]]], d: int, L: int) -> tuple[list[int], list[int]]:
    j = s.below([max(len(u), L) for u in users])
    dummy = [d + v for v in s.below([L] * len(users))]
    t = s.unit(len(users))
    keys, values = [], []
    for u, ju, du, tu in zip(users, j, dummy, t):
        key, v = (int(u[ju][0]), float(u[ju][1])) if ju < len(u) else (du, 0.0)
        keys.append(key)
        values.append(1 if tu < (1.0 + v) / 2.0 else -1)
    return keys, values


def urr(s: Stream, xs: list[int], sensitive: list[int], c1: float, c3: float) -> list[int]:
    ks, pos = len(sensitive), {x: i for i, x in enumerate(sensitive)}
    sens = [x in pos for x in xs]
    keep = two_groups(s, sens, c1, c3)
    out = list(xs)
    moved_s = [i for i, x in enumerate(xs) if sens[i] and not keep[i]]
    if ks > 1 and moved_s:
        for i, o in zip(moved_s, s.below([ks - 1] * len(moved_s))):
            out[i] = sensitive[o + (o >= pos[xs[i]])]
    moved_n = [i for i in range(len(xs)) if not sens[i] and not keep[i]]
    if moved_n:
        for i, o in zip(moved_n, s.below([ks] * len(moved_n))):
            out[i] = sensitive[o]
    return out


def urap(s: Stream, xs: list[int], size: int, sensitive: list[int], theta: float, d1: float, d2: float) -> list[str]:
    rows = [[0] * size for _ in xs]
    if sensitive:
        for row, bits in zip(rows, matrix(s, len(xs), [d1] * len(sensitive))):
            for item, bit in zip(sensitive, bits):
                row[item] = bit
    own = two_groups(s, [x in set(sensitive) for x in xs], theta, 1.0 - d2)
    for row, x, bit in zip(rows, xs, own):
        row[x] = bit
    return pack(rows)


def hadamard(s: Stream, xs: list[int], params: dict[str, Any]) -> list[int]:
    b, blocks, n = params["block_size"], params["blocks"], len(xs)
    keep = s.bernoulli([params["keep_probability"]] * n)
    u = s.below([b] * n)
    r = s.below([2 * blocks - 1] * n) if blocks > 1 else [0] * n
    out = []
    for x, k, ui, ri in zip(xs, keep, u, r):
        block, t = divmod(x, b - 1)
        t += 1
        in_block = bool(k) or ri == 0
        if in_block and ((bin(t & ui).count("1") % 2 == 0) != bool(k)):
            ui ^= t & -t
        o = (ri - 1) // 2
        out.append((block if in_block else o + (o >= block)) * b + ui)
    return out


def item_probabilities(plan: dict[str, Any]) -> tuple[list[float], list[float]]:
    """IDUE: each item takes its level's a, b (items given as labels or indices)."""
    labels = plan["domain"]["labels"]
    m = plan["domain"]["size"]
    a, b = [0.0] * m, [0.0] * m
    for level in plan["params"]["levels"]:
        for item in level["items"]:
            j = labels.index(item) if isinstance(item, str) else int(item)
            a[j], b[j] = level["a"], level["b"]
    return a, b


def numeric(s: Stream, values: list[float], p: dict[str, Any]) -> list[int]:
    """A numeric channel (duchi, piecewise, hybrid, square-wave): clip, map onto [-1, 1], round at random to a
    grid neighbour (Bernoulli of the 2^-48 rounding, half to even, of the position between them), then per user
    a component (one word each, top 48 bits against the weights' cumulative sums), then per component in
    order, its users' outputs (one word each, top 48 bits against the row's cumulative numerators)."""
    low, high, grid = float(p["low"]), float(p["high"]), [float(g) for g in p["input_grid"]]
    sizes, weights = p["component_sizes"], p["component_weights"]
    m, k = sum(sizes), len(grid)
    xs = [min(max(2.0 * (min(max(float(v), low), high) - low) / (high - low) - 1.0, -1.0), 1.0) for v in values]
    upper = [min(max(next((i for i, g in enumerate(grid) if g >= x), k), 1), k - 1) for x in xs]
    t = [min(max((x - grid[u - 1]) / (grid[u] - grid[u - 1]), 0.0), 1.0) for x, u in zip(xs, upper)]
    up = s.bernoulli([round(ti * GRID) / GRID for ti in t]) if xs else []
    rows = [u if b else u - 1 for u, b in zip(upper, up)]

    def pick(cumulative: list[int]) -> int:
        draw = s.word() >> 16
        return next(j for j, c in enumerate(cumulative) if c > draw)

    def cumulative(row: int, start: int, size: int) -> list[int]:
        out, total = [], 0
        for v in p["numerators"][row * m + start:row * m + start + size]:
            total += v
            out.append(total)
        return out

    if len(sizes) == 1:
        return [pick(cumulative(r, 0, m)) for r in rows]
    cum_w = [sum(weights[:c + 1]) for c in range(len(weights))]
    component = [pick(cum_w) for _ in rows]
    out = [0] * len(rows)
    for c, size in enumerate(sizes):
        start = sum(sizes[:c])
        for i in [i for i, ci in enumerate(component) if ci == c]:
            out[i] = start + pick(cumulative(rows[i], start, size))
    return out


class Client:
    """Perturbs a vector's calls in order (one memo for longitudinal plans)."""

    def __init__(self, plan: dict[str, Any]) -> None:
        self.plan, self.mechanism, self.params = plan, plan["mechanism"], plan["params"]
        self.memo: dict[tuple[int, int], Any] = {}

    def _perturb(self, inputs: dict[str, Any], streams: dict[str, Stream]) -> dict[str, Any]:
        mech, p, s = self.mechanism, self.params, streams.get("coins")
        if mech == "rr":
            return {"y": rr_step(s, inputs["items"], p["mu"], p["domain_size"])}
        if mech == "glh":
            seeds, n, prime = streams["seeds"], len(inputs["items"]), p["hash"]["prime"]
            a = [1 + v for v in seeds.below([prime - 1] * n)]
            b = seeds.below([prime] * n)
            h = [((ai * x + bi) % prime) % p["g"] for ai, bi, x in zip(a, b, inputs["items"])]
            return {"a": a, "b": b, "y": rr_step(s, h, p["mu"], p["g"])}
        if mech == "hr":
            return {"y": hadamard(s, inputs["items"], p)}
        if mech in ("idue", "idue-ps"):
            a, b = item_probabilities(self.plan)
            sampled = inputs["items"]
            if mech == "idue-ps":
                m, L = len(a), p["padding_length"]
                j = s.below([max(len(u), L) for u in sampled])
                dummies = iter(m + v for v in s.below([L] * sum(ju >= len(u) for u, ju in zip(sampled, j))))
                sampled = [u[ju] if ju < len(u) else next(dummies) for u, ju in zip(sampled, j)]
                a, b = a + [p["dummy"]["a"]] * L, b + [p["dummy"]["b"]] * L
            return {"bits": unary_rows(s, sampled, a, b)}
        if mech in ("pckv-ue", "pckv-grr"):
            return self._pckv(s, inputs["pairs"])
        if mech in ("urr", "urap", "pum"):
            return self._uldp(s, inputs)
        if mech in ("duchi", "piecewise", "hybrid", "square-wave"):
            return {"y": numeric(s, inputs["numbers"], p)}
        return self._longitudinal(s, inputs)

    def _pckv(self, s: Stream, users) -> dict[str, Any]:
        p = self.params
        d, L = p["domain_size"], p["padding_length"]
        width, n = d + L, len(users)
        keys, values = pckv_sampling(s, users, d, L)
        if self.mechanism == "pckv-grr":
            keep, same = s.bernoulli([p["a"]] * n), s.bernoulli([p["p"]] * n)
            other = s.below([width - 1] * n)
            signs = s.bits(n)
            key = [k if kp else o + (o >= k) for k, kp, o in zip(keys, keep, other)]
            value = [(v if sm else -v) if kp else (1 if sg else -1) for v, kp, sm, sg in zip(values, keep, same, signs)]
            return {"key": key, "value": value}
        nbytes, rows = (width + 7) // 8, max(1, 2**20 // width)
        nonzero, negative = [], []
        for start in range(0, n, rows):
            k, v = keys[start:start + rows], values[start:start + rows]
            z = matrix(s, len(k), [p["b"]] * width)
            signs = s.bytes(len(k) * nbytes)
            keep, same = s.bernoulli([p["a"]] * len(k)), s.bernoulli([p["p"]] * len(k))
            for i, row in enumerate(z):
                row[k[i]] = keep[i]
                sign_bits = [(signs[i * nbytes + j // 8] >> (j % 8)) & 1 for j in range(width)]
                neg = [bit & sg for bit, sg in zip(row, sign_bits)]
                neg[k[i]] = int(bool(keep[i]) and ((v[i] < 0) == bool(same[i])))
                nonzero += pack([row])
                negative += pack([neg])
        return {"nonzero": nonzero, "negative": negative}

    def _uldp(self, s: Stream, inputs: dict[str, Any]) -> dict[str, Any]:
        p, xs = self.params, inputs["items"]
        size, sensitive = p["domain_size"], p["sensitive"]
        if self.mechanism == "pum":
            xs = [size + t if t >= 0 else x for x, t in zip(xs, inputs.get("tags", [-1] * len(xs)))]
            size, sensitive = p["intermediate_size"], p["intermediate_sensitive"]
        if p.get("common", self.mechanism) == "urr":
            return {"y": urr(s, xs, sensitive, p["c1"], p["c3"])}
        return {"bits": urap(s, xs, size, sensitive, p["theta"], p["d1"], p["d2"])}

    def _longitudinal(self, s: Stream, inputs: dict[str, Any]) -> dict[str, Any]:
        p, k = self.params, self.params["domain_size"]
        pairs = list(zip(inputs["users"], inputs["values"]))
        fresh = sorted({pair for pair in pairs if pair not in self.memo}, key=lambda uv: uv[0] * k + uv[1])
        n = len(pairs)
        if self.mechanism == "l-grr":
            for pair, perm in zip(fresh, rr_step(s, [v for _, v in fresh], p["p1"], k)):
                self.memo[pair] = perm
            y = rr_step(s, [self.memo[pair] for pair in pairs], p["p2"], k)
            return {"round": [inputs["round"]] * n, "y": y}
        for pair, perm in zip(fresh, self._ue([[int(j == v) for j in range(k)] for _, v in fresh], p["p1"], p["q1"], s)):
            self.memo[pair] = perm
        bits = self._ue([self.memo[pair] for pair in pairs], p["p2"], p["q2"], s)
        return {"round": [inputs["round"]] * n, "bits": pack(bits)}

    def _ue(self, ones: list[list[int]], prob_one: float, prob_zero: float, s: Stream) -> list[list[int]]:
        k = self.params["domain_size"]
        first, second = matrix(s, len(ones), [prob_one] * k), matrix(s, len(ones), [prob_zero] * k)
        return [[f if o else g for o, f, g in zip(row, fr, sr)] for row, fr, sr in zip(ones, first, second)]

    def run(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Every call's reports (``memo_after`` too for longitudinal plans), checking each stream is used up."""
        out = []
        for call in calls:
            streams = {name: Stream(bytes.fromhex(hexed)) for name, hexed in call["random"].items()}
            reports = self._perturb(call["inputs"], streams)
            for name, stream in streams.items():
                if stream.pos != len(stream.words):
                    raise ValueError(f"stream {name}: {stream.pos} of {len(stream.words)} words used")
            out.append({"reports": reports})
        return out

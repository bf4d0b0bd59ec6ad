"""Write the test vectors: ``python vectors/generate.py [--check] [NAME ...]`` from the repository root.

Each case below names a spec, the inputs of one or more ``perturb`` calls and a seed. The
generator plans the spec (``ldpplan.make_plan``), draws every call's random words from a
seeded PCG64 through a recording bit generator (:class:`vectorlib.WordStream`), keeps the bytes
consumed, replays them (:func:`vectorlib.replay`) and writes
``vectors/<plan format>/<name>.json``. ``--check`` writes nothing and fails when a file differs.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import vectorlib  # noqa: E402  (a dev tool beside this script)

import ldpplan  # noqa: E402
from ldpplan.mechanisms import load, plan_fingerprint  # noqa: E402

PLAN_FORMAT = "2.0"


def _items(seed: int, n: int, k: int) -> list[int]:
    return [int(v) for v in np.random.default_rng(seed).integers(0, k, size=n)]


def _sets(seed: int, n: int, k: int, most: int) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    return [sorted(int(v) for v in rng.choice(k, size=int(rng.integers(0, most + 1)), replace=False)) for _ in range(n)]


def _pairs(seed: int, n: int, d: int, most: int) -> list[list[list[float]]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        keys = rng.choice(d, size=int(rng.integers(0, most + 1)), replace=False)
        out.append([[int(key), float(rng.integers(-8, 9)) / 8] for key in sorted(keys)])
    return out


def _rounds(k: int, users: int, seed: int) -> list[dict[str, Any]]:
    """Three rounds: all users, then two users change value, then a subset reports again."""
    first = _items(seed, users, k)
    second = list(first)
    second[1], second[3] = (first[1] + 1) % k, (first[3] + 2) % k
    ids = [7 * u + 1000 for u in range(users)]
    return [{"round": 0, "users": ids, "values": first},
            {"round": 1, "users": ids, "values": second},
            {"round": 2, "users": ids[::2], "values": second[::2]}]


def _longitudinal(mechanism: str, k: int = 6) -> dict[str, Any]:
    return {"mechanism": mechanism, "domain": k, "users": 1000, "epsilon_perm": 4.0, "epsilon_1": 1.0,
            "rounds": 3, "max_changes": 2}


LEVELS = [{"name": "hiv", "epsilon": 1.3862943611198906, "items": 1},
          {"name": "other", "epsilon": 1.791759469228055, "items": ["anemia", "headache", "stomachache", "toothache"]}]
THREE = [{"name": "eps", "epsilon": 2.0, "share": 0.05}, {"name": "1.2eps", "epsilon": 2.4, "share": 0.05},
         {"name": "2eps", "epsilon": 4.0, "share": 0.9}]

#: numeric inputs on [0, 10]: outside the range (clipped), on the 5-point grid (0, 2.5, ..., 10) and between
NUMBERS = [-3.0, 0.0, 2.5, 10.0, 12.5, 7.5, 3.3, 9.99, 5.0, 0.1, 6.2, 1.7]


CELLS = 8


def _numeric(mechanism: str, epsilon: float, **extra: Any) -> dict[str, Any]:
    return {"mechanism": mechanism, "epsilon": epsilon, "range": [0, 10], "input_points": 5, **extra}


#: name -> (description, spec, calls' inputs, seed)
CASES: dict[str, tuple[str, dict[str, Any], list[dict[str, Any]], int]] = {
    "rr-small": ("k-ary RR, |X| = 6, epsilon = 1", {"mechanism": "rr", "domain_size": 6, "n": 1000,
                                                    "target": {"epsilon": 1.0}}, [{"items": _items(1, 12, 6)}], 1),
    "rr-large": ("k-ary RR, |X| = 10,500,393 (PIE Sec. 5.3), Bayes error >= 0.5",
                 {"mechanism": "rr", "domain_size": 10500393, "n": 1370637, "target": {"bayes_error": 0.5}},
                 [{"items": _items(2, 12, 10500393)}], 2),
    "glh-small": ("GLH, |X| = 100, epsilon = 2 (small hash range g)",
                  {"mechanism": "glh", "domain_size": 100, "n": 10000, "target": {"epsilon": 2.0}},
                  [{"items": _items(3, 12, 100)}], 3),
    "glh-large": ("GLH, |X| = 10,500,393, Bayes error >= 0.5, g <= 10^8 (large hash range)",
                  {"mechanism": "glh", "domain_size": 10500393, "n": 1370637, "target": {"bayes_error": 0.5},
                   "g_max": 100000000}, [{"items": _items(4, 12, 10500393)}], 4),
    "rr-huge": ("k-ary RR, |X| = 10^8 (a domain above 2^24), epsilon = 20",
                {"mechanism": "rr", "domain_size": 10**8, "n": 10**6, "target": {"epsilon": 20.0}},
                [{"items": _items(31, 12, 10**8)}], 31),
    "glh-huge": ("GLH, |X| = 2^40, Bayes error >= 0.5 (hash prime 2^61 - 1)",
                 {"mechanism": "glh", "domain_size": 2**40, "n": 10**6, "target": {"bayes_error": 0.5}},
                 [{"items": _items(32, 12, 2**40)}], 32),
    "hr-small": ("Hadamard response, k = 10, epsilon = 1", {"mechanism": "hr", "epsilon": 1.0, "domain": 10},
                 [{"items": _items(5, 12, 10)}], 5),
    "hr-blocks": ("Hadamard response, k = 100, epsilon = 4, B = 8 blocks",
                  {"mechanism": "hr", "epsilon": 4.0, "domain": 100, "blocks": 8}, [{"items": _items(6, 12, 100)}], 6),
    "hr-large": ("Hadamard response, k = 10,000, epsilon = 2", {"mechanism": "hr", "epsilon": 2.0, "domain": 10000,
                                                                "users": 100000}, [{"items": _items(7, 12, 10000)}], 7),
    "idue-health": ("IDUE (opt0, MinID), ID-LDP Table II levels over 5 labelled items",
                    {"mechanism": "idue", "model": "opt0", "notion": "minid", "levels": LEVELS},
                    [{"items": _items(8, 10, 5)}], 8),
    "idue-three-levels": ("IDUE, 100 items on three levels {2, 2.4, 4}",
                          {"mechanism": "idue", "model": "opt0", "notion": "minid", "domain": 100, "assignment_seed": 0,
                           "levels": THREE}, [{"items": _items(9, 6, 100)}], 9),
    "idue-ps-health": ("IDUE-PS, padding L = 3, 5 labelled items",
                       {"mechanism": "idue-ps", "model": "opt0", "notion": "minid", "padding_length": 3,
                        "levels": LEVELS}, [{"items": _sets(10, 10, 5, 4)}], 10),
    "idue-ps-large": ("IDUE-PS, padding L = 2, 1000 items on three levels",
                      {"mechanism": "idue-ps", "model": "opt0", "notion": "minid", "padding_length": 2, "domain": 1000,
                       "assignment_seed": 0, "levels": THREE}, [{"items": _sets(11, 5, 1000, 4)}], 11),
    "pckv-ue-small": ("PCKV-UE, d = 10, L = 2, epsilon = 2",
                      {"mechanism": "pckv-ue", "epsilon": 2.0, "domain": 10, "padding_length": 2},
                      [{"pairs": _pairs(12, 10, 10, 4)}], 12),
    "pckv-ue-large": ("PCKV-UE, d = 100, L = 1, epsilon = 1 (Sec. 6.1)",
                      {"mechanism": "pckv-ue", "epsilon": 1.0, "domain": 100, "padding_length": 1},
                      [{"pairs": _pairs(13, 8, 100, 3)}], 13),
    "pckv-grr-small": ("PCKV-GRR, d = 10, L = 2, epsilon = 2",
                       {"mechanism": "pckv-grr", "epsilon": 2.0, "domain": 10, "padding_length": 2},
                       [{"pairs": _pairs(14, 12, 10, 4)}], 14),
    "pckv-grr-large": ("PCKV-GRR, d = 5000, L = 4, epsilon = 4",
                       {"mechanism": "pckv-grr", "epsilon": 4.0, "domain": 5000, "padding_length": 4},
                       [{"pairs": _pairs(15, 12, 5000, 6)}], 15),
    "urr-small": ("uRR, |X| = 10, |X_S| = 3, epsilon = 1", {"mechanism": "urr", "epsilon": 1.0, "domain": 10,
                                                            "sensitive": 3}, [{"items": _items(16, 16, 10)}], 16),
    "urr-census": ("uRR, |X| = 400, |X_S| = 76, epsilon = 1 (ULDP Sec. 6)",
                   {"mechanism": "urr", "epsilon": 1.0, "domain": 400, "sensitive": 76},
                   [{"items": _items(17, 16, 400)}], 17),
    "urap-small": ("uRAP, |X| = 10, |X_S| = 3, epsilon = 1", {"mechanism": "urap", "epsilon": 1.0, "domain": 10,
                                                              "sensitive": 3}, [{"items": _items(18, 12, 10)}], 18),
    "urap-census": ("uRAP, |X| = 400, |X_S| = 76, epsilon = 1 (ULDP Sec. 6)",
                    {"mechanism": "urap", "epsilon": 1.0, "domain": 400, "sensitive": 76},
                    [{"items": _items(19, 6, 400)}], 19),
    "pum-urr": ("PUM over uRR, |X| = 25, |X_S| = 5, tags home/work",
                {"mechanism": "pum", "epsilon": 1.0, "domain": 25, "sensitive": 5, "common": "urr",
                 "tags": ["home", "work"]},
                [{"items": _items(20, 12, 25), "tags": [-1, 0, 1, -1, 0, 1, -1, -1, 0, 1, 1, -1]}], 20),
    "pum-urap": ("PUM over uRAP, |X| = 25, |X_S| = 5, tags home/work",
                 {"mechanism": "pum", "epsilon": 1.0, "domain": 25, "sensitive": 5, "common": "urap",
                  "tags": ["home", "work"]},
                 [{"items": _items(21, 12, 25), "tags": [0, -1, 1, -1, 0, 1, -1, 0, 0, 1, -1, -1]}], 21),
    "l-grr-rounds": ("L-GRR, k = 6, 3 rounds, two users change value in round 1", _longitudinal("l-grr"),
                     _rounds(6, 8, 22), 22),
    "l-grr-large": ("L-GRR, k = 1000, 3 rounds", _longitudinal("l-grr", 1000), _rounds(1000, 8, 23), 23),
    "l-sue-rounds": ("L-SUE (basic RAPPOR), k = 6, 3 rounds", _longitudinal("l-sue"), _rounds(6, 8, 24), 24),
    "l-oue-rounds": ("L-OUE, k = 6, 3 rounds", _longitudinal("l-oue"), _rounds(6, 8, 25), 25),
    "l-osue-rounds": ("L-OSUE, k = 6, 3 rounds", _longitudinal("l-osue"), _rounds(6, 8, 26), 26),
    "l-soue-rounds": ("L-SOUE, k = 20, 3 rounds", _longitudinal("l-soue", 20), _rounds(20, 8, 27), 27),
    "numeric-duchi": ("Duchi et al., range [0, 10], 5 input points, epsilon = 1", _numeric("duchi", 1.0),
                      [{"numbers": NUMBERS}], 28),
    "numeric-piecewise": ("Piecewise Mechanism, range [0, 10], 5 input points, 8 output cells, epsilon = 2",
                          _numeric("piecewise", 2.0, output_cells=CELLS), [{"numbers": NUMBERS}], 29),
    "numeric-hybrid": ("Hybrid Mechanism (PM cells + Duchi's two outputs), range [0, 10], 5 input points, epsilon = 2",
                       _numeric("hybrid", 2.0, output_cells=CELLS), [{"numbers": NUMBERS}, {"numbers": NUMBERS[::-1]}],
                       30),
    "numeric-square-wave": ("Square Wave (task distribution), range [0, 10], 5 input points, epsilon = 1",
                            _numeric("square-wave", 1.0, output_cells=CELLS, task="distribution"),
                            [{"numbers": NUMBERS}], 33),
}


def _tie_word(p: float) -> int:
    """A word whose 8 bytes all equal ``hi`` of grid probability ``p``: 8 ties to refine."""
    return int.from_bytes(bytes([int(p * 2**48) >> 40] * 8), "little")


def _refines(p: float, outcomes: str) -> list[int]:
    """Refinement words ``s << 24`` giving the tie outcomes ('1': s < lo, '0': s >= lo)."""
    lo = int(p * 2**48) % 2**40
    return [(0 if o == "1" else lo) << 24 for o in outcomes]


def _rr_edge(plan: dict[str, Any]) -> dict[str, list[int]]:
    """8 users: all tie on keep, refined 1,0,1,0,0,1,1,0; the first below(K - 1) word is rejected."""
    mu = plan["params"]["mu"]
    return {"coins": [_tie_word(mu), *_refines(mu, "10100110"), 2**64 - 1]}


def _glh_edge(plan: dict[str, Any]) -> dict[str, list[int]]:
    """Seeds: the first words of a and of b are rejected; coins: ties on keep, one rejected below(g - 1)."""
    mu, count = plan["params"]["mu"], 8
    return {"seeds": [2**64 - 1, *range(5, 5 + count), 2**64 - 1],
            "coins": [_tie_word(mu), *_refines(mu, "01101001"), 2**64 - 1]}


#: edge cases: name -> (base case, users, function of the plan giving each stream's first words)
EDGES = {"rr-edge": ("rr-small", 8, _rr_edge), "glh-edge": ("glh-small", 8, _glh_edge)}


def _case(name: str):
    if name in EDGES:
        base, users, forced = EDGES[name]
        description, spec, calls, seed = CASES[base]
        calls = [{key: value[:users] for key, value in calls[0].items()}]
        return (f"{description}; edge case: ties refined both ways and rejected uniform words", spec, calls, seed,
                forced)
    return (*CASES[name], None)


def build(name: str) -> dict[str, Any]:
    """Plan, record and replay one case; return its vector."""
    description, spec, calls, seed, forced = _case(name)
    plan = ldpplan.make_plan(spec)
    mech = load(plan)
    names = vectorlib.stream_names(mech.mechanism)
    memo = mech.new_memo() if hasattr(mech, "new_memo") else None
    recorded = []
    prefixes = forced(plan) if forced else {}
    for i, inputs in enumerate(calls):
        sources = {s: np.random.default_rng([seed, i, j]) for j, s in enumerate(names)}
        streams = {s: vectorlib.WordStream(source=sources[s], prefix=prefixes.get(s) if i == 0 else None)
                   for s in names}
        vectorlib.run_call(mech, inputs, streams, memo)
        recorded.append({"inputs": inputs, "random": {s: streams[s].consumed().hex() for s in names}})
    vector = {"format": vectorlib.FORMAT, "plan_format": PLAN_FORMAT, "name": name, "mechanism": mech.mechanism,
              "description": description, "plan_fingerprint": plan_fingerprint(plan), "plan": plan,
              "calls": recorded}
    produced = vectorlib.replay(vector)
    for call, out in zip(vector["calls"], produced["calls"]):
        call.update(out)
    vector["aggregate"], vector["estimate"] = produced["aggregate"], produced["estimate"]
    return vector


def _stable(vector: dict[str, Any]) -> dict[str, Any]:
    """A vector without what varies between two runs of the planner (time stamp, solver time, fingerprint)."""
    keep = {k: v for k, v in vector.items() if k not in ("plan", "plan_fingerprint")}
    keep["params"] = vector["plan"]["params"]
    return keep


def dumps(vector: dict[str, Any]) -> str:
    return json.dumps(vector, indent=1, sort_keys=False, allow_nan=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="cases to write (default: all)")
    parser.add_argument("--check", action="store_true", help="compare with the files instead of writing")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(CASES) - set(EDGES))
    if unknown:
        parser.error(f"unknown case(s) {unknown}; known: {sorted([*CASES, *EDGES])}")
    folder = vectorlib.HERE / PLAN_FORMAT
    folder.mkdir(exist_ok=True)
    stale = 0
    for name in args.names or [*CASES, *EDGES]:
        vector = build(name)
        text = dumps(vector)
        path = folder / f"{name}.json"
        if args.check:  # plans differ by their creation time and solver timing: compare what they give
            if not path.exists() or _stable(json.loads(path.read_text())) != _stable(vector):
                print(f"differs: {path}")
                stale += 1
        else:
            path.write_text(text)
            print(f"wrote {path} ({len(text)} bytes)")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())

"""Write the plans of the project's gate tests (tests/test_plan_gate.py) for the TypeScript client.

Usage (from the repository root, with ldpplan and its test extra installed)::

    python clients/typescript/scripts/make_gate_fixtures.py clients/typescript/test/fixtures/gate

For every fast example plan: the honest plan (must load), its consistent rewrites (the same
hypothesis property as ``test_consistent_rewrites_never_load``, derandomized), each claim one
float step below its exact value, each grid probability moved off the grid, and huge domain
sizes; on the health plan: duplicate keys, ``format_version`` variants, unknown fields and
claims, and the fingerprint pins. Every tampered plan is first checked to be refused by the
Python ``load()`` (the script fails otherwise); ``manifest.json`` lists each file, whether it
must load, the pinned fingerprint (if any) and the Python runtime's message.
"""
from __future__ import annotations

import copy
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests"))

from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import ldpplan  # noqa: E402
import test_plan_gate as gate  # noqa: E402
from _family_helpers import LOWER, conformance, exact_claims, numbers_in  # noqa: E402
from ldpplan.mechanisms import PlanError, plan_fingerprint  # noqa: E402


def python_refuses(plan, fingerprint=None) -> str | None:
    """The Python runtime's message, or None when it loads."""
    try:
        ldpplan.load(plan, fingerprint=fingerprint)
    except PlanError as exc:
        return str(exc)
    return None


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    manifest: list[dict] = []

    def add(name: str, plan, accept: bool, *, text: str | None = None, fingerprint=None, case: str,
            client_refuses: str | None = None) -> None:
        body = text if text is not None else json.dumps(plan, indent=1)
        message = python_refuses(json.loads(body) if text is None else plan, fingerprint)
        if text is not None and accept is False:
            message = message or "refused by the strict JSON reader"
        if accept != (message is None):
            raise SystemExit(f"{name}: the Python runtime {'refuses' if message else 'accepts'} it ({message})")
        (out / f"{name}.json").write_text(body)
        manifest.append({"file": f"{name}.json", "accept": accept and client_refuses is None, "case": case,
                         "fingerprint": fingerprint, "python": message, "client_refuses": client_refuses})

    for param in gate.FAST:
        fam, example = param.values
        if getattr(conformance(fam), "VECTORS", True) is False:  # not in the TypeScript client (no gate fixtures)
            continue
        original = ldpplan.planner.make_plan(copy.deepcopy(fam.examples[example]))
        tag = f"{fam.name}-{example}"
        add(f"{tag}--honest", original, True, case="honest")
        seen: set[str] = set()

        @settings(deadline=None, max_examples=25, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(st.data())
        def rewrites(data):
            plan = copy.deepcopy(original)
            what = gate._rewrite(plan, data)
            assume(plan != original)
            key = json.dumps(plan, sort_keys=True)
            if key not in seen:
                seen.add(key)
                add(f"{tag}--rewrite-{len(seen)}", plan, False, case=f"consistent rewrite: {what}")

        rewrites()
        for i, (key, value) in enumerate(sorted(exact_claims(original).items(), key=str)):
            plan = copy.deepcopy(original)
            below = gate._float_below(value)
            gate._set_claim(plan, key, -below if key[0] == LOWER else below)
            add(f"{tag}--step-below-{i}", plan, False, case=f"claim one float step below: {key}")
        grid = [p for p, v in numbers_in(original["params"]) if isinstance(v, float) and 0 < v < 1
                and math.floor(v * 2**48) == v * 2**48]
        for i, path in enumerate(grid):
            plan = copy.deepcopy(original)
            node = gate._get(plan["params"], path[:-1])
            node[path[-1]] += 2.0**-52
            add(f"{tag}--off-grid-{i}", plan, False, case=f"params.{'.'.join(map(str, path))} off the grid")
        for exponent in (8, 12, 25, 30):
            plan = copy.deepcopy(original)
            plan["domain"]["size"] = 10**exponent
            if "domain_size" in plan["params"]:
                plan["params"]["domain_size"] = 10**exponent
            add(f"{tag}--huge-{exponent}", plan, False, case=f"domain.size 10^{exponent}")

    health = ldpplan.make_plan(ldpplan.planner.example_spec("health"))
    text = json.dumps(health, indent=1)
    for i, edit in enumerate(['"format_version": "2.0", "format_version": "2.0",',
                              '"format_version": "2.0", "mechanism": "urr",']):
        add(f"health--duplicate-{i}", health, False, text=text.replace('"format_version": "2.0",', edit, 1),
            case="duplicate keys")
    for i, version in enumerate(["2", "2.1", "2.0.0", "2.0 ", "2.x", " 2.0", 2.0, None]):
        plan = copy.deepcopy(health)
        plan["format_version"] = version
        add(f"health--version-{i}", plan, False, case=f"format_version {version!r}")
    for where, key in [((), "extra"), (("guarantee",), "extra_epsilon"), (("domain",), "kind")]:
        plan = copy.deepcopy(health)
        gate._get(plan, where)[key] = 1.0
        add(f"health--unknown-{'.'.join(where + (key,))}", plan, False, case="unknown field or claim")
    digest = plan_fingerprint(health)
    for i, pinned in enumerate((f"sha256:{digest}", digest, f"SHA256:{digest.upper()}")):
        add(f"health--pinned-ok-{i}", health, True, fingerprint=pinned, case="pinned fingerprint")
    for i, pinned in enumerate(("sha256:" + "0" * 64, "sha256:abc", "md5:" + digest, digest + "0")):
        add(f"health--pinned-bad-{i}", health, False, fingerprint=pinned, case="another or a malformed pin")
    plan = copy.deepcopy(health)
    plan["provenance"]["created_at"] = "2000-01-01T00:00:00Z"
    plan["solver"]["name"] = str(plan["solver"].get("name", "")) + " (rewritten)"
    add("health--pinned-rewritten", plan, False, fingerprint=f"sha256:{digest}", case="a rewritten plan, pinned")
    fam = ldpplan.planner.families.family_for("pie")
    plan = ldpplan.planner.make_plan(copy.deepcopy(fam.examples["pie-gss"]))
    plan["guarantee"]["max_prior"] = math.nextafter(plan["guarantee"]["max_prior"], math.inf)
    add("pie-gss--max-prior-step", plan, False, case="max_prior one float step up")
    plan = copy.deepcopy(health)
    plan["guarantee"]["ldp_epsilon"] = math.nextafter(plan["guarantee"]["ldp_epsilon"], 0.0)
    add("health--ldp-epsilon-step", plan, False, case="ldp_epsilon one float step down")
    shuffle_fixtures(add)
    numeric_fixtures(add)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    print(f"{len(manifest)} plans ({sum(m['accept'] for m in manifest)} to load; "
          f"{sum(bool(m['client_refuses']) for m in manifest)} honest ones the client refuses on the safe side) in {out}")


def shuffle_fixtures(add) -> None:
    """tests/test_shuffle_gate.py: each tampering of the central claim of its fast examples, refused."""
    import test_shuffle_gate as sg

    for name in sg.FAST + ["longitudinal-daily"]:
        plan = sg._shuffled_plan(name)
        numerical = [claim for claim in ("shuffled", "shuffled_lifetime") if claim in plan["guarantee"]
                     and not plan["guarantee"][claim]["source"].startswith(sg.gate.SOURCE_FMT_CLOSED)
                     and sg._amplified(plan, claim)]
        # the client confirms FMT21 Theorem 3.1 and epsilon >= epsilon0 only: an amplified claim from the
        # numerical bounds (FMT21 Thm 3.2, the k-RR blanket) is refused, on the safe side (see its README)
        add(f"shuffle-{name}--honest", plan, True, case="honest, with a [shuffle] block",
            client_refuses=f"unported bound for {numerical}" if numerical else None)
        plain = ldpplan.planner.make_plan(dict(ldpplan.planner.example_spec(name)))
        for claim in [key for key in ("shuffled", "shuffled_lifetime") if key in plan["guarantee"]]:
            added = copy.deepcopy(plain)
            added["guarantee"][claim] = copy.deepcopy(plan["guarantee"][claim])
            add(f"shuffle-{name}--{claim}-without-block", added, False, case=f"{claim} without a [shuffle] block")
            honest_source = plan["guarantee"][claim]["source"]
            for i, (kind, edit) in enumerate(sg.tamperings(claim).items()):
                tampered = copy.deepcopy(plan)
                edit(tampered)
                if kind.startswith("source -> ") and tampered["guarantee"][claim]["source"].split("; lower:")[0] \
                        == honest_source.split("; lower:")[0]:
                    continue
                if kind.startswith("spec and claim") and not sg._amplified(plan, claim):
                    continue
                add(f"shuffle-{name}--{claim}-{i}", tampered, False, case=f"{claim}: {kind}")


def _numeric_tamperings(plan) -> dict:
    """Each numeric tampering: name -> a function editing a copy of ``plan`` (the Python runtime refuses each)."""
    p = plan["params"]
    m, k = len(p["output_values"]), len(p["input_grid"])
    table = [p["numerators"][i * m:(i + 1) * m] for i in range(k)]
    size0 = p["component_sizes"][0]
    # the decisive column (largest max/min) within the first component, its largest entry's row
    col = max(range(size0), key=lambda j: max(r[j] for r in table) / min(r[j] for r in table))
    row = max(range(k), key=lambda i: table[i][col])
    other = (col + 1) % size0

    def at(i, j):
        return i * m + j

    def move(pl, src, dst, units=1):
        pl["params"]["numerators"][src] -= units
        pl["params"]["numerators"][dst] += units

    edits = {
        "a numerator raised by one grid step (its row sums to 2^48 + 1)":
            lambda pl: pl["params"]["numerators"].__setitem__(at(row, col), table[row][col] + 1),
        "one grid step moved into the decisive column (rows still sum to 2^48; epsilon above the claim)":
            lambda pl: move(pl, at(row, other), at(row, col)),
        "a numerator written as a float": lambda pl: pl["params"]["numerators"].__setitem__(0, float(table[0][0])),
        "a negative numerator": lambda pl: move(pl, at(0, 0), at(0, 1), table[0][0] + 1),
        "an output reachable from one input only": lambda pl: move(pl, at(0, col), at(0, other), table[0][col]),
        "an output value one float step up":
            lambda pl: pl["params"]["output_values"].__setitem__(0, math.nextafter(p["output_values"][0], math.inf)),
        "an input grid point one float step up":
            lambda pl: pl["params"]["input_grid"].__setitem__(1, math.nextafter(p["input_grid"][1], math.inf)),
        "params.clipping 'none'": lambda pl: pl["params"].__setitem__("clipping", "none"),
        "params.task changed": lambda pl: pl["params"].__setitem__(
            "task", "mean" if p["task"] == "distribution" else "distribution"),
        "params.high not the spec's range": lambda pl: pl["params"].__setitem__("high", p["high"] * 2),
        "params.epsilon not the spec's": lambda pl: pl["params"].__setitem__("epsilon", p["epsilon"] * 2),
        "an unknown params field": lambda pl: pl["params"].__setitem__("extra", 1),
        "guarantee.epsilon above the spec's budget": lambda pl: pl["guarantee"].__setitem__(
            "epsilon", math.nextafter(float(plan["spec"]["epsilon"]), math.inf)),
        "guarantee.notion changed": lambda pl: pl["guarantee"].__setitem__("notion", "ULDP"),
    }
    if len(p["component_weights"]) > 1:
        edits["the hybrid's weights moved by one grid step"] = lambda pl: pl["params"].__setitem__(
            "component_weights", [p["component_weights"][0] + 1, p["component_weights"][1] - 1])
        edits["a component's weight set to zero (Duchi's block dropped)"] = lambda pl: pl["params"].__setitem__(
            "component_weights", [2**48, 0])
    return edits


def numeric_fixtures(add) -> None:
    """The numeric plans of the test vectors (duchi, piecewise, hybrid, square-wave): honest, and each tampering."""
    sys.path.insert(0, str(ROOT / "vectors"))
    import generate

    for name in ("numeric-duchi", "numeric-piecewise", "numeric-hybrid", "numeric-square-wave"):
        plan = ldpplan.make_plan(copy.deepcopy(generate.CASES[name][1]))
        add(f"{name}--honest", plan, True, case="honest")
        for i, (what, edit) in enumerate(_numeric_tamperings(plan).items()):
            tampered = copy.deepcopy(plan)
            edit(tampered)
            add(f"{name}--tampered-{i}", tampered, False, case=what)


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "clients/typescript/test/fixtures/gate"))

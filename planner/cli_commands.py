"""The planner's commands of the ``ldpplan`` command line: plan, verify, simulate, audit, options,
schema, explain and report (click + rich). Part of the CLI (it prints); the group in
:mod:`ldpplan.planner.cli` loads this module when one of these commands runs.

Exit codes: 0 success; 1 a privacy guarantee does not hold (``verify``, or a plan that
fails its re-check before ``perturb``/``estimate``); 2 bad input (spec, plan file, data or
reports file, options), reported as one line on stderr without a traceback. Anything
unexpected is reported as an internal error (exit 2), also on one line; set ``LDPPLAN_DEBUG=1`` to get
the traceback instead.
"""
from __future__ import annotations

import json
import shlex

import click
import numpy as np

from . import _console, _io, api
from ..mechanisms import read_plan
from ._cli_errors import EXIT_OK, EXIT_VIOLATED
from ._console import print_message, print_tables, progress_bar
from ._io import write_bytes_atomic, write_json_atomic
from ._report import SimulateOptions, Table
from .auditing import audit
from .auditing.external import ExternalRuntime
from .cli_runtime import _echo_json, _say_skipped
from .errors import InputDataError, PrivacyViolation, SpecError
from .reporting import report
from .reporting.page import read_json as read_json_input
from .shuffle import central_tables

__all__ = ["audit_cmd", "explain_cmd", "options_cmd", "plan_cmd", "report_cmd", "schema_cmd", "simulate_cmd", "verify_cmd"]


@click.command("plan", short_help="Solve a spec into a verified plan.")
@click.argument("spec", required=False, type=click.Path(dir_okay=False))
@click.option("--example", "example", metavar="NAME", help="Plan an embedded example spec instead of SPEC.")
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Write the verified plan JSON here (atomically; never a plan that fails verification).")
@click.option("--json", "as_json", is_flag=True, help="Print the plan JSON to stdout instead of tables.")
@click.option("--list-examples", is_flag=True, help="List the embedded example names and exit.")
@click.option("--full", is_flag=True, help="Print every row of long tables (default: a summary of each).")
def plan_cmd(spec, example, output, as_json, list_examples, full):
    """Solve SPEC (TOML or JSON) into a verified plan.

    \b
    Examples:
      ldpplan plan examples/health.toml -o health.json
      ldpplan plan --example health --json
      ldpplan plan --list-examples
    """

    if list_examples:
        for name in api.list_examples():
            click.echo(name)
        return
    if (spec is None) == (example is None):
        raise SpecError("SPEC/--example", "give exactly one of a spec file or --example NAME", spec or example)
    plan = api.make_plan(api.example_spec(example) if example else spec)
    public = [p for p in plan.get("planning_inputs") or [] if isinstance(p, dict) and p.get("private") is False]
    if public:
        what = "; ".join(f"{p.get('what')} from {p.get('source')}" for p in public)
        print_message(f"this plan read raw data outside the stated epsilon (planning_inputs with private: false): "
                      f"{what}", prefix="warning:", style="bold yellow", stderr=True)
    if output:  # make_plan's family re-verified it (never returns a failing plan): not verified again here

        if (plan.get("verification") or {}).get("holds") is not True:  # pragma: no cover - make_plan raises first
            raise PrivacyViolation("refusing to write a plan that fails verification", {})
        write_json_atomic(output, plan)
    if as_json:  # exactly the plan (pipe it to a file); `ldpplan verify --json` gives its fingerprint
        _echo_json(plan)
        return
    print_tables(api.summarize(plan), full=full)
    _print_central(plan)
    ver = plan.get("verification", {})
    print_message(str(ver.get("message", "holds")), prefix="verified:", style="green")
    print_message(api.fingerprint(plan), prefix="fingerprint:")
    if output:
        _console.console().print(f"plan written to {output}", markup=False, highlight=False, soft_wrap=True)


@click.command("verify", short_help="Re-check a plan (exit 0 holds, 1 violated, 2 invalid).")
@click.argument("plan_file", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the verification result as JSON.")
def verify_cmd(plan_file, as_json):
    """Re-check PLAN_FILE from its numbers: exit 0 holds, 1 violated, 2 unreadable/invalid.

    Prints the plan's fingerprint (sha256:...) when it holds: clients pin it with
    ``ldpplan.load(plan, fingerprint=...)``.

    \b
    Examples:
      ldpplan verify health.json
      ldpplan verify health.json --json
    """

    plan = _io.read_plan_file(plan_file)
    result = api.verify_plan(plan)
    if as_json:
        _echo_json({"holds": result.holds, "message": result.message, "details": result.details,
                    "fingerprint": api.fingerprint(plan)})
    elif result.holds:
        _print_central(plan)
        print_message(result.message, prefix="holds:", style="green")
        print_message(api.fingerprint(plan), prefix="fingerprint:")
    else:
        print_message(result.message, prefix="violated:", style="bold red", stderr=True)
    raise click.exceptions.Exit(EXIT_OK if result.holds else EXIT_VIOLATED)


def _print_central(plan) -> None:
    """The plan's central guarantees (``guarantee.shuffled``, ``shuffled_lifetime``), when it has them."""

    tables = central_tables(plan)
    if tables:
        print_tables(tables)


def _parse_options(pairs) -> dict[str, str]:
    """``-O KEY=VALUE`` pairs as strings, untouched (the family's options model parses them)."""

    out: dict[str, str] = {}
    for pair in pairs:
        if "=" not in pair:
            raise SpecError("-O/--option", "must be KEY=VALUE", pair)
        key, value = pair.split("=", 1)
        if key in out:
            raise SpecError(f"-O {key}", "is given more than once", value)
        out[key] = value
    return out


@click.command("simulate", short_help="Simulate a plan on real or synthetic data.", epilog="Family options (-O KEY=VALUE): run `ldpplan options MECHANISM` "
                                 "(e.g. `ldpplan options idue`) for the keys, defaults and descriptions.")
@click.argument("plan_file", type=click.Path(dir_okay=False))
@click.option("--data", type=click.Path(dir_okay=False),
              help="Real data file (CSV, or Parquet for the `perturb --input` layouts). Without it: the family's "
                   "synthetic default.")
@click.option("--trials", type=click.IntRange(min=1), default=10, show_default=True, help="Independent repetitions.")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Root seed (recorded in the output; drawn from OS entropy if omitted).")
@click.option("--mode", type=click.Choice(["aggregate", "runtime"]), default="aggregate", show_default=True,
              help="aggregate: exact-in-distribution count sampling; runtime: perturb every user with the client runtime.")
@click.option("-O", "--option", "options", multiple=True, metavar="KEY=VALUE",
              help="Family-specific option (repeatable); `ldpplan options MECHANISM` lists them.")
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable results as JSON.")
@click.option("--plot", type=click.Path(dir_okay=False), help="Draw a figure to this PNG file.")
@click.option("--skip-empty", is_flag=True,
              help="Drop --data rows whose item (key) is empty and say how many. Without it such rows are an error.")
@click.option("--rounds", type=click.IntRange(min=1), default=None,
              help="Longitudinal plans: collection rounds to simulate (default: the plan's; same as -O rounds=T).")
@click.option("--full", is_flag=True, help="Print every row of long tables (default: a summary of each).")
def simulate_cmd(plan_file, data, trials, seed, mode, options, as_json, plot, skip_empty, rounds, full):
    """Run PLAN_FILE over real records and compare empirical error with theory.

    \b
    Examples:
      ldpplan simulate ml.json --data ../shared/data/movielens_ratings.csv --trials 10 --seed 1
      ldpplan simulate gss.json --seed 1 -O bayes_errors=0.5,0.8 --plot fig.png
      ldpplan options pie        # the -O keys of a family
    """


    if seed is None:
        entropy = np.random.SeedSequence().entropy  # drawn from the OS: an int
        assert isinstance(entropy, int)
        seed = int(entropy % (2**63))
    extra = _parse_options(options) | ({} if rounds is None else {"rounds": str(rounds)})
    opts = SimulateOptions(data=data, trials=trials, seed=seed, mode=mode, extra=extra, skip_empty=skip_empty)
    plan = _io.read_plan_file(plan_file)
    if as_json or not _console.interactive(stderr=True):
        report = api.simulate(plan, opts)
    else:
        with progress_bar("simulating") as progress:
            report = api.simulate(plan, opts, progress=progress)
    _say_skipped(int(report.data.get("skipped_empty") or 0), data)
    if plot:
        if report.plot is None:
            raise SpecError("--plot", "this plan's simulation has no figure", plot)
        report.plot(plot)
    payload = dict(report.data)
    payload.setdefault("seed", seed)
    payload.setdefault("trials", trials)
    payload.setdefault("mode", mode)
    if as_json:
        _echo_json(payload)
        return
    print_tables(report.tables, full=full)
    _print_central(plan)
    _console.console().print(f"seed={seed} trials={trials} mode={mode}" + (f"; figure written to {plot}" if plot else ""),
                    style="dim", markup=False, soft_wrap=True)


@click.command("audit", short_help="Measure a lower bound on epsilon from the runtime (exit 1: it leaks).")
@click.argument("plan_file", type=click.Path(dir_okay=False))
@click.option("--trials", type=click.IntRange(min=1), default=None,
              help="Runs of the mechanism on each confirmed input (default: the fewest, at least 10000, for which "
                   "a leak to 1.08 x the claim is caught with probability 0.95, i.e. min_detectable_epsilon <= "
                   "1.08 x claim; for a pooled test on a huge domain, halfway from the claim to the largest ratio "
                   "its event can show; capped at 4000000 and a work budget, where the note's stated power shows "
                   "the target missed).")
@click.option("--confidence", type=click.FloatRange(min=0.0, max=1.0, min_open=True, max_open=True), default=0.95,
              show_default=True, help="Joint confidence of the lower bounds (Clopper-Pearson, Bonferroni).")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Seed of numpy's default_rng (reproducible audit).")
@click.option("--runtime-cmd", "runtime_cmd", default=None, metavar='"CMD ..."',
              help="Audit an external program instead of the numpy runtime: it is run as CMD ... PLAN SEED INPUT "
                   "OUTPUT [MEMO] (JSON lines in and out; its output is checked against the plan's report "
                   "format; protocol in docs/AUDIT.md).")
@click.option("--runtime-timeout", "runtime_timeout", type=click.FloatRange(min=0.0, min_open=True), default=600.0,
              show_default=True, help="Seconds one run of the --runtime-cmd program may take (then its process "
                                      "group is ended, exit 2).")
@click.option("--json", "as_json", is_flag=True, help="Print the audit result as JSON.")
@click.option("--full", is_flag=True, help="Print every tested pair (default: a summary of long tables).")
def audit_cmd(plan_file, trials, confidence, seed, runtime_cmd, runtime_timeout, as_json, full):
    """Run PLAN_FILE's runtime on tight input pairs and bound its epsilon from below.

    First every input is screened (every report column, so a column that depends on the input
    is found); then the tight pairs and the screen's top candidates are bounded on fresh runs.
    The note states the run's power: a leak to epsilon >= X would have been caught (prob. 0.95).
    Exit 0 when every lower bound is at most its claim, 1 when one exceeds it (the
    implementation leaks), 2 on bad input. `verify` proves the numbers; `audit` measures the code.

    \b
    Examples:
      ldpplan audit health.json --seed 1
      ldpplan audit health.json --trials 200000 --confidence 0.99 --json
      ldpplan audit rr.json --runtime-cmd "node examples/clients/rr.js"
    """
    rng = np.random.default_rng(seed)
    mechanism = None
    plan = read_plan(plan_file)  # the plan file, read once (strict JSON; audit and its runtime check the rest)
    if runtime_cmd is not None:

        try:
            words = shlex.split(runtime_cmd)
        except ValueError as exc:
            raise InputDataError(f"--runtime-cmd: not a command line ({exc}): {runtime_cmd!r:.80}") from None
        mechanism = ExternalRuntime(plan_file, words, plan, timeout=runtime_timeout)
    if as_json or not _console.interactive(stderr=True):
        result = audit(plan, mechanism=mechanism, trials=trials, confidence=confidence, rng=rng)
    else:
        with progress_bar("auditing") as progress:
            result = audit(plan, mechanism=mechanism, trials=trials, confidence=confidence, rng=rng,
                           progress=progress)
    if as_json:
        _echo_json(dict(result.to_dict(), seed=seed))
    else:
        print_tables([result.table()], full=full)
    if not result.consistent:
        raise click.exceptions.Exit(EXIT_VIOLATED)


@click.command("options", short_help="A family's -O options and perturb input columns.")
@click.argument("mechanism")
@click.option("--json", "as_json", is_flag=True, help="Print the options and the input format as JSON.")
def options_cmd(mechanism, as_json):
    """List a family's simulate options (-O KEY=VALUE) and its `perturb --input` columns.

    MECHANISM is a family (idue, pckv, pie, uldp) or a mechanism name (e.g. urr, pckv-ue).

    \b
    Examples:
      ldpplan options idue
      ldpplan options urr --json
    """

    family = api.family(mechanism, field="MECHANISM")
    rows = api.options_help(family)
    if as_json:
        _echo_json({"family": family.name, "options": api.options_json(family), "input_doc": family.input_doc})
        return
    print_tables([Table(title=f"{family.name}: simulate options (-O KEY=VALUE)",
                        columns=["option", "default", "description"], rows=rows or [["(none)", "", ""]])], full=True)
    _console.console().print(f"perturb --input ({family.name}): {family.input_doc}", markup=False, highlight=False)


@click.command("schema", short_help="Print the JSON Schema of plan files.")
@click.option("--mechanism", default=None, metavar="NAME",
              help="Only this family's part (a family name such as uldp, or a mechanism name such as urr).")
def schema_cmd(mechanism):
    """Print the JSON Schema of plan files (format 2.0, composed over every family).

    \b
    Examples:
      ldpplan schema > plan-2.0.schema.json
      ldpplan schema --mechanism urr
    """

    click.echo(json.dumps(api.plan_schema(mechanism), indent=2))



@click.command("explain", short_help="The budget of one item set (IDUE-PS), or the central guarantee behind a shuffler.")
@click.argument("plan_file", type=click.Path(dir_okay=False))
@click.option("--items", metavar="A,B,C",
              help="Comma-separated items of one user's set (labels, or 0-based indices when the plan has none).")
@click.option("--shuffle-n", "shuffle_n", type=int, metavar="N",
              help="Users whose reports a shuffler mixes: print the central (epsilon, delta) for N.")
@click.option("--delta", type=float, metavar="D",
              help="delta of the central guarantee (with --shuffle-n; default: the plan's [shuffle] delta).")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
@click.option("--full", is_flag=True, help="Print every row of long tables (default: a summary of each).")
def explain_cmd(plan_file, items, shuffle_n, delta, as_json, full):
    """Explain what PLAN_FILE guarantees a user holding the item set ITEMS, or behind a shuffler.

    --items: IDUE-PS plans, eq. (16) of ID-LDP, epsilon_x = ln[eta sum_i e^eps_i / |x| + (1 - eta) e^eps*]
    with eta = |x| / max(|x|, L). IDUE plans: one item, its level's budget. Other plans: exit 2.

    --shuffle-n N --delta D: the central (epsilon, delta) of N shuffled reports of the plan (any
    plan with a plain local epsilon; ULDP: exit 2), e.g. for 10x fewer users than planned.

    \b
    Examples:
      ldpplan plan --example health-itemsets -o health-ps.json
      ldpplan explain health-ps.json --items hiv,anemia,headache
      ldpplan explain health-ps.json --items hiv --json
      ldpplan explain health-ps.json --shuffle-n 100000 --delta 1e-8
    """

    if (items is None) == (shuffle_n is None):
        raise SpecError("--items/--shuffle-n", "give exactly one of them", items if items is not None else shuffle_n)
    if shuffle_n is not None:
        plan = _io.read_plan_file(plan_file)
        if delta is None:  # the plan's own [shuffle] delta by default (issue 27)
            delta = (plan.spec.get("shuffle") or {}).get("delta")
        if delta is None:
            raise SpecError("--delta", "is required with --shuffle-n (the plan has no [shuffle] block to take it from)",
                            None)
        out = api.explain_shuffled(plan, shuffle_n, delta)
        if as_json:
            _echo_json(out)
            return
        rows = [["upper bound (sound)", out["epsilon"]], ["lower bound (a concrete pair)", out["epsilon_lower"]]]
        print_tables([Table(f"{str(out['mechanism']).upper()} (local epsilon {out['local_epsilon']:.6g} nats): central "
                            f"guarantee of n = {out['n']} shuffled reports at delta = {out['delta']:.3g}",
                            ["bound", "central epsilon (nats)"], rows, note=out["source"])], full=full)
        return
    if delta is not None:
        raise SpecError("--delta", "goes with --shuffle-n", delta)
    out = api.explain_items(_io.read_plan_file(plan_file), items)
    if as_json:
        _echo_json(out)
        return
    rows = [[str(x), e] for x, e in zip(out["items"], out["item_epsilons"])]
    note = (f"epsilon_x = {out['epsilon']:.6g} nats ({out['source']}); eta = |x| / max(|x|, L) = {out['eta']:.6g}"
            + (f", L = {out['padding_length']}, dummy epsilon* = {out['dummy_epsilon']:.6g}"
               if out["padding_length"] else ""))
    print_tables([Table(f"{out['mechanism'].upper()}: budget of the item set {{{', '.join(map(str, out['items']))}}}",
                        ["item", "level epsilon (nats)"], rows, note=note)], full=full)


@click.command("report", short_help="Write a self-contained HTML report of a verified plan.")
@click.argument("plan_file", type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="The HTML file to write (atomically; only for a plan that verifies).")
@click.option("--audit", "audit_file", type=click.Path(dir_okay=False), metavar="AUDIT.json",
              help="Add an audit result of this plan (what `ldpplan audit PLAN --json` wrote).")
@click.option("--simulate", "simulate_file", type=click.Path(dir_okay=False), metavar="SIM.json",
              help="Add a simulation of this plan (what `ldpplan simulate PLAN --json` wrote).")
def report_cmd(plan_file, output, audit_file, simulate_file):
    """Write one HTML page on PLAN_FILE for privacy reviewers (exit 1, and no file, if it does not verify).

    The guarantee in words and numbers, the predicted error with figures and what-ifs, the trust
    model and hazards (from docs/SECURITY.md), the verification, the fingerprint and a
    machine-readable record; inline CSS and SVG, no script and no external reference.

    \b
    Examples:
      ldpplan report health.json -o health.html
      ldpplan audit health.json --seed 1 --json > audit.json
      ldpplan report health.json -o health.html --audit audit.json
    """

    plan = _io.read_plan_file(plan_file)
    extra = {"audit": read_json_input(audit_file, "--audit") if audit_file else None,
             "simulation": read_json_input(simulate_file, "--simulate") if simulate_file else None}
    result = api.verify_plan(plan)
    if not result.holds:
        print_message(f"no report for a plan that fails verification: {result.message}", prefix="violated:",
                      style="bold red", stderr=True)
        raise click.exceptions.Exit(EXIT_VIOLATED)
    write_bytes_atomic(output, report(plan, **extra).encode("utf-8"))
    print_message(f"report written to {output}", prefix="holds:", style="green")

"""The ``ldpplan`` command line (click + rich). The only module that prints.

Exit codes: 0 success; 1 a privacy guarantee does not hold (``verify``, or a
solved plan that failed its re-check); 2 bad input (spec, plan file, data file,
options), reported as one line without a traceback.
"""
from __future__ import annotations

import functools
import json
import sys

import click

EXIT_OK, EXIT_VIOLATED, EXIT_BAD_INPUT = 0, 1, 2


def _console(stderr: bool = False):
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, highlight=False, soft_wrap=False, width=None if stream.isatty() else 150)


def _fail(message: str, code: int) -> None:
    from rich.markup import escape

    _console(stderr=True).print(f"[bold red]error:[/] {escape(message)}", markup=True, highlight=False, soft_wrap=True)
    sys.exit(code)


def handle_errors(fn):
    """Map planner errors to one-line messages and exit codes (no traceback)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from .errors import LdpplanError, PrivacyViolation

        try:
            return fn(*args, **kwargs)
        except PrivacyViolation as exc:
            _fail(str(exc), EXIT_VIOLATED)
        except LdpplanError as exc:
            _fail(str(exc), EXIT_BAD_INPUT)
        except ImportError as exc:
            if "mechanisms" in str(exc) or "planner" in str(exc):
                _fail(f"this mechanism is not available in this build ({exc})", EXIT_BAD_INPUT)
            raise
    return wrapper


def _fmt(cell) -> str:
    if isinstance(cell, float):
        return f"{cell:.4g}"
    return str(cell)


_LEFT_COLUMNS = ("level", "name", "mechanism", "item", "metric", "key", "allocation", "target", "estimator")


def print_tables(tables, console=None) -> None:
    """Render planner Tables with rich."""
    from rich.table import Table as RichTable

    console = console or _console()
    for t in tables:
        rt = RichTable(title=t.title, title_justify="left", show_lines=False)
        for col in t.columns:
            rt.add_column(str(col), justify="right" if col not in _LEFT_COLUMNS else "left")
        for row in t.rows:
            rt.add_row(*[_fmt(c) for c in row])
        console.print(rt)
        if t.note:
            console.print(t.note, style="dim", markup=False)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ldpplan", prog_name="ldpplan")
def main() -> None:
    """ldpplan: plan, verify and run local-differential-privacy mechanisms.

    \b
    Typical flow:
      ldpplan plan SPEC.toml -o plan.json     # solve a spec, write a verified plan
      ldpplan verify plan.json                # independent re-check (exit 0/1/2)
      ldpplan simulate plan.json --data X.csv # accuracy on real data vs theory
      ldpplan plan --example health           # an embedded example
    """


@main.command("plan")
@click.argument("spec", required=False, type=click.Path(dir_okay=False))
@click.option("--example", "example", metavar="NAME", help="Plan an embedded example spec instead of SPEC.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the verified plan JSON here (atomically).")
@click.option("--json", "as_json", is_flag=True, help="Print the plan JSON to stdout instead of tables.")
@click.option("--list-examples", is_flag=True, help="List the embedded example names and exit.")
@handle_errors
def plan_cmd(spec, example, output, as_json, list_examples):
    """Solve SPEC (TOML or JSON) into a verified plan."""
    from . import api
    from ._io import to_jsonable
    from .errors import SpecError

    if list_examples:
        for name in api.list_examples():
            click.echo(name)
        return
    if (spec is None) == (example is None):
        raise SpecError("SPEC/--example", "give exactly one of a spec file or --example NAME", spec or example)
    raw = api.example_spec(example) if example else spec
    plan = api.make_plan(raw)
    if output:
        api.write_plan(plan, output)
    if as_json:
        click.echo(json.dumps(to_jsonable(plan), indent=2))
        return
    print_tables(api.summarize(plan))
    ver = plan.get("verification", {})
    con = _console()
    con.print(f"[green]verified[/]: {ver.get('message', 'holds')}")
    if output:
        con.print(f"plan written to [bold]{output}[/]")


@main.command("verify")
@click.argument("plan_file", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the verification result as JSON.")
@handle_errors
def verify_cmd(plan_file, as_json):
    """Re-check PLAN_FILE from its numbers: exit 0 holds, 1 violated, 2 unreadable/invalid."""
    from . import api
    from ._io import to_jsonable

    result = api.verify_plan(plan_file)
    if as_json:
        click.echo(json.dumps(to_jsonable({"holds": result.holds, "message": result.message, "details": result.details}), indent=2))
    elif result.holds:
        _console().print(f"[green]holds[/]: {result.message}", markup=True, soft_wrap=True)
    else:
        from rich.markup import escape

        _console(stderr=True).print(f"[bold red]violated[/]: {escape(result.message)}", soft_wrap=True)
    sys.exit(EXIT_OK if result.holds else EXIT_VIOLATED)


def _parse_options(pairs) -> dict[str, str]:
    from .errors import SpecError

    out = {}
    for pair in pairs:
        if "=" not in pair:
            raise SpecError("-O/--option", "must be KEY=VALUE", pair)
        k, v = pair.split("=", 1)
        out[k.strip()] = v.strip()
    return out


@main.command("simulate")
@click.argument("plan_file", type=click.Path(dir_okay=False))
@click.option("--data", type=click.Path(dir_okay=False), help="Real data file (CSV). Without it: the family's synthetic default.")
@click.option("--trials", type=click.IntRange(min=1), default=10, show_default=True, help="Independent repetitions.")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Root seed (recorded in the output; drawn from OS entropy if omitted).")
@click.option("--mode", type=click.Choice(["aggregate", "runtime"]), default="aggregate", show_default=True,
              help="aggregate: exact-in-distribution count sampling; runtime: perturb every user with the client runtime.")
@click.option("-O", "--option", "options", multiple=True, metavar="KEY=VALUE", help="Family-specific option (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable results as JSON.")
@click.option("--plot", type=click.Path(dir_okay=False), help="Draw a figure to this PNG file.")
@handle_errors
def simulate_cmd(plan_file, data, trials, seed, mode, options, as_json, plot):
    """Run PLAN_FILE over real records and compare empirical error with theory."""
    import numpy as np

    from . import api
    from ._io import to_jsonable
    from ._report import SimulateOptions

    if seed is None:
        seed = int(np.random.SeedSequence().entropy % (2**63))
    opts = SimulateOptions(data=data, trials=trials, seed=seed, mode=mode, extra=_parse_options(options))
    plan = api.read_plan(plan_file)
    if as_json:
        report = api.simulate(plan, opts)
    else:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(),
                      TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(),
                      console=_console(stderr=True), transient=True) as bar:
            task = bar.add_task("simulating", total=None)

            def progress(advance: int, total: int) -> None:
                bar.update(task, advance=advance, total=total)

            report = api.simulate(plan, opts, progress=progress)
    if plot:
        if report.plot is None:
            from .errors import SpecError
            raise SpecError("--plot", "this plan's simulation has no figure", plot)
        report.plot(plot)
    payload = dict(report.data)
    payload.setdefault("seed", seed)
    payload.setdefault("trials", trials)
    payload.setdefault("mode", mode)
    if as_json:
        click.echo(json.dumps(to_jsonable(payload), indent=2))
        return
    print_tables(report.tables)
    _console().print(f"seed={seed} trials={trials} mode={mode}" + (f"; figure written to {plot}" if plot else ""),
                     style="dim", markup=False)


@main.command("perturb")
@click.argument("plan_file", type=click.Path(dir_okay=False))
@click.option("--input", "input_path", required=True, type=click.Path(dir_okay=False),
              help="Users' true inputs (CSV; format depends on the mechanism, see docs).")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="Reports file to write (.npz).")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Seed (recorded in the reports file).")
@handle_errors
def perturb_cmd(plan_file, input_path, output, seed):
    """Perturb every user's input with the client runtime and write the reports."""
    import numpy as np

    from . import api
    from .families import family_of_plan

    if seed is None:
        seed = int(np.random.SeedSequence().entropy % (2**63))
    plan = api.read_plan(plan_file)
    info = family_of_plan(plan).perturb_file(plan, input_path, output, np.random.default_rng(seed))
    _console().print(f"wrote {info.get('n', '?')} reports to {output} (seed={seed})")


@main.command("estimate")
@click.argument("plan_file", type=click.Path(dir_okay=False))
@click.argument("reports", type=click.Path(dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write estimates as CSV (atomically).")
@click.option("--json", "as_json", is_flag=True, help="Print estimates as JSON.")
@click.option("--method", default=None, metavar="NAME",
              help="Estimator, for families that offer several (RR/ULDP: empirical, threshold, em).")
@handle_errors
def estimate_cmd(plan_file, reports, output, as_json, method):
    """Estimate frequencies (and means, for key-value plans) from a reports file."""
    from . import api
    from ._io import to_jsonable, write_bytes_atomic
    from .families import family_of_plan

    plan = api.read_plan(plan_file)
    family = family_of_plan(plan)
    if method is None:
        table = family.estimate_file(plan, reports)
    else:
        import inspect

        if "method" not in inspect.signature(family.estimate_file).parameters:
            from .errors import SpecError
            raise SpecError("--method", f"mechanism {plan['mechanism']!r} has a single estimator", method)
        table = family.estimate_file(plan, reports, method=method)
    if output:
        import csv
        import io

        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(table.columns)
        w.writerows(table.rows)
        write_bytes_atomic(output, buf.getvalue().encode("utf-8"))
    if as_json:
        click.echo(json.dumps(to_jsonable(table.to_dict()), indent=2))
    elif not output:
        print_tables([table])
    else:
        _console().print(f"estimates for {len(table.rows)} entries written to {output}")


@main.command("schema")
@click.option("--mechanism", default=None, help="Only this mechanism family's plan schema.")
@handle_errors
def schema_cmd(mechanism):
    """Print the JSON Schema of plan files."""
    from . import api

    click.echo(json.dumps(api.plan_schema(mechanism), indent=2))


if __name__ == "__main__":  # pragma: no cover
    main()

"""The runtime's commands of the ``ldpplan`` command line: ``perturb`` (clients' inputs into a
reports file), ``aggregate`` (report and aggregate files into one aggregate) and ``estimate``.

Part of the CLI (it prints); the ``ldpplan`` group (:mod:`ldpplan.planner.cli`) loads
:data:`RUNTIME_COMMANDS` on use, and its error handling (exit codes 0/1/2, one line) covers them.
"""
from __future__ import annotations

import json

import click
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

from . import _console
from ._console import fail, print_message, print_tables
from ._io import to_jsonable
from ._memoized_io import NEW_MEMO_COST
from ._memory import parse_memory
from ._report import counted
from ._runtime_io import (check_confidence, estimate_file, estimate_json, estimate_table, perturb_file, verified_plan,
                          write_estimate_csv)
from .aggregate import aggregate_files, write_aggregate_file

__all__ = ["RUNTIME_COMMANDS", "fail"]


def _echo_json(obj) -> None:

    click.echo(json.dumps(to_jsonable(obj), indent=2, allow_nan=False))


@click.command("perturb", short_help="Perturb users' inputs into a reports file.")
@click.argument("plan_file", type=click.Path(dir_okay=False))
@click.option("--input", "input_path", required=True, type=click.Path(dir_okay=False),
              help="Users' true inputs (CSV, or Parquet with the same columns; streamed). The columns depend on "
                   "the family: single items a column `item` "
                   "(a label of domain.labels, or a 0-based index), item sets rows `user,item`, key-value rows "
                   "`user,key,value`; `ldpplan options MECHANISM` prints the exact format.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Reports file to write (Parquet, see docs/REPORTS.md; atomically, nothing on error).")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Reproducible simulation: numpy's default_rng(SEED), recorded in the file. Without it "
                   "(production) the reports are drawn from a cryptographically secure generator.")
@click.option("--skip-empty", is_flag=True,
              help="Drop rows whose item (key) is empty and say how many. Without it such rows are an error.")
@click.option("--memo", type=click.Path(dir_okay=False), default=None,
              help="Longitudinal (memoized) plans: the clients' memo file of permanent responses (checked, and "
                   "rewritten before the reports are written); the input then has columns user (integer ids), item.")
@click.option("--round", "round_", type=click.IntRange(min=0), default=None,
              help="Longitudinal plans: the collection round (0-based) the reports carry; rounds go forward only.")
@click.option("--new-memo", is_flag=True,
              help="Longitudinal plans: start the --memo file (refused when it exists). Users who reported before "
                   "lose the memo's protection: their values already reported are exposed again.")
@click.option("--skip-over-limit", is_flag=True,
              help="Longitudinal plans: drop and count users whose values would exceed the plan's limit, "
                   "instead of refusing the file.")
def perturb_cmd(plan_file, input_path, output, seed, skip_empty, memo, round_, new_memo, skip_over_limit):
    """Verify PLAN_FILE, perturb every user's input with the client runtime, write the reports.

    The input is streamed (CSV or Parquet, a chunk of rows at a time); on a terminal a progress
    bar shows the bytes read.

    \b
    Examples:
      ldpplan perturb health.json --input users.csv -o reports.parquet
      ldpplan perturb health.json --input users.csv -o reports.parquet --seed 7   # reproducible
      ldpplan options idue       # the --input columns of a family
    """

    with _bytes_progress("perturbing") as progress:
        result = perturb_file(plan_file, input_path, output, seed=seed, skip_empty=skip_empty, progress=progress,
                              memo=memo, round=round_, new_memo=new_memo, skip_over_limit=skip_over_limit)
    _say_skipped(result.skipped_empty, input_path)
    _say_memo(result, memo)
    how = "secure random generator" if seed is None else f"seed={seed}: a reproducible simulation, not for production"
    _console.console().print(f"wrote {counted(result.n, 'report')} of {result.mechanism} to {output} ({how})", markup=False,
                    highlight=False, soft_wrap=True)


def _say_skipped(count: int, path) -> None:
    """``--skip-empty``: one line on stderr saying how many rows were dropped."""
    if count:

        print_message(f"skipped {count:,} row{'s' if count != 1 else ''} of {path} with an empty item "
                      "(--skip-empty)", prefix="note:", style="yellow", stderr=True)


def _say_memo(result, memo) -> None:
    """Memoized plans: the users dropped over the limit, and what a memo started after round 0 costs."""

    if result.skipped_over_limit:
        print_message(f"skipped {result.skipped_over_limit:,} user{'s' if result.skipped_over_limit != 1 else ''} whose "
                      "values would exceed the plan's limit (--skip-over-limit)", prefix="note:", style="yellow",
                      stderr=True)
    if result.memo_started:
        cost = f"; if any of these users reported before round {result.round}, {NEW_MEMO_COST}" if result.round else ""
        print_message(f"started a new memo {memo}{cost}", prefix="note:", style="yellow", stderr=True)


class _bytes_progress:
    """A rich progress bar of bytes read on stderr when it is a terminal; else no callback (``None``)."""

    def __init__(self, what: str):
        self.what = what
        self.bar: Progress | None = None

    def __enter__(self):

        if not _console.interactive(stderr=True):
            return None

        self.bar = bar = Progress(TextColumn("[progress.description]{task.description}"), BarColumn(),
                                  DownloadColumn(), TimeRemainingColumn(), console=_console.console(stderr=True),
                                  transient=True)
        bar.__enter__()
        task = bar.add_task(self.what, total=None)

        def progress(advance: int, total: int) -> None:
            bar.update(task, advance=advance, total=total)

        return progress

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)


#: ``--max-memory`` of aggregate and estimate (planner/_memory.py predicts the peak from the plan).
_MAX_MEMORY_HELP = ("Memory budget (e.g. 1GiB, 512MiB, 4GB): an operation over the full domain whose predicted peak "
                    "is larger is refused before it allocates, naming the memory it would need.")


@click.command("aggregate", short_help="Merge report files (and aggregates) into an aggregate file.")
@click.argument("plan_file", type=click.Path(dir_okay=False))
@click.argument("inputs", nargs=-1, required=True)
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Aggregate file to write (JSON; atomically, nothing on error).")
@click.option("--engine", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="local: this process; dask: one task per row group on a Dask cluster (ldpplan[dask]).")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Dask scheduler (tcp://host:port); without it --engine dask starts a LocalCluster.")
@click.option("--max-memory", "max_memory", default="1GiB", show_default=True, metavar="SIZE",
              help=_MAX_MEMORY_HELP)
def aggregate_cmd(plan_file, inputs, output, engine, scheduler, max_memory):
    """Aggregate INPUTS (Parquet report files, globs, earlier aggregate files) of PLAN_FILE.

    \b
    Examples:
      ldpplan aggregate health.json 'day1/*.parquet' -o day1.json
      ldpplan aggregate health.json day1.json day2.json -o total.json
      ldpplan aggregate health.json 'reports/*.parquet' -o agg.json --engine dask
    """

    budget = parse_memory(max_memory)
    result = aggregate_files(verified_plan(plan_file), list(inputs), engine=engine, scheduler=scheduler,
                             max_memory=budget)
    write_aggregate_file(output, result)
    _console.console().print(f"wrote the aggregate of {counted(result.n, 'report')} from {counted(len(result.sources), 'file')} "
                    f"({engine} engine) to {output}", markup=False, highlight=False, soft_wrap=True)


@click.command("estimate", short_help="Estimate frequencies (and means) from reports or aggregates.")
@click.argument("plan_file", type=click.Path(dir_okay=False))
@click.argument("inputs", nargs=-1, required=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write estimates as CSV (atomically).")
@click.option("--json", "as_json", is_flag=True, help="Print estimates as JSON (domain order).")
@click.option("--method", default=None, metavar="NAME",
              help="Estimator (the mechanism's `methods`; the first is the default; `empirical` always exists).")
@click.option("--confidence", default=None, metavar="LEVEL",
              help="Add confidence intervals at LEVEL in (0, 1), e.g. 0.95 (ci_low/ci_high; PCKV means too).")
@click.option("--round", "round_", type=click.IntRange(min=0), default=None,
              help="Longitudinal plans: the collection round to estimate (default: the last one in INPUTS; the "
                   "output names it).")
@click.option("--min-reports", type=click.IntRange(min=1), default=None,
              help="Longitudinal plans: the fewest reports the round must have (default 100); fewer is refused.")
@click.option("--max-memory", "max_memory", default="1GiB", show_default=True, metavar="SIZE",
              help=_MAX_MEMORY_HELP)
@click.option("--items", default=None, metavar="A,B,...",
              help="k-RR and GLH plans: estimate only these items (labels or 0-based indices), from the reports "
                   "a batch at a time, in memory independent of the domain's size.")
@click.option("--full", is_flag=True, help="Print every entry (default: a summary of long tables; -o and --json "
                                           "always hold every entry).")
def estimate_cmd(plan_file, inputs, output, as_json, method, confidence, round_, min_reports, max_memory, items,
                 full):
    """Estimate frequencies (and means, for key-value plans) from INPUTS of PLAN_FILE.

    INPUTS are Parquet report files (globs allowed) or aggregate files of `ldpplan aggregate`.

    \b
    Examples:
      ldpplan estimate health.json reports.parquet
      ldpplan estimate health.json 'reports/*.parquet' --method empirical --json
      ldpplan estimate health.json agg.json -o estimates.csv
      ldpplan estimate health.json agg.json --json --confidence 0.95
      ldpplan estimate big-rr.json reports.parquet --items 17,42   # a domain too large to estimate whole
    """


    level = check_confidence(confidence)
    result = estimate_file(plan_file, list(inputs), method=method, round=round_, min_reports=min_reports,
                           max_memory=parse_memory(max_memory), items=items)
    if output:
        write_estimate_csv(result, output, level)
    if as_json:
        _echo_json(estimate_json(result, level))
    elif output:
        which = "" if result.round is None else f" of round {result.round}"
        _console.console().print(f"estimates{which} of {counted(len(result.labels), 'entry', 'entries')} written to {output}",
                        markup=False, highlight=False, soft_wrap=True)
    else:
        print_tables([estimate_table(result, level)], full=full)
        est = result.estimate
        if hasattr(est, "mean_interval"):  # numeric plans: the mean of the values, in their units
            shown = 0.95 if level is None else level
            low, high = est.mean_interval(shown)
            _console.console().print(f"mean of the values: {est.value_mean:.6g} (standard error {est.value_std_error:.3g}; "
                                     f"{shown:.0%} interval [{low:.6g}, {high:.6g}], clipped to the plan's range)",
                                     markup=False, highlight=False, soft_wrap=True)


#: The commands this module adds to the ``ldpplan`` group.
RUNTIME_COMMANDS = (perturb_cmd, aggregate_cmd, estimate_cmd)

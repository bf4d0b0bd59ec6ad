"""The ``ldpplan`` command line (click + rich): the group, its error handling and the table of its commands.

Part of the CLI (with the command modules, the only modules that print). ``ldpplan --help`` lists the commands with their short help from
:data:`COMMANDS` without importing them (click's lazy group, "Lazily Loading Subcommands" in
click's documentation); a command's module (:mod:`ldpplan.planner.cli_commands`,
:mod:`ldpplan.planner.cli_runtime`) is imported when the command runs or its own ``--help`` is
asked. ``tests/test_cli_lazy.py`` checks that each short help here equals the command's own.

Exit codes: 0 ok, 1 a guarantee does not hold, 2 bad input (one line on stderr, no traceback);
anything unexpected is an internal error (exit 2, one line; ``LDPPLAN_DEBUG=1`` shows the traceback).
"""
from __future__ import annotations

import os

import click

from ._cli_errors import classify, one_line
from ._console import fail

__all__ = ["COMMANDS", "main"]

#: command name -> (``module:attribute`` under ``ldpplan.planner``, its short help as ``ldpplan --help`` shows it)
COMMANDS: dict[str, tuple[str, str]] = {
    "aggregate": ("cli_runtime:aggregate_cmd", "Merge report files (and aggregates) into an aggregate file."),
    "audit": ("cli_commands:audit_cmd", "Measure a lower bound on epsilon from the runtime (exit 1: it leaks)."),
    "estimate": ("cli_runtime:estimate_cmd", "Estimate frequencies (and means) from reports or aggregates."),
    "explain": ("cli_commands:explain_cmd",
                "The budget of one item set (IDUE-PS), or the central guarantee behind a shuffler."),
    "options": ("cli_commands:options_cmd", "A family's -O options and perturb input columns."),
    "perturb": ("cli_runtime:perturb_cmd", "Perturb users' inputs into a reports file."),
    "plan": ("cli_commands:plan_cmd", "Solve a spec into a verified plan."),
    "report": ("cli_commands:report_cmd", "Write a self-contained HTML report of a verified plan."),
    "schema": ("cli_commands:schema_cmd", "Print the JSON Schema of plan files."),
    "simulate": ("cli_commands:simulate_cmd", "Simulate a plan on real or synthetic data."),
    "verify": ("cli_commands:verify_cmd", "Re-check a plan (exit 0 holds, 1 violated, 2 invalid)."),
}


def _usage_line(exc: click.exceptions.UsageError) -> str:
    """A click usage error as one line: the message and where the help is (no usage block)."""
    ctx = exc.ctx
    where = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    return one_line(exc.format_message()) + where


class _Group(click.Group):
    """Click group whose subcommands' exceptions all map to an exit code and one line; commands load on use.

    Usage errors (a bad option value, a missing argument, an unknown command) are one line
    on stderr too, exit 2, instead of click's four-line usage block.
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in COMMANDS and cmd_name not in self.commands:
            # the command modules import numpy, rich and the planner at their tops; `ldpplan --help` needs none
            from . import cli_commands, cli_runtime  # deferred: numpy

            module_name, attribute = COMMANDS[cmd_name][0].split(":")
            command = getattr({"cli_commands": cli_commands, "cli_runtime": cli_runtime}[module_name], attribute)
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands and their short help, from the table: no command module is imported."""
        rows = [(name, self.commands[name].get_short_help_str() if name in self.commands else COMMANDS[name][1])
                for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.exceptions.UsageError as exc:
            fail(_usage_line(exc), exc.exit_code)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except click.exceptions.UsageError as exc:
            fail(_usage_line(exc), exc.exit_code)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except KeyboardInterrupt:
            fail("interrupted", 130)
        except Exception as exc:  # noqa: BLE001 - the point: every exception maps to an exit code
            if os.environ.get("LDPPLAN_DEBUG"):  # developers: the full traceback
                raise
            code, message = classify(exc)
            fail(message, code)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="ldpplan", prog_name="ldpplan")
def main() -> None:
    """ldpplan: plan, verify and run local-differential-privacy mechanisms.

    \b
    Typical flow:
      ldpplan plan SPEC.toml -o plan.json       # solve a spec, write a verified plan
      ldpplan verify plan.json                  # independent re-check (exit 0/1/2)
      ldpplan simulate plan.json --data X.csv   # accuracy on real data vs theory
      ldpplan perturb plan.json --input users.csv -o reports.parquet
      ldpplan aggregate plan.json 'reports/*.parquet' -o agg.json   # mergeable counts
      ldpplan estimate plan.json agg.json       # frequencies (and means)
      ldpplan plan --example health             # an embedded example

    Exit codes: 0 ok, 1 a privacy guarantee does not hold, 2 bad input.
    """


if __name__ == "__main__":  # pragma: no cover - ``python -m ldpplan.planner.cli``
    main()

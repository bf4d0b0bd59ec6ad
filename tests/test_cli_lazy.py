"""The ``ldpplan`` group loads its commands lazily (issue 28, point 4; click's lazy group).

``ldpplan --help`` lists every command with its short help from the table in
``planner/cli.py`` without importing a command module; the table must say what each command says.
"""
from __future__ import annotations

import subprocess
import sys

import click
from click.testing import CliRunner

from ldpplan.planner import cli, cli_commands, cli_runtime


def test_the_table_names_every_command_and_its_own_short_help():
    modules = {"cli_commands": cli_commands, "cli_runtime": cli_runtime}
    found = {}
    for module in modules.values():
        found.update((obj.name, obj) for obj in vars(module).values() if isinstance(obj, click.Command))
    assert set(cli.COMMANDS) == set(found) and len(found) == 11
    for name, (where, short_help) in cli.COMMANDS.items():
        module_name, attribute = where.split(":")
        command = getattr(modules[module_name], attribute)
        assert command is found[name] and command.name == name
        assert command.get_short_help_str() == short_help, name
    assert set(cli_runtime.RUNTIME_COMMANDS) == {found["perturb"], found["aggregate"], found["estimate"]}


def _run(args: list[str]) -> list[str]:
    code = ("import sys\nfrom ldpplan.planner.cli import main\n"
            f"sys.argv = ['ldpplan', *{args!r}]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('ldpplan')))\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'rich', 'pydantic', 'scipy'}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd="/")
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()


def test_help_and_version_import_no_command_module_nor_numpy():
    for args in (["--help"], ["--version"]):
        lines = _run(args)
        ours, heavy = eval(lines[-2]), eval(lines[-1])  # noqa: S307 - our own subprocess's print of two lists
        assert not {"ldpplan.planner.cli_commands", "ldpplan.planner.cli_runtime", "ldpplan.planner.api"} & set(ours)
        assert heavy == [], (args, heavy)
    assert any(line.lstrip().startswith("estimate ") for line in _run(["--help"]))


def test_a_command_help_loads_its_module_only():
    lines = _run(["perturb", "--help"])
    assert "ldpplan.planner.cli_runtime" in eval(lines[-2])  # noqa: S307
    assert any("--input" in line for line in lines)


def test_the_help_lists_the_same_text_once_commands_are_loaded():
    runner = CliRunner()
    lazy = runner.invoke(cli.main, ["--help"]).output
    for name in cli.COMMANDS:  # every command now loaded: its own short help is printed instead of the table's
        cli.main.get_command(click.Context(cli.main), name)
    assert set(cli.main.commands) == set(cli.COMMANDS)
    assert runner.invoke(cli.main, ["--help"]).output == lazy

"""Run, check and refresh the console blocks of the README and of ``docs/`` (``tests/test_readme.py`` uses this module).

The checked files are :func:`checked_files`: ``README.md`` and every Markdown file under ``docs/``
(the blocks stay checked wherever they live). Each file runs in its own session, so a file's blocks
must not rely on files another document's blocks wrote.

Convention
----------
* A fenced block that opens with ```` ```console ```` is a session. Its lines starting with ``$ ``
  are commands; the lines after a command, up to the next command or the end of the block, are
  its expected output (stdout and stderr as a terminal would show them).
* ``...`` matches anything within a line; a line that is only ``...`` matches any number of lines
  (like doctest's ELLIPSIS). Write timings, dates, seeds drawn from entropy and paths of temporary
  folders as ``...``.
* A command with no output lines is run and must succeed (exit 0); its output is not checked.
* Monte Carlo commands (``ldpplan simulate`` and ``ldpplan audit``) print numbers that depend on
  numpy's sampling algorithms, which change between numpy releases even under the same seed. Their
  output matches when the text around the numbers matches (numbers and table padding masked) and
  every number is within a relative :data:`MONTE_CARLO_TOLERANCE` of the README's; every other
  command must match exactly.
* Run times are never compared (issue 27: a busy machine is not a wrong answer): a number with a
  unit of time (``3.6 s``, ``12 ms``, ``0.512 s.``; :data:`_DURATION`) matches any other run
  time, in every command, whether the README shows it or writes ``... s``.
* A command whose line ends with the comment ``# skip`` is not run.
* Commands that start with ``ldpplan`` (and use no shell operators) run in-process through click's
  ``CliRunner``; other commands run with ``bash -c``. Every block of a README runs in order in ONE
  temporary working folder holding a copy of the repository's ``examples/``, with
  ``../shared/data`` pointing to the real data (:func:`ldpplan.planner.data.default_data_dir`);
  ``cd DIR`` changes folder. ``COLUMNS`` is unset for every command (piped output honours it).

Usage
-----
``python docs/readme_blocks.py [FILE ...]`` checks (every checked file by default; exit 1 on a
mismatch, with a diff); ``python docs/readme_blocks.py --update [FILE ...]`` rewrites the expected
output of every command whose output does not match (``--fill`` also fills commands that show no
output).
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import difflib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_OPEN = re.compile(r"^```console\s*$")
_SHELL_OPS = {"|", "||", "&&", ";", ">", ">>", "<", "&", "2>", "2>&1", "$(", "`"}


@dataclasses.dataclass
class Command:
    """One ``$ `` line: the command text, its expected output lines, and its line number (0-based)."""

    text: str
    expected: list[str]
    line: int

    @property
    def skipped(self) -> bool:
        return bool(re.search(r"#\s*skip\s*$", self.text))


@dataclasses.dataclass
class Block:
    """A console block: its commands and the line range of its body (``start`` <= line < ``end``)."""

    start: int
    end: int
    commands: list[Command]


def checked_files() -> list[Path]:
    """The Markdown files whose console blocks are checked: ``README.md``, then ``docs/**/*.md`` (sorted)."""
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def parse(text: str) -> list[Block]:
    """The console blocks of a Markdown text."""
    lines = text.split("\n")
    blocks, i = [], 0
    while i < len(lines):
        if not _OPEN.match(lines[i]):
            i += 1
            continue
        start = i + 1
        end = start
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        commands: list[Command] = []
        for k in range(start, end):
            if lines[k].startswith("$ "):
                commands.append(Command(lines[k][2:], [], k))
            elif commands:
                commands[-1].expected.append(lines[k])
        blocks.append(Block(start, end, commands))
        i = end + 1
    return blocks


#: Relative tolerance of the numbers a Monte Carlo command prints (see the module docstring).
MONTE_CARLO_TOLERANCE = 0.5
_NUMBER = re.compile(r"[-+]?(?:\d+(?:,\d{3})*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_PADDING = re.compile(r"([ ━─═]){2,}")


#: A run time: a number followed by a unit of time. Replaced by :data:`_ANY_TIME` on both sides before comparing.
_DURATION = re.compile(r"(?:(?<![\w.])\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|\.\.\.) ?(?:ms|s|sec|seconds)(?![\w])")
_ANY_TIME = "<time>"


def _untimed(lines: list[str]) -> list[str]:
    """The lines with every run time replaced by one placeholder (run times are not checked)."""
    return [_DURATION.sub(_ANY_TIME, ln) for ln in lines]


def _is_monte_carlo(command: str) -> bool:
    words = command.split()
    return len(words) > 1 and words[0] == "ldpplan" and words[1] in ("simulate", "audit")


def _masked(lines: list[str]) -> list[str]:
    return [_PADDING.sub(r"\1", _NUMBER.sub("#", ln)) for ln in lines]


def _numbers(lines: list[str]) -> list[float]:
    return [float(m.group().replace(",", "")) for ln in lines for m in _NUMBER.finditer(ln)]


def matches_approximately(expected: list[str], actual: str, tolerance: float = MONTE_CARLO_TOLERANCE) -> bool:
    """Matching for Monte Carlo output: the text with numbers and padding masked matches (with
    ellipses), and, when the expected lines have no ellipsis, every number is within ``tolerance``
    (relative) of the expected one."""
    ellipsis = any("..." in ln for ln in _trim(expected))  # as written: "... s" too leaves the figures unchecked
    exp, act = _untimed(_trim(expected)), _untimed(_lines(actual))
    if not matches(_masked(exp), "\n".join(_masked(act))):
        return False
    if ellipsis:
        return True
    a, b = _numbers(exp), _numbers(act)
    return len(a) == len(b) and all(abs(x - y) <= tolerance * max(abs(x), abs(y)) for x, y in zip(a, b))


def matches(expected: list[str], actual: str) -> bool:
    """Ellipsis matching of the expected lines against the actual output (trailing spaces ignored)."""
    pattern = []
    for line in _untimed(_trim(expected)):
        if line.strip() == "...":
            pattern.append(r"(?:[^\n]*\n)*?")
        else:
            pattern.append("[^\n]*".join(re.escape(part) for part in line.rstrip().split("...")) + r"\n")
    return re.fullmatch("".join(pattern), "".join(f"{ln}\n" for ln in _untimed(_lines(actual)))) is not None


def _trim(lines: list[str]) -> list[str]:
    out = [ln.rstrip() for ln in lines]
    while out and not out[-1]:
        out.pop()
    return out


def _lines(text: str) -> list[str]:
    return _trim(text.replace("\r\n", "\n").split("\n"))


def _uses_shell(text: str) -> bool:
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.commenters = "#"
    try:
        tokens = list(lexer)
    except ValueError:
        return True
    return any(t in _SHELL_OPS for t in tokens) or "$(" in text or "`" in text


class Session:
    """A working folder in which a README's commands run in order."""

    def __init__(self, root: Path, data_dir: Path | None = None):
        self.root = root
        self.cwd = root / "work"
        self.cwd.mkdir(parents=True, exist_ok=True)
        if (REPO / "examples").is_dir():
            shutil.copytree(REPO / "examples", self.cwd / "examples")
        if data_dir is None:
            from ldpplan.planner.data import default_data_dir

            data_dir = default_data_dir().resolve()
        (root / "shared").mkdir(exist_ok=True)
        if data_dir.is_dir() and not (root / "shared" / "data").exists():
            (root / "shared" / "data").symlink_to(data_dir, target_is_directory=True)

    def run(self, command: str) -> tuple[int, str]:
        """Run one command; ``(exit code, combined output)``."""
        words = shlex.split(command, comments=True)
        if not words:
            return 0, ""
        if words[0] == "cd" and len(words) == 2 and not _uses_shell(command):
            target = (self.cwd / words[1]).resolve()
            if not target.is_dir():
                return 1, f"cd: {words[1]}: No such file or directory"
            self.cwd = target
            return 0, ""
        if words[0] == "ldpplan" and not _uses_shell(command):
            from click.testing import CliRunner

            from ldpplan.planner.cli import main

            with _chdir(self.cwd):
                result = CliRunner().invoke(main, words[1:], prog_name="ldpplan", env={"COLUMNS": None})
            return result.exit_code, result.output
        env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
        env.pop("COLUMNS", None)  # the README shows piped output at its natural width
        proc = subprocess.run(["bash", "-c", command], cwd=self.cwd, env=env, capture_output=True, text=True,
                              timeout=1800)
        return proc.returncode, proc.stdout + proc.stderr


@contextlib.contextmanager
def _chdir(path: Path):
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


@dataclasses.dataclass
class Outcome:
    """The result of one command: ok, the exit code, the actual output."""

    command: Command
    ok: bool
    exit_code: int
    output: str

    def describe(self) -> str:
        """A diff of expected against actual output (for failure messages)."""
        diff = difflib.unified_diff(_trim(self.command.expected), _lines(self.output), "expected", "actual",
                                    lineterm="")
        return f"line {self.command.line + 1}: $ {self.command.text} (exit {self.exit_code})\n" + "\n".join(diff)


def run_block(session: Session, block: Block) -> list[Outcome]:
    """Run a block's commands in the session and compare each output with the expected lines."""
    outcomes = []
    for cmd in block.commands:
        if cmd.skipped:
            continue
        code, output = session.run(cmd.text)
        if not _trim(cmd.expected):
            ok = code == 0
        elif _is_monte_carlo(cmd.text):
            ok = code == 0 and matches_approximately(cmd.expected, output)
        else:
            ok = matches(cmd.expected, output)
        outcomes.append(Outcome(cmd, ok, code, output))
    return outcomes


def update(text: str, session: Session, *, fill: bool = False) -> tuple[str, int]:
    """``(new text, number of commands changed)``: mismatching expected outputs replaced by actual ones."""
    lines = text.split("\n")
    replacements: dict[int, list[str]] = {}
    for block in parse(text):
        for outcome in run_block(session, block):
            cmd = outcome.command
            if outcome.ok and (_trim(cmd.expected) or not fill):
                continue
            replacements[cmd.line] = _lines(outcome.output)
    out: list[str] = []
    skip_until_command = False
    blocks = parse(text)
    inside = {k for b in blocks for k in range(b.start, b.end)}
    for k, line in enumerate(lines):
        if k in replacements:
            out.append(line)
            out.extend(replacements[k])
            skip_until_command = True
            continue
        if skip_until_command and k in inside and not line.startswith("$ "):
            continue
        skip_until_command = False
        out.append(line)
    return "\n".join(out), len(replacements)


def check_file(path: Path) -> list[Outcome]:
    """The failing commands of one file's console blocks, run in a fresh session of their own."""
    text = path.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="readme-") as tmp:
        session = Session(Path(tmp))
        return [o for b in parse(text) for o in run_block(session, b) if not o.ok]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="*", help="Markdown files (default: README.md and docs/**/*.md)")
    parser.add_argument("--update", action="store_true", help="rewrite mismatching expected outputs")
    parser.add_argument("--fill", action="store_true", help="with --update: also fill commands showing no output")
    args = parser.parse_args(argv)
    paths = [Path(f) for f in args.files] or checked_files()
    failed = 0
    for path in paths:
        text = path.read_text(encoding="utf-8")
        if not parse(text):
            continue
        if args.update:
            with tempfile.TemporaryDirectory(prefix="readme-") as tmp:
                new, changed = update(text, Session(Path(tmp)), fill=args.fill)
            if new != text:
                path.write_text(new, encoding="utf-8")
            print(f"{path}: {changed} command output(s) rewritten")
            continue
        failures = check_file(path)
        for failure in failures:
            print(failure.describe(), end="\n\n")
        print(f"{path}: {len(failures)} command(s) do not match")
        failed += bool(failures)
    return 1 if failed else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""The console blocks of the README and of ``docs/`` are tested (convention and refresh script:
``docs/readme_blocks.py``).

The real files run in the ``slow`` tier, each in its own session; the convention itself is tested
here on small temporary READMEs with the toy family. The README's set-up commands are pinned
verbatim (``.ci/run`` runs the test command).
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _load_blocks():
    spec = importlib.util.spec_from_file_location("readme_blocks", REPO / "docs" / "readme_blocks.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["readme_blocks"] = module
    spec.loader.exec_module(module)
    return module


rb = _load_blocks()

TOY_README = """# Toy

```console
$ ldpplan plan examples/toy.toml -o toy.json
$ ldpplan verify toy.json
holds: p/(1-p) <= e^1.0 (slack ... nats)
fingerprint: sha256:...
$ ldpplan options toy
...
perturb --input (toy): a CSV with a column `item` holding 'no' or 'yes' (one row per user)
$ echo hello; echo world   # any shell command
hello
world
```

Text between blocks.

```sh
$ not a console block, never run
```

```console
$ ldpplan verify missing.json
error: missing.json: plan file does not exist
$ rm -rf /   # skip
```
"""


def test_parse_finds_console_blocks_commands_and_expected_lines():
    blocks = rb.parse(TOY_README)
    assert [len(b.commands) for b in blocks] == [4, 2]
    first = blocks[0].commands
    assert first[0].text == "ldpplan plan examples/toy.toml -o toy.json" and first[0].expected == []
    assert first[1].expected == ["holds: p/(1-p) <= e^1.0 (slack ... nats)", "fingerprint: sha256:..."]
    assert first[3].expected == ["hello", "world"]
    assert blocks[1].commands[1].skipped and not first[0].skipped


@pytest.mark.parametrize("expected, actual, ok", [
    (["a 1.5 b"], "a 1.5 b\n", True),
    (["a 1.5 b"], "a 1.6 b\n", False),
    (["a ... b"], "a 12:03:04 b   \n", True),
    (["a ... b"], "a x\ny b\n", False),                  # inline ... stays on its line
    (["first", "...", "last"], "first\nlast\n", True),   # a lone ... matches zero lines
    (["first", "...", "last"], "first\n1\n2\n3\nlast\n", True),
    (["first", "...", "last"], "first\n1\nlast\nmore\n", False),
    (["x (y) [z]*"], "x (y) [z]*", True),                 # regex characters are literal
    (["only"], "only\n\n\n", True),
])
def test_ellipsis_matching(expected, actual, ok):
    assert rb.matches(expected, actual) is ok


@pytest.fixture
def toy_session(toy_family, tmp_path):
    session = rb.Session(tmp_path / "s", data_dir=tmp_path / "nodata")
    (session.cwd / "examples").mkdir(exist_ok=True)
    (session.cwd / "examples" / "toy.toml").write_text('mechanism = "toy"\nepsilon = 1.0\n')
    return session


def test_toy_readme_blocks_pass(toy_session):
    outcomes = [o for b in rb.parse(TOY_README) for o in rb.run_block(toy_session, b)]
    assert len(outcomes) == 5   # the skipped command is not run
    assert all(o.ok for o in outcomes), "\n".join(o.describe() for o in outcomes if not o.ok)


def test_mismatch_is_reported_with_a_diff(toy_session):
    text = TOY_README.replace("holds: p/(1-p)", "holds: q/(1-q)")
    failures = [o for b in rb.parse(text) for o in rb.run_block(toy_session, b) if not o.ok]
    assert len(failures) == 1
    assert "-holds: q/(1-q)" in failures[0].describe() and "+holds: p/(1-p)" in failures[0].describe()


def test_failing_command_without_expected_output_fails(toy_session):
    blocks = rb.parse("```console\n$ ldpplan verify nope.json\n```\n")
    (outcome,) = rb.run_block(toy_session, blocks[0])
    assert not outcome.ok and outcome.exit_code == 2


def test_update_rewrites_only_mismatches_and_keeps_ellipses(toy_session):
    text = TOY_README.replace("holds: p/(1-p) <= e^1.0 (slack ... nats)\nfingerprint: sha256:...",
                              "stale output\nmore stale")
    new, changed = rb.update(text, toy_session)
    assert changed == 1
    assert "stale" not in new
    assert "holds: p/(1-p) <= e^1.0 (slack 1e-10 nats)" in new
    assert "$ ldpplan options toy\n...\nperturb --input" in new       # matching blocks keep their ellipses
    assert new.count("```") == TOY_README.count("```")
    filled, changed = rb.update(new, toy_session, fill=True)
    assert changed == 1 and "$ ldpplan plan examples/toy.toml -o toy.json\ntoy RR" in filled


def _git_status() -> str | None:
    import subprocess

    try:
        out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=REPO, capture_output=True,
                             text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 else None


def _ignored_at_root(names) -> list[str]:
    """The names that git ignores when they sit in the repository root."""
    import subprocess

    out = subprocess.run(["git", "check-ignore", "--no-index", *names], cwd=REPO, capture_output=True, text=True,
                         timeout=60)
    return out.stdout.split()


#: The checked files that hold console blocks (README.md and docs/**/*.md), relative to the repository.
CHECKED = [str(p.relative_to(REPO)) for p in rb.checked_files() if rb.parse(p.read_text(encoding="utf-8"))]


def test_the_docs_with_console_blocks_are_checked():
    """Moving a block out of the README keeps it checked: the README and the family pages hold blocks."""
    assert CHECKED[0] == "README.md"
    assert {"docs/families/idue.md", "docs/families/pie.md", "docs/REPORTS.md"} <= set(CHECKED)


@pytest.mark.slow
@pytest.mark.parametrize("name", CHECKED)
def test_readme_console_blocks(name, tmp_path):
    text = (REPO / name).read_text(encoding="utf-8")
    before = _git_status()
    session = rb.Session(tmp_path)
    failures = [o for b in rb.parse(text) for o in rb.run_block(session, b) if not o.ok]
    assert not failures, f"{name}: console blocks differ (refresh: python docs/readme_blocks.py --update {name}):" \
        "\n\n" + "\n\n".join(o.describe() for o in failures)
    # issue 19: running the README leaves the repository clean. The test runs in a temporary folder and
    # changes nothing in the checkout; a user running the blocks from the repository root gets files
    # that .gitignore ignores (every file the blocks wrote, checked by name at the root).
    assert _git_status() == before
    written = sorted(p.name for p in (tmp_path / "work").iterdir() if p.is_file())
    if before is not None and written:
        assert _ignored_at_root(written) == written


def test_readme_outputs_are_git_ignored_at_the_root():
    """Every file a checked command names as its output (-o, --plot, >) is ignored in the repository root."""
    import shlex

    if _git_status() is None:
        pytest.skip("not a git checkout")
    outputs = set()
    for name in CHECKED:
        for block in rb.parse((REPO / name).read_text(encoding="utf-8")):
            for command in block.commands:
                words = shlex.split(command.text, comments=True)
                outputs |= {after for word, after in zip(words, words[1:])
                            if word in ("-o", "--output", "--plot", ">")}
                if "examples/gss_inputs.py" in command.text:
                    outputs |= {w.rstrip(":;,") for line in command.expected for w in line.split() if "." in w}
    outputs = sorted(o for o in outputs if "/" not in o)
    assert len(outputs) >= 15, outputs
    assert _ignored_at_root(outputs) == outputs


def _setup_block() -> list[str]:
    """The lines of the README's first ``sh`` block under "## Set up"."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("\n## Set up\n"):]
    start = section.index("```sh\n") + len("```sh\n")
    return section[start:section.index("```", start)].strip("\n").split("\n")


def test_readme_set_up_commands_are_verbatim_and_ci_runs_the_test_command():
    """A fresh machine's two commands stay as they are, and .ci/run ends with the README's test command."""
    assert _setup_block() == ["pip install '.[planner]' && ldpplan plan --example health",
                              "pip install -e '.[test]' && pytest"]
    ci = [ln for ln in (REPO / ".ci" / "run").read_text(encoding="utf-8").split("\n")
          if ln.strip() and not ln.lstrip().startswith("#")]
    assert ci[-1] in _setup_block()


def test_readme_is_a_few_screens():
    """Issue 28 point 7: the README leads a newcomer through the flow; the detail lives in docs/."""
    lines = (REPO / "README.md").read_text(encoding="utf-8").split("\n")
    assert len(lines) <= 250, len(lines)
    flow = ["ldpplan plan", "ldpplan verify", "ldpplan perturb", "ldpplan aggregate", "ldpplan estimate",
            "ldpplan simulate", "ldpplan audit", "ldpplan report"]
    commands = [c.text for b in rb.parse("\n".join(lines)) for c in b.commands]
    firsts = [next(i for i, c in enumerate(commands) if c.startswith(step)) for step in flow]
    assert firsts == sorted(firsts), "the README's session runs the flow in order"


def test_relative_links_in_the_docs_resolve():
    """Every relative Markdown link of the README and docs/ names a file that exists."""
    import re

    broken = []
    for path in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (path.parent / target).exists():
                broken.append(f"{path.relative_to(REPO)}: {target}")
    assert not broken, broken


def test_monte_carlo_output_matches_within_tolerance_and_structure():
    # numpy's samplers change between releases: a seeded simulation's numbers may move a little
    expected = ["│ IDUE opt0 │     2.174e+04 │      149.7 │", "seed=1 trials=5"]
    assert rb.matches_approximately(expected, "│ IDUE opt0 │     2.174e+04 │      150.4 │\nseed=1 trials=5\n")
    assert rb.matches_approximately(expected, "│ IDUE opt0 │    2.1744e+04 │      150.4 │\nseed=1 trials=5\n")
    assert not rb.matches_approximately(expected, "│ IDUE opt0 │     2.174e+04 │      450.4 │\nseed=1 trials=5\n")
    assert not rb.matches_approximately(expected, "│ RAPPOR    │     2.174e+04 │      149.7 │\nseed=1 trials=5\n")
    assert not rb.matches_approximately(expected, "│ IDUE opt0 │     2.174e+04 │\nseed=1 trials=5\n")
    assert rb._is_monte_carlo("ldpplan simulate p.json --seed 1") and rb._is_monte_carlo("ldpplan audit p.json")
    assert not rb._is_monte_carlo("ldpplan plan --example health") and not rb._is_monte_carlo("ldpplan verify p.json")


@pytest.mark.parametrize("expected, actual, ok", [
    # issue 27 point 4: a run time is never compared, in Monte Carlo output or elsewhere
    (["screened (2,000 runs each); 3.6 s"], "screened (2,000 runs each); 11.9 s\n", True),
    (["gap 2.96e-12, 0.512 s."], "gap 2.96e-12, 48.07 s.\n", True),
    (["took 15.03 ms"], "took 1503 ms\n", True),
    (["screened (2,000 runs each); 3.6 s"], "screened (2,001 runs each); 3.6 s\n", False),  # figures still are
    (["lower bound 2 nats"], "lower bound 3 nats\n", False),                              # "nats" is no time
    (["screened; ... s"], "screened; 0.1 s\n", True),                                    # written as "... s"
])
def test_run_times_are_not_compared(expected, actual, ok):
    assert rb.matches(expected, actual) is ok


def test_monte_carlo_run_time_is_not_compared_but_its_figures_are():
    line = ("15,625 trials per input; most binding: 1.925 <= 2 nats claimed; 10,000 inputs screened "
            "(2,000 runs each); {}")
    assert rb.matches_approximately([line.format("3.6 s")], line.format("19.4 s") + "\n")        # 5.4x slower: ok
    assert rb.matches_approximately([line.format("3.6 s")], line.format("0.2 s") + "\n")
    assert not rb.matches_approximately([line.format("3.6 s")],
                                        line.format("3.6 s").replace("1.925", "4.925") + "\n")  # a figure: checked
    assert rb.matches_approximately([line.format("... s")], line.format("0.1 s") + "\n")

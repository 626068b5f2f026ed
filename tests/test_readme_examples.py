"""Every shell, SQL and Python example of README.md, docs/*.md and db/README.md, run as written.

Like sqlite-utils, the docs are tested by running them: a fenced ``bash`` block is run line by line
through ``bash`` (so globs, redirections and ``&&`` work as pasted), a fenced ``sql`` block is pasted
example by example (and whole) between the double quotes of ``clparse sql --db … "…"``, and a
non-doctest ``python`` block is executed. Examples on ``db/quickstart.sqlite`` run where a real
``clparse quickstart`` ran (once per session); examples on ``db/gum.sqlite`` need the full GUM
treebank, so they run on a tiny ``gum/`` directory built from the bundled sample (the same
commands, arguments and file layout, small enough to train to the default floor in seconds).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.terminal import run_on_terminal

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "db" / "README.md"]
BIN = Path(sys.executable).parent

#: Lines that are not run, and why. Any other line of a bash block must run and succeed.
NOT_RUN = {
    "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && .venv/bin/clparse quickstart":
        "installing needs the network; the `clparse quickstart` it ends with is what the session "
        "fixture runs",
    "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && .venv/bin/python -m pytest":
        "that is this test suite",
}


def fenced_blocks(path: Path) -> list[tuple[str, str, int]]:
    """(language, text, first line number) of every fenced block."""
    blocks: list[tuple[str, str, int]] = []
    language: str | None = None
    lines: list[str] = []
    start = 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            if language is None:
                language, lines, start = line[3:].strip() or "text", [], number + 1
            else:
                blocks.append((language, "\n".join(lines), start))
                language = None
        elif language is not None:
            lines.append(line)
    return blocks


def examples(language: str) -> list[tuple[str, str]]:
    """(``file:line`` id, text) of every block in the given language across the docs."""
    return [(f"{path.relative_to(ROOT)}:{start}", text) for path in DOCS
            for lang, text, start in fenced_blocks(path) if lang == language]


def shell_lines() -> list[tuple[str, str]]:
    out = []
    for where, text in examples("bash") + examples("sh"):
        path, start = where.rsplit(":", 1)
        for offset, line in enumerate(text.splitlines()):
            if line.strip() and not line.lstrip().startswith("#"):
                out.append((f"{path}:{int(start) + offset}", line))
    return out


def sql_examples() -> list[tuple[str, str]]:
    """Each SQL example (a comment line and its statement, blocks split at blank lines), then each block
    whole."""
    out = []
    for where, text in examples("sql"):
        for n, example in enumerate(re.split(r"\n\s*\n", text.strip())):
            out.append((f"{where}#{n + 1}", example))
        out.append((f"{where}#all", text))
    return out


def env() -> dict[str, str]:
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": "100"}


def run(line: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", line], cwd=cwd, env=env(), capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def tiny_quickstart(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """(database, printed text) of what ``clparse quickstart`` runs, on 40 sample trees and 5 short dev
    trees, trained to Θ 5: every step of the pipeline in seconds (the real one is a slow test below)."""
    import clparse.quickstart as quickstart
    from clparse.data import sample_path
    from clparse.read import format_tree, read_trees

    where = tmp_path_factory.mktemp("tiny_quickstart")
    train = list(read_trees(sample_path("train")))[:40]
    dev = sorted(read_trees(sample_path("dev")), key=lambda t: (len(t.words()), format_tree(t)))[5:10]
    files = {"train": where / "train.ptb", "dev": where / "dev.ptb"}
    for split, trees in (("train", train), ("dev", dev)):
        files[split].write_text("".join(format_tree(t) + "\n" for t in trees))
    db, lines = where / "db" / "quickstart.sqlite", []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(quickstart, "sample_path", files.__getitem__)
        quickstart.run_quickstart(echo=lines.append, db=db, until_theta=5.0, beam=1)
    return db, "\n".join(map(str, lines))


def test_quickstart_runs_every_step_on_a_tiny_treebank(tiny_quickstart: tuple[Path, str]) -> None:
    from clparse.quickstart import EXAMPLES

    _, out = tiny_quickstart
    steps = ["== 1. prepare", "== 2. train every label", "== 3. calibrate", "== 4. parse"]
    assert all(step in out for step in steps), out
    assert sorted(out.index(step) for step in steps) == [out.index(step) for step in steps]
    assert "<- best" in out  # a calibrated Θ̂, which step 4 parses with
    parses = [line for line in out.splitlines() if line.startswith("(ROOT ")]
    assert [re.findall(r"\(\S+ ([^()\s]+)\)", tree) for tree in parses] == [s.split() for s in EXAMPLES]


def test_sql_examples_run_on_the_trained_sample(trained_db: Path) -> None:
    """Every SQL example runs (names, columns, SQL functions) on the session's trained sample; the
    slow test below pastes each into a shell on the real quickstart database and wants rows from it."""
    from clparse.query import run_query

    for where, example in sql_examples():
        try:
            shown = run_query(trained_db, example)
        except Exception as exc:  # noqa: BLE001 - the example's place in the failure
            pytest.fail(f"{where}:\n{example}\n{exc}")
        assert re.search(r"\(\d+ rows?\)", shown), f"{where}:\n{shown}"


@pytest.fixture(scope="module")
def quickstart_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory where `clparse quickstart` ran, as a new user would run it."""
    where = tmp_path_factory.mktemp("quickstart")
    # On a pseudo-terminal, as a new user runs it: its progress lines are checked below.
    status, out, shown = run_on_terminal(["bash", "-c", "clparse quickstart"], "", env(), cwd=where)
    assert status == 0, shown[-2000:]
    assert (where / "db" / "quickstart.sqlite").is_file()
    (where / "quickstart.out").write_text(out)
    (where / "quickstart.terminal").write_text(shown)
    return where


@pytest.mark.slow
def test_quickstart_shows_progress_on_a_terminal(quickstart_dir: Path) -> None:
    shown = (quickstart_dir / "quickstart.terminal").read_text()
    assert re.search(r"generating examples: (\d+)/\1 sentences \(100 %\)", shown), shown[-2000:]
    assert re.search(r"training: (\d+)/\1 labels \(100 %\)", shown), shown[-2000:]
    assert re.search(r"calibrating: \d+/\d+ sentences .* ETA ", shown), shown[-2000:]
    out = (quickstart_dir / "quickstart.out").read_text()
    assert "== 4. parse" in out and "generating examples:" not in out  # progress never reaches stdout


@pytest.fixture(scope="module")
def gum_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A stand-in for the GUM checkout the README's training examples use: gum/{train,dev}/*.ptb
    (a few sample trees each), dev.ptb and sentences.txt."""
    from clparse.data import sample_path
    from clparse.read import format_tree, read_trees

    where = tmp_path_factory.mktemp("gum")
    train = list(read_trees(sample_path("train")))
    # Short dev sentences: the examples' searches (beam 100 by default, 1000 in calibrate) on a barely
    # trained model pop many states.
    dev = sorted(read_trees(sample_path("dev")), key=lambda t: (len(t.words()), format_tree(t)))[5:]
    for split, trees in (("train", train[:24]), ("dev", dev[:4])):
        (where / "gum" / split).mkdir(parents=True)
        for n in range(2):  # two files per split, so the glob expands to several
            part = trees[n::2]
            (where / "gum" / split / f"doc{n}.ptb").write_text("".join(format_tree(t) + "\n" for t in part))
    (where / "dev.ptb").write_text("".join(format_tree(t) + "\n" for t in dev[4:7]))
    (where / "sentences.txt").write_text("".join(" ".join(t.words()) + "\n" for t in dev[4:7]))
    return where


def test_the_docs_have_examples() -> None:
    """The collectors find what the README shows (a parser change cannot silently test nothing)."""
    assert len(shell_lines()) >= 10
    assert len([w for w, _ in sql_examples() if not w.endswith("#all")]) >= 11
    assert all(line in [text for _, text in shell_lines()] for line in NOT_RUN)


def test_no_example_uses_a_dot_command_through_sql() -> None:
    """`clparse sql --db PATH ".backup OUT"` never worked: dot commands exist only in the shell."""
    for path in DOCS:
        assert not re.search(r"clparse sql [^`\n]*\"\.[a-z]", path.read_text(encoding="utf-8")), path


@pytest.mark.slow
def test_shell_examples_run_as_written(quickstart_dir: Path, gum_dir: Path) -> None:
    """Every bash line, in document order, in the directory its database lives in."""
    for where, line in shell_lines():
        if line in NOT_RUN:
            continue
        cwd = gum_dir if "db/gum.sqlite" in line else quickstart_dir
        # The README is read in a checkout, where the bundled sample is at clparse/data/sample/.
        done = run(line.replace("clparse/data/sample/", f"{ROOT}/clparse/data/sample/"), cwd)
        assert done.returncode == 0, f"{where}: {line}\n{done.stdout[-1500:]}\n{done.stderr[-1500:]}"
        assert "Traceback" not in done.stderr, f"{where}: {line}\n{done.stderr[-1500:]}"
    # What the examples promise exists afterwards.
    assert (gum_dir / "fig2.png").stat().st_size > 0
    parses = (gum_dir / "parses.mrg").read_text().splitlines()
    assert len(parses) == len((gum_dir / "sentences.txt").read_text().splitlines())
    assert (quickstart_dir / "db" / "quickstart-copy.sqlite").is_file()


@pytest.mark.slow
@pytest.mark.parametrize("where,example", sql_examples(), ids=[w for w, _ in sql_examples()])
def test_sql_examples_paste_into_clparse_sql(quickstart_dir: Path, where: str, example: str) -> None:
    """Pasted between the double quotes, as the README says; the shell must leave the text alone."""
    assert '"' not in example and "`" not in example and not re.search(r"\$[A-Za-z_{(]", example), \
        f"{where}: the example would not survive double quotes in a shell"
    done = run(f'clparse sql --db db/quickstart.sqlite "{example}"', quickstart_dir)
    assert done.returncode == 0, f"{where}:\n{example}\n{done.stderr}"
    assert done.stderr == ""
    assert re.search(r"\(\d+ rows?\)", done.stdout), done.stdout
    # Each shows something on the quickstart database (a wrong name or iteration would give nothing),
    # except the sentences skipped for a phrase wider than K = 5: the sample has none under 15 words.
    if not where.endswith("#all") and "gave no examples" not in example:
        assert "(0 rows)" not in done.stdout, f"{where}:\n{example}"


@pytest.mark.slow
def test_python_examples_run(quickstart_dir: Path) -> None:
    """The README's non-doctest Python blocks (doctests run through pytest's --doctest-glob)."""
    blocks = [(w, t) for w, t in examples("python") if not t.lstrip().startswith(">>>")]
    assert blocks
    for where, text in blocks:
        done = subprocess.run([sys.executable, "-c", text], cwd=quickstart_dir, env=env(),
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"{where}:\n{text}\n{done.stderr[-2000:]}"

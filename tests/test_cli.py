"""The command line, end to end through click's test runner."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from clparse.cli import main
from clparse.data import sample_path

ROOT = Path(__file__).resolve().parent.parent
#: Every command of ``clparse --help``; a command left unregistered fails here.
COMMANDS = {"backup", "browse", "calibrate", "calibrate-tags", "check", "combine", "compare", "eval",
            "explain", "export", "init", "parse", "prepare", "quickstart", "report", "sql", "status", "tag",
            "train", "train-tagger", "treebank"}

GOLD = "(ROOT (S (NP (PRP I)) (VP (VBD ran) (ADVP (RB fast))) (. .)))\n(ROOT (S (VP (VB Go))))\n"
TEST = "(ROOT (S (NP (PRP I)) (VP (VBD ran)) (ADVP (RB fast)) (. .)))\n(ROOT (VP (VB Go)))\n"


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    gold, test = tmp_path / "gold.ptb", tmp_path / "test.ptb"
    gold.write_text(GOLD)
    test.write_text(TEST)
    return gold, test


def test_eval_prints_evalb_summary(files: tuple[Path, Path]) -> None:
    code, out, _ = invoke("eval", str(files[0]), str(files[1]))
    assert code == 0
    # gold: S NP VP ADVP + S VP = 6; test: S NP VP ADVP + VP = 5; matched: S NP ADVP + VP = 4
    assert "Bracketing Recall         =  66.67" in out
    assert "Bracketing Precision      =  80.00" in out
    assert "Bracketing FMeasure       =  72.73" in out


def test_eval_json_and_by_length(files: tuple[Path, Path]) -> None:
    code, out, _ = invoke("eval", str(files[0]), str(files[1]), "--json", "--by-length", "5")
    payload = json.loads(out)
    assert code == 0 and payload["all"]["matched_brackets"] == 4 and payload["all"]["gold_brackets"] == 6
    assert set(payload["by_length"]) == {"1-5"}


def test_eval_reports_mismatched_tokens(tmp_path: Path, files: tuple[Path, Path]) -> None:
    bad = tmp_path / "bad.ptb"
    bad.write_text(TEST.replace("ran", "run"))
    code, out, err = invoke("eval", str(files[0]), str(bad))
    assert code == 0 and "sentence 1: word mismatch at position 2: gold 'ran', test 'run'" in err
    assert "Number of Error sentence  =      1" in out


def test_eval_one_per_line_blank_is_failed_parse(tmp_path: Path, files: tuple[Path, Path]) -> None:
    test = tmp_path / "lines.ptb"
    test.write_text(TEST.splitlines()[0] + "\n\n")
    code, out, err = invoke("eval", str(files[0]), str(test), "--one-per-line")
    assert code == 0 and "1 empty parse(s) skipped" in err and "Number of Skip  sentence  =      1" in out



def test_eval_one_per_line_trailing_blank_line_is_named(tmp_path: Path, files: tuple[Path, Path]) -> None:
    """A file of parses ending in an extra blank line has one parse too many: the error says why."""
    test = tmp_path / "lines.ptb"
    test.write_text(TEST + "\n")
    code, _, err = invoke("eval", str(files[0]), str(test), "--one-per-line")
    assert code == 1 and "test file has more trees" in err \
        and "ends with a blank line, which --one-per-line reads as a failed parse" in err
    test.write_text(TEST + TEST.splitlines()[0] + "\n")  # one tree too many, no blank line: no such hint
    code, _, err = invoke("eval", str(files[0]), str(test), "--one-per-line")
    assert code == 1 and "test file has more trees" in err and "blank line" not in err

def test_compare(files: tuple[Path, Path]) -> None:
    code, out, _ = invoke("compare", str(files[0]), str(files[1]), str(files[0]), "--trials", "200", "--json")
    payload = json.loads(out)
    assert code == 0 and payload["metrics"]["f1"]["b"] == 100.0 \
        and 0 < payload["metrics"]["f1"]["p_value"] <= 1


def test_treebank_stats_raw_and_preprocessed() -> None:
    code, out, _ = invoke("treebank", "stats", str(sample_path("dev")), "--json")
    assert code == 0 and json.loads(out)["sentences"] == 75
    code, out, _ = invoke("treebank", "stats", str(sample_path("dev")), "--preprocess", "--max-words", "15",
                          "--skip-step", "raise_punctuation", "--json")
    payload = json.loads(out)
    assert code == 0 and payload["sentences"] == payload["preprocessing"]["kept"] < 75
    assert "raise_punctuation" not in payload["preprocessing"]["changes"]


def test_treebank_preprocess_writes_trees(tmp_path: Path) -> None:
    out_file = tmp_path / "out.ptb"
    code, _, err = invoke("treebank", "preprocess", str(sample_path("dev")), "-o", str(out_file))
    assert code == 0 and "kept" in err
    assert out_file.read_text().count("\n") == 75


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"(S (NP (NN a)) (VP (VBD b))", "unbalanced '('"),  # truncated
        (b"(S (NP (NN a))) (VP (VBD b)))\n", "unbalanced ')'"),
        (b"\x00\x01\x02binary", "binary data"),
        (b"", "file contains no trees"),
        (b"(S a (NN b))\n", "leaf 'a' without a tag"),
    ],
)
def test_bad_files_give_one_clear_error_line(tmp_path: Path, content: bytes, problem: str) -> None:
    bad = tmp_path / "bad.mrg"
    bad.write_bytes(content)
    code, out, err = invoke("treebank", "stats", str(bad))
    assert code == 1 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: {bad}:") and problem in lines[0]


def test_skip_bad_reports_count(tmp_path: Path) -> None:
    bad = tmp_path / "mixed.ptb"
    bad.write_text("(S (NN a))\n(S b (NN x))\n(S (NN c))\n")
    code, out, err = invoke("treebank", "stats", str(bad), "--skip-bad", "--json")
    assert code == 0 and json.loads(out)["sentences"] == 2 and "skipped 1 malformed tree" in err


def listed_commands(help_text: str) -> dict[str, str]:
    """name -> one-line description, from the ``Commands:`` section of a group's help."""
    section = help_text.split("\nCommands:\n", 1)[1]
    return {m[1]: m[2].strip() for m in re.finditer(r"^  (\S+)(.*)$", section, re.MULTILINE)}


def command_paths(command: click.Command,
                  path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    found = [(path, command)]
    if isinstance(command, click.Group):
        for name in sorted(command.commands):
            found += command_paths(command.commands[name], (*path, name))
    return found


def test_help_lists_every_command_with_a_description() -> None:
    code, out, _ = invoke("--help")
    assert code == 0 and out.startswith("Usage: ")
    listed = listed_commands(out)
    assert set(listed) == COMMANDS, out
    assert all(len(description) > 10 for description in listed.values()), listed
    assert "clparse quickstart" in out.split("\nOptions:\n")[0]  # where to start


def test_every_command_explains_itself_and_each_option() -> None:
    paths = command_paths(main)
    assert {path[0] for path, _ in paths if path} == COMMANDS
    assert len(paths) > len(COMMANDS) + 1  # the root and a group's subcommands too
    for path, command in paths:
        code, out, err = invoke(*path, "--help")
        assert code == 0 and err == "", (path, err)
        usage, rest = out.split("\n", 1)
        assert usage.startswith("Usage: ") and usage.split()[2:2 + len(path)] == list(path), (path, usage)
        description = rest.split("\nOptions:\n", 1)[0].strip()
        assert len(description) > 20, (path, out)  # a sentence, not just the usage line
        options = " ".join(out.split("\nOptions:\n", 1)[1].split("\nCommands:\n", 1)[0].split())
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                flag = re.search(rf"(?<![\w-]){re.escape(max(param.opts, key=len))}(?![\w-])", options)
                words = " ".join((param.help or "").split()[:4])  # its help follows it
                assert flag and words and words in options[flag.end():], (path, param.opts, param.help)


def test_top_level_cli_py_is_the_same_command() -> None:
    """``python cli.py`` (a checkout without installing) runs the packaged command."""
    import cli

    from clparse.cli import run

    assert cli.run is run  # the console script's entry: main, then a quicker shutdown
    done = subprocess.run([sys.executable, "cli.py", "--help"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert set(listed_commands(done.stdout)) == COMMANDS


def test_init_prepare_sql(tmp_path: Path) -> None:
    db = tmp_path / "db" / "c.sqlite"
    code, out, _ = invoke("init", "--db", str(db))
    assert code == 0 and "created" in out
    code, out, err = invoke("prepare", "--db", str(db), "--train", str(sample_path("dev")), "--max-words",
                            "8")
    assert code == 0 and "prepared run 1" in out and "NP" in out
    # the tagger's phase is announced and timed (it was silent, and left out of the time)
    assert "training the run's crf POS tagger" in err and re.search(r"[0-9.]+ s for the tagger", out)
    code, out, _ = invoke("prepare", "--db", str(db), "--train", str(sample_path("dev")), "--max-words", "8")
    assert code == 0 and "nothing to do" in out
    code, _, err = invoke("prepare", "--db", str(db), "--train", str(sample_path("dev")), "--max-words", "9")
    assert code == 1 and "other inputs or settings" in err
    code, out, _ = invoke("sql", "--db", str(db), "SELECT name FROM labels WHERE name = 'ROOT'", "--json")
    assert code == 0 and json.loads(out) == [{"name": "ROOT"}]
    code, _, err = invoke("sql", "--db", str(tmp_path / "missing.sqlite"), "SELECT 1")
    assert code == 1 and "no such database" in err and "clparse prepare" in err
    # a typo names the database beside it rather than telling to make a new one
    named = db.with_name("treebank.sqlite")
    assert invoke("init", "--db", str(named))[0] == 0
    code, _, err = invoke("status", "--db", str(db.with_name("treebnk.sqlite")))
    assert code == 1 and f"did you mean {named}?" in err

"""Issue 30, item 4: the rough edges a new user met, each as the user met it.

Commands run as a user runs them: the real ``clparse`` in a subprocess (on a pseudo-terminal where
progress matters), or click's test runner for quick option checks.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from clparse import api
from clparse.cli import main
from tests.terminal import run_on_terminal

BIN = Path(sys.executable).parent
ENV = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def clparse(*args: str | Path, stdin: str | None = None, cwd: Path | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "clparse"), *map(str, args)], input=stdin, capture_output=True,
                          text=True, env=ENV, cwd=cwd, timeout=timeout)


def invoke(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def progress_lines(shown: str) -> list[str]:
    """The training progress lines a terminal showed (each redraw is one)."""
    return [line.strip() for line in re.split(r"[\r\n]", shown) if line.strip().startswith("training: ")]


# --------------------------------------------------------------------- train's progress after a resume


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_resumed_train_counts_only_labels_finished_to_the_stop_rule(db_copy: Path, jobs: str) -> None:
    """After a pause, the progress line counted paused labels as done (with --jobs N), or forgot the labels
    finished before the pause (one process). ADJP is finished to Θ < 2.5, ADVP paused above it: the resumed
    run starts at 1/2 and ends at 2/2."""
    api.train(db_copy, ["ADJP"], until_theta=2.5)
    asked = iter([False])  # the run starts ADVP, which then pauses before its first tree
    api.train(db_copy, ["ADVP"], until_theta=2.5, should_stop=lambda: next(asked, True))
    assert {r.label: r.state for r in api.status(db_copy, ["ADJP", "ADVP"])} == {"ADJP": "stopped",
                                                                                 "ADVP": "paused"}
    status, _, shown = run_on_terminal([str(BIN / "clparse"), "train", "--db", str(db_copy), "--labels",
                                        "ADJP,ADVP", "--until-theta", "2.5", "--jobs", jobs], "", ENV)
    assert status == 0, shown
    lines = progress_lines(shown)
    assert lines and all(line.startswith(("training: 1/2 labels", "training: 2/2 labels"))
                         for line in lines), lines
    assert lines[0].startswith("training: 1/2 labels") and lines[-1].startswith("training: 2/2 labels"), lines


def test_training_progress_counts_labels_finished_before_the_run_but_not_in_the_rate() -> None:
    from clparse.progress import TrainingProgress

    shown = io.StringIO()
    bar = TrainingProgress(5, shown, enabled=True, count=lambda: 3)
    assert bar.done == 3 and bar.initial == 3
    # drawn at once, before any label reports: a label finishing before the first redraw hid the 3/5
    assert shown.getvalue().startswith("\rtraining: 3/5 labels (60 %)") and "starting" in shown.getvalue()
    assert bar.line().startswith("training: 3/5 labels (60 %)  0/s")  # no rate, no ETA from old labels



# --------------------------------------------------------------------- bad values: usage errors, exit 2


def usage_error(done: subprocess.CompletedProcess[str]) -> str:
    """The ``Error:`` line of a usage error: exit status 2, the usage line, no traceback."""
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert done.stderr.startswith("Usage: clparse ") and "Traceback" not in done.stderr, done.stderr
    return done.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("args, said", [
    (["train", "--until-theta", "-1"], "'--until-theta': must be positive, got -1"),
    (["train", "--until-theta", "inf"], "'--until-theta': must be a finite number, got inf"),
    (["train", "--until-theta", "nan"], "'--until-theta': must be a finite number, got nan"),
    (["train", "--smoothing", "nan"], "'--smoothing': must be a finite number, got nan"),
    (["train", "--smoothing", "-1"], "'--smoothing': must be a non-negative number, got -1"),
    (["train", "--sample-seed", "-1"], "Invalid value for '--sample-seed': -1 is not in the range x>=0."),
    (["prepare", "--train", "{train}", "--seed", "-1"], "Invalid value for '--seed': -1 is not in the range"),
    (["compare", "{train}", "{train}", "{train}", "--seed", "-1"], "Invalid value for '--seed': -1 is not"),
])
def test_a_bad_number_is_a_usage_error_naming_the_option(trained_db: Path, args: list[str],
                                                         said: str) -> None:
    """--until-theta inf trained nothing and said nothing; a negative seed was a numpy traceback (prepare,
    compare) or a failed label (train --sample-seed)."""
    from clparse.data import sample_path

    args = [a.format(train=sample_path("train")) for a in args]
    db = ["--db", str(trained_db)] if args[0] != "compare" else []
    assert said in usage_error(clparse(args[0], *db, *args[1:]))


def test_an_unknown_label_is_a_usage_error_with_the_near_miss(trained_db: Path) -> None:
    """Was exit status 1 without the usage line, listing every label."""
    assert usage_error(clparse("train", "--db", trained_db, "--labels", "NNP")) == \
        "Error: Invalid value for '--labels': no label NNP in this run; did you mean NP?"


def test_the_library_refuses_a_negative_seed_by_name(trained_db: Path, tmp_path: Path) -> None:
    from clparse.data import sample_path
    from clparse.errors import ParameterError

    with pytest.raises(ParameterError, match="seed: must be a whole number ≥ 0, got -1"):
        api.prepare(tmp_path / "run.sqlite", [sample_path("train")], seed=-1)
    with pytest.raises(ParameterError, match="sample_seed: must be a whole number ≥ 0, got -3"):
        api.train(trained_db, ["NP"], max_iterations=1, options=api.TrainOptions(sample=10, sample_seed=-3))


def test_calibrate_without_dev_sentences_fails_first_in_one_line(db_copy: Path) -> None:
    """It failed only after the parser's modules (and, before, the model) had loaded; now a quick read of the
    file says so before anything slow is imported."""
    import apsw

    connection = apsw.Connection(str(db_copy))
    connection.execute("PRAGMA foreign_keys = OFF; DELETE FROM sentences WHERE split = 'dev'")
    connection.close()
    script = ("import sys\nfrom clparse.cli import main\n"
              f"try:\n    main(['calibrate', '--db', {str(db_copy)!r}])\n"
              "except SystemExit as exc:\n"
              "    print(exc.code, 'clparse.parser' in sys.modules, 'numba' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=ENV,
                          timeout=120)
    assert done.stdout.split() == ["2", "False", "False"], (done.stdout, done.stderr)
    assert done.stderr.strip().splitlines()[-1] == (
        f"Error: Invalid value for '--dev': {db_copy} has no dev sentences (prepare was given no --dev): "
        "give dev treebank files")


# --------------------------------------------------------------------- errors: one short line


def one_error(done: subprocess.CompletedProcess[str], status: int = 1) -> str:
    assert done.returncode == status, (done.returncode, done.stderr)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), done.stderr
    return lines[0]


def test_a_theta_no_label_is_trained_past_is_one_short_line(trained_db: Path) -> None:
    """The error listed every label (about 1,000 characters on the sample); --verbose still does."""
    error = one_error(clparse("parse", "--db", trained_db.name, "--theta", "0.0001",
                              stdin="The dog barked .\n", cwd=trained_db.parent))
    assert len(error.removeprefix("Error: ")) <= 200, error
    assert re.search(r"\(ADJP: trained only down to Θ = [0-9.]+; 18 more with --verbose\); train further",
                     error), error
    whole = clparse("--verbose", "parse", "--db", trained_db.name, "--theta", "0.0001",
                    stdin="The dog barked .\n", cwd=trained_db.parent)
    assert "WHPP: trained only down to" in whole.stderr.splitlines()[-1]


def test_check_on_a_damaged_file_is_one_short_line(db_copy: Path) -> None:
    """SQLite's integrity report came as 4 lines, then as one of 250 characters."""
    from tests.conftest import damage

    damage(db_copy, "tree_nodes")
    error = one_error(clparse("check", "--db", db_copy))
    assert error == (f"Error: {db_copy}: the database is damaged; nothing was written to it; restore it from "
                     "a backup (`clparse backup` makes one) (integrity_check: details with --verbose)")
    whole = clparse("--verbose", "check", "--db", db_copy).stderr.splitlines()[-1]
    assert "(integrity_check: " in whole and "***" not in whole and "btreeInitPage" in whole


def test_a_changed_training_setting_names_only_what_changed(db_copy: Path) -> None:
    """It printed both settings dictionaries (about 500 characters)."""
    error = one_error(clparse("train", "--db", db_copy, "--labels", "ADJP", "--until-theta", "2",
                              "--checkpoint-every", "7"))
    assert error == ("Error: label ADJP was started with --checkpoint-every 50 (not 7); settings cannot "
                     "change midway (use a new database for other settings)")


@pytest.mark.parametrize("text, short", [
    ("short (a; b)", "short (a; b)"),
    ("x: (" + "; ".join(f"item {i} " + "y" * 20 for i in range(20)) + ") then the advice",
     "x: (item 0 yyyyyyyyyyyyyyyyyyyy; 19 more with --verbose) then the advice"),
    ("report:\n*** in database main ***\nline one\nline two", "report: line one; line two"),
])
def test_one_line_joins_and_shortens(text: str, short: str) -> None:
    from clparse.cli.core import one_line

    assert one_line(text) == short
    assert one_line("see (" + "word " * 50 + ") then do this") == "see (details with --verbose) then do this"
    assert one_line("prose " * 50) == ("prose " * 50).strip()  # never cut: its end says what to do


# --------------------------------------------------------------------- the quickstart's demo


def quickstart_on(tmp_path: Path, train_trees: int | None, until_theta: float, beam: int) -> str:
    """What ``clparse quickstart`` prints, run in ``tmp_path`` on the sample (its first ``train_trees``
    training trees and 5 dev trees, or all of both)."""
    import clparse.quickstart as quickstart
    from clparse.data import sample_path
    from clparse.read import format_tree, read_trees

    files = {split: sample_path(split) for split in ("train", "dev")}
    if train_trees is not None:
        for split, trees in (("train", list(read_trees(sample_path("train")))[:train_trees]),
                             ("dev", list(read_trees(sample_path("dev")))[:5])):
            files[split] = tmp_path / f"{split}.ptb"
            files[split].write_text("".join(format_tree(t) + "\n" for t in trees))
    lines: list[str] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(quickstart, "sample_path", files.__getitem__)
        quickstart.run_quickstart(echo=lines.append, db=tmp_path / "quickstart.sqlite",
                                  until_theta=until_theta, beam=beam)
    return "\n".join(map(str, lines))


def test_the_quickstart_says_its_parses_come_from_a_toy_model(tmp_path: Path) -> None:
    out = quickstart_on(tmp_path, 40, until_theta=5.0, beam=1)
    note = out.split("== 4. parse")[1].splitlines()[1]
    assert re.fullmatch(r"\(A toy model: trained on the sample's \d+ training sentences of at most 15 words, "
                        r"F1 [0-9.]+ on its \d+ dev sentences\. It parses these short sentences sensibly and "
                        r"most others oddly; .*\)", note), note


@pytest.mark.slow
def test_the_quickstart_demo_sentences_get_sensible_trees(tmp_path: Path) -> None:
    """The real quickstart (whole sample, Θ 1, beam 10) put SBARQ over "She gave the book to her brother
    yesterday ." and NP over "Researchers published ..."; the demo sentences now each get an S over the
    subject NP and the VP."""
    from clparse.quickstart import QUICKSTART_THETA

    out = quickstart_on(tmp_path, None, until_theta=QUICKSTART_THETA, beam=10)
    parses = [line for line in out.split("== 4. parse")[1].splitlines() if line.startswith("(ROOT ")]
    assert len(parses) == 3 and all(re.match(r"\(ROOT \(S \(NP .*\) \(VP .*\) \(\. \.\)\)\)$", tree)
                                    for tree in parses), parses


# --------------------------------------------------------------------- one convention for option names

#: (command, new spelling, old spelling kept as a hidden alias, parameter, a value or None for a flag)
RENAMED = [
    ("report", "--by-label", "--labels", "show_labels", None),  # --labels names labels in train
    ("export", "--output", "--out", "out", "x.sqlite"),  # -o/--output, as parse and treebank preprocess
    ("prepare", "--min-word-count", "--vocab-min", "vocab_min", "3"),  # limits are --max-X / --min-X
]


@pytest.mark.parametrize("command, new, old, name, value", RENAMED)
def test_a_renamed_option_keeps_its_old_spelling_unshown(command: str, new: str, old: str, name: str,
                                                        value: str | None) -> None:
    cmd = main.commands[command]
    required = ["--output", "x"] if command == "export" and new != "--output" else []
    required += ["--train", str(Path(__file__))] if command == "prepare" else []
    for spelling in (new, old):
        ctx = cmd.make_context(command, [*required, spelling, *([value] if value else [])])
        assert ctx.params[name] == (True if value is None else Path(value) if command == "export" else 3)
    code, out, _ = invoke(command, "--help")
    assert code == 0 and re.search(rf"(?<![\w-]){new}(?![\w-])", out)
    assert not re.search(rf"(?<![\w-]){old}(?![\w-])", out), out


def test_a_missing_renamed_option_is_named_by_its_new_spelling(trained_db: Path) -> None:
    code, _, err = invoke("export", "--db", trained_db)
    assert code == 2 and err.strip().endswith("Error: Missing option '-o' / '--output'."), err


def test_treebank_max_words_0_keeps_every_sentence_as_prepare_does() -> None:
    from clparse.data import sample_path

    every = invoke("treebank", "stats", "--preprocess", sample_path("dev"))
    assert invoke("treebank", "stats", "--preprocess", "--max-words", "0", sample_path("dev")) == every
    assert every[0] == 0


# --------------------------------------------------------------------- progress in every long phase


def test_eval_and_compare_show_progress_on_a_terminal_only(tmp_path: Path) -> None:
    """eval and compare read and scored big files in silence (18 s for 18,000 sentences)."""
    from clparse.data import sample_path

    big = tmp_path / "big.ptb"
    big.write_text(sample_path("train").read_text() * 4)
    for args, label in ((["eval"], "scoring"), (["compare", "--trials", "10"], "scoring B")):
        status, out, shown = run_on_terminal([str(BIN / "clparse"), *args, str(big), str(big),
                                              *([str(big)] if args[0] == "compare" else [])], "", ENV)
        assert status == 0 and "100.00" in out, shown
        assert re.search(rf"{label}: [0-9,]+ sentences", shown), shown
        logged = clparse(*args, big, big, *([big] if args[0] == "compare" else []))
        assert logged.returncode == 0 and "scoring" not in logged.stderr  # a log gets no progress lines


def test_the_tagger_phase_of_prepare_shows_its_iterations_on_a_terminal(tmp_path: Path) -> None:
    """prepare announced the tagger's training, then was silent for a minute or two (on GUM); then it
    showed only the time elapsed: now the CRF's iterations, with an ETA."""
    from clparse.data import sample_path
    from clparse.read import format_tree, read_trees

    train = tmp_path / "train.ptb"
    train.write_text("".join(format_tree(t) + "\n" for t in list(read_trees(sample_path("train")))[:120]))
    status, _, shown = run_on_terminal([str(BIN / "clparse"), "prepare", "--db", str(tmp_path / "run.sqlite"),
                                        "--train", str(train)], "", ENV)
    assert status == 0, shown
    assert re.search(r"training the POS tagger: [0-9]+/150 iterations \([0-9]+ %\) .* ETA", shown), shown
    last = re.findall(r"training the POS tagger: ([0-9]+)/150", shown)[-1]
    assert 1 < int(last) <= 150, shown  # L-BFGS may converge before its last iteration
    assert re.search(r"\ntraining the run's crf POS tagger", shown), shown  # a line of its own


def test_a_ticker_redraws_its_elapsed_time_until_closed() -> None:
    import time

    from clparse.progress import Ticker

    stream = io.StringIO()
    with Ticker("waiting", stream, enabled=True, every=0.02).begin():
        time.sleep(0.2)
    drawn = stream.getvalue()
    assert drawn.count("\rwaiting: elapsed 0:00") >= 3 and drawn.endswith("\n"), drawn
    quiet = io.StringIO()
    with Ticker("waiting", quiet, every=0.02).begin():  # not a terminal: nothing
        time.sleep(0.05)
    assert quiet.getvalue() == ""


@pytest.mark.parametrize("command, function, shown", [
    (["check"], "check", "checking every page and checksum: elapsed 0:01"),
    (["backup", "{tmp}/copy.sqlite"], "backup", "copying to {tmp}/copy.sqlite: elapsed 0:01"),
])
def test_check_and_backup_show_their_time_on_a_terminal(trained_db: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch, command: list[str],
                                                        function: str, shown: str) -> None:
    """Both ran in silence: a minute or more on a large run."""
    import time

    import clparse.progress

    def slow(*_: object) -> int:
        time.sleep(1.3)
        return 0

    monkeypatch.setattr(api, function, slow)
    monkeypatch.setattr(clparse.progress, "is_terminal", lambda _stream: True)
    code, _, err = invoke(*[a.format(tmp=tmp_path) for a in command], "--db", trained_db)
    assert code == 0 and shown.format(tmp=tmp_path) in err, err


def test_calibrate_per_label_shows_each_trials_parse_on_a_terminal(db_copy: Path) -> None:
    """Each trial parses the whole dev set (minutes at beam 1000 on GUM) and only its result line showed."""
    assert clparse("calibrate", "--db", db_copy, "--beam", "1", "--points", "2").returncode == 0
    status, _, shown = run_on_terminal([str(BIN / "clparse"), "calibrate", "--db", str(db_copy), "--beam",
                                        "1", "--per-label", "--passes", "1"], "", ENV)
    assert status == 0, shown
    assert re.search(r"trial NP at Θ̂ [0-9.]+: 20/20 sentences \(100 %\)", shown), shown
    assert re.search(r"\nNP +Θ̂ [0-9.]+ +F1", shown), shown  # the trial's line on a line of its own


@pytest.mark.parametrize("command", [["treebank", "stats"], ["treebank", "preprocess"]])
def test_a_bad_step_names_the_near_miss_not_every_step(command: list[str]) -> None:
    """The error listed all 7 step names (230 characters)."""
    from clparse.data import sample_path

    code, _, err = invoke(*command, "--skip-step", "strip_function", sample_path("dev"))
    assert code == 2, err
    assert err.splitlines()[-1] == ("Error: Invalid value for '--skip-step': 'strip_function' is not one of "
                                    "the 7 choices; did you mean strip_function_tags?"), err


def test_prepare_names_the_near_miss_of_a_bad_step(tmp_path: Path) -> None:
    from clparse.data import sample_path

    error = usage_error(clparse("prepare", "--db", tmp_path / "run.sqlite", "--train", sample_path("dev"),
                                "--skip-step", "xyz"))
    assert error == ("Error: Invalid value for '--skip-step': 'xyz' is not one of 'strip_function_tags', "
                     "'delete_empty_elements', … (7 choices; --help lists them)")
    assert not (tmp_path / "run.sqlite").exists()

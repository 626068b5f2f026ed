"""Faults a demanding user met in prepare, train, status, tag, explain, treebank and the API behind them
(review helper); each test failed before its fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from clparse import api
from clparse.errors import ClparseError
from clparse.read import read_trees
from clparse.read.ptb import format_tree
from tests.conftest import invoke_cli

SMALL = 12  # training trees of the small runs below (prepare takes a second or two)


invoke = invoke_cli


@pytest.fixture
def small_treebank(tmp_path: Path) -> Path:
    """The first short trees of the bundled sample, in a file of their own."""
    from clparse.data import sample_path

    trees = [t for t in read_trees(sample_path("train")) if len(t.words()) <= 12][:SMALL]
    path = tmp_path / "small.ptb"
    path.write_text("".join(format_tree(t) + "\n" for t in trees), encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- prepare again


def test_prepare_again_with_another_tagger_is_refused(tmp_path: Path, small_treebank: Path) -> None:
    """With gold training tags the tagger is not in the run's digest: prepare again with another --tagger
    or --tagger-iterations said "prepared from these inputs and settings: nothing to do", exit status 0,
    and kept the stored tagger."""
    db = tmp_path / "run.sqlite"
    api.prepare(db, [small_treebank], tagger="perceptron", tagger_iterations=1)
    again = api.prepare(db, [small_treebank], tagger="perceptron", tagger_iterations=1)
    assert not again.created and "nothing to do" in again.message
    with pytest.raises(ClparseError, match=r"tagger perceptron \(not crf\)"):
        api.prepare(db, [small_treebank], tagger="crf", tagger_iterations=1)
    with pytest.raises(ClparseError, match=r"tagger_iterations 1 \(not 2\)"):
        api.prepare(db, [small_treebank], tagger="perceptron", tagger_iterations=2)
    result = invoke(["prepare", "--db", db, "--train", small_treebank, "--tagger", "crf",
                     "--tagger-iterations", 1])
    assert result.exit_code == 1 and "use a new database for another tagger" in result.stderr


# ----------------------------------------------------------------------------- train


@pytest.fixture
def small_run(tmp_path: Path, small_treebank: Path) -> Path:
    """A run prepared from :func:`small_treebank` (perceptron tagger, one iteration), not trained."""
    db = tmp_path / "small.sqlite"
    api.prepare(db, [small_treebank], tagger="perceptron", tagger_iterations=1)
    return db


def test_train_a_label_named_twice_trains_it_once(small_run: Path) -> None:
    """`train --labels NP,NP --jobs 2` started two workers for NP: one was refused ("being trained by
    process ...") and the command exited 1; with --jobs 1 it said "training 2 label(s)"."""
    plans: list[api.TrainPlan] = []
    summary = api.train(small_run, ["NP", "NP"], max_iterations=2, jobs=2, on_start=plans.append)
    assert plans[0].labels == ["NP"]
    assert not summary.refused and not summary.failures and summary.states == {"NP": "stopped"}


# ----------------------------------------------------------------------------- treebank stats


def test_treebank_stats_refuses_preprocess_options_without_preprocess(small_treebank: Path) -> None:
    """`treebank stats FILE --max-words 5` (or --skip-step) without --preprocess counted every raw tree, the
    option ignored without a word, exit status 0."""
    for option in (["--max-words", 5], ["--skip-step", "strip_function_tags"]):
        result = invoke(["treebank", "stats", small_treebank, *option])
        assert result.exit_code == 2 and "add --preprocess" in result.stderr
    kept = invoke(["treebank", "stats", small_treebank, "--preprocess", "--max-words", 5, "--json"])
    assert kept.exit_code == 0 and '"sentences"' in kept.stdout


# ----------------------------------------------------------------------------- the Python API's paths


def test_api_takes_treebank_directories_and_names_a_bad_path(tmp_path: Path, small_treebank: Path) -> None:
    """api.prepare(db, ["gum/train"]), as the module's docstring shows it, ended in IsADirectoryError (only
    the command line expanded directories); a missing file was a FileNotFoundError traceback, and a single
    name as a string was read one character at a time (IsADirectoryError on '/')."""
    db = tmp_path / "dir.sqlite"
    summary = api.prepare(db, [small_treebank.parent], tagger="perceptron", tagger_iterations=1)
    assert summary.train_sentences == SMALL
    report = api.evaluate_tags(db, [small_treebank.parent])
    assert report.sentences == SMALL
    with pytest.raises(ClparseError, match="nope.ptb: no such file"):
        api.prepare(tmp_path / "other.sqlite", [tmp_path / "nope.ptb"])
    with pytest.raises(ClparseError, match="not one name"):
        api.prepare(tmp_path / "other.sqlite", str(small_treebank))  # type: ignore[arg-type]
    assert not (tmp_path / "other.sqlite").exists()


def test_prepare_refuses_a_file_given_twice(tmp_path: Path, small_treebank: Path) -> None:
    """`prepare --train gum/train gum/train/a.ptb` (or a file twice, or a copy) stored and trained on every
    tree of it twice, exit status 0."""
    db = tmp_path / "twice.sqlite"
    (tmp_path / "copies").mkdir()
    copy = tmp_path / "copies" / "copy.mrg"
    copy.write_bytes(small_treebank.read_bytes())
    with pytest.raises(ClparseError, match="given twice"):
        api.prepare(db, [small_treebank, small_treebank])
    with pytest.raises(ClparseError, match="same contents as"):
        api.prepare(db, [small_treebank, copy])
    result = invoke(["prepare", "--db", db, "--train", small_treebank.parent, small_treebank])
    assert result.exit_code == 2 and "given twice" in result.stderr
    assert not db.exists()
    # the same file as train and dev is not a repeat: a quick check of a pipeline may want it
    warned: list[str] = []
    summary = api.prepare(db, [small_treebank], [small_treebank], tagger="perceptron", tagger_iterations=1,
                          warn=warned.append)
    assert summary.train_sentences == summary.dev_sentences == SMALL
    assert warned == [f"warning: {small_treebank.resolve()} is in both --train and --dev: dev scores "
                      "(calibration, the best Θ̂) are then measured on training sentences"]


# ----------------------------------------------------------------------------- status from Python


def test_api_status_labels_are_names_not_substrings(small_run: Path) -> None:
    """api.status(db, "SBARQ") matched every label that is a substring of the string (S, SBAR too); a label
    the run does not have was left out without a word (finished_labels the same)."""
    names = [r.label for r in api.status(small_run)]
    assert "NP" in names and "S" in names
    assert [r.label for r in api.status(small_run, ["NP"])] == ["NP"]
    with pytest.raises(ClparseError, match="not the string"):
        api.status(small_run, "NP")  # type: ignore[arg-type]
    with pytest.raises(ClparseError, match="no label NNP in this run; did you mean NP"):
        api.finished_labels(small_run, ["NNP"])


def test_prepare_refuses_jackknife_options_without_jackknife(tmp_path: Path, small_treebank: Path) -> None:
    """`prepare --folds 5` (or --fold-order, --jobs) without --train-tags jackknife prepared a gold-tag run,
    the option ignored without a word (it is not even in the run's digest), exit status 0."""
    db = tmp_path / "gold.sqlite"
    for option in (["--folds", 5], ["--fold-order", "contiguous"], ["--jobs", 2]):
        result = invoke(["prepare", "--db", db, "--train", small_treebank, *option])
        assert result.exit_code == 2 and "only with --train-tags jackknife" in result.stderr
        assert not db.exists()


# ----------------------------------------------------------------------------- tag


def test_tag_refuses_top_without_eval(tmp_path: Path, small_run: Path) -> None:
    """`clparse tag --top 5 FILE` tagged FILE with --top ignored without a word (--json was refused)."""
    text = tmp_path / "text.txt"
    text.write_text("The dog barked .\n", encoding="utf-8")
    result = invoke(["tag", "--db", small_run, "--top", 5, text])
    assert result.exit_code == 2 and "--top is for the report of --eval" in result.stderr
    tagged = invoke(["tag", "--db", small_run, text])
    assert tagged.exit_code == 0 and [w.rpartition("/")[0] for w in tagged.stdout.split()] == \
        ["The", "dog", "barked", "."]


def test_train_refuses_dask_batch_without_dask(small_run: Path) -> None:
    """`train --dask-batch 10` without --dask trained here with the option ignored without a word."""
    result = invoke(["train", "--db", small_run, "--labels", "NP", "--max-iterations", 1, "--dask-batch", 10])
    assert result.exit_code == 2 and "give --dask too" in result.stderr
    assert api.status(small_run, ["NP"])[0].iteration == 0  # nothing trained


def test_prepare_refuses_dev_files_the_length_filter_empties(tmp_path: Path, small_treebank: Path) -> None:
    """`prepare --dev long.ptb` whose every sentence is over --max-words stored no dev sentence with exit
    status 0 ("0 dev sentences"); calibrate then said "prepare was given no --dev"."""
    from clparse.data import sample_path

    long = [t for t in read_trees(sample_path("dev")) if len(t.words()) > 25][:2]
    dev = tmp_path / "long.mrg"
    dev.write_text("".join(format_tree(t) + "\n" for t in long), encoding="utf-8")
    db = tmp_path / "long.sqlite"
    with pytest.raises(ClparseError, match=r"no dev sentence survived .* \(at most 15 words\)"):
        api.prepare(db, [small_treebank], [dev], tagger="perceptron", tagger_iterations=1)
    assert not db.exists()
    summary = api.prepare(db, [small_treebank], [dev], max_words=0, tagger="perceptron", tagger_iterations=1)
    assert summary.dev_sentences == 2


def test_train_refuses_sample_seed_without_sample(small_run: Path) -> None:
    """`train --sample-seed 5` on a run trained on every example was ignored without a word, yet stored: a
    later `--sample-seed 0` was then refused as a change of settings."""
    result = invoke(["train", "--db", small_run, "--labels", "NP", "--max-iterations", 1, "--sample-seed", 5])
    assert result.exit_code == 2 and "'--sample-seed'" in result.stderr
    assert "give the sample size too" in result.stderr
    assert api.status(small_run, ["NP"])[0].iteration == 0
    sampled = invoke(["train", "--db", small_run, "--labels", "NP", "--max-iterations", 1, "--sample", 50,
                      "--sample-seed", 5])
    assert sampled.exit_code == 0
    resumed = invoke(["train", "--db", small_run, "--labels", "NP", "--max-iterations", 2,
                      "--sample-seed", 5])
    assert resumed.exit_code == 0 and api.status(small_run, ["NP"])[0].iteration == 2


def test_prepare_says_how_many_training_sentences_it_could_not_train_on(tmp_path: Path,
                                                                       small_treebank: Path) -> None:
    # a flat phrase of 7 children is wider than K = 5: the sentence is stored, not trained on
    wide = "(ROOT (S (NP (DT a) (JJ b) (JJ c) (JJ d) (JJ e) (JJ f) (NN g)) (VP (VBD ran)) (. .)))\n"
    treebank = tmp_path / "wide.ptb"
    treebank.write_text(small_treebank.read_text(encoding="utf-8") + wide, encoding="utf-8")
    done = invoke(["prepare", "--db", tmp_path / "run.sqlite", "--train", treebank, "--tagger", "perceptron"])
    assert done.exit_code == 0, done.stderr
    assert (f"{SMALL + 1} training sentences (1 not trained on: a phrase wider than K = 5 or against the "
            "candidate constraints; sentences.skip_reason says which)") in done.output
    again = invoke(["prepare", "--db", tmp_path / "small.sqlite", "--train", small_treebank, "--tagger",
                    "perceptron"])
    assert f"{SMALL} training sentences, " in again.output


def test_a_label_already_past_max_iterations_says_so() -> None:
    from clparse.train import StopRule

    rule = StopRule(max_iterations=10)
    assert rule.reached(10, 5.0, 40) == "reached 10 iterations"
    assert rule.reached(30, 5.0, 90) == "already 30 iterations, past the stop at 10"
    assert rule.reached(9, 5.0, 40) is None

"""``prepare --train-tags both``: every training sentence with its gold tags, and a jackknifed copy of each
sentence whose jackknifed tags differ (issue 29). Checked against a gold-tag run and a jackknifed run of
the same sample, prepared independently."""

from __future__ import annotations

from pathlib import Path

import pytest

from clparse.calibrate.run import default_tags
from clparse.cli import main
from clparse.data import sample_path
from clparse.examples.prepare import PrepareSettings, input_digest, prepare
from clparse.read import parse_tree
from clparse.store.database import init_database
from clparse.tag.jackknife import NONE_TAG
from tests.conftest import invoke_cli, read_rows

FOLDS = 3
ITERATIONS = 15  # as tests/test_jackknife.py: enough to make tag errors, fast enough


def _prepared(root: Path, train_tags: str) -> Path:
    db = root / f"{train_tags}.sqlite"
    init_database(db)
    prepare(db, [sample_path("train")], [sample_path("dev")],
            PrepareSettings(max_words=None, train_tags=train_tags, folds=FOLDS, tagger_iterations=ITERATIONS))
    return db


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("both")
    return {name: _prepared(root, name) for name in ("gold", "jackknife", "both")}


SENTENCES = ("SELECT words, gold_tree, tree, fold, tags, trained FROM sentences WHERE split = 'train' "
             "ORDER BY position")


def _gold_tags(tree: str) -> list[str]:
    return [t for _, t in parse_tree(tree).tagged_words() if t != NONE_TAG]


@pytest.mark.slow
def test_gold_sentences_are_the_gold_runs_and_copies_the_jackknifed_runs_that_differ(
        runs: dict[str, Path]) -> None:
    both = read_rows(runs["both"], SENTENCES)
    gold = read_rows(runs["gold"], SENTENCES)
    jackknifed = read_rows(runs["jackknife"], SENTENCES)
    copies = [row for row in both if row[3] is not None]
    originals = [row for row in both if row[3] is None]
    # the gold-tag sentences: the gold run's, in its order (words, trees as read and as trained on)
    assert [row[:3] for row in originals] == [row[:3] for row in gold]
    # the copies: exactly the jackknifed run's sentences whose tags are not the gold ones, same tags and folds
    differing = [row for row in jackknifed if row[4].split() != _gold_tags(row[1])]
    assert 0 < len(differing) < len(jackknifed)  # else this test proves nothing
    assert [row[:5] for row in copies] == [row[:5] for row in differing]
    # the copies' training trees carry the jackknifed tags, their gold trees the treebank's
    for words, gold_tree, tree, fold, tags, trained in copies:
        assert _gold_tags(gold_tree) != tags.split()
        assert [t for _, t in parse_tree(tree).tagged_words()] != _gold_tags(gold_tree) or not trained


@pytest.mark.slow
def test_copies_do_not_count_twice_for_the_vocabulary_or_the_tagger(runs: dict[str, Path]) -> None:
    vocabulary = "SELECT * FROM vocabulary ORDER BY 1"
    assert read_rows(runs["both"], vocabulary) == read_rows(runs["gold"], vocabulary)
    tagger = "SELECT kind, model_blob, train_sentences, dev_accuracy FROM taggers"
    assert read_rows(runs["both"], tagger) == read_rows(runs["gold"], tagger)  # trained on each tree once
    files = "SELECT split, path, trees FROM treebank_files ORDER BY id"
    assert read_rows(runs["both"], files) == read_rows(runs["gold"], files)


@pytest.mark.slow
def test_both_is_a_stored_setting_calibrated_on_gold_tags(runs: dict[str, Path]) -> None:
    assert default_tags(runs["both"]) == "gold"
    files = [("train", Path("t.ptb"), "0" * 64)]
    assert input_digest(files, PrepareSettings(train_tags="both")) not in (
        input_digest(files, PrepareSettings()), input_digest(files, PrepareSettings(train_tags="jackknife")))


def test_fold_options_are_refused_without_jackknifed_tags(tmp_path: Path) -> None:
    db = str(tmp_path / "g.sqlite")
    result = invoke_cli(["prepare", "--db", db, "--train", sample_path("train"), "--folds", "3"])
    assert result.exit_code == 2 and "--train-tags jackknife or both" in result.output
    assert not Path(db).exists()


def test_help_names_both() -> None:
    from click.testing import CliRunner

    result = CliRunner().invoke(main, ["prepare", "--help"])
    assert result.exit_code == 0 and "[gold|jackknife|both]" in result.output

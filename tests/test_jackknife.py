"""Jackknifed training tags and the stored CRF tagger (issue #12)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from clparse.cli import main
from clparse.calibrate.run import default_tags
from clparse.data import sample_path
from clparse.errors import ConfigurationError
from clparse.examples.prepare import PrepareSettings, input_digest, prepare
from clparse.read import parse_tree, read_trees
from clparse.store.database import init_database
from clparse.tag.crf import CrfTagger
from clparse.tag.jackknife import NONE_TAG, TaggerSpec, fold_of, jackknife, retag
from clparse.tag.stored import load_tagger
from tests.conftest import read_rows

FOLDS = 3
ITERATIONS = 15  # enough to tag the sample sensibly, fast enough for the suite


def gold_sentences() -> list[list[tuple[str, str]]]:
    return [[(w, t) for w, t in tree.tagged_words() if t != NONE_TAG]
            for tree in read_trees(sample_path("train"))]


@pytest.fixture(scope="module")
def jackknifed_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("jackknife") / "j.sqlite"
    init_database(db)
    prepare(db, [sample_path("train")], [sample_path("dev")],
            PrepareSettings(max_words=None, train_tags="jackknife", folds=FOLDS,
                            tagger_iterations=ITERATIONS))
    return db


@dataclass(frozen=True)
class Recording(TaggerSpec):
    """A spec whose taggers remember which sentences trained them, and tag with that record."""

    def train(self, sentences):  # type: ignore[no-untyped-def,override]
        return _Seen({tuple(w for w, _ in s) for s in sentences})


class _Seen:
    def __init__(self, seen: set[tuple[str, ...]]) -> None:
        self.seen = seen

    def tag(self, words: list[str]) -> list[str]:
        return ["SEEN" if tuple(words) in self.seen else "UNSEEN"] * len(words)


@pytest.mark.parametrize("order, expected", [("contiguous", [0, 0, 0, 1, 1, 2, 2, 2, 3, 3]),
                                             ("interleaved", [0, 1, 2, 3, 0, 1, 2, 3, 0, 1])])
def test_no_fold_is_tagged_by_a_tagger_that_saw_it(order: str, expected: list[int]) -> None:
    sentences = [[(f"w{i}", "NN"), (f"v{i}", "VB")] for i in range(10)]
    tags, folds = jackknife(sentences, 4, Recording(), order=order)
    assert folds == [fold_of(i, 10, 4, order) for i in range(10)] == expected
    assert all(t == ["UNSEEN", "UNSEEN"] for t in tags)  # no tagger had its own fold's sentences


def test_folds_cover_every_sentence() -> None:
    for count in (2, 7, 10, 101):
        for folds in range(2, min(count, 12) + 1):
            blocks = [fold_of(i, count, folds, "contiguous") for i in range(count)]
            assert blocks == sorted(blocks) and set(blocks) == set(range(folds))
            dealt = [fold_of(i, count, folds, "interleaved") for i in range(count)]
            assert set(dealt) == set(range(folds)) and max(map(dealt.count, set(dealt))) - \
                min(map(dealt.count, set(dealt))) <= 1
    with pytest.raises(ConfigurationError):
        fold_of(0, 10, 2, "random")


def test_jackknife_refuses_impossible_folds() -> None:
    with pytest.raises(ConfigurationError, match="folds"):
        jackknife([[("a", "DT")]] * 3, 4)
    with pytest.raises(ConfigurationError, match="folds"):
        PrepareSettings(train_tags="jackknife", folds=1)


def test_retag_changes_token_leaves_only() -> None:
    tree = parse_tree("(S (NP (-NONE- *)) (NP (DT the) (NN dog)) (VP (VBD barked)))")
    assert retag(tree, ["PRP$", "VB", "VBN"]).tagged_words() == [("*", "-NONE-"), ("the", "PRP$"),
                                                                 ("dog", "VB"), ("barked", "VBN")]
    assert tree.tagged_words()[1] == ("the", "DT")  # the input is not changed
    with pytest.raises(ValueError):
        retag(tree, ["DT"])


@pytest.mark.slow
def test_stored_folds_and_tags_come_from_taggers_that_never_saw_them(jackknifed_db: Path) -> None:
    """Recomputed independently from the sample: each fold's tagger trained on the other folds."""
    gold = gold_sentences()
    rows = read_rows(jackknifed_db, "SELECT position, fold, tags, words, gold_tree, tree FROM sentences "
                                    "WHERE split = 'train' ORDER BY position")
    assert len(rows) == len(gold)  # every length kept, so stored positions are the file's sentences
    expected: dict[int, list[list[str]]] = {}
    for k in range(FOLDS):
        tagger = CrfTagger.train([s for i, s in enumerate(gold) if fold_of(i, len(gold), FOLDS) != k],
                                 iterations=ITERATIONS)
        expected[k] = [tagger.tag([w for w, _ in s]) for i, s in enumerate(gold)
                       if fold_of(i, len(gold), FOLDS) == k]
    cursor = dict.fromkeys(range(FOLDS), 0)
    for position, fold, tags, words, gold_tree, tree in rows:
        assert fold == fold_of(position, len(gold), FOLDS)
        assert tags.split() == expected[fold][cursor[fold]]
        cursor[fold] += 1
        assert [(w, t) for w, t in parse_tree(gold_tree).tagged_words() if t != NONE_TAG] == gold[position]
    # the training trees carry the predicted tags, and some differ from gold (else the test proves nothing)
    differ = sum(t != g for (_, fold, tags, *_), s in zip(rows, gold) for t, (_, g) in zip(tags.split(), s))
    assert differ > 0


def test_jackknife_is_a_stored_setting_and_changes_the_digest() -> None:
    files = [("train", Path("t.ptb"), "0" * 64)]
    gold = input_digest(files, PrepareSettings())
    # gold tags: tagger not in digest
    assert input_digest(files, PrepareSettings(tagger="perceptron")) == gold
    assert input_digest(files, PrepareSettings(train_tags="jackknife")) != gold
    assert input_digest(files, PrepareSettings(train_tags="jackknife", folds=5)) != \
        input_digest(files, PrepareSettings(train_tags="jackknife"))
    assert input_digest(files, PrepareSettings(train_tags="jackknife", fold_order="contiguous")) != \
        input_digest(files, PrepareSettings(train_tags="jackknife"))


@pytest.mark.slow
def test_jackknifed_run_calibrates_on_tagger_tags(jackknifed_db: Path, trained_db: Path) -> None:
    assert default_tags(jackknifed_db) == "tagger"
    assert default_tags(trained_db) == "gold"
    [(config,)] = read_rows(jackknifed_db, "SELECT config_json FROM runs")
    settings = json.loads(config)["settings"]
    assert (settings["train_tags"], settings["folds"], settings["tagger"]) == ("jackknife", FOLDS, "crf")


@pytest.mark.slow
def test_the_stored_crf_reloads_and_tags_like_a_fresh_one(jackknifed_db: Path) -> None:
    stored = load_tagger(jackknifed_db)
    assert isinstance(stored, CrfTagger)
    fresh = CrfTagger.train([s for s in gold_sentences() if s], iterations=ITERATIONS)
    assert stored.to_bytes() == fresh.to_bytes()
    [(kind, blob, text)] = read_rows(jackknifed_db, "SELECT kind, model_blob, model_json FROM taggers")
    assert kind == "crf" and bytes(blob) == fresh.to_bytes() and text is None
    dev = [[w for w, t in tree.tagged_words() if t != NONE_TAG] for tree in read_trees(sample_path("dev"))]
    assert [stored.tag(words) for words in dev] == [fresh.tag(words) for words in dev]


@pytest.mark.slow
def test_prepare_cli_jackknife_options(tmp_path: Path) -> None:
    db = tmp_path / "cli.sqlite"
    result = CliRunner().invoke(main, ["prepare", "--db", str(db), "--train", str(sample_path("train")),
                                       "--dev", str(sample_path("dev")), "--max-words", "8", "--tagger",
                                       "perceptron", "--train-tags", "jackknife", "--folds", "2",
                                       "--jobs", "2"])
    assert result.exit_code == 0, result.output
    assert read_rows(db, "SELECT kind FROM taggers") == [("perceptron",)]
    assert read_rows(db, "SELECT count(*) FROM sentences WHERE split = 'train' AND fold IS NULL") == [(0,)]
    assert {f for (f,) in read_rows(db, "SELECT DISTINCT fold FROM sentences WHERE split = 'train'")} \
        == {0, 1}


def test_training_and_parsing_set_aside_the_same_tokens_for_the_same_tags() -> None:
    """Jackknifed tags reach the training trees through retag + preprocessing, and raw text reaches the
    parser as a flat tree: with the same tags, both must set aside (quotes, outermost punctuation) the
    same tokens, or the parser would train on other inputs than it meets (issue 29's mismatch question)."""
    from clparse.preprocess.pipeline import PreprocessConfig, preprocess_tree, preprocess_treebank
    from clparse.read.tree import Tree

    config = PreprocessConfig(max_words=None)
    swaps = {",": "NN", "NN": "''", "``": "JJ", "JJ": ".", ".": "VB"}  # across the punctuation line
    checked = 0
    for n, tree in enumerate(read_trees(sample_path("train"))):
        gold = [(w, t) for w, t in tree.tagged_words() if t != NONE_TAG]
        if not gold:
            continue
        for tags in ([t for _, t in gold], [swaps.get(t, t) if (i + n) % 3 == 0 else t
                                           for i, (_, t) in enumerate(gold)]):
            trained = list(preprocess_treebank([retag(tree, tags)], config))
            parsed = preprocess_tree(Tree("S", [Tree.preterminal(t, w) for (w, _), t in zip(gold, tags)]),
                                     config)
            assert (parsed is None) == (not trained)
            if parsed is not None:
                assert [r.index for r in parsed.removed] == [r.index for r in trained[0].removed]
                assert trained[0].tree.words() == parsed.tree.words()
                checked += 1
    assert checked > 100

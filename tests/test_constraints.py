"""Candidate constraints (issue #11): no punctuation at a span edge, ROOT only over a single item.

* After Table 3 preprocessing no gold tree loses reachability: every correct inference of every state
  on a gold path is still a candidate, so the positives are exactly those without constraints;
* what the constraints remove are only negatives, and the parser's kernel removes the same
  candidates as ``prepare``'s (rows compared on every state of the sample's gold paths);
* the search still ends in a parse, with ROOT over one item.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from dataclasses import replace
from hypothesis import given, settings

from clparse.data import sample_path
from clparse.errors import ConfigurationError
from clparse.features.space import FeatureConfig
from clparse.examples.generate import ExampleGenerator, obeys_constraints
from clparse.examples.prepare import PrepareSettings
from clparse.features.state import leaf_items
from clparse.preprocess import PreprocessConfig, Vocabulary, preprocess_tree, preprocess_treebank
from clparse.read import Tree, parse_tree, read_trees
from clparse.search import search
from clparse.search.scorer import CandidateScorer
from tests.conftest import read_rows
from tests.row_parity import empty_model, prepare_and_parser_rows
from tests.strategies import trees

LABELS = ["ADJP", "ADVP", "NP", "PP", "PRT", "ROOT", "S", "SBAR", "VP"]


def generate(tree: Tree, constraints: bool) -> ExampleGenerator:
    generator = ExampleGenerator(LABELS, FeatureConfig(), max_children=50, constraints=constraints)
    prepared = generator.prepare_tree(tree)
    assert prepared is not None
    generator.add_sentence(prepared, 0)
    generator.finish()
    return generator


@settings(max_examples=200, deadline=None)
@given(trees(max_leaves=10))
def test_no_preprocessed_gold_tree_loses_reachability(raw: Tree) -> None:
    result = preprocess_tree(raw)
    if result is None:
        return
    assert obeys_constraints(result.tree)  # what raising punctuation guarantees
    free, constrained = generate(result.tree, False), generate(result.tree, True)
    assert constrained.report.positives == free.report.positives  # every correct inference is still there
    for label in LABELS:
        assert constrained.report.candidates[label] <= free.report.candidates[label]


def test_constraints_remove_punctuation_edges_and_non_unary_root() -> None:
    tree = parse_tree("(ROOT (S (NP (PRP I)) (, ,) (VP (VBD ran))))")
    free, constrained = generate(tree, False), generate(tree, True)
    assert constrained.report.candidates["ROOT"] < free.report.candidates["ROOT"]
    assert sum(constrained.report.candidates.values()) < sum(free.report.candidates.values())
    assert not obeys_constraints(parse_tree("(ROOT (S (NP (PRP I)) (, ,)))"))
    assert not obeys_constraints(parse_tree("(ROOT (NP (PRP I)) (VP (VBD ran)))"))


def test_constraints_need_punctuation_raising() -> None:
    with pytest.raises(ConfigurationError, match="raise_punctuation"):
        PrepareSettings(constraints=True, skip_steps=("raise_punctuation",))


RICH = FeatureConfig(context=3, child_extra=True, head_of_child=True, context_exists=True, length=True)


@pytest.mark.parametrize("constraints, config", [(True, FeatureConfig()), (False, RICH), (True, RICH),
                                                 (True, replace(RICH, span_edges=True)),
                                                 (True, replace(RICH, context=1, span_edges=True)),
                                                 (True, replace(RICH, punctuation=True)),
                                                 (False, replace(RICH, length=False, punctuation=True))])
def test_parser_kernel_computes_the_same_rows_as_prepare(constraints: bool, config: FeatureConfig) -> None:
    kept = list(preprocess_treebank(read_trees(sample_path("train")),
                                    PreprocessConfig.without((), max_words=15)))
    kept = kept if config == FeatureConfig() else kept[:60]
    generator, expected, found = prepare_and_parser_rows(kept, config, constraints)
    assert generator.report.breaks_constraints == 0
    assert found == expected


def test_search_with_constraints_builds_root_over_one_item() -> None:
    tagged = [("I", "PRP"), ("ran", "VBD"), (",", ","), ("she", "PRP"), ("sat", "VBD")]
    for constraints in (False, True):
        model = empty_model(LABELS, [], Vocabulary.build([w for w, _ in tagged], 1), constraints)
        result = search(leaf_items(tagged), CandidateScorer(model), beam=1)
        assert result.item is not None and result.item.label == "ROOT"
        if constraints:
            assert len(result.item.children) == 1
            stack = [result.item.children[0]]
            while stack:  # no phrase begins or ends with the comma
                node = stack.pop()
                if not node.is_leaf:
                    assert node.children[0].label != "," and node.children[-1].label != ","
                    stack.extend(node.children)


def test_unknown_word_signatures_are_a_stored_setting(tmp_path: Path) -> None:
    from clparse.examples.data import TrainingData
    from clparse.examples.prepare import prepare
    from clparse.rebuild.model import run_vocabulary
    from clparse.store.database import init_database

    db = tmp_path / "signatures.sqlite"
    init_database(db)
    prepare(db, [sample_path("train")], [sample_path("dev")], PrepareSettings(unknown_words="signatures",
                                                                                  tagger_iterations=20))
    data = TrainingData(db)
    settings = data.config["settings"]
    assert settings["unknown_words"] == "signatures"
    values = {row[0] for row in read_rows(
        db, "SELECT value FROM features WHERE property = 'headword' AND value LIKE 'UNK%'")}
    words = read_rows(db, "SELECT word, count FROM vocabulary")
    assert "UNK" in values and {"UNK-Cap", "UNK-num"} <= values  # shapes reached the stored features
    vocabulary = run_vocabulary(settings, words)  # what the parser normalizes with
    assert vocabulary.signatures and vocabulary.normalize("Zyxwv") == "UNK-Cap"
    assert not run_vocabulary({"vocab_min": 5}, words).signatures  # a run from before the setting
    with pytest.raises(ConfigurationError):
        PrepareSettings(unknown_words="shapes")


def test_max_words_zero_keeps_every_length(tmp_path: Path) -> None:
    import subprocess
    import sys


    long = "(ROOT (S (NP (DT The) (NN dog)) (VP (VBD saw) " + " ".join(["(NP (DT a) (NN cat))"] * 9) + ")))"
    treebank = tmp_path / "train.ptb"
    treebank.write_text("(ROOT (S (NP (PRP I)) (VP (VBD ran))))\n" + long + "\n")
    clparse = str(Path(sys.executable).with_name("clparse"))
    for flag, expected in (([], 1), (["--max-words", "0"], 2)):
        db = tmp_path / f"db{len(flag)}.sqlite"
        subprocess.run([clparse, "prepare", "--db", str(db), "--train", str(treebank), *flag], check=True,
                       capture_output=True)
        assert read_rows(db, "SELECT count(*) FROM sentences WHERE split = 'train'") == [(expected,)]
    [(stored,)] = read_rows(tmp_path / "db2.sqlite",
                            "SELECT json_extract(config_json, '$.settings.max_words') FROM runs")
    assert stored is None
    with pytest.raises(ConfigurationError):
        PrepareSettings(max_words=0)

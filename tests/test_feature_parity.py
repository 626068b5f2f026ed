"""The compiled feature path against independent references.

* the compiled head rules equal the Python Collins rules on random inputs;
* ``prepare``'s kernel gives the reference (pure Python) generator's feature ids, rows and examples
  byte for byte, under several feature settings;
* for every state on every stored gold path, the rows the search's kernel computes equal the rows
  ``prepare`` stored (counted with multiplicity, per label);
* the compiled scorer's confidences equal the reference scorer's, bit for bit, on every state of
  real searches.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clparse.data import sample_path
from clparse.examples.data import TrainingData
from clparse.examples.generate import ExampleGenerator
from clparse.features.items import ItemTable
from clparse.features.kernel import head_index
from clparse.features.space import FeatureConfig
from clparse.features.state import Item, build, leaf_items
from clparse.features.symbols import HeadTable, SymbolTable
from clparse.preprocess import PreprocessConfig, Vocabulary, preprocess_treebank
from clparse.preprocess.heads import HEAD_RULES, head_child_index
from clparse.read import read_trees
from clparse.rebuild.model import load_model
from clparse.search import search
from clparse.search.scorer import CandidateArrays, CandidateScorer, CompiledModel, state_rows
from tests.conftest import dev_tagged
from tests.reference_features import FeatureDictionary
from tests.reference_generate import ExampleGenerator as ReferenceGenerator
from tests.reference_scorer import CandidateScorer as ReferenceScorer

RULE_LABELS = sorted({label for passes in HEAD_RULES.values() for _, labels in passes for label in labels})
LABEL_POOL = RULE_LABELS + sorted(HEAD_RULES) + ["ROOT", "TOP", "", "NX", "NML", "X", "NP-SBJ", "PP=2",
                                                 "-LRB-", "-NONE-", "CC", "CONJP", "POS", ",", "XYZ"]


@settings(max_examples=3000, deadline=None)
@given(parent=st.sampled_from(LABEL_POOL),
       children=st.lists(st.sampled_from(LABEL_POOL), min_size=1, max_size=7))
def test_compiled_head_rules_equal_the_python_rules(parent: str, children: list[str]) -> None:
    symbols = SymbolTable(LABEL_POOL)
    heads = HeadTable(symbols)
    ids = np.array([symbols.get(c) for c in children], dtype=np.int32)
    assert head_index(symbols.get(parent), ids, len(children), heads.arrays()) == \
        head_child_index(parent, tuple(children))


def sample_trees(limit: int | None = None) -> tuple[list, Vocabulary, list[str]]:
    kept = list(preprocess_treebank(read_trees(sample_path("train")),
                                    PreprocessConfig.without((), max_words=15)))
    kept = kept[:limit] if limit else kept
    vocabulary = Vocabulary.build((w for p in kept for w in p.tree.words()), 5)
    labels = sorted({node.label for p in kept for node in p.tree.phrases()})
    return kept, vocabulary, labels


@pytest.mark.parametrize("config, limit", [
    (FeatureConfig.paper(), None),
    (replace(FeatureConfig.paper(), context=0), 60),
    (replace(FeatureConfig.paper(), context=3, grandchild=False), 60),
    (replace(FeatureConfig.paper(), context=1, child=False, exists=False), 60),
    (replace(FeatureConfig.paper(), exists_terminal=False), 60),
])
def test_prepare_kernel_equals_the_reference_generator(config: FeatureConfig, limit: int | None) -> None:
    kept, vocabulary, labels = sample_trees(limit)
    reference = ReferenceGenerator(labels, config, FeatureDictionary(), 5, 0, vocabulary.normalize)
    compiled = ExampleGenerator(labels, config, 5, 0, vocabulary.normalize)
    for position, result in enumerate(kept):
        for generator in (reference, compiled):
            tree = generator.prepare_tree(result.tree)
            if tree is not None:
                generator.add_sentence(tree, position)
    compiled.finish()
    assert reference.extractor.dictionary.keys == compiled.space.id_keys()  # same ids, first-seen order
    for ref, new in zip(reference.examples.csr(), compiled.sink.csr()):  # type: ignore[attr-defined]
        assert ref.dtype == new.dtype and ref.tobytes() == new.tobytes()
    for label in labels:
        for ref, new in zip(reference.examples.deduplicated(label), compiled.examples.deduplicated(label)):
            assert ref.dtype == new.dtype and ref.tobytes() == new.tobytes()
        assert reference.report.candidates[label] == compiled.report.candidates[label]
        assert reference.report.positives[label] == compiled.report.positives[label]
    assert reference.report.states == compiled.report.states


def test_search_rows_equal_the_stored_rows_on_every_gold_path_state(trained_db: Path) -> None:
    model = CompiledModel(load_model(trained_db, 4.0), full_table=True)
    normalize = model.model.vocabulary.normalize
    data = TrainingData(trained_db)
    stored_rows = data.feature_rows()
    expected: Counter[tuple[str, bytes]] = Counter()
    for label in data.labels():
        rows, _, multiplicity = data.label_examples(label)
        for row, count in zip(rows, multiplicity):
            expected[label, stored_rows.indices[stored_rows.indptr[row]:stored_rows.indptr[row + 1]]
                     .astype(np.int32).tobytes()] += int(count)
    found: Counter[tuple[str, bytes]] = Counter()
    states = 0
    for sentence in data.sentences("train"):
        if not sentence.trained:
            continue
        frontier: list[Item] = leaf_items(sentence.tree.tagged_words(), normalize)
        items = ItemTable(frontier, model.symbols, model.model.max_children)
        for start, end, label in sentence.path:
            for _, _, candidate_label, row in state_rows(model, items, items.frontier(frontier)):
                found[candidate_label, row.tobytes()] += 1
            states += 1
            first = next(i for i, x in enumerate(frontier) if x.start == start)
            last = next(i for i, x in enumerate(frontier) if x.end == end)
            frontier[first:last + 1] = [build(label, frontier[first:last + 1])]
    assert states > 1000
    assert found == expected


class BothScorers:
    """Runs the compiled and the reference scorer on every state and insists they agree exactly."""

    def __init__(self, model: object) -> None:
        self.compiled = CandidateScorer(model)  # type: ignore[arg-type]
        self.reference = ReferenceScorer(model)  # type: ignore[arg-type]
        self.labels = self.compiled.labels
        self.states = 0

    def candidates(self, frontier: list[Item]) -> CandidateArrays:
        new = self.compiled.candidates(frontier)
        old = self.reference.candidates(frontier)
        as_tuples = [(int(f), int(e), new.labels[label], float(c))
                     for f, e, label, c in zip(new.first, new.end, new.label, new.confidence)]
        assert as_tuples == old  # floats compared exactly
        self.states += 1
        return new


@pytest.fixture(scope="module")
def paper_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample with the paper's templates and no constraints (what the Python reference scorer knows)."""
    from clparse.examples.prepare import PrepareSettings, prepare
    from clparse.store.database import init_database
    from clparse.train import StopRule, train

    path = tmp_path_factory.mktemp("paper") / "paper.sqlite"
    init_database(path)
    prepare(path, [sample_path("train")], [sample_path("dev")],
            PrepareSettings(features=FeatureConfig.paper(), constraints=False, tagger="perceptron"))
    assert not train(path, rule=StopRule(until_theta=3.0)).failures
    return path


@pytest.mark.parametrize("theta", [4.0, 12.0])
def test_compiled_scores_equal_the_reference_scorer(paper_db: Path, theta: float) -> None:
    model = load_model(paper_db, theta)
    states = 0
    for tagged in dev_tagged(paper_db):
        scorer = BothScorers(model)
        search(leaf_items(tagged, model.vocabulary.normalize), scorer, beam=8, max_pops=300)
        states += scorer.states
    assert states > 500

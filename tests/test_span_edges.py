"""The span-edge template (issue 27) end to end: a run prepared with it trains, stores its features, and
the search's window cache gives every state exactly the scores a fresh scorer computes (the outside
terminals are read from the context items, so a window still determines its features)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from clparse.data import sample_path
from clparse.features.space import FeatureConfig
from clparse.features.state import Item, leaf_items
from clparse.read import read_trees
from clparse.rebuild.model import load_model
from clparse.search import CandidateScorer, search
from clparse.search.scorer import CandidateArrays


@pytest.fixture(scope="module")
def span_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from clparse.examples.prepare import PrepareSettings, prepare
    from clparse.store.database import init_database
    from clparse.train import StopRule, train

    path = tmp_path_factory.mktemp("span") / "span.sqlite"
    init_database(path)
    prepare(path, [sample_path("train")], [sample_path("dev")],
            PrepareSettings(features=FeatureConfig(span_edges=True), tagger="perceptron"))
    assert not train(path, rule=StopRule(until_theta=4.0)).failures
    return path


class FreshEveryState:
    """Scores each state with the sentence's cached scorer and with a new one, and insists they agree."""

    def __init__(self, model: object, leaves: list[Item]) -> None:
        self.model = model
        self.cached = CandidateScorer(model)  # type: ignore[arg-type]
        self.leaves = leaves
        self.labels = self.cached.labels
        self.states = 0

    def candidates(self, frontier: list[Item]) -> CandidateArrays:
        got = self.cached.candidates(frontier)
        fresh = CandidateScorer(self.model)  # type: ignore[arg-type]
        fresh.candidates(self.leaves)  # the same item table: the leaves first
        want = fresh.candidates(frontier)
        for name in ("first", "end", "label", "confidence"):
            assert np.array_equal(getattr(got, name), getattr(want, name)), name
        self.states += 1
        return got


def test_the_model_tests_span_edge_features(span_db: Path) -> None:
    model = load_model(span_db, 4.0)
    assert model.features.span_edges
    tested = {key for key, fid in model.feature_ids.items() if key[0] == "span-edge"}
    assert tested, "no span-edge feature was stored"
    assert {item for _, item, _, _ in tested} == {"first", "last", "before", "after"}


def test_cached_scores_equal_fresh_scores_on_every_state(span_db: Path) -> None:
    model = load_model(span_db, 4.0)
    states = 0
    for tree in list(read_trees(sample_path("dev")))[:12]:
        tagged = [(w, t) for w, t in tree.tagged_words() if t != "-NONE-"]
        leaves = leaf_items(tagged, model.vocabulary.normalize)
        scorer = FreshEveryState(model, leaves)
        result = search(leaves, scorer, beam=4, max_pops=40)
        assert result.item is not None
        states += scorer.states
    assert states > 50

"""Shared by the opt-in template tests: a run of the bundled sample prepared with a template and trained a
little, and the check that the search's window cache scores every state as a fresh scorer does (a window must
determine its features)."""

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


def trained_sample_run(factory: pytest.TempPathFactory, name: str, features: FeatureConfig) -> Path:
    """The bundled sample prepared with ``features`` (perceptron tagger) and trained to Θ < 4."""
    from clparse.examples.prepare import PrepareSettings, prepare
    from clparse.store.database import init_database
    from clparse.train import StopRule, train

    path = factory.mktemp(name) / f"{name}.sqlite"
    init_database(path)
    prepare(path, [sample_path("train")], [sample_path("dev")],
            PrepareSettings(features=features, tagger="perceptron"))
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


def states_scored_alike(db: Path, sentences: int) -> int:
    """Parse the first ``sentences`` of the sample's dev at Θ̂ 4, every state scored twice and compared;
    how many states were."""
    model = load_model(db, 4.0)
    states = 0
    for tree in list(read_trees(sample_path("dev")))[:sentences]:
        tagged = [(w, t) for w, t in tree.tagged_words() if t != "-NONE-"]
        leaves = leaf_items(tagged, model.vocabulary.normalize)
        scorer = FreshEveryState(model, leaves)
        result = search(leaves, scorer, beam=4, max_pops=40)
        assert result.item is not None
        states += scorer.states
    return states

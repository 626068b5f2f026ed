"""The compiled search against its references.

* Leaf masks (the scorer's exit-leaf evaluation of a window) give exactly the scores of walking every
  tree, which is what training's :meth:`Forest.score` computes: random forests, random feature sets,
  trees far wider than one 64-bit word (chains and combs of hundreds of leaves).
* The compiled greedy search (one call per sentence) builds the same items with the same confidences
  as the Python greedy loop, and beam 1 reports pops and pop-cap completions as the agenda did.
* The scorer with masks and the scorer that walks every tree give the same confidences on every state
  of real searches on the trained sample.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clparse.features.kernel import TreeArrays, _apply_masks, _sum_trees, leaf_masks
from clparse.features.state import Item, interner, leaf_items
from clparse.forest import Forest
from clparse.rebuild.model import load_model
from clparse.search import search
from clparse.search.best_first import State, greedy_path
from clparse.search.aggregate import empty
from clparse.search.scorer import CandidateArrays, CandidateScorer, CompiledModel
from tests.conftest import dev_tagged

FEATURES = 40


def random_tree(rng: np.random.Generator, shape: str, size: int) -> list[tuple[int | None, int, int, float]]:
    """One tree as node rows (feature or None, true child, false child, value) in its own numbering."""
    nodes: list[tuple[int | None, int, int, float]] = []

    def leaf() -> int:
        nodes.append((None, -1, -1, float(rng.normal())))
        return len(nodes) - 1

    def grow(depth: int) -> int:
        if shape == "chain-true" or shape == "chain-false":  # one long path: deep, many leaves
            if depth >= size:
                return leaf()
            at = len(nodes)
            nodes.append((0, -1, -1, 0.0))
            side = grow(depth + 1)
            other = leaf()
            true, false = (side, other) if shape == "chain-true" else (other, side)
            nodes[at] = (int(rng.integers(FEATURES)), true, false, 0.0)
            return at
        if depth >= size or rng.random() < 0.25:
            return leaf()
        at = len(nodes)
        nodes.append((0, -1, -1, 0.0))
        true, false = grow(depth + 1), grow(depth + 1)
        nodes[at] = (int(rng.integers(FEATURES)), true, false, 0.0)
        return at

    grow(0)
    return nodes


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), trees=st.integers(1, 12),
       shapes=st.lists(st.sampled_from(["bushy", "chain-true", "chain-false"]), min_size=1, max_size=3),
       density=st.floats(0.0, 1.0))
def test_leaf_masks_score_exactly_as_walking_the_trees(seed: int, trees: int, shapes: list[str],
                                                       density: float) -> None:
    rng = np.random.default_rng(seed)
    sizes = {"bushy": 9, "chain-true": 150, "chain-false": 150}
    forest = Forest.from_trees([random_tree(rng, shape, int(rng.integers(1, sizes[shape] + 1)))
                                for shape in (shapes * trees)[:trees]])
    arrays = TreeArrays(np.array([0, len(forest.roots)], dtype=np.int64), forest.roots, forest.feature,
                        forest.true_child, forest.false_child, forest.value)
    leaves = leaf_masks(arrays, FEATURES)
    walked = leaf_masks(arrays, FEATURES, walk=True)
    for _ in range(5):
        present_ids = np.flatnonzero(rng.random(FEATURES) < density).astype(np.int32)
        present = np.zeros(FEATURES, dtype=np.int32)
        present[present_ids] = 1
        masks = np.full(int(leaves.word_base[-1]), ~np.uint64(0), dtype=np.uint64)
        _apply_masks(present_ids, 0, len(present_ids), leaves, masks)
        by_masks = _sum_trees(0, present, arrays, masks, leaves)
        by_walking = _sum_trees(0, present, arrays, masks[:0], walked)
        reference = forest.score(np.array([0, len(present_ids)], dtype=np.int64), present_ids)[0]
        assert by_masks == by_walking == reference  # exactly: the same additions in the same order


class WalkChecked:
    """The masked scorer, checked state by state against a scorer that walks every tree."""

    def __init__(self, model: object) -> None:
        self.masked = CandidateScorer(CompiledModel(model))  # type: ignore[arg-type]
        self.walking = CandidateScorer(CompiledModel(model, walk=True))  # type: ignore[arg-type]
        self.labels = self.masked.labels
        self.states = 0

    def candidates(self, frontier: Sequence[Item]) -> CandidateArrays:
        walked = self.walking.candidates(frontier)
        kept = (walked.first.copy(), walked.end.copy(), walked.label.copy(), walked.confidence.copy())
        masked = self.masked.candidates(frontier)
        for new, old in zip((masked.first, masked.end, masked.label, masked.confidence), kept):
            assert np.array_equal(new, old)
        self.states += 1
        return masked


@pytest.mark.parametrize("theta", [3.0, 10.0])
def test_masked_scores_equal_walked_scores_on_every_state(trained_db: Path, theta: float) -> None:
    model = load_model(trained_db, theta)
    states = 0
    for tagged in dev_tagged(trained_db):
        scorer = WalkChecked(model)
        search(leaf_items(tagged, model.vocabulary.normalize), scorer, beam=10, max_pops=200)
        states += scorer.states
    assert states > 200


class PythonOnly:
    """The compiled scorer's candidates without its compiled greedy search: the Python greedy loop."""

    def __init__(self, scorer: CandidateScorer) -> None:
        self.scorer = scorer
        self.labels = scorer.labels

    def candidates(self, frontier: Sequence[Item]) -> CandidateArrays:
        return self.scorer.candidates(frontier)


def shape(item: Item) -> tuple[object, ...]:
    return (item.label, item.start, item.end, item.head, item.headword, item.headtag,
            tuple(shape(child) for child in item.children))


@pytest.mark.parametrize("theta,repeat", [(3.0, 1), (10.0, 1), (3.0, 4)])
def test_compiled_greedy_equals_the_python_greedy_loop(trained_db: Path, theta: float, repeat: int) -> None:
    """Same items, same confidences; ``repeat`` 4 makes sentences of 40-100 words, so the compiled call
    runs out of room (items, window cache, codes) and is resumed several times."""
    model = load_model(trained_db, theta)
    compared = 0
    for tagged in dev_tagged(trained_db, repeat):
        leaves = leaf_items(tagged, model.vocabulary.normalize)
        start = State(tuple(leaves), empty("maxmin"))
        compiled = greedy_path(start, CandidateScorer(model), interner(), "maxmin")
        python = greedy_path(start, PythonOnly(CandidateScorer(model)), interner(), "maxmin")
        assert compiled[1] == python[1] and compiled[2:] == python[2:]  # every confidence, steps, done
        assert [shape(i) for i in compiled[0]] == [shape(i) for i in python[0]]
        compared += len(compiled[2])
    assert compared > 100


@pytest.mark.parametrize("max_pops", [1, 3, 10_000])
def test_beam_one_reports_pops_and_completions_as_the_agenda_did(trained_db: Path, max_pops: int) -> None:
    """With a one-entry agenda every inference was one pop, and at the pop cap the rest of the path was
    the greedy completion: the compiled path reports the same."""
    model = load_model(trained_db, 3.0)
    for tagged in dev_tagged(trained_db)[:20]:
        leaves = leaf_items(tagged, model.vocabulary.normalize)
        result = search(leaves, CandidateScorer(model), beam=1, max_pops=max_pops)
        full = search(leaves, CandidateScorer(model), beam=1, max_pops=10_000)
        assert result.item is not None and full.item is not None
        assert shape(result.item) == shape(full.item) and result.score == full.score
        assert result.pops == min(full.pops, max_pops)
        assert result.completed == (full.pops > max_pops)
        if result.completed:
            assert result.reason == f"no complete parse within {max_pops} popped states: completed greedily"

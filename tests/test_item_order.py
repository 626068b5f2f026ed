"""The deterministic item orders of paper §3.5 (``prepare --order l2r|r2l``), against brute force.

* The l2r / r2l path of a gold tree is the lexicographically first / last of *all* its bottom-up
  paths (every topological order of its phrases, enumerated), by the starts / ends of the items;
* every step of it is legal under the order's rule, checked on word spans independently of the
  kernel: r2l: the new item dominates the leftmost phrase N on the frontier or lies wholly left of
  it; l2r the mirror;
* ``prepare``'s candidates are exactly the spans the rule allows (counted by brute force over the
  Python candidate enumerator), with exactly one positive example per state;
* the parser's kernel offers the same candidates with the same feature rows as ``prepare`` on every
  state of the sample's paths, and a search under an order ends in a whole parse.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings

from clparse.data import sample_path
from clparse.errors import ConfigurationError
from clparse.features.space import FeatureConfig
from clparse.examples.generate import ExampleGenerator, Inference, random_path
from clparse.examples.prepare import PrepareSettings, input_digest
from clparse.features.state import Item, Oracle, build, candidates, leaf_items
from clparse.preprocess import PreprocessConfig, Vocabulary, preprocess_tree, preprocess_treebank
from clparse.read import Tree, read_trees
from clparse.search import search
from clparse.search.scorer import CandidateScorer
from tests.row_parity import empty_model, prepare_and_parser_rows
from tests.strategies import trees

LABELS = ["ADJP", "ADVP", "NP", "PP", "PRT", "ROOT", "S", "SBAR", "VP"]


def all_paths(tree: Tree) -> Iterator[list[Inference]]:
    """Every bottom-up path of the gold tree: every order of its phrases with children before parents."""
    oracle = Oracle(tree, leaf_items(tree.tagged_words()))
    nodes = oracle.phrases
    n_words = oracle.n_words

    def extend(built: frozenset[int], path: list[Inference]) -> Iterator[list[Inference]]:
        if len(built) == len(nodes):
            yield path
            return
        for p, node in enumerate(nodes):
            if p not in built and all(k < n_words or k - n_words in built for k in node.children):
                yield from extend(built | {p}, path + [(node.start, node.end, node.label)])

    yield from extend(frozenset(), [])


def legal(frontier: list[tuple[int, int, bool]], start: int, end: int, order: str) -> bool:
    """The order's rule on word spans; ``frontier`` holds (start, end, is phrase) of the top items."""
    phrases = [(s, e) for s, e, phrase in frontier if phrase]
    if order == "random" or not phrases:
        return True
    n_start, n_end = phrases[0] if order == "r2l" else phrases[-1]
    dominates = start <= n_start and n_end <= end
    return dominates or (end <= n_start if order == "r2l" else start >= n_end)


def prepared(raw: Tree) -> Tree | None:
    result = preprocess_tree(raw)
    if result is None:
        return None
    return ExampleGenerator(["X"], FeatureConfig(), max_children=50).prepare_tree(result.tree)


@settings(max_examples=120, deadline=None)
@given(trees(max_leaves=7))
def test_deterministic_paths_are_the_extreme_orders_and_obey_the_rule(raw: Tree) -> None:
    tree = prepared(raw)
    if tree is None or len(list(tree.phrases())) > 7:  # keep the enumeration small
        return
    paths = list(all_paths(tree))
    r2l, l2r = random_path(tree, 0, 0, "r2l"), random_path(tree, 0, 0, "l2r")
    assert r2l == max(paths, key=lambda path: [end for _, end, _ in path])
    assert l2r == min(paths, key=lambda path: [start for start, _, _ in path])
    for order, path in (("r2l", r2l), ("l2r", l2r)):
        frontier = [(i, i + 1, False) for i in range(len(tree.words()))]
        for start, end, _ in path:
            assert legal(frontier, start, end, order), (order, path, start, end)
            first = next(i for i, x in enumerate(frontier) if x[0] == start)
            last = next(i for i, x in enumerate(frontier) if x[1] == end)
            frontier[first:last + 1] = [(start, end, True)]


def generate(tree: Tree, order: str) -> tuple[ExampleGenerator, list[Inference]]:
    generator = ExampleGenerator(LABELS, FeatureConfig(), max_children=5, order=order)
    path = generator.add_sentence(tree, 0)
    generator.finish()
    return generator, path


@settings(max_examples=120, deadline=None)
@given(trees(max_leaves=9))
def test_prepare_offers_exactly_the_legal_candidates_and_one_positive_per_state(raw: Tree) -> None:
    result = preprocess_tree(raw)
    if result is None:
        return
    tree = ExampleGenerator(LABELS, FeatureConfig(), max_children=5).prepare_tree(result.tree)
    if tree is None or any(p.label not in LABELS for p in tree.phrases()):
        return
    for order in ("l2r", "r2l"):
        generator, path = generate(tree, order)
        expected: Counter[str] = Counter()
        frontier: list[Item] = leaf_items(tree.tagged_words())
        for start, end, label in path:
            spans = [(x.start, x.end, not x.is_leaf) for x in frontier]
            for c in candidates(frontier, LABELS, max_children=5):
                if legal(spans, frontier[c.first].start, frontier[c.end - 1].end, order):
                    expected[c.label] += 1
            first = next(i for i, x in enumerate(frontier) if x.start == start)
            last = next(i for i, x in enumerate(frontier) if x.end == end)
            frontier[first:last + 1] = [build(label, frontier[first:last + 1])]
        assert generator.report.candidates == expected
        assert sum(generator.report.positives.values()) == generator.report.states == len(path)


def test_an_order_has_fewer_candidates_than_random_paths() -> None:
    kept = list(preprocess_treebank(read_trees(sample_path("train")),
                                    PreprocessConfig.without((), max_words=15)))
    totals = {}
    for order in ("random", "l2r", "r2l"):
        generator = ExampleGenerator(LABELS + ["CONJP", "FRAG", "INTJ", "NX", "PRN", "QP", "SINV", "SQ",
                                               "UCP", "WHADVP", "WHNP", "WHPP", "X", "SBARQ", "WHADJP",
                                               "NAC", "LST"],
                                     FeatureConfig(), 5, 0, order=order)
        for position, result in enumerate(kept[:80]):
            tree = generator.prepare_tree(result.tree)
            if tree is not None and all(p.label in generator.labels for p in tree.phrases()):
                generator.add_sentence(tree, position)
        generator.finish()
        totals[order] = sum(generator.report.candidates.values()), generator.report.states
    assert totals["r2l"][1] == totals["l2r"][1] == totals["random"][1]  # one state per phrase, any order
    assert totals["r2l"][0] < totals["random"][0] and totals["l2r"][0] < totals["random"][0]


@pytest.mark.parametrize("order", ["l2r", "r2l"])
def test_parser_kernel_offers_the_same_candidates_and_rows_as_prepare(order: str) -> None:
    kept = list(preprocess_treebank(read_trees(sample_path("train")),
                                    PreprocessConfig.without((), max_words=15)))
    _, expected, found = prepare_and_parser_rows(kept[:80], FeatureConfig.paper(), True, order)
    assert found == expected


@pytest.mark.parametrize("order", ["l2r", "r2l"])
def test_search_under_an_order_ends_in_a_whole_parse(order: str) -> None:
    tagged = [("I", "PRP"), ("saw", "VBD"), ("the", "DT"), ("dog", "NN"), ("in", "IN"), ("the", "DT"),
              ("park", "NN")]
    model = empty_model(LABELS, [], Vocabulary.build([w for w, _ in tagged], 1), True, order=order)
    scorer = CandidateScorer(model)
    frontier = leaf_items(tagged)
    offered = scorer.candidates(frontier)
    assert len(offered.first) > 0  # before any phrase every span is legal
    result = search(frontier, scorer, beam=1)
    assert result.item is not None and result.item.label == "ROOT"
    assert max(result.item.terminals(), key=lambda x: x.start).end == len(tagged)


def test_order_is_a_validated_setting_in_the_digest() -> None:
    with pytest.raises(ConfigurationError, match="order must be one of"):
        PrepareSettings(order="middle-out")
    files = [("train", Path("t.ptb"), "0" * 64)]
    assert input_digest(files, PrepareSettings(order="random")) == input_digest(files, PrepareSettings())
    assert input_digest(files, PrepareSettings(order="r2l")) != input_digest(files, PrepareSettings())
    assert (input_digest(files, PrepareSettings(order="r2l"))
            != input_digest(files, PrepareSettings(order="l2r")))


def test_kernel_rule_on_hand_worked_frontier() -> None:
    """Frontier [a, NP(b c), d, VP(e f), g]: r2l allows spans starting at or before the NP (position 1);
    l2r allows spans ending at or after the VP (position 3)."""
    from clparse.features.kernel import order_limits

    nkids = np.array([0, 0, 0, 0, 0, 0, 0, 2, 2], dtype=np.int32)  # items 7, 8 are the phrases
    frontier = np.array([0, 7, 3, 8, 6], dtype=np.int32)
    assert order_limits(frontier, nkids, 0) == (4, 1)
    assert order_limits(frontier, nkids, 2) == (1, 1)
    assert order_limits(frontier, nkids, 1) == (4, 4)
    leaves = np.array([0, 1, 2], dtype=np.int32)
    assert order_limits(leaves, nkids, 2) == (2, 1) and order_limits(leaves, nkids, 1) == (2, 1)

"""K-best search against brute force: every distinct tree of a small sentence, by its best path's key.

With unbounded beams the k-best list is exactly the k best distinct trees (keys sorted, each tree with
the key of its best path); with any beam it is sorted, distinct, and its first tree is the 1-best
search's parse; k = 1 is the 1-best search.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clparse.search import search
from clparse.search.aggregate import AGGREGATORS
from clparse.search.best_first import search_kbest
from tests.test_search import (
    HUGE,
    SMALL_LABELS,
    FakeScorer,
    Model,
    all_paths,
    child_model,
    descriptors,
    key_of,
    keys_equal,
    leaves,
    span_model,
    tree_score,
)


def brute_force_kbest(n: int, model: Model,
                      aggregator: str) -> list[tuple[tuple[float, ...], frozenset[object]]]:
    """Every distinct tree with the key of its best path, best first."""
    best: dict[frozenset[object], tuple[float, ...]] = {}
    for confidences, root in all_paths(tuple(leaves(n)), FakeScorer(model, SMALL_LABELS)):
        tree, key = descriptors(root), key_of(aggregator, confidences)
        if tree not in best or key < best[tree]:
            best[tree] = key
    return sorted(((key, tree) for tree, key in best.items()), key=lambda pair: pair[0])


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 3), aggregator=st.sampled_from(AGGREGATORS),
       make=st.sampled_from([span_model, child_model]), k=st.sampled_from([1, 2, 5, 40]),
       incumbent=st.booleans())
def test_unbounded_kbest_is_the_brute_force_kbest(
        seed: int, n: int, aggregator: str, make: Callable[[int], Model], k: int, incumbent: bool) -> None:
    model = make(seed)
    expected = brute_force_kbest(n, model, aggregator)
    found = search_kbest(leaves(n), FakeScorer(model, SMALL_LABELS), k, beam=HUGE, max_pops=HUGE,
                         aggregator=aggregator, incumbent=incumbent)
    assert len(found) == min(k, len(expected))
    trees = [descriptors(r.item) for r in found if r.item is not None]
    assert len(set(trees)) == len(trees) == len(found)  # distinct
    best_key = {tree: key for key, tree in expected}
    for result, (key, _) in zip(found, expected):
        assert result.item is not None and result.score is not None
        assert keys_equal(aggregator, result.score.key, key)  # the k best keys, in order
        assert keys_equal(aggregator, result.score.key, best_key[descriptors(result.item)])  # its best path
        assert keys_equal(aggregator, result.score.key, tree_score(aggregator, result.item, model).key)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 6), aggregator=st.sampled_from(AGGREGATORS),
       beam=st.integers(1, 12), max_pops=st.integers(1, 60), k=st.integers(1, 12))
def test_any_beam_kbest_is_sorted_distinct_and_starts_with_the_1best(
        seed: int, n: int, aggregator: str, beam: int, max_pops: int, k: int) -> None:
    model = span_model(seed)
    scorer = FakeScorer(model, SMALL_LABELS)
    found = search_kbest(leaves(n), scorer, k, beam=beam, max_pops=max_pops, aggregator=aggregator)
    one = search(leaves(n), FakeScorer(model, SMALL_LABELS), beam=beam, max_pops=max_pops,
                 aggregator=aggregator)
    assert 1 <= len(found) <= k
    assert found[0].item is not None and one.item is not None and found[0].score is not None
    assert descriptors(found[0].item) == descriptors(one.item) and found[0].score == one.score
    assert (found[0].pops, found[0].reason, found[0].completed) == (one.pops, one.reason, one.completed)
    keys = [r.score.key for r in found if r.score is not None]
    assert keys == sorted(keys)
    trees = [descriptors(r.item) for r in found if r.item is not None]
    assert len(set(trees)) == len(trees)


def test_k_must_be_positive() -> None:
    with pytest.raises(ValueError):
        search_kbest(leaves(2), FakeScorer(span_model(0), SMALL_LABELS), 0)

"""Every search result carries its derivation (``SearchResult.path``): replayed from the leaves it builds
the very tree returned, its confidences are the model's for each constituent, and they aggregate to the
returned score. Checked on fake models (every beam, k-best, the pop cap, greedy) and on the trained
sample's real scorer (compiled greedy and the agenda search)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clparse.features.state import interner, leaf_items
from clparse.rebuild.model import load_model
from clparse.search import CandidateScorer, search
from clparse.search.aggregate import AGGREGATORS
from clparse.search.best_first import SearchResult, ranked, search_kbest
from clparse.search.derivation import confidences, constituents
from tests.conftest import dev_tagged
from tests.test_search import (
    SMALL_LABELS,
    FakeScorer,
    Model,
    child_model,
    leaves,
    path_score,
    phrases,
    shape,
    span_model,
)


def check_path(result: SearchResult, n: int, model: Model, aggregator: str) -> None:
    assert result.item is not None and result.score is not None
    built = constituents(leaves(n), result.path)
    assert shape(built[-1][0]) == shape(result.item)  # the last inference built the returned root
    for item, confidence in built:  # the model's own confidence of each constituent
        assert confidence == model(item.start, item.end, item.label, item.children)
    assert len(built) == sum(1 for _ in phrases(result.item))  # every phrase once, nothing else
    assert path_score(aggregator, [step[3] for step in result.path]) == result.score


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 4), aggregator=st.sampled_from(AGGREGATORS),
       make=st.sampled_from([span_model, child_model]), beam=st.sampled_from([1, 2, 5, 1000]),
       max_pops=st.sampled_from([1, 3, 10_000]), k=st.sampled_from([1, 3]), incumbent=st.booleans())
def test_the_path_rebuilds_the_tree_and_its_score(seed: int, n: int, aggregator: str,
                                                  make: Callable[[int], Model], beam: int, max_pops: int,
                                                  k: int, incumbent: bool) -> None:
    model = make(seed)
    for result in search_kbest(leaves(n), FakeScorer(model, SMALL_LABELS), k, beam=beam, max_pops=max_pops,
                               aggregator=aggregator, incumbent=incumbent):
        if n == 1 and result.item is not None and not result.path:  # ROOT over one word can be the leaf
            continue
        check_path(result, n, model, aggregator)


def test_confidences_name_each_constituent_by_label_and_span() -> None:
    model = span_model(7)
    result = search(leaves(4), FakeScorer(model, SMALL_LABELS), beam=10)
    assert result.item is not None
    named = confidences(leaves(4), result.path)
    expected = {(p.label, p.start, p.end): model(p.start, p.end, p.label, p.children)
                for p in phrases(result.item)}
    assert named == expected


def test_an_inference_off_the_frontier_is_refused() -> None:
    with pytest.raises(ValueError, match="off a frontier of 2 items"):
        constituents(leaves(2), [(0, 3, "NP", 1.0)])


@pytest.mark.parametrize("aggregator", ["sum", "maxmin"])
@pytest.mark.parametrize("beam", [1, 50])
def test_real_scorer_paths_rebuild_the_parse(trained_db: Path, beam: int, aggregator: str) -> None:
    """On the trained sample: compiled greedy (beam 1) and the agenda search; the replayed tree is the
    parse, and the path's confidences are the scores the returned tree was ranked by."""
    model = load_model(trained_db, 3.0)
    checked = 0
    for tagged in dev_tagged(trained_db)[:25]:
        sentence = leaf_items(tagged, model.vocabulary.normalize)
        result = search(sentence, CandidateScorer(model), beam=beam, max_pops=2_000, aggregator=aggregator)
        assert result.item is not None and result.score is not None
        built = constituents(sentence, result.path)
        assert shape(built[-1][0]) == shape(result.item)
        assert path_score(aggregator, [c for _, c in built]) == result.score
        # each confidence is the one the (uncompiled) candidate scorer gives on the frontier of that moment
        fresh, make, frontier = CandidateScorer(model), interner(), tuple(sentence)
        for first, end, label, confidence in result.path:
            offered = {(f, e, lab): c for f, e, lab, c in ranked(fresh.candidates(frontier))}
            assert offered[(first, end, label)] == confidence
            frontier = frontier[:first] + (make(label, frontier[first:end]),) + frontier[end:]
        checked += len(built)
    assert checked > 100

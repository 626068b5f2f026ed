"""The compiled agenda search (clparse.search.agenda) against the Python agenda it replaces.

Every result of :func:`search_kbest` must be the same with the compiled agenda as with the reference
(``reference=True``): the same tree, score, path (every inference and confidence), pops, reason and
completion flag, for k-best lists, with and without the incumbent, at a tiny pop cap (the cap path), over
beams 1, 2, 10 and 1000 and both aggregators; and on long sentences (the compiled calls run out of room
and are resumed).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clparse.features.kernel import _next_batch
from clparse.features.state import Item, leaf_items
from clparse.rebuild.model import ParserModel, load_model
from clparse.search import agenda
from clparse.search.best_first import SearchResult, search_kbest
from clparse.search.scorer import CandidateScorer
from tests.conftest import dev_tagged


def shape(item: Item | None) -> tuple[object, ...] | None:
    if item is None:
        return None
    return (item.label, item.start, item.end, item.head, item.headword, item.headtag,
            tuple(shape(child) for child in item.children))


def summary(result: SearchResult) -> tuple[object, ...]:
    return (shape(result.item), result.score, result.pops, result.reason, result.completed, result.path)


def both(model: ParserModel, tagged: list[tuple[str, str]], k: int,
         **options: object) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    """(compiled, reference) results of one sentence, each search with its own scorer."""
    leaves = leaf_items(tagged, model.vocabulary.normalize)
    fast = search_kbest(leaves, CandidateScorer(model), k, **options)  # type: ignore[arg-type]
    slow = search_kbest(leaves, CandidateScorer(model), k, reference=True, **options)  # type: ignore[arg-type]
    return [summary(r) for r in fast], [summary(r) for r in slow]


@pytest.fixture(scope="module")
def model(trained_db: Path) -> ParserModel:
    return load_model(trained_db, 3.0)


@pytest.mark.parametrize("aggregator", ["maxmin", "sum"])
@pytest.mark.parametrize("beam", [1, 2, 10, 1000])
@pytest.mark.parametrize("incumbent", [True, False])
@pytest.mark.parametrize("k,max_pops", [(1, 10_000), (4, 10_000), (1, 3), (3, 5)])
def test_compiled_agenda_equals_the_python_agenda(trained_db: Path, model: ParserModel, aggregator: str,
                                                  beam: int, incumbent: bool, k: int, max_pops: int) -> None:
    sentences = dev_tagged(trained_db)[:12 if beam == 1000 else 30]
    for tagged in sentences:
        fast, slow = both(model, tagged, k, beam=beam, max_pops=max_pops, aggregator=aggregator,
                          incumbent=incumbent)
        assert fast == slow


@pytest.mark.parametrize("beam,max_pops", [(10, 10_000), (1000, 300)])
def test_long_sentences_resume_after_growing_their_buffers(trained_db: Path, model: ParserModel, beam: int,
                                                           max_pops: int,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Sentences of 40-100 words, room for two states and two agenda entries at first: the states, pools,
    agenda slots, item rows and window cache outgrow their buffers, and the search resumes where it
    stopped."""
    monkeypatch.setattr(agenda, "FIRST_CAPACITY", 2)
    for tagged in dev_tagged(trained_db, 3)[:4]:
        fast, slow = both(model, tagged, 3, beam=beam, max_pops=max_pops)
        assert fast == slow


@pytest.mark.parametrize("theta", [10.0])
def test_another_model(trained_db: Path, theta: float) -> None:
    other = load_model(trained_db, theta)
    for tagged in dev_tagged(trained_db)[:20]:
        fast, slow = both(other, tagged, 2, beam=50, max_pops=10_000)
        assert fast == slow


@settings(max_examples=200, deadline=None)
@given(confidences=st.lists(st.sampled_from([-1.5, -0.0, 0.0, 0.25, 1.0, 3.0]), max_size=90),
       batch=st.integers(1, 5))
def test_batches_rank_as_a_stable_sort(confidences: list[float], batch: int) -> None:
    """Batch after batch, the candidates come best confidence first, ties in index order: a stable
    descending sort (the Python search's ``ranked``)."""
    conf = np.array(confidences, dtype=np.float64)
    out = np.zeros(batch, dtype=np.int32)
    ranked: list[int] = []
    last_conf, last_index = np.inf, -1
    while True:
        m = _next_batch(conf, len(conf), last_conf, last_index, out)
        if m == 0:
            break
        ranked += out[:m].tolist()
        last_conf, last_index = conf[ranked[-1]], ranked[-1]
    assert ranked == np.argsort(-conf, kind="stable").tolist()

"""Parsing under known brackets against brute force: over every tree of a small sentence, the best one
that keeps the constraints is what the search over the bracketed scorer returns; given every bracket of a
tree with ``complete``, that tree is the only one left; the checks refuse constraints no tree can keep."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import cast
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clparse.features.state import leaf_items
from clparse.preprocess.pipeline import ROOT_LABEL
from clparse.rebuild.model import load_model
from clparse.search import CandidateScorer
from clparse.search.aggregate import AGGREGATORS
from clparse.search.best_first import search, search_kbest
from clparse.search.brackets import Bracket, BracketedScorer, BracketError, Brackets
from clparse.search.constraints_file import read_brackets
from tests.conftest import dev_tagged
from tests.test_kbest import brute_force_kbest
from tests.test_search import (
    HUGE,
    SMALL_LABELS,
    FakeScorer,
    Model,
    child_model,
    labeled_spans,
    leaves,
    span_model,
)

Spans = frozenset[tuple[int, int, str]]


def spans_of(tree: frozenset[object]) -> Spans:
    """Labelled spans of a brute-force tree (its descriptors: start, end, label, children's labels)."""
    return frozenset((s, e, label) for s, e, label, _ in cast(frozenset[tuple[int, int, str, object]], tree))


def keeps(spans: Spans, brackets: Brackets) -> bool:
    """The constraints read literally on a tree's labelled spans (ROOT is not a constituent)."""
    phrases = {(s, e, label) for s, e, label in spans if label != ROOT_LABEL}
    for b in brackets.required:
        if not any((s, e) == (b.start, b.end) and b.label in (None, label) for s, e, label in phrases):
            return False
    for b in brackets.forbidden:
        if any((s, e) == (b.start, b.end) and b.label in (None, label) for s, e, label in phrases):
            return False
    if brackets.complete:
        listed = {(b.start, b.end) for b in brackets.required if b.label is None}
        labelled = {(b.start, b.end, b.label) for b in brackets.required}
        return all((s, e) in listed or (s, e, label) in labelled for s, e, label in phrases)
    return True


def random_brackets(rng: random.Random, tree: Spans, n: int) -> Brackets:
    """Constraints some tree keeps: a share of ``tree``'s phrases (some without their label), and spans
    ``tree`` does not have, forbidden (some only for one label)."""
    phrases = sorted((s, e, label) for s, e, label in tree if label != ROOT_LABEL)
    required = tuple(Bracket(s, e, label if rng.random() < 0.6 else None)
                     for s, e, label in phrases if rng.random() < 0.5)
    spans = {(s, e) for s, e, _ in phrases}
    free = [(s, e) for s in range(n) for e in range(s + 1, n + 1) if (s, e) not in spans]
    forbidden = tuple(Bracket(s, e, rng.choice([None, "NP", "S"])) for s, e in free if rng.random() < 0.4)
    return Brackets(required, forbidden)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 3), aggregator=st.sampled_from(AGGREGATORS),
       make=st.sampled_from([span_model, child_model]), pick=st.integers(0, 10**6))
def test_bracketed_search_finds_the_best_tree_that_keeps_the_brackets(
        seed: int, n: int, aggregator: str, make: Callable[[int], Model], pick: int) -> None:
    model = make(seed)
    every = brute_force_kbest(n, model, aggregator)  # (key, descriptors) best first
    rng = random.Random(pick)
    _, chosen = every[rng.randrange(len(every))]
    trees = [(key, spans_of(tree)) for key, tree in every]
    brackets = random_brackets(rng, spans_of(chosen), n)
    brackets.check(n, SMALL_LABELS)
    best = min(key for key, spans in trees if keeps(spans, brackets))  # the chosen tree keeps them
    scorer = BracketedScorer(FakeScorer(model, SMALL_LABELS), brackets)
    result = search(leaves(n), scorer, beam=HUGE, max_pops=HUGE, aggregator=aggregator, incumbent=False)
    assert result.item is not None and result.score is not None
    assert keeps(labeled_spans(result.item), brackets)
    assert result.score.key == best
    # every tree of the k-best list keeps them too, and greedy parsing never breaks them
    for found in search_kbest(leaves(n), scorer, 4, beam=HUGE, max_pops=HUGE, aggregator=aggregator):
        assert found.item is not None and keeps(labeled_spans(found.item), brackets)
    greedy = search(leaves(n), scorer, beam=1, aggregator=aggregator)
    assert greedy.item is None or keeps(labeled_spans(greedy.item), brackets)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 3), pick=st.integers(0, 10**6),
       beam=st.sampled_from([1, 3, 1000]))
def test_every_bracket_with_complete_leaves_only_that_tree(seed: int, n: int, pick: int, beam: int) -> None:
    model = span_model(seed)
    every = brute_force_kbest(n, model, "maxmin")
    _, chosen = every[random.Random(pick).randrange(len(every))]
    spans = spans_of(chosen)
    brackets = Brackets(tuple(Bracket(s, e, label) for s, e, label in sorted(spans) if label != ROOT_LABEL),
                        complete=True)
    result = search(leaves(n), BracketedScorer(FakeScorer(model, SMALL_LABELS), brackets), beam=beam)
    assert result.item is not None and labeled_spans(result.item) == spans


def test_brackets_a_unary_chain_must_hold_the_required_label() -> None:
    """A one-word NP is an NP over the preterminal (not the preterminal), and it must be in the chain."""
    brackets = Brackets((Bracket(0, 1, "NP"),))
    for seed in range(30):
        result = search(leaves(2), BracketedScorer(FakeScorer(span_model(seed), SMALL_LABELS), brackets),
                        beam=HUGE, max_pops=HUGE)
        assert result.item is not None and (0, 1, "NP") in labeled_spans(result.item)


@pytest.mark.parametrize("brackets,words,message", [
    (Brackets((Bracket(0, 2), Bracket(1, 3))), 3, "cross: no tree has both"),
    (Brackets((Bracket(0, 4),)), 3, "not a span of a 3-word sentence"),
    (Brackets((Bracket(1, 1),)), 3, "not a span of a 3-word sentence"),
    (Brackets((Bracket(0, 2, "NP"),), (Bracket(0, 2),)), 3, "both required and forbidden"),
    (Brackets((Bracket(0, 2, "XYZ"),)), 3, "no label 'XYZ'"),
    (Brackets((Bracket(0, 3, ROOT_LABEL),)), 3, "ROOT is the parser's own top node"),
])
def test_impossible_brackets_are_refused_in_one_line(brackets: Brackets, words: int, message: str) -> None:
    with pytest.raises(BracketError, match=message) as caught:
        brackets.check(words, SMALL_LABELS)
    assert "\n" not in str(caught.value)


def test_nested_and_same_span_brackets_are_accepted() -> None:
    Brackets((Bracket(0, 3), Bracket(0, 2, "NP"), Bracket(0, 2, "S")), (Bracket(0, 2, "VP"),)).check(3)


def test_gold_brackets_give_the_gold_tree_on_the_sample(trained_db: Path) -> None:
    """Every labelled bracket of a parse, given back with ``complete``, returns that parse's brackets: on
    the trained sample's real scorer, whose own parses are trees it can build."""
    model = load_model(trained_db, 3.0)
    checked = 0
    for tagged in dev_tagged(trained_db)[:20]:
        sentence = leaf_items(tagged, model.vocabulary.normalize)
        free = search(sentence, CandidateScorer(model), beam=1)
        assert free.item is not None
        spans = labeled_spans(free.item)
        brackets = Brackets(tuple(Bracket(s, e, label) for s, e, label in sorted(spans)
                                  if label != ROOT_LABEL), complete=True)
        brackets.check(len(sentence), model.labels)
        bound = search(sentence, BracketedScorer(CandidateScorer(model), brackets), beam=50)
        assert bound.item is not None and labeled_spans(bound.item) == spans
        checked += 1
    assert checked == 20


# ------------------------------------------------------------------- the constraints file and token positions


def test_constraints_file_lines(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text('{"require": [[0, 3, "NP"], [4, 7]], "forbid": [[2, 5]], "complete": true}\n\n{}\n',
                    encoding="utf-8")
    first, blank, empty = read_brackets(path)
    assert first == Brackets((Bracket(0, 3, "NP"), Bracket(4, 7)), (Bracket(2, 5),), True)
    assert not blank and not empty


@pytest.mark.parametrize("line,message", [
    ("[1, 2]", "expected a JSON object"),
    ('{"require": [[0, 3, "NP"]', "not JSON"),
    ('{"requires": []}', "unknown key 'requires'"),
    ('{"require": [[0, "3"]]}', 'is not \\[start, end\\]'),
    ('{"forbid": [[0, 1, 2]]}', "is not \\[start, end\\]"),
    ('{"require": [[true, 2]]}', "is not \\[start, end\\]"),
    ('{"complete": 1}', "'complete' must be true or false"),
])
def test_a_bad_constraints_line_names_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text("{}\n" + line + "\n", encoding="utf-8")
    with pytest.raises(BracketError, match=f"^{path}:2: .*{message}"):
        list(read_brackets(path))


def test_input_positions_map_onto_the_leaves_the_parser_keeps() -> None:
    """Tokens 0 and 5 set aside (a quote, a final period): leaf i is token kept[i]."""
    kept = [1, 2, 3, 4]
    brackets = Brackets((Bracket(0, 3, "NP"), Bracket(3, 6)), (Bracket(5, 6), Bracket(2, 4, "VP")))
    brackets.check(6)
    assert brackets.through(kept) == Brackets((Bracket(0, 2, "NP"), Bracket(2, 4)), (Bracket(1, 3, "VP"),))
    with pytest.raises(BracketError, match="holds only tokens the parser sets aside"):
        Brackets((Bracket(5, 6, "NP"),)).through(kept)
